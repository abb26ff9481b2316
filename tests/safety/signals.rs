//! Ctrl-C and SIGTERM stop a command blocked in open(), read() or write() on a FIFO or a
//! pipe: exit 130, the one "interrupted" line, and nothing of the user's removed. Every
//! other signal that would end ioscope (SIGUSR1, SIGXCPU, a real-time one…) cleans up the
//! same way and exits 128 + its number; past `ulimit -f` a write fails in one error line.

use crate::common::*;
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

/// Starts ioscope in a process group of its own (as a shell job or `timeout` runs it), with
/// stdout piped.
fn spawn_in_group(args: &[&str], dir: &Path) -> Child {
    use std::os::unix::process::CommandExt;
    Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .expect("start ioscope")
}

/// Waits until `child` catches SIGTERM (its handler is installed: it started), failing the
/// test if it ends first or never gets there (a safety limit, not a timing assertion).
fn wait_until_caught(child: &mut Child) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("ioscope ended before it caught SIGTERM ({status})");
        }
        let status =
            std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
        let caught = status
            .lines()
            .find_map(|l| l.strip_prefix("SigCgt:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .is_some_and(|m| m & (1 << (libc::SIGTERM - 1)) != 0);
        if caught {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "ioscope never started"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// What coreutils `timeout` does: `signal` to the child, then at once to its whole group.
fn signal_child_then_group(child: &Child, signal: i32) {
    let pid = child.id() as i32;
    // SAFETY: signalling our own child and the group it leads; neither is reaped yet.
    unsafe {
        libc::kill(pid, signal);
        libc::kill(-pid, signal);
    }
}

/// The entries of `dir` whose names say they are ioscope's scratch or temporary files.
fn scratch_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("ioscope"))
        .collect()
}

/// Parses stdout as exactly one JSON document of `command` that says it is incomplete.
fn incomplete_document(out: &Output, command: &str) -> serde_json::Value {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{command}: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{command}: stdout is not one JSON document ({e}): {:?} / {err}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert_eq!(v["schema"], format!("ioscope/{command}/v2"), "{command}");
    assert_eq!(v["complete"], false, "{command}");
    // The reader of the document is told on stderr too, in one line.
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning: interrupted") && l.contains("incomplete")),
        "{command}: no closing line on stderr: {err}"
    );
    assert!(v["environment"].is_object(), "{command}");
    assert!(v["command_line"].is_array(), "{command}");
    v
}

#[test]
fn a_sigterm_doubled_as_timeout_sends_it_is_one_request_and_the_json_comes_out_whole() {
    for round in 0..10u64 {
        let dir = tempfile::tempdir().unwrap();
        // Every other round replaces an existing file: its successor is written under a
        // temporary name beside it, which must go too.
        let old = round % 2 == 1;
        if old {
            file_with(dir.path(), "F", b"the user's file");
        }
        let mut args = vec![
            "sweep",
            "F",
            "--op",
            "write",
            "--size",
            "32m",
            "--block-sizes",
            "64k,1m",
            "--repeat",
            "1000",
            "--min-free",
            "1m",
            "--json",
            "--csv",
            "C",
        ];
        if old {
            args.push("--force");
        }
        let mut child = spawn_in_group(&args, dir.path());
        wait_until_caught(&mut child);
        // From right after start-up to well into the first point.
        std::thread::sleep(Duration::from_millis(round * 40));
        signal_child_then_group(&child, libc::SIGTERM);
        let out = wait_or_kill(child, "sweep");
        let v = incomplete_document(&out, "sweep");
        let points = v["points"].as_array().expect("points").len();
        assert!(
            scratch_in(dir.path()).is_empty(),
            "round {round}: scratch left: {:?}",
            scratch_in(dir.path())
        );
        if old {
            assert_eq!(
                std::fs::read(dir.path().join("F")).unwrap(),
                b"the user's file"
            );
        } else {
            assert!(!dir.path().join("F").exists(), "an unfinished output goes");
        }
        let csv = dir.path().join("C");
        if points == 0 {
            assert!(!csv.exists(), "round {round}: no empty CSV is left");
        } else {
            let text = std::fs::read_to_string(&csv).unwrap();
            assert_eq!(text.lines().count(), points + 1, "round {round}: {text}");
        }
    }
}

/// A pipe whose buffer is already full, with its read end kept (never read): a process
/// given the write end as stdout blocks in its first write.
fn full_pipe() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array we pass.
    assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
    // SAFETY: pipe2 just returned these descriptors; each OwnedFd is their only owner.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let fd = write.as_raw_fd();
    // SAFETY: fcntl and write on a descriptor we own, with a buffer we own.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        let chunk = [b'x'; 4096];
        while libc::write(fd, chunk.as_ptr().cast(), chunk.len()) > 0 {}
        libc::fcntl(fd, libc::F_SETFL, flags);
    }
    (read, write)
}

#[test]
fn a_second_signal_a_while_later_exits_at_once_and_removes_the_unfinished_outputs() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    file_with(dir.path(), "F", &pattern(4 << 20));
    let (_reader, writer) = full_pipe();
    // Interrupted before its first point, it prints its (empty) JSON document into a pipe
    // that nobody reads: stuck there, with its --csv and --markdown still reserved.
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args([
            "sweep",
            "F",
            "--block-sizes",
            "1",
            "--max-calls",
            "1g",
            "--json",
            "--csv",
            "C",
            "--markdown",
            "M",
        ])
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    wait_until_caught(&mut child);
    let started = Instant::now();
    while !dir.path().join("M").exists() {
        assert!(child.try_wait().unwrap().is_none(), "sweep ended early");
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the outputs were never reserved"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    signal_child_then_group(&child, libc::SIGTERM);
    // The first signal is being answered (the document waits for the pipe): a second one
    // 1.5 s later is a new request, and nothing stops the exit then.
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "still writing its document into the full pipe"
    );
    let out = signal_and_wait(child, libc::SIGTERM);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(
        err.contains("interrupted again; exiting at once (unfinished files removed)"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        ["F"],
        "the reserved outputs are removed, the input stays"
    );
}

#[test]
fn every_measuring_command_interrupted_early_or_later_prints_one_incomplete_json_document() {
    let dir = tempfile::tempdir().unwrap();
    file_with(dir.path(), "F", &pattern(32 << 20));
    std::fs::create_dir(dir.path().join("D")).unwrap();
    let commands: [&[&str]; 6] = [
        &["sweep", "F", "--block-sizes", "1", "--max-calls", "1g"],
        &["cache", "F", "--block-size", "1"],
        &["compare", "F", "--block-size", "1"],
        &["calibrate", "F", "1", "--min", "3s", "--max", "6s"],
        &["run", "F", "-r", "1"],
        &[
            "patterns", "D", "--size", "32m", "--record", "1", "--tests", "write",
        ],
    ];
    for args in commands {
        // Right after start-up (the handler just installed), and during the first point.
        for delay in [0, 300] {
            let mut args = args.to_vec();
            args.push("--json");
            let mut child = spawn_in_group(&args, dir.path());
            wait_until_caught(&mut child);
            std::thread::sleep(Duration::from_millis(delay));
            signal_child_then_group(&child, libc::SIGTERM);
            let out = wait_or_kill(child, args[0]);
            incomplete_document(&out, args[0]);
            assert!(
                scratch_in(dir.path()).is_empty() && scratch_in(&dir.path().join("D")).is_empty(),
                "{args:?}: scratch left"
            );
        }
    }
}

#[test]
fn a_signal_ignored_by_the_caller_stays_ignored_for_ioscope_and_a_traced_command() {
    use std::os::unix::process::CommandExt;
    // As `nohup` leaves it: SIGHUP ignored. The traced shell must inherit that (were
    // ioscope's handler installed over it, the exec would reset it to the default).
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.args([
        "trace",
        "-q",
        "--",
        "sh",
        "-c",
        "grep SigIgn /proc/self/status",
    ]);
    // SAFETY: signal() is async-signal-safe; the closure runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().expect("run ioscope trace");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mask = text
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).expect("a hex mask"))
        .unwrap_or_else(|| panic!("no SigIgn line in {text}"));
    assert_ne!(
        mask & 1,
        0,
        "SIGHUP (bit 0) is ignored in the traced shell: {text}"
    );
    assert_ne!(
        mask & 2,
        0,
        "SIGINT (bit 1) is ignored in the traced shell: {text}"
    );
}

#[test]
fn sigint_sent_by_name_stops_ioscope_even_when_its_shell_ignored_it_as_for_a_background_job() {
    use std::os::unix::process::CommandExt;
    use std::time::{Duration, Instant};
    // A script's `ioscope receive DIR & ... kill -INT $!`: sh starts background jobs with
    // SIGINT ignored, and the script still expects kill -INT to stop it.
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("s");
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.arg("receive")
        .arg(dir.path())
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    // SAFETY: signal() is async-signal-safe; the closure runs in the child before exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("start ioscope receive");
    let started = Instant::now();
    while !socket.exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill only sends a signal to the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("ioscope ignored kill -INT");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(status.code(), Some(130));
}

/// The entries under `dir` (recursively) whose names say they are ioscope's scratch,
/// reserve, claim or temporary files.
fn leftovers(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() && !path.is_symlink() {
            found.extend(leftovers(&path));
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with(".ioscope") || name.contains(".ioscope-new") {
            found.push(path);
        }
    }
    found
}

/// Starts ioscope with `args` in `dir` (its own process group), after `limits` applied in
/// the child (resource, soft limit) — the hard limit stays as it is.
fn spawn_limited(args: &[&str], dir: &Path, limits: &[(libc::__rlimit_resource_t, u64)]) -> Child {
    use std::os::unix::process::CommandExt;
    let limits = limits.to_vec();
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // SAFETY: getrlimit/setrlimit are async-signal-safe and change only the child.
    unsafe {
        cmd.pre_exec(move || {
            for &(resource, soft) in &limits {
                let mut limit: libc::rlimit = std::mem::zeroed();
                libc::getrlimit(resource, &mut limit);
                limit.rlim_cur = soft.min(limit.rlim_max);
                if libc::setrlimit(resource, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    cmd.spawn().expect("start ioscope")
}

/// Waits until `ready(dir)` holds while `child` runs (a safety limit, not a timing).
fn wait_for(child: &mut Child, dir: &Path, what: &str, ready: impl Fn(&Path) -> bool) {
    let started = Instant::now();
    while !ready(dir) {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            let _ = child.stderr.take().unwrap().read_to_string(&mut err);
            panic!("ioscope ended ({status}) before {what}: {err}");
        }
        assert!(started.elapsed() < Duration::from_secs(60), "never {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The file `name` in `dir` has bytes in it: the write is under way.
fn writing(name: &'static str) -> impl Fn(&Path) -> bool {
    move |dir: &Path| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.len() > 0)
}

/// Exit 128 + `signal`, the one line naming the signal, and nothing of ioscope's left.
fn assert_cleaned_up_after(out: &Output, signal: i32, name: &str, dir: &Path) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + signal), "{name}: {err}");
    assert!(
        err.contains(&format!("interrupted by {name}")) && err.contains("unfinished files removed")
            || err.contains("interrupted again; exiting at once"),
        "{name}: {err}"
    );
    assert!(
        leftovers(dir).is_empty(),
        "{name}: left {:?}",
        leftovers(dir)
    );
}

#[test]
fn usr1_usr2_alrm_vtalrm_prof_pwr_io_and_rt_during_a_write_remove_every_unfinished_file() {
    let signals = [
        (libc::SIGUSR1, "SIGUSR1"),
        (libc::SIGUSR2, "SIGUSR2"),
        (libc::SIGALRM, "SIGALRM"),
        (libc::SIGVTALRM, "SIGVTALRM"),
        (libc::SIGPROF, "SIGPROF"),
        (libc::SIGPWR, "SIGPWR"),
        (libc::SIGIO, "SIGIO"),
        (libc::SIGRTMIN() + 3, "SIGRTMIN+3"),
    ];
    for (i, (signal, name)) in signals.into_iter().enumerate() {
        // Two commands per signal, in turn: a run writing a large file, a write sweep.
        let dir = tempfile::tempdir().unwrap();
        let args: &[&str] = if i % 2 == 0 {
            &["run", "-w", "F", "1m", "1024", "--min-free", "1m"]
        } else {
            &[
                "sweep",
                "F",
                "--op",
                "write",
                "--size",
                "256m",
                "--block-sizes",
                "4k,1m",
                "--repeat",
                "100",
                "--min-free",
                "1m",
                "--csv",
                "C",
            ]
        };
        let mut child = spawn_limited(args, dir.path(), &[]);
        wait_for(&mut child, dir.path(), "it wrote", writing("F"));
        let out = signal_and_wait(child, signal);
        assert_cleaned_up_after(&out, signal, name, dir.path());
        assert!(!dir.path().join("F").exists(), "{name}: no partial output");
        assert!(!dir.path().join("C").exists(), "{name}: no partial CSV");
    }
}

#[test]
fn a_signal_during_the_study_removes_its_scratch_and_exits_128_plus_its_number() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("D")).unwrap();
    let mut child = spawn_limited(
        &[
            "study",
            "D",
            "--level",
            "quick",
            "--only",
            "write-read",
            "-o",
            "R",
        ],
        dir.path(),
        &[],
    );
    wait_for(&mut child, dir.path(), "its scratch file appeared", |d| {
        !leftovers(&d.join("D")).is_empty()
    });
    let out = signal_and_wait(child, libc::SIGUSR1);
    assert_cleaned_up_after(&out, libc::SIGUSR1, "SIGUSR1", dir.path());
}

/// `ulimit -t` with a soft limit under the hard one: SIGXCPU at the soft limit, then again
/// every second; the first one ends the command with its clean-up.
fn xcpu_during(args: &[&str], dir: &Path) -> Output {
    let child = spawn_limited(args, dir, &[(libc::RLIMIT_CPU, 1)]);
    wait_or_kill(child, args[0])
}

#[test]
fn sigxcpu_at_the_cpu_time_limit_during_a_write_removes_the_unfinished_output() {
    let dir = tempfile::tempdir().unwrap();
    // One-byte writes: CPU time in every call, and a file of 200 MB at most.
    let out = xcpu_during(
        &["run", "-w", "F", "1", "200000000", "--min-free", "1m"],
        dir.path(),
    );
    assert_cleaned_up_after(&out, libc::SIGXCPU, "SIGXCPU", dir.path());
    assert!(!dir.path().join("F").exists(), "no partial output");
}

#[test]
fn sigxcpu_during_a_read_only_sweep_exits_152_and_leaves_its_outputs_unwritten() {
    let dir = tempfile::tempdir().unwrap();
    file_with(dir.path(), "F", &pattern(4 << 20));
    let out = xcpu_during(
        &[
            "sweep",
            "F",
            "--block-sizes",
            "1",
            "--max-calls",
            "1g",
            "--csv",
            "C",
            "--markdown",
            "M",
        ],
        dir.path(),
    );
    assert_cleaned_up_after(&out, libc::SIGXCPU, "SIGXCPU", dir.path());
    assert!(!dir.path().join("C").exists() && !dir.path().join("M").exists());
    assert_eq!(
        std::fs::read(dir.path().join("F")).unwrap(),
        pattern(4 << 20)
    );
}

/// Runs ioscope with `args` in `dir` under `ulimit -f` of `bytes`.
fn under_file_size_limit(args: &[&str], dir: &Path, bytes: u64) -> Output {
    let child = spawn_limited(args, dir, &[(libc::RLIMIT_FSIZE, bytes)]);
    wait_or_kill(child, args[0])
}

/// One line naming `file` and the limit's error, a non-zero exit (not a signal's), nothing
/// of ioscope's left.
fn assert_file_too_large(out: &Output, file: &str, dir: &Path) {
    let line = one_line_stderr(out);
    let code = out.status.code();
    assert!(
        matches!(code, Some(1) | Some(2)),
        "{file}: exit {:?} (killed by SIGXFSZ?): {line}",
        out.status
    );
    assert!(line.starts_with("error: ") && line.contains(file), "{line}");
    assert!(line.contains("File too large"), "{line}");
    assert!(
        leftovers(dir).is_empty(),
        "{file}: left {:?}",
        leftovers(dir)
    );
}

#[test]
fn past_ulimit_f_a_run_a_write_sweep_and_a_transfer_end_in_one_line_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = under_file_size_limit(&["run", "-w", "F", "1m", "100"], dir.path(), 1 << 20);
    assert_file_too_large(&out, "F", dir.path());
    assert!(!dir.path().join("F").exists());
    let out = under_file_size_limit(
        &["sweep", "F", "--op", "write", "--size", "8m", "--csv", "C"],
        dir.path(),
        1 << 20,
    );
    assert_file_too_large(&out, "F", dir.path());
    assert!(!dir.path().join("F").exists() && !dir.path().join("C").exists());
    std::fs::create_dir(dir.path().join("T")).unwrap();
    let out = under_file_size_limit(
        &["transfer", "--to", "T", "--large", "4m"],
        dir.path(),
        100 << 10,
    );
    assert_file_too_large(&out, "large", dir.path());
    assert_eq!(std::fs::read_dir(dir.path().join("T")).unwrap().count(), 0);
}

#[test]
fn past_ulimit_f_a_report_and_a_forced_disk_write_end_in_one_line_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let study = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/study-sentences.json");
    let out = under_file_size_limit(
        &["report", study.to_str().unwrap(), "-o", "R.html"],
        dir.path(),
        20 << 10,
    );
    assert_file_too_large(&out, "R.html", dir.path());
    assert!(!dir.path().join("R.html").exists());
    // The user's file, larger than the limit: the write rows fail at the limit.
    file_with(dir.path(), "U", &pattern(8 << 20));
    let out = under_file_size_limit(
        &["disk", "U", "--force-write", "--size", "8m"],
        dir.path(),
        1 << 20,
    );
    assert_file_too_large(&out, "U", dir.path());
}

#[test]
fn past_ulimit_f_a_csv_of_a_read_only_sweep_ends_in_one_line_and_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    file_with(dir.path(), "F", &pattern(1 << 20));
    let out = under_file_size_limit(
        &["sweep", "F", "--block-sizes", "4k,64k,1m", "--csv", "C"],
        dir.path(),
        40,
    );
    assert_file_too_large(&out, "C", dir.path());
    assert!(!dir.path().join("C").exists());
    assert_eq!(
        std::fs::read(dir.path().join("F")).unwrap(),
        pattern(1 << 20)
    );
}

/// The SigIgn and SigCgt masks a program run by `trace` reports for itself.
fn traced_masks(ignore_xfsz: bool) -> (u64, u64) {
    use std::os::unix::process::CommandExt;
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.args(["trace", "-q", "--", "sh", "-c", "cat /proc/self/status"]);
    if ignore_xfsz {
        // SAFETY: signal() is async-signal-safe; the closure runs in the child before exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                libc::signal(libc::SIGUSR1, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    let out = cmd.output().expect("run ioscope trace");
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let mask = |field: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .map(|m| u64::from_str_radix(m.trim(), 16).expect("a hex mask"))
            .unwrap_or_else(|| panic!("no {field} line in {text}"))
    };
    (mask("SigIgn:"), mask("SigCgt:"))
}

#[test]
fn a_program_ioscope_starts_gets_the_default_sigxfsz_and_sigusr1_unless_the_caller_ignored_them() {
    let bit = |signal: i32| 1u64 << (signal - 1);
    let (ignored, caught) = traced_masks(false);
    for signal in [libc::SIGXFSZ, libc::SIGUSR1, libc::SIGXCPU] {
        assert_eq!(ignored & bit(signal), 0, "signal {signal} not ignored");
        assert_eq!(caught & bit(signal), 0, "signal {signal} not caught");
    }
    let (ignored, _) = traced_masks(true);
    assert_ne!(ignored & bit(libc::SIGXFSZ), 0, "SIGXFSZ still ignored");
    assert_ne!(ignored & bit(libc::SIGUSR1), 0, "SIGUSR1 still ignored");
}

#[test]
fn a_second_signal_while_a_point_repeats_ends_130_with_one_document_and_no_scratch() {
    let dir = tempfile::tempdir().unwrap();
    file_with(dir.path(), "F", &pattern(32 << 20));
    std::fs::create_dir(dir.path().join("D")).unwrap();
    // Each repeated until stable by default: patterns' writes of one byte, cache's cycles.
    let commands: [&[&str]; 2] = [
        &[
            "patterns", "D", "--size", "32m", "--record", "1", "--tests", "write", "--json",
        ],
        &["cache", "F", "--block-size", "1", "--json"],
    ];
    for args in commands {
        let mut child = spawn_in_group(args, dir.path());
        wait_until_caught(&mut child);
        std::thread::sleep(Duration::from_millis(300));
        // Ctrl-C, then again well after it (while the result is put out, or after).
        // SAFETY: signalling our own child, which has not been reaped yet.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        std::thread::sleep(Duration::from_millis(1200));
        // SAFETY: as above (an ended child is a zombie until waited for).
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = wait_or_kill(child, args[0]);
        incomplete_document(&out, args[0]);
        assert!(
            scratch_in(dir.path()).is_empty() && scratch_in(&dir.path().join("D")).is_empty(),
            "{args:?}: scratch left"
        );
    }
}
