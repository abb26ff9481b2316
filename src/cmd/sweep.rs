//! `sweep`: throughput against block size. For every block size and cache state: warm-up
//! runs, then repeated timed runs, each with residency, kernel counters and device counters;
//! then the cost model `time = calls × c_call + bytes / bandwidth` fitted per cache state.

use super::harness::{self, Sample, State, Subject};
use crate::cli::Op;
use crate::error::input;
use crate::files::{self, CreatePolicy, InputKind};
use crate::measure::diskstats;
use crate::measure::model::{self, CostModel};
use crate::measure::stats::{self, Summary};
use crate::options::SweepOptions;
use crate::units::format_size;
use crate::workload::data::fresh_seed;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// One block size in one cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Bytes per call.
    pub block_size: u64,
    /// Cache state (reads only).
    pub cache: Option<State>,
    /// Bytes per run.
    pub bytes: u64,
    /// Rate of the timed runs, bytes per second.
    pub rate: Summary,
    /// Calls per second, median over runs.
    pub calls_per_second: f64,
    /// CPU time over wall time, median, percent.
    pub cpu_percent: f64,
    /// Lowest and highest residency before the runs (reads).
    pub resident_before: Option<(f64, f64)>,
    /// Bytes the device read during a run, median (all processes).
    pub device_read_bytes: Option<u64>,
    /// Whether every run agreed with /proc/self/io.
    pub checks_ok: bool,
    /// Whether every run started in its cache state (warm >= 99%, cold <= 5% resident).
    pub state_ok: bool,
    /// Every timed run.
    pub runs: Vec<Sample>,
}

/// The model and what it says, for one cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Analysis {
    /// Cache state (reads only).
    pub cache: Option<State>,
    /// The fitted cost model, when the data fit one.
    pub model: Option<CostModel>,
    /// Best median rate over the block sizes, bytes per second.
    pub best_bytes_per_second: f64,
    /// Smallest block size whose median rate is within 5% of the best.
    pub knee_block_size: u64,
    /// One sentence on the curve.
    pub explanation: String,
}

/// The sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepReport {
    /// The file.
    pub file: String,
    /// Read or write.
    pub op: Op,
    /// Its size (reads) or the bytes written per run.
    pub file_bytes: u64,
    /// Timed runs per point.
    pub repeat: usize,
    /// Untimed runs per point.
    pub warmup: usize,
    /// Whether cold runs dropped the global page cache.
    pub drop_caches: bool,
    /// The block device behind the file, if any.
    pub device: Option<String>,
    /// Every point, by cache state then block size.
    pub points: Vec<SweepPoint>,
    /// One analysis per cache state.
    pub analyses: Vec<Analysis>,
}

fn run_bytes(options: &SweepOptions, total: u64, bs: u64) -> u64 {
    match options.max_calls {
        Some(cap) if bs.saturating_mul(cap) < total => bs * cap,
        _ => total,
    }
}

/// Runs the sweep.
pub fn execute(options: &SweepOptions) -> Result<SweepReport> {
    let device = diskstats::device_of(&options.path)
        .or_else(|| diskstats::device_of(&files::parent_dir(&options.path)));
    let mut points = Vec::new();
    let (name, file_bytes) = match options.op {
        Op::Read => {
            let src = files::open_regular(&options.path, "sweep")?;
            if src.kind != InputKind::Regular || src.len == 0 {
                return Err(input(format!(
                    "sweep {}: needs a non-empty regular file",
                    src.name
                )));
            }
            let subject = Subject {
                file: &src.file,
                name: &src.name,
                device: device.as_deref(),
            };
            for &state in &options.states {
                for &bs in &options.block_sizes {
                    let bytes = run_bytes(options, src.len, bs);
                    let mut buf = super::touched_buffer(bs);
                    let mut runs = Vec::new();
                    for i in 0..options.warmup + options.repeat {
                        harness::prepare(subject, bytes, state, options.drop_caches)?;
                        let sample =
                            harness::timed_read(subject, buf.as_mut_slice(), bytes, Some(state))?;
                        if i >= options.warmup {
                            runs.push(sample);
                        }
                    }
                    points.push(point(bs, Some(state), bytes, runs));
                }
            }
            (src.name, src.len)
        }
        Op::Write => {
            let largest = options
                .block_sizes
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
            let seed = fresh_seed();
            for &bs in &options.block_sizes {
                let bytes = run_bytes(options, options.size, bs);
                let mut buf = super::touched_buffer(bs.min(bytes));
                let mut runs = Vec::new();
                for i in 0..options.warmup + options.repeat {
                    let sample = harness::timed_write(
                        &out,
                        device.as_deref(),
                        buf.as_mut_slice(),
                        bytes,
                        seed,
                    )?;
                    if i >= options.warmup {
                        runs.push(sample);
                    }
                }
                points.push(point(bs, None, bytes, runs));
            }
            let name = out.name().to_string();
            out.finish();
            (name, options.size)
        }
    };
    let mut analyses = Vec::new();
    let states: Vec<Option<State>> = match options.op {
        Op::Read => options.states.iter().copied().map(Some).collect(),
        Op::Write => vec![None],
    };
    for state in states {
        let these: Vec<&SweepPoint> = points.iter().filter(|p| p.cache == state).collect();
        analyses.push(analyse(state, options.op, &these));
    }
    Ok(SweepReport {
        file: name,
        op: options.op,
        file_bytes,
        repeat: options.repeat,
        warmup: options.warmup,
        drop_caches: options.drop_caches,
        device,
        points,
        analyses,
    })
}

fn median_of(values: Vec<f64>) -> f64 {
    stats::summarize(&values).map_or(0.0, |s| s.median)
}

fn point(block_size: u64, cache: Option<State>, bytes: u64, runs: Vec<Sample>) -> SweepPoint {
    let rates: Vec<f64> = runs.iter().map(Sample::bytes_per_second).collect();
    let resident: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.residency_before.map(|x| x.fraction()))
        .collect();
    let resident_before = (!resident.is_empty()).then(|| {
        (
            resident.iter().copied().fold(f64::MAX, f64::min),
            resident.iter().copied().fold(0.0, f64::max),
        )
    });
    let state_ok = match (cache, resident_before) {
        (Some(State::Warm), Some((lo, _))) => lo >= 0.99,
        (Some(State::Cold), Some((_, hi))) => hi <= 0.05,
        _ => true,
    };
    let device: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.device.map(|d| d.read_bytes as f64))
        .collect();
    SweepPoint {
        block_size,
        cache,
        bytes,
        rate: stats::summarize(&rates).expect("at least one timed run per point"),
        calls_per_second: median_of(runs.iter().map(Sample::calls_per_second).collect()),
        cpu_percent: median_of(runs.iter().map(|r| r.elapsed.cpu_percent()).collect()),
        resident_before,
        device_read_bytes: (!device.is_empty()).then(|| median_of(device) as u64),
        checks_ok: runs.iter().all(|r| r.checks.iter().all(|c| c.ok)),
        state_ok,
        runs,
    }
}

fn analyse(cache: Option<State>, op: Op, points: &[&SweepPoint]) -> Analysis {
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
    let model = model::fit(&samples);
    let call = if op == Op::Read { "read()" } else { "write()" };
    let explanation = match model {
        Some(m) => format!(
            "Each {call} costs about {} whatever its size (at most {} calls/s) and bytes move at about {}; below {} per call the fixed cost dominates, and from {} up the rate is within 5% of its best ({}).",
            crate::units::format_seconds(m.seconds_per_call),
            crate::units::group_thousands((1.0 / m.seconds_per_call) as u64),
            crate::units::format_mib_per_s(m.bytes_per_second),
            format_size(m.break_even_block().max(1.0) as u64),
            format_size(knee),
            crate::units::format_mib_per_s(best),
        ),
        None => format!(
            "The times do not fit a fixed cost per call plus a cost per byte (too few points, or noise); from {} up the rate is within 5% of its best ({}).",
            format_size(knee),
            crate::units::format_mib_per_s(best),
        ),
    };
    Analysis {
        cache,
        model,
        best_bytes_per_second: best,
        knee_block_size: knee,
        explanation,
    }
}
