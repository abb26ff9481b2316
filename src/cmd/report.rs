//! `report`: reads saved results back, bounded in size, and checks what is asked of them
//! (one result rendered again, or studies put side by side on one HTML page). Nothing here
//! prints or renders: [`execute`] returns a [`Request`], and `report::views::report` renders
//! it through the registry of results.

use crate::error::input;
use crate::options::ExportOptions;
use crate::report::json;
use crate::text::{printable, printable_path};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub use crate::report::views::report::{LoadedStudy, Page, Request, Saved};

/// What `report --label KEY=NAME` and `--labels N1,N2,...` asked for.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// `--label KEY=NAME`, each as given.
    pub label: Vec<String>,
    /// `--labels`: one item per study, in order.
    pub labels: Option<String>,
}

impl Names {
    fn given(&self) -> bool {
        !self.label.is_empty() || self.labels.is_some()
    }
}

/// `report RESULTS`: one saved result rendered again (`export` its formats), or, with
/// `output` or several results, studies on one HTML page (`compare.html` by default).
pub fn execute(
    results: &[PathBuf],
    output: Option<&Path>,
    export: ExportOptions,
    names: &Names,
) -> Result<Request> {
    if names.given() && results.len() < 2 {
        return Err(input(
            "report: --label and --labels name studies put side by side; give two or more",
        ));
    }
    match (results, output) {
        ([one], None) => again(one, export),
        _ => page(results, output, export, names),
    }
}

/// One saved document, read for rendering again.
fn again(path: &Path, export: ExportOptions) -> Result<Request> {
    let path = study_file(path);
    let name = printable_path(&path);
    let (text, schema) = read_saved(&path, &name)?;
    if export.json {
        return Ok(Request::Document(text));
    }
    Ok(Request::Again(Saved {
        path,
        name,
        text: printable_text(text),
        schema,
        export,
    }))
}

/// Studies for one HTML page: each read once, the same file named twice refused.
fn page(
    results: &[PathBuf],
    output: Option<&Path>,
    export: ExportOptions,
    names: &Names,
) -> Result<Request> {
    // The HTML page is all this form writes: an option it would silently drop is refused.
    let dropped: Vec<&str> = [
        (export.json, "--json"),
        (export.csv.is_some(), "--csv"),
        (export.svg.is_some(), "--svg"),
        (export.markdown.is_some(), "--markdown"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !dropped.is_empty() {
        return Err(input(format!(
            "report: {} cannot go with -o or several studies, which write one HTML page; re-render one saved result without -o for them",
            dropped.join(", ")
        )));
    }
    let mut studies: Vec<LoadedStudy> = Vec::new();
    // The same file however it is named (a directory and its study.json, a link, a hard
    // link): its device and inode.
    let mut seen: Vec<((u64, u64), &Path)> = Vec::new();
    for path in results {
        let shown = printable_path(path);
        if let Ok(meta) = std::fs::metadata(study_file(path)) {
            use std::os::unix::fs::MetadataExt;
            let id = (meta.dev(), meta.ino());
            if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
                let first = printable_path(first);
                return Err(input(if shown == first {
                    format!("report: {shown} is given twice; name each study once")
                } else {
                    format!(
                        "report: {shown} is the same study as {first} (the same study.json); name each study once"
                    )
                }));
            }
            seen.push((id, path));
        }
        let mut study = load_study(path)?;
        study.copy_of = studies.iter().position(|l| l.hash == study.hash);
        studies.push(study);
    }
    name(&mut studies, results, names)?;
    Ok(Request::Page(Page {
        studies,
        output: output.map_or_else(|| PathBuf::from("compare.html"), Path::to_path_buf),
        force: export.force,
    }))
}

/// Names each study: `--labels` in order, or `--label KEY=NAME` by position or argument,
/// else its own label; explicit names must differ, derived ones are numbered apart.
fn name(studies: &mut [LoadedStudy], results: &[PathBuf], names: &Names) -> Result<()> {
    let n = studies.len();
    let mut given: Vec<Option<String>> = vec![None; n];
    if let Some(list) = &names.labels {
        let items: Vec<&str> = list.split(',').collect();
        if items.len() != n {
            return Err(input(format!(
                "report: --labels has {} name(s) for {n} studies; give one per study, in order (an empty one keeps that study's own)",
                items.len()
            )));
        }
        for (slot, item) in given.iter_mut().zip(items) {
            if !item.trim().is_empty() {
                *slot = Some(crate::options::medium_label(item, "report: --labels")?);
            }
        }
    }
    for pair in &names.label {
        let Some((key, name)) = pair.split_once('=') else {
            return Err(input(format!(
                "report: --label '{}': write KEY=NAME, KEY the study's position (1 to {n}) or its argument as given",
                printable(pair)
            )));
        };
        let trimmed = |p: &str| p.trim_end_matches('/').to_string();
        let index = match key.trim().parse::<usize>() {
            Ok(i) if (1..=n).contains(&i) => Some(i - 1),
            _ => results
                .iter()
                .position(|r| trimmed(&crate::text::lossless(r.as_os_str())) == trimmed(key)),
        };
        let Some(i) = index else {
            return Err(input(format!(
                "report: --label '{}': no study is at position or argument '{}' (positions 1 to {n}, or one of: {})",
                printable(pair),
                printable(key),
                studies
                    .iter()
                    .map(|s| s.shown.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        if given[i].is_some() {
            return Err(input(format!(
                "report: --label names {} twice; name each study once",
                studies[i].shown
            )));
        }
        given[i] = Some(crate::options::medium_label(name, "report: --label")?);
    }
    let explicit: Vec<&String> = given.iter().flatten().collect();
    if let Some(twice) = explicit
        .iter()
        .enumerate()
        .find_map(|(i, l)| explicit[..i].contains(l).then_some(l))
    {
        return Err(input(format!(
            "report: two studies are both named '{}'; give each its own name",
            printable(twice)
        )));
    }
    let mut labels: Vec<String> = studies
        .iter()
        .zip(given)
        .map(|(s, g)| match g {
            Some(g) => printable(&g),
            None => s.report.medium(&s.environment),
        })
        .collect();
    crate::measure::medium::distinct(&mut labels);
    for (s, l) in studies.iter_mut().zip(labels) {
        s.label = l;
    }
    Ok(())
}

/// The file a study argument names: `DIR/study.json`, or the document itself.
fn study_file(path: &Path) -> PathBuf {
    if path.is_dir() {
        path.join("study.json")
    } else {
        path.to_path_buf()
    }
}

/// A saved study: `DIR/study.json` or the document itself.
fn load_study(path: &Path) -> Result<LoadedStudy> {
    let file = study_file(path);
    let name = printable_path(&file);
    let (text, schema) = read_saved(&file, &name)?;
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    let want = crate::report::view::schema("study");
    if schema != want {
        let schema = printable(&schema);
        return Err(input(if schema.starts_with("ioscope/study/") {
            format!(
                "report {name}: schema '{schema}' is another version of the study ({want} is read here); run the study again with this ioscope"
            )
        } else {
            format!(
                "report {name}: schema '{schema}' is not a study ({want}); only studies can be put side by side"
            )
        }));
    }
    let text = printable_text(text);
    // Who measured, when, with what command and where: the saved run's, never today's.
    let provenance = serde_json::from_str::<crate::report::json::Provenance>(&text)
        .map_err(|e| input(format!("report {name}: bad environment: {e}")))?;
    let environment = provenance.environment.clone();
    let report = serde_json::from_str(&text)
        .map_err(|e| input(format!("report {name}: not a valid {want} document: {e}")))?;
    // A study run with `--baseline` kept its comparison; the page shows it again.
    #[derive(serde::Deserialize)]
    struct Kept {
        #[serde(default)]
        baseline: Option<crate::results::baseline::Against>,
    }
    let baseline = serde_json::from_str::<Kept>(&text)
        .map_err(|e| input(format!("report {name}: bad baseline comparison: {e}")))?
        .baseline;
    Ok(LoadedStudy {
        baseline,
        report,
        environment,
        provenance,
        file,
        shown: printable_path(path),
        copy_of: None,
        label: String::new(),
        hash,
    })
}

/// The largest saved document `report` reads. A study is well under 1 MiB; the largest
/// real results are traces, about 1.4 KiB per file touched (31 MB for 22,000 files), so
/// this reads a trace of some 90,000 files.
const SAVED_LIMIT: u64 = 128 << 20;

/// The most JSON values a saved document may hold. Read back, each takes up to a few dozen
/// bytes whatever its text takes (`0,` is 2 bytes of text and 8 in a Vec<u64>), so this
/// and [`SAVED_LIMIT`] bound `report` to well under 1 GiB (a real trace holds about one
/// value per 10 bytes of text: 13 million at the limit).
const SAVED_VALUES: u64 = 16 << 20;

/// A saved document's text and its schema, read without building the document in memory;
/// one that is far larger than any result, or holds far more values, is refused.
fn read_saved(path: &Path, name: &str) -> Result<(String, String)> {
    let what = format!("report {name}");
    let text = crate::files::read_text(path, &what, SAVED_LIMIT)?;
    let not_json = |e: serde_json::Error| input(format!("{what}: not JSON: {e}"));
    let values = json::values_in(&text).map_err(not_json)?;
    if values > SAVED_VALUES {
        return Err(input(format!(
            "{what}: {} values, more than a saved ioscope result holds ({}); not read",
            crate::units::group_thousands(values),
            crate::units::group_thousands(SAVED_VALUES)
        )));
    }
    let schema = json::schema_of(&text).map_err(not_json)?;
    // Data from a stranger: figures a measurement cannot give, and strings longer than any
    // ioscope writes, are refused before anything is drawn of them.
    crate::report::figures::check(&text).map_err(|e| input(format!("{what}: {e}")))?;
    Ok((text, schema))
}

/// The text as it is read back: control characters in its strings made printable (see
/// [`json::printable_strings`]), so nothing a renderer prints of it drives a terminal.
fn printable_text(text: String) -> String {
    json::printable_strings(&text).unwrap_or(text)
}
