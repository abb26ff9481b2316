//! The result of `cache`: cold, warm and cold again at each block size.

use crate::harness::Sample;
use crate::measure::caveat::Caveat;
use crate::warning::Warning;
use serde::{Deserialize, Serialize};

/// One block size: the three runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheRow {
    /// Bytes per call.
    pub block_size: u64,
    /// The first cold read.
    pub cold: Sample,
    /// The warm read right after it.
    pub warm: Sample,
    /// Cold again, after another eviction.
    pub cold_again: Sample,
}

impl CacheRow {
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
