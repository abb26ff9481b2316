//! A run over time, as every result that has one shows it (`run`, each row of `disk`): the
//! steady-state sentence and the write-back check in text and Markdown, the JSON Lines of
//! `--series` and its SVG (MiB/s and p99 against time, the steady stretch shaded), and the
//! series files themselves, reserved before the run like every other output.

use crate::measure::series::{Interval, OverTime, json_lines};
use crate::measure::steady::{After, BAND, Steadiness, WINDOW};
use crate::options::SeriesOptions;
use crate::report::outputs::Outputs;
use crate::results::disk::DiskReport;
use crate::results::run::RunReport;
use crate::units::{MIB, format_seconds};
use anyhow::{Result, anyhow};
use plotters::prelude::*;
use std::path::Path;

fn mib(bps: f64) -> String {
    format!("{:.1} MiB/s", bps / MIB as f64)
}

/// The start of interval `k`, in seconds, as text: `12 s`.
fn at(o: &OverTime, k: usize) -> String {
    let s = o.at(k).map_or(0.0, |i| i.start_seconds);
    if o.interval_seconds >= 1.0 {
        format!("{s:.0} s")
    } else {
        format!("{s:.2} s")
    }
}

/// Bytes completed before interval `k`, as text: `3.20 GiB`.
fn written_before(o: &OverTime, k: usize) -> String {
    let b = o.at(k).map_or(0, |i| i.bytes_total - i.bytes);
    format!("{:.2} GiB", b as f64 / (1u64 << 30) as f64)
}

/// The steady-state sentence the numbers support.
pub fn steady_sentence(o: &OverTime) -> String {
    let s = &o.steady;
    let rule = format!(
        "{WINDOW} intervals of {} within ±{:.0}% of their mean",
        format_seconds(o.interval_seconds),
        BAND * 100.0
    );
    let level = s.level.unwrap_or(0.0);
    match s.verdict {
        Steadiness::TooShort => format!(
            "too short to tell a steady state: {} interval(s), the rule needs {rule}",
            o.intervals.len()
        ),
        Steadiness::Never => {
            let rates = o
                .intervals
                .iter()
                .filter(|i| i.ios > 0)
                .map(|i| i.bytes_per_second);
            let lo = rates.clone().fold(f64::MAX, f64::min);
            let hi = rates.fold(0.0f64, f64::max);
            format!(
                "never steady: no {rule} (it ranged from {} to {})",
                mib(lo.min(hi)),
                mib(hi)
            )
        }
        Steadiness::Steady | Steadiness::Left => {
            let from = s.from_interval.unwrap_or(0);
            let start = if from == 0 {
                "steady from the start".to_string()
            } else {
                let before: Vec<f64> = o.intervals[..from.min(o.intervals.len())]
                    .iter()
                    .map(|i| i.bytes_per_second)
                    .collect();
                let mean = before.iter().sum::<f64>() / before.len().max(1) as f64;
                let how = if crate::measure::verdict::same(mean, level) {
                    "after"
                } else if mean < level {
                    "after ramping up for"
                } else {
                    "after a faster start of"
                };
                format!("steady {how} {}", at(o, from))
            };
            match (s.verdict, s.until_interval) {
                (Steadiness::Left, Some(until)) => {
                    let after = mib(s.after_level.unwrap_or(0.0));
                    let then = match s.after {
                        Some(After::Below) => format!(
                            "fell to {after} at {}, after {} written, and stayed below",
                            at(o, until),
                            written_before(o, until)
                        ),
                        Some(After::Above) => format!("rose to {after} at {}", at(o, until)),
                        Some(After::Same) => format!(
                            "left it at {} and came back to the same level (within 10%)",
                            at(o, until)
                        ),
                        Some(After::Unclear) => format!(
                            "left it at {}; after that it scattered too much to say whether it ended higher or lower (median {after})",
                            at(o, until)
                        ),
                        Some(After::TooFew) | None => format!(
                            "left it at {}, too near the end to say where it went",
                            at(o, until)
                        ),
                    };
                    format!(
                        "{start}, at {} until {}, then {then}",
                        mib(level),
                        at(o, until)
                    )
                }
                _ => format!("{start} at {} to the end", mib(level)),
            }
        }
    }
}

/// The text lines of a run over time: `over time` and, for a write, `writeback`.
pub fn text_lines(o: &OverTime) -> Vec<(&'static str, String)> {
    let mut lines = vec![("over time", steady_sentence(o))];
    for c in &o.checks {
        lines.push(("writeback", c.evidence.clone()));
    }
    lines
}

/// The Markdown items of a run over time, each prefixed with `prefix` (a panel's row).
pub fn markdown_items(o: &OverTime, prefix: &str) -> Vec<String> {
    text_lines(o)
        .into_iter()
        .map(|(key, value)| {
            let key = if key == "over time" {
                "Over time"
            } else {
                "Write-back"
            };
            format!("{prefix}{key}: {value}")
        })
        .collect()
}

/// The SVG of one or more runs over time: a panel each, MiB/s on the left axis and p99 (ms)
/// on the right, the steady stretch shaded.
pub fn svg(panels: &[(String, &OverTime)]) -> Result<String> {
    let mut out = String::new();
    {
        let height = 320 * panels.len().max(1) as u32;
        let root = SVGBackend::with_string(&mut out, (900, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let areas = root.split_evenly((panels.len().max(1), 1));
        for ((title, o), area) in panels.iter().zip(areas) {
            panel(&area, title, o)?;
        }
        root.present().map_err(err)?;
    }
    Ok(out)
}

fn err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("svg: {e}")
}

fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    o: &OverTime,
) -> Result<()> {
    let end = |i: &Interval| i.start_seconds + i.seconds;
    let x1 = o.intervals.last().map_or(1.0, end).max(1e-3);
    let rates: Vec<(f64, f64)> = o
        .intervals
        .iter()
        .map(|i| (end(i), i.mib_per_second))
        .collect();
    let p99: Vec<(f64, f64)> = o
        .intervals
        .iter()
        .filter_map(|i| Some((end(i), i.p99_ns? as f64 / 1e6)))
        .collect();
    let y1 = rates.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-6) * 1.15;
    let p1 = p99.iter().map(|p| p.1).fold(0.0f64, f64::max).max(1e-6) * 1.15;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(70)
        .right_y_label_area_size(70)
        .build_cartesian_2d(0.0..x1, 0.0..y1)
        .map_err(err)?
        .set_secondary_coord(0.0..x1, 0.0..p1);
    chart
        .configure_mesh()
        .x_desc("seconds")
        .y_desc("MiB/s")
        .draw()
        .map_err(err)?;
    chart
        .configure_secondary_axes()
        .y_desc("p99 latency, ms")
        .draw()
        .map_err(err)?;
    if let (Some(from), Some(_)) = (o.steady.from_interval, o.steady.level) {
        let a = o.at(from).map_or(0.0, |i| i.start_seconds);
        let b = match o.steady.until_interval {
            Some(u) => o.at(u).map_or(x1, |i| i.start_seconds),
            None => x1,
        };
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, y1)],
                RGBColor(44, 160, 44).mix(0.15).filled(),
            )))
            .map_err(err)?
            .label("steady state")
            .legend(|(x, y)| {
                Rectangle::new(
                    [(x, y - 5), (x + 16, y + 5)],
                    RGBColor(44, 160, 44).mix(0.3).filled(),
                )
            });
    }
    let blue = RGBColor(31, 119, 180);
    let red = RGBColor(214, 39, 40);
    chart
        .draw_series(LineSeries::new(rates, blue.stroke_width(2)))
        .map_err(err)?
        .label("MiB/s")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], blue.stroke_width(2)));
    if !p99.is_empty() {
        chart
            .draw_secondary_series(LineSeries::new(p99, red.stroke_width(1)))
            .map_err(err)?
            .label("p99 latency (right axis)")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], red.stroke_width(1)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    Ok(())
}

/// A series panel: its title, the keys put before each JSON line, and the run over time.
pub type Panel<'a> = (String, Vec<(&'static str, String)>, &'a OverTime);

/// The panel of a `run`.
pub fn run_panels(r: &RunReport) -> Vec<Panel<'_>> {
    r.over_time
        .iter()
        .map(|o| (format!("{} {}", r.op.name(), r.file), Vec::new(), o))
        .collect()
}

/// A panel per row of a `disk` panel that has a series (each JSON line keeps its row).
pub fn disk_panels(r: &DiskReport) -> Vec<Panel<'_>> {
    r.rows
        .iter()
        .filter_map(|row| {
            let o = row.over_time.as_ref()?;
            Some((
                row.label(),
                vec![("row", row.name.clone()), ("op", row.spec.direction())],
                o,
            ))
        })
        .collect()
}

/// The `--series` files of one command: reserved before it measures (an existing file needs
/// --force, a symbolic link is refused), rewritten whole after every row.
pub struct SeriesFiles {
    outputs: Outputs,
}

impl SeriesFiles {
    /// Reserves the series file and its SVG, when asked for; `measured` are the files the
    /// command reads or writes, which neither may be, and `export` its other outputs, which
    /// neither may be either (`--series x --csv x` is refused before anything is made,
    /// instead of the two overwriting each other during the run).
    pub fn reserve(
        options: Option<&SeriesOptions>,
        export: &crate::options::ExportOptions,
        measured: &[&Path],
        what: &str,
    ) -> Result<Option<Self>> {
        let Some(o) = options else { return Ok(None) };
        let mut all: Vec<(&'static str, &Path)> =
            vec![("--series", &o.path), ("--series-svg", &o.svg)];
        for (flag, path) in [
            ("--csv", &export.csv),
            ("--svg", &export.svg),
            ("--markdown", &export.markdown),
        ] {
            if let Some(p) = path {
                all.push((flag, p));
            }
        }
        Outputs::distinct(&all, what)?;
        let outputs = Outputs::reserve(&all[..2], o.force, measured, what)?;
        Ok(Some(Self { outputs }))
    }

    /// Writes the series of `panels` (a name and extra JSON keys for each, e.g. the row),
    /// as JSON Lines and as an SVG.
    pub fn write(&self, panels: &[Panel<'_>]) -> Result<()> {
        let mut lines = String::new();
        for (_, extra, o) in panels {
            let extra: Vec<(&str, &str)> = extra.iter().map(|(k, v)| (*k, v.as_str())).collect();
            lines.push_str(&json_lines(&o.intervals, &extra));
        }
        self.outputs.write("--series", lines.as_bytes())?;
        let charts: Vec<(String, &OverTime)> = panels
            .iter()
            .map(|(name, _, o)| (name.clone(), *o))
            .collect();
        if !charts.is_empty() {
            self.outputs
                .write("--series-svg", svg(&charts)?.as_bytes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::series::OverTime;
    use std::time::Duration;

    fn intervals(rates: &[f64]) -> Vec<Interval> {
        let mut total = 0u64;
        rates
            .iter()
            .enumerate()
            .map(|(k, &r)| {
                let bytes = (r * MIB as f64) as u64;
                total += bytes;
                Interval {
                    index: k as u64,
                    start_seconds: k as f64,
                    seconds: 1.0,
                    bytes,
                    bytes_total: total,
                    ios: bytes / 4096,
                    bytes_per_second: bytes as f64,
                    mib_per_second: r,
                    iops: (bytes / 4096) as f64,
                    p99_ns: Some(50_000),
                    max_ns: Some(90_000),
                    dirty_bytes: None,
                    writeback_bytes: None,
                    device_read_bytes: None,
                    device_write_bytes: None,
                }
            })
            .collect()
    }

    fn over(rates: &[f64]) -> OverTime {
        OverTime::of(intervals(rates), Duration::from_secs(1), false, None)
    }

    #[test]
    fn a_cliff_is_told_with_its_time_and_the_gibibytes_written_before_it() {
        let mut rates = vec![1024.0; 10];
        rates.extend([100.0; 6]);
        let s = steady_sentence(&over(&rates));
        assert!(
            s.starts_with("steady from the start, at 1024.0 MiB/s until 10 s"),
            "{s}"
        );
        assert!(
            s.contains("fell to 100.0 MiB/s at 10 s, after 10.00 GiB written"),
            "{s}"
        );
    }

    #[test]
    fn a_slow_start_is_a_ramp_and_a_fast_start_is_not() {
        let mut rates = vec![100.0, 300.0];
        rates.extend([800.0; 8]);
        let s = steady_sentence(&over(&rates));
        assert!(s.starts_with("steady after ramping up for 2 s"), "{s}");
        let mut rates = vec![3000.0, 2500.0];
        rates.extend([800.0; 8]);
        let s = steady_sentence(&over(&rates));
        assert!(s.starts_with("steady after a faster start of 2 s"), "{s}");
    }

    #[test]
    fn never_and_too_short_say_so_and_name_the_rule() {
        let s = steady_sentence(&over(&[100.0, 50.0, 100.0, 50.0, 100.0, 50.0]));
        assert!(s.starts_with("never steady: no 5 intervals"), "{s}");
        let s = steady_sentence(&over(&[100.0, 100.0]));
        assert!(s.starts_with("too short to tell"), "{s}");
    }

    #[test]
    fn the_chart_is_an_svg_with_the_steady_stretch_shaded() {
        let mut rates = vec![500.0; 8];
        rates.extend([50.0; 4]);
        let o = over(&rates);
        let text = svg(&[("run".to_string(), &o)]).unwrap();
        assert!(text.starts_with("<svg"), "{}", &text[..40]);
        assert!(text.contains("steady state"));
        assert!(text.contains("p99 latency"));
    }
}
