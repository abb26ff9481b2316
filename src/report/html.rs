//! `report.html`: one self-contained page (inline CSS and SVG; no script, font or image from
//! anywhere) for a study, and one for several studies side by side. Plain templates: the
//! page is a handful of elements, and every figure comes from the typed result.

use super::json::Provenance;
use super::page::{Grid, Section};
use super::svg::{self, Chart};
use crate::measure::env::Environment;
use crate::units::format_size;
use anyhow::Result;
use std::fmt::Write;

const STYLE: &str = "
:root { color-scheme: light; }
body { font: 16px/1.5 system-ui, -apple-system, 'Segoe UI', sans-serif; color: #1b1f24;
       max-width: 64rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; overflow-wrap: anywhere; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; }
p.env, p.how, p.prov { color: #424a53; }
p.prov code { font-size: .9em; background: #f6f8fa; padding: 0 .2rem; border-radius: 3px; }
p, li, footer { overflow-wrap: anywhere; }
.banner { background: #fff8c5; border: 1px solid #d4a72c; padding: .5rem .8rem; border-radius: 6px; }
.banner.bad { background: #ffebe9; border-color: #cf222e; }
table { border-collapse: collapse; margin: .8rem 0; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid #d0d7de; padding: .25rem .4rem; text-align: right; vertical-align: top; }
th { background: #f6f8fa; font-weight: 600; }
td:first-child, th:first-child, td.l, th.l { text-align: left; }
.nw { white-space: nowrap; }
caption.paper { display: none; }
.scroll { overflow-x: auto; max-width: 100%; }
table.many { font-size: 14px; }
figure.chart { margin: 1rem 0; }
figure.chart svg { width: 100%; height: auto; display: block; }
figure.chart svg.wide { max-width: 960px; }
figure.chart svg.narrow { display: none; max-width: 520px; }
figure.chart svg.print { display: none; }
ul.why li, ul.warn li { margin: .3rem 0; }
ul.warn { color: #9a6700; }
footer { margin-top: 3rem; color: #57606a; font-size: .85rem; }
@media (max-width: 880px) {
  figure.chart svg.wide { display: none; }
  figure.chart svg.narrow { display: block; }
}
@media (max-width: 600px) {
  body { margin: 1rem auto; }
  table { font-size: 14px; }
  th, td { padding: .2rem .35rem; }
}
@page { size: A4; margin: 11mm; }
@page wide { size: A4 landscape; margin: 11mm; }
@media print {
  body { margin: 0; max-width: none; padding: 0; font-size: 10pt; line-height: 1.35; }
  h1 { font-size: 15pt; }
  h2 { font-size: 12.5pt; margin-top: 1.2rem; }
  h2, h3, h4, p.how, p.banner { break-after: avoid; }
  figure.chart, tr, li { break-inside: avoid; }
  /* A short table stays whole; a long one may run on, its heading row repeated. */
  table { break-inside: auto; }
  thead { display: table-header-group; }
  p, li { orphans: 2; widows: 2; }
  .off { display: none; }
  caption.paper { display: table-caption; caption-side: bottom; text-align: left; color: #57606a; }
  .scroll { overflow: visible; }
  table, table.many { font-size: 8pt; max-width: 100%; margin: .4rem 0; }
  /* A number or a unit is one token: cells wrap between words, never inside one. */
  th, td { padding: 1px 3px; overflow-wrap: normal; word-break: normal; hyphens: none; }
  section.wide { page: wide; }
  figure.chart { margin: .4rem 0; }
  figure.chart svg.wide, figure.chart svg.narrow { display: none; }
  /* Short enough to share a (landscape) page with its heading and table. */
  figure.chart svg.print { display: block; max-width: 100%; max-height: 68mm; }
  /* A landscape page is short: its chart lower, its text a little smaller, so the disk
     panel's section ends on its own page. */
  section.wide { font-size: 9pt; }
  section.wide figure.chart svg.print { max-height: 50mm; }
  nav { display: none; }
  footer { margin-top: 1rem; }
}
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

/// Escapes a sentence for HTML and shows its `code` spans (the backticks the text and
/// Markdown outputs keep) as `<code>`; an unpaired backtick stays as it is.
pub fn prose(text: &str) -> String {
    let escaped = escape(text);
    let pieces: Vec<&str> = escaped.split('`').collect();
    if pieces.len() < 3 || pieces.len().is_multiple_of(2) {
        return escaped;
    }
    let mut out = String::with_capacity(escaped.len() + 16 * pieces.len());
    for (i, piece) in pieces.iter().enumerate() {
        if i % 2 == 1 {
            let _ = write!(out, "<code>{piece}</code>");
        } else {
            out.push_str(piece);
        }
    }
    out
}

pub(crate) fn head(out: &mut String, title: &str) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    );
}

/// Columns of this priority or lower (higher numbers) are left out on paper and named in
/// the table's caption there, as the terminal leaves them out at 80 columns.
pub const PAPER_DROPS: u8 = 8;

/// Whether column `k` of `grid` is left out on paper.
fn off_paper(grid: &Grid, k: usize) -> bool {
    grid.priority.get(k).is_some_and(|&p| p >= PAPER_DROPS)
}

/// The classes of column `k`'s cells: `l` aligned left (names, words), `off` left out on
/// paper.
fn classes(grid: &Grid, k: usize) -> &'static str {
    let left = k > 0 && grid.left.get(k).copied().unwrap_or(false);
    match (left, off_paper(grid, k)) {
        (false, false) => "",
        (true, false) => " class=\"l\"",
        (false, true) => " class=\"off\"",
        (true, true) => " class=\"l off\"",
    }
}

/// A cell's text as HTML whose tokens never break: a number and its unit are joined by a
/// no-break space (`12.5&nbsp;ms`), a range (`283.9–302.6`) is kept on one line.
fn cell_html(cell: &str) -> String {
    super::columns::glued(cell)
        .split(' ')
        .map(|word| {
            let word = escape(word).replace('\u{a0}', "&nbsp;");
            if word.contains('–') {
                format!("<span class=\"nw\">{word}</span>")
            } else {
                word
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A table of more columns than this is set in 14 px on screen.
const MANY_COLUMNS: usize = 10;

pub(crate) fn table(out: &mut String, grid: &Grid) {
    if grid.rows.is_empty() {
        return;
    }
    // A table of many columns (the disk panel's 14) is set a little smaller on screen so it
    // stays whole at 1280 px; paper sets every table alike.
    let many = if grid.header.len() > MANY_COLUMNS {
        " class=\"many\""
    } else {
        ""
    };
    let _ = writeln!(out, "<div class=\"scroll\"><table{many}>");
    let dropped: Vec<&str> = (0..grid.header.len())
        .filter(|&k| off_paper(grid, k))
        .map(|k| grid.header[k].as_str())
        .collect();
    if !dropped.is_empty() {
        let _ = writeln!(
            out,
            "<caption class=\"paper\">Left out on paper: {} (on screen and in the CSV).</caption>",
            escape(&dropped.join(", "))
        );
    }
    out.push_str("<thead><tr>");
    for (k, h) in grid.header.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", classes(grid, k), escape(h));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &grid.rows {
        out.push_str("<tr>");
        for (k, cell) in row.iter().enumerate() {
            let _ = write!(out, "<td{}>{}</td>", classes(grid, k), cell_html(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

/// How many characters an A4 portrait line holds at the print tables' 8 pt, cells'
/// padding included: a table whose widest cells need more is printed on a landscape page.
pub const PORTRAIT_CHARS: usize = 112;

/// Whether `grid` needs a landscape page on paper: the columns paper keeps, each as wide as
/// its widest cell (its heading wraps between words), plus two characters of padding each.
pub fn wide_on_paper(grid: &Grid) -> bool {
    let need: usize = (0..grid.header.len())
        .filter(|&k| !off_paper(grid, k))
        .map(|k| {
            let heading = grid.header[k]
                .split(' ')
                .map(|w| w.chars().count())
                .max()
                .unwrap_or(0);
            let cells = grid
                .rows
                .iter()
                .filter_map(|r| r.get(k))
                .map(|c| c.chars().count())
                .max()
                .unwrap_or(0);
            heading.max(cells) + 2
        })
        .sum();
    need > PORTRAIT_CHARS
}

/// An inline chart, drawn three times — [`svg::WIDE`] for a screen, [`svg::NARROW`] for a
/// phone, [`svg::PRINT`] for paper — so its text is at least 14 px at the page's width; the
/// stylesheet shows one.
pub(crate) fn figure(out: &mut String, chart: &Chart, id: &str) -> Result<()> {
    let _ = write!(
        out,
        "<figure class=\"chart\" id=\"chart-{id}\" aria-label=\"{}\">\n{}\n{}\n{}\n</figure>\n",
        escape(&chart.title),
        svg_element(&svg::render_at(chart, svg::WIDE)?, "wide"),
        svg_element(&svg::render_at(chart, svg::NARROW)?, "narrow"),
        svg_element(&svg::render_at(chart, svg::PRINT)?, "print"),
    );
    Ok(())
}

/// The plotters SVG without its XML prologue, with a class for the stylesheet.
fn svg_element(svg: &str, class: &str) -> String {
    let start = svg.find("<svg").unwrap_or(0);
    svg[start..].replacen("<svg ", &format!("<svg class=\"{class}\" role=\"img\" "), 1)
}

/// Who measured, when and how, for the top of a page: the UTC date, the ioscope version and
/// commit, the command line (each argument shell-quoted, control characters escaped, then
/// HTML-escaped: it is a stranger's string). A study read back from JSON gives its saved
/// provenance, never today's. Facts the document lacks are left out.
pub fn provenance(p: &Provenance) -> String {
    let mut out = String::from("<p class=\"prov\">Measured");
    if let Some(date) = &p.date {
        let _ = write!(
            out,
            " on <time datetime=\"{0}\">{0}</time> (UTC)",
            escape(date)
        );
    }
    if p.version.is_empty() {
        out.push_str(" by ioscope");
    } else {
        let _ = write!(out, " by ioscope {}", escape(&p.version));
    }
    if let Some(commit) = &p.commit {
        let _ = write!(out, " (commit <code>{}</code>)", escape(commit));
    }
    if !p.command_line.is_empty() {
        let line = crate::text::printable(&super::markdown::command_line(p));
        let _ = write!(out, ", with <code class=\"cmd\">{}</code>", escape(&line));
    }
    out.push_str(".</p>\n");
    out
}

/// The medium a study measured, in a few words: `ext4 on vda`, `tmpfs (no block device)`.
pub fn medium_name(env: &Environment) -> String {
    let s = &env.storage;
    let fs = s.filesystem.as_deref().unwrap_or("unknown file system");
    match &s.device {
        Some(d) => format!("{fs} on {d}"),
        None => format!("{fs} (no block device)"),
    }
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
        "{} on {}: {} ({} CPUs{}), {} of RAM{}, Linux {}; {} is on {}{}{}.",
        crate::text::printable(&env.path),
        s.mount_point
            .as_deref()
            .map_or("?".into(), crate::text::printable),
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
        crate::report::markdown::load(env).map_or(String::new(), |l| format!(", {l}")),
        env.kernel,
        crate::text::printable(&env.path),
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

pub(crate) fn section(out: &mut String, s: &Section) -> Result<()> {
    let _ = writeln!(
        out,
        "<section class=\"part{}\" id=\"{}\">\n<h2>{}</h2>",
        if wide_on_paper(&s.grid) { " wide" } else { "" },
        s.part.name(),
        prose(s.part.title())
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
        let _ = writeln!(out, "<p class=\"how\">{}</p>", prose(&s.how));
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
pub(crate) fn explanations(out: &mut String, s: &Section) {
    for (class, prefix, items) in [("why", "", &s.why), ("warn", "warning: ", &s.warnings)] {
        if items.is_empty() {
            continue;
        }
        let _ = writeln!(out, "<ul class=\"{class}\">");
        for w in items {
            let _ = writeln!(out, "<li>{prefix}{}</li>", prose(w));
        }
        out.push_str("</ul>\n");
    }
}

/// The page's end: which ioscope made it, with what command, and where the raw figures
/// are (`raw`: the study document it was made from, when the page is not in the study's
/// own directory; `None`: beside it).
pub(crate) fn footer(out: &mut String, command_line: &str, raw: Option<&str>) {
    let raw = match raw {
        None => "raw figures in study.json and the CSV files beside this page".to_string(),
        Some(doc) => format!(
            "raw figures in {} (the study this page was made from)",
            escape(doc)
        ),
    };
    let _ = writeln!(
        out,
        "<footer>Made by ioscope {} ({}); {raw}.</footer>\n</body>\n</html>",
        env!("CARGO_PKG_VERSION"),
        escape(command_line)
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn code_spans_show_as_code_and_nothing_else_is_markup() {
        assert_eq!(
            super::prose("`fast` against dd <b>"),
            "<code>fast</code> against dd &lt;b&gt;"
        );
        // An unpaired backtick is text, not the start of a span.
        assert_eq!(super::prose("a ` b"), "a ` b");
        assert_eq!(super::prose("`a` and `b` c`"), "`a` and `b` c`");
        assert_eq!(super::prose("`<i>`"), "<code>&lt;i&gt;</code>");
    }
}
