//! The `prepared` engine: `patterns`' writer. Writes each piece of the plan from data laid
//! out before the timed region ([`Ring`]: a window of a prepared block, stamped per 4 KiB),
//! so a timed write is the system call and nothing else — as iozone rewrites one buffer —
//! while the XOR of every byte written is still known (from the ring's tables, not by
//! reading the bytes again). In order, each piece is a write() from the current offset;
//! in any other order a pwrite(). With a mix, a read job is iozone's mixed workload: each
//! piece read with pread() or written with pwrite() by [`Mixed::reads`]' seeded choice,
//! written pieces getting the bytes already there. Not in the engine table: it needs its
//! data handed to it ([`Prepared::load`]) before it runs.

use super::flag::*;
use super::mixed::{Mixed, Split};
use super::pread::{expect_whole, pread_full, pwrite_full};
use super::stream::write_all;
use super::{Cadence, Caps, Defaults, Engine, Job, Moved, Op, Spec, Threads};
use crate::checksum::xor_at;
use crate::engine::buffer::{self, AlignedBuffer};
use crate::workload::ring::Ring;
use anyhow::{Context, Result, anyhow, bail};
use std::sync::Mutex;

/// Writes (and a mixed workload's reads) from prepared data.
#[derive(Debug)]
pub struct Prepared {
    ring: Mutex<Option<Ring>>,
    mix: Option<Mixed>,
    split: Mutex<Split>,
}

/// What the `prepared` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "prepared",
    describe: "write() in order or pwrite() at offsets from data prepared before timing; pread()/pwrite() mixed",
    caps: Caps::of(READ | WRITE | SIZED | ANY_ORDER | COUNTED | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::One,
        block_size: 64 << 10,
        depth: 1,
    },
};

/// The same engine with a mix: its reads and writes together are no one direction the
/// kernel's counts can be compared with (as for the `mixed` engine).
pub const MIXED_SPEC: Spec = Spec {
    name: "prepared-mixed",
    describe: "pread() or pwrite() per piece by a seeded choice, writes from data prepared before timing",
    caps: Caps::of(READ | WRITE | SIZED | ANY_ORDER | MOVES_BYTES),
    defaults: SPEC.defaults,
};

impl Prepared {
    /// An engine with no data yet; `mix` makes read jobs the mixed workload (and the
    /// engine's calls no longer one direction the kernel's counts can be checked against).
    pub fn new(mix: Option<Mixed>) -> Self {
        Self {
            ring: Mutex::new(None),
            mix,
            split: Mutex::new(Split::default()),
        }
    }

    /// Hands over the data to write from (prepared, and timed, by the caller).
    pub fn load(&self, ring: Ring) {
        *self.ring.lock().unwrap_or_else(|e| e.into_inner()) = Some(ring);
    }

    /// Calls and bytes of each direction in the last mixed run.
    pub fn split(&self) -> Split {
        *self.split.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Engine for Prepared {
    fn spec(&self) -> &'static Spec {
        if self.mix.is_some() {
            &MIXED_SPEC
        } else {
            &SPEC
        }
    }
    fn buffers(&self, job: &Job) -> usize {
        usize::from(job.op == Op::Read)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        let mut guard = self
            .ring
            .lock()
            .map_err(|_| anyhow!("write {}: the prepared data was lost", job.name))?;
        let ring = guard
            .as_mut()
            .with_context(|| format!("write {}: no data was prepared", job.name))?;
        // A read job (the mixed workload) carries no seed: its data is the ring's.
        let other_seed = job.op == Op::Write && ring.seed() != job.seed;
        if ring.max_piece() < job.plan.block || other_seed {
            bail!(
                "write {}: the data was prepared for another seed or a smaller record",
                job.name
            );
        }
        let mut moved = match (job.op, &self.mix) {
            (Op::Write, _) => write(job, ring)?,
            (Op::Read, Some(mix)) => {
                let (moved, split) = mixed(job, ring, mix)?;
                *self.split.lock().unwrap_or_else(|e| e.into_inner()) = split;
                moved
            }
            (Op::Read, None) => bail!("read {}: the prepared engine only writes", job.name),
        };
        // The ring's XOR is in the lanes of absolute offsets; checksums count from the plan.
        moved.xor = moved.xor.rotate_right(8 * (job.plan.start % 4) as u32);
        Ok(moved)
    }
}

/// Every piece written: write() from the current offset for a plan in order, else pwrite().
fn write(job: &Job, ring: &mut Ring) -> Result<Moved> {
    let (mut xor, mut calls, mut bytes) = (0u32, 0u64, 0u64);
    let mut cadence = Cadence::new();
    let sequential = job.plan.is_sequential();
    for (offset, len) in job.plan.iter() {
        let (piece, x) = ring.piece(offset, len);
        calls += if sequential {
            write_all(job, piece, offset)?
        } else {
            crate::interrupt::check()?;
            pwrite_full(job.file, job.name, piece, offset)?
        };
        xor ^= x;
        bytes += len;
        cadence.tick(job.observer, calls, bytes)?;
    }
    job.observer.moved(bytes - cadence.reported)?;
    Ok(Moved {
        bytes,
        calls,
        xor,
        ..Moved::default()
    })
}

/// The mixed workload: each piece read or written by the mix's choice; the XOR of all of
/// them is the file's whatever the directions.
fn mixed(job: &Job, ring: &mut Ring, mix: &Mixed) -> Result<(Moved, Split)> {
    let (mut xor, mut bytes) = (0u32, 0u64);
    let mut split = Split::default();
    let mut cadence = Cadence::new();
    let mut buf = buffer::take(job.plan.block as usize, AlignedBuffer::new);
    for (offset, len) in job.plan.iter() {
        crate::interrupt::check()?;
        let index = (offset - job.plan.start) / job.plan.block.max(1);
        if mix.reads(index) {
            let slice = &mut buf.as_mut_slice()[..len as usize];
            let (n, calls) = pread_full(job.file, job.name, slice, offset)?;
            expect_whole(job, offset, len, n as u64)?;
            // In absolute lanes, as the ring's are (rotated to the plan's once, at the end).
            xor ^= xor_at(offset, slice);
            split.reads += calls;
            split.read_bytes += len;
        } else {
            let (piece, x) = ring.piece(offset, len);
            split.writes += pwrite_full(job.file, job.name, piece, offset)?;
            split.write_bytes += len;
            xor ^= x;
        }
        bytes += len;
        cadence.tick(job.observer, split.reads + split.writes, bytes)?;
    }
    job.observer.moved(bytes - cadence.reported)?;
    let moved = Moved {
        bytes,
        calls: split.reads + split.writes,
        xor,
        ..Moved::default()
    };
    Ok((moved, split))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Interruptible;
    use crate::engine::stream::Stream;
    use crate::files::InputKind;
    use crate::workload::plan::{Order, Plan};
    use std::fs::File;
    use std::io::{Seek, SeekFrom};
    use std::os::unix::fs::FileExt;

    const SEED: u64 = 21;

    fn job<'a>(f: &'a File, op: Op, plan: Plan) -> Job<'a> {
        Job {
            file: f,
            name: "t",
            kind: InputKind::Regular,
            op,
            plan,
            to_end: false,
            threads: 1,
            depth: 1,
            seed: SEED,
            observer: &Interruptible,
        }
    }

    fn read_xor(f: &File, len: u64) -> u32 {
        (&*f).seek(SeekFrom::Start(0)).expect("rewind");
        Stream
            .run(&job(f, Op::Read, Plan::sequential(0, len, 4096)))
            .expect("read")
            .xor
    }

    fn scratch() -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().expect("dir");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(dir.path().join("f"))
            .expect("create");
        (dir, f)
    }

    #[test]
    fn every_order_writes_the_same_file_and_knows_its_xor() {
        let (len, record) = (300_003u64, 65536u64);
        let (_dir, f) = scratch();
        let engine = Prepared::new(Some(Mixed::new(50, SEED)));
        let ring = Ring::new(SEED, record);
        let expected = ring.xor_of(0, len);
        engine.load(ring);
        let written = engine
            .run(&job(&f, Op::Write, Plan::sequential(0, len, record)))
            .expect("write");
        assert_eq!((written.bytes, written.xor), (len, expected));
        assert_eq!(read_xor(&f, len), expected);
        for order in [
            Order::Random { seed: 3 },
            Order::Same,
            Order::Backward,
            Order::Stride { stride: 2 },
        ] {
            let plan = Plan::new(0, len, record, order);
            let moved = engine.run(&job(&f, Op::Write, plan)).expect("rewrite");
            if order != Order::Same {
                assert_eq!(moved.xor, expected, "{order:?}");
            }
            assert_eq!(
                read_xor(&f, len),
                expected,
                "{order:?}: the file is unchanged"
            );
        }
        let mixed = engine
            .run(&job(
                &f,
                Op::Read,
                Plan::new(0, len, record, Order::Random { seed: 4 }),
            ))
            .expect("mixed");
        let split = engine.split();
        assert_eq!(mixed.xor, expected);
        assert_eq!(split.reads + split.writes, len.div_ceil(record));
        assert!(split.reads > 0 && split.writes > 0, "{split:?}");
        assert_eq!(read_xor(&f, len), expected);
    }

    #[test]
    fn a_corrupted_byte_or_a_misplaced_block_fails_the_check() {
        let (len, record) = (1u64 << 20, 65536u64);
        let (_dir, f) = scratch();
        let engine = Prepared::new(None);
        let ring = Ring::new(SEED, record);
        let expected = ring.xor_of(0, len);
        engine.load(ring);
        engine
            .run(&job(&f, Op::Write, Plan::sequential(0, len, record)))
            .expect("write");
        assert_eq!(read_xor(&f, len), expected);
        // One byte flipped.
        let mut byte = [0u8];
        f.read_exact_at(&mut byte, 777_777).expect("read");
        f.write_all_at(&[byte[0] ^ 1], 777_777).expect("write");
        assert_ne!(read_xor(&f, len), expected);
        f.write_all_at(&byte, 777_777).expect("write");
        assert_eq!(read_xor(&f, len), expected);
        // Record 3 written again where record 9 belongs.
        let mut block = vec![0u8; record as usize];
        f.read_exact_at(&mut block, 3 * record).expect("read");
        f.write_all_at(&block, 9 * record).expect("write");
        assert_ne!(read_xor(&f, len), expected);
    }

    #[test]
    fn a_plan_that_starts_off_the_word_grid_checksums_from_its_start() {
        let (_dir, f) = scratch();
        let engine = Prepared::new(None);
        engine.load(Ring::new(SEED, 1000));
        let plan = Plan::new(4099, 10_007, 1000, Order::Random { seed: 1 });
        let moved = engine.run(&job(&f, Op::Write, plan)).expect("write");
        let mut bytes = vec![0u8; 10_007];
        f.read_exact_at(&mut bytes, 4099).expect("read");
        assert_eq!(moved.xor, crate::checksum::xor_bytes(&bytes));
    }

    #[test]
    fn it_refuses_to_run_without_data_or_with_data_for_smaller_records() {
        let (_dir, f) = scratch();
        let engine = Prepared::new(None);
        let plan = Plan::sequential(0, 8192, 8192);
        let err = engine.run(&job(&f, Op::Write, plan)).unwrap_err();
        assert!(err.to_string().contains("no data was prepared"), "{err}");
        engine.load(Ring::new(SEED, 4096));
        let err = engine.run(&job(&f, Op::Write, plan)).unwrap_err();
        assert!(err.to_string().contains("smaller record"), "{err}");
    }
}
