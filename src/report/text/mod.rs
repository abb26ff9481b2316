//! Human-readable results: short labelled lines, and tables where there are rows. One file
//! per command; the shared pieces (labelled lines, tables, the kernel check line, the cache
//! proof, warnings) live here.

mod inplace;
mod warning;

pub use inplace::{in_place, in_place_short};
pub(crate) use warning::apart;
pub use warning::warning;

use crate::measure::cache::{CacheProof, Verdict};
use crate::measure::checks::Check;
use crate::measure::timer::Elapsed;
use crate::units::{format_seconds, format_size, group_thousands};
use comfy_table::{CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use std::fmt::Write;

/// Below this wall time, CPU time (a coarser clock) says nothing useful about a run.
pub(crate) const CPU_MEANINGFUL_SECONDS: f64 = 0.05;

/// How many timed runs each point was asked for: "3 timed runs", or "3 to 10 timed runs
/// (until the median is known to ±5%, no new one after 3 s)".
pub(crate) fn runs_asked(
    repeat: usize,
    until_stable: Option<crate::measure::converge::Stopping>,
) -> String {
    match until_stable {
        None => format!("{repeat} timed run{}", if repeat == 1 { "" } else { "s" }),
        Some(s) => {
            let time = if s.max_seconds.is_finite() {
                let t = s.max_seconds;
                if t.fract() == 0.0 && t < 1e6 {
                    format!(", no new one after {t:.0} s")
                } else {
                    format!(", no new one after {}", format_seconds(t))
                }
            } else {
                String::new()
            };
            format!(
                "{} to {} timed runs (until the median is known to ±{}%{time})",
                s.min_runs,
                s.max_runs,
                share(s.precision)
            )
        }
    }
}

/// How many runs each repeated row had, from each row's count: "5 runs each", or "3 to 5
/// runs each (until stable)" when the counts differ (`noun`: "runs", "cycles"); `None`
/// when no row had more than one.
pub(crate) fn runs_each(counts: impl IntoIterator<Item = usize>, noun: &str) -> Option<String> {
    let (fewest, most) = counts
        .into_iter()
        .fold((usize::MAX, 1), |(a, b), n| (a.min(n), b.max(n)));
    match most {
        1 => None,
        n if fewest < n => Some(format!("{fewest} to {n} {noun} each (until stable)")),
        n => Some(format!("{n} {noun} each")),
    }
}

/// A share as a percentage without a needless decimal: 0.05 → `5`, 0.005 → `0.5`.
pub(crate) fn share(x: f64) -> String {
    let v = x * 100.0;
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// A `key: value` line of a report's header.
pub(crate) fn line(out: &mut String, key: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{key:<9} {value}");
}

pub(crate) fn bytes_both(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} ({} bytes)", format_size(bytes), group_thousands(bytes))
    }
}

/// User and system CPU time, and their share of one CPU where the run was long enough for
/// the share to mean something (CPU time has a coarser clock than wall time).
pub(crate) fn cpu_line(e: &Elapsed, threads: usize) -> String {
    let times = format!(
        "user {}, system {}",
        format_seconds(e.user_seconds),
        format_seconds(e.system_seconds)
    );
    if e.seconds < CPU_MEANINGFUL_SECONDS {
        return format!("{times} (too short a run for a CPU share)");
    }
    let unit = if threads > 1 {
        "one CPU, several threads"
    } else {
        "one CPU"
    };
    format!("{times} ({:.0}% of {unit})", e.cpu_percent())
}

/// CPU share for a table cell, or `-` where the run was too short for it to mean anything.
pub(crate) fn cpu_cell(percent: f64, seconds: f64) -> String {
    if seconds < CPU_MEANINGFUL_SECONDS {
        "-".to_string()
    } else {
        format!("{percent:.0}%")
    }
}

/// The kernel cross-check in one line: a tick when all agree, the figures when not.
pub(crate) fn checks_line(checks: &[Check], counted: bool) -> String {
    if !counted {
        return "not compared: this engine's I/O does not go through read()/write() calls that /proc/self/io counts".to_string();
    }
    if checks.is_empty() {
        return "not checked (/proc/self/io is not available)".to_string();
    }
    let parts: Vec<String> = checks
        .iter()
        .map(|c| {
            if c.ok {
                format!("{} {}", c.name.replace('_', " "), group_thousands(c.kernel))
            } else {
                format!(
                    "{} claimed {} but kernel saw {}",
                    c.name.replace('_', " "),
                    group_thousands(c.claimed),
                    group_thousands(c.kernel)
                )
            }
        })
        .collect();
    let mark = if checks.iter().all(|c| c.ok) {
        "ok"
    } else {
        "MISMATCH"
    };
    format!("{mark}: {} (/proc/self/io)", parts.join(", "))
}

/// The cache line: residency before, device bytes, and the verdict when a state was asked.
pub(crate) fn cache_line(proof: &CacheProof) -> String {
    let res = proof
        .residency_before
        .map_or("residency unknown".to_string(), |r| {
            format!("{} resident before the run", r.percent())
        });
    let dev = proof.device_read_bytes.map_or(String::new(), |d| {
        format!("; {} read from the device", format_size(d))
    });
    let verdict = match proof.verdict {
        Verdict::NotAsked => String::new(),
        Verdict::Proven => format!(" ({} as asked)", proof.asked.name()),
        Verdict::Unproven => format!(" ({} asked; not proven)", proof.asked.name()),
        Verdict::Contradicted => format!(" (NOT {} as asked)", proof.asked.name()),
        Verdict::Bypassed => {
            " (warm asked, but this engine bypasses the page cache: a device rate)".to_string()
        }
    };
    format!("{res}{dev}{verdict}")
}

pub(crate) fn table_with(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(header.to_vec());
    super::terminal::arrange(&mut table);
    table
}

pub(crate) fn right_align(table: &mut Table, cols: std::ops::Range<usize>) {
    for col in cols {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}
