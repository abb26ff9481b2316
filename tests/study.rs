//! `ioscope study`: the whole run on a directory, verified, and tidy afterwards.

mod common;
use common::*;

#[test]
fn a_study_verifies_every_read_and_leaves_the_directory_as_it_found_it() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&[
        "study",
        dir.path().to_str().unwrap(),
        "--size",
        "3m",
        "--block-sizes",
        "1k,7,64k,1m",
    ]);
    assert_eq!(v["schema"], "ioscope/study/v2");
    assert_eq!(v["verified"], true);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "one write and four reads");
    assert_eq!(rows[0]["op"], "write");
    assert_eq!(rows[0]["bytes"], 3 << 20);
    let sizes: Vec<u64> = rows[1..]
        .iter()
        .map(|r| r["block_size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [7, 1024, 65536, 1 << 20], "ascending");
    for row in &rows[1..] {
        assert_eq!(row["verified"], true);
        assert!(row["bytes_per_second"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch file removed"
    );
}

#[test]
fn the_default_directory_is_created_and_removed_again() {
    let cwd = tempfile::tempdir().unwrap();
    let out = ioscope()
        .current_dir(cwd.path())
        .args(["study", "--size", "2m"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("MiB/s") && text.contains("every read returned exactly the bytes written"),
        "{text}"
    );
    assert!(!cwd.path().join("ioscope-study").exists());
}

#[test]
fn keep_leaves_the_scratch_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let v = json_of(&[
        "study",
        dir.path().to_str().unwrap(),
        "--size",
        "1m",
        "--block-sizes",
        "64k",
        "--keep",
    ]);
    let kept = v["kept_file"].as_str().unwrap();
    assert_eq!(std::fs::metadata(kept).unwrap().len(), 1 << 20);
}

#[test]
fn a_missing_directory_or_a_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_with(dir.path(), "f", b"x");
    for target in ["/nonexistent/dir", file.to_str().unwrap()] {
        let out = ioscope()
            .args(["study", target, "--size", "1m"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(one_line_stderr(&out).contains(target));
    }
}

#[test]
fn a_study_that_does_not_fit_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let out = ioscope()
        .args([
            "study",
            dir.path().to_str().unwrap(),
            "--min-free",
            "1000000t",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("free"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn interrupting_a_study_removes_its_scratch_file() {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let child = std::process::Command::new(bin)
        .args([
            "study",
            dir.path().to_str().unwrap(),
            "--size",
            "1g",
            "--min-free",
            "1m",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let has_data = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .any(|e| e.metadata().map(|m| m.len() > 0).unwrap_or(false))
    };
    while !has_data() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the study never started writing"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "scratch file removed"
    );
}

#[test]
fn bad_sizes_for_a_study_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["study", d, "--size", "0"], "greater than zero"),
        (vec!["study", d, "--size", "lots"], "invalid size 'lots'"),
        (
            vec!["study", d, "--block-sizes", "4k,0"],
            "greater than zero",
        ),
        (vec!["study", d, "--min-free", "x"], "--min-free"),
    ] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(one_line_stderr(&out).contains(needle), "{args:?}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}
