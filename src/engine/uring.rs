//! The `uring` engine: io_uring with a deep queue per thread, so reading and XOR-ing
//! overlap: while one block is XOR-ed, the others are in flight. Uses O_DIRECT where the
//! file system allows it (else buffered reads). No registered buffers, so the locked-memory
//! limit of ordinary users does not apply.

use super::buffer::{self, ALIGN, AlignedBuffer, Pooled};
use super::direct::{check_aligned, flush, open_direct};
use super::flag::*;
use super::parallel::{Claims, on_threads};
use super::pread::expect_whole;
use super::{Caps, Defaults, Engine, Job, Moved, Spec, Threads};
use crate::checksum::xor_at;
use anyhow::{Context, Result};
use io_uring::{IoUring, opcode, types};
use std::os::fd::AsRawFd;

/// io_uring reads with a deep queue, on threads.
pub struct Uring;

/// Whether this kernel (and sandbox) lets us create an io_uring.
pub fn available() -> Result<(), String> {
    IoUring::new(2)
        .map(drop)
        .map_err(|e| format!("io_uring is not available here: {e}"))
}

/// A ring of `entries` for one thread that submits and reaps its own requests, set up as
/// fio sets its own (engines/io_uring.c): completions are run when the thread asks for
/// them rather than by interrupting it (`COOP_TASKRUN`, `DEFER_TASKRUN`), the kernel
/// skips the locking a shared ring needs (`SINGLE_ISSUER`), and the completion queue is as
/// deep as the submission queue. Kernels before 6.1 refuse the flags: a plain ring then.
/// Every wait must ask for completions (`submit_and_wait`): with `DEFER_TASKRUN` none
/// appears otherwise.
pub fn ring(entries: u32) -> std::io::Result<IoUring> {
    IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_cqsize(entries)
        .build(entries)
        .or_else(|_| IoUring::new(entries))
}

struct Slot {
    buf: Pooled,
    offset: u64,
    len: u64,
    done: u64,
}

/// The O_DIRECT description to read through, or why reads will be buffered.
fn direct_file(job: &Job) -> Result<std::fs::File, String> {
    check_aligned("uring", job)?;
    open_direct(job.file, job.name).map_err(|e| format!("{e:#}"))
}

/// What the `uring` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "uring",
    describe: "io_uring reads with a deep queue per thread (O_DIRECT where allowed), XOR overlapping I/O",
    caps: Caps::of(READ | SIZED | ANY_ORDER | DIRECT | PARALLEL | QUEUED | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::PerCore,
        block_size: 4 << 20,
        depth: 8,
    },
};

impl Engine for Uring {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn buffers(&self, job: &Job) -> usize {
        // Never more than there are pieces: the slots beyond them are never read into.
        let slots = super::parallel::workers(job).saturating_mul(job.depth.clamp(1, 256));
        usize::try_from(job.plan.pieces()).map_or(slots, |pieces| slots.min(pieces))
    }
    fn check(&self, job: &Job) -> Result<(), String> {
        super::check_caps(self.name(), self.caps(), job)?;
        available()
    }
    fn notes(&self, job: &Job) -> Vec<String> {
        match direct_file(job) {
            Ok(_) => Vec::new(),
            Err(why) => vec![format!("uring: buffered reads, not O_DIRECT: {why}")],
        }
    }
    fn before(&self, job: &Job) -> Result<()> {
        flush(job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        // Again, for callers that time the whole run (`fast`): cheap when already clean.
        flush(job)?;
        let direct = direct_file(job).ok();
        let file = direct.as_ref().unwrap_or(job.file);
        let block = job.plan.block;
        let depth = job.depth.clamp(1, 256);
        let claims = Claims::new(job.plan);
        let threads = super::parallel::workers(job);
        let (xor, calls) = on_threads(threads, &claims, |claims| {
            worker(
                job,
                claims,
                file.as_raw_fd(),
                block,
                depth,
                direct.is_some(),
            )
        })?;
        Ok(Moved {
            bytes: job.plan.len,
            calls,
            xor,
            in_place: 0,
            tests: Default::default(),
        })
    }
}

fn worker(
    job: &Job,
    claims: &Claims,
    fd: i32,
    block: u64,
    depth: usize,
    direct: bool,
) -> Result<(u32, u64)> {
    // The buffers are declared before the ring; on every exit path below, no read is left
    // in flight when they are freed (or they are leaked if the ring cannot be drained).
    let mut slots: Vec<Slot> = (0..depth)
        .map(|_| Slot {
            buf: buffer::take(block as usize, AlignedBuffer::untouched),
            offset: 0,
            len: 0,
            done: 0,
        })
        .collect();
    let mut ring =
        IoUring::new(depth as u32).with_context(|| format!("io_uring setup for {}", job.name))?;
    let mut in_flight = 0usize;
    let result = pump(
        job,
        &mut ring,
        &mut slots,
        &mut in_flight,
        claims,
        fd,
        direct,
    );
    if result.is_err() {
        claims.stop();
        drain(&mut ring, in_flight, slots);
    }
    result
}

/// Waits for the `in_flight` requests of `ring` to complete before `buffers` (what they
/// read into or write from) may be freed; where the ring cannot be drained, the buffers
/// are leaked, never freed under the kernel. Draining goes on after a Ctrl-C too (a second
/// one exits at once).
pub(crate) fn drain<B>(ring: &mut IoUring, mut in_flight: usize, buffers: B) {
    while in_flight > 0 {
        match ring.submit_and_wait(1) {
            Ok(_) => in_flight = in_flight.saturating_sub(ring.completion().count()),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => {
                std::mem::forget(buffers);
                return;
            }
        }
    }
    drop(buffers);
}

/// Keeps up to `slots.len()` reads in flight until the claims run out; XORs each block as
/// it completes and refills its slot with the next claim.
fn pump(
    job: &Job,
    ring: &mut IoUring,
    slots: &mut [Slot],
    in_flight: &mut usize,
    claims: &Claims,
    fd: i32,
    direct: bool,
) -> Result<(u32, u64)> {
    let name = job.name;
    let (mut xor, mut calls) = (0u32, 0u64);
    let submit = |ring: &mut IoUring, slot: &mut Slot, index: usize| -> Result<()> {
        let start = slot.done as usize;
        let want = if direct {
            slot.len.next_multiple_of(ALIGN as u64)
        } else {
            slot.len
        } as usize;
        let buf = &mut slot.buf.as_mut_slice()[start..want];
        let entry = opcode::Read::new(types::Fd(fd), buf.as_mut_ptr(), buf.len() as u32)
            .offset(slot.offset + slot.done)
            .build()
            .user_data(index as u64);
        // SAFETY: the buffer belongs to a slot that is not touched again until its
        // completion arrives, and worker() drains every in-flight read before the slots are
        // freed (or leaks them when it cannot).
        unsafe { ring.submission().push(&entry) }
            .map_err(|_| anyhow::anyhow!("io_uring submission queue full"))?;
        Ok(())
    };
    for (index, slot) in slots.iter_mut().enumerate() {
        let Some((offset, len)) = claims.claim() else {
            break;
        };
        (slot.offset, slot.len, slot.done) = (offset, len, 0);
        submit(ring, slot, index)?;
        *in_flight += 1;
    }
    while *in_flight > 0 {
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if crate::interrupt::retry_after(&e)? => continue,
            Err(e) => return Err(e).with_context(|| format!("io_uring wait for reads of {name}")),
        }
        let completed: Vec<(usize, i32)> = ring
            .completion()
            .map(|c| (c.user_data() as usize, c.result()))
            .collect();
        // Everything taken from the ring is no longer in flight, whatever happens to the
        // rest of this batch: an early return below must not leave the drain waiting.
        *in_flight -= completed.len();
        for (index, result) in completed {
            calls += 1;
            let slot = &mut slots[index];
            if result < 0 {
                let err = std::io::Error::from_raw_os_error(-result);
                return Err(err).with_context(|| {
                    format!("read {name} at byte {} (io_uring)", slot.offset + slot.done)
                });
            }
            slot.done += result as u64;
            let eof = result == 0 || (direct && !slot.done.is_multiple_of(ALIGN as u64));
            if slot.done < slot.len && !eof {
                submit(ring, slot, index)?;
                *in_flight += 1;
                continue;
            }
            expect_whole(job, slot.offset, slot.len, slot.done.min(slot.len))?;
            xor ^= xor_at(
                job.plan_offset(slot.offset),
                &slot.buf.as_slice()[..slot.len as usize],
            );
            job.observer.moved(slot.len)?;
            if let Some((offset, len)) = claims.claim() {
                (slot.offset, slot.len, slot.done) = (offset, len, 0);
                submit(ring, slot, index)?;
                *in_flight += 1;
            }
        }
    }
    Ok((xor, calls))
}
