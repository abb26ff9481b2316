//! Several studies side by side: one page, a column or a series per medium, and sentences
//! on what differs between them.

use super::study::{headlines, sections};
use crate::cmd::study::{Part, StudyReport};
use crate::measure::env::Environment;
use crate::report::html::{self, environment_sentence, escape, figure, footer, head};
use crate::report::page::{Grid, Headline, Section};
use crate::report::svg::{Chart, Series};
use anyhow::Result;
use std::fmt::Write;

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
pub fn page(media: &[Medium]) -> Result<String> {
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
    html::table(&mut out, &Grid { header, rows });
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
            html::table(&mut out, &s.grid);
            html::explanations(&mut out, s);
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
        out.push(if same && all_devices {
            format!(
                "Writing with fsync, the media are within 10% of each other ({}): what the devices take is alike here.",
                list(&writes)
            )
        } else if same {
            format!(
                "Writing with fsync, the media are within 10% of each other ({}), though not every one has a block device under it: its fsync has nothing to write, so the alike figures are not alike devices.",
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
