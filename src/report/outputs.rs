//! Output files (`--csv`, `--svg`, `--markdown`): reserved before anything is measured, rewritten whole
//! and atomically after every measured point, never clobbering what the user did not give
//! up. Without `--force` each path is created exclusively at once (so nothing can appear
//! there during a long run and be overwritten); with `--force` an existing regular file is
//! replaced only when new content is ready (written to a temporary name, synced, renamed).
//! Two outputs with one path, and an output that is the measured file, are refused even
//! with `--force`. A reserved path that never received content is removed again, also by
//! the exit-at-once path of a second Ctrl-C (it is registered with `interrupt`). A symbolic
//! link is refused, dangling or not, with or without `--force`: nothing is written through
//! one (`--csv /tmp/link` to `/dev/sda`, to another user's file).

use crate::error::input;
use crate::files::{
    FileId, describe, file_id, parent_dir, refuse_symlink, remove_if_same, symlink_refusal,
};
use crate::interrupt::Registration;
use anyhow::{Context, Result};
use std::cell::Cell;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// One output file.
#[derive(Debug)]
struct Output {
    flag: &'static str,
    path: PathBuf,
    /// We created the path (an empty placeholder) and own it until content arrives.
    placeholder: bool,
    written: Cell<bool>,
    /// The file as we last left it (inode, size, modification time): if it differs when we
    /// come to write, another program wrote it during the run, and it is not replaced.
    seen: Cell<Option<Stamp>>,
    /// Names the placeholder to the exit-at-once path until content arrives.
    registration: Registration,
    /// The placeholder, held open so that its inode cannot become another file's, and who
    /// it is: only that file is removed, never one another program put at the path.
    created: Option<(std::fs::File, Option<FileId>)>,
}

type Stamp = (u64, u64, i64, i64);

/// Of the path itself, not of what a link there points to: a link put in its place is a
/// change.
fn stamp(path: &Path) -> Option<Stamp> {
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// The output files of one command, each under its flag (`--csv`, `--svg`, `--markdown`).
#[derive(Debug, Default)]
pub struct Outputs {
    files: Vec<Output>,
}

/// Who a path is: its device and inode when it exists, else its canonical directory and
/// name (two spellings of one new file compare equal).
fn identity(path: &Path) -> Option<(u64, u64, PathBuf)> {
    if let Ok(meta) = std::fs::metadata(path) {
        return Some((meta.dev(), meta.ino(), PathBuf::new()));
    }
    let dir = std::fs::canonicalize(parent_dir(path)).ok()?;
    Some((0, 0, dir.join(path.file_name()?)))
}

impl Outputs {
    /// Checks and reserves the `wanted` outputs (flag and path, e.g. `("--csv", r.csv)`) for
    /// `what` (e.g. `sweep FILE`); `measured` are the files the command reads or writes,
    /// which no output may be.
    pub fn reserve(
        wanted: &[(&'static str, &Path)],
        force: bool,
        measured: &[&Path],
        what: &str,
    ) -> Result<Self> {
        let ids: Vec<_> = wanted.iter().map(|(_, p)| identity(p)).collect();
        for (i, a) in ids.iter().enumerate() {
            if let Some(j) = (i + 1..ids.len()).find(|&j| a.is_some() && ids[j] == *a) {
                return Err(input(format!(
                    "{what}: {} and {} name the same file {}; give each its own path",
                    wanted[i].0,
                    wanted[j].0,
                    wanted[i].1.display()
                )));
            }
        }
        for ((flag, path), id) in wanted.iter().zip(&ids) {
            let hit = measured
                .iter()
                .filter(|m| m.as_os_str() != "-")
                .any(|m| id.is_some() && identity(m) == *id);
            if hit {
                return Err(input(format!(
                    "{what}: {flag} {} is the file being measured; refusing to write over it, even with --force",
                    path.display()
                )));
            }
        }
        let mut outputs = Outputs::default();
        for &(flag, path) in wanted {
            // Pushed one by one: an error drops those reserved so far, removing them again.
            outputs
                .files
                .push(Output::reserve(flag, path, force, what)?);
        }
        Ok(outputs)
    }

    fn get(&self, flag: &str) -> Option<&Output> {
        self.files.iter().find(|o| o.flag == flag)
    }

    /// Whether `--svg` was given.
    pub fn wants_svg(&self) -> bool {
        self.get("--svg").is_some()
    }

    /// Whether `--markdown` was given.
    pub fn wants_markdown(&self) -> bool {
        self.get("--markdown").is_some()
    }

    /// Replaces the content of the output under `flag` with `bytes`, if it was given.
    pub fn write(&self, flag: &str, bytes: &[u8]) -> Result<()> {
        self.get(flag).map_or(Ok(()), |o| o.write(bytes))
    }

    /// Replaces the CSV file's content with `bytes`, if `--csv` was given.
    pub fn write_csv(&self, bytes: &[u8]) -> Result<()> {
        self.write("--csv", bytes)
    }
}

impl Output {
    fn reserve(flag: &'static str, path: &Path, force: bool, what: &str) -> Result<Self> {
        let name = path.display();
        let at = format!("{what}: {flag} {name}");
        refuse_symlink(path, &at)?;
        let parent = parent_dir(path);
        if !parent.is_dir() {
            return Err(input(format!(
                "{what}: {flag} {name}: directory {} does not exist",
                parent.display()
            )));
        }
        match std::fs::symlink_metadata(path) {
            Ok(meta) if !force => Err(input(format!(
                "{what}: {flag} {name}: file exists ({} bytes); refusing to overwrite it without --force",
                meta.len()
            ))),
            Ok(meta) if !meta.is_file() => Err(input(format!(
                "{what}: {flag} {name}: not a regular file; refusing to replace it even with --force"
            ))),
            Ok(_) => {
                // Replaced by rename: the directory must take a new file.
                probe_dir(&parent).map_err(|e| {
                    input(format!(
                        "{what}: {flag} {name}: cannot write in {}: {}",
                        parent.display(),
                        describe(&e)
                    ))
                })?;
                Ok(Self {
                    flag,
                    path: path.to_path_buf(),
                    placeholder: false,
                    written: Cell::new(false),
                    seen: Cell::new(stamp(path)),
                    registration: Registration::none(),
                    created: None,
                })
            }
            Err(_) => {
                // O_EXCL never follows a link: one put here since the check is refused.
                let file = OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .mode(0o644)
                    .open(path)
                    .map_err(|e| {
                        if refuse_symlink(path, &at).is_err() {
                            symlink_refusal(path, &at)
                        } else {
                            input(format!("{at}: create: {}", describe(&e)))
                        }
                    })?;
                let id = file_id(&file);
                Ok(Self {
                    flag,
                    path: path.to_path_buf(),
                    placeholder: true,
                    written: Cell::new(false),
                    seen: Cell::new(stamp(path)),
                    registration: Registration::new(path),
                    created: Some((file, id)),
                })
            }
        }
    }

    /// Writes `bytes` to a temporary name beside the file, syncs it and renames it over.
    fn write(&self, bytes: &[u8]) -> Result<()> {
        let name = self.path.display();
        if stamp(&self.path) != self.seen.get() {
            // Ours no more: keep the other writer's content, and stop tracking the path.
            self.written.set(true);
            return Err(input(format!(
                "write {} {name}: another program wrote this file during the run; not overwritten",
                self.flag
            )));
        }
        let tmp = temp_beside(&self.path);
        let mut temporary = None;
        let result = (|| -> std::io::Result<()> {
            let f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o644)
                .open(&tmp)?;
            temporary = Some((Registration::new(&tmp), file_id(&f), f));
            let f = &mut temporary.as_mut().expect("just set").2;
            f.write_all(bytes)?;
            f.sync_all()?;
            // From here the path holds content: the exit-at-once path must not remove it.
            self.registration.keep();
            std::fs::rename(&tmp, &self.path)
        })();
        if let Some((registration, id, _file)) = temporary {
            drop(registration);
            if result.is_err() {
                remove_if_same(&tmp, id);
            }
        }
        result.with_context(|| format!("write {} {name}", self.flag))?;
        self.written.set(true);
        self.seen.set(stamp(&self.path));
        Ok(())
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if self.placeholder && !self.written.get() {
            if let Some((_file, id)) = &self.created {
                remove_if_same(&self.path, *id);
            }
        }
    }
}

/// A temporary name in the same directory (so the rename stays on one file system).
fn temp_beside(path: &Path) -> PathBuf {
    let base = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    parent_dir(path).join(format!(".{base}.ioscope-tmp-{}", std::process::id()))
}

/// Whether a new file can be created in `dir` (created and removed at once).
fn probe_dir(dir: &Path) -> std::io::Result<()> {
    let probe = dir.join(format!(".ioscope-probe-{}", std::process::id()));
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
        .map(drop)?;
    std::fs::remove_file(&probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_path_is_reserved_at_once_and_removed_if_nothing_was_written() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("r.csv");
        let outputs = Outputs::reserve(&[("--csv", csv.as_path())], false, &[], "t").unwrap();
        assert!(csv.exists(), "reserved before measuring");
        drop(outputs);
        assert!(!csv.exists(), "an empty reservation is removed");
    }

    #[test]
    fn written_content_replaces_the_file_whole_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("r.csv");
        let outputs = Outputs::reserve(&[("--csv", csv.as_path())], false, &[], "t").unwrap();
        outputs.write_csv(b"a,b\n1,2\n").unwrap();
        outputs.write_csv(b"a,b\n1,2\n3,4\n").unwrap();
        drop(outputs);
        assert_eq!(std::fs::read(&csv).unwrap(), b"a,b\n1,2\n3,4\n");
        let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left behind");
    }

    #[test]
    fn one_path_for_two_outputs_or_for_the_measured_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let x = dir.path().join("x");
        let err = Outputs::reserve(
            &[("--csv", x.as_path()), ("--svg", x.as_path())],
            true,
            &[],
            "t",
        )
        .unwrap_err();
        assert!(err.to_string().contains("same file"), "{err}");
        assert!(!x.exists());
        let data = dir.path().join("data");
        std::fs::write(&data, b"keep").unwrap();
        let err = Outputs::reserve(&[("--csv", data.as_path())], true, &[&data], "t").unwrap_err();
        assert!(err.to_string().contains("being measured"), "{err}");
        assert_eq!(std::fs::read(&data).unwrap(), b"keep");
    }

    #[test]
    fn an_existing_file_needs_force_and_survives_until_new_content_is_ready() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("old.csv");
        std::fs::write(&csv, b"old").unwrap();
        let err = Outputs::reserve(&[("--csv", csv.as_path())], false, &[], "t").unwrap_err();
        assert!(err.to_string().contains("--force"), "{err}");
        let outputs = Outputs::reserve(&[("--csv", csv.as_path())], true, &[], "t").unwrap();
        assert_eq!(
            std::fs::read(&csv).unwrap(),
            b"old",
            "untouched until written"
        );
        drop(outputs);
        assert_eq!(std::fs::read(&csv).unwrap(), b"old", "never written: kept");
        let proc_version = Path::new("/proc/version");
        let err = Outputs::reserve(&[("--csv", proc_version)], true, &[], "t").unwrap_err();
        assert!(err.to_string().contains("/proc"), "{err}");
    }
}
