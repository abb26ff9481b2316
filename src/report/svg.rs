//! SVG charts drawn with plotters, made to be read: lines over a real axis (an optional log₂
//! x axis for block sizes), scatters, grouped bars (turned on their side when the category
//! names would not fit under them) and heat maps. Every text is at least 14 CSS px where a
//! page shows the chart: it is drawn at three sizes, [`WIDE`] for a screen, [`NARROW`] for a
//! phone and [`PRINT`] for an A4 or Letter page. Ticks sit at round values with thousands
//! separators, the grid is light with no minor lines, a min–max band or error bar is drawn
//! wherever a spread was measured, a line chart's y axis is logarithmic where the values
//! span more than [`LOG_SPAN`]× (a bar's never: its length is its value), a colour means
//! the same thing in every chart (cold, warm, cold again), and the legend sits below the
//! plot, never over the data.

use crate::units::group_thousands;
use anyhow::{Result, anyhow};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// Points (x, y), x ascending.
    pub points: Vec<(f64, f64)>,
}

/// The spread of one series: `(x, min, max)` per point (x as in the series' points; for
/// bars, the category index).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spread {
    /// The series it belongs to, by name.
    pub series: String,
    /// `(x, min, max)` per point.
    pub points: Vec<(f64, f64, f64)>,
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
    /// Min–max of the runs behind each point, by series: a band around a line, an error
    /// bar on a bar or a scattered point.
    pub spreads: Vec<Spread>,
    /// Series drawn as points only in a chart whose others are lines (by name): probes
    /// against the lines that bound them.
    pub scatter: Vec<String>,
    /// Colour the series in order (one colour per medium) rather than by the meaning their
    /// names carry (cold, warm, cold again).
    pub by_order: bool,
    /// Both axes linear and from zero, whatever the values span: a graph whose slopes are
    /// the answer (time against calls: a line's slope is its cost per call).
    pub from_zero: bool,
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

/// The size a chart is drawn at, and the size of its text, in the drawing's own units (CSS
/// px when the drawing is shown `width` px wide).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Canvas {
    /// Width of the drawing (its viewBox).
    pub width: u32,
    /// Height of the plot and its title (the legend adds to it).
    pub height: u32,
    /// Size of every text but the title.
    pub font: f64,
}

/// For a screen at least [`WIDE_MIN_PX`] wide, for print, and for `--svg`: 16 px text in
/// 960 px, so 16 px at 1280 px (the page shows it at its own size).
pub const WIDE: Canvas = Canvas {
    width: 960,
    height: 560,
    font: 16.0,
};

/// For a phone: 15 px text in 380 px, so 14.5 px where a 400 px screen shows it 368 px wide.
pub const NARROW: Canvas = Canvas {
    width: 380,
    height: 440,
    font: 15.0,
};

/// For print: 14 px text in 700 px, the width of an A4 page less 12 mm margins (703 px).
pub const PRINT: Canvas = Canvas {
    width: 700,
    height: 440,
    font: 14.0,
};

/// Below this page width (CSS px) a page shows [`NARROW`]: [`WIDE`]'s text would be smaller
/// than 14 px (16 × 840 / 960 = 14).
pub const WIDE_MIN_PX: u32 = 880;

/// The y axis is logarithmic where its positive values span more than this factor.
pub const LOG_SPAN: f64 = 30.0;

const SANS: &str = "sans-serif";

/// Blue: cold (read from the device), in every chart.
const COLD: RGBColor = RGBColor(31, 119, 180);
/// Red: warm (read from the page cache), in every chart.
const WARM: RGBColor = RGBColor(214, 39, 40);
/// Cyan: the second cold read of the cache table.
const COLD_AGAIN: RGBColor = RGBColor(23, 190, 207);
/// Series without one of those meanings, in order (none of the three above).
const OTHERS: [RGBColor; 6] = [
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];
/// Series coloured by order (one per medium).
const ORDERED: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];
const GRID: RGBColor = RGBColor(226, 229, 233);
const AXIS: RGBColor = RGBColor(110, 118, 129);

/// The colour a series name means, if any: its last part (`read, cold` → `cold`).
fn meaning(name: &str) -> Option<RGBColor> {
    let last = name.rsplit([',', ':']).next().unwrap_or(name).trim();
    match last.to_ascii_lowercase().as_str() {
        "cold again" => Some(COLD_AGAIN),
        "cold" => Some(COLD),
        "warm" => Some(WARM),
        _ => None,
    }
}

/// The colour of each series of `chart`, in order.
fn colours(chart: &Chart) -> Vec<RGBColor> {
    let mut other = 0;
    chart
        .series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if chart.by_order {
                return ORDERED[i % ORDERED.len()];
            }
            meaning(&s.name).unwrap_or_else(|| {
                other += 1;
                OTHERS[(other - 1) % OTHERS.len()]
            })
        })
        .collect()
}

/// plotters writes a font of size `s` as `font-size = s / 1.24`, and truncates the sizes of
/// axis text to whole numbers: the size to ask for text at least `px` tall.
fn fs(px: f64) -> f64 {
    (px * 1.24).ceil()
}

/// Width of `text` at `font` px, estimated (sans-serif averages about 0.58 em a character).
fn text_width(text: &str, font: f64) -> f64 {
    text.chars().count() as f64 * font * 0.58
}

fn svg_err<E: std::fmt::Display>(e: E) -> anyhow::Error {
    anyhow!("svg: {e}")
}

/// A tick label: thousands separated (`8,000`), no trailing zeros (`2.5`, `0.05`).
pub fn tick_label(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return "0".into();
    }
    // Beyond what a real figure reaches (a document read back may hold anything): short.
    if !(1e-9..1e18).contains(&v.abs()) {
        return format!("{v:.2e}");
    }
    // Four significant digits, so 999.9999 (from a log axis) is 1,000.
    let p = 10f64.powi(3 - v.abs().log10().floor() as i32);
    let r = (v * p).round() / p;
    if r.abs() >= 1000.0 {
        let s = group_thousands(r.abs().round() as u64);
        return if r < 0.0 { format!("-{s}") } else { s };
    }
    let digits = if r.abs() >= 1.0 {
        2
    } else {
        (-(r.abs().log10().floor()) as usize) + 2
    };
    let s = format!("{r:.digits$}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_string()
}

/// The most ticks any axis asks for: `max` is clamped to it, so an absurd request (or an
/// absurd range) never builds more than this many.
const MOST_TICKS: usize = 64;

/// `lo..=hi` made drawable: both finite and in order (`None` when neither is finite).
fn finite_range(lo: f64, hi: f64) -> Option<(f64, f64)> {
    let (lo, hi) = match (lo.is_finite(), hi.is_finite()) {
        (true, true) => (lo, hi),
        (true, false) => (lo, if hi < 0.0 { lo } else { f64::MAX }),
        (false, true) => (if lo > 0.0 { hi } else { f64::MIN }, hi),
        (false, false) => return None,
    };
    Some(if lo <= hi { (lo, hi) } else { (hi, lo) })
}

/// Round ticks over `lo..=hi` on a linear axis, at most `max`: steps of 1, 2 or 5 × 10^k.
/// Bounded whatever the range (infinite, NaN, reversed or a few ulps wide): at most `max`.
pub fn linear_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let max = max.clamp(2, MOST_TICKS);
    let Some((lo, hi)) = finite_range(lo, hi) else {
        return Vec::new();
    };
    // Halved so the span of two values near ±f64::MAX stays finite.
    let span = (hi / 2.0 - lo / 2.0) * 2.0;
    let span = if span.is_finite() {
        span.max(1e-12)
    } else {
        f64::MAX
    };
    let raw = span / (max - 1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * mag);
    if !(step.is_finite() && step > 0.0) {
        return vec![lo, hi];
    }
    let first = (lo / step).ceil();
    let ticks: Vec<f64> = (0..=max)
        .map(|k| (first + k as f64) * step)
        .take_while(|t| t.is_finite() && *t <= hi + step * 1e-9)
        .collect();
    thin(ticks, max)
}

/// Round ticks over `lo..=hi` (both positive) on a log axis, at most `max`: 1-2-5 in each
/// decade where they fit, else 1 and 3, else powers of ten (every other one if need be).
/// Bounded whatever the range (zero, subnormal, infinite, NaN or reversed): at most `max`.
pub fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let max = max.clamp(2, MOST_TICKS);
    let Some((lo, hi)) = finite_range(lo, hi) else {
        return Vec::new();
    };
    // Only positive values have a logarithm; the decades stay within f64's normal range.
    let (lo, hi) = (lo.max(f64::MIN_POSITIVE), hi.max(f64::MIN_POSITIVE));
    let (d0, d1) = (
        (lo.log10().floor() as i32).max(-307),
        (hi.log10().ceil() as i32).min(308),
    );
    let inside = |t: &f64| t.is_finite() && *t >= lo * (1.0 - 1e-9) && *t <= hi * (1.0 + 1e-9);
    let decades = (d1 - d0 + 1).max(1) as usize;
    for mults in [&[1.0, 2.0, 5.0][..], &[1.0, 3.0][..], &[1.0][..]] {
        if decades * mults.len() > 3 * max + 6 {
            continue;
        }
        let v: Vec<f64> = (d0..=d1)
            .flat_map(|d| mults.iter().map(move |m| m * 10f64.powi(d)))
            .filter(inside)
            .collect();
        if v.len() <= max {
            return v;
        }
    }
    // Every k-th power of ten, the smallest k that fits: k = ceil(decades / max) always
    // does, so no more than that is tried.
    for every in 2..=decades.div_ceil(max).max(2) + 2 {
        let v: Vec<f64> = (d0..=d1)
            .filter(|d| d.rem_euclid(every as i32) == 0)
            .map(|d| 10f64.powi(d))
            .filter(inside)
            .collect();
        if v.len() <= max {
            return v;
        }
    }
    vec![lo, hi]
}

/// Keeps every k-th of `ticks` (from the first), the smallest k that leaves at most `max`.
fn thin(ticks: Vec<f64>, max: usize) -> Vec<f64> {
    let k = ticks.len().div_ceil(max.max(1)).max(1);
    ticks.into_iter().step_by(k).collect()
}

/// A linear axis with the ticks given (plotters' `WithKeyPoints` over `f64` cannot draw
/// its mesh: it has no default formatting, and the labels are ours anyway).
#[derive(Clone)]
struct Ticked {
    lo: f64,
    hi: f64,
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(lo: f64, hi: f64, ticks: Vec<f64>) -> Self {
        Self { lo, hi, ticks }
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        if span == 0.0 {
            return limit.0;
        }
        let share = (value - self.lo) / span;
        limit.0 + (share * f64::from(limit.1 - limit.0) + 1e-3).floor() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// How values map onto an axis: as they are, or their logarithm (base 10).
#[derive(Clone, Copy)]
struct Scale {
    log: bool,
}

impl Scale {
    fn to(self, v: f64) -> f64 {
        if self.log { v.max(1e-300).log10() } else { v }
    }
    fn from(self, v: f64) -> f64 {
        if self.log { 10f64.powf(v) } else { v }
    }
}

/// The value axis of `chart`: its scale, its range (in the scale's terms) and its ticks.
struct ValueAxis {
    scale: Scale,
    range: (f64, f64),
    ticks: Vec<f64>,
}

/// The value axis for `values` (spreads included), with at most `max_ticks` ticks; `bars`
/// leaves room above the tallest bar for its label; `allow_log`: whether it may be
/// logarithmic.
fn value_axis(values: &[f64], max_ticks: usize, bars: bool, allow_log: bool) -> ValueAxis {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let positive: Vec<f64> = finite.iter().copied().filter(|v| *v > 0.0).collect();
    let hi = finite.iter().copied().fold(0.0f64, f64::max);
    let lo_pos = positive.iter().copied().fold(f64::MAX, f64::min);
    // Only where every value can be shown: a zero (an offset, an empty bar) has no logarithm.
    let log = allow_log
        && positive.len() >= 2
        && positive.len() == finite.len()
        && hi / lo_pos > LOG_SPAN;
    if log {
        let scale = Scale { log: true };
        let (a, b) = (lo_pos.log10(), hi.log10());
        let pad = 0.06 * (b - a);
        let range = (a - pad, b + pad * if bars { 2.0 } else { 1.0 });
        let ticks = log_ticks(scale.from(range.0), scale.from(range.1), max_ticks)
            .into_iter()
            .map(|t| scale.to(t))
            .collect();
        return ValueAxis {
            scale,
            range,
            ticks,
        };
    }
    let lo = finite.iter().copied().fold(0.0f64, f64::min);
    let hi = if hi > lo { hi } else { lo + 1.0 };
    let top = hi + (hi - lo) * if bars { 0.12 } else { 0.06 };
    ValueAxis {
        scale: Scale { log: false },
        range: (lo, top),
        ticks: linear_ticks(lo, top, max_ticks),
    }
}

/// An axis description that says its scale is logarithmic: `time per call (ns, log scale)`.
fn log_desc(desc: &str) -> String {
    match desc.strip_suffix(')') {
        Some(open) if open.contains('(') => format!("{open}, log scale)"),
        _ => format!("{desc} (log scale)"),
    }
}

/// The title in lines that fit the canvas's width.
fn title_lines(title: &str, canvas: Canvas) -> Vec<String> {
    let size = canvas.font * 1.25;
    let chars = ((canvas.width as f64 - 20.0) / (size * 0.58)).max(10.0) as usize;
    textwrap::wrap(title, chars)
        .into_iter()
        .map(|l| l.into_owned())
        .collect()
}

/// The height the title's lines take.
fn title_height(lines: &[String], canvas: Canvas) -> u32 {
    (lines.len() as f64 * canvas.font * 1.25 * 1.3 + canvas.font * 0.8) as u32
}

/// Draws the title's lines centred at the top of `area`.
fn draw_title<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    lines: &[String],
    canvas: Canvas,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let size = canvas.font * 1.25;
    for (i, line) in lines.iter().enumerate() {
        let style = TextStyle::from((SANS, fs(size)).into_font())
            .pos(Pos::new(HPos::Center, VPos::Top))
            .color(&BLACK);
        area.draw(&Text::new(
            line.clone(),
            (
                (canvas.width / 2) as i32,
                (canvas.font * 0.5 + i as f64 * size * 1.3) as i32,
            ),
            style,
        ))
        .map_err(svg_err)?;
    }
    Ok(())
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
enum Mark {
    Line,
    Dot,
    Block,
    Band,
}

/// Legend entries laid out in rows under the plot: (row, x) of each, and the rows' count.
fn legend_layout(
    entries: &[(String, RGBColor, Mark)],
    canvas: Canvas,
) -> (Vec<(usize, f64)>, usize) {
    let mut at = Vec::new();
    let (mut row, mut x) = (0usize, 10.0f64);
    for (name, _, _) in entries {
        let w = 30.0 + text_width(name, canvas.font) + 18.0;
        if x > 10.0 && x + w > canvas.width as f64 - 6.0 {
            row += 1;
            x = 10.0;
        }
        at.push((row, x));
        x += w;
    }
    (at, if entries.is_empty() { 0 } else { row + 1 })
}

/// The height the legend's rows take.
fn legend_height(rows: usize, canvas: Canvas) -> u32 {
    if rows == 0 {
        0
    } else {
        (rows as f64 * canvas.font * 1.7 + canvas.font * 0.6) as u32
    }
}

/// Draws the legend's entries in rows in `area`: a mark in the series' colour, its name.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBColor, Mark)],
    canvas: Canvas,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let (at, _) = legend_layout(entries, canvas);
    let line = canvas.font * 1.7;
    for ((name, colour, mark), (row, x)) in entries.iter().zip(at) {
        let y = (canvas.font * 0.3 + row as f64 * line + line / 2.0) as i32;
        let x = x as i32;
        let half = (canvas.font * 0.4) as i32;
        match mark {
            Mark::Line => area
                .draw(&PathElement::new(
                    vec![(x, y), (x + 24, y)],
                    colour.stroke_width(3),
                ))
                .map_err(svg_err)?,
            Mark::Dot => area
                .draw(&Circle::new((x + 12, y), half, colour.filled()))
                .map_err(svg_err)?,
            Mark::Block => area
                .draw(&Rectangle::new(
                    [(x + 4, y - half), (x + 20, y + half)],
                    colour.filled(),
                ))
                .map_err(svg_err)?,
            Mark::Band => {
                area.draw(&Rectangle::new(
                    [(x, y - half), (x + 24, y + half)],
                    colour.mix(0.25).filled(),
                ))
                .map_err(svg_err)?;
                area.draw(&PathElement::new(
                    vec![(x + 12, y - half), (x + 12, y + half)],
                    colour.stroke_width(2),
                ))
                .map_err(svg_err)?;
            }
        }
        area.draw(&Text::new(
            name.clone(),
            (x + 30, y),
            TextStyle::from((SANS, fs(canvas.font)).into_font())
                .pos(Pos::new(HPos::Left, VPos::Center))
                .color(&BLACK),
        ))
        .map_err(svg_err)?;
    }
    Ok(())
}

/// The spread of series `name`, sorted by x.
fn spread_of<'a>(chart: &'a Chart, name: &str) -> Option<&'a Spread> {
    chart
        .spreads
        .iter()
        .find(|s| s.series == name && !s.points.is_empty())
}

/// The legend entry for spreads, when any is drawn.
fn spread_entry(chart: &Chart) -> Option<(String, RGBColor, Mark)> {
    chart
        .series
        .iter()
        .any(|s| spread_of(chart, &s.name).is_some())
        .then(|| ("min–max of the runs".to_string(), AXIS, Mark::Band))
}

/// Renders `chart` as an SVG document at [`WIDE`] (the `--svg` file).
pub fn render(chart: &Chart) -> Result<String> {
    render_at(chart, WIDE)
}

/// Renders `chart` as an SVG document at `canvas`'s size.
pub fn render_at(chart: &Chart, canvas: Canvas) -> Result<String> {
    if !chart.heat.is_empty() {
        return render_heat(chart, canvas);
    }
    if !chart.categories.is_empty() {
        return render_bars(chart, canvas);
    }
    render_xy(chart, canvas)
}

/// The widest tick label's width at `font`.
fn widest(labels: impl Iterator<Item = String>, font: f64) -> f64 {
    labels.map(|l| text_width(&l, font)).fold(0.0, f64::max)
}

/// Lines, or points, over a real x axis.
fn render_xy(chart: &Chart, canvas: Canvas) -> Result<String> {
    let font = canvas.font;
    let colours = colours(chart);
    let fx = |x: f64| if chart.log2_x { x.max(1.0).log2() } else { x };
    let xs: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| fx(p.0)))
        .collect();
    let (mut x0, mut x1) = xs
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &x| (a.min(x), b.max(x)));
    if x0 > x1 {
        (x0, x1) = (0.0, 1.0);
    }
    if chart.from_zero && !chart.log2_x {
        x0 = x0.min(0.0);
    }
    if x0 == x1 {
        // One x (a one-step curve): a tenth of it either side, so the ticks are round and
        // none repeats (±1 around 1,000 gave 999.5 and 1,000.5, both shown as "1,001"-ish).
        let w = (x0.abs() * 0.1).max(1.0);
        (x0, x1) = (x0 - w, x1 + w);
    }
    // Room at both ends, so the first and last points and their ticks are not on the edge.
    let pad = (x1 - x0) * 0.03;
    let (x0, x1) = (x0 - pad, x1 + pad);
    let mut ys: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .collect();
    ys.extend(
        chart
            .spreads
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2])),
    );
    let titles = title_lines(&chart.title, canvas);
    let title_h = title_height(&titles, canvas);
    let mut entries: Vec<(String, RGBColor, Mark)> = chart
        .series
        .iter()
        .zip(&colours)
        .map(|(s, c)| {
            let dots = chart.points_only || chart.scatter.contains(&s.name);
            (
                s.name.clone(),
                *c,
                if dots { Mark::Dot } else { Mark::Line },
            )
        })
        .collect();
    // Secondary lines take, in order, the colours no primary line has.
    let free: Vec<RGBColor> = ORDERED
        .iter()
        .copied()
        .filter(|c| !colours.contains(c))
        .collect();
    let colours2: Vec<RGBColor> = (0..chart.secondary.len())
        .map(|i| {
            if free.is_empty() {
                ORDERED[i % ORDERED.len()]
            } else {
                free[i % free.len()]
            }
        })
        .collect();
    entries.extend(
        chart
            .secondary
            .iter()
            .zip(&colours2)
            .map(|(s, c)| (s.name.clone(), *c, Mark::Line)),
    );
    entries.extend(spread_entry(chart));
    let (_, rows) = legend_layout(&entries, canvas);
    let legend_h = legend_height(rows, canvas);
    let plot_h = canvas.height.saturating_sub(title_h).max(200);
    let total_h = title_h + plot_h + legend_h;
    let y2_axis = (!chart.secondary.is_empty()).then(|| {
        let ys: Vec<f64> = chart
            .secondary
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .collect();
        value_axis(
            &ys,
            ((plot_h as f64 - 3.0 * font) / (font * 2.4)) as usize,
            false,
            true,
        )
    });
    let y2_area = y2_axis.as_ref().map_or(0.0, |a| {
        widest(a.ticks.iter().map(|t| tick_label(a.scale.from(*t))), font) + font * 1.6 + 12.0
    });
    let y_axis = value_axis(
        &ys,
        ((plot_h as f64 - 3.0 * font) / (font * 2.4)) as usize,
        false,
        // Positions (a scatter of offsets over time) stay linear, and slopes; magnitudes may
        // go log.
        !chart.points_only && !chart.from_zero,
    );
    let y_labels: Vec<String> = y_axis
        .ticks
        .iter()
        .map(|t| tick_label(y_axis.scale.from(*t)))
        .collect();
    let y_area = widest(y_labels.iter().cloned(), font) + font * 1.6 + 12.0;
    let plot_w = canvas.width as f64 - y_area - y2_area - 16.0;
    // x ticks: the data's own block sizes on a log₂ axis, round values otherwise; as many as
    // fit side by side.
    let x_ticks: Vec<f64> = if chart.log2_x {
        let mut t: Vec<f64> = xs.iter().map(|x| x.round()).collect();
        t.sort_by(f64::total_cmp);
        t.dedup();
        if t.len() < 2 {
            t = ((x0.ceil() as i64)..=(x1.floor() as i64))
                .take(MOST_TICKS)
                .map(|v| v as f64)
                .collect();
        }
        let w = widest(
            t.iter()
                .map(|v| crate::units::format_block_size(2f64.powf(*v).round() as u64)),
            font,
        ) + font;
        thin(t, (plot_w / w).max(2.0) as usize)
    } else {
        let guess = (plot_w / (font * 6.0)).max(2.0) as usize;
        let t = linear_ticks(x0, x1, guess);
        let w = widest(t.iter().map(|v| tick_label(*v)), font) + font;
        linear_ticks(x0, x1, ((plot_w / w).max(2.0) as usize).min(guess))
    };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (canvas.width, total_h)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_err)?;
        let (top, rest) = root.split_vertically(title_h);
        let (plot, legend) = rest.split_vertically(plot_h);
        draw_title(&top, &titles, canvas)?;
        let (y2_range, y2_ticks) = y2_axis
            .as_ref()
            .map_or(((0.0, 1.0), Vec::new()), |a| (a.range, a.ticks.clone()));
        let mut ctx = ChartBuilder::on(&plot)
            .margin_right(16)
            .margin_top(6)
            .x_label_area_size((font * 3.2) as u32)
            .y_label_area_size(y_area as u32)
            .right_y_label_area_size(y2_area as u32)
            .build_cartesian_2d(
                Ticked::new(x0, x1, x_ticks.clone()),
                Ticked::new(y_axis.range.0, y_axis.range.1, y_axis.ticks.clone()),
            )
            .map_err(svg_err)?
            .set_secondary_coord(
                Ticked::new(x0, x1, x_ticks),
                Ticked::new(y2_range.0, y2_range.1, y2_ticks),
            );
        let log2 = chart.log2_x;
        let x_fmt = move |v: &f64| {
            if log2 {
                crate::units::format_block_size(2f64.powf(*v).round() as u64)
            } else {
                tick_label(*v)
            }
        };
        let scale = y_axis.scale;
        let y_fmt = move |v: &f64| tick_label(scale.from(*v));
        let y_desc = if scale.log {
            log_desc(&chart.y_label)
        } else {
            chart.y_label.clone()
        };
        ctx.configure_mesh()
            .x_desc(&chart.x_label)
            .y_desc(&y_desc)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style((SANS, fs(font)))
            .axis_desc_style((SANS, fs(font)))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(AXIS)
            .draw()
            .map_err(svg_err)?;
        let to = |x: f64, y: f64| (fx(x), scale.to(y));
        // Bands first, under every line.
        for (s, colour) in chart.series.iter().zip(&colours) {
            let Some(spread) = spread_of(chart, &s.name) else {
                continue;
            };
            let mut pts = spread.points.clone();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            if chart.points_only || chart.scatter.contains(&s.name) || pts.len() < 2 {
                let cap = (x1 - x0) * 0.006;
                for &(x, lo, hi) in &pts {
                    let (xx, _) = to(x, lo);
                    ctx.draw_series(std::iter::once(PathElement::new(
                        vec![(xx, scale.to(lo)), (xx, scale.to(hi))],
                        colour.stroke_width(2),
                    )))
                    .map_err(svg_err)?;
                    for y in [lo, hi] {
                        ctx.draw_series(std::iter::once(PathElement::new(
                            vec![(xx - cap, scale.to(y)), (xx + cap, scale.to(y))],
                            colour.stroke_width(2),
                        )))
                        .map_err(svg_err)?;
                    }
                }
                continue;
            }
            let mut outline: Vec<(f64, f64)> = pts.iter().map(|&(x, _, hi)| to(x, hi)).collect();
            outline.extend(pts.iter().rev().map(|&(x, lo, _)| to(x, lo)));
            ctx.draw_series(std::iter::once(Polygon::new(
                outline,
                colour.mix(0.18).filled(),
            )))
            .map_err(svg_err)?;
        }
        let radius = (font / 4.0).round() as i32;
        for (s, colour) in chart.series.iter().zip(&colours) {
            let colour = *colour;
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| to(x, y)).collect();
            let dots = chart.points_only || chart.scatter.contains(&s.name);
            if !dots {
                ctx.draw_series(LineSeries::new(pts.clone(), colour.stroke_width(3)))
                    .map_err(svg_err)?;
            }
            ctx.draw_series(
                pts.into_iter()
                    .map(|p| Circle::new(p, radius, colour.filled())),
            )
            .map_err(svg_err)?;
        }
        if let Some(axis) = &y2_axis {
            let scale2 = axis.scale;
            let y2_fmt = move |v: &f64| tick_label(scale2.from(*v));
            let y2_desc = if scale2.log {
                log_desc(&chart.y2_label)
            } else {
                chart.y2_label.clone()
            };
            ctx.configure_secondary_axes()
                .y_desc(&y2_desc)
                .y_label_formatter(&y2_fmt)
                .label_style((SANS, fs(font)))
                .axis_desc_style((SANS, fs(font)))
                .axis_style(AXIS)
                .draw()
                .map_err(svg_err)?;
            for (s, colour) in chart.secondary.iter().zip(&colours2) {
                let colour = *colour;
                let pts: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .map(|&(x, y)| (fx(x), scale2.to(y)))
                    .collect();
                ctx.draw_secondary_series(LineSeries::new(pts.clone(), colour.stroke_width(3)))
                    .map_err(svg_err)?;
                ctx.draw_secondary_series(
                    pts.into_iter()
                        .map(|p| TriangleMarker::new(p, radius + 1, colour.filled())),
                )
                .map_err(svg_err)?;
            }
        }
        draw_legend(&legend, &entries, canvas)?;
        root.present().map_err(svg_err)?;
    }
    Ok(out)
}

/// Grouped bars: a group per category, a bar per series, the value above each bar where it
/// fits, an error bar where a spread was measured. When the category names would not fit
/// side by side under their groups, the bars lie on their side with the names at the left.
fn render_bars(chart: &Chart, canvas: Canvas) -> Result<String> {
    let font = canvas.font;
    let colours = colours(chart);
    let n = chart.categories.len();
    let per = chart.series.len().max(1);
    let mut values: Vec<f64> = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .collect();
    values.extend(
        chart
            .spreads
            .iter()
            .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2])),
    );
    let titles = title_lines(&chart.title, canvas);
    let title_h = title_height(&titles, canvas);
    let mut entries: Vec<(String, RGBColor, Mark)> = chart
        .series
        .iter()
        .zip(&colours)
        .map(|(s, c)| (s.name.clone(), *c, Mark::Block))
        .collect();
    entries.extend(spread_entry(chart));
    let (_, rows) = legend_layout(&entries, canvas);
    let legend_h = legend_height(rows, canvas);
    let name_w = widest(chart.categories.iter().cloned(), font) + font * 0.8;
    let upright_w = canvas.width as f64 - 7.0 * font - 16.0;
    let sideways = name_w * n as f64 > upright_w;
    // Names wider than a third of the canvas go above their bars, not beside them.
    let above = sideways && name_w > canvas.width as f64 / 3.0;
    let plot_h = if sideways {
        let label = if above { font * 1.5 } else { 0.0 };
        let group = (per as f64 * font * 1.3 + font * 0.9 + label).max(font * 1.9);
        (n as f64 * group + font * 4.0) as u32
    } else {
        canvas.height.saturating_sub(title_h).max(200)
    };
    let total_h = title_h + plot_h + legend_h;
    let value_len = if above {
        canvas.width as f64 - 40.0
    } else if sideways {
        canvas.width as f64 - name_w - font * 1.6 - 30.0
    } else {
        plot_h as f64 - 3.0 * font
    };
    // A bar's length is its value: on a log axis a bar ten times another is drawn barely
    // longer (an empty loop beside a read made `read 1 B` and `lseek` look alike), so bars
    // stand on a linear axis whatever their span; their labels carry the small values.
    let axis = value_axis(
        &values,
        (value_len / (font * if sideways { 5.5 } else { 2.4 })) as usize,
        true,
        false,
    );
    let scale = axis.scale;
    let value_labels: Vec<String> = axis
        .ticks
        .iter()
        .map(|t| tick_label(scale.from(*t)))
        .collect();
    let base = if scale.log {
        axis.range.0
    } else {
        0.0f64.max(axis.range.0)
    };
    // Category k sits at [k, k + 1) on its axis; upright bars run left to right, sideways
    // ones top to bottom.
    let slot = |k: usize| {
        if sideways {
            (n - 1 - k) as f64
        } else {
            k as f64
        }
    };
    let centres: Vec<f64> = if above {
        Vec::new()
    } else {
        (0..n).map(|k| slot(k) + 0.5).collect()
    };
    // The share of its slot the group of bars takes, from where.
    let (band_start, band) = if above { (0.06, 0.56) } else { (0.1, 0.8) };
    let names = chart.categories.clone();
    let name_at = move |v: &f64| {
        let k = v.floor();
        if k < 0.0 || (v - k - 0.5).abs() > 1e-6 {
            return String::new();
        }
        let k = k as usize;
        let i = if sideways { n.saturating_sub(1 + k) } else { k };
        names.get(i).cloned().unwrap_or_default()
    };
    let value_fmt = move |v: &f64| tick_label(scale.from(*v));
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (canvas.width, total_h)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_err)?;
        let (top, rest) = root.split_vertically(title_h);
        let (plot, legend) = rest.split_vertically(plot_h);
        draw_title(&top, &titles, canvas)?;
        let value_range = Ticked::new(axis.range.0, axis.range.1, axis.ticks.clone());
        let category_range = Ticked::new(0.0, n as f64, centres);
        let (x_spec, y_spec, x_area, y_area) = if sideways {
            (
                value_range,
                category_range,
                font * 3.2,
                if above {
                    8.0
                } else {
                    name_w + font * 1.6 + 6.0
                },
            )
        } else {
            (
                category_range,
                value_range,
                font * 3.2,
                widest(value_labels.iter().cloned(), font) + font * 1.6 + 12.0,
            )
        };
        let mut ctx = ChartBuilder::on(&plot)
            .margin_right(16)
            .margin_top(6)
            .x_label_area_size(x_area as u32)
            .y_label_area_size(y_area as u32)
            .build_cartesian_2d::<_, _>(x_spec, y_spec)
            .map_err(svg_err)?;
        let value_desc = if scale.log {
            log_desc(&chart.y_label)
        } else {
            chart.y_label.clone()
        };
        {
            let mut mesh = ctx.configure_mesh();
            mesh.label_style((SANS, fs(font)))
                .axis_desc_style((SANS, fs(font)))
                .bold_line_style(GRID)
                .light_line_style(TRANSPARENT)
                .axis_style(AXIS);
            if above {
                mesh.x_desc(&value_desc)
                    .x_label_formatter(&value_fmt)
                    .disable_y_mesh();
            } else if sideways {
                mesh.x_desc(&value_desc)
                    .y_desc(&chart.x_label)
                    .x_label_formatter(&value_fmt)
                    .y_label_formatter(&name_at)
                    .disable_y_mesh();
            } else {
                mesh.x_desc(&chart.x_label)
                    .y_desc(&value_desc)
                    .x_label_formatter(&name_at)
                    .y_label_formatter(&value_fmt)
                    .disable_x_mesh();
            }
            mesh.draw().map_err(svg_err)?;
        }
        let width = band / per as f64;
        if above {
            ctx.draw_series((0..n).map(|k| {
                Text::new(
                    chart.categories[k].clone(),
                    (base, slot(k) + 0.95),
                    TextStyle::from((SANS, fs(font)).into_font())
                        .pos(Pos::new(HPos::Left, VPos::Top))
                        .color(&BLACK),
                )
            }))
            .map_err(svg_err)?;
        }
        // (category position, value) to the chart's (x, y).
        let at = |c: f64, v: f64| if sideways { (v, c) } else { (c, v) };
        let bar_px = if sideways {
            0.0
        } else {
            (canvas.width as f64 - 7.0 * font) / n.max(1) as f64 * width
        };
        for (k, (s, colour)) in chart.series.iter().zip(&colours).enumerate() {
            let colour = *colour;
            let lead = |i: f64| {
                let i = i.round().max(0.0) as usize;
                let start = slot(i) + band_start;
                if sideways {
                    // The first series at the top of its group.
                    start + (per - 1 - k) as f64 * width
                } else {
                    start + k as f64 * width
                }
            };
            ctx.draw_series(s.points.iter().map(|&(i, y)| {
                let l = lead(i);
                Rectangle::new(
                    [at(l, base), at(l + width * 0.92, scale.to(y).max(base))],
                    colour.filled(),
                )
            }))
            .map_err(svg_err)?;
            if let Some(spread) = spread_of(chart, &s.name) {
                for &(i, lo, hi) in &spread.points {
                    let mid = lead(i) + width * 0.46;
                    let cap = width * 0.22;
                    let (lo, hi) = (scale.to(lo).max(base), scale.to(hi).max(base));
                    for path in [
                        vec![at(mid, lo), at(mid, hi)],
                        vec![at(mid - cap, lo), at(mid + cap, lo)],
                        vec![at(mid - cap, hi), at(mid + cap, hi)],
                    ] {
                        ctx.draw_series(std::iter::once(PathElement::new(
                            path,
                            BLACK.mix(0.75).stroke_width(2),
                        )))
                        .map_err(svg_err)?;
                    }
                }
            }
            if !sideways && spread_of(chart, &s.name).is_none() {
                let labels: Vec<(String, f64, f64)> = s
                    .points
                    .iter()
                    .map(|&(i, y)| (tick_label(y), lead(i) + width * 0.46, scale.to(y)))
                    .collect();
                if labels
                    .iter()
                    .all(|(t, _, _)| text_width(t, font) <= bar_px * 1.15)
                {
                    ctx.draw_series(labels.into_iter().map(|(t, x, y)| {
                        Text::new(
                            t,
                            (x, y),
                            TextStyle::from((SANS, fs(font)).into_font())
                                .pos(Pos::new(HPos::Center, VPos::Bottom))
                                .color(&BLACK),
                        )
                    }))
                    .map_err(svg_err)?;
                }
            }
        }
        draw_legend(&legend, &entries, canvas)?;
        root.present().map_err(svg_err)?;
    }
    Ok(out)
}

/// Heat maps in a grid of panels (as many across as the canvas holds), each cell coloured
/// from pale to dark by its share of the panel's largest value and labelled with the value
/// where the label fits.
fn render_heat(chart: &Chart, canvas: Canvas) -> Result<String> {
    let font = canvas.font;
    let across = chart
        .heat
        .len()
        .min((canvas.width as usize / 440).max(1))
        .max(1);
    let down = chart.heat.len().div_ceil(across);
    let panel_w = canvas.width / across as u32;
    let panel_h = (panel_w as f64 * 0.85).max(300.0) as u32;
    let titles = title_lines(&chart.title, canvas);
    let title_h = title_height(&titles, canvas);
    let (w, h) = (canvas.width, title_h + panel_h * down as u32);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(svg_err)?;
        let (top, rest) = root.split_vertically(title_h);
        draw_title(&top, &titles, canvas)?;
        let panels = rest.split_evenly((down, across));
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
            let y_area = widest(heat.rows.iter().cloned(), font) + font * 1.6 + 10.0;
            let mut ctx = ChartBuilder::on(panel)
                .caption(&heat.title, (SANS, fs(font * 1.1)))
                .margin(8)
                .x_label_area_size((font * 3.2) as u32)
                .y_label_area_size(y_area as u32)
                .build_cartesian_2d(
                    Ticked::new(
                        0.0,
                        cols as f64,
                        (0..cols).map(|c| c as f64 + 0.5).collect(),
                    ),
                    Ticked::new(
                        0.0,
                        rows as f64,
                        (0..rows).map(|r| r as f64 + 0.5).collect(),
                    ),
                )
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
            // Column names thinned to what fits side by side.
            let cell_px = (panel_w as f64 - y_area - 16.0) / cols as f64;
            let every = (widest(heat.columns.iter().cloned(), font) + font * 0.5)
                .div_euclid(cell_px.max(1.0)) as usize
                + 1;
            let x_fmt = |v: &f64| {
                let i = v.floor() as usize;
                if i.is_multiple_of(every) {
                    name_at(&columns, *v)
                } else {
                    String::new()
                }
            };
            let y_fmt = |v: &f64| name_at(&row_names, *v);
            ctx.configure_mesh()
                .disable_mesh()
                .x_label_formatter(&x_fmt)
                .y_label_formatter(&y_fmt)
                .x_desc(&chart.x_label)
                .y_desc(&chart.y_label)
                .label_style((SANS, fs(font)))
                .axis_desc_style((SANS, fs(font)))
                .axis_style(AXIS)
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
                    let label = tick_label(v.round());
                    if text_width(&label, font) > cell_px * 0.95 {
                        continue;
                    }
                    let ink = if share > 0.5 { WHITE } else { BLACK };
                    ctx.draw_series(std::iter::once(Text::new(
                        label,
                        (x + 0.5, y + 0.5),
                        TextStyle::from((SANS, fs(font)).into_font())
                            .pos(Pos::new(HPos::Center, VPos::Center))
                            .color(&ink),
                    )))
                    .map_err(svg_err)?;
                }
            }
        }
        root.present().map_err(svg_err)?;
    }
    Ok(out)
}

/// The `font-size`s an SVG of ours asks for, as numbers.
pub fn font_sizes(svg: &str) -> Vec<f64> {
    svg.split("font-size=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next()?.parse().ok())
        .collect()
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
        // 20 to 900 spans more than 30x: the right axis goes logarithmic and says so.
        for text in ["p99 latency (µs, log scale)", "p99", "warm"] {
            assert!(svg.contains(text), "{text} missing");
        }
        assert!(svg.matches("<polyline").count() >= 3, "one line per series");
    }

    #[test]
    fn one_x_gets_round_ticks_none_repeated() {
        let chart = Chart {
            title: "one rate".into(),
            x_label: "offered load (IOPS)".into(),
            y_label: "µs".into(),
            series: vec![Series {
                name: "p99".into(),
                points: vec![(1000.0, 250.0)],
            }],
            ..Chart::default()
        };
        let svg = render(&chart).unwrap();
        // The x ticks: the labels of the tick texts under the plot, each once.
        let labels: Vec<&str> = svg
            .split("<text")
            .skip(1)
            .filter_map(|t| t.split('>').nth(1)?.split('<').next())
            .map(str::trim)
            .filter(|t| t.replace(',', "").parse::<f64>().is_ok_and(|v| v >= 500.0))
            .collect();
        let mut seen = std::collections::HashSet::new();
        for l in &labels {
            assert!(seen.insert(*l), "{l} twice in {labels:?}");
        }
        assert!(labels.contains(&"1,000"), "{labels:?}");
        assert!(!labels.iter().any(|l| l.contains('.')), "{labels:?}");
    }

    #[test]
    fn rendering_is_deterministic() {
        assert_eq!(render(&fixture()).unwrap(), render(&fixture()).unwrap());
    }

    #[test]
    fn tick_labels_are_round_with_thousands_separators() {
        assert_eq!(tick_label(8000.0), "8,000");
        assert_eq!(tick_label(999.99999), "1,000");
        assert_eq!(tick_label(2.5), "2.5");
        assert_eq!(tick_label(10.0), "10");
        assert_eq!(tick_label(0.05), "0.05");
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(
            linear_ticks(0.0, 8500.0, 6),
            vec![0.0, 2000.0, 4000.0, 6000.0, 8000.0]
        );
        assert_eq!(
            log_ticks(100.0, 2300.0, 8),
            vec![100.0, 200.0, 500.0, 1000.0, 2000.0]
        );
        assert_eq!(log_ticks(1.0, 1e6, 4), vec![1.0, 100.0, 10_000.0, 1e6]);
    }

    /// Ends of an axis a document read back may lead to: zero, subnormal, the extremes of
    /// f64, infinities and NaN, in either order.
    const ABSURD: [f64; 14] = [
        0.0,
        5e-324,
        2.3e-308,
        f64::MIN_POSITIVE,
        1e-30,
        1.0,
        1e300,
        1e307,
        1.7e308,
        f64::MAX,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -1e308,
    ];

    #[test]
    fn ticks_are_bounded_for_absurd_ranges() {
        for lo in ABSURD {
            for hi in ABSURD {
                for max in [0, 1, 2, 5, 12, 1000, usize::MAX] {
                    let want = max.clamp(2, MOST_TICKS);
                    let lin = linear_ticks(lo, hi, max);
                    assert!(lin.len() <= want, "linear {lo} {hi} {max}: {}", lin.len());
                    let log = log_ticks(lo, hi, max);
                    assert!(log.len() <= want, "log {lo} {hi} {max}: {}", log.len());
                    for t in lin.iter().chain(&log) {
                        assert!(t.is_finite(), "{lo} {hi} {max}: tick {t}");
                        assert!(tick_label(*t).len() < 40, "{t}");
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn ticks_are_bounded_whatever_the_range(
            lo in proptest::num::f64::ANY,
            hi in proptest::num::f64::ANY,
            max in 0usize..10_000,
        ) {
            let want = max.clamp(2, MOST_TICKS);
            proptest::prop_assert!(linear_ticks(lo, hi, max).len() <= want);
            proptest::prop_assert!(log_ticks(lo, hi, max).len() <= want);
        }
    }

    #[test]
    fn every_text_is_at_least_fourteen_px_where_each_canvas_is_shown() {
        for (canvas, shown) in [
            (WIDE, 960.0),
            (WIDE, 840.0),
            (NARROW, 368.0),
            (PRINT, 700.0),
        ] {
            for chart in [fixture(), bars(8)] {
                let svg = render_at(&chart, canvas).unwrap();
                let smallest = font_sizes(&svg).into_iter().fold(f64::MAX, f64::min);
                let px = smallest * shown / canvas.width as f64;
                assert!(px >= 14.0 - 1e-9, "{px} px at {shown} px wide");
            }
        }
    }

    fn bars(n: usize) -> Chart {
        Chart {
            title: "readers".into(),
            x_label: "reader".into(),
            y_label: "MiB/s".into(),
            categories: (0..n).map(|i| format!("reader number {i}")).collect(),
            series: vec![Series {
                name: "cold".into(),
                points: (0..n).map(|i| (i as f64, 100.0 + i as f64)).collect(),
            }],
            ..Chart::default()
        }
    }

    #[test]
    fn values_that_span_more_than_thirty_times_get_a_log_axis_and_others_do_not() {
        let svg = render(&fixture()).unwrap();
        assert!(svg.contains("MiB/s (log scale)"), "1.2 to 9000 spans 7500x");
        assert_eq!(log_desc("time (ns)"), "time (ns, log scale)");
        let mut narrow = fixture();
        for s in &mut narrow.series {
            for p in &mut s.points {
                p.1 = 100.0 + p.1 / 1000.0;
            }
        }
        assert!(!render(&narrow).unwrap().contains("log scale"));
    }

    #[test]
    fn bars_stand_on_a_linear_axis_whatever_their_span() {
        let mut chart = bars(3);
        chart.series[0].points = vec![(0.0, 1.0), (1.0, 40.0), (2.0, 5000.0)];
        assert!(!render(&chart).unwrap().contains("log scale"));
    }

    #[test]
    fn cold_and_warm_have_one_colour_whatever_their_order_or_operation() {
        let chart = |names: &[&str]| Chart {
            series: names
                .iter()
                .map(|n| Series {
                    name: n.to_string(),
                    points: vec![],
                })
                .collect(),
            ..Chart::default()
        };
        let a = colours(&chart(&["read, cold", "read, warm"]));
        let b = colours(&chart(&["warm"]));
        let c = colours(&chart(&["cold again", "warm", "cold"]));
        assert_eq!(a[1], b[0]);
        assert_eq!(a[1], c[1]);
        assert_eq!(a[0], c[2]);
        assert_ne!(c[0], c[2]);
        let media = Chart {
            by_order: true,
            ..chart(&["A: cold", "B: cold"])
        };
        let m = colours(&media);
        assert_ne!(m[0], m[1], "by order, one colour per medium");
    }

    #[test]
    fn names_too_wide_for_upright_bars_lay_the_bars_on_their_side() {
        let upright = render_at(&bars(2), WIDE).unwrap();
        let sideways = render_at(&bars(12), NARROW).unwrap();
        // Upright: the values above the bars; sideways: the names at the left, the values
        // on the x axis.
        assert!(upright.contains(">\n100\n<") || upright.contains("100"));
        assert!(sideways.contains("reader number 11"));
        let height = |svg: &str| -> u32 {
            svg.split("height=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        assert!(height(&sideways) > NARROW.height / 2);
    }
}
