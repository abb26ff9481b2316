//! Build script: the git commit for `--version` and the JSON documents.
//!
//! It sets `IOSCOPE_COMMIT` (the short hash, or empty) and `IOSCOPE_VERSION` (`0.1.0`, or
//! `0.1.0 (commit abc1234)` in a checkout). Outside a checkout — a crate from a registry, a
//! tarball, no git installed — it falls back silently: the build never fails here.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let commit = commit().unwrap_or_default();
    let full = if commit.is_empty() {
        version
    } else {
        format!("{version} (commit {commit})")
    };
    println!("cargo:rustc-env=IOSCOPE_COMMIT={commit}");
    println!("cargo:rustc-env=IOSCOPE_VERSION={full}");
}

/// `git ARGS` run in the package directory: its trimmed output, or `None` on any failure.
fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    (out.status.success() && !text.trim().is_empty()).then(|| text.trim().to_string())
}

/// The short commit of the checkout this package is the top of, with the files that name
/// it watched (HEAD, the branch's ref, packed-refs) so a new commit rebuilds the version.
fn commit() -> Option<String> {
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?);
    // Only our own checkout: a package unpacked inside some other repository is not one.
    let top = git(&dir, &["rev-parse", "--show-toplevel"])?;
    if std::fs::canonicalize(&top).ok()? != std::fs::canonicalize(&dir).ok()? {
        return None;
    }
    let mut watched = vec![git(&dir, &["rev-parse", "--git-path", "HEAD"])?];
    if let Some(reference) = git(&dir, &["rev-parse", "--symbolic-full-name", "HEAD"]) {
        watched.extend(git(&dir, &["rev-parse", "--git-path", &reference]));
    }
    watched.extend(git(&dir, &["rev-parse", "--git-path", "packed-refs"]));
    for path in watched {
        // --git-path answers relative to the package directory.
        let path = dir.join(path);
        // A path that does not exist would make cargo run this script on every build.
        if path.exists() {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    git(&dir, &["rev-parse", "--short", "HEAD"])
}
