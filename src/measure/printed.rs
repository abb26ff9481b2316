//! The XOR a program printed, found in whatever it printed: `Total XOR: e4fd303c`,
//! `[XOR]e4fd303c`, `xor result is 0xE4FD303C`, an unpadded `%x`, in colour or not.
//!
//! Its output (ANSI escape sequences removed) is cut into words at every character that is
//! not a letter or a digit; a word of hex digits (after an optional `0x`) that fits 32 bits
//! is a candidate. Each candidate is scored by what makes it look like the answer, and the
//! answer is the best-scored one, the last of equals (a program prints its answer last:
//! after the partial XORs of its threads, the final one):
//! - on a line that names it (`xor`, `checksum`): +4; after that word on its line: +2;
//! - 8 or 16 digits, or `0x` before it: +2; under 8 letters and no digit (`a`, `be`,
//!   `face`: English more likely): −1;
//! - part of a path (a word with `/` in it) or of a decimal fraction (`0.25`), or followed
//!   by a unit (`4097 bytes`, `3 ms`): −4 — a size, a time or a file name, not an XOR.
//!
//! The program is right when its answer equals the reference; a right value printed
//! somewhere else does not count (a program that prints every guess is not right).

use serde::{Deserialize, Serialize};

/// What a program's output says its XOR is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Printed {
    /// Whether its answer equals the reference.
    pub matches: bool,
    /// Its answer, `None` when it printed nothing hex-looking.
    pub value: Option<u32>,
    /// That answer as it was printed.
    pub token: Option<String>,
    /// How many candidates there were.
    pub candidates: usize,
    /// Whether it printed the reference in base 10 somewhere (`%u`), which a grader names.
    #[serde(default)]
    pub decimal: bool,
}

/// Words after a number that make it a size, a time or a rate.
const UNITS: &[&str] = &[
    "b",
    "byte",
    "bytes",
    "kb",
    "kib",
    "mb",
    "mib",
    "gb",
    "gib",
    "k",
    "m",
    "g",
    "s",
    "sec",
    "secs",
    "second",
    "seconds",
    "ms",
    "us",
    "µs",
    "ns",
    "mb/s",
    "mib/s",
    "gb/s",
    "gib/s",
    "b/s",
    "%",
    "blocks",
    "block",
    "words",
    "threads",
    "calls",
    "iterations",
    "times",
];

/// A word as a hex number, if it is one that fits 32 bits: `0x` may lead, at most 16
/// digits follow (`%016lx` of a 64-bit accumulator), and a value beyond 32 bits is not a
/// 32-bit XOR. With whether it had `0x`.
fn hex_word(word: &str) -> Option<(u32, bool)> {
    let (digits, prefixed) = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        Some(d) => (d, true),
        None => (word, false),
    };
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let value = u64::from_str_radix(digits, 16).ok()?;
    u32::try_from(value).ok().map(|v| (v, prefixed))
}

/// `text` without ANSI escape sequences (CSI `ESC [ … final`, and two-byte `ESC x`).
fn without_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.next() == Some('[') {
            // Parameters and intermediates, then one final byte in '@'..='~'.
            for d in chars.by_ref() {
                if ('@'..='~').contains(&d) {
                    break;
                }
            }
        }
    }
    out
}

/// One candidate: its value, as printed, and its score.
struct Candidate<'a> {
    value: u32,
    word: &'a str,
    score: i32,
}

/// The candidates of one line, scored.
fn candidates(line: &str) -> Vec<Candidate<'_>> {
    let lower = line.to_ascii_lowercase();
    let named_at = ["xor", "checksum"]
        .iter()
        .filter_map(|k| lower.find(k))
        .min();
    let mut out = Vec::new();
    // Whitespace-separated fields first: a path, a fraction or a unit is a field's matter.
    let fields: Vec<(usize, &str)> = line
        .split_whitespace()
        .map(|f| (f.as_ptr() as usize - line.as_ptr() as usize, f))
        .collect();
    for (k, &(field_at, field)) in fields.iter().enumerate() {
        let bare = field.trim_matches(|c: char| ",;:()[]{}<>\"'=".contains(c));
        let path = bare.contains('/') && !UNITS.contains(&bare.to_ascii_lowercase().as_str());
        let fraction = {
            let b = bare.as_bytes();
            (1..b.len().saturating_sub(1))
                .any(|i| b[i] == b'.' && b[i - 1].is_ascii_digit() && b[i + 1].is_ascii_digit())
        };
        let unit_after = fields.get(k + 1).is_some_and(|(_, next)| {
            let next = next
                .trim_matches(|c: char| ",;:()[]{}<>\"'.".contains(c))
                .to_ascii_lowercase();
            UNITS.contains(&next.as_str())
        });
        for word in field.split(|c: char| !c.is_ascii_alphanumeric()) {
            let Some((value, prefixed)) = hex_word(word) else {
                continue;
            };
            let at = word.as_ptr() as usize - line.as_ptr() as usize;
            let digits = word.len() - if prefixed { 2 } else { 0 };
            // A number glued to a unit (`3ms`, `4097B`) is not a candidate at all: not hex.
            let mut score = 0;
            if let Some(n) = named_at {
                score += 4;
                if at > n {
                    score += 2;
                }
            }
            if digits == 8 || digits == 16 || prefixed {
                score += 2;
            }
            // A short word of letters alone is more likely English (`a`, `be`, `face`).
            if !prefixed && digits < 8 && !word.bytes().any(|b| b.is_ascii_digit()) {
                score -= 1;
            }
            if path || fraction || (unit_after && at + word.len() == field_at + field.len()) {
                score -= 4;
            }
            out.push(Candidate { value, word, score });
        }
    }
    out
}

/// Finds the XOR in `output` (the program's stdout), against `reference`.
pub fn find(output: &str, reference: u32) -> Printed {
    let clean = without_escapes(output);
    let all: Vec<Candidate<'_>> = clean.lines().flat_map(candidates).collect();
    let best = all.iter().map(|c| c.score).max();
    let answer = all.iter().rev().find(|c| Some(c.score) == best);
    let decimal = clean
        .split(|c: char| !c.is_ascii_digit())
        .any(|w| !w.is_empty() && w.len() <= 10 && w.parse::<u32>() == Ok(reference));
    Printed {
        matches: answer.is_some_and(|c| c.value == reference),
        value: answer.map(|c| c.value),
        token: answer.map(|c| c.word.to_string()),
        candidates: all.len(),
        decimal,
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
            "xor=0xe4fd303c\n",
            "e4fd303c\n",
            "reading big.bin\nblock size 4096\nchecksum e4fd303c (in 0.25 s)\n",
            "XOR: \u{1b}[1;32me4fd303c\u{1b}[0m\n",
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
    fn a_size_a_time_or_a_path_is_not_taken_for_the_xor() {
        // The size on the line that names the XOR, the answer on the next.
        assert!(find("Computing XOR of 4097 bytes...\nf501b92c\n", 0xf501_b92c).matches);
        // A wrong answer with a time beside it is the answer, not the time.
        let p = find("XOR: 1a2b3c4d (took 0.00123 s)\n", 0xdead_beef);
        assert_eq!(p.value, Some(0x1a2b_3c4d));
        // A path's numbers are not the answer, even when one equals the reference.
        let p = find("XOR of ./.ioscope-grade-0-19865: deadbeef\n", 0);
        assert!(!p.matches);
        assert_eq!(p.token.as_deref(), Some("deadbeef"));
        let p = find("XOR of 0 bytes: 12345678\n", 0);
        assert!(!p.matches);
        // The reference as a size elsewhere does not make a wrong answer right.
        let p = find("size 4097\nTotal XOR: 1234abcd\n", 0x4097);
        assert!(!p.matches);
        assert_eq!(p.value, Some(0x1234_abcd));
    }

    #[test]
    fn the_last_of_equally_likely_answers_is_the_answer() {
        // A hedging reader: the right value printed as a partial, a wrong one as final.
        let out = "thread 0 partial xor: e4fd303c\nfinal xor: 12345678\n";
        let p = find(out, 0xe4fd_303c);
        assert!(!p.matches);
        assert_eq!(p.value, Some(0x1234_5678));
        let out = "thread 0 xor: 11111111\nthread 1 xor: 22222222\nTotal XOR: 33333333\n";
        assert!(find(out, 0x3333_3333).matches);
    }

    #[test]
    fn with_nothing_named_the_likely_one_is_named() {
        let p = find(
            "read a file of 1 MiB\nresult: 1234abcd took 3 ms\n",
            0xdead_beef,
        );
        assert!(!p.matches);
        assert_eq!(p.token.as_deref(), Some("1234abcd"));
        assert_eq!(p.candidates, 4);
    }

    #[test]
    fn the_reference_in_base_10_is_seen_but_not_taken() {
        let p = find("XOR: 3841798204\n", 0xe4fd_303c);
        assert!(!p.matches);
        assert!(p.decimal);
        assert!(!find("XOR: e4fd303c\n", 0xe4fd_303c).decimal);
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

    #[test]
    fn the_empty_file_s_zero_is_read_where_it_is_the_answer() {
        assert!(find("Total XOR: 0\n", 0).matches);
        assert!(find("00000000\n", 0).matches);
        assert!(find("[XOR]0", 0).matches);
    }
}
