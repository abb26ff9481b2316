//! `cache`: the classic three columns — a cold read, an immediate warm read, a cold read
//! again — for each block size, with the residency and the device bytes that prove each
//! state. Cold runs evict the file with fadvise (no root), or drop every cache with
//! `--drop-caches` (root).

use crate::files::{self};
use crate::harness::{Harness, Sample, Target};
use crate::measure::cache::CacheState;
use crate::measure::diskstats;
use crate::options::CacheOptions;
pub use crate::results::cache::{CacheReport, CacheRow};
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
        let measured = (|| {
            Ok::<_, anyhow::Error>(CacheRow {
                block_size: bs,
                cold: run(CacheState::Cold)?,
                warm: run(CacheState::Warm)?,
                cold_again: run(CacheState::Cold)?,
            })
        })();
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
    // The clock has stopped: what could make the cold figures wrong.
    if setup.engine.caps().has(crate::engine::flag::MOVES_BYTES) {
        report.caveats = super::caveats::of_read(
            &src.file,
            &options.path,
            0,
            src.len,
            report.rows.first().map(|r| &r.cold),
        );
    }
    Ok(report)
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
