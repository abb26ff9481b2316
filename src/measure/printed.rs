//! The XOR a program printed, found in whatever it printed: `Total XOR: e4fd303c`,
//! `[XOR]e4fd303c`, `xor result is 0xE4FD303C`, an unpadded `%x`. Its output is cut into
//! words at every character that is not a letter or a digit; a word of hex digits (after an
//! optional `0x`) is a candidate. Where a line names the XOR (`xor`, `checksum`), only that
//! line's candidates count, so a size or a time printed beside it is not taken for it. The
//! candidate equal to the reference is the answer; without one, the likely one is named: the
//! last candidate with a digit in it (English words like `a`, `be` or `face` are hex too), or
//! the last candidate.

use serde::{Deserialize, Serialize};

/// What a program's output says its XOR is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Printed {
    /// Whether a candidate equals the reference.
    pub matches: bool,
    /// The candidate taken as its answer: the one equal to the reference, or the likely one;
    /// `None` when it printed nothing hex-looking.
    pub value: Option<u32>,
    /// That candidate as it was printed.
    pub token: Option<String>,
    /// How many candidates there were.
    pub candidates: usize,
}

/// A word of `line` as a hex number, if it is one that fits 32 bits: `0x` may lead, at
/// most 16 digits follow (`%016lx` of a 64-bit accumulator), and a value beyond 32 bits is
/// not a 32-bit XOR.
fn hex_word(word: &str) -> Option<u32> {
    let digits = word
        .strip_prefix("0x")
        .or_else(|| word.strip_prefix("0X"))
        .unwrap_or(word);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16)
        .ok()
        .and_then(|v| u32::try_from(v).ok())
}

/// Whether `line` names the XOR.
fn names_the_xor(line: &str) -> bool {
    let lower = line.to_ascii_lowercase();
    lower.contains("xor") || lower.contains("checksum")
}

/// The candidates of `line`: each hex word with its value.
fn candidates(line: &str) -> Vec<(&str, u32)> {
    line.split(|c: char| !c.is_ascii_alphanumeric())
        .filter_map(|w| hex_word(w).map(|v| (w, v)))
        .collect()
}

/// Finds the XOR in `output` (the program's stdout), against `reference`.
pub fn find(output: &str, reference: u32) -> Printed {
    let named: Vec<(&str, u32)> = output
        .lines()
        .filter(|l| names_the_xor(l))
        .flat_map(candidates)
        .collect();
    let all = if named.is_empty() {
        output.lines().flat_map(candidates).collect()
    } else {
        named
    };
    let chosen = all
        .iter()
        .find(|(_, v)| *v == reference)
        .or_else(|| {
            all.iter()
                .rev()
                .find(|(w, _)| w.bytes().any(|b| b.is_ascii_digit()))
        })
        .or_else(|| all.last());
    Printed {
        matches: chosen.is_some_and(|(_, v)| *v == reference),
        value: chosen.map(|(_, v)| *v),
        token: chosen.map(|(w, _)| w.to_string()),
        candidates: all.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_the_assignment_s_solutions_print_is_read() {
        for out in [
            "Total XOR: e4fd303c\n",
            "[XOR]e4fd303c",
            "xor result is 0xe4fd303c\n",
            "XOR = 0XE4FD303C\n",
            "e4fd303c\n",
            "reading big.bin\nblock size 4096\nchecksum e4fd303c (in 0.25 s)\n",
        ] {
            let p = find(out, 0xe4fd_303c);
            assert!(p.matches, "{out:?}: {p:?}");
            assert_eq!(p.value, Some(0xe4fd_303c));
        }
    }

    #[test]
    fn an_unpadded_x_is_the_same_number() {
        let p = find("[XOR]3c\n", 0x3c);
        assert!(p.matches);
        assert_eq!(p.token.as_deref(), Some("3c"));
    }

    #[test]
    fn a_size_or_time_beside_a_named_xor_is_not_taken_for_it() {
        // The reference happens to be 4097 read as hex; the XOR line says otherwise.
        let p = find("size 4097\nTotal XOR: 1234abcd\n", 0x4097);
        assert!(!p.matches);
        assert_eq!(p.value, Some(0x1234_abcd));
    }

    #[test]
    fn with_no_candidate_equal_the_likely_one_is_named() {
        let p = find(
            "read a file of 1 MiB\nresult: 1234abcd took 3 ms\n",
            0xdead_beef,
        );
        assert!(!p.matches);
        // `a` is hex but has no digit; the last candidate with a digit is `3`.
        assert_eq!(p.token.as_deref(), Some("3"));
        assert_eq!(p.candidates, 4);
        let p = find("the answer: face\n", 1);
        assert_eq!(p.token.as_deref(), Some("face"));
    }

    #[test]
    fn nothing_hex_looking_is_no_answer() {
        let p = find("done\n", 0);
        assert!(!p.matches);
        assert_eq!(p.value, None);
        assert_eq!(p.candidates, 0);
        assert_eq!(find("", 7).token, None);
    }

    #[test]
    fn a_64_bit_word_is_a_32_bit_xor_only_when_its_high_half_is_zero() {
        assert!(find("XOR 00000000e4fd303c\n", 0xe4fd_303c).matches);
        let p = find("XOR 00000001e4fd303c\n", 0xe4fd_303c);
        assert!(!p.matches);
        assert_eq!(p.candidates, 0);
    }
}
