//! `study`: the whole study of one directory (one medium) as one result. It writes a scratch
//! file and reads it back verified, then runs the other commands' own code on it — read and
//! write sweeps over block sizes, cold and warm, the cache table, system-call costs, `fast`
//! against dd, cat and fio, iozone's patterns, the transfer matrix, and calibrate — each as
//! one *part* with its own typed result. A level bounds the time; a part that cannot run here
//! is skipped with the reason, one that fails is recorded with its error and the study goes
//! on; Ctrl-C keeps every part measured so far as a partial result. Each part is a file in
//! `parts/` implementing `part::StudyPart`, listed once in `parts::PARTS`; this module only
//! runs the list.

use crate::cmd::sweep::SweepReport;
use crate::engine;
use crate::error::{Failure, input};
use crate::files::{self, OutputFile};
use crate::harness::{Harness, Setup};
use crate::measure::cache::CacheState;
use crate::measure::diskstats;
use crate::measure::env::meminfo_bytes;
use crate::options::{ExportOptions, StudyOptions, SweepOptions};
use crate::units::{KIB, MIB, format_size};
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::data::fresh_seed;
use crate::workload::plan::doubling;
pub use crate::workload::study::{Level, Part};
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Instant;

pub mod part;
pub mod parts;
pub use crate::results::study::{Budget, Outcome, Results, Step, StudyReport, StudyRow};
pub use part::{Kept, PartView, StudyPart};

/// The smallest scratch file the default will settle for.
const MIN_SIZE: u64 = MIB;

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
pub use crate::workload::study::{Silent, StudyObserver};

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
            crate::text::printable_path(&dir),
        )));
    }
    let parts: Vec<&dyn StudyPart> = parts::PARTS
        .iter()
        .copied()
        .filter(|p| options.parts.contains(&p.part()))
        .collect();
    let estimated_seconds = parts.iter().map(|p| options.level.estimate(p.part())).sum();
    let seed = fresh_seed();
    let mut scratch = files::create_scratch(&dir, "study", size, options.min_free)?;
    scratch.keep_on_drop(options.keep);
    let device = diskstats::device_of(&dir);
    let label = Some(options.label.clone().unwrap_or_else(|| {
        crate::measure::medium::default_label(&crate::measure::env::Storage::of(&dir))
    }));
    let mut report = StudyReport {
        dir: crate::text::lossless(dir.as_os_str()),
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
        results: Results::default(),
        verified: true,
        kept_file: options
            .keep
            .then(|| crate::text::lossless(scratch.path().as_os_str())),
        kept_bytes: None,
        complete: false,
        warnings: Vec::new(),
        measured_on: None,
        caveats: Vec::new(),
        answers: Vec::new(),
    };
    let context = Context {
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
            .map(|p| options.level.estimate(p.part()))
            .sum();
        let estimate = options.level.estimate(part.part());
        observer.part(part.part(), index, parts.len(), estimate, remaining);
        let step = context.step(part, estimate, &mut report)?;
        let stop = step.outcome == Outcome::Partial || crate::interrupt::requested();
        report.steps.push(step);
        report.seconds = started.elapsed().as_secs_f64();
        if stop {
            interrupted = true;
            break;
        }
        report.answers = crate::report::views::study::answers(&report);
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
    report.answers = crate::report::views::study::answers(&report);
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
    let judged = parts::cache::Cache
        .kept(report)
        .and_then(|c| c.rows.first())
        .map(|r| &r.cold);
    out.extend(crate::cmd::caveats::of_read(&file, path, 0, size, judged));
    let fastest = crate::cmd::caveats::fastest(report.write_read.iter().map(|r| {
        (
            format!(
                "the {} at {}",
                r.op.name(),
                crate::units::format_block_size(r.block_size)
            ),
            r.bytes_per_second,
        )
    }));
    out.push(crate::cmd::caveats::link(path, fastest));
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
            let meta = std::fs::metadata(dir).map_err(|e| {
                input(format!(
                    "study {}: {}",
                    crate::text::printable_path(dir),
                    files::describe(&e)
                ))
            })?;
            if !meta.is_dir() {
                return Err(input(format!(
                    "study {}: not a directory",
                    crate::text::printable_path(dir)
                )));
            }
            Ok((dir.to_path_buf(), CreatedDir(None)))
        }
        None => {
            let dir = PathBuf::from("ioscope-study");
            let created = !dir.exists();
            std::fs::create_dir_all(&dir).map_err(|e| {
                input(format!(
                    "study: create {}: {}",
                    crate::text::printable_path(&dir),
                    files::describe(&e)
                ))
            })?;
            Ok((dir.clone(), CreatedDir(created.then_some(dir))))
        }
    }
}

/// What every part needs: the study's options and harness, the level's budget, the
/// directory and its scratch file.
pub struct Context<'a> {
    options: &'a StudyOptions,
    harness: &'a Harness<'a>,
    budget: &'a Budget,
    dir: &'a Path,
    scratch: &'a OutputFile,
    size: u64,
    seed: u64,
    has_device: bool,
}

impl Context<'_> {
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
            runs: crate::measure::converge::Stopping::fixed(b.repeat),
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
    fn step(&self, part: &dyn StudyPart, estimate: f64, report: &mut StudyReport) -> Result<Step> {
        let clock = Instant::now();
        let outcome = match part.skip_reason(self) {
            Some(reason) => Outcome::Skipped { reason },
            None => match part.run(self, report) {
                Ok(outcome) => outcome,
                Err(e) if is_interruption(&e) => Outcome::Partial,
                Err(e) if part.required() => return Err(e),
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
            part: part.part(),
            seconds: clock.elapsed().as_secs_f64(),
            estimated_seconds: estimate,
            outcome,
        })
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
}

/// A part's own progress callback: the study saves after each part instead.
fn ignore<T>(_: &T) -> Result<()> {
    Ok(())
}

/// A size that suits the machine: the level's cap, at most an eighth of RAM, and what fits.
fn default_size(dir: &Path, cap: u64, min_free: Option<u64>) -> Result<u64> {
    let room = files::room(dir, min_free)?;
    let ram = meminfo_bytes("MemTotal").unwrap_or(8 * cap);
    let size = cap.min(ram / 8).min(room) / MIB * MIB;
    if size < MIN_SIZE {
        return Err(input(format!(
            "study {}: only {} can be written here while keeping the free-space margin; free some space or lower --min-free",
            crate::text::printable_path(dir),
            format_size(room)
        )));
    }
    Ok(size)
}

/// What needs the list of parts (`parts::PARTS`), here rather than in `result.rs`, which the
/// parts' files import.
impl StudyReport {
    /// The study's caveats, then those of its parts that are not ok (each once): the list
    /// its summary shows.
    pub fn all_caveats(&self) -> Vec<crate::measure::caveat::Caveat> {
        let mut all = self.caveats.clone();
        for c in parts::PARTS.iter().flat_map(|p| p.caveats(self)) {
            if c.verdict != crate::measure::caveat::Verdict::Ok
                && !all
                    .iter()
                    .any(|a| crate::results::study::same_finding(a, c))
            {
                all.push(c.clone());
            }
        }
        all
    }

    /// Whether every read was verified and every part's checks held.
    pub fn ok(&self) -> bool {
        self.verified
            && self.write_read.iter().all(|r| r.checks_ok)
            && parts::PARTS.iter().all(|p| p.ok(self))
            && !self
                .steps
                .iter()
                .any(|s| matches!(s.outcome, Outcome::Failed { .. }))
    }
}
