//! `sweep`: the table of points, the fitted model and one sentence per cache state.

use super::{cpu_cell, mib, pct, right_align, table_with};
use crate::cmd::sweep::{Analysis, SweepPoint, SweepReport};
use crate::measure::cache::Verdict;
use crate::units::{
    format_block_size, format_mib_per_s, format_seconds, format_size, group_thousands,
};
use std::fmt::Write;

/// Renders `sweep`.
pub fn sweep(r: &SweepReport) -> String {
    let mut out = String::new();
    let op = r.op.name();
    let _ = writeln!(
        out,
        "sweep {op} {} ({}) with the {} engine: {} timed run(s) per point after {} warm-up, median and spread",
        r.file,
        format_size(r.file_bytes),
        r.engine,
        r.repeat,
        r.warmup
    );
    let mut table = table_with(&[
        "cache",
        "block",
        "bytes/run",
        "MiB/s",
        "spread",
        "calls/s",
        "CPU",
        "resident before",
        "device read",
        "checks",
    ]);
    for p in &r.points {
        let spread = format!(
            "{:.0}..{:.0} ±{:.1}%{}",
            mib(p.rate.min),
            mib(p.rate.max),
            100.0 * p.rate.relative_spread(),
            if p.rate.outliers > 0 {
                format!(" ({} outlier)", p.rate.outliers)
            } else {
                String::new()
            }
        );
        let resident = p.resident_share_before.map_or("-".to_string(), |s| {
            let text = if (s.max - s.min).abs() < 0.0005 {
                pct(s.min)
            } else {
                format!("{}..{}", pct(s.min), pct(s.max))
            };
            if p.state_ok {
                text
            } else {
                format!("{text} (!)")
            }
        });
        let seconds = p.bytes as f64 / p.rate.median.max(1e-9);
        let checks = checks_cell(p);
        table.add_row(vec![
            p.cache.map_or(op, |c| c.name()).to_string(),
            format_block_size(p.block_size),
            format_size(p.bytes),
            format!("{:.1}", mib(p.rate.median)),
            spread,
            group_thousands(p.calls_per_second.round() as u64),
            cpu_cell(p.cpu_percent, seconds),
            resident,
            p.device_read_bytes.map_or("-".to_string(), format_size),
            checks.to_string(),
        ]);
    }
    right_align(&mut table, 2..7);
    let _ = writeln!(out, "{table}");
    for note in sweep_notes(r) {
        let _ = writeln!(out, "{note}");
    }
    out
}

/// The kernel checks of a point in one word: `ok`, `MISMATCH`, or `-` where none were made.
pub fn checks_cell(p: &SweepPoint) -> &'static str {
    if p.runs.iter().all(|run| run.checks.is_empty()) {
        "-"
    } else if p.checks_ok {
        "ok"
    } else {
        "MISMATCH"
    }
}

/// The lines under the table: the fitted model and one sentence per cache state, and what
/// the reader must know about the rows (an engine that bypasses the cache, a flagged run).
pub fn sweep_notes(r: &SweepReport) -> Vec<String> {
    let mut out = Vec::new();
    let op = r.op.name();
    for a in &r.analyses {
        let label = a.cache.map_or(op, |c| c.name());
        if let Some(m) = a.model {
            out.push(format!(
                "model ({label}): time = calls x {} + bytes / {}",
                format_seconds(m.seconds_per_call),
                format_mib_per_s(m.bytes_per_second)
            ));
        }
        out.push(format!("{label}: {}", sweep_explanation(r, a)));
    }
    let bypassed = r
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .any(|run| run.cache.is_some_and(|c| c.verdict == Verdict::Bypassed));
    if bypassed {
        out.push(format!(
            "the {} engine bypasses the page cache: its 'warm' rows are device rates",
            r.engine
        ));
    }
    if r.points.iter().any(|p| !p.state_ok) {
        out.push(
            "(!) a run did not start in its cache state: see 'resident before' and the warnings"
                .to_string(),
        );
    }
    out
}

/// How far the fitted model is from the measured times: the worst over the points of the
/// median (over a point's runs) of |predicted − measured| / measured, and the block size
/// where it is worst. `None` without a model or runs.
pub fn model_misfit(r: &SweepReport, a: &Analysis) -> Option<(f64, u64)> {
    let m = a.model?;
    r.points
        .iter()
        .filter(|p| p.cache == a.cache)
        .filter_map(|p| {
            let errors: Vec<f64> = p
                .runs
                .iter()
                .filter(|run| run.elapsed.seconds > 0.0)
                .map(|run| {
                    let predicted = m.predict(run.moved.calls as f64, run.moved.bytes as f64);
                    (predicted - run.elapsed.seconds).abs() / run.elapsed.seconds
                })
                .collect();
            crate::measure::stats::summarize(&errors).map(|e| (e.median, p.block_size))
        })
        .max_by(|x, y| x.0.total_cmp(&y.0))
}

/// One sentence on a curve: the cost per call, the bandwidth, and where the knee is. The
/// model's story ("whatever its size") is told only where it fits every point within
/// [`crate::measure::verdict::MODEL_FITS`]; otherwise the sentence says how far off it is.
pub fn sweep_explanation(r: &SweepReport, a: &Analysis) -> String {
    let op = r.op;
    let call = format!("{}()", op.name());
    let knee = format!(
        "at {} the rate first comes within 5% of its best ({})",
        format_size(a.knee_block_size),
        format_mib_per_s(a.best_bytes_per_second),
    );
    let misfit = model_misfit(r, a);
    match a.model {
        Some(m) if misfit.is_none_or(|(e, _)| e <= crate::measure::verdict::MODEL_FITS) => format!(
            "Each {call} costs about {} whatever its size (at most {} calls/s) and bytes move at about {}; below {} per call the fixed cost dominates, and {knee}.",
            format_seconds(m.seconds_per_call),
            group_thousands((1.0 / m.seconds_per_call) as u64),
            format_mib_per_s(m.bytes_per_second),
            format_size(m.break_even_block().max(1.0).round() as u64),
        ),
        Some(m) => {
            let (error, at) = misfit.expect("a misfit beyond the bound was measured");
            format!(
                "A fixed cost per {call} ({}) plus a cost per byte ({}) fits these times only roughly: in calls of {} it is {:.0}% off, so the curve is shaped by more than the call and the copy ({}); {knee}.",
                format_seconds(m.seconds_per_call),
                format_mib_per_s(m.bytes_per_second),
                format_size(at),
                100.0 * error,
                match op {
                    crate::workload::Op::Read => "CPU caches, read-ahead, the device",
                    crate::workload::Op::Write => "CPU caches, write-back, the fsync",
                },
            )
        }
        None => format!(
            "The times do not fit a fixed cost per call plus a cost per byte (too few points, or noise); {knee}."
        ),
    }
}
