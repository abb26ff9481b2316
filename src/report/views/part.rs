//! What the page makes of a study part: the half of a part that renders and keeps its
//! result (its section, its summary lines, its CSV, its measures on the media page, its
//! typed result and the field of `study.json` it is saved under). A part's file under
//! `cmd/study/parts/` implements it beside the half that runs (`cmd::study::StudyPart`), and
//! the registry there fills [`PART_VIEWS`], so the views go over the parts without naming a
//! command: a new part is still one file and one registry line.

use super::media_figures::{Measure, Medium};
use crate::measure::caveat::Caveat;
use crate::measure::env::Environment;
use crate::report::csv::Table;
use crate::report::page::{Headline, Section};
use crate::report::svg::Chart;
use crate::report::view::Exportable;
use crate::results::study::answers::Measured;
use crate::results::study::{Outcome, Results, Stored, StudyReport};
use crate::warning::Warning;
use crate::workload::study::Part;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt::Debug;

/// One part of the study, as the page shows it (its warnings and CSV come from its kept
/// result: [`FromKept`]).
pub trait PartView: Sync + FromKept {
    /// Its names and its time at each level.
    fn part(&self) -> Part;

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

    /// What it measured of the study's questions — the read of the scratch file cold and
    /// warm — for the summary's one answer per question (`results::study::answers`).
    fn reads(&self, _r: &StudyReport) -> Vec<Measured> {
        Vec::new()
    }

    /// Whether its checks held (true when it kept no result): by default its result's own
    /// verdict (`Exportable::ok`: a disk row's failed verify, compare's runs that did not
    /// start in their state), so that a failed check in any part fails the study.
    fn ok(&self, r: &StudyReport) -> bool {
        self.checks_held(r)
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

    /// The chart of one of its measures there: `None` (the default) for the measure drawn
    /// per medium, `Some(None)` for no chart.
    fn media_chart(&self, _media: &[Medium], _ms: &Measure) -> Option<Option<Chart>> {
        None
    }

    /// Why a study without a step of this part lacks it, when that is not "not part of this
    /// study" (a study made before the part existed).
    fn absent(&self, _r: &StudyReport) -> Option<&'static str> {
        None
    }
}

/// What a kept result gives every part the same way: its warnings and its CSV (the
/// command's own, [`Exportable`]); `()` for a part that keeps its rows in the study's own
/// fields.
pub trait Answers {
    /// The warnings it carries.
    fn warnings(&self) -> &[Warning];
    /// Its CSV table.
    fn table(&self) -> Table;
    /// Whether its checks held.
    fn ok(&self) -> bool;
}

impl<T: Exportable> Answers for T {
    fn warnings(&self) -> &[Warning] {
        Exportable::warnings(self)
    }
    fn table(&self) -> Table {
        Exportable::table(self)
    }
    fn ok(&self) -> bool {
        Exportable::ok(self)
    }
}

impl Answers for () {
    fn warnings(&self) -> &[Warning] {
        &[]
    }
    fn ok(&self) -> bool {
        true
    }
    fn table(&self) -> Table {
        Table {
            header: Vec::new(),
            rows: Vec::new(),
        }
    }
}

/// A part's warnings and CSV, from what it kept ([`Kept::kept_warnings`],
/// [`Kept::kept_table`]): every part has them without writing them out.
pub trait FromKept {
    /// The warnings its result carries.
    fn warnings<'a>(&self, r: &'a StudyReport) -> &'a [Warning];
    /// Its CSV in the report directory (`<name>.csv`), when it kept a result.
    fn table(&self, r: &StudyReport) -> Option<Table>;
    /// Whether its result's checks held (true when it kept none).
    fn checks_held(&self, r: &StudyReport) -> bool;
}

impl<P: Kept> FromKept for P {
    fn checks_held(&self, r: &StudyReport) -> bool {
        self.kept(r).is_none_or(Answers::ok)
    }
    fn warnings<'a>(&self, r: &'a StudyReport) -> &'a [Warning] {
        self.kept_warnings(r)
    }
    fn table(&self, r: &StudyReport) -> Option<Table> {
        self.kept_table(r)
    }
}

/// A part's typed result, kept in the study's result under its field.
pub trait Kept: PartView {
    /// Its result.
    type Result: Serialize + DeserializeOwned + Clone + Debug + Send + Sync + Answers + 'static;
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

    /// The warnings of its result (none when it kept none).
    fn kept_warnings<'a>(&self, r: &'a StudyReport) -> &'a [Warning] {
        self.kept(r).map_or(&[], Answers::warnings)
    }

    /// The CSV of its result, when it kept one.
    fn kept_table(&self, r: &StudyReport) -> Option<Table> {
        self.kept(r).map(Answers::table)
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

/// The registered parts, in the order the study runs them: one list, filled by the
/// registry of `cmd/study/parts/` (a slice that the link gathers, so that this layer names
/// no command).
#[linkme::distributed_slice]
pub static PART_VIEWS: [&'static [&'static dyn PartView]];

/// Every part, in the order the study runs them.
pub fn all() -> impl Iterator<Item = &'static dyn PartView> {
    PART_VIEWS.iter().flat_map(|list| list.iter().copied())
}

/// The registered part `part` names.
pub fn of(part: Part) -> Option<&'static dyn PartView> {
    all().find(|p| p.part() == part)
}

/// The result of the part called `name` (`read-sweep`) in `r`, if it kept one of type `T`.
pub fn kept<'a, T: 'static>(r: &'a StudyReport, name: &str) -> Option<&'a T> {
    let part = all().map(|p| p.part()).find(|p| p.name() == name)?;
    r.results.get(part)
}

/// Every measure of every part, in the order the parts run.
pub fn all_measures(media: &[Medium]) -> Vec<Measure> {
    all().flat_map(|p| p.measures(media)).collect()
}

/// Writes the field of part `p` (if it has one and it is of the `always` kind).
pub fn save_one<P: Kept, M: serde::ser::SerializeMap>(
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
pub type Loaded = Result<Option<(Part, Box<dyn Stored>)>, serde_json::Error>;

/// Reads the field of part `p` from a saved study when `field` is its: `None` when it is not.
pub fn load_one<P: Kept>(
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
