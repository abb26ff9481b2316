//! The one source of the study's time estimates: seconds per part at each level, measured on
//! the 2-vCPU development VM (`bench/study.sh`), and the words every place that states one
//! uses — the README (a test reads it), `study --help`, the `--level` value list and the
//! line a study starts with. The progress bar corrects the estimate as parts finish.

use super::study::{Level, Part};
use clap::builder::PossibleValue;

impl Level {
    /// Seconds `part` takes at this level on the 2-vCPU development VM with a virtio disk
    /// (the median of measured runs; a faster or slower medium scales them). Each part's
    /// file states its three (`cmd/study/parts/`). Quick and standard: the medians of two
    /// runs each on the idle VM (load 0.8, bench/study_estimate.sh, 2026-11-24 with the disk
    /// part: quick 8.5 and 7.8 s, standard 45.4 and 44.0 s) times 1.2, so the whole is within
    /// 1.5x of a quiet run. On the same VM busy with five compiling sessions (load ~10) the
    /// same studies took 15-26 s and 125-178 s: the progress bar's ETA follows the parts as
    /// they finish. Thorough: not re-measured.
    pub fn estimate(self, part: Part) -> f64 {
        part.seconds(self)
    }

    /// Seconds the whole study takes at this level (every part).
    pub fn seconds(self) -> f64 {
        super::study::all().map(|p| self.estimate(p)).sum()
    }

    /// The whole study at this level in the words every place uses: `about 1 min`.
    pub fn about(self) -> String {
        about(self.seconds())
    }

    /// What the level measures, after its time (the `--level` value list).
    pub fn what(self) -> &'static str {
        match self {
            Self::Quick => "every part once, few points",
            Self::Standard => "the classic block sizes (128 B to 16 MiB), 3 runs per point",
            Self::Thorough => {
                "the classic report's 50 runs per point, 1 B to 64 MiB, a 5–15 s calibration"
            }
        }
    }
}

/// Seconds still to go in a study: the current part's estimate and those of the parts after
/// it (`remaining`), scaled by how the parts finished so far compared with theirs
/// (`done_actual` over `done_estimate`) and, once the current part has run past its own
/// estimate, by its overrun too: a busy machine's slowness shows in the ETA as it happens,
/// not only after the part ends. The scale is bounded (0.2x to 5x) so that one odd part does
/// not swing it wildly.
pub fn eta(
    done_estimate: f64,
    done_actual: f64,
    estimate: f64,
    elapsed: f64,
    remaining: f64,
) -> f64 {
    let (mut est, mut act) = (done_estimate, done_actual);
    if elapsed > estimate {
        est += estimate;
        act += elapsed;
    }
    let ratio = if est > 0.5 {
        (act / est).clamp(0.2, 5.0)
    } else {
        1.0
    };
    (estimate * ratio - elapsed).max(0.0) + remaining * ratio
}

/// Every level, quickest first.
pub const LEVELS: [Level; 3] = [Level::Quick, Level::Standard, Level::Thorough];

/// A rough duration: `about 25 s`, `about 3 min`, `about 1.5 h`.
pub fn about(seconds: f64) -> String {
    if seconds < 90.0 {
        format!("about {:.0} s", (seconds / 5.0).ceil().max(1.0) * 5.0)
    } else if seconds < 5400.0 {
        format!("about {:.0} min", (seconds / 60.0).round())
    } else {
        format!("about {:.1} h", seconds / 3600.0)
    }
}

/// The help of `study --level`.
pub fn level_help() -> String {
    format!(
        "How much to measure: quick ({}), standard ({}), thorough ({}), as measured on a 2-vCPU VM; a slower medium takes longer",
        Level::Quick.about(),
        Level::Standard.about(),
        Level::Thorough.about()
    )
}

/// How the README states a level's time: `` `quick` (about 1 min``.
pub fn readme_phrase(level: Level) -> String {
    format!("`{}` ({}", level.name(), level.about())
}

impl clap::ValueEnum for Level {
    fn value_variants<'a>() -> &'a [Self] {
        &LEVELS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.name()).help(format!("{}: {}", self.about(), self.what())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimates_are_within_one_and_a_half_times_of_the_runs_measured() {
        // bench/study_estimate.sh, 2026-11-24 (with the disk part): process wall times of two
        // runs per level on the idle VM (load 0.8).
        for (level, runs) in [(Level::Quick, [8.5, 7.8]), (Level::Standard, [45.4, 44.0])] {
            let e = level.seconds();
            for r in runs {
                assert!(
                    e / r <= 1.5 && r / e <= 1.5,
                    "{level:?}: {e} s against {r} s"
                );
            }
        }
    }

    #[test]
    fn on_time_parts_leave_the_eta_as_estimated() {
        assert_eq!(eta(10.0, 10.0, 4.0, 1.0, 20.0), 23.0);
    }

    #[test]
    fn parts_that_took_twice_their_estimate_double_what_is_left() {
        assert_eq!(eta(10.0, 20.0, 4.0, 1.0, 20.0), 8.0 - 1.0 + 40.0);
    }

    #[test]
    fn the_current_part_running_past_its_estimate_counts_at_once() {
        // Nothing done yet; the first part, estimated 10 s, has run 20 s: the 30 s left
        // scale by its 2x (before, the ETA stayed at 30 s until the part ended).
        assert_eq!(eta(0.0, 0.0, 10.0, 20.0, 30.0), 60.0);
    }

    #[test]
    fn durations_are_rounded_to_words() {
        assert_eq!(about(14.0), "about 15 s");
        assert_eq!(about(61.0), "about 65 s");
        assert_eq!(about(150.0), "about 3 min");
        assert_eq!(about(1858.0), "about 31 min");
        assert_eq!(about(7200.0), "about 2.0 h");
    }

    #[test]
    fn the_help_and_the_value_list_state_the_levels_own_estimates() {
        let help = level_help();
        for level in LEVELS {
            assert!(help.contains(&level.about()), "{help}");
            let value = clap::ValueEnum::to_possible_value(&level).unwrap();
            assert!(
                value
                    .get_help()
                    .is_some_and(|h| h.to_string().starts_with(&level.about()))
            );
        }
    }
}
