//! What a document read back may hold. A saved result is data from a stranger: before
//! anything is drawn of it, every figure is checked against what a measurement can be
//! (non-negative where a count, a size, a rate or a time cannot be negative; no rate past
//! 1 PB/s, no latency past a day, nothing beyond 2^64 or nearer zero than 1e-30), and every
//! string against the longest anything ioscope writes can be. A document that holds another
//! is refused with one line naming the field; nothing reaches a chart whose axis would span
//! 600 decades, nor a label of 8 MB repeated on every row of a page.

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};

/// The longest string a document may hold, in characters: the kernel's own limit on one
/// command-line argument (`MAX_ARG_STRLEN`, 128 KiB), the longest thing ioscope saves
/// (paths are at most 4 KiB).
pub const STRING_CHARS: usize = 128 << 10;

/// The largest magnitude any figure may have: 2^64 (a size or a seed is a u64).
const LARGEST: f64 = 18_446_744_073_709_551_616.0;

/// The smallest magnitude a figure other than zero may have: below any ratio or time a
/// measurement gives (subnormal numbers and 1e-308 are not measurements).
const SMALLEST: f64 = 1e-30;

/// Statistics of a figure (`"bytes_per_second": {"median": ..}`): bounded as the figure is.
const STATISTICS: [&str; 14] = [
    "min", "max", "mean", "median", "p50", "p90", "p99", "p99_9", "p99_99", "values", "best",
    "worst", "first", "last",
];

/// Spreads of a figure: bounded above as the figure is, but may be as small as rounding
/// makes them.
const SPREADS: [&str; 3] = ["stddev", "mad", "spread"];

/// What a kind of figure may be: its least and greatest value, and the smallest other
/// than zero, with the words that say so.
struct Bounds {
    least: f64,
    most: f64,
    nearest_zero: f64,
    what: &'static str,
}

const DAY: f64 = 86_400.0;

/// Words that make a figure a difference or a moment on another clock, which may be
/// negative: a tool's figure against the traced one (`gap_seconds`), a start relative to
/// another host's clock, a tracer's overhead measured through noise.
const SIGNED: [&str; 14] = [
    "gap", "start", "end", "overhead", "after", "before", "delta", "diff", "drift", "skew",
    "change", "since", "margin", "bias",
];

/// The bounds of a field named `key`, if it is a kind of figure known here: those of its
/// kind, with a signed figure (see [`SIGNED`]) as far below zero as above.
fn bounds(key: &str) -> Option<Bounds> {
    let mut b = unsigned_bounds(key)?;
    if SIGNED.iter().any(|w| key.contains(w)) {
        b.least = -b.most;
    }
    Some(b)
}

/// The bounds of a field named `key` read as a quantity that cannot be negative.
fn unsigned_bounds(key: &str) -> Option<Bounds> {
    let b = |least, most, nearest_zero, what| {
        Some(Bounds {
            least,
            most,
            nearest_zero,
            what,
        })
    };
    if key.contains("offset") || key.contains("epoch") || key.contains("seed") {
        return None;
    }
    if key.contains("bytes_per_second") || key == "rate" {
        return b(
            0.0,
            1e15,
            1e-6,
            "a rate in bytes per second, at most 1 PB/s",
        );
    }
    if key.contains("gib_per_second") {
        return b(0.0, 1e6, 1e-15, "a rate in GiB/s, at most 1 PB/s");
    }
    if key == "iops"
        || key.contains("kiops")
        || key.ends_with("_iops")
        || key.ends_with("per_second")
    {
        // One byte in a second of a trickling pipe is 9.5e-7 MiB/s: a real rate.
        return b(0.0, 1e12, 1e-15, "a rate, at most 1e12 per second");
    }
    if key.contains("nanos") {
        // Time inside calls summed over every thread of a traced tree: a make -j64 or an
        // MPI job passes a day of it; a sum, bounded as a count is.
        return b(0.0, LARGEST, 0.0, "a sum of nanoseconds");
    }
    if key.ends_with("_ns") || key.starts_with("ns_") {
        return b(0.0, DAY * 1e9, 1e-6, "a time in nanoseconds, at most a day");
    }
    if key.ends_with("_us") {
        return b(
            0.0,
            DAY * 1e6,
            1e-9,
            "a time in microseconds, at most a day",
        );
    }
    if key.ends_with("_ms") {
        return b(
            0.0,
            DAY * 1e3,
            1e-12,
            "a time in milliseconds, at most a day",
        );
    }
    if key.contains("seconds") {
        let per_call = ["per_", "fsync", "latency", "open_", "close_"];
        return if per_call.iter().any(|p| key.contains(p)) {
            b(0.0, DAY, 1e-15, "a time in seconds, at most a day")
        } else {
            b(0.0, 366.0 * DAY, 1e-15, "a time in seconds, at most a year")
        };
    }
    if key.contains("latency") {
        return b(0.0, DAY * 1e9, 1e-6, "a latency, at most a day");
    }
    if key.contains("percent") {
        return b(0.0, 1e6, 0.0, "a percentage");
    }
    let counts = [
        "bytes", "calls", "count", "blocks", "files", "ios", "reads", "writes", "syncs", "ranks",
        "pages", "buckets", "threads", "depth", "repeat", "runs", "size", "errors", "extents",
        "hosts", "cpus", "records",
    ];
    // Whole words of the key only: `counts` of an order's steps are pairs of a signed step
    // and its count, `read_bytes` is a count.
    if key.split('_').any(|word| counts.contains(&word)) {
        return b(0.0, LARGEST, 0.0, "a count or a size");
    }
    None
}

/// Checks every figure and string of `text` (JSON) as the module says; the error names the
/// field (`disk.rows[2].iops`), its value and what it may be.
pub fn check(text: &str) -> Result<(), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(text);
    Walk {
        path: &mut Vec::new(),
    }
    .deserialize(&mut de)?;
    de.end()
}

/// One step of the path to a value: a key, or a position in an array.
enum Step {
    Key(String),
    At(usize),
}

/// The path to a value, as written in a message: `disk.rows[2].iops`.
fn shown(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&crate::text::shortened(k, 40));
            }
            Step::At(i) => out.push_str(&format!("[{i}]")),
        }
    }
    if out.is_empty() {
        "(the document)".into()
    } else {
        out
    }
}

/// A figure as written in a message: exponent form when far from 1.
fn figure(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// Checks one number at `path`.
fn number<E: de::Error>(path: &[Step], v: f64) -> Result<(), E> {
    let refuse = |why: String| {
        Err(E::custom(format!(
            "field '{}' is {}, {why}; not a result ioscope wrote, not read",
            shown(path),
            figure(v)
        )))
    };
    if !v.is_finite() || v.abs() > LARGEST {
        return refuse("beyond any figure a result holds (at most 2^64)".into());
    }
    let mut keys = path.iter().rev().filter_map(|s| match s {
        Step::Key(k) => Some(k.to_ascii_lowercase()),
        Step::At(_) => None,
    });
    let key = keys.next().unwrap_or_default();
    let spread = SPREADS.contains(&key.as_str());
    let key = if spread || STATISTICS.contains(&key.as_str()) {
        keys.next().unwrap_or_default()
    } else {
        key
    };
    let Some(b) = bounds(&key) else {
        if v != 0.0 && v.abs() < SMALLEST && !spread {
            return refuse(format!(
                "nearer zero than any figure a result holds ({SMALLEST:e})"
            ));
        }
        return Ok(());
    };
    if v < b.least {
        return refuse(format!("negative, and it is {}", b.what));
    }
    if v > b.most {
        return refuse(format!("more than it can be: {}", b.what));
    }
    let nearest = if spread {
        0.0
    } else {
        b.nearest_zero.max(SMALLEST)
    };
    if v != 0.0 && v.abs() < nearest {
        return refuse(format!(
            "nearer zero than any measurement ({}), and it is {}",
            figure(nearest),
            b.what
        ));
    }
    Ok(())
}

/// Checks one string at `path`.
fn string<E: de::Error>(path: &[Step], v: &str) -> Result<(), E> {
    let chars = v.chars().count();
    if chars > STRING_CHARS {
        return Err(E::custom(format!(
            "field '{}' is a string of {} characters, longer than anything ioscope writes (at most {}); not read",
            shown(path),
            crate::units::group_thousands(chars as u64),
            crate::units::group_thousands(STRING_CHARS as u64)
        )));
    }
    Ok(())
}

/// Walks a value, checking each figure and string by its path.
struct Walk<'a> {
    path: &'a mut Vec<Step>,
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<(), E> {
        number(self.path, v as f64)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<(), E> {
        number(self.path, v as f64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        number(self.path, v)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        string(self.path, v)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        let mut i = 0;
        loop {
            self.path.push(Step::At(i));
            let more = a.next_element_seed(Walk {
                path: &mut *self.path,
            })?;
            self.path.pop();
            if more.is_none() {
                return Ok(());
            }
            i += 1;
        }
    }
    fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
        while let Some(key) = a.next_key::<String>()? {
            string(self.path, &key)?;
            self.path.push(Step::Key(key));
            a.next_value_seed(Walk {
                path: &mut *self.path,
            })?;
            self.path.pop();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(json: &str) -> Result<(), String> {
        check(json).map_err(|e| e.to_string())
    }

    #[test]
    fn absurd_figures_are_refused_by_name_and_real_ones_kept() {
        for bad in ["1e307", "1.7e308", "2.3e-308", "5e-324", "-1", "1e16"] {
            let e = verdict(&format!(
                r#"{{"disk":{{"rows":[{{"bytes_per_second":{bad}}}]}}}}"#
            ))
            .unwrap_err();
            assert!(e.contains("field 'disk.rows[0].bytes_per_second'"), "{e}");
        }
        for bad in ["1e300", "-1", "86401", "5e-324"] {
            let e = verdict(&format!(r#"{{"fsync_seconds":{{"median":{bad}}}}}"#)).unwrap_err();
            assert!(e.contains("fsync_seconds.median"), "{e}");
        }
        assert!(verdict(r#"{"latency_ns":{"p99":1e300}}"#).is_err());
        assert!(verdict(r#"{"iops":1e13}"#).is_err());
        assert!(verdict(r#"{"calls":-3}"#).is_err());
        assert!(verdict(r#"{"ratio":5e-324}"#).is_err());
        assert!(verdict(r#"{"ratio":1e20}"#).is_err());
        for good in [
            r#"{"bytes_per_second":{"stddev":1e-22,"median":5.1e10}}"#,
            r#"{"offset_seconds":-2.4e-7,"seed":13680000000000000000}"#,
            r#"{"iops":0,"calls":0,"ns_per_call":0.24,"epoch_unix_seconds":1.8e9}"#,
        ] {
            assert_eq!(verdict(good), Ok(()), "{good}");
        }
    }

    #[test]
    fn real_figures_that_are_differences_sums_or_trickles_are_kept() {
        for good in [
            // A tool's figure faster than the traced rate: its gap is negative.
            r#"{"claims":[{"gap_seconds":-0.42}]}"#,
            // A rank's start after another host's clock offset was taken off.
            r#"{"ranks":[{"start_seconds":-0.0003,"end_seconds":2.1}]}"#,
            // A tracer's overhead measured through noise.
            r#"{"overhead_ns_per_call":-12.5}"#,
            // Time inside calls summed over 64 threads for a week.
            r#"{"totals":{"nanos":3.9e16,"sync_nanos":2e15}}"#,
            // A backward read's steps, with how often each came.
            r#"{"order":{"steps":{"counts":[[-4096,12],[-64,3]]}}}"#,
            // One byte in a second of a trickling pipe.
            r#"{"over_time":[{"mib_per_second":9.5e-7}]}"#,
        ] {
            assert_eq!(verdict(good), Ok(()), "{good}");
        }
        // Signed is not unbounded.
        assert!(verdict(r#"{"gap_seconds":-1e300}"#).is_err());
    }

    #[test]
    fn a_string_longer_than_anything_ioscope_writes_is_refused() {
        let long = "x".repeat(STRING_CHARS + 1);
        let e = verdict(&format!(r#"{{"label":"{long}"}}"#)).unwrap_err();
        assert!(e.contains("field 'label'") && e.len() < 300, "{e}");
        assert!(verdict(&format!(r#"{{"{long}":1}}"#)).is_err());
        assert_eq!(
            verdict(&format!(r#"{{"label":"{}"}}"#, "x".repeat(4096))),
            Ok(())
        );
    }

    #[test]
    fn every_fixture_passes() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
        let mut files = vec![];
        for sub in ["", "/media-disk"] {
            for e in std::fs::read_dir(format!("{dir}{sub}")).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "json") {
                    files.push(p);
                }
            }
        }
        assert!(files.len() > 20);
        for p in files {
            let text = std::fs::read_to_string(&p).unwrap();
            assert_eq!(
                verdict(&text),
                Ok(()),
                "{}",
                crate::text::printable_path(&p)
            );
        }
    }
}
