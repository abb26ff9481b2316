//! `cache`: cold, warm and cold-again side by side per block size, with their proof.

use crate::report::cells::{mib, pct, rate, sample_cells};
use crate::report::csv::Table;
use crate::report::markdown::{self, flagged, header, percent};
use crate::report::page::{Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::text::{right_align, table_with};
use crate::report::view::Exportable;
use crate::results::cache::CacheReport;
use crate::units::{format_block_size, format_size};
use crate::warning::Warning;
use crate::workload::study::Part;
use std::fmt::Write;

/// How the cold runs were made cold. The `3` of drop_caches is 1 (the page cache) plus 2
/// (dentries and inodes); only the 1 evicts a file's data, and only clean pages, hence the
/// sync before it.
fn eviction(r: &CacheReport) -> &'static str {
    if r.drop_caches {
        "sync; echo 3 > /proc/sys/vm/drop_caches (1 drops the page cache, 2 dentries and inodes, 3 both; sync first, as only clean pages are dropped; every file's cache)"
    } else {
        "fdatasync + posix_fadvise(DONTNEED) on this file (no root needed)"
    }
}

/// Renders `cache`.
pub fn text(r: &CacheReport) -> String {
    let mut out = String::new();
    let eviction = eviction(r);
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
        let rate = |i: usize| {
            let s = runs[i].1;
            let zeros = s.cache.is_some_and(|c| c.not_the_device());
            format!(
                "{:.1}{}",
                mib(s.bytes_per_second()),
                if zeros { " (not the device)" } else { "" }
            )
        };
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
    for sentence in explain(r) {
        let _ = writeln!(out, "{sentence}");
    }
    out.push_str(&crate::report::caveats::text(&r.caveats));
    out
}

/// The sentences that explain a cache report, each chosen by its numbers through the one
/// rule in [`crate::measure::verdict`]: warm against cold (faster, the same, or slower), the
/// second cold read against the first (a repeat, or a first-run effect with the evidence
/// that points to its cause), and whether the device's counters bear the states out. Shared
/// by `cache` and the study's cache section.
pub fn explain(r: &CacheReport) -> Vec<String> {
    use crate::measure::verdict::{Figure, Relation, ratio, relate, same};
    use crate::units::format_mib_per_s;
    let mut why = Vec::new();
    let Some(row) = r.rows.last() else {
        return why;
    };
    let block = format_size(row.block_size);
    // Cold reads of zeros the file system makes up (unwritten extents, holes) compare
    // memory with memory: no sentence about the medium holds then.
    let zeros: Vec<&str> = row
        .runs()
        .iter()
        .filter(|(_, s)| s.cache.is_some_and(|c| c.not_the_device()))
        .map(|(name, _)| *name)
        .collect();
    if !zeros.is_empty() {
        why.push(format!(
            "In calls of {block} the {} read{} not the device's: the bytes the device did not read are unwritten extents or holes, which the file system returns as zeros, so these figures say nothing of the medium.",
            zeros.join(" and "),
            if zeros.len() == 1 { " is" } else { "s are" }
        ));
        return why;
    }
    let (cold, warm, again) = (
        row.cold.bytes_per_second(),
        row.warm.bytes_per_second(),
        row.cold_again.bytes_per_second(),
    );
    let rate = format_mib_per_s;
    let no_device = r.device.is_none() && row.cold.device.is_none();
    let warm_vs_cold = relate(Figure::one(warm), Figure::one(cold));
    let colds_agree = relate(Figure::one(again), Figure::one(cold)) == Relation::Same;
    why.push(match warm_vs_cold {
        Relation::Above(x) if colds_agree => format!(
            "In calls of {block} the warm read is {x:.1}x the cold one ({} against {}).",
            rate(warm),
            rate(cold)
        ),
        Relation::Above(x) => format!(
            "In calls of {block} the warm read is {x:.1}x the first cold read and {:.1}x the second ({} against {} and {}).",
            crate::measure::verdict::ratio(warm, again),
            rate(warm),
            rate(cold),
            rate(again)
        ),
        Relation::Same if no_device => format!(
            "In calls of {block} warm and cold reads are within 10% ({} against {}): there is no block device under this file system, so a cold read comes from memory too.",
            rate(warm),
            rate(cold)
        ),
        Relation::Same => format!(
            "In calls of {block} warm and cold reads are within 10% ({} against {}): the page cache bought nothing here — the medium delivers as fast as this reader copies.",
            rate(warm),
            rate(cold)
        ),
        Relation::Below(x) | Relation::Unclear(x) => format!(
            "In calls of {block} the warm read is slower than the cold one ({x:.2}x: {} against {}), which no cache explains: load or noise during the warm run; run it again on a quieter machine.",
            rate(warm),
            rate(cold)
        ),
    });
    let resident = |s: &crate::harness::Sample| {
        s.cache
            .and_then(|c| c.residency_before)
            .map(|res| res.fraction())
    };
    let device_read = |s: &crate::harness::Sample| s.device.map(|d| d.read_bytes);
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    match relate(Figure::one(again), Figure::one(cold)) {
        Relation::Same => why.push(if matches!(warm_vs_cold, Relation::Above(_)) {
            format!(
                "The second cold read ({}) repeats the first ({}) within 10%, so the difference is the cache, not a first-run effect.",
                rate(again),
                rate(cold)
            )
        } else {
            format!(
                "The second cold read ({}) repeats the first ({}) within 10%.",
                rate(again),
                rate(cold)
            )
        }),
        Relation::Above(x) | Relation::Unclear(x) if x > 1.0 => {
            let cause = match (resident(&row.cold), resident(&row.cold_again)) {
                (Some(first), Some(second)) if second > first + 0.05 => format!(
                    "{} of the file was still cached before it ({} before the first), so it was not as cold",
                    pct(second),
                    pct(first)
                ),
                _ => match (device_read(&row.cold), device_read(&row.cold_again)) {
                    // Part of the read came from elsewhere only when the device moved
                    // fewer bytes than the run read, not merely fewer than the first time
                    // (whose count may hold other processes' I/O).
                    (Some(_), Some(second)) if short_of(second, r.file_bytes) => {
                        format!(
                            "the device read {} during it, less than the {} file, so part of it came from somewhere faster than the device",
                            format_size(second),
                            format_size(r.file_bytes)
                        )
                    }
                    (Some(first), Some(second)) if beyond(first, r.file_bytes) => format!(
                        "the device read the whole file during it ({}), and {} during the first, more than the {} file: other I/O on the device slowed the first run",
                        format_size(second),
                        format_size(first),
                        format_size(r.file_bytes)
                    ),
                    _ => "with the same residency and device reads, the cost the first paid is a first-run effect (memory the host must back again after eviction, the device's own cache warming)".to_string(),
                },
            };
            why.push(format!(
                "The second cold read is {x:.1}x the first ({} against {}): {cause}; the cold figures disagree, so neither alone is the medium's rate.",
                rate(again),
                rate(cold)
            ));
        }
        Relation::Above(x) | Relation::Below(x) | Relation::Unclear(x) => why.push(format!(
            "The second cold read is slower than the first ({x:.2}x: {} against {}): the cold figures disagree by more than 10%, from load or noise between the runs; neither alone is the medium's rate.",
            rate(again),
            rate(cold)
        )),
    }
    if let (Some(c), Some(w)) = (device_read(&row.cold), device_read(&row.warm)) {
        let file = r.file_bytes as f64;
        // The cold count "agrees" only when it is the file's size by the one rule: far
        // above it is other processes' I/O on the device, not the run's.
        let cold_from_device = same(c as f64, file);
        let warm_from_cache = (w as f64) <= 0.1 * file;
        why.push(if beyond(c, r.file_bytes) {
            format!(
                "The kernel's counters cannot confirm the states: the device read {} during the cold run, {:.1}x the {} file, so other processes' I/O on the device is in the count (and {} during the warm one, /proc/diskstats).",
                format_size(c),
                ratio(c as f64, file),
                format_size(r.file_bytes),
                format_size(w)
            )
        } else if cold_from_device && warm_from_cache {
            format!(
                "The kernel agrees: the device read {} during the cold run and {} during the warm one (/proc/diskstats).",
                format_size(c),
                format_size(w)
            )
        } else {
            format!(
                "The kernel's counters do not bear the states out: the device read {} during the cold run and {} during the warm one (/proc/diskstats), where about {} and nothing were expected — other I/O on the device, or pages that were not evicted or not kept.",
                format_size(c),
                format_size(w),
                format_size(r.file_bytes)
            )
        });
    }
    why
}

use crate::measure::verdict::SAME_WITHIN;

/// Whether a device count is short of the bytes a run read, beyond [`SAME_WITHIN`].
fn short_of(device: u64, read: u64) -> bool {
    (device as f64) * SAME_WITHIN < read as f64
}

/// Whether a device count exceeds the bytes a run read, beyond [`SAME_WITHIN`].
fn beyond(device: u64, read: u64) -> bool {
    device as f64 > SAME_WITHIN * read as f64
}

impl Exportable for CacheReport {
    const COMMAND: &'static str = "cache";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    fn markdown(&self) -> Vec<String> {
        markdown(self)
    }
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    fn ok(&self) -> bool {
        CacheReport::ok(self)
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
        let mut header = vec!["block_size".to_string(), "bytes".to_string()];
        for run in ["cold", "warm", "cold_again"] {
            for field in [
                "bytes_per_second",
                "seconds",
                "resident_share_before",
                "device_read_bytes",
            ] {
                header.push(format!("{run}_{field}"));
            }
        }
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![r.block_size.to_string(), self.file_bytes.to_string()];
                for s in [&r.cold, &r.warm, &r.cold_again] {
                    row.extend(sample_cells(s));
                }
                row
            })
            .collect();
        Table { header, rows }
    }
    /// Grouped bars: a group per block size (a category, not a curve: there are two or
    /// three), a bar per run in the order they ran.
    fn chart(&self) -> Option<Chart> {
        let series = [("cold", 0), ("warm", 1), ("cold again", 2)]
            .into_iter()
            .map(|(name, i)| Series {
                name: name.to_string(),
                points: self
                    .rows
                    .iter()
                    .enumerate()
                    .map(|(k, r)| {
                        let s = [&r.cold, &r.warm, &r.cold_again][i];
                        (k as f64, mib(s.bytes_per_second()))
                    })
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!("cold, warm, cold again: {}", self.file),
            x_label: "block size".into(),
            y_label: "read throughput (MiB/s)".into(),
            categories: self
                .rows
                .iter()
                .map(|r| format!("{} calls", crate::units::format_block_size(r.block_size)))
                .collect(),
            series,
            ..Chart::default()
        })
    }
}

/// `cache`: cold, warm and cold again side by side per block size (one run each).
pub fn markdown(r: &CacheReport) -> Vec<String> {
    let eviction = eviction(r);
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
    vec![markdown::table(&t, Some(&caption))]
}

pub(crate) fn section(c: &crate::results::cache::CacheReport, part: Part) -> Section {
    let rows = c
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![format_block_size(r.block_size)];
            for (_, s) in r.runs() {
                row.push(format!("{:.1}", mib(s.bytes_per_second())));
                row.push(
                    s.cache
                        .and_then(|p| p.residency_before)
                        .map_or("-".into(), |res| pct(res.fraction())),
                );
                row.push(s.device.map_or("-".into(), |d| format_size(d.read_bytes)));
            }
            row
        })
        .collect();
    let why = explain(c);
    Section {
        part,
        status: None,
        how: format!(
            "The whole file ({}) is read three times per block size: cold (its pages evicted first), warm (right after), and cold again; residency is measured with mincore() before each run, and the device's counters around it.",
            format_size(c.file_bytes)
        ),
        grid: grid(
            &[
                "block",
                "cold MiB/s",
                "cold resident",
                "cold device read",
                "warm MiB/s",
                "warm resident",
                "warm device read",
                "cold again MiB/s",
                "cold again resident",
                "cold again device read",
            ],
            rows,
        ),
        chart: c.chart(),
        why,
        warnings: Vec::new(),
    }
}
