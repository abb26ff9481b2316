//! `ioscope study`: every part on a directory, verified, as a report directory (JSON, CSV,
//! SVG, HTML) that a browser renders; tidy afterwards, partial but valid when interrupted;
//! `ioscope report` puts several studies side by side.

use crate::common::*;
use std::path::Path;

fn files_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

/// A quick study of `dir` restricted to `only`, its report in `out`; returns the JSON.
fn quick(dir: &Path, out: &Path, only: &str) -> serde_json::Value {
    let cwd = tempfile::tempdir().unwrap();
    let o = in_dir(
        cwd.path(),
        &[
            "study",
            dir.to_str().unwrap(),
            "--level",
            "quick",
            "--only",
            only,
            "--size",
            "4m",
            "--block-sizes",
            "4k,64k,1m",
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
    );
    ok(&o);
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_study_verifies_its_reads_and_writes_every_file_of_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r");
    let v = quick(dir.path(), &out, "read-sweep,cache,syscalls");
    assert_eq!(v["schema"], "ioscope/study/v3");
    assert_eq!(v["verified"], true);
    assert_eq!(v["complete"], true);
    let rows = v["write_read"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "the write and the read back");
    assert_eq!(rows[0]["bytes"], 4 << 20);
    assert_eq!(rows[1]["verified"], true);
    assert_ne!(
        rows[0]["xor_hex"], "00000000",
        "the seeded data has a real checksum"
    );
    let steps: Vec<&str> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["part"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["write-read", "read-sweep", "cache", "syscalls"]);
    let points = v["read_sweep"]["points"].as_array().unwrap();
    let states = if v["device"].is_null() { 1 } else { 2 };
    assert_eq!(
        points.len(),
        3 * states,
        "three block sizes per cache state"
    );
    assert!(
        v["write_sweep"].is_null() && v["transfer"].is_null(),
        "not asked for"
    );
    // One answer per question (issue 38): the warm read pooled over the sweep's 1 MiB
    // point and the cache part's warm read (where a device is behind the directory).
    let answers = v["answers"]
        .as_array()
        .expect("the answers are in the document");
    let warm = answers
        .iter()
        .find(|a| a["state"] == "warm")
        .expect("a warm answer");
    let parts: Vec<&str> = warm["parts"]
        .as_array()
        .unwrap()
        .iter()
        .chain(warm["left_out"].as_array().into_iter().flatten())
        .map(|m| m["part"].as_str().unwrap())
        .collect();
    assert!(parts.contains(&"read-sweep"), "{warm}");
    if !v["device"].is_null() {
        assert!(parts.contains(&"cache"), "{warm}");
        assert!(answers.iter().any(|a| a["state"] == "cold"), "{v}");
    }
    for name in [
        "study.json",
        "report.html",
        "report.md",
        "write-read.csv",
        "read-sweep.csv",
        "read-sweep.svg",
        "syscalls.csv",
        "syscalls.svg",
    ] {
        assert!(out.join(name).is_file(), "{name} missing");
    }
    let saved: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("study.json")).unwrap()).unwrap();
    assert_eq!(
        saved["write_read"], v["write_read"],
        "the file is the document printed"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "no script needed to read it");
    for fetch in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(!html.contains(fetch), "nothing from the network: {fetch}");
    }
    for id in ["write-read", "read-sweep", "syscalls"] {
        assert!(
            html.contains(&format!("<section class=\"part\" id=\"{id}\"")),
            "{id}"
        );
    }
    assert!(html.contains("id=\"chart-read-sweep\""));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.starts_with("# ioscope study of "), "{md:.200}");
    assert!(
        md.contains("![Read throughput") && md.contains("](read-sweep.svg)"),
        "charts linked"
    );
    assert!(md.lines().any(|l| l.starts_with("| --- |")), "tables");
    // The scratch file is gone; the studied directory is as it was.
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
}

#[test]
fn the_default_directories_are_made_and_the_report_is_named_at_the_end() {
    let cwd = tempfile::tempdir().unwrap();
    let out = in_dir(
        cwd.path(),
        &[
            "study",
            "--level",
            "quick",
            "--only",
            "write-read",
            "--size",
            "2m",
        ],
    );
    ok(&out);
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(text.contains("every byte verified in place"), "{text}");
    assert!(
        !cwd.path().join("ioscope-study").exists(),
        "scratch directory removed"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    let last = stderr.lines().last().unwrap_or_default();
    assert!(last.starts_with("report: ioscope-report-"), "{stderr}");
    let page = cwd.path().join(last.trim_start_matches("report: "));
    assert!(page.is_file(), "{}", page.display());
}

#[test]
fn keep_leaves_the_scratch_file_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let out = in_dir(
        cwd.path(),
        &[
            "study",
            dir.path().to_str().unwrap(),
            "--only",
            "write-read",
            "--size",
            "1m",
            "--keep",
            "-o",
            res.path().join("r").to_str().unwrap(),
            "--json",
        ],
    );
    ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let kept = v["kept_file"].as_str().unwrap();
    assert_eq!(std::fs::metadata(kept).unwrap().len(), 1 << 20);
    assert_eq!(v["kept_bytes"], 1 << 20, "the size kept is stated");
}

#[test]
fn bad_targets_are_refused_and_leave_no_report_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = file_with(dir.path(), "f", b"x");
    let cwd = tempfile::tempdir().unwrap();
    for target in ["/nonexistent/dir", file.to_str().unwrap()] {
        let out = in_dir(cwd.path(), &["study", target, "--size", "1m"]);
        assert_eq!(out.status.code(), Some(2));
        assert!(one_line_stderr(&out).contains(target));
    }
    let out = in_dir(
        cwd.path(),
        &[
            "study",
            dir.path().to_str().unwrap(),
            "--min-free",
            "1000000t",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("free"));
    assert_eq!(files_in(dir.path()), ["f"], "nothing written");
    assert!(
        files_in(cwd.path()).is_empty(),
        "no empty report left behind"
    );
}

#[test]
fn a_report_directory_that_holds_files_is_not_written_into_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    file_with(res.path(), "notes.txt", b"mine");
    let d = dir.path().to_str().unwrap();
    let r = res.path().to_str().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let out = in_dir(cwd.path(), &["study", d, "--size", "1m", "-o", r]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("not empty"));
    let out = in_dir(
        cwd.path(),
        &[
            "study",
            d,
            "--size",
            "1m",
            "--only",
            "write-read",
            "-o",
            r,
            "--force",
        ],
    );
    ok(&out);
    assert_eq!(
        std::fs::read(res.path().join("notes.txt")).unwrap(),
        b"mine"
    );
    assert!(res.path().join("report.html").is_file());
}

#[test]
fn a_report_directory_another_study_is_writing_is_refused_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    // What a running study leaves in its --out directory while it works.
    file_with(res.path(), ".ioscope-writing", b"");
    let cwd = tempfile::tempdir().unwrap();
    let out = in_dir(
        cwd.path(),
        &[
            "study",
            dir.path().to_str().unwrap(),
            "--only",
            "write-read",
            "--size",
            "1m",
            "-o",
            res.path().to_str().unwrap(),
            "--force",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("another study is writing there"));
    assert_eq!(
        files_in(res.path()),
        [".ioscope-writing"],
        "nothing mixed in"
    );
}

#[test]
fn interrupting_a_study_keeps_a_valid_partial_report_and_no_scratch_file() {
    // Ctrl-C, and the hangup a closed terminal or a dropped SSH session sends.
    for signal in [libc::SIGINT, libc::SIGHUP] {
        interrupted_by(signal);
    }
}

fn interrupted_by(signal: i32) {
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let out_dir = res.path().join("r");
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    // Standard level, every part: far longer than the wait below.
    let child = std::process::Command::new(bin)
        .current_dir(res.path())
        .args([
            "study",
            dir.path().to_str().unwrap(),
            "--size",
            "8m",
            "--skip",
            "transfer",
            "-o",
            out_dir.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    // The first part saved: the read sweep is running now.
    while !out_dir.join("study.json").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the study never finished its first part"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending a signal to our own child process.
    unsafe { libc::kill(child.id() as i32, signal) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "signal {signal}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out_dir.join("study.json")).unwrap())
            .unwrap();
    assert_eq!(v["complete"], false);
    assert_eq!(v["write_read"].as_array().unwrap().len(), 2, "kept");
    let html = std::fs::read_to_string(out_dir.join("report.html")).unwrap();
    assert!(html.contains("PARTIAL REPORT"), "clearly marked");
    assert!(html.ends_with("</html>\n"), "a whole page");
    assert!(
        files_in(dir.path()).is_empty(),
        "scratch removed: {:?}",
        files_in(dir.path())
    );
    assert!(
        files_in(&out_dir)
            .iter()
            .all(|n| !n.ends_with(".tmp") && !n.starts_with(".ioscope")),
        "no half-written report file, no claim left: {:?}",
        files_in(&out_dir)
    );
}

#[test]
fn bad_flags_for_a_study_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    for (args, needle) in [
        (vec!["study", d, "--size", "0"], "greater than zero"),
        (vec!["study", d, "--size", "lots"], "invalid size 'lots'"),
        (
            vec!["study", d, "--block-sizes", "4k,0"],
            "greater than zero",
        ),
        (vec!["study", d, "--min-free", "x"], "--min-free"),
        (vec!["study", d, "--size", "100k"], "at least 1 MiB"),
        (vec!["study", d, "--skip", "write-read,cache"], "always run"),
        (
            vec!["study", d, "--size", "1m", "--block-sizes", "4k,2m"],
            "block size 2 MiB is larger than the scratch file (1 MiB)",
        ),
    ] {
        let out = in_dir(cwd.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            one_line_stderr(&out).contains(needle),
            "{args:?}: {}",
            one_line_stderr(&out)
        );
    }
    // clap's own errors: the bad value and the accepted ones.
    for (args, needles) in [
        (vec!["study", d, "--level", "slow"], ["slow", "quick"]),
        (
            vec!["study", d, "--only", "nothing"],
            ["nothing", "read-sweep"],
        ),
        (
            vec!["study", d, "--csv", "x.csv"],
            ["--csv", "unexpected argument"],
        ),
    ] {
        let out = in_dir(cwd.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(needles.iter().all(|n| err.contains(n)), "{args:?}: {err}");
    }
    assert!(files_in(cwd.path()).is_empty());
}

/// A tmpfs directory to study, if the machine has one.
fn tmpfs_dir() -> Option<tempfile::TempDir> {
    let mounts = std::fs::read_to_string("/proc/self/mounts").ok()?;
    for base in ["/dev/shm", "/run/user", "/tmp"] {
        let is_tmpfs = mounts.lines().any(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            f.len() > 2 && f[1] == base && f[2] == "tmpfs"
        });
        if is_tmpfs && let Ok(d) = tempfile::tempdir_in(base) {
            return Some(d);
        }
    }
    None
}

#[test]
fn two_media_side_by_side_differ_and_say_why() {
    let Some(shm) = tmpfs_dir() else {
        eprintln!("skipped: no tmpfs mount (/dev/shm, /run/user, /tmp) to compare with");
        return;
    };
    let disk = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let (a, b) = (res.path().join("a"), res.path().join("b"));
    quick(shm.path(), &a, "read-sweep");
    let vb = quick(disk.path(), &b, "read-sweep");
    let cwd = tempfile::tempdir().unwrap();
    let page = res.path().join("both.html");
    let out = in_dir(
        cwd.path(),
        &[
            "report",
            a.to_str().unwrap(),
            b.join("study.json").to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    ok(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("no block device under it"),
        "the tmpfs side is explained"
    );
    // Each medium by its name (the label each study stored), not "A" and "B".
    let disk_label = vb["label"].as_str().unwrap();
    assert!(html.contains("<b>tmpfs</b>") && html.contains(&format!("<b>{disk_label}</b>")));
    let warm = &html[html
        .find("id=\"chart-read_warm\"")
        .expect("warm curves overlaid")..];
    let warm = &warm[..warm.find("</figure>").unwrap()];
    assert!(
        warm.contains("tmpfs") && warm.contains(disk_label),
        "curves of both media on one chart"
    );
    if !vb["device"].is_null() {
        let cold = &html[html.find("id=\"chart-read_cold\"").expect("cold curves")..];
        let cold = &cold[..cold.find("</figure>").unwrap()];
        assert!(
            cold.contains("tmpfs (not measured)"),
            "the disk has cold reads, tmpfs has none"
        );
    }
    // The page is not replaced without --force.
    let again = in_dir(
        cwd.path(),
        &[
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(one_line_stderr(&again).contains("exists"));
}

#[test]
fn report_pages_go_only_to_new_regular_files_that_are_not_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let a = res.path().join("a");
    quick(dir.path(), &a, "write-read");
    let a_str = a.to_str().unwrap();
    let fifo = res.path().join("fifo.html");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let cwd = tempfile::tempdir().unwrap();
    let own = a.join("study.json");
    for (target, force, needle) in [
        (res.path().to_path_buf(), false, "directory"),
        (fifo.clone(), true, "not a regular file"),
        (own.clone(), true, "one of the studies being read"),
    ] {
        let mut args = vec!["report", a_str, "-o", target.to_str().unwrap()];
        if force {
            args.push("--force");
        }
        let out = in_dir(cwd.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            one_line_stderr(&out).contains(needle),
            "{args:?}: {}",
            one_line_stderr(&out)
        );
    }
    assert!(
        std::fs::read_to_string(&own).unwrap().starts_with('{'),
        "input intact"
    );
    let out = in_dir(cwd.path(), &["report", a_str, a_str]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("twice"));
    // A page made elsewhere names the study it came from, not files beside it.
    let elsewhere = res.path().join("elsewhere.html");
    ok(&in_dir(
        cwd.path(),
        &["report", a_str, "-o", elsewhere.to_str().unwrap()],
    ));
    let page = std::fs::read_to_string(&elsewhere).unwrap();
    assert!(
        page.contains("(the study this page was made from)") && !page.contains("beside this page"),
        "{}",
        &page[page.find("<footer").unwrap_or(0)..]
    );
    let own_page = std::fs::read_to_string(a.join("report.html")).unwrap();
    assert!(own_page.contains("the CSV files beside this page"));
}

#[test]
fn an_old_or_foreign_document_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let old = file_with(
        dir.path(),
        "old.json",
        br#"{"schema": "ioscope/study/v2", "rows": []}"#,
    );
    let sweep = file_with(
        dir.path(),
        "sweep.json",
        br#"{"schema": "ioscope/sweep/v2"}"#,
    );
    let cwd = tempfile::tempdir().unwrap();
    let out = in_dir(cwd.path(), &["report", old.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("older ioscope"));
    let out = in_dir(
        cwd.path(),
        &["report", old.to_str().unwrap(), sweep.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        one_line_stderr(&out).contains("study"),
        "{}",
        one_line_stderr(&out)
    );
    assert!(files_in(cwd.path()).is_empty(), "no page written");
}

/// The whole quick study, every part, opened in a real browser when there is one.
#[test]
fn the_quick_study_renders_every_section_with_its_chart_in_a_browser() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r");
    let cwd = tempfile::tempdir().unwrap();
    let o = in_dir(
        cwd.path(),
        &[
            "study",
            dir.path().to_str().unwrap(),
            "--level",
            "quick",
            "--size",
            "8m",
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
    );
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let charted: Vec<String> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["outcome"] == "done")
        .map(|s| s["part"].as_str().unwrap().to_string())
        .filter(|p| p != "cache" || !v["device"].is_null())
        .collect();
    assert!(charted.len() >= 8, "every part ran: {charted:?}");
    let page = out.join("report.html");
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped the browser check: chromium is not installed (apt-get install chromium)"
        );
        return;
    };
    let shot = res.path().join("shot.png");
    let args = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--window-size=1280,4000",
    ];
    let url = format!("file://{}", page.display());
    let s = std::process::Command::new(&browser)
        .args(args)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url)
        .output()
        .unwrap();
    assert!(s.status.success(), "{}", String::from_utf8_lossy(&s.stderr));
    let png = std::fs::read(&shot).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert!(
        png.len() > 50_000,
        "a page with charts is not a blank image ({} bytes)",
        png.len()
    );
    let dom = std::process::Command::new(&browser)
        .args(args)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    for part in &charted {
        let start = dom
            .find(&format!("id=\"chart-{part}\""))
            .unwrap_or_else(|| panic!("no chart for {part}"));
        let figure = &dom[start..start + dom[start..].find("</figure>").unwrap()];
        assert!(figure.contains("<svg"), "{part}: the chart is inline SVG");
        let marks = figure.matches("<circle").count()
            + figure.matches("<polyline").count()
            + figure.matches("<rect").count();
        assert!(marks > 2, "{part}: the chart has plotted points ({marks})");
    }
    assert_eq!(
        dom.matches("<figure class=\"chart\"").count(),
        charted.len(),
        "one chart per charted section"
    );
}

#[test]
fn a_saved_study_is_explained_with_the_machine_it_ran_on() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r");
    quick(dir.path(), &out, "read-sweep");
    // As if measured on a machine with 64 KiB pages.
    let json = out.join("study.json");
    let text = std::fs::read_to_string(&json).unwrap();
    assert_eq!(
        text.matches("\"environment\"").count(),
        1,
        "the environment is written once, by the provenance"
    );
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["environment"]["page_size"] = 65536.into();
    std::fs::write(&json, serde_json::to_string(&doc).unwrap()).unwrap();
    let saved: ioscope::cmd::study::StudyReport = serde_json::from_value(doc).unwrap();
    assert_eq!(saved.environment().page_size, 65536);
    // `report DIR --markdown` gives the whole study, explained with the saved page size.
    let md = res.path().join("again.md");
    let cwd = tempfile::tempdir().unwrap();
    ok(&in_dir(
        cwd.path(),
        &[
            "report",
            out.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
        ],
    ));
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("## Read throughput against block size"), "{md}");
    // The page is named only where the curve's story needs it (the fitted model's
    // crossover, or the rise up to the page); where it is, it is the saved machine's.
    assert!(!md.contains(" 4 KiB memory page"), "{md}");
    if md.contains("memory page") {
        assert!(md.contains("64 KiB memory page"), "{md}");
    }
    assert!(
        !md.contains(".svg)"),
        "no chart links away from the report directory"
    );
    let own = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        own.contains("read-sweep.svg)"),
        "report.md links its charts"
    );
}

/// The disk part runs the panel on the study's own scratch file: every row measured, its
/// reads checked in place, and its writes put back the very bytes write-read wrote (the file
/// kept afterwards still has the checksum of the write).
#[test]
fn the_disk_part_runs_the_panel_on_the_scratch_file_and_leaves_its_bytes_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let out = res.path().join("r");
    let o = in_dir(
        cwd.path(),
        &[
            "study",
            dir.path().to_str().unwrap(),
            "--level",
            "quick",
            "--only",
            "disk",
            "--size",
            "4m",
            "--keep",
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
    );
    ok(&o);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let steps: Vec<(&str, &str)> = v["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["part"].as_str().unwrap(), s["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(steps, [("write-read", "done"), ("disk", "done")]);
    assert_eq!(
        v["budget"]["disk_runtime"], 0.25,
        "the quick level's runtime"
    );
    let rows = v["disk"]["rows"].as_array().unwrap();
    let names: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r["name"].as_str().unwrap(),
                r["spec"]["op"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    for r in rows {
        assert!(r["ios"].as_u64().unwrap() > 0, "{r}");
        assert!(r["latency_us"]["p99"].as_f64().unwrap() > 0.0, "{r}");
        if r["spec"]["op"] == "read" {
            assert_eq!(r["verify"]["bad_blocks"], 0, "{r}");
        }
    }
    // The file as kept reads back to the checksum of the write.
    let kept = v["kept_file"].as_str().unwrap();
    let read = ioscope()
        .args(["run", kept, "-r", "1m", "--json"])
        .output()
        .unwrap();
    ok(&read);
    let r: serde_json::Value = serde_json::from_slice(&read.stdout).unwrap();
    assert_eq!(r["xor_hex"], v["write_read"][0]["xor_hex"], "{r}");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("What the disk delivers"), "the section");
    assert!(
        md.contains("with 32 in flight against"),
        "the depth sentence"
    );
    assert!(
        md.contains("disk, random 4 KiB read, 32 in flight"),
        "the summary line"
    );
    assert!(out.join("disk.csv").is_file() && out.join("disk.svg").is_file());
    // After the panel, one open loop at half RND4K Q32T1 read's IOPS, Poisson arrivals, its
    // response p99 set against RND4K Q1T1's in one sentence.
    let open = &v["disk"]["open_loop"];
    let q32 = rows
        .iter()
        .find(|r| r["name"] == "RND4K Q32T1" && r["spec"]["op"] == "read")
        .unwrap();
    let asked = open["open"]["asked_iops"].as_f64().unwrap();
    assert!(
        (asked / (0.5 * q32["iops"].as_f64().unwrap()) - 1.0).abs() < 1e-9,
        "{open}"
    );
    assert_eq!(open["open"]["arrivals"], "poisson", "{open}");
    assert!(open["open"]["response_us"]["p99"].as_f64().unwrap() > 0.0);
    assert!(md.contains("Open loop: "), "the open-loop sentence");
    assert!(md.contains("for one read at a time (RND4K Q1T1, closed loop)"));
}

/// A directory named with an escape sequence and a newline is shown escaped everywhere the
/// study prints it: the terminal text, report.md and report.html.
#[test]
fn a_study_of_a_directory_with_control_characters_in_its_name_prints_them_escaped() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("evil\u{1b}[31mred\nline");
    std::fs::create_dir(&dir).unwrap();
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r");
    let cwd = tempfile::tempdir().unwrap();
    let o = in_dir(
        cwd.path(),
        &[
            "study",
            dir.to_str().unwrap(),
            "--only",
            "write-read",
            "--size",
            "1m",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    ok(&o);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    for (name, shown) in [
        ("stdout", text),
        (
            "report.md",
            std::fs::read_to_string(out.join("report.md")).unwrap(),
        ),
        (
            "report.html",
            std::fs::read_to_string(out.join("report.html")).unwrap(),
        ),
    ] {
        assert!(!shown.contains('\u{1b}'), "{name} prints a raw escape");
        assert!(!shown.contains("red\nline"), "{name} prints a raw newline");
        assert!(
            shown.contains("evil\\u{1b}[31mred\\nline"),
            "{name}: {shown:.400}"
        );
    }
}

/// The closing `report: PATH` line and a `--keep` scratch file's line name paths the user
/// gave with an escape sequence and a newline in them: both are printed escaped.
#[test]
fn the_report_line_and_the_kept_scratch_file_print_their_paths_escaped() {
    let base = tempfile::tempdir().unwrap();
    let dir = base.path().join("d\u{1b}[2J\nforged");
    std::fs::create_dir(&dir).unwrap();
    let out = base.path().join("r\u{1b}]0;title\u{7}\nforged");
    let o = in_dir(
        base.path(),
        &[
            "study",
            dir.to_str().unwrap(),
            "--only",
            "write-read",
            "--size",
            "1m",
            "--keep",
            "-o",
            out.to_str().unwrap(),
        ],
    );
    ok(&o);
    for (name, shown) in [("stdout", &o.stdout), ("stderr", &o.stderr)] {
        let shown = String::from_utf8_lossy(shown);
        assert!(
            !shown.contains('\u{1b}'),
            "{name} prints a raw escape: {shown}"
        );
        assert!(!shown.contains('\u{7}'), "{name} prints a raw BEL: {shown}");
        assert!(
            !shown.lines().any(|l| l.starts_with("forged")),
            "{name} prints a raw newline: {shown}"
        );
    }
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("report: ") && err.contains("r\\u{1b}]0;title\\u{7}\\nforged"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("scratch file kept at") && text.contains("d\\u{1b}[2J\\nforged"),
        "{text}"
    );
}

/// Runs `args` (ioscope's) on a terminal with `NO_COLOR=1` through `script`, returning
/// what the terminal received; `None` (skipped) where `script` is missing.
fn on_a_terminal_with_no_color(cwd: &Path, args: &[&str]) -> Option<Vec<u8>> {
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let line = std::iter::once(bin.to_str().unwrap())
        .chain(args.iter().copied())
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let out = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &line, "/dev/null"])
        .current_dir(cwd)
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(out) if out.status.success() => Some(out.stdout),
        Ok(out) if String::from_utf8_lossy(&out.stderr).contains("openpty") => {
            println!("skipped: no pseudo-terminal here");
            None
        }
        Ok(out) => panic!("{args:?} on a terminal: {out:?}"),
        Err(e) => {
            println!("skipped: no `script` to give ioscope a terminal ({e})");
            None
        }
    }
}

/// NO_COLOR on a terminal: the study's progress is plain lines, a run's bar is not drawn,
/// and no escape sequence reaches the terminal (README's promise).
#[test]
fn with_no_color_on_a_terminal_the_progress_prints_no_escape_sequence() {
    let base = tempfile::tempdir().unwrap();
    std::fs::create_dir(base.path().join("D")).unwrap();
    let Some(shown) = on_a_terminal_with_no_color(
        base.path(),
        &[
            "study",
            "D",
            "--level",
            "quick",
            "--only",
            "write-read",
            "-o",
            "R",
        ],
    ) else {
        return;
    };
    let text = String::from_utf8_lossy(&shown);
    assert!(!text.contains('\u{1b}'), "an escape sequence: {text:?}");
    assert!(text.contains("study [1/1] write-read"), "{text}");
    // A run that lasts more than the second after which a bar would show.
    file_with(base.path(), "F", &pattern(4 << 20));
    let Some(shown) = on_a_terminal_with_no_color(base.path(), &["run", "-r", "F", "1"]) else {
        return;
    };
    let text = String::from_utf8_lossy(&shown);
    assert!(!text.contains('\u{1b}'), "an escape sequence: {text:?}");
}
