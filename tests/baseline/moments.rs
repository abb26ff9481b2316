//! A baseline over several moments (`--add-to-baseline`): each added run is one more
//! moment of every figure it shares with the baseline, the file is replaced whole and only
//! while it is the one read, and a comparison says how many moments it spans and what
//! their drift makes of the floor.

use super::storage::{sweep, with_dir};
use crate::common::*;
use serde_json::Value;

fn read(path: &std::path::Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn each_add_is_one_more_moment_and_the_comparison_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(256 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "m"])));
    for moments in 2..=3 {
        let out = with_dir(&bl, &sweep(p, &["--add-to-baseline", "m"]));
        ok(&out);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(
            said.contains(&format!("baseline m now spans {moments} moments")),
            "{said}"
        );
    }
    let saved = read(&bl.join("sweep-m.json"));
    assert_eq!(saved["added"].as_array().unwrap().len(), 2, "{saved}");
    for figure in saved["figures"].as_array().unwrap() {
        assert_eq!(figure["moments"], serde_json::json!([3, 3, 3]), "{figure}");
        assert_eq!(figure["runs"].as_array().unwrap().len(), 9, "{figure}");
    }
    // No scratch file left beside it.
    let names: Vec<_> = std::fs::read_dir(&bl)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["sweep-m.json"], "{names:?}");
    let out = with_dir(&bl, &sweep(p, &["--baseline", "m", "--json"]));
    ok(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["baseline"]["moments"], 3, "{doc}");
    for c in doc["baseline"]["figures"].as_array().unwrap() {
        assert_eq!(c["moments"], 3, "{c}");
        assert_eq!(c["old"]["n"], 9, "{c}");
    }
    let out = with_dir(&bl, &sweep(p, &["--baseline", "m"]));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("the baseline spans 3 moments"), "{text}");
}

#[test]
fn adding_needs_a_saved_baseline_of_that_command_and_nothing_is_measured_without_one() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    let out = with_dir(&bl, &sweep(p, &["--add-to-baseline", "none"]));
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.starts_with("error: --add-to-baseline none: read ")
            && line.contains("sweep-none.json")
            && line.contains("--save-baseline none"),
        "{line}"
    );
    assert!(out.stdout.is_empty());
    // A `run` baseline is not a sweep's.
    ok(&with_dir(
        &bl,
        &["run", "-r", p, "64k", "--save-baseline", "r"],
    ));
    std::fs::rename(bl.join("run-r.json"), bl.join("sweep-r.json")).unwrap();
    let out = with_dir(&bl, &sweep(p, &["--add-to-baseline", "r"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("not of `sweep"), "{out:?}");
    // Not with --save-baseline.
    let out = with_dir(
        &bl,
        &sweep(p, &["--add-to-baseline", "r", "--save-baseline", "s"]),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!bl.join("sweep-s.json").exists());
}

#[test]
fn a_link_in_the_baseline_s_place_is_neither_read_nor_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(64 << 10));
    let p = f.to_str().unwrap();
    let bl = dir.path().join("bl");
    ok(&with_dir(&bl, &sweep(p, &["--save-baseline", "real"])));
    std::os::unix::fs::symlink(bl.join("sweep-real.json"), bl.join("sweep-l.json")).unwrap();
    let before = std::fs::read(bl.join("sweep-real.json")).unwrap();
    let out = with_dir(&bl, &sweep(p, &["--add-to-baseline", "l"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        one_line_stderr(&out).contains("not a regular file"),
        "{out:?}"
    );
    assert_eq!(std::fs::read(bl.join("sweep-real.json")).unwrap(), before);
    assert!(
        std::fs::symlink_metadata(bl.join("sweep-l.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
}
