//! Another program run once, as `time` would run it, with a deadline: its whole-process wall
//! time (from before the fork to its exit), its CPU time, how it ended (an exit status, a
//! signal, or killed at the deadline) and the first bytes of its stdout and stderr.
//!
//! The program leads a process group of its own, so that at the deadline, at Ctrl-C, or
//! when it exits leaving helpers behind, the whole group is killed. Its exit is waited for
//! without reaping it (`waitid` with `WNOWAIT`): the group's id stays its own until the
//! group is killed, so the kill can never reach a process that took the id since. Its
//! output is read without blocking, in this thread: a helper that left the group (setsid)
//! and holds the pipes open is out of the kill's reach, so the pipes are let go of shortly
//! after the program ends, and neither the deadline nor Ctrl-C waits for it.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a program's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "end", content = "value")]
pub enum End {
    /// It exited with this status.
    Exited(i32),
    /// A signal ended it (its number).
    Signalled(i32),
    /// It ran past the deadline and was killed.
    TimedOut,
}

/// One run of a program.
#[derive(Debug, Clone)]
pub struct Ran {
    /// How it ended.
    pub end: End,
    /// Seconds from before it was started to its exit.
    pub wall_seconds: f64,
    /// CPU seconds in user mode (its own and its waited-for children's).
    pub user_seconds: f64,
    /// CPU seconds in the kernel (likewise).
    pub system_seconds: f64,
    /// The last [`KEPT`] bytes of its stdout.
    pub stdout: Vec<u8>,
    /// The last [`KEPT`] bytes of its stderr.
    pub stderr: Vec<u8>,
}

impl Ran {
    /// The last line it wrote on stderr that is not blank, trimmed and escaped (the reason a
    /// failing program gives).
    pub fn last_stderr_line(&self) -> Option<String> {
        String::from_utf8_lossy(&self.stderr)
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .map(|l| crate::text::printable(l.trim()))
    }
}

/// Bytes of each stream kept: its last 64 KiB (a program prints its answer last), bounded
/// for a program that prints a file's worth.
pub const KEPT: usize = 64 << 10;

/// How often a wait checks for Ctrl-C and the deadline (the wall time is taken by the
/// waiting thread, so this costs no precision).
const TICK: Duration = Duration::from_millis(20);

/// How long the pipes are read after the program ended: a helper it started in another
/// process group or session (out of the kill's reach) may hold them open for as long as it
/// lives, so they are let go of after this.
const AFTER_EXIT: Duration = Duration::from_millis(200);

/// One of the program's output pipes, read without blocking; its last [`KEPT`] bytes kept.
struct Pipe {
    fd: Option<std::os::fd::OwnedFd>,
    kept: Vec<u8>,
}

impl Pipe {
    fn new(fd: impl Into<std::os::fd::OwnedFd>) -> Self {
        use std::os::fd::AsRawFd;
        let fd = fd.into();
        // SAFETY: fcntl on a descriptor we own, setting a flag.
        unsafe {
            let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
            libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
        Self {
            fd: Some(fd),
            kept: Vec::new(),
        }
    }

    /// Reads what is there; closes at the end of the stream.
    fn read(&mut self) {
        use std::os::fd::AsRawFd;
        let Some(fd) = &self.fd else { return };
        let mut buf = [0u8; 16 << 10];
        loop {
            // SAFETY: read into our own buffer from a descriptor we own.
            let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n > 0 {
                self.kept.extend_from_slice(&buf[..n as usize]);
                if self.kept.len() > 2 * KEPT {
                    self.kept.drain(..self.kept.len() - KEPT);
                }
                continue;
            }
            let err = std::io::Error::last_os_error();
            if n < 0 && err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            if n < 0 && err.kind() == std::io::ErrorKind::WouldBlock {
                return;
            }
            // The end, or an error: nothing more will come.
            self.fd = None;
            return;
        }
    }

    /// Its last [`KEPT`] bytes.
    fn bytes(mut self) -> Vec<u8> {
        if self.kept.len() > KEPT {
            self.kept.drain(..self.kept.len() - KEPT);
        }
        self.kept
    }
}

/// Waits up to `wait` for either pipe to have something (or end), then reads both.
fn pump(pipes: &mut [&mut Pipe; 2], wait: Duration) {
    use std::os::fd::AsRawFd;
    let mut polled: Vec<libc::pollfd> = pipes
        .iter()
        .filter_map(|p| p.fd.as_ref())
        .map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    if polled.is_empty() {
        std::thread::sleep(wait);
        return;
    }
    // SAFETY: poll reads and writes only the array we pass, of the length we pass.
    unsafe {
        libc::poll(
            polled.as_mut_ptr(),
            polled.len() as libc::nfds_t,
            wait.as_millis().min(i32::MAX as u128) as libc::c_int,
        );
    }
    for p in pipes.iter_mut() {
        p.read();
    }
}

/// Waits for `pid` to end without reaping it; `true` once it has.
fn wait_unreaped(pid: libc::pid_t) -> bool {
    loop {
        // SAFETY: waitid writes only the siginfo we pass.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above; WNOWAIT leaves the child a zombie, so its id stays ours.
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if rc == 0 {
            return true;
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return false;
        }
    }
}

/// Kills the program and its process group (the program itself too where it left the
/// group it was started in).
fn kill_all(pid: libc::pid_t) {
    // SAFETY: plain signals to a child this process made and has not reaped (its id, and
    // the group's while it leads it, cannot have been taken since).
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// What becomes of a program's stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    /// Read, its last [`KEPT`] bytes kept (an answer it prints).
    Kept,
    /// Sent to /dev/null (a reader timed by its wall clock alone, as `cat f > /dev/null`:
    /// a pipe read here would cost it a copy).
    Discarded,
}

/// Runs `argv` with stdin empty, killed after `deadline`. Ctrl-C kills it and returns the
/// interruption. A program that cannot be started is an input error.
pub fn run(argv: &[OsString], deadline: Duration) -> Result<Ran> {
    run_with(argv, deadline, Stdout::Kept)
}

/// [`run`], with its stdout kept or discarded.
pub fn run_with(argv: &[OsString], deadline: Duration, stdout: Stdout) -> Result<Ran> {
    let shown = crate::text::printable(&crate::text::lossless(&argv[0]));
    let started = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(match stdout {
            Stdout::Kept => Stdio::piped(),
            Stdout::Discarded => Stdio::null(),
        })
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            crate::error::input(format!("start {shown}: {}", crate::files::describe(&e)))
        })?;
    let pid = child.id() as libc::pid_t;
    let mut out = match child.stdout.take() {
        Some(fd) => Pipe::new(fd),
        // Discarded: a pipe already at its end.
        None => Pipe {
            fd: None,
            kept: Vec::new(),
        },
    };
    let mut err = Pipe::new(child.stderr.take().expect("stderr is piped"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ended = wait_unreaped(pid);
        let _ = tx.send((ended, Instant::now()));
    });
    let mut timed_out = false;
    let mut interrupted = false;
    let ended_at = loop {
        match rx.try_recv() {
            Ok((_, at)) => break at,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => break Instant::now(),
            Err(std::sync::mpsc::TryRecvError::Empty) => {}
        }
        if crate::interrupt::check().is_err() {
            interrupted = true;
            kill_all(pid);
        } else if started.elapsed() >= deadline && !timed_out {
            timed_out = true;
            kill_all(pid);
        }
        let left = deadline.saturating_sub(started.elapsed());
        pump(
            &mut [&mut out, &mut err],
            left.clamp(Duration::from_millis(1), TICK),
        );
    };
    // Helpers it left running in its group would keep its pipes open: they go with it.
    kill_all(pid);
    let after = Instant::now();
    while (out.fd.is_some() || err.fd.is_some()) && after.elapsed() < AFTER_EXIT {
        pump(&mut [&mut out, &mut err], TICK);
    }
    // SAFETY: wait4 writes only the status and the usage we pass; it reaps our child.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if rc != pid {
        return Err(std::io::Error::last_os_error()).with_context(|| format!("wait for {shown}"));
    }
    crate::interrupt::check()?;
    if interrupted {
        return Err(crate::error::Failure::Interrupted.into());
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let end = if timed_out {
        End::TimedOut
    } else if libc::WIFSIGNALED(status) {
        End::Signalled(libc::WTERMSIG(status))
    } else {
        End::Exited(libc::WEXITSTATUS(status))
    };
    Ok(Ran {
        end,
        wall_seconds: ended_at.duration_since(started).as_secs_f64(),
        user_seconds: seconds(usage.ru_utime),
        system_seconds: seconds(usage.ru_stime),
        stdout: out.bytes(),
        stderr: err.bytes(),
    })
}

/// The name of signal `n` (`SIGSEGV`), or its number.
pub fn signal_name(n: i32) -> String {
    let name = match n {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        _ => return format!("signal {n}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Vec<OsString> {
        vec!["sh".into(), "-c".into(), script.into()]
    }

    #[test]
    fn an_exit_status_and_what_it_printed_are_kept() {
        let r = run(
            &sh("echo out; echo err >&2; exit 3"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(r.end, End::Exited(3));
        assert_eq!(r.stdout, b"out\n");
        assert_eq!(r.stderr, b"err\n");
        assert!(r.wall_seconds > 0.0);
    }

    #[test]
    fn a_signal_is_named() {
        let r = run(&sh("kill -SEGV $$"), Duration::from_secs(10)).unwrap();
        assert_eq!(r.end, End::Signalled(libc::SIGSEGV));
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(99), "signal 99");
    }

    #[test]
    fn a_program_past_its_deadline_is_killed_with_what_it_left_running() {
        // The helper in the background holds stdout open: it must go too, or the wait for
        // the pipe's end would last its whole sleep.
        let r = run(
            &sh("sleep 30 & echo started; sleep 30"),
            Duration::from_millis(300),
        )
        .unwrap();
        assert_eq!(r.end, End::TimedOut);
        assert_eq!(r.stdout, b"started\n");
    }

    #[test]
    fn a_long_output_is_kept_only_in_part_its_end() {
        let r = run(
            &sh("head -c 1000000 /dev/zero; echo Total XOR: e4fd303c"),
            Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(r.stdout.len(), KEPT);
        assert!(r.stdout.ends_with(b"Total XOR: e4fd303c\n"));
        assert_eq!(r.end, End::Exited(0));
    }

    #[test]
    fn a_helper_in_a_session_of_its_own_holding_the_output_is_not_waited_for() {
        // The helper leaves the group (setsid), out of the kill's reach, with stdout open.
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "perl -e 'use POSIX; POSIX::setsid(); open(F, \">{}\"); print F $$; close F; sleep 30' & sleep 0.2; echo done",
            crate::text::printable_path(&pidfile)
        );
        if std::process::Command::new("perl")
            .arg("-v")
            .output()
            .is_err()
        {
            eprintln!("skipped: no perl to start a helper in a new session");
            return;
        }
        let r = run(&sh(&script), Duration::from_secs(60)).unwrap();
        assert_eq!(r.end, End::Exited(0));
        assert_eq!(r.stdout, b"done\n");
        // The run ended while the helper still lived: it was not waited for.
        let helper: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(std::path::Path::new(&format!("/proc/{helper}")).exists());
        // SAFETY: a signal to the helper this test started.
        unsafe {
            libc::kill(helper, libc::SIGKILL);
        }
    }

    #[test]
    fn a_program_that_joins_another_group_is_still_killed_at_its_deadline() {
        // It moves itself into ioscope's own group, out of the group kill's reach.
        if std::process::Command::new("perl")
            .arg("-v")
            .output()
            .is_err()
        {
            eprintln!("skipped: no perl to change a process group");
            return;
        }
        let r = run(
            &[
                "perl".into(),
                "-e".into(),
                "setpgrp(0, getpgrp(getppid())); sleep 30".into(),
            ],
            Duration::from_millis(300),
        )
        .unwrap();
        assert_eq!(r.end, End::TimedOut);
    }

    #[test]
    fn a_program_that_cannot_start_is_an_error_naming_it() {
        let e = run(&["/nonexistent/reader".into()], Duration::from_secs(1)).unwrap_err();
        assert!(
            format!("{e:#}").contains("start /nonexistent/reader"),
            "{e:#}"
        );
    }
}
