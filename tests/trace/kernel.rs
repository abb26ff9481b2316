//! `trace --engine kernel` (issue 39): the kernel's tracepoints record the calls while the
//! program runs, stopped only at its opens (to read their names) and execs (to hide its
//! vDSO). Its counts, files and timed regions are ptrace's on the same command; the
//! engine, its reason and the events lost are in the report. Skipped with the reason
//! where the kernel engine cannot run (no root or CAP_PERFMON, no tracefs).

use crate::common::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// `trace --json --engine ENGINE -- ARGS`, or `None` where that engine cannot run here.
fn traced(engine: &str, args: &[&str]) -> Option<Value> {
    let t = trace_run(&["--engine", engine], args, &[])?;
    if t.code != 0 && t.stderr.contains("cannot run here") {
        eprintln!("skipped: {}", t.stderr.trim());
        return None;
    }
    assert_eq!(t.code, 0, "{}", t.stderr);
    Some(t.doc)
}

fn calls(doc: &Value) -> BTreeMap<String, u64> {
    doc["totals"]
        .as_object()
        .expect("totals")
        .iter()
        .map(|(k, v)| (k.clone(), v["calls"].as_u64().unwrap()))
        .collect()
}

fn file<'a>(doc: &'a Value, path: &std::path::Path) -> &'a Value {
    let want = std::fs::canonicalize(path).unwrap();
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str() == want.to_str())
        .unwrap_or_else(|| panic!("{} not in the trace: {doc:#}", want.display()))
}

#[test]
fn dd_under_the_kernel_engine_is_counted_as_ptrace_counts_it_with_its_files_and_region() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    let output = dir.path().join("out");
    std::fs::write(&input, vec![7u8; 1 << 20]).unwrap();
    let (i, o) = (
        format!("if={}", input.display()),
        format!("of={}", output.display()),
    );
    let args = ["dd", i.as_str(), o.as_str(), "bs=4k", "conv=fsync"];
    let Some(kernel) = traced("kernel", &args) else {
        return;
    };
    let ptrace = traced("ptrace", &args).expect("ptrace runs where the kernel engine does");
    assert_eq!(kernel["engine"]["engine"], "kernel", "{kernel:#}");
    assert_eq!(kernel["stops"], "at open and exec");
    assert_eq!(kernel["lost_events"], 0, "a 1 MiB dd fits the rings");
    // The calls that move and sync the data, one for one.
    let (k, p) = (calls(&kernel), calls(&ptrace));
    for name in ["read", "write", "fsync"] {
        assert_eq!(k.get(name), p.get(name), "{name}: {k:?} against {p:?}");
    }
    assert_eq!(k["fsync"], 1);
    // Each file under its own name, with its bytes, though dd has exited before most of
    // its records are read.
    assert_eq!(file(&kernel, &input)["bytes_read"], 1 << 20);
    assert_eq!(file(&kernel, &output)["bytes_written"], 1 << 20);
    // Its clock reads seen (the vDSO hidden at the exec): dd's own timed region found.
    let regions = kernel["clock"]["regions"].as_array().expect("regions");
    assert!(
        regions.iter().any(|r| r["bytes_read"] == 1 << 20),
        "{regions:#?}"
    );
}

#[test]
fn a_failed_open_under_the_kernel_engine_is_named_by_the_path_it_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("not-there");
    let m = missing.to_str().unwrap();
    // cat exits 1; the trace says so and counts the open that failed.
    let Some(t) = trace_run(&["--engine", "kernel"], &["cat", m], &[]) else {
        return;
    };
    if t.stderr.contains("cannot run here") {
        eprintln!("skipped: {}", t.stderr.trim());
        return;
    }
    assert_eq!(t.code, 1, "{}", t.stderr);
    let f = t.doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str() == Some(m))
        .unwrap_or_else(|| panic!("{m} not named: {:#}", t.doc));
    assert_eq!(f["calls"]["openat"]["errors"], 1, "{f:#}");
}

/// `ioscope trace --json [FLAGS] -- true` with IOSCOPE_TRACE_ENGINE set to `variable` (or
/// unset): its document, standard error and exit code.
fn engine_of(flags: &[&str], variable: Option<&str>) -> (Value, String, i32) {
    let mut cmd = ioscope();
    cmd.args(["trace", "--json"])
        .args(flags)
        .args(["--", "true"]);
    match variable {
        Some(v) => cmd.env("IOSCOPE_TRACE_ENGINE", v),
        None => cmd.env_remove("IOSCOPE_TRACE_ENGINE"),
    };
    let out = cmd.output().unwrap();
    let doc = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    (doc, err, out.status.code().unwrap_or(-1))
}

#[test]
fn the_engine_and_why_are_said_and_a_ptrace_flag_refuses_the_kernel_engine() {
    let (doc, err, _) = engine_of(&[], None);
    if err.contains("ptrace refused") {
        eprintln!("skipped: {}", err.trim());
        return;
    }
    // The kernel's where it runs, else ptrace, with the reason the kernel's cannot.
    let (_, kernel_err, kernel_code) = engine_of(&["--engine", "kernel"], None);
    let engine = &doc["engine"];
    if kernel_code == 0 {
        assert_eq!(engine["engine"], "kernel", "{doc:#}");
        assert!(
            engine["why"].as_str().unwrap().contains("tracepoints"),
            "{doc:#}"
        );
    } else {
        assert!(kernel_err.contains("cannot run here"), "{kernel_err}");
        assert_eq!(engine["engine"], "ptrace", "{doc:#}");
        assert!(
            engine["why"]
                .as_str()
                .unwrap()
                .contains("kernel engine cannot run"),
            "{doc:#}"
        );
    }
    // The variable chooses, and says so; a flag only ptrace has chooses ptrace.
    let (doc, _, _) = engine_of(&[], Some("ptrace"));
    assert_eq!(doc["engine"]["engine"], "ptrace", "{doc:#}");
    assert!(
        doc["engine"]["why"]
            .as_str()
            .unwrap()
            .contains("IOSCOPE_TRACE_ENGINE=ptrace"),
        "{doc:#}"
    );
    let (doc, _, _) = engine_of(&["--every-call"], Some("kernel"));
    assert_eq!(doc["engine"]["engine"], "ptrace", "{doc:#}");
    assert!(
        doc["engine"]["why"]
            .as_str()
            .unwrap()
            .contains("--every-call")
    );
    // A value it does not know, and a ptrace flag with --engine kernel: refused, one line.
    for (flags, variable, named) in [
        (&[][..], Some("bpf\u{1b}[31m"), "IOSCOPE_TRACE_ENGINE"),
        (
            &["--engine", "kernel", "--every-call"][..],
            None,
            "--every-call",
        ),
    ] {
        let (_, err, code) = engine_of(flags, variable);
        assert_ne!(code, 0, "{err}");
        assert!(err.contains(named), "{err}");
        assert!(!err.contains('\u{1b}'), "control characters escaped: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}

#[test]
fn reference_runs_dd_once_untraced_and_puts_its_own_figure_beside_the_traced_one() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("in");
    std::fs::write(&input, vec![1u8; 4 << 20]).unwrap();
    let i = format!("if={}", input.display());
    let args = ["dd", i.as_str(), "of=/dev/null", "bs=4k"];
    let Some(t) = trace_run(&["--reference"], &args, &[]) else {
        return;
    };
    assert_eq!(t.code, 0, "{}", t.stderr);
    let r = &t.doc["reference"];
    assert!(r["seconds"].as_f64().unwrap() > 0.0, "{r:#}");
    assert_eq!(r["exit_code"], 0);
    assert_eq!(r["claim"]["tool"], "dd", "{r:#}");
    assert_eq!(r["claim"]["bytes_read"], 4 << 20);
    // The text puts the untraced run and dd's own figure beside the traced ones.
    let out = ioscope()
        .args(["trace", "--reference", "--"])
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().filter(|l| l.starts_with("untraced")).collect();
    assert_eq!(lines.len(), 1, "{text}");
    assert!(lines[0].contains("(--reference)"), "{text}");
    assert!(
        text.contains("copy: untraced it said") || text.contains("untraced it said"),
        "{text}"
    );
}

/// A thread waits in io_getevents with nothing in flight (after a write of its own), while
/// a child process appends a block to argv[1], sleeps, and exits; then the program exits
/// (the waiting thread with it).
const REAPER: &str = r#"
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
static aio_context_t ctx;
static void *reaper(void *arg) {
    (void)arg;
    struct io_event ev;
    write(1, "", 0);
    syscall(SYS_io_getevents, ctx, 1, 1, &ev, (void *)0);
    return 0;
}
int main(int argc, char **argv) {
    if (argc < 2 || syscall(SYS_io_setup, 8, &ctx) != 0) return 2;
    pthread_t t;
    if (pthread_create(&t, 0, reaper, 0)) return 3;
    usleep(20000);
    pid_t c = fork();
    if (c == 0) {
        static char buf[4096];
        memset(buf, 'x', sizeof buf);
        int fd = open(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd < 0 || write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) _exit(4);
        usleep(300000);
        _exit(0);
    }
    waitpid(c, 0, 0);
    _exit(0);
}
"#;

/// A thread waiting in io_getevents holds back none of the other tasks' records: the
/// child's appended block is counted on its file.
#[test]
fn a_thread_waiting_in_io_getevents_holds_back_no_other_task_s_calls() {
    let Some((_dir, out, doc)) = traced_on_file("reaper", REAPER, &["-pthread"], None) else {
        return;
    };
    assert_eq!(file(&doc, &out)["bytes_written"], 4096, "{doc:#}");
}

/// Builds C `source` as `name`, writes `contents` (if any) to a file, and traces the program
/// on that file's path under the kernel engine: the directory (kept while the caller
/// looks), the file's path and the document; `None` where the test is skipped.
fn traced_on_file(
    name: &str,
    source: &str,
    flags: &[&str],
    contents: Option<&[u8]>,
) -> Option<(tempfile::TempDir, std::path::PathBuf, Value)> {
    let dir = tempfile::tempdir().unwrap();
    let flags: Vec<&str> = ["-O1"].into_iter().chain(flags.iter().copied()).collect();
    let exe = build_c(dir.path(), name, "c", source, &flags)?;
    let data = dir.path().join("data");
    if let Some(bytes) = contents {
        std::fs::write(&data, bytes).unwrap();
    }
    let doc = traced("kernel", &[exe.to_str().unwrap(), data.to_str().unwrap()])?;
    Some((dir, data, doc))
}

/// Opens argv[1], moves it onto descriptor 0, and has a child run `cat` on it (what a
/// shell does for `cat < file`).
const REDIRECTED: &str = r#"
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int f = open(argv[1], O_RDONLY);
    if (f < 0 || dup2(f, 0) != 0) return 3;
    close(f);
    pid_t c = fork();
    if (c == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 1);
        execlp("cat", "cat", (char *)0);
        _exit(127);
    }
    int st = 0;
    waitpid(c, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
"#;

/// A descriptor moved onto 0 before a fork and an exec is still its file when the
/// program that read it is gone by the time its records are read.
#[test]
fn a_file_moved_onto_stdin_and_read_by_a_child_s_cat_is_counted_on_that_file() {
    let contents = vec![b'y'; 64 << 10];
    let Some((_dir, data, doc)) = traced_on_file("redirected", REDIRECTED, &[], Some(&contents))
    else {
        return;
    };
    assert_eq!(file(&doc, &data)["bytes_read"], 64 << 10, "{doc:#}");
}

/// Moves argv[1] onto descriptor 0, then opens /dev/stdin and reads a block from it.
const BY_DEV_STDIN: &str = r#"
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    if (argc < 2) return 2;
    int f = open(argv[1], O_RDONLY);
    if (f < 0 || dup2(f, 0) != 0) return 3;
    close(f);
    int g = open("/dev/stdin", O_RDONLY);
    static char buf[4096];
    if (g < 0 || read(g, buf, sizeof buf) != (ssize_t)sizeof buf) return 4;
    return 0;
}
"#;

/// /dev/stdin is the program's own standard input, not ioscope's, though its records
/// are read after it has exited.
#[test]
fn a_file_opened_as_dev_stdin_is_the_program_s_own_input() {
    let contents = vec![b'z'; 64 << 10];
    let Some((_dir, data, doc)) = traced_on_file("stdin", BY_DEV_STDIN, &[], Some(&contents))
    else {
        return;
    };
    assert_eq!(file(&doc, &data)["bytes_read"], 4096, "{doc:#}");
}

/// The processes other than this one holding the pipe whose "pipe:[N]" name is `name`.
fn holders_of(name: &str) -> Vec<String> {
    let me = std::process::id().to_string();
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if pid == me || !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(entry.path().join("fd")) else {
            continue;
        };
        if fds
            .flatten()
            .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == name))
        {
            out.push(pid);
        }
    }
    out
}

#[test]
fn the_process_that_closes_the_kernel_engine_s_events_holds_nothing_of_ioscope_s() {
    use std::io::Read;
    use std::os::unix::fs::MetadataExt;
    // Its closes wait out a grace period each, ~0.5 s in all: were it to hold ioscope's
    // output, a reader would wait that long for the end, and a pipeline's next command.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["trace", "--json", "--engine", "kernel", "--", "true"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let inode = std::fs::metadata(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&stdout)
    ))
    .unwrap()
    .ino();
    let name = format!("pipe:[{inode}]");
    // Read meanwhile: the document may be more than the pipe holds.
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::BufReader::new(stdout)
            .read_to_string(&mut text)
            .unwrap();
        text
    });
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    if err.contains("cannot run here") {
        eprintln!("skipped: {}", err.trim());
        return;
    }
    assert!(status.success(), "{err}");
    // Looked for at once: the closer, if any, is still closing.
    let holders = holders_of(&name);
    assert!(
        holders.is_empty(),
        "processes {holders:?} still hold ioscope's output after it ended"
    );
    let text = reader.join().unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["engine"]["engine"], "kernel", "{doc:#}");
}
