//! `trace`: per file, a table of calls by type, the bytes moved, fsync time and where the
//! accesses fell; then the totals, the kernel's counters, the tool's own claim, and what
//! tracing cannot see or costs.

use crate::cmd::trace::TraceReport;
use crate::report::cells::{cells, table};
use crate::report::csv::Table;
use crate::report::svg::{Chart, Series};
use crate::report::text::{line, right_align, table_with};
use crate::report::view::Exportable;
use crate::text::printable;
use crate::trace::tally::{Histogram, Timeline};
use crate::units::{format_seconds, format_size, group_thousands};
use std::fmt::Write;

/// Files shown in full; the rest are summed in one line (all are in --json and --csv).
const MAX_FILES: usize = 20;
/// Files that only failed (a failed open, say) named one per line; the rest summed.
const MAX_FAILED: usize = 8;

/// Renders a trace. Every name that comes from the command or the file system (its
/// arguments, paths, process names) is made printable: control characters escaped.
pub fn text(r: &TraceReport) -> String {
    let mut out = String::new();
    header(&mut out, r);
    files(&mut out, r);
    totals(&mut out, r);
    kernel(&mut out, r);
    claim(&mut out, r);
    leftovers(&mut out, r);
    out
}

/// The command, how it ended and how long it ran.
fn header(out: &mut String, r: &TraceReport) {
    let status = match (r.exit_code, r.signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => format!(
            "not ended (it did not end within {} of the signal passed on to it; it runs on, untraced)",
            format_seconds(crate::trace::sys::GRACE.as_secs_f64())
        ),
    };
    let command: Vec<String> = r.command.iter().map(|a| printable(a)).collect();
    line(out, "trace", command.join(" "));
    line(
        out,
        "ran",
        format!(
            "{} in {} ({} without the {} inside fsync-type calls); {} task(s), {} exec(s){}",
            status,
            format_seconds(r.seconds),
            format_seconds(r.seconds_without_sync()),
            format_seconds(r.sync_seconds),
            r.tasks,
            r.execs,
            if r.complete {
                ""
            } else {
                " — interrupted: partial trace"
            }
        ),
    );
}

/// The busiest files in full, the others summed in a line or two.
fn files(out: &mut String, r: &TraceReport) {
    // Files that moved no bytes and had no syncs or seeks (libraries the loader mapped,
    // locale files) in one line; the others in full.
    let (busy, quiet): (Vec<_>, Vec<_>) = r.files.iter().partition(|f| f.busy());
    // The busiest files in full (by bytes moved, syncs and seeks); the rest in one line.
    let mut busy = busy;
    busy.sort_by_key(|f| std::cmp::Reverse((f.bytes_read + f.bytes_written, f.syncs, f.seeks)));
    let shown = busy.len().min(MAX_FILES);
    let rest: Vec<_> = busy.split_off(shown);
    for f in busy {
        file(out, f);
    }
    let _ = writeln!(out);
    if !rest.is_empty() {
        line(
            out,
            "more",
            format!(
                "{} more busy file(s): {} read, {} written in {} calls (each in --json and --csv)",
                rest.len(),
                format_size(rest.iter().map(|f| f.bytes_read).sum()),
                format_size(rest.iter().map(|f| f.bytes_written).sum()),
                group_thousands(rest.iter().map(|f| f.total().calls).sum())
            ),
        );
    }
    failed(out, &quiet);
    if !quiet.is_empty() {
        line(
            out,
            "quiet",
            format!(
                "{} more file(s) opened, mapped or closed without a read or write ({} calls)",
                quiet.len(),
                group_thousands(quiet.iter().map(|f| f.total().calls).sum())
            ),
        );
    }
}

/// Failed calls on files that moved nothing (a failed open, say), one line per file: the
/// first [`MAX_FILES`], then how many more.
fn failed(out: &mut String, quiet: &[&crate::trace::tally::FileStats]) {
    let mut failing: Vec<_> = quiet.iter().filter(|f| f.total().errors > 0).collect();
    failing.sort_by_key(|f| (std::cmp::Reverse(f.total().errors), f.path.clone()));
    for (i, f) in failing.iter().enumerate() {
        if i == MAX_FAILED {
            let mut rest = crate::trace::tally::CallStats::default();
            for f in &failing[MAX_FAILED..] {
                rest.add(&f.total());
            }
            line(
                out,
                "",
                format!(
                    "{} more file(s) with failed calls: {} (each in --json and --csv)",
                    failing.len() - MAX_FAILED,
                    errnos(&rest)
                ),
            );
            break;
        }
        line(
            out,
            if i == 0 { "failed" } else { "" },
            format!("{}: {}", printable(&f.path), errors_by_call(f)),
        );
    }
}

/// "openat ENOENT 30, EACCES 2; read EIO 1": the failed calls of a file, by call and error.
fn errors_by_call(f: &crate::trace::tally::FileStats) -> String {
    f.calls
        .iter()
        .filter(|(_, s)| s.errors > 0)
        .map(|(name, s)| format!("{name} {}", errnos(s)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// "ENOENT 30, EACCES 2" (or the bare count where the names were not recorded).
fn errnos(s: &crate::trace::tally::CallStats) -> String {
    if s.errnos.is_empty() {
        return format!("{} failed", group_thousands(s.errors));
    }
    s.errnos
        .iter()
        .map(|(e, n)| format!("{e} {}", group_thousands(*n)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The request sizes of a file, one bucket per power of two that had any.
fn sizes(f: &crate::trace::tally::FileStats) -> String {
    let buckets: Vec<String> = f
        .sizes
        .buckets()
        .iter()
        .map(|&(at, n)| {
            let top = crate::trace::sizes::Sizes::bound(crate::trace::sizes::Sizes::BUCKETS - 1);
            let label = match at {
                0 => "0 B".to_string(),
                1 => "1 B".to_string(),
                a if a >= top => format!("{}+", format_size(a)),
                a => format!("{}..{}", format_size(a), format_size(2 * a)),
            };
            format!("{label} ×{}", group_thousands(n))
        })
        .collect();
    format!(
        "asked per call (from each power of two up to the next): {}",
        buckets.join(", ")
    )
}

/// One file: its calls by type, what it moved, and where its accesses fell.
fn file(out: &mut String, f: &crate::trace::tally::FileStats) {
    let _ = writeln!(out, "\n{}", printable(&f.path));
    let mut table = table_with(&[
        "call",
        "calls",
        "errors",
        "returned 0",
        "asked",
        "returned",
        "time inside",
    ]);
    for (name, s) in &f.calls {
        table.add_row(vec![
            name.clone(),
            group_thousands(s.calls),
            group_thousands(s.errors),
            group_thousands(s.empty),
            if s.bytes_requested > 0 {
                format_size(s.bytes_requested)
            } else {
                String::new()
            },
            if s.bytes_returned > 0 {
                format_size(s.bytes_returned)
            } else {
                String::new()
            },
            format_seconds(s.nanos as f64 / 1e9),
        ]);
    }
    right_align(&mut table, 1..7);
    let _ = writeln!(out, "{table}");
    line(
        out,
        "moved",
        format!(
            "{} read, {} written; {} sync call(s) taking {}; {} lseek(s)",
            format_size(f.bytes_read),
            format_size(f.bytes_written),
            f.syncs,
            format_seconds(f.sync_nanos as f64 / 1e9),
            f.seeks
        ),
    );
    if f.total().errors > 0 {
        line(out, "errors", errors_by_call(f));
    }
    if !f.sizes.is_empty() {
        line(out, "sizes", sizes(f));
    }
    if f.offsets.total() > 0 {
        out.push_str(&histogram(&f.offsets));
    }
    if f.timeline.offsets.len() >= 8 {
        out.push_str(&timeline(&f.timeline, f.order.kind()));
    }
}

/// Every call and byte in all.
fn totals(out: &mut String, r: &TraceReport) {
    let mut all = crate::trace::tally::CallStats::default();
    for s in r.totals.values() {
        all.add(s);
    }
    let failed = if all.errors > 0 {
        format!(
            " ({} failed: {})",
            group_thousands(all.errors),
            errnos(&all)
        )
    } else {
        String::new()
    };
    line(
        out,
        "total",
        format!(
            "{} calls{failed}; {} read, {} written",
            group_thousands(all.calls),
            format_size(r.bytes_read),
            format_size(r.bytes_written)
        ),
    );
}

/// The kernel's own counters beside the traced ones.
fn kernel(out: &mut String, r: &TraceReport) {
    if let Some(io) = r.proc_io {
        line(
            out,
            "kernel",
            format!(
                "{}: /proc/<pid>/io at exit: {} read calls, {} write calls, rchar {}, wchar {}, storage {} read / {} written (traced: {} read calls, {} write calls; the kernel's counts also hold execve's own reads of the program and its loader, and children the command reaped)",
                match r.kernel_agrees() {
                    Some(true) => "ok".to_string(),
                    Some(false) => "MISMATCH".to_string(),
                    None => format!(
                        "not compared ({} child process(es) outlived the command's first process; its counters do not hold their I/O)",
                        r.outlived
                    ),
                },
                group_thousands(io.syscr),
                group_thousands(io.syscw),
                format_size(io.rchar),
                format_size(io.wchar),
                format_size(io.read_bytes),
                format_size(io.write_bytes),
                group_thousands(r.calls_of(&["read", "pread64", "readv", "preadv"])),
                group_thousands(r.calls_of(&["write", "pwrite64", "writev", "pwritev"])),
            ),
        );
    }
}

/// The tool's own figure, and the traced rates beside it.
fn claim(out: &mut String, r: &TraceReport) {
    if let Some(c) = &r.claim {
        let records = match (c.records_in, c.records_out) {
            (Some(i), Some(o)) => format!(", {i} records in, {o} out"),
            (Some(i), None) => format!(", {i} read calls"),
            (None, Some(o)) => format!(", {o} write calls"),
            (None, None) => String::new(),
        };
        line(
            out,
            "claim",
            format!(
                "{} says {} read, {} written in {} = {:.1} MiB/s{records}",
                c.tool,
                format_size(c.bytes_read),
                format_size(c.bytes_written),
                format_seconds(c.seconds),
                c.bytes_per_second() / crate::units::MIB as f64
            ),
        );
        let bytes = r.bytes_read.max(r.bytes_written) as f64;
        let rate = |s: f64| {
            if s > 0.0 {
                bytes / s / crate::units::MIB as f64
            } else {
                0.0
            }
        };
        line(
            out,
            "",
            format!(
                "traced: {:.1} MiB/s over the whole run, {:.1} MiB/s without its fsync-type calls",
                rate(r.seconds),
                rate(r.seconds_without_sync())
            ),
        );
    }
}

/// Processes left running, what tracing cannot see, and what it costs.
fn leftovers(out: &mut String, r: &TraceReport) {
    if !r.still_running.is_empty() {
        let when = match (r.exit_code, r.signal) {
            (None, None) => "the trace stopped".to_string(),
            _ => format!(
                "{} ended",
                r.command.first().map(|c| printable(c)).unwrap_or_default()
            ),
        };
        let names: Vec<String> = r
            .still_running
            .iter()
            .map(|l| {
                format!(
                    "{} {}{}",
                    l.pid,
                    printable(&l.name),
                    if l.stopped { " (stopped)" } else { "" }
                )
            })
            .collect();
        line(
            out,
            "left",
            format!(
                "{} process(es) were still running when {when} ({}): they run on, untraced; their later I/O is not counted{}",
                r.still_running.len(),
                names.join(", "),
                if r.stops.as_deref() == Some(crate::cmd::trace::STOPS_FILTERED) {
                    format!(
                        "; they keep the seccomp filter the trace installed, so with no tracer the calls it counts (read, write, open…) now fail with ENOSYS in them: trace with {}=1 for a command that leaves processes working",
                        crate::trace::filter::EVERY_CALL_ENV
                    )
                } else {
                    String::new()
                }
            ),
        );
    }
    for u in &r.unseen {
        line(out, "unseen", printable(u));
    }
    let filtered = r.stops.as_deref() == Some(crate::cmd::trace::STOPS_FILTERED);
    if let Some(ns) = r.overhead_ns_per_call {
        line(
            out,
            "overhead",
            if filtered {
                format!(
                    "tracing adds about {} per traced call here (measured just before): traced times include it; the program's other calls run at full speed",
                    format_seconds(ns / 1e9)
                )
            } else {
                format!(
                    "tracing adds about {} per system call here (measured just before): traced times include it",
                    format_seconds(ns / 1e9)
                )
            },
        );
    }
    match (&r.stops, &r.stops_why) {
        (Some(_), _) if filtered => line(
            out,
            "stops",
            format!(
                "only at the calls counted: a seccomp-bpf filter in the kernel stopped the program there and let its other calls run at full speed ({}=1 stops at every call instead)",
                crate::trace::filter::EVERY_CALL_ENV
            ),
        ),
        (Some(_), why) => line(
            out,
            "stops",
            format!(
                "at every system call ({}): the program's other calls are slowed too",
                why.as_deref().unwrap_or("no seccomp filter")
            ),
        ),
        (None, _) => {}
    }
}

/// The offsets as rows of bars: 8 rows, each covering 4 buckets.
fn histogram(h: &Histogram) -> String {
    let mut out = String::new();
    let rows: Vec<u64> = h.counts.chunks(4).map(|c| c.iter().sum()).collect();
    let last = rows.iter().rposition(|&c| c > 0).unwrap_or(0);
    let max = rows.iter().copied().max().unwrap_or(1).max(1);
    let span = h.width * 4;
    for (i, &c) in rows.iter().enumerate().take(last + 1) {
        let bar = "#".repeat(((c * 40).div_ceil(max)) as usize);
        line(
            &mut out,
            if i == 0 { "offsets" } else { "" },
            format!(
                "{:>9} .. {:>9} {:>10} {bar}",
                format_size(span * i as u64),
                format_size(span * (i as u64 + 1)),
                group_thousands(c)
            ),
        );
    }
    out
}

/// Offsets against time: 6 rows (offset, highest on top) by one column per point kept. A
/// sequential reader draws a rising diagonal, a random one scatter.
/// The order is the one counted over every access (`order`), or, in reports from before it
/// was counted, read from the points kept.
fn timeline(t: &Timeline, order: Option<crate::trace::order::Kind>) -> String {
    const ROWS: u64 = 6;
    let max = t.offsets.iter().copied().max().unwrap_or(0).max(1);
    let rising = t.offsets.windows(2).filter(|w| w[1] > w[0]).count();
    let order = if let Some(kind) = order {
        kind.label()
    } else if rising * 10 >= (t.offsets.len() - 1) * 9 {
        "in rising order (sequential)".to_string()
    } else if rising * 10 <= (t.offsets.len() - 1) * 6 {
        "in no order (random)".to_string()
    } else {
        "partly in order".to_string()
    };
    let mut out = String::new();
    for row in (0..ROWS).rev() {
        let cells: String = t
            .offsets
            .iter()
            .map(|&o| {
                if (o * ROWS / (max + 1)) == row {
                    '*'
                } else {
                    ' '
                }
            })
            .collect();
        let label = if row == ROWS - 1 { "in time" } else { "" };
        let _ = writeln!(out, "{label:<9} |{cells}|");
    }
    line(
        &mut out,
        "",
        format!(
            "every {} access(es), left to right; offsets 0 .. {}: {order}",
            t.stride,
            format_size(max)
        ),
    );
    out
}

impl Exportable for TraceReport {
    const COMMAND: &'static str = "trace";
    const HAS_CHART: bool = true;
    /// Where each busy file was accessed, in order: a ramp for sequential, a cloud for
    /// random (the plot the iozone audit drew).
    fn chart(&self) -> Option<Chart> {
        let series = self
            .files
            .iter()
            .filter(|f| f.busy())
            .take(6)
            .map(|f| Series {
                name: crate::text::printable(&f.path),
                points: f
                    .timeline
                    .offsets
                    .iter()
                    .enumerate()
                    .map(|(i, &o)| {
                        (
                            (i as u64 * f.timeline.stride) as f64,
                            o as f64 / (1u64 << 20) as f64,
                        )
                    })
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!(
                "where the calls went: {}",
                crate::text::printable(&self.command.join(" "))
            ),
            x_label: "access number (read, write or lseek, in order)".into(),
            y_label: "offset (MiB)".into(),
            series,
            points_only: true,
            ..Chart::default()
        })
    }
    fn text(&self) -> String {
        text(self)
    }
    /// The CSV table made readable, its paths made printable (control characters escaped);
    /// then what was left running and what tracing cannot see.
    fn markdown(&self) -> Vec<String> {
        let mut table = self.table();
        for row in &mut table.rows {
            row[0] = crate::text::printable(&row[0]);
        }
        let mut blocks = vec![crate::report::markdown::table(
            &crate::report::markdown::humanize(&table),
            None,
        )];
        let mut notes: Vec<String> = self
            .still_running
            .iter()
            .map(|l| {
                format!(
                    "still running when the command ended, not traced after: {} {}{}",
                    l.pid,
                    crate::text::printable(&l.name),
                    if l.stopped { " (stopped)" } else { "" }
                )
            })
            .collect();
        notes.extend(self.unseen.iter().map(|u| crate::text::printable(u)));
        if !notes.is_empty() {
            blocks.push(crate::report::markdown::list("Not seen:", &notes));
        }
        blocks
    }
    fn ok(&self) -> bool {
        self.kernel_agrees() != Some(false)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn table(&self) -> Table {
        let header = [
            "file",
            "call",
            "calls",
            "errors",
            "bytes_requested",
            "bytes_returned",
            "seconds_inside",
            "errnos",
        ];
        let rows = self
            .files
            .iter()
            .flat_map(|f| {
                f.calls.iter().map(|(name, s)| {
                    cells([
                        f.path.clone(),
                        name.clone(),
                        s.calls.to_string(),
                        s.errors.to_string(),
                        s.bytes_requested.to_string(),
                        s.bytes_returned.to_string(),
                        (s.nanos as f64 / 1e9).to_string(),
                        s.errnos
                            .iter()
                            .map(|(e, n)| format!("{e}:{n}"))
                            .collect::<Vec<_>>()
                            .join(" "),
                    ])
                })
            })
            .collect();
        table(&header, rows)
    }
}
