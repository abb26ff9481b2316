//! Files from a sender to a receiver over a socket (TCP or Unix), every byte verified. The
//! wire format is in [`proto`], the ways each end touches the bytes in [`methods`], where a
//! received file is created and how it is published in `place`. This file holds the two
//! ends: addresses, the sender's walk over its files, and the receiver's rules, which are a
//! server's:
//!
//! - it listens on loopback unless told otherwise, and then only with a token;
//! - it serves connections at once, a bounded number, each on its own thread, held to a
//!   timeout and a minimum pace, so that no slow peer holds the others up;
//! - names stay inside its directory, nothing is overwritten without `--force`, and modes
//!   lose the umask unless `--keep-mode`;
//! - free space and inodes are checked again for each announced file, by blocks, against
//!   the margin;
//! - each file is written unnamed (or under a temporary name), verified, synced, and only
//!   then linked (or renamed) into place;
//! - a failure leaves nothing partial (nor the directories made for that file) and ends the
//!   connection with a refusal the sender prints, naming the file and the bytes that arrived.

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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
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
            Endpoint::Unix(p) => write!(f, "unix:{}", crate::text::printable_path(p)),
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

/// Whether `ip` is a loopback address, an IPv4 one written IPv6-mapped
/// (`::ffff:127.0.0.1`) included.
fn loopback(ip: std::net::IpAddr) -> bool {
    match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback(),
        std::net::IpAddr::V6(v6) => {
            v6.is_loopback() || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
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

/// The longest path a Unix socket can be bound at (sun_path, less its NUL).
pub const UNIX_PATH_MAX: usize = 107;

/// A Unix socket listening at `path`, which appears only once it listens: it is bound and
/// listens under a temporary name beside `path`, then is renamed into place without
/// replacing anything there. (Bound at `path` directly, the file exists a moment before
/// `listen()`, and a sender that waits for it can be refused.) Where the temporary name is
/// too long for a socket, or the file system cannot rename without replacing, it is bound
/// at `path` directly.
fn listening_at(path: &Path) -> std::io::Result<UnixListener> {
    use std::os::unix::ffi::OsStrExt;
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return UnixListener::bind(path);
    };
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.listening", std::process::id()));
    let tmp = dir.join(tmp_name);
    if tmp.as_os_str().len() > UNIX_PATH_MAX {
        return UnixListener::bind(path);
    }
    remove_stale_temporaries(dir, name);
    let listener = UnixListener::bind(&tmp)?;
    let (from, to) = (
        std::ffi::CString::new(tmp.as_os_str().as_bytes())?,
        std::ffi::CString::new(path.as_os_str().as_bytes())?,
    );
    // SAFETY: both are NUL-terminated paths that outlive the call.
    let renamed = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    if renamed == 0 {
        return Ok(listener);
    }
    let err = std::io::Error::last_os_error();
    let _ = std::fs::remove_file(&tmp);
    match err.raw_os_error() {
        // Something is already there: what binding there would have said.
        Some(libc::EEXIST) => Err(std::io::Error::from_raw_os_error(libc::EADDRINUSE)),
        Some(libc::EINVAL | libc::ENOSYS) => UnixListener::bind(path),
        _ => Err(err),
    }
}

/// Removes the temporary sockets of [`listening_at`] for `name` in `dir` left by receivers
/// that no longer run (killed between bind and rename: SIGKILL leaves no way to clean up).
/// Only sockets named `.NAME.PID.listening` whose PID is gone are removed.
fn remove_stale_temporaries(dir: &Path, name: &std::ffi::OsStr) {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileTypeExt;
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(name.as_bytes());
    prefix.push(b'.');
    let Ok(entries) = std::fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .as_bytes()
            .strip_prefix(prefix.as_slice())
            .and_then(|rest| rest.strip_suffix(b".listening"))
            .and_then(|pid| std::str::from_utf8(pid).ok())
            .and_then(|pid| pid.parse::<i32>().ok())
            .filter(|&pid| pid > 0)
        else {
            continue;
        };
        // SAFETY: signal 0 only asks whether the process exists.
        let gone = unsafe { libc::kill(pid, 0) } != 0
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
        if gone && entry.file_type().is_ok_and(|t| t.is_socket()) {
            let _ = std::fs::remove_file(entry.path());
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
                if !remote && addrs.iter().any(|a| !loopback(a.ip())) {
                    return Err(input(format!(
                        "listen on {addr}: not a loopback address; other machines could send files here: add --allow-remote (a token is then required)"
                    )));
                }
                let l = TcpListener::bind(&addrs[..])
                    .map_err(|e| input(format!("listen on {addr}: {e}")))?;
                // Non-blocking: a connection that went away between poll and accept
                // would otherwise block accept (and Ctrl-C) until the next one.
                l.set_nonblocking(true)
                    .map_err(|e| input(format!("listen on {addr}: {e}")))?;
                Ok(Listener::Tcp(l))
            }
            Endpoint::Unix(path) => {
                let l = listening_at(path).map_err(|e| {
                    input(format!(
                        "listen on unix:{}: {}",
                        crate::text::printable_path(path),
                        files::describe(&e)
                    ))
                })?;
                let made = identity(path);
                l.set_nonblocking(true).map_err(|e| {
                    input(format!(
                        "listen on unix:{}: {}",
                        crate::text::printable_path(path),
                        files::describe(&e)
                    ))
                })?;
                Ok(Listener::Unix(l, path.clone(), made))
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
        loop {
            if self.ready()?
                && let Some(conn) = self.take(timeout)?
            {
                return Ok(conn);
            }
        }
    }

    /// Waits up to 200 ms for a connection to arrive; Ctrl-C is an error.
    pub fn ready(&self) -> Result<bool> {
        crate::interrupt::check()?;
        let mut pfd = libc::pollfd {
            fd: self.raw(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, 200) };
        Ok(r > 0)
    }

    /// Accepts the connection that arrived (`None`: it went away meanwhile), blocking,
    /// its reads and writes bounded by `timeout`.
    pub fn take(&self, timeout: Duration) -> Result<Option<Box<dyn Conn>>> {
        fn gone<T>(r: std::io::Result<T>) -> Result<Option<T>> {
            match r {
                Ok(v) => Ok(Some(v)),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(None),
                Err(e) => Err(e).context("accept"),
            }
        }
        let conn: Box<dyn Conn> = match self {
            Listener::Tcp(l) => {
                let Some((s, _)) = gone(l.accept())? else {
                    return Ok(None);
                };
                s.set_nonblocking(false).context("accept")?;
                s.set_nodelay(true).ok();
                s.set_read_timeout(Some(timeout)).ok();
                s.set_write_timeout(Some(timeout)).ok();
                Box::new(s)
            }
            Listener::Unix(l, ..) => {
                let Some((s, _)) = gone(l.accept())? else {
                    return Ok(None);
                };
                s.set_nonblocking(false).context("accept")?;
                s.set_read_timeout(Some(timeout)).ok();
                s.set_write_timeout(Some(timeout)).ok();
                Box::new(s)
            }
        };
        Ok(Some(conn))
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
                    crate::text::printable_path(path),
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
/// files (recursively, symlinks not followed) under names relative to its parent. Errors
/// name the path and the problem; the caller says what it was doing (and where to). Two
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
        let listing = |e: std::io::Error| {
            input(format!(
                "read the directory {}: {}",
                crate::text::printable_path(dir),
                files::describe(&e)
            ))
        };
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(listing)?
            .collect::<std::io::Result<_>>()
            .map_err(listing)?;
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
        let meta = std::fs::metadata(p).map_err(|e| {
            input(format!(
                "{}: {}",
                crate::text::printable_path(p),
                files::describe(&e)
            ))
        })?;
        let base = p
            .file_name()
            .ok_or_else(|| {
                input(format!(
                    "{}: no file name to send it under",
                    crate::text::printable_path(p)
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
                "{}: not a regular file or directory",
                crate::text::printable_path(p)
            )));
        }
    }
    let mut seen = std::collections::HashMap::with_capacity(out.len());
    for f in &out {
        if let Some(first) = seen.insert(&f.name[..], &f.path) {
            return Err(input(format!(
                "{}: it would arrive under the name {:?}, as {} would; send one of them",
                crate::text::printable_path(&f.path),
                String::from_utf8_lossy(&f.name),
                crate::text::printable_path(first)
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
    /// Files the receiver wrote by `write` instead of the method asked: the file system
    /// cannot allocate a file's blocks up front, which `mmap` needs (the receiver's side).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub by_write: Vec<String>,
}

/// How a sender moves its files (what `send` and each transfer of the `transfer` experiment
/// use; `options::SendOptions` holds it with the rest of `send`'s options).
#[derive(Debug, Clone)]
pub struct Sending {
    /// How the bytes are moved.
    pub method: SendMethod,
    /// Buffer size of `read`.
    pub buffer: usize,
    /// Token to present.
    pub token: Vec<u8>,
    /// The receiver's address, as every error names it.
    pub to: String,
}

/// Sends `files` over `conn`; each is verified and in place when its reply comes. Replies
/// are read on a second thread while the files go out, so a file's round trip does not
/// stall the next (many small files); the first refusal stops the sending. Every error
/// names the receiver's address (and the file, where one was being sent).
pub fn send_all(conn: &mut dyn Conn, files: &[Outgoing], options: &Sending) -> Result<Session> {
    send_files_to(conn, files, options).map_err(|e| e.context(format!("send to {}", options.to)))
}

fn send_files_to(conn: &mut dyn Conn, files: &[Outgoing], options: &Sending) -> Result<Session> {
    let started = Instant::now();
    let refused = |what: String| anyhow::Error::from(crate::error::Failure::Check(what));
    if options.token.len() > usize::from(u16::MAX) {
        return Err(input(format!(
            "--token: {} bytes cannot be sent (at most {} are accepted)",
            options.token.len(),
            proto::MAX_TOKEN
        )));
    }
    // A receiver may refuse before it reads the greeting (busy) and close: its reply is
    // read even when the greeting could not be written, as it says why.
    let hello = proto::write_hello(conn, &options.token);
    match proto::read_reply(conn) {
        Ok(Err(m)) => {
            return Err(refused(format!("the receiver refused the connection: {m}")));
        }
        Ok(Ok(())) => hello?,
        Err(e) => {
            hello?;
            return Err(e);
        }
    }
    let mut replies = std::io::BufReader::with_capacity(
        4 << 10,
        conn.another()
            .context("a second handle on the connection")?,
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
            .map_err(|_| anyhow!("the reply reader panicked"))?;
        if let Some((i, m)) = refusal {
            // The receiver's word first: it explains a failed write that followed.
            let what = files.get(i).map_or_else(
                || "the end of the stream".to_string(),
                |f| String::from_utf8_lossy(&f.name).into_owned(),
            );
            return Err(refused(format!("{what}: the receiver refused it: {m}")));
        }
        written?;
        if let Some(e) = broken {
            return Err(e.context("the connection broke before every file was confirmed"));
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
            by_write: Vec::new(),
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
    options: &Sending,
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
                "open {}: {}",
                crate::text::printable_path(&f.path),
                files::describe(&e)
            ))
        })?;
        let meta = file
            .metadata()
            .with_context(|| format!("stat {}", crate::text::printable_path(&f.path)))?;
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
            // All of them: the receiver keeps those beyond its umask only with --keep-mode.
            mode: meta.permissions().mode() & 0o7777,
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

/// How a receiver takes its files (what `receive` and each transfer of the `transfer`
/// experiment use; `options::ReceiveOptions` holds it with the rest of `receive`'s options).
#[derive(Debug, Clone)]
pub struct Receiving {
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
    /// Afterwards, each time the receiver has waited this long for the peer in all, the
    /// peer must have moved [`methods::MIN_PER_WINDOW`] bytes ([`methods::Pace`]).
    pub timeout: Duration,
    /// Keep the sender's permission bits whole (also setuid, setgid and sticky, and those
    /// the umask clears); otherwise a file gets the sender's `rwx` bits less the umask.
    pub keep_mode: bool,
    /// Space promised to the files in flight on every connection of this receiver.
    pub pending: Arc<Pending>,
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

/// What the files being received (on every connection of one receiver) will still take:
/// the file system's free space shows it only once their blocks are allocated. A file's
/// footprint is promised when its header arrives, after a check against the free space
/// read then (so other writers are seen) less what is promised already, and given back
/// when the file is in place or refused (a file in flight may be counted twice meanwhile:
/// on the safe side).
#[derive(Debug, Default)]
pub struct Pending(Mutex<files::Footprint>);

/// A file's share of [`Pending`], given back on drop.
struct Promise<'a> {
    pending: &'a Pending,
    need: files::Footprint,
}

impl Drop for Promise<'_> {
    fn drop(&mut self) {
        let mut held = lock(&self.pending.0);
        held.files = held.files.saturating_sub(self.need.files);
        held.data = held.data.saturating_sub(self.need.data);
        held.bytes = held.bytes.saturating_sub(self.need.bytes);
    }
}

/// Locks `m`, also after a thread panicked holding it (what it guards stays consistent:
/// plain counters and a table of descriptors).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Pending {
    /// Promises the room for a file of `bytes` in the directory open as `dir` (shown as
    /// `shown`), or refuses it: its blocks and metadata must leave the margin free, and the
    /// inodes must leave free as large a share of the file system's as the margin is of its
    /// space (8,000 empty files take no blocks but can exhaust its inodes).
    fn promise(
        &self,
        dir: &place::Dirs,
        shown: &str,
        bytes: u64,
        min_free: Option<u64>,
    ) -> Result<Promise<'_>> {
        let mut held = lock(&self.0);
        let (space, inodes) = dir.space()?;
        let need = files::Footprint::of_file(bytes, space.block);
        let seen = files::Space {
            available: space.available.saturating_sub(held.bytes),
            inodes_available: space.inodes_available.saturating_sub(held.files),
            ..space
        };
        check_room(seen, inodes, shown, need, min_free)?;
        held.files = held.files.saturating_add(need.files);
        held.data = held.data.saturating_add(need.data);
        held.bytes = held.bytes.saturating_add(need.bytes);
        Ok(Promise {
            pending: self,
            need,
        })
    }
}

/// Refuses files of footprint `need` in `dir` (`shown` in the message) that would leave
/// less than the margin free, counted by blocks, or fewer inodes free than the margin's
/// share ([`Pending::promise`]).
pub fn ensure_room_in(
    dir: &Path,
    shown: &str,
    need: files::Footprint,
    min_free: Option<u64>,
) -> Result<()> {
    let (space, inodes) = place::Dirs::open(dir, false)?.space()?;
    check_room(space, inodes, shown, need, min_free)
}

/// [`files::ensure_room_for`], and inodes: of the `inodes` of the file system, as large a
/// share must stay free as the margin is of its space.
fn check_room(
    space: files::Space,
    inodes: u64,
    shown: &str,
    need: files::Footprint,
    min_free: Option<u64>,
) -> Result<()> {
    files::ensure_room_for(space, shown, need, 0, min_free)?;
    let margin = min_free.unwrap_or_else(|| files::default_margin(space));
    if space.inodes_available == u64::MAX || space.total == 0 {
        return Ok(());
    }
    let keep = (u128::from(inodes) * u128::from(margin)).div_ceil(u128::from(space.total));
    let keep = u64::try_from(keep).unwrap_or(u64::MAX);
    if space.inodes_available.saturating_sub(need.files) < keep {
        return Err(input(format!(
            "write {shown}: not enough free inodes: {} file(s) need one each, {} of {inodes} are free and {keep} must stay free (the margin's share; set with --min-free)",
            need.files, space.inodes_available
        )));
    }
    Ok(())
}

/// Serves one connection: every file verified, synced and renamed into place, or the
/// first failure (which ends the connection, its partial file removed). Whatever the
/// failure (a bad greeting, an over-long name, a slow peer, no room), the sender is sent
/// the refusal before the error is returned.
pub fn receive_one(conn: &mut dyn Conn, options: &Receiving) -> Result<Session> {
    receive_until(conn, options, &AtomicBool::new(false))
}

/// [`receive_one`] for a receiver that may `stop` (Ctrl-C) and shut the connection down
/// under it: a failure seen once `stop` is set is the stop's doing, so it is
/// [`crate::error::Failure::Interrupted`]; one seen before stays what it was.
fn receive_until(conn: &mut dyn Conn, options: &Receiving, stop: &AtomicBool) -> Result<Session> {
    let started = Instant::now();
    let mut buffered = methods::Buffered::new(conn, methods::Pace::new(options.timeout));
    let conn: &mut dyn Conn = &mut buffered;
    let mut session = Session {
        files: Vec::new(),
        bytes: 0,
        seconds: 0.0,
        grew: Vec::new(),
        by_write: Vec::new(),
    };
    let mut dirs = None;
    let mut replied = false;
    match serve_stream(
        conn,
        options,
        started,
        &mut dirs,
        &mut session,
        &mut replied,
    ) {
        Ok(()) => {
            session.bytes = session.files.iter().map(|d| d.bytes).sum();
            session.seconds = started.elapsed().as_secs_f64();
            Ok(session)
        }
        Err(e) => {
            if let Some(dirs) = dirs.as_mut() {
                dirs.unmake();
            }
            if stop.load(Ordering::SeqCst) {
                return Err(crate::error::Failure::Interrupted.into());
            }
            let stopped = matches!(
                e.downcast_ref::<crate::error::Failure>(),
                Some(crate::error::Failure::Interrupted)
            );
            if !replied && !stopped {
                let _ = proto::write_reply(conn, &Err(format!("{e:#}")));
            }
            if !stopped {
                let _ = conn.flush();
                drain(conn);
            }
            Err(e)
        }
    }
}

/// The greeting and then every file of one connection, into `session`; `replied` is set
/// when the refusal was sent already (with other words than the error's).
fn serve_stream(
    conn: &mut dyn Conn,
    options: &Receiving,
    started: Instant,
    dirs: &mut Option<place::Dirs>,
    session: &mut Session,
    replied: &mut bool,
) -> Result<()> {
    let token = proto::read_hello(&mut Deadline {
        inner: &mut *conn,
        until: started + options.timeout,
    })
    .map_err(|e| {
        if started.elapsed() >= options.timeout {
            e.context(format!(
                "receive: a peer did not complete its greeting within {}; dropped",
                crate::units::format_seconds(options.timeout.as_secs_f64())
            ))
        } else {
            e.context("receive: a peer's greeting")
        }
    })?;
    if let Some(want) = &options.token
        && !constant_time_eq(want, &token)
    {
        *replied = true;
        let _ = proto::write_reply(conn, &Err("wrong token".into()));
        return Err(crate::error::Failure::Check(
            "receive: a sender presented a wrong token; refused".into(),
        )
        .into());
    }
    // The directory may have gone since the receiver started: the sender is told so.
    let dirs = dirs.insert(place::Dirs::open(&options.dir, options.keep_mode).context("receive")?);
    proto::write_reply(conn, &Ok(()))?;
    while let Some(header) = proto::read_header(conn).context("receive")? {
        let t = Instant::now();
        let shown = String::from_utf8_lossy(&header.name).into_owned();
        let by_write = receive_file(conn, options, &header, dirs)?;
        proto::write_reply(conn, &Ok(()))?;
        if by_write {
            session.by_write.push(shown.clone());
        }
        session.files.push(FileDone {
            name: shown,
            bytes: header.size,
            seconds: t.elapsed().as_secs_f64(),
        });
    }
    proto::write_reply(conn, &Ok(()))?;
    conn.flush().context("send the last reply")?;
    Ok(())
}

/// After a refusal: no more writes, and what the sender still has in flight is read and
/// dropped (up to 64 MiB, for at most 2 s: a peer that trickles cannot hold it), so that
/// closing does not reset the connection before the sender has read why.
fn drain(conn: &mut dyn Conn) {
    let fd = conn.as_raw_fd();
    let wait = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: shutting down the write side of a socket we own, and bounding its reads to
    // 1 s with a live timeval.
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
    let until = Instant::now() + Duration::from_secs(2);
    let mut buf = [0u8; 64 << 10];
    let mut left: u64 = 64 << 20;
    while left > 0 && Instant::now() < until {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => left = left.saturating_sub(n as u64),
        }
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Receives one file; returns whether it was written by `write` instead of the method
/// asked ([`methods::Received::by_write`]).
fn receive_file(
    conn: &mut dyn Conn,
    options: &Receiving,
    header: &proto::Header,
    dirs: &mut place::Dirs,
) -> Result<bool> {
    let shown = String::from_utf8_lossy(&header.name).into_owned();
    let refuse = |why: String| {
        anyhow!(crate::error::Failure::Check(format!(
            "receive {shown}: {why}"
        )))
    };
    let parts = proto::confined(&header.name).map_err(refuse)?;
    let _promise = options
        .pending
        .promise(dirs, &shown, header.size, options.min_free)
        .map_err(|e| refuse(format!("{e:#}")))?;
    let incoming = dirs
        .create(&parts, header.size, header.mode, options.force)
        .map_err(refuse)?;
    let received = methods::receive(
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
    let got = received.digest.trailer();
    if got != trailer {
        return Err(refuse(format!(
            "checksum mismatch: sent XOR {:08x} XXH3 {:016x}, received XOR {:08x} XXH3 {:016x}; removed",
            trailer.xor, trailer.hash, got.xor, got.hash
        )));
    }
    incoming
        .publish(options.sync, options.force)
        .map_err(|e| refuse(format!("{e:#}")))?;
    Ok(received.by_write)
}

/// How a receiver serves its connections.
#[derive(Debug, Clone, Copy)]
pub struct Serving {
    /// Connections served at once; one more is told the receiver is busy.
    pub max_peers: usize,
    /// Serve one connection, then return.
    pub once: bool,
}

/// Serves connections on `listener` until Ctrl-C (or one, with `once`), each on a thread
/// of its own, at most `max_peers` at a time (one more is told the receiver is busy, and
/// closed): a slow or silent peer holds its own connection only, each under its own
/// timeout and pace. `each` gets every connection's outcome, on this thread. On Ctrl-C
/// the connections being served are shut down (each removes its partial file) and their
/// threads waited for.
pub fn serve(
    listener: &Listener,
    options: &Receiving,
    serving: Serving,
    each: &mut dyn FnMut(Result<Session>) -> Result<()>,
) -> Result<()> {
    if serving.once {
        let mut conn = listener.accept(options.timeout)?;
        let outcome = receive_one(&mut *conn, options);
        drop(conn);
        return each(outcome);
    }
    // The connections being served, by a serial number: shut down on Ctrl-C. A thread
    // takes its own out under the lock before closing it, so a number never names
    // another descriptor by the time it is shut down.
    let active: Mutex<std::collections::HashMap<u64, i32>> = Mutex::default();
    let stop = AtomicBool::new(false);
    let (tx, rx) = std::sync::mpsc::channel::<Result<Session>>();
    std::thread::scope(|scope| {
        let mut now_serving = 0usize;
        let mut serial = 0u64;
        let stopped: Result<()> = 'serve: loop {
            while let Ok(outcome) = rx.try_recv() {
                now_serving -= 1;
                if let Err(e) = each(outcome) {
                    break 'serve Err(e);
                }
            }
            match listener.ready() {
                Ok(true) => {}
                Ok(false) => continue,
                Err(e) => break Err(e),
            }
            let conn = match listener.take(options.timeout) {
                Ok(Some(conn)) => conn,
                Ok(None) => continue,
                Err(e) => {
                    // Out of descriptors, or a peer gone before it was accepted: this
                    // connection is lost, the receiver goes on.
                    if let Err(e) = each(Err(e.context("receive: accept a connection"))) {
                        break Err(e);
                    }
                    std::thread::sleep(Duration::from_millis(100));
                    continue;
                }
            };
            if now_serving >= serving.max_peers {
                refuse_busy(&*conn, serving.max_peers);
                drop(conn);
                let busy = crate::error::Failure::Check(format!(
                    "receive: a sender was turned away: {} connections are being served already (--max-peers)",
                    serving.max_peers
                ));
                if let Err(e) = each(Err(busy.into())) {
                    break Err(e);
                }
                continue;
            }
            serial += 1;
            let id = serial;
            lock(&active).insert(id, conn.as_raw_fd());
            let (tx, active, stop) = (tx.clone(), &active, &stop);
            let spawned = std::thread::Builder::new()
                .name(format!("receive-{id}"))
                .spawn_scoped(scope, move || {
                    let mut conn = conn;
                    let outcome = receive_until(&mut *conn, options, stop);
                    let mut listed = lock(active);
                    listed.remove(&id);
                    drop(conn);
                    drop(listed);
                    let _ = tx.send(outcome);
                });
            match spawned {
                Ok(_) => now_serving += 1,
                Err(e) => {
                    lock(active).remove(&id);
                    let e =
                        anyhow::Error::from(e).context("receive: start a thread for a connection");
                    if let Err(e) = each(Err(e)) {
                        break Err(e);
                    }
                }
            }
        };
        stop.store(true, Ordering::SeqCst);
        for &fd in lock(&active).values() {
            // SAFETY: a socket still open (its thread takes it out of the table before
            // closing it); shutting it down wakes a thread blocked on it.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
        drop(tx);
        // What finished meanwhile is reported; connections cut short by the stop are not.
        for outcome in rx {
            let cut = outcome.as_ref().is_err_and(|e| {
                matches!(
                    e.downcast_ref::<crate::error::Failure>(),
                    Some(crate::error::Failure::Interrupted)
                )
            });
            if !cut {
                let _ = each(outcome);
            }
        }
        stopped
    })
}

/// Tells a peer the receiver is busy, without waiting on it: the reply is sent if the
/// socket takes it at once, and what the peer sent already (its greeting) is read, so that
/// closing does not reset the connection before the peer has read why.
fn refuse_busy(conn: &dyn Conn, max: usize) {
    let mut reply = Vec::new();
    let _ = proto::write_reply(
        &mut reply,
        &Err(format!(
            "busy: the receiver is serving {max} senders already (--max-peers); try again later"
        )),
    );
    let fd = conn.as_raw_fd();
    let mut buf = [0u8; 4096];
    // SAFETY: a socket we own; live buffers of the lengths given; no call waits.
    unsafe {
        libc::send(
            fd,
            reply.as_ptr().cast(),
            reply.len(),
            libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
        );
        libc::shutdown(fd, libc::SHUT_WR);
        for _ in 0..16 {
            let n = libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT);
            if n <= 0 {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_temporary_socket_left_by_a_receiver_that_is_gone_is_removed_and_others_are_not() {
        let dir = tempfile::tempdir().unwrap();
        // A pid that no process has (above the kernel's maximum).
        let gone = dir.path().join(".r.sock.2147483646.listening");
        let _left = UnixListener::bind(&gone).unwrap();
        // A live process's temporary (init's), a regular file of the same shape, another
        // socket's.
        let live = dir.path().join(".r.sock.1.listening");
        let _live = UnixListener::bind(&live).unwrap();
        let plain = dir.path().join(".r.sock.2147483645.listening");
        std::fs::write(&plain, b"not a socket").unwrap();
        let other = dir.path().join(".q.sock.2147483646.listening");
        let _other = UnixListener::bind(&other).unwrap();
        let at = dir.path().join("r.sock");
        let listener = listening_at(&at).unwrap();
        assert!(!gone.exists(), "the dead receiver's temporary is removed");
        assert!(live.exists() && plain.exists() && other.exists());
        assert!(at.exists());
        drop(listener);
    }
}
