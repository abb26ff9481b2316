//! `trace`'s clock reads and timed regions (issue 24, items 1 and 2): a small C program that
//! times 64 writes with gettimeofday is traced; its two clock reads are counted, the region
//! between them found, and the fsync reported after it (or, when the program fsyncs before
//! its second clock read, inside it). Hiding the vDSO changes neither the program's output
//! nor its exit status; `--vdso keep` leaves the vDSO and finds no regions. Skipped with a
//! reason where there is no C compiler or ptrace is refused.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Times 64 writes of 4 KiB between two gettimeofday calls; fsyncs before the second
/// (argv[2] "inside") or after it; prints a line that needs a working clock; exits 7.
const TIMED: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int inside = argc > 2 && strcmp(argv[2], "inside") == 0;
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 2;
    struct timeval a, b;
    gettimeofday(&a, 0);
    for (int i = 0; i < 64; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) return 3;
    if (inside) fsync(fd);
    gettimeofday(&b, 0);
    if (!inside) fsync(fd);
    close(fd);
    long us = (b.tv_sec - a.tv_sec) * 1000000L + (b.tv_usec - a.tv_usec);
    printf("64 writes timed: %s\n", a.tv_sec > 1000000000L && us >= 0 ? "clock ok" : "clock broken");
    return 7;
}
"#;

/// Prints whether the program was given a vDSO (getauxval), and reads the clock once.
const AUXV: &str = r#"
#include <stdio.h>
#include <sys/auxv.h>
#include <time.h>
int main(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    printf("vdso %s, clock %s\n", getauxval(AT_SYSINFO_EHDR) ? "given" : "absent",
           t.tv_sec > 1000000000L ? "ok" : "broken");
    return 0;
}
"#;

/// Builds `source` with `cc` and `flags`, or says why the test is skipped.
fn compile(dir: &Path, name: &str, source: &str, flags: &[&str]) -> Option<PathBuf> {
    let flags: Vec<&str> = flags.iter().copied().chain(["-O1"]).collect();
    build_c(dir, name, "c", source, &flags)
}

/// `ioscope trace --json EXTRA -- ARGS`: the document, the command's output (our standard
/// error, where --json sends it) and the exit code; `None` where ptrace is refused.
fn trace(extra: &[&str], args: &[&str]) -> Option<(Value, String, i32)> {
    trace_run(extra, args, &[]).map(|t| (t.doc, t.stderr, t.code))
}

/// The region that wrote the 64 blocks, after checking it is the only one.
fn the_region(doc: &Value) -> &Value {
    let clock = &doc["clock"];
    assert_eq!(clock["vdso"], "hide", "{clock:#}");
    assert_eq!(clock["reads"]["gettimeofday"], 2, "{clock:#}");
    assert_eq!(clock["regions_found"], 1, "{clock:#}");
    let r = &clock["regions"][0];
    assert_eq!(r["inside"]["write"]["calls"], 64, "{r:#}");
    assert_eq!(r["inside"]["write"]["bytes"], 64 * 4096, "{r:#}");
    assert_eq!(r["bytes_written"], 64 * 4096);
    assert!(r["bytes_per_second_over_region"].as_f64().unwrap() > 0.0);
    r
}

fn timed_with_fsync_after(exe: &Path, dir: &Path) {
    let data = dir.join("data");
    let Some((doc, out, code)) = trace(&[], &[exe.to_str().unwrap(), data.to_str().unwrap()])
    else {
        return;
    };
    assert_eq!(code, 7, "{out}");
    let r = the_region(&doc);
    assert_eq!(r["after"]["fsync"], 1, "{r:#}");
    assert_eq!(r["after"]["close"], 1, "{r:#}");
    assert!(r["closing_inside"].as_object().unwrap().is_empty(), "{r:#}");
    assert!(r["bytes_per_second_with_after"].as_f64().is_some(), "{r:#}");
    let text = report_text(&doc);
    assert!(
        text.contains("fsync() and close() after it: a figure over this region leaves them out"),
        "{text}"
    );
    assert!(text.contains("vDSO hidden (the default"), "{text}");
}

#[test]
fn writes_timed_with_gettimeofday_and_fsynced_after_show_the_fsync_after_their_region() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "timed", TIMED, &[]) else {
        return;
    };
    timed_with_fsync_after(&exe, dir.path());
}

#[test]
fn a_statically_linked_program_is_seen_reading_its_clock_too() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "timed-static", TIMED, &["-static"]) else {
        return;
    };
    timed_with_fsync_after(&exe, dir.path());
}

#[test]
fn an_fsync_before_the_second_clock_read_is_reported_inside_the_region() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "timed", TIMED, &[]) else {
        return;
    };
    let data = dir.path().join("data");
    let Some((doc, out, code)) = trace(
        &[],
        &[exe.to_str().unwrap(), data.to_str().unwrap(), "inside"],
    ) else {
        return;
    };
    assert_eq!(code, 7, "{out}");
    let r = the_region(&doc);
    assert_eq!(r["inside"]["fsync"]["calls"], 1, "{r:#}");
    assert_eq!(r["closing_inside"]["fsync"], 1, "{r:#}");
    assert!(r["after"].get("fsync").is_none(), "{r:#}");
    assert_eq!(r["after"]["close"], 1, "{r:#}");
    let text = report_text(&doc);
    assert!(
        text.contains("fsync() inside: a figure over this region includes it"),
        "{text}"
    );
    assert!(!text.contains("leaves them out"), "{text}");
}

#[test]
fn hiding_the_vdso_leaves_the_program_s_output_and_exit_status_as_they_were() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "timed", TIMED, &[]) else {
        return;
    };
    let data = dir.path().join("data");
    let plain = std::process::Command::new(&exe)
        .arg(&data)
        .output()
        .unwrap();
    let plain_out = String::from_utf8_lossy(&plain.stdout).into_owned();
    assert_eq!(plain_out, "64 writes timed: clock ok\n");
    for extra in [&[][..], &["--vdso", "keep"][..]] {
        let Some((doc, out, code)) = trace(extra, &[exe.to_str().unwrap(), data.to_str().unwrap()])
        else {
            return;
        };
        assert_eq!(Some(code), plain.status.code(), "{extra:?}");
        assert!(out.starts_with(&plain_out), "{extra:?}: {out}");
        if !extra.is_empty() {
            let clock = &doc["clock"];
            assert_eq!(clock["vdso"], "keep", "{clock:#}");
            assert_eq!(clock["regions_found"], 0, "{clock:#}");
            assert!(clock["reads"].get("gettimeofday").is_none(), "{clock:#}");
            assert!(report_text(&doc).contains("vDSO kept (--vdso keep)"));
        }
    }
}

#[test]
fn the_program_is_given_no_vdso_when_hidden_and_its_own_when_kept() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "auxv", AUXV, &[]) else {
        return;
    };
    let plain = std::process::Command::new(&exe).output().unwrap();
    let plain = String::from_utf8_lossy(&plain.stdout).into_owned();
    if plain.contains("absent") {
        eprintln!("skipped: this kernel gives programs no vDSO: {plain}");
        return;
    }
    let exe = exe.to_str().unwrap();
    let Some((doc, out, _)) = trace(&[], &[exe]) else {
        return;
    };
    assert_eq!(out.lines().next(), Some("vdso absent, clock ok"), "{out}");
    assert_eq!(doc["clock"]["programs_hidden"], 1);
    assert_eq!(doc["clock"]["reads"]["clock_gettime"], 1);
    let Some((_, out, _)) = trace(&["--vdso", "keep"], &[exe]) else {
        return;
    };
    assert_eq!(out.lines().next(), Some("vdso given, clock ok"), "{out}");
}

/// Reads the clock, has another task move 64 KiB (argv[1]: "thread", a second thread
/// writes it; "fork", a child; "vfork-dd", `dd` run by vfork and exec; "grandchild", a
/// child's child; "grandchildren", sixteen children's children, each writing one block
/// as soon as it starts; "spawn-cat", `cat` started by posix_spawn reads argv[2]), waits for it,
/// and reads the clock again: a region the program timed around another task's I/O. The
/// timing thread itself moves no data between its two clock reads. Prints one line.
const ACROSS: &str = r#"
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
extern char **environ;
static const char *path;
static void write_it(void) {
    static char buf[4096];
    memset(buf, 'x', sizeof buf);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) _exit(2);
    for (int i = 0; i < 16; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) _exit(3);
    close(fd);
}
static void *worker(void *arg) { (void)arg; write_it(); return 0; }
int main(int argc, char **argv) {
    if (argc < 3) return 9;
    const char *how = argv[1];
    path = argv[2];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (strcmp(how, "thread") == 0) {
        pthread_t t;
        if (pthread_create(&t, 0, worker, 0)) return 4;
        pthread_join(t, 0);
    } else if (strcmp(how, "fork") == 0) {
        pid_t c = fork();
        if (c == 0) { write_it(); _exit(0); }
        waitpid(c, 0, 0);
    } else if (strcmp(how, "grandchild") == 0) {
        pid_t c = fork();
        if (c == 0) {
            pid_t g = fork();
            if (g == 0) { write_it(); _exit(0); }
            waitpid(g, 0, 0);
            _exit(0);
        }
        waitpid(c, 0, 0);
    } else if (strcmp(how, "grandchildren") == 0) {
        static char one[4096];
        memset(one, 'x', sizeof one);
        for (int i = 0; i < 16; i++) {
            pid_t c = fork();
            if (c == 0) {
                pid_t g = fork();
                if (g == 0) {
                    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
                    if (fd < 0 || write(fd, one, sizeof one) != (ssize_t)sizeof one) _exit(3);
                    _exit(0);
                }
                waitpid(g, 0, 0);
                _exit(0);
            }
        }
        while (wait(0) > 0) {}
    } else if (strcmp(how, "vfork-dd") == 0) {
        char of[4096];
        snprintf(of, sizeof of, "of=%s", path);
        pid_t c = vfork();
        if (c == 0) {
            execlp("dd", "dd", "if=/dev/zero", of, "bs=4096", "count=16", "status=none", (char *)0);
            _exit(127);
        }
        int st = 0;
        waitpid(c, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 5;
    } else if (strcmp(how, "spawn-cat") == 0) {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
        char *args[] = {"cat", (char *)path, 0};
        pid_t c;
        if (posix_spawnp(&c, "cat", &fa, 0, args, environ)) return 6;
        int st = 0;
        waitpid(c, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) return 7;
    } else {
        return 8;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("timed %s: %s\n", how, b.tv_sec >= a.tv_sec ? "ok" : "broken");
    return 0;
}
"#;

/// Traces ACROSS with `how` and returns the one region timed around another task's I/O
/// (after checking there is exactly one such region, timed by the first process's main
/// thread), or `None` where the test is skipped.
fn across(how: &str) -> Option<(Value, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let exe = compile(dir.path(), "across", ACROSS, &["-pthread"])?;
    let data = dir.path().join("data");
    if how == "spawn-cat" {
        std::fs::write(&data, vec![b'y'; 64 << 10]).unwrap();
    }
    let (doc, out, code) = trace(&[], &[exe.to_str().unwrap(), how, data.to_str().unwrap()])?;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("timed {how}: ok")), "{out}");
    let clock = &doc["clock"];
    let across: Vec<&Value> = clock["regions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r.get("io_of").is_some())
        .collect();
    assert_eq!(across.len(), 1, "{clock:#}");
    assert_eq!(clock["regions_across"], 1, "{clock:#}");
    let r = across[0].clone();
    assert_eq!(r["clock"], "clock_gettime", "{r:#}");
    assert_eq!(r["pid"], r["tid"], "timed by the main thread: {r:#}");
    Some((doc, r))
}

#[test]
fn a_thread_timing_another_thread_s_writes_gets_a_region_naming_that_thread() {
    let Some((doc, r)) = across("thread") else {
        return;
    };
    assert_eq!(r["bytes_written"], 16 * 4096, "{r:#}");
    assert_eq!(r["inside"]["write"]["calls"], 16, "{r:#}");
    assert_eq!(r["io_of"][0]["relation"], "thread", "{r:#}");
    assert_eq!(r["io_of"][0]["pid"], r["pid"], "{r:#}");
    assert_ne!(r["io_of"][0]["tid"], r["tid"], "{r:#}");
    let text = report_text(&doc);
    assert!(
        text.contains("timed around the I/O of its thread"),
        "{text}"
    );
    assert!(text.contains("moving no data itself"), "{text}");
}

#[test]
fn a_parent_timing_its_forked_child_s_writes_gets_a_region_naming_the_child() {
    let Some((doc, r)) = across("fork") else {
        return;
    };
    assert_eq!(r["bytes_written"], 16 * 4096, "{r:#}");
    assert_eq!(r["io_of"][0]["relation"], "child", "{r:#}");
    assert_ne!(r["io_of"][0]["pid"], r["pid"], "{r:#}");
    assert_eq!(r["closing_inside"]["close"], 1, "{r:#}");
    let text = report_text(&doc);
    assert!(
        text.contains("timed around the I/O of its child process"),
        "{text}"
    );
}

#[test]
fn a_parent_timing_dd_run_by_vfork_and_exec_gets_a_region_naming_dd() {
    let Some((doc, r)) = across("vfork-dd") else {
        return;
    };
    assert_eq!(r["bytes_written"], 16 * 4096, "{r:#}");
    let dd = r["io_of"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["program"] == "dd")
        .unwrap_or_else(|| panic!("dd named: {r:#}"));
    assert_eq!(dd["relation"], "child", "{r:#}");
    let text = report_text(&doc);
    assert!(text.contains("child process"), "{text}");
    assert!(text.contains("(dd)"), "{text}");
}

#[test]
fn a_parent_timing_a_grandchild_s_writes_gets_a_region_naming_a_descendant() {
    let Some((_, r)) = across("grandchild") else {
        return;
    };
    assert_eq!(r["bytes_written"], 16 * 4096, "{r:#}");
    assert_eq!(r["io_of"][0]["relation"], "descendant", "{r:#}");
}

/// A task's first calls may come before its creator's fork is reported: none of them is
/// left out of the region.
#[test]
fn a_parent_timing_grandchildren_that_write_at_once_gets_every_write_in_its_region() {
    let Some((_, r)) = across("grandchildren") else {
        return;
    };
    assert_eq!(r["bytes_written"], 16 * 4096, "{r:#}");
    assert_eq!(r["inside"]["write"]["calls"], 16, "{r:#}");
    assert_eq!(r["io_of"][0]["relation"], "descendant", "{r:#}");
}

#[test]
fn a_parent_timing_cat_started_by_posix_spawn_gets_a_region_of_its_reads() {
    let Some((_, r)) = across("spawn-cat") else {
        return;
    };
    assert!(r["bytes_read"].as_u64().unwrap() >= 64 << 10, "{r:#}");
    assert!(
        r["io_of"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["program"] == "cat" && d["relation"] == "child"),
        "{r:#}"
    );
}

/// Enters seccomp strict mode (argv[1]: "prctl" or "seccomp", the call it uses), then
/// writes a line and exits through the only calls strict mode allows; prints why and
/// exits 3 when refused.
const STRICT: &str = r#"
#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int r = argc > 1 && strcmp(argv[1], "seccomp") == 0
        ? (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_STRICT, 0, 0)
        : prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0);
    if (r != 0) {
        printf("strict refused: %s\n", strerror(errno));
        return 3;
    }
    static const char ok[] = "strict ok\n";
    write(1, ok, sizeof ok - 1);
    syscall(SYS_exit, 0);
    return 4;
}
"#;

/// The report's sentences (`unseen`) that contain `word`.
fn said(doc: &Value, word: &str) -> Vec<String> {
    doc["unseen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|s| s.contains(word))
        .map(str::to_string)
        .collect()
}

fn strict_refused_under_the_filter(how: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "strict", STRICT, &[]) else {
        return;
    };
    let plain = std::process::Command::new(&exe).arg(how).output().unwrap();
    if plain.status.code() != Some(0) {
        eprintln!(
            "skipped: strict mode refused here untraced: {}",
            String::from_utf8_lossy(&plain.stdout)
        );
        return;
    }
    let Some((doc, out, code)) = trace(&[], &[exe.to_str().unwrap(), how]) else {
        return;
    };
    if doc["stops"] != "filtered" {
        eprintln!("skipped: no seccomp filter here: {}", doc["stops_why"]);
        return;
    }
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("strict refused: Invalid argument"), "{out}");
    let s = said(&doc, "seccomp strict mode");
    assert_eq!(s.len(), 1, "{:#}", doc["unseen"]);
    assert!(s[0].contains("refused (EINVAL)"), "{}", s[0]);
    assert!(s[0].contains("trace it with --every-call"), "{}", s[0]);
    assert!(report_text(&doc).contains("--every-call (no filter)"));
    // The trace's own filter, installed by ioscope's child before the exec, is no
    // program's filter of its own.
    assert!(
        said(&doc, "filter of its own").is_empty(),
        "{:#}",
        doc["unseen"]
    );
}

#[test]
fn a_program_refused_seccomp_strict_mode_by_prctl_under_the_filter_is_told_so() {
    strict_refused_under_the_filter("prctl");
}

#[test]
fn a_program_refused_seccomp_strict_mode_by_the_seccomp_call_is_told_so_too() {
    strict_refused_under_the_filter("seccomp");
}

#[test]
fn under_every_call_a_program_enters_strict_mode_writes_and_exits_with_no_hang() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "strict", STRICT, &[]) else {
        return;
    };
    let exe = exe.to_str().unwrap().to_string();
    // The trace in a thread, so that a hang fails the test instead of stopping it.
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(trace(&["--every-call"], &[&exe, "prctl"]));
    });
    let Some((doc, out, code)) = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the trace of a program in strict mode ended")
    else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("strict ok"), "{out}");
    let s = said(&doc, "entered seccomp strict mode");
    assert_eq!(s.len(), 1, "{:#}", doc["unseen"]);
    assert!(s[0].contains("--vdso keep"), "{}", s[0]);
    assert!(said(&doc, "refused").is_empty(), "{:#}", doc["unseen"]);
}

/// Reads the vDSO's ELF header through getauxval(AT_SYSINFO_EHDR), as a program that
/// calls into the vDSO by itself does: with it hidden the address is 0 and it faults.
const NEEDS_VDSO: &str = r#"
#include <stdio.h>
#include <sys/auxv.h>
int main(void) {
    const unsigned char *v = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
    printf("vdso header %c%c%c\n", v[1], v[2], v[3]);
    return 0;
}
"#;

#[test]
fn a_program_that_crashes_without_its_vdso_gets_a_line_suggesting_vdso_keep() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "needs-vdso", NEEDS_VDSO, &[]) else {
        return;
    };
    let plain = std::process::Command::new(&exe).output().unwrap();
    if plain.status.code() != Some(0) {
        eprintln!("skipped: no vDSO given to programs here");
        return;
    }
    let exe = exe.to_str().unwrap();
    let Some((doc, _, _)) = trace(&[], &[exe]) else {
        return;
    };
    assert_eq!(doc["signal"], libc::SIGSEGV, "{doc:#}");
    let s = said(&doc, "vDSO hidden");
    assert_eq!(s.len(), 1, "{:#}", doc["unseen"]);
    assert!(s[0].contains("SIGSEGV"), "{}", s[0]);
    assert!(s[0].contains("trace it with --vdso keep"), "{}", s[0]);
    // Kept, it runs as untraced, and nothing is said.
    let Some((doc, out, code)) = trace(&["--vdso", "keep"], &[exe]) else {
        return;
    };
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("vdso header ELF"), "{out}");
    assert!(said(&doc, "vDSO hidden").is_empty(), "{:#}", doc["unseen"]);
}

#[test]
fn a_child_that_crashes_without_its_vdso_is_named_though_the_command_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(dir.path(), "needs-vdso", NEEDS_VDSO, &[]) else {
        return;
    };
    if std::process::Command::new(&exe)
        .output()
        .unwrap()
        .status
        .code()
        != Some(0)
    {
        eprintln!("skipped: no vDSO given to programs here");
        return;
    }
    let script = format!("{}; exit 0", exe.to_str().unwrap());
    let Some((doc, _, code)) = trace(&[], &["sh", "-c", &script]) else {
        return;
    };
    assert_eq!(code, 0);
    let s = said(&doc, "vDSO hidden");
    assert_eq!(s.len(), 1, "{:#}", doc["unseen"]);
    assert!(s[0].contains("needs-vdso (pid"), "{}", s[0]);
}
