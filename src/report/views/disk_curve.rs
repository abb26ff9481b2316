//! `disk --depth-curve` / `--latency-target`: IOPS and latency per queue depth as a table
//! and a chart (IOPS and p99 against depth, log₂ x axis, the knee marked), the sentence on
//! the knee (found, at depth 1, followed by a fall, resting on one deeper point, too noisy
//! for a knee, none while IOPS still grows, none at all) and on the latency target's search (its answer, the deepest tried, none, depths the
//! bisection missed), each chosen by the numbers through [`crate::measure::knee`] and
//! [`crate::measure::verdict`].

use crate::measure::knee::{Shape, growth_per_doubling};
use crate::measure::verdict::{FALLEN, SAME_WITHIN};
use crate::report::cells::{opt, us};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::svg::{Chart, Series};
use crate::report::text::line;
use crate::report::view::Exportable;
use crate::report::views::disk::queue_sentence;
use crate::results::disk::DiskRow;
use crate::results::disk_curve::{CurveReport, Search, pick};
use crate::units::{MIB, format_seconds, group_thousands};
use crate::warning::Warning;

pub use crate::report::cells::time;

fn iops(v: f64) -> String {
    group_thousands(v.round() as u64)
}

/// What was run, in a few words: `RND4K random read, 1 thread`.
fn what(r: &CurveReport) -> String {
    let s = &r.spec;
    format!(
        "{} {} {}, {} thread{}",
        crate::workload::panel::short_size(s.block),
        if s.random { "random" } else { "sequential" },
        s.op.name(),
        s.threads,
        if s.threads == 1 { "" } else { "s" }
    )
}

/// What a reader can do about a curve too noisy for a knee.
const NOISY_FIX: &str = "run the curve again with more runs per depth (--repeat) or longer ones (--runtime), on a quieter machine";

/// The sentence on the curve's knee, chosen by the numbers.
pub fn knee_sentence(r: &CurveReport) -> String {
    let points = r.knee_points();
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return "no depth measured".to_string();
    };
    if points.len() < 2 {
        return format!(
            "one depth measured ({}): no curve to find a knee on",
            first.depth
        );
    }
    if r.points.iter().all(|p| !p.path.uring()) {
        return "no knee: io_uring was refused, so pread/pwrite kept 1 I/O in flight per thread whatever the depth asked (see fallback)".to_string();
    }
    let k = match r.knee_shape() {
        Shape::Knee(k) => k,
        Shape::TooNoisy { high, low, again } => {
            let (h, l, a) = (points[high], points[low], points[again]);
            let repeated = h.runs > 1 && l.runs > 1 && a.runs > 1;
            return format!(
                "too noisy for a knee: IOPS falls from {} at depth {} to {} at depth {}, then rises to {} at depth {} (each step over {:.0}%{}): these points disagree, so no depth is named; {}",
                iops(h.iops),
                h.depth,
                iops(l.iops),
                l.depth,
                iops(a.iops),
                a.depth,
                100.0 * (SAME_WITHIN - 1.0),
                if repeated { ", the runs apart" } else { "" },
                NOISY_FIX
            );
        }
        Shape::None => {
            let prev = points[points.len() - 2];
            return match growth_per_doubling(prev, *last) {
                Some(g) if g >= SAME_WITHIN => format!(
                    "no knee up to depth {}: IOPS still grows {:.0}% per doubling at the deepest step ({} → {}, {} → {} IOPS): the device may take a deeper queue",
                    last.depth,
                    100.0 * (g - 1.0),
                    prev.depth,
                    last.depth,
                    iops(prev.iops),
                    iops(last.iops)
                ),
                _ => format!(
                    "no knee: no depth after which IOPS stays within {:.0}% while p99 rises beyond that (p99 {} at depth {}, {} at depth {})",
                    100.0 * (SAME_WITHIN - 1.0),
                    time(first.p99),
                    first.depth,
                    time(last.p99),
                    last.depth
                ),
            };
        }
    };
    let at = points[k];
    let later = &points[k + 1..];
    let peak = later
        .iter()
        .copied()
        .max_by(|a, b| a.iops.total_cmp(&b.iops))
        .filter(|p| p.iops > at.iops);
    let deeper = match (peak, later) {
        (_, [one]) => format!(
            "at depth {}, the one deeper point, IOPS is {} while p99 rises to {}: that IOPS grow no more rests on this one point",
            one.depth,
            iops(one.iops),
            time(one.p99)
        ),
        (Some(p), _) if !crate::measure::verdict::same(p.iops, at.iops) => format!(
            "IOPS stays within the knee's runs (at most {} at depth {}) while p99 rises to {} at depth {}",
            iops(p.iops),
            p.depth,
            time(last.p99),
            last.depth
        ),
        (Some(p), _) => format!(
            "IOPS stays within {:.0}% of the knee's (at most {} at depth {}) while p99 rises to {} at depth {}",
            100.0 * (SAME_WITHIN - 1.0),
            iops(p.iops),
            p.depth,
            time(last.p99),
            last.depth
        ),
        (None, _) => format!(
            "IOPS grows no more ({} deeper points) while p99 rises to {} at depth {}",
            later.len(),
            time(last.p99),
            last.depth
        ),
    };
    let low = later
        .iter()
        .copied()
        .min_by(|a, b| a.iops.total_cmp(&b.iops));
    let head = if k == 0 {
        let one = match later {
            [one] => format!(
                " (one deeper point, depth {}: this rests on it alone)",
                one.depth
            ),
            _ => String::new(),
        };
        format!(
            "knee at depth 1 ({} IOPS, p99 {}): a queue adds latency and no throughput here{one}",
            iops(at.iops),
            time(at.p99)
        )
    } else {
        format!(
            "knee at depth {} ({} IOPS, p99 {}): deeper, {deeper}",
            at.depth,
            iops(at.iops),
            time(at.p99),
        )
    };
    match low {
        Some(low) if low.iops < FALLEN * at.iops && k > 0 && later.len() == 1 => format!(
            "knee at depth {} ({} IOPS, p99 {}): deeper, IOPS falls to {} at depth {} (below {:.0}% of the knee's) while p99 rises to {}: a deeper queue costs throughput, though this rests on that one deeper point",
            at.depth,
            iops(at.iops),
            time(at.p99),
            iops(low.iops),
            low.depth,
            100.0 * FALLEN,
            time(low.p99)
        ),
        Some(low) if low.iops < FALLEN * at.iops => format!(
            "{head}; IOPS falls to {} at depth {} (below {:.0}% of the knee's): a deeper queue costs throughput",
            iops(low.iops),
            low.depth,
            100.0 * FALLEN
        ),
        _ => head,
    }
}

/// The sentence on the latency target's search, chosen by the numbers.
pub fn search_sentence(r: &CurveReport, s: &Search) -> String {
    let pct = s.target.percentile.name();
    let goal = format!("{pct} ≤ {}", time(s.target.limit_us));
    let tried: Vec<String> = s
        .steps
        .iter()
        .map(|st| {
            format!(
                "{} {} ({})",
                st.depth,
                if st.under { "under" } else { "over" },
                time(st.value_us)
            )
        })
        .collect();
    let evidence = format!(
        "{} step{}, {}: {}",
        s.steps.len(),
        if s.steps.len() == 1 { "" } else { "s" },
        if s.steps.iter().all(|st| st.from_curve) {
            "read off the curve".to_string()
        } else {
            format!("{} each", format_seconds(r.header.runtime_seconds))
        },
        tried.join(", ")
    );
    let answer = match (s.depth, s.found()) {
        (Some(depth), Some(step)) => {
            let deepest = s.depths.last().is_some_and(|&d| d == depth);
            format!(
                "{goal}: depth {depth} ({} IOPS, {pct} {}){}",
                iops(step.row.iops),
                time(step.value_us),
                if deepest {
                    ", the deepest tried: a deeper queue may meet it too (--depths)"
                } else {
                    ""
                }
            )
        }
        _ => match s
            .steps
            .iter()
            .find(|st| s.depths.first() == Some(&st.depth))
        {
            Some(st) => format!(
                "{goal}: no depth meets it, not even {} ({pct} {})",
                st.depth,
                time(st.value_us)
            ),
            None => format!("{goal}: no depth found (interrupted)"),
        },
    };
    let missed = s.missed(&r.points);
    let caveat = if missed.is_empty() {
        String::new()
    } else {
        format!(
            "; the curve has depth {} under it as well: the latency does not rise steadily with depth here, and the bisection assumes it does",
            missed
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!("{answer}; {evidence}{caveat}")
}

/// The point at depth `depth` of the curve.
fn point_at(r: &CurveReport, depth: usize) -> Option<&DiskRow> {
    r.points.iter().find(|p| p.spec.depth == depth)
}

/// Renders the curve.
pub fn text(r: &CurveReport) -> String {
    let mut out = String::new();
    let origin = super::disk::origin_of(&r.header, r.fill_seconds, "your file");
    super::disk::file_lines(
        &mut out,
        &r.header.file,
        r.header.file_bytes,
        &origin,
        r.header.device_name.as_deref(),
    );
    line(
        &mut out,
        "curve",
        format!(
            "{}, {} per depth{}; latency of every completed I/O, submitted to reaped (fio's lat), in µs",
            what(r),
            format_seconds(r.header.runtime_seconds),
            match r.points.iter().map(DiskRow::n).max().unwrap_or(1) {
                1 => String::new(),
                n => format!(" per run, {n} runs each, median IOPS (the knee weighs their range)"),
            }
        ),
    );
    if !r.points.is_empty() {
        out.push_str(&columns::for_terminal(&curve_columns(), &curve_runs(r)).text);
        line(&mut out, "knee", knee_sentence(r));
        if let Some(deepest) = r.points.last() {
            line(
                &mut out,
                "queue",
                format!("depth {}: {}", deepest.spec.depth, queue_sentence(deepest)),
            );
        }
    }
    if let Some(s) = &r.search {
        line(&mut out, "target", search_sentence(r, s));
    }
    for note in fallbacks(r) {
        line(&mut out, "fallback", note);
    }
    line(&mut out, "verify", verify_line(r));
    out
}

/// Every distinct fallback of the runs, with the depths it concerned.
fn fallbacks(r: &CurveReport) -> Vec<String> {
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for row in runs(r) {
        if let Some(why) = &row.fallback {
            match out.iter_mut().find(|(w, _)| w == why) {
                Some((_, depths)) if !depths.contains(&row.spec.depth) => {
                    depths.push(row.spec.depth)
                }
                Some(_) => {}
                None => out.push((why.clone(), vec![row.spec.depth])),
            }
        }
    }
    out.into_iter()
        .map(|(why, mut depths)| {
            depths.sort_unstable();
            let list: Vec<String> = depths.iter().map(|d| d.to_string()).collect();
            format!("depth {}: {why}", list.join(", "))
        })
        .collect()
}

/// Every run: the curve's, then the search's own.
fn runs(r: &CurveReport) -> impl Iterator<Item = &DiskRow> {
    r.points.iter().chain(
        r.search
            .iter()
            .flat_map(|s| s.steps.iter().filter(|st| !st.from_curve).map(|st| &st.row)),
    )
}

/// What the reads' checks found, over every run.
fn verify_line(r: &CurveReport) -> String {
    super::disk::in_place_line(
        runs(r).map(|row| row.verify),
        r.header.seed,
        &r.header.file,
        &super::disk::VerifyWords {
            none_checked: "no read ran",
            when: "",
            tail: "",
        },
    )
}

impl Exportable for CurveReport {
    const COMMAND: &'static str = "disk-curve";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    /// The table, then the knee, the search and the notes.
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{list, table as md_table};
        let mut blocks = Vec::new();
        if !self.points.is_empty() {
            blocks.push(md_table(
                &columns::markdown(&curve_columns(), &curve_runs(self)),
                None,
            ));
        }
        let mut findings = Vec::new();
        if !self.points.is_empty() {
            findings.push(format!("Knee: {}", knee_sentence(self)));
        }
        if let Some(s) = &self.search {
            findings.push(format!("Target: {}", search_sentence(self, s)));
        }
        if !findings.is_empty() {
            blocks.push(list("Findings:", &findings));
        }
        let notes: Vec<String> = fallbacks(self)
            .into_iter()
            .map(|f| format!("Fallback: {f}"))
            .chain([format!("Verify: {}", verify_line(self))])
            .collect();
        blocks.push(list("Notes:", &notes));
        blocks
    }
    fn is_empty(&self) -> bool {
        self.points.is_empty() && self.search.as_ref().is_none_or(|s| s.steps.is_empty())
    }
    fn ok(&self) -> bool {
        CurveReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        let mut runs = curve_runs(self);
        if let Some(s) = &self.search {
            runs.extend(s.steps.iter().enumerate().map(|(i, st)| Run {
                kind: format!("search step {}", i + 1),
                row: &st.row,
                under: Some(st.under),
                knee: self.knee() == Some(st.row.spec.depth),
            }));
        }
        columns::csv(&curve_columns(), &runs)
    }
    fn chart(&self) -> Option<Chart> {
        let runs: Vec<&DiskRow> = if self.points.is_empty() {
            let mut steps: Vec<&DiskRow> = self
                .search
                .iter()
                .flat_map(|s| s.steps.iter().map(|st| &st.row))
                .collect();
            steps.sort_by_key(|r| r.spec.depth);
            steps
        } else {
            self.points.iter().collect()
        };
        if runs.is_empty() {
            return None;
        }
        let mut series = vec![Series {
            name: "IOPS".into(),
            points: runs.iter().map(|r| (r.spec.depth as f64, r.iops)).collect(),
        }];
        if let Some(k) = self.knee().and_then(|d| point_at(self, d)) {
            let top = runs.iter().map(|r| r.iops).fold(0.0f64, f64::max);
            series.push(Series {
                name: format!("knee (depth {})", k.spec.depth),
                points: vec![(k.spec.depth as f64, 0.0), (k.spec.depth as f64, top)],
            });
        }
        let mut secondary = vec![Series {
            name: "p99 (µs, right axis)".into(),
            points: runs
                .iter()
                .map(|r| (r.spec.depth as f64, r.latency_us.p99))
                .collect(),
        }];
        if let Some(s) = &self.search {
            let (x0, x1) = (
                runs.first().map_or(1.0, |r| r.spec.depth as f64),
                runs.last().map_or(1.0, |r| r.spec.depth as f64),
            );
            secondary.push(Series {
                name: format!(
                    "target: {} {} (right axis)",
                    s.target.percentile.name(),
                    time(s.target.limit_us)
                ),
                points: vec![(x0, s.target.limit_us), (x1, s.target.limit_us)],
            });
        }
        Some(Chart {
            title: format!(
                "IOPS and p99 against queue depth ({}): {}",
                what(self),
                super::disk::chart_subject(
                    self.header.scratch,
                    &self.header.file,
                    self.header.device_name.as_deref()
                )
            ),
            x_label: "queue depth (I/Os in flight per thread, log2)".into(),
            y_label: "IOPS".into(),
            log2_x: true,
            series,
            secondary,
            y2_label: "latency (µs)".into(),
            ..Chart::default()
        })
    }
}

/// One run of the curve or of the search, as its table's row.
struct Run<'a> {
    /// `curve`, or `search step N`.
    kind: String,
    /// Its figures.
    row: &'a DiskRow,
    /// Whether it met the latency target (`None` without a target).
    under: Option<bool>,
    /// Whether its depth is the knee.
    knee: bool,
}

/// The curve's points as rows.
fn curve_runs(r: &CurveReport) -> Vec<Run<'_>> {
    r.points
        .iter()
        .map(|p| Run {
            kind: "curve".to_string(),
            row: p,
            under: r
                .search
                .as_ref()
                .map(|s| pick(&p.latency_us, s.target.percentile) <= s.target.limit_us),
            knee: r.knee() == Some(p.spec.depth),
        })
        .collect()
}

/// The curve's one table: the terminal's, Markdown's and the CSV's columns in one list.
fn curve_columns<'a>() -> Vec<Column<'a, Run<'a>>> {
    vec![
        Column::raw("run", |r: &Run| r.kind.clone()),
        Column::new("depth", "", 0, |r: &Run| r.row.spec.depth.to_string())
            .csv("depth", |r: &Run| r.row.spec.depth.to_string()),
        Column::raw("path", |r: &Run| r.row.path.saved_name()),
        Column::raw("ios", |r: &Run| r.row.ios.to_string()),
        Column::raw("seconds", |r: &Run| r.row.seconds.to_string()),
        Column::raw("bytes_per_second", |r: &Run| {
            r.row.bytes_per_second.to_string()
        }),
        Column::raw("iops", |r: &Run| r.row.iops.to_string()),
        Column::new("IOPS", "", 0, |r: &Run| iops(r.row.iops)),
        Column::new("MiB/s", "", 3, |r: &Run| {
            format!("{:.1}", r.row.bytes_per_second / MIB as f64)
        }),
        Column::new("p50", "µs", 4, |r: &Run| us(r.row.latency_us.p50))
            .csv("p50_us", |r: &Run| r.row.latency_us.p50.to_string()),
        Column::raw("p90_us", |r: &Run| r.row.latency_us.p90.to_string()),
        Column::new("p99", "µs", 0, |r: &Run| us(r.row.latency_us.p99))
            .csv("p99_us", |r: &Run| r.row.latency_us.p99.to_string()),
        Column::new("p99.9", "µs", 5, |r: &Run| us(r.row.latency_us.p99_9))
            .csv("p99_9_us", |r: &Run| r.row.latency_us.p99_9.to_string()),
        Column::raw("p99_99_us", |r: &Run| r.row.latency_us.p99_99.to_string()),
        Column::new("max", "µs", 6, |r: &Run| us(r.row.latency_us.max))
            .csv("max_us", |r: &Run| r.row.latency_us.max.to_string()),
        Column::new("in flight", "", 2, |r: &Run| {
            format!("{:.1}", r.row.mean_in_flight)
        })
        .csv("mean_in_flight", |r: &Run| r.row.mean_in_flight.to_string()),
        Column::new("aqu-sz", "", 1, |r: &Run| {
            r.row
                .device
                .as_ref()
                .map_or_else(|| "-".to_string(), |d| format!("{:.1}", d.queue))
        })
        .heading("device queue")
        .csv("device_queue", |r: &Run| {
            opt(r.row.device.as_ref().map(|d| d.queue))
        }),
        Column::raw("device_utilisation", |r: &Run| {
            opt(r.row.device.as_ref().map(|d| d.utilisation))
        }),
        Column::new("", "", 0, |r: &Run| {
            if r.knee { "← knee" } else { "" }.to_string()
        })
        .left()
        .heading("knee")
        .markdown_cell(|r: &Run| if r.knee { "knee" } else { "" }.to_string())
        .csv("knee", |r: &Run| r.knee.to_string()),
        Column::raw("under_target", |r: &Run| opt(r.under)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::percentile::{Percentile, Target};
    use crate::results::disk::Path;
    use crate::results::disk_curve::{Step, knee_of};
    use crate::workload::Op;

    fn row(depth: usize, iops: f64, p99: f64, path: Path) -> DiskRow {
        DiskRow {
            path,
            ..DiskRow::made_up(Op::Read, depth, iops, p99 / 2.0, p99)
        }
    }

    fn report(iops: &[f64], p99: &[f64], path: Path) -> CurveReport {
        let points: Vec<DiskRow> = iops
            .iter()
            .zip(p99)
            .enumerate()
            .map(|(i, (&x, &p))| row(1 << i, x, p, path))
            .collect();
        CurveReport {
            header: crate::results::disk::FileHeader {
                file: "f".into(),
                scratch: true,
                kept: false,
                file_bytes: 1 << 20,
                device_name: Some("vda".into()),
                seed: Some(1),
                runtime_seconds: 0.2,
            },
            fill_seconds: Some(0.01),
            spec: points[0].spec,
            knee_depth: knee_of(&points),
            points,
            search: None,
            complete: true,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn a_knee_is_told_with_its_depth_and_what_deeper_queues_cost() {
        let r = report(
            &[10e3, 20e3, 40e3, 75e3, 80e3, 82e3],
            &[100.0, 100.0, 110.0, 120.0, 400.0, 1600.0],
            Path::UringDirect,
        );
        let s = knee_sentence(&r);
        assert!(
            s.starts_with("knee at depth 8 (75,000 IOPS, p99 120 µs)"),
            "{s}"
        );
        assert!(
            s.contains("IOPS stays within 10% of the knee's (at most 82,000 at depth 32)"),
            "{s}"
        );
        assert!(s.contains("while p99 rises to 1.6 ms at depth 32"), "{s}");
        assert!(!s.contains("falls"), "{s}");
        assert!(text(&r).contains("← knee"));
    }

    #[test]
    fn a_curve_that_falls_after_its_knee_says_the_deeper_queue_costs_throughput() {
        let r = report(
            &[10e3, 20e3, 40e3, 30e3, 25e3],
            &[100.0, 110.0, 130.0, 300.0, 700.0],
            Path::UringDirect,
        );
        let s = knee_sentence(&r);
        assert!(s.starts_with("knee at depth 4"), "{s}");
        assert!(s.contains("IOPS falls to 25,000 at depth 16"), "{s}");
        assert!(
            s.contains("deeper, IOPS grows no more (2 deeper points)"),
            "{s}"
        );
    }

    fn curve_at(depths: &[usize], iops: &[f64], p99: &[f64]) -> CurveReport {
        let r = report(iops, p99, Path::UringDirect);
        let points: Vec<DiskRow> = r
            .points
            .iter()
            .zip(depths)
            .map(|(p, &d)| {
                let mut p = p.clone();
                p.spec.depth = d;
                p
            })
            .collect();
        CurveReport {
            knee_depth: knee_of(&points),
            points,
            ..r
        }
    }

    #[test]
    fn a_curve_that_falls_then_jumps_is_too_noisy_and_names_the_points() {
        // The curve: once "knee at depth 64 … deeper, IOPS grows no more".
        let r = curve_at(
            &[16, 32, 64, 128],
            &[46e3, 37e3, 128e3, 117e3],
            &[300.0, 700.0, 500.0, 1100.0],
        );
        let s = knee_sentence(&r);
        assert!(
            s.starts_with("too noisy for a knee: IOPS falls from 46,000 at depth 16 to 37,000 at depth 32, then rises to 128,000 at depth 64"),
            "{s}"
        );
        assert!(!s.contains("knee at"), "{s}");
        assert!(!s.contains("grows no more"), "{s}");
        assert!(!text(&r).contains("← knee"));
    }

    #[test]
    fn a_knee_with_one_deeper_point_says_it_rests_on_that_point() {
        let r = curve_at(
            &[16, 32, 64, 128],
            &[30e3, 60e3, 128e3, 117e3],
            &[300.0, 400.0, 500.0, 1100.0],
        );
        let s = knee_sentence(&r);
        assert!(s.starts_with("knee at depth 64 (128,000 IOPS"), "{s}");
        assert!(
            s.contains("at depth 128, the one deeper point, IOPS is 117,000 while p99 rises to 1.1 ms: that IOPS grow no more rests on this one point"),
            "{s}"
        );
        assert!(!s.contains("grows no more"), "{s}");
    }

    #[test]
    fn a_knee_at_depth_one_says_a_queue_adds_only_latency() {
        let r = report(&[50e3, 45e3, 48e3], &[20.0, 45.0, 100.0], Path::UringDirect);
        let s = knee_sentence(&r);
        assert!(s.contains("a queue adds latency and no throughput"), "{s}");
        assert!(!s.contains("falls"), "45k is within 85% of 50k: {s}");
    }

    #[test]
    fn a_curve_still_growing_has_no_knee_and_says_how_fast_it_grows() {
        let r = report(
            &[10e3, 20e3, 40e3, 80e3],
            &[100.0, 100.0, 105.0, 110.0],
            Path::UringDirect,
        );
        let s = knee_sentence(&r);
        assert!(
            s.starts_with("no knee up to depth 8: IOPS still grows 100% per doubling"),
            "{s}"
        );
    }

    #[test]
    fn a_flat_curve_without_rising_latency_has_no_knee_and_no_growth_claimed() {
        let r = report(&[50e3; 4], &[40.0, 41.0, 39.0, 40.0], Path::UringDirect);
        let s = knee_sentence(&r);
        assert!(s.starts_with("no knee: no depth after which"), "{s}");
        assert!(!s.contains("still grows"), "{s}");
    }

    #[test]
    fn pread_fallback_says_depth_had_no_effect_instead_of_a_knee() {
        // The numbers of a perfect knee, but no queue was kept: the path decides.
        let r = report(
            &[10e3, 20e3, 40e3, 41e3, 40e3],
            &[10.0, 10.0, 10.0, 50.0, 90.0],
            Path::SyncDirect,
        );
        assert!(knee_sentence(&r).contains("io_uring was refused"));
    }

    fn search(steps: &[(usize, f64, bool)], depth: Option<usize>) -> Search {
        Search {
            target: Target {
                limit_us: 2000.0,
                percentile: Percentile::P99,
            },
            depths: vec![1, 2, 4, 8, 16, 32],
            steps: steps
                .iter()
                .map(|&(d, v, under)| Step {
                    depth: d,
                    value_us: v,
                    under,
                    from_curve: false,
                    row: row(d, 1000.0 * d as f64, v, Path::UringDirect),
                })
                .collect(),
            depth,
            iops: None,
            value_us: None,
        }
    }

    #[test]
    fn the_search_says_its_answer_with_the_evidence_of_each_step() {
        let r = report(&[1e3, 2e3], &[10.0, 20.0], Path::UringDirect);
        let s = search(&[(8, 1500.0, true), (16, 2500.0, false)], Some(8));
        let t = search_sentence(
            &CurveReport {
                points: Vec::new(),
                ..r.clone()
            },
            &s,
        );
        assert!(
            t.starts_with("p99 ≤ 2.0 ms: depth 8 (8,000 IOPS, p99 1.5 ms)"),
            "{t}"
        );
        assert!(
            t.contains("2 steps, 200.00 ms each: 8 under (1.5 ms), 16 over (2.5 ms)"),
            "{t}"
        );
        assert!(!t.contains("deepest tried"), "{t}");
    }

    #[test]
    fn a_target_missed_at_depth_one_and_one_met_at_the_deepest_are_told_apart() {
        let r = report(&[1e3, 2e3], &[10.0, 20.0], Path::UringDirect);
        let none = search(&[(4, 3000.0, false), (1, 2500.0, false)], None);
        let t = search_sentence(
            &CurveReport {
                points: Vec::new(),
                ..r.clone()
            },
            &none,
        );
        assert!(
            t.contains("no depth meets it, not even 1 (p99 2.5 ms)"),
            "{t}"
        );
        let all = search(&[(4, 100.0, true), (32, 900.0, true)], Some(32));
        let t = search_sentence(
            &CurveReport {
                points: Vec::new(),
                ..r.clone()
            },
            &all,
        );
        assert!(t.contains("the deepest tried"), "{t}");
    }

    #[test]
    fn curve_points_under_the_target_beyond_the_answer_make_it_uncertain() {
        let r = report(
            &[1e3, 2e3, 4e3, 8e3],
            &[100.0, 3000.0, 100.0, 100.0],
            Path::UringDirect,
        );
        let s = search(&[(2, 3000.0, false), (1, 100.0, true)], Some(1));
        let t = search_sentence(&r, &s);
        assert!(
            t.contains("the curve has depth 4, 8 under it as well"),
            "{t}"
        );
    }

    #[test]
    fn the_chart_draws_iops_p99_on_its_own_axis_and_the_knee() {
        let r = report(
            &[10e3, 20e3, 40e3, 75e3, 80e3, 82e3],
            &[100.0, 100.0, 110.0, 120.0, 400.0, 1600.0],
            Path::UringDirect,
        );
        let c = r.chart().expect("a chart");
        assert!(c.log2_x);
        assert_eq!(c.series[0].points.len(), 6);
        assert_eq!(c.series[1].name, "knee (depth 8)");
        assert_eq!(c.secondary[0].points[5], (32.0, 1600.0));
    }
}
