//! `patterns`: every iozone test on a small file, with what each must carry (fsync and close
//! for writes, verified XOR for reads, coverage for random tests, the mixed split); cold
//! reads proven where the file system can evict; auto mode's grid; refusal of bad input and
//! of an existing file, which stays whole.

use crate::common::*;
use serde_json::Value;

fn patterns(args: &[&str]) -> (Value, i32, String) {
    let out = ioscope()
        .arg("patterns")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let doc =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {err}"));
    (doc, out.status.code().unwrap_or(-1), err)
}

fn result<'a>(doc: &'a Value, test: &str) -> &'a Value {
    doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["test"] == test)
        .unwrap_or_else(|| panic!("no {test} in {doc:#}"))
}

#[test]
fn every_test_on_a_small_file_carries_what_it_must() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // 1 MiB + 3 bytes: the last record is short.
    let (doc, code, err) = patterns(&[
        d, "--size", "1051651", "--record", "64k", "--runs", "2", "--cache", "warm",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        doc["schema"]
            .as_str()
            .unwrap()
            .starts_with("ioscope/patterns/v")
    );
    let records = 1_051_651u64.div_ceil(65536);
    let results = doc["results"].as_array().unwrap();
    let names: Vec<&str> = results
        .iter()
        .map(|r| r["test"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "write",
            "rewrite",
            "read",
            "reread",
            "random_read",
            "random_write",
            "backward_read",
            "record_rewrite",
            "stride_read",
            "mixed"
        ]
    );
    for r in results {
        let test = r["test"].as_str().unwrap();
        assert_eq!(r["runs"].as_array().unwrap().len(), 2, "{test}");
        assert_eq!(r["checks_ok"], true, "{test}: {r:#}");
        let headline = r["bytes_per_second"]["median"].as_f64().unwrap();
        assert!(headline > 0.0, "{test}");
        let writes = [
            "write",
            "rewrite",
            "random_write",
            "record_rewrite",
            "mixed",
        ]
        .contains(&test);
        if writes {
            // fsync shown, never hidden: without it the rate is higher, and close is timed.
            assert!(r["fsync_seconds"].as_f64().unwrap() > 0.0, "{test}");
            assert!(r["close_seconds"].as_f64().is_some(), "{test}");
            assert!(
                r["without_fsync"]["median"].as_f64().unwrap() >= headline,
                "{test}"
            );
            for run in r["runs"].as_array().unwrap() {
                assert!(
                    run["fsync_seconds"].as_f64().unwrap()
                        <= run["elapsed"]["seconds"].as_f64().unwrap()
                );
            }
        } else {
            assert!(
                r["without_fsync"].is_null() && r["fsync_seconds"].is_null(),
                "{test}"
            );
            assert_eq!(r["verified"], true, "{test}: the XOR of the file");
            assert_eq!(r["runs"][0]["cache"]["asked"], "warm", "{test}");
        }
        // Every run moved the whole size, whatever the order.
        for run in r["runs"].as_array().unwrap() {
            assert_eq!(
                run["bytes"],
                1_051_651 / 65536 * 65536
                    + if test == "record_rewrite" {
                        65536
                    } else {
                        1_051_651 % 65536
                    },
                "{test}"
            );
        }
    }
    // Random and stride tests: every record exactly once, spread over the file.
    for test in ["random_read", "random_write", "stride_read", "mixed"] {
        let c = &result(&doc, test)["coverage"];
        assert_eq!(c["pieces"], records, "{test}");
        assert_eq!(c["distinct"], records, "{test}");
        let buckets: Vec<u64> = c["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b.as_u64().unwrap())
            .collect();
        assert_eq!(buckets.iter().sum::<u64>(), records);
        assert!(buckets.iter().all(|&b| b >= 1), "{test}: {buckets:?}");
    }
    assert_eq!(result(&doc, "record_rewrite")["coverage"]["distinct"], 1);
    assert!(result(&doc, "read")["coverage"].is_null());
    // Mixed: reads and writes together make every record once, and both happen.
    let split = &result(&doc, "mixed")["runs"][0]["split"];
    let (reads, writes) = (
        split["reads"].as_u64().unwrap(),
        split["writes"].as_u64().unwrap(),
    );
    assert_eq!(reads + writes, records);
    assert!(reads > 0 && writes > 0, "{split}");
    assert_eq!(result(&doc, "mixed")["verified"], true);
    // The scratch file is gone.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn cold_reads_start_cold_where_the_file_system_can_evict() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (doc, code, err) = patterns(&[
        d,
        "--size",
        "2m",
        "--record",
        "128k",
        "--runs",
        "1",
        "--tests",
        "read,reread,random-read",
    ]);
    let read = result(&doc, "read");
    let verdict = read["runs"][0]["cache"]["verdict"].as_str().unwrap();
    if verdict == "contradicted" {
        eprintln!("skipped: this file system keeps the file cached after fadvise (tmpfs?): {err}");
        return;
    }
    assert_eq!(code, 0, "{err}");
    assert_eq!(read["runs"][0]["cache"]["asked"], "cold");
    assert!(["proven", "unproven"].contains(&verdict), "{verdict}");
    // Reread follows read: warm, whatever --cache says.
    assert_eq!(result(&doc, "reread")["runs"][0]["cache"]["asked"], "warm");
    assert_eq!(
        result(&doc, "random_read")["runs"][0]["cache"]["asked"],
        "cold"
    );
}

#[test]
fn draws_repeat_records_and_are_not_verified() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (doc, code, err) = patterns(&[
        d,
        "--size",
        "1m",
        "--record",
        "4k",
        "--runs",
        "1",
        "--cache",
        "warm",
        "--draws",
        "--tests",
        "random-read",
    ]);
    assert_eq!(code, 0, "{err}");
    let r = result(&doc, "random_read");
    let c = &r["coverage"];
    assert_eq!(c["steps"], 256);
    assert!(c["distinct"].as_u64().unwrap() < 256, "{c}");
    assert!(r["verified"].is_null(), "a partial read has no known XOR");
    // The write that made the file is not reported: only what was asked.
    assert_eq!(doc["results"].as_array().unwrap().len(), 1);
}

#[test]
fn auto_mode_fills_its_grid_and_draws_a_heat_map() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("work");
    std::fs::create_dir(&d).unwrap();
    let (csv, svg) = (dir.path().join("p.csv"), dir.path().join("p.svg"));
    let out = ioscope()
        .arg("patterns")
        .arg(&d)
        .args([
            "--auto",
            "--size",
            "256k",
            "--tests",
            "write,random-read",
            "--cache",
            "warm",
            "--csv",
        ])
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("random read — MiB/s"), "{text}");
    // Sizes 64k and 256k; records 4k..64k on the first, 4k..256k on the second.
    let rows = std::fs::read_to_string(&csv).unwrap().lines().count() - 1;
    assert_eq!(rows, 2 * (5 + 7));
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("random read") && svg.contains("256 KiB"));
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
}

#[test]
fn an_existing_file_is_refused_and_left_whole_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "mine", &pattern(5000));
    let out = ioscope()
        .arg("patterns")
        .arg(&path)
        .args(["--size", "64k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains("mine") && line.contains("--force"), "{line}");
    let out = ioscope()
        .arg("patterns")
        .arg(&path)
        .args([
            "--size", "64k", "--record", "4k", "--runs", "1", "--cache", "warm", "--force",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        pattern(5000),
        "the user's file is untouched"
    );
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no scratch file left"
    );
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, needle) in [
        (vec!["--size", "4k", "--record", "8k"], "larger than --size"),
        (vec!["--read-percent", "101"], "--read-percent"),
        (vec!["--stride", "0"], "--stride"),
        (vec!["--runs", "0"], "--runs"),
        (vec!["--size", "4x"], "--size"),
        (vec!["--auto", "--size", "32k"], "64k"),
    ] {
        let out = ioscope()
            .arg("patterns")
            .arg(d)
            .args(&args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_line_stderr(&out);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
    let missing = dir.path().join("no/such/dir/f");
    let out = ioscope()
        .arg("patterns")
        .arg(&missing)
        .args(["--size", "64k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("does not exist"));
    // Unknown test names are clap's usage errors.
    let out = ioscope()
        .arg("patterns")
        .arg(d)
        .args(["--tests", "read,fly"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Ctrl-C (SIGINT) or SIGTERM in the middle: exit 130, what was measured is printed (JSON,
/// marked incomplete) and the scratch file is removed.
#[test]
fn an_interrupted_run_exits_130_keeps_what_it_measured_and_leaves_no_file() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    for signal in [libc::SIGINT, libc::SIGTERM] {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
            .arg("patterns")
            .arg(dir.path())
            .args([
                "--size", "64m", "--record", "4k", "--runs", "1000", "--cache", "warm",
            ])
            .args(["--tests", "reread,random-write", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait for the scratch file, then for the first result to be measured.
        let started = Instant::now();
        while std::fs::read_dir(dir.path()).unwrap().count() == 0 {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no scratch file"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // The file is written (untimed) before the first reread: leave time for both.
        std::thread::sleep(Duration::from_millis(1500));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(130), "{err}");
        // The reread runs measured before the signal are kept, summarized.
        let doc: Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
        assert_eq!(doc["complete"], false);
        let reread = result(&doc, "reread");
        assert!(!reread["runs"].as_array().unwrap().is_empty());
        assert!(reread["runs"].as_array().unwrap().len() < 1000);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "scratch file left"
        );
    }
}

/// --keep: one file per size with --auto in a directory; with --force on an existing FILE,
/// the tested file takes its place; FIFOs and links are refused; a crafted result with a
/// zero record re-renders without a panic.
#[test]
fn keep_force_and_odd_targets() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("k");
    std::fs::create_dir(&d).unwrap();
    let out = ioscope()
        .arg("patterns")
        .arg(&d)
        .args([
            "--auto", "--size", "256k", "--keep", "--tests", "write", "--cache", "warm",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut sizes: Vec<u64> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .collect();
    sizes.sort();
    assert_eq!(sizes, [64 << 10, 256 << 10]);
    let mine = file_with(dir.path(), "mine", b"old");
    let out = ioscope()
        .arg("patterns")
        .arg(&mine)
        .args([
            "--size", "64k", "--record", "4k", "--runs", "1", "--tests", "write", "--keep",
            "--force",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::metadata(&mine).unwrap().len(),
        64 << 10,
        "the tested file took its place"
    );
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    std::os::unix::fs::symlink(&mine, dir.path().join("link")).unwrap();
    for (target, needle) in [
        (fifo, "not a regular file"),
        (dir.path().join("link"), "symbolic link"),
    ] {
        let out = ioscope()
            .arg("patterns")
            .arg(&target)
            .args(["--size", "64k", "--force"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(one_line_stderr(&out).contains(needle));
    }
    // A saved result with record 0 (hand-edited): re-rendered, no panic.
    let (mut doc, _, _) = patterns(&[
        d.to_str().unwrap(),
        "--size",
        "64k",
        "--runs",
        "1",
        "--tests",
        "read",
        "--cache",
        "warm",
    ]);
    doc["results"][0]["record"] = 0.into();
    let saved = dir.path().join("z.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    let out = ioscope().arg("report").arg(&saved).output().unwrap();
    assert!(
        out.status.code().is_some_and(|c| c != 101 && c < 128),
        "{out:?}"
    );
}

#[test]
fn the_output_says_the_data_was_laid_out_before_the_clock_and_reads_still_check_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Records of 3 000 bytes: stamps straddle records, the last record is short.
    let (doc, code, err) = patterns(&[
        d,
        "--size",
        "300001",
        "--record",
        "3000",
        "--runs",
        "1",
        "--cache",
        "warm",
        "--tests",
        "write,read,random-write,backward-read,record-rewrite,mixed,stride-read",
    ]);
    assert_eq!(code, 0, "{err}");
    let data = &doc["data"];
    assert_eq!(data["block_bytes"], 262144, "{doc:#}");
    assert_eq!(data["stamp_every"], 4096);
    assert!(data["bytes"].as_u64().unwrap() > 262144);
    assert!(data["seconds"].as_f64().unwrap() > 0.0);
    for test in ["read", "backward_read", "mixed", "stride_read"] {
        assert_eq!(result(&doc, test)["verified"], true, "{test}: {doc:#}");
    }
    let out = ioscope()
        .arg("patterns")
        .arg(d)
        .args([
            "--size",
            "256k",
            "--record",
            "64k",
            "--runs",
            "1",
            "--cache",
            "warm",
            "--tests",
            "write,read",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("timed") && text.contains("laid out before the clock started"),
        "{text}"
    );
    assert!(text.contains("these started warm too"), "{text}");
}

/// The saved patterns result (cold reads, proven) with the read and reread set to
/// `read` and `reread` MiB/s (median, min, max over 3 runs).
fn saved_with(read: [f64; 3], reread: [f64; 3]) -> Value {
    let path = format!(
        "{}/tests/fixtures/patterns.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    for (test, [median, min, max]) in [("read", read), ("reread", reread)] {
        let r = doc["results"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .find(|r| r["test"] == test)
            .unwrap();
        let s = &mut r["bytes_per_second"];
        s["median"] = (median * 1048576.0).into();
        s["mean"] = (median * 1048576.0).into();
        s["min"] = (min * 1048576.0).into();
        s["max"] = (max * 1048576.0).into();
    }
    doc
}

fn iozone_line(text: &str) -> String {
    text.lines()
        .find(|l| l.starts_with("iozone"))
        .unwrap_or_else(|| panic!("no iozone line in {text}"))
        .to_string()
}

#[test]
fn the_iozone_sentence_follows_the_cache_state_and_the_numbers() {
    // Cold, proven, and the warm reread far faster: the cold start costs.
    let text = report_text(&saved_with([200.0, 190.0, 210.0], [2000.0, 1900.0, 2100.0]));
    let line = iozone_line(&text);
    assert!(
        line.contains("page cache (warm)") && line.contains("started cold"),
        "{line}"
    );
    assert!(
        line.contains("the cold start costs") && line.contains("10.0x"),
        "{line}"
    );
    // Against the usual story: the cold read as fast as the warm reread.
    let line = iozone_line(&report_text(&saved_with(
        [2000.0, 1950.0, 2050.0],
        [2050.0, 2000.0, 2100.0],
    )));
    assert!(
        line.contains("changed little") && !line.contains("costs"),
        "{line}"
    );
    // Faster than the warm reread: no cost is claimed.
    let line = iozone_line(&report_text(&saved_with(
        [3000.0, 2900.0, 3100.0],
        [2000.0, 1900.0, 2100.0],
    )));
    assert!(line.contains("faster than the warm reread"), "{line}");
    assert!(!line.contains("costs"), "{line}");
    // Runs that scatter more than they differ: no direction.
    let line = iozone_line(&report_text(&saved_with(
        [1000.0, 300.0, 3000.0],
        [2000.0, 900.0, 2500.0],
    )));
    assert!(line.contains("less than their runs scatter"), "{line}");
    // Asked cold, but the pages stayed: the reads ran warm, as iozone's.
    let mut kept = saved_with([200.0, 190.0, 210.0], [2000.0, 1900.0, 2100.0]);
    for r in kept["results"].as_array_mut().unwrap() {
        for run in r["runs"].as_array_mut().unwrap() {
            if run["cache"]["asked"] == "cold" {
                run["cache"]["verdict"] = "contradicted".into();
            }
        }
    }
    let line = iozone_line(&report_text(&kept));
    assert!(
        line.contains("kept the pages cached") && !line.contains("started cold"),
        "{line}"
    );
    // Started warm: said, with no comparison of cold and warm.
    let mut warm = saved_with([200.0, 190.0, 210.0], [2000.0, 1900.0, 2100.0]);
    warm["cache"] = "warm".into();
    let line = iozone_line(&report_text(&warm));
    assert!(
        line.contains("started warm too") && !line.contains("cold"),
        "{line}"
    );
    // No read test: nothing to compare.
    let mut writes = saved_with([1.0; 3], [1.0; 3]);
    writes["results"]
        .as_array_mut()
        .unwrap()
        .retain(|r| r["test"] == "write");
    assert!(!report_text(&writes).contains("\niozone"));
}

#[test]
fn the_timed_line_tells_results_with_data_laid_out_ahead_from_older_ones() {
    let old = saved_with([200.0; 3], [2000.0; 3]);
    let text = report_text(&old);
    assert!(
        text.contains("made each block's data and its XOR between their calls"),
        "{text}"
    );
    let mut new = old.clone();
    new["data"] = serde_json::json!({
        "block_bytes": 262144, "stamp_every": 4096, "bytes": 590484, "seconds": 0.0004
    });
    let text = report_text(&new);
    assert!(
        text.contains("laid out before the clock started (576.6 KiB in 400.00 µs)"),
        "{text}"
    );
}
