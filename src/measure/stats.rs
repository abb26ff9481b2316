//! Statistics over repeated runs: min, median, mean, standard deviation, max, and outliers
//! by the median absolute deviation (robust to the outliers it looks for).

use serde::{Deserialize, Serialize};

/// A summary of repeated measurements.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Smallest.
    pub min: f64,
    /// Middle value (mean of the two middle ones for even n).
    pub median: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n - 1); 0 for one value.
    pub stddev: f64,
    /// Largest.
    pub max: f64,
    /// Median absolute deviation from the median.
    pub mad: f64,
    /// How many values lie more than 3 scaled MADs from the median (0 when n < 5).
    pub outliers: usize,
}

fn median_of(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// Summarises `values`; `None` for an empty slice.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = median_of(&sorted);
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let stddev = if n > 1 {
        (sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let mut deviations: Vec<f64> = sorted.iter().map(|x| (x - median).abs()).collect();
    deviations.sort_by(f64::total_cmp);
    let mad = median_of(&deviations);
    // 1.4826 makes the MAD estimate the standard deviation of normal data.
    let limit = 3.0 * 1.4826 * mad;
    // With fewer than 5 values the MAD says little; no value is called an outlier then.
    let outliers = if mad > 0.0 && n >= 5 {
        sorted
            .iter()
            .filter(|x| (*x - median).abs() > limit)
            .count()
    } else {
        0
    };
    Some(Summary {
        n,
        min: sorted[0],
        median,
        mean,
        stddev,
        max: sorted[n - 1],
        mad,
        outliers,
    })
}

/// The index of the median of `n` items by `key`: the middle one for an odd count, the
/// lower of the two middle ones for an even count (a real run, not an average of two);
/// `None` for no items. Ties keep the items' order.
pub fn median_index_by(n: usize, key: impl Fn(usize) -> f64) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| key(a).total_cmp(&key(b)));
    Some(order[(n - 1) / 2])
}

impl Summary {
    /// Relative spread: standard deviation over mean (0 when the mean is 0).
    pub fn relative_spread(&self) -> f64 {
        if self.mean != 0.0 {
            self.stddev / self.mean
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_inputs_give_known_statistics() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.n, s.min, s.max), (8, 2.0, 9.0));
        assert_eq!(s.median, 4.5);
        assert_eq!(s.mean, 5.0);
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        // Deviations from 4.5: 0.5 five times, 2.5 twice, 4.5: their median is 0.5.
        assert_eq!(s.mad, 0.5);
        // 3 x 1.4826 x 0.5 = 2.22: the values 2, 7 and 9 lie farther than that.
        assert_eq!(s.outliers, 3);
    }

    #[test]
    fn a_far_value_is_an_outlier_and_does_not_move_the_median_much() {
        let s = summarize(&[10.0, 10.5, 9.5, 10.2, 9.8, 100.0]).unwrap();
        assert_eq!(s.outliers, 1);
        assert_eq!(s.median, 10.1);
    }

    #[test]
    fn the_median_index_is_the_lower_middle_for_an_even_count() {
        let rates = [300.0, 100.0, 400.0, 200.0];
        // Sorted 100, 200, 300, 400: the lower middle is 200, at index 3.
        assert_eq!(median_index_by(rates.len(), |i| rates[i]), Some(3));
        let odd = [5.0, 1.0, 3.0];
        assert_eq!(median_index_by(odd.len(), |i| odd[i]), Some(2));
        assert_eq!(median_index_by(1, |_| 7.0), Some(0));
        assert_eq!(median_index_by(0, |_| 7.0), None);
    }

    #[test]
    fn one_value_has_no_spread_and_nothing_has_no_summary() {
        let s = summarize(&[3.0]).unwrap();
        assert_eq!((s.median, s.stddev, s.outliers), (3.0, 0.0, 0));
        assert!(summarize(&[]).is_none());
        let same = summarize(&[1.0, 1.0, 1.0]).unwrap();
        assert_eq!((same.mad, same.outliers), (0.0, 0));
    }
}
