//! The result of `study`, as saved in `study.json` and read back by `ioscope report`: how
//! each part ended, the write and verified read, and each part's own typed result. Plain
//! serde types; the study's orchestration is `cmd::study`, its parts `cmd::study::parts`.

use crate::engine::Moved;
use crate::measure::cache::CacheProof;
use crate::measure::timer::Elapsed;
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::study::{Level, Part};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub mod answers;
mod results;
pub use results::{Results, Stored};

/// What the parts measure at one level.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Budget {
    /// Largest scratch file (also bounded by RAM / 8 and free space).
    pub file_cap: u64,
    /// Block sizes of the sweeps.
    pub sweep_blocks: Vec<u64>,
    /// Timed runs per sweep point.
    pub repeat: usize,
    /// Calls per sweep run at most (small blocks read a prefix).
    pub max_calls: u64,
    /// Bytes per run of the write sweep.
    pub write_size: u64,
    /// Calibration window, seconds.
    pub calibrate_window: (f64, f64),
    /// The largest the calibration may grow the scratch file to.
    pub calibrate_cap: Option<u64>,
    /// Calls per system-call measurement.
    pub syscall_sizes: Vec<u64>,
    /// Runs per contender in the comparison.
    pub compare_repeat: usize,
    /// File size of the patterns tests.
    pub patterns_size: u64,
    /// Runs per pattern test.
    pub patterns_runs: usize,
    /// Size of the large transfer file.
    pub transfer_large: u64,
    /// Transfers per method pair.
    pub transfer_repeat: usize,
    /// Seconds each row of the disk panel runs for (0 in studies that predate it).
    #[serde(default)]
    pub disk_runtime: f64,
}

/// How a part ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "outcome")]
pub enum Outcome {
    /// Measured in full.
    Done,
    /// Interrupted after some of it was measured (kept, marked partial).
    Partial,
    /// Not run, and why.
    Skipped {
        /// The reason, for the reader.
        reason: String,
    },
    /// It failed; the study went on.
    Failed {
        /// The error.
        error: String,
    },
}

/// One part as it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Step {
    /// Which part.
    pub part: Part,
    /// Wall seconds it took.
    pub seconds: f64,
    /// Seconds the level's estimate gave it.
    pub estimated_seconds: f64,
    /// How it ended.
    #[serde(flatten)]
    pub outcome: Outcome,
}

/// A study that took clearly longer than its estimate ([`crate::measure::verdict::overran`]):
/// the seconds, and the parts that did, the largest overrun first.
#[derive(Debug, Clone, PartialEq)]
pub struct Overrun {
    /// Wall seconds the study took.
    pub seconds: f64,
    /// Seconds its parts were estimated at together.
    pub estimated: f64,
    /// The parts that took clearly longer: the part, its seconds and its estimate.
    pub parts: Vec<(Part, f64, f64)>,
}

/// The write or the verified read of the scratch file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StudyRow {
    /// Write or read.
    pub op: Op,
    /// Bytes per call.
    pub block_size: u64,
    /// Bytes, calls and checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed.
    pub xor_hex: String,
    /// Whether the checksum equals that of the bytes written.
    pub verified: bool,
    /// Seconds (for the write: including fsync).
    pub seconds: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Calls per second.
    pub calls_per_second: f64,
    /// Seconds of the fsync that ends the write.
    pub fsync_seconds: Option<f64>,
    /// Wall and CPU time.
    pub elapsed: Elapsed,
    /// Residency before a read and the device bytes.
    pub cache: Option<CacheProof>,
    /// Whether the kernel's counts agreed.
    pub checks_ok: bool,
    /// The read: every byte checked in place against the generator after its timing
    /// (absent from results of versions that compared the XOR alone).
    #[serde(
        default,
        rename = "verified_in_place",
        skip_serializing_if = "Option::is_none"
    )]
    pub in_place: Option<crate::workload::verify::InPlace>,
}

/// The study's result: how each part ended, the write and the verified read, and the other
/// parts' results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StudyReport {
    /// The directory studied.
    pub dir: String,
    /// The medium's name (`study --label`, else derived from the file system and device:
    /// "ext4 on vda", "tmpfs"); absent from studies of versions before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The level.
    pub level: Level,
    /// What the parts measure at that level.
    pub budget: Budget,
    /// The level's estimate of the whole study, seconds.
    pub estimated_seconds: f64,
    /// Wall seconds the study took.
    pub seconds: f64,
    /// The block device under the directory (`None`: tmpfs, overlay, network...).
    pub device: Option<String>,
    /// Size of the scratch file.
    pub file_bytes: u64,
    /// Seed of its contents.
    pub seed: u64,
    /// Every part, in the order run.
    pub steps: Vec<Step>,
    /// The write and the verified read.
    pub write_read: Vec<StudyRow>,
    /// Every other part's own result, each under its part's field (`read_sweep`, `cache`,
    /// ...; `cmd::study::parts`), absent where it did not run.
    #[serde(flatten)]
    pub results: Results,
    /// Whether every read returned the bytes written.
    pub verified: bool,
    /// Whether the scratch file was kept (`--keep`), and where.
    pub kept_file: Option<String>,
    /// The kept file's size at the end (the calibration may have grown it).
    #[serde(default)]
    pub kept_bytes: Option<u64>,
    /// Whether every part ran (false after an interruption).
    pub complete: bool,
    /// What the reader should know (the parts' own warnings stay in their results).
    pub warnings: Vec<Warning>,
    /// The machine the study ran on, when read back from a saved document (its top-level
    /// `environment`, written there by the document's provenance, never by this field):
    /// the explanations name that machine's caches, not those of the one re-rendering it.
    #[serde(default, rename = "environment", skip_serializing)]
    pub measured_on: Option<crate::measure::env::Environment>,
    /// What could make the study's figures wrong: the scratch file's extents and
    /// compression, the device's write cache beside the write's fsync.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<crate::measure::caveat::Caveat>,
    /// One answer per question: the cold and the warm read of the scratch file, pooled over
    /// the parts that measured them ([`answers`]); written for the reader of the JSON
    /// document, never read back (a study read back recomputes them from its parts).
    #[serde(default, skip_deserializing, skip_serializing_if = "Vec::is_empty")]
    pub answers: Vec<answers::Answer>,
}

impl StudyReport {
    /// The machine it ran on: the saved one for a study read back, else this one (a study
    /// just run).
    pub fn environment(&self) -> crate::measure::env::Environment {
        self.measured_on
            .clone()
            .unwrap_or_else(|| crate::measure::env::Environment::collect(Path::new(&self.dir)))
    }

    /// Whether the read back returned the bytes written: `None` when it never ran.
    pub fn read_back_verified(&self) -> Option<bool> {
        self.read_back().map(|r| r.verified)
    }

    /// The read back of the scratch file, when it ran.
    pub fn read_back(&self) -> Option<&StudyRow> {
        self.write_read.iter().find(|r| r.op == Op::Read)
    }

    /// The medium's name, control characters escaped: the one stored, else the one its
    /// storage in `env` gives (studies saved before labels).
    pub fn medium(&self, env: &crate::measure::env::Environment) -> String {
        crate::measure::medium::label(self.label.as_deref(), &env.storage)
    }

    /// The result `part` kept, if it kept one of type `T` (each part's file reads its own
    /// through `Kept::kept`).
    pub fn result<T: 'static>(&self, part: Part) -> Option<&T> {
        self.results.get(part)
    }

    /// How far the study ran past its estimate, when clearly ([`Overrun`]); `None` for a
    /// study that kept to it. The estimate is that of the parts that ran (an interrupted
    /// study's too).
    pub fn overrun(&self) -> Option<Overrun> {
        use crate::measure::verdict::overran;
        let estimated: f64 = self.steps.iter().map(|s| s.estimated_seconds).sum();
        if !overran(self.seconds, estimated) {
            return None;
        }
        let mut parts: Vec<(Part, f64, f64)> = self
            .steps
            .iter()
            .filter(|s| overran(s.seconds, s.estimated_seconds))
            .map(|s| (s.part, s.seconds, s.estimated_seconds))
            .collect();
        parts.sort_by(|a, b| (b.1 - b.2).total_cmp(&(a.1 - a.2)));
        Some(Overrun {
            seconds: self.seconds,
            estimated,
            parts,
        })
    }

    /// The step record of `part`, if it ran or was skipped.
    pub fn step(&self, part: Part) -> Option<&Step> {
        self.steps.iter().find(|s| s.part == part)
    }
}

/// Whether two caveats say the same thing: equal, the same device's write cache with the
/// same verdict (judged beside two fsyncs of different sizes, it is one finding), or the
/// same device's link with the same verdict (set against each part's fastest figure).
pub(crate) fn same_finding(
    a: &crate::measure::caveat::Caveat,
    b: &crate::measure::caveat::Caveat,
) -> bool {
    use crate::measure::caveat::Evidence;
    match (&a.evidence, &b.evidence) {
        (Evidence::WriteCache(x), Evidence::WriteCache(y)) => {
            a.verdict == b.verdict && x.cache == y.cache
        }
        // One device's link, set against each part's fastest figure: one finding per verdict.
        (Evidence::Link(x), Evidence::Link(y)) => {
            a.verdict == b.verdict
                && a.reason == b.reason
                && x.device == y.device
                && x.link == y.link
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::caveat::{WriteCacheEvidence, write_cache};
    use crate::measure::writecache::WriteCache;

    fn beside_fsync(device: &str, seconds: f64, bytes: u64) -> crate::measure::caveat::Caveat {
        write_cache(WriteCacheEvidence {
            cache: WriteCache {
                device: Some(device.into()),
                mode: Some("write back".into()),
                fua: Some(false),
                rotational: Some(false),
            },
            fsync_seconds: Some(seconds),
            bytes: Some(bytes),
        })
    }

    #[test]
    fn one_devices_write_cache_beside_two_fsyncs_is_one_finding_and_two_devices_are_two() {
        let big = beside_fsync("vda", 0.12, 256 << 20);
        let small = beside_fsync("vda", 0.026, 64 << 20);
        assert_ne!(big, small, "the evidence differs");
        assert!(same_finding(&big, &small));
        assert!(!same_finding(&big, &beside_fsync("vdb", 0.12, 256 << 20)));
    }
}
