//! `ioscope fast`: every engine gives the reference XOR on every kind of input.

use crate::common::*;
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
        err.contains("method") && err.contains("MiB/s") && err.contains("resident"),
        "{err}"
    );
}

#[test]
fn the_automatic_choice_is_explained_in_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(3 << 20));
    let v = fast_json(&[path.to_str().unwrap()]);
    assert_eq!(v["schema"], "ioscope/fast/v2");
    assert!(
        ["adaptive", "hybrid", "direct", "pread"].contains(&v["engine"].as_str().unwrap()),
        "{v}"
    );
    if v["caps"]["per_chunk"] == true {
        // What the per-chunk engine tested and read in place is part of the result.
        let tests = &v["tests"];
        assert!(
            tests["huge"].as_u64().unwrap() <= tests["tested"].as_u64().unwrap(),
            "{v}"
        );
        assert!(
            v["in_place"].as_u64().unwrap() <= v["bytes"].as_u64().unwrap(),
            "{v}"
        );
    }
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
fn a_partly_cached_file_is_read_by_the_hybrid_engine() {
    use std::os::fd::AsRawFd;
    // Not /tmp, which may be tmpfs (nothing is ever evicted there): the build's scratch dir.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let data = pattern(24 << 20);
    let path = file_with(dir.path(), "f", &data);
    // Just written, so cached but dirty: write it back first (fadvise drops only clean
    // pages), then evict all but the first third.
    let f = std::fs::File::open(&path).unwrap();
    f.sync_data().unwrap();
    // SAFETY: advice on a descriptor we hold.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 8 << 20, 0, libc::POSIX_FADV_DONTNEED) };
    assert_eq!(rc, 0, "posix_fadvise");
    let v = fast_json(&[path.to_str().unwrap()]);
    assert_eq!(v["xor_hex"], reference_xor(&data));
    let resident = v["residency_before"]["resident_pages"].as_f64().unwrap()
        / v["residency_before"]["total_pages"].as_f64().unwrap();
    if !(0.1..0.9).contains(&resident) {
        eprintln!(
            "skipped: {:.0}% resident after fdatasync and fadvise(DONTNEED) of two thirds: \
             this file system does not evict (tmpfs?)",
            100.0 * resident
        );
        return;
    }
    if v["engine"] == "pread" {
        eprintln!("skipped: O_DIRECT is refused here: {}", v["fallbacks"]);
        return;
    }
    assert_eq!(v["engine"], "hybrid", "{v}");
    assert!(v["fallbacks"].as_array().unwrap().is_empty(), "{v}");
}

#[test]
fn a_file_given_as_stdin_is_read_from_its_current_offset_which_is_left_at_the_end() {
    use std::io::{Seek, SeekFrom};
    let dir = tempfile::tempdir().unwrap();
    for size in [3usize, 5000, (3 << 20) + 5] {
        let data = pattern(size);
        let path = file_with(dir.path(), &format!("f{size}"), &data);
        for offset in [0u64, 1, 100, 4096 + 3] {
            let tail = &data[(offset as usize).min(size)..];
            for engine in ["auto"].iter().chain(ENGINES.iter()) {
                // `{ dd bs=OFFSET count=1 of=/dev/null; ioscope fast -; } < f`: the child's
                // stdin shares this open file, and so its position.
                let mut stdin = std::fs::File::open(&path).unwrap();
                stdin.seek(SeekFrom::Start(offset)).unwrap();
                let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
                cmd.args(["fast", "-", "--json"]);
                if *engine != "auto" {
                    cmd.args(["--engine", engine]);
                }
                let out = cmd.stdin(stdin.try_clone().unwrap()).output().unwrap();
                let what = format!("size {size} offset {offset} engine {engine}");
                assert!(
                    out.status.success(),
                    "{what}: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(v["xor_hex"], reference_xor(tail), "{what}: {v}");
                assert_eq!(v["bytes"], tail.len() as u64, "{what}");
                assert_eq!(
                    stdin.stream_position().unwrap(),
                    offset.max(size as u64),
                    "{what}: the offset is left at the end, as cat leaves it"
                );
            }
        }
    }
}

/// A /sys file that every Linux has, with its content (stable between two reads).
fn a_sys_file() -> Option<(&'static str, Vec<u8>)> {
    [
        "/sys/kernel/mm/transparent_hugepage/enabled",
        "/sys/devices/system/cpu/online",
        "/sys/kernel/kexec_loaded",
        "/sys/power/state",
    ]
    .into_iter()
    .find_map(|p| {
        std::fs::read(p)
            .ok()
            .filter(|c| !c.is_empty())
            .map(|c| (p, c))
    })
}

#[test]
fn sys_files_are_read_to_their_end_by_every_engine_through_a_visible_fallback() {
    let Some((path, content)) = a_sys_file() else {
        eprintln!("skipped: no readable /sys file here (is sysfs mounted?)");
        return;
    };
    for engine in ENGINES {
        let v = fast_json(&[path, "--engine", engine]);
        assert_eq!(
            v["xor_hex"],
            reference_xor(&content),
            "{path} via {engine}: {v}"
        );
        assert_eq!(v["bytes"], content.len() as u64, "{path} via {engine}");
        assert_eq!(v["engine"], "stream", "{path} via {engine}");
        let fallbacks = v["fallbacks"].as_array().unwrap();
        if engine == "stream" {
            assert!(fallbacks.is_empty(), "{v}");
        } else {
            let first = fallbacks[0].as_str().unwrap();
            assert!(
                first.starts_with(&format!("{engine}: ")) && first.contains("sysfs"),
                "{path} via {engine}: {v}"
            );
        }
    }
    let v = fast_json(&[path]);
    assert_eq!(v["engine"], "stream");
    assert!(v["reason"].as_str().unwrap().contains("sysfs"), "{v}");
    let v = json_of(&["run", path, "-r", "4k"]);
    assert_eq!(v["xor_hex"], reference_xor(&content), "run -r {path}");
}

#[test]
fn a_refused_engine_falls_back_along_the_chain_never_to_itself() {
    for (engine, want) in [
        ("pread", vec!["pread"]),
        ("mmap", vec!["mmap", "pread"]),
        ("direct", vec!["direct", "pread"]),
        ("uring", vec!["uring", "pread"]),
    ] {
        let v = fast_json(&["/proc/version", "--engine", engine]);
        let got: Vec<&str> = v["fallbacks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f.as_str().unwrap().split(':').next().unwrap())
            .collect();
        assert_eq!(got, want, "--engine {engine}: {v}");
        assert_eq!(v["engine"], "stream");
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .starts_with("fell back to stream: "),
            "{v}"
        );
    }
}

#[test]
fn uring_lists_a_refused_o_direct_with_the_fallbacks() {
    use std::os::unix::fs::OpenOptionsExt;
    // A directory whose file system refuses O_DIRECT (tmpfs before Linux 6.6, for one).
    let dirs = ["/dev/shm", "/run/user", "/tmp", env!("CARGO_TARGET_TMPDIR")];
    let refusing = dirs.iter().find_map(|d| {
        let dir = tempfile::tempdir_in(d).ok()?;
        let path = file_with(dir.path(), "f", &pattern((2 << 20) + 1));
        let refused = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
            .is_err();
        refused.then_some((dir, path))
    });
    let Some((_dir, path)) = refusing else {
        eprintln!("skipped: every file system tried accepts O_DIRECT ({dirs:?})");
        return;
    };
    let v = fast_json(&[path.to_str().unwrap(), "--engine", "uring"]);
    assert_eq!(v["engine"], "uring", "{v}");
    assert_eq!(v["xor_hex"], reference_xor(&pattern((2 << 20) + 1)));
    let fallbacks = v["fallbacks"].as_array().unwrap();
    assert!(
        fallbacks
            .iter()
            .any(|f| f.as_str().unwrap().starts_with("uring O_DIRECT: refused")),
        "{v}"
    );
}

#[test]
fn a_plain_build_targets_the_host_and_the_static_build_is_opt_in() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    // What cargo reads: the config without its comments.
    let config = std::fs::read_to_string(root.join(".cargo/config.toml")).unwrap_or_default();
    let settings: Vec<&str> = config
        .lines()
        .map(|l| l.split('#').next().unwrap().trim())
        .filter(|l| !l.is_empty())
        .collect();
    assert!(
        !settings
            .iter()
            .any(|l| l.starts_with("target") || l.contains("crt-static")),
        "no pinned target and no static flag in .cargo/config.toml: {settings:?}"
    );
    // The opt-in is documented, with the --target that keeps it off build scripts.
    for doc in ["README.md", "bench/fast.sh"] {
        let text = std::fs::read_to_string(root.join(doc)).unwrap();
        assert!(
            text.contains("target-feature=+crt-static") && text.contains("--target"),
            "{doc} shows the static build"
        );
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
