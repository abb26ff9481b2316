//! `trace` counts every call or names it as unseen (issue 24, items 4 and 5): failed calls
//! by errno, sync and creat by name, a request-size histogram, descending and strided order,
//! libaio's requests read from memory; the seccomp filter and the stop-at-every-call
//! fallback give the same counts, and those equal `strace -f -c`'s. Programs of our own
//! are compiled with `cc` (skipped with a reason where there is none), as are fio and
//! strace where they are missing, and everything where ptrace is refused.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The forcing variable of the fallback (no seccomp filter).
const EVERY_CALL: &str = "IOSCOPE_TRACE_EVERY_CALL";

/// One program, one behaviour per mode: `prog MODE FILE`.
const PROGRAM: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
    const char *mode = argv[1], *path = argv[2];
    char buf[4096], name[4200];
    memset(buf, 'x', sizeof buf);
    if (!strcmp(mode, "fail")) {
        /* Three opens of a missing file (one relative to the working directory), one of a
           directory for writing, and a close of a descriptor that is not open. */
        snprintf(name, sizeof name, "%s/missing", path);
        for (int i = 0; i < 2; i++) if (open(name, O_RDONLY) >= 0) return 2;
        if (chdir(path) != 0 || openat(AT_FDCWD, "missing", O_RDONLY) >= 0) return 3;
        if (open(path, O_WRONLY) >= 0) return 4;
        for (int i = 0; i < 5; i++) if (write(1000, buf, 10) >= 0) return 6;
        if (close(1000) == 0) return 5;
        return 0;
    }
    if (!strcmp(mode, "sync")) {
#ifdef SYS_creat
        int fd = syscall(SYS_creat, path, 0644);
#else
        int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
#endif
        if (fd < 0 || write(fd, buf, 100) != 100) return 2;
        sync();
        if (syncfs(fd) != 0) return 3;
        return close(fd);
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 2;
    if (!strcmp(mode, "backward")) {
        for (int i = 15; i >= 0; i--) if (pread(fd, buf, 4096, i * 4096L) != 4096) return 3;
    } else if (!strcmp(mode, "strided")) {
        for (int i = 0; i < 16; i++) if (pread(fd, buf, 4096, i * 3 * 4096L) != 4096) return 3;
    } else if (!strcmp(mode, "perchar")) {
        for (int i = 0; i < 5000; i++) if (read(fd, buf, 1) != 1) return 3;
    } else {
        return 9;
    }
    return close(fd);
}
"#;

/// The program built in `dir`, or `None` (with the reason printed) without `cc`.
fn program(dir: &Path) -> Option<PathBuf> {
    let src = dir.join("count.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let exe = dir.join("count");
    let ok = std::process::Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(&src)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: no C compiler (cc) to build the test program");
        return None;
    }
    Some(exe)
}

/// `ioscope trace --json [FLAG] -- ARGS` with `env` (a leading `--seccomp` or
/// `--every-call` in `args` is the flag): the document, or `None` (with a reason printed)
/// where ptrace is refused.
fn trace(args: &[&str], env: &[(&str, &str)]) -> Option<Value> {
    let (flags, args) = match args.split_first() {
        Some((&flag, rest)) if flag == "--seccomp" || flag == "--every-call" => (vec![flag], rest),
        _ => (Vec::new(), args),
    };
    trace_run(&flags, args, env).map(|t| t.doc)
}

/// The entry of `path` in a trace's files.
fn file<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in the trace: {doc:#}"))
}

/// A file of `len` bytes in `dir`, by its canonical path.
fn data(dir: &Path, len: usize) -> String {
    let path = file_with(dir, "data", &pattern(len));
    std::fs::canonicalize(path)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

fn canonical(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn failed_opens_and_a_bad_close_are_counted_by_errno_in_json_text_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else {
        return;
    };
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work = canonical(&work);
    let Some(doc) = trace(&[exe.to_str().unwrap(), "fail", &work], &[]) else {
        return;
    };
    assert_eq!(doc["exit_code"], 0, "{doc:#}");
    let missing = file(&doc, &format!("{work}/missing"));
    assert_eq!(missing["calls"]["openat"]["calls"], 3, "{missing:#}");
    assert_eq!(missing["calls"]["openat"]["errors"], 3);
    assert_eq!(missing["calls"]["openat"]["errnos"]["ENOENT"], 3);
    let directory = file(&doc, &work);
    assert_eq!(
        directory["calls"]["openat"]["errnos"]["EISDIR"], 1,
        "{doc:#}"
    );
    let not_open = file(&doc, "fd 1000 (unresolved)");
    assert_eq!(not_open["calls"]["close"]["errnos"]["EBADF"], 1, "{doc:#}");
    assert_eq!(not_open["calls"]["write"]["errnos"]["EBADF"], 5, "{doc:#}");
    assert!(
        doc["totals"]["openat"]["errnos"]["ENOENT"]
            .as_u64()
            .unwrap()
            >= 3
    );
    let text = report_text(&doc);
    assert!(
        text.contains(&format!("{work}/missing: openat ENOENT 3")),
        "{text}"
    );
    assert!(
        text.contains("failed: ") && text.contains("ENOENT"),
        "{text}"
    );
    // Writes that failed on a bad descriptor never reached a file: the kernel does not
    // count them, and neither does the comparison with its counters.
    if !doc["proc_io"].is_null() {
        assert!(text.contains("kernel    ok:"), "{text}");
    }
    let csv_path = dir.path().join("t.csv");
    let json_path = dir.path().join("t.json");
    std::fs::write(&json_path, doc.to_string()).unwrap();
    let out = ioscope()
        .arg("report")
        .arg(&json_path)
        .arg("--csv")
        .arg(&csv_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",errnos"), "{csv}");
    assert!(
        csv.lines()
            .any(|l| l.contains("/missing,openat,3,3,") && l.ends_with("ENOENT:3")),
        "{csv}"
    );
}

#[test]
fn sync_and_syncfs_are_counted_and_creat_is_named_creat() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else {
        return;
    };
    let target = format!("{}/made", canonical(dir.path()));
    let Some(doc) = trace(&[exe.to_str().unwrap(), "sync", &target], &[]) else {
        return;
    };
    assert_eq!(doc["exit_code"], 0, "{doc:#}");
    assert_eq!(doc["totals"]["sync"]["calls"], 1, "{doc:#}");
    let made = file(&doc, &target);
    assert_eq!(made["calls"]["syncfs"]["calls"], 1, "{made:#}");
    assert_eq!(made["syncs"], 1);
    assert_eq!(
        file(&doc, "(no file)")["syncs"],
        1,
        "sync() acts on no file"
    );
    if cfg!(target_arch = "x86_64") {
        assert_eq!(made["calls"]["creat"]["calls"], 1, "{made:#}");
        assert!(made["calls"].get("open").is_none(), "{made:#}");
    }
}

#[test]
fn a_backward_read_is_labelled_descending_and_a_strided_one_strided() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else {
        return;
    };
    let path = data(dir.path(), 64 * 4096);
    for (mode, words, field) in [
        ("backward", "descending", "backward_contiguous"),
        (
            "strided",
            "strided: each access 12 KiB forward",
            "same_step",
        ),
    ] {
        let Some(doc) = trace(&[exe.to_str().unwrap(), mode, &path], &[]) else {
            return;
        };
        assert_eq!(doc["exit_code"], 0, "{doc:#}");
        let f = file(&doc, &path);
        assert!(f["order"][field].as_u64().unwrap() >= 14, "{mode}: {f:#}");
        let text = report_text(&doc);
        assert!(text.contains(words), "{mode}: {text}");
        assert!(!text.contains("in no order (random)"), "{mode}: {text}");
    }
}

#[test]
fn one_byte_reads_fill_the_first_bucket_of_the_size_histogram() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else {
        return;
    };
    let path = data(dir.path(), 8192);
    let Some(doc) = trace(&[exe.to_str().unwrap(), "perchar", &path], &[]) else {
        return;
    };
    let f = file(&doc, &path);
    assert_eq!(f["sizes"]["counts"][0], 5000, "{f:#}");
    assert_eq!(f["sizes"]["zero"], 0);
    let text = report_text(&doc);
    assert!(text.contains("1 B ×5,000"), "{text}");
}

#[test]
fn the_seccomp_filter_and_the_every_call_fallback_count_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else {
        return;
    };
    let path = data(dir.path(), 64 * 4096);
    let exe = exe.to_str().unwrap();
    let (Some(filtered), Some(every)) = (
        trace(&["--seccomp", exe, "backward", &path], &[]),
        trace(&["--seccomp", exe, "backward", &path], &[(EVERY_CALL, "1")]),
    ) else {
        return;
    };
    assert_eq!(every["stops"], "every call", "{every:#}");
    assert!(
        every["stops_why"].as_str().unwrap().contains(EVERY_CALL),
        "{every:#}"
    );
    if filtered["stops"] != "filtered" {
        eprintln!(
            "skipped: no seccomp filter here ({}); only the fallback was checked",
            filtered["stops_why"]
        );
    }
    let counts = |doc: &Value| -> Vec<(String, Value, Value, Value)> {
        doc["totals"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                (
                    k.clone(),
                    v["calls"].clone(),
                    v["errors"].clone(),
                    v["bytes_returned"].clone(),
                )
            })
            .collect()
    };
    assert_eq!(counts(&filtered), counts(&every), "{filtered:#}");
    assert_eq!(file(&filtered, &path)["calls"]["pread64"]["calls"], 16);
    let text = report_text(&filtered);
    assert!(text.contains("stops "), "{text}");
}

/// Whether fio with its libaio engine is here (said when not).
fn fio_has_libaio() -> bool {
    let has = std::process::Command::new("fio")
        .arg("--enghelp=libaio")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has {
        eprintln!("skipped: fio with its libaio engine is not installed");
    }
    has
}

/// fio reading 1 MiB of `dir`/aio.dat in 4 KiB libaio requests, `depth` at a time (each
/// io_submit given up to `batch`), traced; `None` where it cannot run here.
fn traced_libaio_read(dir: &Path, depth: u32, batch: u32) -> Option<Value> {
    let work = canonical(dir);
    let args = [
        "fio".to_string(),
        "--name=aio".to_string(),
        format!("--filename={work}/aio.dat"),
        "--size=1m".to_string(),
        "--bs=4k".to_string(),
        "--rw=read".to_string(),
        "--ioengine=libaio".to_string(),
        format!("--iodepth={depth}"),
        format!("--iodepth_batch_submit={batch}"),
        "--disk_util=0".to_string(),
        "--output-format=json".to_string(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let doc = trace(&args, &[])?;
    if doc["exit_code"] != 0 {
        eprintln!("skipped: fio's libaio job did not run here: {doc:#}");
        return None;
    }
    // Under the kernel engine, how libaio was read is said: in the kernel, or why not.
    if doc["engine"]["engine"] == "kernel" {
        match doc["libaio_in_kernel"].as_bool() {
            Some(true) => {
                // Stopped at the opens alone (fio makes no 32-bit calls).
                let opens: u64 = ["open", "openat", "creat"]
                    .iter()
                    .map(|c| doc["totals"][c]["calls"].as_u64().unwrap_or(0))
                    .sum();
                assert!(
                    doc["stopped_calls"].as_u64().unwrap_or(0) <= opens,
                    "no stop at libaio's calls: {doc:#}"
                );
            }
            Some(false) => assert!(doc["libaio_why"].as_str().is_some_and(|w| !w.is_empty())),
            None => panic!("the kernel engine says how libaio was read: {doc:#}"),
        }
    }
    Some(doc)
}

#[test]
fn libaio_reads_are_read_from_memory_and_counted_per_file_where_fio_has_libaio() {
    if !fio_has_libaio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = canonical(dir.path());
    let Some(doc) = traced_libaio_read(dir.path(), 4, 4) else {
        return;
    };
    if doc["libaio_in_kernel"] == true {
        assert!(doc.get("libaio_unread").is_none(), "{doc:#}");
    }
    let f = file(&doc, &format!("{work}/aio.dat"));
    let aio = &f["calls"]["aio pread"];
    assert_eq!(aio["calls"], 256, "{f:#}");
    assert_eq!(aio["bytes_requested"], 1 << 20);
    assert_eq!(aio["bytes_returned"], 1 << 20);
    // fio lays the file out first with 4 KiB writes, counted in the same bucket.
    let writes = f["calls"]["write"]["calls"].as_u64().unwrap_or(0);
    assert_eq!(
        f["sizes"]["counts"][12],
        256 + writes,
        "4 KiB requests: {f:#}"
    );
    assert!(doc["totals"]["io_submit"]["calls"].as_u64().unwrap() > 0);
    assert!(
        !doc["unseen"]
            .as_array()
            .unwrap()
            .iter()
            .any(|u| u.as_str().unwrap().starts_with("libaio")),
        "everything was read: {doc:#}"
    );
}

/// One io_submit of 256 requests, more than the kernel's programs read of one call: the
/// rest are read from the program's memory, every request still counted, and the call
/// said to be partly unread.
#[test]
fn an_io_submit_of_more_requests_than_the_kernel_reads_is_counted_whole_and_said() {
    if !fio_has_libaio() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = canonical(dir.path());
    let Some(doc) = traced_libaio_read(dir.path(), 256, 256) else {
        return;
    };
    let f = file(&doc, &format!("{work}/aio.dat"));
    let aio = &f["calls"]["aio pread"];
    assert_eq!(aio["calls"], 256, "{f:#}");
    assert_eq!(aio["bytes_returned"], 1 << 20);
    if doc["libaio_in_kernel"] == true {
        assert!(doc["libaio_unread"].as_u64().unwrap_or(0) >= 1, "{doc:#}");
        let text = report_text(&doc);
        assert!(text.contains(" libaio call"), "{text}");
    }
}

/// Raw libaio (no library): 100 reads of 4–16 KiB through ONE iocb, scribbled over right
/// after each io_submit, before its completion is collected; then an io_getevents that
/// fails (a bad context) and one that returns 0.
const REUSED_IOCB: &str = r#"#define _GNU_SOURCE
#include <linux/aio_abi.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    aio_context_t ctx = 0;
    if (fd < 0 || syscall(SYS_io_setup, 4, &ctx) != 0) return 2;
    static char buf[65536];
    struct iocb cb; struct iocb *list[1] = {&cb};
    struct io_event ev[1];
    unsigned long total = 0;
    for (int i = 0; i < 100; i++) {
        memset(&cb, 0, sizeof cb);
        cb.aio_fildes = fd; cb.aio_lio_opcode = IOCB_CMD_PREAD;
        cb.aio_buf = (unsigned long)buf; cb.aio_nbytes = 4096 * (1 + i % 4); cb.aio_offset = 8192 * i;
        if (syscall(SYS_io_submit, ctx, 1, list) != 1) return 3;
        /* reuse the iocb at once: scribble over it before collecting */
        cb.aio_nbytes = 1; cb.aio_offset = 0; cb.aio_fildes = 0;
        if (syscall(SYS_io_getevents, ctx, 1, 1, ev, NULL) != 1) return 4;
        total += ev[0].res;
    }
    /* a failing io_getevents and an io_getevents returning 0 */
    syscall(SYS_io_getevents, (aio_context_t)12345, 1, 1, ev, NULL);
    struct timespec z = {0, 0};
    syscall(SYS_io_getevents, ctx, 0, 1, ev, &z);
    printf("%lu\n", total);
    return 0;
}
"#;

/// What each request asked is counted as it was submitted, not as the iocb reads later,
/// and the failed and empty io_getevents take nothing from the next calls.
#[test]
fn a_reused_iocb_is_counted_as_it_was_submitted() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build_c(dir.path(), "reuse", "c", REUSED_IOCB, &["-O1"]) else {
        return;
    };
    let data = dir.path().join("data");
    std::fs::write(&data, pattern(2 << 20)).unwrap();
    let data = canonical(&data);
    let Some(doc) = trace(&[exe.to_str().unwrap(), &data], &[]) else {
        return;
    };
    if doc["exit_code"] == 2 {
        eprintln!("skipped: io_setup failed here (no aio?)");
        return;
    }
    assert_eq!(doc["exit_code"], 0, "{doc:#}");
    let f = file(&doc, &data);
    let aio = &f["calls"]["aio pread"];
    assert_eq!(aio["calls"], 100, "{f:#}");
    // 25 of 4 KiB, 25 of 8, 25 of 12, 25 of 16: 1,024,000 bytes asked and read.
    assert_eq!(aio["bytes_requested"], 1_024_000, "{f:#}");
    assert_eq!(aio["bytes_returned"], 1_024_000, "{f:#}");
    assert_eq!(f["sizes"]["counts"][12], 25, "4 KiB..8 KiB: {f:#}");
    assert_eq!(f["sizes"]["counts"][13], 50, "8 KiB..16 KiB: {f:#}");
    assert_eq!(f["sizes"]["counts"][14], 25, "16 KiB..32 KiB: {f:#}");
    let ge = &doc["totals"]["io_getevents"];
    assert_eq!(ge["calls"], 102, "{doc:#}");
    assert_eq!(ge["errors"], 1, "{doc:#}");
    assert!(doc.get("libaio_unread").is_none(), "{doc:#}");
}

/// strace -f -c's table: calls and errors per call name.
fn strace_counts(args: &[&str]) -> Option<std::collections::BTreeMap<String, (u64, u64)>> {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("strace.txt");
    let ran = std::process::Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out)
        .arg("--")
        .args(args)
        .output();
    if ran.is_err() {
        eprintln!("skipped: strace is not installed");
        return None;
    }
    let text = std::fs::read_to_string(&out).ok()?;
    let mut counts = std::collections::BTreeMap::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() >= 5 && f[0].parse::<f64>().is_ok() && f[f.len() - 1] != "total" {
            let errors = if f.len() == 6 { f[4].parse().ok()? } else { 0 };
            counts.insert(f[f.len() - 1].to_string(), (f[3].parse().ok()?, errors));
        }
    }
    if counts.is_empty() {
        eprintln!("skipped: strace could not trace here: {text}");
        return None;
    }
    Some(counts)
}

#[test]
fn counts_and_failures_equal_strace_f_c_for_every_call_both_see() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = program(dir.path()) else {
        return;
    };
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let work = canonical(&work);
    let path = data(dir.path(), 64 * 4096);
    for args in [
        vec![exe.to_str().unwrap(), "fail", &work],
        vec![exe.to_str().unwrap(), "strided", &path],
        vec!["cat", "/nonexistent-ioscope-test"],
    ] {
        let Some(theirs) = strace_counts(&args) else {
            return;
        };
        for seccomp in [true, false] {
            let flag = if seccomp { "--seccomp" } else { "--every-call" };
            let args: Vec<&str> = std::iter::once(flag).chain(args.iter().copied()).collect();
            let Some(doc) = trace(&args, &[]) else {
                return;
            };
            let mut both = 0;
            for (name, &(calls, errors)) in &theirs {
                let Some(ours) = doc["totals"].get(name) else {
                    continue;
                };
                both += 1;
                assert_eq!(
                    (
                        ours["calls"].as_u64().unwrap(),
                        ours["errors"].as_u64().unwrap()
                    ),
                    (calls, errors),
                    "{name} in {args:?} ({}): strace {theirs:?}",
                    doc["stops"]
                );
            }
            assert!(both >= 4, "{args:?}: {theirs:?} against {doc:#}");
        }
    }
}

/// Under the seccomp filter (which cannot be removed), what the command leaves running is
/// kept: ioscope's tracer stays behind it in the background, and the calls the filter
/// selects still work there (they would fail with ENOSYS with no tracer); the keeper ends
/// when they do. With `--every-call` the same process is let go of, untraced.
#[test]
fn a_process_left_running_under_the_filter_is_kept_and_its_calls_work() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("late");
    let script = format!(
        "(sleep 1; echo written > '{}') >/dev/null 2>&1 & exit 0",
        out.display()
    );
    let Some(doc) = trace(&["sh", "-c", &script], &[]) else {
        return;
    };
    if doc["stops"] != "filtered" {
        eprintln!("skipped: no seccomp filter here ({})", doc["stops_why"]);
        return;
    }
    assert!(
        !doc["still_running"].as_array().unwrap().is_empty(),
        "{doc:#}"
    );
    let keeper = doc["kept_by"].as_i64().expect("a keeper is named") as i32;
    let text = report_text(&doc);
    assert!(text.contains("stays behind them"), "{text}");
    assert!(!text.contains("ENOSYS"), "{text}");
    // The background open and write went through the filter, kept by the keeper, which
    // then ends.
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(30)
        && (std::fs::read_to_string(&out).unwrap_or_default() != "written\n" || alive(keeper))
    {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "written\n");
    assert!(!alive(keeper), "the keeper ends with what it kept");
    // Without the filter: let go of, nothing kept.
    let Some(doc) = trace(&["--every-call", "sh", "-c", &script], &[]) else {
        return;
    };
    assert_eq!(doc["stops"], "every call", "{doc:#}");
    assert!(
        !doc["still_running"].as_array().unwrap().is_empty(),
        "{doc:#}"
    );
    assert!(doc.get("kept_by").is_none(), "{doc:#}");
}

/// Whether process `pid` is there and not a zombie (a keeper reparented to an init that
/// does not reap is one once it ended).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit(')').next().map(|r| r.trim_start().chars().next()))
        .flatten()
        .is_some_and(|state| state != 'Z' && state != 'X')
}
