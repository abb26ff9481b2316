//! `cache`: cold, warm and cold-again side by side per block size, with their proof.

use crate::harness::Sample;
use crate::report::cells::{mib, opt, pct, rate, spread_mark};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::markdown::{self, flagged, percent};
use crate::report::page::{Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::view::Exportable;
use crate::results::cache::{CacheReport, CacheRow, Read};
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
        "cache {} ({}) with the {} engine; cold = {eviction}{}",
        crate::text::printable(&r.file),
        format_size(r.file_bytes),
        r.engine,
        cycles(r)
    );
    out.push_str(&columns::for_terminal(&cache_columns(r), &r.rows).text);
    if r.rows
        .iter()
        .flat_map(|row| row.runs())
        .any(|(_, s)| not_the_device(s))
    {
        let _ = writeln!(
            out,
            "* not the device: the file system returned zeros for unwritten extents or holes"
        );
    }
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

/// How many cycles of the three reads each block size had, when more than one: each rate is
/// then their median, its farthest run beside it.
fn cycles(r: &CacheReport) -> String {
    crate::report::text::runs_each(r.rows.iter().map(CacheRow::n), "cycles")
        .map_or(String::new(), |each| {
            format!("; {each}, median ±its farthest run")
        })
}

/// Whether a run's cold read was of zeros the file system made up, not the device's.
fn not_the_device(s: &Sample) -> bool {
    s.cache.is_some_and(|c| c.not_the_device())
}

/// One run of a row: its headings in the text, in Markdown and in the CSV.
struct Run {
    /// The text's headings: rate, share resident before, device read.
    text: [&'static str; 3],
    /// Markdown's headings, in the same order.
    markdown: [&'static str; 3],
    /// The CSV's keys: rate, seconds, share resident before, device read.
    csv: [&'static str; 4],
    /// The run of a row.
    of: fn(&CacheRow) -> &Sample,
    /// Which of the cycle's reads it is.
    read: Read,
}

/// The three runs in the order they ran.
const RUNS: [Run; 3] = [
    Run {
        text: ["cold MiB/s", "cold resident", "cold device read"],
        markdown: [
            "cold (MiB/s)",
            "cold: resident before (%)",
            "cold: device read",
        ],
        csv: [
            "cold_bytes_per_second",
            "cold_seconds",
            "cold_resident_share_before",
            "cold_device_read_bytes",
        ],
        of: |r| &r.cold,
        read: Read::Cold,
    },
    Run {
        text: ["warm MiB/s", "warm resident", "warm device read"],
        markdown: [
            "warm (MiB/s)",
            "warm: resident before (%)",
            "warm: device read",
        ],
        csv: [
            "warm_bytes_per_second",
            "warm_seconds",
            "warm_resident_share_before",
            "warm_device_read_bytes",
        ],
        of: |r| &r.warm,
        read: Read::Warm,
    },
    Run {
        text: [
            "cold again MiB/s",
            "cold again resident",
            "cold again device read",
        ],
        markdown: [
            "cold again (MiB/s)",
            "cold again: resident before (%)",
            "cold again: device read",
        ],
        csv: [
            "cold_again_bytes_per_second",
            "cold_again_seconds",
            "cold_again_resident_share_before",
            "cold_again_device_read_bytes",
        ],
        of: |r| &r.cold_again,
        read: Read::ColdAgain,
    },
];

/// The cache's one table: a row per block size, and per run (cold, warm, cold again, in
/// the order they ran) its rate, the share resident before it and the bytes the device
/// read, for the text, Markdown and the CSV. The rates are never hidden; the device counts
/// go first, then the residency, when the text does not fit.
fn cache_columns(r: &CacheReport) -> Vec<Column<'_, CacheRow>> {
    let mut columns = vec![
        Column::new("block", "", 0, |row: &CacheRow| {
            format_block_size(row.block_size)
        })
        .left()
        .heading("block size")
        .csv("block_size", |row: &CacheRow| row.block_size.to_string()),
        Column::raw("bytes", |_: &CacheRow| r.file_bytes.to_string()),
    ];
    // With repeated cycles each rate is the median of its runs, its spread glued to it.
    let repeated = r.rows.iter().any(|row| row.n() > 1);
    if repeated {
        columns.push(Column::raw("cycles", |row: &CacheRow| row.n().to_string()).heading("cycles"));
    }
    for run in RUNS {
        let of = run.of;
        let read = run.read;
        columns.extend([
            Column::new(run.text[0], "", 0, move |row: &CacheRow| {
                let s = of(row);
                let mark = if not_the_device(s) { "*" } else { "" };
                let f = row.rate(read);
                let spread = spread_mark(f, repeated);
                let gap = if spread.is_empty() { "" } else { " " };
                format!("{:.1}{mark}{gap}{spread}", mib(f.median))
            })
            .heading(run.markdown[0])
            .markdown_cell(move |row: &CacheRow| {
                let f = row.rate(read);
                if f.n > 1 {
                    format!(
                        "{} ({}–{}, n={})",
                        rate(f.median),
                        rate(f.min),
                        rate(f.max),
                        f.n
                    )
                } else {
                    rate(f.median)
                }
            })
            .csv(run.csv[0], move |row: &CacheRow| {
                row.rate(read).median.to_string()
            }),
            Column::raw(run.csv[1], move |row: &CacheRow| {
                of(row).elapsed.seconds.to_string()
            }),
            Column::new(run.text[1], "", 1, move |row: &CacheRow| {
                resident(of(row), |x| x.percent())
            })
            .heading(run.markdown[1])
            .markdown_cell(move |row: &CacheRow| resident(of(row), |x| percent(x.fraction())))
            .csv(run.csv[2], move |row: &CacheRow| {
                opt(of(row)
                    .cache
                    .and_then(|c| c.residency_before)
                    .map(|x| x.fraction()))
            }),
            Column::new(run.text[2], "", 2, move |row: &CacheRow| {
                of(row)
                    .device
                    .map_or("-".into(), |d| format_size(d.read_bytes))
            })
            .heading(run.markdown[2])
            .csv(run.csv[3], move |row: &CacheRow| {
                opt(of(row).device.map(|d| d.read_bytes))
            }),
        ]);
    }
    columns
}

/// The share of the file resident before a run, as `show` writes it, flagged `(!)` where
/// the run did not start in its state; `-` where it was not measured.
fn resident(s: &Sample, show: impl Fn(&crate::measure::cache::Residency) -> String) -> String {
    let cell = s
        .cache
        .and_then(|c| c.residency_before)
        .map_or("-".into(), |x| show(&x));
    flagged(cell, s.cache.is_none_or(|c| c.ok()))
}

/// The sentences that explain a cache report, each chosen by its numbers through the one
/// rule in [`crate::measure::verdict`]: warm against cold (faster, the same, or slower), the
/// second cold read against the first (a repeat, or a first-run effect with the evidence
/// that points to its cause), and whether the device's counters bear the states out. Shared
/// by `cache` and the study's cache section.
pub fn explain(r: &CacheReport) -> Vec<String> {
    use crate::measure::verdict::{Relation, ratio, relate, same};
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
        .map(|(read, _)| read.name())
        .collect();
    if !zeros.is_empty() {
        why.push(format!(
            "In calls of {block} the {} read{} not the device's: the bytes the device did not read are unwritten extents or holes, which the file system returns as zeros, so these figures say nothing of the medium.",
            zeros.join(" and "),
            if zeros.len() == 1 { " is" } else { "s are" }
        ));
        return why;
    }
    // Each read's figure: one run, or the median and range of its cycles.
    let (cold_f, warm_f, again_f) = (
        row.rate(Read::Cold),
        row.rate(Read::Warm),
        row.rate(Read::ColdAgain),
    );
    let (cold, warm, again) = (cold_f.median, warm_f.median, again_f.median);
    let rate = format_mib_per_s;
    let no_device = r.device.is_none() && row.cold.device.is_none();
    let warm_vs_cold = relate(warm_f, cold_f);
    let colds_agree = relate(again_f, cold_f) == Relation::Same;
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
        // Runs that overlap show no gain, and no loss either: the medians' order is noise.
        Relation::Unclear(x) => format!(
            "In calls of {block} the warm read is {} the cold one by the medians ({} against {}), but their runs overlap: no gain from the cache is shown; {}.",
            times(x),
            rate(warm),
            rate(cold),
            crate::measure::verdict::WHAT_WOULD_TELL
        ),
        Relation::Below(x) => format!(
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
    match relate(again_f, cold_f) {
        // Overlapping runs of the two cold reads: no first-run effect is shown, and no
        // agreement within 10% either.
        Relation::Unclear(x) => why.push(format!(
            "The second cold read is {} the first by the medians ({} against {}), but their runs overlap: the cold reads are not shown to differ; {}.",
            times(x),
            rate(again),
            rate(cold),
            crate::measure::verdict::WHAT_WOULD_TELL
        )),
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
        Relation::Above(x) => {
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
        Relation::Below(x) => why.push(format!(
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

/// A ratio as the sentences write it: `1.4x` above 1, `0.85x` below.
fn times(x: f64) -> String {
    if x >= 1.0 {
        format!("{x:.1}x")
    } else {
        format!("{x:.2}x")
    }
}

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
        columns::csv(&cache_columns(self), &self.rows)
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

/// `cache`: cold, warm and cold again side by side per block size (one run each, or the
/// median of the cycles each had).
pub fn markdown(r: &CacheReport) -> Vec<String> {
    let eviction = eviction(r);
    let caption = format!(
        "cold, warm and cold again: {} ({}) with the {} engine, {}; cold = {eviction}",
        crate::text::printable(&r.file),
        format_size(r.file_bytes),
        r.engine,
        crate::report::text::runs_each(r.rows.iter().map(CacheRow::n), "cycles")
            .unwrap_or_else(|| "one run each".into())
    );
    let t = columns::markdown(&cache_columns(r), &r.rows);
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
