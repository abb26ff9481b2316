//! `run`: read a file with BS-sized read() calls, or write one with BS-sized write() calls
//! and an fsync, and report the checksum, rates and the kernel's own counts.

use crate::engine::{self, Moved};
use crate::files::{self, CreatePolicy, InputKind};
use crate::measure::cache::{self, Residency};
use crate::measure::checks::{self, Check, Direction};
use crate::measure::diskstats::{self, DiskDelta, DiskProbe};
use crate::measure::procio::{IoProbe, ProcIo};
use crate::measure::timer::{Elapsed, Stopwatch};
use crate::options::{RunMode, RunOptions};
use crate::report::progress::Progress;
use crate::units::per_second;
use crate::workload::data::DataStream;
use anyhow::{Context, Result};
use serde::Serialize;

/// Everything `run` measured.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The file as the user named it (`stdin` for `-`).
    pub file: String,
    /// `read` or `write`.
    pub op: &'static str,
    /// What kind of file it was (reads).
    pub input_kind: Option<InputKind>,
    /// Bytes per call.
    pub block_size: u64,
    /// Calls asked for, when given.
    pub block_count: Option<u64>,
    /// Bytes moved, calls made and the checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed: 8 hex digits.
    pub xor_hex: String,
    /// Seed of the written data.
    pub seed: Option<u64>,
    /// Headline seconds: for writes this includes the final fsync.
    pub seconds: f64,
    /// Headline rate (bytes / seconds).
    pub bytes_per_second: f64,
    /// System calls per second over the headline time.
    pub calls_per_second: f64,
    /// Time of the write() calls alone (writes).
    pub write_seconds: Option<f64>,
    /// Time of the final fsync (writes).
    pub fsync_seconds: Option<f64>,
    /// Wall and CPU time of the whole timed region.
    pub cpu: Elapsed,
    /// Page-cache residency just before a read of a regular file.
    pub residency_before: Option<Residency>,
    /// The kernel's counts over the timed region (`/proc/self/io`).
    pub kernel: Option<ProcIo>,
    /// The device's counts over the timed region (`/proc/diskstats`, all processes), when
    /// a block device is behind the file.
    pub device: Option<DiskDelta>,
    /// Claims compared with the kernel's counts.
    pub checks: Vec<Check>,
}

impl RunReport {
    /// Rate without the fsync, for writes.
    pub fn bytes_per_second_before_fsync(&self) -> Option<f64> {
        self.write_seconds.map(|s| per_second(self.moved.bytes, s))
    }
}

/// Runs `run` as the options say.
pub fn execute(options: &RunOptions) -> Result<RunReport> {
    match options.mode {
        RunMode::Read { limit } => read(options, limit),
        RunMode::Write { bytes, seed } => write(options, bytes, seed),
    }
}

fn read(options: &RunOptions, limit: Option<u64>) -> Result<RunReport> {
    let input = files::open_input(&options.path, options.allow_device)?;
    let mut buf = super::touched_buffer(options.block_size);
    let residency_before = if input.kind == InputKind::Regular && input.len > 0 {
        let len = limit.map_or(input.len, |l| l.min(input.len));
        cache::residency(&input.file, &input.name, len).ok()
    } else {
        None
    };
    let expected =
        limit.or((input.kind == InputKind::Regular && input.len > 0).then_some(input.remaining()));
    let mut progress = Progress::new(format!("read {}", input.name), expected);
    let disk = (input.kind == InputKind::Regular)
        .then(|| diskstats::device_of(&options.path))
        .flatten()
        .and_then(|d| DiskProbe::start(&d));
    let probe = IoProbe::start();
    let clock = Stopwatch::start();
    let moved = read_input(
        &input,
        buf.as_mut_slice(),
        limit,
        &mut super::observer(&mut progress),
    )?;
    let cpu = clock.stop();
    let kernel = probe.and_then(|p| p.finish());
    let device = disk.and_then(|d| d.finish());
    progress.finish();
    let checks = kernel
        .map(|k| checks::against_proc_io(Direction::Read, moved.calls, moved.bytes, &k))
        .unwrap_or_default();
    Ok(RunReport {
        file: input.name,
        op: "read",
        input_kind: Some(input.kind),
        block_size: options.block_size,
        block_count: options.block_count,
        moved,
        xor_hex: crate::checksum::hex(moved.xor),
        seed: None,
        seconds: cpu.seconds,
        bytes_per_second: per_second(moved.bytes, cpu.seconds),
        calls_per_second: per_second(moved.calls, cpu.seconds),
        write_seconds: None,
        fsync_seconds: None,
        cpu,
        residency_before,
        kernel,
        device,
        checks,
    })
}

/// Reads `input` to its end, or `limit` bytes, with `buf.len()`-sized read() calls. A regular
/// file that ends before the size it had when reading began is an error; pipes and files
/// that report size 0 (/proc) are read to their end.
fn read_input(
    input: &files::Input,
    buf: &mut [u8],
    limit: Option<u64>,
    observer: engine::Observer,
) -> Result<Moved> {
    let moved = engine::read::read_blocks(&input.file, &input.name, buf, limit, observer)?;
    if input.kind == InputKind::Regular {
        let left = input.remaining();
        let want = limit.map_or(left, |l| l.min(left));
        engine::expect_whole(&input.name, input.offset, want, moved.bytes, input.len)?;
    }
    Ok(moved)
}

fn write(options: &RunOptions, bytes: u64, seed: u64) -> Result<RunReport> {
    let output = files::create_output(
        &options.path,
        bytes,
        CreatePolicy {
            force: options.force,
            allow_device: options.allow_device,
            min_free: options.min_free,
        },
    )?;
    let name = output.name().to_string();
    let mut buf = super::touched_buffer(options.block_size.min(bytes.max(1)));
    let mut data = DataStream::new(seed, 0);
    let mut progress = Progress::new(format!("write {name}"), Some(bytes));
    let disk = diskstats::device_of(output.path()).and_then(|d| DiskProbe::start(&d));
    let probe = IoProbe::start();
    let clock = Stopwatch::start();
    let moved = engine::write::write_blocks(
        output.file(),
        &name,
        buf.as_mut_slice(),
        bytes,
        &mut data,
        &mut super::observer(&mut progress),
    )?;
    let write_seconds = clock.seconds();
    output
        .file()
        .sync_all()
        .with_context(|| format!("fsync {name} after writing"))?;
    let cpu = clock.stop();
    let kernel = probe.and_then(|p| p.finish());
    let device = disk.and_then(|d| d.finish());
    progress.finish();
    output.finish();
    let checks = kernel
        .map(|k| checks::against_proc_io(Direction::Write, moved.calls, moved.bytes, &k))
        .unwrap_or_default();
    Ok(RunReport {
        file: name,
        op: "write",
        input_kind: None,
        block_size: options.block_size,
        block_count: options.block_count,
        moved,
        xor_hex: crate::checksum::hex(moved.xor),
        seed: Some(seed),
        seconds: cpu.seconds,
        bytes_per_second: per_second(moved.bytes, cpu.seconds),
        calls_per_second: per_second(moved.calls, cpu.seconds),
        write_seconds: Some(write_seconds),
        fsync_seconds: Some(cpu.seconds - write_seconds),
        cpu,
        residency_before: None,
        kernel,
        device,
        checks,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ExitKind, exit_kind};
    use std::io::Write;

    /// An input of `real` bytes that claims `len`, as a file that shrank after stat would.
    fn input(real: usize, len: u64, kind: InputKind) -> files::Input {
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(&vec![3u8; real]).expect("write");
        std::io::Seek::rewind(&mut file).expect("rewind");
        files::Input {
            file,
            name: "shrunk".to_string(),
            kind,
            len,
            offset: 0,
            pseudo_fs: None,
        }
    }

    fn read(input: &files::Input, limit: Option<u64>) -> Result<Moved> {
        read_input(input, &mut [0u8; 64], limit, &mut |_| Ok(()))
    }

    #[test]
    fn a_regular_file_that_ends_before_its_size_is_a_failed_check_naming_both_offsets() {
        for limit in [None, Some(150), Some(1000)] {
            let err = read(&input(100, 300, InputKind::Regular), limit).unwrap_err();
            assert_eq!(exit_kind(&err), ExitKind::Failed, "{limit:?}");
            assert!(
                err.is::<crate::error::Failure>(),
                "a check failure: {err:#}"
            );
            assert_eq!(
                err.to_string(),
                "read shrunk: the file ended at byte 100 but its size was 300 when reading began (did it shrink?)"
            );
        }
    }

    #[test]
    fn a_limit_within_what_is_left_and_inputs_without_a_size_read_to_their_end() {
        let moved = read(&input(100, 300, InputKind::Regular), Some(60)).unwrap();
        assert_eq!(moved.bytes, 60);
        let moved = read(&input(100, 0, InputKind::Regular), None).unwrap();
        assert_eq!(moved.bytes, 100, "size 0 on stat (/proc): read to the end");
        let moved = read(&input(100, 0, InputKind::Stream), None).unwrap();
        assert_eq!(moved.bytes, 100);
        let moved = read(&input(100, 50, InputKind::Regular), None).unwrap();
        assert_eq!(moved.bytes, 100, "a file that grew is read to its end");
    }
}
