//! Output files (`--csv`, `--svg`, `--markdown`, `report -o`): reserved before anything is
//! measured, rewritten whole and atomically after every measured point, never clobbering
//! what the user did not give up. Without `--force` each path is created exclusively at once
//! (so nothing can appear there during a long run and be overwritten); with `--force` an
//! existing regular file is replaced only when new content is ready (written to a temporary
//! name, synced, renamed). Two outputs with one path, an output that is the measured file (or
//! a document being read), a directory and anything but a regular file are refused even with
//! `--force`. A reserved path that never received content is removed again, also by the
//! exit-at-once path of a second Ctrl-C (it is registered with `interrupt`). A symbolic link
//! is refused, dangling or not, with or without `--force`: nothing is written through one
//! (`--csv /tmp/link` to `/dev/sda`, to another user's file).
//!
//! [`Exports`], [`save`] and [`finish`] are how every result goes out: its files reserved
//! up front, rewritten after every point, then the text or JSON printed and the exit said.

use super::baseline::Pending;
use super::json::Provenance;
use super::view::Exportable;
use crate::error::{ExitKind, input};
use crate::files::{
    FileId, describe, file_id, parent_dir, refuse_symlink, remove_if_same, symlink_refusal,
};
use crate::interrupt::Registration;
use crate::options::ExportOptions;
use crate::results::baseline::Against;
use crate::results::figures::Figures;
use anyhow::{Context, Result};
use std::cell::{Cell, OnceCell};
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

/// What the files a measuring command reads or writes are called when an output would be
/// one of them.
const MEASURED: &str = "the file being measured";

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
        Self::reserve_apart(wanted, force, measured, MEASURED, what)
    }

    /// As [`Outputs::reserve`], where `inputs` are what the command reads, as `called` names
    /// them in the refusal (`one of the studies being read`).
    pub fn reserve_apart(
        wanted: &[(&'static str, &Path)],
        force: bool,
        inputs: &[&Path],
        called: &str,
        what: &str,
    ) -> Result<Self> {
        Self::distinct(wanted, what)?;
        let ids: Vec<_> = wanted.iter().map(|(_, p)| identity(p)).collect();
        for ((flag, path), id) in wanted.iter().zip(&ids) {
            let hit = inputs
                .iter()
                .filter(|m| m.as_os_str() != "-")
                .any(|m| id.is_some() && identity(m) == *id);
            if hit {
                return Err(input(format!(
                    "{what}: {flag} {} is {called}; refusing to write over it, even with --force",
                    crate::text::printable_path(path)
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

    /// Refuses two of `wanted` (flag and path) that name one file: for outputs reserved
    /// apart (`--series` beside `--csv`), which would otherwise overwrite each other.
    pub fn distinct(wanted: &[(&'static str, &Path)], what: &str) -> Result<()> {
        let ids: Vec<_> = wanted.iter().map(|(_, p)| identity(p)).collect();
        for (i, a) in ids.iter().enumerate() {
            if let Some(j) = (i + 1..ids.len()).find(|&j| a.is_some() && ids[j] == *a) {
                return Err(input(format!(
                    "{what}: {} and {} name the same file {}; give each its own path",
                    wanted[i].0,
                    wanted[j].0,
                    crate::text::printable_path(wanted[i].1)
                )));
            }
        }
        Ok(())
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

/// A result's outputs besides stdout: its files, and who measured where (collected once,
/// when the JSON document or the Markdown first needs it).
#[derive(Default)]
pub struct Exports {
    files: Outputs,
    provenance: OnceCell<Provenance>,
}

impl Exports {
    /// Checks and reserves the files `export` asks for, before anything is measured;
    /// `measured` are the files the command reads or writes, which no output may be.
    pub fn reserve<T: Exportable>(export: &ExportOptions, measured: &[&Path]) -> Result<Self> {
        Self::reserve_apart::<T>(export, measured, MEASURED)
    }

    /// The files of a saved result rendered again from `document`, which no output may be;
    /// where and how it was measured is the saved run's (`provenance`), not this machine's.
    pub fn again<T: Exportable>(
        export: &ExportOptions,
        document: &Path,
        provenance: Provenance,
    ) -> Result<Self> {
        let out = Self::reserve_apart::<T>(export, &[document], "the document being read")?;
        let _ = out.provenance.set(provenance);
        Ok(out)
    }

    fn reserve_apart<T: Exportable>(
        export: &ExportOptions,
        inputs: &[&Path],
        called: &str,
    ) -> Result<Self> {
        let what = T::COMMAND;
        if export.svg.is_some() && !T::HAS_CHART {
            return Err(input(format!(
                "{what}: --svg: {what} has no chart; use --csv, --markdown or --json"
            )));
        }
        let wanted: Vec<(&'static str, &Path)> = [
            ("--csv", &export.csv),
            ("--svg", &export.svg),
            ("--markdown", &export.markdown),
        ]
        .into_iter()
        .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
        .collect();
        Ok(Self {
            files: Outputs::reserve_apart(&wanted, export.force, inputs, called, what)?,
            provenance: OnceCell::new(),
        })
    }

    fn provenance(&self, path: &Path) -> &Provenance {
        self.provenance.get_or_init(|| Provenance::here(path))
    }
}

/// Writes the CSV, SVG and Markdown files of a result (the whole result so far: called
/// after every measured point, so an interruption or failure later loses nothing); `path`
/// is what was measured, for the environment.
pub fn save<T: Exportable>(result: &T, out: &Exports, path: &Path) -> Result<()> {
    if !result.complete() && result.is_empty() {
        // Interrupted before anything was measured: no file is better than an empty one
        // (the reserved paths are removed again).
        return Ok(());
    }
    // The chart first: a result without one is refused before any file is written.
    let chart = if out.files.wants_svg() {
        Some(result.chart().ok_or_else(|| {
            input(format!(
                "{} --svg: this result has no chart (no part with a curve was measured); use --csv or --markdown",
                T::COMMAND
            ))
        })?)
    } else {
        None
    };
    out.files.write_csv(&super::csv::render(&result.table())?)?;
    if let Some(chart) = chart {
        out.files
            .write("--svg", super::svg::render(&chart)?.as_bytes())?;
    }
    if out.files.wants_markdown() {
        let text = super::view::markdown_document(result, out.provenance(path));
        out.files.write("--markdown", text.as_bytes())?;
    }
    Ok(())
}

/// Prints a result (text or JSON), writes its files, prints its warnings, and says how the
/// process should exit: 130 when interrupted, 1 when a check failed, 0 otherwise.
pub fn finish<T: Exportable>(
    result: &T,
    options: &ExportOptions,
    out: &Exports,
    path: &Path,
) -> Result<ExitKind> {
    finish_with(result, options, out, path, None)
}

/// As [`finish`], with the result set against a baseline and saved as one where asked
/// (`--baseline`, `--save-baseline`): the comparison follows the result and its warnings
/// (its answer is the last line), goes into the JSON document as `baseline` and into the
/// Markdown file; a regression exits 1. An interrupted result is neither compared nor saved.
pub fn finish_against<T: Exportable + Figures>(
    result: &T,
    options: &ExportOptions,
    out: &Exports,
    path: &Path,
    pending: &Pending,
) -> Result<ExitKind> {
    if pending.is_none() || !result.complete() {
        return finish(result, options, out, path);
    }
    let against = compared(result, out, path, pending);
    finish_compared(result, options, out, path, pending, against.as_ref())
}

/// The comparison [`finish_against`] makes, made beforehand by a command that writes it
/// into files of its own (the study's report directory); `None` without `--baseline` or
/// for an interrupted result.
pub fn compared<T: Exportable + Figures>(
    result: &T,
    out: &Exports,
    path: &Path,
    pending: &Pending,
) -> Option<Against> {
    if !result.complete() {
        return None;
    }
    pending.against(result, out.provenance(path))
}

/// As [`finish_against`], with the comparison made already ([`compared`]).
pub fn finish_compared<T: Exportable + Figures>(
    result: &T,
    options: &ExportOptions,
    out: &Exports,
    path: &Path,
    pending: &Pending,
    against: Option<&Against>,
) -> Result<ExitKind> {
    if pending.is_none() || !result.complete() {
        return finish(result, options, out, path);
    }
    let kind = finish_with(result, options, out, path, against)?;
    if let Some(line) = pending.save(result, out.provenance(path))? {
        super::note(&line);
    }
    Ok(match (kind, against) {
        (ExitKind::Success, Some(a)) if a.regressed() => ExitKind::Failed,
        _ => kind,
    })
}

/// A result's document with the comparison beside its fields.
#[derive(serde::Serialize)]
struct WithBaseline<'a, T> {
    #[serde(flatten)]
    result: &'a T,
    baseline: &'a Against,
}

fn finish_with<T: Exportable>(
    result: &T,
    options: &ExportOptions,
    out: &Exports,
    path: &Path,
    against: Option<&Against>,
) -> Result<ExitKind> {
    if !result.complete() && result.is_empty() && !options.json {
        // Nothing measured and no document asked for: the one "interrupted" line.
        return Err(crate::error::Failure::Interrupted.into());
    }
    save(result, out, path)?;
    if let (Some(a), true) = (against, out.files.wants_markdown()) {
        let mut text = super::view::markdown_document(result, out.provenance(path));
        text.push('\n');
        text.push_str(&super::baseline::markdown(a).join("\n"));
        out.files.write("--markdown", text.as_bytes())?;
    }
    let answer = result
        .answer()
        .filter(|_| options.quiet && result.ok() && result.complete() && against.is_none());
    let rendered = if options.json {
        match against {
            Some(baseline) => super::json::document(
                T::COMMAND,
                &WithBaseline { result, baseline },
                out.provenance(path),
            ),
            None => super::json::document(T::COMMAND, result, out.provenance(path)),
        }
    } else if let Some(answer) = answer {
        format!("{answer}\n")
    } else {
        let text = if options.verbose {
            result.verbose_text()
        } else {
            result.text()
        };
        super::terminal::fit(&text, super::terminal::Stream::Stdout)
    };
    super::emit(&rendered)?;
    if !options.json {
        for w in result.warnings() {
            super::warn(&super::text::warning(w));
        }
        if let Some(a) = against {
            let section = super::baseline::text(a, super::terminal::table_width());
            if T::STDOUT_IS_THE_ANSWER {
                super::note(&section);
            } else {
                super::emit(&super::terminal::fit(
                    &section,
                    super::terminal::Stream::Stdout,
                ))?;
            }
        }
    }
    Ok(if !result.complete() {
        ExitKind::Interrupted
    } else if !result.ok() {
        ExitKind::Failed
    } else {
        ExitKind::Success
    })
}

impl Output {
    fn reserve(flag: &'static str, path: &Path, force: bool, what: &str) -> Result<Self> {
        let name = crate::text::printable_path(path);
        let at = format!("{what}: {flag} {name}");
        refuse_symlink(path, &at)?;
        let parent = parent_dir(path);
        if !parent.is_dir() {
            return Err(input(format!(
                "{what}: {flag} {name}: directory {} does not exist",
                crate::text::printable_path(&parent)
            )));
        }
        match std::fs::symlink_metadata(path) {
            // Refused whatever --force says, so said before asking for it.
            Ok(meta) if meta.is_dir() => Err(input(format!(
                "{at}: it is a directory; name the file to write"
            ))),
            // A FIFO would block the write until a reader comes; a device is nobody's output.
            Ok(meta) if !meta.is_file() => Err(input(format!(
                "{at}: not a regular file; refusing to replace it even with --force"
            ))),
            Ok(meta) if !force => Err(input(format!(
                "{at}: file exists ({} bytes); refusing to overwrite it without --force",
                meta.len()
            ))),
            Ok(_) => {
                // Replaced by rename: the directory must take a new file.
                probe_dir(&parent).map_err(|e| {
                    input(format!(
                        "{what}: {flag} {name}: cannot write in {}: {}",
                        crate::text::printable_path(&parent),
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
        let name = crate::text::printable_path(&self.path);
        self.ensure_room(bytes.len() as u64)?;
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

/// Outputs this small are written without looking at the free space: a result's text, a
/// chart or a page of real figures (a few hundred KiB at most) cannot matter to the margin.
const SMALL_OUTPUT: u64 = 1 << 20;

impl Output {
    /// Refuses, with the numbers, an output that would leave less than the free-space margin
    /// (10% of the file system or 1 GiB: [`crate::files::default_margin`]); what it replaces
    /// is counted as freed.
    fn ensure_room(&self, bytes: u64) -> Result<()> {
        if bytes < SMALL_OUTPUT {
            return Ok(());
        }
        let replaced = std::fs::symlink_metadata(&self.path).map_or(0, |m| m.len());
        crate::files::ensure_room(
            &parent_dir(&self.path),
            &format!("{} {}", self.flag, crate::text::printable_path(&self.path)),
            bytes,
            replaced,
            None,
        )
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

    #[test]
    fn a_directory_or_a_device_is_refused_for_its_own_reason_with_or_without_force() {
        let dir = tempfile::tempdir().unwrap();
        for force in [false, true] {
            let err = Outputs::reserve(&[("--csv", dir.path())], force, &[], "t").unwrap_err();
            assert!(err.to_string().contains("it is a directory"), "{err}");
            let null = Path::new("/dev/null");
            let err = Outputs::reserve(&[("--csv", null)], force, &[], "t").unwrap_err();
            assert!(err.to_string().contains("not a regular file"), "{err}");
        }
    }

    #[test]
    fn an_input_is_named_as_the_command_calls_it() {
        let dir = tempfile::tempdir().unwrap();
        let doc = dir.path().join("doc.json");
        std::fs::write(&doc, b"{}").unwrap();
        let called = "the document being read";
        let err = Outputs::reserve_apart(&[("--csv", doc.as_path())], true, &[&doc], called, "t")
            .unwrap_err();
        assert!(
            err.to_string().contains("is the document being read"),
            "{err}"
        );
        assert_eq!(std::fs::read(&doc).unwrap(), b"{}");
    }
}
