//! Several studies side by side, each medium by its name: one page with the summary in a
//! column per medium, then per part one merged table per measure (a row per block size,
//! reader or test, a column per medium, each cell's ratio to the reference medium), the
//! media's curves overlaid or their bars grouped (a medium keeps its colour in every chart:
//! its series is always the medium's position), sentences on what differs chosen by the
//! one rule ([`crate::measure::verdict`]), and each medium's own tables folded away below.

use super::media_disk::path_note;
use super::media_figures::{Lead, Measure, Shape, Unit, WRITE_FSYNC, against, relation_word};
pub use super::media_figures::{Medium, csv, json};
use super::part::{PartView, all_measures as measures};
use super::study::{headlines, sections};
use crate::measure::cache::CacheState;
use crate::measure::verdict::{
    Figure, Relation, SAME_WITHIN, WHAT_WOULD_TELL, relate, same, spread,
};
use crate::report::cells::capitalise;
use crate::report::html::{self, escape, figure, head};
use crate::report::page::Headline;
use crate::report::svg::{Chart, Series};
use crate::results::study::Outcome;
use crate::results::sweep::SweepReport;
use crate::units::format_size;
use crate::workload::study::Part;
use anyhow::Result;
use std::fmt::Write;

/// What the media page adds to the shared stylesheet: the lines inside a merged cell.
const STYLE: &str = "<style>
table.merged td small { display: block; color: #57606a; font-size: .8em; line-height: 1.25; }
table.merged td small.higher, table.merged td small.lower { color: #1b1f24; font-weight: 600; }
table.merged td small.fallback { color: #9a6700; font-weight: 600; }
table.merged caption { caption-side: top; text-align: left; color: #57606a; font-size: .85em; padding-bottom: .2rem; }
ul.media li { margin: .25rem 0; }
details.each { margin: .8rem 0; }
details.each > summary { cursor: pointer; color: #0969da; }
</style>
";

/// The machine a study ran on, as one line.
fn machine_of(e: &crate::measure::env::Environment) -> String {
    format!(
        "{} ({} CPUs), {} of RAM, Linux {}",
        if e.cpu_model.is_empty() {
            "an unknown CPU"
        } else {
            &e.cpu_model
        },
        e.cpus,
        format_size(e.memory_bytes),
        e.kernel
    )
}

/// Whether every medium was studied on the same machine (CPU, CPUs, RAM, kernel).
fn on_one_machine(media: &[Medium]) -> bool {
    media
        .iter()
        .all(|m| machine_of(m.env) == machine_of(media[0].env))
}

/// The page that puts several studies side by side. `raw`: the names of the JSON and CSV
/// files written beside it with the same figures (the footer mentions them only then).
pub fn page(media: &[Medium], raw: Option<(&str, &str)>, command_line: &str) -> Result<String> {
    let labels: Vec<String> = media.iter().map(|m| m.label.clone()).collect();
    let all = measures(media);
    let mut out = String::new();
    head(&mut out, &format!("ioscope: {}", labels.join(" · ")));
    out.push_str(STYLE);
    let _ = writeln!(
        out,
        "<h1>{} media side by side</h1>\n<ul class=\"media\">",
        media.len()
    );
    // The machine once when every study ran on the same one; else with each medium.
    let machine = machine_of;
    let one_machine = on_one_machine(media);
    for m in media {
        let s = &m.env.storage;
        let _ = writeln!(
            out,
            "<li><b>{}</b>: {} — {}{}, mounted at {}{}; {} level, {} scratch file{}{}{}</li>",
            escape(&m.label),
            escape(&crate::text::printable(&m.report.dir)),
            escape(s.filesystem.as_deref().unwrap_or("an unknown file system")),
            match &s.device {
                Some(d) => format!(
                    " on block device {}{}",
                    escape(d),
                    s.read_ahead_kb
                        .map_or(String::new(), |kb| format!(" (read-ahead {kb} KiB)"))
                ),
                None => " with no block device under it".to_string(),
            },
            escape(s.mount_point.as_deref().unwrap_or("?")),
            s.mount_source
                .as_deref()
                .map_or(String::new(), |src| format!(" from {}", escape(src))),
            m.report.level.name(),
            format_size(m.report.file_bytes),
            if one_machine {
                String::new()
            } else {
                format!("; {}", escape(&machine(m.env)))
            },
            if m.report.complete {
                ""
            } else {
                " <b>PARTIAL</b>: interrupted; the parts not reached are missing."
            },
            // Each study's own date, ioscope and command, as saved in its document.
            m.provenance.map_or(String::new(), |p| html::provenance(p)
                .trim_end()
                .to_string())
        );
    }
    out.push_str("</ul>\n");
    if one_machine && let Some(first) = media.first() {
        let _ = writeln!(
            out,
            "<p class=\"env\">All on one machine: {}.</p>",
            escape(&machine(first.env))
        );
    }
    let _ = writeln!(
        out,
        "<p class=\"how\">Each table has a row per block size (reader, test…) and a column per medium: the median, under it the range of the runs, and its ratio to the first medium with the figure ({}), with the rule's word for it: <i>same</i> within 10%, <i>higher</i> or <i>lower</i> when no run overlaps (or one run each), <i>overlap</i> when the runs overlap and no direction is claimed.</p>",
        escape(&labels[0])
    );
    out.push_str("<h2>Summary</h2>\n");

    summary(&mut out, media);
    let top = differences(media);
    list(&mut out, &top);
    let parts: Vec<&dyn PartView> = super::part::all()
        .filter(|p| media.iter().any(|m| m.report.step(p.part()).is_some()))
        .collect();
    out.push_str("<nav><p>");
    let links: Vec<String> = parts
        .iter()
        .map(|p| {
            let p = p.part();
            format!("<a href=\"#{}\">{}</a>", p.name(), html::prose(p.title()))
        })
        .collect();
    out.push_str(&links.join(" · "));
    out.push_str("</p></nav>\n");
    let per_sections: Vec<_> = media.iter().map(|m| sections(m.report, m.env)).collect();
    for study_part in parts {
        let part = study_part.part();
        let _ = writeln!(
            out,
            "<section class=\"part\" id=\"{}\">\n<h2>{}</h2>",
            part.name(),
            html::prose(part.title())
        );
        for (m, line) in media.iter().zip(&labels) {
            let status = match m.report.step(part).map(|s| &s.outcome) {
                Some(Outcome::Done) => continue,
                Some(Outcome::Partial) => {
                    "interrupted: what is shown was measured before Ctrl-C".to_string()
                }
                Some(Outcome::Skipped { reason }) => format!("skipped: {reason}"),
                Some(Outcome::Failed { error }) => format!("failed: {error}"),
                None => study_part
                    .absent(m.report)
                    .unwrap_or("not part of this study")
                    .to_string(),
            };
            let _ = writeln!(
                out,
                "<p class=\"banner\"><b>{}</b>: {}</p>",
                escape(line),
                escape(&status)
            );
        }
        let of_part: Vec<&Measure> = all.iter().filter(|ms| ms.part == part).collect();
        for ms in &of_part {
            if of_part.len() > 1 {
                let _ = writeln!(out, "<h3>{}</h3>", escape(&capitalise(&ms.title)));
            }
            let chart = study_part.media_chart(media, ms).unwrap_or_else(|| {
                let labels: Vec<String> = media.iter().map(|m| m.label.clone()).collect();
                Some(chart(ms, &labels))
            });
            if let Some(chart) = chart {
                figure(&mut out, &chart, &ms.id)?;
            }
            merged_table(&mut out, ms, &labels);
            list(&mut out, &sentences(ms, &labels));
        }
        list(&mut out, &study_part.media_sentences(media));
        // Each medium's own table and sentences: there when wanted, folded away otherwise.
        let own: Vec<(usize, &crate::report::page::Section)> = per_sections
            .iter()
            .enumerate()
            .filter_map(|(i, ss)| {
                ss.iter()
                    .find(|s| s.part == part && (!s.grid.rows.is_empty() || !s.why.is_empty()))
                    .map(|s| (i, s))
            })
            .collect();
        if !own.is_empty() {
            let _ = writeln!(
                out,
                "<details class=\"each\"><summary>Each medium's own table and explanations ({})</summary>",
                own.iter()
                    .map(|(i, _)| escape(&labels[*i]))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            for (i, s) in own {
                let _ = writeln!(out, "<h4>{}</h4>", escape(&labels[i]));
                if !s.how.is_empty() {
                    let _ = writeln!(out, "<p class=\"how\">{}</p>", html::prose(&s.how));
                }
                html::table(&mut out, &s.grid);
                html::explanations(&mut out, s);
            }
            out.push_str("</details>\n");
        }
        out.push_str("</section>\n");
    }
    let sources = media
        .iter()
        .map(|m| escape(&m.source))
        .collect::<Vec<_>>()
        .join(", ");
    let raw = match raw {
        Some((j, c)) => format!(
            "The figures of these tables are in {} and {} beside this page; each study's own in the document it was read from ({sources}).",
            escape(j),
            escape(c)
        ),
        None => format!("Each study's figures are in the document it was read from ({sources})."),
    };
    let _ = writeln!(
        out,
        "<footer>Made by ioscope {} ({}). {raw}</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        escape(command_line)
    );
    Ok(out)
}

fn list(out: &mut String, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    out.push_str("<ul class=\"why\">\n");
    for line in lines {
        let _ = writeln!(out, "<li>{}</li>", html::prose(line));
    }
    out.push_str("</ul>\n");
}

/// A cell of several lines: the figure, then smaller lines (`class`, text) under it.
fn cell(out: &mut String, main: &str, small: &[(&str, String)]) {
    let _ = write!(out, "<td>{}", escape(main));
    for (class, text) in small {
        if class.is_empty() {
            let _ = write!(out, "<small>{}</small>", escape(text));
        } else {
            let _ = write!(out, "<small class=\"{class}\">{}</small>", escape(text));
        }
    }
    out.push_str("</td>");
}

/// The summary: a row per headline figure, a column per medium.
fn summary(out: &mut String, media: &[Medium]) {
    let per: Vec<Vec<Headline>> = media.iter().map(|m| headlines(m.report)).collect();
    let mut names: Vec<String> = Vec::new();
    for h in per.iter().flatten() {
        if !names.contains(&h.label) {
            names.push(h.label.clone());
        }
    }
    out.push_str("<div class=\"scroll\"><table class=\"merged\">\n<caption>Medians; under each, its spread or what it rests on.</caption>\n<thead><tr><th>figure</th>");
    for m in media {
        let _ = write!(out, "<th>{}</th>", escape(&m.label));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for name in &names {
        let _ = write!(out, "<tr><td>{}</td>", escape(name));
        for lines in &per {
            match lines.iter().find(|h| &h.label == name) {
                Some(h) => cell(out, &h.value, &[("", h.spread.clone())]),
                None => cell(out, "—", &[]),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// One merged table: a row per key, a cell per medium with its median, the range of its
/// runs and its ratio to the reference medium (the rule's word beside it).
fn merged_table(out: &mut String, ms: &Measure, labels: &[String]) {
    let reference = ms.reference();
    let _ = write!(
        out,
        "<div class=\"scroll\"><table class=\"merged\" id=\"table-{}\">\n<caption>{} (median; range of the runs{})</caption>\n<thead><tr><th>{}</th>",
        ms.id,
        escape(ms.unit.heading()),
        reference.map_or(String::new(), |r| format!(
            "; ratio to {}",
            escape(&labels[r])
        )),
        escape(&ms.key_heading)
    );
    for l in labels {
        let _ = write!(out, "<th>{}</th>", escape(l));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &ms.rows {
        let _ = write!(out, "<tr><td>{}</td>", escape(&row.key));
        let base = reference.and_then(|r| row.cells[r]);
        for (m, c) in row.cells.iter().enumerate() {
            let Some(c) = c else {
                cell(out, "—", &[]);
                continue;
            };
            let mut small = Vec::new();
            if c.n > 1 {
                small.push((
                    "",
                    format!("{}–{}", ms.unit.show(c.min), ms.unit.show(c.max)),
                ));
            }
            if let Some(b) = base
                && Some(m) != reference
            {
                let (ratio, rel) = against(*c, b);
                small.push((
                    relation_word(rel),
                    format!("{ratio:.2}× {}", relation_word(rel)),
                ));
            }
            if let Some(note) = row.paths.get(m).copied().flatten().and_then(path_note) {
                small.push(("fallback", note.to_string()));
            }
            cell(out, &ms.unit.show(c.median), &small);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// The figure shown in a chart, in the unit the reader sees (MiB/s, MB/s, ns, IOPS, µs).
fn plotted(unit: Unit, f: &Figure) -> f64 {
    unit.human(f.median)
}

/// The series of medium `m`, named by it; empty (a legend entry, no marks) where it has no
/// figure, so that every medium keeps its position, and so its colour, in every chart.
fn series(label: &str, points: Vec<(f64, f64)>) -> Series {
    Series {
        name: if points.is_empty() {
            format!("{label} (not measured)")
        } else {
            label.to_string()
        },
        points,
    }
}

/// A measure's chart: curves over block size, or bars grouped per row.
pub(crate) fn chart(ms: &Measure, labels: &[String]) -> Chart {
    let y_label = format!("{} (median)", ms.unit.heading());
    let media = 0..labels.len();
    match ms.shape {
        Shape::Curve => Chart {
            title: format!("{}: {} by block size", ms.title, ms.unit.heading()),
            x_label: "block size (log2 scale)".into(),
            y_label,
            log2_x: true,
            series: media
                .map(|m| {
                    series(
                        &labels[m],
                        ms.rows
                            .iter()
                            .filter_map(|r| {
                                Some((r.block_size? as f64, plotted(ms.unit, r.cells[m].as_ref()?)))
                            })
                            .collect(),
                    )
                })
                .collect(),
            by_order: true,
            ..Chart::default()
        },
        Shape::Bars => Chart {
            title: ms.title.clone(),
            x_label: ms.key_heading.clone(),
            y_label,
            categories: ms.rows.iter().map(|r| r.key.clone()).collect(),
            series: media
                .map(|m| {
                    series(
                        &labels[m],
                        ms.rows
                            .iter()
                            .enumerate()
                            .filter_map(|(i, r)| {
                                Some((i as f64, plotted(ms.unit, r.cells[m].as_ref()?)))
                            })
                            .collect(),
                    )
                })
                .collect(),
            by_order: true,
            ..Chart::default()
        },
    }
}

/// The calibration's probes of every medium on one scatter: read time against bytes read.
pub(crate) fn probes(media: &[Medium], part: Part) -> Option<Chart> {
    use crate::results::calibrate::CalibrateReport;
    media
        .iter()
        .any(|m| m.report.result::<CalibrateReport>(part).is_some())
        .then(|| Chart {
            title: "calibration probes: read time against bytes read".into(),
            x_label: "bytes read (log2 scale)".into(),
            y_label: "read time (s)".into(),
            log2_x: true,
            points_only: true,
            series: media
                .iter()
                .map(|m| {
                    series(
                        &m.label,
                        m.report
                            .result::<CalibrateReport>(part)
                            .iter()
                            .flat_map(|c| &c.probes)
                            .map(|p| (p.bytes as f64, p.seconds))
                            .collect(),
                    )
                })
                .collect(),
            by_order: true,
            ..Chart::default()
        })
}

/// A figure with its unit, and the row it is at when that differs per medium.
fn shown(unit: Unit, f: &Figure, at: Option<&str>) -> String {
    match at {
        Some(k) => format!("{} at {k}", unit.with_unit(f.median)),
        None => unit.with_unit(f.median),
    }
}

/// The sentences under a measure's table: its lead figure of each medium against the
/// reference medium's, then where the media differ most.
pub fn sentences(ms: &Measure, labels: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(lead_sentence(ms, labels));
    out.extend(widest_sentence(ms, labels));
    out
}

/// Each medium's lead figure of `ms`: (figure, the row it is at when each medium's own best).
fn leads(ms: &Measure) -> Vec<Option<(Figure, Option<String>)>> {
    let n = ms.rows.first().map_or(0, |r| r.cells.len());
    (0..n)
        .map(|m| match &ms.lead {
            Lead::Nothing => None,
            Lead::Row(key, _) => ms
                .rows
                .iter()
                .find(|r| &r.key == key)
                .and_then(|r| r.cells[m])
                .map(|f| (f, None)),
            Lead::Best(_) => ms
                .rows
                .iter()
                .filter_map(|r| r.cells[m].map(|f| (f, Some(r.key.clone()))))
                .reduce(|a, b| {
                    let better = if ms.unit.higher_is_better() {
                        b.0.median > a.0.median
                    } else {
                        b.0.median < a.0.median
                    };
                    if better { b } else { a }
                }),
        })
        .collect()
}

/// The lead figure of each medium against the reference's, worded by the one rule: within
/// 10% ("the same"), a ratio with no run overlapping, or a ratio the runs' spread leaves
/// without a direction.
pub fn lead_sentence(ms: &Measure, labels: &[String]) -> Option<String> {
    let leads = leads(ms);
    let present: Vec<usize> = (0..leads.len()).filter(|&m| leads[m].is_some()).collect();
    let (&r, others) = present.split_first()?;
    if others.is_empty() {
        return None;
    }
    let what = match &ms.lead {
        Lead::Best(what) => format!("{}, {what}", ms.title),
        Lead::Row(_, what) => what.to_string(),
        Lead::Nothing => return None,
    };
    let (rf, rat) = leads[r].clone()?;
    let medians: Vec<f64> = present
        .iter()
        .filter_map(|&m| leads[m].as_ref().map(|l| l.0.median))
        .collect();
    let all = |m: &usize| {
        let (f, at) = leads[*m].clone().expect("present");
        format!("{} {}", labels[*m], shown(ms.unit, &f, at.as_deref()))
    };
    let missing: Vec<&str> = (0..leads.len())
        .filter(|m| leads[*m].is_none())
        .map(|m| labels[m].as_str())
        .collect();
    let tail = if missing.is_empty() {
        String::new()
    } else {
        format!(" ({} not measured there)", missing.join(", "))
    };
    if spread(&medians).1 {
        return Some(format!(
            "{}: every medium within {:.0}% of the others ({}){tail}.",
            capitalise(&what),
            100.0 * (SAME_WITHIN - 1.0),
            present.iter().map(all).collect::<Vec<_>>().join(", ")
        ));
    }
    let clauses: Vec<String> = others
        .iter()
        .map(|&m| {
            let (f, at) = leads[m].clone().expect("present");
            let v = shown(ms.unit, &f, at.as_deref());
            let single = f.n <= 1 && rf.n <= 1;
            match relate(f, rf) {
                Relation::Same => format!("{} is within 10% ({v})", labels[m]),
                Relation::Above(x) | Relation::Below(x) => format!(
                    "{} is at {x:.2}× ({v}{})",
                    labels[m],
                    if single {
                        "; one run each"
                    } else {
                        "; no run overlaps"
                    }
                ),
                Relation::Unclear(x) => format!(
                    "{} is at {x:.2}× ({v}) but the runs overlap: no direction is claimed",
                    labels[m]
                ),
            }
        })
        .collect();
    Some(format!(
        "{}: against {} ({}), {}{tail}.",
        capitalise(&what),
        labels[r],
        shown(ms.unit, &rf, rat.as_deref()),
        clauses.join("; ")
    ))
}

/// Where the media differ most (the row with the largest ratio of the highest median to the
/// lowest), or that every row is within 10%; nothing when that row is the lead figure the
/// first sentence already compared between two media.
pub fn widest_sentence(ms: &Measure, labels: &[String]) -> Option<String> {
    let spans: Vec<(usize, usize, usize, f64)> = ms
        .rows
        .iter()
        .enumerate()
        .filter_map(|(i, row)| {
            let with: Vec<usize> = (0..row.cells.len())
                .filter(|&m| row.cells[m].is_some())
                .collect();
            if with.len() < 2 {
                return None;
            }
            let med = |m: &usize| row.cells[*m].map_or(0.0, |f| f.median);
            let hi = *with.iter().max_by(|a, b| med(a).total_cmp(&med(b)))?;
            let lo = *with.iter().min_by(|a, b| med(a).total_cmp(&med(b)))?;
            Some((
                i,
                hi,
                lo,
                crate::measure::verdict::ratio(med(&hi), med(&lo)),
            ))
        })
        .collect();
    let &(i, hi, lo, _) = spans.iter().max_by(|a, b| a.3.total_cmp(&b.3))?;
    let row = &ms.rows[i];
    let (h, l) = (row.cells[hi]?, row.cells[lo]?);
    if same(h.median, l.median) {
        return (spans.len() > 1).then(|| {
            format!(
                "{}: {} the media are within 10% of each other.",
                capitalise(&ms.title),
                if ms.shape == Shape::Curve {
                    "at every block size"
                } else {
                    "in every row"
                }
            )
        });
    }
    let media_with = row.cells.iter().filter(|c| c.is_some()).count();
    if media_with == 2 && matches!(&ms.lead, Lead::Row(k, _) if *k == row.key) {
        return None;
    }
    // At a block size; for a reader, a test, a step.
    let at = match row.block_size {
        Some(_) => format!("at {}", row.key),
        None => format!("for {}", row.key),
    };
    let both = format!(
        "{} {} against {} {}",
        labels[hi],
        ms.unit.with_unit(h.median),
        labels[lo],
        ms.unit.with_unit(l.median)
    );
    Some(match relate(h, l) {
        Relation::Above(x) | Relation::Below(x) => format!(
            "{}: the media differ most {at}: {both}, {x:.1}×{}.",
            capitalise(&ms.title),
            if h.n > 1 || l.n > 1 {
                " with no run overlapping"
            } else {
                ""
            }
        ),
        Relation::Unclear(x) => format!(
            "{}: the largest difference is {at}: {both} ({x:.1}×), but the runs overlap there, so no direction is claimed.",
            capitalise(&ms.title)
        ),
        Relation::Same => return None,
    })
}

/// Sentences on what differs between the media and why, above the parts: what a medium
/// without a block device cannot show, the fsync'd write, and the warm reads.
pub fn differences(media: &[Medium]) -> Vec<String> {
    let mut out = Vec::new();
    for m in media {
        if m.env.storage.device.is_none() {
            out.push(format!(
                "{} has no block device under it: its pages are memory and cannot be evicted, so it has no cold reads — every read there is a warm read — and its fsync has no device to wait for.",
                m.label
            ));
        }
    }
    // Each medium's best warm point, with its runs: the rule needs them to say "differ".
    let warm_figures: Vec<(String, Figure)> = media
        .iter()
        .filter_map(|m| {
            let best = super::part::kept::<SweepReport>(m.report, "read-sweep")?
                .points
                .iter()
                .filter(|p| p.cache == Some(CacheState::Warm))
                .map(|p| Figure::from(&p.rate))
                .reduce(|a, b| if b.median > a.median { b } else { a })?;
            Some((m.label.clone(), best))
        })
        .collect();
    let best_warm: Vec<(String, f64)> = warm_figures
        .iter()
        .map(|(l, f)| (l.clone(), f.median))
        .collect();
    let writes: Vec<(String, f64)> = media
        .iter()
        .filter_map(|m| {
            m.report
                .write_read
                .iter()
                .find(|w| w.op == crate::workload::Op::Write)
                .map(|w| (m.label.clone(), w.bytes_per_second))
        })
        .collect();
    let list = |v: &[(String, f64)]| {
        v.iter()
            .map(|(s, x)| format!("{s} {}", Unit::Rate.with_unit(*x)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let medians = |v: &[(String, f64)]| v.iter().map(|x| x.1).collect::<Vec<f64>>();
    let all_devices = media.iter().all(|m| m.env.storage.device.is_some());
    if writes.len() > 1 {
        let (ratio, same) = spread(&medians(&writes));
        out.push(if same && all_devices {
            format!(
                "Writing with fsync ({WRITE_FSYNC}), the media are within 10% of each other ({}): what the devices take is alike here.",
                list(&writes)
            )
        } else if same {
            format!(
                "Writing with fsync, the media are within 10% of each other ({}), though not every one has a block device under it: its fsync has nothing to write, so the alike figures are not alike devices.",
                list(&writes)
            )
        } else if all_devices {
            format!(
                "Writing with fsync ({}): the fastest is {ratio:.1}× the slowest; the fsync is where a device's own speed shows.",
                list(&writes)
            )
        } else {
            format!(
                "Writing with fsync ({}): the fastest is {ratio:.1}× the slowest; where no block device is under a medium its fsync has nothing to write, so its figure is the page cache's.",
                list(&writes)
            )
        });
    }
    if best_warm.len() > 1 {
        let (ratio, same) = spread(&medians(&best_warm));
        let by_median =
            |a: &&(String, Figure), b: &&(String, Figure)| a.1.median.total_cmp(&b.1.median);
        let apart = match (
            warm_figures.iter().max_by(by_median),
            warm_figures.iter().min_by(by_median),
        ) {
            (Some(hi), Some(lo)) => !matches!(relate(hi.1, lo.1), Relation::Unclear(_)),
            _ => true,
        };
        out.push(if same {
            format!(
                "Warm reads at their best are within {:.0}% of each other ({}): from the page cache every medium is memory, so what differs there is the CPU's copy and the noise.",
                (100.0 * (ratio - 1.0)).ceil().max(1.0),
                list(&best_warm)
            )
        } else if !apart {
            format!(
                "Warm reads at their best differ by {ratio:.1}× by the medians ({}), but the runs of the fastest and the slowest overlap: no medium is shown faster from the page cache; {WHAT_WOULD_TELL}.",
                list(&best_warm)
            )
        } else if on_one_machine(media) {
            // One machine, several media: the machines cannot be the cause.
            format!(
                "Warm reads at their best differ by {ratio:.1}× ({}) although all come from the page cache on one machine: the file systems' read paths, or the load during each study, differ.",
                list(&best_warm)
            )
        } else {
            format!(
                "Warm reads at their best differ by {ratio:.1}× ({}) although all come from the page cache: the file systems' read paths, the machines, or the load on them differ.",
                list(&best_warm)
            )
        });
    }
    if let Some(first) = media.first() {
        let sizes: Vec<u64> = media.iter().map(|m| m.report.file_bytes).collect();
        if sizes.iter().any(|&s| s != first.report.file_bytes) {
            out.push(format!(
                "The scratch files differ in size ({}): each level and machine chose its own, so a read of the whole file is not the same work on every medium.",
                media
                    .iter()
                    .map(|m| format!("{} {}", m.label, format_size(m.report.file_bytes)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::media_figures::Row;
    use super::*;

    fn fig(median: f64, min: f64, max: f64) -> Option<Figure> {
        Some(Figure {
            median,
            min,
            max,
            n: 3,
        })
    }

    fn labels() -> Vec<String> {
        ["ext4 on vda", "tmpfs", "xfs on loop0", "btrfs on loop1"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    }

    fn curve(rows: Vec<(u64, Vec<Option<Figure>>)>) -> Measure {
        Measure {
            part: crate::cmd::study::parts::read_sweep::PART,
            id: "read_warm".into(),
            title: "read, warm".into(),
            key_heading: "block".into(),
            unit: Unit::Rate,
            shape: Shape::Curve,
            lead: Lead::Best("each medium at its best block size"),
            rows: rows
                .into_iter()
                .map(|(bs, cells)| Row {
                    key: crate::units::format_block_size(bs),
                    block_size: Some(bs),
                    cells,
                    paths: Vec::new(),
                })
                .collect(),
        }
    }

    const M: f64 = 1048576.0;

    #[test]
    fn a_memory_file_system_slower_than_a_disk_is_said_to_be_slower() {
        // Against the usual story (tmpfs is memory, so faster): here it is at 0.5x.
        let ms = curve(vec![
            (
                4096,
                vec![
                    fig(1000.0 * M, 990.0 * M, 1010.0 * M),
                    fig(500.0 * M, 490.0 * M, 510.0 * M),
                    None,
                    None,
                ],
            ),
            (
                1 << 20,
                vec![
                    fig(2000.0 * M, 1990.0 * M, 2010.0 * M),
                    fig(1000.0 * M, 980.0 * M, 1020.0 * M),
                    None,
                    None,
                ],
            ),
        ]);
        let s = lead_sentence(&ms, &labels()).unwrap();
        assert!(s.contains("against ext4 on vda (2,000 MiB/s at 1m)"), "{s}");
        assert!(s.contains("tmpfs is at 0.50×"), "{s}");
        assert!(s.contains("no run overlaps"), "{s}");
        assert!(
            s.contains("xfs on loop0, btrfs on loop1 not measured"),
            "{s}"
        );
    }

    #[test]
    fn media_within_ten_percent_are_the_same_whatever_their_labels_suggest() {
        let ms = curve(vec![(
            4096,
            vec![
                fig(1000.0 * M, 900.0 * M, 1100.0 * M),
                fig(1050.0 * M, 1000.0 * M, 1100.0 * M),
                fig(980.0 * M, 950.0 * M, 1000.0 * M),
                fig(1020.0 * M, 1000.0 * M, 1040.0 * M),
            ],
        )]);
        let s = lead_sentence(&ms, &labels()).unwrap();
        assert!(s.contains("every medium within 10% of the others"), "{s}");
        assert!(
            widest_sentence(&ms, &labels()).is_none(),
            "one row: the lead said it"
        );
    }

    #[test]
    fn a_difference_smaller_than_the_spread_claims_no_direction() {
        let ms = curve(vec![(
            4096,
            vec![
                fig(1000.0 * M, 500.0 * M, 1500.0 * M),
                fig(1400.0 * M, 800.0 * M, 2000.0 * M),
                None,
                None,
            ],
        )]);
        let s = lead_sentence(&ms, &labels()).unwrap();
        assert!(s.contains("tmpfs is at 1.40×"), "{s}");
        assert!(s.contains("no direction is claimed"), "{s}");
        let w = widest_sentence(&ms, &labels()).unwrap();
        assert!(w.contains("runs overlap there"), "{w}");
    }

    #[test]
    fn the_widest_difference_is_named_at_its_row_and_ratio() {
        let ms = curve(vec![
            (
                128,
                vec![
                    fig(10.0 * M, 9.0 * M, 11.0 * M),
                    fig(100.0 * M, 95.0 * M, 105.0 * M),
                    fig(10.0 * M, 9.0 * M, 11.0 * M),
                    fig(10.0 * M, 9.0 * M, 11.0 * M),
                ],
            ),
            (
                4096,
                vec![
                    fig(1000.0 * M, 990.0 * M, 1010.0 * M),
                    fig(1000.0 * M, 990.0 * M, 1010.0 * M),
                    fig(1000.0 * M, 990.0 * M, 1010.0 * M),
                    fig(1010.0 * M, 990.0 * M, 1020.0 * M),
                ],
            ),
        ]);
        let w = widest_sentence(&ms, &labels()).unwrap();
        assert!(w.contains("differ most at 128"), "{w}");
        assert!(w.contains("tmpfs 100 MiB/s against"), "{w}");
        assert!(w.contains("10.0×"), "{w}");
        // And when every row agrees, it says so.
        let alike = curve(vec![
            (
                128,
                vec![
                    fig(10.0 * M, 9.0 * M, 11.0 * M),
                    fig(10.5 * M, 9.0 * M, 11.0 * M),
                    None,
                    None,
                ],
            ),
            (
                4096,
                vec![
                    fig(1000.0 * M, 990.0 * M, 1010.0 * M),
                    fig(1000.0 * M, 990.0 * M, 1010.0 * M),
                    None,
                    None,
                ],
            ),
        ]);
        let w = widest_sentence(&alike, &labels()).unwrap();
        assert!(
            w.contains("at every block size the media are within 10%"),
            "{w}"
        );
    }

    #[test]
    fn costs_per_call_lead_with_the_named_row() {
        let ms = Measure {
            part: crate::cmd::study::parts::syscalls::PART,
            id: "syscalls".into(),
            title: "the cost of a call".into(),
            key_heading: "operation".into(),
            unit: Unit::Nanos,
            shape: Shape::Bars,
            lead: Lead::Row("read 1 B".into(), "a 1-byte read()"),
            rows: vec![
                Row {
                    key: "getpid".into(),
                    block_size: None,
                    cells: vec![fig(50.0, 49.0, 51.0), fig(51.0, 50.0, 52.0)],
                    paths: Vec::new(),
                },
                Row {
                    key: "read 1 B".into(),
                    block_size: None,
                    cells: vec![fig(300.0, 290.0, 310.0), fig(150.0, 140.0, 160.0)],
                    paths: Vec::new(),
                },
            ],
        };
        let s = lead_sentence(&ms, &labels()[..2]).unwrap();
        assert!(
            s.starts_with("A 1-byte read(): against ext4 on vda (300 ns per call)"),
            "{s}"
        );
        assert!(s.contains("tmpfs is at 0.50× (150 ns per call"), "{s}");
        // The widest row is the lead between two media: not said twice.
        assert!(widest_sentence(&ms, &labels()[..2]).is_none());
    }
}
