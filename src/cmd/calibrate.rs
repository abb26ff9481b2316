//! `calibrate`: find the file size (a multiple of the block size) whose read takes a
//! reasonable time. Short probes measure the rate; the rate then predicts the size that
//! lands in the middle of the window, so the whole search costs little more than one read
//! of the answer. `--grow` appends data when the file is too small, within the free-space
//! margin; any growth is undone if the search fails or is interrupted.

use super::harness::{self, State, Subject};
use crate::cli::CacheMode;
use crate::engine;
use crate::error::{Failure, input};
use crate::files::{self, InputKind};
use crate::measure::cache::Residency;
use crate::measure::env::meminfo_bytes;
use crate::options::CalibrateOptions;
use crate::report::progress::Progress;
use crate::units::{KIB, MIB, format_seconds, format_size};
use crate::workload::data::DataStream;
use anyhow::{Context, Result};
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};

/// The most probes before giving up (each one is cheap until the last few).
const MAX_PROBES: usize = 16;

/// One timed read of a prefix of the file.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    /// Bytes read.
    pub bytes: u64,
    /// Wall seconds of the read.
    pub seconds: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Residency of the prefix just before the read.
    pub residency_before: Option<Residency>,
    /// Bytes the kernel fetched from storage during the read.
    pub device_read_bytes: Option<u64>,
}

/// The answer of `calibrate`.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrateReport {
    /// The file.
    pub file: String,
    /// Bytes per read() call.
    pub block_size: u64,
    /// Cache state of the timed reads.
    pub cache: CacheMode,
    /// Lower end of the window in seconds.
    pub min_seconds: f64,
    /// Upper end of the window in seconds.
    pub max_seconds: f64,
    /// The size found.
    pub bytes: u64,
    /// The size in blocks.
    pub block_count: u64,
    /// Seconds the read of that size took.
    pub seconds: f64,
    /// Its rate.
    pub bytes_per_second: f64,
    /// Every probe, the last being the answer.
    pub probes: Vec<Probe>,
    /// Size of the file before `--grow` extended it, if it did.
    pub grown_from: Option<u64>,
    /// Size of the file afterwards.
    pub file_bytes: u64,
    /// Seconds spent reading in all probes together.
    pub total_read_seconds: f64,
    /// RAM of the machine.
    pub memory_bytes: u64,
    /// What the reader should know about this size.
    pub warnings: Vec<String>,
}

/// The file being calibrated, and the undo record for `--grow`.
struct Target {
    file: File,
    name: String,
    len: u64,
    original_len: u64,
    keep_growth: bool,
}

impl Drop for Target {
    fn drop(&mut self) {
        if self.len != self.original_len && !self.keep_growth {
            let _ = self.file.set_len(self.original_len);
        }
    }
}

/// Runs the search.
pub fn execute(options: &CalibrateOptions) -> Result<CalibrateReport> {
    let opened = files::open_regular(&options.path, "calibrate")?;
    let name = opened.name.clone();
    if opened.kind != InputKind::Regular {
        return Err(input(format!(
            "calibrate {name}: needs a regular file it can re-read"
        )));
    }
    let file = if options.grow {
        OpenOptions::new()
            .read(true)
            .write(true)
            .open(&options.path)
            .map_err(|e| input(format!("open {name} for --grow: {}", files::describe(&e))))?
    } else {
        opened.file
    };
    let mut target = Target {
        file,
        name,
        len: opened.len,
        original_len: opened.len,
        keep_growth: false,
    };
    let bs = options.block_size;
    let (min, max) = (options.min.as_secs_f64(), options.max.as_secs_f64());
    let goal = (min + max) / 2.0;
    let trust = (min / 5.0).min(1.0);
    let room = if options.grow {
        files::room(&files::parent_dir(&options.path), options.min_free)?
    } else {
        0
    };
    let largest = round_down(target.len + room, bs);
    if largest == 0 {
        return Err(input(format!(
            "calibrate {}: the file holds {} bytes, less than one block of {}; pass --grow to extend it",
            target.name,
            target.len,
            format_size(bs)
        )));
    }
    let mut buf = super::touched_buffer(bs);
    let mut size = round_up((64 * bs).max(256 * KIB), bs).min(largest);
    let mut probes: Vec<Probe> = Vec::new();
    loop {
        if size > target.len {
            if !options.grow {
                return Err(too_small(&target, bs, &probes, size, goal));
            }
            grow(&mut target, size, options.seed)?;
        }
        let probe = timed_read(&mut target, size, options.cache, buf.as_mut_slice())?;
        let t = probe.seconds;
        probes.push(probe);
        if (min..=max).contains(&t) {
            break;
        }
        if probes.len() >= MAX_PROBES {
            return Err(Failure::Check(format!(
                "calibrate {}: no size read in {}..{} after {MAX_PROBES} probes; the read time is too erratic here",
                target.name,
                format_seconds(min),
                format_seconds(max)
            ))
            .into());
        }
        let rate = size as f64 / t.max(1e-6);
        let aim = if t < trust / 2.0 { trust } else { goal };
        let mut next = round_up(((rate * aim) as u64).min(size.saturating_mul(64)), bs).max(bs);
        if t < min && next <= size {
            next = size + bs;
        }
        if next > target.len && !options.grow {
            return Err(too_small(&target, bs, &probes, next, goal));
        }
        if next > largest {
            if size == largest {
                return Err(infeasible(&target, options, bs, size, t, goal, rate));
            }
            next = largest;
        }
        size = next;
    }
    target.keep_growth = true;
    let last = probes
        .last()
        .expect("the loop pushes a probe before it breaks")
        .clone();
    let memory_bytes = meminfo_bytes("MemTotal").unwrap_or(0);
    let warnings = warnings(options, &last, memory_bytes);
    Ok(CalibrateReport {
        file: target.name.clone(),
        block_size: bs,
        cache: options.cache,
        min_seconds: min,
        max_seconds: max,
        bytes: last.bytes,
        block_count: last.bytes / bs,
        seconds: last.seconds,
        bytes_per_second: last.bytes_per_second,
        grown_from: (target.len != target.original_len).then_some(target.original_len),
        file_bytes: target.len,
        total_read_seconds: probes.iter().map(|p| p.seconds).sum(),
        probes,
        memory_bytes,
        warnings,
    })
}

fn round_up(n: u64, unit: u64) -> u64 {
    n.div_ceil(unit).saturating_mul(unit)
}

fn round_down(n: u64, unit: u64) -> u64 {
    n / unit * unit
}

/// Puts the first `size` bytes in the cache state asked for, then reads them with timing.
fn timed_read(target: &mut Target, size: u64, mode: CacheMode, buf: &mut [u8]) -> Result<Probe> {
    let subject = Subject {
        file: &target.file,
        name: &target.name,
        device: None,
    };
    let state = match mode {
        CacheMode::Warm => State::Warm,
        CacheMode::Cold => State::Cold,
    };
    harness::prepare(subject, size, state, false)?;
    let sample = harness::timed_read(subject, buf, size, Some(state))?;
    if sample.moved.bytes != size {
        return Err(Failure::Check(format!(
            "read {}: expected {size} bytes but the file ended after {} (did it shrink?)",
            target.name, sample.moved.bytes
        ))
        .into());
    }
    Ok(Probe {
        bytes: size,
        seconds: sample.elapsed.seconds,
        bytes_per_second: sample.bytes_per_second(),
        residency_before: sample.residency_before,
        device_read_bytes: sample.kernel.map(|k| k.read_bytes),
    })
}

/// Appends pseudo-random data until the file holds `size` bytes.
fn grow(target: &mut Target, size: u64, seed: u64) -> Result<()> {
    let name = target.name.clone();
    target
        .file
        .seek(SeekFrom::Start(target.len))
        .with_context(|| format!("seek {name} to grow it"))?;
    let mut data = DataStream::new(seed, target.len);
    let mut buf = super::touched_buffer(MIB);
    let extra = size - target.len;
    let mut progress = Progress::new(format!("grow {name} to {}", format_size(size)), Some(extra));
    let result = engine::write::write_blocks(
        &target.file,
        &name,
        buf.as_mut_slice(),
        extra,
        &mut data,
        &mut super::observer(&mut progress),
    );
    // Whatever was appended is undone by Target's drop if the search does not succeed.
    target.len = target
        .file
        .metadata()
        .with_context(|| format!("stat {name}"))?
        .len();
    result?;
    target
        .file
        .sync_data()
        .with_context(|| format!("fdatasync {name} after growing it"))?;
    Ok(())
}

fn too_small(target: &Target, bs: u64, probes: &[Probe], next: u64, goal: f64) -> anyhow::Error {
    let (seen, needed) = match probes.last() {
        Some(p) => (
            format!(
                "reading {} at {} takes {}; ",
                format_size(p.bytes),
                format_size(bs),
                format_seconds(p.seconds)
            ),
            ((p.bytes_per_second * goal) as u64).max(next),
        ),
        None => (String::new(), next),
    };
    input(format!(
        "calibrate {}: the file is too small ({}): {seen}a {} read needs about {}; pass --grow to extend it",
        target.name,
        format_size(target.len),
        format_seconds(goal),
        format_size(needed)
    ))
}

fn infeasible(
    target: &Target,
    options: &CalibrateOptions,
    bs: u64,
    size: u64,
    t: f64,
    goal: f64,
    rate: f64,
) -> anyhow::Error {
    let hint = match options.cache {
        CacheMode::Warm => {
            "warm reads are fast: try --cache cold, a smaller --min, or a smaller block size"
        }
        CacheMode::Cold => "try a smaller --min or a smaller block size",
    };
    Failure::Check(format!(
        "calibrate {}: at {} per read a {} read needs about {}, but the file can grow only to {} here (keeping the free-space margin), which reads in {}; {hint}",
        target.name,
        format_size(bs),
        format_seconds(goal),
        format_size((rate * goal) as u64),
        format_size(size),
        format_seconds(t),
    ))
    .into()
}

fn warnings(options: &CalibrateOptions, last: &Probe, memory: u64) -> Vec<String> {
    let mut out = Vec::new();
    let size = format_size(last.bytes);
    let ram = format_size(memory);
    if memory > 0 && last.bytes > memory {
        out.push(match options.cache {
            CacheMode::Warm => format!("the size found ({size}) is larger than RAM ({ram}): the page cache cannot hold it, so these 'warm' reads partly came from the device"),
            CacheMode::Cold => format!("the size found ({size}) is larger than RAM ({ram}): right for cold reads, but it can never be read fully warm"),
        });
    } else if memory > 0 {
        out.push(match options.cache {
            CacheMode::Warm => "this size was timed from the page cache; read cold (from the device) the same size may take longer, so a cold calibration may give a smaller size: use --cache cold to time the device".to_string(),
            CacheMode::Cold => format!("the file fits in RAM ({size} of {ram}): after one read it is cached and the next read is much faster, so evict it before every cold run (ioscope does with --cache cold)"),
        });
    }
    if options.cache == CacheMode::Cold
        && let Some(r) = last.residency_before.filter(|r| r.fraction() > 0.05)
    {
        out.push(format!(
                "the 'cold' read started with {} of the file resident: this file system did not drop its pages, so the time is not a device time",
                r.percent()
            ));
    }
    out
}
