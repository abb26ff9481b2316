//! `ioscope run`: checksums of reads and writes, JSON, and every kind of bad input.

use crate::common::*;
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

const SIZES: [usize; 10] = [0, 1, 3, 4, 5, 4095, 4096, 4097, (1 << 20) + 3, 3 << 20];

#[test]
fn reading_prints_the_reference_xor_for_every_size_and_block_size() {
    let dir = tempfile::tempdir().unwrap();
    for size in SIZES {
        let data = pattern(size);
        let path = file_with(dir.path(), &format!("f{size}"), &data);
        let want = reference_xor(&data);
        for bs in ["1k", "7", "4096", "1m"] {
            if bs == "7" && size > 1 << 16 {
                continue;
            }
            let v = json_of(&["run", path.to_str().unwrap(), "-r", bs]);
            assert_eq!(v["xor_hex"], want, "size {size} bs {bs}");
            assert_eq!(v["bytes"], size as u64, "size {size} bs {bs}");
        }
    }
}

#[test]
fn a_64_mib_file_reads_to_the_same_xor_at_every_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(64 << 20);
    let path = file_with(dir.path(), "big", &data);
    let want = reference_xor(&data);
    for bs in ["1000", "64k", "1m", "16m"] {
        let v = json_of(&["run", path.to_str().unwrap(), "-r", bs]);
        assert_eq!(v["xor_hex"], want, "bs {bs}");
    }
}

#[test]
fn quiet_prints_the_xor_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(10_003);
    let path = file_with(dir.path(), "f", &data);
    let out = ioscope()
        .args(["run", path.to_str().unwrap(), "-r", "4k", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}\n", reference_xor(&data))
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_human_output_leads_with_the_xor_and_the_canonical_argument_order_works() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(10_000);
    let path = file_with(dir.path(), "f", &data);
    let out = ioscope()
        .args(["run", path.to_str().unwrap(), "-r", "100", "50"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(first, format!("xor       {}", reference_xor(&data[..5000])));
    assert!(text.contains("50 read() of 100 B"), "{text}");
    assert!(text.contains("MiB/s"), "{text}");
    assert!(text.contains("calls/s"), "{text}");
}

#[test]
fn the_read_rate_is_printed_in_mib_per_second_and_in_bytes_per_second() {
    // One measured read, its JSON rendered again as text: both figures are of the same
    // bytes_per_second, raw in the JSON. No timing is asserted, only how it is written.
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let v = json_of(&["run", path.to_str().unwrap(), "-r", "64k"]);
    let rate = v["bytes_per_second"].as_f64().unwrap();
    assert!(rate > 0.0, "{v}");
    let text = report_text(&v);
    let line = text
        .lines()
        .find(|l| l.starts_with("rate "))
        .unwrap_or_else(|| panic!("no rate line in:\n{text}"));
    let bytes = ioscope::units::group_thousands(rate.round() as u64);
    let mib = ioscope::units::format_mib_per_s(rate);
    assert_eq!(
        line.split(", ").next(),
        Some(format!("rate      {mib} ({bytes} B/s)").as_str()),
        "{line}"
    );
}

#[test]
fn a_block_count_limits_the_bytes_read_and_the_calls_made() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(10_000);
    let path = file_with(dir.path(), "f", &data);
    let v = json_of(&["run", path.to_str().unwrap(), "-r", "3", "7"]);
    assert_eq!(v["bytes"], 21);
    assert_eq!(v["calls"], 7);
    assert_eq!(v["xor_hex"], reference_xor(&data[..21]));
    // A count past the end stops at EOF; the call that found EOF is counted.
    let v = json_of(&["run", path.to_str().unwrap(), "-r", "4k", "100"]);
    assert_eq!(v["bytes"], 10_000);
    assert_eq!(v["calls"], 4);
}

#[test]
fn a_file_shorter_than_its_block_count_is_said_to_be_short_with_what_was_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(10_000);
    let path = file_with(dir.path(), "f", &data);
    let p = path.to_str().unwrap();
    // 100 blocks of 4 KiB asked, 10,000 bytes there: a typed warning in the JSON.
    let v = json_of(&["run", p, "-r", "4k", "100"]);
    assert_eq!(v["xor_hex"], reference_xor(&data));
    let warnings = v["warnings"].as_array().unwrap();
    let short = warnings
        .iter()
        .find(|w| w["kind"] == "short_read")
        .unwrap_or_else(|| panic!("no short_read in {warnings:?}"));
    assert_eq!(short["read"], 10_000);
    assert_eq!(short["block_size"], 4096);
    assert_eq!(short["block_count"], 100);
    // In the text: the read line on stdout, and the warning's cause and fix on stderr.
    let out = ioscope()
        .args(["run", p, "-r", "4k", "100"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(&format!(
            "read      9.8 KiB (10,000 bytes) from {p}, short of the 400 KiB asked"
        )),
        "{text}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains(&format!("warning: {p} is short: it ended after 9.8 KiB (10,000 bytes), not the 400 KiB of 100 blocks of 4 KiB asked"))
            && stderr.contains("ask for 2 blocks or fewer"),
        "{stderr}"
    );
    // Standard input that ends early is short too.
    let out = ioscope()
        .args(["run", "-", "-r", "4k", "3", "--json"])
        .write_stdin(pattern(100))
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"][0]["kind"], "short_read", "{v}");
    assert_eq!(v["warnings"][0]["read"], 100);
    // A count the file holds, or no count (to the end), is not short.
    for args in [&[p, "-r", "4k", "2"][..], &[p, "-r", "4k"]] {
        let mut argv = vec!["run"];
        argv.extend_from_slice(args);
        let v = json_of(&argv);
        let kinds: Vec<&serde_json::Value> = v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| &w["kind"])
            .collect();
        assert!(
            !kinds.contains(&&serde_json::json!("short_read")),
            "{args:?}: {kinds:?}"
        );
        let out = ioscope().args(&argv).output().unwrap();
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("short of"),
            "{args:?}"
        );
    }
}

#[test]
fn proc_files_that_stat_as_empty_are_read_to_their_end() {
    let v = json_of(&["run", "/proc/version", "-r", "4k"]);
    let want = std::fs::read("/proc/version").unwrap();
    assert_eq!(v["xor_hex"], reference_xor(&want));
    assert_eq!(v["bytes"], want.len() as u64);

    // cpuinfo may change between reads (CPU MHz lines), so accept either neighbour.
    let before = std::fs::read("/proc/cpuinfo").unwrap();
    let v = json_of(&["run", "/proc/cpuinfo", "-r", "64"]);
    let after = std::fs::read("/proc/cpuinfo").unwrap();
    assert!(v["bytes"].as_u64().unwrap() > 0);
    let got = v["xor_hex"].as_str().unwrap();
    assert!(
        got == reference_xor(&before) || got == reference_xor(&after),
        "{got}"
    );
}

#[test]
fn standard_input_is_read_with_a_dash() {
    let data = pattern(200_003);
    let v: serde_json::Value = serde_json::from_slice(
        &ioscope()
            .args(["run", "-", "-r", "64k", "--json"])
            .write_stdin(data.clone())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert_eq!(v["xor_hex"], reference_xor(&data));
    assert_eq!(v["file"], "stdin");
}

#[test]
fn what_is_written_reads_back_to_the_same_xor() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let p = path.to_str().unwrap();
    let w = json_of(&["run", p, "-w", "4k", "300", "--seed", "99"]);
    assert_eq!(w["bytes"], 4096 * 300);
    assert_eq!(w["seed"], 99);
    assert!(w["fsync_seconds"].as_f64().unwrap() >= 0.0);
    let r = json_of(&["run", p, "-r", "1m"]);
    assert_eq!(w["xor_hex"], r["xor_hex"]);
    assert_eq!(reference_xor(&std::fs::read(&path).unwrap()), w["xor_hex"]);
}

#[test]
fn a_seed_gives_the_same_bytes_at_any_block_size() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    json_of(&["run", a.to_str().unwrap(), "-w", "3", "1000", "--seed", "5"]);
    json_of(&["run", b.to_str().unwrap(), "-w", "1000", "3", "--seed", "5"]);
    let (a, b) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert_eq!(a.len(), 3000);
    assert_eq!(a, b);
}

#[test]
fn the_json_document_carries_schema_environment_and_kernel_checks() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let v = json_of(&["run", path.to_str().unwrap(), "-r", "4k"]);
    assert_eq!(v["schema"], "ioscope/run/v2");
    assert_eq!(v["op"], "read");
    assert!(v["version"].is_string());
    assert!(v["command_line"].as_array().unwrap().len() >= 4);
    assert!(v["environment"]["kernel"].is_string());
    assert!(v["environment"]["storage"]["filesystem"].is_string());
    assert!(v["bytes_per_second"].as_f64().unwrap() > 0.0);
    assert_eq!(v["calls"], 257);
    let checks = v["checks"].as_array().unwrap();
    assert_eq!(checks.len(), 2, "calls and bytes are cross-checked");
    assert!(checks.iter().all(|c| c["ok"] == true), "{checks:?}");
    assert_eq!(
        checks[0]["kernel"], 257,
        "the kernel counted the same read() calls"
    );
}

#[test]
fn a_missing_file_is_an_input_error_naming_the_file() {
    let out = ioscope()
        .args(["run", "/nonexistent/x", "-r", "4k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("/nonexistent/x") && line.contains("open") && line.contains("No such file"),
        "{line}"
    );
}

#[test]
fn a_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = ioscope()
        .args(["run", dir.path().to_str().unwrap(), "-r", "4k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("is a directory"));
}

#[test]
fn an_unreadable_file_is_refused_with_permission_denied() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = file_with(dir.path(), "secret", b"data");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let mut cmd = if is_root() {
        // Root reads anything; run as nobody instead, when setpriv is there to switch.
        if std::process::Command::new("setpriv")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: running as root and setpriv is not installed");
            return;
        }
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&bin);
        c
    } else {
        std::process::Command::new(&bin)
    };
    let out = cmd
        .args(["run", path.to_str().unwrap(), "-r", "4k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let line = one_line_stderr(&out);
    assert!(
        line.contains("secret") && line.contains("Permission denied"),
        "{line}"
    );
}

#[test]
fn bad_block_sizes_and_counts_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", b"abcd");
    let p = path.to_str().unwrap();
    for (args, needle) in [
        (vec!["run", p, "-r", "0"], "'0' must be greater than zero"),
        (vec!["run", p, "-r", "4x"], "invalid size '4x'"),
        (vec!["run", p, "-r", "4k", "0"], "block count"),
        (vec!["run", p, "-r", "99999999999999999999"], "too large"),
        (vec!["run", p, "-r", "2g"], "limit"),
        (vec!["run", p, "-w", "1g", "1e"], "does not fit"),
        (
            vec!["run", p, "-r", "4k", "--min-free", "much"],
            "--min-free",
        ),
    ] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_line_stderr(&out);
        assert!(
            line.contains(needle) && line.contains(p),
            "{args:?}: {line}"
        );
    }
    assert_eq!(std::fs::read(&path).unwrap(), b"abcd");
}

#[test]
fn reading_and_writing_together_or_neither_is_a_usage_error() {
    for args in [vec!["run", "f", "-r", "-w", "4k"], vec!["run", "f", "4k"]] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
}

#[test]
fn character_devices_are_refused_unless_allowed() {
    let out = ioscope()
        .args(["run", "/dev/zero", "-r", "4k", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("/dev/zero") && line.contains("--allow-device"),
        "{line}"
    );
    let v = json_of(&["run", "/dev/zero", "-r", "4k", "2", "--allow-device"]);
    assert_eq!(
        (v["bytes"].as_u64(), v["xor_hex"].as_str()),
        (Some(8192), Some("00000000"))
    );
}

#[test]
fn block_devices_are_refused_unless_allowed() {
    use std::os::unix::fs::FileTypeExt;
    let Some(dev) = std::fs::read_dir("/dev")
        .unwrap()
        .flatten()
        .find(|e| e.file_type().map(|t| t.is_block_device()).unwrap_or(false))
    else {
        eprintln!("skipped: no block device node in /dev");
        return;
    };
    let path = dev.path();
    let out = ioscope()
        .args(["run", path.to_str().unwrap(), "-r", "4k", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("is a block device") && line.contains("--allow-device"),
        "{line}"
    );
}

#[test]
fn an_existing_file_is_never_overwritten_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "keep", b"precious");
    let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
    let out = ioscope()
        .args(["run", path.to_str().unwrap(), "-w", "4k", "10"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("keep") && line.contains("--force") && line.contains("write"),
        "{line}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), b"precious");
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);

    let v = json_of(&["run", path.to_str().unwrap(), "-w", "4k", "10", "--force"]);
    assert_eq!(v["bytes"], 40960);
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 40960);
}

#[test]
fn writing_without_a_count_or_to_stdout_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x");
    let out = ioscope()
        .args(["run", path.to_str().unwrap(), "-w", "4k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("BLOCK_COUNT"));
    assert!(!path.exists());
    let out = ioscope()
        .args(["run", "-", "-w", "4k", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn writing_into_a_missing_directory_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/f");
    let out = ioscope()
        .args(["run", path.to_str().unwrap(), "-w", "4k", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("no/such/dir/f"));
}

#[test]
fn a_write_that_would_eat_the_free_space_margin_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big");
    let out = ioscope()
        .args([
            "run",
            path.to_str().unwrap(),
            "-w",
            "1m",
            "16",
            "--min-free",
            "1000000t",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("not enough free space") && line.contains("16 MiB needed"),
        "{line}"
    );
    assert!(!path.exists(), "nothing was created");
}

#[test]
fn interrupting_a_write_removes_the_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("partial");
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    // 1-byte writes of 1 GiB: slow enough to be caught in the middle.
    let child = std::process::Command::new(bin)
        .args([
            "run",
            path.to_str().unwrap(),
            "-w",
            "1",
            "1g",
            "--min-free",
            "1m",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "the write never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    assert!(!path.exists(), "the partial file was removed");
    assert!(String::from_utf8_lossy(&out.stderr).contains("interrupted"));
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1000));
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let mut child = std::process::Command::new(bin)
        .args(["run", path.to_str().unwrap(), "-r", "4k"])
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

#[test]
fn json_output_works_for_file_names_that_are_not_utf8() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let name = std::ffi::OsStr::from_bytes(b"bad\xffname");
    let path = dir.path().join(name);
    let bytes = pattern(10_000);
    if let Err(e) = std::fs::write(&path, &bytes) {
        eprintln!("skipped: this file system refuses a name with a 0xff byte: {e}");
        return;
    }
    let shown = format!("{}/bad\\xffname", dir.path().display());
    for (command, args) in [("fast", &[][..]), ("run", &["-r", "4k"])] {
        let out = ioscope()
            .arg(command)
            .arg(&path)
            .args(args)
            .arg("--json")
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
        assert_eq!(v["xor_hex"], reference_xor(&bytes), "{command}");
        assert_eq!(v["file"], shown.as_str());
        assert!(
            v["command_line"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a == shown.as_str()),
            "{v}"
        );
    }
    let written = dir.path().join(std::ffi::OsStr::from_bytes(b"out\xff"));
    let out = ioscope()
        .arg("run")
        .arg(&written)
        .args(["-w", "4k", "3", "--min-free", "1m", "--json"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let kept = std::fs::read(&written).expect("the written file stays");
    assert_eq!(kept.len(), 3 * 4096, "complete");
    assert_eq!(v["xor_hex"], reference_xor(&kept));
}

#[test]
fn writing_into_a_fifo_with_force_makes_no_fsync_and_claims_none() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ff");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo only reads the NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap().len())
    };
    let out = ioscope()
        .args(["run", fifo.to_str().unwrap(), "-w", "64k", "4", "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(reader.join().unwrap(), 4 * 65536);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("fsync"), "no fsync is claimed: {text}");
}

#[test]
fn an_error_naming_a_file_with_terminal_escapes_prints_them_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("a\u{1b}[2Jb\u{7}");
    let out = ioscope()
        .args(["run", name.to_str().unwrap(), "-r", "4k"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{7}'),
        "{line:?}"
    );
    assert!(line.contains("a\\u{1b}[2Jb\\u{7}"), "{line}");
}

#[test]
fn a_run_records_the_machines_stalls_where_the_kernel_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let v = json_of(&["run", path.to_str().unwrap(), "-r", "64k"]);
    if !std::path::Path::new("/proc/pressure/cpu").exists() {
        eprintln!("skipped: no /proc/pressure here (a container, or a kernel without PSI)");
        assert!(v.get("pressure").is_none(), "{v}");
        return;
    }
    for resource in ["cpu", "io", "memory"] {
        if !std::path::Path::new("/proc/pressure")
            .join(resource)
            .exists()
        {
            continue;
        }
        let stall = &v["pressure"][resource];
        assert!(stall["stalled_us"].is_u64(), "{resource}: {v}");
        let share = stall["share"].as_f64().expect("a share");
        assert!((0.0..=1.0).contains(&share), "{resource}: {share}");
        assert!(stall["avg10"].as_f64().is_some_and(|a| a >= 0.0), "{v}");
    }
    // The environment says the machine's load and its cores.
    assert!(
        v["environment"]["load_1m"]
            .as_f64()
            .is_some_and(|l| l >= 0.0),
        "{v}"
    );
    assert!(
        v["environment"]["cores_online"]
            .as_u64()
            .is_some_and(|c| c >= 1),
        "{v}"
    );
}
