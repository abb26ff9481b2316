//! Keeping what a filtered trace leaves running alive. The seccomp filter ([`super::filter`])
//! cannot be removed: once no tracer is attached, the calls it selects fail with ENOSYS in
//! every process that has it. So a trace that may use the filter runs in two processes.
//! The one the shell started ("the waiting process") forks the tracer and only waits: for
//! the tracer's exit, or for its word that the command's first process has ended and the
//! report is out, with the exit code to give. When the command left processes running,
//! the tracer then becomes their keeper: its standard streams go to /dev/null, it tells
//! the waiting process the code (which exits with it, so the shell goes on as without
//! ioscope), and lets every call of the processes left through, untraced and uncounted,
//! until the last of them ends. Being the tracer already, it needs no new permission to
//! trace (Yama's ptrace_scope 1 forbids a fresh process to attach to them).
//!
//! Signals: a terminal's Ctrl-C reaches both processes (and the command); a signal sent to
//! the waiting process alone (`kill PID`) is passed on to the tracer. A second signal does
//! not make the tracer exit at once (which would leave the command's processes with the
//! filter and no tracer): it ends the trace's grace at once instead.

use std::sync::atomic::{AtomicI32, Ordering};

/// The write end of the pipe to the waiting process, in the tracer (-1: none, no split).
static TO_WAITER: AtomicI32 = AtomicI32::new(-1);
/// Whether the trace left tasks that only a keeper keeps going (set by the trace loop).
static NEEDED: AtomicI32 = AtomicI32::new(0);
/// The signal the waiting process received and has not passed on yet (0: none).
static RECEIVED: AtomicI32 = AtomicI32::new(0);

/// Splits into the waiting process and the tracer, before any thread is started (the
/// caller's promise). Returns in the tracer only; the waiting process exits from here
/// with the tracer's code. Returns `false` (no split, nothing changed) when fork or the
/// pipe fails: the caller then traces without the filter.
pub fn split() -> bool {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-int array we pass. O_CLOEXEC: the command's programs do
    // not inherit it (it is open in the traced child only between fork and exec).
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return false;
    }
    // SAFETY: called while this process has one thread; the parent only waits (read,
    // waitpid, kill, _exit) and the child goes on as the whole of ioscope.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the pipe we made.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
        return false;
    }
    if pid == 0 {
        // SAFETY: closing the read end, which is the waiting process's.
        unsafe { libc::close(fds[0]) };
        TO_WAITER.store(fds[1], Ordering::SeqCst);
        crate::interrupt::hold_exit_at_once();
        return true;
    }
    // SAFETY: closing the write end, which is the tracer's.
    unsafe { libc::close(fds[1]) };
    wait_for(pid, fds[0])
}

extern "C" fn on_signal(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // A signal the kernel made (a terminal's Ctrl-C reaches the whole foreground group,
    // the tracer included) is not passed on; one sent to this process by name is.
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let code = unsafe { (*info).si_code };
    if code <= 0 {
        RECEIVED.store(signal, Ordering::SeqCst);
    }
}

/// The waiting process: passes on signals sent to it, and exits with the tracer's word
/// (one byte: the exit code) or, when the tracer ended without one, with its status.
fn wait_for(tracer: i32, from: i32) -> ! {
    // SAFETY: the action is fully initialised; the handler stores into an atomic only.
    // No SA_RESTART: the read below fails with EINTR, and the signal is passed on.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal
            as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
            as libc::sighandler_t;
        action.sa_flags = libc::SA_SIGINFO;
        libc::sigemptyset(&mut action.sa_mask);
        // The signals passed on and ignored by the keeper: every one that ends ioscope.
        for signal in crate::interrupt::all() {
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(signal, std::ptr::null(), &mut old);
            // What ioscope's caller ignored (nohup's SIGHUP) stays ignored.
            if old.sa_sigaction != libc::SIG_IGN {
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
    }
    let mut code = [0u8; 1];
    loop {
        // SAFETY: reading one byte into a local array.
        let n = unsafe { libc::read(from, code.as_mut_ptr().cast(), 1) };
        if n == 1 {
            // SAFETY: _exit ends this process at once, as nothing of its own is pending.
            unsafe { libc::_exit(i32::from(code[0])) };
        }
        if n == 0 {
            break;
        }
        let signal = RECEIVED.swap(0, Ordering::SeqCst);
        if signal != 0 {
            // SAFETY: signalling the tracer, our child.
            unsafe { libc::kill(tracer, signal) };
        }
    }
    // The tracer ended without a word: its own status is ours.
    let mut status = 0;
    loop {
        // SAFETY: status is a live local; the tracer is our child.
        let r = unsafe { libc::waitpid(tracer, &mut status, 0) };
        if r == tracer {
            break;
        }
        if r < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            // SAFETY: as above.
            unsafe { libc::_exit(1) };
        }
        let signal = RECEIVED.swap(0, Ordering::SeqCst);
        if signal != 0 {
            // SAFETY: signalling the tracer, our child.
            unsafe { libc::kill(tracer, signal) };
        }
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    // SAFETY: as above.
    unsafe { libc::_exit(code) }
}

/// Whether this process is the tracer of a split: one that can keep what it leaves running.
pub fn available() -> bool {
    TO_WAITER.load(Ordering::SeqCst) >= 0
}

/// This process's id, as the keeper it would become (for the report).
pub fn pid() -> i32 {
    // SAFETY: getpid has no preconditions.
    unsafe { libc::getpid() }
}

/// Called by the trace loop when it ends with filtered tasks still running.
pub fn needed() {
    NEEDED.store(1, Ordering::SeqCst);
}

/// Whether the trace left tasks for the keeper (this process, once the report is out).
pub fn is_needed() -> bool {
    available() && NEEDED.load(Ordering::SeqCst) != 0
}

/// At the very end of ioscope, with the exit code to give: returns it when there is
/// nothing to keep (this process then exits, and the waiting process with it). Otherwise
/// sends the code to the waiting process, leaves the user's terminal and streams, keeps
/// the traced processes going until the last ends, and exits without returning.
pub fn hand_over(code: u8) -> u8 {
    let to = TO_WAITER.load(Ordering::SeqCst);
    if to < 0 || NEEDED.load(Ordering::SeqCst) == 0 {
        return code;
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: plain descriptor calls; /dev/null replaces the standard streams, so that
    // nothing waiting on them (a pipe's reader, a test) waits for the keeper.
    unsafe {
        // The signals passed on and ignored by the keeper: every one that ends ioscope.
        for signal in crate::interrupt::all() {
            libc::signal(signal, libc::SIG_IGN);
        }
        let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            for fd in 0..3 {
                libc::dup2(null, fd);
            }
            libc::close(null);
        }
        libc::write(to, [code].as_ptr().cast(), 1);
        libc::close(to);
    }
    super::ptrace::keep();
    // SAFETY: nothing of ioscope's is left to finish; the report is out.
    unsafe { libc::_exit(0) }
}
