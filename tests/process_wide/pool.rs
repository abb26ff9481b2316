//! Buffers are allocated and touched before the timed region, not inside it (first-touch
//! page faults cost about 1 s per GiB on some VMs): a meter that looks into the buffer pool
//! when the region starts finds every buffer the engine will use already there. In
//! tests/process_wide, one test at a time, because the pool is process-wide.

use crate::common::*;
use ioscope::engine::buffer::{self, AlignedBuffer};
use ioscope::engine::flag;
use ioscope::engine::{Op, by_name};
use ioscope::files::InputKind;
use ioscope::harness::{Harness, NoProgress, Setup, Target};
use ioscope::measure::cache::{CacheState, Residency};
use ioscope::measure::meter::{FixedMeter, Meter, Region};
use ioscope::workload::plan::Plan;
use std::fs::File;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A block size no other code uses.
const BLOCK: usize = 12_288 + 4096;

static MADE: AtomicUsize = AtomicUsize::new(0);

fn counted(len: usize) -> AlignedBuffer {
    MADE.fetch_add(1, Ordering::SeqCst);
    AlignedBuffer::new(len)
}

/// Counts, when a region starts, how many of `want` buffers the pool could not lend.
struct PoolProbe {
    want: usize,
    missing: Mutex<Vec<usize>>,
}

impl Meter for PoolProbe {
    fn start(&self, device: Option<&str>) -> Box<dyn Region> {
        MADE.store(0, Ordering::SeqCst);
        let loans: Vec<_> = (0..self.want)
            .map(|_| buffer::take(BLOCK, counted))
            .collect();
        self.missing
            .lock()
            .unwrap()
            .push(MADE.load(Ordering::SeqCst));
        drop(loans);
        FIXED.start(device)
    }
    fn residency(&self, file: &File, name: &str, start: u64, len: u64) -> Option<Residency> {
        FIXED.residency(file, name, start, len)
    }
}

const FIXED: FixedMeter = FixedMeter {
    seconds_per_call: 1e-6,
    bytes_per_second: 1e9,
    fsync_seconds: 0.0,
    resident: None,
};

#[test]
fn engine_buffers_are_ready_before_the_timed_region_starts() {
    let _alone = crate::alone();
    let dir = tempfile::tempdir().unwrap();
    let bytes = pattern(BLOCK * 6);
    let path = file_with(dir.path(), "f", &bytes);
    let file = File::open(&path).unwrap();
    for (engine, threads) in [("stream", 1), ("pread", 3), ("direct", 3), ("uring", 2)] {
        let engine = by_name(engine).unwrap();
        let setup = Setup {
            engine,
            threads,
            depth: 2,
        };
        let want = if engine.caps().has(flag::QUEUED) {
            threads * 2
        } else {
            threads
        };
        let probe = PoolProbe {
            want,
            missing: Mutex::new(Vec::new()),
        };
        let harness = Harness {
            meter: &probe,
            progress: &NoProgress,
        };
        let target = Target {
            file: &file,
            name: "f",
            kind: InputKind::Regular,
            device: None,
        };
        let plan = Plan::sequential(0, bytes.len() as u64, BLOCK as u64);
        if let Err(why) = harness.check(target, &setup, Op::Read, plan) {
            println!("skipped: {} here: {why:#}", engine.name());
            continue;
        }
        let sample = harness
            .read(target, &setup, plan, false, CacheState::AsIs)
            .expect("read");
        assert_eq!(sample.moved.xor, xor_value(&bytes), "{}", engine.name());
        assert_eq!(
            *probe.missing.lock().unwrap(),
            [0],
            "{}: buffers the pool could not lend when timing began (allocated inside the timed region)",
            engine.name()
        );
    }
}

fn xor_value(bytes: &[u8]) -> u32 {
    u32::from_str_radix(&reference_xor(bytes), 16).unwrap()
}
