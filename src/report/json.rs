//! JSON documents: `"schema": "ioscope/<cmd>/v2"`, who measured and where (the tool
//! version and commit, the date, the command line, the environment), then the result's own
//! fields. Raw numbers only.

use crate::measure::env::Environment;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Who measured, when, how and where: the head of every JSON document and the sentence
/// under every Markdown title. `report` reads it back from a saved document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Provenance {
    /// The ioscope version (`CARGO_PKG_VERSION`).
    pub version: String,
    /// The git commit ioscope was built from, when built from a checkout.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The UTC date of the measurement, `YYYY-MM-DD` (absent in older documents).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// The command line, as JSON strings.
    pub command_line: Vec<String>,
    /// Kernel, CPU, memory and the storage behind the measured path.
    pub environment: Environment,
}

impl Provenance {
    /// This process, today, measuring `path`.
    pub fn here(path: &Path) -> Self {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        Self {
            version: env!("CARGO_PKG_VERSION").to_string(),
            commit: commit().map(str::to_string),
            date: Some(crate::units::format_date(now)),
            command_line: command_line(std::env::args_os()),
            environment: Environment::collect(path),
        }
    }
}

/// The version of every result schema (`ioscope/<command>/v2`).
pub const SCHEMA_VERSION: u32 = 2;

/// The version of `study` documents: v3 holds every part's own result (v2 held one table).
pub const STUDY_SCHEMA_VERSION: u32 = 3;

/// The schema name of results of `command`.
pub fn schema(command: &str) -> String {
    let version = if command == "study" {
        STUDY_SCHEMA_VERSION
    } else {
        SCHEMA_VERSION
    };
    format!("ioscope/{command}/v{version}")
}

/// The short git commit this binary was built from (`None` outside a checkout).
pub fn commit() -> Option<&'static str> {
    Some(env!("IOSCOPE_COMMIT")).filter(|c| !c.is_empty())
}

#[derive(Serialize)]
struct Document<'a, T: Serialize> {
    schema: String,
    #[serde(flatten)]
    provenance: &'a Provenance,
    #[serde(flatten)]
    result: &'a T,
}

/// Renders `result` of subcommand `command` as one pretty-printed JSON document.
pub fn document<T: Serialize>(command: &str, result: &T, provenance: &Provenance) -> String {
    let doc = Document {
        schema: schema(command),
        provenance,
        result,
    };
    let mut text = serde_json::to_string_pretty(&doc)
        .expect("results serialise: no maps with non-string keys");
    text.push('\n');
    text
}

/// The command line as JSON strings: an argument that is not valid UTF-8 (a file name with
/// a 0xff byte) has each bad byte written `\xff`, as every name ioscope prints
/// ([`crate::text::lossless`]); `std::env::args()` would panic on it.
fn command_line(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<String> {
    args.map(|a| crate::text::lossless(&a)).collect()
}

/// The `schema` of a saved document, read without building the document in memory (every
/// other field is skipped as it is parsed); `""` when it has none or it is not a string, or
/// the document is not an object. An error only when the text is not JSON.
pub fn schema_of(text: &str) -> Result<String, serde_json::Error> {
    /// A string, or anything else skipped.
    struct Schema(String);
    impl<'de> Deserialize<'de> for Schema {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Schema;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("any value")
                }
                fn visit_str<E>(self, v: &str) -> Result<Schema, E> {
                    Ok(Schema(v.to_string()))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Schema, E> {
                    Ok(Schema(String::new()))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Schema, E> {
                    Ok(Schema(String::new()))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Schema, E> {
                    Ok(Schema(String::new()))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Schema, E> {
                    Ok(Schema(String::new()))
                }
                fn visit_unit<E>(self) -> Result<Schema, E> {
                    Ok(Schema(String::new()))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Schema, A::Error> {
                    while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                    Ok(Schema(String::new()))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Schema, A::Error> {
                    while a
                        .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                        .is_some()
                    {}
                    Ok(Schema(String::new()))
                }
            }
            d.deserialize_any(Visit)
        }
    }
    #[derive(Deserialize)]
    struct Head {
        schema: Option<Schema>,
    }
    serde_json::from_str::<serde::de::IgnoredAny>(text)?;
    // Valid JSON: only an object (not an array read by position) names its schema.
    if !text.trim_start().starts_with('{') {
        return Ok(String::new());
    }
    Ok(serde_json::from_str::<Head>(text)
        .ok()
        .and_then(|h| h.schema)
        .map_or_else(String::new, |s| s.0))
}

/// How many JSON values (numbers, strings, arrays, objects, keys) `text` holds, counted in
/// one pass without keeping any: what reading it back will cost beyond its text (a typed
/// value takes up to a few dozen bytes, whatever its text takes).
pub fn values_in(text: &str) -> Result<u64, serde_json::Error> {
    use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
    struct Count<'a>(&'a mut u64);
    impl<'de> DeserializeSeed<'de> for Count<'_> {
        type Value = ();
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_any(self)
        }
    }
    impl<'de> Visitor<'de> for Count<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("any value")
        }
        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            *self.0 += 1;
            Ok(())
        }
        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            *self.0 += 1;
            Ok(())
        }
        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            *self.0 += 1;
            Ok(())
        }
        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            *self.0 += 1;
            Ok(())
        }
        fn visit_str<E>(self, _: &str) -> Result<(), E> {
            *self.0 += 1;
            Ok(())
        }
        fn visit_unit<E>(self) -> Result<(), E> {
            *self.0 += 1;
            Ok(())
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            *self.0 += 1;
            while a.next_element_seed(Count(&mut *self.0))?.is_some() {}
            Ok(())
        }
        fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<(), A::Error> {
            *self.0 += 1;
            while a.next_key_seed(Count(&mut *self.0))?.is_some() {
                a.next_value_seed(Count(&mut *self.0))?;
            }
            Ok(())
        }
    }
    let mut n = 0;
    let mut d = serde_json::Deserializer::from_str(text);
    Count(&mut n).deserialize(&mut d)?;
    d.end()?;
    Ok(n)
}

/// A saved document's text with every control character inside its strings (newline, tab,
/// ESC, BEL, DEL, the C1 controls; escaped or raw) turned into the escape
/// [`crate::text::printable`] writes (`\n`, `\u{1b}`): once read back, no string of it
/// can forge a line or drive a terminal, whichever renderer prints it. `None` when there
/// is none (the usual case: no copy is made). Text that is not JSON is left to the parser.
pub fn printable_strings(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    // Bytes up to `copied` are in `out` (or need no change, while `out` is None).
    let mut copied = 0;
    let mut in_string = false;
    let mut i = 0;
    let replace =
        |out: &mut Option<String>, copied: &mut usize, from: usize, to: usize, with: &str| {
            let o = out.get_or_insert_with(|| String::with_capacity(text.len() + 64));
            o.push_str(&text[*copied..from]);
            o.push_str(with);
            *copied = to;
        };
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            in_string = b == b'"';
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if i + 1 < bytes.len() => {
                let escaped = match bytes[i + 1] {
                    b'n' => Some(('\n', 2)),
                    b'r' => Some(('\r', 2)),
                    b't' => Some(('\t', 2)),
                    b'b' => Some(('\u{8}', 2)),
                    b'f' => Some(('\u{c}', 2)),
                    b'u' => text
                        .get(i + 2..i + 6)
                        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                        .and_then(char::from_u32)
                        .filter(|c| crate::text::escaped(*c))
                        .map(|c| (c, 6)),
                    _ => None,
                };
                match escaped {
                    Some((c, len)) => {
                        // `\\` (a backslash) then the rest of the escape as text: the
                        // string read back holds `\u{1b}`, as printable writes it.
                        let with = format!("\\\\{}", &c.escape_default().to_string()[1..]);
                        replace(&mut out, &mut copied, i, i + len, &with);
                        i += len;
                    }
                    None => i += 2,
                }
            }
            // A raw C0 control, which JSON does not allow in a string but a tool may write
            // there (fio echoes a file's name as it is): as printable writes it (`\t`).
            0x00..=0x1f => {
                let c = char::from(b);
                let with = format!("\\\\{}", &c.escape_default().to_string()[1..]);
                replace(&mut out, &mut copied, i, i + 1, &with);
                i += 1;
            }
            // DEL, the C1 controls and the reordering or invisible characters, which JSON
            // allows raw: each as printable writes it (`\u{7f}`, `\u{202e}`).
            0x7f.. => {
                // Not at a char boundary only in text that is not JSON (`\é`): left to the
                // parser, which refuses it.
                let Some(c) = text.get(i..).and_then(|t| t.chars().next()) else {
                    i += 1;
                    continue;
                };
                if crate::text::escaped(c) {
                    let with = format!("\\\\{}", &c.escape_default().to_string()[1..]);
                    replace(&mut out, &mut copied, i, i + c.len_utf8(), &with);
                }
                i += c.len_utf8();
            }
            _ => i += 1,
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reordering_and_invisible_characters_raw_or_escaped_read_back_escaped() {
        let raw = "{\"a\": \"x\u{202e}y\u{2028}z\u{feff}\", \"b\": \"\\u202e\\u200b\"}";
        let safe = printable_strings(raw).expect("something to escape");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        assert_eq!(back["a"], "x\\u{202e}y\\u{2028}z\\u{feff}");
        assert_eq!(back["b"], "\\u{202e}\\u{200b}");
        // Not JSON, and not at a char boundary after a backslash: no panic.
        assert!(printable_strings("\"\\é\u{202e}\"").is_some());
    }

    #[test]
    fn control_characters_in_a_documents_strings_read_back_as_printable_escapes() {
        let doc = serde_json::json!({
            "schema": "ioscope/run/v2",
            "path": "a\u{1b}[2J\nb\u{7}\tc\rd\u{7f}e\u{9b}f\u{8}\u{c}",
            "plain": "ünï \\n \"q\" / \\u001b",
            "keys": {"k\nk": 1},
        });
        let text = serde_json::to_string(&doc).expect("serialises");
        let safe = printable_strings(&text).expect("something to escape");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("still JSON");
        let path = back["path"].as_str().expect("a string");
        assert_eq!(
            path,
            crate::text::printable(doc["path"].as_str().expect("a string"))
        );
        assert!(!path.chars().any(char::is_control), "{path}");
        assert_eq!(
            back["plain"], doc["plain"],
            "escaped backslashes are no escapes"
        );
        assert_eq!(back["keys"]["k\\nk"], 1);
        let calm = r#"{"a": "b\\n", "n": [1, 2.5e3]}"#;
        assert_eq!(
            printable_strings(calm),
            None,
            "nothing to change, nothing copied"
        );
    }

    #[test]
    fn raw_control_characters_in_a_tools_strings_make_it_json_again() {
        // fio echoes a file's name into its JSON as it is: a tab and an ESC raw.
        let raw = "{\"jobs\": [{\"filename\": \"a\tb\u{1b}[31m:c\", \"io\": 5}]}";
        assert!(serde_json::from_str::<serde_json::Value>(raw).is_err());
        let safe = printable_strings(raw).expect("something to escape");
        let back: serde_json::Value = serde_json::from_str(&safe).expect("JSON now");
        assert_eq!(back["jobs"][0]["filename"], "a\\tb\\u{1b}[31m:c");
        assert_eq!(back["jobs"][0]["io"], 5);
        // Line ends between values are the document's own whitespace, left alone.
        assert_eq!(printable_strings("{\n\t\"a\": 1\n}"), None);
    }

    #[test]
    fn the_schema_is_read_without_the_rest_and_odd_documents_have_none() {
        assert_eq!(
            schema_of(r#"{"a": [1, {"b": 2}], "schema": "ioscope/run/v2"}"#).expect("JSON"),
            "ioscope/run/v2"
        );
        for odd in [
            r#"{"schema": 3}"#,
            r#"{"schema": [1, 2]}"#,
            r#"["ioscope/run/v2"]"#,
            "7",
            "{}",
        ] {
            assert_eq!(schema_of(odd).expect("JSON"), "", "{odd}");
        }
        assert!(schema_of(r#"{"schema": "x""#).is_err());
    }

    #[test]
    fn every_value_and_key_is_counted() {
        assert_eq!(
            values_in(r#"{"a": [1, "x", null, {"b": true}], "c": 2.5}"#).expect("JSON"),
            11
        );
        assert_eq!(values_in("[0,0,0]").expect("JSON"), 4);
        assert!(values_in("[0,").is_err());
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert!(values_in(&deep).is_err(), "the parser's depth limit holds");
    }

    #[derive(Serialize)]
    struct Fake {
        bytes: u64,
        seconds: f64,
    }

    #[test]
    fn documents_carry_schema_version_and_raw_numbers() {
        let text = document(
            "run",
            &Fake {
                bytes: 4096,
                seconds: 0.5,
            },
            &Provenance::here(Path::new(".")),
        );
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["schema"], "ioscope/run/v2");
        assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(v["bytes"], 4096);
        assert_eq!(v["seconds"], 0.5);
        assert!(v["environment"]["storage"].is_object());
        assert!(v["command_line"].is_array());
        assert_eq!(v["date"].as_str().map(str::len), Some(10), "YYYY-MM-DD");
        let back: Provenance = serde_json::from_value(v).expect("the head reads back");
        assert_eq!(back.version, env!("CARGO_PKG_VERSION"));
    }

    #[test]
    fn arguments_that_are_not_utf8_are_kept_with_replacement_characters() {
        use std::os::unix::ffi::OsStringExt;
        let args = [b"fast".to_vec(), b"bad\xffname".to_vec()].map(std::ffi::OsString::from_vec);
        assert_eq!(command_line(args.into_iter()), ["fast", "bad\\xffname"]);
    }
}
