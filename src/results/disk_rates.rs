//! The result of `disk --rate`: one row in an open loop at each rate asked (response time
//! beside service time, the rate achieved, the backlog), the closed-loop peak the percents
//! are of, the knee, and the highest rate under a latency target.

use crate::measure::percentile::Target as LatencyTarget;
use crate::options::disk::Rate;
use crate::results::disk::{DiskRow, FileHeader, OpenFigures};
use crate::results::disk_curve::pick;
use crate::warning::Warning;
use crate::workload::arrivals::Arrivals;
use crate::workload::panel::RowSpec;
use serde::{Deserialize, Serialize};

/// How far above its light-load value the response p99 may rise before the knee: twice.
pub const KNEE_RISE: f64 = 2.0;

/// One rate run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "SavedStep")]
pub struct RateStep {
    /// The rate as asked (`Iops` or `Percent` of the peak).
    pub asked: Rate,
    /// The run: its service times in `latency_us`, its open-loop figures in `open`.
    pub row: DiskRow,
}

/// A step as a document holds it, before it is checked: a step is an open-loop run, so its
/// row has its open-loop figures and a rate above 0 (a crafted document without them would
/// read as a rate held).
#[derive(Deserialize)]
struct SavedStep {
    asked: Rate,
    row: DiskRow,
}

impl TryFrom<SavedStep> for RateStep {
    type Error = String;

    fn try_from(s: SavedStep) -> Result<Self, String> {
        match &s.row.open {
            None => Err("a rate's step without its open-loop figures (`open`)".into()),
            Some(o) if o.asked_iops.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) => {
                Err("a rate's step that asked no I/Os (`asked_iops` 0)".into())
            }
            Some(_) => Ok(Self {
                asked: s.asked,
                row: s.row,
            }),
        }
    }
}

impl RateStep {
    /// The open-loop figures (every step has them).
    pub fn open(&self) -> Option<&OpenFigures> {
        self.row.open.as_ref()
    }

    /// I/Os per second asked.
    pub fn asked_iops(&self) -> f64 {
        self.open().map_or(0.0, |o| o.asked_iops)
    }

    /// Whether the step held its rate and `target` (the response percentile at or under
    /// its limit).
    pub fn holds(&self, target: LatencyTarget) -> bool {
        self.open()
            .is_some_and(|o| o.held() && pick(&o.response_us, target.percentile) <= target.limit_us)
    }
}

/// The search for the highest rate whose response percentile stays under a target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateSearch {
    /// The target.
    pub target: LatencyTarget,
    /// The runs the search made between the steps, in the order made.
    pub steps: Vec<RateStep>,
    /// The highest rate that held the target (of the steps and the search's runs), I/Os per
    /// second; `None`: not even the lowest.
    pub holds_up_to: Option<f64>,
    /// The lowest rate above it that did not, I/Os per second; `None`: every rate asked held.
    pub fails_at: Option<f64>,
}

/// The result of `disk --rate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatesReport {
    /// The file measured, its size, device and seed, and the seconds each rate ran for.
    #[serde(flatten)]
    pub header: FileHeader,
    /// Seconds each run spent before its figures started (`--ramp`).
    #[serde(default)]
    pub ramp_seconds: f64,
    /// Seconds the fill of the scratch file took.
    pub fill_seconds: Option<f64>,
    /// The row (its depth: what each thread may keep in flight).
    pub spec: RowSpec,
    /// How arrivals were spaced.
    pub arrivals: Arrivals,
    /// The closed-loop run of the same row at its full depth that the percents are of (run
    /// when a rate is a percent or a target is given).
    pub peak: Option<DiskRow>,
    /// The rates asked, in the order given.
    pub steps: Vec<RateStep>,
    /// The search under the latency target, when asked.
    pub search: Option<RateSearch>,
    /// Whether everything asked ran.
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
}

impl RatesReport {
    /// The closed-loop peak, I/Os per second.
    pub fn peak_iops(&self) -> Option<f64> {
        self.peak.as_ref().map(|p| p.iops)
    }

    /// Every rate run (the steps and the search's), by rate asked.
    pub fn all_steps(&self) -> Vec<&RateStep> {
        let mut all: Vec<&RateStep> = self
            .steps
            .iter()
            .chain(self.search.iter().flat_map(|s| s.steps.iter()))
            .collect();
        all.sort_by(|a, b| a.asked_iops().total_cmp(&b.asked_iops()));
        all
    }

    /// The knee: the highest rate (of all runs, ascending) before the first whose response
    /// p99 is more than [`KNEE_RISE`] times the lightest rate's or that did not hold its
    /// rate; with the first such run. `None` with fewer than two runs or no such run.
    pub fn knee(&self) -> Option<(&RateStep, &RateStep)> {
        let all = self.all_steps();
        let base = all.first()?.open()?.response_us.p99;
        let bad = all.iter().position(|s| {
            s.open()
                .is_none_or(|o| !o.held() || o.response_us.p99 > KNEE_RISE * base)
        })?;
        (bad > 0).then(|| (all[bad - 1], all[bad]))
    }

    /// Whether every byte checked was in place.
    pub fn ok(&self) -> bool {
        self.peak
            .iter()
            .chain(self.all_steps().into_iter().map(|s| &s.row))
            .all(|r| {
                r.verify
                    .as_ref()
                    .is_none_or(crate::workload::verify::InPlace::ok)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::disk::Latency;
    use crate::workload::Op;
    use crate::workload::arrivals::Arrivals;

    /// A step at `iops` asked, `achieved`, response p99 `p99`.
    pub fn step(iops: f64, achieved: f64, p99: f64) -> RateStep {
        let mut row = DiskRow::made_up(Op::Read, 128, achieved, p99 / 4.0, p99 / 2.0);
        row.open = Some(OpenFigures {
            asked_iops: iops,
            arrivals: Arrivals::Uniform,
            achieved_iops: achieved,
            cap: 128,
            most_in_flight: 4,
            response_us: Latency {
                p50: p99 / 3.0,
                p99,
                ..Latency::default()
            },
            lag_us: Latency::default(),
            issued: (achieved * 2.0) as u64,
            unissued: 0,
            capped_seconds: 0.0,
            backlog: Vec::new(),
            backlog_every_seconds: 0.02,
            backlog_change_per_second: 0.0,
        });
        RateStep {
            asked: Rate::Iops(iops),
            row,
        }
    }

    fn report(steps: Vec<RateStep>) -> RatesReport {
        RatesReport {
            header: crate::results::disk::FileHeader {
                file: "f".into(),
                scratch: true,
                kept: false,
                file_bytes: 1 << 30,
                device_name: None,
                seed: Some(1),
                runtime_seconds: 2.0,
            },
            ramp_seconds: 0.0,
            fill_seconds: None,
            spec: steps[0].row.spec,
            arrivals: Arrivals::Uniform,
            peak: None,
            steps,
            search: None,
            complete: true,
            warnings: Vec::new(),
        }
    }

    #[test]
    fn the_knee_is_the_last_rate_before_the_p99_doubles_or_the_rate_is_not_held() {
        let r = report(vec![
            step(1000.0, 1000.0, 100.0),
            step(2000.0, 2000.0, 150.0),
            step(3000.0, 3000.0, 250.0),
        ]);
        let (before, after) = r.knee().expect("a knee");
        assert_eq!((before.asked_iops(), after.asked_iops()), (2000.0, 3000.0));
        // Not held: the knee even though the p99 barely moved.
        let r = report(vec![
            step(1000.0, 1000.0, 100.0),
            step(2000.0, 1500.0, 120.0),
        ]);
        assert_eq!(r.knee().map(|k| k.1.asked_iops()), Some(2000.0));
        let r = report(vec![
            step(1000.0, 1000.0, 100.0),
            step(2000.0, 2000.0, 190.0),
        ]);
        assert!(
            r.knee().is_none(),
            "under twice the light-load p99 all along"
        );
    }

    #[test]
    fn a_step_holds_a_target_only_when_it_held_its_rate_too() {
        let t = LatencyTarget {
            limit_us: 200.0,
            percentile: crate::measure::percentile::Percentile::P99,
        };
        assert!(step(1000.0, 1000.0, 150.0).holds(t));
        assert!(!step(1000.0, 1000.0, 250.0).holds(t));
        assert!(!step(1000.0, 900.0, 150.0).holds(t), "90% of the rate");
    }
}
