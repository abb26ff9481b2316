//! Ctrl-C, SIGTERM, SIGHUP (a closed terminal or dropped SSH session) and SIGQUIT (Ctrl-\),
//! and every other signal whose default would end ioscope without a word: SIGUSR1, SIGUSR2,
//! SIGALRM, SIGVTALRM, SIGPROF, SIGPWR, SIGXCPU (`ulimit -t`), SIGIO, SIGSTKFLT and the
//! real-time signals — see [`SIGNALS`] and [`all`]. The first
//! four exit 130 after the clean-up, the others 128 + their number ([`exit_code`]).
//! SIGXFSZ (`ulimit -f`) is caught and does nothing: a write past the limit fails with EFBIG
//! and ends in an error naming the file, instead of killing ioscope among its unfinished files.
//! A caught signal (unlike an ignored one) is back to its default in any program ioscope
//! starts, at its exec. Our own `sigaction` handler, installed *without* `SA_RESTART`, only
//! stores an atomic flag (async-signal-safe). A read, write or open blocked on a pipe, a
//! FIFO or a terminal then fails with EINTR instead of being restarted; every retry loop
//! calls [`check`] before retrying and long loops poll it, so the command unwinds with
//! [`Failure::Interrupted`] (exit 130) and the scratch-file guards run.
//!
//! A second signal is "again" only when it comes [`AGAIN_AFTER`] or more after the first:
//! coreutils `timeout` signals the child and then its whole group, systemd and shells may
//! send SIGHUP and SIGTERM together, and a doubled Ctrl-C is one request. A signal that is
//! clearly later exits at once with 130 (as hyperfine does): the way out when something
//! cannot be interrupted, such as an fsync of a large file. Even that way out removes what
//! is unfinished: files being written register their paths here ([`Registration`]), in
//! fixed static slots the handler can read, and the handler unlinks them before `_exit`.

use crate::error::{Failure, exit_code_for};
use std::cell::UnsafeCell;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, AtomicU64, AtomicUsize, Ordering};

/// The signals that stop ioscope after its clean-up; the first four exit 130 (an
/// interruption), the others 128 + their number, as a process killed by them would.
/// (The real-time signals, numbered at run time, are in [`all`].)
pub const SIGNALS: [i32; 13] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGUSR1,
    libc::SIGUSR2,
    libc::SIGALRM,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGPWR,
    libc::SIGXCPU,
    libc::SIGIO,
    libc::SIGSTKFLT,
];

/// [`SIGNALS`] and the real-time signals (SIGRTMIN to SIGRTMAX, whose default ends the
/// process too): every signal ioscope cleans up after.
pub fn all() -> impl Iterator<Item = i32> {
    SIGNALS
        .into_iter()
        .chain(libc::SIGRTMIN()..=libc::SIGRTMAX())
}

/// A signal's bit in [`IGNORED_AT_START`] (signals are numbered from 1 to 64).
fn bit(signal: i32) -> u64 {
    1u64 << ((signal - 1) & 63)
}

/// How the closing warning names the interruption: "interrupted" for the first four of
/// [`SIGNALS`], "interrupted by SIGXCPU (CPU time limit)" and the like for the others.
pub fn described() -> String {
    let name = match last_signal() {
        Some(libc::SIGUSR1) => "SIGUSR1",
        Some(libc::SIGUSR2) => "SIGUSR2",
        Some(libc::SIGALRM) => "SIGALRM",
        Some(libc::SIGVTALRM) => "SIGVTALRM",
        Some(libc::SIGPROF) => "SIGPROF",
        Some(libc::SIGPWR) => "SIGPWR (power failure)",
        Some(libc::SIGXCPU) => "SIGXCPU (CPU time limit, ulimit -t)",
        Some(libc::SIGIO) => "SIGIO",
        Some(libc::SIGSTKFLT) => "SIGSTKFLT",
        Some(s) if s >= libc::SIGRTMIN() && s <= libc::SIGRTMAX() => {
            return format!("interrupted by SIGRTMIN+{}", s - libc::SIGRTMIN());
        }
        _ => return "interrupted".into(),
    };
    format!("interrupted by {name}")
}

/// The exit code of this interruption: see [`exit_code_for`].
pub fn exit_code() -> u8 {
    exit_code_for(last_signal())
}

/// How much later than the first a signal must come to be a second request: one second.
/// Signals closer together are one request (sent twice by `timeout`, or to the process and
/// then its group); a person pressing Ctrl-C again waits longer than that.
pub const AGAIN_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// CLOCK_MONOTONIC nanoseconds of the first signal (never 0 once set); 0 before any.
static FIRST_SIGNAL_NS: AtomicU64 = AtomicU64::new(0);
/// The first signal received (0: none), for `trace` to pass on as received.
static LAST_SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Whether a second signal only raises [`AGAIN`] instead of exiting at once.
static HOLD_EXIT: AtomicBool = AtomicBool::new(false);
/// Set by a second signal while [`HOLD_EXIT`] is.
static AGAIN: AtomicBool = AtomicBool::new(false);
/// Bit `1 << (signal - 1)` for each of our signals that was ignored when ioscope started.
static IGNORED_AT_START: AtomicU64 = AtomicU64::new(0);

/// Paths the exit-at-once path removes: this many at a time, each this long at most
/// (with its NUL). A path that does not fit is not registered (see [`Registration`]).
const SLOTS: usize = 32;
const PATH_BYTES: usize = 4096;

/// A slot is free, being filled or emptied by its owner, ready (the handler may unlink
/// it), or taken by the handler.
const FREE: u8 = 0;
const BUSY: u8 = 1;
const READY: u8 = 2;
const UNLINKING: u8 = 3;

struct Slot {
    state: AtomicU8,
    path: UnsafeCell<[u8; PATH_BYTES]>,
    /// The device and inode the path named when it was registered: only that file is
    /// removed, not one another program put in its place since.
    id: UnsafeCell<(u64, u64)>,
}

// SAFETY: the path bytes are written only by the thread that moved `state` from FREE to
// BUSY, and read only by whoever moved it from READY to UNLINKING: the state's
// compare-exchange gives each side the buffer alone, with acquire/release ordering.
unsafe impl Sync for Slot {}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY_SLOT: Slot = Slot {
    state: AtomicU8::new(FREE),
    path: UnsafeCell::new([0; PATH_BYTES]),
    id: UnsafeCell::new((0, 0)),
};
static REGISTRY: [Slot; SLOTS] = [EMPTY_SLOT; SLOTS];

fn monotonic_ns() -> u64 {
    // SAFETY: clock_gettime only writes the zeroed struct we pass; it is async-signal-safe
    // (POSIX.1-2008), so the handler may call it.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
        .max(1)
}

extern "C" fn on_signal(signal: libc::c_int) {
    let _ = LAST_SIGNAL.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst);
    let now = monotonic_ns();
    let first = match FIRST_SIGNAL_NS.compare_exchange(0, now, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => {
            INTERRUPTED.store(true, Ordering::SeqCst);
            return;
        }
        Err(first) => first,
    };
    if now.saturating_sub(first) < AGAIN_AFTER.as_nanos() as u64 {
        // The same request, delivered twice: the first is being handled.
        INTERRUPTED.store(true, Ordering::SeqCst);
        return;
    }
    if HOLD_EXIT.load(Ordering::SeqCst) {
        // The caller ends its work at once itself (a tracer that must not leave its
        // command's processes behind without one).
        AGAIN.store(true, Ordering::SeqCst);
        return;
    }
    remove_registered();
    const MSG: &[u8] =
        b"\nwarning: interrupted again; exiting at once (unfinished files removed)\n";
    // SAFETY: write and _exit are async-signal-safe; MSG is static.
    unsafe {
        libc::write(2, MSG.as_ptr().cast(), MSG.len());
        libc::_exit(i32::from(exit_code_for(Some(
            LAST_SIGNAL.load(Ordering::SeqCst),
        ))));
    }
}

/// SIGXFSZ's handler: nothing to do. The write that passed the limit fails with EFBIG,
/// which the code reports; caught rather than ignored so that a program ioscope starts
/// gets the default back at its exec.
extern "C" fn on_file_size_limit(_: libc::c_int) {}

/// Unlinks every registered path that still names the file registered (async-signal-safe:
/// atomics, lstat and unlink only; a file put in place between the two calls is the one
/// race left).
fn remove_registered() {
    remove_registered_under(None);
}

/// [`remove_registered`] for the paths under `prefix` only (`None`: all): unit tests run
/// side by side in one process, and one test's exit path must not take another's files.
fn remove_registered_under(prefix: Option<&[u8]>) {
    for slot in &REGISTRY {
        if slot
            .state
            .compare_exchange(READY, UNLINKING, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            // SAFETY: UNLINKING gives this code the buffer alone (see `Slot`); it holds a
            // NUL-terminated path written by `new`.
            let outside = prefix.is_some_and(|p| unsafe { !(*slot.path.get()).starts_with(p) });
            if outside {
                slot.state.store(READY, Ordering::Release);
                continue;
            }
            // SAFETY: UNLINKING gives this code the buffer and the identity alone (see
            // `Slot`); the buffer holds a NUL-terminated path written by `new`; lstat only
            // writes the zeroed struct we pass; lstat and unlink are async-signal-safe.
            unsafe {
                let path = (*slot.path.get()).as_ptr().cast::<libc::c_char>();
                let (dev, ino) = *slot.id.get();
                let mut st: libc::stat = std::mem::zeroed();
                if libc::lstat(path, &mut st) == 0 && st.st_dev == dev && st.st_ino == ino {
                    libc::unlink(path);
                }
            }
            // The whole exit path keeps every slot (the process ends); a test's scan gives
            // its slots back to their registrations.
            if prefix.is_some() {
                slot.state.store(READY, Ordering::Release);
            }
        }
    }
}

/// A path the exit-at-once path removes until this is dropped (or [`Registration::keep`]
/// is called): an unfinished output, a scratch file, a temporary name. Registered after the
/// file was created (so a path that turned out to be someone else's is never named), and
/// with its absolute form, so a later change of directory cannot misdirect the unlink.
/// The file's device and inode are recorded too: a file another program put at the path
/// since (removed ours, wrote its own, or left a symbolic link) is not removed.
#[derive(Debug)]
pub struct Registration {
    /// The slot's index, or `NONE`.
    slot: AtomicUsize,
}

const NONE: usize = usize::MAX;

impl Registration {
    /// Registers `path` and the file it names now; with every slot taken, a path too long
    /// or nothing there, it is not registered (the file is still removed by its guard on
    /// every ordinary way out).
    pub fn new(path: &Path) -> Self {
        use std::os::unix::ffi::OsStrExt;
        use std::os::unix::fs::MetadataExt;
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        let bytes = absolute.as_os_str().as_bytes();
        if bytes.len() >= PATH_BYTES || bytes.contains(&0) {
            return Self::none();
        }
        let Ok(meta) = std::fs::symlink_metadata(&absolute) else {
            return Self::none();
        };
        for (i, slot) in REGISTRY.iter().enumerate() {
            if slot
                .state
                .compare_exchange(FREE, BUSY, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
            {
                // SAFETY: BUSY gives this thread the buffer alone (see `Slot`).
                let buffer = unsafe { &mut *slot.path.get() };
                buffer[..bytes.len()].copy_from_slice(bytes);
                buffer[bytes.len()] = 0;
                // SAFETY: as above, BUSY gives this thread the identity alone.
                unsafe { *slot.id.get() = (meta.dev(), meta.ino()) };
                slot.state.store(READY, Ordering::Release);
                return Self {
                    slot: AtomicUsize::new(i),
                };
            }
        }
        Self::none()
    }

    /// Not registered: for paths that are the user's own (a FIFO or device written in place).
    pub fn none() -> Self {
        Self {
            slot: AtomicUsize::new(NONE),
        }
    }

    /// Stops naming the path: the file is finished (or removed) and must stay (or is gone).
    pub fn keep(&self) {
        let i = self.slot.swap(NONE, Ordering::AcqRel);
        if i != NONE {
            // If the exit path holds the slot (UNLINKING), wait: either the process is
            // exiting (the wait ends with it), or a test's scan limited to other paths
            // gives it back READY in a moment, and it is freed then.
            while let Err(UNLINKING) =
                REGISTRY[i]
                    .state
                    .compare_exchange(READY, FREE, Ordering::AcqRel, Ordering::Relaxed)
            {
                std::thread::yield_now();
            }
        }
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        self.keep();
    }
}

/// Installs the handler for [`all`] our signals, and SIGXFSZ's that does nothing, once per process;
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
        for signal in all().chain([libc::SIGXFSZ]) {
            // A signal ignored by whoever started us is remembered, so that a program
            // ioscope starts (trace's command) inherits the ignoring, where our handler
            // would be reset to the default (terminate) at its exec. SIGHUP and the others
            // past the first four stay ignored for ioscope too (`nohup`'s purpose, or a
            // caller's own wish); SIGINT, SIGQUIT, which a shell ignores for every `cmd &`
            // of a script, and SIGTERM still stop ioscope when sent to it by name
            // (`kill -INT`), as a script expects.
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                IGNORED_AT_START.fetch_or(bit(signal), Ordering::SeqCst);
                if ![libc::SIGINT, libc::SIGTERM, libc::SIGQUIT].contains(&signal) {
                    continue;
                }
            }
            if signal == libc::SIGXFSZ {
                let mut quiet = action;
                quiet.sa_sigaction =
                    on_file_size_limit as extern "C" fn(libc::c_int) as libc::sighandler_t;
                // The write that raised it has already failed (EFBIG); nothing to interrupt.
                quiet.sa_flags = libc::SA_RESTART;
                libc::sigaction(signal, &quiet, std::ptr::null_mut());
                continue;
            }
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// For a child between fork and exec: ignores again the signals whoever started ioscope
/// had ignored (nohup's SIGHUP, a script's background SIGINT/SIGQUIT), so the program it
/// runs behaves as it would have run without ioscope. Async-signal-safe (sigaction only).
pub fn ignore_in_child_what_was_ignored() {
    let mask = IGNORED_AT_START.load(Ordering::SeqCst);
    for signal in all().chain([libc::SIGXFSZ]) {
        if mask & bit(signal) != 0 {
            // SAFETY: signal(2) with SIG_IGN is async-signal-safe and changes only this
            // (child) process's disposition.
            unsafe { libc::signal(signal, libc::SIG_IGN) };
        }
    }
}

/// Keeps the signals away from the calling thread (a helper that only waits), so that the
/// kernel delivers them to a thread doing the work, whose blocked call they interrupt.
/// SIGCHLD too: a thread that leaves it unblocked takes it and drops it (its default is to
/// ignore it), and the kernel engine's tracer waits for it (`trace::kernel`) to serve a
/// stopped task at once; without it, each stop waited out the tracer's 2 ms poll.
pub fn keep_away() {
    // SAFETY: the set is initialised by sigemptyset before use; pthread_sigmask only changes
    // the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for signal in all() {
            libc::sigaddset(&mut set, signal);
        }
        libc::sigaddset(&mut set, libc::SIGCHLD);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// From now on a second signal does not exit at once: it only makes [`again`] true, and
/// the caller ends its work at once itself (trace's tracer, see `trace::keeper`).
pub fn hold_exit_at_once() {
    HOLD_EXIT.store(true, Ordering::SeqCst);
}

/// True once a second signal came while the exit at once was held.
pub fn again() -> bool {
    AGAIN.load(Ordering::Relaxed)
}

/// Raises the flag as Ctrl-C would (for tests, and for code that must stop the work).
pub fn request() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Lowers the flag again (tests only: a real interruption ends the process).
pub fn reset() {
    INTERRUPTED.store(false, Ordering::SeqCst);
    FIRST_SIGNAL_NS.store(0, Ordering::SeqCst);
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

    #[test]
    fn a_registered_path_is_removed_by_the_exit_path_until_it_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"unfinished").unwrap();
        std::fs::write(&b, b"finished").unwrap();
        let _unfinished = Registration::new(&a);
        let finished = Registration::new(&b);
        finished.keep();
        remove_registered_under(Some(dir.path().as_os_str().as_encoded_bytes()));
        assert!(!a.exists(), "an unfinished file is removed");
        assert!(b.exists(), "a kept one stays");
    }

    #[test]
    fn a_file_put_in_place_of_a_registered_one_is_not_removed_by_the_exit_path() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, target) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("target"),
        );
        std::fs::write(&a, b"ours").unwrap();
        std::fs::write(&b, b"ours").unwrap();
        std::fs::write(&target, b"theirs").unwrap();
        let _a = Registration::new(&a);
        let _b = Registration::new(&b);
        // Ours kept open, as the guards do, so the new files cannot take our inodes.
        let _held = (
            std::fs::File::open(&a).unwrap(),
            std::fs::File::open(&b).unwrap(),
        );
        std::fs::remove_file(&a).unwrap();
        std::fs::write(&a, b"USER").unwrap();
        std::fs::remove_file(&b).unwrap();
        std::os::unix::fs::symlink(&target, &b).unwrap();
        remove_registered_under(Some(dir.path().as_os_str().as_encoded_bytes()));
        assert_eq!(std::fs::read(&a).unwrap(), b"USER", "another's file stays");
        assert!(
            std::fs::symlink_metadata(&b).unwrap().is_symlink(),
            "a link stays"
        );
        assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
    }

    #[test]
    fn an_interruption_exits_130_and_the_other_signals_128_plus_their_number() {
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
            assert_eq!(exit_code_for(Some(s)), 130);
        }
        assert_eq!(exit_code_for(None), 130);
        assert_eq!(exit_code_for(Some(libc::SIGUSR1)), 138);
        assert_eq!(exit_code_for(Some(libc::SIGXCPU)), 152);
        assert_eq!(exit_code_for(Some(libc::SIGPWR)), 158);
        assert_eq!(exit_code_for(Some(libc::SIGRTMAX())), 192);
        assert!(all().count() > SIGNALS.len(), "the real-time signals too");
    }

    #[test]
    fn a_dropped_registration_frees_its_slot() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        std::fs::write(&path, b"x").unwrap();
        // More than there are slots, one after another: each drop gives its slot back.
        for _ in 0..SLOTS * 2 {
            let r = Registration::new(&path);
            assert_ne!(r.slot.load(Ordering::Relaxed), NONE);
        }
    }
}
