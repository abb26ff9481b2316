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

#[test]
fn every_bad_budget_is_refused_in_one_line_naming_its_flag_before_anything_is_made() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4096));
    let f = path.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let p = dir.path().join("p");
    let p = p.to_str().unwrap();
    let series = dir.path().join("s.csv");
    let series = series.to_str().unwrap();
    let cases: [(&[&str], &[&str]); 15] = [
        (&["sweep", f, "--precision", "150"], &["--precision"]),
        (&["sweep", f, "--precision", "0"], &["--precision"]),
        // "5%%" is no percentage, and a precision the report would write as ±0% is none.
        (&["cache", f, "--precision", "5%%"], &["--precision"]),
        (&["sweep", f, "--precision", "0.00001"], &["--precision"]),
        (&["cache", f, "--max-time", "1e400s"], &["--max-time"]),
        (&["sweep", f, "--min-runs", "2000"], &["--min-runs"]),
        (
            &["compare", f, "--min-runs", "5", "--max-runs", "3"],
            &["--min-runs", "--max-runs"],
        ),
        (&["compare", f, "--repeat", "0"], &["--repeat"]),
        (&["patterns", p, "--size", "1m", "--runs", "0"], &["--runs"]),
        (
            &[
                "patterns",
                p,
                "--size",
                "1m",
                "--runs",
                "3",
                "--min-runs",
                "5",
            ],
            &["--runs", "--min-runs"],
        ),
        (
            &["disk", d, "--series", series, "--min-runs", "3"],
            &["--series", "--min-runs"],
        ),
        (
            &["disk", d, "--repeat", "3", "--min-runs", "5"],
            &["--repeat", "--min-runs"],
        ),
        (&["disk", d, "--repeat", "0"], &["--repeat"]),
        (
            &["sweep", f, "--repeat", "3", "--min-runs", "5"],
            &["--repeat", "--min-runs"],
        ),
        (
            &["cache", f, "--repeat", "3", "--max-time", "2s"],
            &["--repeat", "--max-time"],
        ),
    ];
    for (args, flags) in cases {
        let out = ioscope().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        // One line says it (clap adds its usage below a conflict).
        let first = err.lines().next().unwrap_or_default();
        assert!(first.starts_with("error: "), "{args:?}: {err}");
        for flag in flags {
            assert!(first.contains(flag), "{args:?} names {flag}: {err}");
        }
        if !first.contains("cannot be used with") {
            assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        }
    }
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["f"], "nothing made, nothing changed");
}

/// Sweeps `path` with FIXED_METER meddling as its third timed run starts (the first
/// point's third of three, after one warm-up run), on the engine that reads with pread.
fn sweep_meddled(
    path: &std::path::Path,
    meddle: impl FnOnce() + Send + 'static,
) -> anyhow::Result<SweepReport> {
    let meter = MeddlingMeter::new(2, meddle);
    let options = sweep_options(&[
        path.to_str().unwrap(),
        "--engine",
        "pread",
        "--block-sizes",
        "64k",
        "--warmup",
        "0",
        "--repeat",
        "4",
    ]);
    let harness = Harness {
        meter: &meter,
        progress: &NoProgress,
    };
    let result = ioscope::cmd::sweep::execute(&options, &harness, &mut |_| Ok(()));
    assert!(meter.meddled(), "the third run started");
    result
}

#[test]
fn a_file_shrunk_between_repeats_stops_the_sweep_with_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let p = path.clone();
    let e = sweep_meddled(&path, move || {
        std::fs::OpenOptions::new()
            .write(true)
            .open(&p)
            .unwrap()
            .set_len(100 << 10)
            .unwrap();
    })
    .expect_err("a run short of the size it began with is no measurement");
    let said = format!("{e:#}");
    assert!(
        said.contains("ended at byte") && said.contains("did it shrink?"),
        "{said}"
    );
    assert_eq!(said.lines().count(), 1, "{said}");
}

#[test]
fn a_file_grown_deleted_or_swapped_for_a_link_between_repeats_is_measured_as_opened() {
    let bytes = pattern(1 << 20);
    let xor = ioscope::checksum::hex(ioscope::checksum::xor_bytes(&bytes));
    type Meddle = fn(&std::path::Path, &std::path::Path);
    let meddles: [(&str, Meddle); 3] = [
        ("grown", |p, _| {
            let mut f = std::fs::OpenOptions::new().append(true).open(p).unwrap();
            std::io::Write::write_all(&mut f, &[7u8; 4096]).unwrap();
        }),
        ("deleted", |p, _| std::fs::remove_file(p).unwrap()),
        ("swapped for a link", |p, other| {
            std::fs::remove_file(p).unwrap();
            std::os::unix::fs::symlink(other, p).unwrap();
        }),
    ];
    for (what, meddle) in meddles {
        let dir = tempfile::tempdir().unwrap();
        let path = file_with(dir.path(), "f", &bytes);
        let other = file_with(dir.path(), "other", &[1u8; 300 << 10]);
        let p = path.clone();
        let r = sweep_meddled(&path, move || meddle(&p, &other)).expect(what);
        // Every run read the file it opened, whole, with the bytes it held then.
        let point = &r.points[0];
        assert_eq!(point.runs.len(), 4, "{what}");
        assert!(
            point.runs.iter().all(|s| s.moved.bytes == 1 << 20),
            "{what}"
        );
        assert_eq!(r.same_bytes.len(), 1, "{what}");
        assert_eq!(r.same_bytes[0].xors, [xor.as_str()], "{what}");
        assert!(r.ok(), "{what}");
    }
}

#[test]
fn a_patterns_file_swapped_for_a_link_between_runs_stops_the_runs_and_writes_nothing_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let victim = file_with(dir.path(), "victim", &[0x5a; 1 << 20]);
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let argv = [
        "patterns",
        work.to_str().unwrap(),
        "--size",
        "1m",
        "--record",
        "64k",
        "--tests",
        "write,rewrite",
        "--runs",
        "3",
    ];
    let options = match command_of(&argv) {
        ioscope::cli::Command::Patterns(a) => {
            ioscope::options::PatternsOptions::from_args(&a).expect("valid options")
        }
        _ => unreachable!("a patterns command line"),
    };
    // As the second write starts, the test file's name becomes a link to the victim.
    let (w, v) = (work.clone(), victim.clone());
    let meter = MeddlingMeter::new(1, move || {
        let ours: Vec<String> = scratch_files(&w)
            .into_iter()
            .filter(|n| n.starts_with(".ioscope-patterns-"))
            .collect();
        assert_eq!(ours.len(), 1, "{ours:?}");
        let path = w.join(&ours[0]);
        std::fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink(&v, &path).unwrap();
    });
    let harness = Harness {
        meter: &meter,
        progress: &NoProgress,
    };
    let e = ioscope::cmd::patterns::execute(&options, &harness, &mut |_| Ok(()))
        .expect_err("the runs stop");
    assert!(meter.meddled());
    let said = format!("{e:#}");
    assert!(said.contains("replaced during the run"), "{said}");
    assert_eq!(
        std::fs::read(&victim).unwrap(),
        vec![0x5a; 1 << 20],
        "nothing written through the link"
    );
    // The link is not ioscope's to remove; the file it made is gone.
    let left = scratch_files(&work);
    assert!(
        left.iter().all(|n| std::fs::symlink_metadata(work.join(n))
            .unwrap()
            .is_symlink()),
        "{left:?}"
    );
}

#[test]
fn control_characters_in_a_name_are_escaped_in_the_text_of_every_repeating_command() {
    // The header lines printed the name raw: ESC drove the terminal, a newline forged a line.
    // Beside the build rather than in /tmp: a file system whose pages can be evicted.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let evil = "e\u{1b}[31mvil\nsweep forged";
    let file = file_with(dir.path(), evil, &pattern(256 << 10));
    let f = file.to_str().unwrap();
    let sub = dir.path().join(format!("{evil} dir"));
    std::fs::create_dir(&sub).unwrap();
    let d = sub.to_str().unwrap();
    let fixed = ["--meter", "fixed"];
    let runs: [&[&str]; 3] = [
        &[
            "sweep",
            f,
            "--engine",
            "null",
            "--block-sizes",
            "64k",
            "--repeat",
            "1",
        ],
        &["cache", f, "--block-size", "64k", "--repeat", "1"],
        &[
            "patterns", d, "--size", "256k", "--tests", "write", "--runs", "1",
        ],
    ];
    for args in runs {
        let out = ioscope().args(fixed).args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {err}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(!text.contains('\u{1b}'), "{args:?}: {text}");
        assert!(
            text.contains("e\\u{1b}[31mvil\\nsweep forged"),
            "{args:?}: {text}"
        );
        assert!(
            !text.lines().any(|l| l.starts_with("sweep forged")),
            "{args:?}: {text}"
        );
    }
}
