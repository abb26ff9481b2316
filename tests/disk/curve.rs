//! `ioscope disk --depth-curve / --depths / --latency-target`: one run per depth with its
//! IOPS, percentiles, the queue kept and the device's; the knee field; the chart; the
//! search for the deepest queue under a target, run for real with 200 ms steps and read off
//! a measured curve; `report` rendering it again; and one-line errors for bad values. The
//! knee's and the search's own cases (made-up curves, a fake device) are unit tests beside
//! them (src/measure/knee.rs, src/cmd/disk_curve.rs). Tests never assert timings.

use crate::common;

use crate::common::{ioscope, json_of, usage_error};
use serde_json::Value;

fn depths_of(points: &Value) -> Vec<u64> {
    points
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["spec"]["depth"].as_u64().unwrap())
        .collect()
}

/// Every point's percentiles are numbers rising from p50 to max, with I/Os and a queue.
fn assert_points(points: &Value) {
    for p in points.as_array().unwrap() {
        let l = &p["latency_us"];
        let values: Vec<f64> = ["p50", "p90", "p99", "p99_9", "p99_99", "max"]
            .iter()
            .map(|k| l[k].as_f64().unwrap_or_else(|| panic!("{k}: {l}")))
            .collect();
        assert!(values[0] > 0.0, "{l}");
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{l}");
        assert!(p["iops"].as_f64().unwrap() > 0.0, "{p}");
        assert!(p["mean_in_flight"].as_f64().unwrap() > 0.0, "{p}");
    }
}

#[test]
fn the_curve_runs_each_depth_asked_and_draws_iops_and_p99() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let svg = dir.path().join("qd.svg");
    let out = ioscope()
        .args(["disk", dir.path().to_str().unwrap(), "--depths", "4,1,2"])
        .args([
            "--size",
            "2m",
            "--runtime",
            "0.05s",
            "--repeat",
            "2",
            "--seed",
            "5",
            "--json",
        ])
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "ioscope/disk-curve/v2");
    assert_eq!(depths_of(&doc["points"]), [1, 2, 4]);
    assert_eq!(doc["spec"]["random"], true);
    assert_eq!(doc["spec"]["block"], 4096);
    assert_points(&doc["points"]);
    for p in doc["points"].as_array().unwrap() {
        assert_eq!(p["verify"]["bad_blocks"], 0, "{p}");
        assert_eq!(p["runs"].as_array().map(Vec::len), Some(2), "{p}");
    }
    match doc["knee_depth"].as_u64() {
        None => {}
        Some(k) => assert!([1, 2, 4].contains(&k), "{k}"),
    }
    assert!(doc["search"].is_null());
    let chart = std::fs::read_to_string(&svg).unwrap();
    // "latency (µs, log scale)" where the p99s span far: the axis follows the numbers.
    for words in ["IOPS", "queue depth", "latency (µs", "p99"] {
        assert!(chart.contains(words), "{words}");
    }
    let text = common::report_text(&doc);
    assert!(text.contains("knee      "), "{text}");
    assert!(text.contains("2 runs each, median IOPS"), "{text}");
    assert!(
        text.contains("queue     depth 4: asked 4 in flight"),
        "{text}"
    );
}

#[test]
fn the_default_curve_is_depth_1_to_128_in_powers_of_two() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--depth-curve",
        "--size",
        "2m",
        "--runtime",
        "0.02s",
    ]);
    assert_eq!(depths_of(&doc["points"]), [1, 2, 4, 8, 16, 32, 64, 128]);
    assert_points(&doc["points"]);
}

#[test]
fn the_latency_target_search_bisects_with_short_real_runs() {
    // Every depth keeps p99 under an hour: the bisection goes 16, 64, 128 and answers 128.
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--latency-target",
        "1h",
        "--size",
        "2m",
        "--runtime",
        "200ms",
    ]);
    assert!(
        doc["points"].as_array().unwrap().is_empty(),
        "no curve asked"
    );
    let s = &doc["search"];
    assert_eq!(s["target"]["limit_us"], 3.6e9);
    assert_eq!(s["target"]["percentile"], "p99");
    let steps: Vec<u64> = s["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|st| st["depth"].as_u64().unwrap())
        .collect();
    assert_eq!(steps, [16, 64, 128]);
    for st in s["steps"].as_array().unwrap() {
        assert_eq!(st["under"], true);
        assert_eq!(st["from_curve"], false);
        assert!(st["row"]["seconds"].as_f64().unwrap() > 0.0);
    }
    assert_eq!(s["depth"], 128);
    assert!(s["iops"].as_f64().unwrap() > 0.0);
    let text = common::report_text(&doc);
    assert!(
        text.contains("target    p99 ≤ 3600.0 s: depth 128"),
        "{text}"
    );
    assert!(text.contains("the deepest tried"), "{text}");
}

#[test]
fn a_search_over_a_measured_curve_reads_its_steps_off_it() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--depths",
        "1,2,4",
        "--latency-target",
        "1h:p99.9",
        "--size",
        "2m",
        "--runtime",
        "0.02s",
    ]);
    assert_eq!(depths_of(&doc["points"]), [1, 2, 4]);
    let s = &doc["search"];
    assert_eq!(s["target"]["percentile"], "p99_9");
    assert!(
        s["steps"]
            .as_array()
            .unwrap()
            .iter()
            .all(|st| st["from_curve"] == true),
        "{s}"
    );
    assert_eq!(s["depth"], 4);
}

#[test]
fn a_write_curve_runs_random_writes_when_asked() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--depths",
        "1,8",
        "--rw",
        "randwrite",
        "--size",
        "2m",
        "--runtime",
        "0.02s",
    ]);
    assert_eq!(doc["spec"]["op"], "write");
    assert_points(&doc["points"]);
    for p in doc["points"].as_array().unwrap() {
        assert!(p["fsync_seconds"].as_f64().is_some(), "{p}");
    }
}

#[test]
fn bad_curve_values_are_one_line_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 6] = [
        (
            &["--depths", "0"],
            "--depths '0': '0' is not a depth from 1 to 4096",
        ),
        (&["--depths", "1,x"], "'x' is not a depth"),
        (&["--depths", "5000"], "from 1 to 4096"),
        (
            &["--latency-target", "abc"],
            "--latency-target 'abc': not a time",
        ),
        (&["--latency-target", "2ms:p98"], "the percentile is one of"),
        (&["--latency-target", "0ms"], "above 0"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["disk", d];
        all.extend_from_slice(args);
        let err = usage_error(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing was written"
    );
}
