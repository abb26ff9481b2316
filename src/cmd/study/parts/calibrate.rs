//! calibrate: the file size whose read lands in the level's window (the scratch file may
//! grow, so it runs last); skipped, with the reason, when none does within the level's cap.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport};
use crate::cmd::calibrate::CalibrateReport;
use crate::harness::Setup;
use crate::engine;
use crate::error::Failure;
use crate::measure::env::Environment;
use crate::options::CalibrateOptions;
use crate::measure::cache::{CacheState, Verdict};
use crate::report::page::{Headline, Section};
use crate::results::study::answers::{Measured, PooledRun};
use crate::units::format_size;
use crate::report::svg::Chart;
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::MIB;
use crate::workload::study::Part;
use anyhow::Result;
use std::time::Duration;

/// Its names and seconds at each level: at the standard level it varies most (3.9 to
/// 14.3 s over a day's runs: how far it grows the file depends on the cold rate it meets).
pub const PART: Part = Part::new(
    "calibrate",
    "A file size for a reasonable read time",
    "The file size for a read in the calibration window",
    [2.8, 8.0, 90.0],
);

/// The part.
pub struct Calibrate;

impl Kept for Calibrate {
    type Result = CalibrateReport;
    const FIELD: Option<&'static str> = Some("calibrate");
    const ALWAYS: bool = true;
}

impl PartView for Calibrate {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|c| crate::report::views::calibrate::section(c, PART))
    }

    fn headlines(&self, r: &StudyReport) -> Vec<Headline> {
        self.kept(r)
            .map(crate::report::views::calibrate::headline)
            .into_iter()
            .collect()
    }

    /// Its calibrated read (the probe of the size it chose), in the state it read.
    fn reads(&self, r: &StudyReport) -> Vec<Measured> {
        let Some(c) = self.kept(r) else {
            return Vec::new();
        };
        let Some(probe) = c.probes.iter().rev().find(|p| p.bytes == c.bytes) else {
            return Vec::new();
        };
        if c.cache == CacheState::AsIs {
            return Vec::new();
        }
        let proven = probe
            .cache
            .is_some_and(|p| p.asked == c.cache && p.verdict == Verdict::Proven);
        vec![Measured {
            part: PART,
            what: format!("calibrated read of {}", format_size(c.bytes)),
            state: c.cache,
            block_size: c.block_size,
            engine: c.engine.clone(),
            first_after_eviction: false,
            runs: vec![PooledRun::unmarked(probe.bytes_per_second)],
            left_out: (!proven).then(|| {
                format!(
                    "not proven {} by the residency before it and the device bytes",
                    c.cache.name()
                )
            }),
        }]
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::calibrate(media, PART)
    }

    fn media_chart(&self, media: &[Medium], _ms: &Measure) -> Option<Option<Chart>> {
        Some(crate::report::views::media::probes(media, PART))
    }
}

impl StudyPart for Calibrate {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let b = cx.budget;
        let (min, max) = b.calibrate_window;
        let options = CalibrateOptions {
            path: cx.scratch.path().to_path_buf(),
            block_size: MIB,
            min: Duration::from_secs_f64(min),
            max: Duration::from_secs_f64(max),
            cache: cx.cold_if_possible(),
            setup: Setup::single(&engine::stream::Stream),
            grow: true,
            max_bytes: b.calibrate_cap,
            seed: cx.seed,
            min_free: cx.options.min_free,
            expect: crate::files::file_id(cx.scratch.file()),
            json: false,
        };
        match crate::cmd::calibrate::execute(&options, cx.harness) {
            Ok(r) => Ok(self.keep(report, r, true)),
            // No size fits the window here within the level's cap (a fast medium read
            // warm): a finding, not a failure.
            Err(e) => match e.downcast_ref::<Failure>() {
                Some(Failure::Check(reason)) => Ok(Outcome::Skipped {
                    reason: reason.clone(),
                }),
                _ => Err(e),
            },
        }
    }
}
