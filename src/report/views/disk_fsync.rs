//! `disk --preset fsync`: the write's latency and fdatasync's, apart, as a table; the rate
//! of synced writes; the device's view; and the verdict against the target (etcd: p99 under
//! 10 ms), its words chosen by [`crate::results::disk_fsync::judge`] from the numbers.

use crate::report::cells::{opt, us};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::text::line;
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

/// What a write and its fdatasync cost the CPU, and how busy the loop kept its core
/// ("38.1 µs per write and fdatasync (user + system), 38% of a core"). The sum only: the
/// kernel splits it between user and system by sampling at its ticks, which on a short run
/// is noise (the JSON and CSV keep both).
fn cpu_text(r: &FsyncReport) -> Option<String> {
    let (user, system) = r.cpu_us_per_sync()?;
    Some(format!(
        "{} per write and fdatasync (user + system), {:.0}% of a core",
        time(user + system),
        100.0 * r.core_share().unwrap_or(0.0)
    ))
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

/// One call's row of the table: the write's, or fdatasync's (the one the target judges).
struct Call<'a> {
    name: &'static str,
    latency: &'a Latency,
    judged: bool,
}

/// The two rows, write then fdatasync.
fn calls(r: &FsyncReport) -> [Call<'_>; 2] {
    [
        Call {
            name: "write",
            latency: &r.write_latency_us,
            judged: false,
        },
        Call {
            name: "fdatasync",
            latency: &r.fdatasync_latency_us,
            judged: true,
        },
    ]
}

/// The one table of the preset, for the text, Markdown and CSV alike: each call's count and
/// latency percentiles (µs), and in the CSV the run's figures and the target's verdict on
/// fdatasync's row.
fn columns<'a>(r: &'a FsyncReport) -> Vec<Column<'a, Call<'a>>> {
    let verdict = serde_json::to_value(r.verdict)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let percentile = |name: &'static str, key: &'static str, pick: fn(&Latency) -> f64| {
        Column::new(name, "µs", 0, move |c: &Call| us(pick(c.latency)))
            .csv(key, move |c: &Call| pick(c.latency).to_string())
    };
    vec![
        Column::new("call", "", 0, |c: &Call| c.name.to_string())
            .left()
            .csv("call", |c: &Call| c.name.to_string()),
        Column::new("count", "", 0, |_: &Call| group_thousands(r.writes))
            .csv("count", |_: &Call| r.writes.to_string()),
        Column::raw("block_bytes", |_: &Call| r.block_bytes.to_string()),
        Column::raw("seconds", |_: &Call| r.seconds.to_string()),
        Column::raw("mean_us", |c: &Call| c.latency.mean.to_string()),
        percentile("p50", "p50_us", |l| l.p50),
        percentile("p90", "p90_us", |l| l.p90),
        percentile("p99", "p99_us", |l| l.p99),
        percentile("p99.9", "p99_9_us", |l| l.p99_9),
        percentile("p99.99", "p99_99_us", |l| l.p99_99),
        percentile("max", "max_us", |l| l.max),
        Column::raw("target_us", |c: &Call| {
            opt(c.judged.then_some(r.target.limit_us))
        }),
        Column::raw("target_percentile", |c: &Call| {
            opt(c.judged.then(|| r.target.percentile.name()))
        }),
        Column::raw("verdict", move |c: &Call| {
            opt(c.judged.then(|| verdict.clone()))
        }),
        // The run's, per write and its fdatasync: the same on both rows, as count is.
        Column::raw("cpu_user_us_per_sync", |_: &Call| {
            opt(r.cpu_us_per_sync().map(|(u, _)| u))
        }),
        Column::raw("cpu_system_us_per_sync", |_: &Call| {
            opt(r.cpu_us_per_sync().map(|(_, s)| s))
        }),
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
    out.push_str(&format!(
        "latency of each call, µs:\n{}\n",
        columns::for_terminal(&columns(r), &calls(r))
            .text
            .trim_end()
    ));
    line(
        &mut out,
        "rate",
        format!(
            "{} synced writes/s, {:.2} MiB/s, in {}{}",
            group_thousands(r.syncs_per_second.round() as u64),
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
    if let Some(cpu) = cpu_text(r) {
        line(&mut out, "cpu", cpu);
    }
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
        let mut notes = vec![
            format!("Verdict: {}", verdict_sentence(self)),
            format!(
                "Pattern: {}-byte sequential writes, each followed by fdatasync, buffered, 1 at a time, for {}; {} synced writes/s",
                group_thousands(self.block_bytes),
                format_seconds(self.runtime_seconds),
                group_thousands(self.syncs_per_second.round() as u64)
            ),
        ];
        notes.extend(cpu_text(self).map(|s| format!("CPU: {s}")));
        notes.extend(device_sentence(self).map(|s| format!("Device: {s}")));
        vec![
            md_table(&columns::markdown(&columns(self), &calls(self)), None),
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
        columns::csv(&columns(self), &calls(self))
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
            cpu: Some(crate::results::disk::CpuUse {
                user_seconds: 0.0016,
                system_seconds: 0.0175,
            }),
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
        // 500 writes in 1 s on 19.1 ms of CPU: 38.2 µs each, 2% busy.
        assert!(
            t.contains(
                "\ncpu       38.2 µs per write and fdatasync (user + system), 2% of a core\n"
            ),
            "{t}"
        );
        let mut old = report(2_000.0, true);
        old.cpu = None;
        assert!(
            !text(&old).contains("\ncpu "),
            "a document from before has no line"
        );
    }
}
