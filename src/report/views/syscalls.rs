//! `syscalls`: nanoseconds per call for each operation, and why lseek is cheaper.

use crate::cmd::study::{Part, StudyReport};
use crate::cmd::syscalls::OPS;
use crate::cmd::syscalls::SyscallsReport;
use crate::measure::cache::CacheState;
use crate::report::cells::{cells, mib, opt};
use crate::report::csv::Table;
use crate::report::markdown::{self, header, list};
use crate::report::page::{Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::text::{right_align, table_with};
use crate::report::view::Exportable;
use crate::units::{format_seconds, format_size, group_thousands};
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
    let mut table = table_with(&[
        "op",
        "calls",
        "ns/call",
        "calls/s",
        "MiB/s",
        "kernel-counted reads",
    ]);
    for row in &r.rows {
        table.add_row(vec![
            row.op.clone(),
            group_thousands(row.calls),
            format!("{:.1}", row.ns_per_call),
            group_thousands(row.calls_per_second.round() as u64),
            row.bytes_per_second.map_or("-".into(), |b| {
                format!("{:.2}", b / crate::units::MIB as f64)
            }),
            row.kernel_calls.map_or("-".into(), group_thousands),
        ]);
    }
    right_align(&mut table, 1..6);
    let _ = writeln!(out, "{table}");
    for s in &r.skipped_sizes {
        let _ = writeln!(out, "skipped size {}: the file is smaller", format_size(*s));
    }
    let _ = writeln!(out, "{}", syscalls_explanation(r));
    out
}

/// Why lseek is cheaper than read, with this machine's figures.
pub fn syscalls_explanation(r: &SyscallsReport) -> String {
    let (lseek, read, getpid) = (
        r.ns_per_call("lseek"),
        r.ns_per_call("read 1 B"),
        r.ns_per_call("getpid"),
    );
    format!(
        "lseek(SEEK_CUR) enters and leaves the kernel like read() but only returns the file offset: no page-cache lookup and no copy to user memory; here it costs {lseek:.0} ns against {read:.0} ns for a 1-byte read(), so {:.0} ns of each read() is moving one byte through the page cache, and {getpid:.0} ns (getpid) is the bare price of a system call.",
        read - lseek,
    )
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
        let header = [
            "op",
            "size",
            "calls",
            "seconds",
            "ns_per_call",
            "calls_per_second",
            "bytes_per_second",
            "kernel_calls",
        ];
        let rows = self
            .rows
            .iter()
            .map(|r| {
                cells([
                    r.op.clone(),
                    r.size.to_string(),
                    r.calls.to_string(),
                    r.seconds.to_string(),
                    r.ns_per_call.to_string(),
                    r.calls_per_second.to_string(),
                    opt(r.bytes_per_second),
                    opt(r.kernel_calls),
                ])
            })
            .collect();
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }
    fn chart(&self) -> Option<Chart> {
        let series = OPS
            .iter()
            .map(|op| Series {
                name: op.to_string(),
                points: self
                    .rows
                    .iter()
                    .filter(|r| r.op == *op)
                    .map(|r| (r.size as f64, r.ns_per_call))
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!("cost of a system call: {}", self.file),
            x_label: "calls per measurement (= bytes read, log2 scale)".into(),
            y_label: "time per call (ns)".into(),
            log2_x: true,
            series,
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
    let rows = r
        .rows
        .iter()
        .map(|row| {
            vec![
                row.op.clone(),
                group_thousands(row.calls),
                format!("{:.1}", row.ns_per_call),
                group_thousands(row.calls_per_second.round() as u64),
                row.bytes_per_second
                    .map_or("-".into(), |b| format!("{:.2}", mib(b))),
                row.kernel_calls.map_or("-".into(), group_thousands),
            ]
        })
        .collect();
    let t = Table {
        header: header(&[
            "op",
            "calls",
            "time per call (ns)",
            "calls/s",
            "MiB/s",
            "reads the kernel counted",
        ]),
        rows,
    };
    let mut notes: Vec<String> = r
        .skipped_sizes
        .iter()
        .map(|s| format!("skipped size {}: the file is smaller", format_size(*s)))
        .collect();
    notes.push(syscalls_explanation(r));
    vec![markdown::table(&t, Some(&caption)), list("Notes:", &notes)]
}

pub(crate) fn section(s: &crate::cmd::syscalls::SyscallsReport, study: &StudyReport) -> Section {
    let rows = crate::cmd::syscalls::OPS
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
    if let Some(model) = study
        .read_sweep
        .as_ref()
        .and_then(|r| {
            r.analyses
                .iter()
                .find(|a| a.cache == Some(CacheState::Warm))
        })
        .and_then(|a| a.model)
        && read > 0.0
    {
        why.push(format!(
            "The read sweep's fitted cost per call ({}) and this 1-byte read ({}) measure the same thing two ways.",
            format_seconds(model.seconds_per_call),
            format_seconds(read * 1e-9)
        ));
    }
    Section {
        part: Part::Syscalls,
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
