//! `trace`'s descriptors and 32-bit calls, from the hostile review of issue 24 (part A):
//! descriptors closed by close_range(2) (and by exec, for close-on-exec ones) are forgotten, so a number reused
//! by a call trace does not see (pipe) is not taken for the old file; system calls made
//! through the 32-bit ABI (`int $0x80`) are read as the i386 calls they are, with or without
//! the seccomp filter, and a 32-bit program's vDSO is hidden too; libaio figures are checked
//! against the requests submitted through io_submit, and an io_submit whose pointer array
//! runs into an unmapped page has the requests the kernel took counted; x32 calls are
//! counted and said not decoded. Each program is built here with `cc`;
//! a test is skipped with a reason where there is no compiler, no 32-bit support, no fio,
//! or ptrace is refused.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Builds `source` (C, or assembly with `ext` "S") with `cc` and `flags`, or says why not.
fn build(dir: &Path, name: &str, ext: &str, source: &str, flags: &[&str]) -> Option<PathBuf> {
    build_c(dir, name, ext, source, flags)
}

/// `ioscope trace --json EXTRA -- ARGS`: the document and the command's output (our
/// standard error, where --json sends it); `None` where ptrace is refused.
fn trace(extra: &[&str], args: &[&str]) -> Option<(Value, String)> {
    trace_run(extra, args, &[]).map(|t| (t.doc, t.stderr))
}

/// The file whose path is `path` in a trace document.
fn file<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == path)
}

/// The files whose path starts with `prefix`.
fn files_like<'a>(doc: &'a Value, prefix: &str) -> Vec<&'a Value> {
    doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap().starts_with(prefix))
        .collect()
}

/// Opens argv[1] (fd 3) and writes a byte there; then closes 3 and up: with close_range
/// (flags from argv[2]: 0, or 4 = CLOSE_RANGE_CLOEXEC, or "cloexec" for a plain O_CLOEXEC
/// open), then in the CLOEXEC cases execs itself with "child". The process that goes on
/// makes a pipe (fds 3 and 4, a call trace does not count) and moves 10 KiB through it.
/// Exits 3 where the kernel has no close_range.
const CLOSE_RANGE: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
static int through_a_pipe(void) {
    int p[2];
    char b[1024];
    memset(b, 'p', sizeof b);
    if (pipe(p) != 0 || p[0] != 3) return 4;
    for (int i = 0; i < 10; i++) if (write(p[1], b, sizeof b) != sizeof b) return 5;
    for (int i = 0; i < 10; i++) if (read(p[0], b, sizeof b) != sizeof b) return 6;
    puts("pipe done");
    return 0;
}
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "child") == 0) return through_a_pipe();
    int cloexec = strcmp(argv[2], "cloexec") == 0;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | (cloexec ? O_CLOEXEC : 0), 0644);
    if (fd != 3 || write(fd, "a", 1) != 1) return 2;
    if (!cloexec) {
        unsigned flags = (unsigned)atoi(argv[2]);
        if (syscall(SYS_close_range, 3u, ~0u, flags) != 0) { puts("no close_range"); return 3; }
        if (flags == 0) return through_a_pipe();
    }
    execl("/proc/self/exe", argv[0], "child", (char *)0);
    return 7;
}
"#;

/// Runs the close_range program in `mode` and checks the pipe's calls land on the pipe.
fn closed_descriptors_are_forgotten(mode: &str) {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(dir.path(), "cr", "c", CLOSE_RANGE, &["-O1"]) else {
        return;
    };
    let data = dir.path().join("old-file");
    let (exe, data) = (exe.to_str().unwrap(), data.to_str().unwrap());
    let Some((doc, out)) = trace(&[], &[exe, data, mode]) else {
        return;
    };
    if out.contains("no close_range") {
        eprintln!("skipped: this kernel has no close_range (Linux 5.9+)");
        return;
    }
    assert_eq!(doc["exit_code"], 0, "{out}");
    let old = file(&doc, data).unwrap_or_else(|| panic!("{data} not traced: {doc:#}"));
    assert_eq!(old["bytes_written"], 1, "{old:#}");
    assert_eq!(
        old["bytes_read"], 0,
        "the pipe's reads (fd 3 reused) were taken for the closed file: {old:#}"
    );
    assert!(old["calls"].get("read").is_none(), "{old:#}");
    // The kernel engine names a descriptor from /proc while it is open: a pipe made by
    // a program that has exited by then stays unresolved (never another file's).
    let mut pipes = files_like(&doc, "pipe:");
    if doc["engine"]["engine"] == "kernel" {
        pipes.extend(files_like(&doc, "fd 3 ("));
    }
    let read: u64 = pipes
        .iter()
        .map(|p| p["bytes_read"].as_u64().unwrap())
        .sum();
    assert_eq!(read, 10 * 1024, "{doc:#}");
}

#[test]
fn a_descriptor_closed_by_close_range_is_not_taken_for_the_file_it_was() {
    closed_descriptors_are_forgotten("0");
}

#[test]
fn descriptors_marked_close_on_exec_by_close_range_are_gone_after_the_exec() {
    closed_descriptors_are_forgotten("4");
}

#[test]
fn a_plain_o_cloexec_descriptor_is_gone_after_the_exec() {
    closed_descriptors_are_forgotten("cloexec");
}

/// A 64-bit program that makes i386 system calls with `int $0x80` (built -no-pie, so its
/// buffers have 32-bit addresses): 3 write(2) of 12 bytes to argv[1], a read(2) of 5 bytes
/// and a pread64 of 4 at offset 6 from argv[2], an _llseek, and an i386 close of argv[1].
/// Exits 3 where the kernel does not run 32-bit calls.
const INT80: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
static char line[] = "32-bit line\n";
static char got[16];
static long long pos;
static long int80(long nr, long a, long b, long c, long d, long e) {
    long r;
    __asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
                     : "memory");
    return r;
}
int main(int argc, char **argv) {
    if (argc < 3) return 2;
    if (int80(20, 0, 0, 0, 0, 0) != getpid()) { puts("no int 0x80 here"); return 3; }
    int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = open(argv[2], O_RDONLY);
    if (out < 0 || in < 0) return 2;
    for (int i = 0; i < 3; i++) if (int80(4, out, (long)line, 12, 0, 0) != 12) return 4;
    if (int80(3, in, (long)got, 5, 0, 0) != 5) return 5;
    if (int80(180, in, (long)got, 4, 6, 0) != 4) return 6;
    if (int80(140, in, 0, 0, (long)&pos, SEEK_SET) != 0) return 8;
    if (int80(6, out, 0, 0, 0, 0) != 0) return 9;
    close(in);
    puts("int80 done");
    return 0;
}
"#;

fn int80_calls_are_read_as_i386_calls(extra: &[&str]) {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipped: int 0x80 is an x86_64 test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(dir.path(), "i80", "c", INT80, &["-O1", "-no-pie"]) else {
        return;
    };
    let out_path = dir.path().join("written");
    let in_path = file_with(dir.path(), "source", b"0123456789abcdef");
    let status = std::process::Command::new(&exe)
        .args([&out_path, &in_path])
        .output()
        .unwrap();
    if status.status.code() != Some(0) {
        eprintln!(
            "skipped: this kernel does not run 32-bit system calls (int 0x80): {}",
            String::from_utf8_lossy(&status.stdout).trim()
        );
        return;
    }
    let (o, i) = (out_path.to_str().unwrap(), in_path.to_str().unwrap());
    let Some((doc, out)) = trace(extra, &[exe.to_str().unwrap(), o, i]) else {
        return;
    };
    assert_eq!(doc["exit_code"], 0, "{out}");
    let written = file(&doc, o).unwrap_or_else(|| panic!("{o} not traced: {doc:#}"));
    assert_eq!(written["calls"]["write"]["calls"], 3, "{written:#}");
    assert_eq!(written["bytes_written"], 36, "{written:#}");
    assert_eq!(written["calls"]["close"]["calls"], 1, "{written:#}");
    let read = file(&doc, i).unwrap_or_else(|| panic!("{i} not traced: {doc:#}"));
    assert_eq!(read["calls"]["read"]["bytes_returned"], 5, "{read:#}");
    assert_eq!(read["calls"]["pread64"]["bytes_returned"], 4, "{read:#}");
    // Offsets: the read at 0, the pread64 at 6 (its offset given in two halves).
    assert_eq!(
        read["timeline"]["offsets"],
        serde_json::json!([0, 6]),
        "{read:#}"
    );
    // write ×3, read, pread64 and close; getpid is not file I/O, _llseek is named.
    assert_eq!(doc["calls_32bit"], 6, "{doc:#}");
    let unseen: Vec<&str> = doc["unseen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    assert!(
        unseen
            .iter()
            .any(|u| u.starts_with("32-bit: 1 system call(s)") && u.contains("_llseek ×1")),
        "{unseen:?}"
    );
}

#[test]
fn int_0x80_calls_are_counted_as_the_i386_calls_they_are() {
    int80_calls_are_read_as_i386_calls(&[]);
}

#[test]
fn int_0x80_calls_are_counted_under_the_seccomp_filter_too() {
    int80_calls_are_read_as_i386_calls(&["--seccomp"]);
}

/// A static 32-bit program without libc: says whether its auxiliary vector gives it a vDSO
/// (AT_SYSINFO_EHDR, 33), then opens argv[1], reads the clock (clock_gettime, i386 265),
/// writes 4 × 16 bytes, reads the clock, fsyncs and closes the file.
const STATIC32: &str = r#"
    .globl _start
    .data
given:  .ascii "vdso given\n"
absent: .ascii "vdso absent\n"
block:  .ascii "0123456789abcdef"
ts:     .long 0, 0
    .text
_start:
    mov (%esp), %ecx
    lea 8(%esp,%ecx,4), %esi
1:  mov (%esi), %eax
    add $4, %esi
    test %eax, %eax
    jnz 1b
    xor %ebp, %ebp
2:  mov (%esi), %eax
    test %eax, %eax
    jz 3f
    cmp $33, %eax
    jne 4f
    mov $1, %ebp
4:  add $8, %esi
    jmp 2b
3:  mov $4, %eax
    mov $1, %ebx
    mov $absent, %ecx
    mov $12, %edx
    test %ebp, %ebp
    jz 5f
    mov $given, %ecx
    mov $11, %edx
5:  int $0x80
    mov $5, %eax
    mov 8(%esp), %ebx
    mov $0x241, %ecx
    mov $0644, %edx
    int $0x80
    test %eax, %eax
    js 9f
    mov %eax, %edi
    mov $265, %eax
    mov $1, %ebx
    mov $ts, %ecx
    int $0x80
    mov $4, %esi
6:  mov $4, %eax
    mov %edi, %ebx
    mov $block, %ecx
    mov $16, %edx
    int $0x80
    dec %esi
    jnz 6b
    mov $265, %eax
    mov $1, %ebx
    mov $ts, %ecx
    int $0x80
    mov $118, %eax
    mov %edi, %ebx
    int $0x80
    mov $6, %eax
    mov %edi, %ebx
    int $0x80
    mov $1, %eax
    xor %ebx, %ebx
    int $0x80
9:  mov $1, %eax
    mov $2, %ebx
    int $0x80
"#;

#[test]
fn a_32_bit_program_has_its_vdso_hidden_and_its_timed_writes_found() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipped: a 32-bit x86 program is an x86_64 test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(
        dir.path(),
        "static32",
        "S",
        STATIC32,
        &["-m32", "-nostdlib", "-static"],
    ) else {
        return;
    };
    let data = dir.path().join("data");
    let untraced = std::process::Command::new(&exe).arg(&data).output();
    match untraced {
        Ok(o) if o.status.code() == Some(0) && o.stdout == b"vdso given\n" => {}
        other => {
            eprintln!("skipped: this kernel does not run 32-bit programs with a vDSO: {other:?}");
            return;
        }
    }
    let d = data.to_str().unwrap();
    let Some((doc, out)) = trace(&[], &[exe.to_str().unwrap(), d]) else {
        return;
    };
    assert_eq!(out.trim(), "vdso absent", "the 32-bit vDSO was not hidden");
    assert_eq!(doc["exit_code"], 0);
    let f = file(&doc, d).unwrap_or_else(|| panic!("{d} not traced: {doc:#}"));
    assert_eq!(f["calls"]["write"]["calls"], 4, "{f:#}");
    assert_eq!(f["bytes_written"], 64, "{f:#}");
    assert_eq!(f["calls"]["fsync"]["calls"], 1, "{f:#}");
    let clock = &doc["clock"];
    assert_eq!(clock["reads"]["clock_gettime"], 2, "{clock:#}");
    assert_eq!(clock["regions_found"], 1, "{clock:#}");
    let r = &clock["regions"][0];
    assert_eq!(r["inside"]["write"]["calls"], 4, "{r:#}");
    assert_eq!(r["after"]["fsync"], 1, "{r:#}");
}

/// The saved trace report of tests/fixtures (dd: 32 write calls, the kernel's 32).
fn saved_report() -> ioscope::cmd::trace::TraceReport {
    let text = std::fs::read_to_string("tests/fixtures/trace.json").unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn the_kernel_does_not_agree_when_it_counted_writes_the_trace_saw_none_of() {
    let mut r = saved_report();
    assert_eq!(r.kernel_agrees(), Some(true), "the saved run agrees");
    // The same run with its writes unseen (made through a way the trace does not read):
    // 0 traced against the kernel's 32 is no agreement.
    r.totals.remove("write");
    assert_eq!(r.kernel_agrees(), Some(false));
    // Against the usual story: a program that writes nothing, and a kernel that counted no
    // write either, still agrees.
    let io = r.proc_io.as_mut().unwrap();
    io.syscw = 0;
    io.wchar = 0;
    assert_eq!(r.kernel_agrees(), Some(true));
    // And writes the trace saw as copy_file_range (in the kernel's syscw too) are seen.
    let mut r = saved_report();
    let write = r.totals.remove("write").unwrap();
    r.totals.insert("copy_file_range".into(), write);
    assert_eq!(r.kernel_agrees(), Some(true));
}

mod claims {
    //! libaio figures against the requests submitted through io_submit; figures whose
    //! bytes no file carried are said to be unseen, not set against other files' reads.

    use ioscope::measure::external::{ClaimedFigure, Moves, ToolClaim};
    use ioscope::report::views::trace::claim_figure;
    use ioscope::trace::claims::{Covers, Reason, Verdict, check};
    use ioscope::trace::tally::FileStats;

    const MIB: u64 = 1 << 20;

    /// A file with the given calls: (name, calls, bytes returned, seconds inside).
    fn file(path: &str, calls: &[(&str, u64, u64, f64)]) -> FileStats {
        let mut map = serde_json::Map::new();
        for &(name, n, bytes, seconds) in calls {
            map.insert(
                name.into(),
                serde_json::json!({"calls": n, "errors": 0, "bytes_requested": bytes,
                    "bytes_returned": bytes, "nanos": (seconds * 1e9) as u64}),
            );
        }
        let moved = |names: &[&str]| -> u64 {
            calls
                .iter()
                .filter(|c| names.contains(&c.0))
                .map(|c| c.2)
                .sum()
        };
        serde_json::from_value(serde_json::json!({
            "path": path, "calls": map,
            "bytes_read": moved(&["read", "pread64", "aio pread"]),
            "bytes_written": moved(&["write", "pwrite64", "aio pwrite"]),
            "syncs": 0, "sync_nanos": 0, "seeks": 0,
            "offsets": {"width": 4096, "counts": vec![0; 32]},
            "timeline": {"stride": 0, "offsets": [], "seen": 0}
        }))
        .unwrap()
    }

    fn fio(moves: Moves, bytes: u64, seconds: f64) -> ToolClaim {
        ToolClaim {
            tool: "fio".into(),
            bytes_read: 0,
            bytes_written: 0,
            seconds,
            records_in: None,
            records_out: None,
            figures: vec![ClaimedFigure {
                label: "READ, group 0".into(),
                moves,
                bytes,
                record_size: Some(65536),
                seconds: Some(seconds),
                said: "bw=".into(),
            }],
        }
    }

    /// fio's start-up: a loader's and a configuration's reads on other files.
    fn start_up() -> Vec<FileStats> {
        vec![
            file(
                "/usr/lib/libc.so.6",
                &[("read", 1, 832, 1e-5), ("pread64", 2, 1536, 2e-5)],
            ),
            file("/etc/fio.conf", &[("read", 40, 56 * 1024, 4e-4)]),
        ]
    }

    #[test]
    fn a_libaio_read_figure_is_set_against_the_requests_in_flight_not_the_start_up_reads() {
        let mut files = start_up();
        files.push(file("/d/data", &[("aio pread", 256, 16 * MIB, 0.020)]));
        let c = check(&fio(Moves::Read, 16 * MIB, 0.022), &files, None);
        let f = &c.figures[0];
        let t = f.traced.as_ref().unwrap();
        assert_eq!(t.covers, Covers::AioInFlight);
        assert_eq!((t.bytes, t.calls), (16 * MIB, 256));
        assert_eq!(t.files, vec!["/d/data".to_string()]);
        assert_eq!(f.verdict, Verdict::Agree);
        assert_eq!(c.bytes[0].traced, 16 * MIB);
        let sentence = claim_figure(f);
        assert!(sentence.contains("256 libaio request(s)"), "{sentence}");
        assert!(
            sentence.contains("from io_submit to io_getevents"),
            "{sentence}"
        );
    }

    #[test]
    fn a_libaio_figure_slower_than_its_requests_in_flight_is_said_to_be_lower() {
        // Against the usual story (the claim higher): fio's 100 ms for 16 MiB, its requests
        // in flight 20 ms.
        let mut files = start_up();
        files.push(file("/d/data", &[("aio pread", 256, 16 * MIB, 0.020)]));
        let c = check(&fio(Moves::Read, 16 * MIB, 0.1), &files, None);
        assert_eq!(c.figures[0].verdict, Verdict::ClaimLower);
        assert_eq!(
            c.figures[0].traced.as_ref().unwrap().covers,
            Covers::AioInFlight
        );
    }

    #[test]
    fn plain_reads_that_carry_the_bytes_are_still_set_against_their_calls() {
        let mut files = start_up();
        files.push(file("/d/data", &[("read", 256, 16 * MIB, 0.020)]));
        let c = check(&fio(Moves::Read, 16 * MIB, 0.021), &files, None);
        let t = c.figures[0].traced.as_ref().unwrap();
        assert_eq!(t.covers, Covers::InsideCalls);
        assert_eq!((t.bytes, t.calls), (16 * MIB, 256));
    }

    #[test]
    fn a_figure_whose_bytes_no_file_carried_is_said_to_be_unseen_and_not_compared() {
        // fio with io_uring: 16 MiB read, none of it by a system call the trace reads.
        let c = check(&fio(Moves::Read, 16 * MIB, 0.022), &start_up(), None);
        let f = &c.figures[0];
        assert!(f.traced.is_none(), "{f:#?}");
        assert_eq!(
            (f.verdict, f.reason, f.ratio),
            (Verdict::NotTraced, Reason::Unseen, None)
        );
        assert_eq!(
            (c.bytes[0].traced, c.bytes[0].verdict),
            (0, Verdict::NotTraced)
        );
        let sentence = claim_figure(f);
        assert!(
            sentence.contains("not seen") && sentence.contains("not compared"),
            "{sentence}"
        );
        // A small figure the same start-up reads could be a real part of is compared.
        let c = check(&fio(Moves::Read, 64 * 1024, 0.001), &start_up(), None);
        assert!(c.figures[0].traced.is_some());
        assert_ne!(c.figures[0].verdict, Verdict::NotTraced);
    }

    /// The program's path when it is installed (on PATH), else `None` with the reason.
    fn tool(name: &str) -> Option<std::path::PathBuf> {
        let found = std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join(name))
            .find(|p| p.is_file());
        if found.is_none() {
            eprintln!("skipped: {name} is not installed");
        }
        found
    }

    #[test]
    fn fio_with_libaio_is_checked_against_what_it_submitted() {
        let Some(fio) = tool("fio") else { return };
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let data = dir.path().join("f");
        let name = format!("--filename={}", data.display());
        let fio = fio.to_str().unwrap();
        let args = [
            fio,
            "--name=x",
            "--rw=read",
            "--size=4m",
            "--bs=64k",
            "--ioengine=libaio",
            "--iodepth=4",
            &name,
        ];
        let Some((doc, out)) = super::trace(&[], &args) else {
            return;
        };
        if doc["exit_code"] != 0 || doc["claim_check"].is_null() {
            eprintln!("skipped: fio's libaio engine did not run here: {out}");
            return;
        }
        let f = &doc["claim_check"]["figures"][0];
        assert_eq!(f["figure"]["bytes"], 4 << 20, "{doc:#}");
        assert_eq!(f["traced"]["covers"], "aio_in_flight", "{f:#}");
        assert_eq!(f["traced"]["bytes"], 4 << 20, "{f:#}");
        assert_eq!(f["traced"]["calls"], 64, "{f:#}");
        assert_eq!(
            f["traced"]["files"],
            serde_json::json!([data.to_str().unwrap()]),
            "{f:#}"
        );
        assert!(f["traced"]["seconds"].as_f64().unwrap() > 0.0, "{f:#}");
    }
}

/// Submits 4 reads of 4,096 bytes from argv[1] (offsets 0, 4096, ...) through the raw
/// io_submit, with an iocb pointer array whose last two entries lie in an unmapped page:
/// the kernel takes the two it can read. Prints "took N", collects the N completions and
/// exits at once (its memory gone before a late reader could look).
const AIO_TAIL: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/aio_abi.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) return 2;
    aio_context_t ctx = 0;
    if (syscall(SYS_io_setup, 8, &ctx) != 0) { puts("no aio"); return 3; }
    long page = sysconf(_SC_PAGESIZE);
    char *pages = mmap(0, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || munmap(pages + page, page) != 0) return 4;
    static struct iocb cbs[4];
    static char bufs[4][4096];
    struct iocb **list = (struct iocb **)(pages + page - 2 * sizeof(struct iocb *));
    for (int i = 0; i < 2; i++) {
        memset(&cbs[i], 0, sizeof cbs[i]);
        cbs[i].aio_lio_opcode = IOCB_CMD_PREAD;
        cbs[i].aio_fildes = fd;
        cbs[i].aio_buf = (unsigned long)bufs[i];
        cbs[i].aio_nbytes = 4096;
        cbs[i].aio_offset = 4096 * i;
        list[i] = &cbs[i];
    }
    long took = syscall(SYS_io_submit, ctx, 4L, list);
    printf("took %ld\n", took);
    fflush(stdout);
    if (took <= 0) return 5;
    struct io_event ev[4];
    long got = 0;
    while (got < took) {
        long n = syscall(SYS_io_getevents, ctx, 1L, took - got, ev + got, 0);
        if (n <= 0) return 6;
        got += n;
    }
    _exit(0);
}
"#;

#[test]
fn io_submit_whose_pointer_array_runs_into_an_unmapped_page_counts_what_the_kernel_took() {
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(dir.path(), "aio-tail", "c", AIO_TAIL, &["-O1"]) else {
        return;
    };
    let data = dir.path().join("data");
    std::fs::write(&data, vec![5u8; 4 * 4096]).unwrap();
    let data = std::fs::canonicalize(&data).unwrap();
    let (exe, path) = (exe.to_str().unwrap(), data.to_str().unwrap());
    let Some((doc, out)) = trace(&[], &[exe, path]) else {
        return;
    };
    if out.contains("no aio") {
        eprintln!("skipped: this kernel has no native AIO (io_setup refused)");
        return;
    }
    assert_eq!(doc["exit_code"], 0, "{out}");
    assert!(
        out.contains("took 2"),
        "the kernel took the readable prefix: {out}"
    );
    let f = file(&doc, path).unwrap_or_else(|| panic!("{path} not traced: {doc:#}"));
    let reads = &f["calls"]["aio pread"];
    assert_eq!(reads["calls"], 2, "{f:#}");
    assert_eq!(reads["bytes_requested"], 2 * 4096, "{f:#}");
    assert_eq!(f["bytes_read"], 2 * 4096, "{f:#}");
    let unseen = doc["unseen"].to_string();
    assert!(!unseen.contains("libaio"), "{unseen}");
}

/// Makes x32 system calls (numbers with bit 0x40000000) from a 64-bit program: one getpid
/// to see whether the kernel takes them (prints "no x32" and exits 0 where it does not),
/// then three more; opens and reads argv[1] natively.
const X32_CALLS: &str = r#"
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
static long x32(long nr) {
    long ret;
    __asm__ volatile ("syscall" : "=a"(ret) : "a"(nr | 0x40000000L) : "rcx", "r11", "memory");
    return ret;
}
int main(int argc, char **argv) {
    (void)argc;
    if (x32(39) < 0) { puts("no x32"); return 0; }
    for (int i = 0; i < 3; i++) if (x32(39) < 0) return 2;
    char b[100];
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0 || read(fd, b, sizeof b) != sizeof b) return 3;
    close(fd);
    puts("x32 done");
    return 0;
}
"#;

#[test]
fn x32_calls_are_counted_and_said_not_decoded_never_quietly_left_out() {
    if !cfg!(target_arch = "x86_64") {
        eprintln!("skipped: x32 is an x86_64 ABI");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let Some(exe) = build(dir.path(), "x32", "c", X32_CALLS, &["-O1"]) else {
        return;
    };
    let data = dir.path().join("data");
    std::fs::write(&data, vec![3u8; 100]).unwrap();
    let data = std::fs::canonicalize(&data).unwrap();
    let (exe, path) = (exe.to_str().unwrap(), data.to_str().unwrap());
    let Some((doc, out)) = trace(&[], &[exe, path]) else {
        return;
    };
    let unseen = doc["unseen"].to_string();
    if out.contains("no x32") {
        eprintln!(
            "skipped: this kernel refuses x32 calls (CONFIG_X86_X32_ABI off, or syscall.x32=n)"
        );
        // Refused or not, the call was made: it is said.
        assert!(unseen.contains("x32 calls not decoded"), "{unseen}");
        return;
    }
    assert_eq!(doc["exit_code"], 0, "{out}");
    assert!(unseen.contains("4 x32 calls not decoded"), "{unseen}");
    let f = file(&doc, path).unwrap_or_else(|| panic!("{path} not traced: {doc:#}"));
    assert_eq!(
        f["bytes_read"], 100,
        "the native calls are counted as ever: {f:#}"
    );
}
