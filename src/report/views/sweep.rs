//! `sweep`: the table of points, the fitted model and one sentence per cache state.

use crate::measure::cache::CacheState;
use crate::measure::cache::Verdict;
use crate::measure::env::Environment;
use crate::measure::stats::Summary;
use crate::report::cells::{capitalise, mib, opt, pct};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::latency;
use crate::report::markdown::{self, flagged, list, percent, rate_spread};
use crate::report::page::{Headline, Section};
use crate::report::svg::{Chart, Series};
use crate::report::text::{cpu_cell, in_place, in_place_short};
use crate::report::view::Exportable;
use crate::results::sweep::{Analysis, SameBytes, SweepPoint, SweepReport};
use crate::units::{
    format_block_size, format_mib_per_s, format_seconds, format_size, group_thousands,
};
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::study::Part;
use crate::workload::verify::InPlace;
use std::fmt::Write;

/// Renders `sweep`: how it was measured and what could make it wrong, the table, then the
/// answer last (the fitted model and the sentence on the curve); each point's latency line
/// and every XOR read only with `--verbose` (the table's p99 column and one line stand for
/// them).
pub fn text(r: &SweepReport, verbose: bool) -> String {
    let mut out = String::new();
    let op = r.op.name();
    let _ = writeln!(
        out,
        "sweep {op} {} ({}) with the {} engine: {} per point after {} warm-up, median and spread",
        crate::text::printable(&r.file),
        format_size(r.file_bytes),
        r.engine,
        crate::report::text::runs_asked(r.repeat, r.until_stable),
        r.warmup
    );
    if r.op == crate::workload::Op::Write {
        let _ = writeln!(
            out,
            "every run (warm-up and timed) writes into the file emptied first (truncated to zero): none overwrites blocks in place"
        );
    }
    // What could make the figures wrong comes with how they were measured, above the
    // table, so that the table and the answer below it end the output together.
    out.push_str(&crate::report::caveats::text(&r.caveats));
    out.push_str(&columns::for_terminal(&sweep_columns(r), &r.points).text);
    if verbose {
        for p in r.points.iter() {
            if let Some(l) = &p.latency {
                let _ = writeln!(
                    out,
                    "latency {} {}: {}",
                    p.cache.map_or(op, |c| c.name()),
                    format_block_size(p.block_size),
                    latency::line(l, &format!("{op}()"))
                );
            }
        }
    }
    for note in notes(r, !verbose) {
        let _ = writeln!(out, "{note}");
    }
    out
}

/// The checks of a point in one word: `NOT IN PLACE` when a byte read was not the one
/// written; `CHANGED` when a run read other data than the first run over the same bytes;
/// else the kernel checks: `ok`, `MISMATCH`, or `-` where none were made.
pub fn checks_cell(r: &SweepReport, p: &SweepPoint) -> &'static str {
    if p.in_place.is_some_and(|v| !v.ok()) {
        "NOT IN PLACE"
    } else if SameBytes::changed_in(&r.same_bytes, p) {
        "CHANGED"
    } else if p.runs.iter().all(|run| run.checks.is_empty()) {
        "-"
    } else if p.checks_ok {
        "ok"
    } else {
        "MISMATCH"
    }
}

/// The lines under the table: what the reader must know about the rows (the data each
/// run read, an engine that bypasses the cache, a flagged run, what the write columns
/// time), then, last, the fitted model and one sentence per cache state.
pub fn sweep_notes(r: &SweepReport) -> Vec<String> {
    notes(r, false)
}

/// [`sweep_notes`], with the XORs of several ranges that all held folded into one line
/// where `folded` (the terminal's default; a changed XOR is always shown in full).
fn notes(r: &SweepReport, folded: bool) -> Vec<String> {
    let mut out = Vec::new();
    let op = r.op.name();
    let held = r.same_bytes.iter().all(SameBytes::ok);
    if folded && held && r.same_bytes.len() > 1 {
        out.push(same_bytes_folded(&r.same_bytes));
    } else {
        out.extend(
            r.same_bytes
                .iter()
                .map(|g| same_bytes_line(g, r.same_bytes.len() > 1)),
        );
    }
    if let Some(all) = InPlace::merged(r.points.iter().filter_map(|p| p.in_place.as_ref())) {
        let measured: f64 = r
            .points
            .iter()
            .filter(|p| p.in_place.is_some())
            .flat_map(|p| &p.runs)
            .map(|run| run.elapsed.seconds)
            .sum();
        out.push(format!(
            "verify (seed {}): {}",
            r.seed.unwrap_or(0),
            in_place(&all, &crate::text::printable(&r.file), measured)
        ));
    } else if let (Some(seed), Op::Write) = (r.seed, r.op) {
        out.push(format!(
            "seed {seed}: every run wrote the same bytes; `sweep {} --seed {seed}` reads them back verified in place",
            crate::text::printable(&r.file)
        ));
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
    let zeros = r
        .points
        .iter()
        .flat_map(|p| &p.runs)
        .any(|run| run.cache.is_some_and(|c| c.not_the_device()));
    if zeros {
        out.push(
            "(not the device) cold runs read zeros the file system makes up (unwritten extents or holes): the cold rows and the cold model measure memory, not the medium"
                .to_string(),
        );
    } else if r.points.iter().any(|p| !p.state_ok) {
        out.push(
            "(!) a run did not start in its cache state: see 'resident before' and the warnings"
                .to_string(),
        );
    }
    if r.points.iter().any(|p| p.without_fsync().is_some()) {
        out.push(
            "with fsync: each run timed to the end of its final fsync(); without: up to that fsync, the page cache's rate (dd's without conv=fdatasync)"
                .to_string(),
        );
    }
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
    out
}

/// The XORs of several ranges that each held, in one line: how many runs and ranges.
fn same_bytes_folded(groups: &[SameBytes]) -> String {
    let runs: usize = groups.iter().map(|g| g.runs).sum();
    let smallest = groups.iter().map(|g| g.bytes).min().unwrap_or(0);
    let largest = groups.iter().map(|g| g.bytes).max().unwrap_or(0);
    format!(
        "xor: each of the {runs} timed runs read the same data as every other run over its bytes ({} ranges, the first {} up to {}); --verbose shows each XOR",
        groups.len(),
        format_size(smallest),
        format_size(largest)
    )
}

/// What the runs over the same bytes read: one XOR, or `DATA CHANGED` with every XOR read
/// (a failed check). `ranged` says which bytes where runs read more than one range.
pub fn same_bytes_line(g: &SameBytes, ranged: bool) -> String {
    let which = if ranged {
        format!(" of the first {}", format_size(g.bytes))
    } else {
        String::new()
    };
    match g.xors.as_slice() {
        [xor] => format!(
            "xor {xor}: each of the {} timed run(s){which} read the same data",
            g.runs
        ),
        xors => format!(
            "DATA CHANGED: the {} timed runs{which} read {} different data (xor {}): the file changed during the sweep, so its rows are not of one file (a failed check)",
            g.runs,
            xors.len(),
            xors.join(", ")
        ),
    }
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

/// Where the curve levels off, as a clause of [`sweep_explanation`]: "at 64 KiB the rate
/// first comes within 5% of its best" only where every smaller block stands clearly below
/// the best by the one rule ([`crate::measure::verdict::relate`]), so that "first" is
/// beyond the noise. Where a smaller block is the same as the best by the rule (medians
/// within 10%), the clause says so of the first such block; where its runs overlap the
/// best's, it says that where the rate levels off is within the noise, and what would tell.
pub(crate) fn levels_off(points: &[&SweepPoint], a: &Analysis, rate: &str) -> String {
    use crate::measure::verdict::{Figure, Relation, WHAT_WOULD_TELL, relate};
    let clear = format!(
        "at {} {rate} first comes within 5% of its best ({})",
        format_size(a.knee_block_size),
        format_mib_per_s(a.best_bytes_per_second),
    );
    let Some(top) = best(points) else {
        return clear;
    };
    let best_fig = Figure::from(&points[top].rate);
    let reach = points
        .iter()
        .position(|p| !matches!(relate(Figure::from(&p.rate), best_fig), Relation::Below(_)));
    let Some(reach) = reach.filter(|&i| points[i].block_size < a.knee_block_size) else {
        return clear;
    };
    let p = points[reach];
    let at_best = format!(
        "{} in calls of {}",
        format_mib_per_s(points[top].rate.median),
        format_size(points[top].block_size)
    );
    match relate(Figure::from(&p.rate), best_fig) {
        Relation::Unclear(_) => format!(
            "where {rate} levels off is within the noise: already in calls of {} its runs ({}) overlap those of its best ({at_best}, runs {}), so no block size is shown to be where it levels off; {WHAT_WOULD_TELL}",
            format_size(p.block_size),
            run_range(&p.rate),
            run_range(&points[top].rate),
        ),
        _ => format!(
            "at {} {rate} first comes within 10% of its best ({at_best}), the same by the one rule, so that it comes within 5% only at {} is within the noise",
            format_size(p.block_size),
            format_size(a.knee_block_size),
        ),
    }
}

/// The runs of a figure as `610–980 MiB/s, n=3`, or `one run`.
fn run_range(s: &Summary) -> String {
    if s.n > 1 {
        format!("{:.0}–{:.0} MiB/s, n={}", mib(s.min), mib(s.max), s.n)
    } else {
        "one run".to_string()
    }
}

/// One sentence on a curve: the cost per call, the bandwidth, and where the knee is. The
/// model's story ("whatever its size") is told only where it fits every point within
/// [`crate::measure::verdict::MODEL_FITS`]; otherwise the sentence says how far off it is.
pub fn sweep_explanation(r: &SweepReport, a: &Analysis) -> String {
    let op = r.op;
    let call = format!("{}()", op.name());
    // Which figure the knee and the best are of: a write's includes its final fsync.
    let rate = match op {
        Op::Read => "the rate",
        Op::Write => "the rate with fsync",
    };
    let knee = levels_off(&points(r, a.cache), a, rate);
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

impl Exportable for SweepReport {
    const COMMAND: &'static str = "sweep";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self, false)
    }
    fn verbose_text(&self) -> String {
        text(self, true)
    }
    fn markdown(&self) -> Vec<String> {
        markdown(self)
    }
    fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
    fn ok(&self) -> bool {
        SweepReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn caveats(&self) -> &[crate::measure::caveat::Caveat] {
        &self.caveats
    }
    fn table(&self) -> Table {
        columns::csv(&sweep_columns(self), &self.points)
    }
    fn chart(&self) -> Option<Chart> {
        let op = self.op.name();
        let series = self
            .analyses
            .iter()
            .map(|a| Series {
                name: a
                    .cache
                    .map_or(op.to_string(), |c| format!("{op}, {}", c.name())),
                points: self
                    .points
                    .iter()
                    .filter(|p| p.cache == a.cache)
                    .map(|p| (p.block_size as f64, mib(p.rate.median)))
                    .collect(),
            })
            .collect();
        let spreads = self
            .analyses
            .iter()
            .map(|a| crate::report::svg::Spread {
                series: a
                    .cache
                    .map_or(op.to_string(), |c| format!("{op}, {}", c.name())),
                points: self
                    .points
                    .iter()
                    .filter(|p| p.cache == a.cache && p.rate.n > 1)
                    .map(|p| (p.block_size as f64, mib(p.rate.min), mib(p.rate.max)))
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!("{op} throughput against block size: {}", self.file),
            x_label: "block size (bytes, log2 scale)".into(),
            y_label: "throughput (MiB/s, median)".into(),
            log2_x: true,
            series,
            spreads,
            ..Chart::default()
        })
    }
}

/// `sweep`: one row per point.
pub fn markdown(r: &SweepReport) -> Vec<String> {
    let op = r.op.name();
    let caption = format!(
        "{op} {} ({}) with the {} engine: {} per point after {} warm-up; rates are the median (min–max) of the runs",
        r.file,
        format_size(r.file_bytes),
        r.engine,
        crate::report::text::runs_asked(r.repeat, r.until_stable),
        r.warmup
    );
    let t = columns::markdown(&sweep_columns(r), &r.points);
    vec![
        markdown::table(&t, Some(&caption)),
        list("Notes:", &sweep_notes(r)),
    ]
}

/// The share resident before a point's runs, `min..max` where they differ (`sep` between),
/// flagged where a run did not start in its cache state.
fn resident(p: &SweepPoint, pct: fn(f64) -> String, sep: &str) -> String {
    p.resident_share_before.map_or("-".to_string(), |s| {
        let text = if (s.max - s.min).abs() < 0.0005 {
            pct(s.min)
        } else {
            format!("{}{sep}{}", pct(s.min), pct(s.max))
        };
        flagged(text, p.state_ok)
    })
}

/// A point's CPU share, or `-` where its run was too short for one.
fn cpu(p: &SweepPoint) -> String {
    cpu_cell(p.cpu_percent, p.bytes as f64 / p.rate.median.max(1e-9))
}

/// The median over a point's runs of `f(fsync seconds, run seconds)`, where its runs ended
/// with an fsync.
fn fsync_median(p: &SweepPoint, f: impl Fn(f64, f64) -> f64) -> Option<f64> {
    let each: Vec<f64> = p
        .runs
        .iter()
        .filter_map(|r| r.fsync_seconds.map(|s| f(s, r.elapsed.seconds)))
        .collect();
    crate::measure::stats::summarize(&each).map(|s| s.median)
}

/// The sweep's one table: the terminal's, Markdown's and the CSV's columns in one list (the
/// latency columns only where a point has a latency, so older results keep their table).
fn sweep_columns(r: &SweepReport) -> Vec<Column<'_, SweepPoint>> {
    let op = r.op.name();
    // A write's rate includes the fsync that ends each run; the rate without it is a column
    // of its own (the page cache's), where the runs timed one.
    let reads = r.op == Op::Read;
    let (rate_name, rate_heading) = match r.op {
        Op::Read => ("MiB/s", "MiB/s, median (min–max)"),
        Op::Write => (
            "MiB/s with fsync",
            "MiB/s with the final fsync, median (min–max)",
        ),
    };
    let mut columns = vec![
        Column::raw("op", move |_: &SweepPoint| op.to_string()),
        Column::raw("engine", |_: &SweepPoint| r.engine.clone()),
        Column::new("cache", "", 0, move |p: &SweepPoint| {
            p.cache.map_or(op, |c| c.name()).to_string()
        })
        .left()
        .csv("cache", |p: &SweepPoint| {
            p.cache.map_or(String::new(), |c| c.name().to_string())
        }),
        Column::new("block", "", 0, |p: &SweepPoint| {
            format_block_size(p.block_size)
        })
        .heading("block size")
        .csv("block_size", |p: &SweepPoint| p.block_size.to_string()),
        Column::new("bytes/run", "", 5, |p: &SweepPoint| format_size(p.bytes))
            .heading("bytes per run")
            .csv("bytes", |p: &SweepPoint| p.bytes.to_string()),
        Column::raw("runs", |p: &SweepPoint| p.rate.n.to_string()),
        Column::new(rate_name, "", 0, |p: &SweepPoint| {
            format!("{:.1}", mib(p.rate.median))
        })
        .heading(rate_heading)
        .markdown_cell(|p: &SweepPoint| {
            if p.rate.n > 1 {
                rate_spread(p.rate.median, p.rate.min, p.rate.max)
            } else {
                format!("{:.1} (n=1)", mib(p.rate.median))
            }
        })
        .csv("bytes_per_second_median", |p: &SweepPoint| {
            p.rate.median.to_string()
        }),
    ];
    if r.points.iter().any(|p| p.without_fsync().is_some()) {
        columns.push(
            Column::new("MiB/s without fsync", "", 1, |p: &SweepPoint| {
                p.without_fsync()
                    .map_or("-".to_string(), |w| format!("{:.1}", mib(w.median)))
            })
            .heading("MiB/s without fsync (the page cache's), median")
            .csv("without_fsync_bytes_per_second", |p: &SweepPoint| {
                opt(p.without_fsync().map(|w| w.median))
            }),
        );
    }
    columns.extend([
        Column::raw("bytes_per_second_min", |p: &SweepPoint| {
            p.rate.min.to_string()
        }),
        Column::raw("bytes_per_second_max", |p: &SweepPoint| {
            p.rate.max.to_string()
        }),
        Column::raw("bytes_per_second_stddev", |p: &SweepPoint| {
            p.rate.stddev.to_string()
        }),
        Column::raw("outliers", |p: &SweepPoint| p.rate.outliers.to_string()),
        // A point measured once has no spread: it says so rather than `±0.0%`.
        Column::new("spread", "", 2, |p: &SweepPoint| {
            if p.rate.n <= 1 {
                return "n=1".to_string();
            }
            format!(
                "{:.0}..{:.0} ±{:.1}%{}",
                mib(p.rate.min),
                mib(p.rate.max),
                100.0 * p.rate.relative_spread(),
                if p.rate.outliers > 0 {
                    format!(" ({} outlier)", p.rate.outliers)
                } else {
                    String::new()
                }
            )
        })
        .heading("spread (±%)")
        .markdown_cell(|p: &SweepPoint| {
            if p.rate.n > 1 {
                format!("{:.1}", 100.0 * p.rate.relative_spread())
            } else {
                "n=1".to_string()
            }
        }),
        Column::new("calls/s", "", 4, |p: &SweepPoint| {
            group_thousands(p.calls_per_second.round() as u64)
        })
        .csv("calls_per_second", |p: &SweepPoint| {
            p.calls_per_second.to_string()
        }),
    ]);
    if r.points.iter().any(|p| p.latency.is_some()) {
        // Each point's latency in one figure the table can drop; every percentile with
        // --verbose, in Markdown and in the CSV.
        columns.push(
            Column::new("p99 per call", "", 4, |p: &SweepPoint| {
                p.latency
                    .as_ref()
                    .map_or("-".to_string(), |l| latency::nanos(l.p99))
            })
            .text_only(),
        );
    }
    columns.extend([
        Column::new("CPU", "", 6, cpu)
            .heading("CPU (%)")
            .markdown_cell(|p: &SweepPoint| cpu(p).trim_end_matches('%').to_string())
            .csv("cpu_percent", |p: &SweepPoint| p.cpu_percent.to_string()),
        // Writes have no residency before nor device reads: their text leaves the columns
        // out (an empty column takes no room), Markdown shows `-`.
        Column::new("resident before", "", 3, move |p: &SweepPoint| {
            if reads {
                resident(p, pct, "..")
            } else {
                String::new()
            }
        })
        .heading("resident before (%)")
        .markdown_cell(|p: &SweepPoint| resident(p, percent, "–"))
        .csv("resident_share_before_min", |p: &SweepPoint| {
            opt(p.resident_share_before.map(|r| r.min))
        }),
        Column::raw("resident_share_before_max", |p: &SweepPoint| {
            opt(p.resident_share_before.map(|r| r.max))
        }),
        Column::new("device read", "", 5, move |p: &SweepPoint| {
            match p.device_read_bytes {
                Some(b) => format_size(b),
                None if reads => "-".to_string(),
                None => String::new(),
            }
        })
        .markdown_cell(|p: &SweepPoint| p.device_read_bytes.map_or("-".to_string(), format_size))
        .csv("device_read_bytes", |p: &SweepPoint| {
            opt(p.device_read_bytes)
        }),
        Column::new("checks", "", 1, |p: &SweepPoint| {
            checks_cell(r, p).to_string()
        })
        .left()
        .heading("kernel checks")
        .csv("checks_ok", |p: &SweepPoint| p.checks_ok.to_string()),
        Column::raw("state_ok", |p: &SweepPoint| p.state_ok.to_string()),
        Column::raw("in_place", |p: &SweepPoint| {
            p.in_place.map(|v| in_place_short(&v)).unwrap_or_default()
        }),
        Column::raw("verify_seconds", |p: &SweepPoint| {
            opt(p.in_place.map(|v| v.seconds))
        }),
    ]);
    if r.points
        .iter()
        .flat_map(|p| &p.runs)
        .any(|run| run.fsync_seconds.is_some())
    {
        columns.push(
            Column::new("fsync", "", 3, |p: &SweepPoint| {
                fsync_median(p, |f, _| f).map_or("-".into(), format_seconds)
            })
            .markdown_only(),
        );
        columns.push(
            Column::new("fsync share", "", 3, |p: &SweepPoint| {
                fsync_median(p, |f, elapsed| f / elapsed.max(1e-9)).map_or("-".into(), pct)
            })
            .markdown_only()
            .heading("fsync share of the time"),
        );
    }
    if r.points.iter().any(|p| p.latency.is_some()) {
        columns.push(
            Column::new("latency", "", 9, |p: &SweepPoint| {
                p.latency.as_ref().map_or("-".to_string(), latency::cell)
            })
            .markdown_only()
            .heading("latency p50 / p99 / p99.9 / max"),
        );
        for (i, key) in latency::COLUMNS.into_iter().enumerate() {
            columns.push(Column::raw(key, move |p: &SweepPoint| {
                latency::cells(p.latency.as_ref())[i].clone()
            }));
        }
    }
    columns
}

/// What the rise below the memory page says: the smallest block against the page-sized
/// one. The fixed cost of a call is named as the cause only where the rate at least doubles
/// up to the page ([`crate::measure::verdict::STEEP`]); `None` without a point below the page.
/// With `crossover` (the fitted model's break-even block, where it fits the curve) the
/// rise is told up to it, in `sweep`'s words, and the page is not named; without one (no
/// model fits) the rise up to the page is stated and no cause is named.
fn below_page(points: &[&SweepPoint], page: u64, crossover: Option<u64>) -> Option<String> {
    let bound = crossover.unwrap_or(page);
    let small = points.first().filter(|p| p.block_size < bound)?;
    let at_page = points.iter().find(|p| p.block_size >= bound)?;
    let rise = at_page.rate.median / small.rate.median.max(1e-9);
    let steep = rise >= crate::measure::verdict::STEEP;
    let page = format_size(page);
    // One sentence: up to where, how much the rate rises, and the cause the numbers allow.
    let up_to = match crossover {
        Some(c) => format!(
            "Below {} per call (the fitted model's crossover, where its fixed cost per call equals its cost of moving the bytes; not the {page} memory page)",
            format_size(c)
        ),
        None => format!("From the smallest call up to the {page} memory page"),
    };
    let cause = match (crossover, steep) {
        // The model fits and the rise is steep: its fixed cost is what the small calls pay.
        (Some(_), true) => {
            ": the fixed cost of the call (entering the kernel, finding the page in the cache) outweighs the bytes it moves, which is the steep rise on the left"
        }
        (Some(_), false) => "",
        // No model fits, but a rate that barely rises from tiny calls to large ones says
        // by itself that the cost of a call is not what limits them.
        (None, false) => ": the fixed cost of a call is not what limits these reads",
        // No model fits these times (`sweep` says how far off it is): the rise is stated,
        // and no cause is named, the page's least of all.
        (None, true) => {
            "; a fixed cost per call plus a cost per byte does not fit these times, so no cause is named"
        }
    };
    Some(format!(
        "{up_to} the rate rises {}{} ({} in calls of {} against {} in calls of {}){cause}.",
        if steep { "" } else { "only " },
        times(rise),
        format_mib_per_s(small.rate.median),
        format_size(small.block_size),
        format_mib_per_s(at_page.rate.median),
        format_size(at_page.block_size)
    ))
}

/// A ratio as `12x` from ten up, else `2.4x`.
fn times(ratio: f64) -> String {
    if ratio >= 10.0 {
        format!("{ratio:.0}x")
    } else {
        format!("{ratio:.1}x")
    }
}

/// The first block size after the peak where the rate falls below 85% of it, the share the
/// largest block reaches, and whether that fall is clear by the one rule (its runs apart
/// from the peak's: [`crate::measure::verdict::relate`] says `Below`).
fn fall_after_peak(points: &[&SweepPoint]) -> Option<(u64, u64, f64, bool)> {
    use crate::measure::verdict::{Figure, Relation, relate};
    let peak = best(points)?;
    let top = points[peak].rate.median;
    let fall = points[peak + 1..]
        .iter()
        .find(|p| p.rate.median < crate::measure::verdict::FALLEN * top)?;
    let last = points.last()?;
    let clear = matches!(
        relate(Figure::from(&fall.rate), Figure::from(&points[peak].rate)),
        Relation::Below(_)
    );
    Some((
        points[peak].block_size,
        fall.block_size,
        last.rate.median / top.max(1e-9),
        clear,
    ))
}

/// Why a curve falls at large blocks: the buffer outgrows a CPU cache; where the runs of
/// the fall overlap the peak's, no fall is claimed and none is explained.
fn explain_fall(op: &str, points: &[&SweepPoint], env: &Environment) -> Option<String> {
    let (peak, fall, share, clear) = fall_after_peak(points)?;
    if !clear {
        return Some(format!(
            "The {op} curve's median peaks at {} per call and drops below {:.0}% of it from {} per call up, but the runs there overlap the peak's: no fall is shown, so none is explained; {}.",
            format_size(peak),
            100.0 * crate::measure::verdict::FALLEN,
            format_size(fall),
            crate::measure::verdict::WHAT_WOULD_TELL
        ));
    }
    // A read() copies from the page cache into the buffer: source and destination together
    // are twice the block.
    // A cache level explains the fall only when the peak's buffers fit in it and the
    // fall's do not: a peak already past a level cannot be falling because of it.
    let cause = match (env.cache_bytes(2), env.cache_bytes(3)) {
        (_, Some(l3)) if 2 * peak < l3 && 2 * fall >= l3 => format!(
            "each call copies {} out of the page cache into a {} buffer, and the two together ({}) fill the CPU's last-level cache (L3, {}): the copy then streams through main memory instead of the cache",
            format_size(fall),
            format_size(fall),
            format_size(2 * fall),
            format_size(l3)
        ),
        (Some(l2), l3) if peak <= l2 && fall > l2 => format!(
            "the {} buffer no longer fits the per-core L2 cache ({}{}), so the copy into it evicts the lines it just wrote and the next call must fetch them again from the larger, slower cache",
            format_size(fall),
            format_size(l2),
            l3.map_or(String::new(), |l3| format!("; L3 is {}", format_size(l3)))
        ),
        (l2, l3) if l2.is_some() || l3.is_some() => {
            let levels: Vec<String> = [("L2", l2), ("L3", l3)]
                .into_iter()
                .filter_map(|(n, b)| b.map(|b| format!("{n} {}", format_size(b))))
                .collect();
            format!(
                "no CPU cache level ({}) holds the peak's {} buffer and not the fall's {}, so the CPU caches do not explain it; the kernel's work per byte may grow with the buffer (page-table and copy costs)",
                levels.join(", "),
                format_size(peak),
                format_size(fall)
            )
        }
        _ => format!(
            "at {} per call the kernel's work per byte grows (page-table and copy costs of a large buffer)",
            format_size(fall)
        ),
    };
    Some(format!(
        "The {op} curve peaks at {} per call and falls from {} per call up (the largest block reaches {:.0}% of the peak): {cause}.",
        format_size(peak),
        format_size(fall),
        100.0 * share
    ))
}

/// The read sweep's section of the study; its table is `sweep`'s own ([`sweep_columns`]).
pub(crate) fn read_section(s: &SweepReport, env: &Environment, part: Part) -> Section {
    let mut why = Vec::new();
    for a in &s.analyses {
        let label = a.cache.map_or("read", |c| c.name());
        why.push(format!(
            "{}: {}",
            capitalise(label),
            sweep_explanation(s, a)
        ));
    }
    let warm = points(s, Some(CacheState::Warm));
    let cold = points(s, Some(CacheState::Cold));
    let curve = if warm.is_empty() { &cold } else { &warm };
    // One explanation of the curve with `sweep`'s: where the fitted model fits, the rise
    // ends at its crossover (fixed cost per call = cost of the bytes), not at the page.
    let state = if warm.is_empty() {
        Some(CacheState::Cold)
    } else {
        Some(CacheState::Warm)
    };
    let crossover = s.analyses.iter().find(|a| a.cache == state).and_then(|a| {
        let m = a.model?;
        model_misfit(s, a)
            .is_none_or(|(e, _)| e <= crate::measure::verdict::MODEL_FITS)
            .then(|| m.break_even_block().max(1.0).round() as u64)
    });
    if let Some(text) = below_page(curve, env.page_size.max(4096), crossover) {
        why.push(text);
    }
    if let Some(text) = explain_fall("warm", &warm, env) {
        why.push(text);
    }
    if let (Some(c), Some(w)) = (best(&cold), best(&warm)) {
        let (c, w) = (cold[c], warm[w]);
        use crate::measure::verdict::{Figure, Relation, relate};
        let rates = format!(
            "{} against {}",
            format_mib_per_s(w.rate.median),
            format_mib_per_s(c.rate.median)
        );
        let compared = match relate(Figure::from(&w.rate), Figure::from(&c.rate)) {
            Relation::Above(x) => {
                format!("At its best the warm cache is {x:.1}x the cold one ({rates}).")
            }
            Relation::Same => format!(
                "At their best warm and cold reads are within 10% of each other ({rates}): the page cache bought little here."
            ),
            Relation::Below(x) => format!(
                "At their best cold reads are faster than warm ones (warm {x:.2}x cold: {rates}), which no cache explains: load or noise during the warm runs."
            ),
            Relation::Unclear(x) => format!(
                "At their best warm and cold reads differ ({x:.2}x: {rates}) by less than their runs scatter, so no direction is claimed."
            ),
        };
        let residency = format!(
            "esidency before the cold runs was {} and before the warm ones {}, measured with mincore()",
            c.resident_share_before.map_or("-".into(), |sp| pct(sp.max)),
            w.resident_share_before.map_or("-".into(), |sp| pct(sp.min)),
        );
        why.push(match c.device_read_bytes {
            Some(d) => format!(
                "{compared} A cold run read {} from the device (/proc/diskstats); r{residency}.",
                format_size(d)
            ),
            None => format!("{compared} R{residency}."),
        });
        if let (Some(first_cold), Some(first_warm)) = (cold.first(), warm.first())
            && first_cold.rate.median
                >= crate::measure::verdict::CLOSE_SHARE * first_warm.rate.median
            && s.device.is_some()
        {
            why.push(format!(
                "In calls of {} cold reads run at {:.0}% of the warm rate: the kernel reads ahead{} in large requests whatever the block size, so small calls are limited by their own cost, not by the device.",
                format_size(first_cold.block_size),
                100.0 * first_cold.rate.median / first_warm.rate.median.max(1e-9),
                env.storage
                    .read_ahead_kb
                    .map_or(String::new(), |kb| format!(" (read_ahead_kb = {kb})"))
            ));
        }
    } else if cold.is_empty() && s.device.is_none() {
        why.push(format!(
            "No block device is behind {}: its pages live in memory and cannot be evicted, so only warm reads were measured; there is no device to be cold against.",
            s.file
        ));
    }
    Section {
        part,
        status: None,
        how: format!(
            "The scratch file ({}) is read sequentially with read() calls of each block size (the run stops after {} calls, so small blocks read a prefix); {} timed run(s) per point after {} warm-up; cold runs start after the file's pages are evicted (fdatasync + fadvise DONTNEED), warm runs after it was read once. Median and min–max over the runs.",
            format_size(s.file_bytes),
            group_thousands(
                s.points
                    .first()
                    .map_or(0, |p| p.bytes / p.block_size.max(1))
            ),
            s.repeat,
            s.warmup
        ),
        grid: columns::grid(&sweep_columns(s), &s.points),
        chart: s.chart(),
        why,
        warnings: Vec::new(),
    }
}

/// The write sweep's section of the study; its table is `sweep`'s own ([`sweep_columns`]),
/// with the fsync's time and share.
pub(crate) fn write_section(s: &SweepReport, part: Part) -> Section {
    let pts = points(s, None);
    let mut why: Vec<String> = s.analyses.iter().map(|a| sweep_explanation(s, a)).collect();
    let shares: Vec<f64> = pts
        .iter()
        .flat_map(|p| &p.runs)
        .filter_map(|r| r.fsync_seconds.map(|f| f / r.elapsed.seconds.max(1e-9)))
        .collect();
    if let Some(sh) = crate::measure::stats::summarize(&shares) {
        why.push(super::patterns::fsync_share_sentence(
            &sh,
            s.device.is_some(),
        ));
    }
    Section {
        part,
        status: None,
        how: format!(
            "A new file is written with write() calls of each block size ({} per run at most, fewer for small blocks), and every run ends with fsync(), whose time is included; {} timed run(s) per point. Median and min–max.",
            format_size(s.file_bytes),
            s.repeat
        ),
        grid: columns::grid(&sweep_columns(s), &s.points),
        chart: s.chart(),
        why,
        warnings: Vec::new(),
    }
}

/// The points of a sweep in one cache state (`None`: writes).
pub(crate) fn points(r: &SweepReport, state: Option<CacheState>) -> Vec<&SweepPoint> {
    r.points.iter().filter(|p| p.cache == state).collect()
}

pub(crate) fn best(points: &[&SweepPoint]) -> Option<usize> {
    (0..points.len()).max_by(|&a, &b| points[a].rate.median.total_cmp(&points[b].rate.median))
}

/// How the summary names the top point: "best block size" only when it stands apart from
/// every other point by the one rule ([`crate::measure::verdict::relate`]); otherwise
/// "highest median", with how many points its runs cannot be told from ("tied": runs
/// overlapping or medians within 10%).
fn best_or_not(points: &[&SweepPoint], top: usize) -> (&'static str, String) {
    use crate::measure::verdict::{Figure, Relation, relate};
    let peak = Figure::from(&points[top].rate);
    let tied = (0..points.len())
        .filter(|&j| j != top)
        .filter(|&j| {
            !matches!(
                relate(peak, Figure::from(&points[j].rate)),
                Relation::Above(_)
            )
        })
        .count();
    match tied {
        0 => ("best block size", String::new()),
        n => (
            "highest median",
            format!("; tied with {n} other{}", if n == 1 { "" } else { "s" }),
        ),
    }
}

/// `1234.5 MiB/s` with `1200–1250` beside it.
pub(crate) fn summary_spread(s: &Summary) -> (String, String) {
    (
        format!("{:.1} MiB/s", mib(s.median)),
        if s.n > 1 {
            format!("{:.1}–{:.1} (n={})", mib(s.min), mib(s.max), s.n)
        } else {
            "one run".to_string()
        },
    )
}

/// The write sweep's line in the study's summary: the best block size.
pub(crate) fn write_headlines(s: &SweepReport) -> Vec<Headline> {
    let mut out = Vec::new();
    let pts = points(s, None);
    if let Some(i) = best(&pts) {
        let (value, spread) = summary_spread(&pts[i].rate);
        let (what, rest) = best_or_not(&pts, i);
        out.push(Headline {
            label: format!("write, {what} (fsync included)"),
            value,
            spread: format!(
                "{spread} in calls of {}{rest}",
                format_size(pts[i].block_size)
            ),
        });
    }
    out
}
