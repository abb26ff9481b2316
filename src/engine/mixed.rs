//! The `mixed` engine: iozone's mixed workload on one thread. Each piece of the plan is
//! read with pread() or written with pwrite(), chosen by a seeded hash of its index so the
//! same run makes the same choices: `read_percent` of the pieces, on average, are read.
//! Written bytes are the file's own bytes again (the data stream at that offset), so the
//! XOR of everything moved is the XOR of the pieces whatever each one's direction. Not in
//! the engine table: it is a workload rather than a way to move one direction of bytes,
//! and `patterns` builds one per run with its ratio.

use super::flag::*;
use super::parallel::for_each_piece;
use super::pread::{expect_whole, pread_full, pwrite_full};
use super::{Caps, Defaults, Engine, Job, Moved, Spec, Threads};
use crate::checksum::xor_at;
use crate::engine::buffer::{self, AlignedBuffer};
use crate::workload::data::DataStream;
use crate::workload::plan::mix;
use anyhow::Result;
use std::sync::atomic::{AtomicU64, Ordering};

/// Reads and writes, mixed.
#[derive(Debug, Default)]
pub struct Mixed {
    /// Share of pieces read, in percent (the rest are written).
    pub read_percent: u8,
    /// Seed of the file's data: written pieces get the bytes already there.
    pub data_seed: u64,
    /// Counts of the last run.
    reads: AtomicU64,
    read_bytes: AtomicU64,
    writes: AtomicU64,
    write_bytes: AtomicU64,
}

/// Calls and bytes of each direction in a mixed run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Split {
    /// pread() calls.
    pub reads: u64,
    /// Bytes read.
    pub read_bytes: u64,
    /// pwrite() calls.
    pub writes: u64,
    /// Bytes written.
    pub write_bytes: u64,
}

/// What the `mixed` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "mixed",
    describe: "pread() or pwrite() per piece, by a seeded choice at a given read share",
    caps: Caps::of(READ | WRITE | SIZED | ANY_ORDER | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::One,
        block_size: 4096,
        depth: 1,
    },
};

impl Mixed {
    /// A mixed workload reading `read_percent` of its pieces (at most 100) of a file
    /// whose bytes are the data stream of `data_seed`.
    pub fn new(read_percent: u8, data_seed: u64) -> Self {
        Self {
            read_percent: read_percent.min(100),
            data_seed,
            ..Self::default()
        }
    }

    /// Whether piece `index` is read (else written).
    pub fn reads(&self, index: u64) -> bool {
        mix(self.data_seed ^ 0x6d_6978_6564 ^ mix(index)) % 100 < u64::from(self.read_percent)
    }

    /// Calls and bytes of each direction in the last run.
    pub fn split(&self) -> Split {
        Split {
            reads: self.reads.load(Ordering::Relaxed),
            read_bytes: self.read_bytes.load(Ordering::Relaxed),
            writes: self.writes.load(Ordering::Relaxed),
            write_bytes: self.write_bytes.load(Ordering::Relaxed),
        }
    }
}

impl Engine for Mixed {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn buffers(&self, job: &Job) -> usize {
        super::parallel::workers(job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        for counter in [
            &self.reads,
            &self.read_bytes,
            &self.writes,
            &self.write_bytes,
        ] {
            counter.store(0, Ordering::Relaxed);
        }
        let block = job.plan.block as usize;
        for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(buffer::take(block, AlignedBuffer::new)),
            |offset, len, buf| {
                let slice = &mut buf.as_mut_slice()[..len as usize];
                let index = (offset - job.plan.start) / job.plan.block;
                let calls = if self.reads(index) {
                    let (n, calls) = pread_full(job.file, job.name, slice, offset)?;
                    expect_whole(job, offset, len, n as u64)?;
                    self.reads.fetch_add(calls, Ordering::Relaxed);
                    self.read_bytes.fetch_add(len, Ordering::Relaxed);
                    calls
                } else {
                    DataStream::new(self.data_seed, offset).fill(slice);
                    let calls = pwrite_full(job.file, job.name, slice, offset)?;
                    self.writes.fetch_add(calls, Ordering::Relaxed);
                    self.write_bytes.fetch_add(len, Ordering::Relaxed);
                    calls
                };
                Ok((xor_at(job.plan_offset(offset), slice), calls))
            },
        )
    }
}
