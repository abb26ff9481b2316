//! The ways each end touches the bytes, one small unit each: the sender reads the file into
//! a buffer and writes it to the socket (`read`), writes straight from a mapping of the
//! file (`mmap`), or has the kernel move page-cache pages to the socket (`sendfile`); the
//! receiver reads the socket into a buffer and writes it to the file (`write`), reads the
//! socket straight into a mapping of the file (`mmap`: size it, map, read into it), or
//! moves the bytes socket → pipe → file inside the kernel (`splice`). Every unit feeds what
//! it moved to the digest; those that never see the bytes in a buffer (sendfile, splice)
//! read them back through a mapping, in the page cache, right after moving them. Every
//! receiver first allocates the file's blocks for the announced size (fallocate): `mmap`
//! always (it never writes through a mapping of blocks not allocated, and falls back to
//! `write` where the file system cannot allocate them), the others from 1 MiB.

use super::proto::{Digest, timed_out};
use crate::engine::mmap::Mapping;
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// A connection: TCP or Unix, with its raw descriptor for sendfile and splice.
pub trait Conn: Read + Write + AsRawFd + Send {
    /// A second handle on the same connection (to read replies while writing).
    fn another(&self) -> std::io::Result<Box<dyn Conn>>;
    /// Bytes already read from the socket into a buffer and not yet consumed, up to `max`;
    /// the caller consumes them all (a kernel-side method must write them itself first),
    /// then reads the socket itself: what waits to be written is sent first.
    fn take_buffered(&mut self, _max: usize) -> std::io::Result<&[u8]> {
        Ok(&[])
    }
    /// Counts `n` bytes that arrived through the raw descriptor after waiting `took` for
    /// them (splice, a read into a mapping), as reads through the connection count theirs:
    /// fails when the peer moves too little for the time it is waited for ([`Pace`]).
    fn paced(&mut self, _n: usize, _took: Duration) -> std::io::Result<()> {
        Ok(())
    }
}

impl Conn for std::net::TcpStream {
    fn another(&self) -> std::io::Result<Box<dyn Conn>> {
        Ok(Box::new(self.try_clone()?))
    }
}

impl Conn for std::os::unix::net::UnixStream {
    fn another(&self) -> std::io::Result<Box<dyn Conn>> {
        Ok(Box::new(self.try_clone()?))
    }
}

/// The least a peer must move for each `window` (the receiver's `--timeout`) that the
/// receiver spends waiting for it.
pub const MIN_PER_WINDOW: u64 = 64 << 10;

/// A minimum rate for a peer, counted over the time spent waiting for it (not wall time:
/// a receiver busy with an fsync is not the peer's fault): once the waits add up to
/// `window`, the bytes they brought must reach [`MIN_PER_WINDOW`], or the peer is dropped.
/// The socket's timeout only bounds one wait; a peer that sends a byte just inside it
/// would otherwise hold its connection (and the files' space) for ever.
#[derive(Debug, Clone)]
pub struct Pace {
    window: Duration,
    waited: Duration,
    moved: u64,
}

impl Pace {
    /// A pace judged every `window` of waiting.
    pub fn new(window: Duration) -> Self {
        Self {
            window,
            waited: Duration::ZERO,
            moved: 0,
        }
    }

    /// Counts `n` bytes that took `took` to arrive; an error once a window of waiting
    /// brought too few.
    pub fn moved(&mut self, n: usize, took: Duration) -> std::io::Result<()> {
        self.waited += took;
        self.moved += n as u64;
        if self.waited < self.window {
            return Ok(());
        }
        if self.moved < MIN_PER_WINDOW {
            return Err(std::io::Error::other(format!(
                "the peer moved {} bytes in {} of waiting, less than {} per --timeout ({}); dropped as too slow",
                self.moved,
                crate::units::format_seconds(self.waited.as_secs_f64()),
                crate::units::format_size(MIN_PER_WINDOW),
                crate::units::format_seconds(self.window.as_secs_f64()),
            )));
        }
        self.waited = Duration::ZERO;
        self.moved = 0;
        Ok(())
    }
}

/// A receiving connection read through a 64 KiB buffer: the small frames of many small
/// files (header, body, trailer) come in one read() instead of one per field. Reads as
/// large as the buffer go straight to the socket. Writes (the replies) are gathered and
/// sent when the connection is about to wait for the sender, on `flush`, or when 4 KiB
/// are waiting: one write() for the replies to every file that arrived in one read. Every
/// read from the socket is held to a [`Pace`].
pub struct Buffered<'a> {
    inner: &'a mut dyn Conn,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    out: Vec<u8>,
    pace: Pace,
}

/// Replies waiting at most this many bytes before they are sent.
const GATHERED_REPLIES: usize = 4 << 10;

impl<'a> Buffered<'a> {
    /// Wraps `inner`; the peer must keep to `pace`.
    pub fn new(inner: &'a mut dyn Conn, pace: Pace) -> Self {
        Self {
            inner,
            buf: vec![0; 64 << 10],
            pos: 0,
            len: 0,
            out: Vec::with_capacity(GATHERED_REPLIES),
            pace,
        }
    }

    /// One read from the socket, counted against the pace.
    fn read_socket(&mut self, into: Option<&mut [u8]>) -> std::io::Result<usize> {
        let t = Instant::now();
        let n = match into {
            Some(out) => self.inner.read(out)?,
            None => self.inner.read(&mut self.buf)?,
        };
        self.pace.moved(n, t.elapsed())?;
        Ok(n)
    }
}

impl Read for Buffered<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.pos == self.len {
            // About to wait for the sender: it must have every reply so far first.
            self.flush()?;
            if out.len() >= self.buf.len() {
                return self.read_socket(Some(out));
            }
            self.len = self.read_socket(None)?;
            self.pos = 0;
        }
        let n = out.len().min(self.len - self.pos);
        out[..n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Write for Buffered<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.out.len() + bytes.len() > GATHERED_REPLIES {
            self.flush()?;
            if bytes.len() > GATHERED_REPLIES {
                return self.inner.write(bytes);
            }
        }
        self.out.extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        if !self.out.is_empty() {
            self.inner.write_all(&self.out)?;
            self.out.clear();
        }
        self.inner.flush()
    }
}

impl AsRawFd for Buffered<'_> {
    fn as_raw_fd(&self) -> i32 {
        self.inner.as_raw_fd()
    }
}

impl Conn for Buffered<'_> {
    fn another(&self) -> std::io::Result<Box<dyn Conn>> {
        self.inner.another()
    }
    fn take_buffered(&mut self, max: usize) -> std::io::Result<&[u8]> {
        let n = max.min(self.len - self.pos);
        if n < max {
            // The caller goes to the socket next.
            self.flush()?;
        }
        let at = self.pos;
        self.pos += n;
        Ok(&self.buf[at..at + n])
    }
    fn paced(&mut self, n: usize, took: Duration) -> std::io::Result<()> {
        self.pace.moved(n, took)
    }
}

/// Bytes moved per step by the kernel-side methods (and digested at a time).
const STEP: usize = 1 << 20;
/// Bytes per sendfile() call: larger than STEP, so the sender makes fewer calls while the
/// socket buffer drains.
const SEND_STEP: usize = 4 << 20;

/// How the sender moves a file's bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum SendMethod {
    /// read() into a buffer, write() to the socket.
    Read,
    /// write() to the socket from a mapping of the file.
    Mmap,
    /// sendfile(): page cache to socket in the kernel.
    Sendfile,
}

/// How the receiver moves a file's bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum RecvMethod {
    /// read() from the socket into a buffer, write() to the file.
    Write,
    /// Preallocate (or ftruncate), map the file, read() from the socket into the mapping.
    Mmap,
    /// splice(): socket to pipe to file in the kernel.
    Splice,
}

impl SendMethod {
    /// Every method.
    pub const ALL: [SendMethod; 3] = [SendMethod::Read, SendMethod::Mmap, SendMethod::Sendfile];
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            SendMethod::Read => "read",
            SendMethod::Mmap => "mmap",
            SendMethod::Sendfile => "sendfile",
        }
    }
}

impl RecvMethod {
    /// Every method.
    pub const ALL: [RecvMethod; 3] = [RecvMethod::Write, RecvMethod::Mmap, RecvMethod::Splice];
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            RecvMethod::Write => "write",
            RecvMethod::Mmap => "mmap",
            RecvMethod::Splice => "splice",
        }
    }
}

fn shrank(name: &str, at: u64, size: u64) -> anyhow::Error {
    crate::error::Failure::Check(format!(
        "{name}: the file ended at byte {at} but its size was {size} when sending began (did it shrink?)"
    ))
    .into()
}

/// For the bytes of a mapping from `at` that could not be read (MADV_POPULATE_READ, or a
/// write() from the mapping, failed: EFAULT where the file shrank below them): said as
/// [`shrank`] says it, with where the file ends now; any other error as it is, with the
/// offset.
fn mapped_unreadable(
    file: &File,
    name: &str,
    at: u64,
    size: u64,
    e: anyhow::Error,
) -> anyhow::Error {
    match file.metadata() {
        Ok(m) if m.len() < size => shrank(name, m.len(), size),
        _ => e.context(format!(
            "{name}: send the bytes from {at} through its mapping"
        )),
    }
}

/// `write_all` to the socket that Ctrl-C interrupts: a signal ends a write blocked on a full
/// socket early (EINTR, or fewer bytes), which std's `write_all` would just restart.
pub fn write_all(conn: &mut dyn Conn, mut bytes: &[u8]) -> Result<()> {
    while !bytes.is_empty() {
        crate::interrupt::check()?;
        match conn.write(bytes) {
            Ok(0) => bail!("write to the socket: it accepted no bytes"),
            Ok(n) => bytes = &bytes[n..],
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) if timed_out(&e) => {
                bail!("write to the socket: the receiver went silent (timed out)")
            }
            Err(e) => return Err(e).context("write to the socket"),
        }
    }
    Ok(())
}

/// Sends `size` bytes of `file` to `conn` by `method` (`buffer` bytes per read for `read`)
/// and returns their digest.
pub fn send(
    method: SendMethod,
    file: &File,
    name: &str,
    size: u64,
    conn: &mut dyn Conn,
    buffer: usize,
) -> Result<Digest> {
    let mut digest = Digest::new();
    if size == 0 {
        return Ok(digest);
    }
    match method {
        SendMethod::Read => {
            let mut buf = vec![0u8; buffer.min(size as usize).max(1)];
            let mut sent = 0u64;
            let mut f = file;
            while sent < size {
                let want = buf.len().min((size - sent) as usize);
                let n = match f.read(&mut buf[..want]) {
                    Ok(0) => return Err(shrank(name, sent, size)),
                    Ok(n) => n,
                    Err(e) if crate::interrupt::retry_after(&e)? => continue,
                    Err(e) => return Err(e).with_context(|| format!("read {name}")),
                };
                digest.update(&buf[..n]);
                write_all(conn, &buf[..n])?;
                sent += n as u64;
            }
        }
        SendMethod::Mmap => {
            crate::engine::mmap::install_sigbus_handler(name);
            let map = Mapping::new(file, name, 0, size)?;
            let mut at = 0u64;
            while at < size {
                crate::interrupt::check()?;
                let n = STEP.min((size - at) as usize);
                // Pages past the end of a file that shrank fail here (EFAULT) instead of
                // faulting when touched; EINVAL: a kernel without it, faults will do.
                if !map.advise(at, n, crate::engine::mmap::MADV_POPULATE_READ) {
                    let e = std::io::Error::last_os_error();
                    if e.raw_os_error() != Some(libc::EINVAL) {
                        return Err(mapped_unreadable(file, name, at, size, e.into()));
                    }
                }
                let bytes = map.slice(at, n).expect("inside the mapping");
                digest.update(bytes);
                // A cut while the socket is full unmaps the pages under write(): EFAULT.
                write_all(conn, bytes).map_err(|e| mapped_unreadable(file, name, at, size, e))?;
                at += n as u64;
            }
        }
        SendMethod::Sendfile => {
            crate::engine::mmap::install_sigbus_handler(name);
            let map = Mapping::new(file, name, 0, size)?;
            let mut offset: libc::off_t = 0;
            while (offset as u64) < size {
                // A signal during a sendfile that moved some bytes only shortens it.
                crate::interrupt::check()?;
                let start = offset as u64;
                let want = SEND_STEP.min((size - start) as usize);
                // SAFETY: both descriptors are open; offset is a live local.
                let n = unsafe {
                    libc::sendfile(conn.as_raw_fd(), file.as_raw_fd(), &mut offset, want)
                };
                if n < 0 {
                    let e = std::io::Error::last_os_error();
                    if crate::interrupt::retry_after(&e)? {
                        continue;
                    }
                    return Err(e).context("sendfile to the socket");
                }
                if n == 0 {
                    return Err(shrank(name, start, size));
                }
                digest_mapped(&mut digest, &map, start, n as usize);
            }
        }
    }
    Ok(digest)
}

/// Digests `len` bytes at `at` of a file the kernel just moved (sendfile, splice), read
/// back through `map` by plain page faults, each of which maps the 16 pages around it
/// (fault-around). Filling the step's page tables first with MADV_POPULATE_READ costs more:
/// 0.103 against 0.086 s per GiB mapped and touched here, and sendfile:splice ran 1.09x
/// faster without it (5 alternating rounds, 1 GiB).
fn digest_mapped(digest: &mut Digest, map: &Mapping, at: u64, len: usize) {
    digest.update(map.slice(at, len).expect("inside the mapping"));
}

/// Files up to this size are sent by `read` inside the frames the sender gathers: the
/// header, bytes and trailer of many small files go out in one write().
pub const GATHER: usize = 64 << 10;

/// `read` for a small file (at most [`GATHER`] bytes): its `size` bytes appended to `out`
/// (usually by one read()); returns their digest, and whether the file held more than
/// `size` bytes by then (it grew since its size was taken): each read asks for one byte
/// more than is still wanted, which costs no call when the file did not grow.
pub fn gather(file: &File, name: &str, size: u64, out: &mut Vec<u8>) -> Result<(Digest, bool)> {
    let at = out.len();
    let end = at + size as usize;
    out.resize(end + 1, 0);
    let mut f = file;
    let mut got = at;
    while got < end {
        match f.read(&mut out[got..]) {
            Ok(0) => {
                let sent = (got - at) as u64;
                out.truncate(at);
                return Err(shrank(name, sent, size));
            }
            Ok(n) => got += n,
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => return Err(e).with_context(|| format!("read {name}")),
        }
    }
    let grew = got > end;
    out.truncate(end);
    let mut digest = Digest::new();
    digest.update(&out[at..]);
    Ok((digest, grew))
}

/// The most a file that reports size 0 may hold (a /proc or /sys file): it is read whole
/// into memory before its header, which must carry its size.
pub const UNSIZED_MAX: u64 = 16 << 20;

/// The content of a file that reports size 0 (empty, or a /proc or /sys file that has
/// content all the same), read by plain read() to its end; refused past [`UNSIZED_MAX`].
pub fn read_unsized(file: &File, name: &str) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    file.take(UNSIZED_MAX + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("read {name}"))?;
    if bytes.len() as u64 > UNSIZED_MAX {
        return Err(crate::error::input(format!(
            "send {name}: reports size 0 but holds more than {} (a /proc or /sys file?); copy it to a regular file first",
            crate::units::format_size(UNSIZED_MAX)
        )));
    }
    Ok(bytes)
}

/// What [`receive`] did with one file.
#[derive(Clone)]
pub struct Received {
    /// The digest of the bytes.
    pub digest: Digest,
    /// Written by `write` instead of the method asked: the file system cannot allocate a
    /// file's blocks up front (fallocate), and a mapping of blocks not allocated would
    /// meet a full file system as SIGBUS.
    pub by_write: bool,
}

/// Reads exactly `size` bytes from `conn` into `file` (new and empty) by `method`
/// (`buffer` bytes per read for `write`); returns their digest, or an error saying how
/// many bytes arrived (the caller names the file). `mmap` only writes through a mapping
/// whose blocks fallocate allocated first, whatever the size; where the file system cannot,
/// the file is written by `write` instead (and [`Received::by_write`] says so).
pub fn receive(
    method: RecvMethod,
    conn: &mut dyn Conn,
    file: &File,
    name: &str,
    size: u64,
    buffer: usize,
) -> Result<Received> {
    let mut digest = Digest::new();
    let mut got = 0u64;
    let ended = |got: u64| anyhow::anyhow!("the stream ended after {got} of {size} bytes");
    let arrived = |got: u64| format!("after {got} of {size} bytes");
    if size == 0 {
        return Ok(Received {
            digest,
            by_write: false,
        });
    }
    let mut by_write = false;
    let method = match method {
        RecvMethod::Mmap if !preallocate(file, name, size, 0)? => {
            by_write = true;
            RecvMethod::Write
        }
        m => m,
    };
    match method {
        RecvMethod::Write => {
            // The writes extend the file themselves where it cannot be preallocated.
            if !by_write {
                preallocate(file, name, size, PREALLOCATE_FROM)?;
            }
            got = write_buffered(conn, file, name, size, &mut digest)?;
            let mut buf = vec![0u8; buffer.min((size - got) as usize).max(1)];
            let mut f = file;
            while got < size {
                let want = buf.len().min((size - got) as usize);
                let n = read_some(conn, &mut buf[..want]).with_context(|| arrived(got))?;
                if n == 0 {
                    return Err(ended(got));
                }
                digest.update(&buf[..n]);
                f.write_all(&buf[..n])
                    .with_context(|| format!("write {name}"))?;
                got += n as u64;
            }
        }
        RecvMethod::Mmap => {
            // SAFETY: a new file only this process writes, its blocks allocated and its
            // size given just above (so no store into the mapping meets a hole on a full
            // file system); the mapping is dropped before the file is synced and renamed.
            let mut map = unsafe { memmap2::MmapMut::map_mut(file) }
                .with_context(|| format!("mmap {name}"))?;
            while got < size {
                let end = (got as usize + STEP).min(size as usize);
                let n =
                    read_some(conn, &mut map[got as usize..end]).with_context(|| arrived(got))?;
                if n == 0 {
                    return Err(ended(got));
                }
                digest.update(&map[got as usize..got as usize + n]);
                got += n as u64;
            }
        }
        RecvMethod::Splice => {
            reserve(file, name, size)?;
            let map = Mapping::new(file, name, 0, size)?;
            let (pipe_r, pipe_w) = pipe()?;
            // The file's own offset (0: it is new) advances with the bytes written from the
            // connection's buffer, then with every splice into it.
            got = write_buffered(conn, file, name, size, &mut digest)?;
            while got < size {
                let want = STEP.min((size - got) as usize);
                let t = Instant::now();
                let n = splice(conn.as_raw_fd(), pipe_w.as_raw_fd(), want)
                    .and_then(|n| conn.paced(n, t.elapsed()).map(|()| n))
                    .context("splice from the socket")
                    .with_context(|| arrived(got))?;
                if n == 0 {
                    return Err(ended(got));
                }
                let mut left = n;
                while left > 0 {
                    let m = splice(pipe_r.as_raw_fd(), file.as_raw_fd(), left)
                        .with_context(|| format!("splice into {name}"))?;
                    if m == 0 {
                        bail!("splice into {name}: no progress");
                    }
                    left -= m;
                }
                digest_mapped(&mut digest, &map, got, n);
                got += n as u64;
            }
        }
    }
    Ok(Received { digest, by_write })
}

/// Writes to `file` (at its offset) the bytes of it the connection already holds, up to
/// `size`, straight from the connection's buffer (a small file's body is usually all there);
/// returns how many.
fn write_buffered(
    conn: &mut dyn Conn,
    file: &File,
    name: &str,
    size: u64,
    digest: &mut Digest,
) -> Result<u64> {
    let early = conn
        .take_buffered(size.min(usize::MAX as u64) as usize)
        .context("write to the socket")?;
    if !early.is_empty() {
        let mut f = file;
        f.write_all(early)
            .with_context(|| format!("write {name}"))?;
        digest.update(early);
    }
    Ok(early.len() as u64)
}

/// Allocates the blocks of `file` (new, empty) for its `size` bytes up front, and gives it
/// that size: the space is taken before a byte arrives (no ENOSPC half way), and the
/// writes then fill allocated blocks instead of reserving a delayed allocation per 4 KiB
/// page (ext4: 1.3-2.1x the receiving rate, measured in bench/RESULTS.md). Returns false
/// where the file system cannot (some network and older file systems):
/// nothing was done. Files below `from` bytes are left alone (false): for `write`, files
/// below [`PREALLOCATE_FROM`] are left to delayed allocation, as one extent allocated at
/// writeback costs less than a call now.
fn preallocate(file: &File, name: &str, size: u64, from: u64) -> Result<bool> {
    if size < from {
        return Ok(false);
    }
    // SAFETY: fallocate on a descriptor we own.
    if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, size as libc::off_t) } == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP | libc::ENOSYS | libc::EINVAL) => Ok(false),
        _ => Err(e).with_context(|| format!("fallocate {name} ({size} bytes)")),
    }
}

/// The smallest file a receiver preallocates.
const PREALLOCATE_FROM: u64 = 1 << 20;

/// Gives `file` (new, empty) its `size`: preallocated, else sparse (ftruncate). Only for
/// writes by the kernel (splice), which meet a full file system as ENOSPC, not SIGBUS.
fn reserve(file: &File, name: &str, size: u64) -> Result<()> {
    if !preallocate(file, name, size, PREALLOCATE_FROM)? {
        file.set_len(size)
            .with_context(|| format!("ftruncate {name}"))?;
    }
    Ok(())
}

/// One read from the connection: interrupted by Ctrl-C, timed out by the socket's timeout.
fn read_some(conn: &mut dyn Conn, buf: &mut [u8]) -> Result<usize> {
    loop {
        match conn.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) if timed_out(&e) => {
                bail!("read from the socket: the sender went silent (timed out)")
            }
            // Only a read into a mapping whose page the file system could not give.
            Err(e) if e.raw_os_error() == Some(libc::EFAULT) => {
                bail!(
                    "read from the socket into the mapping: the file system could not provide the page (full?)"
                )
            }
            Err(e) => return Err(e).context("read from the socket"),
        }
    }
}

fn pipe() -> Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-int array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("pipe");
    }
    // SAFETY: both descriptors are new and owned here.
    let pair = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // A pipe holds 64 KiB by default: one splice moves at most that. Ask for a step's worth
    // (1 MiB is the unprivileged limit by default); keep the default if refused.
    // SAFETY: fcntl on a descriptor we own.
    unsafe { libc::fcntl(pair.1.as_raw_fd(), libc::F_SETPIPE_SZ, STEP as libc::c_int) };
    Ok(pair)
}

/// splice() of up to `len` bytes from `from` to `to` (the output at its current offset);
/// retries EINTR unless the user asked to stop; a socket timeout is an error.
fn splice(from: i32, to: i32, len: usize) -> std::io::Result<usize> {
    loop {
        // SAFETY: plain descriptors; null offsets use and advance the files' own offsets.
        let n = unsafe {
            libc::splice(
                from,
                std::ptr::null_mut(),
                to,
                std::ptr::null_mut(),
                len,
                libc::SPLICE_F_MOVE | libc::SPLICE_F_MORE,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() == std::io::ErrorKind::Interrupted && !crate::interrupt::requested() {
            continue;
        }
        if e.kind() == std::io::ErrorKind::WouldBlock {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the sender went silent (timed out)",
            ));
        }
        return Err(e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gathered_file_that_grew_sends_its_announced_bytes_and_says_it_grew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let bytes: Vec<u8> = (0..100u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        // Its size was taken at 60 bytes; it holds 100 by the time it is read.
        let mut out = b"head".to_vec();
        let (digest, grew) = gather(&file, "f", 60, &mut out).unwrap();
        assert!(grew);
        assert_eq!(&out[4..], &bytes[..60]);
        let mut want = Digest::new();
        want.update(&bytes[..60]);
        assert_eq!(digest.trailer(), want.trailer());
        // Unchanged: no growth, the same bytes.
        let file = File::open(&path).unwrap();
        let mut out = Vec::new();
        let (_, grew) = gather(&file, "f", 100, &mut out).unwrap();
        assert!(!grew);
        assert_eq!(out, bytes);
        // Shrunk: an error naming it.
        let file = File::open(&path).unwrap();
        let Err(e) = gather(&file, "f", 200, &mut Vec::new()) else {
            panic!("a file shorter than announced was gathered");
        };
        assert!(format!("{e:#}").contains("did it shrink"), "{e:#}");
    }
}
