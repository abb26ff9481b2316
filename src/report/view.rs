//! What every result offers the formats: its text, its CSV table, its Markdown blocks, its
//! chart, its warnings and whether its checks held, and the JSON schema it is saved under.
//! This file names no command and imports no view: each result's own file under
//! [`super::views`] implements [`Exportable`], and each format (`csv`, `json`, `markdown`,
//! `html`, `svg`) renders from these methods without knowing which result it holds.

use super::csv::Table;
use super::json::Provenance;
pub use super::json::{SCHEMA_VERSION, STUDY_SCHEMA_VERSION, schema};
use super::svg::Chart;
use crate::warning::Warning;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A result with text, CSV and SVG renderings.
pub trait Exportable: Serialize + DeserializeOwned {
    /// The subcommand (for the JSON schema name).
    const COMMAND: &'static str;
    /// Whether [`Exportable::chart`] draws one (`--svg` is refused up front otherwise).
    const HAS_CHART: bool = false;
    /// Whether stdout carries the answer alone whatever else is asked (`fast`: the checksum,
    /// so `$(ioscope fast f)` is the XOR): the comparison with a baseline goes to stderr.
    const STDOUT_IS_THE_ANSWER: bool = false;
    /// Human-readable text.
    fn text(&self) -> String;
    /// The text with every detail (`--verbose`); by default [`Exportable::text`].
    fn verbose_text(&self) -> String {
        self.text()
    }
    /// The answer alone, one line, for results that have one (`run`'s XOR): what `-q`
    /// prints instead of [`Exportable::text`] where every check held.
    fn answer(&self) -> Option<String> {
        None
    }
    /// The same figures as a CSV table (raw numbers).
    fn table(&self) -> Table;
    /// The same figures as Markdown blocks (tables with units in their headers, notes); by
    /// default the CSV table made readable (`markdown::humanize`).
    fn markdown(&self) -> Vec<String> {
        vec![super::markdown::table(
            &super::markdown::humanize(&self.table()),
            None,
        )]
    }
    /// The same figures as a chart, for results that have one.
    fn chart(&self) -> Option<Chart> {
        None
    }
    /// Whether every check held (the exit code is 1 when not).
    fn ok(&self) -> bool;
    /// Whether every planned measurement ran (false after an interruption).
    fn complete(&self) -> bool {
        true
    }
    /// Whether nothing at all was measured (interrupted before the first point): then no
    /// output file is written, and only `--json` prints the (empty) result.
    fn is_empty(&self) -> bool {
        false
    }
    /// What the reader should know.
    fn warnings(&self) -> &[Warning] {
        &[]
    }
    /// What could make the figures wrong (extents, compression, write cache).
    fn caveats(&self) -> &[crate::measure::caveat::Caveat] {
        &[]
    }
}

/// A result as a Markdown document: its blocks, then what was left unmeasured and its
/// warnings (the causes and fixes the text prints on stderr).
pub fn markdown_document<T: Exportable>(result: &T, provenance: &Provenance) -> String {
    use super::markdown::{document, escape, list};
    let mut blocks = result.markdown();
    if !result.complete() {
        blocks.push(format!(
            "{}\n",
            escape("Partial: the run was interrupted; these are the points measured before it.")
        ));
    }
    blocks.extend(super::caveats::markdown(result.caveats()));
    let warnings: Vec<String> = result.warnings().iter().map(super::text::warning).collect();
    if !warnings.is_empty() {
        blocks.push(list("Warnings:", &warnings));
    }
    document(&format!("ioscope {}", T::COMMAND), provenance, &blocks)
}
