//! `disk --preset sync-methods`: a table per block size (each method at 1 and 2 writes per
//! sync: ops/s, latency per op, the device's flushes per op), the rows skipped and why, the
//! flush check and the speed verdict last, each sentence chosen from the numbers by
//! [`crate::results::disk_sync_methods`].

use crate::report::cells::{opt, table, us};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::text::line;
use crate::report::view::Exportable;
use crate::results::disk_sync_methods::{Flushes, NotCounted, Speed, SyncMethodsReport, SyncRow};
use crate::units::{format_seconds, format_size, group_thousands};
use crate::warning::Warning;

/// Why flushes were not counted, in words.
fn not_counted(why: NotCounted) -> &'static str {
    match why {
        NotCounted::NoDevice => {
            "not counted: no block device behind the directory (tmpfs, overlay or a network file system), so no flush reached a disk"
        }
        NotCounted::OldKernel => {
            "not counted: this kernel's /proc/diskstats has no flush fields (they came in 5.5)"
        }
        NotCounted::Stacked => {
            "not counted: the device is stacked (device-mapper or md), and its /proc/diskstats line does not count the flushes it passes on to the disks below"
        }
    }
}

/// The flush check in words.
pub fn flush_sentence(r: &SyncMethodsReport) -> String {
    let disk = r.device_name.as_deref().unwrap_or("the device");
    match r.flush_check {
        Flushes::NotCounted { why } => format!("flushes {}", not_counted(why)),
        Flushes::Missing { per_op } => format!(
            "{per_op:.2} flushes per fdatasync on a write-back device ({disk}): the flush never reaches it, so a power cut can lose what fdatasync called durable"
        ),
        Flushes::AboutOne { per_op } => format!(
            "about 1 flush per fdatasync ({per_op:.2}) on a write-back device ({disk}): fdatasync empties its cache, as it should"
        ),
        Flushes::Several { per_op } => format!(
            "{per_op:.2} flushes per fdatasync on a write-back device ({disk}): more than one, the file system's journal (or other processes; the counts are everybody's) adds its own"
        ),
        Flushes::WriteThrough { per_op } => format!(
            "{per_op:.2} flushes per fdatasync: {disk} says its cache is write through, so the kernel sends no flush and needs none (each write is durable when acknowledged)"
        ),
        Flushes::UnknownCache { per_op } => format!(
            "{per_op:.2} flushes per fdatasync; sysfs does not say whether {disk} caches writes, so whether that is enough is not known"
        ),
        Flushes::NoFdatasync => "flushes not judged: fdatasync did not run".to_string(),
    }
}

/// The speed verdict in words.
pub fn speed_sentence(r: &SyncMethodsReport) -> String {
    let here = if r.device_name.is_some() {
        "here"
    } else {
        "here, on no disk (the page cache's costs, not a device's)"
    };
    let block = r
        .blocks()
        .first()
        .map_or_else(String::new, |b| format!(", {} writes", format_size(*b)));
    match r.speed {
        Speed::Faster { method, ratio } => format!(
            "{} {ratio:.1}× fdatasync {here} (1 write per sync{block}): the fastest, beyond the noise",
            method.name()
        ),
        Speed::WithinNoise { method, ratio } => format!(
            "{} {ratio:.2}× fdatasync {here} (1 write per sync{block}), within the noise: no method is clearly faster than fdatasync; run longer (--runtime)",
            method.name()
        ),
        Speed::FdatasyncFastest { next, ratio, clear } => format!(
            "fdatasync the fastest {here}, {ratio:.2}× {} (the next; 1 write per sync{block}){}",
            next.name(),
            if clear {
                ""
            } else {
                ", but within the noise: run longer (--runtime)"
            }
        ),
        Speed::NoComparison => {
            "no comparison: fdatasync or every other method did not run".to_string()
        }
    }
}

fn rate(v: f64) -> String {
    if v >= 100.0 {
        group_thousands(v.round() as u64)
    } else {
        format!("{v:.1}")
    }
}

/// A row's latency percentile, `-` where it did not run.
fn latency(r: &SyncRow, pick: fn(&crate::results::disk::Latency) -> f64) -> String {
    r.latency_us
        .as_ref()
        .filter(|_| r.ran())
        .map_or_else(|| "-".to_string(), |l| us(pick(l)))
}

/// The table of one block size's rows, for the text and Markdown alike: method, writes per
/// sync, ops/s (`skipped` where it could not run, `-` where an interruption left it without
/// an op), p50, p99, p99.9, flushes per op and the CPU each op cost. A column nothing in the
/// report counted (flushes on tmpfs, CPU in a document from before it) is left out.
fn columns<'a>(r: &SyncMethodsReport) -> Vec<Column<'a, &'a SyncRow>> {
    let mut cols = vec![
        Column::new("method", "", 0, |r: &&SyncRow| r.method.name().to_string()).left(),
        Column::new("w/sync", "", 0, |r: &&SyncRow| r.writes_per_op.to_string())
            .heading("writes per sync"),
        Column::new("ops/s", "", 0, |r: &&SyncRow| {
            if r.skipped.is_some() {
                "skipped".to_string()
            } else if r.latency_us.is_some() && r.ran() {
                rate(r.ops_per_second)
            } else {
                "-".to_string()
            }
        }),
        Column::new("p50", "µs", 0, |r: &&SyncRow| latency(r, |l| l.p50)),
        Column::new("p99", "µs", 0, |r: &&SyncRow| latency(r, |l| l.p99)),
        Column::new("p99.9", "µs", 0, |r: &&SyncRow| latency(r, |l| l.p99_9)),
    ];
    if r.rows.iter().any(|x| x.flushes.is_some()) {
        cols.push(
            Column::new("flush/op", "", 0, |r: &&SyncRow| {
                match r
                    .flushes_per_op()
                    .filter(|_| r.latency_us.is_some() && r.ran())
                {
                    Some(f) => format!("{f:.2}"),
                    None => "-".to_string(),
                }
            })
            .heading("flushes per op"),
        );
    }
    if r.rows.iter().any(|x| x.cpu.is_some()) {
        cols.push(
            Column::new("cpu/op", "µs", 0, |r: &&SyncRow| {
                match r.cpu_us_per_op().filter(|_| r.ran()) {
                    Some((user, system)) => us(user + system),
                    None => "-".to_string(),
                }
            })
            .heading("CPU per op µs (user + system, the whole process)"),
        );
    }
    cols
}

/// The rows of one block size.
fn of_block(r: &SyncMethodsReport, block: u64) -> impl Iterator<Item = &SyncRow> {
    r.rows.iter().filter(move |x| x.block_bytes == block)
}

/// The device line: the disk, its write cache and FUA.
fn device_text(r: &SyncMethodsReport) -> String {
    match &r.device_name {
        None => "none (no block device behind the directory)".to_string(),
        Some(d) => format!(
            "{d}, write cache {}, FUA {} (sysfs)",
            r.write_cache.as_deref().unwrap_or("unknown"),
            match r.fua {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown",
            }
        ),
    }
}

/// The pattern line. Each row writes a fresh file of `--size`, or of one op's writes where
/// they need more; where that file holds a single op's writes, every op rewrites the same
/// block(s) at its start (pg_test_fsync's way), else the writes go on in order and wrap. With
/// several block sizes or a small `--size` the rows differ, and the line says which do what.
fn pattern_text(r: &SyncMethodsReport) -> String {
    let mut shapes: Vec<(u64, u32)> = Vec::new();
    for x in &r.rows {
        if !shapes.contains(&(x.block_bytes, x.writes_per_op)) {
            shapes.push((x.block_bytes, x.writes_per_op));
        }
    }
    let per_op = |&(block, writes): &(u64, u32)| block * u64::from(writes);
    let in_place = |s: &(u64, u32)| r.region_bytes < 2 * per_op(s);
    let name = |&(block, writes): &(u64, u32)| {
        format!(
            "{} at {writes} write{} per sync",
            format_size(block),
            if writes == 1 { "" } else { "s" }
        )
    };
    let larger: Vec<String> = shapes
        .iter()
        .filter(|s| per_op(s) > r.region_bytes)
        .map(|s| format!("{} for {}", format_size(per_op(s)), name(s)))
        .collect();
    let larger = if larger.is_empty() {
        String::new()
    } else {
        format!(
            "one op's writes where they need more: {}; ",
            larger.join(", ")
        )
    };
    const SAME: &str = "the same block(s) at its start rewritten every op, as pg_test_fsync does";
    const ON: &str = "written on in order, wrapping at its end";
    let rewritten: Vec<&(u64, u32)> = shapes.iter().filter(|s| in_place(s)).collect();
    let how = if rewritten.len() == shapes.len() {
        SAME.to_string()
    } else if rewritten.is_empty() {
        ON.to_string()
    } else {
        format!(
            "{SAME} where the file holds one op's writes ({}), else {ON}",
            rewritten
                .iter()
                .map(|s| name(s))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "sequential writes, 1 at a time, for {} per row, in a fresh {} file each ({larger}written and synced first{}; {how}); 2 writes per sync: fdatasync, fsync and io_uring write twice then sync once, the others make each write durable",
        format_seconds(r.runtime_seconds),
        format_size(r.region_bytes),
        evicted_text(r),
    )
}

/// Whether the rows' files were dropped from the page cache before their timed writes, as
/// checked: ", then dropped from the page cache", or that the file system kept them (tmpfs);
/// nothing where not checked (a document from before).
fn evicted_text(r: &SyncMethodsReport) -> &'static str {
    let checked: Vec<bool> = r.rows.iter().filter_map(|x| x.evicted).collect();
    if checked.is_empty() {
        ""
    } else if checked.iter().all(|&e| e) {
        ", then dropped from the page cache"
    } else if checked.iter().any(|&e| e) {
        ", then dropped from the page cache where the file system let go of it"
    } else {
        ", then left in the page cache: the file system keeps it there"
    }
}

/// Renders the sync-methods result.
pub fn text(r: &SyncMethodsReport) -> String {
    let mut out = String::new();
    line(&mut out, "dir", crate::text::printable(&r.dir));
    line(&mut out, "device", device_text(r));
    line(&mut out, "pattern", pattern_text(r));
    for block in r.blocks() {
        let rows: Vec<&SyncRow> = of_block(r, block).collect();
        out.push_str(&format!(
            "{} writes; latency per op (its writes and sync), µs:\n{}\n",
            format_size(block),
            columns::for_terminal(&columns(r), &rows).text.trim_end()
        ));
    }
    for row in r.rows.iter().filter(|x| x.skipped.is_some()) {
        line(
            &mut out,
            "skipped",
            format!(
                "{} ({} write(s) per sync, {}): {}",
                row.method.name(),
                row.writes_per_op,
                format_size(row.block_bytes),
                row.skipped.as_deref().unwrap_or_default()
            ),
        );
    }
    line(&mut out, "flushes", flush_sentence(r));
    line(&mut out, "verdict", speed_sentence(r));
    out
}

impl Exportable for SyncMethodsReport {
    const COMMAND: &'static str = "disk-sync-methods";
    fn text(&self) -> String {
        text(self)
    }
    /// A table per block size, then the skipped rows and the two verdicts.
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{list, table as md_table};
        let mut blocks = Vec::new();
        for block in self.blocks() {
            let rows: Vec<&SyncRow> = of_block(self, block).collect();
            blocks.push(md_table(
                &columns::markdown(&columns(self), &rows),
                Some(&format!("{} writes", format_size(block))),
            ));
        }
        let mut notes = vec![
            format!("Device: {}", device_text(self)),
            format!("Pattern: {}", pattern_text(self)),
        ];
        for row in self.rows.iter().filter(|x| x.skipped.is_some()) {
            notes.push(format!(
                "Skipped: {} ({} write(s) per sync, {}): {}",
                row.method.name(),
                row.writes_per_op,
                format_size(row.block_bytes),
                row.skipped.as_deref().unwrap_or_default()
            ));
        }
        notes.push(format!("Flushes: {}", flush_sentence(self)));
        notes.push(format!("Verdict: {}", speed_sentence(self)));
        blocks.push(list("Findings:", &notes));
        blocks
    }
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    /// A comparison has no target to miss: the run holds unless fdatasync's flush went
    /// missing on a write-back device (exit 1).
    fn ok(&self) -> bool {
        !matches!(self.flush_check, Flushes::Missing { .. })
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        let header = [
            "method",
            "writes_per_sync",
            "block_bytes",
            "skipped",
            "ops",
            "seconds",
            "ops_per_second",
            "mean_us",
            "p50_us",
            "p99_us",
            "p99_9_us",
            "max_us",
            "flushes",
            "flush_ms",
            "flushes_per_op",
            "device_writes",
            "cpu_user_us_per_op",
            "cpu_system_us_per_op",
        ];
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let l = r.latency_us.as_ref();
                vec![
                    serde_json::to_value(r.method)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default(),
                    r.writes_per_op.to_string(),
                    r.block_bytes.to_string(),
                    opt(r.skipped.clone()),
                    r.ops.to_string(),
                    r.seconds.to_string(),
                    r.ops_per_second.to_string(),
                    opt(l.map(|l| l.mean)),
                    opt(l.map(|l| l.p50)),
                    opt(l.map(|l| l.p99)),
                    opt(l.map(|l| l.p99_9)),
                    opt(l.map(|l| l.max)),
                    opt(r.flushes),
                    opt(r.flush_ms),
                    opt(r.flushes_per_op()),
                    opt(r.device_writes),
                    opt(r.cpu_us_per_op().map(|(u, _)| u)),
                    opt(r.cpu_us_per_op().map(|(_, s)| s)),
                ]
            })
            .collect();
        table(&header, rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::disk::Latency;
    use crate::results::disk_sync_methods::SyncMethod;

    fn row(method: SyncMethod, ops_s: f64, flushes: Option<u64>) -> SyncRow {
        SyncRow {
            method,
            writes_per_op: 1,
            block_bytes: 8192,
            skipped: None,
            ops: (ops_s * 3.0) as u64,
            seconds: 3.0,
            ops_per_second: ops_s,
            slices_per_second: vec![ops_s * 0.99, ops_s, ops_s * 1.01],
            latency_us: Some(Latency {
                p50: 1e6 / ops_s,
                p99: 2e6 / ops_s,
                p99_9: 3e6 / ops_s,
                ..Latency::default()
            }),
            flushes: flushes.map(|f| f * (ops_s * 3.0) as u64),
            flush_ms: None,
            device_writes: None,
            cpu: None,
            evicted: None,
        }
    }

    #[test]
    fn the_pattern_says_which_rows_rewrite_their_block_and_which_files_are_larger() {
        let shaped = |block: u64, writes: u32| SyncRow {
            block_bytes: block,
            writes_per_op: writes,
            ..row(SyncMethod::Fdatasync, 1000.0, None)
        };
        let all = |region: u64, blocks: &[u64]| {
            let mut r = report(
                blocks
                    .iter()
                    .flat_map(|&b| [shaped(b, 1), shaped(b, 2)])
                    .collect(),
                None,
                false,
            );
            r.region_bytes = region;
            pattern_text(&r)
        };
        // One block, `--size` of one block: every row rewrites its start, as pg_test_fsync.
        let one = all(8 << 10, &[8 << 10]);
        assert!(
            one.contains(
                "a fresh 8 KiB file each (one op's writes where they need more: 16 KiB for 8 KiB at 2 writes per sync; written and synced first; "
            ),
            "{one}"
        );
        assert!(
            one.contains(
                "the same block(s) at its start rewritten every op, as pg_test_fsync does)"
            ),
            "{one}"
        );
        // The default 16 MiB: every row writes on.
        let big = all(16 << 20, &[8 << 10, 64 << 10]);
        assert!(big.contains("a fresh 16 MiB file each (written"), "{big}");
        assert!(
            big.contains("written on in order, wrapping at its end)"),
            "{big}"
        );
        assert!(!big.contains("pg_test_fsync"), "{big}");
        // `--bs 8k,64k --size 64k` (--size is at least the largest block): the rows differ,
        // and the line says which (it said "written on" for all, in a 64 KiB file each).
        let mixed = all(64 << 10, &[8 << 10, 64 << 10]);
        assert!(
            mixed.contains("a fresh 64 KiB file each (one op's writes where they need more: 128 KiB for 64 KiB at 2 writes per sync; written"),
            "{mixed}"
        );
        assert!(
            mixed.contains("where the file holds one op's writes (64 KiB at 1 write per sync, 64 KiB at 2 writes per sync), else written on in order"),
            "{mixed}"
        );
    }

    #[test]
    fn the_pattern_claims_an_eviction_only_where_one_was_checked() {
        let with = |evicted: &[Option<bool>]| {
            let rows = evicted
                .iter()
                .map(|&e| SyncRow {
                    evicted: e,
                    ..row(SyncMethod::Fdatasync, 1000.0, None)
                })
                .collect();
            pattern_text(&report(rows, None, false))
        };
        // A document from before the check says nothing of the page cache.
        let old = with(&[None, None]);
        assert!(
            old.contains("(written and synced first; written on"),
            "{old}"
        );
        let ext4 = with(&[Some(true), Some(true)]);
        assert!(
            ext4.contains("(written and synced first, then dropped from the page cache; "),
            "{ext4}"
        );
        let tmpfs = with(&[Some(false), Some(false)]);
        assert!(
            tmpfs.contains("first, then left in the page cache: the file system keeps it there;"),
            "{tmpfs}"
        );
        let some = with(&[Some(true), Some(false), None]);
        assert!(
            some.contains("where the file system let go of it;"),
            "{some}"
        );
    }

    #[test]
    fn columns_nothing_counted_are_left_out_and_a_row_without_an_op_is_not_skipped() {
        let mut counted = row(SyncMethod::Fdatasync, 1000.0, Some(1));
        counted.cpu = Some(crate::results::disk::CpuUse {
            user_seconds: 0.003,
            system_seconds: 0.117,
        });
        // Interrupted before its first op: not skipped, and no figure.
        let unfinished = SyncRow {
            ops: 0,
            ops_per_second: 0.0,
            flushes: None,
            cpu: None,
            ..row(SyncMethod::Fsync, 1000.0, None)
        };
        let r = report(vec![counted.clone(), unfinished], None, true);
        let t = text(&r);
        // 3,000 ops on 0.12 s of CPU: 40 µs each.
        assert!(t.contains("flush/op ┆ cpu/op │"), "{t}");
        assert!(t.contains("┆     1.00 ┆   40.0 │"), "{t}");
        assert!(t.contains("│ fsync     ┆      1 ┆     - ┆"), "{t}");
        assert!(!t.contains("skipped"), "{t}");
        let md = r.markdown().join("\n");
        assert!(
            md.contains("| CPU per op µs (user + system, the whole process) |"),
            "{md}"
        );
        // Nothing counted (tmpfs, a document from before): neither column.
        let none = SyncRow {
            flushes: None,
            cpu: None,
            ..counted
        };
        let t = text(&report(vec![none], None, false));
        assert!(!t.contains("flush/op") && !t.contains("cpu/op"), "{t}");
    }

    fn report(rows: Vec<SyncRow>, cache: Option<&str>, device: bool) -> SyncMethodsReport {
        let mut r = SyncMethodsReport {
            dir: "dir".into(),
            region_bytes: 16 << 20,
            device_name: device.then(|| "vda".to_string()),
            write_cache: cache.map(str::to_string),
            fua: Some(false),
            flushes_not_counted: (!device).then_some(NotCounted::NoDevice),
            runtime_seconds: 3.0,
            rows,
            speed: Speed::NoComparison,
            flush_check: Flushes::NoFdatasync,
            complete: true,
            warnings: Vec::new(),
        };
        r.judged();
        r
    }

    #[test]
    fn the_verdict_names_the_fastest_against_fdatasync() {
        let r = report(
            vec![
                row(SyncMethod::Fdatasync, 1000.0, Some(1)),
                row(SyncMethod::ODsync, 1600.0, Some(1)),
            ],
            Some("write back"),
            true,
        );
        let s = speed_sentence(&r);
        assert!(s.starts_with("O_DSYNC 1.6× fdatasync here"), "{s}");
        assert!(flush_sentence(&r).starts_with("about 1 flush per fdatasync"));
    }

    #[test]
    fn o_dsync_slower_and_no_flush_on_write_back_are_said() {
        let r = report(
            vec![
                row(SyncMethod::Fdatasync, 1000.0, Some(0)),
                row(SyncMethod::ODsync, 500.0, Some(0)),
            ],
            Some("write back"),
            true,
        );
        let s = speed_sentence(&r);
        assert!(
            s.starts_with("fdatasync the fastest here, 2.00× O_DSYNC"),
            "{s}"
        );
        let f = flush_sentence(&r);
        assert!(
            f.starts_with("0.00 flushes per fdatasync on a write-back device (vda): the flush never reaches it"),
            "{f}"
        );
    }

    #[test]
    fn write_through_and_tmpfs_are_no_alarm() {
        let r = report(
            vec![
                row(SyncMethod::Fdatasync, 1000.0, Some(0)),
                row(SyncMethod::OSync, 1000.0, Some(0)),
            ],
            Some("write through"),
            true,
        );
        assert!(flush_sentence(&r).contains("write through, so the kernel sends no flush"));
        assert!(speed_sentence(&r).contains("within the noise"));
        let r = report(
            vec![
                row(SyncMethod::Fdatasync, 90_000.0, None),
                row(SyncMethod::Fsync, 80_000.0, None),
            ],
            None,
            false,
        );
        assert!(flush_sentence(&r).starts_with("flushes not counted: no block device"));
        assert!(speed_sentence(&r).contains("on no disk"));
        // A device-mapper disk: its count of 0 would be a false alarm, so none is made.
        let mut r = report(
            vec![row(SyncMethod::Fdatasync, 900.0, None)],
            Some("write back"),
            true,
        );
        r.flushes_not_counted = Some(NotCounted::Stacked);
        r.judged();
        let f = flush_sentence(&r);
        assert!(f.contains("not counted: the device is stacked"), "{f}");
        assert!(r.ok(), "no flush check failed");
    }

    #[test]
    fn the_text_fits_80_columns_and_ends_with_the_verdict() {
        let mut rows = Vec::new();
        for m in SyncMethod::ALL {
            rows.push(row(m, 123_456.0, Some(1)));
        }
        let mut skipped = rows.pop().unwrap();
        skipped.skipped = Some("io_uring is not available here (Operation not permitted)".into());
        rows.push(skipped);
        let t = text(&report(rows, Some("write back"), true));
        for l in t.lines().filter(|l| l.starts_with(['┌', '│', '╞', '└'])) {
            assert!(l.chars().count() <= 80, "{l}");
        }
        assert!(t.contains("│ O_DIRECT|O_DSYNC "), "{t}");
        assert!(
            t.contains("skipped   io_uring+fdsync (1 write(s) per sync, 8 KiB)"),
            "{t}"
        );
        assert!(t.lines().last().unwrap().starts_with("verdict   "), "{t}");
    }
}
