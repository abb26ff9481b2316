//! The free-space margin holds for writers running at once: each claims its space before
//! it writes, so of two writers that fit only one at a time, one is refused up front (or
//! both are), never both admitted to fill the disk and then fail part-way.

mod common;
use common::*;

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
