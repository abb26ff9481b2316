//! The result of `run`: one timed read or write, with the kernel's view beside it.

use crate::engine::Moved;
use crate::files::InputKind;
use crate::measure::cache::CacheProof;
use crate::measure::caveat::Caveat;
use crate::measure::checks::Check;
use crate::measure::diskstats::DiskDelta;
use crate::measure::latency::Latency;
use crate::measure::procio::ProcIo;
use crate::measure::series::OverTime;
use crate::measure::timer::Elapsed;
use crate::units::per_second;
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::verify::InPlace;
use serde::{Deserialize, Serialize};

/// Everything `run` measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunReport {
    /// The file as the user named it (`stdin` for `-`).
    pub file: String,
    /// Read or write.
    pub op: Op,
    /// What kind of file it was (reads).
    pub input_kind: Option<InputKind>,
    /// The engine that moved the bytes.
    pub engine: String,
    /// Whether the engine moves real bytes (false for `null`).
    pub moves_bytes: bool,
    /// Bytes per call.
    pub block_size: u64,
    /// Calls asked for, when given.
    pub block_count: Option<u64>,
    /// Bytes moved, calls made and the checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed: 8 hex digits.
    pub xor_hex: String,
    /// Seed of the written data.
    pub seed: Option<u64>,
    /// Headline seconds: for writes this includes the final fsync.
    pub seconds: f64,
    /// Headline rate (bytes / seconds).
    pub bytes_per_second: f64,
    /// System calls per second over the headline time.
    pub calls_per_second: f64,
    /// Time of the write calls alone (writes).
    pub write_seconds: Option<f64>,
    /// Time of the final fsync (writes).
    pub fsync_seconds: Option<f64>,
    /// Wall and CPU time of the whole timed region.
    pub elapsed: Elapsed,
    /// Residency before a read of a regular file, and the device bytes (no state is asked
    /// for: `run` reads the file as it is).
    pub cache: Option<CacheProof>,
    /// The kernel's counts over the timed region (`/proc/self/io`).
    pub kernel: Option<ProcIo>,
    /// The device's counts over the timed region (`/proc/diskstats`, all processes), when
    /// a block device is behind the file.
    pub device: Option<DiskDelta>,
    /// Bytes the device moved beyond the run's own, when clearly more: another process's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// Stalls on the CPU, I/O and memory over the timed region (`/proc/pressure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::measure::pressure::Pressure>,
    /// Claims compared with the kernel's counts.
    pub checks: Vec<Check>,
    /// Reads with `--seed`: every byte read checked in place against the generator, after
    /// the timed read (its seconds in no other figure).
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<InPlace>,
    /// The time of each data call, in nanoseconds (engines that make one call per block,
    /// without `--no-latency`).
    #[serde(
        default,
        rename = "latency_ns",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency: Option<Latency>,
    /// The run over time (`--series`): per-interval figures, the steady state and, for a
    /// write, the write-back check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_time: Option<OverTime>,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// What could make this figure wrong: the file's extents and compression (reads of a
    /// regular file), the device's write cache (writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<Caveat>,
    /// With `--repeat N` (N > 1): the bytes per second of every run, in the order run; the
    /// figures above are the run whose rate is the median's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<f64>,
}
impl RunReport {
    /// Rate without the fsync, for writes.
    pub fn bytes_per_second_before_fsync(&self) -> Option<f64> {
        self.write_seconds.map(|s| per_second(self.moved.bytes, s))
    }

    /// Whether every check held and every byte verified was in place.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok) && self.in_place.is_none_or(|v| v.ok())
    }
}
