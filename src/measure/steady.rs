//! Steady state of a run over time: the one rule that says whether, from when and until
//! when a per-interval figure (MiB/s) held still, after the SNIA Solid State Storage
//! Performance Test Specification (PTS): a **window** of [`WINDOW`] consecutive intervals is
//! steady when every value in it is within ±[`BAND`] of the window's mean *and* the
//! least-squares line through it changes by at most ±[`SLOPE`] of the mean across the
//! window. The steady stretch is the first run of overlapping steady windows; a run that
//! leaves it is compared with its level by the one rule of [`super::verdict`] (the
//! intervals as repeats): below is a cliff, the same is a dip it came back from. GUIDE.md,
//! "Runs over time", names the rule.

use super::verdict::{self, Figure, Relation};
use serde::{Deserialize, Serialize};

/// Intervals in a window: five, as the PTS's measurement window.
pub const WINDOW: usize = 5;
/// Each value of a steady window is within this share of the window's mean: ±10%.
pub const BAND: f64 = 0.10;
/// The fitted line changes by at most this share of the mean across a steady window: ±10%.
pub const SLOPE: f64 = 0.10;
/// Fewest intervals after leaving the steady stretch for a direction to be told.
pub const AFTER_AT_LEAST: usize = 2;

/// What a series did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Steadiness {
    /// Fewer intervals than one window: nothing can be told.
    TooShort,
    /// No window was steady.
    Never,
    /// Steady from some interval to the end.
    Steady,
    /// Steady for a stretch, then left it.
    Left,
}

/// Where the values went after leaving the steady stretch, by the one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum After {
    /// Below the steady level, the intervals not overlapping: a cliff.
    Below,
    /// Above it: a rise.
    Above,
    /// Within 10% of it: a dip (or bump) it came back from.
    Same,
    /// The difference is within the intervals' own scatter.
    Unclear,
    /// Fewer than [`AFTER_AT_LEAST`] intervals after it.
    TooFew,
}

/// The steady state of one series.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyState {
    /// What the series did.
    pub verdict: Steadiness,
    /// Intervals per window.
    pub window_intervals: usize,
    /// The first interval of the steady stretch.
    pub from_interval: Option<usize>,
    /// The first interval after it, when the series left it.
    pub until_interval: Option<usize>,
    /// The mean of the steady stretch.
    pub level: Option<f64>,
    /// The median of the intervals after leaving it.
    pub after_level: Option<f64>,
    /// Where the values went after leaving it.
    pub after: Option<After>,
}

impl SteadyState {
    /// Whether the series fell off its steady level and stayed below it.
    pub fn cliff(&self) -> bool {
        self.verdict == Steadiness::Left && self.after == Some(After::Below)
    }
}

/// The mean of `v` (0 for none).
fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The least-squares slope of `v` against its index.
fn slope(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let (mx, my) = ((n - 1.0) / 2.0, mean(v));
    let (mut num, mut den) = (0.0, 0.0);
    for (i, y) in v.iter().enumerate() {
        let dx = i as f64 - mx;
        num += dx * (y - my);
        den += dx * dx;
    }
    if den == 0.0 { 0.0 } else { num / den }
}

/// Whether one window is steady by the rule.
pub fn window_steady(w: &[f64]) -> bool {
    let m = mean(w);
    if w.len() < 2 || m <= 0.0 {
        return false;
    }
    let within = w.iter().all(|v| (v - m).abs() <= BAND * m);
    let change = slope(w) * (w.len() - 1) as f64;
    within && change.abs() <= SLOPE * m
}

/// A set of values as the one rule sees repeats.
fn figure(v: &[f64]) -> Figure {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    Figure {
        median: s[s.len() / 2],
        min: s[0],
        max: s[s.len() - 1],
        n: s.len(),
    }
}

/// The steady state of `values` (one per interval, in order).
pub fn detect(values: &[f64]) -> SteadyState {
    let mut s = SteadyState {
        verdict: Steadiness::TooShort,
        window_intervals: WINDOW,
        from_interval: None,
        until_interval: None,
        level: None,
        after_level: None,
        after: None,
    };
    if values.len() < WINDOW {
        return s;
    }
    let steady: Vec<bool> = values.windows(WINDOW).map(window_steady).collect();
    let Some(first) = steady.iter().position(|&b| b) else {
        s.verdict = Steadiness::Never;
        return s;
    };
    let last = first + steady[first..].iter().take_while(|&&b| b).count() - 1;
    let until = last + WINDOW;
    s.from_interval = Some(first);
    let stretch = &values[first..until];
    s.level = Some(mean(stretch));
    if until >= values.len() {
        s.verdict = Steadiness::Steady;
        return s;
    }
    s.verdict = Steadiness::Left;
    s.until_interval = Some(until);
    let rest = &values[until..];
    let after = figure(rest);
    s.after_level = Some(after.median);
    s.after = Some(if rest.len() < AFTER_AT_LEAST {
        After::TooFew
    } else {
        match verdict::relate(after, figure(stretch)) {
            Relation::Same => After::Same,
            Relation::Above(_) => After::Above,
            Relation::Below(_) => After::Below,
            Relation::Unclear(_) => After::Unclear,
        }
    });
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A little noise (±3%) that never breaks the rule on its own.
    fn noisy(level: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + [0.0, 0.03, -0.02, 0.01, -0.03][i % 5]))
            .collect()
    }

    #[test]
    fn a_series_steady_throughout_is_steady_from_its_first_interval() {
        let s = detect(&noisy(800.0, 20));
        assert_eq!(s.verdict, Steadiness::Steady);
        assert_eq!(s.from_interval, Some(0));
        assert_eq!(s.until_interval, None);
        assert!((s.level.unwrap() - 800.0).abs() < 10.0);
        assert!(!s.cliff());
    }

    #[test]
    fn a_ramp_up_then_a_plateau_is_steady_from_the_plateau() {
        let mut v = vec![50.0, 200.0, 450.0, 700.0];
        v.extend(noisy(800.0, 12));
        let s = detect(&v);
        assert_eq!(s.verdict, Steadiness::Steady);
        // 700 is more than 10% under 800: the stretch starts at the plateau.
        assert_eq!(s.from_interval, Some(4));
    }

    #[test]
    fn a_steady_run_that_falls_off_a_cliff_says_where_and_that_it_stayed_below() {
        let mut v = noisy(1900.0, 10);
        v.extend(noisy(150.0, 8));
        let s = detect(&v);
        assert_eq!(s.verdict, Steadiness::Left);
        assert_eq!(s.from_interval, Some(0));
        assert_eq!(s.until_interval, Some(10));
        assert_eq!(s.after, Some(After::Below));
        assert!(s.cliff());
    }

    #[test]
    fn a_dip_of_one_interval_is_left_and_come_back_to_not_a_cliff() {
        let mut v = noisy(500.0, 10);
        v.push(200.0);
        v.extend(noisy(500.0, 6));
        let s = detect(&v);
        assert_eq!(s.verdict, Steadiness::Left);
        assert_eq!(s.after, Some(After::Same));
        assert!(!s.cliff());
    }

    #[test]
    fn a_run_that_rises_after_its_stretch_is_not_called_a_cliff() {
        let mut v = noisy(100.0, 8);
        v.extend(noisy(300.0, 8));
        let s = detect(&v);
        assert_eq!(s.after, Some(After::Above));
        assert!(!s.cliff());
    }

    #[test]
    fn a_series_that_swings_every_interval_is_never_steady() {
        let v: Vec<f64> = (0..30)
            .map(|i| if i % 2 == 0 { 100.0 } else { 60.0 })
            .collect();
        assert_eq!(detect(&v).verdict, Steadiness::Never);
    }

    #[test]
    fn a_slow_steady_climb_within_the_band_is_not_steady_by_its_slope() {
        // Each window spans ±8% around its mean (inside the band) but the line through it
        // climbs 16% of the mean: a trend, not a steady state.
        let v: Vec<f64> = (0..20).map(|i| 100.0 * 1.04f64.powi(i)).collect();
        assert_eq!(detect(&v).verdict, Steadiness::Never);
    }

    #[test]
    fn fewer_intervals_than_a_window_are_too_short_to_tell() {
        let s = detect(&[100.0, 100.0, 100.0]);
        assert_eq!(s.verdict, Steadiness::TooShort);
        assert_eq!(s.from_interval, None);
    }

    #[test]
    fn leaving_in_the_last_interval_gives_no_direction() {
        let mut v = noisy(100.0, 10);
        v.push(40.0);
        let s = detect(&v);
        assert_eq!(s.verdict, Steadiness::Left);
        assert_eq!(s.after, Some(After::TooFew));
        assert!(!s.cliff());
    }

    #[test]
    fn a_series_of_zeros_is_never_steady() {
        assert_eq!(detect(&[0.0; 10]).verdict, Steadiness::Never);
    }
}
