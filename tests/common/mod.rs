//! Helpers shared by the CLI tests: the binary, files of known content, and the
//! checksum's definition written out byte by byte.
#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The ioscope binary under test.
pub fn ioscope() -> Command {
    Command::cargo_bin("ioscope").expect("the binary is built")
}

/// The checksum by its definition: byte `i` goes to bits `8 * (i % 4)`.
pub fn reference_xor(bytes: &[u8]) -> String {
    let x = bytes
        .iter()
        .enumerate()
        .fold(0u32, |x, (i, &b)| x ^ (u32::from(b) << (8 * (i % 4))));
    format!("{x:08x}")
}

/// Deterministic, non-repeating bytes.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn file_with(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

/// Runs ioscope with `args`, expects success, and returns the JSON document it printed.
pub fn json_of(args: &[&str]) -> serde_json::Value {
    let out = ioscope()
        .args(args)
        .arg("--json")
        .output()
        .expect("run ioscope");
    assert!(
        out.status.success(),
        "ioscope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// The first line of stderr, which must be the only line.
pub fn one_line_stderr(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr, got: {text}");
    lines[0].to_string()
}

/// True when this process runs as root (permission tests need another user then).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The text `ioscope report` renders from a saved JSON document (no measuring).
pub fn report_text(doc: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("result.json");
    std::fs::write(&path, doc.to_string()).expect("save the document");
    let out = ioscope()
        .arg("report")
        .arg(&path)
        .output()
        .expect("run ioscope report");
    assert!(
        out.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 text")
}
