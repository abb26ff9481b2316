//! JSON documents: `"schema": "ioscope/<cmd>/v2"`, the tool version, the command line,
//! the environment, then the result's own fields. Raw numbers only.

use crate::measure::env::Environment;
use serde::Serialize;

#[derive(Serialize)]
struct Document<'a, T: Serialize> {
    schema: String,
    version: &'static str,
    command_line: Vec<String>,
    environment: &'a Environment,
    #[serde(flatten)]
    result: &'a T,
}

/// Renders `result` of subcommand `command` as one pretty-printed JSON document.
pub fn document<T: Serialize>(command: &str, result: &T, environment: &Environment) -> String {
    let doc = Document {
        schema: super::exports::schema(command),
        version: env!("CARGO_PKG_VERSION"),
        command_line: command_line(std::env::args_os()),
        environment,
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
        let env = Environment::default();
        let text = document(
            "run",
            &Fake {
                bytes: 4096,
                seconds: 0.5,
            },
            &env,
        );
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["schema"], "ioscope/run/v2");
        assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
        assert_eq!(v["bytes"], 4096);
        assert_eq!(v["seconds"], 0.5);
        assert!(v["environment"]["storage"].is_object());
        assert!(v["command_line"].is_array());
    }

    #[test]
    fn arguments_that_are_not_utf8_are_kept_with_replacement_characters() {
        use std::os::unix::ffi::OsStringExt;
        let args = [b"fast".to_vec(), b"bad\xffname".to_vec()].map(std::ffi::OsString::from_vec);
        assert_eq!(command_line(args.into_iter()), ["fast", "bad\u{fffd}name"]);
    }
}
