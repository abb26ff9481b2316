//! `ioscope compare`: every contender's raw figures, with and without fio.

use crate::common::*;

fn compare_json(args: &[&str], path_env: Option<&str>) -> serde_json::Value {
    let mut cmd = ioscope();
    cmd.args(["compare"]).args(args).arg("--json");
    if let Some(p) = path_env {
        cmd.env("PATH", p);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A PATH holding only dd and cat, so fio (and anything else) is missing.
fn path_without_fio(dir: &std::path::Path) -> String {
    for tool in ["dd", "cat"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|d| std::path::Path::new(d).join(tool))
            .find(|p| p.exists());
        if let Some(src) = found {
            std::os::unix::fs::symlink(src, dir.join(tool)).unwrap();
        }
    }
    dir.display().to_string()
}

#[test]
fn every_contender_reports_the_whole_file_and_the_best_has_ratio_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4 << 20));
    let v = compare_json(
        &[
            path.to_str().unwrap(),
            "--repeat",
            "1",
            "--cache",
            "warm",
            "--block-size",
            "256k",
        ],
        None,
    );
    assert_eq!(v["schema"], "ioscope/compare/v2");
    let rows = v["rows"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["contender"].as_str().unwrap())
        .collect();
    for expected in [
        "ioscope run -r 256k",
        "ioscope fast",
        "dd bs=256k",
        "dd bs=256k iflag=direct",
        "cat",
    ] {
        assert!(names.contains(&expected), "{expected} in {names:?}");
    }
    for row in rows {
        let run = &row["runs"][0];
        assert_eq!(run["bytes"], 4 << 20, "{row}");
        assert!(run["seconds"].as_f64().unwrap() > 0.0);
        assert!(run["wall_seconds"].as_f64().unwrap() > 0.0);
    }
    let best = rows
        .iter()
        .map(|r| r["ratio_to_best"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert!((best - 1.0).abs() < 1e-9);
    assert!(
        v["contenders"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["argv"].as_array().unwrap().len() > 1)
    );
    // How dd counts is in the documents; the terminal ends with the ranking.
    let text = report_text(&v);
    assert!(!text.contains("dd prints decimal units"), "{text}");
    // "fastest" where the runs stand apart, else "first by the median".
    let last = text.trim_end().lines().last().unwrap();
    assert!(
        last.contains(": fastest ") || last.contains(": first by the median "),
        "{text}"
    );
}

#[test]
fn without_fio_the_comparison_runs_and_says_fio_was_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let v = compare_json(
        &[path.to_str().unwrap(), "--repeat", "1", "--cache", "warm"],
        Some(&path_without_fio(bin.path())),
    );
    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        skipped
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("fio: not installed")),
        "{skipped:?}"
    );
    assert!(
        v["rows"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| !r["contender"].as_str().unwrap().starts_with("fio"))
    );
    assert!(v["rows"].as_array().unwrap().len() >= 4);
}

#[test]
fn with_fio_its_own_figures_are_parsed() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: fio is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(2 << 20));
    let v = compare_json(
        &[path.to_str().unwrap(), "--repeat", "1", "--cache", "warm"],
        None,
    );
    let fio: Vec<&serde_json::Value> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["contender"].as_str().unwrap().starts_with("fio"))
        .collect();
    let skipped = v["skipped"].as_array().unwrap();
    assert!(
        !fio.is_empty() || !skipped.is_empty(),
        "fio ran or said why not"
    );
    for row in fio {
        assert_eq!(row["runs"][0]["bytes"], 2 << 20, "{row}");
    }
}

#[test]
fn cold_runs_record_the_residency_they_started_from() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(2 << 20));
    let v = compare_json(
        &[path.to_str().unwrap(), "--repeat", "1", "--cache", "cold"],
        None,
    );
    for row in v["rows"].as_array().unwrap() {
        assert_eq!(row["cache"], "cold");
        let resident = row["runs"][0]["resident_share_before"].as_f64().unwrap();
        if resident > 0.05 {
            eprintln!("note: this file system keeps pages after eviction ({resident})");
            assert_eq!(
                row["state_ok"], false,
                "a cold run that was not cold is flagged"
            );
        }
    }
}

#[test]
fn bad_input_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", b"x");
    let empty = file_with(dir.path(), "e", b"");
    for (args, needle) in [
        (vec!["compare", "/nonexistent/f"], "/nonexistent/f"),
        (vec!["compare", "-"], "standard input"),
        (
            vec!["compare", path.to_str().unwrap(), "--repeat", "0"],
            "--repeat",
        ),
        (vec!["compare", empty.to_str().unwrap()], "non-empty"),
        (
            vec!["compare", path.to_str().unwrap(), "--block-size", "0"],
            "greater than zero",
        ),
    ] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(one_line_stderr(&out).contains(needle), "{args:?}");
    }
}

#[test]
fn svg_draws_the_readers_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let svg = dir.path().join("c.svg");
    let out = ioscope()
        .args([
            "compare",
            path.to_str().unwrap(),
            "--cache",
            "warm",
            "--repeat",
            "1",
            "--svg",
        ])
        .arg(&svg)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<svg") || text.contains("<svg"),
        "{text:.200}"
    );
    assert!(text.contains("ioscope fast"), "a bar group per reader");
    assert!(text.matches("<rect").count() > 3, "bars were drawn");
}

#[test]
fn report_svg_of_a_result_without_a_chart_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(10_000));
    let out = ioscope()
        .args(["run", "-r", path.to_str().unwrap(), "4k", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let saved = dir.path().join("run.json");
    std::fs::write(&saved, &out.stdout).unwrap();
    let svg = dir.path().join("run.svg");
    let out = ioscope()
        .arg("report")
        .arg(&saved)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("no chart"));
    assert!(!svg.exists());
}

#[test]
fn a_file_whose_name_is_not_utf8_and_holds_controls_and_a_colon_is_read_by_every_contender() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    // A tab, a terminal escape, fio's separator ':' and a byte that is no UTF-8.
    let name = std::ffi::OsStr::from_bytes(b"a\tb\x1b[31m:red\xff.bin");
    let path = dir.path().join(name);
    std::fs::write(&path, pattern(1 << 20)).unwrap();
    let out = ioscope()
        .current_dir(dir.path())
        .arg("compare")
        .arg(name)
        .args(["--cache", "warm", "--repeat", "1", "--block-size", "64k"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let text = String::from_utf8(out.stdout).unwrap();
    // The name reaches each tool as its bytes (they all read it), and the text escapes it.
    assert!(!text.contains("skipped: ioscope"), "{text}");
    assert!(!text.contains("skipped: cat"), "{text}");
    // O_DIRECT may be refused where the test runs (tmpfs); the name never is.
    assert!(!text.contains("No such file"), "{text}");
    assert!(!text.contains("total_file_size"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\t'), "{text}");
    assert!(text.contains("a\\tb\\u{1b}[31m:red"), "{text}");
    for contender in ["ioscope fast", "dd bs=64k", "cat"] {
        assert!(text.contains(contender), "{contender}: {text}");
    }
    // The JSON document is valid, its rows every contender's.
    let out = ioscope()
        .current_dir(dir.path())
        .arg("compare")
        .arg(name)
        .args([
            "--cache",
            "warm",
            "--repeat",
            "1",
            "--block-size",
            "64k",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let rows = doc["rows"].as_array().unwrap();
    let ran = |name: &str| rows.iter().any(|r| r["contender"] == name);
    assert!(ran("ioscope run -r 64k") && ran("ioscope fast") && ran("cat"));
    assert!(ran("dd bs=64k"), "{}", doc["skipped"]);
    let fio = !doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s.as_str().unwrap().starts_with("fio: not installed"));
    assert!(!fio || ran("fio psync bs=64k"), "{}", doc["skipped"]);
    assert!(
        doc["file"]
            .as_str()
            .unwrap()
            .starts_with("a\tb\u{1b}[31m:red")
    );
}

/// Compares `path` (warm, two runs each) with FIXED_METER meddling as the third run starts.
fn compare_meddled(
    path: &std::path::Path,
    meddle: impl FnOnce() + Send + 'static,
) -> anyhow::Result<ioscope::cmd::compare::CompareReport> {
    let argv = [
        "compare",
        path.to_str().unwrap(),
        "--cache",
        "warm",
        "--repeat",
        "2",
        "--block-size",
        "64k",
    ];
    let options = match command_of(&argv) {
        ioscope::cli::Command::Compare(a) => {
            ioscope::options::CompareOptions::from_args(&a).expect("valid options")
        }
        _ => unreachable!("a compare command line"),
    };
    let meter = MeddlingMeter::new(2, meddle);
    let harness = ioscope::harness::Harness {
        meter: &meter,
        progress: &ioscope::harness::NoProgress,
    };
    let result = ioscope::cmd::compare::execute(&options, &harness, &mut |_| Ok(()));
    assert!(meter.meddled(), "the third run started");
    result
}

#[test]
fn a_file_replaced_grown_or_shrunk_between_runs_stops_the_comparison_in_one_line() {
    type Meddle = fn(&std::path::Path, &std::path::Path);
    let meddles: [(&str, Meddle); 3] = [
        ("swapped for a link", |p, other| {
            std::fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink(other, p).unwrap();
        }),
        ("grown", |p, _| {
            let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
            std::io::Write::write_all(&mut f, &[7u8; 4096]).unwrap();
        }),
        ("shrunk", |p, _| {
            std::fs::OpenOptions::new()
                .write(true)
                .open(p)
                .unwrap()
                .set_len(4096)
                .unwrap();
        }),
    ];
    for (what, meddle) in meddles {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(dir.path(), "f", &pattern(1 << 20));
        let other = file_with(dir.path(), "other", &pattern(3 << 20));
        let p = path.clone();
        // Before, the tools read whatever was at the name: a row mixed two files' runs.
        let e = compare_meddled(&path, move || meddle(&p, &other)).expect_err(what);
        let said = format!("{e:#}");
        assert!(
            said.contains("the file at this name changed during the comparison"),
            "{what}: {said}"
        );
        assert_eq!(said.lines().count(), 1, "{what}: {said}");
    }
}
