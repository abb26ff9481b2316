//! Files from a sender to a receiver over a socket (TCP or Unix), every byte verified. The
//! wire format is in [`proto`], the ways each end touches the bytes in [`methods`], where
//! a received file is created and how it is published in `place`; this file holds the two
//! ends: addresses, the sender's walk over its files, and the receiver's rules (a
//! server's): loopback unless told otherwise and then only with a token; names confined to
//! its directory; nothing overwritten without `--force`; free space checked against each
//! announced size; each file written unnamed (or under a temporary name), verified, synced
//! and only then linked (or renamed) into place; any failure leaves nothing partial (nor
//! the directories made for that file) and ends the connection, saying which file and how
//! many bytes arrived.

pub mod methods;
mod place;
pub mod proto;

use crate::error::input;
use crate::files;
use anyhow::{Context, Result, anyhow};
use methods::{Conn, RecvMethod, SendMethod};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Read;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Where a receiver listens or a sender connects: `HOST:PORT` or `unix:PATH`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// TCP.
    Tcp(String),
    /// A Unix domain socket.
    Unix(PathBuf),
}

impl Endpoint {
    /// Parses `unix:PATH` or `HOST:PORT`.
    pub fn parse(text: &str) -> Result<Self> {
        if let Some(path) = text.strip_prefix("unix:") {
            if path.is_empty() {
                return Err(input(format!("address {text:?}: unix: needs a path")));
            }
            return Ok(Endpoint::Unix(PathBuf::from(path)));
        }
        if !text.contains(':') {
            return Err(input(format!(
                "address {text:?}: expected HOST:PORT (127.0.0.1:7878) or unix:PATH"
            )));
        }
        Ok(Endpoint::Tcp(text.to_string()))
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Tcp(a) => f.write_str(a),
            Endpoint::Unix(p) => write!(f, "unix:{}", p.display()),
        }
    }
}

/// A bound listener, TCP or Unix.
pub enum Listener {
    /// TCP.
    Tcp(TcpListener),
    /// Unix, with its path and the (device, inode) of the socket made there: removed on
    /// drop if that path still names it, never a file put there since.
    Unix(UnixListener, PathBuf, Option<(u64, u64)>),
}

/// The (device, inode) of what `path` names, not following a link.
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Listener::Unix(_, path, Some(made)) = self
            && identity(path) == Some(*made)
        {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Listener {
    /// Binds `at`. A TCP address that is not loopback needs `remote` (the caller also
    /// demands a token then).
    pub fn bind(at: &Endpoint, remote: bool) -> Result<Self> {
        match at {
            Endpoint::Tcp(addr) => {
                let addrs: Vec<_> = addr
                    .to_socket_addrs()
                    .map_err(|e| input(format!("listen on {addr}: {e}")))?
                    .collect();
                if !remote && addrs.iter().any(|a| !a.ip().is_loopback()) {
                    return Err(input(format!(
                        "listen on {addr}: not a loopback address; other machines could send files here: add --allow-remote (a token is then required)"
                    )));
                }
                let l = TcpListener::bind(&addrs[..])
                    .map_err(|e| input(format!("listen on {addr}: {e}")))?;
                Ok(Listener::Tcp(l))
            }
            Endpoint::Unix(path) => {
                let l = UnixListener::bind(path).map_err(|e| {
                    input(format!(
                        "listen on unix:{}: {}",
                        path.display(),
                        files::describe(&e)
                    ))
                })?;
                Ok(Listener::Unix(l, path.clone(), identity(path)))
            }
        }
    }

    /// The address it is bound to (the port chosen when 0 was asked).
    pub fn endpoint(&self) -> Endpoint {
        match self {
            Listener::Tcp(l) => Endpoint::Tcp(
                l.local_addr()
                    .map_or_else(|_| "?".into(), |a| a.to_string()),
            ),
            Listener::Unix(_, p, _) => Endpoint::Unix(p.clone()),
        }
    }

    fn raw(&self) -> i32 {
        match self {
            Listener::Tcp(l) => l.as_raw_fd(),
            Listener::Unix(l, ..) => l.as_raw_fd(),
        }
    }

    /// Waits for the next connection; Ctrl-C ends the wait (it is polled every 200 ms).
    pub fn accept(&self, timeout: Duration) -> Result<Box<dyn Conn>> {
        let mut pfd = libc::pollfd {
            fd: self.raw(),
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            crate::interrupt::check()?;
            // SAFETY: one live pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, 200) };
            if r > 0 {
                break;
            }
        }
        let conn: Box<dyn Conn> = match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept().context("accept")?;
                s.set_nodelay(true).ok();
                s.set_read_timeout(Some(timeout)).ok();
                s.set_write_timeout(Some(timeout)).ok();
                Box::new(s)
            }
            Listener::Unix(l, ..) => {
                let (s, _) = l.accept().context("accept")?;
                s.set_read_timeout(Some(timeout)).ok();
                s.set_write_timeout(Some(timeout)).ok();
                Box::new(s)
            }
        };
        Ok(conn)
    }
}

/// Connects to `to`.
pub fn connect(to: &Endpoint, timeout: Duration) -> Result<Box<dyn Conn>> {
    Ok(match to {
        Endpoint::Tcp(addr) => {
            let s = TcpStream::connect(addr.as_str())
                .map_err(|e| input(format!("connect to {addr}: {e}")))?;
            s.set_nodelay(true).ok();
            s.set_read_timeout(Some(timeout)).ok();
            s.set_write_timeout(Some(timeout)).ok();
            Box::new(s)
        }
        Endpoint::Unix(path) => {
            let s = UnixStream::connect(path).map_err(|e| {
                input(format!(
                    "connect to unix:{}: {}",
                    path.display(),
                    files::describe(&e)
                ))
            })?;
            s.set_read_timeout(Some(timeout)).ok();
            s.set_write_timeout(Some(timeout)).ok();
            Box::new(s)
        }
    })
}

/// A file to send: where it is and the relative name it gets.
#[derive(Debug, Clone)]
pub struct Outgoing {
    /// The file.
    pub path: PathBuf,
    /// The name on the wire ('/'-separated, relative).
    pub name: Vec<u8>,
}

/// The files under the paths given: a file is sent under its own name; a directory's
/// files (recursively, symlinks not followed) under names relative to its parent. Two
/// paths that would arrive under one name are refused here: the receiver would keep the
/// first and refuse the second half way through the stream. Also returns what a directory
/// held that is neither a file nor a directory (symlinks, FIFOs, sockets, devices): left
/// out, for the caller to say so.
pub fn outgoing(paths: &[PathBuf]) -> Result<(Vec<Outgoing>, Vec<PathBuf>)> {
    fn walk(
        dir: &Path,
        prefix: &[u8],
        out: &mut Vec<Outgoing>,
        skipped: &mut Vec<PathBuf>,
    ) -> Result<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| input(format!("send {}: {}", dir.display(), files::describe(&e))))?
            .collect::<std::io::Result<_>>()
            .map_err(|e| input(format!("send {}: {}", dir.display(), files::describe(&e))))?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let mut name = prefix.to_vec();
            name.push(b'/');
            name.extend_from_slice(e.file_name().as_bytes());
            let t = e.file_type()?;
            if t.is_dir() {
                walk(&e.path(), &name, out, skipped)?;
            } else if t.is_file() {
                out.push(Outgoing {
                    path: e.path(),
                    name,
                });
            } else {
                skipped.push(e.path());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(p)
            .map_err(|e| input(format!("send {}: {}", p.display(), files::describe(&e))))?;
        let base = p
            .file_name()
            .ok_or_else(|| {
                input(format!(
                    "send {}: no file name to send it under",
                    p.display()
                ))
            })?
            .as_bytes()
            .to_vec();
        if meta.is_dir() {
            walk(p, &base, &mut out, &mut skipped)?;
        } else if meta.is_file() {
            out.push(Outgoing {
                path: p.clone(),
                name: base,
            });
        } else {
            return Err(input(format!(
                "send {}: not a regular file or directory",
                p.display()
            )));
        }
    }
    let mut seen = std::collections::HashMap::with_capacity(out.len());
    for f in &out {
        if let Some(first) = seen.insert(&f.name[..], &f.path) {
            return Err(input(format!(
                "send {}: it would arrive under the name {:?}, as {} would; send one of them",
                f.path.display(),
                String::from_utf8_lossy(&f.name),
                first.display()
            )));
        }
    }
    Ok((out, skipped))
}

/// What one side did with one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileDone {
    /// The name on the wire.
    pub name: String,
    /// Bytes moved.
    pub bytes: u64,
    /// Seconds from header to reply.
    pub seconds: f64,
}

/// What one side did over one connection.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Session {
    /// Files moved and verified.
    pub files: Vec<FileDone>,
    /// Bytes moved.
    pub bytes: u64,
    /// Seconds from connection to the final reply.
    pub seconds: f64,
    /// Files that grew while they were sent (the sender's side): each arrived with the
    /// bytes it had when sending began, as its header announced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grew: Vec<String>,
}

/// Options of a sender.
#[derive(Debug, Clone)]
pub struct SendOptions {
    /// How the bytes are moved.
    pub method: SendMethod,
    /// Buffer size of `read`.
    pub buffer: usize,
    /// Token to present.
    pub token: Vec<u8>,
}

/// Sends `files` over `conn`; each is verified and in place when its reply comes. Replies
/// are read on a second thread while the files go out, so a file's round trip does not
/// stall the next (many small files); the first refusal stops the sending.
pub fn send_all(conn: &mut dyn Conn, files: &[Outgoing], options: &SendOptions) -> Result<Session> {
    let started = Instant::now();
    let refused = |what: String| anyhow::Error::from(crate::error::Failure::Check(what));
    proto::write_hello(conn, &options.token)?;
    proto::read_reply(conn)?
        .map_err(|m| refused(format!("send: the receiver refused the connection: {m}")))?;
    let mut replies = std::io::BufReader::with_capacity(
        4 << 10,
        conn.another()
            .context("send: a second handle on the connection")?,
    );
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        // The reader: one reply per file and one for the end, in order; their times.
        // (reply times, the index and message of a refusal, a broken connection)
        type Heard = (Vec<f64>, Option<(usize, String)>, Option<anyhow::Error>);
        let reader = scope.spawn(|| -> Heard {
            // Ctrl-C must interrupt the writing thread, blocked on a full socket.
            crate::interrupt::keep_away();
            let mut times = Vec::with_capacity(files.len());
            for i in 0..=files.len() {
                let heard = proto::read_reply(&mut replies);
                if !matches!(heard, Ok(Ok(()))) {
                    stop.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                match heard {
                    Ok(Ok(())) => times.push(started.elapsed().as_secs_f64()),
                    Ok(Err(m)) => return (times, Some((i, m)), None),
                    Err(e) => return (times, None, Some(e)),
                }
            }
            (times, None, None)
        });
        let mut sizes = Vec::with_capacity(files.len());
        let mut grew = Vec::new();
        let written = send_files(conn, files, options, &stop, &mut sizes, &mut grew);
        if written.is_err() {
            // Wake the reader: no more replies are coming for what was not sent.
            // SAFETY: shutting down a socket we own.
            unsafe { libc::shutdown(conn.as_raw_fd(), libc::SHUT_RDWR) };
        }
        let (times, refusal, broken) = reader
            .join()
            .map_err(|_| anyhow!("send: the reply reader panicked"))?;
        if let Some((i, m)) = refusal {
            // The receiver's word first: it explains a failed write that followed.
            let what = files.get(i).map_or_else(
                || "the end of the stream".to_string(),
                |f| String::from_utf8_lossy(&f.name).into_owned(),
            );
            return Err(refused(format!(
                "send {what}: the receiver refused it: {m}"
            )));
        }
        written?;
        if let Some(e) = broken {
            return Err(e.context("send: the connection broke before every file was confirmed"));
        }
        let mut last = 0.0;
        let done = files
            .iter()
            .zip(&times)
            .zip(&sizes)
            .map(|((f, &t), &bytes)| {
                let d = FileDone {
                    name: String::from_utf8_lossy(&f.name).into_owned(),
                    bytes,
                    seconds: t - last,
                };
                last = t;
                d
            })
            .collect::<Vec<_>>();
        Ok(Session {
            bytes: done.iter().map(|d| d.bytes).sum(),
            files: done,
            seconds: started.elapsed().as_secs_f64(),
            grew: grew
                .iter()
                .map(|&i| String::from_utf8_lossy(&files[i].name).into_owned())
                .collect(),
        })
    })
}

/// Writes every file's frame and the end of the stream, and the size of each file sent
/// into `sizes`; stops early once the reader saw a refusal. Frames are gathered in one
/// buffer and written when it holds [`methods::GATHER`] bytes or before a file whose bytes
/// go out by themselves: a small file sent by `read` costs open, fstat, read and close.
fn send_files(
    conn: &mut dyn Conn,
    files: &[Outgoing],
    options: &SendOptions,
    stop: &std::sync::atomic::AtomicBool,
    sizes: &mut Vec<u64>,
    grew: &mut Vec<usize>,
) -> Result<()> {
    let mut out = Vec::with_capacity(2 * methods::GATHER);
    let flush = |conn: &mut dyn Conn, out: &mut Vec<u8>| -> Result<()> {
        methods::write_all(conn, out)?;
        out.clear();
        Ok(())
    };
    for (i, f) in files.iter().enumerate() {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(());
        }
        crate::interrupt::check()?;
        let shown = String::from_utf8_lossy(&f.name).into_owned();
        let file = File::open(&f.path).map_err(|e| {
            input(format!(
                "send {}: {}",
                f.path.display(),
                files::describe(&e)
            ))
        })?;
        let meta = file
            .metadata()
            .with_context(|| format!("stat {}", f.path.display()))?;
        use std::os::unix::fs::PermissionsExt;
        // A file that reports size 0 may still have content (/proc, /sys): read to its end.
        let unsized_bytes = if meta.len() == 0 {
            methods::read_unsized(&file, &shown)?
        } else {
            Vec::new()
        };
        let header = proto::Header {
            name: f.name.clone(),
            size: meta.len().max(unsized_bytes.len() as u64),
            mode: meta.permissions().mode() & 0o777,
        };
        proto::put_header(&mut out, &header);
        let (digest, grown) = if meta.len() == 0 {
            out.extend_from_slice(&unsized_bytes);
            let mut d = proto::Digest::new();
            d.update(&unsized_bytes);
            (d, false)
        } else if options.method == SendMethod::Read && header.size <= methods::GATHER as u64 {
            methods::gather(&file, &shown, header.size, &mut out)?
        } else {
            flush(conn, &mut out)?;
            let d = methods::send(
                options.method,
                &file,
                &shown,
                header.size,
                conn,
                options.buffer,
            )?;
            // One fstat per file sent by itself (not per small file gathered).
            (d, file.metadata().is_ok_and(|m| m.len() > header.size))
        };
        if grown {
            grew.push(i);
        }
        proto::put_trailer(&mut out, digest.trailer());
        sizes.push(header.size);
        if out.len() >= methods::GATHER {
            flush(conn, &mut out)?;
        }
    }
    proto::put_end(&mut out);
    flush(conn, &mut out)
}

/// Options of a receiver.
#[derive(Debug, Clone)]
pub struct ReceiveOptions {
    /// Where files go.
    pub dir: PathBuf,
    /// How the bytes are moved.
    pub method: RecvMethod,
    /// Buffer size of `write`.
    pub buffer: usize,
    /// The token a sender must present (`None`: none needed, loopback only).
    pub token: Option<Vec<u8>>,
    /// Replace existing files.
    pub force: bool,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// fsync each file before it is renamed into place (on unless `--no-sync`).
    pub sync: bool,
    /// How long a peer may take over its whole greeting (token included): a peer that
    /// trickles it a byte at a time, each within the socket's timeout, is refused then.
    pub greeting_within: Duration,
}

/// A reader that fails once `until` has passed, whatever each read returned: the socket's
/// timeout bounds one read, this bounds them all.
struct Deadline<'a> {
    inner: &'a mut dyn Conn,
    until: Instant,
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if Instant::now() >= self.until {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the greeting took too long",
            ));
        }
        self.inner.read(buf)
    }
}

/// What a connection may still write: free space less the margin, asked of the file system
/// once and counted down per file, asked again only when a file would not fit (space may
/// have been freed meanwhile). One statvfs per connection instead of one per file.
struct Budget {
    room: Option<u64>,
}

impl Budget {
    fn take(&mut self, dir: &Path, name: &str, bytes: u64, min_free: Option<u64>) -> Result<()> {
        let room = match self.room {
            Some(r) if r >= bytes => r,
            _ => {
                files::ensure_room(dir, name, bytes, 0, min_free)?;
                files::room(dir, min_free)?
            }
        };
        self.room = Some(room.saturating_sub(bytes));
        Ok(())
    }
}

/// Serves one connection: every file verified, synced and renamed into place, or the
/// first failure (which ends the connection, its partial file removed). The refusal is
/// sent to the sender before the error is returned.
pub fn receive_one(conn: &mut dyn Conn, options: &ReceiveOptions) -> Result<Session> {
    let started = Instant::now();
    let mut buffered = methods::Buffered::new(conn);
    let conn: &mut dyn Conn = &mut buffered;
    let token = proto::read_hello(&mut Deadline {
        inner: &mut *conn,
        until: started + options.greeting_within,
    })
    .map_err(|e| {
        if started.elapsed() >= options.greeting_within {
            e.context(format!(
                "receive: a peer did not complete its greeting within {}; dropped",
                crate::units::format_seconds(options.greeting_within.as_secs_f64())
            ))
        } else {
            e
        }
    })?;
    if let Some(want) = &options.token
        && !constant_time_eq(want, &token)
    {
        let _ = proto::write_reply(conn, &Err("wrong token".into()));
        let _ = conn.flush();
        return Err(crate::error::Failure::Check(
            "receive: a sender presented a wrong token; refused".into(),
        )
        .into());
    }
    // The directory may have gone since the receiver started: the sender is told so.
    let mut dirs = match place::Dirs::open(&options.dir) {
        Ok(dirs) => dirs,
        Err(e) => {
            let e = e.context("receive");
            let _ = proto::write_reply(conn, &Err(format!("{e:#}")));
            let _ = conn.flush();
            return Err(e);
        }
    };
    proto::write_reply(conn, &Ok(()))?;
    let mut done = Vec::new();
    let mut budget = Budget { room: None };
    while let Some(header) = proto::read_header(conn)? {
        let t = Instant::now();
        let shown = String::from_utf8_lossy(&header.name).into_owned();
        match receive_file(conn, options, &header, &mut dirs, &mut budget) {
            Ok(()) => {
                proto::write_reply(conn, &Ok(()))?;
                done.push(FileDone {
                    name: shown,
                    bytes: header.size,
                    seconds: t.elapsed().as_secs_f64(),
                });
            }
            Err(e) => {
                dirs.unmake();
                let _ = proto::write_reply(conn, &Err(format!("{e:#}")));
                let _ = conn.flush();
                drain(conn);
                return Err(e);
            }
        }
    }
    proto::write_reply(conn, &Ok(()))?;
    conn.flush().context("send the last reply")?;
    Ok(Session {
        bytes: done.iter().map(|d| d.bytes).sum(),
        files: done,
        seconds: started.elapsed().as_secs_f64(),
        grew: Vec::new(),
    })
}

/// After a refusal: no more writes, and what the sender still has in flight is read and
/// dropped (up to 64 MiB), so that closing does not reset the connection before the sender
/// has read why.
fn drain(conn: &mut dyn Conn) {
    let fd = conn.as_raw_fd();
    let wait = libc::timeval {
        tv_sec: 2,
        tv_usec: 0,
    };
    // SAFETY: shutting down the write side of a socket we own, and bounding its reads to
    // 2 s with a live timeval.
    unsafe {
        libc::shutdown(fd, libc::SHUT_WR);
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&wait as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        );
    }
    let mut buf = [0u8; 64 << 10];
    let mut left: u64 = 64 << 20;
    while left > 0 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => left = left.saturating_sub(n as u64),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn receive_file(
    conn: &mut dyn Conn,
    options: &ReceiveOptions,
    header: &proto::Header,
    dirs: &mut place::Dirs,
    budget: &mut Budget,
) -> Result<()> {
    let shown = String::from_utf8_lossy(&header.name).into_owned();
    let refuse = |why: String| {
        anyhow!(crate::error::Failure::Check(format!(
            "receive {shown}: {why}"
        )))
    };
    let parts = proto::confined(&header.name).map_err(refuse)?;
    budget
        .take(&options.dir, &shown, header.size, options.min_free)
        .map_err(|e| refuse(format!("{e:#}")))?;
    let incoming = dirs
        .create(&parts, header.size, header.mode, options.force)
        .map_err(refuse)?;
    let digest = methods::receive(
        options.method,
        conn,
        &incoming.file,
        &shown,
        header.size,
        options.buffer,
    )
    .with_context(|| format!("receive {shown}"))?;
    let trailer = proto::read_trailer(conn)
        .with_context(|| format!("receive {shown}: all {} bytes arrived", header.size))?;
    let got = digest.trailer();
    if got != trailer {
        return Err(refuse(format!(
            "checksum mismatch: sent XOR {:08x} XXH3 {:016x}, received XOR {:08x} XXH3 {:016x}; removed",
            trailer.xor, trailer.hash, got.xor, got.hash
        )));
    }
    incoming
        .publish(options.sync, options.force)
        .map_err(|e| refuse(format!("{e:#}")))
}
