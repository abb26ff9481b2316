//! The result of `sweep`: the rate at each block size, its spread and the cost model.

use crate::harness::Sample;
use crate::measure::cache::CacheState;
use crate::measure::caveat::Caveat;
use crate::measure::latency::Latency;
use crate::measure::model::CostModel;
use crate::measure::stats::Summary;
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::verify::InPlace;
use serde::{Deserialize, Serialize};

/// Lowest and highest of some share over a point's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Span {
    /// Lowest.
    pub min: f64,
    /// Highest.
    pub max: f64,
}

/// One block size in one cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepPoint {
    /// Bytes per call.
    pub block_size: u64,
    /// Cache state asked for (reads only).
    pub cache: Option<CacheState>,
    /// Bytes per run.
    pub bytes: u64,
    /// Rate of the timed runs, bytes per second (writes: the final fsync included).
    pub rate: Summary,
    /// Writes: the same runs' rate up to their final fsync, bytes per second: the rate
    /// into the page cache (as `patterns` names it; absent for reads and in older results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without_fsync: Option<Summary>,
    /// Calls per second, median over runs.
    pub calls_per_second: f64,
    /// CPU time over wall time, median, percent.
    pub cpu_percent: f64,
    /// Share of the range resident before the runs, lowest and highest (reads).
    pub resident_share_before: Option<Span>,
    /// Bytes the device read during a run, median (all processes).
    pub device_read_bytes: Option<u64>,
    /// Whether every run agreed with /proc/self/io.
    pub checks_ok: bool,
    /// Whether no run's cache state was contradicted by what was measured.
    pub state_ok: bool,
    /// Reads of a file of known seed: every timed run's bytes checked in place after its
    /// timing, together.
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<InPlace>,
    /// The time of each data call over all timed runs together, in nanoseconds (when every
    /// run timed its calls).
    #[serde(
        default,
        rename = "latency_ns",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency: Option<Latency>,
    /// How the point's repeats ended when they ran until stable (absent with `--repeat`):
    /// the relative half-width of its median's 95% interval, and whether it came within
    /// the precision asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<crate::measure::converge::Settled>,
    /// Every timed run.
    pub runs: Vec<Sample>,
}

/// The data read by every timed run over the same bytes of the file (reads): each run reads
/// the same range, so each must give the same XOR; runs that disagree read a file that
/// changed during the sweep, a failed check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SameBytes {
    /// The bytes each of these runs read (from offset 0).
    pub bytes: u64,
    /// Timed runs over them, every point together.
    pub runs: usize,
    /// The XORs they read, each once, in the order first read: one where the data held.
    pub xors: Vec<String>,
}

impl SameBytes {
    /// Whether every run read the same data.
    pub fn ok(&self) -> bool {
        self.xors.len() <= 1
    }

    /// The runs of `points` grouped by the bytes they read, in the order first seen.
    pub fn of(points: &[SweepPoint]) -> Vec<Self> {
        let mut groups: Vec<Self> = Vec::new();
        for run in points.iter().flat_map(|p| &p.runs) {
            let xor = crate::checksum::hex(run.moved.xor);
            let i = match groups.iter().position(|g| g.bytes == run.moved.bytes) {
                Some(i) => i,
                None => {
                    groups.push(Self {
                        bytes: run.moved.bytes,
                        runs: 0,
                        xors: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let group = &mut groups[i];
            group.runs += 1;
            if !group.xors.contains(&xor) {
                group.xors.push(xor);
            }
        }
        groups
    }

    /// Whether a run of `point` read other data than the first run over its bytes.
    pub fn changed_in(groups: &[Self], point: &SweepPoint) -> bool {
        point.runs.iter().any(|run| {
            groups
                .iter()
                .find(|g| g.bytes == run.moved.bytes)
                .and_then(|g| g.xors.first())
                .is_some_and(|first| *first != crate::checksum::hex(run.moved.xor))
        })
    }
}

/// The model and what it says, for one cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Analysis {
    /// Cache state (reads only).
    pub cache: Option<CacheState>,
    /// The fitted cost model, when the data fit one.
    pub model: Option<CostModel>,
    /// Best median rate over the block sizes, bytes per second.
    pub best_bytes_per_second: f64,
    /// Smallest block size whose median rate is within 5% of the best.
    pub knee_block_size: u64,
}

/// The sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepReport {
    /// The file.
    pub file: String,
    /// Read or write.
    pub op: Op,
    /// The engine that moved the bytes.
    pub engine: String,
    /// Its threads.
    pub threads: usize,
    /// Its size (reads) or the bytes written per run.
    pub file_bytes: u64,
    /// Timed runs per point (the least, when they ran until stable).
    pub repeat: usize,
    /// The rule that ended each point's repeats when they ran until stable (absent with
    /// `--repeat`, and in results saved before it existed); `repeat` is then its minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<crate::measure::converge::Stopping>,
    /// Untimed runs per point.
    pub warmup: usize,
    /// Whether cold runs dropped the global page cache.
    pub drop_caches: bool,
    /// The block device behind the file, if any.
    pub device: Option<String>,
    /// Every point measured, by cache state then block size.
    pub points: Vec<SweepPoint>,
    /// One analysis per cache state.
    pub analyses: Vec<Analysis>,
    /// The seed of the data: given for reads (`--seed`), chosen for writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Whether every planned point was measured (false after an interruption).
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// Whether cold figures over unwritten extents or holes were allowed
    /// (`--allow-unwritten`): labelled, and no longer a failed check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_unwritten: bool,
    /// What could make these figures wrong: the file's extents and compression (reads),
    /// the device's write cache (writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<Caveat>,
    /// Reads: the XOR every timed run read, by the bytes read; more than one XOR for the
    /// same bytes is a failed check (the file changed during the sweep).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub same_bytes: Vec<SameBytes>,
}

impl SweepPoint {
    /// Writes: the rate without the final fsync, as saved, or from the runs of a result
    /// saved before it was (`None` for reads).
    pub fn without_fsync(&self) -> Option<Summary> {
        self.without_fsync.or_else(|| without_fsync_of(&self.runs))
    }
}

/// The rate of each run up to its final fsync (its time less the fsync's), over the runs;
/// `None` unless every run timed an fsync (writes).
pub fn without_fsync_of(runs: &[Sample]) -> Option<Summary> {
    let rates: Option<Vec<f64>> = runs
        .iter()
        .map(|r| {
            r.fsync_seconds
                .map(|f| crate::units::per_second(r.moved.bytes, (r.elapsed.seconds - f).max(0.0)))
        })
        .collect();
    crate::measure::stats::summarize(&rates?)
}

impl SweepReport {
    /// Whether every check held and every cache state was reached (or missed only over
    /// unwritten extents or holes, when allowed).
    pub fn ok(&self) -> bool {
        self.points.iter().all(|p| {
            p.checks_ok
                && (p.state_ok
                    || (self.allow_unwritten
                        && p.runs.iter().all(|r| r.ok_allowing_unwritten(true))))
                && p.in_place.is_none_or(|v| v.ok())
        }) && self.same_bytes.iter().all(SameBytes::ok)
    }
}
