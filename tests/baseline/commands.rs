//! The same round on every measuring command that keeps baselines (`cache`, `compare`,
//! `disk`, its depth curve and fsync preset, `study`; `sweep` and `run` are in
//! `compare.rs`, `fast` below): the result saved as one JSON file holding every run,
//! compared with itself (`baseline` in the JSON document), then with a copy crafted 10x
//! better (the section in the text, its answer last, exit 1 on a regression) and one 10x
//! worse (never a regression, exit 0). No test depends on a timing: where the
//! deterministic meter times a figure it must regress and improve; where the clock does
//! (dd, disk, the study), the exit must agree with the verdicts and a tenfold change must
//! never be read the wrong way, however the runs scatter.

use super::storage::with_dir;
use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// The baseline document at `path`.
fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// How much better (or worse) a crafted baseline is than the one it was made from: far
/// beyond what a clock-measured figure swings between a save and its check on a loaded
/// machine (in one CI run `dd iflag=direct` on a 256 KiB file went from 12 MB/s at the save
/// to 570 MB/s at the check, so a baseline only ten times better was beaten).
const FAR: f64 = 1000.0;

/// Writes a copy of baseline `from` of `command` in `dir` as baseline `to`, with every run
/// of every figure `factor` times better (a rate multiplied, a time divided).
pub fn crafted(dir: &Path, command: &str, from: &str, to: &str, factor: f64) {
    let mut doc = read(&dir.join(format!("{command}-{from}.json")));
    doc["name"] = Value::from(to);
    for f in doc["figures"].as_array_mut().unwrap() {
        let higher = f["higher_is_better"].as_bool().unwrap();
        for run in f["runs"].as_array_mut().unwrap() {
            let v = run.as_f64().unwrap();
            *run = Value::from(if higher { v * factor } else { v / factor });
        }
    }
    std::fs::write(dir.join(format!("{command}-{to}.json")), doc.to_string()).unwrap();
}

/// `args` with `extra` after them.
fn with<'a>(args: &[&'a str], extra: &[&'a str]) -> Vec<&'a str> {
    [args, extra].concat()
}

/// The last line printed on stdout.
fn last_line(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().last().unwrap_or_default().to_string()
}

/// Whether a run's exit says what its verdicts say: 1 when a figure regressed, else 0.
fn exit_agrees(out: &std::process::Output, regressed: bool) {
    let code = out.status.code();
    assert_eq!(
        code,
        Some(i32::from(regressed)),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The whole round on `args` (a command whose baselines are named `command`); the saved
/// document, for checks of its own. Where the command times with the real clock its runs
/// may move between two runs of the test: the checks are then that the exit agrees with
/// the verdicts and that a tenfold change is never read the wrong way. `sure`: a figure
/// the deterministic meter times, which must regress against the copy 10x better and
/// improve against the one 10x worse.
pub fn round(command: &str, args: &[&str], sure: Option<&str>) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &with(args, &["--save-baseline", "a"])));
    let names: Vec<String> = std::fs::read_dir(&bl)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [format!("{command}-a.json")], "one file");
    let saved = read(&bl.join(format!("{command}-a.json")));
    assert_eq!(saved["schema"], "ioscope/baseline/v1");
    assert_eq!(saved["command"], command);
    assert!(saved["environment"]["kernel"].is_string(), "{saved}");
    assert!(saved["result"].is_object(), "the whole result is kept");
    let figures = saved["figures"].as_array().unwrap().clone();
    assert!(!figures.is_empty(), "{saved}");
    for f in &figures {
        assert!(!f["runs"].as_array().unwrap().is_empty(), "{f}");
    }
    let first = figures[0]["key"].as_str().unwrap().to_string();

    // Again, as JSON: every figure compared, in the result's order.
    let out = with_dir(&bl, &with(args, &["--baseline", "a", "--json"]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let against = &doc["baseline"];
    assert_eq!(against["name"], "a");
    let compared = against["figures"].as_array().unwrap();
    assert_eq!(compared.len(), figures.len(), "{doc}");
    assert_eq!(compared[0]["key"], figures[0]["key"]);
    exit_agrees(&out, compared.iter().any(|c| c["verdict"] == "regressed"));

    // Far better: never an improvement, and exit 1 exactly when a figure regressed.
    crafted(&bl, command, "a", "better", FAR);
    crafted(&bl, command, "a", "worse", 1.0 / FAR);
    let out = with_dir(&bl, &with(args, &["--baseline", "better", "--json"]));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let compared = doc["baseline"]["figures"].as_array().unwrap();
    assert!(compared.iter().all(|c| c["verdict"] != "improved"), "{doc}");
    exit_agrees(&out, compared.iter().any(|c| c["verdict"] == "regressed"));
    if let Some(key) = sure {
        let c = compared.iter().find(|c| c["key"] == key).unwrap();
        assert_eq!(c["verdict"], "regressed", "{c}");
    }
    // In text: the section after the result, its answer last, naming what regressed.
    let out = with_dir(&bl, &with(args, &["--baseline", "better"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("\nagainst baseline better (saved "), "{text}");
    assert!(text.contains(&first), "{text}");
    let line = last_line(&out);
    exit_agrees(&out, line.contains(" regressed: "));
    assert!(!line.contains("improved"), "{line}");
    if sure.is_some() {
        assert!(line.contains(" regressed: "), "{line}");
    }

    // Far worse: never a regression, so exit 0.
    let out = with_dir(&bl, &with(args, &["--baseline", "worse"]));
    ok(&out);
    let line = last_line(&out);
    assert!(!line.contains("regressed"), "{line}");
    if sure.is_some() {
        assert!(line.contains(" improved: "), "{line}");
    }
    saved
}

#[test]
fn cache_keeps_every_cold_and_warm_read_and_a_regression_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let saved = round(
        "cache",
        &["cache", p, "--block-size", "64k", "--repeat", "3"],
        Some("read warm 64 KiB"),
    );
    let keys: Vec<&str> = saved["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["read cold 64 KiB", "read warm 64 KiB"]);
    // Each cycle's first cold read and cold again are two runs of the cold figure.
    assert_eq!(saved["figures"][0]["runs"].as_array().unwrap().len(), 6);
    assert_eq!(saved["figures"][1]["runs"].as_array().unwrap().len(), 3);
}

#[test]
fn compare_keeps_every_contenders_runs_and_a_regression_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let saved = round(
        "compare",
        &["compare", p, "--block-size", "64k", "--repeat", "3"],
        // cat's time is the deterministic meter's; dd's and ioscope's are the clock's.
        Some("cat warm"),
    );
    for f in saved["figures"].as_array().unwrap() {
        assert_eq!(f["runs"].as_array().unwrap().len(), 3, "{f}");
    }
}

#[test]
fn disk_keeps_every_run_of_its_rows_and_exits_as_its_verdicts_say() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let saved = round(
        "disk",
        &[
            "disk",
            d,
            "--size",
            "4m",
            "--runtime",
            "0.05s",
            "--rw",
            "read",
            "--min-free",
            "0",
            "--repeat",
            "3",
        ],
        None,
    );
    for f in saved["figures"].as_array().unwrap() {
        assert_eq!(f["runs"].as_array().unwrap().len(), 3, "{f}");
    }
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn the_depth_curve_keeps_each_depths_iops_and_exits_as_its_verdicts_say() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let saved = round(
        "disk-curve",
        &[
            "disk",
            d,
            "--depths",
            "1,2",
            "--size",
            "4m",
            "--runtime",
            "0.05s",
            "--min-free",
            "0",
            "--repeat",
            "3",
        ],
        None,
    );
    let figures = saved["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 2, "one per depth: {saved}");
    for f in figures {
        assert_eq!(f["unit"], "iops");
        assert_eq!(f["runs"].as_array().unwrap().len(), 3, "{f}");
    }
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn the_fsync_preset_keeps_its_figures_and_one_run_tells_nothing_apart() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let saved = round(
        "disk-fsync",
        &[
            "disk",
            d,
            "--preset",
            "fsync",
            "--size",
            "4m",
            "--runtime",
            "0.05s",
            "--min-free",
            "0",
            // The verdict on fdatasync is not this test's: a busy machine must not fail it.
            "--fsync-target",
            "10s",
        ],
        None,
    );
    let figures = saved["figures"].as_array().unwrap();
    let keys: Vec<&str> = figures.iter().map(|f| f["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["fdatasync p99", "write + fdatasync pairs"]);
    assert_eq!(figures[0]["unit"], "seconds");
    assert_eq!(figures[0]["higher_is_better"], false);
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn a_panel_baseline_is_not_a_curve_baseline() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let bl = dir.path().join("bl");
    let curve = [
        "disk",
        d,
        "--depths",
        "1",
        "--size",
        "4m",
        "--runtime",
        "0.02s",
        "--min-free",
        "0",
    ];
    ok(&with_dir(&bl, &with(&curve, &["--save-baseline", "a"])));
    std::fs::rename(bl.join("disk-curve-a.json"), bl.join("disk-a.json")).unwrap();
    let out = with_dir(
        &bl,
        &[
            "disk",
            d,
            "--rw",
            "read",
            "--size",
            "4m",
            "--runtime",
            "0.02s",
            "--min-free",
            "0",
            "--baseline",
            "a",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("disk-a.json") && line.contains("`disk … --depth-curve`"),
        "{line}"
    );
    assert!(out.stdout.is_empty(), "nothing measured");
}

#[test]
fn a_study_keeps_its_parts_figures_and_its_page_shows_the_comparison() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let out = dir.path().join("out");
    let (d, o) = (d.to_str().unwrap(), out.to_str().unwrap());
    let saved = round(
        "study",
        &[
            "study", d, "--level", "quick", "--only", "cache", "--size", "1m", "-q", "--force",
            "-o", o,
        ],
        None,
    );
    let keys: Vec<&str> = saved["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["key"].as_str().unwrap())
        .collect();
    assert!(keys.contains(&"cache: read cold 1 MiB"), "{keys:?}");
    // The last run of the round was against the copy 10x worse: its page, Markdown and
    // study.json carry that comparison.
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    let section = between(&page, "<section class=\"part baseline\"", "</section>");
    assert!(section.contains("Against baseline worse"), "{section}");
    assert!(
        section.contains("<table>") && section.contains("<td>cache: read cold 1&nbsp;MiB</td>"),
        "{section}"
    );
    assert!(!section.contains("regressed"), "{section}");
    assert!(
        page.contains("<a href=\"#baseline\">"),
        "linked from the contents"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains("against baseline worse") && md.contains("| cache: read cold 1 MiB"),
        "{md}"
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(doc["baseline"]["name"], "worse");
}

#[test]
fn fast_keeps_its_checksum_alone_on_stdout_and_says_the_comparison_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let xor = format!("{}\n", reference_xor(&pattern(256 << 10)));
    let bl = dir.path().join("bl");
    let args = ["fast", p, "--repeat", "3"];
    ok(&with_dir(&bl, &with(&args, &["--save-baseline", "a"])));
    crafted(&bl, "fast", "a", "better", FAR);
    let out = with_dir(&bl, &with(&args, &["--baseline", "better"]));
    // `$(ioscope fast f --baseline a)` is still the XOR, as CONVENTIONS promise.
    assert_eq!(String::from_utf8_lossy(&out.stdout), xor);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("against baseline better"), "{stderr}");
    // fast times with the clock, and a 256 KiB read scatters: regressed (exit 1) or
    // within the noise (exit 0), as its last line says; never improved.
    let last = stderr.lines().last().unwrap();
    assert!(
        last == "1 of 1 figure regressed: read" || last.starts_with("no figure moved"),
        "{stderr}"
    );
    exit_agrees(&out, last.contains("regressed"));
}

#[test]
fn a_study_page_made_again_by_report_shows_its_comparison() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().join("d");
    std::fs::create_dir(&d).unwrap();
    let out = dir.path().join("out");
    let bl = dir.path().join("bl");
    let study = |o: &Path, extra: &[&str]| {
        let args = [
            "study",
            d.to_str().unwrap(),
            "--level",
            "quick",
            "--only",
            "write-read",
            "--size",
            "1m",
            "-q",
            "-o",
            o.to_str().unwrap(),
        ];
        with_dir(&bl, &with(&args, extra))
    };
    ok(&study(&dir.path().join("first"), &["--save-baseline", "a"]));
    // Single runs: nothing told apart, exit 0, and the comparison kept all the same.
    ok(&study(&out, &["--baseline", "a"]));
    let page = dir.path().join("again.html");
    ok(&ioscope()
        .arg("report")
        .arg(&out)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap());
    let page = std::fs::read_to_string(page).unwrap();
    let section = between(&page, "<section class=\"part baseline\"", "</section>");
    assert!(section.contains("Against baseline a"), "{section}");
    assert!(section.contains("no figure can be told apart"), "{section}");
}
