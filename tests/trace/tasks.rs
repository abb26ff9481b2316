//! Tasks that come and go under either engine: thousands of short processes, each with its
//! own file calls, counted one for one (and their state freed as they end: the unit tests
//! of `trace::kernel`), and an exec from a thread other than the leader, whose program's
//! calls are counted once, under the id the kernel gives it. The programs are built here
//! with `cc`; a test is skipped with the reason where there is none, or ptrace is refused.

use crate::common::*;
use serde_json::Value;

/// The file whose path is `path` in a trace document.
fn file<'a>(doc: &'a Value, path: &str) -> &'a Value {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in the trace: {doc:#}"))
}

/// Forks argv[2] children one after another; each opens argv[1], reads 100 bytes from it
/// and closes it.
const FORKS: &str = r#"
#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) return 2;
        if (pid == 0) {
            char b[100];
            int fd = open(argv[1], O_RDONLY);
            if (fd < 0 || read(fd, b, sizeof b) != sizeof b) _exit(3);
            close(fd);
            _exit(0);
        }
        int status;
        if (waitpid(pid, &status, 0) != pid || status != 0) return 4;
    }
    return 0;
}
"#;

#[test]
fn three_thousand_short_processes_have_each_of_their_calls_counted() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build_c(dir.path(), "forks", "c", FORKS, &["-O1"]) else {
        return;
    };
    let data = dir.path().join("data");
    std::fs::write(&data, vec![1u8; 4096]).unwrap();
    let data = std::fs::canonicalize(&data).unwrap();
    let (exe, path) = (exe.to_str().unwrap(), data.to_str().unwrap());
    let Some(t) = trace_run(&[], &[exe, path, "3000"], &[]) else {
        return;
    };
    assert_eq!(t.code, 0, "{}", t.stderr);
    let doc = &t.doc;
    assert_eq!(doc["exit_code"], 0, "{}", t.stderr);
    if doc["lost_events"].as_u64().unwrap_or(0) > 0 {
        eprintln!(
            "skipped: the kernel lost events here ({}): counts are lower bounds",
            doc["lost_events"]
        );
        return;
    }
    assert_eq!(
        doc["tasks"], 3_001,
        "the command and its children: {:#}",
        doc["tasks"]
    );
    let f = file(doc, path);
    assert_eq!(f["bytes_read"], 3_000 * 100, "{f:#}");
    assert_eq!(f["calls"]["read"]["calls"], 3_000, "{f:#}");
    assert_eq!(f["calls"]["close"]["calls"], 3_000, "{f:#}");
    let opens: u64 = ["open", "openat"]
        .iter()
        .filter_map(|c| f["calls"][c]["calls"].as_u64())
        .sum();
    assert_eq!(opens, 3_000, "{f:#}");
}

/// With argv[1] "child": opens argv[2], reads it in 5 calls of 1,000 bytes, closes it. Else
/// opens argv[1], reads 1,000 bytes, closes it, and starts a thread that executes this
/// program again (with "child" argv[2]) while the leader waits for it.
const THREAD_EXEC: &str = r#"
#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
static char **args;
static int reads(const char *path, int n) {
    char b[1000];
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 2;
    for (int i = 0; i < n; i++) if (read(fd, b, sizeof b) != sizeof b) return 3;
    close(fd);
    return 0;
}
static void *exec_it(void *unused) {
    (void)unused;
    char *argv[] = {args[0], "child", args[2], 0};
    execv("/proc/self/exe", argv);
    _exit(9);
}
int main(int argc, char **argv) {
    if (argc > 2 && strcmp(argv[1], "child") == 0) return reads(argv[2], 5);
    args = argv;
    if (reads(argv[1], 1) != 0) return 4;
    pthread_t t;
    if (pthread_create(&t, 0, exec_it, 0) != 0) return 5;
    pthread_join(t, 0);
    return 6;
}
"#;

#[test]
fn a_program_executed_by_a_thread_has_its_calls_counted_once_under_the_leaders_id() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build_c(
        dir.path(),
        "thread-exec",
        "c",
        THREAD_EXEC,
        &["-O1", "-pthread"],
    ) else {
        return;
    };
    let before = dir.path().join("before");
    let after = dir.path().join("after");
    std::fs::write(&before, vec![1u8; 4096]).unwrap();
    std::fs::write(&after, vec![2u8; 8192]).unwrap();
    let before = std::fs::canonicalize(&before).unwrap();
    let after = std::fs::canonicalize(&after).unwrap();
    let (exe, b, a) = (
        exe.to_str().unwrap(),
        before.to_str().unwrap(),
        after.to_str().unwrap(),
    );
    let Some(t) = trace_run(&[], &[exe, b, a], &[]) else {
        return;
    };
    let doc = &t.doc;
    assert_eq!(doc["exit_code"], 0, "{}", t.stderr);
    assert_eq!(doc["execs"], 2, "the command's exec and the thread's");
    let first = file(doc, b);
    assert_eq!(first["bytes_read"], 1_000, "{first:#}");
    assert_eq!(first["calls"]["read"]["calls"], 1, "{first:#}");
    // The new program's reads: each once, none lost with the thread's former id.
    let second = file(doc, a);
    assert_eq!(second["bytes_read"], 5_000, "{second:#}");
    assert_eq!(second["calls"]["read"]["calls"], 5, "{second:#}");
    assert_eq!(second["calls"]["close"]["calls"], 1, "{second:#}");
    assert_eq!(
        doc["still_running"].as_array().map_or(0, Vec::len),
        0,
        "{:#}",
        doc["still_running"]
    );
}
