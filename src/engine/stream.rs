//! The `stream` engine: read() or write() of one block size, one thread, from the current
//! offset: the classic project's engine, and the only one for pipes, stdin, sockets and
//! /proc files (which report size 0). For a plan that is not sequential, each piece is an
//! lseek() and a read() or write(), as iozone does.

use super::flag::*;
use super::{Cadence, Caps, Defaults, Engine, Job, Moved, Op, Spec, Threads};
use crate::checksum::{Xor32, xor_at};
use crate::engine::buffer::{self, AlignedBuffer};
use crate::files::InputKind;
use crate::measure::latency::timed;
use crate::workload::data::DataStream;
use anyhow::{Context, Result, bail};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;

/// read()/write() of one block size, one thread.
pub struct Stream;

/// What the `stream` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "stream",
    describe: "read()/write() of one block size, one thread, from the current offset (pipes, stdin, /proc too)",
    caps: Caps::of(READ | WRITE | ANY_ORDER | COUNTED | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::One,
        block_size: 1 << 20,
        depth: 1,
    },
};

impl Engine for Stream {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn defaults(&self, len: u64) -> Defaults {
        const MAX: u64 = 1 << 20;
        let block_size = if len == 0 {
            // Unknown size (pipes, /proc): /proc files are small, and touching a 1 MiB
            // buffer costs more than reading one of them.
            64 << 10
        } else if len < MAX {
            // A small file in one call, and one more that finds EOF.
            (len + 1).next_multiple_of(4096)
        } else {
            MAX
        };
        Defaults {
            threads: Threads::One,
            block_size,
            depth: 1,
        }
    }
    fn buffers(&self, _job: &Job) -> usize {
        1
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        if job.kind == InputKind::Stream {
            // A bigger pipe buffer means fewer, larger reads; refusal is harmless.
            // SAFETY: F_SETPIPE_SZ on a descriptor we hold; it fails cleanly on non-pipes.
            unsafe { libc::fcntl(job.file.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
        }
        let mut buf = buffer::take(job.plan.block as usize, AlignedBuffer::new);
        match (job.op, job.plan.is_sequential()) {
            (Op::Read, true) => read_in_order(job, buf.as_mut_slice()),
            (Op::Write, true) => write_in_order(job, buf.as_mut_slice()),
            (op, false) => by_piece(job, op, buf.as_mut_slice()),
        }
    }
}

/// Reads with `buf.len()`-sized read() calls from the current offset: to the end of input
/// when `job.to_end`, else exactly `job.plan.len` bytes (the last call asks only for what
/// is left). A regular file that ends before `job.plan.len` is an error.
fn read_in_order(job: &Job, buf: &mut [u8]) -> Result<Moved> {
    let mut xor = Xor32::new();
    let mut calls = 0u64;
    let mut cadence = Cadence::new();
    let mut reader = job.file;
    let limit = if job.to_end { u64::MAX } else { job.plan.len };
    while xor.len() < limit {
        let want = (limit - xor.len()).min(buf.len() as u64) as usize;
        // Also catches a Ctrl-C that came between two calls: the next read() of a quiet pipe
        // would otherwise block before the signal could interrupt it.
        crate::interrupt::check()?;
        calls += 1;
        let n = match timed(|| reader.read(&mut buf[..want])) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if crate::interrupt::retry_after(&e)? => continue,
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("read {} at byte {}", job.name, job.plan.start + xor.len())
                });
            }
        };
        xor.update(&buf[..n]);
        cadence.tick(job.observer, calls, xor.len())?;
    }
    if job.kind == InputKind::Regular && xor.len() < job.plan.len {
        return Err(super::shrank(
            job.name,
            job.plan.start + xor.len(),
            job.plan.start + job.plan.len,
        ));
    }
    job.observer.moved(xor.len() - cadence.reported)?;
    Ok(Moved {
        bytes: xor.len(),
        calls,
        xor: xor.value(),
        in_place: 0,
        tests: Default::default(),
    })
}

/// Writes `job.plan.len` bytes of the job's data with `buf.len()`-sized write() calls from
/// the current offset (a short write is completed by further calls, each counted).
fn write_in_order(job: &Job, buf: &mut [u8]) -> Result<Moved> {
    let mut xor = Xor32::new();
    let mut calls = 0u64;
    let mut cadence = Cadence::new();
    let mut data = DataStream::new(job.seed, job.plan.start);
    let total = job.plan.len;
    while xor.len() < total {
        let n = (total - xor.len()).min(buf.len() as u64) as usize;
        let block = &mut buf[..n];
        data.fill(block);
        let at = job.plan.start + xor.len();
        calls += write_all(job, block, at)?;
        xor.update(block);
        cadence.tick(job.observer, calls, xor.len())?;
    }
    job.observer.moved(xor.len() - cadence.reported)?;
    Ok(Moved {
        bytes: xor.len(),
        calls,
        xor: xor.value(),
        in_place: 0,
        tests: Default::default(),
    })
}

/// Writes all of `block` with write() calls; `at` is the file offset of its first byte,
/// for messages. Returns the calls made.
pub(super) fn write_all(job: &Job, block: &[u8], at: u64) -> Result<u64> {
    let mut writer = job.file;
    let (mut done, mut calls) = (0, 0);
    while done < block.len() {
        // As for reads: a Ctrl-C between calls, before a write blocks on a full pipe.
        crate::interrupt::check()?;
        calls += 1;
        match timed(|| writer.write(&block[done..])) {
            Ok(0) => bail!(
                "write {} at byte {}: the file accepted no bytes",
                job.name,
                at + done as u64
            ),
            Ok(k) => done += k,
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("write {} at byte {}", job.name, at + done as u64));
            }
        }
    }
    Ok(calls)
}

/// Any order: an lseek() then a read() or write() of each piece.
fn by_piece(job: &Job, op: Op, buf: &mut [u8]) -> Result<Moved> {
    let (mut xor, mut calls, mut bytes) = (0u32, 0u64, 0u64);
    let mut cadence = Cadence::new();
    let mut file = job.file;
    for (offset, len) in job.plan.iter() {
        file.seek(SeekFrom::Start(offset))
            .with_context(|| format!("seek {} to byte {offset}", job.name))?;
        let piece = &mut buf[..len as usize];
        match op {
            Op::Read => {
                let (n, c) = read_full(job, piece, offset)?;
                calls += c;
                if (n as u64) < len {
                    return Err(super::shrank(
                        job.name,
                        offset + n as u64,
                        job.plan.start + job.plan.len,
                    ));
                }
            }
            Op::Write => {
                DataStream::new(job.seed, offset).fill(piece);
                calls += write_all(job, piece, offset)?;
            }
        }
        xor ^= xor_at(job.plan_offset(offset), piece);
        bytes += len;
        cadence.tick(job.observer, calls, bytes)?;
    }
    job.observer.moved(bytes - cadence.reported)?;
    Ok(Moved {
        bytes,
        calls,
        xor,
        in_place: 0,
        tests: Default::default(),
    })
}

/// Fills `buf` with read() calls from the current offset unless the file ends first;
/// returns the bytes read and the calls made.
fn read_full(job: &Job, buf: &mut [u8], at: u64) -> Result<(usize, u64)> {
    let mut reader = job.file;
    let (mut done, mut calls) = (0, 0);
    while done < buf.len() {
        calls += 1;
        match timed(|| reader.read(&mut buf[done..])) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("read {} at byte {}", job.name, at + done as u64));
            }
        }
    }
    Ok((done, calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Interruptible;
    use crate::workload::plan::{Order, Plan};
    use std::fs::File;
    use std::io::{Seek, Write};

    fn file_with(bytes: &[u8]) -> File {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(bytes).expect("write");
        f.rewind().expect("rewind");
        f
    }

    fn job<'a>(f: &'a File, op: Op, plan: Plan, to_end: bool) -> Job<'a> {
        Job {
            file: f,
            name: "t",
            kind: InputKind::Regular,
            op,
            plan,
            to_end,
            threads: 1,
            depth: 1,
            seed: 9,
            observer: &Interruptible,
        }
    }

    #[test]
    fn counts_calls_including_the_final_empty_read() {
        let f = file_with(&[1u8; 10]);
        let moved = Stream
            .run(&job(&f, Op::Read, Plan::sequential(0, 10, 4), true))
            .expect("read");
        assert_eq!(moved.bytes, 10);
        assert_eq!(moved.calls, 4, "4 + 4 + 2 + the read that found EOF");
    }

    #[test]
    fn stops_at_the_limit_without_reading_further() {
        let f = file_with(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let moved = Stream
            .run(&job(&f, Op::Read, Plan::sequential(0, 6, 4), false))
            .expect("read");
        assert_eq!((moved.bytes, moved.calls), (6, 2));
        assert_eq!(moved.xor, crate::checksum::xor_bytes(&[1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn a_file_shorter_than_its_size_at_the_start_is_an_error() {
        let f = file_with(&[1u8; 10]);
        for to_end in [true, false] {
            let err = Stream
                .run(&job(&f, Op::Read, Plan::sequential(0, 20, 4), to_end))
                .unwrap_err();
            assert!(
                err.to_string()
                    .contains("ended at byte 10 but its size was 20"),
                "{err}"
            );
            (&f).rewind().expect("rewind");
        }
    }

    #[test]
    fn every_order_reads_and_writes_the_same_bytes() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("f");
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create");
        let seq = Plan::sequential(0, 10_003, 97);
        let written = Stream.run(&job(&f, Op::Write, seq, false)).expect("write");
        for order in [
            Order::Backward,
            Order::Random { seed: 3 },
            Order::Stride { stride: 5 },
        ] {
            let plan = Plan::new(0, 10_003, 97, order);
            let read = Stream.run(&job(&f, Op::Read, plan, false)).expect("read");
            assert_eq!(read.xor, written.xor, "{order:?}");
            let rewritten = Stream.run(&job(&f, Op::Write, plan, false)).expect("write");
            assert_eq!(rewritten.xor, written.xor, "{order:?}");
        }
        let bytes = std::fs::read(&path).expect("read back");
        assert_eq!(crate::checksum::xor_bytes(&bytes), written.xor);
    }
}
