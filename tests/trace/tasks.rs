//! Tasks that come and go under either engine: thousands of short processes, each with its
//! own file calls, counted one for one (and their state freed as they end: the unit tests
//! of `trace::kernel`). The programs are built here with `cc`; a test is skipped with the
//! reason where there is none, or ptrace is refused.

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
