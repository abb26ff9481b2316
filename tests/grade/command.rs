//! The command itself: `{}` in the arguments, the text's answer last, bad input.

use super::*;

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
fn an_empty_command_is_refused_before_anything_runs() {
    let out = ioscope().args(["grade", "--", ""]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the command is empty"));
}

#[test]
fn a_program_gone_midway_keeps_the_sizes_graded_and_fails() {
    // The reader removes itself after its first run: the later sizes cannot start it.
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = reader(dir.path(), "correct") else {
        return;
    };
    let script = dir.path().join("once.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nrm -f \"$0\"\nexec {} \"$1\"\n", exe.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = ioscope()
        .args(["grade", "--json", "--runs", "1", "--dir"])
        .arg(dir.path())
        .arg("--")
        .arg(&script)
        .output()
        .unwrap();
    let code = out.status.code();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(code, Some(1), "{doc:#}");
    assert_eq!(verdicts(&doc), [(0, "correct".to_string())]);
    let skipped = doc["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 8, "{doc:#}");
    assert!(skipped[0].as_str().unwrap().contains("start"), "{doc:#}");
}
