//! The result of `disk --depth-curve` and `--latency-target`: the curve, the search, the
//! knee.

use crate::measure::knee::{Point, Shape, knee, shape};
use crate::measure::percentile::{Percentile, Target as LatencyTarget};
use crate::results::disk::{DiskRow, FileHeader, Latency};
use crate::warning::Warning;
use crate::workload::panel::RowSpec;
use serde::{Deserialize, Serialize};

/// One step of the search: the depth tried and what its percentile was.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The depth tried.
    pub depth: usize,
    /// The percentile the target watches, at that depth, microseconds.
    pub value_us: f64,
    /// Whether it was at or under the target.
    pub under: bool,
    /// Whether the curve had measured this depth already (no run of its own).
    pub from_curve: bool,
    /// The run (its IOPS, every percentile, the queue kept and seen).
    pub row: DiskRow,
}

/// The search for the deepest queue under a latency target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Search {
    /// The target.
    pub target: LatencyTarget,
    /// The depths it could choose among, ascending.
    pub depths: Vec<usize>,
    /// The steps, in the order tried.
    pub steps: Vec<Step>,
    /// The deepest depth found under the target (`None`: not even the shallowest).
    pub depth: Option<usize>,
    /// Its IOPS.
    pub iops: Option<f64>,
    /// Its percentile, microseconds.
    pub value_us: Option<f64>,
}

impl Search {
    /// The step that found the answer.
    pub fn found(&self) -> Option<&Step> {
        let depth = self.depth?;
        self.steps.iter().find(|s| s.depth == depth && s.under)
    }

    /// Depths of `curve` deeper than the answer whose percentile was under the target as
    /// well: the latency did not rise steadily with depth, and the bisection (which
    /// assumes it does) stopped short of them.
    pub fn missed(&self, curve: &[DiskRow]) -> Vec<usize> {
        let deepest = self.depth.unwrap_or(0);
        curve
            .iter()
            .filter(|r| {
                r.spec.depth > deepest
                    && pick(&r.latency_us, self.target.percentile) <= self.target.limit_us
            })
            .map(|r| r.spec.depth)
            .collect()
    }
}

/// The value of percentile `p` in `l`, microseconds.
pub fn pick(l: &Latency, p: Percentile) -> f64 {
    match p {
        Percentile::P50 => l.p50,
        Percentile::P90 => l.p90,
        Percentile::P99 => l.p99,
        Percentile::P99_9 => l.p99_9,
        Percentile::P99_99 => l.p99_99,
        Percentile::Max => l.max,
    }
}
/// The result of `disk --depth-curve` / `--latency-target`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveReport {
    /// The file measured, its size, device and seed, and the seconds each depth ran for.
    #[serde(flatten)]
    pub header: FileHeader,
    /// Seconds the fill of the scratch file took.
    pub fill_seconds: Option<f64>,
    /// The row whose depth varies (its depth: the first asked).
    pub spec: RowSpec,
    /// The curve: one run per depth, ascending (empty when only the search ran).
    pub points: Vec<DiskRow>,
    /// The depth of the curve's knee ([`crate::measure::knee::knee`]), if it has one.
    pub knee_depth: Option<usize>,
    /// The search for the deepest queue under the latency target, when asked.
    pub search: Option<Search>,
    /// Whether everything asked ran.
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
}

impl CurveReport {
    /// The curve's points as the knee sees them.
    pub fn knee_points(&self) -> Vec<Point> {
        curve_points(&self.points)
    }

    /// What the curve's points say about a knee, by today's rule (a file written by an
    /// older version is judged again, whatever its `knee_depth`).
    pub fn knee_shape(&self) -> Shape {
        shape(&self.knee_points())
    }

    /// The depth of the knee by [`Self::knee_shape`], if there is one.
    pub fn knee(&self) -> Option<usize> {
        match self.knee_shape() {
            Shape::Knee(k) => self.points.get(k).map(|p| p.spec.depth),
            _ => None,
        }
    }

    /// Whether every byte checked was in place.
    pub fn ok(&self) -> bool {
        self.points
            .iter()
            .chain(
                self.search
                    .iter()
                    .flat_map(|s| s.steps.iter().map(|s| &s.row)),
            )
            .all(|r| {
                r.verify
                    .as_ref()
                    .is_none_or(crate::workload::verify::InPlace::ok)
            })
    }
}

/// Runs' depth, IOPS (median and range of the repeats) and p99, for [`knee`].
pub fn curve_points(rows: &[DiskRow]) -> Vec<Point> {
    rows.iter()
        .map(|r| {
            let f = r.iops_figure();
            Point {
                depth: r.spec.depth,
                iops: f.median,
                p99: r.latency_us.p99,
                iops_min: f.min,
                iops_max: f.max,
                runs: f.n,
            }
        })
        .collect()
}

/// The depth of the knee of `rows` (depths ascending).
pub fn knee_of(rows: &[DiskRow]) -> Option<usize> {
    knee(&curve_points(rows)).map(|k| rows[k].spec.depth)
}
