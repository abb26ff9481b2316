//! The study's disk section: the panel run on the scratch file as one table (MB/s, IOPS,
//! latency percentiles, the queue the app kept and the one the device saw), a chart of the
//! rows grouped read beside write, and sentences each chosen by the numbers through
//! [`crate::measure::verdict`]: what a queue of 32 buys over a queue of 1, what it costs in
//! latency, reads against writes, and where the queue asked went.

use super::disk::{queue_sentence, verify_line};
use crate::cmd::disk::{DiskReport, DiskRow, Path};
use crate::cmd::study::Part;
use crate::measure::verdict::{Figure, Relation, relate};
use crate::report::page::{Headline, Section, grid};
use crate::report::svg::{Chart, Series};
use crate::units::{format_seconds, format_size, group_thousands};
use crate::workload::Op;

/// Megabytes (10^6) per second, as the panels print them.
const MB: f64 = 1e6;

/// A measured row of `op` whose name is `name` (`RND4K Q32T1`).
fn find<'a>(r: &'a DiskReport, name: &str, op: Op) -> Option<&'a DiskRow> {
    r.rows
        .iter()
        .find(|x| x.name == name && x.spec.op == op && x.skipped.is_none() && x.ios > 0)
}

/// Microseconds as a reader sees them: `87.2 µs`, `1.24 ms`.
fn time_us(us: f64) -> String {
    format_seconds(us / 1e6)
}

fn iops(v: f64) -> String {
    group_thousands(v.round() as u64)
}

/// The section.
pub(crate) fn section(r: &DiskReport) -> Section {
    let rows = r
        .rows
        .iter()
        .map(|row| {
            if let Some(why) = &row.skipped {
                return vec![
                    row.name.clone(),
                    row.spec.op.name().to_string(),
                    format!("skipped: {why}"),
                ];
            }
            let l = &row.latency_us;
            vec![
                row.name.clone(),
                row.spec.op.name().to_string(),
                format!("{:.1}", row.bytes_per_second / MB),
                iops(row.iops),
                time_us(l.p50),
                time_us(l.p99),
                time_us(l.p99_9),
                time_us(l.max),
                format!("{:.1}", row.mean_in_flight),
                row.device
                    .as_ref()
                    .map_or("-".into(), |d| format!("{:.1}", d.queue)),
            ]
        })
        .collect();
    Section {
        part: Part::Disk,
        status: None,
        how: how(r),
        grid: grid(
            &[
                "row",
                "op",
                "MB/s",
                "IOPS",
                "p50",
                "p99",
                "p99.9",
                "max",
                "in flight (app)",
                "queue (device)",
            ],
            rows,
        ),
        chart: chart(r),
        why: sentences(r),
        warnings: Vec::new(),
    }
}

/// What was measured and how, from the report itself.
fn how(r: &DiskReport) -> String {
    let direct = r
        .rows
        .iter()
        .filter(|x| x.skipped.is_none())
        .all(|x| x.path == Path::UringDirect);
    format!(
        "The panel CrystalDiskMark and KDiskMark show (SEQ1M: sequential 1 MiB; RND4K: random 4 KiB; Q: I/Os kept in flight; T: threads), run on the {} scratch file, each row for {}{}; a write puts back the bytes the file already holds, so the parts after it still read what was written. Latency is every I/O's, from the call that submits it to its completion reaped (fio's lat); MB/s are 10^6 bytes per second, as the panels print them.",
        format_size(r.file_bytes),
        format_seconds(r.runtime_seconds),
        if direct {
            " through io_uring with O_DIRECT (the page cache bypassed)"
        } else {
            ""
        },
    )
}

/// Bars of MB/s, a group per row, read beside write.
fn chart(r: &DiskReport) -> Option<Chart> {
    let mut names: Vec<String> = Vec::new();
    for row in r.rows.iter().filter(|x| x.skipped.is_none()) {
        if !names.contains(&row.name) {
            names.push(row.name.clone());
        }
    }
    let series: Vec<Series> = [Op::Read, Op::Write]
        .into_iter()
        .filter_map(|op| {
            let points: Vec<(f64, f64)> = names
                .iter()
                .enumerate()
                .filter_map(|(i, n)| find(r, n, op).map(|x| (i as f64, x.bytes_per_second / MB)))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: op.name().to_string(),
                points,
            })
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Chart {
        title: format!(
            "The disk panel on {} ({} per row)",
            r.file,
            format_seconds(r.runtime_seconds)
        ),
        x_label: "row".into(),
        y_label: "MB/s".into(),
        categories: names,
        series,
        ..Chart::default()
    })
}

/// The sentences, each chosen by the numbers.
pub(crate) fn sentences(r: &DiskReport) -> Vec<String> {
    let mut why = Vec::new();
    for op in [Op::Read, Op::Write] {
        if let (Some(deep), Some(one)) = (find(r, "RND4K Q32T1", op), find(r, "RND4K Q1T1", op)) {
            why.push(depth_sentence(deep, one));
        }
    }
    if let (Some(read), Some(write)) = (
        find(r, "RND4K Q1T1", Op::Read),
        find(r, "RND4K Q1T1", Op::Write),
    ) {
        why.push(read_write_sentence(read, write));
    }
    if let Some(deep) = find(r, "RND4K Q32T1", Op::Read) {
        let q = queue_sentence(deep);
        why.push(format!("RND4K Q32T1 read: {q}."));
    }
    let fallbacks: Vec<String> = r
        .rows
        .iter()
        .filter_map(|x| {
            x.fallback
                .as_ref()
                .map(|f| format!("{} {}: {f}", x.name, x.spec.op.name()))
        })
        .collect();
    if let Some(first) = fallbacks.first() {
        why.push(format!(
            "Not every row went to the device directly ({} of {}; {first}): a buffered row measures the page cache as much as the device.",
            fallbacks.len(),
            r.rows.iter().filter(|x| x.skipped.is_none()).count()
        ));
    }
    why.push(format!("Verified: {}.", verify_line(r)));
    why
}

/// What a queue of 32 random 4 KiB I/Os gives over a queue of one, in IOPS and in latency.
pub(crate) fn depth_sentence(deep: &DiskRow, one: &DiskRow) -> String {
    let what = format!("Random 4 KiB {}s", deep.spec.op.name());
    let figures = format!(
        "{} IOPS with 32 in flight against {} with one",
        iops(deep.iops),
        iops(one.iops)
    );
    let latency = format!(
        "each took {} at the median against {}",
        time_us(deep.latency_us.p50),
        time_us(one.latency_us.p50)
    );
    match relate(Figure::one(deep.iops), Figure::one(one.iops)) {
        Relation::Same => format!(
            "{what}: {figures} — the same: a deeper queue bought nothing here, so the device (or the path above it) serves one request at a time; {latency}, the wait in the queue."
        ),
        Relation::Above(x) | Relation::Unclear(x) if x > 1.0 => {
            let share = 100.0 / x;
            format!(
                "{what}: {figures} ({x:.1}x): the device serves many requests at once, so a program that waits for each I/O before the next (one in flight, as read() does) gets {share:.0}% of what it can deliver; {latency}."
            )
        }
        Relation::Above(x) | Relation::Below(x) | Relation::Unclear(x) => format!(
            "{what}: {figures} ({x:.2}x): a deeper queue made it slower here — the requests contend instead of overlapping; {latency}."
        ),
    }
}

/// Reads against writes, one at a time: which completes sooner, by the one rule.
pub(crate) fn read_write_sentence(read: &DiskRow, write: &DiskRow) -> String {
    let (r, w) = (read.latency_us.p50, write.latency_us.p50);
    let figures = format!(
        "one at a time, a random 4 KiB read took {} at the median and a write {}",
        time_us(r),
        time_us(w)
    );
    match relate(Figure::one(w), Figure::one(r)) {
        Relation::Same => format!("{}: the same.", capitalise(&figures)),
        Relation::Below(_) | Relation::Unclear(_) if w < r => format!(
            "{}: writes complete sooner — the device acknowledges a write once it holds it (in its cache), while a read waits for the data; whether that cache survives a power loss is below.",
            capitalise(&figures)
        ),
        _ => format!(
            "{}: writes take longer — the device acknowledges each only once written (no write cache, or one that is full).",
            capitalise(&figures)
        ),
    }
}

fn capitalise(s: &str) -> String {
    crate::report::cells::capitalise(s)
}

/// The study summary's lines for the panel: sequential MB/s, random IOPS at depth 32 and
/// the latency of one random read at a time.
pub(crate) fn headlines(r: &DiskReport) -> Vec<Headline> {
    let mut out = Vec::new();
    for op in [Op::Read, Op::Write] {
        if let Some(x) = find(r, "SEQ1M Q8T1", op) {
            out.push(Headline {
                label: format!("disk, sequential 1 MiB {}, 8 in flight", op.name()),
                value: format!("{:.0} MB/s", x.bytes_per_second / MB),
                spread: format!("{} IOPS; p99 {}", iops(x.iops), time_us(x.latency_us.p99)),
            });
        }
    }
    for op in [Op::Read, Op::Write] {
        if let Some(x) = find(r, "RND4K Q32T1", op) {
            out.push(Headline {
                label: format!("disk, random 4 KiB {}, 32 in flight", op.name()),
                value: format!("{} IOPS", iops(x.iops)),
                spread: format!(
                    "p50 {}, p99 {}; {:.1} MB/s",
                    time_us(x.latency_us.p50),
                    time_us(x.latency_us.p99),
                    x.bytes_per_second / MB
                ),
            });
        }
    }
    if let Some(x) = find(r, "RND4K Q1T1", Op::Read) {
        out.push(Headline {
            label: "disk, one random 4 KiB read".into(),
            value: format!("{} at the median", time_us(x.latency_us.p50)),
            spread: format!(
                "p99 {}, p99.9 {}; {} IOPS",
                time_us(x.latency_us.p99),
                time_us(x.latency_us.p99_9),
                iops(x.iops)
            ),
        });
    }
    out
}
