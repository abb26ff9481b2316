//! The measuring harness shared by every command that times reads and writes: put the file
//! in the cache state asked for, take the kernel's counters, time the engine, take them
//! again, and compare.

use crate::engine::{self, Moved};
use crate::files::OutputFile;
use crate::measure::cache::{self, Residency};
use crate::measure::checks::{self, Check, Direction};
use crate::measure::diskstats::{DiskDelta, DiskProbe};
use crate::measure::procio::{IoProbe, ProcIo};
use crate::measure::timer::{Elapsed, Stopwatch};
use crate::report::progress::Progress;
use crate::units::{MIB, format_size};
use crate::workload::data::DataStream;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::{Seek, SeekFrom};

/// The cache state a timed read should start from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    /// Fully in the page cache.
    Warm,
    /// Not in the page cache.
    Cold,
}

impl State {
    /// `warm` or `cold`.
    pub fn name(self) -> &'static str {
        match self {
            State::Warm => "warm",
            State::Cold => "cold",
        }
    }
}

/// One timed run and everything measured around it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    /// Bytes, calls and checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// Wall and CPU time (for writes: including the final fsync).
    pub elapsed: Elapsed,
    /// Seconds of the final fsync (writes).
    pub fsync_seconds: Option<f64>,
    /// Residency just before the run (reads).
    pub residency_before: Option<Residency>,
    /// The process's I/O counters over the run.
    pub kernel: Option<ProcIo>,
    /// The device's counters over the run (all processes).
    pub device: Option<DiskDelta>,
    /// Claims compared with the kernel's counts.
    pub checks: Vec<Check>,
}

/// A file and what the harness needs to know about it.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The open file.
    pub file: &'a File,
    /// Its name for messages.
    pub name: &'a str,
    /// The block device behind it, for /proc/diskstats.
    pub device: Option<&'a str>,
}

/// Puts the first `len` bytes in `state`: warm reads them once (large reads) if any page is
/// missing; cold evicts the file (fadvise), or drops every cache when `global` (root only).
pub fn prepare(subject: Subject, len: u64, state: State, global: bool) -> Result<()> {
    match state {
        State::Cold if global => cache::drop_caches(),
        State::Cold => cache::evict(subject.file, subject.name),
        State::Warm => {
            let resident = cache::residency(subject.file, subject.name, len)?;
            if resident.resident_pages == resident.total_pages {
                return Ok(());
            }
            let mut big = super::touched_buffer(MIB);
            (&*subject.file)
                .seek(SeekFrom::Start(0))
                .with_context(|| format!("seek {}", subject.name))?;
            let mut progress = Progress::new(format!("warm {}", subject.name), Some(len));
            engine::read::read_blocks(
                subject.file,
                subject.name,
                big.as_mut_slice(),
                Some(len),
                &mut super::observer(&mut progress),
            )?;
            Ok(())
        }
    }
}

/// Reads the first `bytes` bytes with `buf.len()`-sized read() calls, timed and checked;
/// `state`, when given, is the cache state the run should start from, and the device bytes
/// are checked against it.
pub fn timed_read(
    subject: Subject,
    buf: &mut [u8],
    bytes: u64,
    state: Option<State>,
) -> Result<Sample> {
    let residency_before = cache::residency(subject.file, subject.name, bytes).ok();
    (&*subject.file)
        .seek(SeekFrom::Start(0))
        .with_context(|| format!("seek {}", subject.name))?;
    let label = format!(
        "read {} of {} at {}",
        format_size(bytes),
        subject.name,
        format_size(buf.len() as u64)
    );
    let mut progress = Progress::new(label, Some(bytes));
    let disk = subject.device.and_then(DiskProbe::start);
    let probe = IoProbe::start();
    let clock = Stopwatch::start();
    let moved = engine::read::read_blocks(
        subject.file,
        subject.name,
        buf,
        Some(bytes),
        &mut super::observer(&mut progress),
    )?;
    let elapsed = clock.stop();
    let kernel = probe.and_then(|p| p.finish());
    let device = disk.and_then(|d| d.finish());
    progress.finish();
    let mut checks = kernel
        .map(|k| checks::against_proc_io(Direction::Read, moved.calls, moved.bytes, &k))
        .unwrap_or_default();
    if let (Some(state), Some(k)) = (state, kernel) {
        checks.push(checks::device_reads(state == State::Cold, moved.bytes, &k));
    }
    Ok(Sample {
        moved,
        elapsed,
        fsync_seconds: None,
        residency_before,
        kernel,
        device,
        checks,
    })
}

/// Writes `bytes` bytes of `seed`'s data from the start of `out` with `buf.len()`-sized
/// write() calls, then fsyncs; both inside the timing.
pub fn timed_write(
    out: &OutputFile,
    device: Option<&str>,
    buf: &mut [u8],
    bytes: u64,
    seed: u64,
) -> Result<Sample> {
    let name = out.name();
    let file = out.file();
    file.set_len(0)
        .with_context(|| format!("truncate {name}"))?;
    (&*file)
        .seek(SeekFrom::Start(0))
        .with_context(|| format!("seek {name}"))?;
    let mut data = DataStream::new(seed, 0);
    let label = format!(
        "write {} to {name} at {}",
        format_size(bytes),
        format_size(buf.len() as u64)
    );
    let mut progress = Progress::new(label, Some(bytes));
    let disk = device.and_then(DiskProbe::start);
    let probe = IoProbe::start();
    let clock = Stopwatch::start();
    let moved = engine::write::write_blocks(
        file,
        name,
        buf,
        bytes,
        &mut data,
        &mut super::observer(&mut progress),
    )?;
    let before_sync = clock.seconds();
    file.sync_all().with_context(|| format!("fsync {name}"))?;
    let elapsed = clock.stop();
    let kernel = probe.and_then(|p| p.finish());
    let device = disk.and_then(|d| d.finish());
    progress.finish();
    let checks = kernel
        .map(|k| checks::against_proc_io(Direction::Write, moved.calls, moved.bytes, &k))
        .unwrap_or_default();
    Ok(Sample {
        moved,
        fsync_seconds: Some(elapsed.seconds - before_sync),
        elapsed,
        residency_before: None,
        kernel,
        device,
        checks,
    })
}

impl Sample {
    /// Bytes per second of this run.
    pub fn bytes_per_second(&self) -> f64 {
        crate::units::per_second(self.moved.bytes, self.elapsed.seconds)
    }

    /// Calls per second of this run.
    pub fn calls_per_second(&self) -> f64 {
        crate::units::per_second(self.moved.calls, self.elapsed.seconds)
    }
}
