//! `ioscope grade -- CMD`: small C readers, each with one bug public solutions have (the
//! last `size % 4` bytes dropped, a crash on an empty file, 32-bit sizes, one read call for
//! the whole file, a fixed buffer, a data race, big-endian words, no XOR printed, a failing
//! status, a hang at the end of the file) and a correct one, built here with `cc` (skipped
//! with the reason where there is none), graded, and their verdicts and diagnoses checked.
//! Also `{}` in the command, the exit code, the text's answer last, and bad input.

#[path = "../common/mod.rs"]
mod common;

use common::{build_c, ioscope};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The reader `name` (tests/grade/readers/NAME.c) built into `dir`, or `None` with the
/// reason printed.
fn reader(dir: &Path, name: &str) -> Option<PathBuf> {
    let source = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/grade/readers/{name}.c")),
    )
    .expect("the reader's source is in the repository");
    build_c(dir, name, "c", &source, &["-O2"])
}

/// `ioscope grade --json` of `command` with `extra` flags: its exit code and document.
fn grade(dir: &Path, extra: &[&str], command: &[&str]) -> (i32, Value) {
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
fn verdicts(doc: &Value) -> Vec<(u64, String)> {
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
fn kinds(doc: &Value) -> Vec<String> {
    doc["diagnoses"]
        .as_array()
        .expect("diagnoses")
        .iter()
        .map(|d| d["kind"].as_str().unwrap().to_string())
        .collect()
}

/// Grades reader `name`; `None` where it cannot be built.
fn graded(name: &str) -> Option<(i32, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let exe = reader(dir.path(), name)?;
    Some(grade(dir.path(), &[], &[exe.to_str().unwrap()]))
}

/// Every size but those `failing` has verdict `correct`; those have `verdict`.
fn only_these_fail(doc: &Value, failing: impl Fn(u64) -> bool, verdict: &str) {
    for (size, v) in verdicts(doc) {
        let want = if failing(size) { verdict } else { "correct" };
        assert_eq!(v, want, "size {size}: {doc:#}");
    }
}

#[test]
fn a_correct_reader_is_correct_on_every_size_and_exits_0() {
    let Some((code, doc)) = graded("correct") else {
        return;
    };
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(verdicts(&doc).len(), 9);
    only_these_fail(&doc, |_| false, "");
    assert!(kinds(&doc).is_empty());
    // Its printed XOR is the reference on every run.
    for s in doc["sizes"].as_array().unwrap() {
        for r in s["runs"].as_array().unwrap() {
            assert_eq!(r["printed"], s["reference"]);
        }
    }
}

#[test]
fn a_reader_that_drops_the_last_bytes_is_diagnosed_so() {
    let Some((code, doc)) = graded("drops_tail") else {
        return;
    };
    assert_eq!(code, 1);
    only_these_fail(&doc, |s| s % 4 != 0, "wrong");
    assert_eq!(kinds(&doc), ["drops_tail"]);
    let s = &doc["sizes"][1];
    assert_eq!(s["size"], 1);
    assert_ne!(s["runs"][0]["printed"], s["reference"]);
}

#[test]
fn a_crash_on_the_empty_file_is_diagnosed_with_its_signal() {
    let Some((code, doc)) = graded("empty_crash") else {
        return;
    };
    assert_eq!(code, 1);
    only_these_fail(&doc, |s| s == 0, "crashed");
    assert_eq!(doc["sizes"][0]["runs"][0]["signal"], "SIGSEGV");
    assert_eq!(kinds(&doc), ["empty"]);
}

#[test]
fn a_fixed_buffer_crashes_from_the_size_past_it() {
    let Some((_, doc)) = graded("small_buffer") else {
        return;
    };
    only_these_fail(&doc, |s| s > 10 << 20, "crashed");
    assert_eq!(kinds(&doc), ["crashes_from"]);
    let sentence = doc["diagnoses"][0]["sentence"].as_str().unwrap();
    assert!(sentence.contains("from 10 MiB + 3 up"), "{sentence}");
}

#[test]
fn different_answers_for_one_file_are_called_not_deterministic() {
    let Some((code, doc)) = graded("racy") else {
        return;
    };
    assert_eq!(code, 1);
    assert_eq!(kinds(&doc)[0], "unstable");
    assert!(
        doc["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["distinct"].as_array().unwrap().len() == 2)
    );
}

#[test]
fn big_endian_words_are_named() {
    let Some((_, doc)) = graded("big_endian") else {
        return;
    };
    // The empty file's XOR is 0 either way.
    only_these_fail(&doc, |s| s > 0, "wrong");
    assert_eq!(kinds(&doc), ["byte_order"]);
}

#[test]
fn a_reader_that_prints_no_hex_prints_no_xor() {
    let Some((_, doc)) = graded("silent") else {
        return;
    };
    only_these_fail(&doc, |_| true, "wrong");
    assert_eq!(kinds(&doc), ["no_xor"]);
    assert!(doc["sizes"][2]["runs"][0]["printed"].is_null());
}

#[test]
fn the_right_xor_with_status_1_is_exit_1_on_every_size() {
    let Some((code, doc)) = graded("exit_one") else {
        return;
    };
    assert_eq!(code, 1);
    only_these_fail(&doc, |_| true, "exit");
    assert_eq!(doc["sizes"][3]["runs"][0]["exit_code"], 1);
    assert_eq!(kinds(&doc), ["exit_status"]);
}

#[test]
fn a_reader_that_hangs_at_the_end_of_the_file_times_out_once_per_size() {
    let Some((_, doc)) = graded("hang_tail") else {
        return;
    };
    only_these_fail(&doc, |s| s % 4 != 0, "timeout");
    assert_eq!(kinds(&doc), ["tail"]);
    // A run past its deadline is not repeated.
    assert_eq!(doc["sizes"][1]["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn thirty_two_bit_sizes_and_one_read_call_show_at_4_gib_and_2_gib() {
    // Sparse files of 2 GiB and 4 GiB + 8: a few MiB of data each.
    for (name, kind, failing) in [
        ("size32", "offsets_32", &[(4u64 << 30) + 8][..]),
        ("one_call", "one_call", &[2u64 << 30, (4u64 << 30) + 8][..]),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let Some(exe) = reader(dir.path(), name) else {
            return;
        };
        let out = ioscope()
            .args(["grade", "--json", "--big", "--runs", "1", "--dir"])
            .arg(dir.path())
            .arg("--")
            .arg(&exe)
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(why) = doc["skipped"].as_array().unwrap().first() {
            eprintln!("skipped: {why}");
            return;
        }
        only_these_fail(&doc, |s| failing.contains(&s), "wrong");
        assert_eq!(kinds(&doc), [kind], "{name}");
        assert!(
            doc["sizes"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|s| s["size"].as_u64().unwrap() >= 2 << 30)
                .all(|s| s["sparse"] == true)
        );
    }
}

#[test]
fn braces_put_the_file_inside_an_argument() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = reader(dir.path(), "correct") else {
        return;
    };
    // sh -c 'exec READER "$1"' sh {} : the file is an argument of the shell.
    let (code, doc) = grade(
        dir.path(),
        &[],
        &[
            "sh",
            "-c",
            &format!("exec {} \"$1\"", exe.display()),
            "sh",
            "{}",
        ],
    );
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["command"][4], "{}");
}

#[test]
fn the_text_ends_with_the_verdict_within_80_columns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = reader(dir.path(), "drops_tail") else {
        return;
    };
    let out = ioscope()
        .env("COLUMNS", "80")
        .args(["grade", "--runs", "1", "--dir"])
        .arg(dir.path())
        .arg("--")
        .arg(&exe)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{line}");
    }
    let last = text.lines().last().unwrap();
    assert_eq!(last, "verdict   fails on 6 of 9 sizes");
    assert!(
        text.contains("diagnosis Drops the last size % 4 bytes"),
        "{text}"
    );
    // Nothing of the battery is left behind.
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(".ioscope"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_program_that_cannot_start_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = ioscope()
        .args(["grade", "--dir"])
        .arg(dir.path())
        .args(["--", "/nonexistent/fast"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("start /nonexistent/fast"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn bad_options_are_refused_before_anything_runs() {
    for (args, says) in [
        (&["--runs", "0"][..], "--runs 0"),
        (&["--timeout", "0s"][..], "--timeout 0s"),
        (&["--dir", "/nonexistent/dir"][..], "/nonexistent/dir"),
    ] {
        let out = ioscope()
            .arg("grade")
            .args(args)
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn compare_marks_a_reader_s_wrong_xor_and_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (Some(good), Some(bad)) = (
        reader(dir.path(), "correct"),
        reader(dir.path(), "drops_tail"),
    ) else {
        return;
    };
    // Not a multiple of 4: the reader that drops the last bytes is wrong on it.
    let file = common::file_with(dir.path(), "f", &common::pattern((1 << 20) + 3));
    let out = ioscope()
        .args(["compare", "--json", "--repeat", "1", "--cache", "warm"])
        .arg(&file)
        .arg("--cmd")
        .arg(format!("good={} {{}}", good.display()))
        .arg("--cmd")
        .arg(format!("bad={}", bad.display()))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "a wrong XOR fails the comparison"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reference = common::reference_xor(&std::fs::read(&file).unwrap());
    assert_eq!(doc["reference"], reference.as_str());
    let row = |name: &str| {
        doc["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["contender"] == name)
            .unwrap_or_else(|| panic!("{name}: {doc:#}"))
            .clone()
    };
    assert_eq!(row("good")["runs"][0]["xor_ok"], true);
    assert_eq!(row("good")["runs"][0]["printed"], reference.as_str());
    assert_eq!(row("bad")["runs"][0]["xor_ok"], false);
    assert_ne!(row("bad")["runs"][0]["printed"], reference.as_str());
    // The best (the rate the others are set against) is never the wrong one.
    let best: Vec<&Value> = doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["ratio_to_best"] == 1.0)
        .collect();
    assert!(!best.is_empty() && best.iter().all(|r| r["contender"] != "bad"));
    let text = common::report_text(&doc);
    assert!(text.contains("not ranked, a wrong XOR"), "{text}");
}

#[test]
fn compare_refuses_a_cmd_without_a_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::file_with(dir.path(), "f", b"abcd");
    for (cmd, says) in [
        ("./fast {}", "give it as NAME=CMD"),
        ("=./fast", "the name before '=' is empty"),
        ("mine='./fast", "unclosed quote"),
        ("mine=", "no command after '='"),
    ] {
        let out = ioscope()
            .arg("compare")
            .arg(&file)
            .args(["--cmd", cmd])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{cmd}: {err}");
    }
}
