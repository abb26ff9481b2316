//! The knee of a queue-depth curve: the first depth after which IOPS stops growing while
//! the latency keeps rising, defined once ([`shape`]) by the one rule
//! ([`super::verdict::relate`]: with one run per point, 10% apart is "apart"; with repeats,
//! the runs must not overlap as well). A curve whose IOPS falls clearly and then rises
//! clearly again before its candidate knee is too noisy for a knee.

use super::verdict::{Figure, Relation, SAME_WITHIN, relate};

/// One point of a queue-depth curve, as the knee sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// I/Os in flight asked (per thread).
    pub depth: usize,
    /// I/Os completed per second (the median of the point's runs).
    pub iops: f64,
    /// The latency percentile the knee watches (p99, the median of the runs), any unit.
    pub p99: f64,
    /// The fewest IOPS among the point's runs.
    pub iops_min: f64,
    /// The most IOPS among the point's runs.
    pub iops_max: f64,
    /// How many runs the point took.
    pub runs: usize,
}

impl Point {
    /// A point measured once.
    pub fn one(depth: usize, iops: f64, p99: f64) -> Self {
        Self {
            depth,
            iops,
            p99,
            iops_min: iops,
            iops_max: iops,
            runs: 1,
        }
    }

    /// Its IOPS as the one rule sees them.
    pub fn figure(&self) -> Figure {
        Figure {
            median: self.iops,
            min: self.iops_min,
            max: self.iops_max,
            n: self.runs,
        }
    }
}

/// What a curve says about a knee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The knee is at this index.
    Knee(usize),
    /// Up to the candidate knee, IOPS falls clearly from `high` to `low`, then rises
    /// clearly from `low` to `again` (indices, ascending): the curve is not monotone beyond
    /// the noise, so no knee is claimed.
    TooNoisy {
        /// The point before the fall.
        high: usize,
        /// The point the curve fell to.
        low: usize,
        /// The point it rose to again.
        again: usize,
    },
    /// No depth after which IOPS stops growing while the latency rises.
    None,
}

/// The first fall-then-rise among `points`, each clear by the one rule: `(high, low,
/// again)` with `low` clearly below `high` and `again` clearly above `low`.
fn fall_then_rise(points: &[Point]) -> Option<(usize, usize, usize)> {
    for again in 2..points.len() {
        for low in 1..again {
            let rises = matches!(
                relate(points[again].figure(), points[low].figure()),
                Relation::Above(_)
            );
            if !rises {
                continue;
            }
            let high = (0..low).find(|&h| {
                matches!(
                    relate(points[low].figure(), points[h].figure()),
                    Relation::Below(_)
                )
            });
            if let Some(high) = high {
                return Some((high, low, again));
            }
        }
    }
    None
}

/// The candidate knee of `points` (depths ascending): the first point `k`, not the last,
/// such that every deeper point `j`
///
/// - stays within `k`'s IOPS: not clearly above it by the one rule (with one run each,
///   under 10% more; with repeats, 10% more whose runs overlap `k`'s counts as within), so
///   one point beyond the noise ends the plateau and a fall counts as no growth, and
/// - has a p99 that did not clearly fall (`p99_j ≥ p99_k / 1.10`: within 10% is noise),
///
/// and the deepest point's p99 is above `k`'s by more than 10% (the latency kept rising).
fn candidate(points: &[Point]) -> Option<usize> {
    let last = points.last()?;
    (0..points.len().saturating_sub(1)).find(|&k| {
        let at = points[k];
        let later = &points[k + 1..];
        let within = later
            .iter()
            .all(|p| !matches!(relate(p.figure(), at.figure()), Relation::Above(_)));
        let not_falling = later.iter().all(|p| p.p99 * SAME_WITHIN >= at.p99);
        let rose = last.p99 > at.p99 * SAME_WITHIN;
        within && not_falling && rose
    })
}

/// What `points` (depths ascending) say about a knee: the [`candidate`] knee, unless the
/// curve up to it falls clearly and rises clearly again ([`Shape::TooNoisy`], which names
/// the points that disagree); [`Shape::None`] when IOPS still grows at some depth, when the
/// latency does not rise (depth changes nothing: one I/O in flight whatever was asked), or
/// with fewer than two points.
pub fn shape(points: &[Point]) -> Shape {
    let Some(k) = candidate(points) else {
        return Shape::None;
    };
    match fall_then_rise(&points[..=k]) {
        Some((high, low, again)) => Shape::TooNoisy { high, low, again },
        None => Shape::Knee(k),
    }
}

/// The index of the knee of `points`, if [`shape`] finds one.
pub fn knee(points: &[Point]) -> Option<usize> {
    match shape(points) {
        Shape::Knee(k) => Some(k),
        _ => None,
    }
}

/// Doublings of depth from `from` to `to` (1 for 8 → 16; 0.58 for 2 → 3).
fn doublings(from: usize, to: usize) -> f64 {
    (to.max(1) as f64 / from.max(1) as f64).log2()
}
/// IOPS growth per doubling of depth between two points (1.25: 25% more per doubling);
/// `None` where the depths are the same.
pub fn growth_per_doubling(a: Point, b: Point) -> Option<f64> {
    let d = doublings(a.depth, b.depth);
    (d > 0.0).then(|| (b.iops / a.iops.max(1e-12)).powf(1.0 / d))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(iops: &[f64], p99: &[f64]) -> Vec<Point> {
        iops.iter()
            .zip(p99)
            .enumerate()
            .map(|(i, (&iops, &p99))| Point::one(1 << i, iops, p99))
            .collect()
    }

    #[test]
    fn a_saturating_curve_has_its_knee_where_iops_flattens_and_p99_climbs() {
        let c = curve(
            &[10e3, 20e3, 40e3, 75e3, 80e3, 82e3, 81e3, 80e3],
            &[100.0, 100.0, 110.0, 120.0, 200.0, 400.0, 800.0, 1600.0],
        );
        assert_eq!(knee(&c).map(|k| c[k].depth), Some(8));
    }

    #[test]
    fn a_curve_still_growing_at_its_deepest_point_has_no_knee() {
        let c = curve(
            &[10e3, 20e3, 40e3, 80e3, 160e3, 300e3, 500e3, 800e3],
            &[100.0, 100.0, 105.0, 110.0, 120.0, 150.0, 200.0, 300.0],
        );
        assert_eq!(knee(&c), None);
    }

    #[test]
    fn a_flat_curve_whose_latency_does_not_rise_has_no_knee() {
        // Depth changed nothing (pread one at a time whatever was asked): no queue, no knee.
        let c = curve(&[50e3; 6], &[40.0, 41.0, 39.0, 40.0, 42.0, 40.0]);
        assert_eq!(knee(&c), None);
    }

    #[test]
    fn a_curve_that_falls_has_its_knee_at_its_peak() {
        let c = curve(
            &[10e3, 20e3, 40e3, 30e3, 25e3, 20e3],
            &[100.0, 110.0, 130.0, 300.0, 700.0, 1500.0],
        );
        assert_eq!(knee(&c).map(|k| c[k].depth), Some(4));
    }

    #[test]
    fn a_curve_that_falls_from_depth_one_has_its_knee_at_depth_one() {
        let c = curve(&[50e3, 45e3, 40e3], &[20.0, 45.0, 100.0]);
        assert_eq!(knee(&c), Some(0));
    }

    #[test]
    fn noise_within_ten_percent_neither_ends_nor_fakes_the_plateau() {
        // A dip at depth 2 that recovers is no knee; the bump 72k → 80k at 16 ends the
        // plateau that 8 seemed to start (11% above it); from 16 on, IOPS wanders
        // within 10% per doubling and p99 dips 7% at 32 before climbing.
        let c = curve(
            &[10e3, 18e3, 39e3, 72e3, 80e3, 76e3, 83e3, 79e3],
            &[100.0, 104.0, 98.0, 120.0, 150.0, 140.0, 300.0, 600.0],
        );
        assert_eq!(knee(&c).map(|k| c[k].depth), Some(16));
    }

    #[test]
    fn uneven_depths_are_judged_per_doubling() {
        // 40k → 42k at depth 6 is 5% more: within the knee's 10%. Growth per doubling
        // (0.58 doublings from 4 to 6) is 8.8%.
        let c = vec![
            Point::one(1, 10e3, 50.0),
            Point::one(4, 40e3, 60.0),
            Point::one(6, 42e3, 90.0),
        ];
        assert_eq!(knee(&c), Some(1));
        let g = growth_per_doubling(c[1], c[2]).unwrap();
        assert!((g - 1.0870).abs() < 1e-3, "{g}");
    }

    fn with_runs(depth: usize, iops: [f64; 3], p99: f64) -> Point {
        Point {
            depth,
            iops: iops[1],
            p99,
            iops_min: iops[0],
            iops_max: iops[2],
            runs: 3,
        }
    }

    #[test]
    fn a_fall_then_a_jump_before_the_candidate_is_too_noisy_for_a_knee() {
        // The curve: 46k → 37k → 128k → 117k. Depth 64 would pass for a knee
        // (117k is within 10% of 128k, p99 climbs), but 46k → 37k falls clearly and 37k →
        // 128k rises clearly: the curve is not monotone beyond the noise.
        let c: Vec<Point> = [
            (16, 46e3, 300.0),
            (32, 37e3, 700.0),
            (64, 128e3, 500.0),
            (128, 117e3, 1100.0),
        ]
        .iter()
        .map(|&(d, i, p)| Point::one(d, i, p))
        .collect();
        assert_eq!(
            shape(&c),
            Shape::TooNoisy {
                high: 0,
                low: 1,
                again: 2
            }
        );
        assert_eq!(knee(&c), None);
    }

    #[test]
    fn a_dip_within_ten_percent_before_the_knee_is_no_noise() {
        // 40k → 37k is 8% down: the same by the rule, so the rise after it is plain growth.
        let c = curve(
            &[20e3, 40e3, 37e3, 80e3, 82e3, 81e3],
            &[100.0, 100.0, 110.0, 120.0, 300.0, 900.0],
        );
        assert_eq!(shape(&c), Shape::Knee(3));
    }

    #[test]
    fn slow_growth_beyond_ten_percent_in_all_ends_the_plateau() {
        // 9% per doubling is under 10% each step (the old rule put the knee at depth 2), but
        // 4 steps make 41% over depth 2: its deeper points do not stay within its spread,
        // so the knee is at 16, the first point whose deeper ones do.
        let c = curve(
            &[10e3, 50e3, 54.5e3, 59.4e3, 64.8e3, 70.6e3],
            &[100.0, 100.0, 150.0, 250.0, 400.0, 800.0],
        );
        assert_eq!(knee(&c).map(|k| c[k].depth), Some(16));
    }

    #[test]
    fn overlapping_repeats_neither_fake_a_fall_nor_end_a_plateau() {
        // Medians 40k → 35k → 46k differ by more than 10%, but every point's runs overlap
        // its neighbours': no clear fall, no clear rise, so the plateau from depth 2 holds.
        let c = vec![
            with_runs(1, [10e3, 10e3, 10e3], 100.0),
            with_runs(2, [34e3, 40e3, 44e3], 110.0),
            with_runs(4, [30e3, 35e3, 41e3], 200.0),
            with_runs(8, [38e3, 46e3, 47e3], 400.0),
        ];
        assert_eq!(shape(&c), Shape::Knee(1));
    }

    #[test]
    fn repeats_that_stand_apart_make_a_fall_and_a_rise_clear() {
        let c = vec![
            with_runs(1, [45e3, 46e3, 47e3], 100.0),
            with_runs(2, [36e3, 37e3, 38e3], 200.0),
            with_runs(4, [120e3, 128e3, 130e3], 150.0),
            with_runs(8, [110e3, 117e3, 125e3], 400.0),
            with_runs(16, [115e3, 120e3, 126e3], 900.0),
        ];
        assert!(
            matches!(shape(&c), Shape::TooNoisy { low: 1, .. }),
            "{:?}",
            shape(&c)
        );
    }

    #[test]
    fn a_fall_and_a_recovery_after_the_knee_keep_the_knee() {
        let c = curve(
            &[10e3, 20e3, 40e3, 30e3, 39e3],
            &[100.0, 110.0, 130.0, 300.0, 700.0],
        );
        assert_eq!(shape(&c), Shape::Knee(2));
    }

    #[test]
    fn one_point_or_none_has_no_knee() {
        assert_eq!(knee(&[]), None);
        assert_eq!(knee(&curve(&[1e3], &[10.0])), None);
    }
}
