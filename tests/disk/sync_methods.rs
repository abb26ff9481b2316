//! `ioscope disk --preset sync-methods`: every method appears, run or skipped with its
//! reason; those that ran did work; flushes are not counted where no block device is behind
//! the directory (tmpfs, detected, never assumed); about one flush per fdatasync on a loop
//! device with a write-back cache (root only); Ctrl-C ends it 130 with a partial document and
//! no scratch file left; one-line errors for bad values. Runtimes are tiny; tests never
//! assert timings.

use crate::common;
use crate::common::{ioscope, is_root, scratch_files, usage_error};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// The methods as the JSON names them, in the order they run.
const METHODS: [&str; 7] = [
    "fdatasync",
    "fsync",
    "o_dsync",
    "o_sync",
    "o_direct_dsync",
    "pwritev2_dsync",
    "uring_fdatasync",
];

/// Whether `path` is on tmpfs.
fn on_tmpfs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: statfs writes into the zeroed struct we pass; the path is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let ok = unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0;
    ok && st.f_type as i64 == 0x0102_1994
}

/// The preset's JSON on `dir` for `runtime` per row, the run's exit code beside it.
fn sync_methods(dir: &Path, runtime: &str, extra: &[&str]) -> (Value, Option<i32>) {
    let out = ioscope()
        .args(["disk", dir.to_str().unwrap(), "--preset", "sync-methods"])
        .args([
            "--size",
            "1m",
            "--runtime",
            runtime,
            "--min-free",
            "0",
            "--json",
        ])
        .args(extra)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    (doc, out.status.code())
}

/// Checks what holds on any file system: every method at 1 and 2 writes per sync, run or
/// skipped with a reason, the scratch files gone.
fn check_rows(dir: &Path, doc: &Value) {
    assert_eq!(doc["schema"], "ioscope/disk-sync-methods/v2");
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 14, "{doc}");
    for (i, r) in rows.iter().enumerate() {
        assert_eq!(r["method"], METHODS[i % 7], "{r}");
        assert_eq!(r["writes_per_op"], if i < 7 { 1 } else { 2 }, "{r}");
        assert_eq!(r["block_bytes"], 8192);
        match r["skipped"].as_str() {
            Some(reason) => {
                assert!(!reason.is_empty(), "{r}");
                // Only what a kernel or file system may refuse is skipped.
                assert!(
                    ["o_direct_dsync", "pwritev2_dsync", "uring_fdatasync"]
                        .contains(&r["method"].as_str().unwrap()),
                    "{r}"
                );
                eprintln!("{} skipped here: {reason}", r["method"]);
            }
            None => {
                assert!(r["ops"].as_u64().unwrap() > 0, "{r}");
                assert!(r["ops_per_second"].as_f64().unwrap() > 0.0, "{r}");
                let l = &r["latency_us"];
                let (p50, p99, p99_9) = (
                    l["p50"].as_f64().unwrap(),
                    l["p99"].as_f64().unwrap(),
                    l["p99_9"].as_f64().unwrap(),
                );
                assert!(p50 > 0.0 && p50 <= p99 && p99 <= p99_9, "{r}");
                // The CPU over the timed loop: counted from 10 ms of loop on, and no more
                // than every core of the machine for the row's time (a sum over a window it
                // did not cover would be).
                let seconds = r["seconds"].as_f64().unwrap();
                let cpu = &r["cpu"];
                if seconds < 0.01 {
                    assert!(cpu.is_null(), "too short to count: {r}");
                    continue;
                }
                let (user, system) = (
                    cpu["user_seconds"].as_f64().unwrap(),
                    cpu["system_seconds"].as_f64().unwrap(),
                );
                let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
                assert!(user >= 0.0 && system >= 0.0, "{r}");
                // The process's figure is up to date to the microsecond: a few of slack for
                // the readings themselves.
                assert!(user + system <= seconds * cores + 1e-4, "{r}");
            }
        }
    }
    assert!(scratch_files(dir).is_empty(), "the scratch files are gone");
}

#[test]
fn every_method_runs_or_says_why_not_and_the_json_parses() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let (doc, code) = sync_methods(dir.path(), "0.02s", &[]);
    check_rows(dir.path(), &doc);
    // The exit code follows the flush check: 1 only where fdatasync's flush went missing.
    let missing = doc["flush_check"]["kind"] == "missing";
    assert_eq!(code, Some(if missing { 1 } else { 0 }), "{doc}");
    if on_tmpfs(dir.path()) {
        assert_eq!(doc["flushes_not_counted"], "no_device", "{doc}");
    }
    if doc["flushes_not_counted"].is_string() {
        for r in doc["rows"].as_array().unwrap() {
            assert!(r["flushes"].is_null(), "not counted is not zero: {r}");
        }
    }
    let text = common::report_text(&doc);
    let last = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap();
    assert!(last.starts_with("verdict   "), "{text}");
    for name in ["fdatasync", "O_DSYNC", "O_DIRECT|O_DSYNC", "RWF_DSYNC"] {
        assert!(text.contains(&format!("│ {name} ")), "{name}: {text}");
    }
}

#[test]
fn on_tmpfs_flushes_are_not_counted_not_zero() {
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() || !on_tmpfs(shm) {
        eprintln!("skipped: no tmpfs at /dev/shm");
        return;
    }
    let Ok(dir) = tempfile::tempdir_in(shm) else {
        eprintln!("skipped: /dev/shm is not writable here");
        return;
    };
    let (doc, code) = sync_methods(dir.path(), "0.02s", &[]);
    check_rows(dir.path(), &doc);
    assert_eq!(code, Some(0));
    assert!(doc["device_name"].is_null(), "{doc}");
    assert_eq!(doc["flushes_not_counted"], "no_device");
    assert_eq!(doc["flush_check"]["kind"], "not_counted");
    for r in doc["rows"].as_array().unwrap() {
        assert!(r["flushes"].is_null(), "{r}");
    }
    let text = common::report_text(&doc);
    assert!(
        text.contains("flushes   flushes not counted: no block device"),
        "{text}"
    );
    assert!(text.contains("on no disk"), "{text}");
}

#[test]
fn bs_gives_the_block_sizes_one_table_each() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let (doc, _) = sync_methods(dir.path(), "0.005s", &["--bs", "4k,16k"]);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 28, "{doc}");
    assert!(rows[..14].iter().all(|r| r["block_bytes"] == 4096));
    assert!(rows[14..].iter().all(|r| r["block_bytes"] == 16384));
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn a_loop_device_sees_about_one_flush_per_fdatasync() {
    if !is_root() {
        eprintln!("skipped: making and mounting a loop device needs root");
        return;
    }
    let dir = tempfile::tempdir_in(".").unwrap();
    let image = dir.path().join("image");
    std::fs::File::create(&image)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let Ok(out) = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&image)
        .output()
    else {
        eprintln!("skipped: no losetup here");
        return;
    };
    let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !out.status.success() || device.is_empty() {
        eprintln!("skipped: losetup could not make a loop device");
        return;
    }
    let mnt = dir.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let ready = Command::new("mkfs.ext4")
        .args(["-q", &device])
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("mount")
            .arg(&device)
            .arg(&mnt)
            .status()
            .is_ok_and(|s| s.success());
    // Unmounted and detached even when the run panics.
    struct Detach<'a>(&'a Path, &'a str);
    impl Drop for Detach<'_> {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(self.0).status();
            let _ = Command::new("losetup").args(["-d", self.1]).status();
        }
    }
    let detach = Detach(&mnt, &device);
    let result = ready.then(|| (sync_methods(&mnt, "0.05s", &[]), scratch_files(&mnt)));
    drop(detach);
    let Some(((doc, _), left)) = result else {
        eprintln!("skipped: could not make or mount a file system on {device}");
        return;
    };
    assert!(left.is_empty(), "{left:?}");
    let name = device.trim_start_matches("/dev/");
    assert_eq!(doc["device_name"], name, "{doc}");
    if doc["flushes_not_counted"] == "old_kernel" {
        eprintln!("skipped: this kernel's /proc/diskstats counts no flushes (before 5.5)");
        return;
    }
    let fdatasync = &doc["rows"][0];
    assert_eq!(fdatasync["method"], "fdatasync");
    let per_op = fdatasync["flushes"].as_f64().unwrap() / fdatasync["ops"].as_f64().unwrap();
    match doc["write_cache"].as_str() {
        Some("write back") => {
            // About one: the journal may add a commit's flush now and then, and the counts
            // are everybody's.
            assert!((0.9..=1.5).contains(&per_op), "{per_op}: {doc}");
            assert_eq!(doc["flush_check"]["kind"], "about_one", "{doc}");
        }
        other => eprintln!(
            "skipped the flush count: {device}'s cache is {other:?}, not write back: no flush is sent"
        ),
    }
}

#[test]
fn a_size_of_one_write_rewrites_it_every_op_as_pg_test_fsync_does() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let run = |json: bool| {
        ioscope()
            .args([
                "disk",
                dir.path().to_str().unwrap(),
                "--preset",
                "sync-methods",
            ])
            .args(["--size", "8k", "--runtime", "0.02s", "--min-free", "0"])
            .args(if json { &["--json"][..] } else { &[] })
            .output()
            .unwrap()
    };
    let out = run(true);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{doc}");
    assert_eq!(doc["region_bytes"], 8192, "{doc}");
    check_rows(dir.path(), &doc);
    // Each row's file was checked after its eviction: gone from the page cache, except on
    // tmpfs, whose pages are the file.
    let evicted: Vec<bool> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["skipped"].is_null())
        .map(|r| {
            r["evicted"]
                .as_bool()
                .expect("checked on every row that ran")
        })
        .collect();
    if on_tmpfs(dir.path()) {
        assert!(evicted.iter().all(|&e| !e), "{doc}");
    } else {
        assert!(evicted.iter().all(|&e| e), "{doc}");
    }
    let how = if on_tmpfs(dir.path()) {
        "then left in the page cache: the file system keeps it there"
    } else {
        "then dropped from the page cache"
    };
    let out = run(false);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("in a fresh 8 KiB file each (one op's writes where they need more: 16 KiB for 8 KiB at 2 writes per sync; written and synced first, {how}; the same block(s) at its start rewritten every op")),
        "{text}"
    );
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn keep_leaves_each_rows_file_under_its_own_name() {
    // The 1- and 2-write rows of a method once shared a name, and the second refused to
    // overwrite the first's kept file.
    let dir = tempfile::tempdir_in(".").unwrap();
    let (doc, code) = sync_methods(dir.path(), "0.01s", &["--keep"]);
    assert_eq!(doc["complete"], true, "{doc}");
    assert_ne!(code, Some(2), "{doc}");
    let ran = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["skipped"].is_null())
        .count();
    let mut kept = scratch_files(dir.path());
    kept.sort();
    kept.dedup();
    assert_eq!(kept.len(), ran, "{kept:?}");
    for name in ["fdatasync-1x8192", "fdatasync-2x8192"] {
        assert!(kept.iter().any(|k| k.contains(name)), "{name}: {kept:?}");
    }
}

#[test]
fn bad_values_of_the_sync_methods_preset_are_one_line_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let file = common::file_with(dir.path(), "mine", &common::pattern(1 << 20));
    let f = file.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&[f, "--preset", "sync-methods"], "give a directory"),
        (
            &[d, "--preset", "sync-methods", "--repeat", "3"],
            "runs each row once",
        ),
        (
            &[d, "--preset", "sync-methods", "--depth", "4"],
            "writes one at a time",
        ),
        (&[d, "--preset", "sync-methods", "--bs", "8x"], "--bs"),
        (
            &[d, "--preset", "sync-methods", "--size", "4k"],
            "smaller than one write of 8 KiB",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["disk"];
        all.extend_from_slice(args);
        let err = usage_error(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn ctrl_c_mid_row_ends_130_with_a_partial_document_and_no_scratch_file() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args([
            "disk",
            dir.path().to_str().unwrap(),
            "--preset",
            "sync-methods",
        ])
        .args([
            "--size",
            "1m",
            "--runtime",
            "10s",
            "--min-free",
            "0",
            "--json",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while scratch_files(dir.path()).is_empty() && started.elapsed().as_secs() < 20 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill only sends a signal to the child we spawned.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "ioscope/disk-sync-methods/v2");
    assert_eq!(doc["complete"], false);
    assert!(!doc["rows"].as_array().unwrap().is_empty(), "{doc}");
    assert!(
        scratch_files(dir.path()).is_empty(),
        "{:?}",
        scratch_files(dir.path())
    );
}
