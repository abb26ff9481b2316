//! `report`: a saved document rendered again says what its numbers are (a record of 7 B is
//! not 7 records), prints no control character a document holds, stays within a bounded
//! size, and refuses to put a study beside itself.

mod common;
use common::*;
use std::path::Path;
use std::process::Output;

/// `ioscope ARGS` run in `cwd`.
fn in_dir(cwd: &Path, args: &[&str]) -> Output {
    ioscope()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run ioscope")
}

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
