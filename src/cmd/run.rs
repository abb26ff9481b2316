//! `run`: read a file with BS-sized calls, or write one with BS-sized calls and an fsync,
//! through an engine from the table (block-sized read()/write() by default), and report
//! the checksum, rates and the kernel's own counts.

use super::inplace;
use crate::engine::Moved;
use crate::engine::flag;
use crate::files::{self, CreatePolicy, InputKind};
use crate::harness::{Harness, Sample, Target};
use crate::measure::cache::{CacheProof, CacheState};
use crate::measure::caveat::Caveat;
use crate::measure::checks::Check;
use crate::measure::diskstats::{self, DiskDelta};
use crate::measure::latency::Latency;
use crate::measure::procio::ProcIo;
use crate::measure::series::{Clock, OverTime, Series};
use crate::measure::timer::Elapsed;
use crate::measure::writeback::DirtyLimits;
use crate::options::{RunMode, RunOptions};
use crate::units::per_second;
use crate::warning::{self, Warning};
use crate::workload::Op;
use crate::workload::plan::Plan;
use crate::workload::verify::{InPlace, Written};
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// Everything `run` measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// The file as the user named it (`stdin` for `-`).
    pub file: String,
    /// Read or write.
    pub op: Op,
    /// What kind of file it was (reads).
    pub input_kind: Option<InputKind>,
    /// The engine that moved the bytes.
    pub engine: String,
    /// Whether the engine moves real bytes (false for `null`).
    pub moves_bytes: bool,
    /// Bytes per call.
    pub block_size: u64,
    /// Calls asked for, when given.
    pub block_count: Option<u64>,
    /// Bytes moved, calls made and the checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed: 8 hex digits.
    pub xor_hex: String,
    /// Seed of the written data.
    pub seed: Option<u64>,
    /// Headline seconds: for writes this includes the final fsync.
    pub seconds: f64,
    /// Headline rate (bytes / seconds).
    pub bytes_per_second: f64,
    /// System calls per second over the headline time.
    pub calls_per_second: f64,
    /// Time of the write calls alone (writes).
    pub write_seconds: Option<f64>,
    /// Time of the final fsync (writes).
    pub fsync_seconds: Option<f64>,
    /// Wall and CPU time of the whole timed region.
    pub elapsed: Elapsed,
    /// Residency before a read of a regular file, and the device bytes (no state is asked
    /// for: `run` reads the file as it is).
    pub cache: Option<CacheProof>,
    /// The kernel's counts over the timed region (`/proc/self/io`).
    pub kernel: Option<ProcIo>,
    /// The device's counts over the timed region (`/proc/diskstats`, all processes), when
    /// a block device is behind the file.
    pub device: Option<DiskDelta>,
    /// Claims compared with the kernel's counts.
    pub checks: Vec<Check>,
    /// Reads with `--seed`: every byte read checked in place against the generator, after
    /// the timed read (its seconds in no other figure).
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<InPlace>,
    /// The time of each data call, in nanoseconds (engines that make one call per block,
    /// without `--no-latency`).
    #[serde(
        default,
        rename = "latency_ns",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency: Option<Latency>,
    /// The run over time (`--series`): per-interval figures, the steady state and, for a
    /// write, the write-back check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_time: Option<OverTime>,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// What could make this figure wrong: the file's extents and compression (reads of a
    /// regular file), the device's write cache (writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<Caveat>,
}

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

impl RunReport {
    /// Rate without the fsync, for writes.
    pub fn bytes_per_second_before_fsync(&self) -> Option<f64> {
        self.write_seconds.map(|s| per_second(self.moved.bytes, s))
    }

    /// Whether every check held and every byte verified was in place.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok) && self.in_place.is_none_or(|v| v.ok())
    }
}

/// Runs `run` as the options say.
pub fn execute(options: &RunOptions, harness: &Harness) -> Result<RunReport> {
    match options.mode {
        RunMode::Read { limit, seed } => read(options, harness, limit, seed),
        RunMode::Write { bytes, seed } => write(options, harness, bytes, seed),
    }
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
        super::caveats::of_read(
            &input.file,
            &options.path,
            input.start,
            sample.moved.bytes,
            Some(&sample),
        )
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
        super::caveats::of_write(output.file(), output.path(), bytes, sample.fsync_seconds)
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
        checks: sample.checks,
        in_place: None,
        latency: sample.latency,
        over_time: None,
        warnings,
        caveats: Vec::new(),
    }
}
