//! `study`: the study on one directory (one medium). Writes a scratch file sized for the
//! machine, reads it back at each block size, verifies every read against the checksum of
//! what was written, and removes the scratch file (and the directory, if it made it).

use super::harness::{self, Sample, Subject};
use crate::engine::Moved;
use crate::error::input;
use crate::files::{self, OutputFile};
use crate::measure::cache::Residency;
use crate::measure::env::meminfo_bytes;
use crate::measure::timer::Elapsed;
use crate::options::StudyOptions;
use crate::units::{MIB, format_size};
use crate::workload::data::{fresh_seed, xor_of_prefix};
use anyhow::{Context, Result};
use serde::Serialize;
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
#[derive(Debug, Clone, Serialize)]
pub struct StudyRow {
    /// `write` or `read`.
    pub op: &'static str,
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
    pub cpu: Elapsed,
    /// Residency before a read.
    pub residency_before: Option<Residency>,
    /// Bytes fetched from storage during the step.
    pub device_read_bytes: Option<u64>,
}

/// The study's result.
#[derive(Debug, Clone, Serialize)]
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

/// Runs the study.
pub fn execute(options: &StudyOptions) -> Result<StudyReport> {
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
    let mut rows = vec![write_row(&scratch, size, seed)?];
    let reader = File::open(scratch.path())
        .with_context(|| format!("open {} for reading", scratch.name()))?;
    for &bs in &options.block_sizes {
        let bytes = (bs * MAX_CALLS).min(size);
        let bytes = if bytes < size { bytes / bs * bs } else { bytes };
        let expected = if bytes == size {
            rows[0].moved.xor
        } else {
            xor_of_prefix(seed, bytes)
        };
        rows.push(read_row(&reader, scratch.name(), bs, bytes, expected)?);
    }
    scratch.keep_on_drop(options.keep);
    let kept_file = options.keep.then(|| scratch.path().display().to_string());
    Ok(StudyReport {
        dir: dir.display().to_string(),
        file_bytes: size,
        seed,
        verified: rows.iter().all(|r| r.verified),
        rows,
        kept_file,
    })
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

fn write_row(scratch: &OutputFile, size: u64, seed: u64) -> Result<StudyRow> {
    let mut buf = super::touched_buffer(WRITE_BLOCK.min(size));
    let sample = harness::timed_write(scratch, None, buf.as_mut_slice(), size, seed)?;
    Ok(row("write", WRITE_BLOCK, sample, true))
}

fn read_row(reader: &File, name: &str, bs: u64, bytes: u64, expected: u32) -> Result<StudyRow> {
    let mut buf = super::touched_buffer(bs);
    let subject = Subject {
        file: reader,
        name,
        device: None,
    };
    let sample = harness::timed_read(subject, buf.as_mut_slice(), bytes, None)?;
    let verified = sample.moved.xor == expected && sample.moved.bytes == bytes;
    Ok(row("read", bs, sample, verified))
}

fn row(op: &'static str, block_size: u64, sample: Sample, verified: bool) -> StudyRow {
    StudyRow {
        op,
        block_size,
        moved: sample.moved,
        xor_hex: crate::checksum::hex(sample.moved.xor),
        verified,
        seconds: sample.elapsed.seconds,
        bytes_per_second: sample.bytes_per_second(),
        calls_per_second: sample.calls_per_second(),
        fsync_seconds: sample.fsync_seconds,
        cpu: sample.elapsed,
        residency_before: sample.residency_before,
        device_read_bytes: sample.kernel.map(|k| k.read_bytes),
    }
}
