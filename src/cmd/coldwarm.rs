//! `cache`: the classic three columns — a cold read, an immediate warm read, a cold read
//! again — for each block size, with the residency and the device bytes that prove each
//! state. Cold runs evict the file with fadvise (no root), or drop every cache with
//! `--drop-caches` (root).

use crate::files::{self};
use crate::harness::{Harness, Sample, Target};
use crate::measure::cache::CacheState;
use crate::measure::converge::{Repeats, Stopping};
use crate::measure::diskstats;
use crate::measure::stats;
use crate::options::CacheOptions;
pub use crate::results::cache::{CacheReport, CacheRow, Cycle};
use crate::warning::{self, Warning};
use crate::workload::Op;
use crate::workload::plan::Plan;
use anyhow::Result;

/// Runs the three reads for every block size; `save` receives the report after each row.
pub fn execute(
    options: &CacheOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&CacheReport) -> Result<()>,
) -> Result<CacheReport> {
    let src = files::open_measurable(&options.path, "cache")?;
    let device = diskstats::device_of(&options.path);
    let target = Target {
        file: &src.file,
        name: &src.name,
        kind: src.kind,
        device: device.as_deref(),
    };
    let setup = options.setup;
    let mut report = CacheReport {
        file: src.name.clone(),
        file_bytes: src.len,
        engine: setup.engine.name().to_string(),
        drop_caches: options.drop_caches,
        device: device.clone(),
        rows: Vec::new(),
        complete: false,
        warnings: Vec::new(),
        allow_unwritten: options.allow_unwritten,
        caveats: Vec::new(),
    };
    let checked = options.block_sizes.iter().try_for_each(|&bs| {
        harness.check(target, &setup, Op::Read, Plan::sequential(0, src.len, bs))
    });
    if let Err(e) = checked {
        return partial_or(report, e);
    }
    for &bs in &options.block_sizes {
        let plan = Plan::sequential(0, src.len, bs);
        let run = |state: CacheState| -> Result<Sample> {
            if state == CacheState::Cold {
                harness.prepare(target, &plan, state, options.drop_caches)?;
            }
            harness.read(target, &setup, plan, false, state)
        };
        let measured = repeated(&options.runs, bs, || {
            Ok([
                run(CacheState::Cold)?,
                run(CacheState::Warm)?,
                run(CacheState::Cold)?,
            ])
        });
        let row = match measured {
            Ok(row) => row,
            Err(e) => return partial_or(report, e),
        };
        for (name, sample) in row.runs() {
            let at = format!("{name} at {}", crate::units::format_block_size(bs));
            let mut found = warning::of_sample(sample, Some(at));
            warning::allowing_unwritten(&mut found, report.allow_unwritten);
            report.warnings.extend(found);
        }
        report.rows.push(row);
        let interference = warning::interference(report.rows.iter().flat_map(|r| {
            r.runs().map(|(name, sample)| {
                let at = format!(
                    "{name} at {}",
                    crate::units::format_block_size(r.block_size)
                );
                (Some(at), warning::Marks::from(sample))
            })
        }));
        warning::set_interference(&mut report.warnings, interference);
        save(&report)?;
    }
    report.complete = true;
    report.warnings.extend(warning::unsettled(
        report.rows.iter().map(|r| {
            (
                format!(
                    "the reads at {}",
                    crate::units::format_block_size(r.block_size)
                ),
                r.settled,
                r.n(),
            )
        }),
        options.runs.precision,
    ));
    // The clock has stopped: what could make the cold figures wrong.
    if setup.engine.caps().has(crate::engine::flag::MOVES_BYTES) {
        report.caveats = super::caveats::of_read(
            &src.file,
            &options.path,
            0,
            src.len,
            report.rows.first().map(|r| &r.cold),
        );
        // The cold reads, the figures claimed for the device (the warm one is the cache's).
        let fastest = super::caveats::fastest(report.rows.iter().flat_map(|r| {
            let at = crate::units::format_block_size(r.block_size);
            [
                crate::results::cache::Read::Cold,
                crate::results::cache::Read::ColdAgain,
            ]
            .map(|read| {
                (
                    format!("the {} read at {at}", read.name()),
                    r.rate(read).median,
                )
            })
        }));
        report
            .caveats
            .push(super::caveats::link(&options.path, fastest));
    }
    Ok(report)
}

/// The cycles of one block size (cold, warm, cold again), as many as `stop` says: a count,
/// or until the median rate of each of the three reads is stable. The row keeps each read's
/// median run whole and every cycle's rates.
fn repeated(
    stop: &Stopping,
    block_size: u64,
    mut cycle: impl FnMut() -> Result<[Sample; 3]>,
) -> Result<CacheRow> {
    let mut cycles: Vec<[Sample; 3]> = Vec::new();
    // One count per read; each is charged the whole cycle's seconds, as a cycle is what
    // one more run of any read costs.
    let mut reads = [
        Repeats::new(*stop),
        Repeats::new(*stop),
        Repeats::new(*stop),
    ];
    let mut starts = crate::measure::cpus::Starts::new();
    while reads.iter().any(Repeats::more) {
        starts.next();
        let c = cycle()?;
        let seconds = c.iter().map(|s| s.elapsed.seconds).sum::<f64>();
        for (read, sample) in reads.iter_mut().zip(&c) {
            read.push_marked(
                sample.bytes_per_second(),
                seconds,
                crate::warning::Marks::from(sample).interfered(),
            );
        }
        cycles.push(c);
    }
    // The least settled of the three reads speaks for the row.
    let settled = reads.iter().filter_map(Repeats::outcome).min_by(|a, b| {
        (a.settled, -a.half_width.unwrap_or(f64::INFINITY))
            .partial_cmp(&(b.settled, -b.half_width.unwrap_or(f64::INFINITY)))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let figures: Vec<Cycle> = if cycles.len() > 1 {
        cycles
            .iter()
            .map(|c| Cycle {
                cold: c[0].bytes_per_second(),
                warm: c[1].bytes_per_second(),
                cold_again: c[2].bytes_per_second(),
            })
            .collect()
    } else {
        Vec::new()
    };
    // Each read's median run (the lower of the two middle ones for an even count); a run
    // whose checks or cache proof failed is kept instead, so no failure hides in a median.
    let median = |i: usize| -> Sample {
        if let Some(failed) = cycles.iter().find(|c| !c[i].ok()) {
            return failed[i].clone();
        }
        let middle = stats::median_index_by(cycles.len(), |k| cycles[k][i].bytes_per_second())
            .expect("at least one cycle");
        cycles[middle][i].clone()
    };
    Ok(CacheRow {
        block_size,
        cold: median(0),
        warm: median(1),
        cold_again: median(2),
        cycles: figures,
        settled,
    })
}

/// Ctrl-C at any moment, before the first row too: the rows so far (maybe none) are the
/// result (exit 130), as for sweep. Any other error is the error.
fn partial_or(mut report: CacheReport, e: anyhow::Error) -> Result<CacheReport> {
    if crate::error::exit_kind(&e) == crate::error::ExitKind::Interrupted {
        report.warnings.push(Warning::Partial);
        Ok(report)
    } else {
        Err(e)
    }
}
