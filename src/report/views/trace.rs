//! `trace`: per file, a table of calls by type, the bytes moved, fsync time and where the
//! accesses fell; then the totals, the kernel's counters, the tool's own claim, and what
//! tracing cannot see or costs.

use crate::measure::external::Moves;
use crate::report::cells::{cells, table};
use crate::report::csv::Table;
use crate::report::svg::{Chart, Series};
use crate::report::text::{line, right_align, table_with};
use crate::report::view::Exportable;
use crate::results::trace::TraceReport;
use crate::text::printable;
use crate::trace::claims::{BytesCheck, Calls, Covers, FigureCheck, Placement, Reason, Verdict};
use crate::trace::durable::{Durability, Waited};
use crate::trace::tally::{FileStats, Histogram, Timeline};
use crate::units::{format_mib_per_s, format_seconds, format_size, group_thousands};
use std::fmt::Write;

/// Files shown in full; the rest are summed in one line (all are in --json and --csv).
const MAX_FILES: usize = 20;
/// Files that only failed (a failed open, say) named one per line; the rest summed.
const MAX_FAILED: usize = 8;

/// Renders a trace. Every name that comes from the command or the file system (its
/// arguments, paths, process names) is made printable: control characters escaped.
///
/// The answer comes last, on the last screen of a terminal: the totals, the kernel's
/// counters, the tool's claims checked, and whether its writes waited for the disk. Before
/// it the data files in full, the files it opened only to load itself in one line (each in
/// full with `--verbose`), then the clock, what tracing cannot see and what it costs.
pub fn text(r: &TraceReport, verbose: bool) -> String {
    let mut out = String::new();
    header(&mut out, r);
    files(&mut out, r, verbose);
    if let Some(c) = &r.clock {
        super::trace_clock::text(&mut out, c, r.seconds);
    }
    leftovers(&mut out, r);
    let _ = writeln!(out);
    totals(&mut out, r);
    kernel(&mut out, r, verbose);
    claim(&mut out, r);
    for sentence in waited_lines(r) {
        line(&mut out, "verdict", printable(&sentence));
    }
    out
}

/// The command, how it ended and how long it ran.
fn header(out: &mut String, r: &TraceReport) {
    let status = match (r.exit_code, r.signal) {
        (Some(c), _) => format!("exit {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => {
            let grace = crate::trace::sys::GRACE.as_secs_f64();
            let waited = r.waited_seconds.unwrap_or(grace);
            format!(
                "not ended (it did not end within {} of the signal passed on to it{}; it runs on, not counted)",
                format_seconds(waited),
                if waited < grace {
                    format!(
                        ", when a second signal cut the wait of {} short",
                        format_seconds(grace)
                    )
                } else {
                    String::new()
                }
            )
        }
    };
    let command: Vec<String> = r.command.iter().map(|a| printable(a)).collect();
    line(out, "trace", command.join(" "));
    line(
        out,
        "ran",
        format!(
            "{} in {} ({}); {} task(s), {} exec(s){}",
            status,
            format_seconds(r.seconds),
            sync_words(r),
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

/// The time inside fsync-type calls beside the run's wall time. It is summed over the
/// tasks, so where it exceeds the wall time they synced at once and it cannot be taken
/// from the wall time: it is told per task, with no figure "without" it.
pub fn sync_words(r: &TraceReport) -> String {
    if r.sync_seconds > r.seconds {
        format!(
            "{} inside fsync-type calls summed over its {} tasks, more than the wall time: they synced at the same time, so no time without them is given",
            format_seconds(r.sync_seconds),
            r.tasks
        )
    } else {
        format!(
            "{} without the {} inside fsync-type calls",
            format_seconds(r.seconds_without_sync()),
            format_seconds(r.sync_seconds)
        )
    }
}

/// The data files in full (busiest first), the others summed in a line or two: the files
/// the program opened only to load itself or to talk in one line, each in full with
/// `--verbose` (see [`crate::trace::role`]).
fn files(out: &mut String, r: &TraceReport, verbose: bool) {
    use crate::trace::role::{Role, roles};
    let (data, loading): (Vec<_>, Vec<_>) = r
        .files
        .iter()
        .zip(roles(&r.files))
        .partition(|(_, role)| *role == Role::Data);
    let data: Vec<&FileStats> = data.into_iter().map(|(f, _)| f).collect();
    let loading: Vec<&FileStats> = loading.into_iter().map(|(f, _)| f).collect();
    // With --verbose every file in full, the data files first; else the data files.
    let mut shown: Vec<&FileStats> = data.clone();
    if verbose {
        shown.extend(loading.iter().copied());
    }
    // Files that moved no bytes and had no syncs or seeks (libraries the loader mapped,
    // locale files) in one line; the others in full.
    let (busy, quiet): (Vec<&FileStats>, Vec<&FileStats>) =
        shown.into_iter().partition(|f| f.busy());
    // The busiest files in full (by bytes moved, syncs and seeks); the rest in one line.
    let mut busy = busy;
    let sort = |v: &mut Vec<&FileStats>| {
        v.sort_by_key(|f| std::cmp::Reverse((f.bytes_read + f.bytes_written, f.syncs, f.seeks)))
    };
    if verbose {
        // The data files first, each group busiest first.
        let (mut first, mut then): (Vec<_>, Vec<_>) = busy
            .into_iter()
            .partition(|f| data.iter().any(|d| std::ptr::eq(*d, *f)));
        sort(&mut first);
        sort(&mut then);
        first.extend(then);
        busy = first;
    } else {
        sort(&mut busy);
    }
    let cap = if verbose { usize::MAX } else { MAX_FILES };
    let shown = busy.len().min(cap);
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
    if !verbose && !loading.is_empty() {
        line(out, "loading", loaded_line(&loading));
    }
}

/// The files the program opened only to load itself or its locale, or to talk, in one
/// line: how many, of which kinds, what they moved, and how many failed to open.
pub fn loaded_line(loading: &[&FileStats]) -> String {
    // Calls on no file (anonymous mappings) are no file the program opened.
    let loading: Vec<&FileStats> = loading
        .iter()
        .copied()
        .filter(|f| f.path != crate::trace::tally::NO_FILE)
        .collect();
    let mut kinds: Vec<&str> = Vec::new();
    for k in crate::trace::role::KIND_ORDER {
        if loading
            .iter()
            .any(|f| crate::trace::role::kind_words(f) == *k)
        {
            kinds.push(k);
        }
    }
    let read: u64 = loading.iter().map(|f| f.bytes_read).sum();
    let written: u64 = loading.iter().map(|f| f.bytes_written).sum();
    let moved = match (read, written) {
        (0, 0) => "nothing read or written".to_string(),
        (r, 0) => format!("{} read", format_size(r)),
        (0, w) => format!("{} written", format_size(w)),
        (r, w) => format!("{} read, {} written", format_size(r), format_size(w)),
    };
    let failed = loading
        .iter()
        .filter(|f| !f.busy() && f.total().errors > 0)
        .count();
    let failed = match failed {
        0 => String::new(),
        n => format!(", {n} of them not found or refused"),
    };
    format!(
        "{} file(s) the program opened to load itself or its locale, or to talk ({}): {moved}{failed} (each with --verbose)",
        loading.len(),
        kinds.join(", ")
    )
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
        out.push_str(&timeline(&f.timeline, f.order.label()));
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
fn kernel(out: &mut String, r: &TraceReport, verbose: bool) {
    if let Some(io) = r.proc_io {
        // Where they agree, the traced counts beside them are a detail (--verbose).
        let traced = if verbose || r.kernel_agrees() != Some(true) {
            format!(
                " (traced: {} read calls, {} write calls; the kernel's counts also hold execve's own reads of the program and its loader, and children the command reaped)",
                group_thousands(r.calls_of(&["read", "pread64", "readv", "preadv"])),
                group_thousands(r.calls_of(&["write", "pwrite64", "writev", "pwritev"])),
            )
        } else {
            String::new()
        };
        line(
            out,
            "kernel",
            format!(
                "{}: /proc/<pid>/io at exit: {} read calls, {} write calls, rchar {}, wchar {}, storage {} read / {} written{traced}",
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
            ),
        );
    }
}

/// The tool's own figures, each checked against what the trace saw over the right time.
fn claim(out: &mut String, r: &TraceReport) {
    let runs = tool_runs(r);
    let Some(c) = &r.claim else {
        if let Some(runs) = runs {
            line(out, "claim", runs);
        }
        return;
    };
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
    if let Some(runs) = runs {
        line(out, "", runs);
    }
    for sentence in claim_lines(r) {
        line(out, "", printable(&sentence));
    }
    for (i, sentence) in reference_lines(r).into_iter().enumerate() {
        line(
            out,
            if i == 0 { "untraced" } else { "" },
            printable(&sentence),
        );
    }
}

/// `--reference`: the untraced run beside the traced one, its wall time and each figure the
/// tool printed both times, chosen by their ratio.
pub fn reference_lines(r: &TraceReport) -> Vec<String> {
    let Some(reference) = &r.reference else {
        return Vec::new();
    };
    let same = crate::measure::verdict::SAME_WITHIN;
    let compare = |traced: f64, own: f64, slower: &str, faster: &str| -> String {
        let ratio = traced / own;
        if ratio > same {
            format!("{ratio:.2}x {slower}")
        } else if ratio < 1.0 / same {
            format!("{:.2}x {faster}", 1.0 / ratio)
        } else {
            "about the same (within 10%)".to_string()
        }
    };
    let mut lines = vec![format!(
        "run once untraced just before (--reference), the command took {}{}; traced, {}: {}",
        format_seconds(reference.seconds),
        match reference.exit_code {
            Some(0) => String::new(),
            Some(c) => format!(" and exited {c}"),
            None => " and was killed".to_string(),
        },
        format_seconds(r.seconds),
        compare(r.seconds, reference.seconds.max(1e-9), "as long", "shorter")
    )];
    let (Some(traced), Some(own)) = (&r.claim, &reference.claim) else {
        return lines;
    };
    for f in &traced.figures {
        let Some(o) = own
            .figures
            .iter()
            .find(|o| o.label == f.label && o.moves == f.moves)
        else {
            continue;
        };
        let (Some(t), Some(u)) = (f.bytes_per_second(), o.bytes_per_second()) else {
            continue;
        };
        if u <= 0.0 {
            continue;
        }
        lines.push(format!(
            "{}: untraced it said {} ({}); traced, {}: the traced figure is {}",
            f.label,
            format_mib_per_s(u),
            o.said,
            format_mib_per_s(t),
            compare(u, t.max(1e-9), "slower", "faster")
        ));
    }
    lines
}

/// How many times the known tool ran and which of its outputs were read, when it ran from
/// a shell's script or more than once: chosen by the counts.
pub fn tool_runs(r: &TraceReport) -> Option<String> {
    let t = r.tool_runs.as_ref()?;
    let by = t
        .shell
        .as_ref()
        .map(|s| format!(" (from {}'s script)", printable(s)))
        .unwrap_or_default();
    let times = match t.runs {
        1 => "once".to_string(),
        n => format!("{} times", group_thousands(n)),
    };
    let tool = printable(&t.tool);
    Some(match (t.runs, t.outputs_read) {
        (0, _) => format!(
            "{tool} is named in the script{by} but was not seen to run{}",
            if t.outputs_read > 0 {
                ": the output read is checked as its"
            } else {
                ": nothing of it is checked"
            }
        ),
        (_, 0) => format!(
            "{tool} ran {times}{by}, but no output of it was read (it went elsewhere, or it printed none): none of its figures is checked"
        ),
        (n, k) if n == k && n > 1 => format!(
            "{tool} ran {times}{by}: each run's output is read and checked on its own (run 1 to run {n}, in the order they ran)"
        ),
        (n, k) if n == k => format!("{tool} ran {times}{by}: its output is read and checked"),
        (n, 1) if n > 1 => format!(
            "{tool} ran {times}{by}, and its output is read as one: its figures may be any run's; trace one run at a time to check each"
        ),
        (n, k) => format!(
            "{tool} ran {times}{by}, and {} of its outputs were read: they are taken as its runs in the order they ran (run 1 to run {k}){}",
            group_thousands(k),
            if k < n {
                "; the other runs are not checked"
            } else {
                ""
            }
        ),
    })
}

/// Each claimed figure against the trace, the bytes per direction, and whether fsync and
/// close were inside what the tool timed: one sentence each.
fn claim_lines(r: &TraceReport) -> Vec<String> {
    let Some(check) = &r.claim_check else {
        return Vec::new();
    };
    let mut lines: Vec<String> = check.figures.iter().map(claim_figure).collect();
    lines.extend(check.figures.iter().filter_map(stretch_sentence));
    lines.extend(check.bytes.iter().map(claim_bytes));
    // fsync and close once per direction when they were placed from the calls' time (the
    // same for every figure of that direction); per figure when from its timed region.
    let mut told: Vec<String> = Vec::new();
    for f in &check.figures {
        let region = f
            .traced
            .as_ref()
            .is_some_and(|t| matches!(t.covers, Covers::TimedRegion | Covers::OpenToClose));
        for (name, calls) in [("fsync", f.fsync), ("close", f.close)] {
            let Some(calls) = calls else { continue };
            let sentence = placement_sentence(name, &calls);
            let sentence = if region {
                format!("{}: {sentence}", f.figure.label)
            } else {
                let side = if f.figure.moves == Moves::Read {
                    "its read figures"
                } else {
                    "its write figures"
                };
                format!("{side}, {sentence}")
            };
            if !told.contains(&sentence) {
                told.push(sentence);
            }
        }
    }
    lines.extend(told);
    lines
}

/// bonnie++: which stretch of the trace a figure's test was found in, or that none was.
pub fn stretch_sentence(f: &FigureCheck) -> Option<String> {
    let s = f.stretch.as_ref()?;
    let label = &f.figure.label;
    let what = match s.test {
        crate::trace::phases::Test::PerCharWrite => "one-byte writes only",
        crate::trace::phases::Test::BlockWrite => "block writes only",
        crate::trace::phases::Test::Rewrite => "block reads each written back over itself",
        crate::trace::phases::Test::PerCharRead => "one-byte reads only",
        crate::trace::phases::Test::BlockRead => "block reads in order",
        crate::trace::phases::Test::Seeks => "block reads after a seek each, some written back",
    };
    let (Some(start), Some(end)) = (s.start_seconds, s.end_seconds) else {
        return Some(format!(
            "{label}: its test's stretch was not found (no open-to-close stretch of a file did {what}{}): {}",
            if s.found > 0 {
                format!("; {} did, fewer than its runs", group_thousands(s.found))
            } else {
                String::new()
            },
            if f.figure.moves == Moves::Neither {
                "nothing to place it by"
            } else {
                "it is checked against every call of its direction instead"
            }
        ));
    };
    let clock = match s.clock_after_close {
        Some(true) => ", and the thread read its clock after the close",
        Some(false) => ", but the thread read no clock after the close",
        None => "",
    };
    let many = match s.test {
        crate::trace::phases::Test::Seeks if s.found > 1 => format!(
            " (one of {} such stretches, one per seek process: the first of its run's)",
            group_thousands(s.found)
        ),
        _ if s.found > 1 => format!(
            " (one of {} such stretches, taken in the order its runs ran)",
            group_thousands(s.found)
        ),
        _ => String::new(),
    };
    // What it moved over its time, where the figure counts bytes.
    let moved_there = match &f.traced {
        Some(t) if t.covers == Covers::OpenToClose => format!(
            ": {} {} in {} = {}",
            format_size(t.bytes),
            moved(t.moves),
            format_seconds(t.seconds),
            format_mib_per_s(t.bytes_per_second())
        ),
        _ => String::new(),
    };
    Some(format!(
        "{label}: its test is the stretch of thread {} from {:.3} s to {:.3} s ({what}){many}{clock}{moved_there}",
        s.tid.unwrap_or(0),
        start,
        end
    ))
}

/// A direction's name as a phrase: `read`, `written`, `read and written back`.
fn moved(m: Moves) -> &'static str {
    match m {
        Moves::Read => "read",
        Moves::Write => "written",
        Moves::Both => "read and written back",
        Moves::Neither => "",
    }
}

/// The calls a traced figure counts, as a phrase.
fn call_kind(m: Moves) -> &'static str {
    match m {
        Moves::Read => "read-type",
        Moves::Write => "write-type",
        _ => "read- and write-type",
    }
}

/// One claimed figure and what the trace says of it: the words chosen by its verdict and
/// the reason the numbers support.
pub fn claim_figure(f: &FigureCheck) -> String {
    let fig = &f.figure;
    let record = fig
        .record_size
        .map(|r| format!(", {} records", format_size(r)))
        .unwrap_or_default();
    let head = format!("{} ({}{record})", fig.label, format_size(fig.bytes));
    let rate = |bps: f64| format_mib_per_s(bps);
    let Some(claimed) = fig.bytes_per_second() else {
        return match f.verdict {
            Verdict::NotBytes => format!(
                "{}: {}: counts operations, not bytes: not compared",
                fig.label, fig.said
            ),
            _ if fig.said.starts_with("+++") => format!(
                "{head}: printed no figure ({}): the test ran too quickly for it to time: not compared",
                fig.said
            ),
            _ => format!("{head}: printed no figure ({}): not compared", fig.said),
        };
    };
    let Some(t) = &f.traced else {
        if f.reason == Reason::Unseen {
            return format!(
                "{head}: {} (said {}): not seen: no file the trace followed had even {:.0}% of its bytes {} (those it saw are other files', a loader's or a configuration's): they moved where ptrace does not see (io_uring, a mapping): not compared",
                rate(claimed),
                fig.said,
                crate::trace::claims::SEEN_SHARE * 100.0,
                moved(fig.moves)
            );
        }
        return format!(
            "{head}: {} (said {}): the trace saw no bytes {} on any file",
            rate(claimed),
            fig.said,
            moved(fig.moves)
        );
    };
    let what = match t.covers {
        Covers::InsideCalls => format!(
            "inside {} {} call(s) on {} file(s) ({} in {})",
            group_thousands(t.calls),
            call_kind(t.moves),
            t.files.len(),
            format_size(t.bytes),
            format_seconds(t.seconds)
        ),
        Covers::AioInFlight => format!(
            "over {} libaio request(s) on {} file(s) in flight ({} in {} from io_submit to io_getevents)",
            group_thousands(t.calls),
            t.files.len(),
            format_size(t.bytes),
            format_seconds(t.seconds)
        ),
        Covers::OpenToClose => format!(
            "over its own test's stretch from the open of its file to the close ({} in {} calls, {})",
            format_size(t.bytes),
            group_thousands(t.calls),
            format_seconds(t.seconds)
        ),
        Covers::TimedRegion => format!(
            "over its own timed region ({} in {} calls, {})",
            format_size(t.bytes),
            group_thousands(t.calls),
            format_seconds(t.seconds)
        ),
    };
    let traced = rate(t.bytes_per_second());
    // Two decimals, or three significant digits below 0.1 (a 1-byte test's 0.003x).
    let ratio = match f.ratio.unwrap_or(1.0) {
        r if r > 0.0 && r < 0.1 => format!("{:.*}", (2.0 - r.log10().floor()) as usize, r),
        r => format!("{r:.2}"),
    };
    let judged = match f.verdict {
        Verdict::Agree => format!("agrees with the traced {traced} {what} (within 10%)"),
        Verdict::ClaimHigher => format!("claim higher ({ratio}x the traced {traced} {what})"),
        Verdict::ClaimLower => format!("claim lower ({ratio}x the traced {traced} {what})"),
        _ => format!("unclear ({ratio}x the traced {traced} {what}, but their spreads overlap)"),
    };
    let why = match f.reason {
        Reason::None => String::new(),
        Reason::Unseen => format!(
            ": the trace saw only {} {} where it claims {}: the rest moved where ptrace does not see (a mapping, libaio, io_uring)",
            format_size(t.bytes),
            moved(t.moves),
            format_size(fig.bytes)
        ),
        Reason::Mixed if !f.shared_with.is_empty() => {
            let mut names: Vec<&str> = f.shared_with.iter().take(4).map(String::as_str).collect();
            if f.shared_with.len() > 4 {
                names.push("...");
            }
            format!(
                ": the traced figure is every {} call on its files, its other figures' too ({}): only its own timed regions can tell them apart",
                call_kind(t.moves),
                names.join(", ")
            )
        }
        Reason::Mixed => {
            ": the traced figure also holds bytes it does not claim (a file laid out before its timed work, say)".to_string()
        }
        Reason::PartlyUntimed => {
            ": it reports less time than its calls took inside: some of them fell outside what it timed".to_string()
        }
        Reason::Fsync => format!(
            ": its time has room for the fsync ({}), which accounts for the difference",
            format_seconds(f.fsync.map_or(0.0, |c| c.seconds))
        ),
        Reason::TracingStops => format!(
            ": its time holds {} more than its calls took inside, which tracing's own stops ({}) can account for",
            format_seconds(f.gap_seconds),
            format_seconds(f.tracing_seconds.unwrap_or(0.0))
        ),
        Reason::OwnWork => format!(
            ": its time holds {} more than its calls took inside, more than tracing's stops ({}) account for: its own work between the calls",
            format_seconds(f.gap_seconds),
            f.tracing_seconds
                .map_or("not measured".to_string(), format_seconds)
        ),
    };
    format!(
        "{head}: {} (said {}): {}{judged}{why}",
        rate(claimed),
        fig.said,
        distorted(f).unwrap_or_default()
    )
}

/// Said first on a claim line where tracing took more than
/// [`crate::measure::verdict::TRACING_DISTORTS`] of the time the program timed: its figure
/// is the traced program's, not its own, and by about how much.
pub fn distorted(f: &FigureCheck) -> Option<String> {
    let took = f.tracing_seconds?;
    let timed = f.figure.seconds.filter(|&s| s > 0.0)?;
    let share = (took / timed).min(1.0);
    if share <= crate::measure::verdict::TRACING_DISTORTS {
        return None;
    }
    // Near all of it, the estimate of how much faster means nothing but "many times".
    if share >= 0.95 {
        return Some(format!(
            "not its own speed: tracing took nearly all of the {} it timed ({} by its cost per call), so untraced it would run many times faster; ",
            format_seconds(timed),
            format_seconds(took)
        ));
    }
    Some(format!(
        "not its own speed: tracing took about {:.0}% of the {} it timed ({}), so untraced it would run about {:.1}x faster; ",
        share * 100.0,
        format_seconds(timed),
        format_seconds(took),
        1.0 / (1.0 - share)
    ))
}

/// A direction's claimed bytes against the traced ones.
fn claim_bytes(b: &BytesCheck) -> String {
    let way = moved(b.moves);
    let words = match b.verdict {
        Verdict::Agree => "the same, within 10%".to_string(),
        Verdict::ClaimHigher => {
            "the trace saw fewer: the rest moved where ptrace does not see".to_string()
        }
        Verdict::ClaimLower => {
            "the trace saw more: the traced rate holds bytes its figures do not claim".to_string()
        }
        Verdict::NotTraced => "the trace saw none".to_string(),
        _ => "unclear".to_string(),
    };
    format!(
        "{way}: its figures claim {}, the trace saw {} {way} on its data files ({words})",
        format_size(b.claimed),
        format_size(b.traced)
    )
}

/// Whether fsync-type or close calls were inside what the tool timed, as the numbers say.
pub fn placement_sentence(name: &str, c: &Calls) -> String {
    // Placed by the clock reads, calls carry their count only (no time of their own).
    let calls = if c.seconds > 0.0 {
        format!(
            "{name}: {} call(s) taking {}",
            group_thousands(c.calls),
            format_seconds(c.seconds)
        )
    } else {
        format!("{name}: {} call(s)", group_thousands(c.calls))
    };
    match c.placement {
        Placement::NoneMade => format!("{name}: none on its files"),
        Placement::Inside => format!("{calls}: inside its timed region: its figure includes them"),
        Placement::Outside if c.tool_seconds > 0.0 && c.calls_seconds > 0.0 => format!(
            "{calls}: outside what it timed: its {} cannot hold the {} inside its I/O calls and these together, so its figure leaves them out",
            format_seconds(c.tool_seconds),
            format_seconds(c.calls_seconds)
        ),
        Placement::Outside => {
            format!("{calls}: after its timed region: its figure leaves them out")
        }
        Placement::Fits => format!(
            "{calls}: they fit in its {} beside the {} inside its I/O calls: they may have been timed (only its clock reads can tell)",
            format_seconds(c.tool_seconds),
            format_seconds(c.calls_seconds)
        ),
    }
}

/// The flag of a recognised tool that makes its figure wait for the disk.
fn sync_option(tool: &str) -> Option<&'static str> {
    match tool {
        "dd" => Some("conv=fdatasync"),
        "fio" => Some("--end_fsync=1"),
        "iozone" => Some("-e"),
        _ => None,
    }
}

/// Up to three paths, made printable, then how many more.
fn file_list(paths: &[String]) -> String {
    let mut names: Vec<String> = paths.iter().take(3).map(|p| printable(p)).collect();
    if paths.len() > 3 {
        names.push(format!("{} more", paths.len() - 3));
    }
    match names.len() {
        0 => "its files".to_string(),
        1 => names.remove(0),
        _ => {
            let last = names.pop().unwrap_or_default();
            format!("{} and {last}", names.join(", "))
        }
    }
}

/// Whether writes waited for the disk, in one sentence chosen by [`Waited`]. `subject` is
/// the figure ("dd's 1214 MiB/s") or the run ("dd's 88.18 ms"); `figure` what the
/// sentence calls it ("the figure", "its time"); `tool` the recognised tool, whose own
/// option to sync is named; `timed` where a sync inside was made ("what it timed", "the
/// run").
pub fn waited_sentence(
    subject: &str,
    figure: &str,
    timed: &str,
    tool: Option<&str>,
    d: &Durability,
) -> String {
    let files = file_list(&d.files);
    // A sync is told on the files it was made on, and the written files it missed apart.
    let synced = if d.synced.is_empty() {
        files.clone()
    } else {
        file_list(&d.synced)
    };
    let missed = if d.unsynced.is_empty() {
        String::new()
    } else {
        format!(" (none on {})", file_list(&d.unsynced))
    };
    let syncs = if d.sync_calls.is_empty() {
        "fsync".to_string()
    } else {
        d.sync_calls.join(" and ")
    };
    let counted = format!(
        "{} call(s), {}",
        group_thousands(d.syncs),
        format_seconds(d.sync_seconds)
    );
    let fix = tool
        .and_then(|t| sync_option(t).map(|o| format!("; {o} ({t}) makes it the disk's")))
        .unwrap_or_default();
    match d.waited {
        Waited::PageCache => format!(
            "{subject} never waited for the disk: no fsync, fdatasync or O_DIRECT on {files}, so {figure} is the page cache's{fix}"
        ),
        Waited::SyncInside => format!(
            "{subject} waited for the disk: its {syncs} on {synced} ({counted}) came inside {timed}, so {figure} includes it{missed}"
        ),
        Waited::SyncAfter => format!(
            "{subject} never waited for the disk: its {syncs} on {synced} ({counted}) came after its timer stopped, so {figure} leaves it out and is the page cache's{fix}"
        ),
        Waited::SyncOutside => format!(
            "{subject} never waited for the disk: its {syncs} on {synced} ({counted}) came outside what it timed (its time cannot hold it beside its I/O calls), so {figure} leaves it out and is the page cache's{fix}"
        ),
        Waited::SyncMaybe => format!(
            "{subject} may include a wait for the disk: its {syncs} on {synced} ({counted}) fits in the time it reports beside its I/O calls; only its clock reads can tell whether it was timed"
        ),
        Waited::Direct => format!(
            "{subject} did not go through the page cache: O_DIRECT on {files}, so each write waited for the device"
        ),
        Waited::SyncWrites => format!(
            "{subject} waited for the disk at each write: {} on {files}, so {figure} is the disk's",
            d.flag.as_deref().unwrap_or("O_DSYNC")
        ),
    }
}

/// Whether the writes each checked figure timed waited for the disk (figures with the same
/// answer in one sentence), or, with no figure checked, the whole run's.
pub fn waited_lines(r: &TraceReport) -> Vec<String> {
    let program = r
        .command
        .first()
        .map(|c| crate::trace::tool_name(std::ffi::OsStr::new(c)))
        .unwrap_or_default();
    let Some(check) = &r.claim_check else {
        let Some(d) = crate::trace::durable::of_run(&r.files) else {
            return Vec::new();
        };
        let tool = sync_option(&program).map(|_| program.as_str());
        let subject = format!("{}'s {}", printable(&program), format_seconds(r.seconds));
        return vec![waited_sentence(&subject, "its time", "the run", tool, &d)];
    };
    let tool = r.claim.as_ref().map_or(program.clone(), |c| c.tool.clone());
    let writers = check
        .figures
        .iter()
        .filter(|f| matches!(f.figure.moves, Moves::Write | Moves::Both))
        .count();
    let mut told: Vec<(Durability, Vec<String>)> = Vec::new();
    for f in &check.figures {
        let (Some(d), Some(rate)) = (
            crate::trace::durable::of_figure(f, &r.files),
            f.figure.bytes_per_second(),
        ) else {
            continue;
        };
        let one = if writers > 1 {
            format!("{} {}", f.figure.label, format_mib_per_s(rate))
        } else {
            format_mib_per_s(rate)
        };
        match told.iter_mut().find(|(t, _)| *t == d) {
            Some((_, subjects)) => subjects.push(one),
            None => told.push((d, vec![one])),
        }
    }
    told.into_iter()
        .map(|(d, subjects)| {
            let subject = format!("{}'s {}", printable(&tool), subjects.join(", "));
            let figure = if subjects.len() > 1 {
                "each figure"
            } else {
                "the figure"
            };
            waited_sentence(&subject, figure, "what it timed", Some(tool.as_str()), &d)
        })
        .collect()
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
                "{} process(es) were still running when {when} ({}): {}",
                r.still_running.len(),
                names.join(", "),
                match r.kept_by {
                    Some(keeper) => format!(
                        "they run on, not counted; ioscope stays behind them in the background (pid {keeper}), counting nothing, to let their calls through the seccomp filter (which cannot be removed) until they end"
                    ),
                    None if r.stops.as_deref() == Some(crate::results::trace::STOPS_FILTERED) => "they run on, untraced; their later I/O is not counted; they keep the seccomp filter, so with no tracer the calls it counts (read, write, open…) now fail with ENOSYS in them: trace with --every-call a command that leaves processes working".to_string(),
                    None => "they run on, untraced; their later I/O is not counted".to_string(),
                }
            ),
        );
    }
    if let Some(s) = crate::trace::i386::Seen::counted_sentence(r.calls_32bit) {
        line(out, "32-bit", s);
    }
    for u in &r.unseen {
        line(out, "unseen", printable(u));
    }
    let filtered = r.stops.as_deref() == Some(crate::results::trace::STOPS_FILTERED);
    let never = matches!(
        r.stops.as_deref(),
        Some(crate::results::trace::STOPS_NEVER | crate::results::trace::STOPS_AT_EXEC)
    );
    let at_exec = r.stops.as_deref() == Some(crate::results::trace::STOPS_AT_EXEC);
    if let Some(lost) = r.lost_events.filter(|&n| n > 0) {
        line(
            out,
            "lost",
            format!(
                "{} events lost (the kernel's ring was full): every count here is a lower bound",
                crate::units::group_thousands(lost)
            ),
        );
    }
    if r.libaio_unread > 0 {
        line(
            out,
            "libaio",
            format!(
                "{} libaio {} requests or results the kernel's programs did not read (over {} requests in one call, or a record lost): those were read from the program's memory afterwards, where it may have reused them",
                group_thousands(r.libaio_unread),
                if r.libaio_unread == 1 {
                    "call had"
                } else {
                    "calls had"
                },
                crate::trace::bpf::MOST_IOCBS
            ),
        );
    }
    if let Some(ns) = r.overhead_ns_per_call {
        // What that came to over the whole run.
        let calls: u64 = r.totals.values().map(|s| s.calls).sum();
        // The kernel engine's stops (at opens, libaio's calls) cost what ptrace's do.
        let stopped = match (r.stopped_calls, r.ns_per_stop) {
            (Some(n), Some(s)) if n > 0 => Some((n, s)),
            _ => None,
        };
        let taken = ns * calls as f64 + stopped.map_or(0.0, |(n, s)| n as f64 * s);
        let share = if r.seconds > 0.0 {
            (taken / 1e9 / r.seconds).min(1.0)
        } else {
            0.0
        };
        let of_run = format!(
            "; over its {} traced calls, about {:.0}% of the run's {}",
            group_thousands(calls),
            share * 100.0,
            format_seconds(r.seconds)
        );
        let text = if let Some((n, s)) = stopped {
            format!(
                "recording adds about {} per traced call here (measured just before), and each of the {} calls the program was stopped at ({}) about {} more (a ptrace stop, measured just after): traced times include both",
                format_seconds(ns / 1e9),
                group_thousands(n),
                if r.libaio_in_kernel == Some(true) {
                    "opens"
                } else {
                    "opens, libaio's calls"
                },
                format_seconds(s / 1e9)
            )
        } else if never {
            format!(
                "recording adds about {} per traced call here (measured just before): traced times include it; the program's other calls run at full speed",
                format_seconds(ns / 1e9)
            )
        } else if filtered {
            format!(
                "tracing adds about {} per traced call here (measured just before): traced times include it; the program's other calls run at full speed",
                format_seconds(ns / 1e9)
            )
        } else {
            format!(
                "tracing adds about {} per system call here (measured just before): traced times include it",
                format_seconds(ns / 1e9)
            )
        };
        line(out, "overhead", format!("{text}{of_run}"));
    }
    if let Some(c) = &r.engine {
        line(
            out,
            "engine",
            format!("{}: {}", c.engine.name(), printable(&c.why)),
        );
    }
    match (&r.stops, &r.stops_why) {
        (Some(_), _) if at_exec => line(
            out,
            "stops",
            if r.libaio_in_kernel == Some(true) {
                "only at each open (to read its name), 32-bit call (to read it in its ABI), exec (to hide the vDSO), fork and signal; the kernel's tracepoints recorded the calls while the program ran, and eBPF programs read libaio's requests and results inside the kernel at each call".to_string()
            } else {
                format!(
                    "only at each open (to read its name), io_submit and io_getevents (to read libaio's requests and results{}), 32-bit call (to read it in its ABI), exec (to hide the vDSO), fork and signal; the kernel's tracepoints recorded the calls while the program ran",
                    r.libaio_why
                        .as_deref()
                        .map(|w| format!(", not read in the kernel: {}", printable(w)))
                        .unwrap_or_default()
                )
            },
        ),
        (Some(_), _) if never => line(
            out,
            "stops",
            "never: the kernel's tracepoints recorded the calls while the program ran",
        ),
        (Some(_), _) if filtered => line(
            out,
            "stops",
            "only at the calls counted: a seccomp-bpf filter in the kernel stopped the program there and let its other calls run at full speed (--every-call stops at every call)",
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

/// The longest bar of the offsets' histogram: a row is then 80 columns wide at most.
const BAR: u64 = 36;

/// The offsets as rows of bars: 8 rows, each covering 4 buckets.
fn histogram(h: &Histogram) -> String {
    let mut out = String::new();
    let rows: Vec<u64> = h.counts.chunks(4).map(|c| c.iter().sum()).collect();
    let last = rows.iter().rposition(|&c| c > 0).unwrap_or(0);
    let max = rows.iter().copied().max().unwrap_or(1).max(1);
    let span = h.width * 4;
    for (i, &c) in rows.iter().enumerate().take(last + 1) {
        let bar = "#".repeat(((c * BAR).div_ceil(max)) as usize);
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
fn timeline(t: &Timeline, order: Option<crate::trace::order::Label>) -> String {
    const ROWS: u64 = 6;
    let max = t.offsets.iter().copied().max().unwrap_or(0).max(1);
    let rising = t.offsets.windows(2).filter(|w| w[1] > w[0]).count();
    let order = if let Some(label) = order {
        label.text()
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
        let mut series: Vec<Series> = self
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
        // The regions the program timed, as rows of points at offset 0 under their file.
        if let Some(c) = &self.clock {
            let charted: Vec<String> = self
                .files
                .iter()
                .filter(|f| f.busy())
                .take(6)
                .map(|f| f.path.clone())
                .collect();
            series.extend(super::trace_clock::chart_marks(c, &charted));
        }
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
        text(self, false)
    }
    fn verbose_text(&self) -> String {
        text(self, true)
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
        // Whether its writes waited for the disk: beside its claims, or alone.
        let waited = waited_lines(self);
        if self.claim_check.is_none() && !waited.is_empty() {
            let waited: Vec<String> = waited.iter().map(|l| printable(l)).collect();
            blocks.push(crate::report::markdown::list("Its writes:", &waited));
        }
        if let Some(check) = &self.claim_check {
            let rows: Vec<Vec<String>> = claim_lines(self)
                .iter()
                .chain(&waited)
                .map(|l| vec![crate::text::printable(l)])
                .collect();
            if !check.figures.is_empty() {
                let claims = Table {
                    header: vec![format!(
                        "{} says (each figure against what the trace saw)",
                        self.claim.as_ref().map_or("the tool", |c| c.tool.as_str())
                    )],
                    rows,
                };
                blocks.push(crate::report::markdown::table(&claims, None));
            }
        }
        notes.extend(self.unseen.iter().map(|u| crate::text::printable(u)));
        if !notes.is_empty() {
            blocks.push(crate::report::markdown::list("Not seen:", &notes));
        }
        if let Some(c) = &self.clock {
            let mut clock = vec![super::trace_clock::clock_sentence(c, self.seconds)];
            clock.extend(super::trace_clock::shown(c).into_iter().map(|(i, r)| {
                format!(
                    "region {}: {}",
                    i + 1,
                    super::trace_clock::region_sentence(r)
                )
            }));
            blocks.push(crate::report::markdown::list(
                "Clock and timed regions:",
                &clock,
            ));
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
        let mut header = vec![
            "file",
            "call",
            "calls",
            "errors",
            "bytes_requested",
            "bytes_returned",
            "seconds_inside",
            "errnos",
        ];
        let mut rows: Vec<Vec<String>> = self
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
        // With a checked claim, a row per claimed figure after the files: its traced
        // calls, bytes and seconds in the same columns, and four more columns (empty for
        // the files' rows).
        if let Some(check) = self.claim_check.as_ref().filter(|c| !c.figures.is_empty()) {
            header.extend(CLAIM_COLUMNS);
            for row in &mut rows {
                row.extend(std::iter::repeat_n(String::new(), CLAIM_COLUMNS.len()));
            }
            rows.extend(check.figures.iter().map(claim_row));
        }
        table(&header, rows)
    }
}

/// The columns a checked claim adds to the CSV table.
const CLAIM_COLUMNS: [&str; 6] = [
    "claimed_bytes",
    "claimed_seconds",
    "claimed_bytes_per_second",
    "traced_bytes_per_second",
    "verdict",
    "reason",
];

/// A claimed figure as a CSV row: `claim: LABEL` in the call column, the traced files
/// (joined by `;`), calls, bytes and seconds, then the claim's own figures and the verdict.
fn claim_row(f: &FigureCheck) -> Vec<String> {
    let t = f.traced.as_ref();
    vec![
        t.map(|t| t.files.join(";")).unwrap_or_default(),
        format!("claim: {}", f.figure.label),
        t.map_or(String::new(), |t| t.calls.to_string()),
        String::new(),
        String::new(),
        t.map_or(String::new(), |t| t.bytes.to_string()),
        t.map_or(String::new(), |t| t.seconds.to_string()),
        // errnos: a claim has none.
        String::new(),
        f.figure.bytes.to_string(),
        f.figure.seconds.map_or(String::new(), |s| s.to_string()),
        f.figure
            .bytes_per_second()
            .map_or(String::new(), |b| b.to_string()),
        t.map_or(String::new(), |t| t.bytes_per_second().to_string()),
        snake(&f.verdict),
        snake(&f.reason),
    ]
}

/// A unit enum's name as JSON writes it (`claim_lower`).
fn snake<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
