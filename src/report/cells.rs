//! Cells shared by every view: a raw CSV table from a header and rows, and the few numbers
//! every table shows the same way (MiB/s, percentages, `median (min–max)`).

use super::csv::Table;
use crate::harness::Sample;
use crate::measure::stats::Summary;
use crate::measure::verdict::Figure;
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

/// Microseconds as the disk tables and sentences show them: whole and grouped from 100 µs
/// (`1,250`), one decimal below (`87.5`).
pub fn us(v: f64) -> String {
    if v >= 100.0 {
        crate::units::group_thousands(v.round() as u64)
    } else {
        format!("{v:.1}")
    }
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

/// How far a figure's farthest run lies from its median, as a share: every run is within
/// this of the median (`0.34`: ±34%). Zero for a single run.
pub fn farthest(f: Figure) -> f64 {
    if f.n <= 1 || f.median <= 0.0 {
        return 0.0;
    }
    (f.max - f.median).max(f.median - f.min).max(0.0) / f.median
}

/// The mark glued to a figure in a grid too narrow for a spread column: `±34%` (every run
/// within that of the median, [`farthest`]) for repeated runs; `n=1` for a figure measured
/// once where `repeated` (others in its table have more runs); empty otherwise.
pub fn spread_mark(f: Figure, repeated: bool) -> String {
    match f.n {
        0 | 1 if repeated => "n=1".to_string(),
        0 | 1 => String::new(),
        _ => format!("±{:.0}%", 100.0 * farthest(f)),
    }
}

/// A latency in microseconds in the unit that reads best: `850 µs`, `2.4 ms`, `1.5 s`
/// (microseconds as the tables show them: whole from 100, one decimal below).
pub fn time(us_value: f64) -> String {
    if us_value >= 1e6 {
        format!("{:.1} s", us_value / 1e6)
    } else if us_value >= 1000.0 {
        format!("{:.1} ms", us_value / 1000.0)
    } else {
        format!("{} µs", us(us_value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mark_is_the_farthest_run_from_the_median_or_n_1_among_repeats() {
        let f = Figure {
            median: 1228.4,
            min: 1221.9,
            max: 1644.2,
            n: 3,
        };
        assert_eq!(spread_mark(f, true), "±34%");
        assert_eq!(spread_mark(Figure::one(5.0), true), "n=1");
        assert_eq!(spread_mark(Figure::one(5.0), false), "");
        assert_eq!(farthest(Figure::one(5.0)), 0.0);
    }

    #[test]
    fn microseconds_are_whole_and_grouped_from_100_and_keep_a_decimal_below() {
        assert_eq!(us(12_345.6), "12,346");
        assert_eq!(us(100.0), "100");
        assert_eq!(us(99.94), "99.9");
        assert_eq!(us(8.0), "8.0");
    }
}
