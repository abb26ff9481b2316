//! `ioscope disk --profile/--preset/--list`: each profile's rows (threads capped at the
//! cores and said, the default panel's T>1 row only from 4 cores and said when left out,
//! KDiskMark's Mix after the random row of its three profiles, set against its pure rows),
//! the presets list, the fsync preset's JSON (write and fdatasync latency apart, the target
//! and the verdict, the exit code that follows it), and one-line errors for bad values.
//! Runtimes are tiny; tests never assert timings.

use crate::common;

use crate::common::{ioscope, json_of, scratch_files, usage_error};
use serde_json::Value;
use std::path::Path;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// `NAME direction` of every row of a result (`RND4K Q1T1 mix 70/30`).
fn row_names(doc: &Value) -> Vec<String> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let dir = match r["spec"]["mix"].as_u64() {
                Some(p) => format!("mix {p}/{}", 100 - p),
                None => r["spec"]["op"].as_str().unwrap().to_string(),
            };
            format!("{} {dir}", r["name"].as_str().unwrap())
        })
        .collect()
}

fn panel(dir: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "disk",
        dir.to_str().unwrap(),
        "--size",
        "2m",
        "--runtime",
        "0.02s",
        "--seed",
        "3",
    ];
    args.extend_from_slice(extra);
    json_of(&args)
}

#[test]
fn the_real_world_profile_runs_one_io_at_a_time_and_kdiskmarks_mix() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = panel(dir.path(), &["--profile", "real-world"]);
    assert_eq!(
        row_names(&doc),
        [
            "SEQ1M Q1T1 read",
            "SEQ1M Q1T1 write",
            "RND4K Q1T1 read",
            "RND4K Q1T1 write",
            "RND4K Q1T1 mix 70/30"
        ]
    );
    assert!(doc.get("notes").is_none(), "nothing changed: {doc}");
    // The Mix is measured by direction and set against the pure rows before it.
    let mix = &doc["rows"][4];
    assert_eq!(mix["mix"]["read_percent"], 70, "{mix}");
    let text = common::report_text(&doc);
    let said = text
        .lines()
        .find(|l| l.starts_with("mix "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        said.contains("RND4K Q1T1 mix 70/30: ") && said.contains("the pure rows predict"),
        "{said}"
    );
}

#[test]
fn mix_sets_the_share_of_a_profiles_mix_row_without_repeating_it() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = panel(dir.path(), &["--profile", "real-world", "--mix", "50"]);
    assert_eq!(
        row_names(&doc),
        [
            "SEQ1M Q1T1 read",
            "SEQ1M Q1T1 write",
            "SEQ1M Q1T1 mix 50/50",
            "RND4K Q1T1 read",
            "RND4K Q1T1 write",
            "RND4K Q1T1 mix 50/50"
        ]
    );
}

#[test]
fn the_peak_profile_caps_its_sixteen_threads_at_the_cores_and_says_so() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = panel(dir.path(), &["--preset", "peak"]);
    let threads = cores().min(16);
    let random = format!("RND4K Q32T{threads}");
    assert_eq!(
        row_names(&doc),
        [
            "SEQ1M Q8T1 read".to_string(),
            "SEQ1M Q8T1 write".to_string(),
            format!("{random} read"),
            format!("{random} write"),
            format!("{random} mix 70/30"),
        ]
    );
    assert_eq!(doc["rows"][2]["spec"]["threads"], threads);
    if cores() < 16 {
        let note = &doc["notes"][0];
        assert_eq!(note["kind"], "capped", "{doc}");
        assert_eq!(note["asked"], "RND4K Q32T16");
        assert_eq!(note["ran"], random.as_str());
        let text = common::report_text(&doc);
        assert!(
            text.contains(&format!(
                "note      RND4K Q32T16 asks for more threads than the {} core(s) here: run as {random}",
                cores()
            )),
            "{text}"
        );
    } else {
        assert!(doc.get("notes").is_none(), "{doc}");
    }
}

#[test]
fn the_default_profile_has_a_half_the_cores_row_only_from_four_cores() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = panel(dir.path(), &["--profile", "default"]);
    let names = row_names(&doc);
    assert_eq!(names[..9], common_panel());
    if cores() >= 4 {
        assert_eq!(names.len(), 11);
        assert_eq!(names[9], format!("RND4K Q32T{} read", cores() / 2));
    } else {
        assert_eq!(names.len(), 9);
        assert_eq!(doc["notes"][0]["kind"], "left_out", "{doc}");
        let text = common::report_text(&doc);
        assert!(
            text.contains("note      RND4K Q32T<cores/2> left out:"),
            "{text}"
        );
    }
    // No profile at all is the default one.
    let plain = panel(dir.path(), &[]);
    assert_eq!(row_names(&plain), names);
}

fn common_panel() -> Vec<String> {
    [
        "SEQ1M Q8T1 read",
        "SEQ1M Q8T1 write",
        "SEQ1M Q1T1 read",
        "SEQ1M Q1T1 write",
        "RND4K Q32T1 read",
        "RND4K Q32T1 write",
        "RND4K Q32T1 mix 70/30",
        "RND4K Q1T1 read",
        "RND4K Q1T1 write",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn disk_list_prints_every_preset_without_a_path() {
    let out = ioscope().args(["disk", "--list"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "default",
        "peak",
        "real-world",
        "nvme",
        "fsync",
        "sync-methods",
    ] {
        assert!(text.contains(name), "{name}: {text}");
    }
    assert!(text.contains("2,300-byte writes"), "{text}");
    assert!(text.contains("8 KiB writes, 1 and 2 per sync"), "{text}");
}

#[test]
fn the_fsync_preset_reports_write_and_fdatasync_latency_apart_with_a_verdict() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let out = ioscope()
        .args(["disk", dir.path().to_str().unwrap(), "--preset", "fsync"])
        .args(["--size", "1m", "--runtime", "0.2s", "--json"])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stderr));
    });
    assert_eq!(doc["schema"], "ioscope/disk-fsync/v2");
    assert_eq!(doc["block_bytes"], 2300);
    let writes = doc["writes"].as_u64().unwrap();
    assert!(writes > 0);
    assert_eq!(doc["bytes"].as_u64().unwrap(), writes * 2300);
    for key in ["write_latency_us", "fdatasync_latency_us"] {
        let l = &doc[key];
        let values: Vec<f64> = ["p50", "p90", "p99", "p99_9", "p99_99", "max"]
            .iter()
            .map(|k| l[k].as_f64().unwrap_or_else(|| panic!("{key}.{k}: {l}")))
            .collect();
        assert!(values[0] > 0.0, "{key}: {l}");
        assert!(values.windows(2).all(|w| w[0] <= w[1]), "{key}: {l}");
    }
    assert_eq!(
        doc["target"]["limit_us"], 10000.0,
        "etcd's 10 ms by default"
    );
    assert_eq!(doc["target"]["percentile"], "p99");
    let verdict = doc["verdict"].as_str().unwrap();
    assert!(
        ["under", "at_target", "over", "no_device"].contains(&verdict),
        "{verdict}"
    );
    // The exit code follows the verdict: 1 only for a clear miss.
    assert_eq!(
        out.status.code(),
        Some(if verdict == "over" { 1 } else { 0 })
    );
    assert_eq!(doc["device_name"].is_null(), verdict == "no_device");
    assert!(
        scratch_files(dir.path()).is_empty(),
        "the scratch file is gone"
    );
    let text = common::report_text(&doc);
    assert!(text.contains("verdict   fdatasync p99"), "{text}");
}

#[test]
fn the_fsync_target_takes_a_time_and_a_percentile() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&[
        "disk",
        dir.path().to_str().unwrap(),
        "--preset",
        "fsync",
        "--size",
        "1m",
        "--runtime",
        "0.05s",
        "--fsync-target",
        "1h:p99.9",
    ]);
    assert_eq!(doc["target"]["limit_us"], 3.6e9);
    assert_eq!(doc["target"]["percentile"], "p99_9");
    assert_ne!(doc["verdict"], "over");
}

#[test]
fn bad_presets_and_their_options_are_one_line_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let file = common::file_with(dir.path(), "mine", &common::pattern(1 << 20));
    let f = file.to_str().unwrap();
    let series = dir.path().join("s.jsonl");
    let series = series.to_str().unwrap();
    let cases: [(&[&str], &str); 10] = [
        // The fsync preset runs once: a count or budget would be silently ignored.
        (
            &[d, "--preset", "fsync", "--repeat", "3"],
            "the fsync preset runs once",
        ),
        (
            &[d, "--preset", "fsync", "--max-runs", "4"],
            "the fsync preset runs once",
        ),
        (
            &[d, "--preset", "fsync", "--best"],
            "the fsync preset runs once",
        ),
        (&[d, "--preset", "turbo"], "no preset 'turbo'"),
        // The series follows the panel's rows; the curve and the fsync preset have none.
        (
            &[d, "--depth-curve", "--series", series],
            "--series follows the panel's rows",
        ),
        (
            &[d, "--preset", "fsync", "--series", series],
            "--series follows the panel's rows",
        ),
        (&[d, "--preset", "peak", "--bs", "8k"], "sets its own rows"),
        (&[d, "--fsync-target", "10ms"], "--preset fsync"),
        (
            &[d, "--preset", "fsync", "--fsync-target", "soon"],
            "--fsync-target 'soon'",
        ),
        (&[f, "--preset", "fsync"], "give a directory"),
    ];
    for (args, expected) in cases {
        let mut all = vec!["disk"];
        all.extend_from_slice(args);
        let err = usage_error(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(scratch_files(dir.path()).is_empty());
    assert!(
        !Path::new(series).exists(),
        "no series file left by a refused run"
    );
}
