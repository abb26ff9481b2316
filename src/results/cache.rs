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

impl Cycle {
    /// The rate of the read named as in [`CacheRow::runs`] (`cold`, `warm`, `cold again`).
    pub fn get(&self, name: &str) -> f64 {
        match name {
            "cold" => self.cold,
            "warm" => self.warm,
            _ => self.cold_again,
        }
    }
}

impl CacheRow {
    /// How many cycles the row's figures are of.
    pub fn n(&self) -> usize {
        self.cycles.len().max(1)
    }

    /// The rate of the read named `name` over the cycles: the median with their range
    /// (one cycle: its value).
    pub fn rate(&self, name: &str) -> crate::measure::verdict::Figure {
        use crate::measure::verdict::Figure;
        let values: Vec<f64> = self.cycles.iter().map(|c| c.get(name)).collect();
        match crate::measure::stats::summarize(&values) {
            Some(s) => Figure::from(&s),
            None => {
                let one = self
                    .runs()
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, s)| s.bytes_per_second());
                Figure::one(one.unwrap_or(0.0))
            }
        }
    }

    /// The three runs in order, with their names.
    pub fn runs(&self) -> [(&'static str, &Sample); 3] {
        [
            ("cold", &self.cold),
            ("warm", &self.warm),
            ("cold again", &self.cold_again),
        ]
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
