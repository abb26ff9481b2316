//! Which latency percentile a target watches (`--latency-target 2ms:p99.9`,
//! `--fsync-target 10ms:p99`), and a target itself: a time and the percentile that must
//! stay under it.

use serde::{Deserialize, Serialize};

/// A latency percentile a target can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Percentile {
    /// The median.
    P50,
    /// 90th.
    P90,
    /// 99th.
    P99,
    /// 99.9th.
    P99_9,
    /// 99.99th.
    P99_99,
    /// The slowest.
    Max,
}

/// Every percentile, with the name users type and results print.
pub const PERCENTILES: [(Percentile, &str); 6] = [
    (Percentile::P50, "p50"),
    (Percentile::P90, "p90"),
    (Percentile::P99, "p99"),
    (Percentile::P99_9, "p99.9"),
    (Percentile::P99_99, "p99.99"),
    (Percentile::Max, "max"),
];

impl Percentile {
    /// Its name: `p99.9`.
    pub fn name(self) -> &'static str {
        PERCENTILES
            .iter()
            .find(|(p, _)| *p == self)
            .map_or("?", |(_, n)| n)
    }

    /// The percentile named `text` (`p99.9`, `99.9`, `max`), if any.
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim().to_ascii_lowercase();
        let t = t.strip_prefix('p').unwrap_or(&t);
        PERCENTILES
            .iter()
            .find(|(_, n)| n.trim_start_matches('p') == t)
            .map(|(p, _)| *p)
    }
}

/// A latency target: `percentile` must stay at or under `limit_us` microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// The limit, microseconds.
    pub limit_us: f64,
    /// The percentile held to it.
    pub percentile: Percentile,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_parse_with_or_without_their_p_and_print_with_it() {
        assert_eq!(Percentile::parse("p99"), Some(Percentile::P99));
        assert_eq!(Percentile::parse("99.9"), Some(Percentile::P99_9));
        assert_eq!(Percentile::parse("MAX"), Some(Percentile::Max));
        assert_eq!(Percentile::parse("p98"), None);
        assert_eq!(Percentile::P99_99.name(), "p99.99");
    }
}
