//! The `direct` engine: O_DIRECT pread() of large aligned blocks on many threads, so the
//! device sees a deep queue and the page cache is bypassed (no copy into it, no eviction
//! cost). Dirty pages of the file are written back first, so the device holds what a
//! buffered read would have returned.

use super::buffer::{self, ALIGN, AlignedBuffer};
use super::flag::*;
use super::parallel::for_each_piece;
use super::pread::expect_whole;
use super::{Caps, Defaults, Engine, Job, Moved, Spec, Threads};
use crate::checksum::xor_at;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;

/// O_DIRECT pread() on threads.
pub struct Direct;

/// Opens a second, O_DIRECT description of the same file (through /proc/self/fd, so it
/// works for any path and for stdin redirected from a file).
pub fn open_direct(file: &File, name: &str) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(format!("/proc/self/fd/{}", file.as_raw_fd()))
        .with_context(|| format!("open {name} with O_DIRECT"))
}

/// Writes back the file's dirty pages, so that O_DIRECT reads (which bypass the page cache)
/// see what a buffered read would.
pub fn flush(job: &Job) -> Result<()> {
    job.file
        .sync_data()
        .with_context(|| format!("fdatasync {} before reading it with O_DIRECT", job.name))
}

/// The check of engines that read with O_DIRECT: their flags' needs, aligned pieces, and
/// an O_DIRECT open.
pub fn check_direct(engine: &dyn Engine, job: &Job) -> Result<(), String> {
    super::check_caps(engine.name(), engine.caps(), job)?;
    check_aligned(engine.name(), job)?;
    open_direct(job.file, job.name)
        .map(drop)
        .map_err(|e| format!("{e:#}"))
}

/// O_DIRECT reads whole aligned blocks at aligned offsets.
pub fn check_aligned(name: &str, job: &Job) -> Result<(), String> {
    if !job.plan.block.is_multiple_of(ALIGN as u64) {
        return Err(format!(
            "{name} reads with O_DIRECT, which needs a block size that is a multiple of {ALIGN} (not {})",
            job.plan.block
        ));
    }
    if !job.plan.start.is_multiple_of(ALIGN as u64) {
        return Err(format!(
            "{name} reads with O_DIRECT, which needs a start offset that is a multiple of {ALIGN} (not {})",
            job.plan.start
        ));
    }
    Ok(())
}

/// Reads `buf` (aligned, of aligned length) at aligned `offset` with O_DIRECT; stops at EOF,
/// which shows as a short read ending off the alignment. Returns bytes and calls.
pub fn pread_direct(file: &File, name: &str, buf: &mut [u8], offset: u64) -> Result<(usize, u64)> {
    use std::os::unix::fs::FileExt;
    let (mut done, mut calls) = (0, 0);
    while done < buf.len() {
        calls += 1;
        match crate::measure::latency::timed(|| {
            file.read_at(&mut buf[done..], offset + done as u64)
        }) {
            Ok(0) => break,
            Ok(n) => {
                done += n;
                if done % ALIGN != 0 {
                    break;
                }
            }
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("read {name} at byte {} (O_DIRECT)", offset + done as u64)
                });
            }
        }
    }
    Ok((done, calls))
}

/// Reads the piece `[offset, offset + len)` of the job with O_DIRECT from `file` into `buf`
/// (at least `len` rounded up to the alignment) and returns its XOR and the calls made; a
/// short piece means the file shrank.
pub fn read_piece(
    job: &Job,
    file: &File,
    buf: &mut AlignedBuffer,
    offset: u64,
    len: u64,
) -> Result<(u32, u64)> {
    let want = len.next_multiple_of(ALIGN as u64) as usize;
    let (n, calls) = pread_direct(file, job.name, &mut buf.as_mut_slice()[..want], offset)?;
    let n = (n as u64).min(len);
    expect_whole(job, offset, len, n)?;
    Ok((
        xor_at(job.plan_offset(offset), &buf.as_slice()[..n as usize]),
        calls,
    ))
}

/// What the `direct` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "direct",
    describe: "O_DIRECT pread() of large aligned blocks into huge-page buffers, several threads in flight",
    caps: Caps::of(READ | SIZED | ANY_ORDER | DIRECT | PARALLEL | COUNTED | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::InFlight(16 << 20),
        block_size: 4 << 20,
        depth: 1,
    },
};

impl Engine for Direct {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn buffers(&self, job: &Job) -> usize {
        super::parallel::workers(job)
    }
    fn check(&self, job: &Job) -> Result<(), String> {
        check_direct(self, job)
    }
    fn before(&self, job: &Job) -> Result<()> {
        flush(job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        // Again, for callers that time the whole run (`fast`): cheap when already clean.
        flush(job)?;
        let file = open_direct(job.file, job.name)?;
        let block = job.plan.block as usize;
        for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(buffer::take(block, AlignedBuffer::untouched)),
            |offset, len, buf| read_piece(job, &file, buf, offset, len),
        )
    }
}
