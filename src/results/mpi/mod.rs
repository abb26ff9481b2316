//! The result of `mpi`, as rank 0 assembles it and `ioscope report` reads it back: every
//! rank's run of every repeat, and the aggregate over the ranks. Plain serde types, the same
//! in every build (with or without the `mpi` feature).

use crate::harness::Sample;
use crate::measure::cache::CacheState;
use crate::measure::env::Environment;
use crate::measure::stats::Summary;
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::layout::{Layout, Phases};
use ior::{Clock, FailedPhase, Kept, PhaseTimes, Reorder, RepeatFiles};
use serde::{Deserialize, Serialize};

pub mod io500;
pub mod ior;

/// One rank: where it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankInfo {
    /// The rank.
    pub rank: usize,
    /// Its host name.
    pub host: String,
    /// Its environment (kernel, CPU, memory, the storage behind DIR there).
    pub environment: Environment,
}

/// One rank's timed run in one repeat of a phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankRun {
    /// The rank that moved the bytes.
    pub rank: usize,
    /// Its host name.
    pub host: String,
    /// The file it wrote or read.
    pub file: String,
    /// The rank whose segment this is: itself for writes, the next rank for reads.
    pub segment_of: usize,
    /// First byte of the segment in the file.
    pub offset: u64,
    /// What was measured (the cache proof and residency before the run for reads; for
    /// writes the fsync inside the time).
    pub sample: Sample,
    /// Bytes per second of this rank.
    pub bytes_per_second: f64,
    /// The checksum of what moved.
    pub xor_hex: String,
    /// The checksum the generator gives for the segment (reads: verified equal).
    pub expected_xor_hex: Option<String>,
    /// Its open, transfer and close, start and end on the common clock (IOR's timers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<PhaseTimes>,
    /// Reads: seconds the XOR of the bytes read takes alone (timed on a block-sized buffer
    /// of the same data after the read); it runs inside the timed read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xor_seconds: Option<f64>,
    /// Writes: the file's size when the write started (0: emptied first, as IOR recreates
    /// its files; the full size: overwritten in place).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_bytes_at_start: Option<u64>,
    /// Reads: every byte of the segment checked in place against the generator, after the
    /// timing (absent from results of versions that checked the XOR alone).
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<crate::workload::verify::InPlace>,
}

/// Who finished when.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankTime {
    /// The rank.
    pub rank: usize,
    /// Its host name.
    pub host: String,
    /// Its own transfer seconds (from its first call, after the barrier, to its last byte;
    /// writes: fsync included), not counted from a common start.
    pub seconds: f64,
}

/// A repeat of a phase, over all ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Aggregate {
    /// Bytes moved by all ranks (an MPI sum).
    pub total_bytes: u64,
    /// The slowest rank's seconds (an MPI max).
    pub slowest_seconds: f64,
    /// Total bytes over the slowest rank's seconds: the honest aggregate.
    pub bytes_per_second: f64,
    /// The rank done first.
    pub first_done: RankTime,
    /// The rank done last.
    pub last_done: RankTime,
    /// Spread of the ranks' own rates (bytes/s).
    pub rank_rates: Summary,
    /// The longest fsync of any rank (writes; inside its time).
    pub fsync_seconds_max: Option<f64>,
    /// IOR's time: latest close end minus earliest open start, on the common clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ior_seconds: Option<f64>,
    /// IOR's aggregate: total bytes over `ior_seconds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ior_bytes_per_second: Option<f64>,
    /// Reads: total bytes over the slowest rank's time less its XOR seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_xor_bytes_per_second: Option<f64>,
}

/// One repeat of a phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Repeat {
    /// Every rank's run, in rank order.
    pub ranks: Vec<RankRun>,
    /// The figures over all ranks.
    pub aggregate: Aggregate,
}

/// A timed phase (write or read) and its repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Phase {
    /// Write or read.
    pub op: Op,
    /// Each repeat.
    pub repeats: Vec<Repeat>,
    /// The aggregate rate over the repeats.
    pub bytes_per_second: Summary,
    /// IOR's aggregate over the repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ior_bytes_per_second: Option<Summary>,
    /// Reads: the aggregate without the XOR, over the repeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_xor_bytes_per_second: Option<Summary>,
    /// Whether the aggregate's median came within the precision asked (repeated until
    /// stable; absent for a fixed `--repeat` and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<crate::measure::converge::Settled>,
}

/// Everything `mpi` measured, as rank 0 assembled it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MpiReport {
    /// The directory the files were in.
    pub dir: String,
    /// The timed phases.
    pub phases_timed: Phases,
    /// How the ranks shared the files.
    pub layout: Layout,
    /// Ranks in the job.
    pub ranks: usize,
    /// Distinct hosts among them.
    pub hosts: usize,
    /// Whether an MPI launcher started the job (else: one rank on its own).
    pub launched_by_mpirun: bool,
    /// Bytes each rank wrote and read.
    pub bytes_per_rank: u64,
    /// Bytes per call.
    pub block_size: u64,
    /// The engine that moved the bytes.
    pub engine: String,
    /// The cache state of the reads.
    pub cache: CacheState,
    /// The seed of the data (rank 0's, broadcast).
    pub seed: u64,
    /// Where each rank ran.
    pub rank_info: Vec<RankInfo>,
    /// The timed phases, in order.
    pub results: Vec<Phase>,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// What each repeat's write started from (older documents: overwritten in place).
    #[serde(default = "RepeatFiles::older")]
    pub repeat_files: RepeatFiles,
    /// The common clock of the starts and ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
    /// Whose data each rank read, and why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<Reorder>,
    /// The files read were left by an earlier run (`--existing NAME`), not written here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_existing: Option<String>,
    /// The files this run left (`--keep`), and the seed to read them back with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept: Option<Kept>,
    /// A phase that failed after the results above were in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<FailedPhase>,
    /// The budget the phases were repeated within until stable (absent: a fixed
    /// `--repeat`, or an older document).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<crate::measure::converge::Stopping>,
}

impl MpiReport {
    /// Whether every rank's checks held (reads were all verified, or the run had stopped).
    pub fn ok(&self) -> bool {
        self.failed.is_none()
            && self
                .results
                .iter()
                .flat_map(|p| &p.repeats)
                .flat_map(|r| &r.ranks)
                .all(|r| r.sample.ok())
    }

    /// The phase of `op`, if it was timed.
    pub fn phase(&self, op: Op) -> Option<&Phase> {
        self.results.iter().find(|p| p.op == op)
    }
}

impl RankRun {
    /// `write` or `read`, from what was measured.
    pub(crate) fn sample_op(&self) -> &'static str {
        if self.sample.fsync_seconds.is_some() {
            "write"
        } else {
            "read"
        }
    }
}
