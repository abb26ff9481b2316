//! `mpi` as one rank without MPI ([`Solo`]), in any build: each repeat's write starts from an
//! empty file unless `--reuse-files`, every run carries its open/transfer/close on one clock
//! and the IOR-formula aggregate recomputes from them, reads carry the XOR timed alone, and
//! `--keep` leaves files that `read --existing` reads back, verified, without writing.

use ioscope::cmd::mpi::{Layout, MpiReport, Phases, RepeatFiles, Solo, execute};
use ioscope::harness::{Harness, NoProgress};
use ioscope::measure::cache::CacheState;
use ioscope::measure::converge::Stopping;
use ioscope::options::MpiOptions;
use ioscope::workload::Op;
use std::path::Path;

fn options(dir: &Path, phases: Phases, layout: Layout) -> MpiOptions {
    MpiOptions {
        dir: dir.to_path_buf(),
        phases,
        layout,
        size: 2 << 20,
        block_size: 512 << 10,
        runs: Stopping::fixed(3),
        cache: CacheState::Cold,
        seed: Some(11),
        keep: false,
        reuse_files: false,
        existing: None,
        min_free: Some(0),
        json: true,
    }
}

fn run(options: &MpiOptions) -> anyhow::Result<MpiReport> {
    execute(options, &Solo, &Harness::system(&NoProgress))
        .map(|r| r.expect("rank 0 gets the report"))
}

#[test]
fn every_repeat_writes_into_an_emptied_file_by_default_and_in_place_with_reuse_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    for layout in [Layout::FilePerRank, Layout::SharedStrided] {
        let mut o = options(dir.path(), Phases::Write, layout);
        let report = run(&o).expect("runs");
        assert_eq!(report.repeat_files, RepeatFiles::Recreated);
        let write = report.phase(Op::Write).expect("a write phase");
        for (i, repeat) in write.repeats.iter().enumerate() {
            assert_eq!(
                repeat.ranks[0].file_bytes_at_start,
                Some(0),
                "{layout:?} repeat {}",
                i + 1
            );
        }
        o.reuse_files = true;
        let report = run(&o).expect("runs");
        assert_eq!(report.repeat_files, RepeatFiles::Reused);
        let at_start: Vec<_> = report
            .phase(Op::Write)
            .expect("a write phase")
            .repeats
            .iter()
            .map(|r| r.ranks[0].file_bytes_at_start)
            .collect();
        assert_eq!(
            at_start,
            [Some(0), Some(2 << 20), Some(2 << 20)],
            "{layout:?}"
        );
    }
}

#[test]
fn every_run_has_open_transfer_and_close_on_one_clock_and_the_ior_aggregate_recomputes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let report = run(&options(dir.path(), Phases::Both, Layout::SharedContiguous)).expect("runs");
    let clock = report.clock.as_ref().expect("a clock");
    assert_eq!(clock.offsets.len(), 1);
    assert!(clock.epoch_unix_seconds > 1.5e9);
    for phase in &report.results {
        assert!(phase.ior_bytes_per_second.is_some(), "{:?}", phase.op);
        for repeat in &phase.repeats {
            let run = &repeat.ranks[0];
            let t = run.times.expect("times");
            assert!(
                t.start_seconds >= 0.0 && t.end_seconds >= t.start_seconds,
                "{t:?}"
            );
            let parts = t.open_seconds + t.transfer_seconds + t.close_seconds;
            assert!(
                (parts - (t.end_seconds - t.start_seconds)).abs() < 1e-6,
                "{t:?}"
            );
            let a = &repeat.aggregate;
            let span = t.end_seconds - t.start_seconds;
            assert_eq!(a.ior_seconds, Some(span));
            let rate = a.ior_bytes_per_second.expect("IOR's figure");
            assert!((rate - a.total_bytes as f64 / span).abs() <= rate * 1e-12);
        }
    }
    // The read's XOR was timed alone and the figure without it is named beside it.
    let read = report.phase(Op::Read).expect("a read phase");
    assert!(
        read.repeats
            .iter()
            .all(|r| r.ranks[0].xor_seconds.is_some())
    );
    let without = read
        .without_xor_bytes_per_second
        .expect("read without the XOR");
    assert!(without.median >= read.bytes_per_second.median * 0.999);
    assert!(read.repeats[0].ranks[0].file_bytes_at_start.is_none());
}

#[test]
fn kept_files_are_named_with_their_seed_and_read_back_verified_without_writing() {
    let dir = tempfile::tempdir().expect("temp dir");
    for layout in [Layout::FilePerRank, Layout::SharedStrided] {
        let mut o = options(dir.path(), Phases::Write, layout);
        o.keep = true;
        o.runs = Stopping::fixed(1);
        o.seed = Some(77);
        let kept = run(&o).expect("writes").kept.expect("the files kept");
        assert_eq!(kept.seed, 77);
        assert_eq!(kept.files.len(), 1);
        let file = Path::new(&kept.files[0]);
        assert!(file.is_file(), "{file:?}");
        let modified = std::fs::metadata(file)
            .and_then(|m| m.modified())
            .expect("mtime");
        let mut r = options(dir.path(), Phases::Read, layout);
        r.existing = Some(kept.name.clone());
        r.seed = Some(77);
        let report = run(&r).expect("reads back");
        assert_eq!(report.read_existing.as_deref(), Some(kept.name.as_str()));
        assert!(report.phase(Op::Write).is_none(), "nothing written");
        assert!(report.failed.is_none(), "verified: {:?}", report.failed);
        // (The kernel's counters are the whole test process's: other tests read beside.)
        let read = report.phase(Op::Read).expect("read");
        for repeat in &read.repeats {
            let r = &repeat.ranks[0];
            assert_eq!(r.expected_xor_hex.as_deref(), Some(r.xor_hex.as_str()));
        }
        assert_eq!(read.repeats.len(), 3);
        assert!(report.kept.is_none());
        // Read, not rewritten, and left where they were.
        assert!(file.is_file(), "{file:?} left in place");
        let after = std::fs::metadata(file)
            .and_then(|m| m.modified())
            .expect("mtime");
        assert_eq!(modified, after, "{layout:?}: not written again");
        // Read with another seed: the check fails, and the report says so.
        r.seed = Some(78);
        r.runs = Stopping::fixed(1);
        let failed = run(&r).expect("a report").failed.expect("a failed read");
        assert_eq!((failed.op, failed.repeat), (Op::Read, 1));
        // The check in place finds it first (the XOR would too), with the first bad byte.
        assert!(
            failed.errors[0].contains("byte 0 is not the byte written there")
                || failed.errors[0].contains("checksum mismatch"),
            "{failed:?}"
        );
        assert!(file.is_file(), "kept after a failed read");
        std::fs::remove_file(file).expect("remove");
    }
}

#[test]
fn reading_kept_files_of_another_size_is_an_input_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut o = options(dir.path(), Phases::Write, Layout::FilePerRank);
    o.keep = true;
    o.runs = Stopping::fixed(1);
    let kept = run(&o).expect("writes").kept.expect("kept");
    let mut r = options(dir.path(), Phases::Read, Layout::FilePerRank);
    r.existing = Some(kept.name.clone());
    r.size = 1 << 20;
    let err = run(&r).expect_err("size differs");
    let text = format!("{err:#}");
    assert!(text.contains(&kept.files[0]), "{text}");
    assert!(text.contains("2097152 bytes"), "{text}");
    assert!(Path::new(&kept.files[0]).is_file(), "left in place");
}

#[test]
fn phases_repeat_together_until_each_is_stable_within_the_budget_and_say_so() {
    let dir = tempfile::tempdir().expect("temp dir");
    let budget = Stopping {
        min_runs: 3,
        max_runs: 5,
        max_seconds: f64::INFINITY,
        precision: 0.05,
    };
    let mut o = options(dir.path(), Phases::Both, Layout::FilePerRank);
    o.runs = budget;
    let report = run(&o).expect("runs");
    assert_eq!(report.until_stable, Some(budget));
    let counts: Vec<usize> = report.results.iter().map(|p| p.repeats.len()).collect();
    assert_eq!(counts.len(), 2);
    assert_eq!(counts[0], counts[1], "a run is a write and a read");
    assert!((3..=5).contains(&counts[0]), "{counts:?}");
    for phase in &report.results {
        let settled = phase.settled.expect("an outcome per phase");
        assert_eq!(phase.bytes_per_second.n, phase.repeats.len());
        if !settled.settled {
            assert_eq!(
                phase.repeats.len(),
                5,
                "only the budget stops an open phase"
            );
            assert!(
                report
                    .warnings
                    .iter()
                    .any(|w| matches!(w, ioscope::warning::Warning::Unsettled { .. }))
            );
        }
    }
    // Fewer than five runs: every phase had settled when they stopped.
    if counts[0] < 5 {
        assert!(report.results.iter().all(|p| p.settled.unwrap().settled));
    }
    let text = ioscope::report::views::mpi::text(&report);
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("3 to 5 timed runs (until the median is known to ±5%) of each phase"),
        "{text}"
    );
    // A fixed count: no outcome, no budget in the document.
    o.runs = Stopping::fixed(2);
    let fixed = run(&o).expect("runs");
    assert_eq!(fixed.until_stable, None);
    assert!(
        fixed
            .results
            .iter()
            .all(|p| p.settled.is_none() && p.repeats.len() == 2)
    );
    let json = serde_json::to_value(&fixed).expect("json");
    assert!(json.get("until_stable").is_none());
}
