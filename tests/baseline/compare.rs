//! Comparing with a baseline: the same measurement again is within the noise, a baseline
//! whose medians were 10x better makes the run exit 1 naming the regressed figure, and the
//! JSON document carries the comparison.

use super::storage::{sweep, with_dir};
use crate::common::*;

#[test]
fn save_then_compare_on_sweep_finds_nothing_moved() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "a"])));
    let out = with_dir(&bl, &sweep(p, &["--baseline", "a"]));
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("against baseline a (saved "), "{text}");
    assert!(text.contains("read warm 64 KiB"), "{text}");
    assert!(text.contains("within noise"), "{text}");
    let last = text.lines().last().unwrap();
    assert_eq!(last, "no figure moved beyond the noise against baseline a");
}

#[test]
fn save_then_compare_on_run_repeats_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(
        &bl,
        &["run", "-r", p, "64k", "--save-baseline", "a"],
    ));
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bl.join("run-a.json")).unwrap()).unwrap();
    let runs = saved["figures"][0]["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 5, "five runs by default under a baseline flag");
    assert_eq!(saved["figures"][0]["key"], "read 64 KiB");
    let out = with_dir(&bl, &["run", "-r", p, "64k", "--baseline", "a"]);
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("5 runs: median"), "{text}");
    assert!(
        text.lines().last().unwrap().starts_with("no figure moved"),
        "{text}"
    );
}

#[test]
fn run_w_repeated_rewrites_only_the_file_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let new = dir.path().join("new");
    let out = with_dir(
        dir.path(),
        &[
            "run",
            "-w",
            new.to_str().unwrap(),
            "4k",
            "16",
            "--repeat",
            "3",
        ],
    );
    ok(&out);
    assert_eq!(std::fs::metadata(&new).unwrap().len(), 64 << 10);
    // An existing file is refused at the first run, as without --repeat.
    let out = with_dir(
        dir.path(),
        &[
            "run",
            "-w",
            new.to_str().unwrap(),
            "4k",
            "16",
            "--repeat",
            "3",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_baseline_ten_times_better_makes_the_run_exit_1_naming_the_figure() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "fast"])));
    let path = bl.join("sweep-fast.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    for run in doc["figures"][1]["runs"].as_array_mut().unwrap() {
        *run = serde_json::json!(run.as_f64().unwrap() * 10.0);
    }
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = with_dir(&bl, &sweep(p, &["--baseline", "fast"]));
    assert_eq!(out.status.code(), Some(1), "a regression exits 1");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text.lines().last().unwrap(),
        "1 of 2 figures regressed: read warm 64 KiB",
        "{text}"
    );
    let out = with_dir(&bl, &sweep(p, &["--baseline", "fast", "--json"]));
    assert_eq!(out.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let b = &doc["baseline"];
    assert_eq!(b["name"], "fast");
    assert_eq!(b["figures"][1]["verdict"], "regressed");
    assert_eq!(b["figures"][0]["verdict"], "within_noise");
    assert!(b["figures"][1]["ci"].is_array());
    assert!(b["environment"].is_array());
}

#[test]
fn both_flags_compare_with_the_old_then_save_the_new() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "one"])));
    let out = with_dir(
        &bl,
        &sweep(p, &["--baseline", "one", "--save-baseline", "two"]),
    );
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("against baseline one"));
    assert!(bl.join("sweep-two.json").exists());
}

/// `--processes N` measures the figures a baseline keeps or compares in N separate
/// processes and pools their runs: the saved file and the comparison hold N times the
/// runs, and both say so; without a baseline flag, or out of range, it is refused.
#[test]
fn processes_pool_each_figures_runs_from_separate_processes() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    let out = with_dir(
        &bl,
        &sweep(p, &["--save-baseline", "a", "--processes", "3"]),
    );
    ok(&out);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("each over 3 processes"), "{said}");
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(bl.join("sweep-a.json")).unwrap()).unwrap();
    let figures = saved["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 2, "{saved:#}");
    for fig in figures {
        assert_eq!(fig["runs"].as_array().unwrap().len(), 9, "{fig:#}");
        assert_eq!(fig["processes"], serde_json::json!([3, 3, 3]), "{fig:#}");
    }
    // An A/A check: exit 1 would be a regression the noise made, not a failure.
    let compared = |out: &std::process::Output| {
        assert!(matches!(out.status.code(), Some(0 | 1)), "{out:?}");
    };
    let out = with_dir(
        &bl,
        &sweep(p, &["--baseline", "a", "--processes", "2", "--json"]),
    );
    compared(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let against = &doc["baseline"];
    assert_eq!(against["processes"], 2, "{against:#}");
    assert_eq!(against["figures"][0]["old"]["n"], 9, "{against:#}");
    assert_eq!(against["figures"][0]["new"]["n"], 6, "{against:#}");
    let out = with_dir(&bl, &sweep(p, &["--baseline", "a", "--processes", "2"]));
    compared(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("now over 2 processes"), "{text}");
    let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("over runs, as if each were independent: 2 processes are too few"),
        "{text}"
    );
    // Four processes a side: the interval and the noise are drawn over processes.
    ok(&with_dir(
        &bl,
        &sweep(p, &["--save-baseline", "c", "--processes", "4"]),
    ));
    let out = with_dir(
        &bl,
        &sweep(p, &["--baseline", "c", "--processes", "4", "--json"]),
    );
    compared(&out);
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    for fig in doc["baseline"]["figures"].as_array().unwrap() {
        assert_eq!(fig["processes"], 4, "{fig:#}");
        assert_eq!(fig["new"]["n"], 12, "{fig:#}");
    }
    let out = with_dir(&bl, &sweep(p, &["--baseline", "c", "--processes", "4"]));
    compared(&out);
    let words = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        words.contains("intervals and noise over processes, 4 a side at least"),
        "{words}"
    );
    for extra in [
        &["--processes", "2"][..],
        &["--save-baseline", "b", "--processes", "0"][..],
        &["--save-baseline", "b", "--processes", "21"][..],
    ] {
        let out = with_dir(&bl, &sweep(p, extra));
        assert!(!out.status.success(), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--processes"), "{err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert!(!bl.join("sweep-b.json").exists());
}
