//! `sweep`: throughput against block size. For every block size and cache state: warm-up
//! runs, then repeated timed runs through an engine from the table, each with its cache
//! proof, kernel counters and device counters; then the cost model
//! `time = calls × c_call + bytes / bandwidth` fitted per cache state. The result so far is
//! handed to the caller after every point, so an interruption loses nothing measured.

use super::inplace;
use crate::engine::flag;
use crate::files::{self, CreatePolicy, InputKind};
use crate::harness::{Harness, Sample, Setup, Target};
use crate::measure::cache::CacheState;
use crate::measure::converge::{Repeats, Stopping};
use crate::measure::diskstats;
use crate::measure::latency::{self, Latency};
use crate::measure::model::{self};
use crate::measure::stats::{self};
use crate::options::SweepOptions;
pub use crate::results::sweep::{Analysis, SameBytes, Span, SweepPoint, SweepReport};
use crate::warning::{self, Warning};
use crate::workload::Op;
use crate::workload::data::fresh_seed;
use crate::workload::plan::Plan;
use crate::workload::verify::{InPlace, Written};
use anyhow::Result;

fn run_bytes(options: &SweepOptions, total: u64, bs: u64) -> u64 {
    match options.max_calls {
        Some(cap) if bs.saturating_mul(cap) < total => bs * cap,
        _ => total,
    }
}

/// Runs the sweep; `save` receives the report so far after every point.
pub fn execute(
    options: &SweepOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&SweepReport) -> Result<()>,
) -> Result<SweepReport> {
    let device = diskstats::device_of(&options.path)
        .or_else(|| diskstats::device_of(&files::parent_dir(&options.path)));
    let setup = options.setup;
    let mut report = SweepReport {
        file: files::display_name(&options.path),
        op: options.op,
        engine: setup.engine.name().to_string(),
        threads: setup.threads,
        file_bytes: 0,
        repeat: options.runs.min_runs,
        until_stable: options.runs.until_stable(),
        warmup: options.warmup,
        drop_caches: options.drop_caches,
        device: device.clone(),
        points: Vec::new(),
        analyses: Vec::new(),
        seed: options.seed,
        complete: false,
        warnings: Vec::new(),
        allow_unwritten: options.allow_unwritten,
        caveats: Vec::new(),
        same_bytes: Vec::new(),
    };
    let measured = match options.op {
        Op::Read => read_points(
            options,
            harness,
            &setup,
            device.as_deref(),
            &mut report,
            save,
        ),
        Op::Write => write_points(
            options,
            harness,
            &setup,
            device.as_deref(),
            &mut report,
            save,
        ),
    };
    match measured {
        Ok(()) => report.complete = true,
        // Interrupted at any moment, before the first point too: the points so far (maybe
        // none) are the result, marked partial (exit 130).
        Err(e) if is_interruption(&e) => {
            report.warnings.push(Warning::Partial);
        }
        Err(e) => return Err(e),
    }
    finish(&mut report);
    save(&report)?;
    Ok(report)
}

fn is_interruption(e: &anyhow::Error) -> bool {
    crate::error::exit_kind(e) == crate::error::ExitKind::Interrupted
}

/// The block sizes that fit in `size` bytes (`what`: the file, the size written): a call
/// larger than the whole cannot move a block of its size, and its point would be labelled
/// with a size it never moved. One listed by the user is an error; a range is cut.
fn fitting(options: &SweepOptions, size: u64, name: &str, what: &str) -> Result<Vec<u64>> {
    if size == 0 {
        return Ok(options.block_sizes.clone());
    }
    let fit: Vec<u64> = options
        .block_sizes
        .iter()
        .copied()
        .filter(|&bs| bs <= size)
        .collect();
    let first_over = options.block_sizes.iter().find(|&&bs| bs > size);
    match first_over {
        Some(&bs) if options.blocks_listed || fit.is_empty() => {
            let (bs, size) = crate::units::format_size_pair(bs, size);
            Err(crate::error::input(format!(
                "sweep {name}: block size {bs} is larger than {what} ({size}): no call could move a block of that size; choose block sizes up to {size}",
            )))
        }
        _ => Ok(fit),
    }
}

/// Adds a point and hands the report so far to `save`.
fn push(
    report: &mut SweepReport,
    point: SweepPoint,
    save: &mut dyn FnMut(&SweepReport) -> Result<()>,
) -> Result<()> {
    report.points.push(point);
    finish(report);
    save(report)
}

fn read_points(
    options: &SweepOptions,
    harness: &Harness,
    setup: &Setup,
    device: Option<&str>,
    report: &mut SweepReport,
    save: &mut dyn FnMut(&SweepReport) -> Result<()>,
) -> Result<()> {
    let src = files::open_measurable(&options.path, "sweep")?;
    report.file_bytes = src.len;
    let blocks = fitting(options, src.len, &src.name, "the file")?;
    let target = Target {
        file: &src.file,
        name: &src.name,
        kind: src.kind,
        device,
    };
    for &bs in &blocks {
        harness.check(target, setup, Op::Read, Plan::sequential(0, src.len, bs))?;
    }
    for &state in &options.states {
        for &bs in &blocks {
            let plan = Plan::sequential(0, run_bytes(options, src.len, bs), bs);
            let runs = repeated(options, || {
                harness.prepare(target, &plan, state, options.drop_caches)?;
                let sample = harness.read(target, setup, plan, false, state)?;
                // The clock has stopped: the bytes the run read, checked where they lay.
                let checked = match options.seed {
                    Some(seed) if setup.engine.caps().has(flag::MOVES_BYTES) => {
                        Some(inplace::verify(
                            harness,
                            &src.file,
                            &src.name,
                            plan.extents(),
                            Written::Stream(seed),
                            bs,
                        )?)
                    }
                    _ => None,
                };
                Ok(Checked(sample, checked))
            })?;
            let checked = InPlace::merged(runs.iter().filter_map(|r| r.1.as_ref()));
            let runs = runs.into_iter().map(|r| r.0).collect();
            let mut p = point(bs, Some(state), plan.len, runs, &options.runs);
            p.in_place = checked;
            push(report, p, save)?;
        }
    }
    // The clock has stopped: what could make the figures wrong, judged on a cold run.
    if setup.engine.caps().has(flag::MOVES_BYTES) {
        let judged = report
            .points
            .iter()
            .find(|p| p.cache == Some(CacheState::Cold))
            .or(report.points.first())
            .and_then(|p| p.runs.first())
            .cloned();
        report.caveats =
            super::caveats::of_read(&src.file, &options.path, 0, src.len, judged.as_ref());
        report
            .caveats
            .push(super::caveats::link(&options.path, fastest(report)));
    }
    Ok(())
}

fn write_points(
    options: &SweepOptions,
    harness: &Harness,
    setup: &Setup,
    device: Option<&str>,
    report: &mut SweepReport,
    save: &mut dyn FnMut(&SweepReport) -> Result<()>,
) -> Result<()> {
    let blocks = fitting(
        options,
        options.size,
        &files::display_name(&options.path),
        "the size written",
    )?;
    let largest = blocks
        .iter()
        .map(|&bs| run_bytes(options, options.size, bs))
        .max()
        .unwrap_or(0);
    let out = files::create_output(
        &options.path,
        largest,
        CreatePolicy {
            force: options.force,
            allow_device: false,
            min_free: options.min_free,
        },
    )?;
    report.file_bytes = options.size;
    let target = Target {
        file: out.file(),
        name: out.name(),
        kind: InputKind::Regular,
        device,
    };
    for &bs in &blocks {
        harness.check(
            target,
            setup,
            Op::Write,
            Plan::sequential(0, options.size, bs),
        )?;
    }
    let seed = fresh_seed();
    report.seed = Some(seed);
    for &bs in &blocks {
        let plan = Plan::sequential(0, run_bytes(options, options.size, bs), bs);
        let runs = repeated(options, || {
            harness.write(&out, device, setup, plan, seed, true)
        })?;
        push(report, point(bs, None, plan.len, runs, &options.runs), save)?;
    }
    // The fsync of the largest run (the last point), its median beside the write cache.
    let last = report
        .points
        .last()
        .filter(|_| setup.engine.caps().has(flag::MOVES_BYTES));
    if let Some(last) = last {
        let fsyncs: Vec<f64> = last.runs.iter().filter_map(|r| r.fsync_seconds).collect();
        let fsync = (!fsyncs.is_empty()).then(|| median_of(fsyncs));
        report.caveats = super::caveats::of_write(out.file(), out.path(), last.bytes, fsync);
        report
            .caveats
            .push(super::caveats::link(out.path(), fastest(report)));
    }
    out.finish()
}

/// The fastest point's median, named (`the read at 1 MiB`), for the link check.
fn fastest(report: &SweepReport) -> Option<(String, f64)> {
    super::caveats::fastest(report.points.iter().map(|p| {
        (
            format!(
                "the {} at {}",
                report.op.name(),
                crate::units::format_block_size(p.block_size)
            ),
            p.rate.median,
        )
    }))
}

/// The warm-up runs, then the timed runs of one point, as many as `options.runs` says (a
/// count, or until the median rate is stable): the timed ones are kept.
fn repeated<T: AsRef<Sample>>(
    options: &SweepOptions,
    mut run: impl FnMut() -> Result<T>,
) -> Result<Vec<T>> {
    for _ in 0..options.warmup {
        run()?;
    }
    let mut runs: Vec<T> = Vec::new();
    let mut repeats = Repeats::new(options.runs);
    let mut starts = crate::measure::cpus::Starts::new();
    while repeats.more() {
        starts.next();
        let timed = run()?;
        let sample = timed.as_ref();
        repeats.push_marked(
            sample.bytes_per_second(),
            sample.elapsed.seconds,
            crate::warning::Marks::from(sample).interfered(),
        );
        runs.push(timed);
    }
    Ok(runs)
}

/// Recomputes the analyses and warnings from the points.
fn finish(report: &mut SweepReport) {
    let mut states: Vec<Option<CacheState>> = Vec::new();
    for p in &report.points {
        if !states.contains(&p.cache) {
            states.push(p.cache);
        }
    }
    report.analyses = states
        .into_iter()
        .map(|state| {
            let these: Vec<&SweepPoint> =
                report.points.iter().filter(|p| p.cache == state).collect();
            analyse(state, &these)
        })
        .collect();
    // Only an engine that moves the bytes computes their XOR; a write's is its own data.
    let moves =
        crate::engine::by_name(&report.engine).is_some_and(|e| e.caps().has(flag::MOVES_BYTES));
    report.same_bytes = if report.op == Op::Read && moves {
        SameBytes::of(&report.points)
    } else {
        Vec::new()
    };
    let partial = report.warnings.contains(&Warning::Partial);
    // A point as the warnings name it: "warm at 64 KiB", "write at 1 MiB".
    let op = report.op;
    let at = move |p: &SweepPoint| {
        format!(
            "{} at {}",
            p.cache.map_or(op.name(), |c| c.name()),
            crate::units::format_block_size(p.block_size)
        )
    };
    report.warnings = report
        .points
        .iter()
        .flat_map(|p| {
            let at = at(p);
            p.runs
                .iter()
                .flat_map(move |r| warning::of_sample(r, Some(at.clone())))
        })
        .collect();
    warning::allowing_unwritten(&mut report.warnings, report.allow_unwritten);
    // Repeated until stable, a point's spread is judged by its interval (and one that did
    // not settle says so); a fixed count's by the spread rule.
    let spread = warning::spread(
        report.until_stable,
        report
            .points
            .iter()
            .map(|p| (at(p), &p.rate, p.settled, p.runs.len())),
    );
    report.warnings.extend(spread);
    let interference = warning::interference(report.points.iter().flat_map(|p| {
        let at = at(p);
        p.runs
            .iter()
            .map(move |r| (Some(at.clone()), warning::Marks::from(r)))
    }));
    report.warnings.extend(interference);
    if crate::engine::by_name(&report.engine).is_some_and(|e| !e.caps().has(flag::COUNTED)) {
        report.warnings.push(Warning::NotCounted {
            engine: report.engine.clone(),
        });
    }
    if partial {
        report.warnings.push(Warning::Partial);
    }
}

fn median_of(values: Vec<f64>) -> f64 {
    stats::summarize(&values).map_or(0.0, |s| s.median)
}

/// A timed read and what checking its bytes in place found.
struct Checked(Sample, Option<InPlace>);

impl AsRef<Sample> for Checked {
    fn as_ref(&self) -> &Sample {
        &self.0
    }
}

impl AsRef<Sample> for Sample {
    fn as_ref(&self) -> &Sample {
        self
    }
}

fn point(
    block_size: u64,
    cache: Option<CacheState>,
    bytes: u64,
    runs: Vec<Sample>,
    stop: &Stopping,
) -> SweepPoint {
    let rates: Vec<f64> = runs.iter().map(Sample::bytes_per_second).collect();
    let resident: Vec<f64> = runs
        .iter()
        .filter_map(|r| {
            r.cache
                .and_then(|c| c.residency_before)
                .map(|x| x.fraction())
        })
        .collect();
    let resident_share_before = (!resident.is_empty()).then(|| Span {
        min: resident.iter().copied().fold(f64::MAX, f64::min),
        max: resident.iter().copied().fold(0.0, f64::max),
    });
    let state_ok = runs.iter().all(|r| r.cache.is_none_or(|c| c.ok()));
    let device: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.device.map(|d| d.read_bytes as f64))
        .collect();
    SweepPoint {
        block_size,
        cache,
        bytes,
        rate: stats::summarize(&rates).expect("at least one timed run per point"),
        without_fsync: crate::results::sweep::without_fsync_of(&runs),
        calls_per_second: median_of(runs.iter().map(Sample::calls_per_second).collect()),
        cpu_percent: median_of(runs.iter().map(|r| r.elapsed.cpu_percent()).collect()),
        resident_share_before,
        device_read_bytes: (!device.is_empty()).then(|| median_of(device) as u64),
        checks_ok: runs.iter().all(|r| r.checks.iter().all(|c| c.ok)),
        state_ok,
        in_place: None,
        latency: runs_latency(&runs),
        settled: stop.outcome(&rates),
        runs,
    }
}

/// The latency of every call of every run together; `None` unless each run timed its calls.
pub fn runs_latency(runs: &[Sample]) -> Option<Latency> {
    let each: Option<Vec<_>> = runs.iter().map(|r| r.call_times.as_ref()).collect();
    latency::merged(each?).and_then(|h| Latency::of(&h))
}

fn analyse(cache: Option<CacheState>, points: &[&SweepPoint]) -> Analysis {
    let best = points.iter().map(|p| p.rate.median).fold(0.0, f64::max);
    let knee = points
        .iter()
        .find(|p| p.rate.median >= 0.95 * best)
        .map_or(0, |p| p.block_size);
    let samples: Vec<model::Point> = points
        .iter()
        .flat_map(|p| p.runs.iter())
        .map(|r| model::Point {
            calls: r.moved.calls as f64,
            bytes: r.moved.bytes as f64,
            seconds: r.elapsed.seconds,
        })
        .collect();
    Analysis {
        cache,
        model: model::fit(&samples),
        best_bytes_per_second: best,
        knee_block_size: knee,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> SweepReport {
        serde_json::from_str(include_str!("../../tests/fixtures/sweep.json"))
            .expect("the sweep fixture")
    }

    #[test]
    fn runs_over_the_same_bytes_read_one_xor_across_points_or_the_check_fails() {
        let mut r = fixture();
        r.same_bytes = SameBytes::of(&r.points);
        assert_eq!(r.same_bytes.len(), 1);
        assert!(r.same_bytes[0].ok());
        let ok = r.ok();
        // One run of the last point read other data than every run before it.
        let last = r.points.len() - 1;
        r.points[last].runs[0].moved.xor ^= 1;
        r.same_bytes = SameBytes::of(&r.points);
        assert_eq!(r.same_bytes[0].xors.len(), 2);
        assert!(!r.ok());
        assert!(SameBytes::changed_in(&r.same_bytes, &r.points[last]));
        assert!(!SameBytes::changed_in(&r.same_bytes, &r.points[0]));
        // Runs over other bytes (a prefix, under --max-calls) are compared among themselves.
        r.points[last].runs[0].moved.xor ^= 1;
        for run in &mut r.points[0].runs {
            run.moved.bytes /= 2;
            run.moved.xor = 7;
        }
        r.same_bytes = SameBytes::of(&r.points);
        assert_eq!(r.same_bytes.len(), 2);
        assert!(r.same_bytes.iter().all(SameBytes::ok));
        assert_eq!(r.ok(), ok);
    }
}
