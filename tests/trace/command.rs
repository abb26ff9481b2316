//! `trace -- CMD`: counts of a known sequence of calls (threads and a fork included) are
//! exact; dd's own records and bytes agree with the trace, and conv=fsync shows its one
//! fsync; offsets of random and sequential access look like it; bad commands are refused
//! with one line; the command's own exit status is kept. Skipped where ptrace is refused.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// Whether fio is installed (says why the test is skipped when not).
fn have_fio() -> bool {
    let ok = std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_ok();
    if !ok {
        eprintln!("skipped: fio is not installed (.ci/run installs it)");
    }
    ok
}

/// Whether this machine refused to let ioscope trace (says so when it did).
fn refused(stderr: &str) -> bool {
    let no = stderr.contains("ptrace refused");
    if no {
        eprintln!("skipped: ptrace is not allowed here: {stderr}");
    }
    no
}

/// `ioscope trace --json -- ARGS`: the document and the exit code, or `None` (with a
/// reason printed) where this machine does not allow tracing.
fn trace_json(args: &[&str]) -> Option<(Value, i32)> {
    trace_run(&[], args, &[]).map(|t| (t.doc, t.code))
}

/// The entry of `path` in a trace's files.
fn file<'a>(doc: &'a Value, path: &Path) -> &'a Value {
    let want = std::fs::canonicalize(path).unwrap();
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == want.to_str().unwrap())
        .unwrap_or_else(|| panic!("{} not in the trace: {doc:#}", want.display()))
}

fn calls(f: &Value, call: &str) -> u64 {
    f["calls"][call]["calls"].as_u64().unwrap_or(0)
}

fn compile(dir: &Path, name: &str, source: &str) -> Option<std::path::PathBuf> {
    build_c(dir, name, "c", source, &["-O1", "-pthread"])
}

const SEQUENCE: &str = r#"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
static int fd;
static void *reader(void *arg) {
    char b[100];
    for (int i = 0; i < 5; i++) if (pread(fd, b, 100, 1000 * i) != 100) _exit(3);
    return arg;
}
int main(int argc, char **argv) {
    char buf[4096];
    memset(buf, 'x', sizeof buf);
    fd = open(argv[1], O_CREAT | O_TRUNC | O_RDWR, 0644);
    if (fd < 0) return 2;
    for (int i = 0; i < 3; i++) if (write(fd, buf, 4096) != 4096) return 3;
    if (lseek(fd, 0, SEEK_SET) != 0) return 4;
    if (pread(fd, buf, 1000, 0) != 1000 || pread(fd, buf, 1000, 8192) != 1000) return 5;
    if (fsync(fd) != 0) return 6;
    pthread_t t;
    pthread_create(&t, 0, reader, 0);
    pthread_join(t, 0);
    pid_t child = fork();
    if (child == 0) {
        if (pwrite(fd, "0123456789", 10, 100000) != 10 || pwrite(fd, "abcdefghij", 10, 100010) != 10) _exit(7);
        _exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    close(fd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 8;
}
"#;

#[test]
fn a_known_sequence_with_a_thread_and_a_fork_is_counted_exactly() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let Some(exe) = compile(dir.path(), "sequence", SEQUENCE) else {
        return;
    };
    let target = dir.path().join("target-file");
    let Some((doc, code)) = trace_json(&[exe.to_str().unwrap(), target.to_str().unwrap()]) else {
        return;
    };
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(doc["schema"], "ioscope/trace/v2");
    assert_eq!(doc["exit_code"], 0);
    let f = file(&doc, &target);
    assert_eq!(calls(f, "write"), 3, "{f:#}");
    assert_eq!(f["calls"]["write"]["bytes_returned"], 3 * 4096);
    assert_eq!(calls(f, "lseek"), 1);
    assert_eq!(
        calls(f, "pread64"),
        2 + 5,
        "the main thread's and the other thread's"
    );
    assert_eq!(f["calls"]["pread64"]["bytes_returned"], 2 * 1000 + 5 * 100);
    assert_eq!(calls(f, "pwrite64"), 2, "the forked child's");
    assert_eq!(calls(f, "fsync"), 1);
    assert_eq!(f["syncs"], 1);
    assert_eq!(calls(f, "openat") + calls(f, "open"), 1);
    assert_eq!(
        calls(f, "close"),
        1,
        "the parent's; the child exits without closing"
    );
    assert_eq!(f["bytes_written"], 3 * 4096 + 20);
    assert_eq!(f["bytes_read"], 2 * 1000 + 5 * 100);
    assert_eq!(f["seeks"], 1);
    // Offsets: 3 writes and a seek at the current position, 7 preads, 2 pwrites.
    let counted: u64 = f["offsets"]["counts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .sum();
    assert_eq!(counted, 3 + 1 + 7 + 2);
    assert!(
        doc["tasks"].as_u64().unwrap() >= 3,
        "leader, thread and child: {doc:#}"
    );
}

#[test]
fn dd_records_and_bytes_agree_with_the_trace_and_conv_fsync_shows_its_fsync() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let len = (1 << 20) + 100;
    let input = file_with(dir.path(), "in", &pattern(len));
    let input_arg = format!("if={}", input.display());
    let Some((doc, code)) = trace_json(&["dd", &input_arg, "of=/dev/null", "bs=64k"]) else {
        return;
    };
    assert_eq!(code, 0);
    let f = file(&doc, &input);
    let reads = &f["calls"]["read"];
    let claim = &doc["claim"];
    assert_eq!(claim["tool"], "dd");
    assert_eq!(
        reads["calls"].as_u64().unwrap() - reads["empty"].as_u64().unwrap(),
        claim["records_in"].as_u64().unwrap(),
        "reads that returned data = dd's records in: {doc:#}"
    );
    assert_eq!(claim["records_in"], 17);
    assert_eq!(f["bytes_read"], len as u64);
    assert_eq!(claim["bytes_read"], len as u64);
    assert_eq!(f["syncs"], 0);
    if doc["proc_io"].is_object() {
        assert!(doc["proc_io"]["rchar"].as_u64().unwrap() >= len as u64);
    }

    let output = dir.path().join("out");
    let output_arg = format!("of={}", output.display());
    let Some((doc, code)) = trace_json(&["dd", &input_arg, &output_arg, "bs=64k", "conv=fsync"])
    else {
        return;
    };
    assert_eq!(code, 0);
    let g = file(&doc, &output);
    assert_eq!(g["bytes_written"], len as u64);
    assert_eq!(calls(g, "fsync") + calls(g, "fdatasync"), 1, "{g:#}");
    assert!(doc["sync_seconds"].as_f64().unwrap() > 0.0);
    assert!(doc["overhead_ns_per_call"].as_f64().is_some());
}

#[test]
fn bad_commands_are_refused_with_one_line_and_the_exit_status_is_the_commands() {
    // No command: clap's usage error.
    let out = ioscope().args(["trace"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // A command that does not exist.
    let out = ioscope()
        .args(["trace", "--", "/nonexistent/ioscope-no-such-command"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    let line = one_line_stderr(&out);
    assert!(
        line.contains("/nonexistent/ioscope-no-such-command") && line.contains("cannot run"),
        "{line}"
    );
    // A command that fails, and one killed by a signal: their status, and a report.
    let Some((doc, code)) = trace_json(&["sh", "-c", "exit 7"]) else {
        return;
    };
    assert_eq!((code, doc["exit_code"].as_i64()), (7, Some(7)));
    let Some((doc, code)) = trace_json(&["sh", "-c", "kill -9 $$"]) else {
        return;
    };
    assert_eq!(code, 128 + 9);
    assert_eq!(doc["signal"], 9);
    assert!(doc["files"].is_array());
}

/// fio's random reads land evenly over the file (a flat histogram) in no order; its
/// sequential reads land evenly too, in rising order (a ramp over time).
#[test]
fn fio_random_reads_are_flat_and_sequential_reads_are_a_ramp() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let data = file_with(dir.path(), "data", &pattern(8 << 20));
    let name = format!("--filename={}", data.display());
    for rw in ["randread", "read"] {
        let rw_arg = format!("--rw={rw}");
        let Some((doc, code)) = trace_json(&[
            "fio",
            "--name=job",
            &name,
            &rw_arg,
            "--bs=4k",
            "--size=8M",
            "--ioengine=psync",
            "--output-format=json",
        ]) else {
            return;
        };
        assert_eq!(code, 0, "{doc:#}");
        assert_eq!(doc["claim"]["tool"], "fio");
        assert_eq!(doc["claim"]["bytes_read"], 8 << 20);
        let f = file(&doc, &data);
        assert_eq!(f["bytes_read"], 8 << 20);
        let counts: Vec<u64> = f["offsets"]["counts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        let width = f["offsets"]["width"].as_u64().unwrap();
        let used = &counts[..((8u64 << 20) / width) as usize];
        let mean = used.iter().sum::<u64>() as f64 / used.len() as f64;
        assert!(
            used.iter().all(|&c| (c as f64 - mean).abs() <= 0.25 * mean),
            "{rw}: every part of the file read about as often: {used:?}"
        );
        let timeline: Vec<u64> = f["timeline"]["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        let rising = timeline.windows(2).filter(|w| w[1] > w[0]).count();
        if rw == "read" {
            assert_eq!(rising, timeline.len() - 1, "a ramp: {timeline:?}");
        } else {
            assert!(rising < timeline.len() * 3 / 4, "no order: {timeline:?}");
        }
    }
}

/// SIGINT to ioscope alone (not to its process group) while the command runs: the signal
/// is passed on, the command ends, and the partial trace is still printed, marked
/// incomplete, with exit 130.
#[test]
fn sigint_to_the_tracer_ends_the_command_and_prints_a_partial_trace() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["trace", "--json", "--", "sleep", "30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    // Wait until `sleep` runs under it (after the overhead measurement).
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            if refused(&err) {
                return;
            }
            panic!("ended early ({status}): {err}");
        }
        let sleeping = descendants_of(pid as i32).into_iter().any(|c| {
            std::fs::read_to_string(format!("/proc/{c}/comm"))
                .is_ok_and(|comm| comm.trim() == "sleep")
        });
        if sleeping {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "sleep never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the command was not stopped"
    );
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["complete"], false);
    assert_eq!(doc["signal"], libc::SIGINT);
    assert!(doc["execs"].as_u64().unwrap() >= 1, "{doc:#}");
}

/// `--csv` has a row per file and call; `--svg` plots each busy file's offsets over time.
#[test]
fn csv_and_svg_exports_hold_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let input = file_with(dir.path(), "in", &pattern(256 * 1024));
    let (csv, svg) = (dir.path().join("t.csv"), dir.path().join("t.svg"));
    let out = ioscope()
        .args(["trace", "--csv"])
        .arg(&csv)
        .arg("--svg")
        .arg(&svg)
        .args(["--", "dd", "bs=4k", "of=/dev/null"])
        .arg(format!("if={}", input.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    assert!(out.status.success(), "{err}");
    let csv = std::fs::read_to_string(&csv).unwrap();
    let want = std::fs::canonicalize(&input).unwrap();
    let row = csv
        .lines()
        .find(|l| l.starts_with(want.to_str().unwrap()) && l.contains(",read,"))
        .unwrap_or_else(|| panic!("no read row for the input: {csv}"));
    // 64 reads of 4 KiB and the one that finds the end.
    assert!(row.contains(",65,0,266240,262144,"), "{row}");
    let svg = std::fs::read_to_string(&svg).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("offset (MiB)") && svg.contains("<circle"));
}

/// The text report's frame: the command and its status, a section per busy file with its
/// call table, bytes, offsets and order, the totals, the kernel's counters, dd's claim
/// beside the trace, and the cost of tracing; the command's own stderr still shown.
#[test]
fn the_text_report_frames_a_dd_run() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let input = file_with(dir.path(), "in", &pattern(64 * 1024));
    let out = ioscope()
        .args(["trace", "--", "dd", "bs=4k", "of=/dev/null"])
        .arg(format!("if={}", input.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("16+0 records in"),
        "dd's own summary reaches stderr: {err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let keys: Vec<&str> = text
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|k| k.chars().all(|c| c.is_ascii_lowercase()))
        .collect();
    for key in [
        "trace", "ran", "moved", "offsets", "total", "kernel", "claim", "overhead",
    ] {
        assert!(keys.contains(&key), "no '{key}' line in:\n{text}");
    }
    let canonical = std::fs::canonicalize(&input).unwrap();
    assert!(text.contains(canonical.to_str().unwrap()), "{text}");
    assert!(text.contains("ran       exit 0"), "{text}");
    assert!(text.contains("kernel    ok"), "{text}");
    assert!(text.contains("dd says 64 KiB read"), "{text}");
    assert!(text.contains("in rising order"), "sequential reads: {text}");
}

/// fio with and without end_fsync: the trace shows the one fsync and its time only with it,
/// and fio's claim beside the trace in both.
#[test]
fn fio_end_fsync_shows_in_the_trace() {
    if !have_fio() {
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let target = dir.path().join("w");
    let name = format!("--filename={}", target.display());
    for end_fsync in ["0", "1"] {
        let flag = format!("--end_fsync={end_fsync}");
        let Some((doc, code)) = trace_json(&[
            "fio",
            "--name=job",
            &name,
            "--rw=write",
            "--bs=64k",
            "--size=4M",
            "--ioengine=psync",
            &flag,
            "--output-format=json",
        ]) else {
            return;
        };
        assert_eq!(code, 0, "{doc:#}");
        assert_eq!(doc["claim"]["bytes_written"], 4 << 20);
        let f = file(&doc, &target);
        assert_eq!(f["bytes_written"], 4 << 20);
        let syncs = calls(f, "fsync") + calls(f, "fdatasync");
        if end_fsync == "1" {
            assert_eq!(syncs, 1, "{f:#}");
            assert!(doc["sync_seconds"].as_f64().unwrap() > 0.0);
        } else {
            assert_eq!(syncs, 0, "{f:#}");
        }
    }
}

/// A command that writes the path given to --csv keeps its content (ioscope refuses to
/// overwrite it); children that outlive the command leave its counters uncompared rather
/// than "MISMATCH"; a command that ignores SIGINT is still reported interrupted (130).
#[test]
fn outputs_orphans_and_ignored_signals() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("t.csv");
    let script = format!("echo precious > '{}'", csv.display());
    let out = ioscope()
        .arg("trace")
        .arg("--csv")
        .arg(&csv)
        .args(["--", "sh", "-c", &script])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(std::fs::read_to_string(&csv).unwrap(), "precious\n");
    let Some((doc, _)) = trace_json(&["sh", "-c", "(sleep 0.2; echo a >/dev/null) & exit 0"])
    else {
        return;
    };
    assert!(doc["outlived"].as_u64().unwrap() >= 1, "{doc:#}");
    use std::process::{Command, Stdio};
    let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args([
            "trace",
            "--json",
            "--",
            "sh",
            "-c",
            "trap '' INT TERM; sleep 2",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(800));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A traced run started as a child, its standard output and error going to files (so that
/// nothing it leaves running can hold a pipe of the test's), and every process it left
/// running killed when the test ends, pass or fail.
struct Traced {
    child: std::process::Child,
    dir: tempfile::TempDir,
    /// Processes to kill at the end (those the command left running).
    leftovers: Vec<i32>,
}

impl Traced {
    /// `ioscope trace ARGS` with its outputs in files.
    fn start(args: &[&str]) -> Self {
        Self::start_env(args, &[])
    }

    fn start_env(args: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let out = std::fs::File::create(dir.path().join("out")).unwrap();
        let err = std::fs::File::create(dir.path().join("err")).unwrap();
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
            .arg("trace")
            .args(args)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null())
            .stdout(out)
            .stderr(err)
            .spawn()
            .unwrap();
        Self {
            child,
            dir,
            leftovers: Vec::new(),
        }
    }

    fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    fn stdout(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("out")).unwrap_or_default()
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("err")).unwrap_or_default()
    }

    /// Every process below ioscope now (its children, theirs, ...).
    fn descendants(&self) -> Vec<i32> {
        descendants_of(self.pid())
    }

    /// Waits until a process named `name` runs under ioscope (and has been there a moment);
    /// `None` where tracing is refused here (with the reason printed).
    fn wait_for(&mut self, name: &str) -> Option<i32> {
        let started = std::time::Instant::now();
        loop {
            if self.child.try_wait().unwrap().is_some() {
                if refused(&self.stderr()) {
                    return None;
                }
                panic!("ioscope ended before {name} ran: {}", self.stderr());
            }
            let found = self.descendants().into_iter().find(|&p| comm(p) == name);
            if let Some(p) = found {
                self.leftovers.push(p);
                std::thread::sleep(std::time::Duration::from_millis(200));
                return Some(p);
            }
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "{name} never started: {}",
                self.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    fn signal(&self, signal: i32) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.pid(), signal) };
    }

    /// Waits for ioscope to end, failing (after killing it) when it has not within 30 s:
    /// its exit code, and its JSON document when it printed one.
    fn finish(&mut self) -> (i32, Value) {
        let started = std::time::Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > std::time::Duration::from_secs(30) {
                self.leftovers.extend(self.descendants());
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("ioscope trace did not end within 30 s: {}", self.stderr());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        let doc: Value = serde_json::from_str(&self.stdout()).unwrap_or(Value::Null);
        for l in doc["still_running"].as_array().into_iter().flatten() {
            self.leftovers.push(l["pid"].as_i64().unwrap() as i32);
        }
        (status.code().unwrap_or(-1), doc)
    }
}

impl Drop for Traced {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        for &p in &self.leftovers {
            // SAFETY: killing processes this test's command started (by their ids).
            unsafe {
                libc::kill(p, libc::SIGKILL);
                libc::kill(p, libc::SIGCONT);
            }
        }
    }
}

/// Every process below `pid` now (its children, theirs, ...): the command runs below
/// the tracer, which runs below the process the shell started when the seccomp filter is
/// in use (see `trace::keeper`).
fn descendants_of(pid: i32) -> Vec<i32> {
    let mut all = Vec::new();
    let mut next = vec![pid];
    while let Some(p) = next.pop() {
        let tasks = std::fs::read_dir(format!("/proc/{p}/task"))
            .map(|d| d.filter_map(|t| t.ok()).collect::<Vec<_>>())
            .unwrap_or_default();
        for t in tasks {
            let children = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
            for c in children.split_whitespace().filter_map(|c| c.parse().ok()) {
                if !all.contains(&c) {
                    all.push(c);
                    next.push(c);
                }
            }
        }
    }
    all
}

/// The name of process `pid`, or "" when it is gone.
fn comm(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// The state letter of process `pid` (R, S, T stopped, t traced, Z), if it is there.
fn state(pid: i32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')').next()?.trim_start().chars().next()
}

/// The process tracing `pid` (0: none), if it is there.
fn tracer(pid: i32) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("TracerPid:"))?
        .trim()
        .parse()
        .ok()
}

/// Whether `pid` runs on, not stopped, and untraced — or traced only by the keeper that the
/// report `doc` names (under the seccomp filter, which cannot be removed, ioscope stays
/// behind what the command left running, counting nothing).
fn runs_on(pid: i32, doc: &Value) -> bool {
    let by = tracer(pid);
    (by == Some(0) || (by.is_some() && by == doc["kept_by"].as_i64()))
        && matches!(state(pid), Some('R' | 'S' | 'D'))
}

/// The command's first process ends while others it started run on (a double fork, a
/// `setsid` daemon): the trace reports its exit at once, names what was left running, and
/// lets go of it: those processes run on, untraced, stopped by nothing.
#[test]
fn what_the_command_leaves_running_is_named_and_let_go_of_not_waited_for() {
    let mut t = Traced::start(&[
        "--json",
        "--",
        "sh",
        "-c",
        "(sleep 60 &); setsid sleep 61 & sleep 0.3; exit 3",
    ]);
    let (code, doc) = t.finish();
    if refused(&t.stderr()) {
        return;
    }
    assert_eq!(code, 3, "{}", t.stderr());
    assert_eq!(doc["exit_code"], 3);
    assert!(
        doc["seconds"].as_f64().unwrap() < 30.0,
        "the time is the first process's, not the sleeps': {doc:#}"
    );
    let left = doc["still_running"].as_array().unwrap();
    assert_eq!(left.len(), 2, "both sleeps: {doc:#}");
    for l in left {
        assert_eq!(l["name"], "sleep");
        let pid = l["pid"].as_i64().unwrap() as i32;
        assert!(
            runs_on(pid, &doc),
            "{pid} runs on untraced: {:?}",
            state(pid)
        );
    }
    assert!(doc["outlived"].as_u64().unwrap() >= 2);
}

/// A tool whose output ioscope reads through a pipe (here a script named `dd`) leaves a
/// process holding that pipe: the trace still ends when the tool does, and after one
/// SIGINT when the tool is interrupted, with the partial report.
#[test]
fn a_teed_tool_whose_child_keeps_the_pipe_open_ends_the_trace_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let dd = dir.path().join("dd");
    std::fs::write(
        &dd,
        "#!/bin/sh\n(sleep 60 &)\necho '1+0 records in' >&2\nif [ \"$1\" = wait ]; then sleep 60; fi\n",
    )
    .unwrap();
    std::fs::set_permissions(&dd, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let dd = dd.to_str().unwrap();
    // It ends by itself.
    let mut t = Traced::start(&["--json", "--", dd]);
    let (code, doc) = t.finish();
    if refused(&t.stderr()) {
        return;
    }
    assert_eq!(code, 0, "{}", t.stderr());
    assert!(t.stderr().contains("1+0 records in"), "{}", t.stderr());
    assert_eq!(doc["still_running"].as_array().unwrap().len(), 1, "{doc:#}");
    // It is interrupted: one SIGINT to ioscope.
    let mut t = Traced::start(&["--json", "--", dd, "wait"]);
    if t.wait_for("sleep").is_none() {
        return;
    }
    t.signal(libc::SIGINT);
    let (code, doc) = t.finish();
    assert_eq!(code, 130, "{}", t.stderr());
    assert_eq!(doc["complete"], false);
    for l in doc["still_running"].as_array().unwrap() {
        let pid = l["pid"].as_i64().unwrap() as i32;
        assert!(
            runs_on(pid, &doc),
            "{pid} runs on untraced: {:?}",
            state(pid)
        );
    }
}

/// SIGTERM and SIGHUP to ioscope are passed on as themselves, so a command that ignores
/// SIGINT still ends; a daemon the command started in its own session gets nothing.
#[test]
fn the_signal_received_is_passed_on_as_itself_and_not_to_a_daemon() {
    for (signal, name) in [(libc::SIGTERM, "TERM"), (libc::SIGHUP, "HUP")] {
        let mut t = Traced::start(&[
            "--json",
            "--",
            "sh",
            "-c",
            "setsid sleep 61 & trap '' INT; exec sleep 60",
        ]);
        if t.wait_for("sleep").is_none() {
            return;
        }
        // Both sleeps run: note the daemon's pid.
        let started = std::time::Instant::now();
        let daemon = loop {
            let d = t.descendants().into_iter().find(|&p| {
                comm(p) == "sleep"
                    && std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                        .is_ok_and(|c| c.contains("61"))
            });
            if let Some(d) = d {
                break d;
            }
            assert!(started.elapsed() < std::time::Duration::from_secs(30));
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        t.leftovers.push(daemon);
        t.signal(signal);
        let (code, doc) = t.finish();
        assert_eq!(code, 130, "SIG{name}: {}", t.stderr());
        assert_eq!(
            doc["signal"], signal,
            "SIG{name} reached the command: {doc:#}"
        );
        assert!(
            runs_on(daemon, &doc),
            "SIG{name}: the daemon runs on untraced"
        );
    }
}

/// A command that ignores every signal passed on: the trace stops after a grace, reports
/// the command as not ended, and lets it run on, untraced.
#[test]
fn a_command_that_ignores_the_signal_is_let_go_of_after_a_grace() {
    let mut t = Traced::start(&[
        "--json",
        "--",
        "sh",
        "-c",
        "trap '' INT TERM; exec sleep 60",
    ]);
    let Some(sleep) = t.wait_for("sleep") else {
        return;
    };
    t.signal(libc::SIGTERM);
    let (code, doc) = t.finish();
    assert_eq!(code, 130, "{}", t.stderr());
    assert_eq!(
        (doc["exit_code"].is_null(), doc["signal"].is_null()),
        (true, true),
        "{doc:#}"
    );
    assert_eq!(doc["still_running"][0]["pid"], sleep);
    assert!(runs_on(sleep, &doc), "{:?}", state(sleep));
}

/// A second signal, a clear second after the first, while the command ignores both: the
/// trace ends at once (not after the grace) with its partial report and exit 130, and the
/// command, still running, is not left with a filter and no tracer: its later calls work.
#[test]
fn a_second_signal_ends_the_trace_at_once_and_the_command_runs_on_intact() {
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    let script = format!("trap '' INT TERM; sleep 4; echo ok > '{}'", done.display());
    let mut t = Traced::start(&["--json", "--", "sh", "-c", &script]);
    if t.wait_for("sleep").is_none() {
        return;
    }
    t.signal(libc::SIGTERM);
    std::thread::sleep(std::time::Duration::from_millis(1300));
    let again = std::time::Instant::now();
    t.signal(libc::SIGTERM);
    let (code, doc) = t.finish();
    let after = again.elapsed();
    assert_eq!(code, 130, "{}", t.stderr());
    assert_eq!(doc["complete"], false, "{doc:#}");
    assert!(
        !doc["still_running"].as_array().unwrap().is_empty(),
        "{doc:#}"
    );
    // The wait for the command (3 s of grace) was cut short by the second signal, and the
    // report says so.
    assert!(
        doc["waited_seconds"].as_f64().unwrap() < 3.0,
        "ended {after:?} after the second signal: {doc:#}"
    );
    let text = report_text(&doc);
    assert!(text.contains("a second signal cut the wait"), "{text}");
    let started = std::time::Instant::now();
    while !done.exists() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        std::fs::read_to_string(&done).unwrap_or_default(),
        "ok\n",
        "the command's open and write after the trace ended worked"
    );
}

/// SIGSTOP to the traced command stops it, as without a tracer, and SIGCONT continues it.
#[test]
fn sigstop_to_the_traced_command_is_honoured_and_sigcont_continues_it() {
    let mut t = Traced::start(&["--json", "--", "sleep", "60"]);
    let Some(sleep) = t.wait_for("sleep") else {
        return;
    };
    // SAFETY: signalling the process our command started.
    unsafe { libc::kill(sleep, libc::SIGSTOP) };
    std::thread::sleep(std::time::Duration::from_millis(300));
    for _ in 0..5 {
        assert!(
            matches!(state(sleep), Some('T' | 't')),
            "stays stopped: {:?}",
            state(sleep)
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // SAFETY: as above.
    unsafe { libc::kill(sleep, libc::SIGCONT) };
    let started = std::time::Instant::now();
    while state(sleep) != Some('S') {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "never continued: {:?}",
            state(sleep)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    t.signal(libc::SIGINT);
    let (code, doc) = t.finish();
    assert_eq!(code, 130, "{}", t.stderr());
    assert_eq!(doc["signal"], libc::SIGINT);
}

/// A set-user-ID program runs without its privilege under ptrace (unless the tracer is
/// root): the report says so, in text and JSON. As root, the test drops to `nobody`.
#[test]
fn a_set_user_id_program_is_reported_as_running_unprivileged() {
    use std::os::unix::fs::MetadataExt;
    let candidates = [
        ("/usr/bin/mount", "--version"),
        ("/bin/mount", "--version"),
        ("/usr/bin/passwd", "--help"),
        ("/usr/bin/su", "--help"),
    ];
    let Some((program, arg)) = candidates.into_iter().find(|(p, _)| {
        std::fs::metadata(p).is_ok_and(|m| m.mode() & libc::S_ISUID != 0 && m.uid() == 0)
    }) else {
        eprintln!("skipped: no set-user-ID root program here");
        return;
    };
    let ioscope_bin = assert_cmd::cargo::cargo_bin("ioscope");
    let mut cmd = if is_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&ioscope_bin);
        c
    } else {
        std::process::Command::new(&ioscope_bin)
    };
    let out = cmd
        .current_dir("/")
        .args(["trace", "--json", "--", program, arg])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    let Ok(doc) = serde_json::from_slice::<Value>(&out.stdout) else {
        eprintln!("skipped: could not run ioscope unprivileged here: {err}");
        return;
    };
    let unseen: Vec<&str> = doc["unseen"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|u| u.as_str())
        .collect();
    assert!(
        unseen
            .iter()
            .any(|u| u.contains(program) && u.contains("set-user-ID") && u.contains("ptrace")),
        "{doc:#}"
    );
    let text = report_text(&doc);
    assert!(text.contains("set-user-ID"), "{text}");
}

/// Control characters in a file name (ESC, BEL, a newline) are escaped in the text and
/// Markdown reports, and kept exactly in JSON.
#[test]
fn control_characters_in_names_are_escaped_in_text_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let name = dir.path().join("a\u{1b}[2J\u{7}b\nc");
    std::fs::write(&name, b"data").unwrap();
    let md = dir.path().join("t.md");
    let out = ioscope()
        .args(["trace", "--markdown"])
        .arg(&md)
        .args(["--", "cat"])
        .arg(&name)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    assert!(out.status.success(), "{err}");
    let text = String::from_utf8_lossy(&out.stdout);
    let report = text.trim_start_matches("data");
    assert!(
        !report.contains(['\u{1b}', '\u{7}']),
        "no raw control character: {report:?}"
    );
    assert!(report.contains(r"a\u{1b}[2J\u{7}b\nc"), "{report}");
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(!md.contains(['\u{1b}', '\u{7}']), "{md:?}");
    let Some((doc, _)) = trace_json(&["cat", name.to_str().unwrap()]) else {
        return;
    };
    let exact = std::fs::canonicalize(&name).unwrap();
    assert!(
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["path"] == exact.to_str().unwrap()),
        "{doc:#}"
    );
}

/// Two files whose names differ only in a byte that is not UTF-8 (`bad\xff`, `bad\xfe`)
/// stay two entries with their own calls, written with `\xNN` escapes; the command line
/// keeps such bytes the same way; the text report escapes them and control characters.
#[test]
fn names_that_are_not_utf8_are_kept_apart_and_escaped_not_merged() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let ff = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xff"));
    let fe = dir.path().join(std::ffi::OsStr::from_bytes(b"bad\xfe"));
    std::fs::write(&ff, b"one").unwrap();
    std::fs::write(&fe, b"second").unwrap();
    let out = ioscope()
        .current_dir(dir.path())
        .args(["trace", "--json", "--", "sh", "-c"])
        .arg(r#"cat "$(printf "bad\377")" "$(printf "bad\376")" >/dev/null"#)
        .arg(std::ffi::OsStr::from_bytes(b"arg\x1b[2J\xff"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return;
    }
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let base = base.to_str().unwrap();
    let entry = |name: &str| {
        doc["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == format!("{base}/{name}"))
            .unwrap_or_else(|| panic!("{name} not in the trace: {doc:#}"))
            .clone()
    };
    let (a, b) = (entry(r"bad\xff"), entry(r"bad\xfe"));
    assert_eq!(a["bytes_read"], 3, "{a:#}");
    assert_eq!(b["bytes_read"], 6, "{b:#}");
    assert_eq!(a["path_not_utf8"], true);
    let own = format!("{} {}", doc["files"], doc["command"]);
    assert!(!own.contains('\u{fffd}'), "nothing replaced: {own}");
    assert_eq!(doc["command"][3], "arg\u{1b}[2J\\xff", "{doc:#}");
    let text = report_text(&doc);
    assert!(
        text.contains(r"bad\xff") && text.contains(r"bad\xfe"),
        "{text}"
    );
    assert!(text.contains(r"arg\u{1b}[2J\xff"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text:?}");
}

/// After SIGTERM, a command whose handler cleans up (3000 one-byte writes) and exits 3
/// runs at its traced speed, not slowed down by the trace: it ends within the grace, its
/// exit code is kept and every write is counted.
#[test]
fn a_command_cleaning_up_after_the_signal_is_not_slowed_and_its_exit_code_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cleanup.out");
    let script = format!(
        "trap 'i=0; while [ $i -lt 3000 ]; do printf x; i=$((i+1)); done > \"{}\"; exit 3' TERM; sleep 60 & wait",
        out.display()
    );
    let mut t = Traced::start(&["--json", "--", "sh", "-c", &script]);
    if t.wait_for("sleep").is_none() {
        return;
    }
    t.signal(libc::SIGTERM);
    let (code, doc) = t.finish();
    assert_eq!(code, 130, "{}", t.stderr());
    assert_eq!(doc["exit_code"], 3, "the clean-up ended in time: {doc:#}");
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 3000);
    let canonical = std::fs::canonicalize(&out).unwrap();
    let f = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == canonical.to_str().unwrap())
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(calls(f, "write"), 3000, "{f:#}");
}

/// A signal while ioscope measures its own overhead (before the command starts) ends it
/// at once with 130: the calibration is killed, not given the grace a command gets, and the
/// command is never started.
#[test]
fn a_signal_during_the_calibration_ends_at_once_and_the_command_never_starts() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let script = format!("touch '{}'; sleep 60", marker.display());
    for _ in 0..5 {
        let mut t = Traced::start(&["--json", "--", "sh", "-c", &script]);
        // Catch the calibration (`ioscope __syscall-loop N`) while it runs.
        let started = std::time::Instant::now();
        let caught = loop {
            if t.child.try_wait().unwrap().is_some() || marker.exists() {
                break false;
            }
            // Once its own SIGINT handler is in place, as it is for most of its run.
            let calibrating = t.descendants().into_iter().any(|p| {
                std::fs::read(format!("/proc/{p}/cmdline"))
                    .is_ok_and(|c| c.windows(14).any(|w| w == b"__syscall-loop"))
                    && std::fs::read_to_string(format!("/proc/{p}/status")).is_ok_and(|s| {
                        s.lines()
                            .find_map(|l| l.strip_prefix("SigCgt:"))
                            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
                            .is_some_and(|m| m & (1 << (libc::SIGINT - 1)) != 0)
                    })
            });
            if calibrating {
                break true;
            }
            assert!(started.elapsed() < std::time::Duration::from_secs(30));
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        if !caught {
            if refused(&t.stderr()) {
                return;
            }
            t.leftovers.extend(t.descendants());
            continue;
        }
        t.signal(libc::SIGINT);
        let (code, _) = t.finish();
        assert_eq!(code, 130, "{}", t.stderr());
        // No timing is asserted (that the calibration is not given the command's 3 s grace
        // was checked by hand: 3.01 s before, at once after); what is checked is that the
        // command is never started once the signal came.
        assert!(!marker.exists(), "the command was started after the signal");
        return;
    }
    eprintln!("skipped: the calibration was never caught running (too fast here)");
}

/// A known tool (here scripts named `dd` and `fio`, whose output ioscope copies to read
/// their figures) leaves a background child writing to the same stdout or stderr after it
/// exits: the child is neither killed by SIGPIPE nor cut short when the trace ends; all
/// its lines arrive, as without ioscope. Traced without the seccomp filter, which a process
/// let go of keeps (its counted calls would fail with ENOSYS: tests/trace/count.rs).
#[test]
fn a_teed_tools_background_child_writes_on_after_the_trace_ends() {
    for (tool, stream) in [("dd", ">&2"), ("fio", "")] {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join(tool);
        let done = dir.path().join("ticker.done");
        std::fs::write(
            &bin,
            format!(
                "#!/bin/sh\n( i=0; while [ $i -lt 20 ]; do sleep .2; echo tick $i {stream} || exit 9; i=$((i+1)); done; echo done >> '{}' ) & exit 0\n",
                done.display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&bin, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut t = Traced::start_env(
            &["--", bin.to_str().unwrap()],
            &[("IOSCOPE_TRACE_EVERY_CALL", "1")],
        );
        let (code, _) = t.finish();
        if refused(&t.stderr()) {
            return;
        }
        assert_eq!(code, 0, "{tool}: {}", t.stderr());
        let started = std::time::Instant::now();
        while !done.exists() && started.elapsed() < std::time::Duration::from_secs(30) {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let output = if tool == "dd" { t.stderr() } else { t.stdout() };
        let ticks = output.lines().filter(|l| l.starts_with("tick ")).count();
        assert!(
            done.exists(),
            "{tool}: the ticker died ({ticks} ticks): {output}"
        );
        assert_eq!(ticks, 20, "{tool}: {output}");
    }
}

/// The command's stderr goes to a reader that never reads (its pipe full): one SIGINT to
/// ioscope still ends the trace (exit 130, the partial report on stdout), instead of
/// waiting for as long as the reader stalls.
#[test]
fn one_sigint_ends_the_trace_while_the_stderr_reader_stalls() {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("out");
    let (stall, stalled) = std::io::pipe().unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args([
            "trace",
            "--json",
            "--",
            "dd",
            "if=/dev/zero",
            "of=/dev/stderr",
            "bs=64k",
            "count=100000",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(stalled)
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // Wait until dd runs under it.
    let started = std::time::Instant::now();
    loop {
        if descendants_of(pid).into_iter().any(|c| comm(c) == "dd") {
            break;
        }
        if let Some(status) = child.try_wait().unwrap() {
            drop(stall);
            let doc = std::fs::read_to_string(&out_path).unwrap_or_default();
            // Refused here: nothing on stdout, the reason on the stalled stderr.
            assert!(doc.is_empty(), "ended early ({status}): {doc}");
            eprintln!("skipped: ioscope ended before dd ran (ptrace refused here?)");
            return;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let signalled = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if signalled.elapsed() > std::time::Duration::from_secs(30) {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&out_path).unwrap()).unwrap_or(Value::Null);
    // Let the stalled writers go: the forwarder and dd get EPIPE.
    drop(stall);
    for l in doc["still_running"].as_array().into_iter().flatten() {
        // SAFETY: killing the dd this test started, by its id.
        unsafe { libc::kill(l["pid"].as_i64().unwrap() as i32, libc::SIGKILL) };
    }
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("ioscope did not end within 30 s of the SIGINT while stderr stalled");
    };
    assert_eq!(status.code(), Some(130));
    assert_eq!(doc["complete"], false, "{doc:#}");
}

/// The main thread ends first (pthread_exit) while another thread does the writing: the
/// kernel's counters are those at the end of the whole process, so they agree with the
/// trace (no false "MISMATCH").
#[test]
fn the_kernel_counters_are_read_when_the_last_thread_ends_not_the_main_one() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(
        dir.path(),
        "lastthread",
        r#"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
static const char *path;
static void *writer(void *arg) {
    char b[512];
    memset(b, 'x', sizeof b);
    usleep(100000);
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    for (int i = 0; i < 2000; i++) if (write(fd, b, 512) != 512) _exit(3);
    close(fd);
    return arg;
}
int main(int argc, char **argv) {
    path = argv[1];
    pthread_t t;
    pthread_create(&t, 0, writer, 0);
    pthread_exit(0);
}
"#,
    ) else {
        return;
    };
    let target = dir.path().join("written");
    let Some((doc, code)) = trace_json(&[exe.to_str().unwrap(), target.to_str().unwrap()]) else {
        return;
    };
    assert_eq!(code, 0, "{doc:#}");
    assert_eq!(calls(file(&doc, &target), "write"), 2000, "{doc:#}");
    assert!(
        doc["proc_io"]["syscw"].as_u64().unwrap() >= 2000,
        "the counters include the other thread's writes: {doc:#}"
    );
    assert!(!report_text(&doc).contains("MISMATCH"), "{doc:#}");
}

/// The first process forks a child and exits at once, often before the child has been
/// seen to start (its first stop still pending): the child is still named as left running,
/// and runs on, untraced. (A race: it is tried 10 times.)
#[test]
fn a_child_forked_just_before_the_end_is_named_and_let_go_of() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = compile(
        dir.path(),
        "forkexit",
        "#include <unistd.h>\nint main(void) { if (fork() == 0) { sleep(30); _exit(0); } _exit(0); }\n",
    ) else {
        return;
    };
    for _ in 0..10 {
        let mut t = Traced::start(&["--json", "--", exe.to_str().unwrap()]);
        let (code, doc) = t.finish();
        if refused(&t.stderr()) {
            return;
        }
        assert_eq!(code, 0, "{}", t.stderr());
        assert_eq!(doc["outlived"], 1, "{doc:#}");
        let left = doc["still_running"].as_array().unwrap();
        assert_eq!(left.len(), 1, "the child is named: {doc:#}");
        assert_eq!(left[0]["stopped"], false, "{doc:#}");
        let pid = left[0]["pid"].as_i64().unwrap() as i32;
        assert!(
            runs_on(pid, &doc),
            "{pid}: {:?} {:?}",
            state(pid),
            tracer(pid)
        );
    }
}

/// A process the command stopped (SIGSTOP) just before it exited is reported as stopped,
/// as it is.
#[test]
fn a_process_stopped_just_before_the_end_is_reported_stopped() {
    for _ in 0..3 {
        let mut t = Traced::start(&[
            "--json",
            "--",
            "sh",
            "-c",
            "sleep 20 & sleep .2; kill -STOP $!; exit 4",
        ]);
        let (code, doc) = t.finish();
        if refused(&t.stderr()) {
            return;
        }
        assert_eq!(code, 4, "{}", t.stderr());
        let left = &doc["still_running"][0];
        let pid = left["pid"].as_i64().unwrap() as i32;
        // Stopped: by itself, or in a tracing stop of the keeper that the report names.
        let kept = tracer(pid).is_some_and(|t| t != 0 && Some(t) == doc["kept_by"].as_i64());
        let expected = if kept { 't' } else { 'T' };
        assert_eq!(state(pid), Some(expected), "{doc:#}");
        assert_eq!(left["stopped"], true, "{doc:#}");
    }
}

/// The unseen notes of `ioscope trace --json -- PROGRAM ARG` run through `wrapper` (a
/// command line that ends with the ioscope binary), or `None` where it could not run.
fn unseen_through(wrapper: &[&str], program: &str, arg: &str) -> Option<Vec<String>> {
    let out = std::process::Command::new(wrapper[0])
        .args(&wrapper[1..])
        .args(["trace", "--json", "--", program, arg])
        .current_dir("/")
        .output()
        .ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if refused(&err) {
        return None;
    }
    let Ok(doc) = serde_json::from_slice::<Value>(&out.stdout) else {
        eprintln!("skipped: could not run {wrapper:?}: {err}");
        return None;
    };
    Some(
        doc["unseen"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|u| u.as_str().map(str::to_string))
            .collect(),
    )
}

/// The set-user-ID note says "would run with its file's privileges" only where it would
/// untraced: not under no_new_privs (`setpriv --no-new-privs`), nor for a copy of the
/// program on a file system mounted `nosuid` (while the same copy on a plain mount gets it).
#[test]
fn the_set_user_id_note_is_not_given_where_the_bit_is_ignored_untraced_too() {
    use std::os::unix::fs::MetadataExt;
    let Some(program) = ["/usr/bin/mount", "/bin/mount"].into_iter().find(|p| {
        std::fs::metadata(p).is_ok_and(|m| m.mode() & libc::S_ISUID != 0 && m.uid() == 0)
    }) else {
        eprintln!("skipped: no set-user-ID root mount program here");
        return;
    };
    let ioscope_bin = assert_cmd::cargo::cargo_bin("ioscope");
    let ioscope_bin = ioscope_bin.to_str().unwrap();
    let nobody = ["--reuid=65534", "--regid=65534", "--clear-groups"];
    let mut nnp = vec!["setpriv", "--no-new-privs"];
    if is_root() {
        nnp.extend(nobody);
    }
    nnp.push(ioscope_bin);
    if let Some(unseen) = unseen_through(&nnp, program, "--version") {
        assert!(
            !unseen.iter().any(|u| u.contains("set-user-ID")),
            "no_new_privs: {unseen:?}"
        );
    }
    if !is_root() {
        eprintln!("skipped: the nosuid mount part needs root (to mount and to drop to nobody)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mount_dir = dir.path().to_str().unwrap();
    for (options, noted) in [("nosuid", false), ("suid", true)] {
        let script = format!(
            "mount -t tmpfs -o {options},mode=755 tmpfs \"$1\" && cp \"$2\" \"$1/m\" && chmod 4755 \"$1/m\" && shift 2 && exec \"$@\""
        );
        let mut wrapper = vec![
            "unshare", "-m", "sh", "-c", &script, "sh", mount_dir, program,
        ];
        wrapper.push("setpriv");
        wrapper.extend(nobody);
        wrapper.push(ioscope_bin);
        let copy = format!("{mount_dir}/m");
        let Some(unseen) = unseen_through(&wrapper, &copy, "--version") else {
            return;
        };
        assert_eq!(
            unseen.iter().any(|u| u.contains("set-user-ID")),
            noted,
            "{options}: {unseen:?}"
        );
    }
}
