//! SVG charts drawn with plotters: lines (labelled axes with units, a title, one line per
//! series, an optional log₂ x axis for block sizes), scatters, grouped bars and heat maps.

use anyhow::{Result, anyhow};
use plotters::prelude::*;

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points (x, y), x ascending.
    pub points: Vec<(f64, f64)>,
}

/// A chart to draw.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Chart {
    /// Title above the plot.
    pub title: String,
    /// X axis label, with unit.
    pub x_label: String,
    /// Y axis label, with unit.
    pub y_label: String,
    /// Whether x is plotted on a log₂ scale (ticks then show sizes like 4k, 1m).
    pub log2_x: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Lines against a second y axis on the right (another unit: p99 beside IOPS).
    pub secondary: Vec<Series>,
    /// The right axis' label, with unit (when there are `secondary` lines).
    pub y2_label: String,
    /// Draw points only, no lines between them (a scatter: offsets over time).
    pub points_only: bool,
    /// Bars instead: one group per category, one bar per series (the series' points give
    /// (category index, value)).
    pub categories: Vec<String>,
    /// Heat maps instead: one panel each, in a grid.
    pub heat: Vec<Heat>,
}

/// A heat map: a value per row and column, the colour scaled to the panel's largest.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Heat {
    /// Title of the panel.
    pub title: String,
    /// Column names, left to right.
    pub columns: Vec<String>,
    /// Row names, bottom to top.
    pub rows: Vec<String>,
    /// `values[row][column]`; `None` where nothing was measured.
    pub values: Vec<Vec<Option<f64>>>,
}

const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Renders `chart` as an SVG document.
pub fn render(chart: &Chart) -> Result<String> {
    if !chart.heat.is_empty() {
        return render_heat(chart);
    }
    if !chart.categories.is_empty() {
        return render_bars(chart);
    }
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| anyhow!("svg: {e}"))?;
        let xs = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.0));
        let ys = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
        let fx = |x: f64| if chart.log2_x { x.max(1.0).log2() } else { x };
        let (mut x0, mut x1) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| {
            (a.min(fx(x)), b.max(fx(x)))
        });
        if x0 > x1 {
            (x0, x1) = (0.0, 1.0);
        }
        if x0 == x1 {
            (x0, x1) = (x0 - 1.0, x1 + 1.0);
        }
        let y1 = ys.fold(0.0f64, f64::max).max(1e-9) * 1.1;
        let y2 = chart
            .secondary
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.1;
        let mut ctx = ChartBuilder::on(&root)
            .caption(&chart.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .right_y_label_area_size(if chart.secondary.is_empty() { 0 } else { 80 })
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(|e| anyhow!("svg: {e}"))?
            .set_secondary_coord(x0..x1, 0.0..y2);
        let log2 = chart.log2_x;
        let x_fmt = move |v: &f64| {
            if log2 {
                crate::units::format_block_size(2f64.powf(*v).round() as u64)
            } else {
                format!("{v}")
            }
        };
        ctx.configure_mesh()
            .x_desc(&chart.x_label)
            .y_desc(&chart.y_label)
            .x_labels(if log2 {
                ((x1 - x0) as usize + 1).min(30)
            } else {
                10
            })
            .x_label_formatter(&x_fmt)
            .draw()
            .map_err(|e| anyhow!("svg: {e}"))?;
        for (i, s) in chart.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (fx(x), y)).collect();
            let line = if chart.points_only {
                Vec::new()
            } else {
                pts.clone()
            };
            ctx.draw_series(LineSeries::new(line, color.stroke_width(2)))
                .map_err(|e| anyhow!("svg: {e}"))?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            ctx.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))
                .map_err(|e| anyhow!("svg: {e}"))?;
        }
        if !chart.secondary.is_empty() {
            ctx.configure_secondary_axes()
                .y_desc(&chart.y2_label)
                .draw()
                .map_err(svg_err)?;
        }
        for (i, s) in chart.secondary.iter().enumerate() {
            let color = COLORS[(chart.series.len() + i) % COLORS.len()];
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (fx(x), y)).collect();
            ctx.draw_secondary_series(LineSeries::new(pts.clone(), color.stroke_width(2)))
                .map_err(svg_err)?
                .label(s.name.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            ctx.draw_secondary_series(
                pts.into_iter()
                    .map(|p| TriangleMarker::new(p, 4, color.filled())),
            )
            .map_err(svg_err)?;
        }
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(|e| anyhow!("svg: {e}"))?;
        root.present().map_err(|e| anyhow!("svg: {e}"))?;
    }
    Ok(out)
}

fn svg_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("svg: {e}")
}

/// Grouped bars: a group per category, a bar per series, the value printed above it.
fn render_bars(chart: &Chart) -> Result<String> {
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (900, 560)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_err)?;
        let n = chart.categories.len();
        let y1 = chart
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0f64, f64::max)
            .max(1e-9)
            * 1.15;
        let mut ctx = ChartBuilder::on(&root)
            .caption(&chart.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(60)
            .y_label_area_size(80)
            .build_cartesian_2d(0.0..n as f64, 0.0..y1)
            .map_err(svg_err)?;
        let categories = chart.categories.clone();
        let x_fmt = move |v: &f64| {
            let i = v.floor() as usize;
            if (v - v.floor() - 0.5).abs() < 1e-6 && i < categories.len() {
                categories[i].clone()
            } else {
                String::new()
            }
        };
        ctx.configure_mesh()
            .x_desc(&chart.x_label)
            .y_desc(&chart.y_label)
            .disable_x_mesh()
            .x_labels(2 * n + 1)
            .x_label_formatter(&x_fmt)
            .draw()
            .map_err(svg_err)?;
        let bars = chart.series.len().max(1) as f64;
        let width = 0.8 / bars;
        for (k, s) in chart.series.iter().enumerate() {
            let color = COLORS[k % COLORS.len()];
            let left = |i: f64| i + 0.1 + k as f64 * width;
            ctx.draw_series(s.points.iter().map(|&(i, y)| {
                Rectangle::new(
                    [(left(i), 0.0), (left(i) + width * 0.95, y)],
                    color.filled(),
                )
            }))
            .map_err(svg_err)?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 16, y + 5)], color.filled()));
            ctx.draw_series(s.points.iter().map(|&(i, y)| {
                Text::new(
                    format!("{y:.0}"),
                    (left(i), y + y1 * 0.01),
                    ("sans-serif", 11),
                )
            }))
            .map_err(svg_err)?;
        }
        ctx.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(svg_err)?;
        root.present().map_err(svg_err)?;
    }
    Ok(out)
}

/// Heat maps in a grid of panels (three across), each cell coloured from pale to dark by
/// its share of the panel's largest value and labelled with the value.
fn render_heat(chart: &Chart) -> Result<String> {
    let mut out = String::new();
    let across = chart.heat.len().min(3);
    let down = chart.heat.len().div_ceil(across);
    let (w, h) = (420 * across as u32, 60 + 340 * down as u32);
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_err)?;
        let root = root
            .titled(&chart.title, ("sans-serif", 22))
            .map_err(svg_err)?;
        let panels = root.split_evenly((down, across));
        for (panel, heat) in panels.iter().zip(&chart.heat) {
            let (cols, rows) = (heat.columns.len().max(1), heat.rows.len().max(1));
            let max = heat
                .values
                .iter()
                .flatten()
                .flatten()
                .copied()
                .fold(0.0f64, f64::max)
                .max(1e-9);
            let mut ctx = ChartBuilder::on(panel)
                .caption(&heat.title, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(56)
                .build_cartesian_2d(0.0..cols as f64, 0.0..rows as f64)
                .map_err(svg_err)?;
            let (columns, row_names) = (heat.columns.clone(), heat.rows.clone());
            let name_at = |names: &[String], v: f64| {
                let i = v.floor() as usize;
                if (v - v.floor() - 0.5).abs() < 1e-6 && i < names.len() {
                    names[i].clone()
                } else {
                    String::new()
                }
            };
            let x_fmt = |v: &f64| name_at(&columns, *v);
            let y_fmt = |v: &f64| name_at(&row_names, *v);
            ctx.configure_mesh()
                .disable_mesh()
                .x_labels(2 * cols + 1)
                .y_labels(2 * rows + 1)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .x_desc(&chart.x_label)
                .y_desc(&chart.y_label)
                .label_style(("sans-serif", 10))
                .draw()
                .map_err(svg_err)?;
            for (r, row) in heat.values.iter().enumerate() {
                for (c, v) in row.iter().enumerate() {
                    let Some(v) = *v else { continue };
                    let share = (v / max).clamp(0.0, 1.0);
                    let shade = |full: f64| (255.0 - (255.0 - full) * share) as u8;
                    let color = RGBColor(shade(8.0), shade(48.0), shade(107.0));
                    let (x, y) = (c as f64, r as f64);
                    ctx.draw_series(std::iter::once(Rectangle::new(
                        [(x, y), (x + 1.0, y + 1.0)],
                        color.filled(),
                    )))
                    .map_err(svg_err)?;
                    let ink = if share > 0.5 { WHITE } else { BLACK };
                    ctx.draw_series(std::iter::once(Text::new(
                        format!("{v:.0}"),
                        (x + 0.1, y + 0.6),
                        ("sans-serif", 10).into_font().color(&ink),
                    )))
                    .map_err(svg_err)?;
                }
            }
        }
        root.present().map_err(svg_err)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Chart {
        Chart {
            title: "read throughput".into(),
            x_label: "block size (bytes, log2)".into(),
            y_label: "MiB/s".into(),
            log2_x: true,
            series: vec![
                Series {
                    name: "warm".into(),
                    points: vec![(1.0, 1.5), (4096.0, 3000.0), (1048576.0, 9000.0)],
                },
                Series {
                    name: "cold".into(),
                    points: vec![(1.0, 1.2), (4096.0, 400.0), (1048576.0, 900.0)],
                },
            ],
            ..Chart::default()
        }
    }

    #[test]
    fn the_chart_carries_title_axes_units_legend_and_size_ticks() {
        let svg = render(&fixture()).unwrap();
        assert!(svg.starts_with("<svg"));
        for text in [
            "read throughput",
            "block size (bytes, log2)",
            "MiB/s",
            "warm",
            "cold",
            "4k",
            "1m",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(svg.matches("<polyline").count() >= 2, "one line per series");
    }

    #[test]
    fn lines_on_a_second_axis_carry_their_own_label_and_legend() {
        let chart = Chart {
            secondary: vec![Series {
                name: "p99".into(),
                points: vec![(1.0, 20.0), (4096.0, 900.0)],
            }],
            y2_label: "p99 latency (µs)".into(),
            ..fixture()
        };
        let svg = render(&chart).unwrap();
        for text in ["p99 latency (µs)", "p99", "warm"] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(svg.matches("<polyline").count() >= 3, "one line per series");
    }

    #[test]
    fn rendering_is_deterministic() {
        assert_eq!(render(&fixture()).unwrap(), render(&fixture()).unwrap());
    }
}
