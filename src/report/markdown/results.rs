//! The Markdown blocks of the results whose CSV columns would read badly as they are:
//! `sweep`, `cache`, `syscalls`, `compare` and `fast`. Each mirrors its text table, with the
//! unit in every header and `median (min–max)` wherever there were repeats.

use super::{list, table};
use crate::cmd::coldwarm::CacheReport;
use crate::cmd::compare::CompareReport;
use crate::cmd::fast::FastReport;
use crate::cmd::sweep::SweepReport;
use crate::cmd::syscalls::SyscallsReport;
use crate::report::csv::Table;
use crate::report::text::{self, cpu_cell, mib, pct};
use crate::units::{format_block_size, format_size, group_thousands};

fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|h| h.to_string()).collect()
}

/// A rate in MiB/s, one decimal: the form of every rate cell.
fn rate(bytes_per_second: f64) -> String {
    format!("{:.1}", mib(bytes_per_second))
}

/// `median (min–max)`, each in MiB/s.
fn rate_spread(median: f64, min: f64, max: f64) -> String {
    format!("{} ({}–{})", rate(median), rate(min), rate(max))
}

/// A percentage without its sign (the header carries `%`).
fn percent(fraction: f64) -> String {
    pct(fraction).trim_end_matches('%').to_string()
}

/// A flag after a cell whose run did not start in its cache state.
fn flagged(cell: String, ok: bool) -> String {
    if ok { cell } else { format!("{cell} (!)") }
}

/// `sweep`: one row per point.
pub fn sweep(r: &SweepReport) -> Vec<String> {
    let op = r.op.name();
    let caption = format!(
        "{op} {} ({}) with the {} engine: {} timed run(s) per point after {} warm-up; rates are the median (min–max) of the runs",
        r.file,
        format_size(r.file_bytes),
        r.engine,
        r.repeat,
        r.warmup
    );
    let rows = r
        .points
        .iter()
        .map(|p| {
            let resident = p.resident_share_before.map_or("-".to_string(), |s| {
                let text = if (s.max - s.min).abs() < 0.0005 {
                    percent(s.min)
                } else {
                    format!("{}–{}", percent(s.min), percent(s.max))
                };
                flagged(text, p.state_ok)
            });
            let seconds = p.bytes as f64 / p.rate.median.max(1e-9);
            vec![
                p.cache.map_or(op, |c| c.name()).to_string(),
                format_block_size(p.block_size),
                format_size(p.bytes),
                rate_spread(p.rate.median, p.rate.min, p.rate.max),
                format!("{:.1}", 100.0 * p.rate.relative_spread()),
                group_thousands(p.calls_per_second.round() as u64),
                cpu_cell(p.cpu_percent, seconds)
                    .trim_end_matches('%')
                    .to_string(),
                resident,
                p.device_read_bytes.map_or("-".to_string(), format_size),
                text::checks_cell(p).to_string(),
            ]
        })
        .collect();
    let t = Table {
        header: header(&[
            "cache",
            "block size",
            "bytes per run",
            "MiB/s, median (min–max)",
            "spread (±%)",
            "calls/s",
            "CPU (%)",
            "resident before (%)",
            "device read",
            "kernel checks",
        ]),
        rows,
    };
    vec![
        table(&t, Some(&caption)),
        list("Notes:", &text::sweep_notes(r)),
    ]
}

/// `cache`: cold, warm and cold again side by side per block size (one run each).
pub fn cache(r: &CacheReport) -> Vec<String> {
    let eviction = if r.drop_caches {
        "sync; echo 3 > /proc/sys/vm/drop_caches (every file's cache)"
    } else {
        "fdatasync + posix_fadvise(DONTNEED) on this file"
    };
    let caption = format!(
        "cold, warm and cold again: {} ({}) with the {} engine, one run each; cold = {eviction}",
        r.file,
        format_size(r.file_bytes),
        r.engine
    );
    let rows = r
        .rows
        .iter()
        .map(|row| {
            let runs = row.runs();
            let resident: Vec<String> = runs
                .iter()
                .map(|(_, s)| {
                    let cell = s
                        .cache
                        .and_then(|c| c.residency_before)
                        .map_or("-".into(), |x| percent(x.fraction()));
                    flagged(cell, s.cache.is_none_or(|c| c.ok()))
                })
                .collect();
            let device: Vec<String> = runs
                .iter()
                .map(|(_, s)| s.device.map_or("-".into(), |d| format_size(d.read_bytes)))
                .collect();
            let mut cells = vec![format_block_size(row.block_size)];
            cells.extend(runs.iter().map(|(_, s)| rate(s.bytes_per_second())));
            cells.push(resident.join(" / "));
            cells.push(device.join(" / "));
            cells
        })
        .collect();
    let t = Table {
        header: header(&[
            "block size",
            "cold (MiB/s)",
            "warm (MiB/s)",
            "cold again (MiB/s)",
            "resident before, cold / warm / again (%)",
            "device read, cold / warm / again",
        ]),
        rows,
    };
    vec![table(&t, Some(&caption))]
}

/// `syscalls`: nanoseconds per call for each operation and size.
pub fn syscalls(r: &SyscallsReport) -> Vec<String> {
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
    notes.push(text::syscalls_explanation(r));
    vec![table(&t, Some(&caption)), list("Notes:", &notes)]
}

/// `compare`: one row per contender and cache state.
pub fn compare(r: &CompareReport) -> Vec<String> {
    let caption = format!(
        "{} ({}) read by each contender, block size {}, {} run(s) each in alternating order; rates are the median (min–max) of the runs",
        r.file,
        format_size(r.file_bytes),
        format_size(r.block_size),
        r.repeat
    );
    let rows = r
        .rows
        .iter()
        .map(|row| {
            let own = row.runs.iter().map(|x| x.bytes_per_second);
            let min = own.clone().fold(f64::INFINITY, f64::min);
            let max = own.fold(0.0, f64::max);
            let resident: Vec<String> = row
                .runs
                .iter()
                .map(|x| format!("{:.0}", 100.0 * x.resident_share_before))
                .collect();
            vec![
                row.cache.name().to_string(),
                row.contender.clone(),
                if row.runs.is_empty() {
                    rate(row.median_bytes_per_second)
                } else {
                    rate_spread(row.median_bytes_per_second, min, max)
                },
                rate(row.median_wall_bytes_per_second),
                format!("{:.2}", row.ratio_to_best),
                flagged(resident.join(" "), row.state_ok),
            ]
        })
        .collect();
    let t = Table {
        header: header(&[
            "cache",
            "contender",
            "MiB/s by its own figures, median (min–max)",
            "MiB/s by process wall time, median",
            "vs best (×)",
            "resident before each run (%)",
        ]),
        rows,
    };
    let mut notes: Vec<String> = r.skipped.iter().map(|s| format!("skipped: {s}")).collect();
    notes.extend(text::compare_notes(r));
    vec![table(&t, Some(&caption)), list("Notes:", &notes)]
}

/// `fast`: the one run, as `--verbose` describes it.
pub fn fast(r: &FastReport) -> Vec<String> {
    let caption = format!(
        "the XOR of {} by the {} engine: {}",
        r.file, r.engine, r.reason
    );
    let t = Table {
        header: header(&[
            "engine",
            "threads",
            "block size",
            "bytes",
            "time (ms)",
            "MiB/s",
            "calls",
            "resident before (%)",
            "XOR",
        ]),
        rows: vec![vec![
            r.engine.clone(),
            r.threads.to_string(),
            format_block_size(r.block_size),
            format_size(r.moved.bytes),
            format!("{:.3}", r.seconds * 1e3),
            rate(r.bytes_per_second),
            group_thousands(r.moved.calls),
            r.residency_before
                .map_or("-".into(), |x| percent(x.fraction())),
            r.xor_hex.clone(),
        ]],
    };
    let mut notes = vec![format!("method: {}", r.method)];
    notes.extend(r.fallbacks.iter().map(|f| format!("skipped: {f}")));
    vec![table(&t, Some(&caption)), list("Notes:", &notes)]
}
