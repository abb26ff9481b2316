//! Repeat until stable, within a budget: when one more run of a timed point is worth making.
//!
//! A point is *settled* when the 95% confidence interval of its median lies within the
//! precision asked (default ±5%) of the median. The interval is distribution-free from six
//! runs on (the order statistics whose binomial coverage is at least 95%: I/O times have
//! long tails, so no normal law is assumed where enough runs allow it); with two to five runs
//! it is the t interval of the mean, widened by 1.2533 (the median's standard error over the
//! mean's for normal data), the best a handful of runs can say. One run has no interval.
//!
//! The budget: at least `min_runs`, at most `max_runs`, and no new run once `max_seconds`
//! have been spent on the point (hyperfine's `--min-runs`, `--max-runs` and time budget).
//! `--repeat N` fixes the count: `min_runs = max_runs = N`.

use serde::{Deserialize, Serialize};

/// The half-width (relative to the median) a point's interval must come within by default.
pub const PRECISION: f64 = 0.05;

/// The finest precision that may be asked (±0.1%): the reports write it to a tenth of a
/// percent, and a finer one would only spend every point's whole budget.
pub const FINEST_PRECISION: f64 = 0.001;

/// When to stop repeating a timed point.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stopping {
    /// Runs always made.
    pub min_runs: usize,
    /// Runs never exceeded.
    pub max_runs: usize,
    /// Seconds of runs after which no new run starts (the first `min_runs` always run).
    pub max_seconds: f64,
    /// The relative half-width of the median's 95% interval to stop at (0.05 = ±5%).
    pub precision: f64,
}

impl Stopping {
    /// Exactly `n` runs, whatever their spread (`--repeat N`).
    pub fn fixed(n: usize) -> Self {
        Self {
            min_runs: n.max(1),
            max_runs: n.max(1),
            max_seconds: f64::INFINITY,
            precision: PRECISION,
        }
    }

    /// The rule a result records as `until_stable`: itself, or `None` for a fixed count.
    pub fn until_stable(self) -> Option<Self> {
        (!self.is_fixed()).then_some(self)
    }

    /// Whether the count is fixed (`--repeat`): no run depends on the spread.
    pub fn is_fixed(&self) -> bool {
        self.min_runs >= self.max_runs
    }

    /// Whether to make another run of a point whose runs so far gave `values` in `seconds`.
    pub fn more(&self, values: &[f64], seconds: f64) -> bool {
        let n = values.len();
        if n < self.min_runs {
            return true;
        }
        n < self.max_runs && seconds < self.max_seconds && !self.settled(values)
    }

    /// Whether `values` are settled: their median's interval within the precision.
    pub fn settled(&self, values: &[f64]) -> bool {
        half_width(values).is_some_and(|w| w <= self.precision)
    }

    /// How a point's runs ended, for the report (`None` when the count was fixed: nothing
    /// was asked of the spread).
    pub fn outcome(&self, values: &[f64]) -> Option<Settled> {
        if self.is_fixed() {
            return None;
        }
        Some(Settled {
            half_width: half_width(values),
            settled: self.settled(values),
        })
    }
}

/// One point's runs so far, as [`Stopping`] judges them: each run's rate and the seconds
/// spent, and whether one more run is worth making. Every until-stable loop keeps one per
/// point (cache: one per read of its cycles).
#[derive(Debug, Clone, PartialEq)]
pub struct Repeats {
    stop: Stopping,
    rates: Vec<f64>,
    seconds: f64,
    /// Runs taken with no interference marked (another process's I/O on the device, or
    /// the machine stalled).
    clean: usize,
}

impl Repeats {
    /// No run yet, to be repeated as `stop` says.
    pub fn new(stop: Stopping) -> Self {
        Self {
            stop,
            rates: Vec::with_capacity(stop.min_runs),
            seconds: 0.0,
            clean: 0,
        }
    }

    /// Counts a run that gave `rate` and took `seconds`, with no interference marked.
    pub fn push(&mut self, rate: f64, seconds: f64) {
        self.push_marked(rate, seconds, false);
    }

    /// Counts a run that gave `rate` and took `seconds`, `interfered` when it was taken
    /// under interference (its figure is kept: the median and the interval judge it).
    pub fn push_marked(&mut self, rate: f64, seconds: f64, interfered: bool) {
        self.rates.push(rate);
        self.seconds += seconds;
        self.clean += usize::from(!interfered);
    }

    /// Whether to make another run: always before the first, then as [`Stopping::more`]
    /// says; and, until stable, while fewer than `min_runs` runs were free of interference
    /// and the budget allows (a point settled on runs another process disturbed is
    /// measured again rather than trusted: the clean runs then outvote them in the median).
    pub fn more(&self) -> bool {
        if self.rates.is_empty() || self.stop.more(&self.rates, self.seconds) {
            return true;
        }
        !self.stop.is_fixed()
            && self.clean < self.stop.min_runs
            && self.rates.len() < self.stop.max_runs
            && self.seconds < self.stop.max_seconds
    }

    /// How the runs ended, as [`Stopping::outcome`] says.
    pub fn outcome(&self) -> Option<Settled> {
        self.stop.outcome(&self.rates)
    }

    /// The runs counted so far.
    pub fn len(&self) -> usize {
        self.rates.len()
    }

    /// Whether no run was counted yet.
    pub fn is_empty(&self) -> bool {
        self.rates.is_empty()
    }

    /// The rates counted so far, in order.
    pub fn rates(&self) -> &[f64] {
        &self.rates
    }
}

/// How a repeated point ended.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Settled {
    /// The relative half-width of the median's 95% interval (`None` for one run).
    pub half_width: Option<f64>,
    /// Whether it came within the precision asked before the budget ran out.
    pub settled: bool,
}

/// Two-sided 97.5% quantiles of Student's t for 1 to 4 degrees of freedom (2 to 5 runs).
const T975: [f64; 4] = [12.706, 4.303, 3.182, 2.776];

/// The median's standard error over the mean's, for normal data (sqrt(pi / 2)).
const MEDIAN_SE: f64 = 1.2533;

/// The median of `values` and its 95% confidence interval `(low, median, high)`; `None` for
/// fewer than two values.
pub fn median_interval(values: &[f64]) -> Option<(f64, f64, f64)> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    if n < 6 {
        let mean = sorted.iter().sum::<f64>() / n as f64;
        let var = sorted.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let half = T975[n - 2] * MEDIAN_SE * (var / n as f64).sqrt();
        return Some((median - half, median, median + half));
    }
    let k = order_index(n);
    Some((sorted[k], median, sorted[n - 1 - k]))
}

/// The relative half-width of the median's 95% interval: the farther end's distance from
/// the median over the median. `None` for fewer than two values or a median of 0.
pub fn half_width(values: &[f64]) -> Option<f64> {
    let (low, median, high) = median_interval(values)?;
    (median > 0.0).then(|| (median - low).max(high - median) / median)
}

/// For `n >= 6` sorted values, the 0-based index `k` such that `[x_k, x_(n-1-k)]` covers the
/// median with probability at least 95%: the largest `k` with P(Binomial(n, 1/2) <= k) at
/// most 2.5%.
fn order_index(n: usize) -> usize {
    // P(X <= j) summed term by term; 0.5^n is representable for n up to 1074 and runs are
    // capped well below that (the normal approximation beyond).
    if n > 1000 {
        let k = (n as f64 / 2.0 - 1.96 * (n as f64).sqrt() / 2.0).floor();
        return (k.max(0.0) as usize).min(n / 2);
    }
    let mut term = 0.5f64.powi(n as i32);
    let mut cdf = 0.0;
    let mut k = 0;
    for j in 0..n / 2 {
        cdf += term;
        if cdf > 0.025 {
            break;
        }
        k = j;
        term *= (n - j) as f64 / (j + 1) as f64;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_statistics_cover_at_least_ninety_five_percent() {
        // Known values: 6 to 8 runs need the whole range, 9 the second from each end,
        // 12 the third, 20 the sixth (0-based 5).
        assert_eq!(order_index(6), 0);
        assert_eq!(order_index(8), 0);
        assert_eq!(order_index(9), 1);
        assert_eq!(order_index(12), 2);
        assert_eq!(order_index(20), 5);
        // The normal approximation agrees with the exact sum where both apply.
        let approx = (1000.0f64 / 2.0 - 1.96 * 1000.0f64.sqrt() / 2.0).floor() as usize;
        assert!(order_index(1000).abs_diff(approx) <= 1);
    }

    #[test]
    fn a_tight_set_settles_and_a_scattered_one_does_not() {
        let stop = Stopping {
            min_runs: 3,
            max_runs: 10,
            max_seconds: 60.0,
            precision: 0.05,
        };
        let tight = [100.0, 101.0, 99.5];
        assert!(half_width(&tight).unwrap() < 0.05);
        assert!(!stop.more(&tight, 1.0), "settled after its three runs");
        // The 61% scatter seen in a sweep: never settled, so more runs are made.
        let wide = [61.0, 100.0, 98.0];
        assert!(half_width(&wide).unwrap() > 0.05);
        assert!(stop.more(&wide, 1.0));
    }

    #[test]
    fn the_budget_ends_repeats_however_wide_the_spread() {
        let stop = Stopping {
            min_runs: 3,
            max_runs: 5,
            max_seconds: 10.0,
            precision: 0.05,
        };
        let wide = [50.0, 100.0, 150.0];
        assert!(
            stop.more(&wide[..2], 100.0),
            "the minimum runs whatever the time"
        );
        assert!(!stop.more(&wide, 10.0), "the time budget is spent");
        assert!(
            !stop.more(&[50.0, 100.0, 150.0, 60.0, 140.0], 1.0),
            "max runs"
        );
        let outcome = stop.outcome(&wide).unwrap();
        assert!(!outcome.settled && outcome.half_width.unwrap() > 0.5);
    }

    #[test]
    fn a_fixed_count_ignores_the_spread_and_reports_nothing() {
        let stop = Stopping::fixed(3);
        assert!(stop.more(&[1.0, 100.0], 0.0));
        assert!(!stop.more(&[1.0, 100.0, 50.0], 0.0));
        assert!(stop.outcome(&[1.0, 100.0, 50.0]).is_none());
    }

    #[test]
    fn repeats_ask_for_a_first_run_then_follow_the_rule() {
        let stop = Stopping {
            min_runs: 2,
            max_runs: 4,
            max_seconds: 10.0,
            precision: 0.05,
        };
        let mut runs = Repeats::new(stop);
        assert!(runs.more() && runs.is_empty(), "always one run");
        runs.push(100.0, 1.0);
        assert!(runs.more(), "below the minimum");
        runs.push(100.5, 1.0);
        assert!(!runs.more(), "settled at the minimum");
        assert_eq!(runs.outcome(), stop.outcome(&[100.0, 100.5]));
        // The seconds add up: a budget spent stops a scattered point.
        let mut slow = Repeats::new(stop);
        slow.push(50.0, 6.0);
        slow.push(150.0, 6.0);
        assert!(!slow.more() && slow.len() == 2);
        assert_eq!(slow.rates(), [50.0, 150.0]);
        // Even a fixed count of 0 (never built by the options) makes one run.
        let mut none = Repeats::new(Stopping {
            min_runs: 0,
            max_runs: 0,
            ..stop
        });
        assert!(none.more());
        none.push(1.0, 0.0);
        assert!(!none.more());
    }

    #[test]
    fn a_point_settled_on_disturbed_runs_is_measured_again_while_the_budget_allows() {
        let stop = Stopping {
            min_runs: 3,
            max_runs: 6,
            max_seconds: 10.0,
            precision: 0.05,
        };
        // Three equal runs, two of them under another process's I/O: settled, not trusted.
        let mut runs = Repeats::new(stop);
        runs.push_marked(100.0, 1.0, true);
        runs.push_marked(100.0, 1.0, false);
        runs.push_marked(100.0, 1.0, true);
        assert!(runs.more(), "one clean run of three asked");
        runs.push(100.0, 1.0);
        assert!(runs.more());
        runs.push(100.0, 1.0);
        assert!(!runs.more(), "three clean runs");
        // Every run disturbed: the run budget ends it.
        let mut busy = Repeats::new(stop);
        for _ in 0..6 {
            assert!(busy.more());
            busy.push_marked(100.0, 1.0, true);
        }
        assert!(!busy.more() && busy.len() == 6);
        // So does the time budget.
        let mut slow = Repeats::new(stop);
        for _ in 0..3 {
            slow.push_marked(100.0, 4.0, true);
        }
        assert!(!slow.more(), "12 s spent of 10");
        // A fixed count is kept whatever the marks.
        let mut fixed = Repeats::new(Stopping::fixed(2));
        fixed.push_marked(100.0, 1.0, true);
        fixed.push_marked(100.0, 1.0, true);
        assert!(!fixed.more());
        // The figures are kept either way: the marked runs are in the median.
        assert_eq!(runs.rates().len(), 5);
    }

    #[test]
    fn one_run_has_no_interval_and_an_outlier_widens_only_its_end() {
        assert!(median_interval(&[5.0]).is_none());
        assert!(half_width(&[5.0]).is_none());
        // Nine runs: the interval is the 2nd to the 8th; one far outlier is outside it.
        let runs = [100.0, 101.0, 99.0, 100.5, 99.5, 100.2, 99.8, 100.1, 400.0];
        let (low, median, high) = median_interval(&runs).unwrap();
        assert_eq!(median, 100.1);
        assert_eq!((low, high), (99.5, 101.0));
        assert!(half_width(&runs).unwrap() < 0.01);
    }
}
