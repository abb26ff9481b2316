//! Latency percentiles as every view shows them: the one `latency` text line, the CSV
//! columns (present only when some row has a latency, so older results keep their tables);
//! the reason an engine gives none is `engine::Caps::latency_absent`.

use crate::measure::latency::Latency;
use crate::units::format_seconds;

/// CSV column names of a latency, in nanoseconds.
pub const COLUMNS: [&str; 7] = [
    "latency_count",
    "latency_p50_ns",
    "latency_p90_ns",
    "latency_p99_ns",
    "latency_p99_9_ns",
    "latency_p99_99_ns",
    "latency_max_ns",
];

/// Nanoseconds as a short duration: `1.25 µs`.
pub fn nanos(ns: u64) -> String {
    format_seconds(ns as f64 * 1e-9)
}

/// The text of a `latency` line: `p50 1.20 µs, p99 3.10 µs, p99.9 9.80 µs, max 1.02 ms`,
/// then what was timed (`12,345 read() calls`).
pub fn line(l: &Latency, call: &str) -> String {
    let parts: Vec<String> = l
        .shown()
        .iter()
        .map(|(label, v)| format!("{label} {}", nanos(*v)))
        .collect();
    format!(
        "{}  (each of {} {call} calls timed)",
        parts.join(", "),
        crate::units::group_thousands(l.count)
    )
}

/// The compact form for a table cell: `p50 / p99 / p99.9 / max` in the units of each.
pub fn cell(l: &Latency) -> String {
    l.shown()
        .iter()
        .map(|(_, v)| nanos(*v))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// The CSV cells of `COLUMNS` for one row (empty when it has no latency).
pub fn cells(l: Option<&Latency>) -> [String; 7] {
    match l {
        Some(l) => [l.count, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.max].map(|v| v.to_string()),
        None => Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Latency {
        Latency {
            count: 12_345,
            min: 800,
            p50: 1_200,
            p90: 2_000,
            p99: 3_100,
            p99_9: 9_800,
            p99_99: 400_000,
            max: 1_020_000,
        }
    }

    #[test]
    fn the_text_line_shows_p50_p99_p99_9_and_max_with_the_calls_timed() {
        assert_eq!(
            line(&sample(), "read()"),
            "p50 1.20 µs, p99 3.10 µs, p99.9 9.80 µs, max 1.02 ms  (each of 12,345 read() calls timed)"
        );
        assert_eq!(cell(&sample()), "1.20 µs / 3.10 µs / 9.80 µs / 1.02 ms");
    }

    #[test]
    fn csv_cells_are_raw_nanoseconds_or_empty() {
        assert_eq!(cells(Some(&sample()))[1], "1200");
        assert_eq!(cells(None), <[String; 7]>::default());
    }
}
