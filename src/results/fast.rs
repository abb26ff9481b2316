//! The result of `fast`: the checksum, and how it was read.

use crate::engine::{self, Moved};
use crate::files::InputKind;
use crate::measure::cache::Residency;
use crate::measure::timer::Elapsed;
use serde::{Deserialize, Serialize};

/// What `fast` did and found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FastReport {
    /// The input's name.
    pub file: String,
    /// Its kind.
    pub input_kind: InputKind,
    /// The engine that ran.
    pub engine: String,
    /// How that engine moves bytes.
    pub method: String,
    /// Its capability flags.
    pub caps: engine::Caps,
    /// Why that engine.
    pub reason: String,
    /// Engines considered and passed over, with the reason.
    pub fallbacks: Vec<String>,
    /// Threads used.
    pub threads: usize,
    /// Bytes per read or chunk.
    pub block_size: u64,
    /// Reads in flight per thread (uring).
    pub depth: usize,
    /// Bytes, calls and checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed.
    pub xor_hex: String,
    /// Seconds the engine ran.
    pub seconds: f64,
    /// Bytes per second over those seconds.
    pub bytes_per_second: f64,
    /// Wall and CPU time of the engine run.
    pub elapsed: Elapsed,
    /// Residency before the run (regular files above the small-file size).
    pub residency_before: Option<Residency>,
    /// Seconds spent choosing before the run (sampling residency, checking engines); the
    /// per-chunk tests of a `per_chunk` engine are inside the run, in `tests`.
    #[serde(default)]
    pub choice_seconds: f64,
    /// What could make the rate wrong (the file's extents and compression): measured after
    /// the run, and only when details are asked for (`--verbose`, `--json`, `--markdown`),
    /// so the plain checksum costs nothing more.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<crate::measure::caveat::Caveat>,
    /// With `--repeat N` (N > 1): the bytes per second of every run, in the order run; the
    /// figures above are the run whose rate is the median's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repeats: Vec<f64>,
}
