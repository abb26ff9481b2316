//! `disk --rate`: one row in an open loop. I/Os arrive on a schedule at the rate asked
//! ([`crate::workload::arrivals`]) whatever the device does, each timed from its intended
//! start (response) and from its submission (service) by the harness's paced loop
//! ([`crate::harness::queue::run_paced`]), through the panel's own row runner (the queue
//! engine, O_DIRECT, its fallbacks, its checks and the device's view). A rate in percent is
//! of the peak a closed-loop run of the same row at its full depth finds first. With a
//! latency target, the steps are followed by a bisection between the highest that held it
//! and the lowest above that did not.

use crate::cmd::disk::{Asked, Target, ended, header, prepare, run_repeated};
use crate::harness::Harness;
use crate::options::DiskOptions;
use crate::options::disk::{Rate, RateOptions};
use crate::results::disk::DiskRow;
pub use crate::results::disk_rates::{RateSearch, RateStep, RatesReport};
use crate::workload::arrivals::Pace;
use crate::workload::panel::RowSpec;
use anyhow::Result;

/// The most runs the search adds between two steps.
pub const SEARCH_RUNS: usize = 4;

/// The search stops when the rates that hold and fail are this close (a share of the
/// higher).
pub const SEARCH_RESOLUTION: f64 = 0.02;

/// Runs the peak (when needed), the rates, and the search; `save` gets the report after
/// every run.
pub fn execute(
    options: &DiskOptions,
    rates: &RateOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&RatesReport) -> Result<()>,
) -> Result<RatesReport> {
    let (target, seed, fill_seconds) = prepare(options)?;
    let device_name = crate::measure::diskstats::device_of(&target.fd_path());
    let mut report = RatesReport {
        header: header(&target, seed, device_name.clone(), options),
        ramp_seconds: options.ramp.as_secs_f64(),
        fill_seconds,
        spec: rates.spec,
        arrivals: rates.arrivals,
        peak: None,
        steps: Vec::new(),
        search: None,
        complete: false,
        warnings: Vec::new(),
    };
    let run = |t: &Target, spec: RowSpec, label: &str| -> Result<DiskRow> {
        run_repeated(
            t,
            &Asked {
                spec,
                seed,
                runtime: options.runtime,
                ramp: options.ramp,
                repeat: options.repeat,
                best: false,
                device: device_name.as_deref(),
                series: None,
                label,
            },
            harness,
        )
    };
    let paced = |iops: f64| RowSpec {
        pace: Some(Pace {
            iops,
            arrivals: rates.arrivals,
        }),
        ..rates.spec
    };
    let mut run_all = || -> Result<()> {
        if rates.needs_peak() {
            report.peak = Some(run(&target, rates.spec, " (closed-loop peak)")?);
            save(&report)?;
        }
        let peak = report.peak_iops();
        for &asked in &rates.steps {
            let iops = match asked {
                Rate::Iops(v) => v,
                Rate::Percent(p) => (peak.unwrap_or(0.0) * p / 100.0).max(1.0),
            };
            let label = format!(" at {}", crate::units::format_rate_iops(iops));
            let row = run(&target, paced(iops), &label)?;
            report.steps.push(RateStep { asked, row });
            save(&report)?;
        }
        if let Some(goal) = rates.target {
            report.search = Some(RateSearch {
                target: goal,
                steps: Vec::new(),
                holds_up_to: None,
                fails_at: None,
            });
            for _ in 0..=SEARCH_RUNS {
                let all = report.all_steps();
                let lo = all
                    .iter()
                    .rev()
                    .find(|s| s.holds(goal))
                    .map(|s| s.asked_iops());
                let hi = all
                    .iter()
                    .find(|s| !s.holds(goal) && lo.is_none_or(|l| s.asked_iops() > l))
                    .map(|s| s.asked_iops());
                let s = report.search.as_mut().expect("set just above");
                s.holds_up_to = lo;
                s.fails_at = hi;
                let (Some(lo), Some(hi)) = (lo, hi) else {
                    break;
                };
                if hi - lo <= SEARCH_RESOLUTION * hi || s.steps.len() == SEARCH_RUNS {
                    break;
                }
                let mid = ((lo + hi) / 2.0).round();
                let label = format!(" at {} (search)", crate::units::format_rate_iops(mid));
                let row = run(&target, paced(mid), &label)?;
                let s = report.search.as_mut().expect("set just above");
                s.steps.push(RateStep {
                    asked: Rate::Iops(mid),
                    row,
                });
                save(&report)?;
            }
            save(&report)?;
        }
        Ok(())
    };
    let outcome = run_all();
    let rows: Vec<DiskRow> = report
        .peak
        .iter()
        .cloned()
        .chain(report.all_steps().into_iter().map(|s| s.row.clone()))
        .collect();
    report.complete = ended(outcome, &mut report.warnings, None, &rows, |r| {
        match &r.open {
            Some(o) => crate::units::format_rate_iops(o.asked_iops),
            None => "the peak".to_string(),
        }
    })?;
    let mut target = target;
    report.header.kept = target.keep(options.keep && report.complete);
    Ok(report)
}
