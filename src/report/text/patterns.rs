//! `patterns`: one row per test with the headline (fsync included for writes), its spread,
//! the time without fsync, the fsync and close times and what iozone's default would have
//! said; where each random test's records fell; and in auto mode a table per test of
//! record size × file size, as iozone's `-a` prints.

use super::{line, right_align, table_with};
use crate::cmd::patterns::{PatternResult, PatternsReport, Test};
use crate::measure::cache::{CacheState, Verdict};
use crate::units::{MIB, format_block_size, format_seconds, format_size, group_thousands};
use crate::workload::plan::Coverage;
use std::fmt::Write;

fn mib(bytes_per_second: f64) -> String {
    format!("{:.1}", bytes_per_second / MIB as f64)
}

/// Renders a patterns result.
pub fn patterns(r: &PatternsReport) -> String {
    let mut out = String::new();
    let cache = match r.cache {
        CacheState::Cold => "read tests start cold (evicted before every run)",
        CacheState::Warm => "read tests start warm",
        CacheState::AsIs => "read tests start as the cache is",
    };
    let random = if r.draws {
        "random tests draw records with repeats".to_string()
    } else {
        "random tests touch every record once".to_string()
    };
    line(&mut out, "patterns", &r.path);
    line(
        &mut out,
        "setup",
        format!(
            "{} run(s) per test; {cache}; {random}; stride {} records; mixed reads {}%; seed {:#x}",
            r.runs, r.stride, r.read_percent, r.seed
        ),
    );
    if r.auto {
        auto(&mut out, r);
    } else {
        single(&mut out, r);
    }
    fsync_line(&mut out, r);
    out
}

/// The cache cell: what the first run's proof says.
fn cache_cell(result: &PatternResult) -> String {
    match result.cache() {
        None => "-".into(),
        Some(p) => {
            let resident = p
                .residency_before
                .map_or("?".to_string(), |r| format!("{:.0}%", 100.0 * r.fraction()));
            let verdict = match p.verdict {
                Verdict::Proven => "proven",
                Verdict::Unproven => "unproven",
                Verdict::Contradicted => "CONTRADICTED",
                Verdict::NotAsked => "as is",
                Verdict::Bypassed => "bypassed",
            };
            format!("{} {verdict} ({resident} cached)", p.asked.name())
        }
    }
}

fn check_cell(result: &PatternResult) -> &'static str {
    match (result.checks_ok, result.verified) {
        (false, _) => "MISMATCH",
        (true, Some(false)) => "XOR WRONG",
        (true, Some(true)) => "ok, XOR verified",
        (true, None) => "ok",
    }
}

fn single(out: &mut String, r: &PatternsReport) {
    let Some(first) = r.results.first() else {
        return;
    };
    line(
        out,
        "file",
        format!(
            "{} file in {} records of {} each",
            format_size(first.file_bytes),
            group_thousands(first.file_bytes.div_ceil(first.record.max(1))),
            format_size(first.record)
        ),
    );
    let mut table = table_with(&[
        "test",
        "MiB/s",
        "min..max",
        "time",
        "without fsync",
        "fsync",
        "close",
        "iozone says",
        "calls/s",
        "cache",
        "checks",
    ]);
    for res in &r.results {
        let median_seconds = res.file_bytes as f64 / res.bytes_per_second.median.max(1e-9);
        let fsync = res.fsync_seconds;
        table.add_row(vec![
            res.test.name().to_string(),
            mib(res.bytes_per_second.median),
            format!(
                "{}..{}",
                mib(res.bytes_per_second.min),
                mib(res.bytes_per_second.max)
            ),
            format_seconds(median_seconds),
            res.without_fsync.map_or("-".into(), |w| {
                format_seconds(res.file_bytes as f64 / w.median.max(1e-9))
            }),
            fsync.map_or("-".into(), format_seconds),
            res.close_seconds.map_or("-".into(), format_seconds),
            res.without_fsync
                .map_or("-".into(), |s| format!("{} MiB/s", mib(s.median))),
            format!("{:.0}", res.calls_per_second),
            cache_cell(res),
            check_cell(res).to_string(),
        ]);
    }
    right_align(&mut table, 1..9);
    let _ = writeln!(out, "{table}");
    let _ = writeln!(
        out,
        "MiB/s is the median over the runs; for write-type tests it includes the final fsync (the time column), as \"without fsync\" and iozone's default figure do not.\n"
    );
    for res in &r.results {
        if let Some(c) = &res.coverage {
            coverage(out, res.test, c);
        }
        if let Some(split) = res.runs.last().and_then(|run| run.split) {
            let total = (split.reads + split.writes).max(1);
            let _ = writeln!(
                out,
                "{:<15} {} pread() and {} pwrite() calls in the last run: {:.0}% reads",
                "",
                group_thousands(split.reads),
                group_thousands(split.writes),
                100.0 * split.reads as f64 / total as f64
            );
        }
    }
}

/// Where a test's records fell: counts per bucket as a row of marks, and whether every
/// record came exactly once.
fn coverage(out: &mut String, test: Test, c: &Coverage) {
    const MARKS: &[u8] = b" .:-=+*#";
    let max = c.buckets.iter().copied().max().unwrap_or(0).max(1);
    let min = c.buckets.iter().copied().min().unwrap_or(0);
    let marks: String = c
        .buckets
        .iter()
        .map(|&n| {
            let i = if n == 0 {
                0
            } else {
                1 + ((n * (MARKS.len() as u64 - 2)) / max) as usize
            };
            MARKS[i.min(MARKS.len() - 1)] as char
        })
        .collect();
    let once = if c.every_once() {
        "every record exactly once".to_string()
    } else {
        format!(
            "{} of {} records touched",
            group_thousands(c.distinct),
            group_thousands(c.pieces)
        )
    };
    let _ = writeln!(
        out,
        "{:<15} offsets [{marks}] {} buckets of {}: {}..{} calls each; {once}",
        test.name(),
        c.buckets.len(),
        format_size(c.bucket_bytes),
        min,
        max,
    );
}

/// Auto mode: per test, MiB/s by file size (rows) and record size (columns).
fn auto(out: &mut String, r: &PatternsReport) {
    let mut tests: Vec<Test> = Vec::new();
    for res in &r.results {
        if !tests.contains(&res.test) {
            tests.push(res.test);
        }
    }
    for test in tests {
        let _ = writeln!(
            out,
            "\n{}{} — MiB/s, file size down, record size across",
            test.name(),
            if test.writes() {
                " (fsync included)"
            } else {
                ""
            }
        );
        let mut header = vec!["file".to_string()];
        header.extend(r.records.iter().map(|&x| format_block_size(x)));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut table = table_with(&header);
        for &size in &r.sizes {
            let mut row = vec![format_size(size)];
            for &record in &r.records {
                let cell = r
                    .results
                    .iter()
                    .find(|x| x.test == test && x.file_bytes == size && x.record == record)
                    .map_or(String::new(), |x| {
                        format!("{:.0}", x.bytes_per_second.median / MIB as f64)
                    });
                row.push(cell);
            }
            table.add_row(row);
        }
        right_align(&mut table, 0..r.records.len() + 1);
        let _ = writeln!(out, "{table}");
    }
}

/// The write-type result where leaving fsync out flatters most.
fn fsync_line(out: &mut String, r: &PatternsReport) {
    let worst = r
        .results
        .iter()
        .filter_map(|x| {
            x.without_fsync
                .map(|w| (x, w.median / x.bytes_per_second.median))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((x, ratio)) = worst {
        line(
            out,
            "fsync",
            format!(
                "leaving fsync out, as iozone does by default, would report {} with records of {} on {} as {} MiB/s instead of {} ({:.2}x)",
                x.test.name(),
                format_size(x.record),
                format_size(x.file_bytes),
                mib(x.bytes_per_second.median * ratio),
                mib(x.bytes_per_second.median),
                ratio
            ),
        );
    }
    let bad: Vec<String> = r
        .results
        .iter()
        .filter(|x| !x.checks_ok || x.verified == Some(false))
        .map(|x| {
            format!(
                "{} with records of {}",
                x.test.name(),
                format_size(x.record)
            )
        })
        .collect();
    if !bad.is_empty() {
        line(out, "checks", format!("FAILED: {}", bad.join(", ")));
    }
}
