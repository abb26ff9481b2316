//! The result of `patterns`: the rate of each access pattern on one file.

use crate::engine::mixed::Split;
use crate::harness::Sample;
use crate::measure::cache::{CacheProof, CacheState};
use crate::measure::latency::Latency;
use crate::measure::stats::Summary;
use crate::warning::Warning;
pub use crate::workload::patterns::Test;
use crate::workload::plan::Coverage;
use crate::workload::verify::InPlace;
use serde::{Deserialize, Serialize};

/// One timed run of a test.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatternRun {
    /// The run as the harness measured it (for writes, elapsed includes the fsync).
    #[serde(flatten)]
    pub sample: Sample,
    /// Seconds of close() after a write-type run (not part of the headline).
    pub close_seconds: Option<f64>,
    /// Whether the XOR of what was read equals that of the bytes written (`None` where a
    /// test does not read the whole file once).
    pub verified: Option<bool>,
    /// Read-type runs: every byte of the range read checked in place against the data
    /// written, after the timing (its seconds in no figure).
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<InPlace>,
    /// Reads and writes of a mixed run.
    pub split: Option<Split>,
}

/// A test at one file size and record size, over its runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatternResult {
    /// The test.
    pub test: Test,
    /// File size.
    pub file_bytes: u64,
    /// Bytes per call.
    pub record: u64,
    /// The headline: bytes per second over the runs (writes: fsync included).
    pub bytes_per_second: Summary,
    /// Write-type tests: bytes per second without the fsync — what iozone reports by default.
    pub without_fsync: Option<Summary>,
    /// Write-type tests: median seconds of the final fsync.
    pub fsync_seconds: Option<f64>,
    /// Write-type tests: median seconds of close().
    pub close_seconds: Option<f64>,
    /// Median calls per second.
    pub calls_per_second: f64,
    /// Where the records fell (random, stride and record-rewrite tests).
    pub coverage: Option<Coverage>,
    /// Whether every run that could be verified was (`None`: none could be).
    pub verified: Option<bool>,
    /// The checks in place of every run, together (read-type tests).
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<InPlace>,
    /// Whether every kernel check and cache proof held.
    pub checks_ok: bool,
    /// The time of each data call over all runs together, in nanoseconds (when every run
    /// timed its calls; a mixed test's reads and writes together).
    #[serde(
        default,
        rename = "latency_ns",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency: Option<Latency>,
    /// Every run.
    pub runs: Vec<PatternRun>,
    /// How the repeats ended when they ran until stable (absent with `--runs`): the
    /// relative half-width of the median's 95% interval, and whether it came within the
    /// precision asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<crate::measure::converge::Settled>,
}

impl PatternResult {
    /// The cache proof of the first run (read-type tests).
    pub fn cache(&self) -> Option<&CacheProof> {
        self.runs.first().and_then(|r| r.sample.cache.as_ref())
    }
}

/// The data write-type tests send, laid out before any clock started: what it is and what
/// laying it out cost (in no figure).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct DataPrep {
    /// Bytes of the seeded block repeated along the file.
    pub block_bytes: u64,
    /// Distance between the stamps (a key of the offset) that make every page unique.
    pub stamp_every: u64,
    /// Memory laid out for the largest record size.
    pub bytes: u64,
    /// Seconds spent laying it out, over every record size.
    pub seconds: f64,
}

/// The result of `patterns`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PatternsReport {
    /// The file, or the directory a scratch file was made in.
    pub path: String,
    /// Seed of the file's contents.
    pub seed: u64,
    /// Timed runs per test (the least, when they ran until stable).
    pub runs: usize,
    /// The rule that ended each test's repeats when they ran until stable (absent with
    /// `--runs`, `--auto`, and in results saved before it existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<crate::measure::converge::Stopping>,
    /// Cache state read tests start in (reread always follows read, warm).
    pub cache: CacheState,
    /// Stride of the stride read, in records.
    pub stride: u64,
    /// Share of reads in the mixed test, in percent.
    pub read_percent: u8,
    /// Whether random tests draw with repeats (iozone's way) instead of every record once.
    pub draws: bool,
    /// File sizes measured.
    pub sizes: Vec<u64>,
    /// Record sizes measured.
    pub records: Vec<u64>,
    /// Whether this is an auto (sizes × records) run.
    pub auto: bool,
    /// The written data, prepared before timing (absent from results of versions that
    /// generated it inside the timed calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<DataPrep>,
    /// One entry per test, record size and file size, in the order run.
    pub results: Vec<PatternResult>,
    /// Whether everything ran (false after an interruption).
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// What could make these figures wrong (see `report::caveats`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<crate::measure::caveat::Caveat>,
}

impl PatternsReport {
    /// Whether every check held and every verifiable read was verified.
    pub fn ok(&self) -> bool {
        self.results
            .iter()
            .all(|r| r.checks_ok && r.verified != Some(false) && r.in_place.is_none_or(|v| v.ok()))
    }
}
