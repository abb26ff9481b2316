//! `mpi io500`, the IO500-like preset: every phase present in IO500's order, the stonewall's
//! wear-out bringing every rank to one count, the reads covering that count of another
//! rank's data, the geometric means made from the phase figures, and each phase's validity
//! following from its numbers. One rank without MPI ([`Solo`]) in any build; two ranks
//! under `mpirun` with the `mpi` feature (skipped, with the reason, without mpirun).

use ioscope::cmd::mpi::Solo;
use ioscope::cmd::mpi::io500::{Io500Report, Kind, execute, geometric_mean};
use ioscope::harness::{Harness, NoProgress};
use ioscope::options::Io500Options;
use ioscope::report::view::Exportable;
use std::path::Path;
use std::time::Duration;

/// The phases in the order they run.
const PHASES: [&str; 8] = [
    "ior-easy-write",
    "md-create",
    "ior-hard-write",
    "ior-easy-read",
    "md-stat",
    "ior-hard-read",
    "md-read",
    "md-delete",
];

fn options(dir: &Path) -> Io500Options {
    Io500Options {
        dir: dir.to_path_buf(),
        stonewall: Duration::from_secs(1),
        transfer: 256 << 10,
        easy_cap_bytes: 2 << 20,
        files: 40,
        seed: Some(5),
        keep: false,
        min_free: Some(0),
        json: true,
    }
}

/// What every report must hold, whatever the timing: the phases in order, wear-out to one
/// count, reads of that count, the means from the figures, validity from the numbers.
fn check_consistent(r: &Io500Report) {
    let names: Vec<&str> = r.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, PHASES);
    assert!(!r.official_io500_score);
    for (write, reads) in [
        ("ior-easy-write", &["ior-easy-read"][..]),
        ("ior-hard-write", &["ior-hard-read"][..]),
        ("md-create", &["md-stat", "md-read", "md-delete"][..]),
    ] {
        let w = r.phase(write).expect("the write phase");
        let s = w.stonewall.as_ref().expect("a write phase has a stonewall");
        assert_eq!(s.at_stonewall.len(), r.ranks);
        let most = *s.at_stonewall.iter().max().expect("a rank");
        assert_eq!(
            s.completed_to, most,
            "{write}: wear-out to the largest count"
        );
        for rank in &w.ranks {
            assert_eq!(
                rank.count, s.completed_to,
                "{write}: rank {} completed",
                rank.rank
            );
        }
        for (n, by_time) in s.at_stonewall.iter().zip(&s.stopped_by_time) {
            assert!(*n <= s.cap);
            if !by_time {
                assert_eq!(
                    *n, s.cap,
                    "{write}: a rank not stopped by time reached its cap"
                );
            }
        }
        // Validity follows from the numbers.
        let bound = s.stopped_by_time.iter().any(|&b| b);
        let long_enough = w.seconds >= s.seconds;
        assert_eq!(w.valid(), bound && long_enough, "{write}: {:?}", w.invalid);
        if !bound {
            assert!(w.invalid.iter().any(|x| x.contains("did not bind")));
        }
        for read in reads {
            let p = r.phase(read).expect("the read phase");
            for rank in &p.ranks {
                assert_eq!(
                    rank.count, s.completed_to,
                    "{read} covers what {write} wrote"
                );
                assert_eq!(rank.data_of, (rank.rank + r.reorder.shift) % r.ranks);
            }
            assert!(p.stonewall.is_none());
        }
    }
    let easy = r.phase("ior-easy-read").expect("read");
    let v = easy
        .verified_in_place
        .expect("ior reads are verified in place");
    assert!(v.ok());
    assert_eq!(v.bytes, easy.total_bytes);
    let hard = r.phase("ior-hard-read").expect("read");
    assert_eq!(hard.total_bytes, hard.total_ops * 47_008);
    let md = r
        .phase("md-read")
        .expect("read")
        .bad_files
        .clone()
        .expect("content checked");
    assert_eq!(md.bad, 0);
    let of = |k| geometric_mean(r.phases.iter().filter(|p| p.kind == k).map(|p| p.figure()));
    assert!((r.score.bandwidth_gib_per_second - of(Kind::Bandwidth)).abs() < 1e-12);
    assert!((r.score.metadata_kiops - of(Kind::Metadata)).abs() < 1e-12);
    let combined = (of(Kind::Bandwidth) * of(Kind::Metadata)).sqrt();
    assert!((r.score.combined - combined).abs() < 1e-9);
}

#[test]
fn one_rank_runs_every_phase_wears_out_to_its_own_count_and_leaves_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = execute(&options(dir.path()), &Solo, &Harness::system(&NoProgress))
        .expect("runs")
        .expect("rank 0 gets the report");
    assert_eq!(report.ranks, 1);
    check_consistent(&report);
    assert!(report.ok());
    let text = report.text();
    assert!(text.contains("NOT the official IO500 score"), "{text}");
    assert!(text.contains("geometric mean of 4 ior phases"), "{text}");
    let markdown = report.markdown().join("\n");
    assert!(
        markdown.contains("NOT the official IO500 score"),
        "{markdown}"
    );
    assert_eq!(report.table().rows.len(), 8, "a row per phase and rank");
    assert_eq!(
        std::fs::read_dir(dir.path()).expect("list").count(),
        0,
        "the job's directory is removed"
    );
}

#[test]
fn a_saved_report_reads_back_with_its_phases_and_means() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = execute(&options(dir.path()), &Solo, &Harness::system(&NoProgress))
        .expect("runs")
        .expect("rank 0 gets the report");
    let json = serde_json::to_string(&report).expect("encode");
    let back: Io500Report = serde_json::from_str(&json).expect("decode");
    check_consistent(&back);
    assert_eq!(back.score, report.score);
}

#[cfg(feature = "mpi")]
mod under_mpirun {
    use super::*;
    use crate::common;
    use serde_json::Value;
    use std::process::Output;

    /// `mpirun --oversubscribe -np 2 ioscope mpi io500 DIR ARGS --json`; `None` (and a
    /// printed reason) when mpirun is missing.
    fn mpirun(dir: &str, env: &[(&str, &str)]) -> Option<Output> {
        common::mpirun(
            2,
            &[
                "io500",
                dir,
                "--stonewall",
                "1s",
                "--size",
                "16m",
                "--files",
                "200",
                "--min-free",
                "0",
                "--seed",
                "3",
                "--json",
            ],
            env,
        )
    }

    fn report(out: &Output) -> (Value, Io500Report) {
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not one JSON document ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        let r = serde_json::from_value(v.clone()).expect("an mpi-io500 report");
        (v, r)
    }

    #[test]
    fn two_ranks_wear_out_to_one_count_and_read_each_others_data() {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().expect("UTF-8 temp dir");
        // Rank 1 sleeps before each step until its stonewall: it reaches fewer than rank 0
        // (usually) and wears out to rank 0's count.
        let Some(out) = mpirun(d, &[("IOSCOPE_IO500_SLOW_RANK", "1")]) else {
            return;
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (v, r) = report(&out);
        assert_eq!(v["schema"], "ioscope/mpi-io500/v2");
        assert_eq!(r.ranks, 2);
        assert!(r.launched_by_mpirun);
        check_consistent(&r);
        for p in &r.phases {
            let others: Vec<usize> = p.ranks.iter().map(|x| x.data_of).collect();
            if p.stonewall.is_some() {
                assert_eq!(others, [0, 1], "{}: each writes its own", p.name);
            } else {
                assert_eq!(others, [1, 0], "{}: each reads the other's", p.name);
            }
        }
        assert_eq!(std::fs::read_dir(dir.path()).expect("list").count(), 0);
    }

    #[test]
    fn a_changed_byte_in_each_kind_of_data_is_found_at_its_offset_and_fails_the_run() {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().expect("UTF-8 temp dir");
        let Some(out) = mpirun(d, &[("IOSCOPE_IO500_CORRUPT", "1")]) else {
            return;
        };
        assert_eq!(out.status.code(), Some(1), "a failed check exits 1");
        let (_, r) = report(&out);
        let first_bad = |name: &str| {
            let p = r.phase(name).expect("phase");
            assert!(!p.valid(), "{name} is invalid");
            p.verified_in_place.expect("verified").first_bad_offset
        };
        // Rank 0 reads rank 1's file from byte 0, and rank 1's first record in the shared
        // file, which lies one record in: records interleave across the two ranks.
        assert_eq!(first_bad("ior-easy-read"), Some(0));
        assert_eq!(first_bad("ior-hard-read"), Some(47_008));
        let md = r.phase("md-read").expect("phase");
        assert_eq!(md.bad_files.as_ref().map(|b| b.bad), Some(1));
        assert!(md.invalid[0].contains("f0: byte 0"), "{:?}", md.invalid);
        assert!(!r.ok());
    }

    /// `mpirun -np 2 ioscope mpi io500 DIR ARGS` on a tmpfs of 64 MiB and 200 inodes
    /// mounted on DIR (in a mount namespace of its own); `None` (and a printed reason) where
    /// mpirun is missing or no tmpfs can be mounted.
    fn on_200_inodes(args: &str) -> Option<Output> {
        if std::process::Command::new("mpirun")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("skipped: mpirun is not installed");
            return None;
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = common::in_small_tmpfs("64m,nr_inodes=200", dir.path(), Path::new("mpirun"))?;
        // Root inside the namespace, whoever runs the test.
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args(["--oversubscribe", "-np", "2"])
            .arg(assert_cmd::cargo::cargo_bin("ioscope"))
            .args(["mpi", "io500"])
            .arg(dir.path())
            .args(args.split_whitespace());
        Some(cmd.output().expect("run mpirun"))
    }

    #[test]
    fn small_files_that_would_exhaust_the_inodes_are_refused_up_front_with_the_numbers() {
        // 2,000 small files (and 7 more entries) on 200 inodes.
        let Some(out) = on_200_inodes("--size 1m --files 1000 --min-free 0") else {
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let errors: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("error: "))
            .collect();
        assert_eq!(errors.len(), 1, "{stderr}");
        assert!(errors[0].contains("not enough free inodes"), "{stderr}");
        assert!(errors[0].contains("2006 files and directories"), "{stderr}");
        assert!(
            errors[0].contains("of 200 can still be created"),
            "{stderr}"
        );
    }

    #[test]
    fn the_inodes_keep_a_margin_as_blocks_do_and_a_job_that_fits_runs() {
        // 186 entries fit in 199 free inodes, but not with 20 (10%) kept free.
        let Some(out) = on_200_inodes("--size 1m --files 90 --stonewall 1s") else {
            return;
        };
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("not enough free inodes"), "{stderr}");
        assert!(stderr.contains("20 must stay free"), "{stderr}");
        // Without the margin, 46 entries: the job runs to its end.
        let Some(out) = on_200_inodes("--size 1m --files 20 --stonewall 1s --min-free 0") else {
            return;
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
