//! What a study part is: the trait every part's file implements (how it runs, its section,
//! its summary lines, its CSV, its measures on the media page) and the typed results the
//! parts keep in the study's result. The list of parts is `parts::PARTS`; a new part is a
//! file under `parts/` and one line there.
//!
//! A part is a command run on the study's scratch file and that command's section of the
//! page, so its file names both its command (`cmd::`) and its view (`report::views::`): the
//! one place below `report/` that names a view, as `app.rs` is for whole commands.

use super::{Context, Outcome, StudyReport};
use crate::measure::caveat::Caveat;
use crate::measure::env::Environment;
use crate::report::csv::Table;
use crate::report::page::{Headline, Section};
use crate::report::svg::Chart;
use crate::report::views::media_figures::{Measure, Medium};
use crate::results::study::{Results, Stored};
use crate::warning::Warning;
use crate::workload::study::Part;
use anyhow::Result;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// One part of the study.
pub trait StudyPart: Sync {
    /// Its names and its time at each level.
    fn part(&self) -> Part;

    /// Whether every other part needs it (write-read: they read its file): then its failure
    /// ends the study instead of being recorded.
    fn required(&self) -> bool {
        false
    }

    /// Why it cannot run here, if it cannot.
    fn skip_reason(&self, _cx: &Context) -> Option<String> {
        None
    }

    /// Runs it into `report`: done, partial (interrupted after measuring some), or skipped
    /// when it turns out it cannot be measured here.
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome>;

    /// Its section of the page, explained with the caches of `env`; `None` when it kept no
    /// result.
    fn section(&self, r: &StudyReport, env: &Environment) -> Option<Section>;

    /// Where its lines come in the summary: lower first, parts of one rank in the order they
    /// run.
    fn summary_rank(&self) -> u8 {
        50
    }

    /// Its lines in the summary: the figures that matter, with their spread.
    fn headlines(&self, _r: &StudyReport) -> Vec<Headline> {
        Vec::new()
    }

    /// The warnings its result carries.
    fn warnings<'a>(&self, r: &'a StudyReport) -> &'a [Warning];

    /// Its CSV in the report directory (`<name>.csv`), when it kept a result.
    fn table(&self, _r: &StudyReport) -> Option<Table> {
        None
    }

    /// Whether its checks held (true when it kept no result).
    fn ok(&self, _r: &StudyReport) -> bool {
        true
    }

    /// Its result's own caveats.
    fn caveats<'a>(&self, _r: &'a StudyReport) -> &'a [Caveat] {
        &[]
    }

    /// Its measures on the page that sets studies side by side, merged over the media.
    fn measures(&self, _media: &[Medium]) -> Vec<Measure> {
        Vec::new()
    }

    /// The sentences it adds below its measures there, on what the media's figures rest on.
    fn media_sentences(&self, _media: &[Medium]) -> Vec<String> {
        Vec::new()
    }

    /// The chart of one of its measures there (`None`: none); by default the measure drawn
    /// per medium.
    fn media_chart(&self, media: &[Medium], ms: &Measure) -> Option<Chart> {
        let labels: Vec<String> = media.iter().map(|m| m.label.clone()).collect();
        Some(crate::report::views::media::chart(ms, &labels))
    }

    /// Why a study without a step of this part lacks it, when that is not "not part of this
    /// study" (a study made before the part existed).
    fn absent(&self, _r: &StudyReport) -> Option<&'static str> {
        None
    }
}

/// A part's typed result, kept in the study's result under its field.
pub trait Kept: StudyPart {
    /// Its result.
    type Result: Serialize + DeserializeOwned + Clone + Debug + Send + Sync + 'static;
    /// The field of `study.json` it is saved under (`None`: it keeps its rows in fields of
    /// the study's own, as write-read does).
    const FIELD: Option<&'static str>;
    /// Whether the field is written as `null` when the part kept nothing (the parts older
    /// studies always wrote; a newer part leaves its field out).
    const ALWAYS: bool = false;

    /// Its result in `r`, if it kept one.
    fn kept<'a>(&self, r: &'a StudyReport) -> Option<&'a Self::Result> {
        r.results.get(self.part())
    }

    /// Keeps `result` in `report`: done, or partial when `complete` says it was interrupted
    /// after measuring some.
    fn keep(&self, report: &mut StudyReport, result: Self::Result, complete: bool) -> Outcome {
        report.results.put(self.part(), result);
        if complete {
            Outcome::Done
        } else {
            Outcome::Partial
        }
    }
}

/// Writes the field of part `p` (if it has one and it is of the `always` kind).
pub(super) fn save_one<P: Kept, M: serde::ser::SerializeMap>(
    p: &P,
    results: &Results,
    map: &mut M,
    always: bool,
) -> Result<(), M::Error> {
    if let Some(field) = P::FIELD
        && P::ALWAYS == always
    {
        let kept: Option<&P::Result> = results.get(p.part());
        if always || kept.is_some() {
            map.serialize_entry(field, &kept)?;
        }
    }
    Ok(())
}

/// A part's result read back from its field: `None` when the field was `null`.
pub(super) type Loaded = Result<Option<(Part, Box<dyn Stored>)>, serde_json::Error>;

/// Reads the field of part `p` from a saved study when `field` is its: `None` when it is not.
pub(super) fn load_one<P: Kept>(
    p: &P,
    field: &str,
    value: &mut Option<serde_json::Value>,
) -> Option<Loaded> {
    if P::FIELD != Some(field) {
        return None;
    }
    let value = value.take().unwrap_or_default();
    Some(
        serde_json::from_value::<Option<P::Result>>(value)
            .map(|r| r.map(|r| (p.part(), Box::new(r) as Box<dyn Stored>))),
    )
}
