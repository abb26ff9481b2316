//! The ptrace and waitpid wrappers the loop ([`super::sys`]) and the keeper
//! ([`super::keeper`]) share: a request, resuming a task, waiting for one, and passing a
//! stop on as the task would run without a tracer ([`keep`], the keeper's loop).

use std::time::Duration;

/// PTRACE_EVENT_STOP (libc has no constant for it on glibc targets).
pub(super) const EVENT_STOP: i32 = 128;

pub(super) fn ptrace(request: libc::c_uint, pid: i32, addr: usize, data: usize) -> libc::c_long {
    // SAFETY: every request made here passes plain integers or a pointer to a live local
    // of the size the request expects.
    unsafe { libc::ptrace(request, pid, addr, data) }
}

/// Resumes `tid` until its next system-call boundary, delivering `signal` (0: none); with
/// `only_filtered`, until the next call the seccomp filter stops (or event, or signal).
pub(super) fn resume_as(tid: i32, signal: i32, only_filtered: bool) {
    let request = if only_filtered {
        libc::PTRACE_CONT
    } else {
        libc::PTRACE_SYSCALL
    };
    // An error means the task is gone (killed meanwhile); waitpid will say so.
    ptrace(request, tid, 0, signal as usize);
}

/// waitpid that retries when our own signal handler interrupted it.
pub(super) fn wait(pid: i32, status: &mut i32, flags: i32) -> std::io::Result<i32> {
    loop {
        // SAFETY: status is a live local.
        let r = unsafe { libc::waitpid(pid, status, flags | libc::__WALL) };
        if r >= 0 {
            return Ok(r);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// waitpid for any traced task: `None` when a signal handler of ours interrupted it, or,
/// with `poll`, when no task has anything to report now (after a pause of a millisecond).
pub(super) fn wait_any(status: &mut i32, poll: bool) -> Option<std::io::Result<i32>> {
    let flags = libc::__WALL | if poll { libc::WNOHANG } else { 0 };
    // SAFETY: status is a live local.
    let r = unsafe { libc::waitpid(-1, status, flags) };
    if r > 0 || (r == 0 && !poll) {
        return Some(Ok(r));
    }
    if r == 0 {
        std::thread::sleep(Duration::from_millis(1));
        return None;
    }
    let err = std::io::Error::last_os_error();
    if err.kind() == std::io::ErrorKind::Interrupted {
        return None;
    }
    Some(Err(err))
}

/// The signals whose default action stops a process.
pub(super) fn stop_signal(sig: i32) -> bool {
    matches!(
        sig,
        libc::SIGSTOP | libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU
    )
}

/// What [`pass`] did with a stop.
pub(super) enum Passed {
    /// The task ended.
    Ended,
    /// It is in a group-stop (true: kept until SIGCONT) or was resumed from one (false).
    Stopped(bool),
    /// It was resumed.
    Went,
}

/// Resumes task `tid` from the stop `status` reports as it would run without a tracer (a
/// signal delivered, a group-stop kept until SIGCONT), counting nothing.
pub(super) fn pass(tid: i32, status: i32) -> Passed {
    if !libc::WIFSTOPPED(status) {
        return Passed::Ended;
    }
    let sig = libc::WSTOPSIG(status);
    let event = status >> 16;
    if event == EVENT_STOP {
        if stop_signal(sig) {
            ptrace(libc::PTRACE_LISTEN, tid, 0, 0);
            return Passed::Stopped(true);
        }
        ptrace(libc::PTRACE_CONT, tid, 0, 0);
        return Passed::Stopped(false);
    }
    let deliver = if sig == (libc::SIGTRAP | 0x80) || (sig == libc::SIGTRAP && event != 0) {
        0
    } else {
        sig
    };
    ptrace(libc::PTRACE_CONT, tid, 0, deliver as usize);
    Passed::Went
}

/// The keeper's loop: every stop of every task still traced is passed ([`pass`]) until no
/// traced task (and no child) is left.
pub fn keep() {
    loop {
        let mut status = 0;
        match wait_any(&mut status, false) {
            None => continue,
            Some(Ok(tid)) => {
                pass(tid, status);
            }
            Some(Err(_)) => return,
        }
    }
}
