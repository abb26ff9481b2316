//! The figures a baseline compares, of every result that has them: a stable human key
//! ("read warm 64 KiB", "SEQ1M Q8T1 read"), the unit, whether higher is better, and the value
//! of every run (not only the median), so the comparison can measure the noise itself. A
//! study's figures are its parts', prefixed by the part.

use super::cache::CacheReport;
use super::compare::CompareReport;
use super::disk::DiskReport;
use super::disk_curve::CurveReport;
use super::disk_fsync::FsyncReport;
use super::fast::FastReport;
use super::run::RunReport;
use super::study::{Stored, StudyReport};
use super::sweep::SweepReport;
use crate::units::format_size;
use serde::{Deserialize, Serialize};

/// One figure and every run of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// What it is, stable across runs of the same command: "read warm 64 KiB".
    pub key: String,
    /// Its unit, as JSON names it (`bytes_per_second`, `seconds`).
    pub unit: String,
    /// Whether a higher value is better (a rate); false for a time.
    pub higher_is_better: bool,
    /// The value of every run, in the order measured.
    pub runs: Vec<f64>,
    /// How many of the runs each process gave, in order, when several measured it
    /// (`--processes`); empty: one process gave them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<usize>,
    /// How many of the runs each moment gave, in order, when a baseline was measured at
    /// several (`--add-to-baseline`); empty: one moment gave them all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moments: Vec<usize>,
}

/// The unit of rates.
pub const BYTES_PER_SECOND: &str = "bytes_per_second";
/// The unit of I/O operations per second, as JSON names it.
pub const IOPS: &str = "iops";
/// The unit of write + fdatasync pairs per second, as JSON names it.
pub const SYNCS_PER_SECOND: &str = "syncs_per_second";
/// The unit of times.
pub const SECONDS: &str = "seconds";

impl Figure {
    /// A rate (bytes per second, higher is better).
    pub fn rate(key: impl Into<String>, runs: Vec<f64>) -> Self {
        Self {
            key: key.into(),
            unit: BYTES_PER_SECOND.to_string(),
            higher_is_better: true,
            runs,
            processes: Vec::new(),
            moments: Vec::new(),
        }
    }

    /// A count per second of `unit` (higher is better).
    pub fn per_second(key: impl Into<String>, unit: &str, runs: Vec<f64>) -> Self {
        Self {
            key: key.into(),
            unit: unit.to_string(),
            higher_is_better: true,
            runs,
            processes: Vec::new(),
            moments: Vec::new(),
        }
    }

    /// A time in seconds (lower is better).
    pub fn time(key: impl Into<String>, runs: Vec<f64>) -> Self {
        Self {
            key: key.into(),
            unit: SECONDS.to_string(),
            higher_is_better: false,
            runs,
            processes: Vec::new(),
            moments: Vec::new(),
        }
    }
}

/// A result whose figures a baseline can keep and compare.
pub trait Figures {
    /// Every figure, with every run; empty when the result has none to compare.
    fn figures(&self) -> Vec<Figure> {
        Vec::new()
    }
}

/// The rates of a single run or of its repeats.
fn repeated(one: f64, repeats: &[f64]) -> Vec<f64> {
    if repeats.is_empty() {
        vec![one]
    } else {
        repeats.to_vec()
    }
}

impl Figures for RunReport {
    fn figures(&self) -> Vec<Figure> {
        let key = format!("{} {}", self.op.name(), format_size(self.block_size));
        vec![Figure::rate(
            key,
            repeated(self.bytes_per_second, &self.repeats),
        )]
    }
}

impl Figures for FastReport {
    fn figures(&self) -> Vec<Figure> {
        vec![Figure::rate(
            "read",
            repeated(self.bytes_per_second, &self.repeats),
        )]
    }
}

impl Figures for SweepReport {
    fn figures(&self) -> Vec<Figure> {
        self.points
            .iter()
            .map(|p| {
                let cache = p
                    .cache
                    .map(|c| format!(" {}", c.name()))
                    .unwrap_or_default();
                let key = format!("{}{cache} {}", self.op.name(), format_size(p.block_size));
                let runs = if p.runs.is_empty() {
                    vec![p.rate.median]
                } else {
                    p.runs.iter().map(|s| s.bytes_per_second()).collect()
                };
                Figure::rate(key, runs)
            })
            .collect()
    }
}

impl Figures for CacheReport {
    fn figures(&self) -> Vec<Figure> {
        // Each cycle's first cold read and cold again are two runs of one figure; a row of
        // one cycle (or saved before cycles) gives its three reads.
        self.rows
            .iter()
            .flat_map(|r| {
                let size = format_size(r.block_size);
                let (cold, warm): (Vec<f64>, Vec<f64>) = if r.cycles.is_empty() {
                    (
                        vec![r.cold.bytes_per_second(), r.cold_again.bytes_per_second()],
                        vec![r.warm.bytes_per_second()],
                    )
                } else {
                    (
                        r.cycles
                            .iter()
                            .flat_map(|c| [c.cold, c.cold_again])
                            .collect(),
                        r.cycles.iter().map(|c| c.warm).collect(),
                    )
                };
                [
                    Figure::rate(format!("read cold {size}"), cold),
                    Figure::rate(format!("read warm {size}"), warm),
                ]
            })
            .collect()
    }
}

impl Figures for CompareReport {
    fn figures(&self) -> Vec<Figure> {
        self.rows
            .iter()
            .filter(|r| !r.runs.is_empty())
            .map(|r| {
                Figure::rate(
                    format!("{} {}", r.contender, r.cache.name()),
                    r.runs.iter().map(|x| x.bytes_per_second).collect(),
                )
            })
            .collect()
    }
}

impl Figures for DiskReport {
    fn figures(&self) -> Vec<Figure> {
        self.rows
            .iter()
            .filter(|r| r.measured())
            .map(|r| {
                let runs = if r.runs.is_empty() {
                    vec![r.bytes_per_second]
                } else {
                    r.runs.iter().map(|x| x.bytes_per_second).collect()
                };
                Figure::rate(r.label(), runs)
            })
            .collect()
    }
}

impl Figures for CurveReport {
    /// Each depth's IOPS, with every run of it (the search's steps run once and are not
    /// figures: the depth it finds is an answer, not a measurement to compare).
    fn figures(&self) -> Vec<Figure> {
        self.points
            .iter()
            .filter(|r| r.measured())
            .map(|r| {
                let runs = if r.runs.is_empty() {
                    vec![r.iops]
                } else {
                    r.runs.iter().map(|x| x.iops).collect()
                };
                Figure::per_second(format!("{} IOPS", r.label()), IOPS, runs)
            })
            .collect()
    }
}

impl Figures for super::disk_rates::RatesReport {
    /// Each rate's response p99 (a time, lower is better): the figure an open loop is for;
    /// the rate itself is what was asked, not a measurement to compare.
    fn figures(&self) -> Vec<Figure> {
        self.all_steps()
            .into_iter()
            .filter_map(|s| {
                let o = s.open()?;
                Some(Figure::time(
                    format!(
                        "{} at {} response p99",
                        s.row.label(),
                        crate::units::format_rate_iops(o.asked_iops)
                    ),
                    vec![o.response_us.p99 / 1e6],
                ))
            })
            .collect()
    }
}

impl Figures for FsyncReport {
    /// fdatasync's watched percentile (a time, lower is better) and the write + fdatasync
    /// pairs per second, of the one run the preset makes.
    fn figures(&self) -> Vec<Figure> {
        if self.writes == 0 {
            return Vec::new();
        }
        let p = self.target.percentile;
        vec![
            Figure::time(
                format!("fdatasync {}", p.name()),
                vec![super::disk_curve::pick(&self.fdatasync_latency_us, p) / 1e6],
            ),
            Figure::per_second(
                "write + fdatasync pairs",
                SYNCS_PER_SECOND,
                vec![self.syncs_per_second],
            ),
        ]
    }
}

impl Figures for super::disk_sync_methods::SyncMethodsReport {
    /// Each row that ran: its operations per second, its slices as the runs.
    fn figures(&self) -> Vec<Figure> {
        self.rows
            .iter()
            .filter(|r| r.ran())
            .map(|r| {
                let runs = if r.slices_per_second.is_empty() {
                    vec![r.ops_per_second]
                } else {
                    r.slices_per_second.clone()
                };
                Figure::per_second(
                    format!(
                        "{} {}x{} ops",
                        r.method.name(),
                        r.writes_per_op,
                        crate::workload::panel::short_size(r.block_bytes)
                    ),
                    SYNCS_PER_SECOND,
                    runs,
                )
            })
            .collect()
    }
}

// Results no baseline compares.
impl Figures for super::calibrate::CalibrateReport {}
impl Figures for super::syscalls::SyscallsReport {}
impl Figures for super::patterns::PatternsReport {}

/// The figures of a part's result, of whichever type it is.
fn stored_figures(r: &dyn Stored) -> Vec<Figure> {
    let any = r.as_any();
    if let Some(x) = any.downcast_ref::<SweepReport>() {
        x.figures()
    } else if let Some(x) = any.downcast_ref::<CacheReport>() {
        x.figures()
    } else if let Some(x) = any.downcast_ref::<CompareReport>() {
        x.figures()
    } else if let Some(x) = any.downcast_ref::<DiskReport>() {
        x.figures()
    } else if let Some(x) = any.downcast_ref::<RunReport>() {
        x.figures()
    } else if let Some(x) = any.downcast_ref::<FastReport>() {
        x.figures()
    } else {
        Vec::new()
    }
}

impl Figures for StudyReport {
    fn figures(&self) -> Vec<Figure> {
        let mut out: Vec<Figure> = self
            .write_read
            .iter()
            .map(|row| {
                Figure::rate(
                    format!(
                        "write-read: {} {}",
                        row.op.name(),
                        format_size(row.block_size)
                    ),
                    vec![row.bytes_per_second],
                )
            })
            .collect();
        for (part, result) in self.results.iter() {
            out.extend(stored_figures(result).into_iter().map(|mut f| {
                f.key = format!("{}: {}", part.name(), f.key);
                f
            }));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_run_is_one_value_and_repeats_are_every_value() {
        assert_eq!(repeated(5.0, &[]), vec![5.0]);
        assert_eq!(repeated(5.0, &[4.0, 5.0, 6.0]), vec![4.0, 5.0, 6.0]);
    }
}
