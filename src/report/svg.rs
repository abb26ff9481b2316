//! SVG line charts drawn with plotters: labelled axes with units, a title, one line per
//! series, and an optional log₂ x axis for block sizes.

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
    /// Draw points only, no lines between them (a scatter: offsets over time).
    pub points_only: bool,
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
        let mut ctx = ChartBuilder::on(&root)
            .caption(&chart.title, ("sans-serif", 22))
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, 0.0..y1)
            .map_err(|e| anyhow!("svg: {e}"))?;
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
    fn rendering_is_deterministic() {
        assert_eq!(render(&fixture()).unwrap(), render(&fixture()).unwrap());
    }
}
