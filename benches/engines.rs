//! Micro-benchmarks: the XOR kernel (dispatching and baseline builds) on buffers in cache
//! and in memory, the transfer digest (XOR + XXH3) over 64 MiB in 1 MiB steps, and every `fast`
//! engine on a warm 256 MiB file.
//!
//! `cargo bench` runs them; results are throughput in bytes/s (criterion prints GiB/s).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use ioscope::checksum::{xor_bytes, xor_bytes_portable};
use ioscope::engine::flag;
use ioscope::engine::{ENGINES, Interruptible, Job, Op};
use ioscope::files::InputKind;
use ioscope::workload::plan::Plan;
use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

fn kernel(c: &mut Criterion) {
    let mut group = c.benchmark_group("xor_kernel");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    for (label, len) in [("64KiB_L2", 64 << 10), ("256MiB_memory", 256 << 20)] {
        let data: Vec<u8> = (0..len)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761) as u8)
            .collect();
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_function(format!("dispatch/{label}"), |b| {
            b.iter(|| xor_bytes(black_box(&data)))
        });
        group.bench_function(format!("baseline/{label}"), |b| {
            b.iter(|| xor_bytes_portable(black_box(&data)))
        });
    }
    group.finish();
}

/// The transfer digest over 64 MiB (more than any cache, as a large file's bytes are)
/// fed in 1 MiB steps (what sendfile and splice digest at a time), beside each sum alone
/// and the two sums one after the other over each step (the digest before it went by
/// chunks). `cargo bench --bench engines -- digest` picks this group.
fn digest(c: &mut Criterion) {
    use ioscope::checksum::Xor32;
    use ioscope::transfer::proto::Digest;
    use xxhash_rust::xxh3::Xxh3;
    const LEN: usize = 64 << 20;
    const STEP: usize = 1 << 20;
    let data: Vec<u8> = (0..LEN)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761) as u8)
        .collect();
    let mut group = c.benchmark_group("digest_64MiB_by_1MiB");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3))
        .warm_up_time(Duration::from_millis(500))
        .throughput(Throughput::Bytes(LEN as u64));
    group.bench_function("xor_alone", |b| {
        b.iter(|| {
            let mut x = Xor32::new();
            for step in black_box(&data).chunks(STEP) {
                x.update(step);
            }
            x.value()
        })
    });
    group.bench_function("xxh3_alone", |b| {
        b.iter(|| {
            let mut h = Xxh3::new();
            for step in black_box(&data).chunks(STEP) {
                h.update(step);
            }
            h.digest()
        })
    });
    group.bench_function("two_passes", |b| {
        b.iter(|| {
            let (mut x, mut h) = (Xor32::new(), Xxh3::new());
            for step in black_box(&data).chunks(STEP) {
                x.update(step);
                h.update(step);
            }
            (x.value(), h.digest())
        })
    });
    group.bench_function("digest", |b| {
        b.iter(|| {
            let mut d = Digest::new();
            for step in black_box(&data).chunks(STEP) {
                d.update(step);
            }
            d.trailer()
        })
    });
    group.finish();
}

fn engines(c: &mut Criterion) {
    const LEN: usize = 256 << 20;
    // Not /tmp, which may be tmpfs (no O_DIRECT there): the crate's own target directory.
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("temp dir");
    let path = dir.path().join("bench-file");
    let mut f = std::fs::File::create(&path).expect("create");
    let block: Vec<u8> = (0..1 << 20)
        .map(|i: u32| i.wrapping_mul(2_246_822_519) as u8)
        .collect();
    for _ in 0..LEN / block.len() {
        f.write_all(&block).expect("write");
    }
    f.sync_all().expect("fsync");
    let file = std::fs::File::open(&path).expect("open");
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut group = c.benchmark_group("engine_warm_256MiB");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Bytes(LEN as u64));
    for engine in ENGINES {
        let job = Job {
            file: &file,
            name: "bench-file",
            kind: InputKind::Regular,
            op: Op::Read,
            plan: Plan::sequential(0, LEN as u64, 4 << 20),
            to_end: false,
            // Engines that wait on the device want many threads; the others one per core.
            threads: if engine.caps().has(flag::DIRECT) && !engine.caps().has(flag::ZERO_COPY) {
                32
            } else {
                threads
            },
            depth: 8,
            seed: 0,
            observer: &Interruptible,
        };
        if let Err(why) = engine.check(&job) {
            eprintln!("skipped {}: {why}", engine.name());
            continue;
        }
        group.bench_function(engine.name(), |b| {
            b.iter(|| {
                use std::io::Seek;
                (&file).rewind().expect("rewind");
                engine.run(&job).expect("engine run")
            })
        });
    }
    group.finish();
}

/// The data generator that every write fills its buffer from (a 1 MiB buffer, as `run -w`).
fn generator(c: &mut Criterion) {
    let mut group = c.benchmark_group("data_generator");
    group
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500));
    let mut buf = vec![0u8; 1 << 20];
    group.throughput(Throughput::Bytes(buf.len() as u64));
    let mut stream = ioscope::workload::data::DataStream::new(7, 0);
    group.bench_function("fill/1MiB", |b| b.iter(|| stream.fill(black_box(&mut buf))));
    group.finish();
}

criterion_group!(benches, kernel, digest, engines, generator);
criterion_main!(benches);
