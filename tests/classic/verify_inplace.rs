//! Verification in place, end to end: two blocks that traded places (same XOR), a block
//! shifted by one byte and one changed byte are each caught, with the exact first bad byte,
//! by `run -r --seed`, by `patterns` (the file corrupted between its write and its read
//! through the `IOSCOPE_CORRUPT` hook) and by `mpi` on 2 ranks under mpirun (feature `mpi`:
//! in tests/mpi/verify_inplace.rs). The corruptions are in tests/common/corrupt.rs.

use crate::common::*;
use std::path::Path;

fn write(path: &Path, seed: u64) {
    let p = path.to_str().expect("UTF-8 path");
    ioscope()
        .args(["run", p, "-w", "64k", "8", "--seed", &seed.to_string()])
        .assert()
        .success();
}

#[test]
fn run_with_the_seed_says_every_byte_is_in_place_on_the_file_it_wrote() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("f");
    write(&f, 11);
    let p = f.to_str().unwrap();
    let out = ioscope()
        .args(["run", p, "-r", "64k", "--seed", "11"])
        .output()
        .expect("runs");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("verify    every byte in place: 512 KiB in 8 block(s) of 64 KiB"),
        "{text}"
    );
    let v = json_of(&["run", p, "-r", "64k", "--seed", "11"]);
    let check = &v["verified_in_place"];
    assert_eq!(check["bad_blocks"], 0);
    assert_eq!(check["bytes"], 512 * 1024);
    assert!(check["seconds"].as_f64().is_some());
    // Without the seed the XOR is the only check, and nothing says "in place".
    let out = ioscope()
        .args(["run", p, "-r", "64k"])
        .output()
        .expect("runs");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("in place"));
}

#[test]
fn run_with_the_seed_catches_swapped_shifted_and_changed_bytes_at_their_first_offset() {
    let block = 64 * 1024;
    for kind in KINDS {
        let dir = tempfile::tempdir().expect("temp dir");
        let f = dir.path().join("f");
        write(&f, 5);
        let mut bytes = std::fs::read(&f).expect("read back");
        let whole = reference_xor(&bytes);
        // Damage blocks 2 and 3.
        corrupt(kind, &mut bytes[2 * block..], block);
        if kind == "swap" {
            assert_eq!(reference_xor(&bytes), whole, "the XOR cannot see a swap");
        }
        std::fs::write(&f, &bytes).expect("write the damage");
        let expected = first_changed(kind, 2 * block as u64, block, stream_byte(5));
        let p = f.to_str().unwrap();
        let out = ioscope()
            .args(["run", p, "-r", "64k", "--seed", "5", "--json"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(1), "{kind}: a failed check exits 1");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let check = &v["verified_in_place"];
        assert_eq!(check["first_bad_offset"], expected, "{kind}");
        let bad = if kind == "swap" { 2 } else { 1 };
        assert_eq!(check["bad_blocks"], bad, "{kind}");
        let out = ioscope()
            .args(["run", p, "-r", "64k", "--seed", "5"])
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let line = format!(
            "verify    NOT IN PLACE: verify {p}: byte {expected} is not the byte written there (first bad byte); {bad} of 8 block(s) of 64 KiB differ"
        );
        assert!(text.contains(&line), "{kind}: {text}");
    }
}

#[test]
fn run_with_the_seed_refuses_standard_input_which_cannot_be_read_again() {
    let out = ioscope()
        .args(["run", "-", "-r", "4k", "--seed", "1"])
        .write_stdin("abc")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("only a regular file can be read again"));
}

#[test]
fn patterns_catches_each_corruption_made_between_its_write_and_its_read() {
    let record = 64 * 1024;
    for kind in KINDS {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().unwrap();
        let out = ioscope()
            .args([
                "patterns",
                d,
                "--tests",
                "read",
                "--size",
                "512k",
                "--record",
                "64k",
                "--runs",
                "1",
                "--min-free",
                "0",
                "--json",
            ])
            .env("IOSCOPE_CORRUPT", kind)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let seed = v["seed"].as_u64().expect("the seed is in the result");
        let expected = first_changed(kind, 0, record, |o| {
            ioscope::workload::ring::byte_at(seed, o)
        });
        let check = &v["results"][0]["verified_in_place"];
        assert_eq!(check["first_bad_offset"], expected, "{kind}");
        assert_eq!(
            check["bad_blocks"],
            if kind == "swap" { 2 } else { 1 },
            "{kind}"
        );
        let text = report_text(&v);
        assert!(
            text.contains(&format!("byte {expected} is not the byte written there")),
            "{kind}: {text}"
        );
    }
}

#[test]
fn patterns_reads_say_every_byte_is_in_place_when_nothing_was_damaged() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().unwrap();
    let v = json_of(&[
        "patterns",
        d,
        "--tests",
        "read,random-read",
        "--size",
        "256k",
        "--record",
        "16k",
        "--runs",
        "1",
        "--min-free",
        "0",
    ]);
    for r in v["results"].as_array().expect("results") {
        assert_eq!(r["verified_in_place"]["bad_blocks"], 0, "{r}");
        assert_eq!(r["verified_in_place"]["bytes"], 256 * 1024, "{r}");
    }
    assert!(report_text(&v).contains("verify    every byte in place"));
}

#[test]
fn sweep_reads_with_the_seed_verify_every_timed_run_in_place() {
    let dir = tempfile::tempdir().expect("temp dir");
    let f = dir.path().join("f");
    write(&f, 9);
    let p = f.to_str().unwrap();
    let v = json_of(&[
        "sweep",
        p,
        "--block-sizes",
        "16k,64k",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--seed",
        "9",
    ]);
    for point in v["points"].as_array().expect("points") {
        assert_eq!(point["verified_in_place"]["bad_blocks"], 0);
        assert_eq!(
            point["verified_in_place"]["bytes"],
            2 * 512 * 1024,
            "two runs"
        );
    }
    let mut bytes = std::fs::read(&f).expect("read");
    bytes[100_000] ^= 1;
    std::fs::write(&f, &bytes).expect("damage");
    let out = ioscope()
        .args([
            "sweep",
            p,
            "--block-sizes",
            "64k",
            "--repeat",
            "1",
            "--warmup",
            "0",
            "--seed",
            "9",
        ])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("byte 100000 is not the byte written there"),
        "{text}"
    );
}
