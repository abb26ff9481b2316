//! `report`: a saved document rendered again says what its numbers are (a record of 7 B is
//! not 7 records), prints no control character a document holds, stays within a bounded
//! size, and refuses to put a study beside itself.

use crate::common;
use crate::common::*;
use std::path::Path;
use std::process::Output;

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("UTF-8 output")
}

#[test]
fn a_record_size_is_said_with_its_unit_and_never_read_as_a_count_of_records() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("p");
    let t = target.to_str().unwrap();
    let out = in_dir(
        dir.path(),
        &[
            "patterns",
            t,
            "--size",
            "7000",
            "--record",
            "7",
            "--runs",
            "1",
            "--tests",
            "write,read",
            "--cache",
            "warm",
            "--json",
        ],
    );
    let saved = dir.path().join("p.json");
    std::fs::write(&saved, stdout(&out)).unwrap();
    let md = dir.path().join("p.md");
    let text = stdout(&in_dir(
        dir.path(),
        &[
            "report",
            saved.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    ));
    assert!(text.contains("1,000 records of 7 B each"), "{text}");
    assert!(!text.contains(" 7 records"), "{text}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(!md.contains(" 7 records"), "{md}");
    assert!(md.contains("| record size |"), "{md}");
    assert!(md.contains("| 7 B |"), "{md}");
}

/// A quick study of a small scratch file, saved in `out` (study.json and the rest).
fn quick_study(cwd: &Path, out: &Path) {
    let o = in_dir(
        cwd,
        &[
            "study",
            cwd.to_str().unwrap(),
            "--level",
            "quick",
            "--only",
            "write-read",
            "--size",
            "1m",
            "--block-sizes",
            "64k,1m",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn the_same_study_named_twice_in_any_way_is_refused_and_a_copy_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    let a = cwd.join("a");
    quick_study(cwd, &a);
    let json = a.join("study.json");
    let link = cwd.join("link.json");
    std::os::unix::fs::symlink(&json, &link).unwrap();
    let dir_link = cwd.join("a-link");
    std::os::unix::fs::symlink(&a, &dir_link).unwrap();
    let hard = cwd.join("hard.json");
    std::fs::hard_link(&json, &hard).unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    for (first, second) in [
        (s(&a), s(&json)),
        (s(&json), s(&a)),
        (s(&a), s(&link)),
        (s(&dir_link), s(&a)),
        (s(&hard), s(&a)),
        (s(&a), format!("{}/.", s(&a))),
    ] {
        let page = cwd.join("twice.html");
        let out = in_dir(
            cwd,
            &["report", &first, &second, "-o", page.to_str().unwrap()],
        );
        assert_eq!(out.status.code(), Some(2), "{first} {second}");
        let line = one_line_stderr(&out);
        assert!(
            line.contains("same study") || line.contains("twice"),
            "{first} {second}: {line}"
        );
        assert!(!page.exists(), "no page compares a study with itself");
    }
    // A copy is another file with the same bytes: compared, but said.
    let copy = cwd.join("copy");
    std::fs::create_dir(&copy).unwrap();
    std::fs::copy(&json, copy.join("study.json")).unwrap();
    let page = cwd.join("copy.html");
    let out = in_dir(
        cwd,
        &["report", &s(&a), &s(&copy), "-o", page.to_str().unwrap()],
    );
    assert!(out.status.success(), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("holds the same document as"), "{stderr}");
    assert!(page.exists());
}

#[test]
fn control_characters_in_a_saved_document_are_printed_as_escapes() {
    const EVIL: &str = "ev\u{1b}[31mil\u{7}\nforged line\r\u{9b}\u{7f}";
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path();
    // A patterns result: text and Markdown.
    let target = cwd.join("p");
    let out = in_dir(
        cwd,
        &[
            "patterns",
            target.to_str().unwrap(),
            "--size",
            "64k",
            "--runs",
            "1",
            "--tests",
            "write,read",
            "--cache",
            "warm",
            "--json",
        ],
    );
    let mut doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let evil = serde_json::Value::from(EVIL);
    doc["command_line"] = serde_json::json!([EVIL, "patterns", EVIL]);
    doc["path"] = evil.clone();
    for field in ["version", "commit", "date"] {
        doc[field] = evil.clone();
    }
    let env = &mut doc["environment"];
    for field in ["kernel", "cpu_model", "path"] {
        env[field] = evil.clone();
    }
    for field in [
        "filesystem",
        "mount_point",
        "mount_source",
        "device",
        "scheduler",
    ] {
        env["storage"][field] = evil.clone();
    }
    let saved = cwd.join("evil.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    let md = cwd.join("evil.md");
    let text = stdout(&in_dir(
        cwd,
        &[
            "report",
            saved.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    ));
    let md = std::fs::read_to_string(&md).unwrap();
    for (what, out) in [("text", &text), ("Markdown", &md)] {
        assert_eq!(controls(out), [], "{what}: {out}");
        assert!(
            !out.lines().any(|l| l.starts_with("forged line")),
            "{what}: a line forged: {out}"
        );
        assert!(
            out.contains("u{1b}[31mil"),
            "{what}: the escape shown: {out}"
        );
    }
    // A study: text, and its HTML page.
    let study = cwd.join("s");
    quick_study(cwd, &study);
    let json = study.join("study.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    doc["dir"] = evil.clone();
    doc["command_line"] = serde_json::json!([EVIL]);
    doc["environment"]["kernel"] = evil.clone();
    std::fs::write(&json, doc.to_string()).unwrap();
    let text = stdout(&in_dir(cwd, &["report", json.to_str().unwrap()]));
    assert_eq!(controls(&text), [], "{text}");
    let page = cwd.join("page.html");
    let out = in_dir(
        cwd,
        &[
            "report",
            json.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(controls(&html), [], "HTML");
}

#[test]
fn a_document_far_larger_than_any_result_is_refused_in_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    // Sparse: no disk is used, and ioscope stops reading at its limit.
    let f = std::fs::File::create(&big).unwrap();
    f.set_len(129 << 20).unwrap();
    let out = ioscope().arg("report").arg(&big).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains(big.to_str().unwrap()), "{line}");
    assert!(line.contains("more than 128 MiB"), "{line}");
}

#[test]
fn a_document_of_millions_of_tiny_values_is_refused_before_it_is_built() {
    // 34 MB of text that would take hundreds of MiB as numbers (and GiB as a JSON tree).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zeros.json");
    let mut text = String::from(r#"{"schema": "ioscope/trace/v2", "files": ["#);
    text.push_str(&"0,".repeat(17 << 20));
    text.push_str("0]}");
    std::fs::write(&path, text).unwrap();
    let out = ioscope().arg("report").arg(&path).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains(path.to_str().unwrap()), "{line}");
    assert!(
        line.contains("values, more than a saved ioscope result holds"),
        "{line}"
    );
}

#[test]
fn deep_nesting_is_an_input_error_and_a_huge_string_renders() {
    let dir = tempfile::tempdir().unwrap();
    let deep = dir.path().join("deep.json");
    let nest = "[".repeat(200_000) + &"]".repeat(200_000);
    for text in [
        nest.clone(),
        format!(r#"{{"schema": "ioscope/run/v2", "x": {nest}}}"#),
        format!(r#"{{"x": {nest}, "schema": "ioscope/study/v3"}}"#),
    ] {
        std::fs::write(&deep, text).unwrap();
        let out = ioscope().arg("report").arg(&deep).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(one_line_stderr(&out).contains("not JSON"));
        let page = dir.path().join("deep.html");
        let out = ioscope()
            .arg("report")
            .arg(&deep)
            .arg(&deep)
            .arg("-o")
            .arg(&page)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
    }
    // A path of 16 MiB in a saved result: longer than anything ioscope writes, refused in
    // one short line naming the field.
    let target = dir.path().join("p");
    let out = ioscope()
        .args([
            "patterns",
            target.to_str().unwrap(),
            "--size",
            "64k",
            "--runs",
            "1",
        ])
        .args(["--tests", "read", "--cache", "warm", "--json"])
        .output()
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    doc["path"] = "x".repeat(16 << 20).into();
    let saved = dir.path().join("long.json");
    std::fs::write(&saved, doc.to_string()).unwrap();
    let out = ioscope().arg("report").arg(&saved).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = one_line_stderr(&out);
    assert!(line.contains("field 'path'") && line.len() < 400, "{line}");
}

#[test]
fn options_that_the_html_form_would_drop_are_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = format!(
        "{}/tests/fixtures/study-sentences.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let html = dir.path().join("page.html");
    let csv = dir.path().join("c.csv");
    let out = common::ioscope()
        .args(["report", &fixture, "--json", "-o"])
        .arg(&html)
        .arg("--csv")
        .arg(&csv)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = common::one_line_stderr(&out);
    assert!(line.contains("--json, --csv cannot go with -o"), "{line}");
    assert!(!html.exists() && !csv.exists());
}

#[test]
fn svg_of_a_study_without_a_chart_is_refused_before_any_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = format!(
        "{}/tests/fixtures/study-sentences.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    for part in ["read_sweep", "write_sweep", "cache", "patterns"] {
        doc[part] = serde_json::Value::Null;
    }
    let path = dir.path().join("study.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let csv = dir.path().join("c.csv");
    let svg = dir.path().join("s.svg");
    let out = common::ioscope()
        .arg("report")
        .arg(&path)
        .arg("--csv")
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = common::one_line_stderr(&out);
    assert!(line.contains("--svg: this result has no chart"), "{line}");
    assert!(!csv.exists() && !svg.exists(), "nothing is left written");
}

/// The saved fixture of `command` in tests/fixtures: `<command>.json`, or `<command>-*.json`
/// (the study's is `study-sentences.json`).
fn fixture_of(command: &str) -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let exact = dir.join(format!("{command}.json"));
    if exact.is_file() {
        return Some(exact);
    }
    let mut named: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(&format!("{command}-")) && name.ends_with(".json")
        })
        .collect();
    named.sort();
    named.into_iter().next()
}

#[test]
fn every_registered_result_is_read_back_by_report_under_its_own_schema() {
    use ioscope::report::view::schema;
    use ioscope::report::views::RESULTS;
    let dir = tempfile::tempdir().unwrap();
    for result in RESULTS {
        let schema = schema(result.command);
        // Only the schema: routed to its own type, which finds the rest missing (not refused
        // as unknown or older).
        let bare = dir.path().join(format!("{}.json", result.command));
        std::fs::write(&bare, format!(r#"{{"schema": "{schema}"}}"#)).unwrap();
        let out = ioscope().arg("report").arg(&bare).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{schema}: {out:?}");
        let line = one_line_stderr(&out);
        assert!(
            line.contains(&format!("not a valid {schema} document")),
            "{schema}: {line}"
        );
        // Its fixture renders. (mpi's comes with the golden tests of every schema; a build
        // without MPI cannot make one.)
        if let Some(fixture) = fixture_of(result.command) {
            let text = stdout(&ioscope().arg("report").arg(&fixture).output().unwrap());
            assert!(!text.is_empty(), "{schema}: {}", fixture.display());
        } else {
            assert_eq!(result.command, "mpi", "no fixture for {schema}");
        }
    }
}

#[test]
fn every_fixture_names_a_registered_schema() {
    use ioscope::report::view::schema;
    use ioscope::report::views::RESULTS;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let registered: Vec<String> = RESULTS.iter().map(|r| schema(r.command)).collect();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let named = doc["schema"].as_str().unwrap_or_default();
        // Older versions are kept to show they are refused clearly, never rendered wrong.
        let older = named.ends_with("/v1") || named == "ioscope/study/v2";
        assert!(
            older || registered.iter().any(|s| s == named),
            "{}: schema '{named}' is not registered",
            path.display()
        );
    }
}

#[test]
fn a_page_is_never_written_through_a_symbolic_link_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = format!(
        "{}/tests/fixtures/study-sentences.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"keep").unwrap();
    let link = dir.path().join("page.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    for force in [false, true] {
        let mut cmd = ioscope();
        cmd.args(["report", &fixture, "-o"]).arg(&link);
        if force {
            cmd.arg("--force");
        }
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        assert!(
            one_line_stderr(&out).contains("symbolic link"),
            "{}",
            one_line_stderr(&out)
        );
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    }
}

#[test]
fn a_forced_page_replaces_the_old_one_whole_and_leaves_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = format!(
        "{}/tests/fixtures/study-sentences.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let page = dir.path().join("page.html");
    std::fs::write(&page, b"old page").unwrap();
    let out = ioscope()
        .args(["report", &fixture, "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(one_line_stderr(&out).contains("file exists"));
    assert_eq!(
        std::fs::read(&page).unwrap(),
        b"old page",
        "kept without --force"
    );
    let out = ioscope()
        .args(["report", &fixture, "--force", "-o"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::read_to_string(&page)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["page.html"], "no temporary file left");
}

/// `text` (a JSON document) with the value of the first `"key": value` after `after` (a
/// text the document holds) replaced by `with`.
fn with_value(text: &str, after: &str, key: &str, with: &str) -> String {
    let from = text
        .find(after)
        .unwrap_or_else(|| panic!("{after} not in the document"));
    let pattern = format!("\"{key}\": ");
    let at = from
        + text[from..]
            .find(&pattern)
            .unwrap_or_else(|| panic!("{key} not after {after}"))
        + pattern.len();
    let end = at + text[at..].find([',', '\n', '}']).unwrap();
    format!("{}{with}{}", &text[..at], &text[end..])
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(fixture_path(name)).unwrap()
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Values no measurement gives (the largest and smallest doubles, subnormals, negatives).
const ABSURD: [&str; 6] = ["1e307", "1.7e308", "2.3e-308", "5e-324", "-1", "1e300"];

#[test]
fn an_absurd_disk_figure_in_a_study_is_refused_in_one_line_and_nothing_is_left() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("a.json");
    std::fs::write(&good, fixture("media-disk/tmpfs.json")).unwrap();
    let ext4 = fixture("media-disk/ext4.json");
    for (key, field) in [
        ("iops", "iops"),
        ("bytes_per_second", "bytes_per_second"),
        ("p99", "latency_us.p99"),
    ] {
        for value in ABSURD {
            let bad = dir.path().join("b.json");
            std::fs::write(&bad, with_value(&ext4, "\"disk\"", key, value)).unwrap();
            let page = dir.path().join("x.html");
            let out = in_dir(dir.path(), &["report", "a.json", "b.json", "-o", "x.html"]);
            assert_eq!(out.status.code(), Some(2), "{key} {value}: {out:?}");
            let line = one_line_stderr(&out);
            assert!(line.contains("b.json"), "{line}");
            assert!(line.contains(field), "{key} {value}: {line}");
            assert!(!page.exists());
            assert_eq!(names_in(dir.path()), ["a.json", "b.json"], "{key} {value}");
        }
    }
}

#[test]
fn an_absurd_figure_in_any_saved_result_is_refused_before_a_chart_is_drawn() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("disk.json", "\"rows\"", "iops", "iops"),
        (
            "disk.json",
            "\"rows\"",
            "bytes_per_second",
            "bytes_per_second",
        ),
        ("disk.json", "\"latency_us\"", "p99", "latency_us.p99"),
        ("sweep.json", "\"rate\"", "median", "rate.median"),
        (
            "mpi.json",
            "\"schema\"",
            "bytes_per_second",
            "bytes_per_second",
        ),
    ];
    for (file, after, key, field) in cases {
        for value in ABSURD {
            let saved = dir.path().join("saved.json");
            std::fs::write(&saved, with_value(&fixture(file), after, key, value)).unwrap();
            let out = in_dir(dir.path(), &["report", "saved.json", "--svg", "f.svg"]);
            assert_eq!(out.status.code(), Some(2), "{file} {key} {value}: {out:?}");
            let line = one_line_stderr(&out);
            assert!(
                line.contains("saved.json") && line.contains(field),
                "{line}"
            );
            assert_eq!(names_in(dir.path()), ["saved.json"], "{file} {key} {value}");
        }
    }
}

#[test]
fn a_negative_count_or_a_huge_device_name_is_refused_in_a_short_line() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("t.json");
    std::fs::write(
        &saved,
        with_value(&fixture("trace.json"), "\"close\"", "calls", "-3"),
    )
    .unwrap();
    let out = in_dir(dir.path(), &["report", "t.json"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(one_line_stderr(&out).contains("calls"), "{out:?}");
    let device = format!("\"{}\"", "d".repeat(1 << 20));
    std::fs::write(dir.path().join("a.json"), fixture("media-disk/tmpfs.json")).unwrap();
    for (file, args) in [
        (
            "media-disk/ext4.json",
            &["report", "a.json", "b.json", "-o", "x.html"][..],
        ),
        ("disk.json", &["report", "b.json", "--svg", "x.html"][..]),
    ] {
        let bad = dir.path().join("b.json");
        std::fs::write(
            &bad,
            with_value(&fixture(file), "\"storage\"", "device", &device),
        )
        .unwrap();
        let shown = "b.json";
        let out = in_dir(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let line = one_line_stderr(&out);
        assert!(line.contains(shown) && line.contains("device"), "{line}");
        assert!(line.len() < 400, "a short line: {} bytes", line.len());
        assert!(!dir.path().join("x.html").exists());
    }
}

#[test]
fn a_long_label_in_a_study_is_drawn_cut_short_and_the_page_stays_small() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), fixture("media-disk/tmpfs.json")).unwrap();
    let label = format!("\"{}\"", "L".repeat(100_000));
    let ext4 = with_value(
        &fixture("media-disk/ext4.json"),
        "\"schema\"",
        "label",
        &label,
    );
    std::fs::write(dir.path().join("b.json"), &ext4).unwrap();
    let out = in_dir(dir.path(), &["report", "a.json", "b.json", "-o", "x.html"]);
    assert!(out.status.success(), "{out:?}");
    let page = std::fs::read_to_string(dir.path().join("x.html")).unwrap();
    assert!(page.contains(&format!("{}…", "L".repeat(20))));
    assert!(!page.contains(&"L".repeat(200)));
    assert!(page.len() < 4 << 20, "{} bytes", page.len());
}

#[test]
fn a_too_long_label_given_is_echoed_short_in_its_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), fixture("media-disk/tmpfs.json")).unwrap();
    std::fs::write(dir.path().join("b.json"), fixture("media-disk/ext4.json")).unwrap();
    let label = format!("1={}", "x".repeat(100_000));
    let out = in_dir(
        dir.path(),
        &[
            "report", "a.json", "b.json", "--label", &label, "-o", "x.html",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = one_line_stderr(&out);
    assert!(
        line.contains("100000 characters") && line.len() < 400,
        "{line}"
    );
    assert_eq!(names_in(dir.path()), ["a.json", "b.json"]);
}

#[test]
fn legal_extreme_figures_draw_a_bounded_chart() {
    let dir = tempfile::tempdir().unwrap();
    let disk = fixture("disk.json");
    let disk = with_value(&disk, "\"rows\"", "bytes_per_second", "1e15");
    let disk = with_value(&disk, "\"rows\"", "iops", "1e12");
    std::fs::write(dir.path().join("d.json"), disk).unwrap();
    let out = in_dir(dir.path(), &["report", "d.json", "--svg", "f.svg"]);
    assert!(out.status.success(), "{out:?}");
    let svg = std::fs::read_to_string(dir.path().join("f.svg")).unwrap();
    assert!(svg.len() < 1 << 20, "{} bytes", svg.len());
}

/// A study with the saved date `date` and a command line holding HTML, as a JSON document.
fn study_measured(date: &str) -> String {
    let text = fixture("study-sentences.json").replacen(
        "\"/tmp/st\",",
        "\"/tmp/<script>alert('x')</script> & co\",",
        1,
    );
    with_value(&text, "\"commit\"", "date", &format!("\"{date}\""))
}

#[test]
fn the_html_page_says_when_with_what_command_and_which_ioscope_the_study_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), study_measured("2026-11-24")).unwrap();
    std::fs::write(dir.path().join("b.json"), study_measured("2026-10-01")).unwrap();
    let page = |args: &[&str], name: &str| {
        ok(&in_dir(dir.path(), args));
        std::fs::read_to_string(dir.path().join(name)).unwrap()
    };
    let one = page(&["report", "a.json", "-o", "one.html"], "one.html");
    let both = page(
        &["report", "a.json", "b.json", "-o", "two.html"],
        "two.html",
    );
    for (html, dates) in [
        (&one, &["2026-11-24"][..]),
        (&both, &["2026-11-24", "2026-10-01"]),
    ] {
        // The saved date, never today's; the commit it was measured with; the command line
        // escaped, never markup.
        for date in dates {
            assert!(
                html.contains(&format!(">{date}</time> (UTC)")),
                "{date} in {html}"
            );
        }
        assert!(html.contains("ioscope 0.1.0 (commit <code>fd0bb3f</code>)"));
        assert!(
            html.contains("ioscope study /tmp --level quick"),
            "the command line"
        );
        assert!(
            html.contains("&lt;script&gt;alert(&#39;\\&#39;&#39;x"),
            "escaped: {html}"
        );
        assert!(
            !html.contains("<script>"),
            "no markup from the command line"
        );
    }
    // Each study's provenance beside its name, at the top of the page.
    assert_eq!(both.matches("<p class=\"prov\">").count(), 2);
    assert!(one.find("<p class=\"prov\">").unwrap() < one.find("<h2>").unwrap());
}

/// Whether the saved standard study, with `edit` applied, passed its checks: the verdict
/// `ioscope study` turns into its exit code (1 when false) and the page into its banner.
fn edited_study_ok(edit: impl FnOnce(&mut serde_json::Value)) -> bool {
    let mut doc = fixture_json("study-standard.json");
    edit(&mut doc);
    let study: ioscope::cmd::study::StudyReport =
        serde_json::from_value(doc).expect("the fixture is a study");
    ioscope::report::view::Exportable::ok(&study)
}

#[test]
fn a_failed_check_in_any_part_of_a_study_fails_it() {
    assert!(
        edited_study_ok(|_| {}),
        "the saved study passed every check"
    );
    assert!(
        !edited_study_ok(|doc| {
            let verify = &mut doc["disk"]["rows"][0]["verify"];
            verify["bad_blocks"] = 1.into();
            verify["first_bad_offset"] = 4096.into();
        }),
        "a disk row whose verify found a byte not the one written"
    );
    assert!(
        !edited_study_ok(|doc| doc["compare"]["rows"][0]["state_ok"] = false.into()),
        "a compare contender whose runs did not start in their cache state"
    );
    assert!(
        !edited_study_ok(|doc| {
            let row = &mut doc["syscalls"]["rows"][0];
            row["kernel_calls"] = (row["calls"].as_u64().expect("calls") * 2 + 100).into();
        }),
        "a system-call count the kernel contradicts"
    );
    assert!(
        !edited_study_ok(|doc| {
            let probes = doc["calibrate"]["probes"].as_array_mut().expect("probes");
            probes.last_mut().expect("a probe")["checks_ok"] = false.into();
        }),
        "a calibration whose last probe the kernel's counts contradict"
    );
}
