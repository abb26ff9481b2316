//! `report.html`: one self-contained page (inline CSS and SVG; no script, font or image from
//! anywhere) for a study, and one for several studies side by side. Plain templates: the
//! page is a handful of elements, and every figure comes from the typed result.

use super::study::{Grid, Headline, Section, headlines, sections};
use super::svg::{self, Chart, Series};
use crate::cmd::study::{Part, StudyReport};
use crate::measure::env::Environment;
use crate::units::{format_seconds, format_size};
use anyhow::Result;
use std::fmt::Write;

const STYLE: &str = "
:root { color-scheme: light; }
body { font: 15px/1.5 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1b1f24;
       max-width: 64rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
p.env, p.how { color: #424a53; }
.banner { background: #fff8c5; border: 1px solid #d4a72c; padding: .5rem .8rem; border-radius: 6px; }
.banner.bad { background: #ffebe9; border-color: #cf222e; }
table { border-collapse: collapse; margin: .8rem 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .25rem .55rem; text-align: right; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td:first-child, th:first-child { text-align: left; }
.scroll { overflow-x: auto; }
figure.chart { margin: 1rem 0; }
figure.chart svg { width: 100%; height: auto; max-width: 900px; display: block; }
ul.why li, ul.warn li { margin: .3rem 0; }
ul.warn { color: #9a6700; }
footer { margin-top: 3rem; color: #57606a; font-size: .85rem; }
@media print { body { margin: 0; max-width: none; } h2 { break-after: avoid; }
               figure.chart, table { break-inside: avoid; } }
";

/// Escapes text for HTML.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
}

fn table(out: &mut String, grid: &Grid) {
    if grid.rows.is_empty() {
        return;
    }
    out.push_str("<div class=\"scroll\"><table>\n<thead><tr>");
    for h in &grid.header {
        let _ = write!(out, "<th>{}</th>", escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &grid.rows {
        out.push_str("<tr>");
        for cell in row {
            let _ = write!(out, "<td>{}</td>", escape(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// An inline chart: the plotters SVG without its XML prologue, scaled by CSS.
fn figure(out: &mut String, chart: &Chart, id: &str) -> Result<()> {
    let svg = svg::render(chart)?;
    let start = svg.find("<svg").unwrap_or(0);
    let _ = write!(
        out,
        "<figure class=\"chart\" id=\"chart-{id}\" aria-label=\"{}\">\n{}\n</figure>\n",
        escape(&chart.title),
        &svg[start..],
    );
    Ok(())
}

/// The environment in one sentence.
pub fn environment_sentence(env: &Environment) -> String {
    let s = &env.storage;
    let caches = env
        .cpu_caches
        .iter()
        .map(|c| format!("L{} {}", c.level, format_size(c.bytes)))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "{} on {}: {} ({} CPUs{}), {} of RAM, Linux {}; {} is on {}{}{}.",
        env.path,
        s.mount_point.as_deref().unwrap_or("?"),
        if env.cpu_model.is_empty() {
            "an unknown CPU"
        } else {
            &env.cpu_model
        },
        env.cpus,
        if caches.is_empty() {
            String::new()
        } else {
            format!("; caches {caches}")
        },
        format_size(env.memory_bytes),
        env.kernel,
        env.path,
        s.filesystem.as_deref().unwrap_or("an unknown file system"),
        match &s.device {
            Some(d) => format!(
                " on block device {d}{}",
                s.rotational.map_or(String::new(), |r| if r {
                    " (reports rotational)".to_string()
                } else {
                    " (not rotational)".to_string()
                })
            ),
            None => " with no block device under it".to_string(),
        },
        s.read_ahead_kb
            .map_or(String::new(), |kb| format!(", read-ahead {kb} KiB"))
    )
}

fn headline_table(out: &mut String, lines: &[Headline]) {
    table(
        out,
        &Grid {
            header: vec!["figure".into(), "median".into(), "spread / basis".into()],
            rows: lines
                .iter()
                .map(|h| vec![h.label.clone(), h.value.clone(), h.spread.clone()])
                .collect(),
        },
    );
}

fn section(out: &mut String, s: &Section) -> Result<()> {
    let _ = writeln!(
        out,
        "<section class=\"part\" id=\"{}\">\n<h2>{}</h2>",
        s.part.name(),
        escape(s.part.title())
    );
    if let Some(status) = &s.status {
        let bad = status.starts_with("failed") || status.starts_with("interrupted");
        let _ = writeln!(
            out,
            "<p class=\"banner{}\">{}</p>",
            if bad { " bad" } else { "" },
            escape(status)
        );
    }
    if !s.how.is_empty() {
        let _ = writeln!(out, "<p class=\"how\">{}</p>", escape(&s.how));
    }
    if let Some(chart) = &s.chart {
        figure(out, chart, s.part.name())?;
    }
    table(out, &s.grid);
    explanations(out, s);
    out.push_str("</section>\n");
    Ok(())
}

/// A section's sentences, then its warnings.
fn explanations(out: &mut String, s: &Section) {
    for (class, prefix, items) in [("why", "", &s.why), ("warn", "warning: ", &s.warnings)] {
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<ul class=\"{class}\">");
        for w in items {
            let _ = writeln!(out, "<li>{prefix}{}</li>", escape(w));
        }
        out.push_str("</ul>\n");
    }
}

/// The page of one study.
pub fn study_page(r: &StudyReport, env: &Environment, command_line: &str) -> Result<String> {
    let mut out = String::new();
    head(&mut out, &format!("ioscope study of {}", r.dir));
    let _ = writeln!(
        out,
        "<h1>ioscope study of {}</h1>\n<p class=\"env\">{}</p>",
        escape(&r.dir),
        escape(&environment_sentence(env))
    );
    if !r.complete {
        let _ = writeln!(
            out,
            "<p class=\"banner bad\">PARTIAL REPORT: the study was interrupted after {} of its parts; every figure below was measured before that, and the parts not reached are missing.</p>",
            r.steps.len()
        );
    }
    if !r.ok() {
        out.push_str("<p class=\"banner bad\">A check failed: see the sections marked NO, MISMATCH or failed.</p>\n");
    }
    let _ = writeln!(
        out,
        "<h2>Summary</h2>\n<p class=\"how\">The {} level ({} scratch file, {} timed run(s) per sweep point) took {} (estimated {}). Medians, with their spread.</p>",
        r.level.name(),
        format_size(r.file_bytes),
        r.budget.repeat,
        format_seconds(r.seconds),
        format_seconds(r.estimated_seconds)
    );
    headline_table(&mut out, &headlines(r));
    let all = sections(r, env);
    out.push_str("<nav><p>");
    let links: Vec<String> = all
        .iter()
        .map(|s| {
            format!(
                "<a href=\"#{}\">{}</a>",
                s.part.name(),
                escape(s.part.title())
            )
        })
        .collect();
    out.push_str(&links.join(" · "));
    out.push_str("</p></nav>\n");
    for s in &all {
        section(&mut out, s)?;
    }
    footer(&mut out, command_line);
    Ok(out)
}

fn footer(out: &mut String, command_line: &str) {
    let _ = writeln!(
        out,
        "<footer>Made by ioscope {} ({}); raw figures in study.json and the CSV files beside this page.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        escape(command_line)
    );
}

/// One study among several, with its label.
pub struct Medium<'a> {
    /// Short name for columns and legends.
    pub label: String,
    /// The study.
    pub report: &'a StudyReport,
    /// Its environment.
    pub env: &'a Environment,
}

/// A label for a study: its directory and what is under it.
pub fn label(r: &StudyReport, env: &Environment) -> String {
    format!(
        "{} ({}{})",
        r.dir,
        env.storage.filesystem.as_deref().unwrap_or("?"),
        env.storage
            .device
            .as_deref()
            .map_or(", no device".to_string(), |d| format!(" on {d}"))
    )
}

/// Overlays one chart per medium: every series of each, prefixed with the medium's label.
fn overlay(title: &str, charts: Vec<(String, Chart)>) -> Option<Chart> {
    let first = charts.first()?.1.clone();
    let mut series = Vec::new();
    for (label, chart) in &charts {
        for s in &chart.series {
            series.push(Series {
                name: format!("{label}: {}", s.name),
                points: s.points.clone(),
            });
        }
    }
    Some(Chart {
        title: title.to_string(),
        series,
        ..first
    })
}

/// The page that puts several studies side by side.
pub fn compare_page(media: &[Medium]) -> Result<String> {
    let mut out = String::new();
    head(&mut out, "ioscope: media side by side");
    out.push_str("<h1>Media side by side</h1>\n");
    let short: Vec<String> = (0..media.len())
        .map(|i| format!("{}", (b'A' + (i % 26) as u8) as char))
        .collect();
    out.push_str("<ul class=\"why\">\n");
    for (m, s) in media.iter().zip(&short) {
        let _ = writeln!(
            out,
            "<li><b>{s}</b>: {} — {} level, {}{}</li>",
            escape(&m.label),
            m.report.level.name(),
            escape(&environment_sentence(m.env)),
            if m.report.complete { "" } else { " PARTIAL." }
        );
    }
    out.push_str("</ul>\n<h2>Summary</h2>\n");
    // One row per headline label, one column per medium.
    let per: Vec<Vec<Headline>> = media.iter().map(|m| headlines(m.report)).collect();
    let mut labels: Vec<String> = Vec::new();
    for h in per.iter().flatten() {
        if !labels.contains(&h.label) {
            labels.push(h.label.clone());
        }
    }
    let mut header = vec!["figure".to_string()];
    header.extend(short.iter().cloned());
    let rows = labels
        .iter()
        .map(|l| {
            let mut row = vec![l.clone()];
            for lines in &per {
                row.push(
                    lines
                        .iter()
                        .find(|h| &h.label == l)
                        .map_or("-".into(), |h| format!("{} ({})", h.value, h.spread)),
                );
            }
            row
        })
        .collect();
    table(&mut out, &Grid { header, rows });
    for why in differences(media, &short) {
        let _ = writeln!(out, "<p class=\"how\">{}</p>", escape(&why));
    }
    let per_sections: Vec<Vec<Section>> = media.iter().map(|m| sections(m.report, m.env)).collect();
    for part in Part::ALL {
        let present: Vec<(usize, &Section)> = per_sections
            .iter()
            .enumerate()
            .filter_map(|(i, ss)| ss.iter().find(|s| s.part == part).map(|s| (i, s)))
            .collect();
        if present.is_empty() {
            continue;
        }
        let _ = writeln!(
            out,
            "<section class=\"part\" id=\"{}\">\n<h2>{}</h2>",
            part.name(),
            escape(part.title())
        );
        let charts: Vec<(String, Chart)> = present
            .iter()
            .filter_map(|(i, s)| s.chart.clone().map(|c| (short[*i].clone(), c)))
            .collect();
        // Bars with the same categories in every medium become one grouped chart (a bar per
        // medium); bars that differ (other readers, other method pairs) stay one per medium.
        let bars = charts.iter().any(|(_, c)| !c.categories.is_empty());
        let same = charts
            .windows(2)
            .all(|w| w[0].1.categories == w[1].1.categories && w[0].1.series.len() == 1);
        if bars && same && charts.len() > 1 && charts[0].1.series.len() == 1 {
            let mut chart = charts[0].1.clone();
            chart.title = part.title().to_string();
            chart.series = charts
                .iter()
                .map(|(label, c)| Series {
                    name: label.clone(),
                    points: c.series[0].points.clone(),
                })
                .collect();
            figure(&mut out, &chart, part.name())?;
        } else if bars {
            for (label, chart) in &charts {
                let mut chart = chart.clone();
                chart.title = format!("{label}: {}", chart.title);
                figure(&mut out, &chart, &format!("{}-{label}", part.name()))?;
            }
        } else if let Some(chart) = overlay(part.title(), charts) {
            figure(&mut out, &chart, part.name())?;
        }
        for (i, s) in &present {
            let _ = writeln!(out, "<h3>{}: {}</h3>", short[*i], escape(&media[*i].label));
            if let Some(status) = &s.status {
                let _ = writeln!(out, "<p class=\"banner\">{}</p>", escape(status));
            }
            table(&mut out, &s.grid);
            explanations(&mut out, s);
        }
        out.push_str("</section>\n");
    }
    footer(&mut out, "ioscope report");
    Ok(out)
}

/// Sentences on what differs between the media and why.
pub fn differences(media: &[Medium], short: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for (m, s) in media.iter().zip(short) {
        if m.env.storage.device.is_none() {
            out.push(format!(
                "{s} has no block device under it ({}): its pages are memory and cannot be evicted, so it has no cold reads — every read there is a warm read, and writes end without device work (fsync has nothing to flush).",
                m.env.storage.filesystem.as_deref().unwrap_or("no device")
            ));
        }
    }
    let best_warm: Vec<(String, f64)> = media
        .iter()
        .zip(short)
        .filter_map(|(m, s)| {
            let best = m
                .report
                .read_sweep
                .as_ref()?
                .points
                .iter()
                .filter(|p| p.cache == Some(crate::measure::cache::CacheState::Warm))
                .map(|p| p.rate.median)
                .reduce(f64::max)?;
            Some((s.clone(), best))
        })
        .collect();
    let writes: Vec<(String, f64)> = media
        .iter()
        .zip(short)
        .filter_map(|(m, s)| {
            m.report
                .write_read
                .iter()
                .find(|w| w.op == crate::workload::Op::Write)
                .map(|w| (s.clone(), w.bytes_per_second))
        })
        .collect();
    let mib = |x: f64| x / crate::units::MIB as f64;
    let list = |v: &[(String, f64)]| {
        v.iter()
            .map(|(s, x)| format!("{s} {:.0} MiB/s", mib(*x)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let medians = |v: &[(String, f64)]| v.iter().map(|x| x.1).collect::<Vec<f64>>();
    let all_devices = media.iter().all(|m| m.env.storage.device.is_some());
    if writes.len() > 1 {
        let (ratio, same) = crate::measure::verdict::spread(&medians(&writes));
        out.push(if same {
            format!(
                "Writing with fsync, the media are within 10% of each other ({}): what the devices take is alike here.",
                list(&writes)
            )
        } else if all_devices {
            format!(
                "Writing with fsync ({}): the fastest is {ratio:.1}x the slowest; the fsync is where a device's own speed shows.",
                list(&writes)
            )
        } else {
            format!(
                "Writing with fsync ({}): the fastest is {ratio:.1}x the slowest; where no block device is under a medium its fsync has nothing to write, so its figure is the page cache's.",
                list(&writes)
            )
        });
    }
    if best_warm.len() > 1 {
        let (ratio, same) = crate::measure::verdict::spread(&medians(&best_warm));
        out.push(if same {
            format!(
                "Warm reads are within {:.0}% of each other ({}): from the page cache every medium is memory, so what differs there is the CPU's copy and the noise.",
                100.0 * (ratio - 1.0),
                list(&best_warm)
            )
        } else {
            format!(
                "Warm reads differ by {:.1}x ({}) although all come from the page cache: the file systems' read paths, the machines, or the load on them differ.",
                ratio,
                list(&best_warm)
            )
        });
    }
    out
}
