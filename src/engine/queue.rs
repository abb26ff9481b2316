//! The queue engine: requests kept in flight on a file, each with its own direction, offset
//! and length, reaped as they complete. [`Ring`] keeps up to its depth in flight through
//! io_uring; [`Calls`] makes them one at a time with pread/pwrite, where io_uring is refused.
//! Both hold the buffers their requests use (one per slot, given by the caller), so none is
//! freed while the kernel may still write into it.
//!
//! It is not in the table of readers ([`super::ENGINES`]): a command reaches it through the
//! harness's queue loop.
//!
//! As fio's `engines/io_uring.c` beside its core (`td_io_queue`, `account_io_completion`),
//! the engine only queues and reaps: it reads no clock and keeps no account. The harness
//! (`harness::queue`) chooses what to queue, stamps each request as it goes to the
//! kernel and as it is reaped, and hands each completion to its caller.
//!
//! No buffer is registered with the kernel (`IORING_REGISTER_BUFFERS`): registered memory
//! counts against `RLIMIT_MEMLOCK`, 8 MiB for an ordinary user, less than one SEQ1M Q8 row
//! needs. Buffers are page-aligned ([`super::buffer::ALIGN`]) for O_DIRECT; a length that is
//! not a multiple of the device's block is the caller's to refuse.

use super::buffer::AlignedBuffer;
use crate::files;
pub use crate::workload::Op;
use anyhow::{Context, Result};
use io_uring::{IoUring, opcode, types};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::time::Instant;

/// How a queue's bytes move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// io_uring, O_DIRECT.
    UringDirect,
    /// io_uring through the page cache (O_DIRECT refused).
    UringBuffered,
    /// pread/pwrite with O_DIRECT, one in flight per thread (io_uring refused).
    SyncDirect,
    /// pread/pwrite through the page cache, one in flight per thread.
    SyncBuffered,
}

impl Path {
    /// The path taken when io_uring is (`ring`) or is not allowed, and O_DIRECT is
    /// (`direct`) or is not.
    pub fn of(ring: bool, direct: bool) -> Self {
        match (ring, direct) {
            (true, true) => Path::UringDirect,
            (true, false) => Path::UringBuffered,
            (false, true) => Path::SyncDirect,
            (false, false) => Path::SyncBuffered,
        }
    }

    /// The name it is saved under (`uring_direct`), for CSV cells.
    pub fn saved_name(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }

    /// Whether the I/O bypassed the page cache.
    pub fn direct(self) -> bool {
        matches!(self, Path::UringDirect | Path::SyncDirect)
    }

    /// Whether io_uring carried it.
    pub fn uring(self) -> bool {
        matches!(self, Path::UringDirect | Path::UringBuffered)
    }

    /// What this path means for the figures, said when it is a fallback.
    pub fn fallback_note(self) -> &'static str {
        match self {
            Path::UringBuffered => "buffered io_uring: reads may be served from the page cache",
            Path::SyncDirect => "pread/pwrite with O_DIRECT, 1 in flight per thread",
            Path::UringDirect | Path::SyncBuffered => {
                "buffered pread/pwrite, 1 in flight per thread: reads may be served from the page cache"
            }
        }
    }
}

/// Why a ring of `depth` cannot be had here (`io_uring refused (…)`), or `None` when it can;
/// `forced` acts as if the kernel refused it (tests of the fallback).
pub fn ring_refused(depth: usize, forced: bool) -> Option<String> {
    if forced {
        Some(std::io::Error::from_raw_os_error(libc::ENOSYS))
    } else {
        super::uring::ring(ring_entries(depth)).err()
    }
    .map(|e| format!("io_uring refused ({})", files::describe(&e)))
}

/// Ring entries for `depth` requests (io_uring takes at least 2).
fn ring_entries(depth: usize) -> u32 {
    u32::try_from(depth.max(2)).unwrap_or(u32::MAX)
}

/// One request: the slot whose buffer it uses, its direction, where, and how many bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// The slot (0 to the depth): its buffer, and the id its completion comes back with.
    pub id: usize,
    /// Read into the buffer, or write from it.
    pub op: Op,
    /// Byte offset in the file.
    pub offset: u64,
    /// Bytes, at most the slot's buffer.
    pub len: usize,
}

/// A request reaped, and what it did.
#[derive(Debug)]
pub struct Completion {
    /// The request.
    pub request: Request,
    /// Bytes moved (fewer than asked at the end of the file), or the error.
    pub result: std::io::Result<usize>,
    /// Whether io_uring carried it (for messages).
    ring: bool,
}

impl Completion {
    /// A request done outside io_uring (a call, a simulated device).
    pub(super) fn made(request: Request, result: std::io::Result<usize>) -> Self {
        Self {
            request,
            result,
            ring: false,
        }
    }

    /// The bytes moved when the whole request moved; else the error, naming the operation,
    /// `name`, the offset and the engine. `why` is added to a short transfer or a failed call
    /// (what may explain it, such as the file having shrunk).
    pub fn whole(&self, name: &str, why: impl FnOnce() -> String) -> Result<usize> {
        let Request {
            op, offset, len, ..
        } = self.request;
        let verb = op.name();
        match &self.result {
            Ok(n) if *n == len => Ok(*n),
            Ok(n) if self.ring => Err(anyhow::anyhow!(
                "{verb} {name} at byte {offset}: {n} of {len} bytes moved (io_uring){}",
                why()
            )),
            Ok(n) => Err(anyhow::anyhow!(
                "{verb} {name} at byte {offset}: {n} of {len} bytes moved{}",
                why()
            )),
            Err(e) if self.ring => Err(e.raw_os_error().map_or_else(
                || std::io::Error::new(e.kind(), e.to_string()),
                std::io::Error::from_raw_os_error,
            ))
            .with_context(|| format!("{verb} {name} at byte {offset} (io_uring)")),
            Err(e) => Err(anyhow::anyhow!(
                "{verb} {name} at byte {offset}: {}{}",
                files::describe(e),
                why()
            )),
        }
    }
}

/// Requests in flight on one file, on one thread.
pub trait Queue {
    /// Requests it keeps in flight at most: its slots, ids `0..depth`.
    fn depth(&self) -> usize;
    /// The buffer of slot `id`, which must not be in flight: a write's bytes go here before
    /// it is queued, a read's bytes are here once it is reaped.
    fn buffer(&mut self, id: usize) -> &mut [u8];
    /// Queues `request` on its free slot; it goes to the kernel at the next
    /// [`Queue::submit`] or [`Queue::reap`].
    fn queue(&mut self, request: Request) -> Result<()>;
    /// Hands what is queued to the kernel without waiting.
    fn submit(&mut self) -> Result<()>;
    /// Hands what is queued to the kernel, waits for one completion at least, and appends
    /// every completion ready to `done`.
    fn reap(&mut self, done: &mut Vec<Completion>) -> Result<()>;
    /// As [`Queue::reap`], but waits no later than `deadline`: `done` may get nothing (an
    /// open-loop row waits so for its next arrival). A queue whose calls complete as they
    /// are made (pread/pwrite) ignores the deadline.
    fn reap_until(&mut self, done: &mut Vec<Completion>, deadline: Instant) -> Result<()> {
        let _ = deadline;
        self.reap(done)
    }
    /// Requests queued or in flight, not reaped yet.
    fn pending(&self) -> usize;
}

/// A slot: its buffer, and the request using it (`None`: free).
pub(super) struct Slot {
    pub(super) buf: AlignedBuffer,
    pub(super) request: Option<Request>,
}

pub(super) fn slots(buffers: Vec<AlignedBuffer>) -> Vec<Slot> {
    buffers
        .into_iter()
        .map(|buf| Slot { buf, request: None })
        .collect()
}

/// The free slot `id` for `request`, or why it cannot take it.
pub(super) fn take<'a>(slots: &'a mut [Slot], request: &Request) -> Result<&'a mut Slot> {
    let slot = slots
        .get_mut(request.id)
        .ok_or_else(|| anyhow::anyhow!("queue: no slot {}", request.id))?;
    if slot.request.is_some() {
        anyhow::bail!("queue: slot {} is in flight", request.id);
    }
    if request.len > slot.buf.len() {
        anyhow::bail!(
            "queue: {} bytes asked of a buffer of {}",
            request.len,
            slot.buf.len()
        );
    }
    Ok(slot)
}

/// Frees slot `id` of a completed request: the request it held, which must be in flight.
pub(super) fn release(slots: &mut [Slot], id: usize) -> Request {
    slots[id]
        .request
        .take()
        .expect("a completion comes back for a request queued on its slot")
}

/// The buffer of `slots[id]`, which must not be in flight.
pub(super) fn free_buffer(slots: &mut [Slot], id: usize) -> &mut [u8] {
    let slot = &mut slots[id];
    assert!(
        slot.request.is_none(),
        "slot {id}'s buffer is in flight: the kernel may be writing into it"
    );
    slot.buf.as_mut_slice()
}

/// io_uring with up to its depth in flight. Dropping it waits for what is in flight before
/// the buffers go (or leaks them where the ring cannot be drained).
pub struct Ring {
    ring: IoUring,
    fd: types::Fd,
    name: String,
    slots: Vec<Slot>,
    /// Requests pushed to the ring and not reaped (queued or in flight).
    pending: usize,
    /// Reaped from the ring, gathered before they are handed out; made once.
    reaped: Vec<(usize, i32)>,
}

impl Ring {
    /// A ring on `file` (named `name` in messages) with one slot per buffer, set up as
    /// [`super::uring::ring`] sets it up. `whom` says who asked, in the setup's error.
    pub fn new(file: &File, name: &str, buffers: Vec<AlignedBuffer>, whom: &str) -> Result<Self> {
        let depth = buffers.len().max(1);
        let ring = super::uring::ring(ring_entries(depth)).map_err(|e| {
            anyhow::anyhow!(
                "io_uring setup for {whom}: {}{}",
                files::describe(&e),
                if e.raw_os_error() == Some(libc::EMFILE) {
                    "; each thread needs one descriptor for its ring: lower --threads or raise the limit (ulimit -n)"
                } else {
                    ""
                }
            )
        })?;
        Ok(Self {
            ring,
            fd: types::Fd(file.as_raw_fd()),
            name: name.to_string(),
            reaped: Vec::with_capacity(buffers.len()),
            slots: slots(buffers),
            pending: 0,
        })
    }
}

impl Queue for Ring {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buffer(&mut self, id: usize) -> &mut [u8] {
        free_buffer(&mut self.slots, id)
    }

    fn queue(&mut self, request: Request) -> Result<()> {
        let fd = self.fd;
        let slot = take(&mut self.slots, &request)?;
        let buf = &mut slot.buf.as_mut_slice()[..request.len];
        let len = u32::try_from(buf.len()).context("queue: a request of 4 GiB or more")?;
        let entry = match request.op {
            Op::Write => opcode::Write::new(fd, buf.as_ptr(), len)
                .offset(request.offset)
                .build(),
            Op::Read => opcode::Read::new(fd, buf.as_mut_ptr(), len)
                .offset(request.offset)
                .build(),
        }
        .user_data(request.id as u64);
        // SAFETY: the slot's buffer is marked in flight below and not handed out again until
        // its completion is reaped; Drop waits for every request in flight before the
        // buffers are freed (or leaks them when it cannot).
        unsafe { self.ring.submission().push(&entry) }
            .map_err(|_| anyhow::anyhow!("io_uring submission queue full"))?;
        slot.request = Some(request);
        self.pending += 1;
        Ok(())
    }

    fn submit(&mut self) -> Result<()> {
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if crate::interrupt::retry_after(&e)? => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("io_uring submit on {}", self.name));
                }
            }
        }
    }

    fn reap(&mut self, done: &mut Vec<Completion>) -> Result<()> {
        loop {
            match self.ring.submit_and_wait(1) {
                Ok(_) => break,
                Err(e) if crate::interrupt::retry_after(&e)? => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("io_uring wait on {}", self.name));
                }
            }
        }
        self.collect(done);
        Ok(())
    }

    fn reap_until(&mut self, done: &mut Vec<Completion>, deadline: Instant) -> Result<()> {
        let left = deadline.saturating_duration_since(Instant::now());
        if !self.ring.params().is_feature_ext_arg() {
            // Before Linux 5.11: no wait with a timeout; hand the queue over, take what is
            // ready, and nap at most 20 µs (the caller comes back before its deadline).
            self.submit()?;
            self.collect(done);
            if done.is_empty() {
                std::thread::sleep(left.min(std::time::Duration::from_micros(20)));
                self.collect(done);
            }
            return Ok(());
        }
        let ts = types::Timespec::from(left);
        let args = types::SubmitArgs::new().timespec(&ts);
        match self.ring.submitter().submit_with_args(1, &args) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::ETIME) => {}
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e).with_context(|| format!("io_uring wait on {}", self.name));
            }
        }
        self.collect(done);
        Ok(())
    }

    fn pending(&self) -> usize {
        self.pending
    }
}

impl Ring {
    /// Takes every completion ready in the ring into `done`, each slot freed.
    fn collect(&mut self, done: &mut Vec<Completion>) {
        self.reaped.clear();
        self.reaped.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data() as usize, c.result())),
        );
        // Everything taken from the ring is no longer in flight, whatever the caller does
        // with it: the drain must not wait for it.
        self.pending -= self.reaped.len();
        for &(id, res) in &self.reaped {
            let request = release(&mut self.slots, id);
            done.push(Completion {
                request,
                result: if res < 0 {
                    Err(std::io::Error::from_raw_os_error(-res))
                } else {
                    Ok(res as usize)
                },
                ring: true,
            });
        }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        let slots = std::mem::take(&mut self.slots);
        super::uring::drain(&mut self.ring, self.pending, slots);
    }
}

/// pread/pwrite, one request at a time: the request is made when it is submitted (or
/// reaped), and completes at once.
pub struct Calls<'a> {
    file: &'a File,
    slots: Vec<Slot>,
    /// Queued, not made yet.
    queued: Vec<Request>,
    /// Made, not reaped yet.
    made: Vec<Completion>,
}

impl<'a> Calls<'a> {
    /// Calls on `file` with one slot per buffer (one in flight at a time whatever their
    /// number).
    pub fn new(file: &'a File, buffers: Vec<AlignedBuffer>) -> Self {
        Self {
            file,
            slots: slots(buffers),
            queued: Vec::new(),
            made: Vec::new(),
        }
    }

    /// Makes the queued requests, each whole (a short transfer is an error), retried after
    /// a signal.
    fn make(&mut self) -> Result<()> {
        for request in std::mem::take(&mut self.queued) {
            let buf = &mut self.slots[request.id].buf.as_mut_slice()[..request.len];
            let result = loop {
                let r = match request.op {
                    Op::Write => self.file.write_all_at(buf, request.offset),
                    Op::Read => self.file.read_exact_at(buf, request.offset),
                };
                match r {
                    Err(e) if crate::interrupt::retry_after(&e)? => {}
                    r => break r.map(|()| request.len),
                }
            };
            self.made.push(Completion {
                request,
                result,
                ring: false,
            });
        }
        Ok(())
    }
}

impl Queue for Calls<'_> {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buffer(&mut self, id: usize) -> &mut [u8] {
        free_buffer(&mut self.slots, id)
    }

    fn queue(&mut self, request: Request) -> Result<()> {
        take(&mut self.slots, &request)?.request = Some(request);
        self.queued.push(request);
        Ok(())
    }

    fn submit(&mut self) -> Result<()> {
        self.make()
    }

    fn reap(&mut self, done: &mut Vec<Completion>) -> Result<()> {
        self.make()?;
        for c in self.made.drain(..) {
            release(&mut self.slots, c.request.id);
            done.push(c);
        }
        Ok(())
    }

    fn pending(&self) -> usize {
        self.queued.len() + self.made.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of `len` bytes, byte i being `i * 7 + i / 4096`.
    fn file_of(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4096) as u8).collect();
        let mut f = tempfile::NamedTempFile::new_in(".").expect("a temp file here");
        std::io::Write::write_all(&mut f, &bytes).expect("write the temp file");
        (f, bytes)
    }

    fn buffers(n: usize, len: usize) -> Vec<AlignedBuffer> {
        (0..n).map(|_| AlignedBuffer::new(len)).collect()
    }

    /// A ring, or `None` with the reason printed where io_uring is refused here.
    fn ring(file: &File, n: usize, len: usize) -> Option<Ring> {
        if let Some(why) = ring_refused(n, false) {
            eprintln!("skipped: {why}");
            return None;
        }
        Some(Ring::new(file, "test", buffers(n, len), "test").expect("a ring where one can be had"))
    }

    /// Reads `offsets` of `len` bytes through `q`, refilling each slot as it completes;
    /// each completion's bytes, and the most ever pending.
    fn read_all(q: &mut dyn Queue, offsets: &[u64], len: usize) -> (Vec<(u64, Vec<u8>)>, usize) {
        let mut next = offsets.iter();
        let mut got = Vec::new();
        let mut most = 0;
        for id in 0..q.depth() {
            if let Some(&offset) = next.next() {
                q.queue(Request {
                    id,
                    op: Op::Read,
                    offset,
                    len,
                })
                .expect("queue");
            }
        }
        let mut done = Vec::new();
        while q.pending() > 0 {
            most = most.max(q.pending());
            done.clear();
            q.reap(&mut done).expect("reap");
            for c in done.drain(..) {
                let n = c.whole("test", String::new).expect("a whole read");
                let id = c.request.id;
                got.push((c.request.offset, q.buffer(id)[..n].to_vec()));
                if let Some(&offset) = next.next() {
                    q.queue(Request {
                        id,
                        op: Op::Read,
                        offset,
                        len,
                    })
                    .expect("queue");
                    q.submit().expect("submit");
                }
            }
        }
        (got, most)
    }

    fn check_reads(q: &mut dyn Queue, bytes: &[u8], depth: usize) {
        let offsets: Vec<u64> = (0..40u64).map(|i| (i * 37 % 64) * 4096).collect();
        let (got, most) = read_all(q, &offsets, 4096);
        assert_eq!(got.len(), offsets.len());
        for (offset, data) in got {
            let at = offset as usize;
            assert_eq!(data, bytes[at..at + 4096], "bytes at {offset}");
        }
        assert!(most <= depth, "{most} pending with {depth} slots");
    }

    #[test]
    fn reads_through_the_ring_return_the_bytes_at_the_offsets_asked_within_its_depth() {
        let (f, bytes) = file_of(64 * 4096);
        let Some(mut q) = ring(f.as_file(), 4, 4096) else {
            return;
        };
        check_reads(&mut q, &bytes, 4);
    }

    #[test]
    fn reads_through_calls_return_the_bytes_at_the_offsets_asked_one_at_a_time() {
        let (f, bytes) = file_of(64 * 4096);
        let mut q = Calls::new(f.as_file(), buffers(1, 4096));
        check_reads(&mut q, &bytes, 1);
    }

    #[test]
    fn a_write_then_a_read_of_other_lengths_move_the_callers_bytes() {
        let (f, _) = file_of(8 * 4096);
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(f.path())
            .expect("reopen");
        let mut queues: Vec<Box<dyn Queue>> = vec![Box::new(Calls::new(&file, buffers(1, 8192)))];
        if let Some(r) = ring(&file, 1, 8192) {
            queues.push(Box::new(r));
        }
        for (i, q) in queues.iter_mut().enumerate() {
            let mine = vec![0xa0 + i as u8; 5000];
            q.buffer(0)[..5000].copy_from_slice(&mine);
            let mut done = Vec::new();
            for op in [Op::Write, Op::Read] {
                if op == Op::Read {
                    q.buffer(0).fill(0);
                }
                q.queue(Request {
                    id: 0,
                    op,
                    offset: 100,
                    len: 5000,
                })
                .expect("queue");
                done.clear();
                q.reap(&mut done).expect("reap");
                assert_eq!(done.len(), 1);
                assert_eq!(done[0].whole("test", String::new).expect("whole"), 5000);
            }
            assert_eq!(q.buffer(0)[..5000], mine[..]);
        }
        let on_disk = std::fs::read(f.path()).expect("read back");
        assert_eq!(
            on_disk[100..5100],
            vec![0xa0 + (queues.len() as u8 - 1); 5000][..]
        );
    }

    #[test]
    fn a_read_past_the_end_is_reported_short_with_the_reason_given() {
        let (f, _) = file_of(4096 + 100);
        let mut queues: Vec<Box<dyn Queue>> =
            vec![Box::new(Calls::new(f.as_file(), buffers(1, 4096)))];
        if let Some(r) = ring(f.as_file(), 1, 4096) {
            queues.push(Box::new(r));
        }
        for q in &mut queues {
            q.queue(Request {
                id: 0,
                op: Op::Read,
                offset: 4096,
                len: 4096,
            })
            .expect("queue");
            let mut done = Vec::new();
            q.reap(&mut done).expect("reap");
            let err = done[0]
                .whole("f", || ": it shrank".to_string())
                .expect_err("a short read is an error");
            let msg = format!("{err:#}");
            assert!(msg.contains("read f at byte 4096"), "{msg}");
            assert!(msg.contains("it shrank"), "{msg}");
            if let Ok(n) = done[0].result {
                assert_eq!(n, 100, "the ring reports the bytes it moved");
            }
        }
    }

    #[test]
    fn an_error_of_the_kernel_is_surfaced_with_the_operation_and_the_offset() {
        // A descriptor open for reading only: every write fails with EBADF.
        let (f, _) = file_of(4096);
        let file = File::open(f.path()).expect("open for reading");
        let mut queues: Vec<Box<dyn Queue>> = vec![Box::new(Calls::new(&file, buffers(1, 4096)))];
        if let Some(r) = ring(&file, 2, 4096) {
            queues.push(Box::new(r));
        }
        for q in &mut queues {
            q.queue(Request {
                id: 0,
                op: Op::Write,
                offset: 0,
                len: 4096,
            })
            .expect("queue");
            let mut done = Vec::new();
            q.reap(&mut done).expect("reap");
            let e = done[0]
                .result
                .as_ref()
                .expect_err("a write on a read-only fd");
            assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{e}");
            let msg = format!("{:#}", done[0].whole("f", String::new).expect_err("error"));
            assert!(msg.starts_with("write f at byte 0"), "{msg}");
        }
    }

    #[test]
    fn a_slot_in_flight_or_a_request_larger_than_its_buffer_is_refused() {
        let (f, _) = file_of(4096);
        let mut q = Calls::new(f.as_file(), buffers(1, 4096));
        let r = Request {
            id: 0,
            op: Op::Read,
            offset: 0,
            len: 4096,
        };
        assert!(q.queue(Request { len: 8192, ..r }).is_err());
        assert!(q.queue(Request { id: 1, ..r }).is_err());
        q.queue(r).expect("queue");
        assert!(q.queue(r).is_err(), "the slot is taken");
    }
}
