//! The statistics of a figure against its baseline: the change of the medians, its
//! confidence interval by a seeded bootstrap of the ratio of medians, and the noise floor
//! measured now (the larger of the old and the new runs' relative spread: the
//! half-interquartile range from [`FLOOR_IQR_FROM`] runs, the spread of the middle half,
//! which unlike the full range does not grow with the number of runs, so more runs make a
//! smaller change tellable; below that, the half-range). The verdict
//! itself is the one rule's ([`super::verdict::movement`]). No I/O, no clock: the same runs
//! give the same answer on every machine.

use super::verdict::{
    CONFIDENCE, FLOOR_IQR_FROM, LEVEL_FROM_PROCESSES, Movement, RESAMPLES, movement,
};
use serde::{Deserialize, Serialize};

/// One figure's old and new runs compared.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// New median over old median, minus 1 (+0.12: the figure is 12% higher).
    pub change: f64,
    /// Its confidence interval (at [`CONFIDENCE`]), low then high.
    pub ci: [f64; 2],
    /// The noise measured now: the larger relative half-interquartile range of the two
    /// sides' runs.
    pub floor: f64,
    /// What the figure did, by the one rule.
    pub verdict: Movement,
    /// Over how many processes the interval and the floor were drawn, the fewer of the two
    /// sides (each process's runs resampled together, its level a unit); 1: over runs, as
    /// if each were independent (one process a side, or too few processes on either).
    #[serde(default = "one")]
    pub processes: usize,
    /// Over how many moments the baseline was saved (`--add-to-baseline`); 1: one.
    #[serde(default = "one")]
    pub moments: usize,
    /// Where the baseline spans two moments or more: how far its level moved between them
    /// (the relative standard deviation of the moments' medians), which the floor carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<f64>,
}

fn one() -> usize {
    1
}

/// One side's runs, and how many of them each process gave when several did, and each
/// moment when the side was measured at several (a baseline added to).
#[derive(Debug, Clone, Copy)]
pub struct Runs<'a> {
    /// Every run's value, process after process.
    pub values: &'a [f64],
    /// How many runs each process gave, in order; empty: one process.
    pub processes: &'a [usize],
    /// How many runs each moment gave, in order; empty: one moment.
    pub moments: &'a [usize],
}

impl<'a> Runs<'a> {
    /// `values` measured by processes that gave `processes` runs each.
    pub fn of(values: &'a [f64], processes: &'a [usize]) -> Self {
        Self {
            values,
            processes,
            moments: &[],
        }
    }

    /// Runs all from one process.
    pub fn one(values: &'a [f64]) -> Self {
        Self::of(values, &[])
    }

    /// The same runs, measured at moments that gave `moments` runs each.
    pub fn at_moments(self, moments: &'a [usize]) -> Self {
        Self { moments, ..self }
    }

    /// Each moment's median, when there are two moments or more and their counts add up.
    fn moment_levels(&self) -> Option<Vec<f64>> {
        let groups = groups(self.values, self.moments, 2)?;
        Some(groups.iter().map(|g| median(g)).collect())
    }

    /// Each process's runs, when there are [`LEVEL_FROM_PROCESSES`] or more and their counts
    /// add up.
    fn by_process(&self) -> Option<Vec<&'a [f64]>> {
        groups(self.values, self.processes, LEVEL_FROM_PROCESSES)
    }
}

/// `values` cut into consecutive groups of `counts` runs each (a process's, a moment's):
/// `None` unless there are `least` groups or more, none empty, and together they hold
/// every value.
pub fn groups<'a>(values: &'a [f64], counts: &[usize], least: usize) -> Option<Vec<&'a [f64]>> {
    if counts.len() < least || counts.contains(&0) || counts.iter().sum::<usize>() != values.len() {
        return None;
    }
    let mut at = 0;
    Some(
        counts
            .iter()
            .map(|&n| {
                at += n;
                &values[at - n..at]
            })
            .collect(),
    )
}

/// The median of `values` (mean of the two middle ones for an even count); 0 when empty.
pub fn median(values: &[f64]) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The index of the run whose value is the median (the upper middle one of an even count):
/// the run a repeated command reports in full, beside every run's value.
pub fn median_index(values: &[f64]) -> usize {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    order.get(values.len() / 2).copied().unwrap_or(0)
}

/// The noise of one side's runs, relative to their median: the half-interquartile range
/// from [`FLOOR_IQR_FROM`] runs, else the half-range.
pub fn noise(values: &[f64]) -> f64 {
    if values.len() >= FLOOR_IQR_FROM {
        return relative_half_iqr(values);
    }
    let m = median(values);
    if values.len() < 2 || m <= 0.0 {
        return 0.0;
    }
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (hi - lo) / 2.0 / m
}

/// The `p` quantile of `values` (0 to 1, linear between the sorted values); 0 when empty.
pub fn quantile(values: &[f64], p: f64) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let at = (v.len() - 1) as f64 * p.clamp(0.0, 1.0);
    let (lo, hi) = (at.floor() as usize, at.ceil() as usize);
    v[lo] + (v[hi] - v[lo]) * (at - lo as f64)
}

/// Half the interquartile range of `values` over their median: how far the middle half of
/// the runs strays from the middle (0 for fewer than two runs).
pub fn relative_half_iqr(values: &[f64]) -> f64 {
    let m = median(values);
    if values.len() < 2 || m <= 0.0 {
        return 0.0;
    }
    (quantile(values, 0.75) - quantile(values, 0.25)) / 2.0 / m
}

/// A tiny deterministic generator (xorshift64*): the bootstrap gives the same interval for
/// the same runs.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Student's t at [`CONFIDENCE`] (two-sided) for 1 to 30 degrees of freedom; beyond, the
/// normal's 1.96.
const T_975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Student's t at [`CONFIDENCE`] for `df` degrees of freedom (at least 1).
fn t_975(df: usize) -> f64 {
    T_975.get(df.max(1) - 1).copied().unwrap_or(1.96)
}

/// What a baseline saved at several moments says of the next one: `levels` are the moments'
/// medians; the result is their drift (relative standard deviation) and the floor a check
/// made at one more moment must pass to be told from that drift — the half-width of the
/// prediction interval of one new level around their mean, `t · s · √(1 + 1/k)`, relative.
/// `None` for fewer than two moments.
pub fn moment_floor(levels: &[f64]) -> Option<(f64, f64)> {
    let k = levels.len();
    if k < 2 {
        return None;
    }
    let mean = levels.iter().sum::<f64>() / k as f64;
    if mean <= 0.0 || !mean.is_finite() {
        return None;
    }
    let var = levels.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (k - 1) as f64;
    let drift = var.sqrt() / mean;
    Some((drift, t_975(k - 1) * drift * (1.0 + 1.0 / k as f64).sqrt()))
}

/// The seed of every bootstrap (any odd constant: the answer must not depend on the run).
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// The confidence interval of `median(new) / median(old) - 1` by resampling each side with
/// replacement [`RESAMPLES`] times.
pub fn bootstrap(old: &[f64], new: &[f64]) -> [f64; 2] {
    if old.is_empty() || new.is_empty() {
        return [0.0, 0.0];
    }
    let mut a = vec![0.0; old.len()];
    let mut b = vec![0.0; new.len()];
    interval(|rng| {
        a.iter_mut().for_each(|x| *x = old[rng.below(old.len())]);
        b.iter_mut().for_each(|x| *x = new[rng.below(new.len())]);
        median(&b) / median(&a).max(1e-300) - 1.0
    })
}

/// The [`CONFIDENCE`] interval of [`RESAMPLES`] values of `resample`, each drawn with the
/// one seeded generator: the percentiles that leave equal tails outside.
fn interval(mut resample: impl FnMut(&mut XorShift) -> f64) -> [f64; 2] {
    let mut rng = XorShift(SEED);
    let mut values: Vec<f64> = (0..RESAMPLES).map(|_| resample(&mut rng)).collect();
    values.sort_by(f64::total_cmp);
    let tail = (1.0 - CONFIDENCE) / 2.0;
    let at = |q: f64| values[((q * (RESAMPLES - 1) as f64).round() as usize).min(RESAMPLES - 1)];
    [at(tail), at(1.0 - tail)]
}

/// The confidence interval of `median(new) / median(old) - 1` where each side's runs came
/// from several processes: each resample draws as many processes as the side has, with
/// replacement, then each drawn process's runs with replacement (a two-stage bootstrap:
/// the runs of one process move together, so the process, not the run, is the unit).
pub fn bootstrap_processes(old: &[&[f64]], new: &[&[f64]]) -> [f64; 2] {
    if old.is_empty() || new.is_empty() {
        return [0.0, 0.0];
    }
    let mut a = Vec::new();
    let mut b = Vec::new();
    let draw = |groups: &[&[f64]], into: &mut Vec<f64>, rng: &mut XorShift| {
        into.clear();
        for _ in 0..groups.len() {
            let g = groups[rng.below(groups.len())];
            for _ in 0..g.len() {
                into.push(g[rng.below(g.len())]);
            }
        }
    };
    interval(|rng| {
        draw(old, &mut a, rng);
        draw(new, &mut b, rng);
        median(&b) / median(&a).max(1e-300) - 1.0
    })
}

/// `new` runs against `old` runs of one figure (`higher_is_better`: a rate, not a time).
/// Where both sides were measured by [`LEVEL_FROM_PROCESSES`] processes or more, the
/// interval is drawn over processes and the floor is the spread of the processes' medians
/// (how far one process's level strays); otherwise over runs, the floor their spread. Where
/// the old side was measured at two moments or more, the floor is at least what the
/// moments' drift predicts for one more ([`moment_floor`]): a check made in another minute
/// is told apart only from what the machine itself does between minutes.
pub fn compare(old: Runs, new: Runs, higher_is_better: bool) -> Change {
    let change = median(new.values) / median(old.values).max(1e-300) - 1.0;
    let (ci, floor, units, processes) = match (old.by_process(), new.by_process()) {
        (Some(o), Some(n)) => {
            let levels = |g: &[&[f64]]| -> Vec<f64> { g.iter().map(|r| median(r)).collect() };
            let fewer = o.len().min(n.len());
            (
                bootstrap_processes(&o, &n),
                noise(&levels(&o)).max(noise(&levels(&n))),
                fewer,
                fewer,
            )
        }
        _ => (
            bootstrap(old.values, new.values),
            noise(old.values).max(noise(new.values)),
            old.values.len().min(new.values.len()),
            1,
        ),
    };
    let moments = old.moment_levels();
    let drifted = moments.as_deref().and_then(moment_floor);
    let floor = drifted.map_or(floor, |(_, f)| floor.max(f));
    Change {
        change,
        ci,
        floor,
        verdict: movement(change, (ci[0], ci[1]), floor, units, higher_is_better),
        processes,
        moments: moments.map_or(1, |m| m.len()),
        drift: drifted.map(|(d, _)| d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_runs_are_within_the_noise() {
        let old = [100.0, 130.0, 90.0, 115.0, 105.0];
        let new = [95.0, 120.0, 85.0, 110.0, 100.0];
        let c = compare(Runs::one(&old), Runs::one(&new), true);
        assert_eq!(c.verdict, Movement::WithinNoise, "{c:?}");
        assert!(c.ci[0] < 0.0 && c.ci[1] > 0.0, "{c:?}");
    }

    #[test]
    fn tight_runs_ten_percent_slower_are_a_regression() {
        let old = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new = [90.0, 90.5, 89.5, 90.2, 89.8];
        let c = compare(Runs::one(&old), Runs::one(&new), true);
        assert_eq!(c.verdict, Movement::Regressed, "{c:?}");
        assert!((c.change + 0.10).abs() < 1e-9);
        assert!(c.ci[1] < 0.0);
    }

    #[test]
    fn tight_runs_ten_percent_faster_are_an_improvement() {
        let old = [100.0, 101.0, 99.0, 100.5, 99.5];
        let new = [110.0, 110.5, 109.5, 110.2, 109.8];
        assert_eq!(
            compare(Runs::one(&old), Runs::one(&new), true).verdict,
            Movement::Improved
        );
    }

    #[test]
    fn a_time_that_grows_is_a_regression() {
        let old = [1.0, 1.01, 0.99, 1.0];
        let new = [1.2, 1.21, 1.19, 1.2];
        let c = compare(Runs::one(&old), Runs::one(&new), false);
        assert!(c.change > 0.0);
        assert_eq!(c.verdict, Movement::Regressed);
        assert_eq!(
            compare(Runs::one(&new), Runs::one(&old), false).verdict,
            Movement::Improved
        );
    }

    #[test]
    fn one_run_on_either_side_cannot_tell() {
        assert_eq!(
            compare(Runs::one(&[100.0]), Runs::one(&[50.0, 51.0, 50.5]), true).verdict,
            Movement::CannotTell
        );
        assert_eq!(
            compare(Runs::one(&[100.0, 101.0]), Runs::one(&[50.0]), true).verdict,
            Movement::CannotTell
        );
    }

    #[test]
    fn a_change_inside_the_measured_floor_is_noise_though_the_interval_excludes_zero() {
        // Every new run is below every old one, but the new runs' middle half spreads ±16%:
        // a 13% drop is within what they themselves stray.
        let old = [100.0, 100.2, 100.5, 100.8, 101.0, 101.2, 101.5, 102.0];
        let new = [60.0, 62.0, 70.0, 80.0, 96.0, 97.0, 98.0, 99.0];
        let c = compare(Runs::one(&old), Runs::one(&new), true);
        assert!(c.ci[1] < 0.0, "{c:?}");
        assert!(c.floor > c.change.abs(), "{c:?}");
        assert_eq!(c.verdict, Movement::WithinNoise);
    }

    #[test]
    fn the_floor_is_the_middle_half_so_one_stray_run_does_not_widen_it() {
        assert!((quantile(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.25) - 2.0).abs() < 1e-12);
        assert!((relative_half_iqr(&[100.0, 100.0, 100.0, 100.0, 30.0])).abs() < 1e-12);
        assert_eq!(relative_half_iqr(&[100.0]), 0.0);
        // Few runs: the half-range, all the spread there is.
        assert!((noise(&[90.0, 100.0, 110.0]) - 0.1).abs() < 1e-12);
        let many = [100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 100.0, 30.0];
        assert!(noise(&many).abs() < 1e-12);
    }

    #[test]
    fn the_median_run_is_found_among_repeats() {
        assert_eq!(median_index(&[3.0, 1.0, 2.0]), 2);
        assert_eq!(median_index(&[5.0]), 0);
        assert_eq!(median_index(&[]), 0);
    }

    #[test]
    fn the_bootstrap_is_the_same_every_time() {
        let old = [100.0, 104.0, 97.0, 101.0];
        let new = [93.0, 95.0, 90.0, 96.0];
        assert_eq!(bootstrap(&old, &new), bootstrap(&old, &new));
    }

    /// `levels`, each a process giving `k` runs evenly spread over `level ± spread`.
    fn spread_over(levels: &[f64], spread: f64, k: usize) -> (Vec<f64>, Vec<usize>) {
        let runs = levels
            .iter()
            .flat_map(|&l| {
                (0..k).map(move |i| l - spread + 2.0 * spread * i as f64 / (k - 1) as f64)
            })
            .collect();
        (runs, vec![k; levels.len()])
    }

    /// `levels`, each a process giving three runs `spread` apart around it.
    fn processes(levels: &[f64], spread: f64) -> (Vec<f64>, Vec<usize>) {
        spread_over(levels, spread, 3)
    }

    #[test]
    fn processes_that_agree_make_a_change_inside_the_runs_spread_tellable() {
        // Runs spread ±20% inside every process, every process at the same level: an 8%
        // drop, inside the runs' middle half.
        let (old, op) = spread_over(&[100.0; 8], 20.0, 9);
        let (new, np) = spread_over(&[92.0; 8], 20.0, 9);
        let c = compare(Runs::of(&old, &op), Runs::of(&new, &np), true);
        assert_eq!(c.processes, 8, "{c:?}");
        assert_eq!(c.verdict, Movement::Regressed, "{c:?}");
        // The same runs as one process's: inside their own spread.
        let pooled = compare(Runs::one(&old), Runs::one(&new), true);
        assert_eq!(pooled.processes, 1);
        assert_eq!(pooled.verdict, Movement::WithinNoise, "{pooled:?}");
    }

    #[test]
    fn a_move_no_larger_than_the_processes_own_is_within_the_noise() {
        // Tight runs, processes 8% apart at most: every new one 6% lower.
        let levels = [100.0, 108.0, 92.0, 104.0, 96.0, 100.0];
        let lower: Vec<f64> = levels.iter().map(|l| l * 0.94).collect();
        let (old, op) = processes(&levels, 0.5);
        let (new, np) = processes(&lower, 0.5);
        let c = compare(Runs::of(&old, &op), Runs::of(&new, &np), true);
        assert_eq!(c.processes, 6, "{c:?}");
        assert!((c.floor - 0.08).abs() < 1e-9, "{c:?}");
        assert_eq!(c.verdict, Movement::WithinNoise, "{c:?}");
        // Taken as independent runs, the same figures would be called a regression.
        let pooled = compare(Runs::one(&old), Runs::one(&new), true);
        assert_eq!(pooled.verdict, Movement::Regressed, "{pooled:?}");
    }

    /// Five runs within ±0.5% around each of `levels`, one moment each.
    fn moments(levels: &[f64]) -> (Vec<f64>, Vec<usize>) {
        spread_over(levels, 0.5, 5)
    }

    #[test]
    fn a_baseline_over_moments_carries_their_drift_as_its_floor() {
        // Three moments 4% apart: a check 7% below their middle is inside what one more
        // moment would do, though its runs are tight and far from the old ones'.
        let (old, om) = moments(&[100.0, 104.0, 96.0]);
        let (new, _) = moments(&[93.0]);
        let c = compare(Runs::one(&old).at_moments(&om), Runs::one(&new), true);
        assert_eq!(c.moments, 3, "{c:?}");
        assert!((c.drift.unwrap() - 0.04).abs() < 1e-9, "{c:?}");
        // t(2) · 4% · √(4/3) = 19.9%.
        assert!(
            (c.floor - 4.303 * 0.04 * (4.0f64 / 3.0).sqrt()).abs() < 1e-9,
            "{c:?}"
        );
        assert_eq!(c.verdict, Movement::WithinNoise, "{c:?}");
        // The same runs taken as one moment: a regression.
        let one = compare(Runs::one(&old), Runs::one(&new), true);
        assert_eq!((one.moments, one.drift), (1, None));
        assert_eq!(one.verdict, Movement::Regressed, "{one:?}");
    }

    #[test]
    fn moments_that_agree_leave_a_real_drop_told() {
        // Ten moments within ±1%: a 10% drop passes t(9) · s · √1.1.
        let levels = [
            100.0, 101.0, 99.0, 100.5, 99.5, 100.0, 101.0, 99.0, 100.2, 99.8,
        ];
        let (old, om) = moments(&levels);
        let (new, _) = moments(&[90.0]);
        let c = compare(Runs::one(&old).at_moments(&om), Runs::one(&new), true);
        assert_eq!(c.moments, 10);
        assert!(c.floor < 0.05, "{c:?}");
        assert_eq!(c.verdict, Movement::Regressed, "{c:?}");
    }

    #[test]
    fn moment_counts_that_do_not_add_up_are_one_moment() {
        let (old, _) = moments(&[100.0, 90.0]);
        let (new, _) = moments(&[80.0]);
        let c = compare(Runs::one(&old).at_moments(&[5, 4]), Runs::one(&new), true);
        assert_eq!((c.moments, c.drift), (1, None));
        assert_eq!(moment_floor(&[100.0]), None);
        assert_eq!(t_975(1), 12.706);
        assert_eq!(t_975(31), 1.96);
    }

    #[test]
    fn too_few_processes_or_counts_that_do_not_add_up_fall_back_to_runs() {
        let (old, op) = processes(&[100.0, 101.0, 99.0], 1.0);
        let (new, np) = processes(&[90.0, 91.0, 89.0], 1.0);
        assert_eq!(
            compare(Runs::of(&old, &op), Runs::of(&new, &np), true).processes,
            1
        );
        let (old, _) = processes(&[100.0; 5], 1.0);
        let c = compare(
            Runs::of(&old, &[3, 3, 3, 3, 2]),
            Runs::of(&old, &[3; 5]),
            true,
        );
        assert_eq!(c.processes, 1);
    }
}
