//! The layers hold: the CLI names no command module, the formats under `src/report/` name no
//! view, and no two modules of the report layer import each other, directly or round a
//! circle. Read from the source text, so a new import that breaks a layer fails here, not in
//! a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn source(rel: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("read {rel}: {e}"));
    // Unit tests may reach anywhere; comments are not imports.
    let code = text.split("#[cfg(test)]\nmod tests").next().unwrap_or("");
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `report::views::sweep` for `src/report/views/sweep.rs` (`mod.rs` names its directory).
fn module_of(path: &Path) -> String {
    let rel = path
        .strip_prefix(Path::new(env!("CARGO_MANIFEST_DIR")).join("src"))
        .unwrap()
        .with_extension("");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    parts.join("::")
}

/// The modules of `known` that `code` (the text of module `me`) refers to: by
/// `crate::report::…`, `super::…` or `use super::{a, b}`.
fn references(me: &str, code: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let parent = me.rsplit_once("::").map_or("", |(p, _)| p);
    let mut paths: Vec<String> = Vec::new();
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':' || c == '{' || c == ','))
        .collect();
    for w in words {
        if let Some(rest) = w.strip_prefix("crate::") {
            paths.push(rest.to_string());
        } else if let Some(rest) = w.strip_prefix("super::") {
            if let Some(group) = rest.strip_prefix('{') {
                for name in group.split(',') {
                    paths.push(format!("{parent}::{}", name.trim()));
                }
            } else {
                paths.push(format!("{parent}::{rest}"));
            }
        }
    }
    let mut out = BTreeSet::new();
    for p in paths {
        let parts: Vec<&str> = p.split("::").filter(|s| !s.is_empty()).collect();
        for k in (1..=parts.len()).rev() {
            let candidate = parts[..k].join("::");
            if known.contains(&candidate) {
                if candidate != me && candidate != "report" {
                    out.insert(candidate);
                }
                break;
            }
        }
    }
    out
}

fn report_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report"),
        &mut files,
    );
    let known: BTreeSet<String> = files.iter().map(|f| module_of(f)).collect();
    files
        .iter()
        .map(|f| {
            let me = module_of(f);
            let rel = f
                .strip_prefix(env!("CARGO_MANIFEST_DIR"))
                .unwrap()
                .to_string_lossy()
                .trim_start_matches('/')
                .to_string();
            let refs = references(&me, &source(&rel), &known);
            (me, refs)
        })
        .collect()
}

#[test]
fn the_cli_names_no_command_module() {
    let cli = source("src/cli.rs");
    assert!(!cli.contains("cmd::"), "src/cli.rs refers to cmd::");
}

#[test]
fn the_formats_name_no_view() {
    let graph = report_graph();
    for format in [
        "report::csv",
        "report::json",
        "report::markdown",
        "report::html",
        "report::svg",
        "report::text",
        "report::page",
        "report::cells",
        "report::view",
    ] {
        let deps = graph
            .get(format)
            .unwrap_or_else(|| panic!("{format} exists"));
        let views: Vec<_> = deps
            .iter()
            .filter(|d| d.starts_with("report::views"))
            .collect();
        assert!(views.is_empty(), "{format} imports {views:?}");
    }
}

#[test]
fn the_report_layer_has_no_import_circle() {
    let graph = report_graph();
    // The reader sees imports (else no circle could ever be found).
    assert!(graph["report::views::study"].contains("report::views::sweep"));
    assert!(graph["report::view"].contains("report::json"));
    // Depth-first search for a path back to where it started.
    fn reaches(
        graph: &BTreeMap<String, BTreeSet<String>>,
        from: &str,
        to: &str,
        seen: &mut BTreeSet<String>,
        path: &mut Vec<String>,
    ) -> bool {
        for next in graph.get(from).into_iter().flatten() {
            path.push(next.clone());
            if next == to || (seen.insert(next.clone()) && reaches(graph, next, to, seen, path)) {
                return true;
            }
            path.pop();
        }
        false
    }
    for module in graph.keys() {
        let mut path = vec![module.clone()];
        let found = reaches(&graph, module, module, &mut BTreeSet::new(), &mut path);
        assert!(!found, "an import circle: {}", path.join(" → "));
    }
}

/// The names of the environment variables in `text` that start with `IOSCOPE_`, but for
/// the two set at build time (`env!`), which no user's environment can change.
fn ioscope_variables(text: &str) -> BTreeSet<String> {
    text.match_indices("IOSCOPE_")
        .map(|(at, _)| {
            text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !["IOSCOPE_VERSION", "IOSCOPE_COMMIT"].contains(&n.as_str()))
        .collect()
}

#[test]
fn test_hooks_are_named_only_in_the_hooks_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    let hooks_rs = root.join("src/hooks.rs");
    for file in files.iter().filter(|f| **f != hooks_rs) {
        // Comments too: a hook is explained where it is defined, nowhere else.
        let text = std::fs::read_to_string(file).unwrap();
        let named = ioscope_variables(&text);
        assert!(
            named.is_empty(),
            "{} names {named:?}: test hooks belong in src/hooks.rs",
            file.display()
        );
    }
}

#[test]
fn the_hooks_module_reads_the_environment_only_with_the_test_hooks_feature() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/hooks.rs"))
        .unwrap();
    // The module that reads them, compiled only with the feature, ends at the first `}` that
    // closes a line at column 0.
    let start = text
        .find("#[cfg(feature = \"test-hooks\")]\nmod imp {")
        .expect("src/hooks.rs holds `mod imp` under #[cfg(feature = \"test-hooks\")]");
    let end = start + text[start..].find("\n}\n").expect("mod imp closes");
    assert!(
        text.contains("#[cfg(not(feature = \"test-hooks\"))]\nmod imp {"),
        "src/hooks.rs holds the stand-ins of a build without the feature"
    );
    let (before, inside, after) = (&text[..start], &text[start..end], &text[end..]);
    assert!(
        ioscope_variables(inside).len() >= 5,
        "the reader sees hooks"
    );
    for (part, where_) in [(before, "before"), (after, "after")] {
        let code = part
            .lines()
            .filter(|l| !l.trim_start().starts_with("//"))
            .collect::<Vec<_>>()
            .join("\n");
        let named = ioscope_variables(&code);
        assert!(
            named.is_empty(),
            "code {where_} the feature's module names {named:?}"
        );
        assert!(
            !code.contains("env::var"),
            "code {where_} the feature's module reads the environment"
        );
    }
    // The feature is the tests' alone: never on by default, on for `cargo test`.
    let manifest =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).unwrap();
    assert!(
        !manifest
            .lines()
            .any(|l| l.starts_with("default") && l.contains("test-hooks")),
        "test-hooks is a default feature"
    );
    assert!(
        manifest.contains("ioscope = { path = \".\", features = [\"test-hooks\"] }"),
        "the dev-dependency that turns the hooks on for the tests"
    );
}
