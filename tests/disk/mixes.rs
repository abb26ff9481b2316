//! `disk`'s mixes and ramp: `--rw randrw --mix N` runs the pure read and write rows of its
//! shape and then the mix, whose reads and writes are counted apart and add up to the row;
//! a panel with `--mix` gains a Mix row after each shape's write; `--ramp` runs but does not
//! count its first moments; Ctrl-C during a mix ends 130 with no scratch file left; a
//! directory named with control characters and a byte that is no UTF-8 is printed escaped;
//! and the values that make no sense are one-line errors naming the option. Tests never
//! assert timings.

use crate::common::{ioscope, json_of, scratch_files, usage_error};
use serde_json::Value;

/// `disk DIR` on a scratch file of `size`, each row run once for `runtime`, then `extra`.
fn disk<'a>(dir: &'a str, size: &'a str, runtime: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "disk",
        dir,
        "--size",
        size,
        "--runtime",
        runtime,
        "--repeat",
        "1",
    ];
    args.extend_from_slice(extra);
    args
}

/// The rows of a document as `NAME direction` (`RND4K Q4T1 mix 60/40`).
fn rows_of(doc: &Value) -> Vec<String> {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let dir = match r["spec"]["mix"].as_u64() {
                Some(p) => format!("mix {p}/{}", 100 - p),
                None => r["spec"]["op"].as_str().unwrap().to_string(),
            };
            format!("{} {dir}", r["name"].as_str().unwrap())
        })
        .collect()
}

#[test]
fn a_random_mix_runs_after_its_pure_rows_and_its_directions_add_up() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let args = disk(
        d,
        "8m",
        "0.2s",
        &[
            "--rw", "randrw", "--mix", "60", "--depth", "4", "--seed", "3",
        ],
    );
    let doc = json_of(&args);
    assert_eq!(
        rows_of(&doc),
        [
            "RND4K Q4T1 read",
            "RND4K Q4T1 write",
            "RND4K Q4T1 mix 60/40"
        ]
    );
    let mix = &doc["rows"][2];
    let m = &mix["mix"];
    assert_eq!(m["read_percent"].as_u64(), Some(60), "{m}");
    let (reads, writes) = (
        m["read"]["ios"].as_u64().unwrap(),
        m["write"]["ios"].as_u64().unwrap(),
    );
    assert_eq!(reads + writes, mix["ios"].as_u64().unwrap(), "{mix}");
    assert_eq!(
        m["read"]["bytes"].as_u64().unwrap() + m["write"]["bytes"].as_u64().unwrap(),
        mix["bytes"].as_u64().unwrap()
    );
    // Drawn per I/O from a hash: near the share asked over hundreds of I/Os.
    let share = reads as f64 / (reads + writes) as f64;
    assert!(reads + writes >= 100, "{mix}");
    assert!((0.45..=0.75).contains(&share), "{share}: {m}");
    assert!(
        m["read"]["latency_us"]["p99"].as_f64().unwrap() > 0.0,
        "{m}"
    );
    assert!(
        m["write"]["latency_us"]["p99"].as_f64().unwrap() > 0.0,
        "{m}"
    );
    // The mix's reads were checked against the generator like a read row's.
    assert_eq!(mix["verify"]["bad_blocks"].as_u64(), Some(0), "{mix}");
    assert!(mix["verify"]["blocks"].as_u64().unwrap() > 0, "{mix}");
    // Where a block device counted the mix, its read share is there too.
    if !mix["device"].is_null() {
        let dev = m["device_read_share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&dev), "{m}");
    }
    assert!(scratch_files(dir.path()).is_empty());

    // The text names the mix and its cost; the CSV has its directions apart.
    let out = ioscope().args(&args).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let said = text
        .lines()
        .find(|l| l.starts_with("mix "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        said.contains("RND4K Q4T1 mix 60/40: ") && said.contains("the pure rows predict"),
        "{said}"
    );
    assert!(said.contains("(60% asked)"), "{said}");
    let csv = tempfile::NamedTempFile::new().unwrap();
    let path = csv.path().to_str().unwrap();
    let out = ioscope()
        .args(&args)
        .args(["--csv", path, "--force"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let table = std::fs::read_to_string(path).unwrap();
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |h: &str| {
        header
            .iter()
            .position(|x| *x == h)
            .unwrap_or_else(|| panic!("{h}"))
    };
    let last: Vec<&str> = lines.last().unwrap().split(',').collect();
    assert_eq!(last[at("op")], "mix");
    assert_eq!(last[at("mix_read_percent")], "60");
    assert!(last[at("mix_read_iops")].parse::<f64>().unwrap() > 0.0);
}

#[test]
fn a_panel_with_mix_gains_a_mix_row_after_each_write() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&disk(
        dir.path().to_str().unwrap(),
        "4m",
        "0.05s",
        &["--profile", "real-world", "--mix", "70%"],
    ));
    assert_eq!(
        rows_of(&doc),
        [
            "SEQ1M Q1T1 read",
            "SEQ1M Q1T1 write",
            "SEQ1M Q1T1 mix 70/30",
            "RND4K Q1T1 read",
            "RND4K Q1T1 write",
            "RND4K Q1T1 mix 70/30",
        ]
    );
}

#[test]
fn a_ramp_is_run_but_left_out_of_the_figures() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let doc = json_of(&disk(
        dir.path().to_str().unwrap(),
        "4m",
        "0.1s",
        &["--rw", "randread", "--depth", "2", "--ramp", "3s"],
    ));
    assert_eq!(doc["ramp_seconds"].as_f64(), Some(3.0), "{doc}");
    let row = &doc["rows"][0];
    // The row's seconds are counted from the ramp's end: a tenth of a second asked, not
    // the 3.1 s it ran (the bound is loose: a loaded machine reaps late).
    let seconds = row["seconds"].as_f64().unwrap();
    assert!(seconds < 2.0, "{seconds}: {row}");
    assert!(row["ios"].as_u64().unwrap() > 0, "{row}");
}

#[test]
fn mixes_and_ramps_that_make_no_sense_are_one_line_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let cases: [(&[&str], &str); 11] = [
        (
            &["--rw", "randrw", "--mix", "101"],
            "--mix '101' is not a percent",
        ),
        (&["--rw", "randrw", "--mix", "many"], "--mix 'many'"),
        (
            &["--rw", "randread", "--mix", "70"],
            "give --rw randrw or rw",
        ),
        (
            &["--rw", "randrw", "--depth-curve"],
            "the depth curve runs one direction",
        ),
        (
            &["--depth-curve", "--mix", "50"],
            "the depth curve runs one direction",
        ),
        (
            &["--preset", "fsync", "--mix", "70"],
            "--mix is for the panel and --rw randrw|rw; the fsync and sync-methods presets only write",
        ),
        (
            &["--preset", "sync-methods", "--mix", "70"],
            "--mix is for the panel and --rw randrw|rw; the fsync and sync-methods presets only write",
        ),
        (
            &["--preset", "fsync", "--ramp", "1s"],
            "--ramp is for the panel",
        ),
        (&["--rw", "read", "--ramp", "soon"], "--ramp"),
        // A year and a day of ramp: refused before the scratch file is made.
        (
            &["--rw", "randrw", "--ramp", "8785h"],
            "--ramp '8785h' is longer than the limit of 8760h (365 days)",
        ),
        (
            &["--rw", "read", "--ramp", "100000000h"],
            "--ramp '100000000h' is longer than the limit",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["disk", d];
        all.extend_from_slice(args);
        let err = usage_error(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn ctrl_c_during_a_mix_row_ends_130_with_a_partial_document_and_no_scratch_file() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir_in(".").unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    // The series file gains a row's lines as the row ends: once the pure write row's are
    // there, the mix row is running.
    let series = out_dir.path().join("series.jsonl");
    let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(disk(
            dir.path().to_str().unwrap(),
            "8m",
            "5s",
            &[
                "--rw",
                "randrw",
                "--depth",
                "4",
                "--min-free",
                "0",
                "--json",
            ],
        ))
        .arg("--series")
        .arg(&series)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let in_mix = || std::fs::read_to_string(&series).is_ok_and(|t| t.contains("\"op\":\"write\""));
    // A safety limit, not a timing assertion: two 5 s rows and the fill come first.
    while !in_mix() && started.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(in_mix(), "the pure rows never ended");
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill only sends a signal to the child we spawned.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("one JSON document");
    assert_eq!(doc["schema"], "ioscope/disk/v2");
    assert_eq!(doc["complete"], false, "{doc}");
    let rows = rows_of(&doc);
    assert_eq!(
        rows[..2],
        ["RND4K Q4T1 read", "RND4K Q4T1 write"],
        "the pure rows are kept: {rows:?}"
    );
    assert!(
        scratch_files(dir.path()).is_empty(),
        "{:?}",
        scratch_files(dir.path())
    );
}

#[test]
fn a_directory_named_with_controls_and_a_byte_that_is_no_utf8_is_printed_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir_in(".").unwrap();
    // ESC drives a terminal, a newline forges a line, 0xff is no UTF-8.
    let evil = dir
        .path()
        .join(std::ffi::OsStr::from_bytes(b"e\x1b[31mvil\xff\nmix forged"));
    if let Err(e) = std::fs::create_dir(&evil) {
        eprintln!("skipped: this file system refuses a name with a 0xff byte: {e}");
        return;
    }
    let args = |json: bool| {
        let mut cmd = ioscope();
        cmd.arg("disk").arg(&evil).args([
            "--rw",
            "randrw",
            "--depth",
            "2",
            "--size",
            "2m",
            "--runtime",
            "0.05s",
            "--repeat",
            "1",
        ]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = args(false);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("the text is UTF-8");
    assert!(!text.contains('\u{1b}'), "{text}");
    // The control characters escaped, the byte that is no UTF-8 written `\xff` (as `run`,
    // `fast` and `trace` show it), and no line forged.
    assert!(text.contains("e\\u{1b}[31mvil\\xff\\nmix forged"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.starts_with("mix")).count(),
        1,
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("mix       RND4K Q2T1 mix 70/30: ")),
        "{text}"
    );
    let out = args(true);
    assert!(out.status.success());
    let doc: Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let file = doc["file"].as_str().unwrap();
    assert!(file.contains("e\u{1b}[31mvil\\xff\nmix forged/"), "{file}");
    assert_eq!(rows_of(&doc)[2], "RND4K Q2T1 mix 70/30");
    assert!(scratch_files(&evil).is_empty());
}

#[test]
fn a_row_of_mixed_sizes_draws_each_size_by_its_share_and_checks_its_reads() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    let args = disk(
        d,
        "8m",
        "0.2s",
        &[
            "--rw",
            "randread",
            "--bs",
            "4k:60,16k:30,64k:10",
            "--depth",
            "4",
            "--seed",
            "5",
        ],
    );
    let doc = json_of(&args);
    let row = &doc["rows"][0];
    assert_eq!(
        row["name"].as_str(),
        Some("RND4K:60,16K:30,64K:10 Q4T1"),
        "{row}"
    );
    assert_eq!(row["spec"]["block"].as_u64(), Some(65536), "{row}");
    let sizes = row["sizes"].as_array().unwrap();
    let ios: Vec<u64> = sizes.iter().map(|s| s["ios"].as_u64().unwrap()).collect();
    let all: u64 = ios.iter().sum();
    assert_eq!(all, row["ios"].as_u64().unwrap(), "{row}");
    // The bytes are the sizes' I/Os times their sizes, every one whole.
    let bytes: u64 = sizes
        .iter()
        .map(|s| s["ios"].as_u64().unwrap() * s["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(bytes, row["bytes"].as_u64().unwrap(), "{row}");
    assert!(all >= 100, "{row}");
    let share = ios[0] as f64 / all as f64;
    assert!((0.45..=0.75).contains(&share), "{share}: {row}");
    assert_eq!(row["verify"]["bad_blocks"].as_u64(), Some(0), "{row}");
    // The text says the split done against the split asked.
    let out = ioscope().args(&args).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let said = text
        .lines()
        .find(|l| l.starts_with("sizes "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        said.contains("4 KiB ") && said.contains("(60% asked)"),
        "{said}"
    );
    assert!(scratch_files(dir.path()).is_empty());
}

#[test]
fn splits_that_do_not_add_up_are_one_line_errors() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for (bs, expected) in [
        ("4k:60,64k:30", "add up to 90%, not 100%"),
        (
            "4k:50,64k:40",
            "--bs '4k:50,64k:40': the shares add up to 90%, not 100%",
        ),
        ("4k:50,4k:50", "given twice"),
        ("4k:60,64x:40", "'64x' is not a block size"),
        ("4k:60,1000:40", "not a multiple of 512"),
        ("4k:60,64k", "'64k' has no share"),
        ("4k:160,64k:40", "'160' is not a percent"),
    ] {
        let err = usage_error(&["disk", d, "--rw", "randread", "--bs", bs]);
        assert!(err.contains(expected), "{bs}: {err}");
        assert!(
            err.contains(&format!("--bs '{bs}'")),
            "names the option: {err}"
        );
    }
}

#[test]
fn a_skewed_row_says_how_much_went_to_its_hottest_tenth_beside_the_theory() {
    let dir = tempfile::tempdir_in(".").unwrap();
    let d = dir.path().to_str().unwrap();
    for (dist, low, high) in [("zipf:1.2", 0.6, 1.0), ("uniform", 0.0, 0.3)] {
        let doc = json_of(&disk(
            d,
            "4m",
            "0.2s",
            &["--rw", "randread", "--dist", dist, "--depth", "4"],
        ));
        let row = &doc["rows"][0];
        assert!(row["name"].as_str().unwrap().ends_with(dist), "{row}");
        let hot = &row["hot"];
        let measured = hot["measured"].as_f64().unwrap();
        let theory = hot["theory"].as_f64().unwrap();
        assert!((low..=high).contains(&measured), "{dist}: {hot}");
        assert!((low..=high).contains(&theory), "{dist}: {hot}");
        assert_eq!(hot["blocks"].as_u64(), Some(1024), "{hot}");
        assert_eq!(row["verify"]["bad_blocks"].as_u64(), Some(0), "{row}");
    }
    for (args, expected) in [
        (
            &["--rw", "randread", "--dist", "zipf:-1"][..],
            "--dist zipf:-1",
        ),
        (
            &["--rw", "randrw", "--dist", "zipf:-1"][..],
            "--dist zipf:-1",
        ),
        (
            &["--rw", "randread", "--dist", "gauss"][..],
            "--dist 'gauss'",
        ),
        (
            &["--rw", "read", "--dist", "zipf:1.2"][..],
            "--dist skews random offsets",
        ),
        (&["--dist", "zipf:1.2"][..], "give --rw randread"),
    ] {
        let mut all = vec!["disk", d];
        all.extend_from_slice(args);
        let err = usage_error(&all);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert!(scratch_files(dir.path()).is_empty());
}
