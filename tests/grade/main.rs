//! `ioscope grade -- CMD`: small C readers, each with one bug public solutions have (the
//! last `size % 4` bytes dropped, a crash on an empty file, 32-bit sizes, one read call for
//! the whole file, a fixed buffer, a data race, big-endian words, no XOR printed, a failing
//! status, a hang at the end of the file) and a correct one, built here with `cc` (skipped
//! with the reason where there is none), graded, and their verdicts and diagnoses checked.
//! Also `{}` in the command, the exit code, the text's answer last, and bad input.

#[path = "../common/mod.rs"]
mod common;

mod command;
mod compare;
mod verdicts;

use common::{build_c, ioscope};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The reader `name` (tests/grade/readers/NAME.c) built into `dir`, or `None` with the
/// reason printed.
pub fn reader(dir: &Path, name: &str) -> Option<PathBuf> {
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/grade/readers/{name}.c")),
    )
    .expect("the reader's source is in the repository");
    build_c(dir, name, "c", &source, &["-O2"])
}

/// `ioscope grade --json` of `command` with `extra` flags: its exit code and document.
pub fn grade(dir: &Path, extra: &[&str], command: &[&str]) -> (i32, Value) {
    let out = ioscope()
        .args(["grade", "--json", "--runs", "2", "--timeout", "2s", "--dir"])
        .arg(dir)
        .args(extra)
        .arg("--")
        .args(command)
        .output()
        .expect("ioscope runs");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), doc)
}

/// Each size's verdict, by size.
pub fn verdicts(doc: &Value) -> Vec<(u64, String)> {
    doc["sizes"]
        .as_array()
        .expect("sizes")
        .iter()
        .map(|s| {
            (
                s["size"].as_u64().unwrap(),
                s["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The diagnoses' kinds, in order.
pub fn kinds(doc: &Value) -> Vec<String> {
    doc["diagnoses"]
        .as_array()
        .expect("diagnoses")
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Grades reader `name`; `None` where it cannot be built.
pub fn graded(name: &str) -> Option<(i32, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let exe = reader(dir.path(), name)?;
    Some(grade(dir.path(), &[], &[exe.to_str().unwrap()]))
}

/// Every size but those `failing` has verdict `correct`; those have `verdict`.
pub fn only_these_fail(doc: &Value, failing: impl Fn(u64) -> bool, verdict: &str) {
    for (size, v) in verdicts(doc) {
        let want = if failing(size) { verdict } else { "correct" };
        assert_eq!(v, want, "size {size}: {doc:#}");
    }
}
