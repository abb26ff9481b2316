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
        schema: super::exports::schema(command),
        provenance,
        result,
    };
    let mut text = serde_json::to_string_pretty(&doc)
        .expect("results serialise: no maps with non-string keys");
    text.push('\n');
    text
}

/// The command line as JSON strings: an argument that is not valid UTF-8 (a file name with
/// a 0xff byte) gets U+FFFD for its bad bytes; `std::env::args()` would panic on it.
fn command_line(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<String> {
    args.map(|a| a.to_string_lossy().into_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(command_line(args.into_iter()), ["fast", "bad\u{fffd}name"]);
    }
}
