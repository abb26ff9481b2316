//! The free-space margin holds for writers running at once: each claims its space before
//! it writes, so of two writers that fit only one at a time, one is refused up front (or
//! both are), never both admitted to fill the disk and then fail part-way.

use crate::common::*;

/// Runs `first` and `second` (ioscope argument strings, `$B` the binary) at once on a fresh
/// 20 MiB tmpfs, `rounds` times; returns per round the two exit codes, their stderr and
/// the directory's listing afterwards, or `None` where no tmpfs can be mounted here.
fn at_once(first: &str, second: &str, rounds: usize) -> Option<Vec<(i32, i32, String, String)>> {
    at_once_in("20m", "", "", first, second, rounds)
}

/// [`at_once`] on a tmpfs of `size`, after the shell commands `setup` (e.g. `mkdir a b`),
/// with `pause` (e.g. `sleep 0.15`) between the two starts; the listing is recursive (files
/// in subdirectories too) and includes what this user's registries of claims hold for the
/// tmpfs.
fn at_once_in(
    size: &str,
    setup: &str,
    pause: &str,
    first: &str,
    second: &str,
    rounds: usize,
) -> Option<Vec<(i32, i32, String, String)>> {
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let mut results = Vec::new();
    for _ in 0..rounds {
        let dir = tempfile::tempdir().unwrap();
        let script = format!(
            r#"cd "$1" || exit 99
B="$2"
{setup}
$B {first} >/dev/null 2>e1 &
p1=$!
{pause}
$B {second} >/dev/null 2>e2 &
p2=$!
wait $p1; r1=$?
wait $p2; r2=$?
echo "$r1"
echo "$r2"
tr '\n' ' ' <e1; echo
tr '\n' ' ' <e2; echo
dev=$(printf %x "$(stat -c %d .)")
{{ find . -mindepth 1 -type f ! -name e1 ! -name e2 | sed 's|^\./||'
  for r in "${{XDG_RUNTIME_DIR:-/nonexistent}}/ioscope-claims/$dev" "/tmp/.ioscope-claims-$(id -u)/$dev"; do
    ls -A "$r" 2>/dev/null | sed 's|^|registry:|'
  done
  ls -A | grep '^\.ioscope' ; }} | tr '\n' ' '; echo"#
        );
        let mut cmd = in_small_tmpfs(size, dir.path(), std::path::Path::new("/bin/sh"))?;
        let out = cmd
            .args(["-c", &script, "sh"])
            .arg(dir.path())
            .arg(&bin)
            .output()
            .expect("run the two writers");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            5,
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let code = |s: &str| s.trim().parse::<i32>().expect("an exit code");
        results.push((
            code(lines[0]),
            code(lines[1]),
            format!("{} | {}", lines[2], lines[3]),
            lines[4].to_string(),
        ));
    }
    Some(results)
}

fn assert_one_or_none_admitted(results: &[(i32, i32, String, String)], outputs: [&str; 2]) {
    for (r1, r2, errors, left) in results {
        assert!(
            matches!((r1, r2), (0, 2) | (2, 0) | (2, 2)),
            "one succeeds and the other is refused up front (exit 2), or both are refused; got {r1} and {r2}: {errors}"
        );
        assert!(
            errors.contains("not enough free space"),
            "the refusal gives the numbers: {errors}"
        );
        let mut kept: Vec<&str> = left.split_whitespace().collect();
        kept.sort_unstable();
        let expected: Vec<&str> = [(r1, outputs[0]), (r2, outputs[1])]
            .into_iter()
            .filter(|(code, _)| **code == 0)
            .map(|(_, name)| name)
            .collect();
        assert_eq!(
            kept, expected,
            "only the finished output stays: no claim, no scratch"
        );
    }
}

#[test]
fn two_writers_that_fit_only_one_at_a_time_are_never_both_admitted() {
    let w = "run a1 -w 1m 12 --min-free 5m";
    let v = "run a2 -w 1m 12 --min-free 5m";
    let Some(results) = at_once(w, v, 8) else {
        return;
    };
    assert_one_or_none_admitted(&results, ["a1", "a2"]);
}

#[test]
fn a_sweep_and_a_run_writing_at_once_keep_the_margin_too() {
    let sweep =
        "sweep s --op write --size 12m --block-sizes 1m --repeat 2 --warmup 0 --min-free 5m";
    let run = "run a -w 1m 12 --min-free 5m";
    let Some(results) = at_once(sweep, run, 6) else {
        return;
    };
    assert_one_or_none_admitted(&results, ["s", "a"]);
}

#[test]
fn writers_in_two_directories_of_one_file_system_are_never_both_admitted() {
    // Each fits alone (8 MB of 14 MiB, 1 MiB kept), not both: claims are seen per file
    // system, not only per directory.
    let w = "run a/f -w 16 500k --min-free 1m";
    let v = "run b/f -w 16 500k --min-free 1m";
    for pause in ["", "sleep 0.15"] {
        let Some(results) = at_once_in("14m", "mkdir a b", pause, w, v, 4) else {
            return;
        };
        assert_one_or_none_admitted(&results, ["a/f", "b/f"]);
    }
}

/// A process that is no ioscope, alive while the test runs: its PID stands for the PID of a
/// killed writer that the system gave to another program.
struct Sleeper(std::process::Child);

impl Sleeper {
    fn start() -> Self {
        Self(
            std::process::Command::new("sleep")
                .arg("60")
                .spawn()
                .expect("start sleep"),
        )
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// Its start time, field 22 of /proc/PID/stat.
    fn start_time(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 1..];
        after.split_whitespace().nth(19).unwrap().parse().unwrap()
    }
}

impl Drop for Sleeper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// This user's registry of claims for the file system of `dir` under the private
/// `$XDG_RUNTIME_DIR` `runtime` (created, mode 0700).
fn registry_for(runtime: &std::path::Path, dir: &std::path::Path) -> std::path::PathBuf {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    let dev = std::fs::metadata(dir).unwrap().dev();
    let registry = runtime.join("ioscope-claims").join(format!("{dev:x}"));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .recursive(true)
        .create(&registry)
        .unwrap();
    registry
}

/// A claim file of `bytes` (sparse) named `name` in `dir`.
fn claim_file(dir: &std::path::Path, name: &str, bytes: u64) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .set_len(bytes)
        .unwrap();
    path
}

/// `run OUT -w 64k 4` with `runtime` as `$XDG_RUNTIME_DIR`.
fn write_with_registry(runtime: &std::path::Path, out: &std::path::Path) -> std::process::Output {
    ioscope()
        .env("XDG_RUNTIME_DIR", runtime)
        .args(["run", out.to_str().unwrap(), "-w", "64k", "4"])
        .output()
        .unwrap()
}

const HUGE: u64 = 1 << 60;

/// A fresh directory on /dev/shm where that is writable and another file system than
/// /tmp's (where the other tests of this binary write), else `None`.
fn tempdir_apart_from_tmp() -> Option<tempfile::TempDir> {
    use std::os::unix::fs::MetadataExt;
    let shm = std::path::Path::new("/dev/shm");
    let dev = |p: &std::path::Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    let apart = dev(shm).is_some_and(|d| Some(d) != dev(&std::env::temp_dir()));
    apart.then(|| tempfile::tempdir_in(shm).ok()).flatten()
}

#[test]
fn a_registry_entry_whose_pid_now_belongs_to_another_process_is_removed_not_trusted() {
    let runtime = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let sleeper = Sleeper::start();
    let (pid, wrong) = (sleeper.pid(), sleeper.start_time() + 7);
    let registry = registry_for(runtime.path(), dir.path());
    // Its claim file in another directory of the file system, and an entry of an older
    // ioscope (no start time) whose PID is no ioscope now either.
    let stale = claim_file(
        &elsewhere,
        &format!(".ioscope-reserve-{pid}-0.{wrong}"),
        1 << 30,
    );
    let old = claim_file(&elsewhere, &format!(".ioscope-reserve-{pid}-1"), 1 << 30);
    let entries = [
        (format!("{pid}-0.{wrong}-{HUGE}"), &stale),
        (format!("{pid}-1-{HUGE}"), &old),
    ];
    for (entry, target) in &entries {
        std::os::unix::fs::symlink(target, registry.join(entry)).unwrap();
    }
    // Files of the user's that are no claim (their names say so) stay whatever happens.
    let notes = file_with(&elsewhere, ".ioscope-reserve-notes", b"mine");
    let other = file_with(
        &elsewhere,
        &format!(".ioscope-reserve-{pid}-2.txt"),
        b"mine",
    );
    let out = write_with_registry(runtime.path(), &dir.path().join("f"));
    assert!(
        out.status.success(),
        "a claim whose process is gone refuses nothing: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (entry, target) in &entries {
        assert!(
            std::fs::symlink_metadata(registry.join(entry)).is_err(),
            "the stale entry {entry} is removed"
        );
        assert!(!target.exists(), "its claim file is removed: {target:?}");
    }
    assert!(
        notes.exists() && other.exists(),
        "files that are no claim stay"
    );
    assert_eq!(std::fs::read_dir(&registry).unwrap().count(), 0);
}

#[test]
fn a_claim_file_beside_the_output_whose_pid_was_reused_is_removed_not_trusted() {
    let runtime = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sleeper = Sleeper::start();
    let (pid, wrong) = (sleeper.pid(), sleeper.start_time() + 1);
    let stale = claim_file(
        dir.path(),
        &format!(".ioscope-reserve-{pid}-0.{wrong}"),
        1 << 40,
    );
    let old = claim_file(dir.path(), &format!(".ioscope-reserve-{pid}-3"), 1 << 40);
    let out = write_with_registry(runtime.path(), &dir.path().join("f"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stale.exists() && !old.exists(), "stale claims are removed");
}

#[test]
fn a_claim_of_a_process_still_running_is_still_counted() {
    // The same entry with the process's true start time: a live writer's claim, which
    // refuses a write that does not fit beside it, and is left alone.
    //
    // It counts every claim on the file system, from every registry of the user's
    // (`/tmp/.ioscope-claims-UID` too), so other tests of this binary writing on /tmp at
    // the same moment would be counted beside it: it writes on /dev/shm, where none do.
    let Some(dir) = tempdir_apart_from_tmp() else {
        eprintln!("skipped: no writable /dev/shm on a file system apart from /tmp's");
        return;
    };
    let runtime = tempfile::tempdir().unwrap();
    let sleeper = Sleeper::start();
    let (pid, start) = (sleeper.pid(), sleeper.start_time());
    let registry = registry_for(runtime.path(), dir.path());
    let entry = registry.join(format!("{pid}-0.{start}-{HUGE}"));
    let target = dir.path().join(format!(".ioscope-reserve-{pid}-0.{start}"));
    std::os::unix::fs::symlink(&target, &entry).unwrap();
    let out = write_with_registry(runtime.path(), &dir.path().join("f"));
    assert_eq!(out.status.code(), Some(2));
    let err = one_line_stderr(&out);
    assert!(
        err.contains("not enough free space")
            && err.contains("by 1 other ioscope writer running now"),
        "{err}"
    );
    assert!(
        std::fs::symlink_metadata(&entry).is_ok(),
        "a live claim stays"
    );
    assert!(!dir.path().join("f").exists());
}

#[test]
fn a_study_short_of_space_for_its_next_file_does_not_blame_other_writers() {
    // 4 MiB scratch on 7 MiB with 1 MiB kept: the write sweep's own 4 MiB file does not
    // fit. The study's own (written) scratch file is no other writer's claim.
    let dir = tempfile::tempdir().unwrap();
    let report = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let Some(mut cmd) = in_small_tmpfs("7m", dir.path(), &bin) else {
        return;
    };
    let out = cmd
        .args([
            "study",
            dir.path().to_str().unwrap(),
            "--level",
            "quick",
            "--only",
            "write-sweep",
            "--size",
            "4m",
            "--block-sizes",
            "64k,1m",
            "--min-free",
            "1m",
            "-o",
            report.path().to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|_| {
        panic!(
            "one JSON document: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let text = doc.to_string();
    assert!(text.contains("not enough free space"), "{text:.3000}");
    assert!(
        !text.contains("other ioscope writer"),
        "the study's own claim is not another writer's: {text:.3000}"
    );
}
