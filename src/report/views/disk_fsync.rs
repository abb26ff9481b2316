//! `disk --preset fsync`: the write's latency and fdatasync's, apart, as a table; the rate
//! of synced writes; the device's view; and the verdict against the target (etcd: p99 under
//! 10 ms), its words chosen by [`crate::results::disk_fsync::judge`] from the numbers.

use crate::report::cells::{opt, table, us};
use crate::report::csv::Table;
use crate::report::text::{line, right_align, table_with};
use crate::report::view::Exportable;
use crate::report::views::disk_curve::time;
use crate::results::disk::Latency;
use crate::results::disk_fsync::{FsyncReport, Verdict};
use crate::units::{MIB, format_seconds, format_size, group_thousands};
use crate::warning::Warning;

/// The verdict in words, with its numbers.
pub fn verdict_sentence(r: &FsyncReport) -> String {
    let pct = r.target.percentile.name();
    let value = time(r.watched_us());
    let goal = time(r.target.limit_us);
    match r.verdict {
        Verdict::Under => format!(
            "fdatasync {pct} {value} is under the {goal} target: fast enough for a write-ahead log by etcd's measure"
        ),
        Verdict::AtTarget => format!(
            "fdatasync {pct} {value} is within 10% of the {goal} target: too close to call; run longer (--runtime) or again"
        ),
        Verdict::Over => format!(
            "fdatasync {pct} {value} is over the {goal} target: too slow for a write-ahead log by etcd's measure"
        ),
        Verdict::NoDevice => format!(
            "fdatasync {pct} {value}, but no block device is behind the file (tmpfs, overlay or a network file system): fdatasync waited for no disk, so this says nothing about one"
        ),
    }
}

/// The device's side: what it completed per fdatasync, and its queue.
fn device_sentence(r: &FsyncReport) -> Option<String> {
    let d = r.device.as_ref()?;
    Some(format!(
        "{} writes completed by {} ({} per fdatasync), {} written, w_await {}, busy {:.0}% (the counters are everybody's)",
        group_thousands(d.writes),
        r.device_name.as_deref().unwrap_or("the device"),
        if r.writes > 0 {
            format!("{:.1}", d.writes as f64 / r.writes as f64)
        } else {
            "-".to_string()
        },
        format_size(d.write_bytes),
        d.write_await_ms
            .map_or_else(|| "-".to_string(), |m| format!("{m:.2} ms")),
        100.0 * d.utilisation
    ))
}

fn latency_cells(name: &str, count: u64, l: &Latency) -> Vec<String> {
    vec![
        name.to_string(),
        group_thousands(count),
        us(l.p50),
        us(l.p90),
        us(l.p99),
        us(l.p99_9),
        us(l.p99_99),
        us(l.max),
    ]
}

/// Renders the fsync preset's result.
pub fn text(r: &FsyncReport) -> String {
    let mut out = String::new();
    line(
        &mut out,
        "file",
        format!(
            "{} ({}, scratch, {})",
            crate::text::printable(&r.file),
            format_size(r.file_bytes),
            if r.preallocated {
                "preallocated with fallocate"
            } else {
                "fallocate refused: the writes extend it"
            }
        ),
    );
    line(
        &mut out,
        "device",
        r.device_name
            .clone()
            .unwrap_or_else(|| "none (no block device behind the file)".to_string()),
    );
    line(
        &mut out,
        "pattern",
        format!(
            "{}-byte sequential writes, each followed by fdatasync, buffered, 1 at a time, for {} (etcd's check: fio --rw=write --bs=2300 --fdatasync=1)",
            group_thousands(r.block_bytes),
            format_seconds(r.runtime_seconds)
        ),
    );
    let mut t = table_with(&[
        "call", "count", "p50", "p90", "p99", "p99.9", "p99.99", "max",
    ]);
    t.add_row(latency_cells("write", r.writes, &r.write_latency_us));
    t.add_row(latency_cells(
        "fdatasync",
        r.writes,
        &r.fdatasync_latency_us,
    ));
    right_align(&mut t, 1..8);
    out.push_str(&format!("latency of each call, µs:\n{t}\n"));
    line(
        &mut out,
        "rate",
        format!(
            "{:.0} synced writes/s, {:.2} MiB/s, in {}{}",
            r.syncs_per_second,
            r.bytes as f64 / r.seconds.max(1e-12) / MIB as f64,
            format_seconds(r.seconds),
            if r.wraps > 0 {
                format!(
                    "; wrapped to the file's start {} time(s)",
                    group_thousands(r.wraps)
                )
            } else {
                String::new()
            }
        ),
    );
    if let Some(s) = device_sentence(r) {
        line(&mut out, "device", s);
    }
    line(&mut out, "verdict", verdict_sentence(r));
    out
}

impl Exportable for FsyncReport {
    const COMMAND: &'static str = "disk-fsync";
    fn text(&self) -> String {
        text(self)
    }
    /// The latency table, then the verdict and the device's side.
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{list, table as md_table};
        let header = [
            "call",
            "count",
            "p50 µs",
            "p90 µs",
            "p99 µs",
            "p99.9 µs",
            "p99.99 µs",
            "max µs",
        ];
        let rows = vec![
            latency_cells("write", self.writes, &self.write_latency_us),
            latency_cells("fdatasync", self.writes, &self.fdatasync_latency_us),
        ];
        let mut notes = vec![
            format!("Verdict: {}", verdict_sentence(self)),
            format!(
                "Pattern: {}-byte sequential writes, each followed by fdatasync, buffered, 1 at a time, for {}; {:.0} synced writes/s",
                group_thousands(self.block_bytes),
                format_seconds(self.runtime_seconds),
                self.syncs_per_second
            ),
        ];
        notes.extend(device_sentence(self).map(|s| format!("Device: {s}")));
        vec![
            md_table(&table(&header, rows), None),
            list("Findings:", &notes),
        ]
    }
    fn is_empty(&self) -> bool {
        self.writes == 0
    }
    /// The target held, or was too close to call (exit 1 when clearly missed).
    fn ok(&self) -> bool {
        self.verdict != Verdict::Over
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        let header = [
            "call",
            "count",
            "block_bytes",
            "seconds",
            "mean_us",
            "p50_us",
            "p90_us",
            "p99_us",
            "p99_9_us",
            "p99_99_us",
            "max_us",
            "target_us",
            "target_percentile",
            "verdict",
        ];
        let verdict = serde_json::to_value(self.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        let row = |call: &str, l: &Latency, judged: bool| {
            vec![
                call.to_string(),
                self.writes.to_string(),
                self.block_bytes.to_string(),
                self.seconds.to_string(),
                l.mean.to_string(),
                l.p50.to_string(),
                l.p90.to_string(),
                l.p99.to_string(),
                l.p99_9.to_string(),
                l.p99_99.to_string(),
                l.max.to_string(),
                opt(judged.then_some(self.target.limit_us)),
                opt(judged.then(|| self.target.percentile.name())),
                opt(judged.then(|| verdict.clone())),
            ]
        };
        table(
            &header,
            vec![
                row("write", &self.write_latency_us, false),
                row("fdatasync", &self.fdatasync_latency_us, true),
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::percentile::{Percentile, Target};
    use crate::results::disk_fsync::judge;

    fn report(p99_us: f64, device: bool) -> FsyncReport {
        let target = Target {
            limit_us: 10_000.0,
            percentile: Percentile::P99,
        };
        FsyncReport {
            file: ".ioscope-fsync-1".into(),
            file_bytes: 1 << 20,
            preallocated: true,
            device_name: device.then(|| "vda".to_string()),
            runtime_seconds: 1.0,
            block_bytes: 2300,
            writes: 500,
            bytes: 500 * 2300,
            seconds: 1.0,
            write_latency_us: Latency {
                p99: 12.0,
                ..Latency::default()
            },
            fdatasync_latency_us: Latency {
                p50: p99_us / 3.0,
                p99: p99_us,
                max: p99_us * 2.0,
                ..Latency::default()
            },
            syncs_per_second: 500.0,
            wraps: 0,
            target,
            verdict: judge(p99_us, target.limit_us, device),
            device: None,
            complete: true,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn each_verdict_is_worded_from_its_numbers() {
        let s = verdict_sentence(&report(2_000.0, true));
        assert!(
            s.starts_with("fdatasync p99 2.0 ms is under the 10.0 ms target"),
            "{s}"
        );
        let s = verdict_sentence(&report(10_400.0, true));
        assert!(
            s.contains("within 10% of the 10.0 ms target: too close to call"),
            "{s}"
        );
        let s = verdict_sentence(&report(30_000.0, true));
        assert!(s.contains("30.0 ms is over the 10.0 ms target"), "{s}");
        // Blazing fast, yet no pass: no disk behind it.
        let s = verdict_sentence(&report(4.0, false));
        assert!(s.contains("says nothing about one"), "{s}");
        assert!(!s.contains("fast enough"), "{s}");
    }

    #[test]
    fn only_a_clear_miss_fails_the_run() {
        assert!(report(2_000.0, true).ok());
        assert!(report(10_400.0, true).ok());
        assert!(!report(30_000.0, true).ok());
        assert!(report(4.0, false).ok());
    }

    #[test]
    fn the_text_shows_write_and_fdatasync_apart() {
        let t = text(&report(2_000.0, true));
        assert!(t.contains("│ write "), "{t}");
        assert!(t.contains("│ fdatasync "), "{t}");
        assert!(t.contains("verdict   fdatasync p99"), "{t}");
    }
}
