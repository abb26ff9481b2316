//! Exact outputs, as hyperfine's `export/tests.rs`: one saved result per schema (real runs
//! on small files, kept in tests/fixtures) re-rendered with `ioscope report` to text (with
//! its warnings), CSV, Markdown and, for the study, HTML, and compared byte for byte with the
//! files kept in tests/golden. A renderer that changes a word, a digit or a column shows up
//! here. To accept a change on purpose, rewrite them and review the diff:
//!
//! ```sh
//! IOSCOPE_BLESS=1 cargo test --release --test golden
//! git diff tests/golden
//! ```

mod common;

use common::ioscope;
use std::path::{Path, PathBuf};

/// Each fixture and the formats its command writes (`--csv` only where it has tables).
const FIXTURES: &[(&str, &[&str])] = &[
    ("run", &["text", "md"]),
    ("calibrate", &["text", "md"]),
    ("fast", &["text", "md"]),
    ("compare", &["text", "csv", "md"]),
    ("sweep", &["text", "csv", "md"]),
    ("cache", &["text", "csv", "md"]),
    ("syscalls", &["text", "csv", "md"]),
    ("patterns", &["text", "csv", "md"]),
    ("trace", &["text", "csv", "md"]),
    ("transfer", &["text", "md"]),
    ("study-sentences", &["text", "md", "html"]),
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compares `actual` with the kept file, or rewrites it under IOSCOPE_BLESS=1. Returns a
/// line describing a difference, for one failure listing them all.
fn check(name: &str, actual: &str) -> Option<String> {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("IOSCOPE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run IOSCOPE_BLESS=1 cargo test --test golden",
            path.display()
        )
    });
    if expected == actual {
        return None;
    }
    let first = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{name}: differs from line {}:\n  kept:   {}\n  now:    {}",
        first + 1,
        expected.lines().nth(first).unwrap_or("<end>"),
        actual.lines().nth(first).unwrap_or("<end>")
    ))
}

fn render(fixture: &Path, format: &str, dir: &Path) -> String {
    let mut cmd = ioscope();
    cmd.arg("report").arg(fixture);
    let out_file = dir.join(format!("out.{format}"));
    match format {
        "text" => {}
        "csv" => {
            cmd.arg("--csv").arg(&out_file);
        }
        "md" => {
            cmd.arg("--markdown").arg(&out_file);
        }
        "html" => {
            cmd.arg("-o").arg(&out_file);
        }
        other => unreachable!("{other}"),
    }
    let out = cmd.output().expect("run ioscope report");
    assert!(
        out.status.success(),
        "report {} ({format}): {}",
        fixture.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = if format == "text" {
        // What a user sees: the result on stdout, then the warnings on stderr.
        format!(
            "{}--- stderr ---\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    } else {
        std::fs::read_to_string(&out_file).expect("the output file")
    };
    // The re-rendering's own command line (the HTML footer) names this checkout, the test
    // binary and a temporary directory: the same output anywhere once they are named.
    let binary = assert_cmd::cargo::cargo_bin("ioscope");
    text.replace(&*binary.to_string_lossy(), "ioscope")
        .replace(&*dir.to_string_lossy(), "<tmp>")
        .replace(&*root().to_string_lossy(), "<repo>")
}

#[test]
fn every_schema_renders_exactly_as_kept_in_every_format() {
    let mut differences = Vec::new();
    for (name, formats) in FIXTURES {
        let fixture = root().join("tests/fixtures").join(format!("{name}.json"));
        for format in *formats {
            let dir = tempfile::tempdir().unwrap();
            let actual = render(&fixture, format, dir.path());
            let ext = if *format == "text" { "txt" } else { format };
            differences.extend(check(&format!("{name}.{ext}"), &actual));
        }
    }
    assert!(
        differences.is_empty(),
        "{} output(s) changed (IOSCOPE_BLESS=1 rewrites them on purpose):\n{}",
        differences.len(),
        differences.join("\n")
    );
}

#[test]
fn every_schema_has_a_golden_fixture() {
    // A new result schema must come with its fixture: the list of schemas `report` reads.
    let names: Vec<&str> = FIXTURES.iter().map(|(n, _)| *n).collect();
    for command in [
        "run",
        "calibrate",
        "fast",
        "compare",
        "sweep",
        "cache",
        "syscalls",
        "patterns",
        "trace",
        "transfer",
    ] {
        assert!(names.contains(&command), "no golden fixture for {command}");
    }
    assert!(names.iter().any(|n| n.starts_with("study")));
}
