//! The ptrace loop: starts a command as a traced child, follows its forks, threads and
//! execs, and reports every system call with its arguments, result and the time between
//! entry and exit. The only architecture-specific knowledge is the table of system-call
//! numbers in [`Call::of`] (libc's constants, per target); arguments and results come from
//! PTRACE_GET_SYSCALL_INFO (Linux 5.3+), which needs no register layout.

use anyhow::{Context, Result, bail};
use std::collections::HashMap;
use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStrExt;
use std::time::Instant;

/// The file-I/O system calls the tracer accounts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Call {
    /// The `read` family.
    Read,
    /// The `write` family.
    Write,
    /// The `pread` family.
    Pread,
    /// The `pwrite` family.
    Pwrite,
    /// The `readv` family.
    Readv,
    /// The `writev` family.
    Writev,
    /// The `preadv` family.
    Preadv,
    /// The `pwritev` family.
    Pwritev,
    /// The `lseek` family.
    Lseek,
    /// The `fsync` family.
    Fsync,
    /// The `fdatasync` family.
    Fdatasync,
    /// The `syncfilerange` family.
    SyncFileRange,
    /// The `msync` family.
    Msync,
    /// The `mmap` family.
    Mmap,
    /// The `munmap` family.
    Munmap,
    /// The `open` family.
    Open,
    /// The `openat` family.
    Openat,
    /// The `close` family.
    Close,
    /// The `ftruncate` family.
    Ftruncate,
    /// The `fallocate` family.
    Fallocate,
    /// The `iouringenter` family.
    IoUringEnter,
    /// The `copyfilerange` family.
    CopyFileRange,
    /// The `sendfile` family.
    Sendfile,
    /// The `splice` family.
    Splice,
    /// The `dup` family.
    Dup,
    /// The `dup2` family.
    Dup2,
    /// The `dup3` family.
    Dup3,
    /// The `fcntl` family.
    Fcntl,
}

impl Call {
    /// The call with system-call number `nr` on this architecture, if it is one we follow.
    // libc's SYS_* names are lower case; matching on them is the point.
    #[allow(non_upper_case_globals)]
    pub fn of(nr: u64) -> Option<Self> {
        let nr = i64::try_from(nr).ok()?;
        use libc::*;
        Some(match nr {
            SYS_read => Self::Read,
            SYS_write => Self::Write,
            SYS_pread64 => Self::Pread,
            SYS_pwrite64 => Self::Pwrite,
            SYS_readv => Self::Readv,
            SYS_writev => Self::Writev,
            SYS_preadv | SYS_preadv2 => Self::Preadv,
            SYS_pwritev | SYS_pwritev2 => Self::Pwritev,
            SYS_lseek => Self::Lseek,
            SYS_fsync => Self::Fsync,
            SYS_fdatasync => Self::Fdatasync,
            SYS_sync_file_range => Self::SyncFileRange,
            SYS_msync => Self::Msync,
            SYS_mmap => Self::Mmap,
            SYS_munmap => Self::Munmap,
            #[cfg(target_arch = "x86_64")]
            SYS_open | SYS_creat => Self::Open,
            SYS_openat | SYS_openat2 => Self::Openat,
            SYS_close => Self::Close,
            SYS_ftruncate => Self::Ftruncate,
            SYS_fallocate => Self::Fallocate,
            SYS_io_uring_enter => Self::IoUringEnter,
            SYS_copy_file_range => Self::CopyFileRange,
            SYS_sendfile => Self::Sendfile,
            SYS_splice => Self::Splice,
            SYS_dup => Self::Dup,
            #[cfg(target_arch = "x86_64")]
            SYS_dup2 => Self::Dup2,
            SYS_dup3 => Self::Dup3,
            SYS_fcntl => Self::Fcntl,
            _ => return None,
        })
    }

    /// The name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Pread => "pread64",
            Self::Pwrite => "pwrite64",
            Self::Readv => "readv",
            Self::Writev => "writev",
            Self::Preadv => "preadv",
            Self::Pwritev => "pwritev",
            Self::Lseek => "lseek",
            Self::Fsync => "fsync",
            Self::Fdatasync => "fdatasync",
            Self::SyncFileRange => "sync_file_range",
            Self::Msync => "msync",
            Self::Mmap => "mmap",
            Self::Munmap => "munmap",
            Self::Open => "open",
            Self::Openat => "openat",
            Self::Close => "close",
            Self::Ftruncate => "ftruncate",
            Self::Fallocate => "fallocate",
            Self::IoUringEnter => "io_uring_enter",
            Self::CopyFileRange => "copy_file_range",
            Self::Sendfile => "sendfile",
            Self::Splice => "splice",
            Self::Dup => "dup",
            Self::Dup2 => "dup2",
            Self::Dup3 => "dup3",
            Self::Fcntl => "fcntl",
        }
    }
}

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
    },
}

/// How the traced command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// exit(code).
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

/// `struct ptrace_syscall_info` as the kernel lays it out (the union as raw words).
#[repr(C)]
#[derive(Default)]
struct SyscallInfo {
    op: u8,
    _pad: u8,
    _flags: u16,
    _arch: u32,
    _ip: u64,
    _sp: u64,
    /// entry: nr, args[6]; exit: rval, is_error; seccomp: nr, args[6], ret_data.
    data: [u64; 8],
}

const INFO_ENTRY: u8 = 1;
const INFO_EXIT: u8 = 2;

fn ptrace(request: libc::c_uint, pid: i32, addr: usize, data: usize) -> libc::c_long {
    // SAFETY: every request made here passes plain integers or a pointer to a live local
    // of the size the request expects.
    unsafe { libc::ptrace(request, pid, addr, data) }
}

/// Resumes `tid` until its next system-call boundary, delivering `signal` (0: none).
fn resume(tid: i32, signal: i32) {
    // An error means the task is gone (killed meanwhile); waitpid will say so.
    ptrace(libc::PTRACE_SYSCALL, tid, 0, signal as usize);
}

/// Starts `command` as a traced child and reports its calls to `sink` until every traced
/// task has exited. `prepare` runs in the child after fork, before exec (async-signal-safe
/// calls only: dup2 and the like); `started` runs in this process after fork, with the
/// child's pid. Returns how the first process ended.
pub fn trace(
    command: &[OsString],
    prepare: &dyn Fn(),
    started: &mut dyn FnMut(i32),
    sink: &mut dyn FnMut(Event),
) -> Result<Ended> {
    let Some(program) = command.first() else {
        bail!("trace: no command given (ioscope trace -- CMD [ARGS...])");
    };
    let argv: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .context("trace: an argument contains a NUL byte")?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // The exec failure is reported through a pipe that exec closes (O_CLOEXEC).
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills the two-int array we pass.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error()).context("trace: pipe");
    }
    // SAFETY: after fork the child calls only async-signal-safe functions (ptrace, raise,
    // signal, write, execvp, _exit, and `prepare`, which promises the same) before exec.
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
            if libc::ptrace(libc::PTRACE_TRACEME, 0, 0, 0) != 0 {
                let errno = *libc::__errno_location();
                libc::write(fds[1], (&errno as *const i32).cast(), 4);
                libc::_exit(127);
            }
            libc::raise(libc::SIGSTOP);
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
    wait(pid, &mut status).context("trace: waiting for the child to stop")?;
    if !libc::WIFSTOPPED(status) {
        // PTRACE_TRACEME failed (say, a seccomp policy forbids ptrace).
        let errno = read_errno(fds[0]);
        // SAFETY: closing the read end we own.
        unsafe { libc::close(fds[0]) };
        return Err(crate::error::input(format!(
            "trace {}: cannot trace it here: ptrace refused ({})",
            program.to_string_lossy(),
            std::io::Error::from_raw_os_error(errno.unwrap_or(libc::EPERM))
        )));
    }
    let options = libc::PTRACE_O_TRACESYSGOOD
        | libc::PTRACE_O_TRACEFORK
        | libc::PTRACE_O_TRACEVFORK
        | libc::PTRACE_O_TRACECLONE
        | libc::PTRACE_O_TRACEEXEC
        | libc::PTRACE_O_TRACEEXIT
        | libc::PTRACE_O_EXITKILL;
    if ptrace(libc::PTRACE_SETOPTIONS, pid, 0, options as usize) != 0 {
        let err = std::io::Error::last_os_error();
        // SAFETY: killing and reaping the child we forked.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
            libc::close(fds[0]);
        }
        return Err(err).context("trace: PTRACE_SETOPTIONS");
    }
    resume(pid, 0);
    let ended = follow(pid, fds[0], program, sink);
    // SAFETY: closing the read end we own.
    unsafe { libc::close(fds[0]) };
    ended
}

/// The errno the child wrote before failing, if any (exec closed the pipe otherwise).
fn read_errno(fd: i32) -> Option<i32> {
    let mut errno = 0i32;
    // SAFETY: reading at most 4 bytes into a local i32.
    let n = unsafe { libc::read(fd, (&mut errno as *mut i32).cast(), 4) };
    (n == 4).then_some(errno)
}

/// waitpid that retries when our own signal handler interrupted it.
fn wait(pid: i32, status: &mut i32) -> std::io::Result<i32> {
    loop {
        // SAFETY: status is a live local.
        let r = unsafe { libc::waitpid(pid, status, libc::__WALL) };
        if r >= 0 {
            return Ok(r);
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

/// waitpid for any traced task; `None` when a signal handler of ours interrupted it.
fn wait_or_interrupt(status: &mut i32) -> Option<std::io::Result<i32>> {
    // SAFETY: status is a live local.
    let r = unsafe { libc::waitpid(-1, status, libc::__WALL) };
    if r >= 0 {
        return Some(Ok(r));
    }
    let err = std::io::Error::last_os_error();
    if err.kind() == std::io::ErrorKind::Interrupted {
        return None;
    }
    Some(Err(err))
}

/// Per traced thread: whether it is inside a call, and since when.
struct Task {
    inside: Option<(Call, [u64; 6], Instant)>,
    /// A new task's first stop (SIGSTOP) is swallowed.
    started: bool,
}

fn follow(
    leader: i32,
    exec_pipe: i32,
    program: &OsString,
    sink: &mut dyn FnMut(Event),
) -> Result<Ended> {
    let mut tasks: HashMap<i32, Task> = HashMap::new();
    tasks.insert(
        leader,
        Task {
            inside: None,
            started: true,
        },
    );
    let mut ended = None;
    let mut exec_checked = false;
    let mut forwarded = false;
    loop {
        let mut status = 0;
        let waited = wait_or_interrupt(&mut status);
        // Ctrl-C on a terminal reaches the whole process group, the command included; a
        // SIGINT or SIGTERM sent to ioscope alone is passed on once to every traced task,
        // so the command ends and the partial trace is printed. Once its first process has
        // ended, an interrupted trace stops waiting for what is left (PTRACE_O_EXITKILL
        // ends those when ioscope exits).
        if crate::interrupt::requested() {
            if !forwarded {
                forwarded = true;
                for &t in tasks.keys() {
                    // SAFETY: signalling tasks we trace.
                    unsafe { libc::kill(t, libc::SIGINT) };
                }
            }
            if ended.is_some() {
                break;
            }
        }
        let tid = match waited {
            None => continue,
            Some(r) => r,
        };
        let tid = match tid {
            Ok(tid) => tid,
            Err(e) if e.raw_os_error() == Some(libc::ECHILD) => break,
            Err(e) => return Err(e).context("trace: waitpid"),
        };
        if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
            tasks.remove(&tid);
            if tid == leader {
                ended = Some(if libc::WIFEXITED(status) {
                    Ended::Code(libc::WEXITSTATUS(status))
                } else {
                    Ended::Signal(libc::WTERMSIG(status))
                });
            }
            continue;
        }
        if !libc::WIFSTOPPED(status) {
            continue;
        }
        let task = tasks.entry(tid).or_insert(Task {
            inside: None,
            started: false,
        });
        let sig = libc::WSTOPSIG(status);
        let event = status >> 16;
        if sig == (libc::SIGTRAP | 0x80) {
            let mut info = SyscallInfo::default();
            let got = ptrace(
                libc::PTRACE_GET_SYSCALL_INFO,
                tid,
                std::mem::size_of::<SyscallInfo>(),
                &mut info as *mut SyscallInfo as usize,
            );
            if got <= 0 {
                bail!(
                    "trace: PTRACE_GET_SYSCALL_INFO failed ({}); it needs Linux 5.3 or later",
                    std::io::Error::last_os_error()
                );
            }
            match info.op {
                INFO_ENTRY => {
                    let mut args = [0u64; 6];
                    args.copy_from_slice(&info.data[1..7]);
                    task.inside = Call::of(info.data[0]).map(|call| {
                        sink(Event::Enter { tid, call, args });
                        (call, args, Instant::now())
                    });
                }
                INFO_EXIT => {
                    if let Some((call, args, since)) = task.inside.take() {
                        let ret = info.data[0] as i64;
                        sink(Event::Exit(Syscall {
                            tid,
                            call,
                            args,
                            ret,
                            failed: info.data[1] & 0xff != 0,
                            nanos: since.elapsed().as_nanos() as u64,
                        }));
                    }
                }
                _ => {}
            }
            resume(tid, 0);
            continue;
        }
        if sig == libc::SIGTRAP && event != 0 {
            match event {
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE => {
                    let mut child: libc::c_ulong = 0;
                    ptrace(
                        libc::PTRACE_GETEVENTMSG,
                        tid,
                        0,
                        &mut child as *mut libc::c_ulong as usize,
                    );
                    sink(Event::Spawned {
                        parent: tid,
                        child: child as i32,
                    });
                }
                libc::PTRACE_EVENT_EXEC => {
                    // A thread other than the leader may exec; the kernel then reports it
                    // under the leader's id, which is the one that continues.
                    task.inside = None;
                    sink(Event::Exec { tid });
                    if tid == leader && !exec_checked {
                        exec_checked = true;
                    }
                }
                libc::PTRACE_EVENT_EXIT => sink(Event::Exiting { tid }),
                _ => {}
            }
            resume(tid, 0);
            continue;
        }
        if !task.started && sig == libc::SIGSTOP {
            // The automatic stop of a new tracee: swallow it.
            task.started = true;
            resume(tid, 0);
            continue;
        }
        task.started = true;
        // A signal-delivery-stop (deliver the signal) or a group-stop (PTRACE_GETSIGINFO
        // fails; resume without one, which ptrace without SEIZE cannot keep stopped).
        let mut siginfo: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let delivery = ptrace(
            libc::PTRACE_GETSIGINFO,
            tid,
            0,
            &mut siginfo as *mut libc::siginfo_t as usize,
        ) == 0;
        resume(tid, if delivery { sig } else { 0 });
    }
    if !exec_checked && let Some(errno) = read_errno(exec_pipe) {
        return Err(crate::error::input(format!(
            "trace {}: cannot run it: {}",
            program.to_string_lossy(),
            std::io::Error::from_raw_os_error(errno)
        )));
    }
    ended.context("trace: the traced command vanished without an exit status")
}
