//! `compare --cmd`: a reader of the user's as a contender, its XOR checked.

use super::*;

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

#[test]
fn compare_fails_when_a_reader_of_the_user_s_fails() {
    let dir = tempfile::tempdir().unwrap();
    let Some(bad) = reader(dir.path(), "exit_one") else {
        return;
    };
    let file = common::file_with(dir.path(), "f", &common::pattern(1 << 20));
    let out = ioscope()
        .args(["compare", "--json", "--repeat", "1", "--cache", "warm"])
        .arg(&file)
        .arg("--cmd")
        .arg(format!("mine={}", bad.display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["failed_readers"][0], "mine");
}

#[test]
fn compare_refuses_a_name_a_contender_has_or_one_with_a_control_character() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::file_with(dir.path(), "f", b"abcd");
    for (cmd, says) in [
        ("cat=./fast", "the name of a contender already"),
        ("m\u{1b}[31mX=./fast", "control character"),
    ] {
        let out = ioscope()
            .arg("compare")
            .arg(&file)
            .args(["--cmd", cmd])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{cmd:?}: {err}");
        assert!(!err.contains('\u{1b}'), "{err:?}");
    }
}
