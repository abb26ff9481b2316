//! The layers hold: the top-level modules of `src/` name only those below them, the CLI names
//! no command module, the formats under `src/report/` name no view, no two files or
//! sub-folders of one folder of `src/` (`src/` itself included) import each other, directly
//! or round a circle, and test hooks are named only in `src/hooks.rs`. Read from the source
//! text, so a new import that breaks a layer fails here, not in a review.

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

/// Where a use tree begins at byte `i` of `s`: the paths it names, each as its segments
/// after `prefix` (`a::{b, c::{d, e}}` names `a::b`, `a::c::d` and `a::c::e`). Returns the
/// byte after it.
fn use_tree(s: &[u8], mut i: usize, prefix: &[String], out: &mut Vec<Vec<String>>) -> usize {
    let skip = |s: &[u8], mut i: usize| {
        while s.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
            i += 1;
        }
        i
    };
    let mut segs = prefix.to_vec();
    loop {
        i = skip(s, i);
        if s.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = skip(s, i);
                match s.get(i) {
                    None => return i,
                    Some(b'}') => return i + 1,
                    Some(b',') => i += 1,
                    _ => {
                        let before = i;
                        i = use_tree(s, i, &segs, out);
                        if i == before {
                            i += 1;
                        }
                    }
                }
            }
        }
        let start = i;
        while s
            .get(i)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'*')
        {
            i += 1;
        }
        if i == start {
            if segs.len() > prefix.len() {
                out.push(segs);
            }
            return i;
        }
        segs.push(String::from_utf8_lossy(&s[start..i]).into_owned());
        if s[i..].starts_with(b"::") {
            i += 2;
        } else {
            out.push(segs);
            return i;
        }
    }
}

/// `path` (segments as written in module `me`) from the crate root: `crate::`, `super::`
/// and `self::` resolved; a path with none of them is taken as relative to `me`.
fn absolute(me: &str, path: &[String]) -> Vec<String> {
    let mut base: Vec<String> = me
        .split("::")
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    let mut rest = path;
    if rest.first().is_some_and(|s| s == "crate") {
        base.clear();
        rest = &rest[1..];
    }
    while let Some(first) = rest.first().filter(|s| *s == "super" || *s == "self") {
        if first == "super" {
            base.pop();
        }
        rest = &rest[1..];
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    base
}

/// The paths module `me`'s code names from the crate: every `crate::…`, `super::…` and
/// `self::…`, use trees expanded.
fn paths(me: &str, code: &str) -> Vec<Vec<String>> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in code.match_indices(start) {
            let glued = at > 0 && (s[at - 1].is_ascii_alphanumeric() || b"_:".contains(&s[at - 1]));
            if !glued {
                let mut found = Vec::new();
                use_tree(s, at, &[], &mut found);
                out.extend(found.iter().map(|p| absolute(me, p)));
            }
        }
    }
    out
}

/// The names a module re-exports (`pub use child::Name`), with the full path each stands
/// for, so that `super::Name` counts as a reference to the module that defines it.
fn reexports(me: &str, code: &str) -> Vec<(String, Vec<String>)> {
    let s = code.as_bytes();
    let mut out = Vec::new();
    for (at, _) in code.match_indices("pub") {
        let mut i = at + 3;
        if s.get(i) == Some(&b'(') {
            i += code[i..].find(')').map_or(0, |k| k + 1);
        }
        let rest = &code[i..];
        let trimmed = rest.trim_start();
        if !(rest.len() > trimmed.len() || s.get(i) == Some(&b'(')) {
            continue;
        }
        let Some(tree) = trimmed.strip_prefix("use ") else {
            continue;
        };
        let mut found = Vec::new();
        use_tree(s, code.len() - tree.len(), &[], &mut found);
        for p in found {
            let full = absolute(me, &p);
            if let Some(name) = full.last().filter(|n| *n != "*") {
                out.push((format!("{me}::{name}"), full.clone()));
            }
        }
    }
    out
}

/// One reference in the library's source: module `from` (in `file`) names `path`, which
/// `to` defines.
struct Reference {
    from: String,
    file: String,
    path: String,
    to: String,
}

/// Every module of the library (`src/`, but `main.rs`), named from the crate root
/// (`report::views::sweep`; `""` is `lib.rs`), and every reference of one to another.
fn references() -> (BTreeSet<String>, Vec<Reference>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    rust_files(&root.join("src"), &mut files);
    files.retain(|f| *f != root.join("src/main.rs"));
    let modules: Vec<(String, String, String)> = files
        .iter()
        .map(|f| {
            let me = module_of(f);
            let me = if me == "lib" { String::new() } else { me };
            let rel = f.strip_prefix(root).unwrap().to_string_lossy().into_owned();
            let code = source(&rel);
            (me, rel, code)
        })
        .collect();
    let known: BTreeSet<String> = modules.iter().map(|(m, _, _)| m.clone()).collect();
    let reexported: BTreeMap<String, Vec<String>> = modules
        .iter()
        .flat_map(|(me, _, code)| reexports(me, code))
        .map(|(k, v)| (k.trim_start_matches("::").to_string(), v))
        .collect();
    // The module that defines what `path` names: its longest known prefix, or, when the next
    // segment is a name that module re-exports, the module it comes from.
    fn resolve(
        path: &[String],
        known: &BTreeSet<String>,
        reexported: &BTreeMap<String, Vec<String>>,
        depth: usize,
    ) -> Option<String> {
        for k in (0..=path.len()).rev() {
            let candidate = path[..k].join("::");
            if !known.contains(&candidate) {
                continue;
            }
            if let Some(next) = path.get(k) {
                let name = if candidate.is_empty() {
                    next.clone()
                } else {
                    format!("{candidate}::{next}")
                };
                if let Some(target) = reexported.get(&name).filter(|_| depth < 5) {
                    let r = resolve(target, known, reexported, depth + 1);
                    if r.as_ref().is_some_and(|r| *r != candidate) {
                        return r;
                    }
                }
            }
            return Some(candidate);
        }
        None
    }
    let mut out = Vec::new();
    for (me, file, code) in &modules {
        for path in paths(me, code) {
            if let Some(to) = resolve(&path, &known, &reexported, 0).filter(|to| to != me) {
                out.push(Reference {
                    from: me.clone(),
                    file: file.clone(),
                    path: path.join("::"),
                    to,
                });
            }
        }
    }
    (known, out)
}

/// Every module of the library and the modules it refers to ([`references`]).
fn crate_graph() -> BTreeMap<String, BTreeSet<String>> {
    let (modules, references) = references();
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        modules.into_iter().map(|m| (m, BTreeSet::new())).collect();
    for r in references {
        graph.entry(r.from).or_default().insert(r.to);
    }
    graph
}

/// The report layer's part of [`crate_graph`]: its modules and the ones of its own they
/// refer to (`report/mod.rs` itself left out).
fn report_graph() -> BTreeMap<String, BTreeSet<String>> {
    crate_graph()
        .into_iter()
        .filter(|(m, _)| m.starts_with("report::"))
        .map(|(m, refs)| {
            let refs = refs
                .into_iter()
                .filter(|r| r.starts_with("report::"))
                .collect();
            (m, refs)
        })
        .collect()
}

/// A path from `from` back round to `to` in `graph`, if there is one.
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
fn no_folder_of_src_has_an_import_circle() {
    let graph = crate_graph();
    // The reader sees imports (else no circle could ever be found): through `use super::…`,
    // `crate::a::{b, c}` and a parent's `pub use`.
    assert!(graph["report::views::media"].contains("report::views::media_figures"));
    assert!(graph["report::view"].contains("report::json"));
    assert!(graph["trace::sys"].contains("trace::call"));
    assert!(graph["measure::series"].contains("measure::probe"));
    assert!(graph["cmd::mpi::io500"].contains("cmd::mpi::watchdog"));
    // Per folder, src/ itself included, its files and sub-folders are the nodes (a
    // sub-folder with all it holds is one), and a reference from anything in one to
    // anything in another is an edge; a folder's own `mod.rs` (src/'s `lib.rs`), which
    // declares them all, is left out.
    let mut folders: BTreeSet<&str> = graph
        .keys()
        .filter_map(|m| m.rsplit_once("::").map(|(parent, _)| parent))
        .collect();
    folders.insert("");
    let mut checked = 0;
    for folder in folders {
        let prefix = if folder.is_empty() {
            String::new()
        } else {
            format!("{folder}::")
        };
        let member = |m: &str| -> Option<String> {
            let rest = m.strip_prefix(&prefix).filter(|r| !r.is_empty())?;
            Some(format!("{prefix}{}", rest.split("::").next().unwrap()))
        };
        let mut local: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (m, refs) in &graph {
            let Some(from) = member(m) else { continue };
            for to in refs.iter().filter_map(|r| member(r)) {
                if to != from {
                    local.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        for module in local.keys() {
            let mut path = vec![module.clone()];
            let found = reaches(&local, module, module, &mut BTreeSet::new(), &mut path);
            assert!(
                !found,
                "an import circle in src/{}: {}",
                if folder.is_empty() {
                    String::new()
                } else {
                    format!("{}/", folder.replace("::", "/"))
                },
                path.join(" → ")
            );
        }
        checked += 1;
    }
    assert!(checked >= 9, "{checked} folders checked");
}

/// The top-level modules of `src/`, bottom to top (CONTRIBUTING.md, "The layers"): each
/// names only those before it.
const LAYERS: &[&str] = &[
    // leaves
    "units",
    "checksum",
    "text",
    "error",
    "hooks",
    "interrupt",
    "files",
    "workload",
    // measuring
    "measure",
    "engine",
    "harness",
    "warning",
    "trace",
    "transfer",
    // arguments
    "cli",
    "options",
    // what each command produces, how it is rendered, the commands, the dispatch
    "results",
    "report",
    "cmd",
    "app",
];

#[test]
fn the_top_level_keeps_its_layer_order() {
    let (modules, references) = references();
    let rank = |m: &str| -> usize {
        let top = m.split("::").next().unwrap_or_default();
        LAYERS.iter().position(|l| *l == top).unwrap_or_else(|| {
            panic!(
                "src/{top} is in no layer: put it in LAYERS (tests/layers.rs) and CONTRIBUTING.md"
            )
        })
    };
    for m in modules.iter().filter(|m| !m.is_empty()) {
        rank(m);
    }
    let mut upward = Vec::new();
    for r in references
        .iter()
        .filter(|r| !r.from.is_empty() && !r.to.is_empty())
    {
        if rank(&r.to) <= rank(&r.from) {
            continue;
        }
        upward.push(format!(
            "{} ({}) names crate::{}, of {}, a higher layer",
            r.file, r.from, r.path, r.to
        ));
    }
    assert!(
        upward.is_empty(),
        "references up the layers:\n{}",
        upward.join("\n")
    );
}

/// The names of the environment variables in `text` that start with `IOSCOPE_`, but for
/// the two set at build time (`env!`), which no user's environment can change, and the
/// user's settings the manual lists under ENVIRONMENT (`IOSCOPE_TRACE_ENGINE`).
fn ioscope_variables(text: &str) -> BTreeSet<String> {
    let settings: Vec<&str> = ioscope::report::manual::ENVIRONMENT
        .iter()
        .map(|(name, _)| *name)
        .collect();
    text.match_indices("IOSCOPE_")
        .map(|(at, _)| {
            text[at..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !["IOSCOPE_VERSION", "IOSCOPE_COMMIT"].contains(&n.as_str()))
        .filter(|n| !settings.contains(&n.as_str()))
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
