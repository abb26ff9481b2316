//! Warnings as data: what went wrong or deserves attention, with the figures. Their words
//! (naming the cause and the fix) are written in `report/` only.

use crate::measure::cache::CacheProof;
use crate::measure::checks::Check;
use serde::{Deserialize, Serialize};

/// Something the reader of a result should know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// What ioscope claims and what the kernel counted disagree.
    KernelMismatch {
        /// Where in the result (e.g. `read at 4 KiB, cold`), if not the only run.
        at: Option<String>,
        /// The comparison that failed.
        check: Check,
    },
    /// A run did not start in the cache state it asked for.
    CacheState {
        /// Where in the result.
        at: Option<String>,
        /// The proof that failed.
        proof: CacheProof,
        /// The user kept figures over unwritten extents or holes (`--allow-unwritten`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allowed: bool,
    },
    /// The engine's calls are not the kind /proc/self/io counts, so they are not checked.
    NotCounted {
        /// The engine.
        engine: String,
    },
    /// A calibrated size larger than RAM, read warm: partly from the device.
    WarmLargerThanRam {
        /// The size found.
        size: u64,
        /// RAM.
        ram: u64,
    },
    /// A calibrated size larger than RAM, read cold: right, but never readable warm.
    ColdLargerThanRam {
        /// The size found.
        size: u64,
        /// RAM.
        ram: u64,
    },
    /// A size calibrated warm: a cold read of it may take longer.
    CalibratedWarm,
    /// A size calibrated cold that fits in RAM: it must be evicted before every cold run.
    ColdFitsInRam {
        /// The size found.
        size: u64,
        /// RAM.
        ram: u64,
    },
    /// The work was interrupted; the result holds what was measured before.
    Partial,
    /// The repeats of a measurement disagree beyond the spread rule
    /// ([`crate::measure::verdict::SCATTERED`]): its median is uncertain by more than the
    /// differences the sentences compare. The worst one is named, and how many others.
    Scattered {
        /// Which measurement (e.g. `warm at 4k`).
        at: String,
        /// Its slowest repeat, bytes per second.
        min: f64,
        /// Its median, bytes per second.
        median: f64,
        /// Its fastest repeat, bytes per second.
        max: f64,
        /// How many repeats.
        runs: usize,
        /// How many other measurements of the result scatter as well.
        others: usize,
    },
    /// Entries of the directories given to send that are neither regular files nor
    /// directories (symlinks, FIFOs, sockets, devices): left out.
    LeftOut {
        /// How many.
        count: usize,
        /// The first, as found.
        first: String,
    },
    /// A file grew while it was sent: the receiver has the bytes it held when sending
    /// began, as its header announced.
    Grew {
        /// The file, by the name it was sent under.
        file: String,
    },
    /// `disk`'s read rows ran over holes or unwritten extents before any write row filled
    /// them: the file system made up zeros, the device read nothing.
    Holes {
        /// Bytes of holes and unwritten extents before the first row.
        bytes: u64,
        /// The file's size.
        of: u64,
        /// The read rows that measured them (`SEQ1M Q8T1 read`).
        rows: Vec<String>,
    },
}

/// One [`Warning::Scattered`] for the measurements whose repeats scatter beyond the rule:
/// the widest named, the rest counted. `None` when none does.
pub fn scattered<'a>(
    figures: impl IntoIterator<Item = (String, &'a crate::measure::stats::Summary)>,
) -> Option<Warning> {
    use crate::measure::verdict::{Figure, scattered};
    let wide: Vec<(String, &crate::measure::stats::Summary)> = figures
        .into_iter()
        .filter(|(_, s)| scattered(Figure::from(*s)))
        .collect();
    let (at, worst) = wide
        .iter()
        .max_by(|a, b| (a.1.max / a.1.min.max(1e-12)).total_cmp(&(b.1.max / b.1.min.max(1e-12))))?;
    Some(Warning::Scattered {
        at: at.clone(),
        min: worst.min,
        median: worst.median,
        max: worst.max,
        runs: worst.n,
        others: wide.len() - 1,
    })
}

/// The warnings a run's checks and cache proof give, `at` naming the run.
pub fn of_sample(sample: &crate::harness::Sample, at: Option<String>) -> Vec<Warning> {
    let mut out: Vec<Warning> = sample
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| Warning::KernelMismatch {
            at: at.clone(),
            check: c.clone(),
        })
        .collect();
    if let Some(proof) = sample.cache.filter(|p| !p.ok()) {
        out.push(Warning::CacheState {
            at,
            proof,
            allowed: false,
        });
    }
    out
}

/// Marks the cache-state warnings as kept by `--allow-unwritten` (`allow`): their text then
/// says the figure was kept as asked instead of suggesting the flag.
pub fn allowing_unwritten(warnings: &mut [Warning], allow: bool) {
    for w in warnings {
        if let Warning::CacheState { allowed, .. } = w {
            *allowed = allow;
        }
    }
}
