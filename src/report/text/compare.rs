//! `compare`: one table per cache state, then why the numbers differ.

use super::{mib, right_align, table_with};
use crate::cmd::compare::CompareReport;
use crate::measure::cache::CacheState;
use crate::units::{MIB, format_size};
use std::fmt::Write;

/// Renders `compare`.
pub fn compare(r: &CompareReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compare {} ({}), block size {}, median of {} run(s) each, alternating order",
        r.file,
        format_size(r.file_bytes),
        format_size(r.block_size),
        r.repeat
    );
    let mut table = table_with(&[
        "cache",
        "contender",
        "MiB/s (own figures)",
        "MiB/s (process wall)",
        "vs best",
        "resident before",
    ]);
    for row in &r.rows {
        let resident: Vec<String> = row
            .runs
            .iter()
            .map(|x| format!("{:.0}%", 100.0 * x.resident_share_before))
            .collect();
        table.add_row(vec![
            row.cache.name().to_string(),
            row.contender.clone(),
            format!("{:.0}", mib(row.median_bytes_per_second)),
            format!("{:.0}", mib(row.median_wall_bytes_per_second)),
            format!("{:.2}x", row.ratio_to_best),
            format!(
                "{}{}",
                resident.join(" "),
                if row.state_ok { "" } else { " (!)" }
            ),
        ]);
    }
    right_align(&mut table, 2..5);
    let _ = writeln!(out, "{table}");
    for s in &r.skipped {
        let _ = writeln!(out, "skipped: {s}");
    }
    for n in compare_notes(r) {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// Why the numbers differ, from what ran.
pub fn compare_notes(r: &CompareReport) -> Vec<String> {
    let mut out = Vec::new();
    let has = |p: &str| r.contenders.iter().any(|c| c.name.starts_with(p));
    let measured = |s: CacheState| r.rows.iter().any(|row| row.cache == s);
    if has("dd") {
        out.push("dd prints decimal units (1 MB = 10^6 bytes, so its '2.1 GB/s' is 2.0 GiB/s); this table uses dd's raw bytes and seconds, in MiB/s".into());
    }
    if has("cat") {
        out.push("cat reports nothing itself: its rate is the file size over the whole process's wall time, start-up included".into());
    }
    if measured(CacheState::Warm) {
        out.push("warm: `fast` XORs the page cache in place where it holds the file in huge pages and copies it in cache-sized pieces elsewhere; run -r, dd and cat copy every byte into user memory first, and smaller blocks add a system call per block".into());
        if has("dd") || has("fio") {
            out.push("O_DIRECT readers (iflag=direct, fio direct=1) bypass the cache even when the file is warm: their warm figure is a device figure".into());
        }
    }
    if measured(CacheState::Cold) {
        out.push("cold: buffered readers go through the page cache (readahead, page allocation, a copy); O_DIRECT readers — and `fast`, which switches to O_DIRECT into huge-page buffers when the file is not cached — read straight from the device".into());
    }
    for row in r.rows.iter().filter(|row| !row.state_ok) {
        out.push(format!(
            "{} ({}) did not always start in that state: resident before its runs: {}",
            row.contender,
            row.cache.name(),
            row.runs
                .iter()
                .map(|x| format!("{:.0}%", 100.0 * x.resident_share_before))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if r.file_bytes < 256 * MIB {
        out.push("the file is small: process start-up and timer resolution weigh on every figure; use a file of a few GiB for rates".into());
    }
    out
}
