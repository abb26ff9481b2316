//! patterns: every iozone test at 64 KiB records, on a file of its own in the directory.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, ignore, something};
use crate::cmd::patterns::{PatternsReport, Test};
use crate::measure::env::Environment;
use crate::options::PatternsOptions;
use crate::report::page::Section;
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::KIB;
use crate::workload::plan::DEFAULT_STRIDE;
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "patterns",
    "Access patterns (iozone's tests)",
    "iozone's tests",
    [0.2, 1.9, 60.0],
);

/// The part.
pub struct Patterns;

impl Kept for Patterns {
    type Result = PatternsReport;
    const FIELD: Option<&'static str> = Some("patterns");
    const ALWAYS: bool = true;
}

impl PartView for Patterns {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, env: &Environment) -> Option<Section> {
        self.kept(r).map(|p| {
            crate::report::views::patterns::section(p, env.storage.device.is_some(), PART)
        })
    }

    fn ok(&self, r: &StudyReport) -> bool {
        self.kept(r).is_none_or(|x| x.ok())
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::patterns(media, PART)
    }
}

impl StudyPart for Patterns {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let b = cx.budget;
        let options = PatternsOptions {
            path: cx.dir.to_path_buf(),
            sizes: vec![b.patterns_size],
            records: vec![64 * KIB],
            auto: false,
            tests: Test::ALL.to_vec(),
            runs: crate::measure::converge::Stopping::fixed(b.patterns_runs),
            cache: cx.cold_if_possible(),
            stride: DEFAULT_STRIDE,
            stride_given: false,
            read_percent: 50,
            draws: false,
            drop_caches: false,
            keep: false,
            force: false,
            min_free: cx.options.min_free,
            export: cx.export(),
        };
        let r = crate::cmd::patterns::execute(&options, cx.harness, &mut ignore)?;
        let r = something(r.results.is_empty() && !r.complete, r)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
