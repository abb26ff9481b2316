//! The rules every command shares: any engine from the table through `--engine`, with the
//! same checksum; engines that cannot do the work refused before measuring; and one exit
//! policy (1 when a check fails, results still printed).

use crate::common::*;

#[test]
fn run_reads_with_any_engine_and_gets_the_same_checksum() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let data = pattern((2 << 20) + 5);
    let path = file_with(dir.path(), "f", &data);
    let p = path.to_str().unwrap();
    for engine in ["stream", "pread", "mmap", "direct", "hybrid", "uring"] {
        let out = ioscope()
            .args([
                "run",
                p,
                "-r",
                "64k",
                "--engine",
                engine,
                "--threads",
                "2",
                "--json",
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(2) && engine != "stream" && engine != "pread" {
            eprintln!("skipped: {engine} cannot run here: {stderr}");
            continue;
        }
        assert!(out.status.success(), "{engine}: {stderr}");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["engine"], engine);
        assert_eq!(v["xor_hex"], reference_xor(&data), "{engine}");
        assert_eq!(v["bytes"], data.len() as u64);
    }
}

#[test]
fn run_writes_with_pread_the_same_bytes_as_with_stream() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    for (path, engine) in [(&a, "stream"), (&b, "pread")] {
        let out = ioscope()
            .args([
                "run",
                path.to_str().unwrap(),
                "-w",
                "64k",
                "20",
                "--seed",
                "3",
            ])
            .args(["--engine", engine, "--threads", "3"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
}

#[test]
fn an_engine_that_cannot_do_the_work_is_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("new");
    let out = ioscope()
        .args([
            "run",
            target.to_str().unwrap(),
            "-w",
            "1m",
            "4",
            "--engine",
            "mmap",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("mmap engine cannot write"), "{text}");
    assert!(text.contains("pread"), "lists the engines that can: {text}");
    assert!(!target.exists(), "nothing was created");

    let src = file_with(dir.path(), "f", &pattern(1 << 20));
    let out = ioscope()
        .args([
            "sweep",
            src.to_str().unwrap(),
            "--engine",
            "direct",
            "--block-sizes",
            "1,4k",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("multiple of 4096"));

    let out = ioscope()
        .args(["cache", src.to_str().unwrap(), "--engine", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("unknown engine 'nosuch'"));
}

#[test]
fn the_null_engine_runs_every_measuring_command_without_moving_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "f", &pattern(1 << 20));
    let p = src.to_str().unwrap();
    let v = json_of(&["run", p, "-r", "4k", "--engine", "null"]);
    assert_eq!(v["moves_bytes"], false);
    assert_eq!(v["bytes"], 1 << 20);
    assert_eq!(
        v["checks"].as_array().unwrap().len(),
        0,
        "nothing the kernel counts"
    );
    let v = json_of(&[
        "sweep",
        p,
        "--engine",
        "null",
        "--block-sizes",
        "4k,1m",
        "--repeat",
        "2",
    ]);
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "not_counted")
    );
}

#[test]
fn a_cold_run_that_cannot_be_cold_exits_1_and_still_prints_its_result() {
    // tmpfs keeps every page in memory: eviction cannot work there, and the proof must say so.
    let shm = std::path::Path::new("/dev/shm");
    let Ok(dir) = tempfile::tempdir_in(shm) else {
        eprintln!("skipped: no writable /dev/shm (tmpfs) here");
        return;
    };
    let src = file_with(dir.path(), "f", &pattern(1 << 20));
    let out = ioscope()
        .args([
            "sweep",
            src.to_str().unwrap(),
            "--cache",
            "cold",
            "--block-sizes",
            "64k",
        ])
        .args(["--repeat", "1", "--warmup", "0"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.success() {
        eprintln!("skipped: /dev/shm dropped its pages here (not tmpfs?): {stdout}");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stdout.contains("64k"), "the result is printed: {stdout}");
    assert!(stderr.contains("asked to start cold"), "{stderr}");
}

#[test]
fn an_empty_file_has_xor_zero_through_every_engine() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let path = file_with(dir.path(), "empty", b"");
    for engine in ["stream", "pread", "mmap", "direct", "hybrid", "uring"] {
        let out = ioscope()
            .args([
                "run",
                path.to_str().unwrap(),
                "-r",
                "4k",
                "--engine",
                engine,
                "--json",
            ])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{engine}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["xor_hex"], "00000000", "{engine}");
        assert_eq!(v["bytes"], 0, "{engine}");
    }
}

#[test]
fn the_residency_of_a_half_read_stdin_covers_only_what_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(2 << 20);
    let path = file_with(dir.path(), "f", &data);
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let script = format!(
        "{{ dd bs=1M count=1 of=/dev/null status=none; '{}' run - -r 64k --json; }} < '{}'",
        bin.display(),
        path.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["xor_hex"], reference_xor(&data[1 << 20..]));
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    assert_eq!(
        v["cache"]["residency_before"]["total_pages"],
        (1 << 20) / page,
        "{}",
        v["cache"]
    );
}
