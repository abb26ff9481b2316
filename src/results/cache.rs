//! The result of `cache`: cold, warm and cold again at each block size.

use crate::harness::Sample;
use crate::measure::caveat::Caveat;
use crate::warning::Warning;
use serde::{Deserialize, Serialize};

/// One block size: the three runs (with repeats, each state's median run).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheRow {
    /// Bytes per call.
    pub block_size: u64,
    /// The first cold read (with repeats, the median run of the cold reads that began a
    /// cycle).
    pub cold: Sample,
    /// The warm read right after it.
    pub warm: Sample,
    /// Cold again, after another eviction.
    pub cold_again: Sample,
    /// Every cycle's rates, in order, when the row was repeated (empty: one cycle, as in
    /// results saved before repeats).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cycles: Vec<Cycle>,
    /// How the repeats ended when they ran until stable (absent with `--repeat`): the
    /// least settled of the three states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<crate::measure::converge::Settled>,
}

/// One cycle of a repeated row: the rates of its three reads, bytes per second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cycle {
    /// The cold read.
    pub cold: f64,
    /// The warm read after it.
    pub warm: f64,
    /// Cold again.
    pub cold_again: f64,
}

/// One of a cycle's three reads, in the order they run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Read {
    /// The first cold read.
    Cold,
    /// The warm read right after it.
    Warm,
    /// Cold again, after another eviction.
    ColdAgain,
}

impl Read {
    /// The three reads in the order they run.
    pub const ALL: [Read; 3] = [Read::Cold, Read::Warm, Read::ColdAgain];

    /// Its name in the text and the warnings: `cold`, `warm`, `cold again`.
    pub fn name(self) -> &'static str {
        match self {
            Read::Cold => "cold",
            Read::Warm => "warm",
            Read::ColdAgain => "cold again",
        }
    }
}

impl std::fmt::Display for Read {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Cycle {
    /// The rate of `read` in this cycle.
    pub fn get(&self, read: Read) -> f64 {
        match read {
            Read::Cold => self.cold,
            Read::Warm => self.warm,
            Read::ColdAgain => self.cold_again,
        }
    }
}

impl CacheRow {
    /// How many cycles the row's figures are of.
    pub fn n(&self) -> usize {
        self.cycles.len().max(1)
    }

    /// The rate of `read` over the cycles: the median with their range (one cycle: its
    /// run's).
    pub fn rate(&self, read: Read) -> crate::measure::verdict::Figure {
        use crate::measure::verdict::Figure;
        let values: Vec<f64> = self.cycles.iter().map(|c| c.get(read)).collect();
        match crate::measure::stats::summarize(&values) {
            Some(s) => Figure::from(&s),
            None => Figure::one(self.run(read).bytes_per_second()),
        }
    }

    /// The run kept for `read` (with repeats, its median run).
    pub fn run(&self, read: Read) -> &Sample {
        match read {
            Read::Cold => &self.cold,
            Read::Warm => &self.warm,
            Read::ColdAgain => &self.cold_again,
        }
    }

    /// The three runs in order, with their reads.
    pub fn runs(&self) -> [(Read, &Sample); 3] {
        Read::ALL.map(|read| (read, self.run(read)))
    }
}

/// The result of `cache`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheReport {
    /// The file.
    pub file: String,
    /// Its size.
    pub file_bytes: u64,
    /// The engine that read it.
    pub engine: String,
    /// Whether cold runs dropped every cache (root) instead of evicting the file.
    pub drop_caches: bool,
    /// The block device behind the file.
    pub device: Option<String>,
    /// One row per block size.
    pub rows: Vec<CacheRow>,
    /// Whether every block size was measured (false after Ctrl-C; documents saved before
    /// this field existed were complete).
    #[serde(default = "complete_by_default")]
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// Whether cold figures over unwritten extents or holes were allowed
    /// (`--allow-unwritten`): labelled, and no longer a failed check.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_unwritten: bool,
    /// What could make these figures wrong: the file's extents and compression.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<Caveat>,
}

fn complete_by_default() -> bool {
    true
}

impl CacheReport {
    /// Whether every check held and every cache state was reached (or missed only over
    /// unwritten extents or holes, when allowed).
    pub fn ok(&self) -> bool {
        self.rows.iter().all(|r| {
            r.runs()
                .iter()
                .all(|(_, s)| s.ok_allowing_unwritten(self.allow_unwritten))
        })
    }
}
