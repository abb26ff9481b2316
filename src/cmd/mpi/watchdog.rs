//! The last resort of a rank that cannot unwind: a rank whose peer died waits inside an MPI
//! collective for ever, so a watchdog thread (after a Ctrl-C or SIGTERM) or MPI's error
//! handler removes this rank's scratch files, prints one line naming the rank, and ends the
//! process at once.

use std::path::{Path, PathBuf};

/// The scratch files a rank must remove when it cannot unwind: a rank whose peer died waits
/// inside an MPI collective for ever, so neither its guards nor the collective failure path
/// run, and mpirun's SIGTERM is followed by its SIGKILL a second later. The paths are those
/// of this job that this rank created or opened and that still have a name; `done` is set
/// once [`super::execute`] has returned (its guards have run).
pub(super) struct Scratch {
    pub(super) paths: Vec<PathBuf>,
    /// Directories of this job (`mpi io500`'s) removed whole: their files are opened by
    /// name by other ranks, so they keep their names until the job ends.
    trees: Vec<PathBuf>,
    /// Directories removed already, at the interrupt (before the grace ran out).
    trees_removed: usize,
    /// The process removing this job's directories, once started: its pid and how many.
    janitor: Option<(libc::pid_t, usize)>,
    done: bool,
    rank: usize,
    host: String,
}

static SCRATCH: std::sync::Mutex<Scratch> = std::sync::Mutex::new(Scratch {
    paths: Vec::new(),
    trees: Vec::new(),
    trees_removed: 0,
    janitor: None,
    done: true,
    rank: 0,
    host: String::new(),
});

/// How long after a Ctrl-C or SIGTERM the main thread has to unwind on its own before the
/// watchdog removes the files and exits: well under mpirun's one second (its
/// `odls_base_sigkill_timeout`) between SIGTERM and SIGKILL.
const GRACE: std::time::Duration = std::time::Duration::from_millis(250);

pub(super) fn scratch() -> std::sync::MutexGuard<'static, Scratch> {
    SCRATCH
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Adds a file of this job that this rank must remove if it is stopped inside MPI.
pub(super) fn register(path: &Path) {
    let mut s = scratch();
    if !s.done {
        s.paths.push(path.to_path_buf());
    }
}

/// Adds a directory of this job that this rank must remove, whole, if it is stopped inside
/// MPI (every rank registers it: whichever survives removes it).
pub(super) fn register_tree(path: &Path) {
    let mut s = scratch();
    if !s.done {
        s.trees.push(path.to_path_buf());
    }
}

/// Removes `dir` and everything in it, again while other ranks still add to it or remove
/// from it (each pass then fails on what moved under it); whether it is gone.
fn remove_tree(dir: &Path) -> bool {
    for _ in 0..5 {
        if std::fs::remove_dir_all(dir).is_ok() {
            return true;
        }
        if std::fs::symlink_metadata(dir).is_err() {
            // Gone: another rank removed it first.
            return false;
        }
    }
    false
}

/// Starts removing the job's directories in a process of its own, in a process group of its
/// own: mpirun ends a job with SIGTERM, then a second later SIGKILL to each rank's process
/// group, and a directory of many thousands of small files (a million on a fast file
/// system) can take longer than that to remove. The janitor outlives the rank, removes
/// `trees` and exits (0 when none is left). Falls back to removing them here when it cannot
/// start.
fn start_janitor(s: &mut Scratch) {
    let trees: Vec<PathBuf> = s.trees.drain(..).collect();
    if trees.is_empty() {
        return;
    }
    // SAFETY: open takes a NUL-terminated path; its result is checked before use.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    // SAFETY: fork duplicates this process; the child only removes files (std::fs, whose
    // allocations glibc's fork keeps usable) and ends with _exit, never returning here.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: the child's own process group, stdio on /dev/null and no other descriptor
        // (MPI's sockets, the job's files), so nothing of the rank's is kept alive by it.
        unsafe {
            libc::setpgid(0, 0);
            if null >= 0 {
                for fd in 0..3 {
                    libc::dup2(null, fd);
                }
            }
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
        }
        for d in &trees {
            remove_tree(d);
        }
        let left = trees.iter().any(|d| std::fs::symlink_metadata(d).is_ok());
        // SAFETY: ends the child without running the parent's destructors or atexit.
        unsafe { libc::_exit(i32::from(left)) }
    }
    if null >= 0 {
        // SAFETY: closes the descriptor opened above, in the parent.
        unsafe { libc::close(null) };
    }
    if pid > 0 {
        // SAFETY: the same group change from the parent's side, so that a SIGKILL sent to
        // this rank's group just after the fork cannot reach the child.
        unsafe { libc::setpgid(pid, pid) };
        s.janitor = Some((pid, trees.len()));
    } else {
        s.trees_removed += trees.iter().filter(|d| remove_tree(d)).count();
    }
}

/// Waits up to `limit` for the janitor; whether it is done and left no directory.
fn janitor_done(pid: libc::pid_t, limit: std::time::Duration) -> Option<bool> {
    let start = std::time::Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waitpid on this process's own child, status written to a local.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return Some(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        }
        if r < 0 || start.elapsed() >= limit {
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// How long [`abandon`] waits for the janitor before it says the directories are still
/// being removed: with [`GRACE`], well inside mpirun's second between SIGTERM and SIGKILL.
const JANITOR_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Removes the registered files, says why on stderr, and ends the process with `code` at
/// once: the main thread may be inside an MPI call that never returns, so nothing unwinds.
/// Holding the lock, so [`super::execute`] cannot return (and print) meanwhile.
fn abandon(mut s: std::sync::MutexGuard<'_, Scratch>, code: i32, why: &str) -> ! {
    let removed = s
        .paths
        .drain(..)
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count();
    start_janitor(&mut s);
    // A janitor not done yet goes on after this process ends: say so, with its pid.
    let mut going = None;
    if let Some((pid, n)) = s.janitor.take() {
        match janitor_done(pid, JANITOR_WAIT) {
            Some(true) => s.trees_removed += n,
            _ => going = Some((pid, n)),
        }
    }
    let files = match (going, removed, s.trees_removed) {
        (Some((pid, 1)), ..) => {
            format!("; the job's scratch directory is being removed (process {pid})")
        }
        (Some((pid, n)), ..) => {
            format!("; {n} scratch directories are being removed (process {pid})")
        }
        (None, 0, 0) => String::new(),
        (None, 1, 0) => "; its scratch file removed".to_string(),
        (None, n, 0) => format!("; {n} scratch files removed"),
        (None, _, 1) => "; the job's scratch directory removed".to_string(),
        (None, _, n) => format!("; {n} scratch directories removed"),
    };
    crate::report::error_line(&crate::text::printable(&format!(
        "rank {} on host {}: {why}{files}",
        s.rank, s.host
    )));
    // SAFETY: _exit ends the process without running destructors or atexit handlers, which
    // is the point: the main thread may hold MPI's locks inside a collective.
    unsafe { libc::_exit(code) }
}

/// An MPI call failed on this rank (a peer died, a link broke): its scratch files go and
/// the process ends with 1 (130 after a Ctrl-C or SIGTERM). Called from MPI's error handler
/// (`cmd::mpi_world`), on the thread that made the call.
pub fn abandon_after_mpi_error(message: &str) -> ! {
    let code = if crate::interrupt::requested() {
        130
    } else {
        1
    };
    abandon(scratch(), code, &format!("MPI failed: {message}"))
}

/// While it lives, a thread removes this rank's scratch files and exits 130 if the main
/// thread has not returned [`GRACE`] after a Ctrl-C or SIGTERM (it waits in a collective
/// for a rank that is gone). Dropped when [`super::execute`] returns, after the files' guards.
pub(super) struct Watchdog;

impl Watchdog {
    pub(super) fn start(rank: usize, host: &str) -> Self {
        {
            let mut s = scratch();
            *s = Scratch {
                paths: Vec::new(),
                trees: Vec::new(),
                trees_removed: 0,
                janitor: None,
                done: false,
                rank,
                host: host.to_string(),
            };
        }
        // Detached: it sleeps 10 ms at a time and stops once `done` is set.
        let _ = std::thread::Builder::new()
            .name("ioscope-mpi-watchdog".into())
            .spawn(|| {
                // The signals stay with the main thread, whose blocking calls they interrupt.
                crate::interrupt::keep_away();
                let mut since: Option<std::time::Instant> = None;
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(10));
                    let mut s = scratch();
                    if s.done {
                        return;
                    }
                    if crate::interrupt::requested() {
                        // The job ends: its directories go at once, not after the grace,
                        // and in a process that mpirun's SIGKILL does not reach (their
                        // files are named by other ranks, so nothing else removed them).
                        start_janitor(&mut s);
                        let at = *since.get_or_insert_with(std::time::Instant::now);
                        if at.elapsed() >= GRACE {
                            abandon(
                                s,
                                130,
                                "interrupted while waiting for the other ranks (one may be gone)",
                            );
                        }
                    }
                }
            });
        Watchdog
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let mut s = scratch();
        s.done = true;
        s.paths.clear();
        s.trees.clear();
    }
}
