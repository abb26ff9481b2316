//! `ioscope fast`: every engine gives the reference XOR on every kind of input.

mod common;
use common::*;
use std::io::{Seek, SeekFrom, Write};

const ENGINES: [&str; 6] = ["stream", "pread", "mmap", "direct", "hybrid", "uring"];
const SIZES: [usize; 11] = [
    0,
    1,
    3,
    4,
    5,
    4095,
    4096,
    4097,
    (1 << 20) + 3,
    (9 << 20) + 5,
    4 << 20,
];

/// Runs `fast` with `args` and returns (stdout line, JSON engine) — JSON from a second run.
fn fast_json(args: &[&str]) -> serde_json::Value {
    json_of(&[&["fast"], args].concat())
}

#[test]
fn every_engine_gives_the_reference_xor_at_every_size() {
    let dir = tempfile::tempdir().unwrap();
    for size in SIZES {
        let data = pattern(size);
        let path = file_with(dir.path(), &format!("f{size}"), &data);
        let p = path.to_str().unwrap();
        let want = reference_xor(&data);
        for engine in ENGINES {
            // Small chunks and odd thread counts make many pieces meet at odd offsets.
            for extra in [
                vec![],
                vec!["--block-size", "64k", "--threads", "3", "--depth", "3"],
            ] {
                let v = fast_json(&[&[p, "--engine", engine], &extra[..]].concat());
                assert_eq!(
                    v["xor_hex"], want,
                    "size {size} engine {engine} {extra:?}: {v}"
                );
                assert_eq!(v["bytes"], size as u64, "size {size} engine {engine}");
                if v["engine"] != engine {
                    eprintln!(
                        "note: {engine} fell back to {} on size {size}: {}",
                        v["engine"], v["fallbacks"]
                    );
                }
            }
        }
    }
}

#[test]
fn stdout_is_the_checksum_alone_and_verbose_details_go_to_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(3 << 20);
    let path = file_with(dir.path(), "f", &data);
    let out = ioscope()
        .args(["fast", path.to_str().unwrap(), "--verbose"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{}\n", reference_xor(&data))
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("method") && err.contains("GiB/s") && err.contains("resident"),
        "{err}"
    );
}

#[test]
fn the_automatic_choice_is_explained_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(3 << 20));
    let v = fast_json(&[path.to_str().unwrap()]);
    assert_eq!(v["schema"], "ioscope/fast/v1");
    assert!(
        ["mmap", "direct", "pread"].contains(&v["engine"].as_str().unwrap()),
        "{v}"
    );
    assert!(!v["reason"].as_str().unwrap().is_empty());
    assert!(v["residency_before"]["total_pages"].as_u64().unwrap() > 0);
    let chunks = (3u64 << 20).div_ceil(v["block_size"].as_u64().unwrap());
    assert!(
        v["threads"].as_u64().unwrap() <= chunks,
        "no more workers than chunks: {v}"
    );
    let small = file_with(dir.path(), "s", b"hello");
    assert_eq!(fast_json(&[small.to_str().unwrap()])["engine"], "stream");
}

#[test]
fn stdin_and_proc_files_are_read_to_their_end_by_every_engine() {
    let data = pattern(300_001);
    for engine in ENGINES {
        let out = ioscope()
            .args(["fast", "-", "--engine", engine])
            .write_stdin(data.clone())
            .output()
            .unwrap();
        assert!(out.status.success(), "{engine}");
        assert_eq!(
            String::from_utf8(out.stdout).unwrap().trim(),
            reference_xor(&data),
            "stdin via {engine}"
        );

        let version = std::fs::read("/proc/version").unwrap();
        let v = fast_json(&["/proc/version", "--engine", engine]);
        assert_eq!(
            v["xor_hex"],
            reference_xor(&version),
            "/proc/version via {engine}"
        );
        assert_eq!(v["engine"], "stream", "sized engines fall back on size 0");
        assert!(!v["fallbacks"].as_array().unwrap().is_empty() || engine == "stream");

        // /proc/self/status is the reader's own: check it is read whole (non-empty, ends in a
        // newline) rather than its XOR, which only the reading process could know.
        let v = fast_json(&["/proc/self/status", "--engine", engine]);
        assert!(v["bytes"].as_u64().unwrap() > 100, "{v}");
    }
}

#[test]
fn a_file_read_from_a_redirected_stdin_uses_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(2 << 20);
    let path = file_with(dir.path(), "f", &data);
    let out = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["fast", "-", "--json"])
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["xor_hex"], reference_xor(&data));
    assert_eq!(v["input_kind"], "regular");
}

#[test]
fn a_multi_gib_sparse_file_checksums_past_the_32_bit_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse");
    let len: u64 = (3 << 30) + 7;
    let marks: [(u64, &[u8]); 4] = [
        (0, b"abc"),
        ((2 << 30) - 2, b"wxyz"),
        ((3 << 30) + 1, b"12345"),
        (len - 1, b"!"),
    ];
    {
        let mut f = std::fs::File::create(&path).unwrap();
        f.set_len(len).unwrap();
        for (offset, bytes) in marks {
            f.seek(SeekFrom::Start(offset)).unwrap();
            f.write_all(bytes).unwrap();
        }
    }
    let mut x = 0u32;
    for (offset, bytes) in marks {
        for (i, &b) in bytes.iter().enumerate() {
            x ^= u32::from(b) << (8 * ((offset + i as u64) % 4));
        }
    }
    let want = format!("{x:08x}");
    for engine in ["pread", "mmap", "direct", "hybrid", "uring"] {
        let v = fast_json(&[path.to_str().unwrap(), "--engine", engine]);
        assert_eq!(v["xor_hex"], want, "{engine}");
        assert_eq!(v["bytes"], len, "{engine}");
    }
}

#[test]
fn bad_input_is_refused_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", b"data");
    let p = path.to_str().unwrap();
    for (args, needle) in [
        (vec!["fast", "/nonexistent/f"], "/nonexistent/f"),
        (vec!["fast", dir.path().to_str().unwrap()], "is a directory"),
        (vec!["fast", "/dev/zero"], "--allow-device"),
        (vec!["fast", p, "--engine", "warp"], "unknown engine 'warp'"),
        (vec!["fast", p, "--threads", "0"], "--threads"),
        (vec!["fast", p, "--threads", "2000"], "--threads"),
        (vec!["fast", p, "--depth", "0"], "--depth"),
        (vec!["fast", p, "--depth", "300"], "--depth"),
        (vec!["fast", p, "--block-size", "2g"], "limit"),
        (vec!["fast", p, "--block-size", "0"], "greater than zero"),
    ] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(one_line_stderr(&out).contains(needle), "{args:?}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn a_partly_cached_file_mixes_cached_chunks_and_device_reads() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(24 << 20);
    let path = file_with(dir.path(), "f", &data);
    // Written just now, so cached; read the first third, then evict the rest.
    let v = json_of(&["run", path.to_str().unwrap(), "-r", "1m", "8"]);
    assert_eq!(v["bytes"], 8 << 20);
    let f = std::fs::File::open(&path).unwrap();
    use std::os::fd::AsRawFd;
    // SAFETY: advice on a descriptor we hold.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 8 << 20, 0, libc::POSIX_FADV_DONTNEED) };
    let v = fast_json(&[path.to_str().unwrap(), "--verbose"]);
    assert_eq!(v["xor_hex"], reference_xor(&data));
    let resident = v["residency_before"]["resident_pages"].as_f64().unwrap()
        / v["residency_before"]["total_pages"].as_f64().unwrap();
    if (0.1..0.9).contains(&resident) && v["fallbacks"].as_array().unwrap().is_empty() {
        assert_eq!(v["engine"], "hybrid", "{v}");
    } else {
        eprintln!("note: residency {resident:.2} here; engine {}", v["engine"]);
    }
}

/// Runs `ioscope ARGS` with stdout set up by `stdout` and returns what came out on stderr.
fn with_stdout(args: &[&str], stdout: std::process::Stdio) -> std::process::Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(args)
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_full_stdout_is_one_error_line_naming_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1000));
    let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full here");
        return;
    };
    let f = path.to_str().unwrap();
    for args in [
        &["fast", f][..],
        &["fast", f, "--json"],
        &["run", f, "-r", "4k"],
    ] {
        let out = with_stdout(args, full.try_clone().unwrap().into());
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            one_line_stderr(&out),
            "error: write stdout: No space left on device",
            "{args:?}"
        );
    }
}

#[test]
fn a_closed_stdout_is_an_error_as_it_is_for_cat() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1000));
    let written = dir.path().join("w");
    for args in [
        vec!["fast", path.to_str().unwrap()],
        vec![
            "run",
            written.to_str().unwrap(),
            "-w",
            "4k",
            "2",
            "--min-free",
            "1m",
        ],
    ] {
        let mut command = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
        command.args(&args).stderr(std::process::Stdio::piped());
        // SAFETY: close() is async-signal-safe, as code between fork and exec must be.
        unsafe {
            command.pre_exec(|| {
                libc::close(1);
                Ok(())
            })
        };
        let out = command.output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(
            one_line_stderr(&out),
            "error: write stdout: Bad file descriptor",
            "{args:?}"
        );
    }
    // The report went nowhere, in particular not into the file being written.
    assert_eq!(std::fs::read(&written).unwrap().len(), 2 * 4096);
}

#[test]
fn a_closed_pipe_on_stdout_stays_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1000));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["fast", path.to_str().unwrap(), "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
