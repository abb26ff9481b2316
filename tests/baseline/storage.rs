//! Where and how baselines are kept: one file per command and name, never replaced, never
//! written through a link, refused in one line when missing, crafted or of another command,
//! and checked before anything is measured.

use crate::common::*;
use std::path::Path;

/// `ioscope --meter fixed ARGS… --baseline-dir DIR`: its output.
pub fn with_dir(dir: &Path, args: &[&str]) -> std::process::Output {
    ioscope()
        .args(["--meter", "fixed"])
        .args(args)
        .arg("--baseline-dir")
        .arg(dir)
        .output()
        .expect("run ioscope")
}

/// A quick sweep of `file` as the tests run it.
pub fn sweep<'a>(file: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    [
        &["sweep", file, "--block-sizes", "4k,64k", "--repeat", "3"][..],
        extra,
    ]
    .concat()
}

#[test]
fn a_saved_baseline_is_one_json_file_with_every_run_and_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let bl = dir.path().join("bl");
    let out = with_dir(
        &bl,
        &sweep(f.to_str().unwrap(), &["--save-baseline", "before"]),
    );
    ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("baseline before saved"), "{stderr}");
    let text = std::fs::read_to_string(bl.join("sweep-before.json")).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "ioscope/baseline/v1");
    assert_eq!(doc["command"], "sweep");
    assert!(doc["environment"]["kernel"].is_string(), "{doc}");
    assert!(doc["version"].is_string());
    let figures = doc["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 2, "{doc}");
    assert_eq!(figures[0]["key"], "read warm 4 KiB");
    assert_eq!(figures[0]["runs"].as_array().unwrap().len(), 3);
    assert!(
        doc["result"]["points"].is_array(),
        "the whole result is kept"
    );
    // Nothing but the file: the temporary name is gone.
    let names: Vec<_> = std::fs::read_dir(&bl)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn an_existing_baseline_of_that_name_is_never_replaced_and_nothing_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let bl = dir.path().join("bl");
    std::fs::create_dir(&bl).unwrap();
    std::fs::write(bl.join("sweep-before.json"), "mine").unwrap();
    let out = with_dir(
        &bl,
        &sweep(f.to_str().unwrap(), &["--save-baseline", "before"]),
    );
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains("sweep-before.json"), "{line}");
    assert!(
        line.contains("another name") && line.contains("remove"),
        "{line}"
    );
    assert!(out.stdout.is_empty(), "nothing measured");
    assert_eq!(
        std::fs::read_to_string(bl.join("sweep-before.json")).unwrap(),
        "mine"
    );
}

#[test]
fn a_link_in_the_baseline_s_place_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let bl = dir.path().join("bl");
    std::fs::create_dir(&bl).unwrap();
    let target = dir.path().join("elsewhere");
    std::os::unix::fs::symlink(&target, bl.join("sweep-x.json")).unwrap();
    let out = with_dir(&bl, &sweep(f.to_str().unwrap(), &["--save-baseline", "x"]));
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains("symbolic link"), "{line}");
    assert!(!target.exists(), "nothing written through the link");
}

#[test]
fn bad_names_are_refused_in_one_line_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(4096));
    let p = f.to_str().unwrap();
    let long = "a".repeat(65);
    for name in ["../up", ".hidden", "a/b", "sp ace", "", long.as_str()] {
        let out = with_dir(dir.path(), &sweep(p, &["--save-baseline", name]));
        assert_eq!(out.status.code(), Some(2), "{name:?}");
        let line = one_line_stderr(&out);
        assert!(line.contains("--save-baseline"), "{line}");
        let out = with_dir(dir.path(), &sweep(p, &["--baseline", name]));
        assert_eq!(out.status.code(), Some(2), "{name:?}");
    }
}

#[test]
fn a_missing_baseline_is_one_line_and_nothing_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(4096));
    let out = with_dir(
        dir.path(),
        &sweep(f.to_str().unwrap(), &["--baseline", "none"]),
    );
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("sweep-none.json") && line.contains("--save-baseline"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_crafted_baseline_is_refused_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "good"])));
    let good = std::fs::read_to_string(bl.join("sweep-good.json")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&good).unwrap();
    doc["figures"][0]["runs"] = serde_json::json!([-1.0, 2.0]);
    std::fs::write(bl.join("sweep-neg.json"), doc.to_string()).unwrap();
    std::fs::write(bl.join("sweep-junk.json"), "{\"schema\": 3").unwrap();
    for name in ["neg", "junk"] {
        let out = with_dir(&bl, &sweep(p, &["--baseline", name]));
        assert_eq!(out.status.code(), Some(2), "{name}");
        let line = one_line_stderr(&out);
        assert!(line.contains(&format!("sweep-{name}.json")), "{line}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn another_command_s_baseline_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "s"])));
    // The run baseline's file name, holding the sweep's document.
    std::fs::copy(bl.join("sweep-s.json"), bl.join("run-s.json")).unwrap();
    let out = with_dir(&bl, &["run", "-r", p, "4k", "--baseline", "s"]);
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("run-s.json") && line.contains("`sweep …`"),
        "{line}"
    );
}
