//! The knee of a queue-depth curve: the first depth after which IOPS stops growing while
//! the latency keeps rising, defined once ([`knee`]) with the one rule's threshold
//! ([`super::verdict::SAME_WITHIN`], 10%): growth below it is no growth, a rise above it is
//! a rise.

use super::verdict::SAME_WITHIN;

/// One point of a queue-depth curve, as the knee sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// I/Os in flight asked (per thread).
    pub depth: usize,
    /// I/Os completed per second.
    pub iops: f64,
    /// The latency percentile the knee watches (p99), any unit.
    pub p99: f64,
}

/// Doublings of depth from `from` to `to` (1 for 8 → 16; 0.58 for 2 → 3).
fn doublings(from: usize, to: usize) -> f64 {
    (to.max(1) as f64 / from.max(1) as f64).log2()
}

/// The index of the knee of `points` (depths ascending), if there is one: the first point
/// `k`, not the last, such that for every deeper point `j`
///
/// - IOPS grew less than 10% per doubling of depth since `k` (`iops_j < iops_k ×
///   1.10^doublings`: measured from `k`, so one noisy dip or bump does not end or fake a
///   plateau, and a fall counts as no growth), and
/// - p99 did not clearly fall (`p99_j ≥ p99_k / 1.10`: within 10% is noise),
///
/// and the deepest point's p99 is above `k`'s by more than 10% (the latency kept rising).
/// `None` when IOPS still grows at some depth, when the latency does not rise (depth changes
/// nothing: one I/O in flight whatever was asked), or with fewer than two points.
pub fn knee(points: &[Point]) -> Option<usize> {
    let last = points.last()?;
    (0..points.len().saturating_sub(1)).find(|&k| {
        let at = points[k];
        let later = &points[k + 1..];
        let flat = later.iter().all(|p| {
            let allowed = SAME_WITHIN.powf(doublings(at.depth, p.depth).max(0.0));
            p.iops < at.iops * allowed
        });
        let not_falling = later.iter().all(|p| p.p99 * SAME_WITHIN >= at.p99);
        let rose = last.p99 > at.p99 * SAME_WITHIN;
        flat && not_falling && rose
    })
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
            .map(|(i, (&iops, &p99))| Point {
                depth: 1 << i,
                iops,
                p99,
            })
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
        // plateau that 8 seemed to start (11% in one doubling); from 16 on, IOPS wanders
        // within 10% per doubling and p99 dips 7% at 32 before climbing.
        let c = curve(
            &[10e3, 18e3, 39e3, 72e3, 80e3, 76e3, 83e3, 79e3],
            &[100.0, 104.0, 98.0, 120.0, 150.0, 140.0, 300.0, 600.0],
        );
        assert_eq!(knee(&c).map(|k| c[k].depth), Some(16));
    }

    #[test]
    fn uneven_depths_are_judged_per_doubling() {
        // 4 → 6 is 0.58 doublings: 5% more is 8.8% per doubling, under 10%.
        let c = vec![
            Point {
                depth: 1,
                iops: 10e3,
                p99: 50.0,
            },
            Point {
                depth: 4,
                iops: 40e3,
                p99: 60.0,
            },
            Point {
                depth: 6,
                iops: 42e3,
                p99: 90.0,
            },
        ];
        assert_eq!(knee(&c), Some(1));
        let g = growth_per_doubling(c[1], c[2]).unwrap();
        assert!((g - 1.0870).abs() < 1e-3, "{g}");
    }

    #[test]
    fn one_point_or_none_has_no_knee() {
        assert_eq!(knee(&[]), None);
        assert_eq!(knee(&curve(&[1e3], &[10.0])), None);
    }
}
