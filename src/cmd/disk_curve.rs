//! `disk --depth-curve` and `disk --latency-target`: one row (random 4 KiB reads unless
//! `--rw`/`--bs` say otherwise) run at several queue depths on the panel's test file, each
//! for `--runtime`, through the panel's own row runner (the queue engine, O_DIRECT, its fallbacks,
//! its latency histogram and the device's view). The curve's knee is found by
//! [`crate::measure::knee::knee`]. The search for the deepest queue whose latency
//! percentile stays under a target bisects over the depths as fio's `latency_target` does
//! its ramp: each step one short run, every step kept as evidence; a depth the curve
//! already measured is not run again.

use crate::cmd::disk::{Asked, Target, ended, header, prepare, run_repeated};
use crate::harness::Harness;
use crate::measure::converge::Stopping;
use crate::measure::percentile::Target as LatencyTarget;
use crate::options::DiskOptions;
use crate::options::disk::CurveOptions;
use crate::results::disk::DiskRow;
pub use crate::results::disk_curve::{CurveReport, Search, Step, curve_points, knee_of, pick};
use crate::workload::panel::RowSpec;
use anyhow::Result;

/// Bisects `depths` (ascending) for the deepest whose percentile stays at or under the
/// target, assuming the latency rises with depth: each step `measure`s one depth; the
/// result keeps every step. `measured` gives a depth's run when it is known already.
pub fn search(
    depths: &[usize],
    target: LatencyTarget,
    measured: &dyn Fn(usize) -> Option<DiskRow>,
    measure: &mut dyn FnMut(usize) -> Result<DiskRow>,
    steps: &mut Vec<Step>,
) -> Result<Option<usize>> {
    let (mut lo, mut hi) = (0usize, depths.len());
    let mut best = None;
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let depth = depths[mid];
        let (row, from_curve) = match measured(depth) {
            Some(row) => (row, true),
            None => (measure(depth)?, false),
        };
        let value_us = pick(&row.latency_us, target.percentile);
        let under = value_us <= target.limit_us;
        steps.push(Step {
            depth,
            value_us,
            under,
            from_curve,
            row,
        });
        if under {
            best = Some(depth);
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    Ok(best)
}

/// Runs the curve and/or the search; `save` gets the report after every run.
pub fn execute(
    options: &DiskOptions,
    curve: &CurveOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&CurveReport) -> Result<()>,
) -> Result<CurveReport> {
    let (target, seed, fill_seconds) = prepare(options)?;
    let device_name = crate::measure::diskstats::device_of(&target.fd_path());
    let mut report = CurveReport {
        header: header(&target, seed, device_name.clone(), options),
        fill_seconds,
        spec: curve.spec,
        points: Vec::new(),
        knee_depth: None,
        search: None,
        complete: false,
        warnings: Vec::new(),
    };
    // The curve's points are repeated (`--repeat`), the search's steps run once each.
    let run = |t: &Target, depth: usize, label: &str, repeat: Stopping| -> Result<DiskRow> {
        let spec = RowSpec {
            depth,
            ..curve.spec
        };
        run_repeated(
            t,
            &Asked {
                spec,
                seed,
                runtime: options.runtime,
                ramp: options.ramp,
                repeat,
                best: false,
                device: device_name.as_deref(),
                series: None,
                label: &format!(" {label}"),
            },
            harness,
        )
    };
    let mut run_all = || -> Result<()> {
        if curve.sweep {
            for &depth in &curve.depths {
                let row = run(&target, depth, "(curve)", options.repeat)?;
                report.points.push(row);
                report.knee_depth = knee_of(&report.points);
                save(&report)?;
            }
        }
        if let Some(goal) = curve.target {
            report.search = Some(Search {
                target: goal,
                depths: curve.depths.clone(),
                steps: Vec::new(),
                depth: None,
                iops: None,
                value_us: None,
            });
            let points = report.points.clone();
            let known = |depth: usize| points.iter().find(|r| r.spec.depth == depth).cloned();
            let mut steps = Vec::new();
            let found = search(
                &curve.depths,
                goal,
                &known,
                &mut |depth| run(&target, depth, "(search)", Stopping::fixed(1)),
                &mut steps,
            );
            let s = report.search.as_mut().expect("set just above");
            s.steps = steps;
            let found = found?;
            s.depth = found;
            let answer = s.found().map(|st| (st.row.iops, st.value_us));
            s.iops = answer.map(|a| a.0);
            s.value_us = answer.map(|a| a.1);
            save(&report)?;
        }
        Ok(())
    };
    report.complete = ended(run_all(), &mut report.warnings, None, &report.points, |r| {
        format!("depth {}", r.spec.depth)
    })?;
    report.warnings.extend(crate::warning::unsettled(
        report
            .points
            .iter()
            .map(|r| (format!("depth {}", r.spec.depth), r.settled, r.n())),
        options.repeat.precision,
    ));
    let mut target = target;
    report.header.kept = target.keep(options.keep && report.complete);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::percentile::Percentile;
    use crate::workload::Op;
    use std::cell::RefCell;

    /// A run at `depth` whose p99 and IOPS come from the made-up device `f`.
    fn fake(depth: usize, f: &dyn Fn(usize) -> (f64, f64)) -> DiskRow {
        let (iops, p99) = f(depth);
        DiskRow::made_up(Op::Read, depth, iops, p99 / 2.0, p99)
    }

    const P99_2MS: LatencyTarget = LatencyTarget {
        limit_us: 2000.0,
        percentile: Percentile::P99,
    };

    /// Runs the search on device `f` over 1..128, counting the runs it asked for.
    fn searched(f: &dyn Fn(usize) -> (f64, f64)) -> (Option<usize>, Vec<Step>, Vec<usize>) {
        let ran = RefCell::new(Vec::new());
        let mut steps = Vec::new();
        let found = search(
            &crate::options::disk::DEFAULT_DEPTHS,
            P99_2MS,
            &|_| None,
            &mut |d| {
                ran.borrow_mut().push(d);
                Ok(fake(d, f))
            },
            &mut steps,
        )
        .unwrap();
        (found, steps, ran.into_inner())
    }

    #[test]
    fn the_search_finds_the_deepest_depth_under_the_target_in_few_steps() {
        // p99 = 100 µs × depth: 16 → 1.6 ms is under 2 ms, 32 → 3.2 ms is over.
        let (found, steps, ran) = searched(&|d| (1000.0 * d as f64, 100.0 * d as f64));
        assert_eq!(found, Some(16));
        assert_eq!(ran, [16, 64, 32]);
        assert_eq!(
            steps.iter().map(|s| s.under).collect::<Vec<_>>(),
            [true, false, false]
        );
    }

    #[test]
    fn a_target_even_depth_one_misses_is_found_by_no_depth() {
        let (found, steps, ran) = searched(&|_| (1000.0, 5000.0));
        assert_eq!(found, None);
        assert_eq!(ran.last(), Some(&1), "depth 1 was tried: {ran:?}");
        assert!(steps.iter().all(|s| !s.under));
    }

    #[test]
    fn a_target_every_depth_meets_gives_the_deepest() {
        let (found, _, ran) = searched(&|_| (1000.0, 10.0));
        assert_eq!(found, Some(128));
        assert_eq!(ran, [16, 64, 128]);
    }

    #[test]
    fn depths_the_curve_measured_are_not_run_again() {
        let f = |d: usize| (1000.0 * d as f64, 100.0 * d as f64);
        let mut steps = Vec::new();
        let mut ran = Vec::new();
        let found = search(
            &crate::options::disk::DEFAULT_DEPTHS,
            P99_2MS,
            &|d| (d <= 16).then(|| fake(d, &f)),
            &mut |d| {
                ran.push(d);
                Ok(fake(d, &f))
            },
            &mut steps,
        )
        .unwrap();
        assert_eq!(found, Some(16));
        assert_eq!(ran, [64, 32]);
        assert!(steps[0].from_curve && !steps[1].from_curve);
    }

    #[test]
    fn depths_under_the_target_beyond_the_answer_are_named_as_missed() {
        // Over only at 16: the bisection stops at 8, though 32 to 128 are under again.
        let f = |d: usize| (1000.0, if d == 16 { 3000.0 } else { 100.0 });
        let (found, steps, _) = searched(&f);
        assert_eq!(found, Some(8));
        let s = Search {
            target: P99_2MS,
            depths: crate::options::disk::DEFAULT_DEPTHS.to_vec(),
            steps,
            depth: found,
            iops: None,
            value_us: None,
        };
        let curve: Vec<DiskRow> = crate::options::disk::DEFAULT_DEPTHS
            .iter()
            .map(|&d| fake(d, &f))
            .collect();
        assert_eq!(s.missed(&curve), [32, 64, 128]);
        assert!(s.missed(&[]).is_empty(), "no curve, nothing to contradict");
    }
}
