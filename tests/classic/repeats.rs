//! Repeat until stable, within a budget: how many runs a point gets, on meters whose runs
//! scatter as scripted, and what the result says of a point that did not settle.

use crate::common::*;
use ioscope::cmd::sweep::SweepReport;
use ioscope::harness::{Harness, NoProgress};
use ioscope::measure::meter::Meter;
use ioscope::report::view::Exportable;
use ioscope::warning::Warning;

fn sweep_on(meter: &dyn Meter, path: &str, more: &[&str]) -> SweepReport {
    let blocks = if more.contains(&"--block-sizes") {
        vec![]
    } else {
        vec!["--block-sizes", "4k,64k"]
    };
    let mut args = vec![path, "--engine", "null"];
    args.extend(blocks);
    args.extend_from_slice(more);
    let options = sweep_options(&args);
    let harness = Harness {
        meter,
        progress: &NoProgress,
    };
    ioscope::cmd::sweep::execute(&options, &harness, &mut |_| Ok(())).expect("sweep")
}

fn runs_per_point(r: &SweepReport) -> Vec<usize> {
    r.points.iter().map(|p| p.runs.len()).collect()
}

#[test]
fn identical_runs_settle_at_the_minimum_and_say_how_they_were_repeated() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = sweep_on(&FIXED_METER, path.to_str().unwrap(), &[]);
    assert_eq!(runs_per_point(&r), [3, 3]);
    for p in &r.points {
        let s = p.settled.expect("repeated until stable");
        assert!(s.settled && s.half_width == Some(0.0), "{s:?}");
    }
    assert!(
        !r.warnings
            .iter()
            .any(|w| matches!(w, Warning::Unsettled { .. }))
    );
    let first = r.text().lines().next().unwrap().to_string();
    assert!(
        first.contains(
            "3 to 30 timed runs (until the median is known to ±5%, no new one after 3 s)"
        ),
        "{first}"
    );
    let json: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(json["until_stable"]["precision"], 0.05);
    assert_eq!(json["points"][0]["settled"]["settled"], true);
}

#[test]
fn runs_that_never_agree_stop_at_the_budget_and_the_result_says_so() {
    // Every other run takes 1.6 times as long: a median never known to ±5%.
    static METER: ScriptedMeter = ScriptedMeter::new(&[1.0, 1.6]);
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = sweep_on(&METER, path.to_str().unwrap(), &["--max-runs", "7"]);
    assert_eq!(runs_per_point(&r), [7, 7]);
    let w = r
        .warnings
        .iter()
        .find(|w| matches!(w, Warning::Unsettled { .. }))
        .expect("an unsettled point is named");
    let Warning::Unsettled {
        runs,
        others,
        half_width,
        ..
    } = w
    else {
        unreachable!()
    };
    assert_eq!((*runs, *others), (7, 1));
    assert!(half_width.unwrap() > 0.05);
    // The old spread warning is not given beside it: one warning per cause.
    assert!(
        !r.warnings
            .iter()
            .any(|w| matches!(w, Warning::Scattered { .. }))
    );
    let said = ioscope::report::text::warning(w);
    assert!(
        said.contains("after 7 runs its median is known to ±"),
        "{said}"
    );
    assert!(said.contains("not the ±5% asked"), "{said}");
}

#[test]
fn a_slow_first_run_is_outvoted_once_enough_runs_agree() {
    // One run in ten is twice as slow. Until nine runs the interval reaches it (t interval,
    // then the whole range); from nine on it lies outside the interval, which settles.
    static METER: ScriptedMeter =
        ScriptedMeter::new(&[2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]);
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = sweep_on(
        &METER,
        path.to_str().unwrap(),
        &["--block-sizes", "64k", "--warmup", "0", "--max-runs", "20"],
    );
    assert_eq!(runs_per_point(&r), [9]);
    assert!(r.points[0].settled.unwrap().settled);
}

#[test]
fn the_time_budget_stops_new_runs_but_never_before_the_minimum() {
    static METER: ScriptedMeter = ScriptedMeter::new(&[1.0, 1.6]);
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    // FIXED_METER reads 1 MiB in about 1 ms: a budget of 1 µs is spent by the first run.
    let r = sweep_on(&METER, path.to_str().unwrap(), &["--max-time", "1us"]);
    assert_eq!(runs_per_point(&r), [3, 3]);
    let r = sweep_on(
        &METER,
        path.to_str().unwrap(),
        &["--max-time", "1us", "--min-runs", "5"],
    );
    assert_eq!(runs_per_point(&r), [5, 5]);
}

#[test]
fn a_max_runs_below_the_default_minimum_lowers_it() {
    static METER: ScriptedMeter = ScriptedMeter::new(&[1.0, 1.6]);
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = sweep_on(&METER, path.to_str().unwrap(), &["--max-runs", "2"]);
    assert_eq!(runs_per_point(&r), [2, 2]);
    let r = sweep_on(&METER, path.to_str().unwrap(), &["--max-runs", "1"]);
    assert_eq!(runs_per_point(&r), [1, 1]);
    // As few runs as the least: a fixed count, said as one.
    assert!(r.until_stable.is_none());
    assert!(
        r.text()
            .lines()
            .next()
            .unwrap()
            .contains("1 timed run per point")
    );
}

#[test]
fn a_fixed_count_is_kept_whatever_the_spread_and_judged_by_the_spread_rule() {
    static METER: ScriptedMeter = ScriptedMeter::new(&[1.0, 1.6]);
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = sweep_on(&METER, path.to_str().unwrap(), &["--repeat", "4"]);
    assert_eq!(runs_per_point(&r), [4, 4]);
    assert!(r.until_stable.is_none() && r.points.iter().all(|p| p.settled.is_none()));
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, Warning::Scattered { .. }))
    );
    assert!(
        r.text()
            .lines()
            .next()
            .unwrap()
            .contains("4 timed runs per point")
    );
}

#[test]
fn the_budget_flags_are_checked_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4096));
    let p = path.to_str().unwrap();
    for (args, says) in [
        (
            vec!["--min-runs", "5", "--max-runs", "3"],
            "--max-runs (3) is below --min-runs (5)",
        ),
        (vec!["--precision", "0"], "--precision must be a percentage"),
        (
            vec!["--precision", "abc"],
            "--precision must be a percentage",
        ),
        (vec!["--max-time", "0s"], "--max-time must be above 0"),
        (vec!["--min-runs", "0"], "--min-runs must be 1 to 1000"),
    ] {
        let mut argv = vec!["sweep", p];
        argv.extend(args.iter());
        let out = ioscope().args(&argv).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert!(err.contains(says), "{argv:?}: {err}");
    }
    let out = ioscope()
        .args(["sweep", p, "--repeat", "3", "--min-runs", "2"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "--repeat fixes the count: no budget beside it"
    );
}

fn cache_on(meter: &dyn Meter, path: &str, more: &[&str]) -> ioscope::cmd::coldwarm::CacheReport {
    let mut argv = vec!["cache", path, "--engine", "null", "--block-size", "64k"];
    argv.extend_from_slice(more);
    let options = match command_of(&argv) {
        ioscope::cli::Command::Cache(a) => {
            ioscope::options::CacheOptions::from_args(&a).expect("valid options")
        }
        _ => unreachable!("a cache command line"),
    };
    let harness = Harness {
        meter,
        progress: &NoProgress,
    };
    ioscope::cmd::coldwarm::execute(&options, &harness, &mut |_| Ok(())).expect("cache")
}

#[test]
fn cache_repeats_its_cycles_and_each_rate_is_a_median_with_its_spread() {
    // Cycles of cold, warm, cold again: the second cycle's reads take 1.6 times as long.
    static METER: ScriptedMeter = ScriptedMeter::new(&[1.0, 1.0, 1.0, 1.6, 1.6, 1.6]);
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = cache_on(&METER, path.to_str().unwrap(), &["--max-runs", "5"]);
    let row = &r.rows[0];
    assert_eq!(row.n(), 5, "never settled: the budget's 5 cycles");
    let warm = row.rate(ioscope::results::cache::Read::Warm);
    assert_eq!(warm.n, 5);
    assert!(warm.max > 1.5 * warm.min, "{warm:?}");
    assert!(!row.settled.unwrap().settled);
    let text = r.text();
    assert!(
        text.contains("5 cycles each, median ±its farthest run"),
        "{text}"
    );
    assert!(text.contains("±"), "{text}");
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, Warning::Unsettled { runs: 5, .. })),
        "{:?}",
        r.warnings
    );
    // --repeat 1: the classic three reads, one each, no spread shown.
    let once = cache_on(&FIXED_METER, path.to_str().unwrap(), &["--repeat", "1"]);
    assert_eq!(once.rows[0].n(), 1);
    assert!(once.rows[0].cycles.is_empty() && once.rows[0].settled.is_none());
    assert!(!once.text().contains("cycles each"));
}
