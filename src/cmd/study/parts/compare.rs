//! compare: `fast` against dd, cat and fio at 1 MiB on the scratch file.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, ignore, something};
use crate::cmd::compare::CompareReport;
use crate::measure::env::Environment;
use crate::options::CompareOptions;
use crate::report::page::{Headline, Section};
use crate::results::study::answers::{Measured, PooledRun};
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::{MIB, format_size};
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "compare",
    "The fastest reader against dd, cat and fio",
    "`fast` against dd, cat and fio",
    [1.8, 9.3, 40.0],
);

/// The part.
pub struct Compare;

impl Kept for Compare {
    type Result = CompareReport;
    const FIELD: Option<&'static str> = Some("compare");
    const ALWAYS: bool = true;
}

impl PartView for Compare {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|c| crate::report::views::compare::section(c, PART))
    }

    fn headlines(&self, r: &StudyReport) -> Vec<Headline> {
        self.kept(r)
            .map(crate::report::views::compare::headlines)
            .unwrap_or_default()
    }

    /// Its `ioscope run` contender in each state (the stream engine in calls of 1 MiB, as
    /// the other parts read); `fast` and the other tools read another way. Its runs carry
    /// no interference marks, and their state is proven by the residency before each.
    fn reads(&self, r: &StudyReport) -> Vec<Measured> {
        let Some(c) = self.kept(r) else {
            return Vec::new();
        };
        c.rows
            .iter()
            .filter_map(|row| {
                let who = c.contenders.iter().find(|x| x.name == row.contender)?;
                let engine = match who.argv.iter().position(|a| a == "--engine") {
                    Some(i) => who.argv.get(i + 1)?.clone(),
                    None => "stream".to_string(),
                };
                (who.argv.get(1).map(String::as_str) == Some("run") && !who.direct).then(|| {
                    Measured {
                        part: PART,
                        what: row.contender.clone(),
                        state: row.cache,
                        block_size: c.block_size,
                        engine,
                        first_after_eviction: false,
                        runs: row
                            .runs
                            .iter()
                            .map(|x| PooledRun::unmarked(x.bytes_per_second))
                            .collect(),
                        left_out: (!row.state_ok).then(|| {
                            format!(
                                "not every run started {} by the residency before it",
                                row.cache.name()
                            )
                        }),
                    }
                })
            })
            .collect()
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::compare(media, PART)
    }
}

impl StudyPart for Compare {
    fn skip_reason(&self, cx: &Context) -> Option<String> {
        (cx.size < MIB).then(|| {
            format!(
                "the file ({}) is too small to compare readers on",
                format_size(cx.size)
            )
        })
    }

    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let options = CompareOptions {
            path: cx.scratch.path().to_path_buf(),
            block_size: MIB,
            block_size_text: "1m".into(),
            states: cx.states(),
            runs: crate::measure::converge::Stopping::fixed(cx.budget.compare_repeat),
            commands: Vec::new(),
            export: cx.export(),
        };
        let r = crate::cmd::compare::execute(&options, cx.harness, &mut ignore)?;
        let r = something(r.rows.is_empty() && !r.complete, r)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
