//! The one rule that decides what two measured figures say about each other, so that every
//! sentence that compares them — "warm is 3.1x cold", "the methods barely differ", "the
//! second cold read repeats the first" — is chosen by the numbers, never written around
//! them. The thresholds live here and only here (GUIDE.md, "How sentences are chosen").
//!
//! Two figures are the **same** when their medians are within [`SAME_WITHIN`] of each other;
//! one is **above** the other when the medians differ by more than that *and* the repeats
//! do not overlap (every run of one beats every run of the other; with one run each, the
//! medians alone decide); otherwise the difference is **unclear**: the repeats scatter more
//! than the medians differ, and a sentence must say that instead of a direction.

use super::stats::Summary;

/// Two medians whose ratio (larger over smaller) is below this count as the same: 10%.
pub const SAME_WITHIN: f64 = 1.10;

/// A figure at least this share of another is "close to it": what they share (the cost of
/// a call, say) outweighs what differs (cold reads of small blocks against warm ones).
pub const CLOSE_SHARE: f64 = 0.7;

/// A fitted model "explains" a curve only when it predicts every point's time within this
/// share (the median over the point's runs): 25%.
pub const MODEL_FITS: f64 = 0.25;

/// A curve "rises steeply" where the rate at least doubles (the small blocks' rise to the
/// memory page).
pub const STEEP: f64 = 2.0;

/// A curve "falls" after its peak where a point drops below this share of the peak: 85%.
pub const FALLEN: f64 = 0.85;

/// The repeats of one measurement "scatter" when the fastest is more than this over the
/// slowest: 25%, so that a difference of medians near [`SAME_WITHIN`] is within the noise.
pub const SCATTERED: f64 = 1.25;

/// Whether a figure's repeats scatter beyond [`SCATTERED`] (never for a single run).
pub fn scattered(f: Figure) -> bool {
    f.n > 1 && f.max > SCATTERED * f.min.max(1e-12)
}

/// A device's mean queue (`aqu-sz`) at or above this is "queued": requests waited at the
/// device, so it was not idle between them, whatever the program had in flight.
pub const QUEUED: f64 = 2.0;

/// A device moved "clearly more" than a run during it when its bytes in the run's
/// direction exceed the run's own by this factor: 1.25x, as [`SCATTERED`]. The run's own
/// include what the kernel fetched for it (read-ahead), so the margin covers only the file
/// system's journal and metadata and read-ahead beyond what the process is charged; a
/// direct-I/O `disk` row measured at 1.45x (274 MB another process read) must be marked.
pub const OTHER_IO: f64 = 1.25;

/// ... and by at least these bytes (1 MiB), so that the journal and metadata written
/// around a small run are not taken for another process.
pub const OTHER_IO_BYTES: u64 = 1 << 20;

/// A resource was "contended" during a run when some task on the machine waited for it
/// (`/proc/pressure`, the `some` line) for at least this share of the run's wall time: 20%.
pub const STALLED: f64 = 0.2;

/// ... and for at least this long (50 ms): the kernel's stall counters are the whole
/// machine's, so over a run of a few milliseconds one other task's wait would be a large
/// share of nothing.
pub const STALLED_US: u64 = 50_000;

/// A study (or one of its parts) took "clearly longer" than estimated when it took more than
/// this times its estimate: 1.25x, as [`SCATTERED`]. The estimates are 1.2x the median of
/// quiet runs (`workload::estimate`), so a quiet run ends near 0.8 of its estimate and one
/// past this took about 1.5x a quiet run's time.
pub const OVERRUN: f64 = 1.25;

/// ... and by at least this many seconds (1 s), so that a part estimated at a tenth of a
/// second is not named for taking three.
pub const OVERRUN_SECONDS: f64 = 1.0;

/// Whether `actual` seconds are clearly longer than `estimated` ([`OVERRUN`],
/// [`OVERRUN_SECONDS`]).
pub fn overran(actual: f64, estimated: f64) -> bool {
    actual > OVERRUN * estimated && actual - estimated >= OVERRUN_SECONDS
}

/// Figures "alike" enough that one bound limits them all (every transfer pair against the
/// device's write rate when each file is fsynced): the fastest within 25% of the slowest.
pub const ALIKE: f64 = 1.25;

/// A figure as the rule sees it: the median and the range of its repeats.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figure {
    /// The median (or the one value).
    pub median: f64,
    /// The smallest repeat.
    pub min: f64,
    /// The largest repeat.
    pub max: f64,
    /// How many repeats.
    pub n: usize,
}

impl Figure {
    /// One measurement.
    pub fn one(value: f64) -> Self {
        Self {
            median: value,
            min: value,
            max: value,
            n: 1,
        }
    }
}

impl From<&Summary> for Figure {
    fn from(s: &Summary) -> Self {
        Self {
            median: s.median,
            min: s.min,
            max: s.max,
            n: s.n,
        }
    }
}

/// What one figure is to another.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Relation {
    /// Within [`SAME_WITHIN`]: no difference worth a cause.
    Same,
    /// Clearly higher: the median ratio (first over second) and no overlap of the repeats.
    Above(f64),
    /// Clearly lower: the median ratio (first over second, below 1) and no overlap.
    Below(f64),
    /// The medians differ beyond [`SAME_WITHIN`] (ratio first over second) but the repeats
    /// overlap: the spread is wider than the difference, so no direction is claimed.
    Unclear(f64),
}

/// The ratio `a / b`, with a zero or negative `b` treated as a tiny positive number.
pub fn ratio(a: f64, b: f64) -> f64 {
    a / b.max(1e-12)
}

/// Whether two figures are the same: medians within [`SAME_WITHIN`] of each other.
pub fn same(a: f64, b: f64) -> bool {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    hi < SAME_WITHIN * lo.max(1e-12) || hi == lo
}

/// What `a` is to `b` by the one rule.
pub fn relate(a: Figure, b: Figure) -> Relation {
    if same(a.median, b.median) {
        return Relation::Same;
    }
    let r = ratio(a.median, b.median);
    let overlap = a.min <= b.max && b.min <= a.max;
    let single = a.n <= 1 && b.n <= 1;
    match (r > 1.0, overlap && !single) {
        (_, true) => Relation::Unclear(r),
        (true, false) => Relation::Above(r),
        (false, false) => Relation::Below(r),
    }
}

/// How many of `others` the figure `top` does not stand clearly above by [`relate`]: those
/// it cannot be told from (medians within [`SAME_WITHIN`], or repeats that overlap). Zero is
/// what "the best", "the fastest" need; more makes `top` only first by the median.
pub fn ties(top: Figure, others: impl IntoIterator<Item = Figure>) -> usize {
    others
        .into_iter()
        .filter(|&o| !matches!(relate(top, o), Relation::Above(_)))
        .count()
}

/// What would tell two figures apart that the rule cannot: the words every sentence on
/// overlapping runs ends with.
pub const WHAT_WOULD_TELL: &str = "more --repeat or a quieter machine would tell";

/// The spread of a set of figures, largest over smallest median, and whether it is within
/// the rule's "same" (every pair within [`SAME_WITHIN`]).
pub fn spread(medians: &[f64]) -> (f64, bool) {
    let lo = medians.iter().copied().fold(f64::MAX, f64::min);
    let hi = medians.iter().copied().fold(0.0f64, f64::max);
    if medians.is_empty() {
        return (1.0, true);
    }
    (ratio(hi, lo), same(hi, lo))
}

/// How many bootstrap resamples give a baseline comparison's confidence interval: enough
/// that the 2.5th and 97.5th percentiles move by less than the figures' own rounding.
pub const RESAMPLES: usize = 2000;

/// The confidence of that interval: 95%.
pub const CONFIDENCE: f64 = 0.95;

/// A figure moved against its baseline only when the change exceeds its noise floor *and*
/// this (5%): the floor is measured (the runs' relative half-interquartile range, the larger
/// of the old and the new), but it is measured inside one process, and two processes of the
/// same command differ by more than their runs do (here: ten sweeps' medians 4.8–5.3% apart
/// in standard deviation while each one's runs agreed to 1.2%; bench/RESULTS.md). At 3%
/// one A/A check in four said "regressed" on a quiet machine; at 5% one in ten.
pub const MOVED_AT_LEAST: f64 = 0.05;

/// A traced figure is not the program's own speed when tracing took more than this share
/// of the time the program timed (issue 39: a traced fio ran 17x slower and was told it
/// "agrees"): its claim line says so, and by about how much, before any verdict.
pub const TRACING_DISTORTS: f64 = 0.10;

/// From this many runs a side the noise floor is the half-interquartile range; with fewer,
/// the quartiles rest on one or two runs (the half-IQR of 2 runs is a quarter of their
/// range), and the floor is the half-range: all the spread there is.
pub const FLOOR_IQR_FROM: usize = 8;

/// From this many processes a side (`--processes`), a baseline comparison draws its
/// interval over processes, not runs: the runs of one process move together (ten sweeps of
/// 15 runs: medians 4.8–5.3% apart in standard deviation, the runs inside each 1.2%), so
/// resampling them as independent gives an interval too narrow for what a new process
/// gives. Fewer than four processes give too few distinct resamples to be an interval.
pub const LEVEL_FROM_PROCESSES: usize = 4;

/// The machine's load moved since a baseline when its 1-minute average differs by more than
/// [`SAME_WITHIN`] *and* by at least this many tasks (1): one more task wanting a CPU.
pub const LOAD_MOVED: f64 = 1.0;

/// What a figure did since its baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Movement {
    /// Better beyond the noise: the interval excludes no change, the change exceeds the floor.
    Improved,
    /// Worse beyond the noise, by the same rule.
    Regressed,
    /// The change is inside the noise floor or its interval holds no change.
    WithinNoise,
    /// One side has fewer than two runs: no spread, so no floor and no interval.
    CannotTell,
}

impl Movement {
    /// The words of a verdict in a table.
    pub fn words(self) -> &'static str {
        match self {
            Self::Improved => "improved",
            Self::Regressed => "regressed",
            Self::WithinNoise => "within noise",
            Self::CannotTell => "cannot tell (n < 2)",
        }
    }
}

/// The one rule for a figure against its baseline: `change` is new median over old minus 1,
/// `ci` its confidence interval, `floor` the noise measured now (relative), `runs` the fewer
/// runs of the two sides; `higher_is_better` gives the sign of "worse".
pub fn movement(
    change: f64,
    ci: (f64, f64),
    floor: f64,
    runs: usize,
    higher_is_better: bool,
) -> Movement {
    if runs < 2 {
        return Movement::CannotTell;
    }
    let excludes_zero = ci.0 > 0.0 || ci.1 < 0.0;
    if !excludes_zero || change.abs() <= floor.max(MOVED_AT_LEAST) {
        return Movement::WithinNoise;
    }
    if (change > 0.0) == higher_is_better {
        Movement::Improved
    } else {
        Movement::Regressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(median: f64, min: f64, max: f64) -> Figure {
        Figure {
            median,
            min,
            max,
            n: 3,
        }
    }

    #[test]
    fn medians_within_ten_percent_are_the_same_whatever_the_spread() {
        assert_eq!(
            relate(Figure::one(100.0), Figure::one(109.0)),
            Relation::Same
        );
        assert_eq!(
            relate(fig(100.0, 10.0, 500.0), fig(95.0, 90.0, 99.0)),
            Relation::Same
        );
        assert!(!same(1820.0, 2770.0), "1.5x apart is not the same");
    }

    #[test]
    fn a_clear_difference_needs_repeats_that_do_not_overlap() {
        match relate(fig(300.0, 280.0, 320.0), fig(100.0, 90.0, 110.0)) {
            Relation::Above(r) => assert!((r - 3.0).abs() < 1e-9),
            other => panic!("{other:?}"),
        }
        match relate(fig(100.0, 90.0, 110.0), fig(300.0, 280.0, 320.0)) {
            Relation::Below(r) => assert!((r - 1.0 / 3.0).abs() < 1e-9),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn overlapping_repeats_make_a_difference_of_medians_unclear() {
        match relate(fig(200.0, 90.0, 400.0), fig(100.0, 80.0, 250.0)) {
            Relation::Unclear(r) => assert!((r - 2.0).abs() < 1e-9),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn single_runs_are_decided_by_their_values() {
        assert!(matches!(
            relate(Figure::one(2770.0), Figure::one(1820.0)),
            Relation::Above(_)
        ));
        assert!(matches!(
            relate(Figure::one(0.65), Figure::one(1.0)),
            Relation::Below(_)
        ));
    }

    #[test]
    fn the_top_figure_is_tied_with_those_it_does_not_stand_clearly_above() {
        let top = fig(300.0, 280.0, 320.0);
        // Apart from both: no tie, so "the best" holds.
        assert_eq!(
            ties(top, [fig(100.0, 90.0, 110.0), fig(200.0, 190.0, 210.0)]),
            0
        );
        // 0.93x: the same; 0.67x but runs reaching 290: overlapping; 0.33x apart.
        let others = [
            fig(280.0, 275.0, 285.0),
            fig(200.0, 120.0, 290.0),
            fig(100.0, 90.0, 110.0),
        ];
        assert_eq!(ties(top, others), 2);
        // Single runs: 10% apart is apart.
        assert_eq!(ties(Figure::one(120.0), [Figure::one(100.0)]), 0);
    }

    #[test]
    fn a_run_overruns_its_estimate_only_clearly_and_by_seconds() {
        assert!(overran(84.4, 48.3), "the busy VM's standard study");
        assert!(!overran(45.0, 48.3), "a quiet one");
        assert!(
            !overran(0.3, 0.1),
            "three times a tenth of a second is not worth naming"
        );
        assert!(!overran(58.0, 48.3), "1.2x is within the padding");
    }

    #[test]
    fn a_baseline_change_counts_only_beyond_the_floor_and_the_interval() {
        // 10% slower in MiB/s, tight runs: regressed.
        assert_eq!(
            movement(-0.10, (-0.12, -0.08), 0.02, 5, true),
            Movement::Regressed
        );
        // The same change of a time (lower is better) is an improvement.
        assert_eq!(
            movement(-0.10, (-0.12, -0.08), 0.02, 5, false),
            Movement::Improved
        );
        // Beyond the interval but inside the floor: noise.
        assert_eq!(
            movement(-0.10, (-0.12, -0.08), 0.15, 5, true),
            Movement::WithinNoise
        );
        // Beyond the floor but the interval holds no change: noise.
        assert_eq!(
            movement(-0.10, (-0.2, 0.01), 0.02, 5, true),
            Movement::WithinNoise
        );
        // One run on a side: no floor, no interval.
        assert_eq!(
            movement(-0.5, (-0.5, -0.5), 0.0, 1, true),
            Movement::CannotTell
        );
        // Runs that agree to the digit: a 1% change is still within the noise.
        assert_eq!(
            movement(0.01, (0.01, 0.01), 0.0, 5, true),
            Movement::WithinNoise
        );
    }

    #[test]
    fn the_spread_of_many_figures_uses_the_same_threshold() {
        assert!(spread(&[100.0, 105.0, 108.0]).1);
        let (r, same) = spread(&[609.0, 7174.0]);
        assert!(!same && (r - 7174.0 / 609.0).abs() < 1e-9);
    }
}
