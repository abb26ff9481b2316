//! `--series`: runs over time as JSON Lines and an SVG, on `run -w`, `run -r` and `disk`;
//! the files' refusals (existing without --force, symbolic links), and a real buffered
//! write whose series is checked only for its shape (never for its timings).

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// The JSON Lines of `path`, each line one object.
fn lines_of(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).expect("series file written");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("each line is one JSON object"))
        .collect()
}

fn assert_shape(lines: &[Value]) {
    assert!(!lines.is_empty());
    let mut last = -1.0f64;
    for l in lines {
        let start = l["start_seconds"].as_f64().expect("start_seconds");
        assert!(start > last, "time increases: {start} after {last}");
        last = start;
        for key in [
            "index",
            "seconds",
            "bytes",
            "bytes_total",
            "ios",
            "bytes_per_second",
            "mib_per_second",
            "iops",
            "p99_ns",
            "max_ns",
            "dirty_bytes",
            "writeback_bytes",
        ] {
            assert!(l.get(key).is_some(), "{key} in {l}");
        }
    }
}

#[test]
fn a_buffered_write_of_a_few_hundred_mib_leaves_a_valid_series_with_increasing_time() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w");
    let series = dir.path().join("w.jsonl");
    let doc = json_of(&[
        "run",
        file.to_str().unwrap(),
        "-w",
        "1m",
        "300",
        "--series",
        series.to_str().unwrap(),
        "--series-interval",
        "100ms",
        "--min-free",
        "0",
    ]);
    let lines = lines_of(&series);
    assert_shape(&lines);
    let ios: u64 = lines.iter().map(|l| l["ios"].as_u64().unwrap()).sum();
    assert_eq!(
        ios,
        doc["calls"].as_u64().unwrap(),
        "every write() is in one interval"
    );
    let last = lines.last().unwrap();
    assert_eq!(last["bytes_total"], 300u64 << 20);
    let over = &doc["over_time"];
    assert!(over["steady"]["verdict"].is_string(), "{over}");
    assert_eq!(over["checks"][0]["name"], "write_back_cliff");
    assert!(over["checks"][0]["verdict"].is_string());
    assert!(over["checks"][0]["evidence"].is_string());
    assert!(over["dirty_limits"]["limit_bytes"].as_u64().unwrap() > 0);
    let svg = std::fs::read_to_string(dir.path().join("w.jsonl.svg")).expect("svg beside it");
    assert!(svg.starts_with("<svg"));
}

#[test]
fn a_read_with_a_series_states_its_steady_state_in_the_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_with(dir.path(), "r", &pattern(8 << 20));
    let series = dir.path().join("r.jsonl");
    let svg = dir.path().join("chart.svg");
    let out = ioscope()
        .args(["run", file.to_str().unwrap(), "-r", "4k", "--series"])
        .arg(&series)
        .arg("--series-svg")
        .arg(&svg)
        .args(["--series-interval", "10ms"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("over time "), "{text}");
    assert!(
        !text.contains("writeback "),
        "a read has no write-back check: {text}"
    );
    assert_shape(&lines_of(&series));
    assert!(svg.exists());
}

#[test]
fn an_existing_series_file_needs_force_and_a_link_is_refused_even_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_with(dir.path(), "r", &pattern(1 << 20));
    let existing = file_with(dir.path(), "old.jsonl", b"keep");
    let f = file.to_str().unwrap();
    let e = existing.to_str().unwrap();
    let err = usage_error(&["run", f, "-r", "64k", "--series", e]);
    assert!(err.contains("--force"), "{err}");
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");
    let link = dir.path().join("link.jsonl");
    std::os::unix::fs::symlink(&existing, &link).unwrap();
    let l = link.to_str().unwrap();
    let err = usage_error(&["run", f, "-r", "64k", "--force", "--series", l]);
    assert!(err.contains("link"), "{err}");
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");
    // With --force the old file is replaced by the series.
    json_of(&["run", f, "-r", "64k", "--force", "--series", e]);
    assert_shape(&lines_of(&existing));
}

#[test]
fn bad_series_options_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_with(dir.path(), "r", &pattern(4096));
    let f = file.to_str().unwrap();
    let s = dir.path().join("s.jsonl");
    let s = s.to_str().unwrap();
    let err = usage_error(&[
        "run",
        f,
        "-r",
        "4k",
        "--series",
        s,
        "--series-interval",
        "1ms",
    ]);
    assert!(err.contains("--series-interval"), "{err}");
    let err = usage_error(&["run", f, "-r", "4k", "--series", s, "--engine", "mmap"]);
    assert!(err.contains("--series"), "{err}");
    let err = usage_error(&["run", f, "-r", "4k", "--series", f]);
    assert!(
        err.contains("being measured") || err.contains("--force"),
        "{err}"
    );
    assert!(!Path::new(s).exists(), "nothing left behind");
}

#[test]
fn the_disk_panel_writes_one_series_with_a_row_key_on_every_line() {
    let dir = tempfile::tempdir().unwrap();
    let series = dir.path().join("panel.jsonl");
    let out = ioscope()
        .arg("disk")
        .arg(dir.path())
        .args(["--size", "4m", "--runtime", "0.2s", "--rw", "write"])
        .args(["--series-interval", "20ms", "--min-free", "0", "--series"])
        .arg(&series)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &doc["rows"][0];
    assert!(row["over_time"]["steady"]["verdict"].is_string(), "{row}");
    assert_eq!(row["over_time"]["checks"][0]["name"], "write_back_cliff");
    let lines = lines_of(&series);
    assert_shape(&lines);
    assert!(
        lines
            .iter()
            .all(|l| l["row"] == "SEQ1M Q8T1" && l["op"] == "write")
    );
    let ios: u64 = lines.iter().map(|l| l["ios"].as_u64().unwrap()).sum();
    assert_eq!(ios, row["ios"].as_u64().unwrap());
}

/// Starts `args` (ioscope's) with stdout piped, waits until `ready` holds, sends `signal`
/// and returns the output (the waits are safety limits, not timings).
fn interrupted_when(args: &[&str], ready: impl Fn() -> bool, signal: i32) -> std::process::Output {
    use std::time::{Duration, Instant};
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !ready() {
        assert!(child.try_wait().unwrap().is_none(), "{args:?} ended early");
        assert!(started.elapsed() < Duration::from_secs(60), "never ready");
        std::thread::sleep(Duration::from_millis(5));
    }
    // A few intervals of 20 ms.
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child, not reaped yet.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    assert!(
        !out.status.success(),
        "{args:?} finished before the signal: pick a longer run"
    );
    out
}

/// The series file and the JSON document of an interrupted run keep what was measured.
fn assert_series_kept(out: &std::process::Output, series: &Path, code: i32) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["complete"], false);
    let intervals = doc["over_time"]["intervals"]
        .as_array()
        .unwrap_or_else(|| panic!("intervals in the document: {doc}"));
    assert!(!intervals.is_empty());
    let lines = lines_of(series);
    assert_shape(&lines);
    assert_eq!(
        lines.len(),
        intervals.len(),
        "the file and the document agree"
    );
}

#[test]
fn a_run_with_a_series_interrupted_by_ctrl_c_keeps_its_intervals() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_with(dir.path(), "f", &pattern(16 << 20));
    let series = dir.path().join("s.jsonl");
    // One-byte reads of 16 MiB: long enough to be interrupted part-way.
    let out = interrupted_when(
        &[
            "run",
            "-r",
            file.to_str().unwrap(),
            "1",
            "--series",
            series.to_str().unwrap(),
            "--series-interval",
            "20ms",
            "--json",
        ],
        || true,
        libc::SIGINT,
    );
    assert_series_kept(&out, &series, 130);
    assert_eq!(std::fs::read(&file).unwrap(), pattern(16 << 20));
}

#[test]
fn a_write_with_a_series_ended_by_sigusr2_keeps_its_intervals_and_removes_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("w");
    let series = dir.path().join("w.jsonl");
    let written = file.clone();
    let out = interrupted_when(
        &[
            "run",
            "-w",
            file.to_str().unwrap(),
            "4k",
            "1048576",
            "--series",
            series.to_str().unwrap(),
            "--series-interval",
            "20ms",
            "--min-free",
            "1m",
            "--json",
        ],
        move || std::fs::metadata(&written).is_ok_and(|m| m.len() > 0),
        libc::SIGUSR2,
    );
    assert_series_kept(&out, &series, 128 + libc::SIGUSR2);
    assert!(!file.exists(), "the unfinished output is removed");
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ioscope"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
