//! `study`: the whole study of one directory (one medium) as one result. It writes a scratch
//! file and reads it back verified, then runs the other commands' own code on it — read and
//! write sweeps over block sizes, cold and warm, the cache table, system-call costs, `fast`
//! against dd, cat and fio, iozone's patterns, the transfer matrix, and calibrate — each as
//! one *part* with its own typed result. A level bounds the time; a part that cannot run here
//! is skipped with the reason, one that fails is recorded with its error and the study goes
//! on; Ctrl-C keeps every part measured so far as a partial result.

use super::harness::{Harness, Sample, Setup, Target};
use super::warning::{self, Warning};
use crate::cmd::coldwarm::CacheReport;
use crate::cmd::compare::CompareReport;
use crate::cmd::patterns::{PatternsReport, Test};
use crate::cmd::sweep::SweepReport;
use crate::cmd::transfer::TransferReport;
use crate::engine;
use crate::error::{Failure, input};
use crate::files::{self, InputKind, OutputFile};
use crate::measure::cache::CacheState;
use crate::measure::diskstats;
use crate::measure::env::meminfo_bytes;
use crate::options::{
    CacheOptions, CalibrateOptions, CompareOptions, DiskOptions, ExportOptions, PatternsOptions,
    StudyOptions, SweepOptions, SyscallsOptions, TransferOptions,
};
use crate::units::{KIB, MIB, format_size};
use crate::workload::Op;
use crate::workload::data::{fresh_seed, xor_of_prefix};
use crate::workload::plan::{DEFAULT_STRIDE, Plan, doubling};
pub use crate::workload::study::{Level, Part};
use crate::workload::verify::Written;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

mod result;
pub use result::{Budget, Outcome, Step, StudyReport, StudyRow};

/// The smallest scratch file the default will settle for.
const MIN_SIZE: u64 = MIB;
/// Block size of the write that creates the scratch file, and of the verified read.
const WRITE_BLOCK: u64 = MIB;

/// The study's policy at each level (the level itself is vocabulary: [`Level`]).
impl Level {
    /// What each part measures at this level.
    pub fn budget(self) -> Budget {
        match self {
            Self::Quick => Budget {
                file_cap: 64 * MIB,
                sweep_blocks: doubling(128, 2 * MIB).into_iter().step_by(2).collect(),
                repeat: 2,
                max_calls: 1 << 14,
                write_size: 16 * MIB,
                calibrate_window: (0.2, 0.6),
                calibrate_cap: Some(1024 * MIB),
                syscall_sizes: vec![64 * KIB, 256 * KIB],
                compare_repeat: 1,
                patterns_size: 16 * MIB,
                patterns_runs: 1,
                transfer_large: 16 * MIB,
                transfer_repeat: 1,
                disk_runtime: 0.25,
            },
            Self::Standard => Budget {
                file_cap: 256 * MIB,
                sweep_blocks: doubling(128, 16 * MIB),
                repeat: 3,
                max_calls: 1 << 16,
                write_size: 64 * MIB,
                calibrate_window: (1.0, 3.0),
                calibrate_cap: Some(4096 * MIB),
                syscall_sizes: vec![256 * KIB, MIB],
                compare_repeat: 3,
                patterns_size: 64 * MIB,
                patterns_runs: 3,
                transfer_large: 64 * MIB,
                transfer_repeat: 3,
                disk_runtime: 1.0,
            },
            Self::Thorough => Budget {
                file_cap: 1024 * MIB,
                sweep_blocks: doubling(1, 64 * MIB),
                repeat: 50,
                max_calls: 1 << 18,
                write_size: 256 * MIB,
                calibrate_window: (5.0, 15.0),
                calibrate_cap: None,
                syscall_sizes: vec![MIB, 4 * MIB, 8 * MIB, 16 * MIB],
                compare_repeat: 10,
                patterns_size: 256 * MIB,
                patterns_runs: 5,
                transfer_large: 256 * MIB,
                transfer_repeat: 10,
                disk_runtime: 5.0,
            },
        }
    }
}

pub use crate::workload::estimate::about;

/// Told when the study and each part start, for a progress display.
pub trait StudyObserver {
    /// The study is about to start its parts (the directory and scratch file are ready).
    fn begin(&self, _level: Level, _estimate: f64) {}
    /// `part` starts; `estimate` is its share of the level's estimate, `remaining` the
    /// estimate of every part still to run after it.
    fn part(&self, part: Part, index: usize, count: usize, estimate: f64, remaining: f64);
}

/// No progress display.
pub struct Silent;

impl StudyObserver for Silent {
    fn part(&self, _: Part, _: usize, _: usize, _: f64, _: f64) {}
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

/// Removes a path on drop (a part's own file, when the part left it behind), unless
/// something was there before the part began: a file that is not the part's is never
/// removed (the part refuses to write over it).
struct RemoveOnDrop(Option<PathBuf>);

impl RemoveOnDrop {
    fn new(path: PathBuf) -> Self {
        Self(std::fs::symlink_metadata(&path).is_err().then_some(path))
    }
}

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Some(path) = &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Runs the study; `save` receives the report so far after every part.
pub fn execute(
    options: &StudyOptions,
    harness: &Harness,
    observer: &dyn StudyObserver,
    save: &mut dyn FnMut(&StudyReport) -> Result<()>,
) -> Result<StudyReport> {
    let started = Instant::now();
    // Declared before the scratch file, so dropped after it: the directory is empty by then.
    let (dir, _created) = study_dir(options.dir.as_deref())?;
    let mut budget = options.level.budget();
    if let Some(blocks) = &options.block_sizes {
        budget.sweep_blocks = blocks.clone();
    }
    let size = match options.size {
        Some(size) => size,
        None => default_size(&dir, budget.file_cap, options.min_free)?,
    };
    if let Some(&bs) = options.block_sizes.iter().flatten().find(|&&bs| bs > size) {
        let (bs, size) = crate::units::format_size_pair(bs, size);
        return Err(crate::error::input(format!(
            "study {}: block size {bs} is larger than the scratch file ({size}): give a larger --size or block sizes up to it",
            dir.display(),
        )));
    }
    let parts: Vec<Part> = Part::ALL
        .into_iter()
        .filter(|p| options.parts.contains(p))
        .collect();
    let estimated_seconds = parts.iter().map(|&p| options.level.estimate(p)).sum();
    let seed = fresh_seed();
    let mut scratch = files::create_scratch(&dir, "study", size, options.min_free)?;
    scratch.keep_on_drop(options.keep);
    let device = diskstats::device_of(&dir);
    let label = Some(options.label.clone().unwrap_or_else(|| {
        crate::measure::medium::default_label(&crate::measure::env::Storage::of(&dir))
    }));
    let mut report = StudyReport {
        dir: dir.display().to_string(),
        label,
        level: options.level,
        budget: budget.clone(),
        estimated_seconds,
        seconds: 0.0,
        device: device.clone(),
        file_bytes: size,
        seed,
        steps: Vec::new(),
        write_read: Vec::new(),
        read_sweep: None,
        cache: None,
        syscalls: None,
        compare: None,
        write_sweep: None,
        patterns: None,
        transfer: None,
        calibrate: None,
        disk: None,
        verified: true,
        kept_file: options.keep.then(|| scratch.path().display().to_string()),
        kept_bytes: None,
        complete: false,
        warnings: Vec::new(),
        measured_on: None,
        caveats: Vec::new(),
    };
    let context = PartRunner {
        options,
        harness,
        budget: &budget,
        dir: &dir,
        scratch: &scratch,
        size,
        seed,
        has_device: device.is_some(),
    };
    observer.begin(options.level, estimated_seconds);
    let mut interrupted = false;
    for (index, &part) in parts.iter().enumerate() {
        let remaining: f64 = parts[index + 1..]
            .iter()
            .map(|&p| options.level.estimate(p))
            .sum();
        let estimate = options.level.estimate(part);
        observer.part(part, index, parts.len(), estimate, remaining);
        let step = context.step(part, estimate, &mut report)?;
        let stop = step.outcome == Outcome::Partial || crate::interrupt::requested();
        report.steps.push(step);
        report.seconds = started.elapsed().as_secs_f64();
        if stop {
            interrupted = true;
            break;
        }
        save(&report)?;
    }
    if interrupted {
        report.warnings.push(Warning::Partial);
        if report.steps.len() == 1 && report.write_read.is_empty() {
            return Err(Failure::Interrupted.into());
        }
    } else {
        report.complete = true;
    }
    if options.keep {
        report.kept_bytes = std::fs::metadata(scratch.path()).ok().map(|m| m.len());
    }
    report.caveats = caveats(&report, &scratch, size);
    report.seconds = started.elapsed().as_secs_f64();
    save(&report)?;
    Ok(report)
}

/// What could make the study's figures wrong, measured once every part is done: the
/// scratch file's extents and compression (judged on the cache part's first cold read),
/// and the write cache beside the write's fsync.
fn caveats(
    report: &StudyReport,
    scratch: &OutputFile,
    size: u64,
) -> Vec<crate::measure::caveat::Caveat> {
    // Through the descriptor: the file measured, whatever is at its name now.
    let Ok(file) = crate::cmd::disk::reopen_for_reading(scratch.file()) else {
        return Vec::new();
    };
    let path = std::path::PathBuf::from(format!(
        "/proc/self/fd/{}",
        std::os::fd::AsRawFd::as_raw_fd(&file)
    ));
    let path = path.as_path();
    let fsync = report
        .write_read
        .iter()
        .find(|r| r.op == Op::Write)
        .and_then(|r| r.fsync_seconds);
    let mut out: Vec<_> = crate::cmd::caveats::of_write(&file, path, size, fsync)
        .into_iter()
        .filter(|c| c.name() == "write_cache")
        .collect();
    let judged = report
        .cache
        .as_ref()
        .and_then(|c| c.rows.first())
        .map(|r| &r.cold);
    out.extend(crate::cmd::caveats::of_read(&file, path, 0, size, judged));
    out
}

/// A part's result, unless it was interrupted before it measured anything (`nothing`): then
/// the interruption, as before the commands returned empty partial results (a section with
/// no figures would only mislead).
fn something<T>(nothing: bool, result: T) -> Result<T> {
    if nothing {
        Err(Failure::Interrupted.into())
    } else {
        Ok(result)
    }
}

fn is_interruption(e: &anyhow::Error) -> bool {
    matches!(e.downcast_ref::<Failure>(), Some(Failure::Interrupted))
}

/// The directory to study, and the guard that removes it when the study made it.
fn study_dir(given: Option<&Path>) -> Result<(PathBuf, CreatedDir)> {
    match given {
        Some(dir) => {
            let meta = std::fs::metadata(dir)
                .map_err(|e| input(format!("study {}: {}", dir.display(), files::describe(&e))))?;
            if !meta.is_dir() {
                return Err(input(format!("study {}: not a directory", dir.display())));
            }
            Ok((dir.to_path_buf(), CreatedDir(None)))
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
            Ok((dir.clone(), CreatedDir(created.then_some(dir))))
        }
    }
}

/// What every part needs.
struct PartRunner<'a> {
    options: &'a StudyOptions,
    harness: &'a Harness<'a>,
    budget: &'a Budget,
    dir: &'a Path,
    scratch: &'a OutputFile,
    size: u64,
    seed: u64,
    has_device: bool,
}

impl PartRunner<'_> {
    /// Why `part` cannot run here, if it cannot.
    fn skip_reason(&self, part: Part) -> Option<String> {
        match part {
            Part::Compare if self.size < MIB => Some(format!(
                "the file ({}) is too small to compare readers on",
                format_size(self.size)
            )),
            Part::Cache if !self.has_device => Some(format!(
                "no block device under {} (tmpfs or another memory file system): its pages cannot be evicted, so every read is a warm read",
                crate::text::printable_path(self.dir)
            )),
            _ => None,
        }
    }

    /// The cache states worth measuring: cold only where a device is behind the directory
    /// (on tmpfs every page is memory; "cold" cannot be reached and would only be flagged).
    fn states(&self) -> Vec<CacheState> {
        if self.has_device {
            vec![CacheState::Cold, CacheState::Warm]
        } else {
            vec![CacheState::Warm]
        }
    }

    fn export(&self) -> ExportOptions {
        ExportOptions::default()
    }

    /// `sweep` at the level's block sizes, runs and call cap, through the stream engine.
    fn sweep(
        &self,
        op: Op,
        path: PathBuf,
        states: Vec<CacheState>,
        warmup: usize,
        size: u64,
    ) -> Result<SweepReport> {
        let b = self.budget;
        let options = SweepOptions {
            path,
            op,
            setup: Setup::single(&engine::stream::Stream),
            block_sizes: b.sweep_blocks.clone(),
            blocks_listed: self.options.block_sizes.is_some(),
            states,
            repeat: b.repeat,
            warmup,
            max_calls: Some(b.max_calls),
            size,
            drop_caches: false,
            // The study's own file, written by ioscope: no unwritten extent to allow.
            allow_unwritten: false,
            force: false,
            min_free: self.options.min_free,
            // The read sweep reads the scratch file this study wrote: verified in place.
            seed: (op == Op::Read).then_some(self.seed),
            export: self.export(),
        };
        crate::cmd::sweep::execute(&options, self.harness, &mut ignore)
    }

    /// Runs `part` into `report`, or says why it cannot run here: its step, with how it
    /// ended and how long it took. A failed part is recorded and the study goes on, except
    /// write-read, which every other part needs: its error is returned.
    fn step(&self, part: Part, estimate: f64, report: &mut StudyReport) -> Result<Step> {
        let clock = Instant::now();
        let outcome = match self.skip_reason(part) {
            Some(reason) => Outcome::Skipped { reason },
            None => match self.run(part, report) {
                Ok(outcome) => outcome,
                Err(e) if is_interruption(&e) => Outcome::Partial,
                Err(e) if part == Part::WriteRead => return Err(e),
                Err(e) => Outcome::Failed {
                    error: format!("{e:#}"),
                },
            },
        };
        // A part that returned whole while Ctrl-C arrived (its last child process killed by
        // the signal, say) was still interrupted.
        let outcome = match outcome {
            Outcome::Done if crate::interrupt::requested() => Outcome::Partial,
            other => other,
        };
        Ok(Step {
            part,
            seconds: clock.elapsed().as_secs_f64(),
            estimated_seconds: estimate,
            outcome,
        })
    }

    /// Runs one part into `report`: done, partial (interrupted after measuring some), or
    /// skipped when it turns out it cannot be measured here.
    fn run(&self, part: Part, report: &mut StudyReport) -> Result<Outcome> {
        match part {
            Part::WriteRead => self.write_read(report).map(|()| Outcome::Done),
            Part::ReadSweep => {
                let path = self.scratch.path().to_path_buf();
                let r = self.sweep(Op::Read, path, self.states(), 1, self.size)?;
                let r = something(r.points.is_empty() && !r.complete, r)?;
                Ok(partial(&mut report.read_sweep, r, |r| r.complete))
            }
            Part::WriteSweep => {
                let r = self.write_sweep()?;
                Ok(partial(&mut report.write_sweep, r, |r| r.complete))
            }
            Part::Cache => {
                let r = self.cache()?;
                Ok(partial(&mut report.cache, r, |r| r.complete))
            }
            Part::Syscalls => self.syscalls(report),
            Part::Compare => {
                let r = self.compare()?;
                Ok(partial(&mut report.compare, r, |r| r.complete))
            }
            Part::Patterns => {
                let r = self.patterns()?;
                Ok(partial(&mut report.patterns, r, |r| r.complete))
            }
            Part::Transfer => {
                let r = self.transfer()?;
                Ok(partial(&mut report.transfer, r, |r| r.complete))
            }
            Part::Disk => {
                let r = self.disk()?;
                Ok(partial(&mut report.disk, r, |r| r.complete))
            }
            Part::Calibrate => self.calibrate(report),
        }
    }

    /// The cache state of the parts that start cold: cold where a device is behind the
    /// directory, warm otherwise.
    fn cold_if_possible(&self) -> CacheState {
        if self.has_device {
            CacheState::Cold
        } else {
            CacheState::Warm
        }
    }

    /// The write sweep, on a file of its own beside the scratch file.
    fn write_sweep(&self) -> Result<SweepReport> {
        let b = self.budget;
        let file = self
            .dir
            .join(format!(".ioscope-study-write-{}", std::process::id()));
        let _remove = RemoveOnDrop::new(file.clone());
        // At least the largest block: the read sweep's blocks all fit in the scratch file,
        // and the write sweep takes the same ones.
        let largest = b.sweep_blocks.iter().copied().max().unwrap_or(0);
        let size = b
            .write_size
            .min(self.size.max(MIB))
            .max(largest.min(self.size));
        let r = self.sweep(Op::Write, file, Vec::new(), 0, size)?;
        something(r.points.is_empty() && !r.complete, r)
    }

    /// Cold, warm and cold again at 4 KiB and 1 MiB.
    fn cache(&self) -> Result<CacheReport> {
        let options = CacheOptions {
            path: self.scratch.path().to_path_buf(),
            block_sizes: vec![4 * KIB, MIB],
            setup: Setup::single(&engine::stream::Stream),
            drop_caches: false,
            allow_unwritten: false,
            export: self.export(),
        };
        let r = crate::cmd::coldwarm::execute(&options, self.harness, &mut ignore)?;
        something(r.rows.is_empty() && !r.complete, r)
    }

    /// The system-call costs at the level's call counts that fit in the file.
    fn syscalls(&self, report: &mut StudyReport) -> Result<Outcome> {
        let sizes: Vec<u64> = self
            .budget
            .syscall_sizes
            .iter()
            .copied()
            .filter(|&n| n <= self.size)
            .collect();
        if sizes.is_empty() {
            return Ok(Outcome::Skipped {
                reason: format!(
                    "the file ({}) is smaller than every call count of this level",
                    format_size(self.size)
                ),
            });
        }
        let options = SyscallsOptions {
            path: self.scratch.path().to_path_buf(),
            sizes,
            export: self.export(),
        };
        report.syscalls = Some(crate::cmd::syscalls::execute(&options, self.harness)?);
        Ok(Outcome::Done)
    }

    /// `fast` against dd, cat and fio at 1 MiB.
    fn compare(&self) -> Result<CompareReport> {
        let options = CompareOptions {
            path: self.scratch.path().to_path_buf(),
            block_size: MIB,
            block_size_text: "1m".into(),
            states: self.states(),
            repeat: self.budget.compare_repeat,
            export: self.export(),
        };
        let r = crate::cmd::compare::execute(&options, self.harness, &mut ignore)?;
        something(r.rows.is_empty() && !r.complete, r)
    }

    /// Every iozone test at 64 KiB records, on a file of its own in the directory.
    fn patterns(&self) -> Result<PatternsReport> {
        let b = self.budget;
        let options = PatternsOptions {
            path: self.dir.to_path_buf(),
            sizes: vec![b.patterns_size],
            records: vec![64 * KIB],
            auto: false,
            tests: Test::ALL.to_vec(),
            runs: b.patterns_runs,
            cache: self.cold_if_possible(),
            stride: DEFAULT_STRIDE,
            stride_given: false,
            read_percent: 50,
            draws: false,
            drop_caches: false,
            keep: false,
            force: false,
            min_free: self.options.min_free,
            export: self.export(),
        };
        let r = crate::cmd::patterns::execute(&options, self.harness, &mut ignore)?;
        something(r.results.is_empty() && !r.complete, r)
    }

    /// The disk panel (SEQ1M Q8T1 … RND4K Q1T1, read and write) on the scratch file, each
    /// row for the level's runtime: its writes put the bytes the file already holds, so the
    /// later parts still read what write-read wrote.
    fn disk(&self) -> Result<crate::cmd::disk::DiskReport> {
        let options = DiskOptions {
            path: self.scratch.path().to_path_buf(),
            size: self.size,
            runtime: Duration::from_secs_f64(self.budget.disk_runtime),
            rows: crate::workload::panel::default_panel(),
            notes: Vec::new(),
            mode: crate::options::disk::DiskMode::Panel,
            force_write: true,
            seed: self.seed,
            own_file: true,
            open: Some(std::sync::Arc::new(
                crate::cmd::disk::reopen_for_reading(self.scratch.file())
                    .with_context(|| format!("open {} for the disk panel", self.scratch.name()))?,
            )),
            keep: false,
            min_free: self.options.min_free,
            series: None,
            export: self.export(),
        };
        let r = crate::cmd::disk::execute(&options, self.harness, &mut ignore)?;
        something(r.rows.is_empty() && !r.complete, r)
    }

    /// The transfer matrix on the classic workloads, over loopback TCP.
    fn transfer(&self) -> Result<TransferReport> {
        let b = self.budget;
        let options = TransferOptions {
            files: Vec::new(),
            to: self.dir.to_path_buf(),
            large: b.transfer_large,
            small: 10,
            small_size: 4 * KIB,
            repeat: b.transfer_repeat,
            senders: crate::transfer::methods::SendMethod::ALL.to_vec(),
            receivers: crate::transfer::methods::RecvMethod::ALL.to_vec(),
            unix: false,
            sync: true,
            buffer: MIB as usize,
            min_free: self.options.min_free,
        };
        crate::cmd::transfer::execute(&options, &mut ignore)
    }

    /// The file size whose read lands in the level's window (the scratch file may grow);
    /// skipped, with the reason, when none does within the level's cap.
    fn calibrate(&self, report: &mut StudyReport) -> Result<Outcome> {
        let b = self.budget;
        let (min, max) = b.calibrate_window;
        let options = CalibrateOptions {
            path: self.scratch.path().to_path_buf(),
            block_size: MIB,
            min: Duration::from_secs_f64(min),
            max: Duration::from_secs_f64(max),
            cache: self.cold_if_possible(),
            setup: Setup::single(&engine::stream::Stream),
            grow: true,
            max_bytes: b.calibrate_cap,
            seed: self.seed,
            min_free: self.options.min_free,
            expect: crate::files::file_id(self.scratch.file()),
            json: false,
        };
        match crate::cmd::calibrate::execute(&options, self.harness) {
            Ok(r) => {
                report.calibrate = Some(r);
                Ok(Outcome::Done)
            }
            // No size fits the window here within the level's cap (a fast medium read
            // warm): a finding, not a failure.
            Err(e) => match e.downcast_ref::<Failure>() {
                Some(Failure::Check(reason)) => Ok(Outcome::Skipped {
                    reason: reason.clone(),
                }),
                _ => Err(e),
            },
        }
    }

    /// Writes the scratch file, then reads it all back and checks the checksum.
    fn write_read(&self, report: &mut StudyReport) -> Result<()> {
        let setup = Setup::single(&engine::stream::Stream);
        let size = self.size;
        let written = self.harness.write(
            self.scratch,
            None,
            &setup,
            Plan::sequential(0, size, WRITE_BLOCK.min(size)),
            self.seed,
            false,
        )?;
        add(report, row(Op::Write, WRITE_BLOCK, written, true));
        let whole_xor = report.write_read[0].moved.xor;
        let reader = crate::cmd::disk::reopen_for_reading(self.scratch.file())
            .with_context(|| format!("open {} for reading", self.scratch.name()))?;
        let target = Target {
            file: &reader,
            name: self.scratch.name(),
            kind: InputKind::Regular,
            device: None,
        };
        let bs = WRITE_BLOCK.min(size);
        let sample = self.harness.read(
            target,
            &setup,
            Plan::sequential(0, size, bs),
            false,
            CacheState::AsIs,
        )?;
        // The clock has stopped: every byte read, checked where it lay.
        let in_place = crate::cmd::inplace::verify(
            self.harness,
            &reader,
            self.scratch.name(),
            std::iter::once((0, size)),
            Written::Stream(self.seed),
            bs,
        )?;
        let verified = sample.moved.xor == whole_xor && sample.moved.bytes == size;
        // A cross-check that does not trust the write's own figure.
        let expected = xor_of_prefix(self.seed, size);
        let (mut read, warnings) = row(
            Op::Read,
            bs,
            sample,
            verified && expected == whole_xor && in_place.ok(),
        );
        read.in_place = Some(in_place);
        add(report, (read, warnings));
        Ok(())
    }
}

/// Keeps a part's result in its field of the report: done, or partial when it was
/// interrupted after measuring some.
fn partial<T>(field: &mut Option<T>, result: T, complete: impl Fn(&T) -> bool) -> Outcome {
    let outcome = if complete(&result) {
        Outcome::Done
    } else {
        Outcome::Partial
    };
    *field = Some(result);
    outcome
}

/// A part's own progress callback: the study saves after each part instead.
fn ignore<T>(_: &T) -> Result<()> {
    Ok(())
}

/// Adds the write or the read.
fn add(report: &mut StudyReport, (row, warnings): (StudyRow, Vec<Warning>)) {
    report.verified &= row.verified;
    report.write_read.push(row);
    report.warnings.extend(warnings);
}

/// A size that suits the machine: the level's cap, at most an eighth of RAM, and what fits.
fn default_size(dir: &Path, cap: u64, min_free: Option<u64>) -> Result<u64> {
    let room = files::room(dir, min_free)?;
    let ram = meminfo_bytes("MemTotal").unwrap_or(8 * cap);
    let size = cap.min(ram / 8).min(room) / MIB * MIB;
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
        in_place: None,
    };
    (row, warnings)
}
