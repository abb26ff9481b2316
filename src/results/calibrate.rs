//! The result of `calibrate`: the size found and every probe on the way.

use crate::measure::cache::{CacheProof, CacheState};
use crate::warning::Warning;
use serde::{Deserialize, Serialize};

/// One timed read of a prefix of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Probe {
    /// Bytes read.
    pub bytes: u64,
    /// Wall seconds of the read.
    pub seconds: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// The cache state asked for, the residency before and the device bytes.
    pub cache: Option<CacheProof>,
    /// Whether the kernel's counts agreed with the read's.
    pub checks_ok: bool,
    /// The XOR of the bytes read, as printed (8 hex digits); `None` for an engine that
    /// moves no bytes, and in documents saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xor_hex: Option<String>,
}

/// The answer of `calibrate`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CalibrateReport {
    /// The file.
    pub file: String,
    /// The engine that read it.
    pub engine: String,
    /// Bytes per read call.
    pub block_size: u64,
    /// Cache state of the timed reads.
    pub cache: CacheState,
    /// Lower end of the window in seconds.
    pub min_seconds: f64,
    /// Upper end of the window in seconds.
    pub max_seconds: f64,
    /// The size found.
    pub bytes: u64,
    /// The size in blocks.
    pub block_count: u64,
    /// Seconds the read of that size took.
    pub seconds: f64,
    /// Its rate.
    pub bytes_per_second: f64,
    /// The XOR of the bytes that read read (the last probe's), as `run` prints it; `None`
    /// for an engine that moves no bytes, and in documents saved before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xor_hex: Option<String>,
    /// Every probe, the last being the answer.
    pub probes: Vec<Probe>,
    /// Size of the file before `--grow` extended it, if it did.
    pub grown_from: Option<u64>,
    /// Size of the file afterwards.
    pub file_bytes: u64,
    /// Seconds spent reading in all probes together.
    pub total_read_seconds: f64,
    /// RAM of the machine.
    pub memory_bytes: u64,
    /// What the reader should know about this size.
    pub warnings: Vec<Warning>,
}

impl CalibrateReport {
    /// Whether every probe started with its range evicted (under 1% cached before it).
    pub fn probes_started_evicted(&self) -> bool {
        all_started_evicted(&self.probes)
    }

    /// Whether the timed read agreed with the kernel and started in its cache state.
    pub fn ok(&self) -> bool {
        self.probes
            .last()
            .is_none_or(|p| p.checks_ok && p.cache.is_none_or(|c| c.ok()))
    }
}

/// Whether every probe's range was measured before it and held under 1% of its pages in
/// the page cache: the eviction held for every timed read.
pub fn all_started_evicted(probes: &[Probe]) -> bool {
    !probes.is_empty()
        && probes.iter().all(|p| {
            p.cache
                .and_then(|c| c.residency_before)
                .is_some_and(|r| r.fraction() < 0.01)
        })
}
