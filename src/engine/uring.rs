//! The `uring` engine: io_uring with a deep queue per thread, so reading and XOR-ing
//! overlap: while one block is XOR-ed, the others are in flight. Uses O_DIRECT where the
//! file system allows it (else buffered reads). No registered buffers, so the locked-memory
//! limit of ordinary users does not apply.

use super::buffer::{ALIGN, AlignedBuffer};
use super::direct::{aligned_block, flush, open_direct};
use super::parallel::{Claims, on_threads};
use super::{Caps, Engine, Job, Moved, expect_whole, xor_from};
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

struct Slot {
    buf: AlignedBuffer,
    offset: u64,
    len: u64,
    done: u64,
}

impl Engine for Uring {
    fn name(&self) -> &'static str {
        "uring"
    }
    fn describe(&self) -> &'static str {
        "io_uring reads with a deep queue per thread (O_DIRECT where allowed), XOR overlapping I/O"
    }
    fn caps(&self) -> Caps {
        Caps {
            sized: true,
            direct: true,
            parallel: true,
        }
    }
    fn check(&self, job: &Job) -> Result<(), String> {
        super::check_caps(self.name(), self.caps(), job)?;
        available()
    }
    fn degraded(&self, job: &Job) -> Option<String> {
        open_direct(job.file, job.name)
            .err()
            .map(|e| format!("O_DIRECT: refused ({e:#}); buffered reads instead"))
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        flush(job)?;
        // Without O_DIRECT, buffered reads; fast lists the refusal (see degraded).
        let direct = open_direct(job.file, job.name).ok();
        let file = direct.as_ref().unwrap_or(job.file);
        let block = aligned_block(job.block_size);
        let depth = job.depth.clamp(1, 256);
        let claims = Claims::new(job.end() - job.aligned_start(ALIGN as u64), block);
        let threads = job.threads.clamp(1, claims.pieces().max(1) as usize);
        let (xor, calls) = on_threads(threads, &claims, |claims| {
            worker(
                claims,
                file.as_raw_fd(),
                job,
                block,
                depth,
                direct.is_some(),
            )
        })?;
        Ok(Moved {
            bytes: job.len,
            calls,
            xor,
        })
    }
}

fn worker(
    claims: &Claims,
    fd: i32,
    job: &Job,
    block: u64,
    depth: usize,
    direct: bool,
) -> Result<(u32, u64)> {
    // The buffers are declared before the ring; on every exit path below, no read is left
    // in flight when they are freed (or they are leaked if the ring cannot be drained).
    let mut slots: Vec<Slot> = (0..depth)
        .map(|_| Slot {
            buf: AlignedBuffer::untouched(block as usize),
            offset: 0,
            len: 0,
            done: 0,
        })
        .collect();
    let mut ring =
        IoUring::new(depth as u32).with_context(|| format!("io_uring setup for {}", job.name))?;
    let mut in_flight = 0usize;
    let result = pump(
        &mut ring,
        &mut slots,
        &mut in_flight,
        claims,
        fd,
        job,
        direct,
    );
    if result.is_err() {
        claims.stop();
        while in_flight > 0 {
            match ring.submit_and_wait(1) {
                Ok(_) => in_flight -= ring.completion().count(),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    // The kernel may still write into the buffers: never free them.
                    std::mem::forget(slots);
                    break;
                }
            }
        }
    }
    result
}

/// Keeps up to `slots.len()` reads in flight until the claims run out; XORs each block as
/// it completes and refills its slot with the next claim.
fn pump(
    ring: &mut IoUring,
    slots: &mut [Slot],
    in_flight: &mut usize,
    claims: &Claims,
    fd: i32,
    job: &Job,
    direct: bool,
) -> Result<(u32, u64)> {
    let name = job.name;
    // Claims count from an aligned start (see run); slot offsets are file positions.
    let start = job.aligned_start(ALIGN as u64);
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
        let Some((rel, len)) = claims.claim() else {
            break;
        };
        (slot.offset, slot.len, slot.done) = (start + rel, len, 0);
        submit(ring, slot, index)?;
        *in_flight += 1;
    }
    while *in_flight > 0 {
        match ring.submit_and_wait(1) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).with_context(|| format!("io_uring wait for reads of {name}")),
        }
        let completed: Vec<(usize, i32)> = ring
            .completion()
            .map(|c| (c.user_data() as usize, c.result()))
            .collect();
        // Every completion taken off the ring is no longer in flight, even when an error
        // below returns before its turn: worker() drains exactly what is still counted.
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
            expect_whole(
                name,
                slot.offset,
                slot.len,
                slot.done.min(slot.len),
                job.end(),
            )?;
            xor ^= xor_from(
                job.offset,
                slot.offset,
                &slot.buf.as_slice()[..slot.len as usize],
            );
            crate::interrupt::check()?;
            if let Some((rel, len)) = claims.claim() {
                (slot.offset, slot.len, slot.done) = (start + rel, len, 0);
                submit(ring, slot, index)?;
                *in_flight += 1;
            }
        }
    }
    Ok((xor, calls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::InputKind;
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Runs the engine on a file of `real` bytes told it has `claimed`, on another thread;
    /// `None` when it did not return within the time limit.
    fn run_claiming(real: usize, claimed: u64, depth: usize) -> Option<Result<Moved>> {
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(&vec![7u8; real]).expect("write");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let job = Job {
                file: &file,
                name: "short-file",
                kind: InputKind::Regular,
                offset: 0,
                len: claimed,
                pseudo_fs: None,
                threads: 2,
                block_size: 4096,
                depth,
            };
            let _ = tx.send(Uring.run(&job));
        });
        rx.recv_timeout(Duration::from_secs(20)).ok()
    }

    #[test]
    fn a_refused_o_direct_is_reported_as_a_degradation() {
        // /proc refuses O_DIRECT everywhere; the job pretends it has a size.
        let proc = std::fs::File::open("/proc/version").expect("/proc/version");
        let mut job = Job {
            file: &proc,
            name: "/proc/version",
            kind: InputKind::Regular,
            offset: 0,
            len: 100,
            pseudo_fs: None,
            threads: 1,
            block_size: 4096,
            depth: 1,
        };
        let note = Uring.degraded(&job).expect("O_DIRECT is refused on /proc");
        assert!(
            note.starts_with("O_DIRECT: refused (open /proc/version with O_DIRECT"),
            "{note}"
        );
        let temp = tempfile::tempfile().expect("temp file");
        job.file = &temp;
        match open_direct(&temp, "temp") {
            Ok(_) => assert_eq!(Uring.degraded(&job), None),
            Err(e) => eprintln!("skipped: the temp file part: {e:#}"),
        }
    }

    #[test]
    fn a_file_shorter_than_the_job_is_an_error_and_never_a_hang() {
        if let Err(why) = available() {
            eprintln!("skipped: {why}");
            return;
        }
        for (real, claimed, depth) in [
            (10_000, 1 << 20, 8),
            (10_000, 12_288, 8),
            (0, 64 << 10, 16),
            (5 << 20, (6 << 20) + 3, 4),
        ] {
            let result = run_claiming(real, claimed, depth)
                .unwrap_or_else(|| panic!("uring hung on {real} bytes claimed as {claimed}"));
            let err = result.expect_err("a short file is an error");
            assert!(
                err.to_string().contains("short-file"),
                "{real}/{claimed}: {err:#}"
            );
        }
    }
}
