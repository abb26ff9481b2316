//! `disk` attacked the way a hostile user would (issue 25): absurd values, paths that are
//! not what they seem, outputs that collide, limits on the process (address space, file
//! size, descriptors), a file truncated under the run, signals at every phase and a closed
//! pipe. Each break that was found has a test here; the standard they check: a one-line
//! error naming the file and the operation, exit 2 for bad input, 1 for a failed run, 130
//! when interrupted, and no `.ioscope-*` file left behind. Tests that need another user or
//! io_uring skip with a printed reason. Tests never assert timings.

use crate::common;

use crate::common::{ioscope, is_root, one_line_stderr, scratch_files, usage_error};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `ioscope ARGS` under the resource limit `resource` set to `value` (soft and hard).
fn limited(args: &[&str], resource: libc::__rlimit_resource_t, value: u64) -> std::process::Output {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.args(args).env_remove("COLUMNS");
    // SAFETY: only setrlimit between fork and exec, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            libc::setrlimit(resource, &limit);
            Ok(())
        });
    }
    cmd.output().unwrap()
}

/// Starts `ioscope ARGS` with its output piped.
///
/// SIGHUP is reset to its default in the child: ioscope keeps a SIGHUP that whoever started
/// it ignored (`nohup`'s purpose), so under `nohup cargo test` it would never arrive.
fn spawn(args: &[&str]) -> std::process::Child {
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.args(args).stdout(Stdio::piped()).stderr(Stdio::piped());
    // SAFETY: only signal(2) between fork and exec, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd.spawn().unwrap()
}

/// Waits for `child` (killing it after a minute) and returns its output.
fn finish(mut child: std::process::Child) -> std::process::Output {
    let drained = common::Drained::of(&mut child);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().unwrap();
            panic!("ioscope did not end");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    drained.output(child.wait().unwrap())
}

/// Sends `signal` to `child`.
fn signal(child: &std::process::Child, signal: libc::c_int) {
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe { libc::kill(child.id() as i32, signal) };
}

#[test]
fn a_runtime_longer_than_the_clock_can_hold_is_refused_before_any_file_is_made() {
    // It was a panic in `Instant + Duration`, an abort, and the scratch file and its space
    // claim left behind (panel and fsync preset alike).
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for extra in [
        &["--rw", "read"][..],
        &["--preset", "fsync"],
        &["--depth-curve"],
    ] {
        let mut args = vec!["disk", d, "--size", "4m", "--runtime", "3000000000000000h"];
        args.extend_from_slice(extra);
        let err = usage_error(&args);
        assert!(err.contains("--runtime") && err.contains("limit"), "{err}");
    }
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn the_fsync_preset_refuses_a_size_smaller_than_one_of_its_writes() {
    // It wrote 2,300 bytes into a 1-byte file over and over, counting a wrap per write.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let err = usage_error(&[
        "disk",
        d,
        "--preset",
        "fsync",
        "--size",
        "1",
        "--runtime",
        "0.05s",
    ]);
    assert!(err.contains("smaller than one write"), "{err}");
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn a_missing_path_or_a_file_used_as_a_directory_is_an_input_error_in_plain_words() {
    // They exited 1 with "stat: … (os error 2)".
    let dir = tempfile::tempdir_in(".").unwrap();
    let file = common::file_with(dir.path(), "f", &[0u8; 4096]);
    let missing = dir.path().join("missing");
    let slashed = format!("{}/", file.display());
    for (path, words) in [
        (missing.to_str().unwrap(), "No such file or directory"),
        (slashed.as_str(), "Not a directory"),
    ] {
        let err = usage_error(&["disk", path, "--size", "4m", "--runtime", "0.05s"]);
        assert!(err.contains(words) && err.contains(path), "{err}");
        assert!(!err.contains("os error"), "{err}");
    }
}

#[test]
fn devices_fifos_and_links_to_them_are_refused_as_targets() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let mut targets = vec![
        "/dev/null".to_string(),
        "/dev/zero".to_string(),
        fifo.display().to_string(),
        link.display().to_string(),
    ];
    // A block device, where the machine shows one (refused without reading it).
    targets.extend(
        ["/dev/loop0", "/dev/vda", "/dev/sda", "/dev/nvme0n1"]
            .iter()
            .filter(|p| Path::new(p).exists())
            .take(1)
            .map(|p| p.to_string()),
    );
    for t in &targets {
        let err = usage_error(&["disk", t, "--runtime", "0.05s", "--rw", "randread"]);
        assert!(
            err.contains("not a regular file or a directory"),
            "{t}: {err}"
        );
    }
}

#[test]
fn files_of_proc_and_sys_are_refused_as_kernel_settings_not_storage() {
    // A sysfs file says 4096 bytes: its read came back short (an error at best), and with
    // --force-write a write row would have put generated bytes into a kernel setting.
    let candidates = [
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/kernel/profiling",
        "/proc/sys/vm/swappiness",
    ];
    let Some(knob) = candidates.iter().find(|p| Path::new(p).exists()) else {
        eprintln!("skipped: no /sys or /proc setting to try here");
        return;
    };
    for extra in [
        &["--rw", "randread", "--bs", "4k"][..],
        &["--rw", "randwrite", "--bs", "4k", "--force-write"],
    ] {
        let before = std::fs::read(knob).ok();
        let mut args = vec!["disk", knob, "--runtime", "0.02s", "--depth", "1"];
        args.extend_from_slice(extra);
        let err = usage_error(&args);
        assert!(err.contains("not storage"), "{knob}: {err}");
        assert_eq!(std::fs::read(knob).ok(), before, "{knob} unchanged");
    }
}

#[test]
fn a_series_file_that_is_also_the_csv_or_markdown_file_is_refused_before_measuring() {
    // With --force the run went to its end, then failed on "another program wrote this
    // file during the run"; without it, the message blamed an existing file (our own).
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let same = dir.path().join("same");
    for (flag, force) in [("--csv", true), ("--csv", false), ("--markdown", true)] {
        let mut args = vec![
            "disk",
            d.to_str().unwrap(),
            "--size",
            "4m",
            "--runtime",
            "0.05s",
            "--rw",
            "read",
            "--series",
            same.to_str().unwrap(),
            flag,
            same.to_str().unwrap(),
        ];
        if force {
            args.push("--force");
        }
        let err = usage_error(&args);
        assert!(err.contains("name the same file"), "{flag}: {err}");
        assert!(!same.exists(), "nothing was made at the path");
        assert!(scratch_files(&d).is_empty());
    }
}

#[test]
fn outputs_that_are_links_directories_fifos_or_the_measured_file_are_refused_even_with_force() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let own = common::file_with(dir.path(), "own", &common::pattern(1 << 20));
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&own, &link).unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for flag in ["--csv", "--series"] {
        for (target, path, words) in [
            (s(&d), s(&link), "symbolic link"),
            (s(&d), s(&d), "refusing"),
            (s(&d), s(&fifo), "not a regular file"),
            (s(&d), "/dev/full".to_string(), "not a regular file"),
            (s(&own), s(&own), "the file being measured"),
            (s(&d), s(&dir.path().join("no/such.csv")), "does not exist"),
        ] {
            let err = usage_error(&[
                "disk",
                &target,
                "--size",
                "4m",
                "--runtime",
                "0.05s",
                "--rw",
                "read",
                flag,
                &path,
                "--force",
            ]);
            assert!(err.contains(words), "{flag} {path}: {err}");
        }
    }
    assert_eq!(std::fs::read(&own).unwrap(), common::pattern(1 << 20));
    assert!(scratch_files(&d).is_empty());
}

#[test]
fn control_characters_in_the_directory_name_are_escaped_in_the_text() {
    // The `file` line printed the name raw: a newline forged a line, ESC drove the terminal.
    let dir = tempfile::tempdir_in(".").unwrap();
    let evil = dir.path().join("e\u{1b}[31mvil\nfile: forged");
    std::fs::create_dir(&evil).unwrap();
    let out = ioscope()
        .arg("disk")
        .arg(&evil)
        .args(["--size", "2m", "--runtime", "0.02s", "--rw", "randread"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.contains("e\\u{1b}[31mvil\\nfile: forged"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("file")).count(),
        1,
        "{text}"
    );
    assert!(scratch_files(&evil).is_empty());
}

#[test]
fn buffers_beyond_half_the_memory_are_refused_with_the_numbers() {
    // 1 GiB × depth 4096 × 1024 threads: every buffer touched before the row, so the
    // machine met the OOM killer (or, under ulimit -v, an abort that left the file).
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let err = usage_error(&[
        "disk",
        d,
        "--size",
        "4m",
        "--runtime",
        "0.05s",
        "--rw",
        "read",
        "--bs",
        "1g",
        "--depth",
        "4096",
        "--threads",
        "1024",
    ]);
    assert!(
        err.contains("of buffers") && err.contains("memory"),
        "{err}"
    );
    let err = usage_error(&[
        "disk",
        d,
        "--size",
        "4m",
        "--runtime",
        "0.05s",
        "--bs",
        "1g",
        "--depths",
        "1,4096",
        "--threads",
        "1024",
    ]);
    assert!(
        err.contains("depth 4096"),
        "the curve's deepest depth counts: {err}"
    );
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn a_limit_on_the_address_space_is_a_one_line_error_that_leaves_no_scratch_file() {
    // Under `ulimit -v` the buffers (or the threads' stacks and arenas) did not fit: the
    // allocation aborted the process and the scratch file and its claim stayed.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for extra in [
        &[
            "--size", "64m", "--rw", "read", "--bs", "16m", "--depth", "64",
        ][..],
        &[
            "--size",
            "4m",
            "--rw",
            "randread",
            "--threads",
            "1024",
            "--depth",
            "16",
        ],
    ] {
        let mut args = vec!["disk", d, "--runtime", "0.05s", "--min-free", "0"];
        args.extend_from_slice(extra);
        let out = limited(&args, libc::RLIMIT_AS, 400 << 20);
        let code = out.status.code();
        assert!(
            matches!(code, Some(1 | 2)),
            "{extra:?}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let err = one_line_stderr(&out);
        assert!(err.contains("ulimit -v"), "{extra:?}: {err}");
        assert!(
            scratch_files(dir.path()).is_empty(),
            "{extra:?}: {:?}",
            scratch_files(dir.path())
        );
    }
}

#[test]
fn a_limit_on_the_file_size_is_refused_up_front_instead_of_killing_the_process() {
    // SIGXFSZ at the space claim's ftruncate ended the process, leaving its files.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for extra in [&["--rw", "randread"][..], &["--preset", "fsync"]] {
        let mut args = vec!["disk", d, "--size", "4m", "--runtime", "0.05s"];
        args.extend_from_slice(extra);
        let out = limited(&args, libc::RLIMIT_FSIZE, 1 << 20);
        assert_eq!(out.status.code(), Some(2), "{:?}", out.status);
        let err = one_line_stderr(&out);
        assert!(err.contains("ulimit -f"), "{err}");
        assert!(scratch_files(dir.path()).is_empty());
    }
}

#[test]
fn too_few_descriptors_for_the_threads_rings_is_one_line_naming_the_limit() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let args = [
        "disk",
        d,
        "--size",
        "4m",
        "--runtime",
        "0.05s",
        "--rw",
        "randread",
        "--threads",
        "64",
        "--depth",
        "2",
    ];
    let out = limited(&args, libc::RLIMIT_NOFILE, 16);
    if out.status.success() {
        eprintln!(
            "skipped: the row ran without io_uring here (one descriptor per thread not needed)"
        );
    } else {
        assert_eq!(out.status.code(), Some(1), "{:?}", out.status);
        let err = one_line_stderr(&out);
        assert!(
            err.contains("ulimit -n") && err.contains("--threads"),
            "{err}"
        );
    }
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn a_file_truncated_during_the_run_ends_with_one_line_saying_so() {
    for refuse in ["", "uring,direct"] {
        let dir = tempfile::tempdir_in(".").unwrap();
        let path = dir.path().join("shrinks");
        std::fs::write(&path, common::pattern(16 << 20)).unwrap();
        let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
            .env("IOSCOPE_DISK_REFUSE", refuse)
            .arg("disk")
            .arg(&path)
            .args(["--runtime", "20s", "--rw", "randread", "--threads", "2"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(700));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(0)
            .unwrap();
        let out = finish(child);
        let err = one_line_stderr(&out);
        match out.status.code() {
            // Truncated before the run had looked at the file: too small for a block.
            Some(2) => assert!(err.contains("smaller than one block"), "{err}"),
            code => {
                assert_eq!(code, Some(1), "{refuse}: {err}");
                assert!(
                    err.contains("shorter than when the run began"),
                    "{refuse}: {err}"
                );
            }
        }
    }
}

#[test]
fn a_thread_that_fails_stops_its_siblings_instead_of_leaving_them_to_the_runtime() {
    // Cut to half: the second thread's region is gone, the first one's is whole. The first
    // thread ran on to the deadline before its sibling's error was said; with a runtime of
    // 300 s, `finish` (60 s) would give up on it.
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = dir.path().join("halves");
    std::fs::write(&path, common::pattern(16 << 20)).unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .arg("disk")
        .arg(&path)
        .args([
            "--runtime",
            "300s",
            "--rw",
            "read",
            "--bs",
            "1m",
            "--depth",
            "2",
        ])
        .args(["--threads", "2"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let out = finish(child);
    let err = one_line_stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("shorter than when the run began"), "{err}");
}

#[test]
fn an_unreadable_file_is_an_input_error_naming_the_file() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = common::file_with(dir.path(), "secret", &common::pattern(1 << 20));
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let args = [
        "disk",
        path.to_str().unwrap(),
        "--runtime",
        "0.02s",
        "--rw",
        "randread",
    ];
    let out = if is_root() {
        if !Path::new("/usr/bin/setpriv").exists() && !Path::new("/bin/setpriv").exists() {
            eprintln!("skipped: root reads any file, and setpriv is not here to drop it");
            return;
        }
        let cwd_ok = Command::new("setpriv")
            .args([
                "--reuid=nobody",
                "--regid=nogroup",
                "--clear-groups",
                "true",
            ])
            .current_dir(dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !cwd_ok {
            eprintln!("skipped: cannot run as nobody here");
            return;
        }
        Command::new("setpriv")
            .args(["--reuid=nobody", "--regid=nogroup", "--clear-groups"])
            .arg(assert_cmd::cargo::cargo_bin("ioscope"))
            .args(args)
            .output()
            .unwrap()
    } else {
        ioscope().args(args).output().unwrap()
    };
    if out.status.code() == Some(126) || String::from_utf8_lossy(&out.stderr).contains("execute") {
        eprintln!("skipped: nobody cannot run the test binary from here");
        return;
    }
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = one_line_stderr(&out);
    assert!(
        err.contains("secret") && err.contains("Permission denied"),
        "{err}"
    );
    assert!(!err.contains("os error"), "{err}");
}

/// Runs `args` (with `--json`), sends `sig` once something of the run is under way
/// (`after`), and a second time `again` later when given; checks exit 130, one JSON document
/// marked incomplete, and no scratch file left in `dir`.
fn interrupted(
    dir: &Path,
    args: &[&str],
    after: Duration,
    sig: libc::c_int,
    again: Option<Duration>,
) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let child = spawn(&all);
    let started = Instant::now();
    while scratch_files(dir).is_empty() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(after);
    signal(&child, sig);
    if let Some(again) = again {
        std::thread::sleep(again);
        signal(&child, sig);
    }
    let out = finish(child);
    assert_eq!(
        out.status.code(),
        Some(130),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["complete"], false, "{args:?}");
    assert!(
        scratch_files(dir).is_empty(),
        "{args:?}: {:?}",
        scratch_files(dir)
    );
    doc
}

#[test]
fn sigterm_sighup_and_sigint_in_a_row_the_curve_and_the_fsync_preset_end_130_with_a_document() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let row = [
        "disk",
        d,
        "--size",
        "8m",
        "--runtime",
        "10s",
        "--rw",
        "randread",
    ];
    let doc = interrupted(
        dir.path(),
        &row,
        Duration::from_millis(500),
        libc::SIGTERM,
        None,
    );
    assert_eq!(doc["schema"], "ioscope/disk/v2");
    // Each depth long enough that the signal lands mid-curve however fast the machine.
    let curve = [
        "disk",
        d,
        "--size",
        "8m",
        "--runtime",
        "5s",
        "--depth-curve",
    ];
    let doc = interrupted(
        dir.path(),
        &curve,
        Duration::from_millis(800),
        libc::SIGHUP,
        None,
    );
    assert_eq!(doc["schema"], "ioscope/disk-curve/v2");
    let fsync = [
        "disk",
        d,
        "--size",
        "8m",
        "--runtime",
        "10s",
        "--preset",
        "fsync",
    ];
    let doc = interrupted(
        dir.path(),
        &fsync,
        Duration::from_millis(300),
        libc::SIGINT,
        None,
    );
    assert_eq!(doc["schema"], "ioscope/disk-fsync/v2");
    // A second Ctrl-C well after the first (while the result is being put out, or after).
    interrupted(
        dir.path(),
        &row,
        Duration::from_millis(500),
        libc::SIGINT,
        Some(Duration::from_millis(1200)),
    );
}

#[test]
fn a_reader_that_closes_the_pipe_early_is_not_an_error_and_leaves_nothing() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let mut child = spawn(&[
        "disk",
        d,
        "--size",
        "4m",
        "--runtime",
        "0.05s",
        "--rw",
        "randread",
        "--json",
    ]);
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    std::io::Read::read_exact(&mut stdout, &mut first).unwrap();
    drop(stdout);
    let out = finish(child);
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn blocks_smaller_than_a_4k_device_needs_for_o_direct_are_refused_with_its_alignment() {
    // On a 4096-byte-sector device every 512-byte O_DIRECT I/O failed with "Invalid
    // argument (os error 22)", exit 1, nothing said about why.
    if !is_root() {
        eprintln!("skipped: making a loop device with 4096-byte sectors needs root");
        return;
    }
    let dir = tempfile::tempdir_in(".").unwrap();
    let image = dir.path().join("image");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Ok(out) = Command::new("losetup")
        .args(["--find", "--show", "--sector-size", "4096"])
        .arg(&image)
        .output()
    else {
        eprintln!("skipped: no losetup here");
        return;
    };
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || device.is_empty() {
        eprintln!("skipped: losetup could not make a 4096-byte-sector loop device");
        return;
    }
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ready = Command::new("mkfs.ext4")
        .args(["-q", "-b", "4096", &device])
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("mount")
            .arg(&device)
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
    let result = ready.then(|| {
        let m = mnt.to_str().unwrap();
        let args = [
            "disk",
            m,
            "--size",
            "8m",
            "--runtime",
            "0.02s",
            "--min-free",
            "0",
        ];
        let small = ioscope()
            .args(args)
            .args(["--rw", "randread", "--bs", "512"])
            .output()
            .unwrap();
        let whole = ioscope()
            .args(args)
            .args(["--rw", "randread", "--bs", "4k"])
            .output()
            .unwrap();
        (small, whole, scratch_files(&mnt))
    });
    let _ = Command::new("umount").arg(&mnt).status();
    let _ = Command::new("losetup").args(["-d", &device]).status();
    let Some((small, whole, left)) = result else {
        eprintln!("skipped: could not make or mount a file system on {device}");
        return;
    };
    assert_eq!(
        small.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&small.stderr)
    );
    let err = one_line_stderr(&small);
    assert!(
        err.contains("multiple of 4096") && err.contains("--bs"),
        "{err}"
    );
    assert!(
        whole.status.success(),
        "{}",
        String::from_utf8_lossy(&whole.stderr)
    );
    assert!(left.is_empty(), "{left:?}");
}

// Issue 35, principle 1: a file ioscope writes is opened once, by descriptor. Every swap
// below put something else at the file's name while `disk` ran; what was there before
// (the victim) must come out untouched, and the run either carries on with its own file or
// stops in one line saying the name was replaced.

/// Waits until `child` holds a descriptor on a file whose name in `dir` starts with `prefix`
/// (or names `path`): the run has opened its file. Its path.
fn opened(child: &std::process::Child, dir: &Path, prefix: &str) -> Option<std::path::PathBuf> {
    opened_times(child, dir, prefix, 1)
}

/// [`opened`], once `child` holds `times` descriptors on it (2: a row has it open too).
fn opened_times(
    child: &std::process::Child,
    dir: &Path,
    prefix: &str,
    times: usize,
) -> Option<std::path::PathBuf> {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(30) {
        let fds = std::fs::read_dir(format!("/proc/{}/fd", child.id())).ok()?;
        let found: Vec<std::path::PathBuf> = fds
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .filter(|to| {
                to.parent() == Some(dir)
                    && to
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            })
            .collect();
        if found.len() >= times {
            return found.into_iter().next();
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    None
}

/// A victim file of 8 MiB of a known pattern in `dir`.
fn victim(dir: &Path) -> (std::path::PathBuf, Vec<u8>) {
    let bytes = common::pattern(8 << 20);
    let path = dir.join("victim");
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

/// The run ended well (its own file measured) or in one line saying the name was replaced.
fn held(out: &std::process::Output, what: &str) {
    match out.status.code() {
        Some(0) => {}
        Some(1) => {
            let err = one_line_stderr(out);
            assert!(err.contains("replaced"), "{what}: {err}");
        }
        _ => panic!(
            "{what}: {:?} {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

#[test]
fn a_scratch_file_swapped_for_a_link_or_another_file_mid_run_never_writes_the_victim() {
    // F1: the rows reopened `.ioscope-disk-PID` by name and followed a link put there: the
    // write rows overwrote the victim. Swapped at once (during the fill), and later.
    for (kind, wait_ms) in [
        ("symlink", 0u64),
        ("symlink", 400),
        ("rename", 0),
        ("rename", 400),
        ("hardlink", 200),
    ] {
        let dir = tempfile::tempdir_in(".").unwrap();
        let d = std::fs::canonicalize(dir.path()).unwrap();
        let (victim_path, bytes) = victim(&d);
        let child = spawn(&[
            "disk",
            d.to_str().unwrap(),
            "--size",
            "8m",
            "--runtime",
            "0.15s",
            "--min-free",
            "0",
        ]);
        let scratch = opened(&child, &d, ".ioscope-disk-").expect("the scratch file appears");
        std::thread::sleep(Duration::from_millis(wait_ms));
        let moved = d.join("moved");
        std::fs::rename(&scratch, &moved).unwrap();
        match kind {
            "symlink" => std::os::unix::fs::symlink(&victim_path, &scratch).unwrap(),
            "hardlink" => std::fs::hard_link(&victim_path, &scratch).unwrap(),
            _ => std::fs::copy(&victim_path, &scratch).map(|_| ()).unwrap(),
        }
        let out = finish(child);
        let what = format!("{kind} after {wait_ms} ms");
        held(&out, &what);
        assert!(
            std::fs::read(&victim_path).unwrap() == bytes,
            "{what}: the victim was written"
        );
        if kind != "symlink" {
            assert!(
                std::fs::read(&scratch).unwrap() == bytes,
                "{what}: the file put at the name was written"
            );
        }
        assert_eq!(
            std::fs::metadata(&moved).unwrap().len(),
            0,
            "{what}: the moved scratch file's blocks are given back"
        );
    }
}

#[test]
fn a_file_of_yours_replaced_by_rename_during_force_write_leaves_the_new_one_untouched() {
    // F1 with the user's FILE: another file renamed over it between two rows.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let f = d.join("mine");
    std::fs::write(&f, common::pattern(8 << 20)).unwrap();
    let (victim_path, bytes) = victim(&d);
    let child = spawn(&[
        "disk",
        f.to_str().unwrap(),
        "--force-write",
        "--runtime",
        "0.15s",
    ]);
    opened(&child, &d, "mine").expect("the file is opened");
    std::thread::sleep(Duration::from_millis(200));
    std::fs::rename(&victim_path, &f).unwrap();
    let out = finish(child);
    held(&out, "rename");
    assert!(
        std::fs::read(&f).unwrap() == bytes,
        "the new file was written"
    );
}

#[test]
fn force_write_through_a_link_is_refused_up_front_and_the_target_is_untouched() {
    // F1: `disk LINK --force-write` wrote the link's target.
    let dir = tempfile::tempdir_in(".").unwrap();
    let (victim_path, bytes) = victim(dir.path());
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&victim_path, &link).unwrap();
    let out = ioscope()
        .args([
            "disk",
            link.to_str().unwrap(),
            "--force-write",
            "--runtime",
            "0.02s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = one_line_stderr(&out);
    assert!(err.contains("symbolic link"), "{err}");
    assert!(std::fs::read(&victim_path).unwrap() == bytes);
    // Read only, a link is followed as before: nothing is written.
    let out = ioscope()
        .args([
            "disk",
            link.to_str().unwrap(),
            "--rw",
            "read",
            "--runtime",
            "0.02s",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn a_file_swapped_for_a_link_to_a_block_device_is_never_written() {
    // F1: the block-device refusal must hold after a swap (no --allow-device).
    if !is_root() {
        eprintln!("skipped: needs root for a loop device");
        return;
    }
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let backing = d.join("backing");
    std::fs::write(&backing, common::pattern(8 << 20)).unwrap();
    let Ok(lo) = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&backing)
        .output()
    else {
        eprintln!("skipped: no losetup");
        return;
    };
    let dev = String::from_utf8_lossy(&lo.stdout).trim().to_string();
    if !lo.status.success() || dev.is_empty() {
        eprintln!("skipped: no loop device here");
        return;
    }
    let f = d.join("mine");
    std::fs::write(&f, common::pattern(8 << 20)).unwrap();
    let child = spawn(&[
        "disk",
        f.to_str().unwrap(),
        "--force-write",
        "--runtime",
        "0.15s",
    ]);
    opened(&child, &d, "mine");
    std::thread::sleep(Duration::from_millis(200));
    std::fs::remove_file(&f).unwrap();
    std::os::unix::fs::symlink(&dev, &f).unwrap();
    let out = finish(child);
    let mut head = vec![0u8; 8 << 20];
    let read = std::fs::File::open(&dev).and_then(|file| {
        use std::os::unix::fs::FileExt;
        file.read_exact_at(&mut head, 0)
    });
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    read.unwrap();
    held(&out, "link to a loop device");
    assert!(head == common::pattern(8 << 20), "the device was written");
}

#[test]
fn the_extents_caveat_is_of_the_file_measured_not_of_one_renamed_over_it() {
    // F11: the caveat was looked up by name after the run: a sparse file renamed over the
    // measured one gave its holes to the verdict.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let f = d.join("mine");
    std::fs::write(&f, common::pattern(8 << 20)).unwrap();
    let sparse = d.join("sparse");
    std::fs::File::create(&sparse)
        .unwrap()
        .set_len(8 << 20)
        .unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args([
            "disk",
            f.to_str().unwrap(),
            "--rw",
            "read",
            "--runtime",
            "1s",
            "--repeat",
            "1",
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Once the row has it open too: the run's last (only) row, run once (a second run
    // would open the file again and stop, the name replaced).
    opened_times(&child, &d, "mine", 2).expect("the row opens the file");
    std::fs::rename(&sparse, &f).unwrap();
    let out = finish(child);
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let extents = doc["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "extents")
        .expect("an extents caveat");
    assert_eq!(extents["evidence"]["hole_bytes"], 0, "{extents}");
}

#[test]
fn read_rows_over_holes_are_said_before_the_write_rows_fill_them() {
    // F10: the extents check ran after the write rows had filled the holes: "nothing
    // found", while the read rows had measured holes at 16 GB/s.
    let dir = tempfile::tempdir_in(".").unwrap();
    let f = dir.path().join("sparse");
    std::fs::File::create(&f).unwrap().set_len(8 << 20).unwrap();
    let out = ioscope()
        .args([
            "disk",
            f.to_str().unwrap(),
            "--force-write",
            "--runtime",
            "0.02s",
            "--min-free",
            "0",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let holes = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "holes")
        .unwrap_or_else(|| panic!("a holes warning: {}", doc["warnings"]));
    assert_eq!(holes["bytes"], 8 << 20);
    assert!(
        holes["rows"][0].as_str().unwrap().ends_with("read"),
        "{holes}"
    );
    let extents = doc["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "extents")
        .unwrap();
    assert_ne!(extents["verdict"], "ok", "{extents}");
}

#[test]
fn a_sparse_file_whose_holes_would_not_fit_is_refused_before_any_write() {
    // F3 (principle 4): `disk SPARSE --force-write` filled a small file system: the margin
    // ignored the holes the writes fill. A file preallocated whole needs nothing more.
    let dir = tempfile::tempdir_in(".").unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let script = "d=$1; b=$2; truncate -s 48m $d/sparse && fallocate -l 8m $d/whole && \
                  $b disk $d/sparse --force-write --rw write --runtime 0.02s --min-free 1m; \
                  echo rc=$?; du -k $d/sparse; \
                  $b disk $d/whole --force-write --rw write --runtime 0.02s --min-free 1m >/dev/null; \
                  echo whole=$?";
    let Some(mut cmd) = common::in_small_tmpfs("16m", dir.path(), Path::new("/bin/sh")) else {
        return;
    };
    let out = cmd
        .args(["-c", script, "sh"])
        .arg(dir.path())
        .arg(&bin)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    if text.contains("whole=") && !text.contains("rc=") {
        panic!("{text} {err}");
    }
    assert!(text.contains("rc=2"), "{text} {err}");
    assert!(
        err.contains("not enough free space") && err.contains("holes"),
        "{err}"
    );
    assert!(
        text.contains("\n0\t") || text.contains("0\t"),
        "nothing written: {text}"
    );
    assert!(text.contains("whole=0"), "{text} {err}");
}

#[test]
fn a_file_truncated_under_a_write_row_is_said_not_grown_back_silently() {
    // F12: a read row says a short I/O; a write row grew the file back and said nothing.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = std::fs::canonicalize(dir.path()).unwrap();
    let f = d.join("mine");
    std::fs::write(&f, common::pattern(32 << 20)).unwrap();
    let child = spawn(&[
        "disk",
        f.to_str().unwrap(),
        "--force-write",
        "--rw",
        "write",
        "--runtime",
        "1s",
        "--min-free",
        "0",
    ]);
    opened(&child, &d, "mine").expect("the file is opened");
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        if let Ok(file) = std::fs::OpenOptions::new().write(true).open(&f) {
            let _ = file.set_len(0);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = finish(child);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = one_line_stderr(&out);
    assert!(
        err.contains("truncated") && err.contains("write row"),
        "{err}"
    );
}

#[test]
fn more_threads_than_cores_is_noted_and_the_queue_is_not_blamed_on_the_app() {
    // F19: `--threads 1000` on 2 cores ran with no note.
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = (cores * 4).min(1024).to_string();
    let dir = tempfile::tempdir_in(".").unwrap();
    let out = ioscope()
        .args([
            "disk",
            dir.path().to_str().unwrap(),
            "--size",
            "4m",
            "--rw",
            "randread",
            "--depth",
            "2",
            "--threads",
            &threads,
            "--runtime",
            "0.05s",
            "--min-free",
            "0",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("take turns on the cores"), "{text}");
    assert!(
        !text.contains("it refilled its queue slower"),
        "the app is not blamed: {text}"
    );
}

#[test]
fn a_limit_on_the_address_space_refused_is_refused_at_every_smaller_limit() {
    // F20: refused at 150000 KiB, accepted at 120000: whether glibc could reserve an arena
    // for an earlier thread depended on the limit, and it was counted as used.
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let args = [
        "disk",
        d,
        "--size",
        "8m",
        "--runtime",
        "0.01s",
        "--min-free",
        "0",
    ];
    let mut refused_at: Option<u64> = None;
    for kib in (60_000..=260_000).rev().step_by(10_000) {
        let out = limited(&args, libc::RLIMIT_AS, kib << 10);
        let ok = out.status.success();
        if !ok {
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("ulimit -v"),
                "{kib} KiB: {out:?}"
            );
        }
        if let Some(at) = refused_at {
            assert!(!ok, "refused at {at} KiB, accepted at {kib} KiB");
        } else if !ok {
            refused_at = Some(kib);
        }
        assert!(scratch_files(dir.path()).is_empty());
    }
}

#[test]
fn a_kept_file_is_named_as_kept_and_force_write_is_not_read_as_it_is() {
    // F27: `--keep` still said "scratch"; `--force-write` still "your file, read as it is".
    let dir = tempfile::tempdir_in(".").unwrap();
    let out = ioscope()
        .args([
            "disk",
            dir.path().to_str().unwrap(),
            "--size",
            "4m",
            "--rw",
            "read",
            "--runtime",
            "0.02s",
            "--min-free",
            "0",
            "--keep",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let kept = scratch_files(dir.path());
    assert_eq!(kept.len(), 1, "{kept:?}");
    let first = text.lines().next().unwrap();
    assert!(
        first.contains("kept (--keep)") && first.contains(&kept[0]),
        "{first}"
    );
    let f = dir.path().join(&kept[0]);
    let out = ioscope()
        .args([
            "disk",
            f.to_str().unwrap(),
            "--rw",
            "write",
            "--force-write",
            "--runtime",
            "0.02s",
            "--min-free",
            "0",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("read as it is"), "{text}");
    assert!(text.contains("overwritten"), "{text}");
}

#[test]
fn the_depth_curve_and_the_open_loop_say_their_kept_file_is_kept() {
    // A helper's review: both kept the file under --keep and still called it scratch.
    for (mode, at) in [
        (&["--rw", "randread", "--depths", "1,2"][..], "curve"),
        (&["--rw", "randread", "--rate", "2k"][..], "rates"),
    ] {
        let dir = tempfile::tempdir_in(".").unwrap();
        let run = |json: bool| {
            ioscope()
                .args(["disk", dir.path().to_str().unwrap(), "--size", "4m"])
                .args(mode)
                .args(["--runtime", "0.1s", "--repeat", "1", "--min-free", "0"])
                .arg("--keep")
                .args(if json { &["--json"][..] } else { &[] })
                .output()
                .unwrap()
        };
        let out = run(false);
        assert!(out.status.success(), "{at}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        let kept = scratch_files(dir.path());
        assert_eq!(kept.len(), 1, "{at}: {kept:?}");
        let first = text.lines().next().unwrap();
        assert!(
            first.contains("kept (--keep)") && first.contains(&kept[0]),
            "{at}: {first}"
        );
        std::fs::remove_file(dir.path().join(&kept[0])).unwrap();
        let out = run(true);
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(doc["kept"], true, "{at}: {doc}");
    }
}

#[test]
fn signals_during_repeated_rows_end_130_with_whole_rows_only_and_no_scratch() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    // A row interrupted among its runs is left out, never shown with fewer runs.
    let whole = |doc: &Value, fewest: usize, most: usize| {
        for row in doc["rows"].as_array().unwrap() {
            let n = row["runs"].as_array().map_or(0, Vec::len);
            assert!((fewest..=most).contains(&n), "{row}");
        }
    };
    // A fixed count of three runs a row, the first signal in the rows' runs, a second
    // Ctrl-C well after it (while the result is put out, or after): one request each.
    let fixed = [
        "disk",
        d,
        "--size",
        "8m",
        "--runtime",
        "1s",
        "--rw",
        "randread",
        "--repeat",
        "3",
    ];
    let doc = interrupted(
        dir.path(),
        &fixed,
        Duration::from_millis(1500),
        libc::SIGINT,
        Some(Duration::from_millis(1200)),
    );
    whole(&doc, 3, 3);
    // Until stable: SIGTERM to the process twice at once, as `timeout` and a shell may.
    let stable = [
        "disk",
        d,
        "--size",
        "8m",
        "--runtime",
        "1s",
        "--rw",
        "randread",
        "--max-runs",
        "5",
    ];
    let doc = interrupted(
        dir.path(),
        &stable,
        Duration::from_millis(1500),
        libc::SIGTERM,
        Some(Duration::from_millis(5)),
    );
    whole(&doc, 3, 5);
}
