//! The pieces of a page that every view fills and every page format (HTML, the study's
//! terminal text, Markdown) lays out: a section per result, its table in human units, and the
//! summary's headline figures.

use super::svg::Chart;
use crate::workload::study::Part;

/// A table with human units (the CSV files keep raw numbers).
#[derive(Debug, Clone, Default)]
pub struct Grid {
    /// Column headings, units included.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
    /// Which columns are aligned left (names and words); empty: the first alone, the
    /// others (numbers) right.
    pub left: Vec<bool>,
    /// Each column's priority, as the column model gives it (0: never left out; the higher,
    /// the sooner left out); empty: all 0. Paper leaves out the lowest.
    pub priority: Vec<u8>,
}

/// One section of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// Which part.
    pub part: Part,
    /// How it ended, in words (`None`: measured in full).
    pub status: Option<String>,
    /// What was measured and how.
    pub how: String,
    /// The table.
    pub grid: Grid,
    /// The chart, if the part has one.
    pub chart: Option<Chart>,
    /// Sentences that explain what the table and chart show.
    pub why: Vec<String>,
    /// The part's own warnings (cause and fix), as text.
    pub warnings: Vec<String>,
}

/// One figure of the summary.
#[derive(Debug, Clone)]
pub struct Headline {
    /// What it is.
    pub label: String,
    /// The figure (the median, with unit).
    pub value: String,
    /// Its spread (min–max over the runs), or what it rests on.
    pub spread: String,
}

/// A table in human units from its header and rows.
pub fn grid(header: &[&str], rows: Vec<Vec<String>>) -> Grid {
    Grid {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
        left: Vec::new(),
        priority: Vec::new(),
    }
}
