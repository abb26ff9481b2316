//! `ioscope calibrate`: the size found lands in the window, growth is safe, bad input is refused.
//! Windows here are short so the tests stay quick; they assert the tool's own claims, not speed.

use crate::common;
use crate::common::*;

#[test]
fn the_size_found_is_a_multiple_of_the_block_size_and_the_file_is_unchanged() {
    // A window wide enough for any machine: the test asserts what the tool claims and how
    // its figures hang together, never how fast anything was.
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(8 << 20));
    let v = json_of(&[
        "calibrate",
        path.to_str().unwrap(),
        "1",
        "--min",
        "1ms",
        "--max",
        "60s",
    ]);
    assert_eq!(v["schema"], "ioscope/calibrate/v2");
    let bytes = v["bytes"].as_u64().unwrap();
    assert!(bytes > 0 && bytes <= 8 << 20);
    assert_eq!(v["block_count"], bytes);
    let probes = v["probes"].as_array().unwrap();
    let last = probes.last().unwrap();
    assert_eq!(last["bytes"], bytes, "the answer is the last probe");
    assert_eq!(last["seconds"], v["seconds"]);
    assert_eq!(v["engine"], "stream");
    assert_eq!(v["file_bytes"], 8 << 20, "the file was not changed");
    assert_eq!(std::fs::read(&path).unwrap(), pattern(8 << 20));
}

#[test]
fn a_file_too_small_without_grow_says_how_big_it_must_be() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "small", &pattern(8192));
    let out = ioscope()
        .args([
            "calibrate",
            path.to_str().unwrap(),
            "4k",
            "--min",
            "1s",
            "--max",
            "3s",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("small") && line.contains("too small") && line.contains("--grow"),
        "{line}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), pattern(8192), "untouched");
}

#[test]
fn grow_extends_the_file_with_new_data_after_the_original_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let original = pattern(100_000);
    let path = file_with(dir.path(), "g", &original);
    let v = json_of(&[
        "calibrate",
        path.to_str().unwrap(),
        "4k",
        "--min",
        "1ms",
        "--max",
        "60s",
        "--cache",
        "cold",
        "--grow",
    ]);
    let grown = std::fs::read(&path).unwrap();
    assert_eq!(v["grown_from"], 100_000);
    assert_eq!(v["file_bytes"], grown.len() as u64);
    assert!(grown.len() >= v["bytes"].as_u64().unwrap() as usize);
    assert_eq!(
        &grown[..100_000],
        &original[..],
        "the original bytes are intact"
    );
    // A size that fits in RAM, calibrated cold: where every probe started evicted (under
    // 1% of its pages cached) that is said in a sentence, not warned about; where one did
    // not, the advice to evict before every cold run is a warning.
    let evicted = v["probes"].as_array().unwrap().iter().all(|p| {
        let r = &p["cache"]["residency_before"];
        r["resident_pages"].as_u64().unwrap() * 100 < r["total_pages"].as_u64().unwrap()
    });
    let warned = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "cold_fits_in_ram");
    assert_eq!(warned, !evicted, "{}", v["warnings"]);
    if evicted {
        let md = dir.path().join("c.md");
        std::fs::write(dir.path().join("c.json"), v.to_string()).unwrap();
        let out = ioscope()
            .arg("report")
            .arg(dir.path().join("c.json"))
            .arg("--markdown")
            .arg(&md)
            .output()
            .unwrap();
        assert!(out.status.success());
        let md = std::fs::read_to_string(&md).unwrap();
        assert!(
            md.contains("Every probe started with its range evicted"),
            "{md}"
        );
    }
}

#[test]
fn a_window_that_is_empty_or_reversed_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", b"x");
    for (min, max) in [("5s", "5s"), ("10s", "1s"), ("0s", "1s"), ("fast", "1s")] {
        let out = ioscope()
            .args([
                "calibrate",
                path.to_str().unwrap(),
                "4k",
                "--min",
                min,
                "--max",
                max,
            ])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{min} {max}");
        assert!(one_line_stderr(&out).contains("calibrate"));
    }
}

#[test]
fn calibrate_refuses_directories_pipes_and_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    for target in [dir.path().to_str().unwrap(), "-", "/nonexistent/file"] {
        let out = ioscope()
            .args(["calibrate", target, "4k"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{target}");
        let line = one_line_stderr(&out);
        assert!(
            line.contains(target) || line.contains("standard input"),
            "{line}"
        );
    }
}

#[test]
fn growth_never_passes_the_free_space_margin() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4096));
    let out = ioscope()
        .args([
            "calibrate",
            path.to_str().unwrap(),
            "64k",
            "--min",
            "1s",
            "--max",
            "2s",
            "--grow",
            "--min-free",
            "1000000t",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("margin leaves no room") && !line.contains("pass --grow"),
        "--grow was given: the message must not ask for it: {line}"
    );
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        4096,
        "nothing was appended"
    );
}

#[test]
fn the_null_engine_is_refused_before_anything_is_read_or_grown() {
    // `null` takes no time whatever the size, so no size lands in the window: with --grow
    // the search would append real data up to the free-space margin (tens of GiB) first.
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "n", &pattern(1 << 20));
    let name = path.to_str().unwrap();
    for grow in [false, true] {
        let mut args = vec![
            "calibrate",
            name,
            "64k",
            "--min",
            "50ms",
            "--max",
            "1s",
            "--engine",
            "null",
        ];
        if grow {
            args.push("--grow");
        }
        let out = ioscope()
            .args(&args)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_line_stderr(&out);
        assert!(
            line.contains(name) && line.contains("null") && line.contains("moves no bytes"),
            "{line}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), pattern(1 << 20), "untouched");
    }
}

#[test]
fn a_file_that_cannot_grow_is_described_by_its_whole_blocks_not_a_smaller_limit() {
    // 100,000 bytes hold one whole block of 64 KiB; with no room to grow, the message must
    // give both figures, not claim the file "can grow only to 64 KiB".
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "k", &pattern(100_000));
    let out = ioscope()
        .args([calibrate_args(&path), vec!["--min-free", "1000000t"]].concat())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = one_line_stderr(&out);
    assert!(
        line.contains("1 whole block of 64 KiB (64 KiB of its 97.7 KiB)")
            && line.contains("no room to grow")
            && !line.contains("can grow only to"),
        "{line}"
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 100_000);
}

fn calibrate_args(path: &std::path::Path) -> Vec<&str> {
    vec!["calibrate", path.to_str().unwrap(), "64k", "--grow"]
}

#[test]
fn grow_refuses_a_symbolic_link_and_leaves_its_target_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    std::fs::write(&target, b"OLD\n").unwrap();
    let link = dir.path().join("lf");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let out = common::ioscope()
        .args(["calibrate", link.to_str().unwrap(), "64k", "--grow"])
        .args(["--min", "0.1s", "--max", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = common::one_line_stderr(&out);
    assert!(
        line.contains("is a symbolic link to") && line.contains("--grow"),
        "{line}"
    );
    assert_eq!(
        std::fs::read(&target).unwrap(),
        b"OLD\n",
        "the target is untouched"
    );
}

#[test]
fn calibrate_prints_the_xor_of_what_its_timed_read_read_in_text_and_json() {
    // The classic run2 prints the XOR of the bytes it read: here, the size found's prefix.
    let dir = tempfile::tempdir().unwrap();
    let bytes = pattern(8 << 20);
    let path = file_with(dir.path(), "f", &bytes);
    // 1-byte reads, as the first test: 1 ms is reached within the file on any machine.
    let args = [
        "calibrate",
        path.to_str().unwrap(),
        "1",
        "--min",
        "1ms",
        "--max",
        "60s",
    ];
    let v = json_of(&args);
    let read = v["bytes"].as_u64().unwrap() as usize;
    let expected = reference_xor(&bytes[..read]);
    assert_eq!(v["xor_hex"], expected.as_str());
    let probes = v["probes"].as_array().unwrap();
    assert_eq!(probes.last().unwrap()["xor_hex"], expected.as_str());
    for p in probes {
        let n = p["bytes"].as_u64().unwrap() as usize;
        assert_eq!(p["xor_hex"], reference_xor(&bytes[..n]).as_str(), "{p}");
    }
    let out = ioscope().args(args).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("xor "))
        .unwrap_or_else(|| panic!("no xor line in:\n{text}"));
    assert_eq!(
        line.split_whitespace().nth(1),
        Some(expected.as_str()),
        "{line}"
    );
}
