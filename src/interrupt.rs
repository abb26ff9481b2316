//! Ctrl-C, SIGTERM, SIGHUP (a closed terminal or dropped SSH session) and SIGQUIT (Ctrl-\).
//! Our own `sigaction` handler, installed *without* `SA_RESTART`, only
//! stores an atomic flag (async-signal-safe). A read, write or open blocked on a pipe, a
//! FIFO or a terminal then fails with EINTR instead of being restarted; every retry loop
//! calls [`check`] before retrying and long loops poll it, so the command unwinds with
//! [`Failure::Interrupted`] (exit 130) and the scratch-file guards run.
//!
//! A second signal while the first is being handled exits at once with 130 (as hyperfine
//! does): the way out when something cannot be interrupted, such as an fsync of a large file.

use crate::error::Failure;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The first signal received (0: none), for `trace` to pass on as received.
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);

extern "C" fn on_signal(signal: libc::c_int) {
    let _ = LAST_SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    if INTERRUPTED.swap(true, Ordering::SeqCst) {
        const MSG: &[u8] = b"\nwarning: interrupted again; exiting at once (scratch files .ioscope-* may remain)\n";
        // SAFETY: write and _exit are async-signal-safe; MSG is static.
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(130);
        }
    }
}

/// Installs the handler for SIGINT, SIGTERM, SIGHUP and SIGQUIT once per process (four
/// `sigaction` calls);
/// later calls do nothing.
pub fn install() {
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    // SAFETY: the action is fully initialised (zeroed, then an empty mask); the handler only
    // touches an atomic and calls async-signal-safe functions. No SA_RESTART, on purpose.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = 0;
        libc::sigemptyset(&mut action.sa_mask);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Keeps the signals away from the calling thread (a helper that only waits), so that the
/// kernel delivers them to a thread doing the work, whose blocked call they interrupt.
pub fn keep_away() {
    // SAFETY: the set is initialised by sigemptyset before use; pthread_sigmask only changes
    // the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            libc::sigaddset(&mut set, signal);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Raises the flag as Ctrl-C would (for tests, and for code that must stop the work).
pub fn request() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Lowers the flag again (tests only: a real interruption ends the process).
pub fn reset() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// True once the user asked to stop.
#[inline]
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// The signal that raised the flag (the first one received), if a signal did.
pub fn last_signal() -> Option<i32> {
    Some(LAST_SIGNAL.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// Returns `Err(Failure::Interrupted)` once the user asked to stop.
#[inline]
pub fn check() -> anyhow::Result<()> {
    if requested() {
        Err(Failure::Interrupted.into())
    } else {
        Ok(())
    }
}

/// For a failed system call: `Err(Failure::Interrupted)` when it failed with EINTR because
/// the user asked to stop, `Ok(true)` when it failed with EINTR for another reason (retry
/// it), `Ok(false)` for any other error.
pub fn retry_after(err: &std::io::Error) -> anyhow::Result<bool> {
    if err.kind() == std::io::ErrorKind::Interrupted {
        check()?;
        Ok(true)
    } else {
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The flag is process-wide and the unit tests share a process, so these never raise
    // it; the CLI tests interrupt real, blocked processes.
    #[test]
    fn eintr_without_a_request_is_retried_and_other_errors_are_not() {
        let eintr = std::io::Error::from_raw_os_error(libc::EINTR);
        assert!(retry_after(&eintr).expect("not interrupted"));
        let eio = std::io::Error::from_raw_os_error(libc::EIO);
        assert!(!retry_after(&eio).expect("not an EINTR"));
    }
}
