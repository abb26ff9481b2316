//! The words of a check in place: what was compared, where the first bad byte lies, and what
//! the check cost beside the time it did not count in.

use crate::units::{format_seconds, format_size};
use crate::workload::verify::InPlace;

/// One line: every byte in place, with what was checked and what the check cost as a share
/// of `measured` seconds (the timed figures it stayed out of); or the mismatch line.
pub fn in_place(v: &InPlace, file: &str, measured: f64) -> String {
    match v.mismatch(file) {
        Some(line) => format!("NOT IN PLACE: {line}"),
        None => format!(
            "every byte in place: {} in {} block(s) of {} read again after the timing and compared with the generator's bytes at their offsets ({}{})",
            format_size(v.bytes),
            crate::units::group_thousands(v.blocks),
            v.blocks_of(),
            format_seconds(v.seconds),
            share(v.seconds, measured)
        ),
    }
}

/// A few words for a table cell: `in place` or where the first bad byte lies.
pub fn in_place_short(v: &InPlace) -> String {
    match v.first_bad_offset {
        _ if v.ok() => "in place".to_string(),
        Some(o) => format!("BAD at byte {o} ({} block(s))", v.bad_blocks),
        None => format!("BAD ({} block(s))", v.bad_blocks),
    }
}

/// `, N% of the S measured`, when something was measured.
fn share(seconds: f64, measured: f64) -> String {
    if measured > 0.0 {
        format!(
            " = {:.1}% of the {} measured",
            100.0 * seconds / measured,
            format_seconds(measured)
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clean_check_says_what_was_compared_and_its_share_of_the_measured_time() {
        let v = InPlace {
            block_bytes: 1 << 20,
            blocks: 4,
            bytes: 4 << 20,
            bad_blocks: 0,
            first_bad_offset: None,
            seconds: 0.01,
        };
        assert_eq!(
            in_place(&v, "f", 0.04),
            "every byte in place: 4 MiB in 4 block(s) of 1 MiB read again after the timing and compared with the generator's bytes at their offsets (10.00 ms = 25.0% of the 40.00 ms measured)"
        );
        assert_eq!(in_place_short(&v), "in place");
    }

    #[test]
    fn a_bad_check_names_the_file_and_the_first_bad_byte() {
        let v = InPlace {
            block_bytes: 4096,
            blocks: 4,
            bytes: 16384,
            bad_blocks: 2,
            first_bad_offset: Some(5000),
            seconds: 0.0,
        };
        assert!(in_place(&v, "data", 1.0).starts_with("NOT IN PLACE: verify data: byte 5000 "));
        assert_eq!(in_place_short(&v), "BAD at byte 5000 (2 block(s))");
    }
}
