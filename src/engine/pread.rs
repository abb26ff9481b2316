//! The `pread` engine: buffered pread()/pwrite() of large blocks at the plan's offsets, on
//! several threads.

use super::flag::*;
use super::parallel::for_each_piece;
use super::{Caps, Defaults, Engine, Job, Moved, Op, Spec, Threads};
use crate::checksum::xor_at;
use crate::engine::buffer::{self, AlignedBuffer};
use crate::measure::latency::timed;
use crate::workload::data::DataStream;
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Buffered pread()/pwrite() on threads.
pub struct Pread;

/// Reads exactly `buf.len()` bytes at `offset` unless the file ends first; returns the bytes
/// read and the calls made.
pub fn pread_full(file: &File, name: &str, buf: &mut [u8], offset: u64) -> Result<(usize, u64)> {
    let mut done = 0;
    let mut calls = 0;
    while done < buf.len() {
        calls += 1;
        match timed(|| file.read_at(&mut buf[done..], offset + done as u64)) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("read {name} at byte {}", offset + done as u64));
            }
        }
    }
    Ok((done, calls))
}

/// Writes all of `buf` at `offset`; returns the calls made.
pub fn pwrite_full(file: &File, name: &str, buf: &[u8], offset: u64) -> Result<u64> {
    let (mut done, mut calls) = (0, 0);
    while done < buf.len() {
        calls += 1;
        match timed(|| file.write_at(&buf[done..], offset + done as u64)) {
            Ok(0) => bail!(
                "write {name} at byte {}: the file accepted no bytes",
                offset + done as u64
            ),
            Ok(n) => done += n,
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("write {name} at byte {}", offset + done as u64));
            }
        }
    }
    Ok(calls)
}

/// Checks that a piece of a sized read came back whole: a shorter read means the file
/// shrank since reading began.
pub fn expect_whole(job: &Job, offset: u64, want: u64, got: u64) -> Result<()> {
    if got < want {
        return Err(super::shrank(
            job.name,
            offset + got,
            job.plan.start + job.plan.len,
        ));
    }
    Ok(())
}

/// What the `pread` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "pread",
    describe: "buffered pread()/pwrite() of blocks at offsets, one thread per core",
    caps: Caps::of(READ | WRITE | SIZED | ANY_ORDER | PARALLEL | COUNTED | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::PerCore,
        block_size: 1 << 20,
        depth: 1,
    },
};

impl Engine for Pread {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn buffers(&self, job: &Job) -> usize {
        super::parallel::workers(job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        let block = job.plan.block as usize;
        for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(buffer::take(block, AlignedBuffer::new)),
            |offset, len, buf| {
                let slice = &mut buf.as_mut_slice()[..len as usize];
                let calls = match job.op {
                    Op::Read => {
                        let (n, calls) = pread_full(job.file, job.name, slice, offset)?;
                        expect_whole(job, offset, len, n as u64)?;
                        calls
                    }
                    Op::Write => {
                        DataStream::new(job.seed, offset).fill(slice);
                        pwrite_full(job.file, job.name, slice, offset)?
                    }
                };
                Ok((xor_at(job.plan_offset(offset), slice), calls))
            },
        )
    }
}
