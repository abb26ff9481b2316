//! `syscalls`: nanoseconds per call for each operation, and why lseek is cheaper.

use crate::measure::cache::CacheState;
use crate::measure::verdict::{self, Figure, Relation};
use crate::report::cells::{mib, opt};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::markdown::{self, list};
use crate::report::page::{Headline, Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::view::Exportable;
use crate::results::study::StudyReport;
use crate::results::sweep::SweepReport;
use crate::results::syscalls::OPS;
use crate::results::syscalls::{CallRow, SyscallsReport};
use crate::units::{format_seconds, format_size, group_thousands};
use crate::workload::study::Part;
use std::fmt::Write;

/// Renders `syscalls`.
pub fn text(r: &SyscallsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "syscalls {} ({}), cached; one call per byte of each size",
        r.file,
        format_size(r.file_bytes)
    );
    out.push_str(&columns::for_terminal(&syscalls_columns(), &r.rows).text);
    for s in &r.skipped_sizes {
        let _ = writeln!(out, "skipped size {}: the file is smaller", format_size(*s));
    }
    let _ = writeln!(out, "{}", syscalls_explanation(r));
    out
}
/// Why a 1-byte `read()` costs what it does beside `lseek(SEEK_CUR)` (the same trip into the
/// kernel without the page-cache lookup and copy) and `getpid` (the bare trip), chosen by
/// the one rule of [`verdict`]: the usual order, the same cost, the opposite, or a spread too
/// wide to tell.
pub fn syscalls_explanation(r: &SyscallsReport) -> String {
    let fig = |op: &str| r.ns_summary(op).map(|s| Figure::from(&s));
    let (Some(read), Some(lseek)) = (fig("read 1 B"), fig("lseek")) else {
        return "The 1-byte read() and lseek() were not both measured, so the cost of the page-cache lookup cannot be separated from the cost of entering the kernel.".to_string();
    };
    let ns = |f: Figure| format!("{:.0} ns", f.median);
    let range = |f: Figure| {
        if f.n > 1 {
            format!("{:.0}–{:.0} ns over the sizes", f.min, f.max)
        } else {
            "one size".to_string()
        }
    };
    let first = match verdict::relate(read, lseek) {
        Relation::Above(_) => format!(
            "A 1-byte read() costs {} against {} for lseek(SEEK_CUR), which enters and leaves the kernel the same way but only returns the file offset: the {:.0} ns between them is the page-cache lookup and the one-byte copy to user memory.",
            ns(read),
            ns(lseek),
            read.median - lseek.median
        ),
        Relation::Same => format!(
            "A 1-byte read() ({}) costs about what lseek(SEEK_CUR) does ({}): here the page-cache lookup and the one-byte copy are lost in the cost of entering the kernel.",
            ns(read),
            ns(lseek)
        ),
        Relation::Below(_) => format!(
            "lseek(SEEK_CUR) ({}) cost more than a 1-byte read() ({}) although it does less (no page-cache lookup, no copy): the work of the calls does not explain this run; something else took time during the lseek loop (another process, frequency changes).",
            ns(lseek),
            ns(read)
        ),
        Relation::Unclear(_) => format!(
            "A 1-byte read() ({}, {}) and lseek(SEEK_CUR) ({}, {}) overlap: the spread is wider than the difference, so the cost of the page-cache lookup cannot be told apart here.",
            ns(read),
            range(read),
            ns(lseek),
            range(lseek)
        ),
    };
    let Some(getpid) = fig("getpid") else {
        return first;
    };
    let bare = match verdict::relate(getpid, lseek) {
        Relation::Below(_) | Relation::Same => format!(
            " getpid ({}) is the bare price of a system call.",
            ns(getpid)
        ),
        Relation::Above(_) => format!(
            " getpid ({}) cost more than lseek although it does less, so it is not the bare price of a call on this run.",
            ns(getpid)
        ),
        Relation::Unclear(_) => format!(
            " getpid ({}, {}) overlaps lseek, so the bare price of a call is not separated here.",
            ns(getpid),
            range(getpid)
        ),
    };
    first + &bare
}

/// How the read sweep's fitted cost per call stands to the 1-byte read() measured here.
fn model_and_read_sentence(model_seconds: f64, read_ns: f64) -> String {
    let (model, read) = (model_seconds * 1e9, read_ns);
    if verdict::same(model, read) {
        format!(
            "The read sweep's fitted cost per call ({}) and this 1-byte read ({}) agree: two ways of measuring the fixed price of one read().",
            format_seconds(model_seconds),
            format_seconds(read * 1e-9)
        )
    } else if model > read {
        format!(
            "The read sweep's fitted cost per call ({}) is {:.1}x this 1-byte read ({}): the fit's per-call term also carries what the sweep's larger calls pay once per call (page faults, read-ahead), so the two do not measure the same thing here.",
            format_seconds(model_seconds),
            verdict::ratio(model, read),
            format_seconds(read * 1e-9)
        )
    } else {
        format!(
            "The read sweep's fitted cost per call ({}) is {:.2}x this 1-byte read ({}): the fit put part of the fixed price into its per-byte term, so the two do not measure the same thing here.",
            format_seconds(model_seconds),
            verdict::ratio(model, read),
            format_seconds(read * 1e-9)
        )
    }
}

impl Exportable for SyscallsReport {
    const COMMAND: &'static str = "syscalls";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    fn markdown(&self) -> Vec<String> {
        markdown(self)
    }
    fn ok(&self) -> bool {
        SyscallsReport::ok(self)
    }
    fn table(&self) -> Table {
        columns::csv(&syscalls_columns(), &self.rows)
    }
    /// The assignment's graph: the time of each measurement against its number of calls,
    /// a line per operation (a 1-byte read() beside lseek(), and the others measured), both
    /// axes linear and from zero, so a line's slope is its cost per call and the gap
    /// between the read's line and lseek's grows with the calls.
    fn chart(&self) -> Option<Chart> {
        let series = OPS
            .iter()
            .filter_map(|op| {
                let mut points: Vec<(f64, f64)> = self
                    .rows
                    .iter()
                    .filter(|r| r.op == *op)
                    .map(|r| (r.calls as f64, r.seconds))
                    .collect();
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                (!points.is_empty()).then(|| Series {
                    name: op.to_string(),
                    points,
                })
            })
            .collect();
        Some(Chart {
            title: format!("time against number of calls: {}", self.file),
            x_label: "number of calls".into(),
            y_label: "time (s)".into(),
            series,
            from_zero: true,
            ..Chart::default()
        })
    }
}

/// `syscalls`: nanoseconds per call for each operation and size.
pub fn markdown(r: &SyscallsReport) -> Vec<String> {
    let caption = format!(
        "system calls on {} ({}), cached; one call per byte of each size",
        r.file,
        format_size(r.file_bytes)
    );
    let t = columns::markdown(&syscalls_columns(), &r.rows);
    let mut notes: Vec<String> = r
        .skipped_sizes
        .iter()
        .map(|s| format!("skipped size {}: the file is smaller", format_size(*s)))
        .collect();
    notes.push(syscalls_explanation(r));
    vec![markdown::table(&t, Some(&caption)), list("Notes:", &notes)]
}

/// The one table of `syscalls`: a row per operation and size, for the text, Markdown and
/// the CSV. The time per call is the answer and never hidden; the kernel's count of reads
/// (the check) goes last, the number of calls first, when the text does not fit.
fn syscalls_columns<'a>() -> Vec<Column<'a, CallRow>> {
    vec![
        Column::new("op", "", 0, |row: &CallRow| row.op.clone())
            .left()
            .csv("op", |row: &CallRow| row.op.clone()),
        Column::raw("size", |row: &CallRow| row.size.to_string()),
        Column::new("calls", "", 3, |row: &CallRow| group_thousands(row.calls))
            .csv("calls", |row: &CallRow| row.calls.to_string()),
        Column::raw("seconds", |row: &CallRow| row.seconds.to_string()),
        Column::new("ns/call", "", 0, |row: &CallRow| {
            format!("{:.1}", row.ns_per_call)
        })
        .heading("time per call (ns)")
        .csv("ns_per_call", |row: &CallRow| row.ns_per_call.to_string()),
        Column::new("calls/s", "", 2, |row: &CallRow| {
            group_thousands(row.calls_per_second.round() as u64)
        })
        .csv("calls_per_second", |row: &CallRow| {
            row.calls_per_second.to_string()
        }),
        Column::new("MiB/s", "", 4, |row: &CallRow| {
            row.bytes_per_second
                .map_or("-".into(), |b| format!("{:.2}", mib(b)))
        })
        .csv(
            "bytes_per_second",
            |row: &CallRow| opt(row.bytes_per_second),
        ),
        Column::new("kernel-counted reads", "", 1, |row: &CallRow| {
            row.kernel_calls.map_or("-".into(), group_thousands)
        })
        .heading("reads the kernel counted")
        .csv("kernel_calls", |row: &CallRow| opt(row.kernel_calls)),
    ]
}

pub(crate) fn section(
    s: &crate::results::syscalls::SyscallsReport,
    study: &StudyReport,
    part: Part,
) -> Section {
    let rows = crate::results::syscalls::OPS
        .iter()
        .filter_map(|op| {
            let sum = s.ns_summary(op)?;
            Some(vec![
                op.to_string(),
                format!("{:.1}", sum.median),
                format!("{:.1}–{:.1}", sum.min, sum.max),
                group_thousands((1e9 / sum.median.max(1e-9)) as u64),
            ])
        })
        .collect();
    let mut why = vec![syscalls_explanation(s)];
    let read = s.ns_per_call("read 1 B");
    if let Some(model) = super::part::kept::<SweepReport>(study, "read-sweep")
        .and_then(|r| {
            r.analyses
                .iter()
                .find(|a| a.cache == Some(CacheState::Warm))
        })
        .and_then(|a| a.model)
        && read > 0.0
    {
        why.push(model_and_read_sentence(model.seconds_per_call, read));
    }
    Section {
        part,
        status: None,
        how: format!(
            "Each operation is timed over {} calls on the cached scratch file (a 1-byte read() walks it byte by byte); the spread is over the sizes measured.",
            s.sizes
                .iter()
                .map(|&n| group_thousands(n))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        grid: grid(
            &["operation", "ns per call", "min–max (ns)", "calls/s"],
            rows,
        ),
        chart: s.chart(),
        why,
        warnings: Vec::new(),
    }
}

/// Its lines in the study's summary: a 1-byte read() and getpid().
pub(crate) fn headlines(s: &crate::results::syscalls::SyscallsReport) -> Vec<Headline> {
    let mut out = Vec::new();
    for op in ["read 1 B", "getpid"] {
        if let Some(sum) = s.ns_summary(op) {
            out.push(Headline {
                label: format!("{op} call"),
                value: format!("{:.0} ns", sum.median),
                spread: format!(
                    "{:.0}–{:.0} ns over {} sizes; {} calls/s",
                    sum.min,
                    sum.max,
                    sum.n,
                    group_thousands((1e9 / sum.median.max(1e-9)) as u64)
                ),
            });
        }
    }
    out
}
