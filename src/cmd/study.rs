//! `study`: the study on one directory (one medium). Writes a scratch file sized for the
//! machine, reads it back at each block size, verifies every read against the checksum of
//! what was written, and removes the scratch file (and the directory, if it made it).

use super::harness::{Harness, Sample, Setup, Target};
use super::warning::{self, Warning};
use crate::engine::{self, Moved};
use crate::error::{Failure, input};
use crate::files::{self, InputKind, OutputFile};
use crate::measure::cache::{CacheProof, CacheState};
use crate::measure::env::meminfo_bytes;
use crate::measure::timer::Elapsed;
use crate::options::StudyOptions;
use crate::units::{MIB, format_size};
use crate::workload::Op;
use crate::workload::data::{fresh_seed, xor_of_prefix};
use crate::workload::plan::Plan;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The largest scratch file chosen by default.
pub const DEFAULT_MAX_SIZE: u64 = 256 * MIB;
/// The smallest scratch file the default will settle for.
const MIN_SIZE: u64 = MIB;
/// Reads at small block sizes stop after this many calls, so 1-byte reads stay short.
const MAX_CALLS: u64 = 1 << 18;
/// Block size of the write that creates the scratch file.
const WRITE_BLOCK: u64 = MIB;

/// One measured step of the study.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StudyRow {
    /// Write or read.
    pub op: Op,
    /// Bytes per call.
    pub block_size: u64,
    /// Bytes, calls and checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed.
    pub xor_hex: String,
    /// Whether the checksum equals that of the bytes written.
    pub verified: bool,
    /// Seconds (for the write: including fsync).
    pub seconds: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Calls per second.
    pub calls_per_second: f64,
    /// Seconds of the fsync that ends the write.
    pub fsync_seconds: Option<f64>,
    /// Wall and CPU time.
    pub elapsed: Elapsed,
    /// Residency before a read and the device bytes (the file is read as it is).
    pub cache: Option<CacheProof>,
    /// Whether the kernel's counts agreed.
    pub checks_ok: bool,
}

/// The study's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StudyReport {
    /// The directory studied.
    pub dir: String,
    /// Size of the scratch file.
    pub file_bytes: u64,
    /// Seed of its contents.
    pub seed: u64,
    /// One row per step: the write, then a read per block size.
    pub rows: Vec<StudyRow>,
    /// Whether every read returned the bytes written.
    pub verified: bool,
    /// Whether the scratch file was kept (`--keep`), and where.
    pub kept_file: Option<String>,
    /// Whether every step ran (false after an interruption).
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
}

impl StudyReport {
    /// Whether every read was verified and every check held.
    pub fn ok(&self) -> bool {
        self.verified && self.rows.iter().all(|r| r.checks_ok)
    }
}

/// Removes a directory the study created, if it is empty at the end.
struct CreatedDir(Option<PathBuf>);

impl Drop for CreatedDir {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

/// Runs the study; `save` receives the report so far after every step.
pub fn execute(
    options: &StudyOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&StudyReport) -> Result<()>,
) -> Result<StudyReport> {
    // Declared before the scratch file, so dropped after it: the directory is empty by then.
    let (dir, _created) = match &options.dir {
        Some(dir) => {
            let meta = std::fs::metadata(dir)
                .map_err(|e| input(format!("study {}: {}", dir.display(), files::describe(&e))))?;
            if !meta.is_dir() {
                return Err(input(format!("study {}: not a directory", dir.display())));
            }
            (dir.clone(), CreatedDir(None))
        }
        None => {
            let dir = PathBuf::from("ioscope-study");
            let created = !dir.exists();
            std::fs::create_dir_all(&dir).map_err(|e| {
                input(format!(
                    "study: create {}: {}",
                    dir.display(),
                    files::describe(&e)
                ))
            })?;
            (dir.clone(), CreatedDir(created.then_some(dir)))
        }
    };
    let size = match options.size {
        Some(size) => size,
        None => default_size(&dir, options.min_free)?,
    };
    let seed = fresh_seed();
    let mut scratch = files::create_scratch(&dir, "study", size, options.min_free)?;
    scratch.keep_on_drop(options.keep);
    let mut report = StudyReport {
        dir: dir.display().to_string(),
        file_bytes: size,
        seed,
        rows: Vec::new(),
        verified: true,
        kept_file: options.keep.then(|| scratch.path().display().to_string()),
        complete: false,
        warnings: Vec::new(),
    };
    match steps(options, harness, &scratch, size, seed, &mut report, save) {
        Ok(()) => report.complete = true,
        Err(e)
            if matches!(e.downcast_ref::<Failure>(), Some(Failure::Interrupted))
                && !report.rows.is_empty() =>
        {
            report.warnings.push(Warning::Partial);
        }
        Err(e) => return Err(e),
    }
    save(&report)?;
    Ok(report)
}

fn steps(
    options: &StudyOptions,
    harness: &Harness,
    scratch: &OutputFile,
    size: u64,
    seed: u64,
    report: &mut StudyReport,
    save: &mut dyn FnMut(&StudyReport) -> Result<()>,
) -> Result<()> {
    let setup = Setup::single(&engine::stream::Stream);
    let written = harness.write(
        scratch,
        None,
        &setup,
        Plan::sequential(0, size, WRITE_BLOCK.min(size)),
        seed,
        false,
    )?;
    add(report, row(Op::Write, WRITE_BLOCK, written, true), save)?;
    let whole_xor = report.rows[0].moved.xor;
    let reader = File::open(scratch.path())
        .with_context(|| format!("open {} for reading", scratch.name()))?;
    let target = Target {
        file: &reader,
        name: scratch.name(),
        kind: InputKind::Regular,
        device: None,
    };
    for &bs in &options.block_sizes {
        let bytes = (bs * MAX_CALLS).min(size);
        let bytes = if bytes < size { bytes / bs * bs } else { bytes };
        let expected = if bytes == size {
            whole_xor
        } else {
            xor_of_prefix(seed, bytes)
        };
        let sample = harness.read(
            target,
            &setup,
            Plan::sequential(0, bytes, bs),
            false,
            CacheState::AsIs,
        )?;
        let verified = sample.moved.xor == expected && sample.moved.bytes == bytes;
        add(report, row(Op::Read, bs, sample, verified), save)?;
    }
    Ok(())
}

/// Adds a step and hands the report so far to `save`.
fn add(
    report: &mut StudyReport,
    (row, warnings): (StudyRow, Vec<Warning>),
    save: &mut dyn FnMut(&StudyReport) -> Result<()>,
) -> Result<()> {
    report.verified &= row.verified;
    report.rows.push(row);
    report.warnings.extend(warnings);
    save(report)
}

/// A size that suits the machine: at most 256 MiB, an eighth of RAM, and what fits.
fn default_size(dir: &Path, min_free: Option<u64>) -> Result<u64> {
    let room = files::room(dir, min_free)?;
    let ram = meminfo_bytes("MemTotal").unwrap_or(8 * DEFAULT_MAX_SIZE);
    let size = DEFAULT_MAX_SIZE.min(ram / 8).min(room) / MIB * MIB;
    if size < MIN_SIZE {
        return Err(input(format!(
            "study {}: only {} can be written here while keeping the free-space margin; free some space or lower --min-free",
            dir.display(),
            format_size(room)
        )));
    }
    Ok(size)
}

fn row(op: Op, block_size: u64, sample: Sample, verified: bool) -> (StudyRow, Vec<Warning>) {
    let at = format!(
        "{} at {}",
        op.name(),
        crate::units::format_block_size(block_size)
    );
    let warnings = warning::of_sample(&sample, Some(at));
    let row = StudyRow {
        op,
        block_size,
        moved: sample.moved,
        xor_hex: crate::checksum::hex(sample.moved.xor),
        verified,
        seconds: sample.elapsed.seconds,
        bytes_per_second: sample.bytes_per_second(),
        calls_per_second: sample.calls_per_second(),
        fsync_seconds: sample.fsync_seconds,
        elapsed: sample.elapsed,
        cache: sample.cache,
        checks_ok: sample.checks.iter().all(|c| c.ok),
    };
    (row, warnings)
}
