//! `run`: read a file with BS-sized calls, or write one with BS-sized calls and an fsync,
//! through an engine from the table (block-sized read()/write() by default), and report
//! the checksum, rates and the kernel's own counts.

use super::inplace;
use crate::engine::flag;
use crate::files::{self, CreatePolicy, InputKind};
use crate::harness::{Harness, Sample, Target};
use crate::measure::cache::CacheState;
use crate::measure::diskstats::{self};
use crate::measure::series::{Clock, OverTime, Series};
use crate::measure::writeback::DirtyLimits;
use crate::options::{RunMode, RunOptions};
pub use crate::results::run::RunReport;
use crate::warning::{self, Warning};
use crate::workload::Op;
use crate::workload::plan::Plan;
use crate::workload::verify::Written;
use anyhow::Result;

/// What a run with `--series` had measured when it was interrupted: carried on the
/// interruption's error, so that the series file and the JSON document keep the intervals
/// (as `disk` keeps the rows it finished) instead of losing them.
#[derive(Debug)]
pub struct SeriesSoFar {
    /// The panel's name, as a finished run's (`write FILE`).
    pub label: String,
    /// The intervals measured before the interruption.
    pub over_time: OverTime,
}

impl std::fmt::Display for SeriesSoFar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: interrupted after {} interval(s) of its series",
            self.label,
            self.over_time.intervals.len()
        )
    }
}

/// Runs `work` with a series recorded on this thread (and the engine threads it starts)
/// when `--series` was given; `write` adds the write-back check. Interrupted, the intervals
/// measured so far go with the error ([`SeriesSoFar`], `label` its name).
fn over_time<T>(
    options: &RunOptions,
    device: Option<&str>,
    write: bool,
    label: impl FnOnce() -> String,
    work: impl FnOnce() -> Result<T>,
) -> Result<(T, Option<OverTime>)> {
    let Some(asked) = &options.series else {
        return work().map(|t| (t, None));
    };
    let limits = if write { DirtyLimits::read() } else { None };
    let series = Series::start(asked.interval, Clock::Ticks, device);
    let entered = series.recorder().enter();
    let result = work();
    drop(entered);
    let intervals = series.finish();
    let over_time = OverTime::of(intervals, asked.interval, write, limits);
    match result {
        Ok(t) => Ok((t, Some(over_time))),
        Err(e)
            if crate::error::exit_kind(&e) == crate::error::ExitKind::Interrupted
                && !over_time.intervals.is_empty() =>
        {
            Err(e.context(SeriesSoFar {
                label: label(),
                over_time,
            }))
        }
        Err(e) => Err(e),
    }
}

/// Runs `run` as the options say.
pub fn execute(options: &RunOptions, harness: &Harness) -> Result<RunReport> {
    match options.mode {
        RunMode::Read { limit, seed } => read(options, harness, limit, seed),
        RunMode::Write { bytes, seed } => write(options, harness, bytes, seed),
    }
}

/// `run --repeat N`: N runs, each measured the same way; the result is the run whose rate
/// is the median, with every run's rate. A write rewrites the file the first run created
/// (its own); a file that existed before is rewritten only with `--force`, as one run's.
/// A run whose checks failed is the result, so a failure is never hidden by the median.
pub fn execute_repeated(options: &RunOptions, harness: &Harness) -> Result<RunReport> {
    if options.repeat <= 1 {
        return execute(options, harness);
    }
    let mut o = options.clone();
    let existed = std::fs::symlink_metadata(&options.path).is_ok();
    let mut reports: Vec<RunReport> = Vec::with_capacity(options.repeat);
    for _ in 0..options.repeat {
        let r = execute(&o, harness)?;
        if matches!(o.mode, RunMode::Write { .. }) && !existed {
            o.force = true;
        }
        reports.push(r);
    }
    let rates: Vec<f64> = reports.iter().map(|r| r.bytes_per_second).collect();
    let pick = reports
        .iter()
        .position(|r| !r.ok())
        .unwrap_or_else(|| crate::measure::baseline::median_index(&rates));
    let mut warnings: Vec<Warning> = Vec::new();
    for w in reports.iter().flat_map(|r| r.warnings.iter()) {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    let mut report = reports.swap_remove(pick);
    report.warnings = warnings;
    report.repeats = rates;
    Ok(report)
}

fn read(
    options: &RunOptions,
    harness: &Harness,
    limit: Option<u64>,
    seed: Option<u64>,
) -> Result<RunReport> {
    let input = files::open_input(&options.path, options.allow_device)?;
    let sized = input.kind == InputKind::Regular && input.pseudo.is_none();
    if seed.is_some() && !sized {
        return Err(crate::error::input(format!(
            "read {}: --seed verifies the bytes in place by reading them again after the timing; only a regular file can be read again",
            input.name
        )));
    }
    let len = match (limit, sized) {
        (Some(l), true) => l.min(input.len),
        (Some(l), false) => l,
        (None, true) => input.len,
        (None, false) => 0,
    };
    let device = sized.then(|| diskstats::device_of(&options.path)).flatten();
    let target = Target {
        file: &input.file,
        name: &input.name,
        kind: input.kind,
        device: device.as_deref(),
    };
    let setup = options.setup;
    let plan = Plan::sequential(input.start, len, options.block_size);
    // A count past the end reads to EOF (the call that finds it is counted), as dd does.
    let to_end = match limit {
        // A regular file known to be empty has nothing to read: every engine gives 00000000
        // (the classic read() still makes its one call that finds the end).
        None => !(sized && input.len == 0 && setup.engine.caps().has(flag::SIZED)),
        Some(l) => sized && l > input.len,
    };
    harness.check(target, &setup, Op::Read, plan)?;
    let label = || format!("{} {}", Op::Read.name(), input.name);
    let (sample, series) = over_time(options, device.as_deref(), false, label, || {
        harness.read(target, &setup, plan, to_end, CacheState::AsIs)
    })?;
    // Engines that read by offset leave the position alone; move it as read() would.
    input.finish(sample.moved.bytes)?;
    // The clock has stopped: every byte read is checked where it lay.
    let in_place = match seed {
        Some(seed) if setup.engine.caps().has(flag::MOVES_BYTES) => Some(inplace::verify(
            harness,
            &input.file,
            &input.name,
            std::iter::once((input.start, sample.moved.bytes)),
            Written::Stream(seed),
            options.block_size,
        )?),
        _ => None,
    };
    // The clock has stopped: what could make the figure wrong (this reads a few blocks).
    let caveats = if sized && setup.engine.caps().has(flag::MOVES_BYTES) {
        let mut caveats = super::caveats::of_read(
            &input.file,
            &options.path,
            input.start,
            sample.moved.bytes,
            Some(&sample),
        );
        let figure = ("the read".to_string(), sample.bytes_per_second());
        caveats.push(super::caveats::link(&options.path, Some(figure)));
        caveats
    } else {
        Vec::new()
    };
    let mut report = report(
        options,
        input.name,
        Op::Read,
        Some(input.kind),
        seed,
        sample,
    );
    // BLOCK_COUNT blocks asked, fewer found before the end: said, not a smaller figure alone.
    if let (Some(asked), Some(block_count)) = (limit, options.block_count)
        && report.moved.bytes < asked
    {
        report.warnings.insert(
            0,
            Warning::ShortRead {
                file: report.file.clone(),
                read: report.moved.bytes,
                block_size: options.block_size,
                block_count,
            },
        );
    }
    report.in_place = in_place;
    report.over_time = series;
    report.caveats = caveats;
    Ok(report)
}

fn write(options: &RunOptions, harness: &Harness, bytes: u64, seed: u64) -> Result<RunReport> {
    let output = files::create_output(
        &options.path,
        bytes,
        CreatePolicy {
            force: options.force,
            allow_device: options.allow_device,
            min_free: options.min_free,
        },
    )?;
    let setup = options.setup;
    let plan = Plan::sequential(0, bytes, options.block_size.min(bytes).max(1));
    let device = diskstats::device_of(output.path());
    let target = Target {
        file: output.file(),
        name: output.name(),
        kind: output.kind(),
        device: device.as_deref(),
    };
    harness.check(target, &setup, Op::Write, plan)?;
    let label = || format!("{} {}", Op::Write.name(), output.name());
    let (sample, series) = over_time(options, device.as_deref(), true, label, || {
        harness.write(&output, device.as_deref(), &setup, plan, seed, false)
    })?;
    let name = output.name().to_string();
    // Beside a figure that includes an fsync (a FIFO or a device written has none).
    let mut caveats = if setup.engine.caps().has(flag::MOVES_BYTES)
        && sample.fsync_seconds.is_some()
        && output.kind() == InputKind::Regular
    {
        let mut caveats =
            super::caveats::of_write(output.file(), output.path(), bytes, sample.fsync_seconds);
        let figure = ("the write".to_string(), sample.bytes_per_second());
        caveats.push(super::caveats::link(output.path(), Some(figure)));
        caveats
    } else {
        Vec::new()
    };
    // The write-back check (`--series`) joins them: one block says what could make it wrong.
    if let Some(o) = &series {
        caveats.extend(
            o.checks
                .iter()
                .cloned()
                .map(crate::measure::caveat::write_back),
        );
    }
    output.finish()?;
    let mut report = report(options, name, Op::Write, None, Some(seed), sample);
    report.over_time = series;
    report.caveats = caveats;
    Ok(report)
}

fn report(
    options: &RunOptions,
    file: String,
    op: Op,
    input_kind: Option<InputKind>,
    seed: Option<u64>,
    sample: Sample,
) -> RunReport {
    let mut warnings = warning::of_sample(&sample, None);
    warnings.extend(warning::interference([(
        None,
        warning::Marks::from(&sample),
    )]));
    let caps = options.setup.engine.caps();
    if !caps.has(flag::COUNTED) {
        warnings.push(Warning::NotCounted {
            engine: options.setup.engine.name().to_string(),
        });
    }
    let seconds = sample.elapsed.seconds;
    RunReport {
        file,
        op,
        input_kind,
        engine: options.setup.engine.name().to_string(),
        moves_bytes: caps.has(flag::MOVES_BYTES),
        block_size: options.block_size,
        block_count: options.block_count,
        moved: sample.moved,
        xor_hex: crate::checksum::hex(sample.moved.xor),
        seed,
        seconds,
        bytes_per_second: sample.bytes_per_second(),
        calls_per_second: sample.calls_per_second(),
        write_seconds: sample.fsync_seconds.map(|f| seconds - f),
        fsync_seconds: sample.fsync_seconds,
        elapsed: sample.elapsed,
        cache: sample.cache,
        kernel: sample.kernel,
        device: sample.device,
        other_io_bytes: sample.other_io_bytes,
        pressure: sample.pressure,
        checks: sample.checks,
        in_place: None,
        latency: sample.latency,
        over_time: None,
        warnings,
        caveats: Vec::new(),
        repeats: Vec::new(),
    }
}
