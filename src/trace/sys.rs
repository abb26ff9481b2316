//! The ptrace loop: starts a command as a traced child, follows its forks, threads and
//! execs, and reports every system call with its arguments, result and the time between
//! entry and exit. The only architecture-specific knowledge is the table of system-call
//! numbers in [`Call::of`] (`trace::call`: libc's constants, per target); arguments and
//! results come from PTRACE_GET_SYSCALL_INFO (Linux 5.3+), which needs no register layout.
//! The ptrace and waitpid wrappers it shares with the keeper are in `trace::ptrace`.

use super::call::Call;
use super::ptrace::{EVENT_STOP, Passed, pass, ptrace, resume_as, stop_signal, wait, wait_any};
use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::collections::HashSet;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::time::{Duration, Instant};

/// Memory of a stopped task, as (address, bytes) pieces: what an exit's accounting needs
/// of it, read at the stop so that the accounting may wait until the task goes on.
pub type Regions = Vec<(u64, Vec<u8>)>;

/// One finished system call of a traced task.
#[derive(Debug, Clone, Copy)]
pub struct Syscall {
    /// The thread that made it.
    pub tid: i32,
    /// Which call.
    pub call: Call,
    /// Its six arguments, raw.
    pub args: [u64; 6],
    /// Its result: a value, or `-errno`.
    pub ret: i64,
    /// Whether `ret` is an error.
    pub failed: bool,
    /// Nanoseconds from the entry stop to the exit stop, as the tracer saw them.
    pub nanos: u64,
}

/// What the traced tasks did, as the loop reports it.
#[derive(Debug, Clone, Copy)]
pub enum Event {
    /// A task started: a fork, vfork or clone of `parent`.
    Spawned {
        /// The task that forked or cloned.
        parent: i32,
        /// The new task.
        child: i32,
    },
    /// `tid` executed a new program.
    Exec {
        /// The task (the thread-group leader after the exec).
        tid: i32,
    },
    /// A call of interest about to run (fds are still open: resolve them now).
    Enter {
        /// The task.
        tid: i32,
        /// The call.
        call: Call,
        /// Its arguments, raw.
        args: [u64; 6],
    },
    /// A call of interest finished.
    Exit(Syscall),
    /// `tid` is about to exit (its /proc entries still readable).
    Exiting {
        /// The task.
        tid: i32,
        /// Its wait status (exited with a code, or killed by a signal), when read.
        status: Option<i32>,
    },
}

/// How the traced command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// exit(code).
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
    /// Still running when the trace stopped: it did not end within [`GRACE`] of the signal
    /// passed on to it, and was let go, untraced.
    Running,
}

/// How a trace ended: the status of the command's first process, when it ended, and what
/// it left running.
#[derive(Debug, Clone)]
pub struct Finish {
    /// How the first process ended.
    pub ended: Ended,
    /// When it ended (or when the trace let it go).
    pub at: Instant,
    /// Processes still running then; the trace let go of them (they run on, untraced).
    pub left: Vec<Left>,
    /// Whether the tasks stopped only at the traced calls (the seccomp filter) or at all.
    pub stops: super::filter::Stops,
    /// When a signal came and the command did not end: how long the trace waited for it
    /// ([`GRACE`], or less when a second signal cut the wait short).
    pub waited: Option<Duration>,
    /// The system calls made through the 32-bit ABI: counted, or named as not counted.
    pub compat: super::i386::Seen,
}

/// A process still running when the command's first process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Left {
    /// Its process id.
    pub pid: i32,
    /// Its name (/proc/<pid>/comm), as the kernel keeps it (bytes that are not UTF-8 as
    /// `\xNN`).
    pub name: String,
    /// Whether it was stopped (SIGSTOP, SIGTSTP, ...); it stays stopped.
    pub stopped: bool,
}

/// How long the command has to end after a signal was passed on to it; after that the trace
/// stops and lets it run on, untraced.
pub const GRACE: Duration = Duration::from_secs(3);

/// How long after our own signal we look for the same signal reaching the command by
/// itself (a terminal's Ctrl-C reaches its whole process group) before passing it on.
const FORWARD_AFTER: Duration = Duration::from_millis(50);

/// How long the trace waits for the tasks left to stop so it can let go of them; one that
/// does not (asleep in the kernel) is let go by the kernel when ioscope exits.
const LET_GO: Duration = Duration::from_secs(2);

/// What the trace does when ioscope itself receives a signal (Ctrl-C, SIGTERM, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSignal {
    /// Pass it on to the command and give it [`GRACE`] to end: the user's command.
    PassOn,
    /// Kill the command at once (SIGKILL): a helper of ioscope's own, such as the overhead
    /// calibration, whose result is no longer wanted.
    Kill,
}

/// `struct ptrace_syscall_info` as the kernel lays it out (the union as raw words).
#[repr(C)]
#[derive(Default)]
pub(super) struct SyscallInfo {
    pub(super) op: u8,
    _pad: u8,
    _flags: u16,
    pub(super) arch: u32,
    _ip: u64,
    _sp: u64,
    /// entry: nr, args[6]; exit: rval, is_error; seccomp: nr, args[6], ret_data.
    pub(super) data: [u64; 8],
}

const INFO_ENTRY: u8 = 1;
pub(super) const INFO_EXIT: u8 = 2;
pub(super) const INFO_SECCOMP: u8 = 3;

/// What task `tid`, stopped at a call, is doing (PTRACE_GET_SYSCALL_INFO, Linux 5.3+): its
/// entry, exit or seccomp stop, with the call's number and arguments or its result; `None`
/// where the kernel gave nothing (the task gone, or a kernel too old).
pub(super) fn syscall_info(tid: i32) -> Option<SyscallInfo> {
    let mut info = SyscallInfo::default();
    let got = ptrace(
        libc::PTRACE_GET_SYSCALL_INFO,
        tid,
        std::mem::size_of::<SyscallInfo>(),
        &mut info as *mut SyscallInfo as usize,
    );
    (got > 0).then_some(info)
}

/// Starts `command` as a traced child and reports its calls to `sink` until its first
/// process ends; then lets go of whatever it left running (it runs on, untraced, and is
/// never killed) — or, under the seccomp filter, keeps it traced for the keeper
/// (`trace::keeper`). `prepare` runs in the child after fork, before exec (async-signal-safe
/// calls only: dup2 and the like); `started` runs in this process after fork, with the
/// child's pid.
///
/// The tasks are attached with PTRACE_SEIZE, so that a task stopped by SIGSTOP or SIGTSTP
/// stays stopped (PTRACE_LISTEN) and the trace can stop any task to let go of it
/// (PTRACE_INTERRUPT). PTRACE_O_EXITKILL is not used: what the command left running must
/// outlive ioscope. A signal to ioscope is handled as `on_signal` says; one received before
/// the command started keeps it from starting.
pub fn trace(
    command: &[OsString],
    on_signal: OnSignal,
    prepare: &dyn Fn(),
    started: &mut dyn FnMut(i32),
    read_before_going_on: &dyn Fn(&Syscall) -> Option<Regions>,
    sink: &mut dyn FnMut(Event, Instant, Option<Regions>),
) -> Result<Finish> {
    let Some(program) = command.first() else {
        bail!("trace: no command given (ioscope trace -- CMD [ARGS...])");
    };
    let shown = crate::text::printable_path(std::path::Path::new(program));
    let argv: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .context("trace: an argument contains a NUL byte")?;
    crate::interrupt::check()?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    let plan = super::filter::Plan::decide();
    // The exec failure is reported through a pipe that exec closes (O_CLOEXEC).
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-int array we pass.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("trace: pipe");
    }
    // SAFETY: after fork the child calls only async-signal-safe functions (raise, signal,
    // write, execvp, _exit, and `prepare`, which promises the same) before exec.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error()).context("trace: fork");
    }
    if pid == 0 {
        // SAFETY: see above; argv_ptrs is a NULL-terminated array of live C strings.
        unsafe {
            libc::close(fds[0]);
            // ioscope ignores SIGPIPE; the command must get the default, as from a shell.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            prepare();
            // Stopped until the parent has attached (PTRACE_SEIZE needs no help from here).
            libc::raise(libc::SIGSTOP);
            // Attached now (with PTRACE_O_TRACESECCOMP): the filter's stops reach us.
            plan.install();
            libc::execvp(argv_ptrs[0], argv_ptrs.as_ptr());
            let errno = *libc::__errno_location();
            libc::write(fds[1], (&errno as *const i32).cast(), 4);
            libc::_exit(127);
        }
    }
    // SAFETY: closing our copy of the write end.
    unsafe { libc::close(fds[1]) };
    started(pid);
    let mut status = 0;
    wait(pid, &mut status, libc::WUNTRACED).context("trace: waiting for the child to stop")?;
    let options = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACEEXIT
        | libc::PTRACE_O_TRACESECCOMP;
    if !libc::WIFSTOPPED(status) || ptrace(libc::PTRACE_SEIZE, pid, 0, options as usize) != 0 {
        // Say, a seccomp policy or a security module forbids ptrace.
        let err = std::io::Error::last_os_error();
        // SAFETY: killing and reaping the child we forked; closing the read end we own.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
        }
        return Err(crate::error::input(format!(
            "trace {shown}: cannot trace it here: ptrace refused ({err})"
        )));
    }
    // The stop it put itself in now reads as a group-stop; this ends it.
    // SAFETY: signalling the child we forked.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let finish = follow(
        pid,
        fds[0],
        &shown,
        on_signal,
        plan.program.err(),
        read_before_going_on,
        sink,
    );
    // SAFETY: closing the read end we own.
    unsafe { libc::close(fds[0]) };
    finish
}

/// The errno the child wrote before failing, if any (exec closed the pipe otherwise).
pub(super) fn read_errno(fd: i32) -> Option<i32> {
    let mut errno = 0i32;
    // SAFETY: reading at most 4 bytes into a local i32.
    let n = unsafe { libc::read(fd, (&mut errno as *mut i32).cast(), 4) };
    (n == 4).then_some(errno)
}

/// Per traced thread: whether it is inside a call, and since when; whether it is stopped.
#[derive(Default)]
pub(super) struct Task {
    inside: Option<(Call, [u64; 6], Instant)>,
    /// In a group-stop (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU), kept with PTRACE_LISTEN.
    pub(super) stopped: bool,
}

/// What the trace does about a signal to ioscope (Ctrl-C, SIGTERM, SIGHUP, SIGQUIT), either
/// engine alike: it is passed on, as received, to the command's processes that do not
/// have it already (or they are killed, for [`OnSignal::Kill`]); if the command has not
/// ended within [`GRACE`], the trace stops and lets it run on, untraced.
#[derive(Default)]
pub(super) struct Interruption {
    /// When our own signal came.
    pub(super) since: Option<Instant>,
    /// Whether it has been passed on.
    forwarded: bool,
}

impl Interruption {
    /// Acts on a signal to ioscope, if one came: returns whether the trace stops now, and
    /// when to look again (`None`: no new deadline).
    pub(super) fn act(
        &mut self,
        on_signal: OnSignal,
        leader: i32,
        tasks: &HashMap<i32, Task>,
        delivered: &HashMap<i32, (i32, Instant)>,
    ) -> (bool, Option<Instant>) {
        let mut next = None;
        if self.since.is_none() && crate::interrupt::requested() {
            let now = Instant::now();
            self.since = Some(now);
            if on_signal == OnSignal::Kill {
                kill_all(tasks);
                self.forwarded = true;
            }
            next = Some(now + if self.forwarded { GRACE } else { FORWARD_AFTER });
        }
        let Some(since) = self.since else {
            return (false, next);
        };
        if !self.forwarded && since.elapsed() >= FORWARD_AFTER {
            self.forwarded = true;
            let signal = crate::interrupt::last_signal().unwrap_or(libc::SIGINT);
            forward(signal, leader, tasks, delivered);
            next = Some(since + GRACE);
        }
        // A second signal (see `trace::keeper`) ends the grace at once.
        (since.elapsed() >= GRACE || crate::interrupt::again(), next)
    }
}

/// The process (thread group) of task `tid`, from /proc.
pub(super) fn tgid(tid: i32) -> Option<i32> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    super::field(&text, "Tgid:").and_then(|v| i32::try_from(v).ok())
}

/// Whether `signal` is pending for the whole of process `pid` (as a terminal's signal is).
fn pending(pid: i32, signal: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("ShdPnd:"))
                .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        })
        .is_some_and(|mask| signal > 0 && mask & (1 << (signal - 1)) != 0)
}

fn follow(
    leader: i32,
    exec_pipe: i32,
    program: &str,
    on_signal: OnSignal,
    refused: Option<String>,
    read_before_going_on: &dyn Fn(&Syscall) -> Option<Regions>,
    sink: &mut dyn FnMut(Event, Instant, Option<Regions>),
) -> Result<Finish> {
    // Until the command's program runs, every call stops (the filter, if any, is installed
    // just before exec); at the exec stop, whether it is in place decides.
    let mut stops = super::filter::Stops::EveryCall(
        refused.unwrap_or_else(|| "the kernel refused the seccomp filter".to_string()),
    );
    let mut filtered = false;
    let mut compat = super::i386::Seen::default();
    let mut tasks: HashMap<i32, Task> = HashMap::new();
    tasks.insert(leader, Task::default());
    let mut ended = None;
    let mut exec_checked = false;
    let mut interruption = Interruption::default();
    // The last signal each process was seen to receive, and when.
    let mut delivered: HashMap<i32, (i32, Instant)> = HashMap::new();
    // The loop blocks in waitpid, before and after a signal alike (polling would slow every
    // call of the command, its clean-up included); this breaks the wait at our deadlines.
    let waker = Waker::start();
    // New tasks whose first stop came before their creator's fork or clone event, kept
    // stopped until it comes (so that no call of theirs is seen before the task is known
    // to be the creator's), or for PARKED_AT_MOST (the creator killed meanwhile).
    let mut parked: HashMap<i32, Instant> = HashMap::new();
    let mut was_due = false;
    loop {
        let (stop, next) = interruption.act(on_signal, leader, &tasks, &delivered);
        let due = parked.values().min().map(|&since| since + PARKED_AT_MOST);
        if next.is_some() || due.is_some() || was_due {
            waker.at(next.into_iter().chain(due).min());
        }
        was_due = due.is_some();
        if stop {
            break;
        }
        parked.retain(|&tid, since| {
            let keep = since.elapsed() < PARKED_AT_MOST;
            if !keep {
                tasks.entry(tid).or_default();
                resume_as(tid, 0, filtered);
            }
            keep
        });
        let mut status = 0;
        let tid = match wait_any(&mut status, false) {
            None => continue,
            Some(Ok(tid)) => tid,
            Some(Err(e)) if e.raw_os_error() == Some(libc::ECHILD) => break,
            Some(Err(e)) => return Err(e).context("trace: waitpid"),
        };
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            tasks.remove(&tid);
            parked.remove(&tid);
            // The kernel reports a thread-group leader's end only once all its threads
            // have ended: this is the end of the command's first process.
            if tid == leader {
                ended = Some(if libc::WIFEXITED(status) {
                    Ended::Code(libc::WEXITSTATUS(status))
                } else {
                    Ended::Signal(libc::WTERMSIG(status))
                });
                break;
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let event = status >> 16;
        if event == EVENT_STOP && !tasks.contains_key(&tid) && !stop_signal(libc::WSTOPSIG(status))
        {
            parked.insert(tid, Instant::now());
            continue;
        }
        let task = tasks.entry(tid).or_default();
        let sig = libc::WSTOPSIG(status);
        let seccomp_stop = sig == libc::SIGTRAP && event == libc::PTRACE_EVENT_SECCOMP;
        if sig == (libc::SIGTRAP | 0x80) || seccomp_stop {
            let mut later = None;
            let Some(info) = syscall_info(tid) else {
                bail!(
                    "trace: PTRACE_GET_SYSCALL_INFO failed ({}); it needs Linux 5.3 or later",
                    std::io::Error::last_os_error()
                );
            };
            match info.op {
                // The entry of a call: a seccomp stop (the filter chose it), or a
                // syscall-entry stop (stopping at every call). Under both (before the
                // filter's mode is known), the seccomp stop follows the entry stop of the
                // same call, which has been taken already.
                op if op == INFO_ENTRY || (op == INFO_SECCOMP && task.inside.is_none()) => {
                    let mut raw = [0u64; 6];
                    raw.copy_from_slice(&info.data[1..7]);
                    // A 32-bit call (int 0x80) is read in its own ABI, never as the 64-bit
                    // call of the same number.
                    let native = super::filter::ARCH;
                    let entered =
                        super::i386::entered(info.arch, native, info.data[0], raw, &mut compat);
                    task.inside = entered.map(|(call, args)| {
                        sink(Event::Enter { tid, call, args }, Instant::now(), None);
                        (call, args, Instant::now())
                    });
                }
                INFO_EXIT => {
                    if let Some((call, args, since)) = task.inside.take() {
                        let failed = info.data[1] & 0xff != 0;
                        let ret = super::i386::result(
                            info.arch,
                            super::filter::ARCH,
                            info.data[0],
                            failed,
                        );
                        let at = Instant::now();
                        let s = Syscall {
                            tid,
                            call,
                            args,
                            ret,
                            failed,
                            nanos: at.duration_since(since).as_nanos() as u64,
                        };
                        // A 32-bit call's accounting is done at its stop.
                        match (info.arch == super::filter::ARCH)
                            .then(|| read_before_going_on(&s))
                            .flatten()
                        {
                            Some(regions) => later = Some((s, at, regions)),
                            None => sink(Event::Exit(s), at, None),
                        }
                    }
                }
                _ => {}
            }
            // Inside a call: on to its exit stop; otherwise to the next filtered call.
            resume_as(tid, 0, filtered && task.inside.is_none());
            // Accounted while the task goes on.
            if let Some((s, at, regions)) = later {
                sink(Event::Exit(s), at, Some(regions));
            }
            continue;
        }
        if event == EVENT_STOP {
            // A group-stop (SIGSTOP, SIGTSTP, ...) is kept, as without a tracer, and its end
            // (SIGCONT) reported; any other such stop (a new task's first, the end of a
            // group-stop) is resumed.
            task.stopped = stop_signal(sig);
            if task.stopped {
                ptrace(libc::PTRACE_LISTEN, tid, 0, 0);
            } else {
                resume_as(tid, 0, filtered && task.inside.is_none());
            }
            continue;
        }
        task.stopped = false;
        let only_filtered = filtered && task.inside.is_none();
        if sig == libc::SIGTRAP && event != 0 {
            match event {
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                    if let Some(child) = event_message(tid) {
                        sink(Event::Spawned { parent: tid, child }, Instant::now(), None);
                        // Traced from now on, though its first stop may still be pending
                        // when the first process ends: it is let go of and named then too.
                        tasks.entry(child).or_default();
                        if parked.remove(&child).is_some() {
                            resume_as(child, 0, filtered);
                        }
                    }
                }
                libc::PTRACE_EVENT_EXEC => {
                    // A thread other than the leader may exec; the kernel then reports it
                    // under the leader's id, which is the one that continues, and the
                    // thread's own id is gone without an exit.
                    task.inside = None;
                    if let Some(former) = event_message(tid)
                        && former != tid
                    {
                        tasks.remove(&former);
                    }
                    sink(Event::Exec { tid }, Instant::now(), None);
                    if tid == leader && !exec_checked {
                        exec_checked = true;
                        // The command's program is about to run: from here on, only the
                        // filtered calls stop, if the filter is in place.
                        if super::filter::installed(tid) {
                            filtered = true;
                            stops = super::filter::Stops::Filtered;
                        }
                    }
                }
                libc::PTRACE_EVENT_EXIT => sink(
                    Event::Exiting {
                        tid,
                        status: event_message(tid),
                    },
                    Instant::now(),
                    None,
                ),
                _ => {}
            }
            resume_as(
                tid,
                0,
                filtered && (only_filtered || event == libc::PTRACE_EVENT_EXEC),
            );
            continue;
        }
        // A signal-delivery-stop: deliver the signal.
        if let Some(pid) = tgid(tid) {
            delivered.insert(pid, (sig, Instant::now()));
        }
        resume_as(tid, sig, only_filtered);
    }
    // Still parked: known from now on, and on their way.
    for (tid, _) in parked.drain() {
        tasks.entry(tid).or_default();
        resume_as(tid, 0, filtered);
    }
    drop(waker);
    let at = Instant::now();
    // Filtered tasks cannot be let go of (the filter stays, and with no tracer its calls
    // fail): where a keeper can take them over, they stay traced, for it.
    let left = if filtered && super::keeper::available() {
        let left = still_running(&mut tasks);
        if !left.is_empty() {
            super::keeper::needed();
        }
        left
    } else {
        let_go(&mut tasks)
    };
    // Only once the first process has ended is the pipe's write end closed everywhere.
    if !exec_checked
        && ended.is_some()
        && let Some(errno) = read_errno(exec_pipe)
    {
        return Err(crate::error::input(format!(
            "trace {program}: cannot run it: {}",
            std::io::Error::from_raw_os_error(errno)
        )));
    }
    let ended = match ended {
        Some(ended) => ended,
        None if interruption.since.is_some() => Ended::Running,
        None => bail!("trace: the traced command vanished without an exit status"),
    };
    let waited = match (&ended, interruption.since) {
        (Ended::Running, Some(since)) => Some(at.duration_since(since)),
        _ => None,
    };
    Ok(Finish {
        ended,
        at,
        left,
        stops,
        waited,
        compat,
    })
}

/// Kills every traced process at once (SIGKILL): the trace of a helper that is no longer
/// wanted.
fn kill_all(tasks: &HashMap<i32, Task>) {
    let processes: HashSet<i32> = tasks.keys().filter_map(|&t| tgid(t)).collect();
    for pid in processes {
        // SAFETY: signalling a process we started and trace.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
}

/// The signal that breaks the tracing thread's blocking waitpid: its handler does nothing
/// and is installed without SA_RESTART, so the wait fails with EINTR. SIGURG is ignored by
/// default and sent by nothing else here.
const KICK: i32 = libc::SIGURG;

extern "C" fn on_kick(_: libc::c_int) {}

/// How often the waker looks for a signal that the tracing thread may have missed (one
/// that came just before it entered waitpid), and how often it kicks until heard.
const WAKER_POLL: Duration = Duration::from_millis(100);
const KICK_AGAIN: Duration = Duration::from_millis(5);

/// How long a new task seen before its creator's fork or clone event waits for it.
const PARKED_AT_MOST: Duration = Duration::from_secs(1);

/// A thread that wakes the tracing thread out of waitpid (with [`KICK`]) at a deadline, or
/// when ioscope was asked to stop before the tracing thread noticed; it kicks again every
/// few milliseconds until the tracing thread moves the deadline or stops it.
struct Waker {
    shared: std::sync::Arc<(std::sync::Mutex<Wake>, std::sync::Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

#[derive(Default)]
struct Wake {
    /// When to kick; `None`: only when a signal is noticed.
    at: Option<Instant>,
    stop: bool,
}

impl Waker {
    fn start() -> Self {
        static INSTALL: std::sync::Once = std::sync::Once::new();
        INSTALL.call_once(|| {
            // SAFETY: the action is fully initialised (zeroed, an empty mask, a handler that
            // does nothing); no SA_RESTART, on purpose.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_kick as extern "C" fn(libc::c_int) as libc::sighandler_t;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(KICK, &action, std::ptr::null_mut());
            }
        });
        // SAFETY: pthread_self has no preconditions.
        let target = unsafe { libc::pthread_self() };
        let shared: std::sync::Arc<(std::sync::Mutex<Wake>, std::sync::Condvar)> =
            std::sync::Arc::default();
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("trace-waker".into())
            .spawn(move || {
                crate::interrupt::keep_away();
                let (lock, cv) = &*theirs;
                let mut wake = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !wake.stop {
                    let now = Instant::now();
                    let due = match wake.at {
                        Some(at) => at <= now || crate::interrupt::again(),
                        None => crate::interrupt::requested(),
                    };
                    let pause = if due {
                        // SAFETY: the tracing thread outlives this one (it joins it).
                        unsafe { libc::pthread_kill(target, KICK) };
                        KICK_AGAIN
                    } else {
                        wake.at.map_or(WAKER_POLL, |at| at - now).min(WAKER_POLL)
                    };
                    wake = cv
                        .wait_timeout(wake, pause)
                        .map(|(w, _)| w)
                        .unwrap_or_else(|e| e.into_inner().0);
                }
            })
            .ok();
        Self { shared, thread }
    }

    /// Kicks at `at` (and on until told otherwise).
    fn at(&self, at: Option<Instant>) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).at = at;
        cv.notify_one();
    }
}

impl Drop for Waker {
    fn drop(&mut self) {
        let (lock, cv) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).stop = true;
        cv.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The event message of `tid`'s current stop: the new task's id at a fork or clone, the
/// former id at an exec.
pub(super) fn event_message(tid: i32) -> Option<i32> {
    let mut message: libc::c_ulong = 0;
    let got = ptrace(
        libc::PTRACE_GETEVENTMSG,
        tid,
        0,
        &mut message as *mut libc::c_ulong as usize,
    );
    (got == 0).then_some(message as i32)
}

/// Passes `signal` on to each traced process in the process group of the command's first
/// process (the processes a terminal's Ctrl-C would reach), once per process, unless it
/// already has it (pending, or delivered within the last second). Those that left the
/// group (daemons, `setsid`) are not signalled. A stopped process is also sent SIGCONT, so
/// that it can act on the signal (as a shell's `kill` does for a stopped job).
pub(super) fn forward(
    signal: i32,
    leader: i32,
    tasks: &HashMap<i32, Task>,
    delivered: &HashMap<i32, (i32, Instant)>,
) {
    // SAFETY: getpgid has no preconditions.
    let group = unsafe { libc::getpgid(leader) };
    if group <= 0 {
        return;
    }
    let mut processes: HashMap<i32, bool> = HashMap::new();
    for (&tid, task) in tasks {
        if let Some(pid) = tgid(tid) {
            *processes.entry(pid).or_default() |= task.stopped;
        }
    }
    for (pid, stopped) in processes {
        // SAFETY: getpgid has no preconditions.
        if unsafe { libc::getpgid(pid) } != group {
            continue;
        }
        let has_it = pending(pid, signal)
            || delivered
                .get(&pid)
                .is_some_and(|&(s, at)| s == signal && at.elapsed() < Duration::from_secs(1));
        if has_it {
            continue;
        }
        // SAFETY: signalling a process we trace.
        unsafe {
            libc::kill(pid, signal);
            if stopped {
                libc::kill(pid, libc::SIGCONT);
            }
        }
    }
}

/// The process of task `tid`, if it is still running (not a zombie), and whether it is
/// stopped (state T; not t, a tracing stop, which ends when the tracer lets go).
fn running(tid: i32) -> Option<(i32, bool)> {
    let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    let state = text
        .lines()
        .find_map(|l| l.strip_prefix("State:"))
        .and_then(|s| s.trim().chars().next());
    if matches!(state, Some('Z' | 'X')) {
        return None;
    }
    let pid = super::field(&text, "Tgid:").and_then(|v| i32::try_from(v).ok())?;
    Some((pid, state == Some('T')))
}

/// How long a task let go of with a signal to deliver has to end by it before it is
/// counted as still running.
const SETTLE: Duration = Duration::from_millis(200);

/// Lets go of every task still traced (the first process has ended, or the trace stops):
/// each is stopped (PTRACE_INTERRUPT) and detached, with the signal it was about to receive,
/// if any; a stopped one stays stopped. New tasks forked meanwhile are let go of too.
/// Returns the processes still running then.
pub(super) fn let_go(tasks: &mut HashMap<i32, Task>) -> Vec<Left> {
    let mut stopped: HashSet<i32> = HashSet::new();
    for (&tid, task) in tasks.iter() {
        if task.stopped
            && let Some(pid) = tgid(tid)
        {
            stopped.insert(pid);
        }
    }
    let mut seen: HashSet<i32> = tasks.keys().copied().collect();
    let mut signalled: Vec<(i32, i32)> = Vec::new();
    let mut waiting: HashSet<i32> = HashSet::new();
    for &tid in tasks.keys() {
        if ptrace(libc::PTRACE_INTERRUPT, tid, 0, 0) == 0 {
            waiting.insert(tid);
        }
    }
    tasks.clear();
    let mut released: HashSet<i32> = HashSet::new();
    let until = Instant::now() + LET_GO;
    while !waiting.is_empty() && Instant::now() < until {
        let mut status = 0;
        let tid = match wait_any(&mut status, true) {
            None => continue,
            Some(Ok(tid)) => tid,
            Some(Err(_)) => break,
        };
        if !libc::WIFSTOPPED(status) {
            waiting.remove(&tid);
            continue;
        }
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        if sig == libc::SIGTRAP
            && matches!(
                event,
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE
            )
            && let Some(child) = event_message(tid)
            && !released.contains(&child)
        {
            // Attached already; it stops by itself when it starts.
            waiting.insert(child);
            seen.insert(child);
        }
        // A group-stop (it was stopped, or is being stopped, by SIGSTOP and the like): it
        // stays stopped once let go of.
        if event == EVENT_STOP
            && stop_signal(sig)
            && let Some(pid) = tgid(tid)
        {
            stopped.insert(pid);
        }
        let deliver = if event == 0 && sig != (libc::SIGTRAP | 0x80) {
            signalled.push((tid, sig));
            sig
        } else {
            0
        };
        ptrace(libc::PTRACE_DETACH, tid, 0, deliver as usize);
        waiting.remove(&tid);
        released.insert(tid);
        seen.insert(tid);
    }
    // A signal just delivered (the one passed on, say) may end its process at once, or,
    // a stop signal, stop it.
    let unsettled = |&(tid, sig): &(i32, i32)| match running(tid) {
        None => false,
        Some((_, now_stopped)) => !(stop_signal(sig) && now_stopped),
    };
    let settle = Instant::now() + SETTLE;
    while Instant::now() < settle && signalled.iter().any(unsettled) {
        std::thread::sleep(Duration::from_millis(2));
    }
    let mut left: Vec<Left> = Vec::new();
    for tid in seen {
        let Some((pid, mut now_stopped)) = running(tid) else {
            continue;
        };
        // A stop signal sent just before the end and not yet taken (it was pending when the
        // task was let go of) stops the process a moment later: wait for it, briefly, so
        // the process is reported as it will be.
        let until = Instant::now() + SETTLE * 5;
        while !now_stopped
            && Instant::now() < until
            && [libc::SIGSTOP, libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU]
                .iter()
                .any(|&sig| pending(pid, sig))
        {
            std::thread::sleep(Duration::from_millis(2));
            now_stopped = running(tid).is_some_and(|(_, stopped)| stopped);
        }
        if now_stopped {
            stopped.insert(pid);
        }
        if !left.iter().any(|l| l.pid == pid) {
            left.push(Left::of(pid, stopped.contains(&pid)));
        }
    }
    left.sort_by_key(|l| l.pid);
    left
}

impl Left {
    /// Process `pid` as a process left running, named by its /proc comm.
    fn of(pid: i32, stopped: bool) -> Self {
        Self {
            pid,
            name: super::comm(pid).unwrap_or_default(),
            stopped,
        }
    }
}

/// The processes of `tasks` still running (not yet ended), kept traced: what a keeper
/// takes over (see [`keep`]). What is already under way is let happen first, briefly (a
/// stop signal sent just before the end stops its process), so that each is reported as
/// it will be.
pub(super) fn still_running(tasks: &mut HashMap<i32, Task>) -> Vec<Left> {
    let until = Instant::now() + SETTLE;
    let mut quiet_since = Instant::now();
    while Instant::now() < until && quiet_since.elapsed() < Duration::from_millis(20) {
        let mut status = 0;
        match wait_any(&mut status, true) {
            None => continue,
            Some(Ok(tid)) if tid > 0 => {
                quiet_since = Instant::now();
                match pass(tid, status) {
                    Passed::Ended => {
                        tasks.remove(&tid);
                    }
                    Passed::Stopped(stopped) => tasks.entry(tid).or_default().stopped = stopped,
                    Passed::Went => {}
                }
            }
            Some(_) => break,
        }
    }
    let mut left: Vec<Left> = Vec::new();
    for (&tid, task) in tasks.iter() {
        let Some((pid, stopped)) = running(tid) else {
            continue;
        };
        if let Some(l) = left.iter_mut().find(|l| l.pid == pid) {
            l.stopped |= stopped || task.stopped;
            continue;
        }
        left.push(Left::of(pid, stopped || task.stopped));
    }
    left.sort_by_key(|l| l.pid);
    left
}
