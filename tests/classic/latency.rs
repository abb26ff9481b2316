//! Latency of every timed call: on real small runs of `run`, `sweep` and `patterns`, the
//! count equals the calls made, the percentiles never decrease, the keys are numbers;
//! `--no-latency` leaves them out; engines without a call per block say why; documents
//! without the field still render. No timing is asserted.

use crate::common::{file_with, ioscope, pattern};
use serde_json::Value;

const KEYS: [&str; 7] = ["count", "p50", "p90", "p99", "p99_9", "p99_99", "max"];

fn json_of(args: &[&str]) -> Value {
    let out = ioscope().args(args).output().expect("ioscope runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn text_of(args: &[&str]) -> String {
    let out = ioscope().args(args).output().expect("ioscope runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Checks one `latency_ns` object: numeric keys, monotone percentiles, `count` calls.
fn check_latency(l: &Value, calls: u64) {
    let values: Vec<u64> = KEYS
        .iter()
        .map(|k| {
            l[k].as_u64()
                .unwrap_or_else(|| panic!("{k} is a number in {l}"))
        })
        .collect();
    assert_eq!(values[0], calls, "every call timed: {l}");
    let percentiles = &values[1..];
    assert!(
        percentiles.windows(2).all(|w| w[0] <= w[1]),
        "percentiles never decrease: {l}"
    );
    assert!(values[6] >= values[5], "max is at least p99.99: {l}");
    assert!(values[1] > 0, "no call takes zero nanoseconds: {l}");
}

#[test]
fn a_run_read_times_every_call_with_numeric_keys_and_a_latency_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let path = f.to_str().expect("utf-8 path");
    let doc = json_of(&["run", "-r", path, "4k", "--json"]);
    check_latency(&doc["latency_ns"], doc["calls"].as_u64().expect("calls"));
    // 256 reads of 4 KiB and the one that finds the end.
    assert_eq!(doc["latency_ns"]["count"], 257);
    let text = text_of(&["run", "-r", path, "4k"]);
    let line = text
        .lines()
        .find(|l| l.starts_with("latency"))
        .expect("a latency line");
    for label in ["p50 ", "p99 ", "p99.9 ", "max ", "257 read() calls"] {
        assert!(line.contains(label), "{label} in {line}");
    }
}

#[test]
fn a_run_write_times_its_write_calls_and_not_the_fsync() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = dir.path().join("w");
    let doc = json_of(&[
        "run",
        "-w",
        f.to_str().expect("utf-8 path"),
        "64k",
        "16",
        "--json",
    ]);
    assert_eq!(doc["calls"], 16);
    check_latency(&doc["latency_ns"], 16);
    assert!(doc["fsync_seconds"].is_number(), "the fsync stays apart");
}

#[test]
fn threads_of_a_parallel_engine_all_add_their_calls() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let doc = json_of(&[
        "run",
        "-r",
        f.to_str().expect("utf-8 path"),
        "16k",
        "--engine",
        "pread",
        "--threads",
        "3",
        "--json",
    ]);
    check_latency(&doc["latency_ns"], doc["calls"].as_u64().expect("calls"));
}

#[test]
fn no_latency_leaves_the_percentiles_out_of_json_and_text() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let path = f.to_str().expect("utf-8 path");
    let doc = json_of(&["run", "-r", path, "4k", "--json", "--no-latency"]);
    assert!(doc.get("latency_ns").is_none(), "{doc}");
    let text = text_of(&["--no-latency", "run", "-r", path, "4k"]);
    assert!(!text.contains("latency"), "{text}");
}

#[test]
fn the_deterministic_meter_gives_no_latency_so_exact_outputs_stay_exact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let doc = json_of(&[
        "--meter",
        "fixed",
        "run",
        "-r",
        f.to_str().expect("utf-8 path"),
        "4k",
        "--json",
    ]);
    assert!(doc.get("latency_ns").is_none(), "{doc}");
}

#[test]
fn an_engine_that_maps_the_file_gives_no_latency_and_says_why() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let path = f.to_str().expect("utf-8 path");
    let doc = json_of(&["run", "-r", path, "4k", "--engine", "mmap", "--json"]);
    assert!(doc.get("latency_ns").is_none(), "{doc}");
    let text = text_of(&["run", "-r", path, "4k", "--engine", "mmap"]);
    assert!(
        text.contains("latency   - (the mmap engine reads through a mapping"),
        "{text}"
    );
}

#[test]
fn a_sweep_point_holds_the_calls_of_all_its_runs_and_csv_has_the_columns() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let csv = dir.path().join("s.csv");
    let doc = json_of(&[
        "sweep",
        f.to_str().expect("utf-8 path"),
        "--block-sizes",
        "4k,64k",
        "--repeat",
        "2",
        "--cache",
        "warm",
        "--json",
        "--csv",
        csv.to_str().expect("utf-8 path"),
    ]);
    let points = doc["points"].as_array().expect("points");
    assert_eq!(points.len(), 2);
    for p in points {
        let runs = p["runs"].as_array().expect("runs");
        let calls: u64 = runs
            .iter()
            .map(|r| r["calls"].as_u64().expect("calls"))
            .sum();
        check_latency(&p["latency_ns"], calls);
        for r in runs {
            check_latency(&r["latency_ns"], r["calls"].as_u64().expect("calls"));
        }
    }
    let table = std::fs::read_to_string(&csv).expect("csv written");
    let header = table.lines().next().expect("header");
    assert!(header.ends_with("latency_count,latency_p50_ns,latency_p90_ns,latency_p99_ns,latency_p99_9_ns,latency_p99_99_ns,latency_max_ns"), "{header}");
}

#[test]
fn every_patterns_test_carries_the_calls_of_its_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let doc = json_of(&[
        "patterns",
        dir.path().to_str().expect("utf-8 path"),
        "--size",
        "256k",
        "--record",
        "16k",
        "--tests",
        "write,read,random-read,mixed",
        "--json",
    ]);
    let results = doc["results"].as_array().expect("results");
    assert_eq!(results.len(), 4);
    for r in results {
        let calls: u64 = r["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .map(|run| run["calls"].as_u64().expect("calls"))
            .sum();
        check_latency(&r["latency_ns"], calls);
    }
}

#[test]
fn a_saved_run_renders_its_latency_and_one_without_the_field_still_renders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let mut doc = json_of(&["run", "-r", f.to_str().expect("utf-8 path"), "4k", "--json"]);
    let with = dir.path().join("with.json");
    std::fs::write(&with, doc.to_string()).expect("write");
    let text = text_of(&["report", with.to_str().expect("utf-8 path")]);
    assert!(text.contains("latency   p50 "), "{text}");
    doc.as_object_mut().expect("object").remove("latency_ns");
    let without = dir.path().join("without.json");
    std::fs::write(&without, doc.to_string()).expect("write");
    let text = text_of(&["report", without.to_str().expect("utf-8 path")]);
    assert!(text.contains("xor"), "{text}");
    assert!(!text.contains("latency"), "{text}");
}
