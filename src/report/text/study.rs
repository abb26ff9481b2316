//! `study`: the summary (the figures that matter, with their spread), one line per part with
//! how it ended and its first explanation, and the verification verdict. The tables, charts
//! and every explanation are in the report directory.

use super::table_with;
use crate::cmd::study::{Outcome, StudyReport};
use crate::report::study::{headlines, sections};
use crate::units::{format_seconds, format_size};
use std::fmt::Write;

/// Renders `study`.
pub fn study(r: &StudyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "study of {} ({} level): scratch file of {}, {} in all{}",
        r.dir,
        r.level.name(),
        format_size(r.file_bytes),
        format_seconds(r.seconds),
        if r.complete {
            ""
        } else {
            " — PARTIAL, interrupted"
        }
    );
    let mut table = table_with(&["figure", "median", "spread / basis"]);
    for h in headlines(r) {
        table.add_row(vec![h.label, h.value, h.spread]);
    }
    let _ = writeln!(out, "{table}");
    // The environment only matters to the explanations' cache sizes: a saved study's own,
    // else (a study just run) this machine's, as its JSON document carries.
    let env = r.environment();
    for (step, section) in r.steps.iter().zip(sections(r, &env)) {
        let state = match &step.outcome {
            Outcome::Done => format!("done in {}", format_seconds(step.seconds)),
            Outcome::Partial => "interrupted (partial)".to_string(),
            Outcome::Skipped { reason } => format!("skipped: {reason}"),
            Outcome::Failed { error } => format!("FAILED: {error}"),
        };
        let _ = writeln!(out, "{:<12} {state}", step.part.name());
        if let Some(first) = section.why.first() {
            let _ = writeln!(out, "{:<12} {first}", "");
        }
    }
    let _ = writeln!(
        out,
        "{}",
        match (r.verified, r.read_back_verified()) {
            (true, Some(true)) =>
                "every read returned exactly the bytes written (XOR checked against the generator)",
            (_, None) => "the file was not read back (interrupted): nothing verified",
            _ => "VERIFICATION FAILED: some reads did not return the bytes written",
        }
    );
    if let Some(kept) = &r.kept_file {
        let _ = match r.kept_bytes {
            Some(now) if now != r.file_bytes => writeln!(
                out,
                "scratch file kept at {kept} ({}: the calibration grew it from {})",
                format_size(now),
                format_size(r.file_bytes)
            ),
            Some(now) => writeln!(out, "scratch file kept at {kept} ({})", format_size(now)),
            None => writeln!(out, "scratch file kept at {kept}"),
        };
    }
    out
}
