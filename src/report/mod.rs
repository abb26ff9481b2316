//! Rendering: human text, JSON, CSV, Markdown, SVG and the progress bar. Renderers return strings; only
//! [`emit`] and [`warn`] write, to stdout and stderr respectively.

pub mod baseline;
pub mod caveats;
pub mod cells;
pub mod columns;
pub mod csv;
pub mod figures;
pub mod html;
pub mod json;
pub mod latency;
pub mod manual;
pub mod markdown;
pub mod outputs;
pub mod page;
pub mod progress;
pub mod results;
pub mod svg;
pub mod terminal;
pub mod text;
pub mod view;
pub mod views;

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

/// `-q/--quiet`: warnings are not printed (errors and the result still are).
static QUIET: AtomicBool = AtomicBool::new(false);
/// Set once anything was written to stdout: a second document must not follow a first.
static EMITTED: AtomicBool = AtomicBool::new(false);

/// Whether anything was written to stdout yet.
pub fn emitted() -> bool {
    EMITTED.load(Ordering::Relaxed)
}

/// Silences [`warn`] for the rest of the process (`-q/--quiet`).
pub fn set_quiet(quiet: bool) {
    QUIET.store(quiet, Ordering::Relaxed);
}

/// Writes a rendered result to stdout. A closed pipe (`| head`) is not an error; any other
/// failure is `write stdout: <reason>` (a full disk, a closed stdout).
pub fn emit(text: &str) -> anyhow::Result<()> {
    use std::os::fd::FromRawFd;
    // Not std::io::stdout(): it reports success when descriptor 1 is closed (EBADF), where
    // cat reports an error. Descriptor 1 is always open here (files::reserve_standard_fds
    // puts a read-only /dev/null in a closed one, so writing fails with EBADF).
    // SAFETY: descriptor 1 stays open for the whole process; ManuallyDrop never closes it.
    let mut out = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(1) });
    let mut rest = text.as_bytes();
    // A result printed after Ctrl-C (what was measured so far) is the answer to that Ctrl-C:
    // a signal that interrupts its write is the same request (sent twice, or to the group)
    // and the write goes on; one clearly later exits at once (see interrupt).
    let answering = crate::interrupt::requested();
    while !rest.is_empty() {
        // write_all would retry EINTR for ever; a reader that never reads must not keep
        // Ctrl-C from working.
        match out.write(rest) {
            Ok(0) => return Err(anyhow::anyhow!("write stdout: it accepted no bytes")),
            Ok(n) => {
                EMITTED.store(true, Ordering::Relaxed);
                rest = &rest[n..];
            }
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) if answering && e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "write stdout: {}",
                    crate::files::describe(&e)
                ));
            }
        }
    }
    Ok(())
}

/// Writes one warning line to stderr (nothing with `--quiet`).
pub fn warn(message: &str) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let line = terminal::fit(&format!("warning: {message}\n"), terminal::Stream::Stderr);
    let _ = std::io::stderr().write_all(line.as_bytes());
}

/// [`warn`], where stderr can take the line now; nothing where it would wait (a pipe
/// whose reader stalls, as a traced command's stderr may be): the closing line of an
/// interrupted run must not keep it from ending.
pub fn warn_without_waiting(message: &str) {
    let mut fd = libc::pollfd {
        fd: 2,
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one pollfd, ours, for the duration of the call; no wait.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) } == 1 && fd.revents & libc::POLLOUT != 0;
    if ready {
        warn(message);
    }
}

/// Writes informational text (e.g. `--verbose` details) to stderr.
pub fn note(text: &str) {
    let text = terminal::fit(text, terminal::Stream::Stderr);
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Writes one error line (`error: {message}`) to stderr: one per failed MPI rank.
pub fn error_line(message: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "error: {}",
        crate::text::printable(message)
    );
}

/// Writes the one error line of a failed command to stderr, its control characters escaped
/// whatever part of the chain they came from (a file name the user gave, a peer's words):
/// one line, and nothing in it drives the terminal.
pub fn error(err: &anyhow::Error) {
    let _ = writeln!(
        std::io::stderr(),
        "error: {}",
        crate::text::printable(&format!("{err:#}"))
    );
}
