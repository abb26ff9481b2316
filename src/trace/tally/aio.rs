//! libaio, read from the traced program's memory: `io_submit(ctx, nr, iocbpp)` passes an
//! array of pointers to `struct iocb` (opcode, descriptor, buffer, size, offset), and
//! `io_getevents` fills `struct io_event`s (which iocb, its result). Reading those lets the
//! reads and writes a program submits through libaio be counted per file like pread and
//! pwrite; what cannot be read is counted as unseen, never dropped silently.

use super::{Resolver, Tally};
use crate::trace::sys::Syscall;

/// Bytes in `struct iocb` (the kernel's ABI, the same on every 64-bit and 32-bit target).
pub const IOCB_SIZE: usize = 64;
/// Bytes in `struct io_event`.
pub const EVENT_SIZE: usize = 32;

/// What one iocb asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// IOCB_CMD_PREAD.
    Pread,
    /// IOCB_CMD_PWRITE.
    Pwrite,
    /// IOCB_CMD_FSYNC.
    Fsync,
    /// IOCB_CMD_FDSYNC.
    Fdsync,
    /// IOCB_CMD_PREADV: `buf` points to `nbytes` iovecs.
    Preadv,
    /// IOCB_CMD_PWRITEV.
    Pwritev,
    /// IOCB_CMD_POLL, IOCB_CMD_NOOP and anything newer.
    Other(u16),
}

impl Op {
    fn of(code: u16) -> Self {
        match code {
            0 => Self::Pread,
            1 => Self::Pwrite,
            2 => Self::Fsync,
            3 => Self::Fdsync,
            7 => Self::Preadv,
            8 => Self::Pwritev,
            c => Self::Other(c),
        }
    }

    /// The name the per-file table shows: libaio's request, not a system call.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pread => "aio pread",
            Self::Pwrite => "aio pwrite",
            Self::Fsync => "aio fsync",
            Self::Fdsync => "aio fdsync",
            Self::Preadv => "aio preadv",
            Self::Pwritev => "aio pwritev",
            Self::Other(_) => "aio other",
        }
    }

    /// Whether it reads file data.
    pub fn reads(self) -> bool {
        matches!(self, Self::Pread | Self::Preadv)
    }

    /// Whether it writes file data.
    pub fn writes(self) -> bool {
        matches!(self, Self::Pwrite | Self::Pwritev)
    }

    /// Whether it is vectored (`nbytes` counts iovecs at `buf`).
    pub fn vectored(self) -> bool {
        matches!(self, Self::Preadv | Self::Pwritev)
    }
}

/// One `struct iocb`, the fields trace uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Iocb {
    /// The request.
    pub op: Op,
    /// The file descriptor.
    pub fd: i32,
    /// The buffer (or the iovec array).
    pub buf: u64,
    /// Bytes (or iovecs).
    pub nbytes: u64,
    /// The file offset.
    pub offset: u64,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_ne_bytes(w)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[at..at + 4]);
    u32::from_ne_bytes(w)
}

/// Parses one iocb (`IOCB_SIZE` bytes in the tracee's byte order, which is ours).
pub fn iocb(b: &[u8]) -> Option<Iocb> {
    if b.len() < IOCB_SIZE {
        return None;
    }
    // aio_data 0, aio_key/aio_rw_flags 8..16, aio_lio_opcode 16, aio_reqprio 18,
    // aio_fildes 20, aio_buf 24, aio_nbytes 32, aio_offset 40.
    let code = u16::from_ne_bytes([b[16], b[17]]);
    Some(Iocb {
        op: Op::of(code),
        fd: u32_at(b, 20) as i32,
        buf: u64_at(b, 24),
        nbytes: u64_at(b, 32),
        offset: u64_at(b, 40),
    })
}

/// The pointers of an `iocbpp` array.
pub fn pointers(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8).map(|c| u64_at(c, 0)).collect()
}

/// The total length of an iovec array.
pub fn iovec_bytes(b: &[u8]) -> u64 {
    b.chunks_exact(16).map(|c| u64_at(c, 8)).sum()
}

/// One completion: the iocb it belongs to, and its result (bytes, or `-errno`).
pub fn events(b: &[u8]) -> Vec<(u64, i64)> {
    // data 0, obj 8, res 16, res2 24.
    b.chunks_exact(EVENT_SIZE)
        .map(|c| (u64_at(c, 8), u64_at(c, 16) as i64))
        .collect()
}

/// The most requests of one io_submit read while the program waits at it.
const MOST_AT_STOP: u64 = 4096;

/// The memory an io_submit of task `tid` (`nr` requests, their pointers at `array`) is
/// read from: the pointer array, each iocb, and a vectored request's iovecs, as regions
/// (address, bytes). Read at the call's stop, before the program can reuse an iocb. An
/// array whose tail cannot be read (`nr` beyond its mapping) gives its readable prefix:
/// the kernel takes those requests, and returns how many.
pub fn submitted(tid: i32, nr: u64, array: u64) -> Vec<(u64, Vec<u8>)> {
    let nr = nr.min(MOST_AT_STOP) as usize;
    let mut list = peek_prefix(tid, array, nr * 8);
    list.truncate(list.len() / 8 * 8);
    if list.is_empty() {
        return Vec::new();
    }
    let mut regions = Vec::with_capacity(nr + 1);
    for at in pointers(&list) {
        let Some(b) = peek(tid, at, IOCB_SIZE) else {
            continue;
        };
        if let Some(cb) = iocb(&b)
            && cb.op.vectored()
            && let Some(v) = peek(tid, cb.buf, (cb.nbytes as usize).min(1024) * 16)
        {
            regions.push((cb.buf, v));
        }
        regions.push((at, b));
    }
    regions.push((array, list));
    regions
}

/// `len` bytes at `addr` where `regions` (address, bytes) hold all of them.
pub fn within(regions: &[(u64, Vec<u8>)], addr: u64, len: usize) -> Option<Vec<u8>> {
    let end = addr.checked_add(len as u64)?;
    let (at, b) = regions
        .iter()
        .find(|(at, b)| *at <= addr && end <= at + b.len() as u64)?;
    let from = (addr - at) as usize;
    Some(b[from..from + len].to_vec())
}

/// Reads `len` bytes at `addr` of task `tid` (process_vm_readv), or `None` where the
/// memory is gone or not readable.
pub fn peek(tid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let mut buf = vec![0u8; len];
    let local = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: the local iovec points to a live buffer of `len` bytes; the remote one is
    // only read by the kernel, in the other process, and checked there.
    let n = unsafe { libc::process_vm_readv(tid, &local, 1, &remote, 1, 0) };
    (n == len as isize).then_some(buf)
}

/// Reads what can be read of `len` bytes at `addr` of task `tid`: all of them, or those up
/// to the first page that cannot be read.
pub fn peek_prefix(tid: i32, addr: u64, len: usize) -> Vec<u8> {
    if let Some(all) = peek(tid, addr, len) {
        return all;
    }
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < len {
        let chunk = ((PAGE - at % PAGE) as usize).min(len - out.len());
        let Some(bytes) = peek(tid, at, chunk) else {
            break;
        };
        out.extend_from_slice(&bytes);
        at += chunk as u64;
    }
    out
}

/// Reads a NUL-terminated string (at most 4096 bytes) at `addr` of task `tid`, a page at a
/// time so that a string near the end of a mapping is still read.
pub fn peek_string(tid: i32, addr: u64) -> Option<Vec<u8>> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut at = addr;
    while out.len() < 4096 {
        let chunk = (PAGE - at % PAGE) as usize;
        let bytes = peek(tid, at, chunk)?;
        if let Some(nul) = bytes.iter().position(|&b| b == 0) {
            out.extend_from_slice(&bytes[..nul]);
            return Some(out);
        }
        out.extend_from_slice(&bytes);
        at += chunk as u64;
    }
    None
}

/// The libaio part of the accounting: requests at io_submit, results at io_getevents. The
/// time of a kind of request on a file (its `nanos`) is the time at least one of them was
/// in flight: from the entry of the io_submit that took the first to the exit of the
/// io_getevents that collected the last, so requests in flight together count once.
impl Tally {
    /// io_submit returned `s.ret` requests taken: each iocb is read from memory and counted
    /// on its file like a pread or pwrite (asked bytes, size, offset), its completion
    /// awaited from io_getevents.
    pub(super) fn aio_submit(&mut self, s: &Syscall, resolve: &dyn Resolver) {
        let taken = s.ret.max(0) as usize;
        // The whole array the kernel took, or, where part of it cannot be read now, each
        // pointer up to the first that cannot: the rest are said unread.
        let pointers = match resolve.memory(s.tid, s.args[2], taken * 8) {
            Some(b) => pointers(&b),
            None => (0..taken as u64)
                .map_while(|i| {
                    resolve
                        .memory(s.tid, s.args[2].checked_add(i * 8)?, 8)
                        .map(|b| u64_at(&b, 0))
                })
                .collect(),
        };
        self.aio_unread += (taken - pointers.len()) as u64;
        let pid = self.tgid_of.get(&s.tid).copied().unwrap_or(s.tid);
        for at in pointers {
            let Some(cb) = resolve.memory(s.tid, at, IOCB_SIZE).and_then(|b| iocb(&b)) else {
                self.aio_unread += 1;
                continue;
            };
            let bytes = if cb.op.vectored() {
                match resolve.memory(s.tid, cb.buf, (cb.nbytes as usize).min(1024) * 16) {
                    Some(b) => iovec_bytes(&b),
                    None => {
                        self.aio_unread += 1;
                        0
                    }
                }
            } else {
                cb.nbytes
            };
            let Some(d) = self.description(s.tid, cb.fd, resolve) else {
                self.aio_unread += 1;
                continue;
            };
            self.aio_pending.insert((pid, at), (d, cb.op));
            // In flight from the entry of this io_submit.
            let started = self.now_nanos.saturating_sub(s.nanos);
            let key = (self.descriptions_path(d), cb.op.name());
            let flight = self.aio_in_flight.entry(key).or_insert((0, started));
            if flight.0 == 0 {
                flight.1 = started;
            }
            flight.0 += 1;
            let data = cb.op.reads() || cb.op.writes();
            let file = self.file(d);
            let stats = super::call_stats(&mut file.calls, cb.op.name());
            stats.calls += 1;
            if data {
                stats.bytes_requested += bytes;
                file.sizes.add(bytes);
                file.offsets.add(cb.offset);
                file.timeline.add(cb.offset);
                file.order.add(cb.offset, bytes);
            } else if matches!(cb.op, Op::Fsync | Op::Fdsync) {
                file.syncs += 1;
            }
        }
    }

    /// io_getevents returned `s.ret` completions: each one's result is added to the request
    /// it completes (bytes moved, or its error).
    pub(super) fn aio_complete(&mut self, s: &Syscall, resolve: &dyn Resolver) {
        let n = s.ret.max(0) as usize;
        let Some(events) = resolve
            .memory(s.tid, s.args[3], n * EVENT_SIZE)
            .map(|b| events(&b))
        else {
            self.aio_unread += n as u64;
            return;
        };
        let pid = self.tgid_of.get(&s.tid).copied().unwrap_or(s.tid);
        for (at, res) in events {
            let Some((d, op)) = self.aio_pending.remove(&(pid, at)) else {
                self.aio_unmatched += 1;
                continue;
            };
            // Collected by the exit of this io_getevents: when the last request in flight
            // on the file is, the time since the first one's submission is added.
            let now = self.now_nanos;
            let key = (self.descriptions_path(d), op.name());
            let mut busy = 0;
            if let Some(flight) = self.aio_in_flight.get_mut(&key) {
                flight.0 = flight.0.saturating_sub(1);
                if flight.0 == 0 {
                    busy = now.saturating_sub(flight.1);
                }
            }
            let file = self.file(d);
            let stats = super::call_stats(&mut file.calls, op.name());
            stats.nanos += busy;
            if res < 0 {
                stats.errors += 1;
                *stats
                    .errnos
                    .entry(crate::trace::errno::name(-res))
                    .or_default() += 1;
                continue;
            }
            let got = res as u64;
            stats.bytes_returned += got;
            if op.reads() {
                file.bytes_read += got;
            } else if op.writes() {
                file.bytes_written += got;
            }
        }
    }

    /// What libaio did that could not be counted, in words (nothing when all was).
    pub fn unseen(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.aio_unread > 0 {
            v.push(format!(
                "libaio: {} request(s) or completion(s) could not be read from the program's memory: their files, sizes and results are not counted",
                self.aio_unread
            ));
        }
        if self.aio_unmatched > 0 {
            v.push(format!(
                "libaio: {} completion(s) belong to requests not seen submitted (before an exec, or by another process): their bytes are not counted",
                self.aio_unmatched
            ));
        }
        let pending = self.aio_pending.len();
        if pending > 0 {
            v.push(format!(
                "libaio: {pending} request(s) were submitted but their completion was never collected (io_getevents) while traced: their bytes moved are not counted"
            ));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw_iocb(code: u16, fd: u32, buf: u64, nbytes: u64, offset: u64) -> Vec<u8> {
        let mut b = vec![0u8; IOCB_SIZE];
        b[16..18].copy_from_slice(&code.to_ne_bytes());
        b[20..24].copy_from_slice(&fd.to_ne_bytes());
        b[24..32].copy_from_slice(&buf.to_ne_bytes());
        b[32..40].copy_from_slice(&nbytes.to_ne_bytes());
        b[40..48].copy_from_slice(&offset.to_ne_bytes());
        b
    }

    #[test]
    fn an_iocb_gives_its_opcode_descriptor_size_and_offset() {
        let i = iocb(&raw_iocb(1, 7, 0x1000, 4096, 1 << 20)).unwrap();
        assert_eq!(
            i,
            Iocb {
                op: Op::Pwrite,
                fd: 7,
                buf: 0x1000,
                nbytes: 4096,
                offset: 1 << 20
            }
        );
        assert_eq!(iocb(&raw_iocb(0, 3, 0, 1, 0)).unwrap().op, Op::Pread);
        assert_eq!(iocb(&raw_iocb(6, 3, 0, 0, 0)).unwrap().op, Op::Other(6));
        assert!(iocb(&[0u8; 10]).is_none());
    }

    #[test]
    fn events_name_their_iocb_and_result_and_a_failure_is_negative() {
        let mut b = vec![0u8; 2 * EVENT_SIZE];
        b[8..16].copy_from_slice(&0xabcu64.to_ne_bytes());
        b[16..24].copy_from_slice(&4096i64.to_ne_bytes());
        b[40..48].copy_from_slice(&0xdefu64.to_ne_bytes());
        b[48..56].copy_from_slice(&(-5i64).to_ne_bytes());
        assert_eq!(events(&b), vec![(0xabc, 4096), (0xdef, -5)]);
    }

    /// A made-up process: fd 5 is "/f/aio"; memory is a map of addresses to bytes.
    struct Memory(std::collections::HashMap<u64, Vec<u8>>);
    impl crate::trace::tally::Resolver for Memory {
        fn path(&self, _: i32, fd: i32) -> Option<std::ffi::OsString> {
            (fd == 5).then(|| "/f/aio".into())
        }
        fn position(&self, _: i32, _: i32) -> Option<u64> {
            Some(0)
        }
        fn tgid(&self, tid: i32) -> Option<i32> {
            Some(tid)
        }
        fn memory(&self, _: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
            self.0.get(&addr).filter(|b| b.len() == len).cloned()
        }
    }

    #[test]
    fn an_array_whose_tail_cannot_be_read_has_its_readable_requests_counted_and_the_rest_said() {
        use crate::trace::call::Call;
        use crate::trace::sys::{Event, Syscall};
        use crate::trace::tally::Tally;
        // iocbpp at 0x100: pointers at 0x100 and 0x108 readable, 0x110 not.
        let mut mem = std::collections::HashMap::new();
        mem.insert(0x100, 0x200u64.to_ne_bytes().to_vec());
        mem.insert(0x108, 0x300u64.to_ne_bytes().to_vec());
        mem.insert(0x200, raw_iocb(0, 5, 0x9000, 4096, 0));
        mem.insert(0x300, raw_iocb(0, 5, 0x9000, 4096, 4096));
        let proc = Memory(mem);
        let mut t = Tally::new(1);
        let args = [7, 3, 0x100, 0, 0, 0];
        let call = Call::IoSubmit;
        t.event(&Event::Enter { tid: 1, call, args }, &proc);
        let exit = Syscall {
            tid: 1,
            call,
            args,
            ret: 3,
            failed: false,
            nanos: 1,
        };
        t.event(&Event::Exit(exit), &proc);
        let files = t.files();
        let f = files.iter().find(|f| f.path == "/f/aio").unwrap();
        assert_eq!(f.calls["aio pread"].calls, 2);
        assert_eq!(f.calls["aio pread"].bytes_requested, 8192);
        assert_eq!(t.aio_unread, 1);
    }

    #[test]
    fn submitted_requests_count_like_pread_and_pwrite_and_completions_add_their_bytes() {
        use crate::trace::call::Call;
        use crate::trace::sys::{Event, Syscall};
        use crate::trace::tally::Tally;
        let mut mem = std::collections::HashMap::new();
        // iocbpp at 0x100: two iocbs at 0x200 (read 4096 at 8192) and 0x300 (write 512 at 0).
        let mut pp = 0x200u64.to_ne_bytes().to_vec();
        pp.extend(0x300u64.to_ne_bytes());
        mem.insert(0x100, pp);
        mem.insert(0x200, raw_iocb(0, 5, 0x9000, 4096, 8192));
        mem.insert(0x300, raw_iocb(1, 5, 0x9000, 512, 0));
        // events at 0x400: the read got 4096, the write failed with EIO.
        let mut ev = vec![0u8; 2 * EVENT_SIZE];
        ev[8..16].copy_from_slice(&0x200u64.to_ne_bytes());
        ev[16..24].copy_from_slice(&4096i64.to_ne_bytes());
        ev[40..48].copy_from_slice(&0x300u64.to_ne_bytes());
        ev[48..56].copy_from_slice(&(-i64::from(libc::EIO)).to_ne_bytes());
        mem.insert(0x400, ev);
        let proc = Memory(mem);
        let mut t = Tally::new(1);
        let call = |t: &mut Tally, call, args: [u64; 6], ret| {
            t.event(&Event::Enter { tid: 1, call, args }, &proc);
            let exit = Syscall {
                tid: 1,
                call,
                args,
                ret,
                failed: false,
                nanos: 1,
            };
            t.event(&Event::Exit(exit), &proc);
        };
        call(&mut t, Call::IoSubmit, [7, 2, 0x100, 0, 0, 0], 2);
        call(&mut t, Call::IoGetevents, [7, 1, 2, 0x400, 0, 0], 2);
        // A submission whose array cannot be read is counted as unseen.
        call(&mut t, Call::IoSubmit, [7, 1, 0x999, 0, 0, 0], 1);
        let files = t.files();
        let f = files.iter().find(|f| f.path == "/f/aio").unwrap();
        let read = &f.calls["aio pread"];
        assert_eq!(
            (read.calls, read.bytes_requested, read.bytes_returned),
            (1, 4096, 4096)
        );
        let write = &f.calls["aio pwrite"];
        assert_eq!((write.calls, write.errors), (1, 1));
        assert_eq!(write.errnos["EIO"], 1);
        assert_eq!((f.bytes_read, f.bytes_written), (4096, 0));
        assert_eq!(f.sizes.buckets(), vec![(512, 1), (4096, 1)]);
        let none = files.iter().find(|f| f.path == "(no file)").unwrap();
        assert_eq!(none.calls["io_submit"].calls, 2);
        assert_eq!(none.calls["io_getevents"].calls, 1);
        assert_eq!(t.aio_unread, 1);
        assert!(
            t.unseen()[0].starts_with("libaio: 1 request"),
            "{:?}",
            t.unseen()
        );
    }

    #[test]
    fn requests_in_flight_together_count_their_time_once_and_idle_gaps_not_at_all() {
        use crate::trace::call::Call;
        use crate::trace::sys::{Event, Syscall};
        use crate::trace::tally::Tally;
        let mut mem = std::collections::HashMap::new();
        // Two reads of 4096 (iocbs at 0x200 and 0x300), submitted together (array 0x100)
        // or one at a time (arrays 0x110 and 0x120); completions at 0x400 (both), 0x500
        // (the first), 0x600 (the second).
        let mut both = 0x200u64.to_ne_bytes().to_vec();
        both.extend(0x300u64.to_ne_bytes());
        mem.insert(0x100, both);
        mem.insert(0x110, 0x200u64.to_ne_bytes().to_vec());
        mem.insert(0x120, 0x300u64.to_ne_bytes().to_vec());
        mem.insert(0x200, raw_iocb(0, 5, 0x9000, 4096, 0));
        mem.insert(0x300, raw_iocb(0, 5, 0x9000, 4096, 4096));
        let event = |at: u64| {
            let mut e = vec![0u8; EVENT_SIZE];
            e[8..16].copy_from_slice(&at.to_ne_bytes());
            e[16..24].copy_from_slice(&4096i64.to_ne_bytes());
            e
        };
        let mut two = event(0x200);
        two.extend(event(0x300));
        mem.insert(0x400, two);
        mem.insert(0x500, event(0x200));
        mem.insert(0x600, event(0x300));
        let proc = Memory(mem);
        // A call that exits at `at` ns after taking 100 ns.
        let call = |t: &mut Tally, at: u64, call, args: [u64; 6], ret| {
            t.at(at);
            t.event(&Event::Enter { tid: 1, call, args }, &proc);
            let exit = Syscall {
                tid: 1,
                call,
                args,
                ret,
                failed: false,
                nanos: 100,
            };
            t.event(&Event::Exit(exit), &proc);
        };
        let nanos = |t: &Tally| {
            let files = t.files();
            let f = files.iter().find(|f| f.path == "/f/aio").unwrap();
            (f.calls["aio pread"].nanos, f.bytes_read)
        };
        // Together: submitted at 1,000 (entry 900), one collected at 5,000, the other at
        // 9,000: 8,100 ns in flight, not 4,100 + 8,100.
        let mut t = Tally::new(1);
        call(&mut t, 1_000, Call::IoSubmit, [7, 2, 0x100, 0, 0, 0], 2);
        call(&mut t, 5_000, Call::IoGetevents, [7, 1, 1, 0x500, 0, 0], 1);
        call(&mut t, 9_000, Call::IoGetevents, [7, 1, 1, 0x600, 0, 0], 1);
        assert_eq!(nanos(&t), (8_100, 8192));
        // One at a time with an idle gap between: 1,100 + 1,100, not the 10,100 span.
        let mut t = Tally::new(1);
        call(&mut t, 1_000, Call::IoSubmit, [7, 1, 0x110, 0, 0, 0], 1);
        call(&mut t, 2_000, Call::IoGetevents, [7, 1, 1, 0x500, 0, 0], 1);
        call(&mut t, 10_000, Call::IoSubmit, [7, 1, 0x120, 0, 0, 0], 1);
        call(&mut t, 11_000, Call::IoGetevents, [7, 1, 1, 0x600, 0, 0], 1);
        assert_eq!(nanos(&t), (2_200, 8192));
        // Both collected by one io_getevents.
        let mut t = Tally::new(1);
        call(&mut t, 1_000, Call::IoSubmit, [7, 2, 0x100, 0, 0, 0], 2);
        call(&mut t, 3_000, Call::IoGetevents, [7, 2, 2, 0x400, 0, 0], 2);
        assert_eq!(nanos(&t), (2_100, 8192));
    }

    #[test]
    fn this_process_can_read_its_own_memory_and_strings() {
        let me = std::process::id() as i32;
        let data = *b"abc\0def";
        let got = peek(me, data.as_ptr() as u64, 7).unwrap();
        assert_eq!(got, data);
        assert_eq!(peek_string(me, data.as_ptr() as u64).unwrap(), b"abc");
        assert!(
            peek(me, 8, 8).is_none(),
            "an unmapped address reads nothing"
        );
    }
}
