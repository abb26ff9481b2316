//! The result of `mpi io500`: each phase over all ranks, its validity and the score.

use crate::results::mpi::ior::{Clock, PhaseTimes, Reorder};
use crate::workload::verify::InPlace;
use serde::{Deserialize, Serialize};

/// Bytes of one ior-hard record (IO500's `-t 47008 -b 47008`).
pub const HARD_RECORD: u64 = 47_008;
/// Bytes written into each small file (mdtest-hard's `-w 3901`).
pub const SMALL_FILE: u64 = 3_901;
/// Bytes in a GiB, for the bandwidth figures (IO500 reports GiB/s).
pub const GIB: f64 = (1u64 << 30) as f64;

/// Whether a phase's figure is bandwidth or metadata operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Bytes moved: the figure is GiB/s.
    Bandwidth,
    /// Files created, stat'ed, read or deleted: the figure is kIOPS (thousands per second).
    Metadata,
}

/// How a write or create phase met its stonewall.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stonewall {
    /// The time limit, seconds.
    pub seconds: f64,
    /// What each rank had done when it stopped at the stonewall (or at the cap), rank order.
    pub at_stonewall: Vec<u64>,
    /// Whether each rank was stopped by the time (false: it reached the cap first).
    pub stopped_by_time: Vec<bool>,
    /// The count every rank completed to: the largest of `at_stonewall` (an MPI max).
    pub completed_to: u64,
    /// The most each rank would do without a stonewall (the cap).
    pub cap: u64,
}

impl Stonewall {
    /// Whether the time limit stopped at least one rank.
    pub fn bound(&self) -> bool {
        self.stopped_by_time.iter().any(|&b| b)
    }
}

/// One rank's part of a phase.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RankPhase {
    /// The rank.
    pub rank: usize,
    /// The rank whose data it wrote or read.
    pub data_of: usize,
    /// Transfers or files it handled.
    pub count: u64,
    /// Bytes it moved (0 for stat and delete).
    pub bytes: u64,
    /// Its open, transfer and close (small files: first to last operation), on the common
    /// clock.
    pub times: PhaseTimes,
}

/// One phase over all ranks.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Io500Phase {
    /// `ior-easy-write`, `md-create`, ...
    pub name: String,
    /// Bandwidth or metadata.
    pub kind: Kind,
    /// Every rank's part, in rank order.
    pub ranks: Vec<RankPhase>,
    /// Bytes moved by all ranks.
    pub total_bytes: u64,
    /// Operations (transfers or files) of all ranks.
    pub total_ops: u64,
    /// Latest end − earliest start on the common clock (IOR's time).
    pub seconds: f64,
    /// Total bytes (bandwidth) or operations (metadata) per second over `seconds`.
    pub per_second: f64,
    /// The stonewall of a write or create phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stonewall: Option<Stonewall>,
    /// ior reads: every byte checked in place against the generator, all ranks merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified_in_place: Option<InPlace>,
    /// Small-file reads: files whose content was not the one written, and the first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bad_files: Option<BadFiles>,
    /// Why the phase is invalid; empty when valid.
    pub invalid: Vec<String>,
}

impl Io500Phase {
    /// The figure: GiB/s for bandwidth, kIOPS for metadata.
    pub fn figure(&self) -> f64 {
        match self.kind {
            Kind::Bandwidth => self.per_second / GIB,
            Kind::Metadata => self.per_second / 1000.0,
        }
    }

    /// Whether the phase is valid.
    pub fn valid(&self) -> bool {
        self.invalid.is_empty()
    }
}

/// Small files whose content differed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadFiles {
    /// Files read and compared.
    pub checked: u64,
    /// Files whose bytes were not those written.
    pub bad: u64,
    /// The first bad one, and where it differs.
    pub first: Option<String>,
}

/// Geometric means of the phase figures, as IO500 combines them.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Score {
    /// Geometric mean of the bandwidth phases, GiB/s.
    pub bandwidth_gib_per_second: f64,
    /// Geometric mean of the metadata phases, kIOPS.
    pub metadata_kiops: f64,
    /// sqrt(bandwidth × metadata): IO500's combination (not its official score).
    pub combined: f64,
}

impl Score {
    /// The geometric means of `phases`' figures.
    pub fn of(phases: &[Io500Phase]) -> Self {
        let mean =
            |kind| geometric_mean(phases.iter().filter(|p| p.kind == kind).map(|p| p.figure()));
        let bw = mean(Kind::Bandwidth);
        let md = mean(Kind::Metadata);
        Self {
            bandwidth_gib_per_second: bw,
            metadata_kiops: md,
            combined: (bw * md).sqrt(),
        }
    }
}

/// The geometric mean of `values` (0 when any is 0 or there are none).
pub fn geometric_mean(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut n = 0usize;
    let mut logs = 0.0;
    for v in values {
        if v <= 0.0 || !v.is_finite() {
            return 0.0;
        }
        logs += v.ln();
        n += 1;
    }
    if n == 0 { 0.0 } else { (logs / n as f64).exp() }
}

/// Everything `mpi io500` measured, as rank 0 assembled it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Io500Report {
    /// The directory the files were in.
    pub dir: String,
    /// Always false: this is an IO500-like preset, not the official IO500 benchmark.
    pub official_io500_score: bool,
    /// Ranks in the job.
    pub ranks: usize,
    /// Distinct hosts among them.
    pub hosts: usize,
    /// Whether an MPI launcher started the job.
    pub launched_by_mpirun: bool,
    /// The stonewall of each write and create phase, seconds.
    pub stonewall_seconds: f64,
    /// ior-easy's bytes per transfer.
    pub easy_transfer_bytes: u64,
    /// ior-easy's most bytes per rank (the cap without a stonewall).
    pub easy_cap_bytes: u64,
    /// ior-hard's record size.
    pub hard_record_bytes: u64,
    /// ior-hard's most records per rank.
    pub hard_cap_records: u64,
    /// Bytes in each small file.
    pub small_file_bytes: u64,
    /// The most small files per rank.
    pub small_files_cap: u64,
    /// The seed of the data.
    pub seed: u64,
    /// Whose data each rank read, stat'ed and deleted.
    pub reorder: Reorder,
    /// The common clock of the starts and ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<Clock>,
    /// Where each rank ran.
    pub hosts_of_ranks: Vec<String>,
    /// The phases, in the order they ran.
    pub phases: Vec<Io500Phase>,
    /// The geometric means.
    pub score: Score,
}

impl Io500Report {
    /// Whether every read was verified (invalid phases by time alone still pass).
    pub fn ok(&self) -> bool {
        self.phases.iter().all(|p| {
            p.verified_in_place.is_none_or(|v| v.ok())
                && p.bad_files.as_ref().is_none_or(|b| b.bad == 0)
        })
    }

    /// Whether every phase is valid.
    pub fn valid(&self) -> bool {
        self.phases.iter().all(Io500Phase::valid)
    }

    /// The phase named `name`.
    pub fn phase(&self, name: &str) -> Option<&Io500Phase> {
        self.phases.iter().find(|p| p.name == name)
    }
}

/// A phase shorter than this is too short to time: its rate is the clock's resolution and
/// a scheduler's whim (md-stat of a few hundred files can take 0 s on a tiny run).
const TOO_SHORT: f64 = 0.01;

/// Why a phase is invalid, from its numbers: a phase too short to time, a verification that
/// failed, a stonewall that never stopped a rank, a write phase that ran shorter than its
/// stonewall.
pub fn invalid_reasons(phase: &Io500Phase) -> Vec<String> {
    let mut why = Vec::new();
    if let Some(v) = &phase.verified_in_place
        && !v.ok()
    {
        why.push(format!(
            "a read failed verification: {} of {} block(s) differ, first bad byte {}",
            v.bad_blocks,
            v.blocks,
            v.first_bad_offset
                .map_or_else(|| "?".into(), |o| o.to_string())
        ));
    }
    if let Some(b) = &phase.bad_files
        && b.bad > 0
    {
        why.push(format!(
            "{} of {} file(s) did not hold what was written{}",
            b.bad,
            b.checked,
            b.first
                .as_deref()
                .map(|f| format!(" (first: {f})"))
                .unwrap_or_default()
        ));
    }
    if phase.seconds < TOO_SHORT {
        why.push(format!(
            "it lasted {}, too short for its rate to mean anything (under {})",
            crate::units::format_seconds(phase.seconds),
            crate::units::format_seconds(TOO_SHORT)
        ));
    }
    if let Some(s) = &phase.stonewall {
        if !s.bound() {
            why.push(format!(
                "the stonewall did not bind (every rank reached its cap of {} first)",
                s.cap
            ));
        }
        if phase.seconds < s.seconds {
            why.push(format!(
                "it ran {:.3} s, shorter than its stonewall ({} s)",
                phase.seconds, s.seconds
            ));
        }
    }
    why
}
