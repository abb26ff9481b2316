//! `ioscope mpi` under `mpirun` (the `mpi` feature): 2 and 4 ranks in every layout, every
//! read verified, aggregates that add up, the reordered cold read proven cold, and a failing
//! rank that stops every rank, named. Skipped, with the reason, when `mpirun` is missing.
#![cfg(feature = "mpi")]

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The JSON rank 0 printed, after checking that the job succeeded.
fn document(out: &Output, what: &str) -> Value {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// All of stderr, and its `error: ` lines.
fn error_lines(out: &Output) -> (String, Vec<String>) {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let errors = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .map(str::to_string)
        .collect();
    (stderr, errors)
}

fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .expect("list the directory")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// What is left in `dir` once the process a rank started to remove io500's directory (it
/// outlives the rank, which mpirun SIGKILLs a second after its SIGTERM) has had up to 20 s.
fn leftovers_after_janitor(dir: &Path) -> Vec<String> {
    let start = Instant::now();
    loop {
        let left = leftovers(dir);
        if left.is_empty() || start.elapsed() > Duration::from_secs(20) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn every_rank_verifies_what_the_next_rank_wrote_and_the_aggregate_adds_up() {
    for np in [2usize, 4] {
        for layout in ["file-per-rank", "shared-strided", "shared-contiguous"] {
            let dir = tempfile::tempdir().expect("temp dir");
            let d = dir.path().to_str().expect("UTF-8 temp dir");
            let args = [
                "both",
                d,
                "--layout",
                layout,
                "--size",
                "2m",
                "--block-size",
                "256k",
                "--repeat",
                "2",
                "--min-free",
                "0",
                "--json",
            ];
            let what = format!("-np {np} {layout}");
            let Some(out) = mpirun(np, &args, &[]) else {
                return;
            };
            let v = document(&out, &what);
            assert_eq!(v["schema"], "ioscope/mpi/v2");
            assert_eq!(v["ranks"], np, "{what}");
            assert_eq!(v["launched_by_mpirun"], true, "{what}");
            let info = v["rank_info"].as_array().expect("rank_info");
            assert_eq!(info.len(), np, "{what}");
            for (r, i) in info.iter().enumerate() {
                assert_eq!(i["rank"], r);
                assert!(!i["host"].as_str().unwrap_or("").is_empty(), "{what}");
                assert!(i["environment"]["kernel"].is_string(), "{what}");
            }
            let phases = v["results"].as_array().expect("results");
            assert_eq!(phases.len(), 2, "{what}: write and read");
            for phase in phases {
                let repeats = phase["repeats"].as_array().expect("repeats");
                assert_eq!(repeats.len(), 2, "{what}");
                for repeat in repeats {
                    let ranks = repeat["ranks"].as_array().expect("ranks");
                    assert_eq!(ranks.len(), np, "{what}");
                    let sum: u64 = ranks
                        .iter()
                        .map(|r| r["sample"]["bytes"].as_u64().unwrap())
                        .sum();
                    assert_eq!(repeat["aggregate"]["total_bytes"], sum, "{what}");
                    assert_eq!(sum, np as u64 * (2 << 20), "{what}");
                    let slowest = ranks
                        .iter()
                        .map(|r| r["sample"]["elapsed"]["seconds"].as_f64().unwrap())
                        .fold(0.0, f64::max);
                    assert_eq!(repeat["aggregate"]["slowest_seconds"], slowest, "{what}");
                    for (r, run) in ranks.iter().enumerate() {
                        assert_eq!(run["rank"], r, "{what}");
                        if phase["op"] == "read" {
                            assert_eq!(run["segment_of"], (r + 1) % np, "{what}: reordered");
                            assert_eq!(run["xor_hex"], run["expected_xor_hex"], "{what}");
                        } else {
                            assert_eq!(run["segment_of"], r, "{what}");
                            assert!(run["sample"]["fsync_seconds"].is_f64(), "{what}");
                        }
                    }
                }
            }
            assert!(
                leftovers(dir.path()).is_empty(),
                "{what}: scratch files removed"
            );
        }
    }
}

#[test]
fn the_reordered_cold_read_found_none_of_its_range_in_the_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    // 4 strided ranks on a 16 MiB-per-rank file: the page cache's large folios straddle
    // neighbouring ranks' blocks, which evicting only one's own blocks left resident.
    for (np, layout) in [
        (2, "file-per-rank"),
        (2, "shared-strided"),
        (4, "shared-strided"),
    ] {
        let args = [
            "both",
            d,
            "--layout",
            layout,
            "--size",
            "16m",
            "--cache",
            "cold",
            "--repeat",
            "1",
            "--min-free",
            "0",
            "--json",
        ];
        let Some(out) = mpirun(np, &args, &[]) else {
            return;
        };
        let v = document(&out, layout);
        let read = v["results"]
            .as_array()
            .expect("results")
            .iter()
            .find(|p| p["op"] == "read")
            .expect("a read phase")
            .clone();
        for run in read["repeats"][0]["ranks"].as_array().expect("ranks") {
            let cache = &run["sample"]["cache"];
            assert_eq!(cache["asked"], "cold");
            let before = &cache["residency_before"];
            assert_eq!(
                before["resident_pages"], 0,
                "-np {np} {layout}: rank {} read from a cache: {before}",
                run["rank"]
            );
            assert_eq!(before["total_pages"], (16 << 20) / 4096);
            assert_ne!(
                run["segment_of"], run["rank"],
                "read by another rank than the writer"
            );
        }
    }
}

#[test]
fn a_rank_whose_checksum_fails_stops_every_rank_and_is_named() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    let args = [
        "both",
        d,
        "--size",
        "1m",
        "--repeat",
        "2",
        "--min-free",
        "0",
    ];
    let Some(out) = mpirun(4, &args, &[("IOSCOPE_MPI_FAIL_RANK", "2")]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "a failed check exits 1");
    let (stderr, errors) = error_lines(&out);
    assert_eq!(
        errors.len(),
        1,
        "one line for the one failed rank: {stderr}"
    );
    assert!(errors[0].starts_with("error: rank 2 on host "), "{stderr}");
    assert!(errors[0].contains("checksum mismatch"), "{stderr}");
    assert!(errors[0].contains("written by rank 3"), "{stderr}");
    // The writes that succeeded stay in the report, the failed read named under them.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("FAILED: read of repeat 1"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("│ write")), "{stdout}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "scratch files removed on error"
    );
}

#[test]
fn a_rank_without_its_directory_stops_every_rank_with_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    let args = [
        "write",
        d,
        "--size",
        "1m",
        "--layout",
        "shared-contiguous",
        "--min-free",
        "0",
    ];
    let env = [
        ("IOSCOPE_MPI_FAIL_RANK", "1"),
        ("IOSCOPE_MPI_FAIL_STEP", "dir"),
    ];
    let Some(out) = mpirun(2, &args, &env) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2), "an input error exits 2");
    let (stderr, errors) = error_lines(&out);
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(errors[0].starts_with("error: rank 1 on host "), "{stderr}");
    assert!(errors[0].contains("No such file or directory"), "{stderr}");
    assert!(
        leftovers(dir.path()).is_empty(),
        "rank 0's shared file removed"
    );
}

#[test]
fn a_dir_that_is_a_file_fails_on_every_rank_one_line_each() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = file_with(dir.path(), "plain", b"x");
    let Some(out) = mpirun(2, &["write", file.to_str().unwrap(), "--size", "1m"], &[]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for rank in 0..2 {
        assert!(
            stderr.contains(&format!("error: rank {rank} on host ")),
            "rank {rank} named: {stderr}"
        );
    }
    assert!(stderr.contains("not a directory"), "{stderr}");
}

#[test]
fn without_mpirun_it_runs_as_one_rank_and_says_so_and_report_renders_it() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = ioscope()
        .args(["mpi", "both", dir.path().to_str().unwrap(), "--size", "1m"])
        .args(["--repeat", "1", "--min-free", "0", "--json"])
        .output()
        .expect("run ioscope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not started by mpirun: running as a single rank"),
        "{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (v["ranks"].as_u64(), v["launched_by_mpirun"].as_bool()),
        (Some(1), Some(false))
    );
    let text = report_text(&v);
    assert!(text.contains("mpi both in"), "{text}");
    assert!(text.contains("verified"), "{text}");
    assert!(text.contains("not started by mpirun"), "{text}");
    // Every rank's calls carry their latency distribution, and the rank table shows it.
    for phase in v["results"].as_array().expect("results") {
        let l = &phase["repeats"][0]["ranks"][0]["sample"]["latency_ns"];
        assert_eq!(l["count"].as_u64(), Some(1), "one 1 MiB call: {l}");
        assert!(l["p50"].as_u64().unwrap_or(0) > 0, "{l}");
    }
    assert!(text.contains("calls p50 / p99 / p99.9 / max"), "{text}");
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("│ read")).collect();
    assert!(
        rows.iter()
            .any(|l| l.contains(" µs /") || l.contains(" ms /")),
        "{rows:?}"
    );
}

/// Whom a test signals, and when.
enum Victim {
    /// The rank of this number, once it has written `after` bytes and read `after_read`.
    Rank {
        rank: usize,
        after: u64,
        after_read: u64,
    },
    /// mpirun itself (Ctrl-C), once every rank has written `after` bytes.
    Mpirun { after: u64 },
    /// Every rank at once (as a batch system's cancel does), once each has written `after`.
    EveryRank { after: u64 },
    /// The rank of this number, once `ready(dir)` holds (a phase's files are there).
    RankOnce {
        rank: usize,
        dir: std::path::PathBuf,
        ready: Moment,
    },
    /// mpirun itself, once `ready(dir)` holds.
    MpirunOnce {
        dir: std::path::PathBuf,
        ready: Moment,
    },
}

/// The ranks mpirun started, by rank: its children whose environment names their rank.
fn ranks_of(mpirun: u32) -> Vec<(usize, u32)> {
    let mut ranks = Vec::new();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{mpirun}/task")) else {
        return ranks;
    };
    for task in tasks.flatten() {
        let children = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        for pid in children
            .split_whitespace()
            .filter_map(|p| p.parse::<u32>().ok())
        {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let rank = environ
                .split(|&b| b == 0)
                .filter_map(|v| v.strip_prefix(b"OMPI_COMM_WORLD_RANK="))
                .find_map(|r| std::str::from_utf8(r).ok()?.parse::<usize>().ok());
            if let Some(rank) = rank {
                ranks.push((rank, pid));
            }
        }
    }
    ranks.sort_unstable();
    ranks
}

/// Bytes a process has written and read through system calls (`wchar`, `rchar`).
fn io_of(pid: u32) -> (u64, u64) {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap_or_default();
    let field = |name: &str| {
        io.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("wchar:"), field("rchar:"))
}

/// Runs `mpirun -np N ioscope mpi ARGS`, signals `victim` with `signal` once its moment
/// has come, and returns what mpirun left; `None` (and a printed reason) without mpirun.
fn mpirun_signalled(
    np: usize,
    args: &[&str],
    env: &[(&str, &str)],
    victim: &Victim,
    signal: i32,
) -> Option<Output> {
    let mut child = mpirun_command(np, args, env)?
        .spawn()
        .expect("start mpirun");
    let drained = Drained::of(&mut child);
    let start = Instant::now();
    let mut signalled = false;
    while child.try_wait().expect("wait for mpirun").is_none() {
        if start.elapsed() > MPI_DEADLINE {
            let _ = child.kill();
            panic!("mpirun -np {np} ioscope mpi {args:?} hung for {MPI_DEADLINE:?}");
        }
        if !signalled {
            let ranks = ranks_of(child.id());
            let written = |after: u64| {
                ranks.len() == np && ranks.iter().all(|&(_, pid)| io_of(pid).0 >= after)
            };
            let targets: Vec<u32> = match *victim {
                Victim::Rank {
                    rank,
                    after,
                    after_read,
                } => ranks
                    .iter()
                    .filter(|&&(r, pid)| {
                        let (w, r_bytes) = io_of(pid);
                        r == rank && w >= after && r_bytes >= after_read
                    })
                    .map(|&(_, pid)| pid)
                    .collect(),
                Victim::Mpirun { after } if written(after) => vec![child.id()],
                Victim::EveryRank { after } if written(after) => {
                    ranks.iter().map(|&(_, pid)| pid).collect()
                }
                Victim::RankOnce {
                    rank,
                    ref dir,
                    ready,
                } if ranks.len() == np && ready(dir) => ranks
                    .iter()
                    .filter(|&&(r, _)| r == rank)
                    .map(|&(_, pid)| pid)
                    .collect(),
                Victim::MpirunOnce { ref dir, ready } if ranks.len() == np && ready(dir) => {
                    vec![child.id()]
                }
                _ => Vec::new(),
            };
            for &pid in &targets {
                // SAFETY: kill() with a pid this test started (mpirun or its child).
                unsafe { libc::kill(pid as i32, signal) };
            }
            signalled = !targets.is_empty();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = drained.output(child.wait().expect("wait for mpirun"));
    assert!(
        signalled,
        "the job ended before its moment came: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(out)
}

/// Many repeats of 64 MiB per rank: far longer than the moment the test signals.
fn long_run(phases: &'static str, d: &str, layout: &'static str) -> Vec<String> {
    [
        phases,
        d,
        "--layout",
        layout,
        "--size",
        "64m",
        "--repeat",
        "1000",
        "--min-free",
        "0",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn a_rank_killed_with_sigkill_leaves_no_scratch_file_of_any_rank() {
    const MIB: u64 = 1 << 20;
    // (layout, phases, the victim, its moment, as if the ranks ran on several hosts)
    let cases = [
        ("file-per-rank", "write", 1, (64 * MIB, 0), false),
        ("shared-strided", "both", 0, (64 * MIB, 64 * MIB), false),
        ("file-per-rank", "read", 2, (64 * MIB, 32 * MIB), false),
        // Across hosts the names stay while open: the survivors remove them.
        ("file-per-rank", "both", 1, (64 * MIB, 0), true),
        ("shared-contiguous", "both", 0, (64 * MIB, 16 * MIB), true),
    ];
    for (layout, phases, rank, (after, after_read), apart) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().expect("UTF-8 temp dir");
        let args = long_run(phases, d, layout);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: &[(&str, &str)] = if apart {
            &[("IOSCOPE_MPI_HOSTS_APART", "1")]
        } else {
            &[]
        };
        let victim = Victim::Rank {
            rank,
            after,
            after_read,
        };
        let what = format!("{layout} {phases}, rank {rank} killed, hosts apart: {apart}");
        let Some(out) = mpirun_signalled(3, &args, env, &victim, libc::SIGKILL) else {
            return;
        };
        assert!(!out.status.success(), "{what}");
        assert!(
            leftovers(dir.path()).is_empty(),
            "{what}: left {:?}; {}",
            leftovers(dir.path()),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn ctrl_c_to_mpirun_or_every_rank_stops_the_job_and_removes_every_scratch_file() {
    const MIB: u64 = 1 << 20;
    for (layout, apart) in [("file-per-rank", false), ("shared-strided", true)] {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().expect("UTF-8 temp dir");
        let args = long_run("both", d, layout);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let env: &[(&str, &str)] = if apart {
            &[("IOSCOPE_MPI_HOSTS_APART", "1")]
        } else {
            &[]
        };
        let Some(out) = mpirun_signalled(
            3,
            &args,
            env,
            &Victim::Mpirun { after: 64 * MIB },
            libc::SIGINT,
        ) else {
            return;
        };
        let (stderr, _) = error_lines(&out);
        // mpirun itself exits 1 after its own Ctrl-C (OpenMPI's choice); the ranks say it.
        assert!(!out.status.success(), "{stderr}");
        assert!(stderr.contains("interrupted"), "{layout}: {stderr}");
        assert!(leftovers(dir.path()).is_empty(), "{layout}: {stderr}");

        let Some(out) = mpirun_signalled(
            3,
            &args,
            env,
            &Victim::EveryRank { after: 64 * MIB },
            libc::SIGINT,
        ) else {
            return;
        };
        let (stderr, _) = error_lines(&out);
        assert_eq!(out.status.code(), Some(130), "{layout}: {stderr}");
        assert!(out.stdout.is_empty(), "no result printed");
        assert!(leftovers(dir.path()).is_empty(), "{layout}: {stderr}");
    }
}

#[test]
fn a_directory_named_with_control_characters_is_printed_escaped() {
    let dir = tempfile::tempdir().expect("temp dir");
    let evil = dir.path().join("ev\u{1b}[31mil\u{7}\nforged");
    std::fs::create_dir(&evil).expect("make the directory");
    let out = ioscope()
        .args(["mpi", "both"])
        .arg(&evil)
        .args(["--size", "1m", "--repeat", "1", "--min-free", "0"])
        .output()
        .expect("run ioscope");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("UTF-8");
    assert!(!text.contains(['\u{1b}', '\u{7}']), "{text}");
    assert!(text.contains("ev\\u{1b}[31mil\\u{7}\\nforged"), "{text}");
    // An error names it the same way, on one line.
    let gone = evil.join("gone");
    let out = ioscope()
        .args(["mpi", "write"])
        .arg(&gone)
        .args(["--size", "1m"])
        .output()
        .expect("run ioscope");
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");
    assert!(!stderr.contains(['\u{1b}', '\u{7}']), "{stderr}");
}

/// A job whose document is larger than a pipe holds (64 KiB: 4 ranks, 5 repeats is ~125
/// KiB) is read whole: the test's runner drains mpirun's output while it waits (before, a
/// document near 64 KiB blocked mpirun on the full pipe and read as a hang in CI).
#[test]
fn a_document_larger_than_a_pipe_holds_is_read_whole() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    let args = [
        "both",
        d,
        "--size",
        "1m",
        "--block-size",
        "256k",
        "--repeat",
        "5",
        "--min-free",
        "0",
        "--json",
    ];
    let Some(out) = mpirun(4, &args, &[]) else {
        return;
    };
    assert!(out.stdout.len() > 64 << 10, "{} bytes", out.stdout.len());
    let v = document(&out, "-np 4, 5 repeats");
    assert_eq!(v["ranks"], 4);
}

/// Longer than a job of mismatched ranks takes to refuse (about a second): past it, the
/// ranks hang (as they did before they compared their options).
const REFUSAL_DEADLINE: Duration = Duration::from_secs(60);

/// `mpirun --oversubscribe -np N1 ioscope mpi ARGS1 : -np N2 ioscope mpi ARGS2 ...` (MPMD:
/// each group of ranks given its own arguments); `None` (and a printed reason) without
/// mpirun. Panics when the job outlives [`REFUSAL_DEADLINE`].
fn mpmd(apps: &[(usize, Vec<String>)]) -> Option<Output> {
    if Command::new("mpirun").arg("--version").output().is_err() {
        eprintln!("skipped: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let mut cmd = Command::new("mpirun");
    cmd.arg("--oversubscribe");
    if is_root() {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    for (i, (np, args)) in apps.iter().enumerate() {
        if i > 0 {
            cmd.arg(":");
        }
        cmd.args(["-np", &np.to_string()])
            .arg(assert_cmd::cargo::cargo_bin("ioscope"))
            .arg("mpi")
            .args(args);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("start mpirun");
    let drained = Drained::of(&mut child);
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for mpirun") {
            break status;
        }
        if start.elapsed() > REFUSAL_DEADLINE {
            let _ = child.kill();
            panic!("mpirun with {apps:?} hung for {REFUSAL_DEADLINE:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Some(drained.output(status))
}

fn words(line: &str) -> Vec<String> {
    line.split_whitespace().map(str::to_string).collect()
}

/// Runs ranks given different arguments (rank 0's group first) and checks that every rank
/// stops with 2 at once, rank 0 printing one line that holds `expected`, nothing written.
fn refused(apps: &[(usize, &str)], expected: &str) {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    let apps: Vec<(usize, Vec<String>)> = apps
        .iter()
        .map(|&(np, args)| (np, words(&args.replace("DIR", d))))
        .collect();
    let Some(out) = mpmd(&apps) else {
        return;
    };
    let (stderr, errors) = error_lines(&out);
    assert_eq!(out.status.code(), Some(2), "{apps:?}: {stderr}");
    assert_eq!(errors.len(), 1, "{apps:?}: one line: {stderr}");
    assert!(errors[0].contains(expected), "{apps:?}: {stderr}");
    for misleading in ["did it shrink", "RankInfo", "decode"] {
        assert!(!stderr.contains(misleading), "{apps:?}: {stderr}");
    }
    assert!(out.stdout.is_empty(), "{apps:?}: no result");
    assert!(
        leftovers(dir.path()).is_empty(),
        "{apps:?}: {:?}",
        leftovers(dir.path())
    );
}

const SMALL: &str = "--size 1m --min-free 0";

#[test]
fn ranks_given_another_repeat_command_or_keep_stop_at_once_with_one_line() {
    // Each of these hung every rank before the ranks compared their options.
    refused(
        &[
            (1, &format!("write DIR {SMALL} --repeat 2")),
            (1, &format!("write DIR {SMALL} --repeat 3")),
        ],
        "--repeat: 2 on rank 0, 3 on rank 1",
    );
    refused(
        &[
            (1, &format!("write DIR {SMALL}")),
            (1, &format!("read DIR {SMALL}")),
        ],
        "the command: mpi write on rank 0, mpi read on rank 1",
    );
    refused(
        &[
            (2, &format!("both DIR {SMALL}")),
            (1, &format!("both DIR {SMALL} --keep")),
        ],
        "--keep: not given on ranks 0-1, given on rank 2",
    );
}

#[test]
fn ranks_given_other_values_do_not_run_rank_0s_silently() {
    // These ran and reported rank 0's values before.
    refused(
        &[
            (1, &format!("both DIR {SMALL} --block-size 256k")),
            (1, &format!("both DIR {SMALL} --block-size 4k")),
        ],
        "--block-size: 256 KiB on rank 0, 4 KiB on rank 1",
    );
    refused(
        &[
            (1, &format!("both DIR {SMALL} --cache cold")),
            (1, &format!("both DIR {SMALL} --cache warm")),
        ],
        "--cache: cold on rank 0, warm on rank 1",
    );
    refused(
        &[
            (1, &format!("both DIR {SMALL} --seed 1")),
            (1, &format!("both DIR {SMALL} --seed 2")),
        ],
        "--seed: 1 on rank 0, 2 on rank 1",
    );
    let io500 = "io500 DIR --size 1m --min-free 0";
    refused(
        &[
            (1, &format!("{io500} --files 10")),
            (1, &format!("{io500} --files 20")),
        ],
        "--files: 10 on rank 0, 20 on rank 1",
    );
    refused(
        &[
            (1, &format!("{io500} --stonewall 1s")),
            (1, &format!("{io500} --stonewall 2s")),
        ],
        "--stonewall: 1 s on rank 0, 2 s on rank 1",
    );
}

#[test]
fn ranks_given_another_layout_size_dir_or_preset_are_refused_the_same_way() {
    // Beyond the list: other options, another preset, another DIR for one shared file, and
    // a rank whose own arguments are wrong.
    refused(
        &[
            (1, &format!("both DIR {SMALL}")),
            (1, &format!("both DIR {SMALL} --layout shared-strided")),
        ],
        "--layout: file-per-rank on rank 0, shared-strided on rank 1",
    );
    refused(
        &[
            (1, &format!("write DIR {SMALL}")),
            (2, "write DIR --size 2m --min-free 0"),
        ],
        "--size: 1 MiB on rank 0, 2 MiB on ranks 1-2",
    );
    refused(
        &[
            (1, &format!("write DIR {SMALL}")),
            (1, "io500 DIR --size 1m --min-free 0"),
        ],
        "the command: mpi write on rank 0, mpi io500 on rank 1",
    );
    refused(
        &[
            (1, &format!("both DIR {SMALL} --layout shared-contiguous")),
            (
                1,
                &format!("both DIR/other {SMALL} --layout shared-contiguous"),
            ),
        ],
        "/other on rank 1",
    );
    refused(
        &[
            (1, &format!("write DIR {SMALL}")),
            (1, &format!("write DIR {SMALL} --repeat 0")),
        ],
        "rank 1: mpi ",
    );
}

/// The entries of the io500 job's directory in `dir` named `name` (`easy-1`, `md-0`): its
/// size for a file, its entries for a directory; 0 while there is none.
fn io500_entry(dir: &Path, name: &str) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    for e in entries.flatten() {
        if e.file_name()
            .to_string_lossy()
            .starts_with(".ioscope-io500-")
        {
            let path = e.path().join(name);
            if let Ok(m) = std::fs::metadata(&path) {
                return if m.is_dir() {
                    std::fs::read_dir(&path).map_or(0, |d| d.count() as u64)
                } else {
                    m.len()
                };
            }
        }
    }
    0
}

/// Whether a phase's files are there, in the test's directory.
type Moment = fn(&Path) -> bool;

/// ior-easy's write is under way: rank 1's file holds 32 MiB.
fn easy_writing(dir: &Path) -> bool {
    io500_entry(dir, "easy-1") >= 32 << 20
}

/// The small files are being created: rank 0's directory holds 200 of them.
fn small_files_made(dir: &Path) -> bool {
    io500_entry(dir, "md-0") >= 200
}

/// `mpi io500` long enough to be signalled at any phase: a 30 s stonewall and caps of up to
/// 1 GiB per rank (ior-easy) and 100,000 small files. The caps are reserved in full before
/// anything is written (some 5 GiB for two ranks), so they stay well below a CI machine's
/// free space: a 4 GiB cap and a million files asked for 31 GiB and were refused there.
fn long_io500(d: &str, easy_cap: &str) -> Vec<String> {
    words(&format!(
        "io500 {d} --stonewall 30s --size {easy_cap} --files 100000 --min-free 0"
    ))
}

#[test]
fn io500_leaves_no_scratch_when_a_rank_is_killed_during_the_easy_write() {
    io500_rank_killed(&[("during ior-easy's write", easy_writing, "1g")]);
}

/// The survivor's tree of thousands of small files takes longer to remove than mpirun's
/// second between SIGTERM and SIGKILL on a loaded machine: a process of its own (the
/// janitor, out of the rank's process group) removes it.
#[test]
fn io500_leaves_no_scratch_when_a_rank_is_killed_during_the_small_files() {
    // A small cap on ior-easy reaches the small files at once.
    io500_rank_killed(&[("during the small files' creation", small_files_made, "1m")]);
}

/// Kills one rank of a long io500 (each rank in turn) at each `(moment, ready, cap)`: the
/// job fails and leaves no scratch.
fn io500_rank_killed(cases: &[(&str, Moment, &str)]) {
    for &(moment, ready, cap) in cases {
        for rank in [1, 0] {
            let dir = tempfile::tempdir().expect("temp dir");
            let d = dir.path().to_str().expect("UTF-8 temp dir");
            let args = long_io500(d, cap);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let victim = Victim::RankOnce {
                rank,
                dir: dir.path().to_path_buf(),
                ready,
            };
            let Some(out) = mpirun_signalled(2, &args, &[], &victim, libc::SIGKILL) else {
                return;
            };
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                !out.status.success(),
                "rank {rank} killed {moment}: {stderr}"
            );
            assert!(
                leftovers_after_janitor(dir.path()).is_empty(),
                "rank {rank} killed {moment}: left {:?}; {stderr}",
                leftovers_after_janitor(dir.path())
            );
        }
    }
}

#[test]
fn io500_interrupted_through_mpirun_during_the_easy_write_says_so_and_leaves_no_scratch() {
    io500_mpirun_signalled(&[(libc::SIGTERM, "during ior-easy's write", easy_writing, "1g")]);
}

/// The line comes before the grace runs out, and the tree goes in the janitor, as above.
#[test]
fn io500_interrupted_through_mpirun_during_the_small_files_says_so_and_leaves_no_scratch() {
    io500_mpirun_signalled(&[
        (
            libc::SIGINT,
            "during the small files' creation",
            small_files_made,
            "1m",
        ),
        (
            libc::SIGTERM,
            "during the small files' creation",
            small_files_made,
            "1m",
        ),
    ]);
}

/// Sends `signal` to mpirun during a long io500 at each `(signal, moment, ready, cap)`:
/// the ranks say they were interrupted, print no result and leave no scratch.
fn io500_mpirun_signalled(cases: &[(i32, &str, Moment, &str)]) {
    for &(signal, moment, ready, cap) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().expect("UTF-8 temp dir");
        let args = long_io500(d, cap);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let victim = Victim::MpirunOnce {
            dir: dir.path().to_path_buf(),
            ready,
        };
        let Some(out) = mpirun_signalled(2, &args, &[], &victim, signal) else {
            return;
        };
        let (stderr, errors) = error_lines(&out);
        let what = format!("signal {signal} to mpirun {moment}");
        assert!(!out.status.success(), "{what}: {stderr}");
        assert!(
            errors.iter().any(|l| l.contains("interrupted")),
            "{what}: a line says so: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{what}: no result");
        assert!(
            leftovers_after_janitor(dir.path()).is_empty(),
            "{what}: left {:?}; {stderr}",
            leftovers_after_janitor(dir.path())
        );
    }
}
