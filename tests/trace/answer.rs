//! What `trace` prints at 80 columns: the answer last (the totals, the kernel's counters,
//! the tool's claims checked and whether its writes waited for the disk), the data files
//! first, and the files the program opened only to load itself folded into one line (each
//! in full with --verbose, always in --json). Real dd, cat and fio runs; a run is skipped
//! with the reason where ptrace, fio or O_DIRECT is not there.

use crate::common::*;
use std::path::Path;

/// The rows of an 80×24 terminal the answer must fit in (one is the shell's prompt).
const SCREEN: usize = 23;

/// `ioscope trace [flags] -- args` at 80 columns: the exit code and the text after the
/// traced program's own output (from the `trace` line on), or `None` where ptrace is refused.
fn trace_text(flags: &[&str], args: &[&str]) -> Option<(i32, String)> {
    let out = ioscope()
        .env("COLUMNS", "80")
        .arg("trace")
        .args(flags)
        .arg("--")
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("ptrace refused") {
        eprintln!("skipped: ptrace is not allowed here: {stderr}");
        return None;
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let at = stdout
        .find("trace     ")
        .unwrap_or_else(|| panic!("no trace in the output: {stdout}\n{stderr}"));
    Some((out.status.code().unwrap_or(-1), stdout[at..].to_string()))
}

/// The last screen of `text` (its last [`SCREEN`] lines), its words joined by one space:
/// a sentence wrapped over lines reads as one.
fn last_screen(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(SCREEN)..]
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Lines wider than 80 columns that could have been wrapped (they hold a space: a path or
/// a number alone on its line may be longer).
fn too_wide(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|l| l.chars().count() > 80 && l.trim().contains(' '))
        .collect()
}

/// Whether a line is the heading of a file shown in full (its path alone on the line).
fn heading(text: &str, path: &str) -> bool {
    text.lines().any(|l| l == path)
}

fn dd(dir: &Path, extra: &[&str]) -> Option<(i32, String)> {
    let of = format!("of={}", dir.join("f").display());
    let mut args = vec!["dd", "if=/dev/zero", &of, "bs=64k", "count=64"];
    args.extend_from_slice(extra);
    trace_text(&[], &args)
}

/// A plain dd is the page cache's and says which option makes it the disk's; with
/// conv=fdatasync its figure includes the wait; with oflag=direct it went around the cache.
#[test]
fn dd_is_the_page_caches_only_without_a_sync_or_o_direct() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let Some((code, plain)) = dd(dir.path(), &[]) else {
        return;
    };
    assert_eq!(code, 0, "{plain}");
    let answer = last_screen(&plain);
    assert!(answer.contains("verdict dd's"), "{answer}");
    assert!(answer.contains("never waited for the disk"), "{answer}");
    assert!(answer.contains("the page cache's"), "{answer}");
    assert!(answer.contains("conv=fdatasync (dd)"), "{answer}");
    // dd's figures went to a pipe: that is no file the sentence is about.
    let verdict = &plain[plain.find("verdict").unwrap()..];
    assert!(!verdict.contains("pipe:["), "{verdict}");

    let Some((code, synced)) = dd(dir.path(), &["conv=fdatasync"]) else {
        return;
    };
    assert_eq!(code, 0, "{synced}");
    let answer = last_screen(&synced);
    assert!(
        answer.contains("waited for the disk: its fdatasync"),
        "{answer}"
    );
    assert!(answer.contains("includes it"), "{answer}");
    assert!(!answer.contains("page cache's"), "{answer}");

    let Some((code, direct)) = dd(dir.path(), &["oflag=direct"]) else {
        return;
    };
    if code != 0 {
        eprintln!("skipped: dd oflag=direct failed here (no O_DIRECT on this file system)");
        return;
    }
    let answer = last_screen(&direct);
    assert!(
        answer.contains("did not go through the page cache"),
        "{answer}"
    );
    assert!(answer.contains("O_DIRECT"), "{answer}");
    assert!(!answer.contains("page cache's"), "{answer}");
}

/// dd's trace at 80 columns: its output file in full, /dev/zero, the loader's files and the
/// pipe in one line (each in full with --verbose, and in --json); the claim, its check and
/// the verdict on the last screen; no line wider than 80 that could be wrapped.
#[test]
fn dd_ends_with_its_answer_and_folds_what_it_opened_to_load_itself() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let Some((_, text)) = dd(dir.path(), &[]) else {
        return;
    };
    let out = std::fs::canonicalize(dir.path()).unwrap().join("f");
    assert!(heading(&text, out.to_str().unwrap()), "{text}");
    assert!(!heading(&text, "/dev/zero"), "{text}");
    assert!(
        !text
            .lines()
            .any(|l| l.starts_with("/usr/lib") || l.starts_with("pipe:[")),
        "{text}"
    );
    let loading: Vec<&str> = text.lines().filter(|l| l.starts_with("loading")).collect();
    assert_eq!(loading.len(), 1, "{text}");
    assert!(text.contains("to load itself or its locale"), "{text}");
    let answer = last_screen(&text);
    for part in ["total", "kernel", "dd says", "agrees", "verdict"] {
        assert!(
            answer.contains(part),
            "{part} not on the last screen: {answer}"
        );
    }
    assert_eq!(too_wide(&text), Vec::<&str>::new(), "{text}");

    let of = format!("of={}", out.display());
    let args = ["dd", "if=/dev/zero", &of, "bs=64k", "count=64"];
    let Some((_, verbose)) = trace_text(&["--verbose"], &args) else {
        return;
    };
    assert!(heading(&verbose, "/dev/zero"), "{verbose}");
    assert!(
        !verbose.lines().any(|l| l.starts_with("loading")),
        "{verbose}"
    );
    let Some(run) = trace_run(&[], &args, &[]) else {
        return;
    };
    let paths: Vec<&str> = run.doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert!(paths.contains(&"/dev/zero"), "{paths:?}");
    assert!(paths.iter().any(|p| p.contains("libc.so")), "{paths:?}");
}

/// cat's input file is its data, though it writes only to a pipe: it is shown in full, and
/// no sentence says its writes were the page cache's (it stored nothing).
#[test]
fn cat_shows_its_input_and_says_nothing_of_the_disk() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let input = file_with(dir.path(), "in", &b"line\n".repeat(8192));
    let input = std::fs::canonicalize(input).unwrap();
    let Some((code, text)) = trace_text(&[], &["cat", input.to_str().unwrap()]) else {
        return;
    };
    assert_eq!(code, 0, "{text}");
    assert!(heading(&text, input.to_str().unwrap()), "{text}");
    assert!(!text.lines().any(|l| l.starts_with("pipe:[")), "{text}");
    assert!(!text.contains("verdict"), "{text}");
    // The trace's own seccomp filter, installed before cat ran, is not cat's.
    assert!(!text.contains("filter of its own"), "{text}");
    assert!(last_screen(&text).contains("kernel"), "{text}");
    assert_eq!(too_wide(&text), Vec::<&str>::new(), "{text}");
}

/// fio's trace ends with its claim checked and the verdict; without end_fsync its figure
/// is the page cache's (and --end_fsync=1 is named), with it the fsync is told.
#[test]
fn fio_ends_with_its_claims_and_says_whose_figure_it_is() {
    if std::process::Command::new("fio")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: fio is not installed (.ci/run installs it)");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let name = format!("--filename={}", dir.path().join("w").display());
    for end_fsync in ["0", "1"] {
        let flag = format!("--end_fsync={end_fsync}");
        let args = [
            "fio",
            "--name=job",
            &name,
            "--rw=write",
            "--bs=64k",
            "--size=4M",
            "--ioengine=psync",
            &flag,
        ];
        let Some((code, text)) = trace_text(&[], &args) else {
            return;
        };
        assert_eq!(code, 0, "{text}");
        let answer = last_screen(&text);
        for part in ["fio says", "WRITE", "verdict fio's"] {
            assert!(
                answer.contains(part),
                "{part} not on the last screen: {answer}"
            );
        }
        if end_fsync == "0" {
            assert!(answer.contains("never waited for the disk"), "{answer}");
            assert!(answer.contains("--end_fsync=1 (fio)"), "{answer}");
        } else {
            assert!(answer.contains("its fsync on"), "{answer}");
            assert!(!answer.contains("no fsync"), "{answer}");
        }
        assert!(!text.lines().any(|l| l.starts_with("/usr/lib")), "{text}");
        assert_eq!(too_wide(&text), Vec::<&str>::new(), "{text}");
    }
}
