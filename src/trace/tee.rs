//! A known tool's output, passed on to the user and copied for ioscope to read the tool's
//! own figures from, without the copying living in ioscope's process.
//!
//! The command writes into a pipe read by a forwarder, `ioscope __tee TO CHANNEL` (a
//! process of its own): it writes what it reads to TO (ioscope's own stdout or stderr) and
//! sends a copy back to ioscope over CHANNEL, a socket. ioscope reads the copy on a thread
//! until the command has ended and the forwarder has acknowledged that it passed on
//! everything the pipe held then, or a short grace has passed ([`DRAIN`]); it never writes
//! to the user's destination and never closes the pipe. The forwarder runs until the pipe's
//! last writer closes it (outliving ioscope when a process the command left running holds
//! it) or the destination fails (then the writers get EPIPE, as without ioscope), so what
//! the command and its children write is neither lost nor killed by SIGPIPE. It stops
//! sending the copy once ioscope stops reading it.

use anyhow::{Context, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// Bytes of a tool's output kept to read its claim from: a tool's summary or JSON is far
/// smaller; of a flood (dd of=/dev/stderr) the last 8 MiB are kept.
const KEEP: usize = 8 << 20;

/// Once the command has ended, how long ioscope waits at most for the forwarder to pass on
/// what the pipe holds (it may be stuck writing to a destination that does not read).
const DRAIN: Duration = Duration::from_millis(500);

/// How often the reading thread looks at the clock while nothing comes.
const SLICE_MS: i32 = 50;

/// How long the forwarder waits for ioscope to take a copy before it stops sending them.
const COPY_WAIT_MS: i32 = 1000;

/// The frame header that acknowledges a request to drain (a length no frame has).
const ACK: u32 = u32::MAX;

/// The most a frame carries.
const FRAME: usize = 64 << 10;

/// One end of a pipe for the command's stdout or stderr, whose content reaches `to` through
/// a forwarder process and comes back to ioscope as a copy.
pub struct Tee {
    /// The write end the command gets (closed by [`Tee::text`]).
    write: Option<OwnedFd>,
    /// Our end of the channel: copies come in, the drain request goes out.
    channel: Arc<OwnedFd>,
    /// Set when the command has ended: the copy is read until then at most.
    until: Arc<OnceLock<Instant>>,
    thread: std::thread::JoinHandle<Vec<u8>>,
}

impl Tee {
    /// A pipe whose content goes to descriptor `to` of this process (1 or 2), through a
    /// forwarder started from ioscope's own executable.
    pub fn new(to: RawFd) -> Result<Self> {
        let (read, write) = pipe().context("trace: pipe for the command's output")?;
        let mut pair = [0; 2];
        // SAFETY: socketpair fills the two-int array we pass.
        let made = unsafe {
            libc::socketpair(
                libc::AF_UNIX,
                libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
                0,
                pair.as_mut_ptr(),
            )
        };
        if made != 0 {
            return Err(std::io::Error::last_os_error()).context("trace: socketpair");
        }
        // SAFETY: both descriptors were just created and are owned here.
        let (ours, theirs) =
            unsafe { (OwnedFd::from_raw_fd(pair[0]), OwnedFd::from_raw_fd(pair[1])) };
        let exe = std::env::current_exe().context("trace: find ioscope's own executable")?;
        let channel = theirs.as_raw_fd();
        let mut forwarder = std::process::Command::new(&exe);
        forwarder
            .arg("__tee")
            .arg(to.to_string())
            .arg(channel.to_string())
            .stdin(std::process::Stdio::from(read));
        // SAFETY: the closure runs in the child between fork and exec and only calls fcntl
        // (async-signal-safe) on a descriptor the child holds: it keeps its end of the
        // channel open across exec.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(&mut forwarder, move || {
                if libc::fcntl(channel, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // Not waited for: it may outlive ioscope; the trace's waitpid may reap it.
        forwarder
            .spawn()
            .with_context(|| format!("trace: start {} __tee", crate::text::printable_path(&exe)))?;
        drop(theirs);
        let channel = Arc::new(ours);
        let until: Arc<OnceLock<Instant>> = Arc::default();
        let (fd, deadline) = (channel.clone(), until.clone());
        let thread = std::thread::spawn(move || {
            // Signals go to the thread that waits for the traced tasks.
            crate::interrupt::keep_away();
            read_copy(fd.as_raw_fd(), &deadline)
        });
        Ok(Self {
            write: Some(write),
            channel,
            until,
            thread,
        })
    }

    /// The descriptor the command writes to (until [`Tee::text`]).
    pub fn fd(&self) -> Option<RawFd> {
        self.write.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// What came through, once the command has ended: everything the pipe held then (the
    /// forwarder acknowledges having passed it on), or what came within [`DRAIN`].
    pub fn text(mut self) -> String {
        drop(self.write.take());
        let _ = self.until.set(Instant::now() + DRAIN);
        // SAFETY: one byte from a live buffer; MSG_NOSIGNAL: a forwarder gone is no signal.
        unsafe {
            libc::send(
                self.channel.as_raw_fd(),
                b"d".as_ptr().cast(),
                1,
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        String::from_utf8_lossy(&self.thread.join().unwrap_or_default()).into_owned()
    }
}

/// A pipe, both ends close-on-exec.
pub fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-int array we pass.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned here.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The copy's frames: a little-endian u32 length, then that many bytes; [`ACK`] alone says
/// the forwarder has passed on what the pipe held when asked.
#[derive(Default)]
struct Frames {
    /// Bytes of the stream not yet taken apart.
    pending: Vec<u8>,
    /// The content, its last [`KEEP`] bytes at least.
    content: Vec<u8>,
}

impl Frames {
    /// Takes `bytes` of the stream; true once the acknowledgement came.
    fn feed(&mut self, bytes: &[u8]) -> bool {
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        let mut acked = false;
        while self.pending.len() - at >= 4 {
            let head: [u8; 4] = self.pending[at..at + 4]
                .try_into()
                .expect("four bytes were checked");
            let len = u32::from_le_bytes(head);
            if len == ACK {
                acked = true;
                at += 4;
                break;
            }
            let end = at + 4 + len as usize;
            if self.pending.len() < end {
                break;
            }
            self.content.extend_from_slice(&self.pending[at + 4..end]);
            at = end;
        }
        self.pending.drain(..at);
        if self.content.len() > 2 * KEEP {
            self.content.drain(..self.content.len() - KEEP);
        }
        acked
    }
}

/// The reading thread: frames from the channel until its end, the acknowledgement, or the
/// deadline once one is set.
fn read_copy(fd: RawFd, deadline: &OnceLock<Instant>) -> Vec<u8> {
    let mut frames = Frames::default();
    let mut buf = vec![0u8; FRAME + 4];
    loop {
        if deadline.get().is_some_and(|&d| Instant::now() >= d) {
            break;
        }
        let mut poll = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one live pollfd, its count passed.
        if unsafe { libc::poll(&mut poll, 1, SLICE_MS) } <= 0 {
            continue;
        }
        // SAFETY: reading into a live buffer of the length passed.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n == 0 {
            break;
        }
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        if frames.feed(&buf[..n as usize]) {
            break;
        }
    }
    frames.content
}

/// `ioscope __tee TO CHANNEL`: the forwarder. Standard input is the pipe the command writes
/// to; what comes is written to descriptor `to`, then sent as a frame on `channel` while
/// ioscope reads there. A byte from ioscope on `channel` asks it to pass on what the pipe
/// holds now and acknowledge. Ends at the pipe's end or when `to` fails. The signals a
/// terminal or `timeout` sends to the whole group are ignored: it ends with the writers.
pub fn forward(to: RawFd, channel: RawFd) {
    // SAFETY: setting dispositions in this single-threaded helper process.
    unsafe {
        for signal in crate::interrupt::SIGNALS {
            libc::signal(signal, libc::SIG_IGN);
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let mut copying = channel >= 0;
    let mut buf = vec![0u8; FRAME];
    loop {
        let mut fds = [
            libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: channel,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let count = if copying { 2 } else { 1 };
        // SAFETY: `count` live pollfds.
        if unsafe { libc::poll(fds.as_mut_ptr(), count, -1) } < 0 {
            continue;
        }
        if copying && fds[1].revents != 0 {
            let mut request = [0u8; 16];
            // SAFETY: reading into a live local buffer of the length passed.
            let n = unsafe {
                libc::recv(
                    channel,
                    request.as_mut_ptr().cast(),
                    request.len(),
                    libc::MSG_DONTWAIT,
                )
            };
            if n > 0 {
                // Pass on what the pipe holds now, then say so.
                let mut held: libc::c_int = 0;
                // SAFETY: FIONREAD writes one int.
                unsafe { libc::ioctl(0, libc::FIONREAD, &mut held) };
                let mut left = usize::try_from(held).unwrap_or(0);
                let mut ended = false;
                while left > 0 {
                    match pass_on(&mut buf[..left.min(FRAME)], to, channel, &mut copying) {
                        Some(0) => {
                            ended = true;
                            break;
                        }
                        Some(n) => left -= n,
                        None => return,
                    }
                }
                if copying {
                    copying = send_all(channel, &ACK.to_le_bytes());
                }
                if ended {
                    return;
                }
            } else if n == 0
                || std::io::Error::last_os_error().kind() != std::io::ErrorKind::WouldBlock
            {
                // ioscope stopped reading the copy.
                copying = false;
            }
        }
        if fds[0].revents != 0 {
            match pass_on(&mut buf, to, channel, &mut copying) {
                Some(0) | None => return,
                Some(_) => {}
            }
        }
    }
}

/// Reads once from standard input into `buf`, writes it to `to` and copies it to
/// `channel`: the bytes read (0 at the end of the pipe), or `None` when `to` failed.
fn pass_on(buf: &mut [u8], to: RawFd, channel: RawFd, copying: &mut bool) -> Option<usize> {
    let n = loop {
        // SAFETY: reading into a live buffer of the length passed.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            break n as usize;
        }
        if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Some(0);
        }
    };
    if n == 0 {
        return Some(0);
    }
    if !write_all(to, &buf[..n]) {
        return None;
    }
    if *copying {
        let mut frame = Vec::with_capacity(n + 4);
        frame.extend_from_slice(&(n as u32).to_le_bytes());
        frame.extend_from_slice(&buf[..n]);
        *copying = send_all(channel, &frame);
    }
    Some(n)
}

/// Writes all of `bytes` to `fd`, waiting while it is full; false when it fails.
fn write_all(fd: RawFd, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: writing from a live slice of the length passed.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n > 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        let err = std::io::Error::last_os_error();
        match err.kind() {
            std::io::ErrorKind::Interrupted => {}
            std::io::ErrorKind::WouldBlock => {
                wait_for(fd, libc::POLLOUT, -1);
            }
            _ => return false,
        }
    }
    true
}

/// Sends all of `bytes` on the channel, waiting at most [`COPY_WAIT_MS`] at a time for
/// room; false when ioscope is gone or not reading (the copy then stops for good).
fn send_all(channel: RawFd, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: sending from a live slice of the length passed.
        let n = unsafe {
            libc::send(
                channel,
                bytes.as_ptr().cast(),
                bytes.len(),
                libc::MSG_NOSIGNAL | libc::MSG_DONTWAIT,
            )
        };
        if n > 0 {
            bytes = &bytes[n as usize..];
            continue;
        }
        match std::io::Error::last_os_error().kind() {
            std::io::ErrorKind::Interrupted => {}
            std::io::ErrorKind::WouldBlock if wait_for(channel, libc::POLLOUT, COPY_WAIT_MS) => {}
            _ => {
                // SAFETY: shutting down our own socket: ioscope reads no more copies.
                unsafe { libc::shutdown(channel, libc::SHUT_RDWR) };
                return false;
            }
        }
    }
    true
}

/// Whether `fd` became ready for `events` within `ms` milliseconds (-1: no limit).
fn wait_for(fd: RawFd, events: libc::c_short, ms: i32) -> bool {
    let mut poll = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // SAFETY: one live pollfd, its count passed.
    unsafe { libc::poll(&mut poll, 1, ms) > 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(bytes: &[u8]) -> Vec<u8> {
        let mut f = (bytes.len() as u32).to_le_bytes().to_vec();
        f.extend_from_slice(bytes);
        f
    }

    #[test]
    fn frames_split_anywhere_are_put_back_together_up_to_the_acknowledgement() {
        let mut stream = frame(b"10+0 records in\n");
        stream.extend(frame(b"5120 bytes copied"));
        stream.extend(ACK.to_le_bytes());
        stream.extend(frame(b"after"));
        for cut in 0..stream.len() {
            let mut f = Frames::default();
            let acked = f.feed(&stream[..cut]) || f.feed(&stream[cut..]);
            assert!(acked, "cut at {cut}");
            assert_eq!(
                f.content, b"10+0 records in\n5120 bytes copied",
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn a_flood_keeps_its_last_bytes_only() {
        let mut f = Frames::default();
        let chunk = vec![7u8; FRAME];
        for _ in 0..(3 * KEEP / FRAME) {
            assert!(!f.feed(&frame(&chunk)));
        }
        assert!(!f.feed(&frame(b"tail")) && f.feed(&ACK.to_le_bytes()));
        assert!(f.content.len() <= 2 * KEEP && f.content.ends_with(b"tail"));
    }
}
