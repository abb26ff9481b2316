//! One table per result: a list of [`Column`]s (a name, a unit, a priority, the cell of each
//! back end) that the text, Markdown and CSV back ends render, so a view builds its table
//! once and the formats cannot drift apart (hyperfine's `export/markup.rs` idea: one table,
//! several markups).
//!
//! The text back end fits a width: a cell is never split (a number, a unit, a row name stays
//! on one line; headings wrap only between words, and a column of words between words), the
//! lowest-priority columns go first when the table does not fit and are named in one line
//! under it, and below a floor (the name column and one value column do not fit) each row
//! becomes a `key: value` list. Markdown and CSV keep every column of theirs.

use super::csv::Table;
use super::page::Grid;
use super::terminal::GLUE;
pub(crate) use super::terminal::glued;
use comfy_table::{CellAlignment, ContentArrangement, presets::UTF8_FULL_CONDENSED};
use std::borrow::Cow;
use textwrap::core::display_width;

/// A cell of one row, as a back end shows it.
type Cell<'a, R> = Box<dyn Fn(&R) -> String + 'a>;

/// How a column's Markdown shows it: the text's cell under `name unit`, its own heading or
/// cell, or not at all.
struct Markdown<'a, R> {
    heading: Option<&'static str>,
    cell: Option<Cell<'a, R>>,
}

/// One column of a result's table.
pub struct Column<'a, R> {
    /// The heading the text shows (its unit is said in the line above the table): fixed,
    /// or made from the data (a pivot's record sizes).
    name: Cow<'static, str>,
    /// The unit of its cells, added to the Markdown heading (`p50 µs`); empty when none.
    unit: &'static str,
    /// 0: never hidden; the higher, the sooner hidden when the text does not fit.
    priority: u8,
    /// Cells aligned right (numbers).
    right: bool,
    /// Cells of words, which may wrap between words (never numbers).
    words: bool,
    /// The cell for a reader (text, and Markdown unless it has its own); `None`: no
    /// human column (CSV only).
    cell: Option<Cell<'a, R>>,
    /// Shown in the text.
    text: bool,
    /// Shown in Markdown, and how.
    markdown: Option<Markdown<'a, R>>,
    /// The CSV column: its name and raw cell.
    csv: Option<(&'static str, Cell<'a, R>)>,
}

impl<'a, R> Column<'a, R> {
    /// A column for a reader (text and Markdown), numbers aligned right.
    pub fn new(
        name: impl Into<Cow<'static, str>>,
        unit: &'static str,
        priority: u8,
        cell: impl Fn(&R) -> String + 'a,
    ) -> Self {
        Column {
            name: name.into(),
            unit,
            priority,
            right: true,
            words: false,
            cell: Some(Box::new(cell)),
            text: true,
            markdown: Some(Markdown {
                heading: None,
                cell: None,
            }),
            csv: None,
        }
    }

    /// A column of the CSV alone (a raw figure no reader's table shows).
    pub fn raw(key: &'static str, raw: impl Fn(&R) -> String + 'a) -> Self {
        Column {
            name: Cow::Borrowed(key),
            unit: "",
            priority: u8::MAX,
            right: false,
            words: false,
            cell: None,
            text: false,
            markdown: None,
            csv: Some((key, Box::new(raw))),
        }
    }

    /// The same column in the CSV, under `key`, with raw cells.
    pub fn csv(mut self, key: &'static str, raw: impl Fn(&R) -> String + 'a) -> Self {
        self.csv = Some((key, Box::new(raw)));
        self
    }

    /// Cells of words, aligned left, that may wrap between words.
    pub fn words(mut self) -> Self {
        self.right = false;
        self.words = true;
        self
    }

    /// Cells aligned left, never wrapped (a name).
    pub fn left(mut self) -> Self {
        self.right = false;
        self
    }

    /// Not in the text.
    pub fn markdown_only(mut self) -> Self {
        self.text = false;
        self
    }

    /// Not in Markdown.
    pub fn text_only(mut self) -> Self {
        self.markdown = None;
        self
    }

    /// Markdown's own heading for it.
    pub fn heading(mut self, heading: &'static str) -> Self {
        if let Some(m) = &mut self.markdown {
            m.heading = Some(heading);
        }
        self
    }

    /// Markdown's own cell for it (the text keeps the shorter one).
    pub fn markdown_cell(mut self, cell: impl Fn(&R) -> String + 'a) -> Self {
        if let Some(m) = &mut self.markdown {
            m.cell = Some(Box::new(cell));
        }
        self
    }

    fn human(&self, row: &R) -> String {
        self.cell.as_ref().map_or(String::new(), |c| c(row))
    }

    fn markdown_heading(&self) -> String {
        match self.markdown.as_ref().and_then(|m| m.heading) {
            Some(h) => h.to_string(),
            None if self.unit.is_empty() => self.name.to_string(),
            None => format!("{} {}", self.name, self.unit),
        }
    }
}

/// The CSV table of `rows` (every column with a CSV name, in order, raw cells).
pub fn csv<R>(columns: &[Column<'_, R>], rows: &[R]) -> Table {
    let cols: Vec<&(&str, Cell<'_, R>)> = columns.iter().filter_map(|c| c.csv.as_ref()).collect();
    Table {
        header: cols.iter().map(|(k, _)| k.to_string()).collect(),
        rows: rows
            .iter()
            .map(|r| cols.iter().map(|(_, f)| f(r)).collect())
            .collect(),
    }
}

/// Every Markdown column's heading and cells for `rows`, none left out.
fn markdown_all<R>(columns: &[Column<'_, R>], rows: &[R]) -> Table {
    let cols: Vec<&Column<'_, R>> = columns.iter().filter(|c| c.markdown.is_some()).collect();
    Table {
        header: cols.iter().map(|c| c.markdown_heading()).collect(),
        rows: rows
            .iter()
            .map(|r| {
                cols.iter()
                    .map(
                        |c| match c.markdown.as_ref().and_then(|m| m.cell.as_ref()) {
                            Some(f) => f(r),
                            None => c.human(r),
                        },
                    )
                    .collect()
            })
            .collect(),
    }
}

/// The Markdown table of `rows` (headings with units, the reader's cells), as
/// [`super::markdown::table`] takes it. A column no row fills (every cell empty: a mark no
/// row has, a figure older results lack) is left out, as the text leaves it out.
pub fn markdown<R>(columns: &[Column<'_, R>], rows: &[R]) -> Table {
    let t = markdown_all(columns, rows);
    let kept: Vec<usize> = (0..t.header.len())
        .filter(|&k| k == 0 || t.rows.is_empty() || t.rows.iter().any(|row| !row[k].is_empty()))
        .collect();
    Table {
        header: kept.iter().map(|&k| t.header[k].clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|row| kept.iter().map(|&k| row[k].clone()).collect())
            .collect(),
    }
}

/// The reader's whole table of `rows` (Markdown's columns, headings and cells), as a page's
/// HTML and Markdown show it: the grid of a study's section, so the section and the
/// command's own Markdown are one table. A column that says nothing (every cell empty or
/// `-`, as a write sweep's residency) is left out, as the text leaves out a column no row
/// fills.
pub fn grid<R>(columns: &[Column<'_, R>], rows: &[R]) -> Grid {
    let t = markdown_all(columns, rows);
    let cols: Vec<&Column<'_, R>> = columns.iter().filter(|c| c.markdown.is_some()).collect();
    let says = |k: usize| k == 0 || t.rows.iter().any(|r| !matches!(r[k].as_str(), "" | "-"));
    let kept: Vec<usize> = (0..cols.len()).filter(|&k| says(k)).collect();
    Grid {
        header: kept.iter().map(|&k| t.header[k].clone()).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| kept.iter().map(|&k| r[k].clone()).collect())
            .collect(),
        left: kept.iter().map(|&k| !cols[k].right).collect(),
        priority: kept.iter().map(|&k| cols[k].priority).collect(),
    }
}

/// What the text back end made: the lines, and the columns it left out to fit.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    /// The table (or list), ending with a newline, the hidden columns' line included.
    pub text: String,
    /// The names of the columns left out.
    pub hidden: Vec<String>,
}

/// Each column's border and padding in a drawn table: `│ ` before, ` ` after (the right
/// border is one more for the whole row).
const FRAME: usize = 3;

/// The widest word of `s`, a number and its unit counted as one.
fn widest_word(s: &str) -> usize {
    glued(s)
        .split([' ', '\n'])
        .map(display_width)
        .max()
        .unwrap_or(0)
}

/// The drawn width of a table whose columns are `widths` wide.
fn drawn(widths: impl Iterator<Item = usize>) -> usize {
    widths.map(|w| w + FRAME).sum::<usize>() + 1
}

/// `s` wrapped between words to `width` (a word wider stays whole, and a number keeps its
/// unit: [`glued`]).
fn wrap(s: &str, width: usize) -> String {
    if display_width(s) <= width {
        return s.to_string();
    }
    let options = textwrap::Options::new(width.max(1))
        .break_words(false)
        .word_separator(textwrap::WordSeparator::AsciiSpace)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    textwrap::wrap(&glued(s), options)
        .join("\n")
        .replace(GLUE, " ")
}

/// The text of `rows` fitted to `width` columns (none: every column at its natural width).
/// The first column names the row and is never hidden.
pub fn text<R>(columns: &[Column<'_, R>], rows: &[R], width: Option<usize>) -> Fitted {
    let cols: Vec<&Column<'_, R>> = columns.iter().filter(|c| c.text).collect();
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| cols.iter().map(|c| c.human(r)).collect())
        .collect();
    let natural: Vec<usize> = (0..cols.len())
        .map(|k| {
            cells
                .iter()
                .map(|row| display_width(&row[k]))
                .chain([display_width(&cols[k].name)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let least: Vec<usize> = (0..cols.len())
        .map(|k| {
            cells
                .iter()
                .map(|row| {
                    if cols[k].words {
                        widest_word(&row[k])
                    } else {
                        display_width(&row[k])
                    }
                })
                .chain([widest_word(&cols[k].name)])
                .max()
                .unwrap_or(0)
        })
        .collect();
    // A column with nothing in it (a mark no row has) takes no room and is not named.
    let mut shown: Vec<usize> = (0..cols.len())
        .filter(|&k| k == 0 || cells.iter().any(|row| !row[k].is_empty()))
        .collect();
    let empty: Vec<usize> = (0..cols.len()).filter(|k| !shown.contains(k)).collect();
    if let Some(width) = width {
        while drawn(shown.iter().map(|&k| least[k])) > width && shown.len() > 2 {
            // The lowest priority goes first; of equals, the rightmost.
            let (at, _) = shown
                .iter()
                .enumerate()
                .skip(1)
                .max_by_key(|&(i, &k)| (cols[k].priority, i))
                .expect("more than two columns are shown");
            shown.remove(at);
        }
        if drawn(shown.iter().map(|&k| least[k])) > width {
            return Fitted {
                text: list(&cols, &cells),
                hidden: Vec::new(),
            };
        }
    }
    let mut widths: Vec<usize> = shown.iter().map(|&k| least[k]).collect();
    let mut room = width.map_or(usize::MAX, |w| w - drawn(widths.iter().copied()));
    // The room left is shared in proportion to what each column lacks of its natural width
    // (so one long column of words does not leave the next one a sliver), then what
    // rounding left goes from the left.
    let lacks: Vec<usize> = shown
        .iter()
        .zip(&widths)
        .map(|(&k, &w)| natural[k] - w)
        .collect();
    let total: usize = lacks.iter().sum();
    if room < total {
        for (w, &lack) in widths.iter_mut().zip(&lacks) {
            let more = lack * room / total;
            *w += more;
        }
        room -= widths.iter().sum::<usize>() - shown.iter().map(|&k| least[k]).sum::<usize>();
    }
    for (i, &k) in shown.iter().enumerate() {
        let more = (natural[k] - widths[i]).min(room);
        widths[i] += more;
        room -= more;
    }
    let mut table = comfy_table::Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_content_arrangement(ContentArrangement::Disabled);
    table.set_header(
        shown
            .iter()
            .zip(&widths)
            .map(|(&k, &w)| wrap(&cols[k].name, w))
            .collect::<Vec<_>>(),
    );
    for row in &cells {
        table.add_row(
            shown
                .iter()
                .zip(&widths)
                .map(|(&k, &w)| {
                    if cols[k].words {
                        wrap(&row[k], w)
                    } else {
                        row[k].clone()
                    }
                })
                .collect::<Vec<_>>(),
        );
    }
    for (i, &k) in shown.iter().enumerate() {
        if cols[k].right
            && let Some(c) = table.column_mut(i)
        {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let hidden: Vec<String> = (0..cols.len())
        .filter(|k| !shown.contains(k) && !empty.contains(k) && !cols[*k].name.is_empty())
        .map(|k| cols[k].name.to_string())
        .collect();
    let mut text = format!("{table}\n");
    if !hidden.is_empty() {
        let them = if hidden.len() == 1 { "it" } else { "them" };
        text.push_str(&format!(
            "{} hidden — --wide shows {them}\n",
            hidden.join(", ")
        ));
    }
    Fitted { text, hidden }
}

/// The text of `rows` fitted to stdout ([`super::terminal::table_width`]).
pub fn for_terminal<R>(columns: &[Column<'_, R>], rows: &[R]) -> Fitted {
    text(columns, rows, super::terminal::table_width())
}

/// Each row as `heading: cell` lines: the row's name, then its other non-empty cells
/// indented.
fn list<R>(cols: &[&Column<'_, R>], cells: &[Vec<String>]) -> String {
    let mut out = String::new();
    for row in cells {
        for (k, cell) in row.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
            let indent = if k == 0 { "" } else { "  " };
            let unit = if cols[k].unit.is_empty() || k == 0 {
                String::new()
            } else {
                format!(" {}", cols[k].unit)
            };
            match &*cols[k].name {
                "" => out.push_str(&format!("{indent}{cell}\n")),
                name => out.push_str(&format!("{indent}{name}: {cell}{unit}\n")),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Row {
        name: &'static str,
        rate: f64,
        iops: u64,
        p99: f64,
    }

    fn columns<'a>() -> Vec<Column<'a, Row>> {
        vec![
            Column::new("row", "", 0, |r: &Row| r.name.to_string())
                .left()
                .csv("row", |r: &Row| r.name.to_string()),
            Column::new("MiB/s", "", 0, |r: &Row| format!("{:.1}", r.rate))
                .csv("bytes_per_second", |r: &Row| {
                    (r.rate * 1048576.0).to_string()
                }),
            Column::new("IOPS", "", 1, |r: &Row| {
                crate::units::group_thousands(r.iops)
            }),
            Column::new("p99", "µs", 2, |r: &Row| format!("{:.0}", r.p99)).text_only(),
            Column::raw("ios", |r: &Row| r.iops.to_string()),
        ]
    }

    fn rows() -> Vec<Row> {
        vec![
            Row {
                name: "SEQ1M Q8T1",
                rate: 3507.6,
                iops: 119_686,
                p99: 95355.0,
            },
            Row {
                name: "RND4K Q1T1",
                rate: 65.6,
                iops: 16_783,
                p99: 78.7,
            },
        ]
    }

    #[test]
    fn csv_and_markdown_keep_their_own_columns_in_order() {
        let c = csv(&columns(), &rows());
        assert_eq!(c.header, ["row", "bytes_per_second", "ios"]);
        assert_eq!(c.rows[1][2], "16783");
        let m = markdown(&columns(), &rows());
        assert_eq!(m.header, ["row", "MiB/s", "IOPS"]);
        assert_eq!(m.rows[0], ["SEQ1M Q8T1", "3507.6", "119,686"]);
    }

    #[test]
    fn a_table_that_fits_shows_every_column_and_hides_none() {
        let f = text(&columns(), &rows(), Some(80));
        assert!(f.hidden.is_empty());
        assert!(f.text.contains("3507.6") && f.text.contains("119,686"));
        assert!(f.text.contains("95355"));
    }

    #[test]
    fn a_narrow_table_drops_its_lowest_priority_column_and_names_it() {
        let f = text(&columns(), &rows(), Some(36));
        assert_eq!(f.hidden, ["p99"]);
        assert!(
            f.text
                .lines()
                .all(|l| display_width(l) <= 36 || l.contains("hidden"))
        );
        assert!(f.text.contains("p99 hidden — --wide shows it"));
        assert!(f.text.contains("SEQ1M Q8T1") && f.text.contains("119,686"));
    }

    #[test]
    fn below_the_floor_each_row_is_a_list_of_whole_numbers() {
        let f = text(&columns(), &rows(), Some(5));
        assert_eq!(
            f.text,
            "row: SEQ1M Q8T1\n  MiB/s: 3507.6\n  IOPS: 119,686\n  p99: 95355 µs\nrow: RND4K Q1T1\n  MiB/s: 65.6\n  IOPS: 16,783\n  p99: 79 µs\n"
        );
    }

    #[test]
    fn a_column_no_row_fills_is_left_out_unnamed() {
        let mut cols = columns();
        cols.push(Column::new("", "", 0, |_: &Row| String::new()).left());
        let f = text(&cols, &rows(), None);
        assert!(f.hidden.is_empty());
        assert_eq!(f.text, text(&columns(), &rows(), None).text);
    }

    #[test]
    fn a_column_named_from_the_data_is_hidden_and_named_like_any_other() {
        let mut cols = columns();
        let name = format!("{}k", 64);
        cols.push(Column::new(name, "", 9, |r: &Row| r.iops.to_string()));
        let f = text(&cols, &rows(), Some(36));
        assert_eq!(f.hidden, ["p99", "64k"]);
        assert!(f.text.contains("p99, 64k hidden"), "{}", f.text);
        let full = text(&cols, &rows(), None);
        assert!(full.text.contains("64k") && full.text.contains("119686"));
    }

    #[test]
    fn a_wrapped_cell_keeps_each_number_beside_its_unit() {
        struct Line(&'static str);
        let cols: Vec<Column<'_, Line>> = vec![
            Column::new("figure", "", 0, |_: &Line| "write".to_string()).left(),
            Column::new("spread / basis", "", 0, |l: &Line| l.0.to_string()).words(),
        ];
        let rows = [Line(
            "978.3–1785.0 (n=2) in calls of 128 KiB; fsync 23.84 ms; tied with 2 others",
        )];
        let f = text(&cols, &rows, Some(34));
        assert!(f.text.lines().all(|l| display_width(l) <= 34), "{}", f.text);
        assert!(f.text.lines().count() > 5, "{}", f.text);
        for whole in ["128 KiB;", "23.84 ms;", "2 others", "978.3–1785.0 (n=2)"] {
            assert!(f.text.contains(whole), "{whole}:\n{}", f.text);
        }
        assert!(!f.text.contains(GLUE));
    }

    #[test]
    fn headings_wrap_between_words_and_numbers_never() {
        let cols: Vec<Column<'_, Row>> = vec![
            Column::new("row", "", 0, |r: &Row| r.name.to_string()).left(),
            Column::new("resident before", "", 0, |r: &Row| format!("{:.1}", r.rate)),
        ];
        let f = text(&cols, &rows(), Some(28));
        assert!(f.text.contains("resident"), "{}", f.text);
        assert!(f.text.contains("3507.6") && f.text.contains("SEQ1M Q8T1"));
        assert!(f.text.lines().all(|l| display_width(l) <= 28), "{}", f.text);
    }
}
