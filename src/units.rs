//! Units: the only place that parses or formats sizes, rates and durations.
//!
//! Every size suffix is a power of 1024 (as fio's default): `4k` is 4096 bytes.

use std::time::Duration;
use thiserror::Error;

/// One kibibyte.
pub const KIB: u64 = 1 << 10;
/// One megabyte (10^6 bytes), as the disk panels print rates.
pub const MB: f64 = 1e6;
/// One mebibyte.
pub const MIB: u64 = 1 << 20;
/// One gibibyte.
pub const GIB: u64 = 1 << 30;
/// One tebibyte.
pub const TIB: u64 = 1 << 40;

const SIZE_FORMS: &str = "a number of bytes with an optional suffix k, m, g, t, p, e (or K, KiB, MiB, ...), all powers of 1024: 4096, 4k, 4KiB, 1m, 2G";
const DURATION_FORMS: &str = "a number with a unit: 500ms, 5s, 1.5s, 2m, 1h";

/// A size or duration the user typed that could not be understood.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum UnitError {
    /// The text is not a size.
    #[error("invalid size '{input}': expected {SIZE_FORMS}")]
    Size {
        /// What the user typed.
        input: String,
    },
    /// The size does not fit in 64 bits.
    #[error("size '{input}' is too large (more than 16 EiB)")]
    Overflow {
        /// What the user typed.
        input: String,
    },
    /// Zero where zero is meaningless.
    #[error("'{input}' must be greater than zero")]
    Zero {
        /// What the user typed.
        input: String,
    },
    /// The text is not a duration.
    #[error("invalid duration '{input}': expected {DURATION_FORMS}")]
    Duration {
        /// What the user typed.
        input: String,
    },
}

/// Parses a size such as `4096`, `4k`, `4KiB`, `1m`, `2G` (powers of 1024).
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let bad = || UnitError::Size {
        input: input.to_string(),
    };
    let text = input.trim();
    let digits_end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return Err(bad());
    }
    let (number, suffix) = text.split_at(digits_end);
    let shift = match suffix.trim_start().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        "p" | "pb" | "pib" => 50,
        "e" | "eb" | "eib" => 60,
        _ => return Err(bad()),
    };
    let overflow = || UnitError::Overflow {
        input: input.to_string(),
    };
    let value: u64 = number.parse().map_err(|_| overflow())?;
    value.checked_mul(1u64 << shift).ok_or_else(overflow)
}

/// Parses a size that must not be zero (a block size, a count).
pub fn parse_nonzero_size(input: &str) -> Result<u64, UnitError> {
    match parse_size(input)? {
        0 => Err(UnitError::Zero {
            input: input.to_string(),
        }),
        n => Ok(n),
    }
}

/// Parses a duration such as `500ms`, `5s`, `1.5s`, `2m` or `1h`; a bare number is seconds.
pub fn parse_duration(input: &str) -> Result<Duration, UnitError> {
    let bad = || UnitError::Duration {
        input: input.to_string(),
    };
    let text = input.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| bad())?;
    let scale = match unit.trim() {
        "" | "s" | "sec" => 1.0,
        "ms" => 1e-3,
        "us" => 1e-6,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => return Err(bad()),
    };
    Duration::try_from_secs_f64(value * scale).map_err(|_| bad())
}

/// Formats a byte count with a binary suffix: `4 KiB`, `1.5 MiB`, `17 B`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut unit = 0;
    while unit + 1 < UNITS.len() && bytes >= 1u64 << (10 * (unit + 1)) {
        unit += 1;
    }
    if unit == 0 {
        return format!("{bytes} B");
    }
    let value = bytes as f64 / (1u64 << (10 * unit)) as f64;
    if bytes.is_multiple_of(1u64 << (10 * unit)) {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

/// Two sizes a message compares (`--size (A) is smaller than one block of B`), each as
/// [`format_size`] writes it, or both in exact bytes where the two would read the same:
/// `2,300 bytes` and `2,302 bytes`, never `2.2 KiB` twice.
pub fn format_size_pair(a: u64, b: u64) -> (String, String) {
    let (x, y) = (format_size(a), format_size(b));
    if a != b && x == y {
        (
            format!("{} bytes", group_thousands(a)),
            format!("{} bytes", group_thousands(b)),
        )
    } else {
        (x, y)
    }
}

/// Formats a block size compactly for table columns: `1`, `4k`, `64k`, `1m`, `1.5m`.
pub fn format_block_size(bytes: u64) -> String {
    for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
        let unit = 1u64 << shift;
        if bytes >= unit {
            return if bytes.is_multiple_of(unit) {
                format!("{}{suffix}", bytes / unit)
            } else {
                format!("{:.1}{suffix}", bytes as f64 / unit as f64)
            };
        }
    }
    bytes.to_string()
}

/// A count (bytes, calls) per second; 0 when no time elapsed.
pub fn per_second(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds
    } else {
        0.0
    }
}

/// Formats a rate in MiB/s with a precision that suits its magnitude.
pub fn format_mib_per_s(bytes_per_second: f64) -> String {
    let mib = bytes_per_second / MIB as f64;
    if mib >= 100.0 {
        format!("{mib:.0} MiB/s")
    } else if mib >= 1.0 {
        format!("{mib:.1} MiB/s")
    } else {
        format!("{mib:.3} MiB/s")
    }
}

/// Formats a rate in bytes per second, whole and grouped: `104,857,600 B/s` (beside the
/// MiB/s figure, for the assignment's B/s).
pub fn format_bytes_per_second(bytes_per_second: f64) -> String {
    let whole = if bytes_per_second.is_finite() {
        bytes_per_second.max(0.0).round() as u64
    } else {
        0
    };
    format!("{} B/s", group_thousands(whole))
}

/// Formats system calls per second with thousands separators: `1,234,567 calls/s`.
pub fn format_calls_per_second(per_second: f64) -> String {
    format!("{} calls/s", group_thousands(per_second.round() as u64))
}

/// Formats I/Os per second with thousands separators: `20,000 IOPS`.
pub fn format_rate_iops(per_second: f64) -> String {
    format!(
        "{} IOPS",
        group_thousands(per_second.round().max(0.0) as u64)
    )
}

/// Writes an integer with `,` between groups of three digits.
pub fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats seconds with a unit that suits the magnitude: `812 ns`, `3.20 ms`, `1.234 s`.
pub fn format_seconds(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else if seconds >= 1e-6 {
        format!("{:.2} µs", seconds * 1e6)
    } else {
        format!("{:.0} ns", seconds * 1e9)
    }
}

/// Seconds as a user types them (`10 s`, `2.5 s`): to the millisecond, no trailing zeros
/// (a setting echoed back, where [`format_seconds`] is for a measured time).
pub fn format_seconds_as_typed(seconds: f64) -> String {
    let t = format!("{seconds:.3}");
    format!("{} s", t.trim_end_matches('0').trim_end_matches('.'))
}

/// The UTC calendar date of a Unix time, `YYYY-MM-DD` (the civil-from-days algorithm).
pub fn format_date(unix_seconds: u64) -> String {
    let z = (unix_seconds / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// `1M`, `4K`, `512`, `64K`: the size in the panels' short form.
pub fn short_size(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}M", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{}K", bytes / KIB)
    } else {
        bytes.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_as_typed_lose_their_trailing_zeros() {
        assert_eq!(format_seconds_as_typed(10.0), "10 s");
        assert_eq!(format_seconds_as_typed(2.5), "2.5 s");
        assert_eq!(format_seconds_as_typed(0.125), "0.125 s");
    }

    #[test]
    fn two_sizes_that_differ_never_read_the_same() {
        let (a, b) = format_size_pair(2300, 2302);
        assert_eq!((a.as_str(), b.as_str()), ("2,300 bytes", "2,302 bytes"));
        let (a, b) = format_size_pair(2300, 2310);
        assert_eq!((a.as_str(), b.as_str()), ("2.2 KiB", "2.3 KiB"));
        assert_eq!(
            format_size_pair(4096, 8192),
            ("4 KiB".into(), "8 KiB".into())
        );
        assert_eq!(
            format_size_pair(4096, 4096),
            ("4 KiB".into(), "4 KiB".into())
        );
        assert_eq!(format_size_pair(100, 101), ("100 B".into(), "101 B".into()));
    }

    #[test]
    fn unix_times_become_utc_calendar_dates() {
        assert_eq!(format_date(0), "1970-01-01");
        assert_eq!(format_date(951_782_400), "2000-02-29");
        assert_eq!(format_date(1_700_000_000), "2023-11-14");
        assert_eq!(format_date(4_107_542_399), "2100-02-28");
    }

    #[test]
    fn sizes_accept_every_documented_form() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("4kb"), Ok(4096));
        assert_eq!(parse_size("1m"), Ok(MIB));
        assert_eq!(parse_size("1MiB"), Ok(MIB));
        assert_eq!(parse_size("2g"), Ok(2 * GIB));
        assert_eq!(parse_size("2G"), Ok(2 * GIB));
        assert_eq!(parse_size("3t"), Ok(3 * TIB));
        assert_eq!(parse_size("0"), Ok(0));
        assert_eq!(parse_size("15e"), Ok(15 << 60));
    }

    #[test]
    fn garbage_sizes_are_rejected_with_the_input_and_the_forms() {
        for bad in ["", "k", "4x", "-1", "1.5k", "4 kk", "0x10", "abc"] {
            let err = parse_size(bad).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(&format!("'{bad}'")), "{msg}");
            assert!(msg.contains("4KiB"), "{msg}");
        }
    }

    #[test]
    fn overflowing_sizes_are_rejected() {
        assert!(matches!(parse_size("16e"), Err(UnitError::Overflow { .. })));
        assert!(matches!(
            parse_size("99999999999999999999"),
            Err(UnitError::Overflow { .. })
        ));
        assert!(matches!(
            parse_size("17179869184g"),
            Err(UnitError::Overflow { .. })
        ));
    }

    #[test]
    fn zero_is_rejected_where_it_is_meaningless() {
        assert!(matches!(
            parse_nonzero_size("0k"),
            Err(UnitError::Zero { .. })
        ));
        assert_eq!(parse_nonzero_size("1"), Ok(1));
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn sizes_format_with_binary_units() {
        assert_eq!(format_size(17), "17 B");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(MIB + MIB / 2), "1.5 MiB");
        assert_eq!(format_block_size(1), "1");
        assert_eq!(format_block_size(65536), "64k");
        assert_eq!(format_block_size(16 * MIB), "16m");
        assert_eq!(group_thousands(1234567), "1,234,567");
        assert_eq!(group_thousands(12), "12");
    }

    #[test]
    fn rates_are_mebibytes_per_second() {
        assert_eq!(format_mib_per_s(per_second(MIB * 200, 2.0)), "100 MiB/s");
        assert_eq!(per_second(10, 0.0), 0.0);
    }

    #[test]
    fn a_rate_in_bytes_per_second_is_whole_and_grouped() {
        assert_eq!(
            format_bytes_per_second(per_second(MIB * 200, 2.0)),
            "104,857,600 B/s"
        );
        assert_eq!(format_bytes_per_second(2.5), "3 B/s");
        assert_eq!(format_bytes_per_second(0.0), "0 B/s");
        assert_eq!(format_bytes_per_second(f64::NAN), "0 B/s");
    }
}
