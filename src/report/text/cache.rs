//! `cache`: cold, warm and cold-again side by side per block size, with their proof.

use super::{mib, right_align, table_with};
use crate::cmd::coldwarm::CacheReport;
use crate::units::{format_block_size, format_size};
use std::fmt::Write;

/// Renders `cache`.
pub fn cache(r: &CacheReport) -> String {
    let mut out = String::new();
    let eviction = if r.drop_caches {
        "sync; echo 3 > /proc/sys/vm/drop_caches (every file's cache)"
    } else {
        "fdatasync + posix_fadvise(DONTNEED) on this file (no root needed)"
    };
    let _ = writeln!(
        out,
        "cache {} ({}) with the {} engine; cold = {eviction}",
        r.file,
        format_size(r.file_bytes),
        r.engine
    );
    let mut table = table_with(&[
        "block",
        "cold MiB/s",
        "warm MiB/s",
        "cold again MiB/s",
        "resident before (cold / warm / again)",
        "device read (cold / warm / again)",
    ]);
    for row in &r.rows {
        let runs = row.runs();
        let rate = |i: usize| format!("{:.1}", mib(runs[i].1.bytes_per_second()));
        let res: Vec<String> = runs
            .iter()
            .map(|(_, s)| {
                let text = s
                    .cache
                    .and_then(|c| c.residency_before)
                    .map_or("-".into(), |x| x.percent());
                if s.cache.is_some_and(|c| !c.ok()) {
                    format!("{text} (!)")
                } else {
                    text
                }
            })
            .collect();
        let dev: Vec<String> = runs
            .iter()
            .map(|(_, s)| s.device.map_or("-".into(), |d| format_size(d.read_bytes)))
            .collect();
        table.add_row(vec![
            format_block_size(row.block_size),
            rate(0),
            rate(1),
            rate(2),
            res.join(" / "),
            dev.join(" / "),
        ]);
    }
    right_align(&mut table, 1..4);
    let _ = writeln!(out, "{table}");
    let _ = writeln!(
        out,
        "cold runs should start near 0% resident and read about the file's size from the device; warm runs 100% and about nothing"
    );
    out
}
