//! The check in place against the XOR it stands beside: both over a 1 MiB buffer (in L2)
//! and a 64 MiB one (beyond the caches), GiB/s per call.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ioscope::workload::data::DataStream;
use ioscope::workload::verify::{Checker, Written};
use std::hint::black_box;

fn verify(c: &mut Criterion) {
    for (label, len) in [("1MiB", 1usize << 20), ("64MiB", 64 << 20)] {
        let mut buf = vec![0u8; len];
        DataStream::new(7, 0).fill(&mut buf);
        let mut group = c.benchmark_group(format!("verify_{label}"));
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function("xor", |b| {
            b.iter(|| black_box(ioscope::checksum::xor_bytes(black_box(&buf))))
        });
        group.bench_function("in_place_stream", |b| {
            b.iter(|| {
                let mut checker = Checker::new(Written::Stream(7), 1 << 20);
                checker.check(0, black_box(&buf));
                black_box(checker.found())
            })
        });
        let stamped: Vec<u8> = {
            let mut ring = ioscope::workload::ring::Ring::new(7, 1 << 20);
            let mut out = Vec::with_capacity(len);
            while out.len() < len {
                let (piece, _) =
                    ring.piece(out.len() as u64, (1 << 20).min((len - out.len()) as u64));
                out.extend_from_slice(piece);
            }
            out
        };
        group.bench_function("in_place_stamped", |b| {
            b.iter(|| {
                let mut checker = Checker::new(Written::Stamped(7), 1 << 20);
                checker.check(0, black_box(&stamped));
                black_box(checker.found())
            })
        });
        group.finish();
    }
}

criterion_group!(benches, verify);
criterion_main!(benches);
