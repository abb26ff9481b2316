//! `report`'s view: a saved result rendered again as the registry ([`super::RESULTS`]) says
//! its schema is, and studies written to one HTML page (one study's report, or several side
//! by side), the page reserved like every output file; what the command hands it
//! ([`Request`]), read and checked by `cmd::report`.

use super::media::Medium;
use crate::error::{ExitKind, input};
use crate::measure::env::Environment;
use crate::options::ExportOptions;
use crate::report::outputs::{Exports, Outputs, finish};
use crate::report::view::Exportable;
use crate::report::{emit, json::Provenance, note, warn};
use crate::results::study::StudyReport;
use crate::text::{printable, printable_path};
use anyhow::Result;
use std::path::PathBuf;

/// What `report` was asked for, its documents read and checked.
pub enum Request {
    /// `--json`: the saved document, to print again exactly as it was saved (it already
    /// carries its environment and command line, and JSON escapes its control characters).
    Document(String),
    /// One saved result, to render again in the formats asked for.
    Again(Saved),
    /// Studies on one HTML page: one study's report, or several side by side.
    Page(Page),
}

/// A saved result read back, not yet parsed into its type.
pub struct Saved {
    /// The document (a study's directory stands for its `study.json`).
    pub path: PathBuf,
    /// Its path as printed in messages.
    pub name: String,
    /// Its text, control characters in its strings made printable.
    pub text: String,
    /// Its schema (`ioscope/<command>/v<N>`).
    pub schema: String,
    /// The formats to render it in.
    pub export: ExportOptions,
}

/// Studies to put on one HTML page.
pub struct Page {
    /// The studies, in the order given.
    pub studies: Vec<LoadedStudy>,
    /// The page to write.
    pub output: PathBuf,
    /// Whether an existing page may be replaced.
    pub force: bool,
}

/// A saved study, read back.
pub struct LoadedStudy {
    /// The study.
    pub report: StudyReport,
    /// The environment it was measured in.
    pub environment: Environment,
    /// Who measured it, when and with what command (its saved head).
    pub provenance: Provenance,
    /// The document read (`DIR/study.json`, or the document itself).
    pub file: PathBuf,
    /// The argument that named it, as printed in messages.
    pub shown: String,
    /// The earlier study whose document this one repeats byte for byte (a copy of one
    /// study): it is compared with itself, and the reader is told.
    pub copy_of: Option<usize>,
    /// The medium's name on the page: `report --label`, else its own (`study --label`, or
    /// derived from its file system and device), made distinct; control characters escaped.
    pub label: String,
    /// A hash of its text (two files with the same hash are copies of one study).
    pub(crate) hash: u64,
    /// Its comparison with a baseline, when the study was run with `--baseline`.
    pub baseline: Option<crate::results::baseline::Against>,
}

/// Prints or writes what `report` was asked for.
pub fn render(request: Request) -> Result<ExitKind> {
    // Reading a large document may have taken a while: a request to stop is answered
    // before anything is drawn. (Not inside the writers: a measuring command interrupted
    // writes what it measured through them after the request.)
    crate::interrupt::check()?;
    match request {
        Request::Document(text) => emit(&text).map(|()| ExitKind::Success),
        Request::Again(saved) => match super::registered(&saved.schema) {
            Some(result) => (result.rerender)(saved),
            None => Err(unknown(&saved)),
        },
        Request::Page(page) => write_page(&page),
    }
}

/// Why a schema no registered result has is not rendered.
fn unknown(saved: &Saved) -> anyhow::Error {
    let (name, schema) = (&saved.name, saved.schema.as_str());
    let older =
        schema.starts_with("ioscope/") && schema.ends_with("/v1") || schema == "ioscope/study/v2";
    input(if older {
        format!(
            "report {name}: schema '{}' was written by an older ioscope; run the command again to get a v2 document",
            printable(schema)
        )
    } else {
        format!(
            "report {name}: schema '{}' is not an ioscope result (ioscope/<command>/v2)",
            printable(schema)
        )
    })
}

/// A saved result of `T`'s schema rendered again, in the formats it asks for; the exit code
/// is the re-rendering's, not the saved run's.
pub fn again<T: Exportable>(saved: Saved) -> Result<ExitKind> {
    let Saved {
        path,
        name,
        text,
        schema,
        export,
    } = saved;
    // Where and how it was measured is the saved run's, not this machine's.
    let provenance: Provenance = serde_json::from_str(&text).unwrap_or_default();
    // Straight into the typed result: a serde_json::Value of the whole document took 10-19x
    // its size.
    let result: T = serde_json::from_str(&text)
        .map_err(|e| input(format!("report {name}: not a valid {schema} document: {e}")))?;
    drop(text);
    let out = Exports::again::<T>(&export, &path, provenance)?;
    finish(&result, &export, &out, &path).map(|_| ExitKind::Success)
}

/// The HTML page of one study, or of several side by side, written to a new file (an
/// existing one only with `--force`) that is none of the studies read. Several studies also
/// get their merged figures beside the page, as JSON and CSV named after it
/// (`compare.html`: `compare.json`, `compare.csv`), reserved with it.
fn write_page(page: &Page) -> Result<ExitKind> {
    for study in &page.studies {
        if let Some(first) = study.copy_of {
            warn(&format!(
                "report: {} holds the same document as {} (a copy of one study?): it is compared with itself",
                study.shown, page.studies[first].shown
            ));
        }
    }
    let media: Vec<Medium> = page
        .studies
        .iter()
        .map(|l| Medium {
            label: l.label.clone(),
            report: &l.report,
            env: &l.environment,
            provenance: Some(&l.provenance),
            source: printable_path(&l.file),
        })
        .collect();
    // As printed on the page: an argument's control characters (a --label's) as escapes.
    let line = std::env::args_os()
        .map(|a| crate::text::printable(&crate::text::lossless(&a)))
        .collect::<Vec<_>>()
        .join(" ");
    let read: Vec<&std::path::Path> = page.studies.iter().map(|s| s.file.as_path()).collect();
    if let [one] = media.as_slice() {
        let html = super::study::page(
            one.report,
            one.env,
            one.provenance.unwrap_or(&Provenance::default()),
            &line,
            Some(&one.source),
            page.studies[0].baseline.as_ref(),
        )?;
        let out = Outputs::reserve_apart(
            &[("-o", &page.output)],
            page.force,
            &read,
            "one of the studies being read",
            "report",
        )?;
        out.write("-o", html.as_bytes())?;
        note(&format!("report: {}\n", printable_path(&page.output)));
        return Ok(ExitKind::Success);
    }
    let (json_path, csv_path) = (
        page.output.with_extension("json"),
        page.output.with_extension("csv"),
    );
    let name = |p: &std::path::Path| {
        p.file_name().map_or_else(
            || printable_path(p),
            |n| printable_path(std::path::Path::new(n)),
        )
    };
    let out = Outputs::reserve_apart(
        &[
            ("-o", &page.output),
            ("-o (its JSON beside it)", &json_path),
            ("-o (its CSV beside it)", &csv_path),
        ],
        page.force,
        &read,
        "one of the studies being read",
        "report",
    )?;
    let html = super::media::page(&media, Some((&name(&json_path), &name(&csv_path))), &line)?;
    let measures = super::part::all_measures(&media);
    let mut sentences = super::media::differences(&media);
    let labels: Vec<String> = media.iter().map(|x| x.label.clone()).collect();
    for p in super::part::all() {
        for m in measures.iter().filter(|m| m.part == p.part()) {
            sentences.extend(super::media::sentences(m, &labels));
        }
        sentences.extend(p.media_sentences(&media));
    }
    let json = super::media::json(&media, &measures, &sentences);
    let csv = crate::report::csv::render(&super::media::csv(&media, &measures))?;
    out.write("-o (its JSON beside it)", json.as_bytes())?;
    out.write("-o (its CSV beside it)", &csv)?;
    out.write("-o", html.as_bytes())?;
    note(&format!(
        "report: {} (figures in {} and {})\n",
        printable_path(&page.output),
        printable_path(&json_path),
        printable_path(&csv_path)
    ));
    Ok(ExitKind::Success)
}
