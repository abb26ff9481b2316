//! `grade`: what was run and how, one row per size (its verdict, the XOR it printed beside
//! the right one, its whole-process wall time), the diagnoses, and the verdict last.

use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::markdown::{self, list};
use crate::report::text::line;
use crate::report::view::Exportable;
use crate::results::grade::{GradeReport, SizeGrade, Verdict};

/// A size's verdict in a word or two (`crashed SIGSEGV`, `exit 1`), with how many runs
/// failed when not all did.
fn verdict_cell(s: &SizeGrade) -> String {
    let r = s.shown();
    let word = match s.verdict {
        Verdict::Correct => "correct".to_string(),
        Verdict::Wrong => "wrong".to_string(),
        Verdict::Crashed => format!("crashed {}", r.signal.as_deref().unwrap_or("")),
        Verdict::Timeout => "timeout".to_string(),
        Verdict::Exit => format!("exit {}", r.exit_code.unwrap_or(-1)),
    };
    if s.failed_runs > 0 && s.failed_runs < s.runs.len() {
        format!("{word} ({} of {} runs)", s.failed_runs, s.runs.len())
    } else {
        word
    }
}

/// The XOR the shown run printed, or a dash.
fn printed_cell(s: &SizeGrade) -> String {
    match (&s.shown().printed, s.verdict) {
        (Some(p), _) if s.distinct.len() > 1 => format!("{p} +{}", s.distinct.len() - 1),
        (Some(p), _) => p.clone(),
        (None, Verdict::Wrong) => "none".to_string(),
        (None, _) => "-".to_string(),
    }
}

/// The median wall time, with its range over several runs, in one unit: ms below a
/// second, s from it.
fn wall_cell(s: &SizeGrade) -> String {
    let Some(w) = &s.wall else {
        return "-".to_string();
    };
    let (scale, unit, digits) = if w.max >= 1.0 {
        (1.0, "s", 2)
    } else {
        (1e3, "ms", 1)
    };
    let v = |x: f64| format!("{:.*}", digits, x * scale);
    if w.n > 1 {
        format!("{} {unit} ({}–{})", v(w.median), v(w.min), v(w.max))
    } else {
        format!("{} {unit}", v(w.median))
    }
}

fn table_columns<'a>() -> Vec<Column<'a, SizeGrade>> {
    vec![
        Column::new("size", "", 0, |s: &SizeGrade| {
            if s.sparse {
                format!("{} (sparse)", s.label)
            } else {
                s.label.clone()
            }
        })
        .left()
        .csv("size", |s| s.size.to_string()),
        Column::new("verdict", "", 0, verdict_cell)
            .left()
            .words()
            .csv("verdict", |s| {
                serde_json::to_value(s.verdict)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            }),
        Column::new("printed", "", 1, printed_cell)
            .left()
            .csv("printed", |s| s.shown().printed.clone().unwrap_or_default()),
        Column::new("right XOR", "", 1, |s: &SizeGrade| s.reference.clone())
            .left()
            .csv("reference", |s| s.reference.clone()),
        Column::new("wall (median, range)", "", 2, wall_cell).csv("wall_seconds_median", |s| {
            s.wall
                .as_ref()
                .map_or(String::new(), |w| w.median.to_string())
        }),
        Column::raw("runs", |s: &SizeGrade| s.runs.len().to_string()),
        Column::raw("failed_runs", |s: &SizeGrade| s.failed_runs.to_string()),
    ]
}

/// The last line: every size correct, or how many failed.
pub fn verdict_line(r: &GradeReport) -> String {
    let failed = r
        .sizes
        .iter()
        .filter(|s| s.verdict != Verdict::Correct)
        .count();
    let n = r.sizes.len();
    let partial = if !r.complete {
        " (interrupted: not every size ran)".to_string()
    } else if !r.skipped.is_empty() {
        format!(
            "; {} not graded (skipped above)",
            if r.skipped.len() == 1 {
                "1 size".to_string()
            } else {
                format!("{} sizes", r.skipped.len())
            }
        )
    } else {
        String::new()
    };
    if n == 0 {
        format!("no size was graded{partial}")
    } else if failed == 0 && partial.is_empty() {
        format!("correct on all {n} sizes")
    } else if failed == 0 {
        format!("correct on the {n} sizes graded{partial}")
    } else {
        format!("fails on {failed} of {n} sizes{partial}")
    }
}

fn setup(r: &GradeReport) -> String {
    format!(
        "{} {} per size on files made for it in {}, each just written (warm); a run may take {} plus 1 s per {} of its file",
        r.runs,
        if r.runs == 1 { "run" } else { "runs" },
        r.dir,
        crate::units::format_seconds_as_typed(r.timeout_seconds),
        crate::units::format_size(r.timeout_bytes_per_second)
    )
}

/// Renders a grade result.
pub fn text(r: &GradeReport) -> String {
    let mut out = String::new();
    line(&mut out, "grade", r.command.join(" "));
    line(&mut out, "setup", setup(r));
    if r.sizes.iter().any(|s| s.sparse) {
        line(
            &mut out,
            "sparse",
            "the big files are holes with a few MiB of data where the bugs show: their times are not reads of the disk",
        );
    }
    out.push('\n');
    out.push_str(&columns::for_terminal(&table_columns(), &r.sizes).text);
    for s in &r.skipped {
        line(&mut out, "skipped", s);
    }
    if let Some(s) = r
        .sizes
        .iter()
        .find(|s| s.verdict != Verdict::Correct && s.shown().stderr.is_some())
    {
        line(
            &mut out,
            "stderr",
            format!(
                "on {}: {}",
                s.label,
                s.shown().stderr.as_deref().unwrap_or_default()
            ),
        );
    }
    if !r.diagnoses.is_empty() {
        out.push('\n');
        for d in &r.diagnoses {
            line(&mut out, "diagnosis", &d.sentence);
        }
    }
    out.push('\n');
    line(&mut out, "verdict", verdict_line(r));
    out
}

impl Exportable for GradeReport {
    const COMMAND: &'static str = "grade";
    fn text(&self) -> String {
        text(self)
    }
    fn table(&self) -> Table {
        columns::csv(&table_columns(), &self.sizes)
    }
    fn markdown(&self) -> Vec<String> {
        let mut blocks = vec![
            format!(
                "{}\n",
                markdown::escape(&format!(
                    "grade {}: {}.",
                    self.command.join(" "),
                    setup(self)
                ))
            ),
            markdown::table(&columns::markdown(&table_columns(), &self.sizes), None),
        ];
        if !self.diagnoses.is_empty() {
            let sentences: Vec<String> =
                self.diagnoses.iter().map(|d| d.sentence.clone()).collect();
            blocks.push(list("Diagnosis", &sentences));
        }
        blocks.push(format!(
            "**Verdict:** {}\n",
            markdown::escape(&verdict_line(self))
        ));
        blocks
    }
    fn ok(&self) -> bool {
        self.passed()
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }
}
