//! The result of `disk --fsync`: fdatasync's latency against the target, and the verdict.

use crate::measure::devstats::DeviceView;
use crate::measure::percentile::Target;
use crate::measure::verdict::same;
use crate::results::disk::{CpuUse, Latency};
use crate::warning::Warning;
use serde::{Deserialize, Serialize};

/// fdatasync's percentile against the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Under the target by more than the rule's 10%.
    Under,
    /// Within 10% of the target, either side: too close to call.
    AtTarget,
    /// Over it by more than 10%.
    Over,
    /// No block device behind the file (tmpfs, overlay, network): fdatasync had no disk to
    /// wait for, so its figure says nothing about one.
    NoDevice,
}

/// The verdict on fdatasync's `value_us` against `target_us`, on a file with or without a
/// block device under it.
pub fn judge(value_us: f64, target_us: f64, device: bool) -> Verdict {
    if !device {
        Verdict::NoDevice
    } else if same(value_us, target_us) {
        Verdict::AtTarget
    } else if value_us < target_us {
        Verdict::Under
    } else {
        Verdict::Over
    }
}

/// The result of `disk --preset fsync`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FsyncReport {
    /// The scratch file.
    pub file: String,
    /// Its size (the writes wrap to its start there).
    pub file_bytes: u64,
    /// Whether fallocate preallocated it (else the writes extend it).
    pub preallocated: bool,
    /// The block device behind it, if any.
    pub device_name: Option<String>,
    /// Seconds asked.
    pub runtime_seconds: f64,
    /// Bytes per write.
    pub block_bytes: u64,
    /// Writes made, each followed by one fdatasync.
    pub writes: u64,
    /// Bytes written.
    pub bytes: u64,
    /// Wall time of the whole loop.
    pub seconds: f64,
    /// Latency of each write (into the page cache), microseconds.
    pub write_latency_us: Latency,
    /// Latency of each fdatasync, microseconds.
    pub fdatasync_latency_us: Latency,
    /// Write + fdatasync pairs per second.
    pub syncs_per_second: f64,
    /// Times the writes wrapped to the start of the file.
    pub wraps: u64,
    /// The target of the verdict.
    pub target: Target,
    /// fdatasync's watched percentile against the target.
    pub verdict: Verdict,
    /// The device's own view of the run.
    pub device: Option<DeviceView>,
    /// The CPU ioscope used over the run (its one thread runs the loop); `None` in a
    /// document from before it, or a run too short to count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    /// Whether the run went to its end.
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
}

impl FsyncReport {
    /// fdatasync's percentile that the target watches, microseconds.
    pub fn watched_us(&self) -> f64 {
        crate::results::disk_curve::pick(&self.fdatasync_latency_us, self.target.percentile)
    }

    /// User and system CPU microseconds per write and its fdatasync.
    pub fn cpu_us_per_sync(&self) -> Option<(f64, f64)> {
        self.cpu?.us_per(self.writes)
    }

    /// The share of one core the loop kept busy over the run (above 1 only by the
    /// readings' rounding: never clamped, so a wrong figure shows).
    pub fn core_share(&self) -> Option<f64> {
        let cpu = self.cpu?;
        (self.seconds > 0.0).then(|| (cpu.user_seconds + cpu.system_seconds) / self.seconds)
    }
}
