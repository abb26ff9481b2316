//! Cells shared by every view: a raw CSV table from a header and rows, and the few numbers
//! every table shows the same way (MiB/s, percentages, `median (min–max)`).

use super::csv::Table;
use crate::harness::Sample;
use crate::measure::stats::Summary;
use crate::units::MIB;

/// A CSV table from its header and rows.
pub fn table(header: &[&str], rows: Vec<Vec<String>>) -> Table {
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

/// One row of cells.
pub fn cells<const N: usize>(values: [String; N]) -> Vec<String> {
    values.to_vec()
}

/// An optional value, or an empty cell.
pub fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

/// Bytes per second in MiB/s.
pub fn mib(bytes_per_second: f64) -> f64 {
    bytes_per_second / MIB as f64
}

/// A share (0–1) as a percentage with one decimal: `12.5%`.
pub fn pct(fraction: f64) -> String {
    format!("{:.1}%", 100.0 * fraction)
}

/// The one-row table of a single measurement: every named figure as a column.
pub fn one_row(pairs: &[(&str, String)]) -> Table {
    table(
        &pairs.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![pairs.iter().map(|(_, v)| v.clone()).collect()],
    )
}

/// The four cells of one timed run: its rate, its seconds, the share resident before it and
/// the bytes the device read.
pub fn sample_cells(s: &Sample) -> [String; 4] {
    [
        s.bytes_per_second().to_string(),
        s.elapsed.seconds.to_string(),
        opt(s
            .cache
            .and_then(|c| c.residency_before)
            .map(|r| r.fraction())),
        opt(s.device.map(|d| d.read_bytes)),
    ]
}

/// A rate in MiB/s, one decimal: the form of every rate cell.
pub fn rate(bytes_per_second: f64) -> String {
    format!("{:.1}", mib(bytes_per_second))
}

/// The text with its first letter in capitals.
pub fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| {
        f.to_uppercase().collect::<String>() + c.as_str()
    })
}

/// A median rate in MiB/s with its range where there were repeats: `1234.5 (1200.0–1250.0)`.
pub fn rate_cell(s: &Summary) -> String {
    if s.n > 1 {
        format!("{:.1} ({:.1}–{:.1})", mib(s.median), mib(s.min), mib(s.max))
    } else {
        format!("{:.1}", mib(s.median))
    }
}
