//! `ioscope disk`: the panel on a tiny scratch file (written whole, removed after, also on
//! Ctrl-C), its JSON (numeric latency keys, percentiles in order, the queue kept), a custom
//! row with threads, a file of the user's (read, never written without --force-write), the
//! fallback where O_DIRECT is refused, and one-line errors for bad options. Tests never
//! assert timings.

use crate::common;

use crate::common::{file_with, ioscope, json_of, pattern, scratch_files, usage_error};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every ran row's latency keys are numbers, rising from p50 to max.
fn assert_latencies(doc: &Value) {
    for row in doc["rows"].as_array().unwrap() {
        if !row["skipped"].is_null() {
            continue;
        }
        let l = &row["latency_us"];
        let keys = ["p50", "p90", "p99", "p99_9", "p99_99", "max"];
        let values: Vec<f64> = keys
            .iter()
            .map(|k| {
                l[k].as_f64()
                    .unwrap_or_else(|| panic!("{k} is a number: {l}"))
            })
            .collect();
        assert!(values[0] > 0.0, "{l}");
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{l}");
        assert!(row["ios"].as_u64().unwrap() > 0, "{row}");
        assert!(row["iops"].as_f64().unwrap() > 0.0);
        assert!(row["mean_in_flight"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn the_panel_runs_every_row_on_a_tiny_scratch_file_and_removes_it() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--size",
        "4m",
        "--runtime",
        "0.05s",
        "--seed",
        "7",
    ]);
    assert_eq!(doc["schema"].as_str().unwrap(), "ioscope/disk/v2");
    let rows = doc["rows"].as_array().unwrap();
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            let dir = match r["spec"]["mix"].as_u64() {
                Some(p) => format!("mix {p}/{}", 100 - p),
                None => r["spec"]["op"].as_str().unwrap().to_string(),
            };
            format!("{} {dir}", r["name"].as_str().unwrap())
        })
        .collect();
    // From 4 cores the default panel adds RND4K Q32T<cores/2> (tests/disk/profiles.rs).
    let names = &names[..9];
    assert_eq!(
        names,
        [
            "SEQ1M Q8T1 read",
            "SEQ1M Q8T1 write",
            "SEQ1M Q1T1 read",
            "SEQ1M Q1T1 write",
            "RND4K Q32T1 read",
            "RND4K Q32T1 write",
            "RND4K Q32T1 mix 70/30",
            "RND4K Q1T1 read",
            "RND4K Q1T1 write"
        ]
    );
    assert_latencies(&doc);
    for row in rows {
        if row["path"] != "uring_direct" {
            assert!(
                row["fallback"].as_str().is_some_and(|f| !f.is_empty()),
                "a fallback says why: {row}"
            );
        }
        if row["spec"]["op"] == "read" {
            assert_eq!(row["verify"]["bad_blocks"], 0, "{row}");
            assert!(row["verify"]["blocks"].as_u64().unwrap() > 0, "{row}");
        }
    }
    assert_eq!(doc["complete"], true);
    assert!(
        scratch_files(dir.path()).is_empty(),
        "the scratch file is gone"
    );
}

#[test]
fn repeated_rows_keep_every_run_and_their_median_lies_within_them() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--size",
        "2m",
        "--runtime",
        "0.05s",
        "--repeat",
        "2",
    ]);
    let rows = doc["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    for row in rows {
        let runs = row["runs"].as_array().unwrap_or_else(|| panic!("{row}"));
        assert_eq!(runs.len(), 2, "{row}");
        for key in ["bytes_per_second", "iops"] {
            let each: Vec<f64> = runs.iter().map(|r| r[key].as_f64().unwrap()).collect();
            let (lo, hi) = (each[0].min(each[1]), each[0].max(each[1]));
            let median = row[key].as_f64().unwrap();
            assert!(lo <= median && median <= hi, "{key}: {median} in {each:?}");
            assert!(lo > 0.0, "{row}");
        }
        assert!(runs.iter().all(|r| r["p99_us"].as_f64().unwrap() > 0.0));
    }
    let text = common::report_text(&doc);
    assert!(text.contains("2 runs each, median"), "{text}");
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn the_text_shows_the_panel_the_device_and_one_queue_sentence_per_row() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let out = ioscope()
        .args(["disk", dir.path().to_str().unwrap()])
        .args(["--size", "2m", "--runtime", "0.05s", "--rw", "randread"])
        .arg("--verbose")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("RND4K Q32T1"), "{text}");
    assert!(text.contains("p99.99"), "{text}");
    assert!(
        text.contains("queue     RND4K Q32T1 read: asked 32 in flight"),
        "{text}"
    );
    assert!(text.contains("verify    in place"), "{text}");
}

#[test]
fn a_custom_row_with_threads_runs_alone_and_keeps_the_file_whole() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--size",
        "2m",
        "--runtime",
        "0.05s",
        "--rw",
        "randwrite",
        "--bs",
        "8k",
        "--depth",
        "4",
        "--threads",
        "2",
    ]);
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["name"], "RND8K Q4T2");
    assert_eq!(rows[0]["spec"]["threads"], 2);
    assert!(rows[0]["fsync_seconds"].as_f64().is_some());
    assert_latencies(&doc);
}

#[test]
fn a_file_of_yours_is_read_and_its_write_rows_are_skipped_without_force_write() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let bytes = pattern(2 << 20);
    let f = file_with(dir.path(), "mine", &bytes);
    let doc = json_of(&["disk", f.to_str().unwrap(), "--runtime", "0.02s"]);
    for row in doc["rows"].as_array().unwrap() {
        if row["spec"]["op"] == "write" {
            assert!(row["skipped"].as_str().unwrap().contains("--force-write"));
        } else {
            assert!(row["skipped"].is_null());
            assert!(row["verify"].is_null(), "your content is not checked");
        }
    }
    assert_latencies(&doc);
    assert_eq!(std::fs::read(&f).unwrap(), bytes, "the file is untouched");
    let err = usage_error(&["disk", f.to_str().unwrap(), "--rw", "write"]);
    assert!(err.contains("--force-write"), "{err}");
    // With it, the write row runs on the file in place: never truncated.
    json_of(&[
        "disk",
        f.to_str().unwrap(),
        "--rw",
        "randwrite",
        "--runtime",
        "0.02s",
        "--force-write",
    ]);
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 2 << 20);
}

#[test]
fn bad_options_are_one_line_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 8] = [
        (&["--rw", "read", "--depth", "0"], "--depth must be 1"),
        (&["--repeat", "0"], "--repeat must be 1 to"),
        (
            &["--series", "s.jsonl", "--repeat", "2"],
            "--series follows one run of each row",
        ),
        (&["--runtime", "0"], "--runtime must be above 0"),
        (&["--runtime", "soon"], "--runtime"),
        (&["--rw", "randread", "--bs", "1000"], "multiple of 512"),
        (&["--bs", "4k"], "give --rw"),
        (&["--rw", "read", "--threads", "0"], "--threads must be 1"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["disk", d];
        all.extend_from_slice(args);
        let err = usage_error(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    let err = usage_error(&["disk", d, "--size", "64k"]);
    assert!(err.contains("smaller than one block"), "{err}");
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn where_o_direct_is_refused_the_row_falls_back_and_says_so() {
    // tmpfs refused O_DIRECT before Linux 6.6; where it allows it, the direct path runs.
    let shm = Path::new("/dev/shm");
    let is_tmpfs = nix_statfs_tmpfs(shm);
    if !is_tmpfs {
        eprintln!("skipped: no writable tmpfs at /dev/shm to try a refusal of O_DIRECT on");
        return;
    }
    let dir = tempfile::tempdir_in(shm).unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--size",
        "2m",
        "--runtime",
        "0.02s",
        "--rw",
        "randread",
        "--min-free",
        "0",
    ]);
    let row = &doc["rows"][0];
    match row["path"].as_str().unwrap() {
        "uring_direct" | "sync_direct" => eprintln!("this kernel's tmpfs takes O_DIRECT"),
        _ => assert!(
            row["fallback"]
                .as_str()
                .unwrap()
                .contains("O_DIRECT refused"),
            "{row}"
        ),
    }
    assert!(
        row["device"].is_null(),
        "no block device behind tmpfs: {row}"
    );
    assert!(report_says_no_device(&doc));
}

#[test]
fn refused_o_direct_and_io_uring_fall_back_to_buffered_and_pread_and_say_so() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for (refuse, path, words) in [
        ("direct", "uring_buffered", "O_DIRECT refused"),
        ("uring", "sync_direct", "io_uring refused"),
        ("direct,uring", "sync_buffered", "1 in flight per thread"),
    ] {
        let out = ioscope()
            .env("IOSCOPE_DISK_REFUSE", refuse)
            .args(["disk", d, "--size", "2m", "--runtime", "0.02s", "--json"])
            .args(["--rw", "randread", "--depth", "4"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let row = &doc["rows"][0];
        assert_eq!(row["path"], path, "{refuse}: {row}");
        assert!(row["fallback"].as_str().unwrap().contains(words), "{row}");
        assert_eq!(row["verify"]["bad_blocks"], 0);
        assert_latencies(&doc);
        let text = common::report_text(&doc);
        assert!(text.contains("fallback  RND4K Q4T1 read: "), "{text}");
    }
}

/// Whether `path` is on tmpfs and writable.
fn nix_statfs_tmpfs(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: statfs writes into the zeroed struct we pass; the path is a valid C string.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    let ok = unsafe { libc::statfs(c.as_ptr(), &mut st) } == 0;
    const TMPFS_MAGIC: i64 = 0x0102_1994;
    // SAFETY: access only checks permissions of a valid C string path.
    let writable = unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0;
    ok && st.f_type as i64 == TMPFS_MAGIC && writable
}

fn report_says_no_device(doc: &Value) -> bool {
    common::report_text(doc).contains("no block device behind the file")
}

#[test]
fn ctrl_c_stops_the_panel_and_removes_the_scratch_file() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["disk", dir.path().to_str().unwrap()])
        .args(["--size", "4m", "--runtime", "10s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while scratch_files(dir.path()).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no scratch file appeared"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Into the first row (the fill of 4 MiB is quick).
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child, which has not been reaped yet.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("disk ignored Ctrl-C");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        scratch_files(dir.path()).is_empty(),
        "the scratch file is gone"
    );
}

#[test]
fn a_best_of_panel_says_its_figures_are_the_fastest_runs_in_the_text_and_the_markdown() {
    let mut doc = crate::common::fixture_json("disk-repeat.json");
    let median = crate::common::report_text(&doc);
    assert!(median.contains("median ±its farthest run"), "{median}");
    assert!(!median.contains("CrystalDiskMark's figure"), "{median}");
    for row in doc["rows"].as_array_mut().unwrap() {
        row["best_of"] = serde_json::Value::Bool(true);
    }
    let text = crate::common::report_text(&doc);
    let rows = text
        .lines()
        .find(|l| l.starts_with("rows"))
        .expect("a rows line");
    assert!(
        rows.contains("3 runs each, best of them (the fastest run, CrystalDiskMark's figure; the median is the one to compare) ±the farthest run from it"),
        "{rows}"
    );
    assert!(!rows.contains("median ±its farthest run"), "{rows}");
    let md = crate::common::report_markdown(&doc);
    assert!(
        md.contains("each figure is the best of its runs (the fastest run, CrystalDiskMark's figure; the median is the one to compare)"),
        "{md}"
    );
    assert!(
        !crate::common::report_markdown(&crate::common::fixture_json("disk-repeat.json"))
            .contains("best of its runs")
    );
}

/// Pages of `path` in the page cache (the crate's own mincore count).
fn cached_pages(path: &Path) -> u64 {
    let file = std::fs::File::open(path).unwrap();
    let len = file.metadata().unwrap().len();
    ioscope::measure::cache::residency(&file, "theirs.bin", len)
        .unwrap()
        .resident_pages
}

#[test]
fn an_o_direct_row_starts_with_none_of_the_file_in_the_page_cache_as_fio_does() {
    // Pages left cached send every O_DIRECT write through the page cache's invalidation and
    // its completion through a workqueue: the file's cached pages (the user's, the
    // caveats' sample reads) are evicted before each row, as fio's invalidate=1 does.
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = file_with(dir.path(), "theirs.bin", &pattern(2 << 20));
    std::fs::read(&path).unwrap();
    let before = cached_pages(&path);
    let doc = json_of(&[
        "disk",
        path.to_str().unwrap(),
        "--rw",
        "randread",
        "--runtime",
        "0.05s",
    ]);
    let paths: Vec<&str> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["path"].as_str())
        .collect();
    if paths.iter().any(|p| !p.ends_with("_direct")) {
        eprintln!(
            "skipped: O_DIRECT is refused here ({paths:?}), so the rows read through the cache"
        );
        return;
    }
    assert!(before > 0, "the file was read, so some of it was cached");
    assert_eq!(
        cached_pages(&path),
        0,
        "of {before} pages cached before the run, none is left after an O_DIRECT row (its reads alone would keep them)"
    );
}
