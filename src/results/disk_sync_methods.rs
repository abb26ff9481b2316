//! The result of `disk --preset sync-methods`: one row per method, writes per sync and
//! block size (ops/s, latency per op, the device's flushes per op), and the two verdicts,
//! each chosen from the numbers by [`judge_speed`] and [`judge_flushes`] with their
//! thresholds named here.

pub use crate::engine::sync::SyncMethod;
use crate::measure::verdict::{Figure, Relation, relate};
use crate::results::disk::{CpuUse, Latency};
use crate::warning::Warning;
use serde::{Deserialize, Serialize};

pub use crate::workload::panel::SYNC_REGION_BYTES as REGION_BYTES;

/// Slices each row's run is cut into: their ops/s are the row's repeats, whose spread is the
/// noise a difference must stand clear of.
pub const SLICES: usize = 3;

/// Flushes per fdatasync below this are "none": the flush did not reach the device.
pub const NO_FLUSH_BELOW: f64 = 0.1;

/// Flushes per fdatasync up to this are "about one"; above, the file system adds its own.
pub const ONE_FLUSH_UP_TO: f64 = 1.5;

/// One measured (or skipped) combination.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncRow {
    /// The method.
    pub method: SyncMethod,
    /// Writes per operation (1 or 2): with fdatasync, fsync and io_uring the writes share
    /// one sync; with the synchronous writes each is durable on its own.
    pub writes_per_op: u32,
    /// Bytes per write.
    pub block_bytes: u64,
    /// Why it did not run (this kernel or file system does not offer it); `None` if it ran.
    pub skipped: Option<String>,
    /// Operations completed (each `writes_per_op` writes and what made them durable).
    pub ops: u64,
    /// Wall time of the timed loop.
    pub seconds: f64,
    /// Operations per second.
    pub ops_per_second: f64,
    /// Operations per second of each slice of the run ([`SLICES`]): the spread.
    pub slices_per_second: Vec<f64>,
    /// Latency of each operation, microseconds (`None` when skipped).
    pub latency_us: Option<Latency>,
    /// Flush requests the disk completed during the row (everybody's); `None` when not
    /// counted (no block device, or a kernel before 5.5).
    pub flushes: Option<u64>,
    /// Milliseconds the disk spent flushing during the row.
    pub flush_ms: Option<u64>,
    /// Write requests the disk completed during the row.
    pub device_writes: Option<u64>,
    /// The CPU ioscope's process used over the timed loop (io_uring's worker threads
    /// included, which run its fsync); `None` when skipped, too short to count
    /// ([`crate::results::disk::CPU_COUNTED_FROM_SECONDS`]), or in a document from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    /// Whether its file had none of its pages cached when the timed writes began (it is
    /// dropped from the page cache once written; tmpfs keeps them); `None` when not checked
    /// (skipped, or a document from before).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evicted: Option<bool>,
}

impl SyncRow {
    /// Whether it ran.
    pub fn ran(&self) -> bool {
        self.skipped.is_none() && self.ops > 0
    }

    /// User and system CPU microseconds per operation (its writes and its sync).
    pub fn cpu_us_per_op(&self) -> Option<(f64, f64)> {
        self.cpu?.us_per(self.ops)
    }

    /// Device flushes per operation, where counted.
    pub fn flushes_per_op(&self) -> Option<f64> {
        (self.ops > 0).then_some(())?;
        Some(self.flushes? as f64 / self.ops as f64)
    }

    /// Its ops/s as the rule of [`crate::measure::verdict`] sees it: the median of its
    /// slices and their range.
    pub fn figure(&self) -> Figure {
        let mut s: Vec<f64> = self
            .slices_per_second
            .iter()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        if s.is_empty() {
            return Figure::one(self.ops_per_second);
        }
        s.sort_by(f64::total_cmp);
        Figure {
            median: s[s.len() / 2],
            min: s[0],
            max: s[s.len() - 1],
            n: s.len(),
        }
    }
}

/// Why flushes were not counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NotCounted {
    /// No block device behind the directory (tmpfs, overlay, a network file system).
    NoDevice,
    /// The kernel's `/proc/diskstats` line has no flush fields (before 5.5).
    OldKernel,
    /// A stacked device (device-mapper, md): it passes flushes on to the disks below as
    /// bios, which its own line does not count as flushes, so its count would say 0.
    Stacked,
}

/// Which method was fastest at one write per op, against fdatasync.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Speed {
    /// `method` is clearly faster than fdatasync: `ratio` its ops/s over fdatasync's.
    Faster {
        /// The fastest method.
        method: SyncMethod,
        /// Its ops/s over fdatasync's.
        ratio: f64,
    },
    /// The fastest, `method`, is ahead of fdatasync by the median but within the noise.
    WithinNoise {
        /// The fastest method by the median.
        method: SyncMethod,
        /// Its ops/s over fdatasync's.
        ratio: f64,
    },
    /// fdatasync was the fastest: `ratio` its ops/s over the next, `next`; `clear` when
    /// beyond the noise.
    FdatasyncFastest {
        /// The next fastest method.
        next: SyncMethod,
        /// fdatasync's ops/s over it.
        ratio: f64,
        /// Whether the lead stands clear of the noise.
        clear: bool,
    },
    /// fdatasync did not run, or nothing else did: nothing to compare.
    NoComparison,
}

/// Picks [`Speed`] from the rows of one write per op at one block size.
pub fn judge_speed(rows: &[&SyncRow]) -> Speed {
    let ran: Vec<&&SyncRow> = rows.iter().filter(|r| r.ran()).collect();
    let Some(base) = ran.iter().find(|r| r.method == SyncMethod::Fdatasync) else {
        return Speed::NoComparison;
    };
    let Some(best) = ran
        .iter()
        .filter(|r| r.method != SyncMethod::Fdatasync)
        .max_by(|a, b| a.figure().median.total_cmp(&b.figure().median))
    else {
        return Speed::NoComparison;
    };
    let (b, f) = (best.figure(), base.figure());
    if b.median > f.median {
        match relate(b, f) {
            Relation::Above(ratio) => Speed::Faster {
                method: best.method,
                ratio,
            },
            _ => Speed::WithinNoise {
                method: best.method,
                ratio: b.median / f.median.max(1e-12),
            },
        }
    } else {
        Speed::FdatasyncFastest {
            next: best.method,
            ratio: f.median / b.median.max(1e-12),
            clear: matches!(relate(f, b), Relation::Above(_)),
        }
    }
}

/// What the device's flush count says about fdatasync.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Flushes {
    /// Not counted, and why.
    NotCounted {
        /// Why.
        why: NotCounted,
    },
    /// A write-back cache, yet about no flush per fdatasync: the flush never reaches it.
    Missing {
        /// Flushes per fdatasync.
        per_op: f64,
    },
    /// A write-back cache and about one flush per fdatasync: as it should be.
    AboutOne {
        /// Flushes per fdatasync.
        per_op: f64,
    },
    /// A write-back cache and more than one flush per fdatasync: the file system's journal
    /// (or other processes) add their own.
    Several {
        /// Flushes per fdatasync.
        per_op: f64,
    },
    /// A write-through device: the kernel sends no flush, and need not.
    WriteThrough {
        /// Flushes per fdatasync.
        per_op: f64,
    },
    /// Sysfs does not say which cache the device has.
    UnknownCache {
        /// Flushes per fdatasync.
        per_op: f64,
    },
    /// fdatasync did not run.
    NoFdatasync,
}

/// Picks [`Flushes`] from fdatasync's flushes per op and the device's cache mode
/// (`write_back`: `Some(true)` "write back", `Some(false)` "write through").
pub fn judge_flushes(
    per_op: Option<f64>,
    not_counted: Option<NotCounted>,
    write_back: Option<bool>,
    ran: bool,
) -> Flushes {
    if let Some(why) = not_counted {
        return Flushes::NotCounted { why };
    }
    if !ran {
        return Flushes::NoFdatasync;
    }
    let Some(per_op) = per_op else {
        return Flushes::NotCounted {
            why: NotCounted::OldKernel,
        };
    };
    match write_back {
        Some(false) => Flushes::WriteThrough { per_op },
        None => Flushes::UnknownCache { per_op },
        Some(true) if per_op < NO_FLUSH_BELOW => Flushes::Missing { per_op },
        Some(true) if per_op <= ONE_FLUSH_UP_TO => Flushes::AboutOne { per_op },
        Some(true) => Flushes::Several { per_op },
    }
}

/// The result of `disk --preset sync-methods`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SyncMethodsReport {
    /// The directory the scratch files were made in.
    pub dir: String,
    /// Bytes each scratch file holds (written, then synced, before its row): the writes go
    /// through it in order and wrap to its start.
    pub region_bytes: u64,
    /// The whole disk behind the directory (flushes are counted on it), if any.
    pub device_name: Option<String>,
    /// Its write cache as sysfs says: `write back` or `write through`.
    pub write_cache: Option<String>,
    /// Whether its queue takes Force Unit Access writes.
    pub fua: Option<bool>,
    /// Why flushes were not counted, if they were not.
    pub flushes_not_counted: Option<NotCounted>,
    /// Seconds asked per row.
    pub runtime_seconds: f64,
    /// Every row, in the order run.
    pub rows: Vec<SyncRow>,
    /// The fastest method against fdatasync (1 write per op, first block size).
    pub speed: Speed,
    /// fdatasync's flushes against the device's cache.
    pub flush_check: Flushes,
    /// Whether the run went to its end.
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
}

impl SyncMethodsReport {
    /// The block sizes, in the order run.
    pub fn blocks(&self) -> Vec<u64> {
        let mut out: Vec<u64> = Vec::new();
        for r in &self.rows {
            if !out.contains(&r.block_bytes) {
                out.push(r.block_bytes);
            }
        }
        out
    }

    /// The verdicts computed again from the rows (what `execute` stores).
    pub fn judged(&mut self) {
        let first = self.blocks().first().copied();
        let ones: Vec<&SyncRow> = self
            .rows
            .iter()
            .filter(|r| r.writes_per_op == 1 && Some(r.block_bytes) == first)
            .collect();
        self.speed = judge_speed(&ones);
        let fdatasync = ones.iter().find(|r| r.method == SyncMethod::Fdatasync);
        let write_back = self
            .write_cache
            .as_deref()
            .map(|m| m.trim() == "write back");
        self.flush_check = judge_flushes(
            fdatasync.and_then(|r| r.flushes_per_op()),
            self.flushes_not_counted,
            write_back,
            fdatasync.is_some_and(|r| r.ran()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(method: SyncMethod, slices: [f64; 3], flushes: Option<u64>) -> SyncRow {
        let ops_per_second = slices[1];
        SyncRow {
            method,
            writes_per_op: 1,
            block_bytes: 8192,
            skipped: None,
            ops: (ops_per_second * 3.0) as u64,
            seconds: 3.0,
            ops_per_second,
            slices_per_second: slices.to_vec(),
            latency_us: Some(Latency::default()),
            flushes,
            flush_ms: None,
            device_writes: None,
            cpu: None,
            evicted: None,
        }
    }

    #[test]
    fn cpu_per_op_divides_the_process_cpu_by_the_ops_and_is_none_where_not_counted() {
        let mut r = row(SyncMethod::Fdatasync, [1000.0, 1000.0, 1000.0], None);
        r.ops = 4000;
        assert_eq!(r.cpu_us_per_op(), None);
        r.cpu = Some(CpuUse {
            user_seconds: 0.004,
            system_seconds: 0.16,
        });
        let (user, system) = r.cpu_us_per_op().unwrap();
        assert!((user - 1.0).abs() < 1e-9 && (system - 40.0).abs() < 1e-9);
        r.ops = 0;
        assert_eq!(r.cpu_us_per_op(), None, "no ops, no figure per op");
    }

    #[test]
    fn o_dsync_slower_than_fdatasync_is_said_so() {
        let f = row(SyncMethod::Fdatasync, [980.0, 1000.0, 1010.0], None);
        let d = row(SyncMethod::ODsync, [590.0, 600.0, 610.0], None);
        match judge_speed(&[&f, &d]) {
            Speed::FdatasyncFastest { next, ratio, clear } => {
                assert_eq!(next, SyncMethod::ODsync);
                assert!((ratio - 1000.0 / 600.0).abs() < 1e-9);
                assert!(clear);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_faster_method_is_claimed_only_beyond_the_noise() {
        let f = row(SyncMethod::Fdatasync, [990.0, 1000.0, 1010.0], None);
        let d = row(SyncMethod::ODsync, [1590.0, 1600.0, 1610.0], None);
        assert_eq!(
            judge_speed(&[&f, &d]),
            Speed::Faster {
                method: SyncMethod::ODsync,
                ratio: 1.6
            }
        );
        // 1.3x by the median, but the slices overlap: no claim.
        let wide = row(SyncMethod::ODsync, [700.0, 1300.0, 1900.0], None);
        assert!(matches!(
            judge_speed(&[&f, &wide]),
            Speed::WithinNoise {
                method: SyncMethod::ODsync,
                ..
            }
        ));
        // 5% apart: the same by the one rule.
        let near = row(SyncMethod::OSync, [1040.0, 1050.0, 1060.0], None);
        assert!(matches!(
            judge_speed(&[&f, &near]),
            Speed::WithinNoise { .. }
        ));
        // Without fdatasync there is nothing to compare with.
        assert_eq!(judge_speed(&[&d]), Speed::NoComparison);
    }

    #[test]
    fn no_flush_on_a_write_back_device_is_called_out() {
        assert_eq!(
            judge_flushes(Some(0.0), None, Some(true), true),
            Flushes::Missing { per_op: 0.0 }
        );
        assert_eq!(
            judge_flushes(Some(1.02), None, Some(true), true),
            Flushes::AboutOne { per_op: 1.02 }
        );
        assert_eq!(
            judge_flushes(Some(2.0), None, Some(true), true),
            Flushes::Several { per_op: 2.0 }
        );
    }

    #[test]
    fn no_flush_on_a_write_through_device_is_fine_and_tmpfs_is_not_counted() {
        assert_eq!(
            judge_flushes(Some(0.0), None, Some(false), true),
            Flushes::WriteThrough { per_op: 0.0 }
        );
        assert_eq!(
            judge_flushes(None, Some(NotCounted::NoDevice), None, true),
            Flushes::NotCounted {
                why: NotCounted::NoDevice
            }
        );
        assert_eq!(
            judge_flushes(None, None, Some(true), true),
            Flushes::NotCounted {
                why: NotCounted::OldKernel
            }
        );
        assert_eq!(
            judge_flushes(Some(0.0), None, Some(true), false),
            Flushes::NoFdatasync
        );
    }
}
