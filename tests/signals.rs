//! Ctrl-C and SIGTERM stop a command blocked in open(), read() or write() on a FIFO or a
//! pipe: exit 130, the one "interrupted" line, and nothing of the user's removed.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Creates a FIFO at `dir/name`.
fn fifo(dir: &Path, name: &str) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    let path = dir.join(name);
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
    path
}

fn spawn(args: &[&str], stdin: Stdio) -> Child {
    Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ioscope")
}

/// Waits until `pid` catches `signal` and has been asleep for a moment: blocked in a
/// system call, not still starting up.
fn wait_until_blocked(child: &mut Child, signal: i32) {
    let pid = child.id();
    let started = Instant::now();
    let mut asleep = 0;
    while asleep < 3 {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .unwrap()
                .read_to_string(&mut err)
                .unwrap();
            panic!("ioscope ended before it blocked ({status}): {err}");
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "ioscope never blocked"
        );
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & (1 << (signal - 1)) != 0);
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .chars()
            .next();
        asleep = if caught && state == Some('S') {
            asleep + 1
        } else {
            0
        };
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `signal` and waits for the exit; a process that ignores it is killed and fails the
/// test (the wait is a safety limit, not a timing assertion).
fn signal_and_wait(mut child: Child, signal: i32) -> Output {
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe { libc::kill(child.id() as i32, signal) };
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("ioscope ignored signal {signal}; it had to be killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn assert_interrupted(out: &Output) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(
        one_line_stderr(out),
        "warning: interrupted: unfinished files removed, existing files left as they were"
    );
}

#[test]
fn ctrl_c_stops_a_read_waiting_in_open_for_a_fifo_writer() {
    let dir = tempfile::tempdir().unwrap();
    let p = fifo(dir.path(), "p");
    let mut child = spawn(&["run", p.to_str().unwrap(), "-r", "4k"], Stdio::null());
    wait_until_blocked(&mut child, libc::SIGINT);
    assert_interrupted(&signal_and_wait(child, libc::SIGINT));
    assert!(p.exists(), "the FIFO is the user's and stays");
}

#[test]
fn sigterm_stops_a_read_of_a_quiet_pipe_on_stdin() {
    for args in [&["run", "-", "-r", "4k"][..], &["fast", "-"]] {
        let mut child = spawn(args, Stdio::piped());
        // Keep the write end open and silent: read() waits for data that never comes.
        let _writer = child.stdin.take().unwrap();
        wait_until_blocked(&mut child, libc::SIGTERM);
        let out = signal_and_wait(child, libc::SIGTERM);
        assert_interrupted(&out);
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn ctrl_c_stops_a_write_blocked_on_a_full_fifo_and_leaves_the_fifo() {
    use std::os::unix::fs::OpenOptionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = fifo(dir.path(), "p");
    // A reader that never reads: the writer fills the pipe and then waits in write().
    let _reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&p)
        .unwrap();
    let mut child = spawn(
        &[
            "run",
            p.to_str().unwrap(),
            "-w",
            "4k",
            "100000",
            "--force",
            "--min-free",
            "1m",
        ],
        Stdio::null(),
    );
    wait_until_blocked(&mut child, libc::SIGINT);
    assert_interrupted(&signal_and_wait(child, libc::SIGINT));
    let kind = std::fs::metadata(&p).expect("the FIFO is still there");
    use std::os::unix::fs::FileTypeExt;
    assert!(kind.file_type().is_fifo());
}

#[test]
fn sigterm_stops_a_report_waiting_for_its_fifo() {
    let dir = tempfile::tempdir().unwrap();
    let p = fifo(dir.path(), "saved.json");
    let mut child = spawn(&["report", p.to_str().unwrap()], Stdio::null());
    wait_until_blocked(&mut child, libc::SIGTERM);
    assert_interrupted(&signal_and_wait(child, libc::SIGTERM));
}

/// Waits for the exit; a process still running after the safety limit is killed and fails
/// the test (no timing is asserted).
fn wait_or_kill(mut child: Child, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{what} blocked instead of exiting; it had to be killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn commands_that_need_a_regular_file_refuse_a_fifo_without_waiting_for_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let p = fifo(dir.path(), "p");
    let name = p.to_str().unwrap();
    for args in [
        vec!["sweep", name],
        vec!["cache", name],
        vec!["calibrate", name, "4k"],
        vec!["syscalls", name],
        vec!["compare", name],
    ] {
        let out = wait_or_kill(spawn(&args, Stdio::null()), args[0]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            one_line_stderr(&out),
            format!(
                "error: {} {name}: needs a regular file; {name} is a FIFO",
                args[0]
            )
        );
    }
    assert!(p.exists());
}

#[test]
fn syscalls_stops_on_ctrl_c_in_the_middle_of_its_loops() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4 << 20));
    let Some(child) = syscalls_in_its_loops(&path, "4m") else {
        return;
    };
    let out = signal_and_wait(child, libc::SIGINT);
    assert_interrupted(&out);
    assert!(out.stdout.is_empty(), "no table for an interrupted run");
}
