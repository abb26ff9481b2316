//! Another program run once, as `time` would run it, with a deadline: its whole-process wall
//! time (from before the fork to its exit), its CPU time, how it ended (an exit status, a
//! signal, or killed at the deadline) and the first bytes of its stdout and stderr.
//!
//! The program leads a process group of its own, so that at the deadline, at Ctrl-C, or
//! when it exits leaving helpers behind, the whole group is killed. Its exit is waited for
//! without reaping it (`waitid` with `WNOWAIT`): the group's id stays its own until the
//! group is killed, so the kill can never reach a process that took the id since.

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::io::Read;
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
    /// The first [`KEPT`] bytes of its stdout.
    pub stdout: Vec<u8>,
    /// The first [`KEPT`] bytes of its stderr.
    pub stderr: Vec<u8>,
}

/// Bytes of each stream kept: enough for any answer, bounded for a program that prints a
/// file's worth.
pub const KEPT: usize = 64 << 10;

/// How often a wait checks for Ctrl-C (the wall time is taken by the waiting thread, so
/// this costs no precision).
const TICK: Duration = Duration::from_millis(50);

/// Reads a stream to its end, keeping its first [`KEPT`] bytes.
fn drain(mut stream: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match stream.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = KEPT.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        kept
    })
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

/// Kills `pid`'s whole process group.
fn kill_group(pid: libc::pid_t) {
    // SAFETY: a plain signal to a group this process made and has not reaped the leader of.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
    }
}

/// Runs `argv` with stdin empty, killed after `deadline`. Ctrl-C kills it and returns the
/// interruption.
pub fn run(argv: &[OsString], deadline: Duration) -> Result<Ran> {
    let shown = crate::text::printable(&argv[0].to_string_lossy());
    let started = Instant::now();
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .with_context(|| format!("start {shown}"))?;
    let pid = child.id() as libc::pid_t;
    let out = drain(child.stdout.take().expect("stdout is piped"));
    let err = drain(child.stderr.take().expect("stderr is piped"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let ended = wait_unreaped(pid);
        let _ = tx.send((ended, Instant::now()));
    });
    let mut timed_out = false;
    let mut interrupted = false;
    let ended_at = loop {
        let left = deadline.saturating_sub(started.elapsed());
        match rx.recv_timeout(left.min(TICK)) {
            Ok((_, at)) => break at,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if crate::interrupt::check().is_err() {
                    interrupted = true;
                    kill_group(pid);
                } else if started.elapsed() >= deadline && !timed_out {
                    timed_out = true;
                    kill_group(pid);
                }
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break Instant::now(),
        }
    };
    // Helpers it left running would keep its pipes open: the group goes with it.
    kill_group(pid);
    // SAFETY: wait4 writes only the status and the usage we pass; it reaps our child.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if rc != pid {
        return Err(std::io::Error::last_os_error()).with_context(|| format!("wait for {shown}"));
    }
    let stdout = out.join().unwrap_or_default();
    let stderr = err.join().unwrap_or_default();
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
        stdout,
        stderr,
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
    fn a_long_output_is_kept_only_in_part() {
        let r = run(&sh("head -c 1000000 /dev/zero"), Duration::from_secs(10)).unwrap();
        assert_eq!(r.stdout.len(), KEPT);
        assert_eq!(r.end, End::Exited(0));
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
