//! The measuring harness shared by every command that times reads and writes: put the file
//! in the cache state asked for, start the meter, run an engine from the table on an offset
//! plan, stop the meter, and compare what the engine claims with what the kernel counted.
//! The meter and the progress sink come from outside, so a whole command can run on the
//! `null` engine with a deterministic meter and its output be checked exactly.

pub mod queue;

pub use crate::engine::Setup;
use crate::engine::flag;
use crate::engine::{self, Job, Moved, Observer, Op};
use crate::files::{InputKind, OutputFile};
use crate::measure::cache::{self, CacheProof, CacheState, Residency};
use crate::measure::checks::{self, Check};
use crate::measure::diskstats::DiskDelta;
use crate::measure::interference;
use crate::measure::latency::{self, Latency};
use crate::measure::meter::{Claim, Meter, Region, SystemMeter};
use crate::measure::pressure::Pressure;
use crate::measure::procio::ProcIo;
use crate::measure::timer::Elapsed;
use crate::units::MIB;
use crate::workload::plan::Plan;
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;

/// Where progress goes: a bar on a terminal, nothing in tests and pipes.
pub trait ProgressSink: Sync {
    /// A new piece of work of `total` bytes (unknown when `None`) begins.
    fn begin(&self, label: &str, total: Option<u64>);
    /// `bytes` more bytes are done.
    fn advance(&self, bytes: u64);
    /// The piece of work is over.
    fn end(&self);
}

/// Progress that goes nowhere.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {
    fn begin(&self, _: &str, _: Option<u64>) {}
    fn advance(&self, _: u64) {}
    fn end(&self) {}
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
    /// The cache state asked for, the residency before and the device bytes (reads).
    pub cache: Option<CacheProof>,
    /// The process's I/O counters over the run.
    pub kernel: Option<ProcIo>,
    /// The device's counters over the run (all processes).
    pub device: Option<DiskDelta>,
    /// Bytes the device moved in the run's direction beyond the run's own, when clearly
    /// more ([`crate::measure::interference::other_io`]): another process's I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// How long tasks on the machine stalled on the CPU, I/O and memory during the run
    /// (absent without `/proc/pressure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<Pressure>,
    /// Claims compared with the kernel's counts (empty when the engine's calls are not the
    /// kind /proc/self/io counts).
    pub checks: Vec<Check>,
    /// The time of each data call, in nanoseconds: present when every call the engine made
    /// was timed (engines that make one call per block, with the real meter and without
    /// `--no-latency`).
    #[serde(
        default,
        rename = "latency_ns",
        skip_serializing_if = "Option::is_none"
    )]
    pub latency: Option<Latency>,
    /// The histogram behind `latency`, so repeats can be summed (not saved).
    #[serde(skip)]
    pub call_times: Option<hdrhistogram::Histogram<u64>>,
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

    /// Whether every check held and the cache state was not contradicted.
    pub fn ok(&self) -> bool {
        self.checks.iter().all(|c| c.ok) && self.cache.is_none_or(|p| p.ok())
    }

    /// [`Sample::ok`], or, with `allow_unwritten`, its cache state missed only because its
    /// bytes are unwritten extents or holes.
    pub fn ok_allowing_unwritten(&self, allow_unwritten: bool) -> bool {
        self.ok()
            || (allow_unwritten
                && self.checks.iter().all(|c| c.ok)
                && self.cache.is_some_and(|p| p.not_the_device()))
    }
}

/// A file (or pipe) and what the harness needs to know about it.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The open file.
    pub file: &'a File,
    /// Its name for messages.
    pub name: &'a str,
    /// What kind of thing it is.
    pub kind: InputKind,
    /// The block device behind it, for /proc/diskstats.
    pub device: Option<&'a str>,
}

/// Tells the progress sink and honours Ctrl-C.
struct Watch<'a>(&'a dyn ProgressSink);

impl Observer for Watch<'_> {
    fn moved(&self, bytes: u64) -> Result<()> {
        crate::interrupt::check()?;
        self.0.advance(bytes);
        Ok(())
    }
}

/// The meter and the progress sink every timed run goes through.
#[derive(Clone, Copy)]
pub struct Harness<'a> {
    /// Clocks and kernel counters.
    pub meter: &'a dyn Meter,
    /// Progress.
    pub progress: &'a dyn ProgressSink,
}

impl<'a> Harness<'a> {
    /// The real meter, with `progress`.
    pub fn system(progress: &'a dyn ProgressSink) -> Self {
        Self {
            meter: &SystemMeter,
            progress,
        }
    }

    /// Checks that `setup` can run `op` over `plan` on `target`, before anything is measured.
    pub fn check(&self, target: Target, setup: &Setup, op: Op, plan: Plan) -> Result<()> {
        let watch = Watch(self.progress);
        let job = job(target, setup, op, plan, false, 0, &watch);
        setup.engine.check(&job).map_err(|why| {
            crate::error::input(format!(
                "{} {}: {why}; see --engine in --help for what each engine can do",
                op.name(),
                target.name
            ))
        })
    }

    /// Puts the bytes `[start, start + len)` in `state`: warm reads them once (large reads) if
    /// any page is missing; cold evicts the file (fadvise), or drops every cache when
    /// `global` (root only); as-is does nothing.
    pub fn prepare(
        &self,
        target: Target,
        plan: &Plan,
        state: CacheState,
        global: bool,
    ) -> Result<()> {
        match state {
            CacheState::AsIs => {}
            CacheState::Cold if global => cache::drop_caches()?,
            CacheState::Cold => cache::evict(target.file, target.name)?,
            CacheState::Warm => self.warm(target, plan)?,
        }
        self.meter.prepared(state);
        Ok(())
    }

    /// Reads the bytes `plan` spans once (large reads) if any page of them is missing.
    fn warm(&self, target: Target, plan: &Plan) -> Result<()> {
        let span = plan.start + plan.len;
        let resident = cache::residency(target.file, target.name, span)?;
        if resident.resident_pages == resident.total_pages {
            return Ok(());
        }
        let warm = Setup::single(&engine::stream::Stream);
        let watch = Watch(self.progress);
        self.progress
            .begin(&format!("warm {}", target.name), Some(span));
        let whole = Plan::sequential(0, span, MIB);
        let job = job(target, &warm, Op::Read, whole, false, 0, &watch);
        let result = position(&job).and_then(|()| warm.engine.run(&job));
        self.progress.end();
        result.map(drop)
    }

    /// Reads `plan` from `target` with `setup`, timed and checked; `state` is the cache state
    /// the run should start from (prepared by the caller), proven against what was measured.
    /// With `to_end`, reads until the end of input (which must not come before `plan.len`).
    pub fn read(
        &self,
        target: Target,
        setup: &Setup,
        plan: Plan,
        to_end: bool,
        state: CacheState,
    ) -> Result<Sample> {
        let residency_before = (target.kind == InputKind::Regular && plan.len > 0)
            .then(|| self.residency(target, &plan))
            .flatten();
        let watch = Watch(self.progress);
        let job = job(target, setup, Op::Read, plan, to_end, 0, &watch);
        let (moved, claim, region, recording) = self.run(setup, &job, target.device)?;
        let measured = region.stop(&claim);
        let (latency, call_times) = recording.finish(moved.calls);
        self.progress.end();
        let caps = setup.engine.caps();
        let cache = (target.kind == InputKind::Regular).then(|| {
            let mut proof = cache::prove(
                state,
                residency_before,
                // An engine that moves no bytes (`null`) makes the device read nothing,
                // whatever the state: its device bytes say nothing.
                measured
                    .kernel
                    .map(|k| k.read_bytes)
                    .filter(|_| caps.has(flag::MOVES_BYTES)),
                moved.bytes,
                // An engine that bypasses the cache reads from the device in every state.
                caps.has(flag::DIRECT) && !caps.has(flag::ZERO_COPY),
            );
            // A cold read that the device did not serve may have read zeros the file
            // system makes up (unwritten extents, holes): the extent map tells. (An engine
            // that moves no bytes has no device bytes to explain.) Only then: a caller
            // timing around this read (`mpi`, open to close) must not pay for the map.
            let short = proof.device_read_bytes.is_none_or(|d| d < moved.bytes);
            if state == CacheState::Cold && caps.has(flag::MOVES_BYTES) && short {
                proof.unbacked_bytes =
                    crate::measure::extents::map(target.file, plan.start, plan.len)
                        .ok()
                        .map(|m| m.unbacked_bytes());
            }
            proof
        });
        Ok(Sample {
            moved,
            elapsed: measured.elapsed,
            fsync_seconds: None,
            cache,
            kernel: measured.kernel,
            device: measured.device,
            other_io_bytes: interference::other_io(
                job.op,
                moved.bytes,
                measured.kernel,
                measured.device,
            ),
            pressure: measured.pressure,
            checks: kernel_checks(&claim, measured.kernel),
            latency,
            call_times,
        })
    }

    /// Writes `plan` of `seed`'s data into `out` with `setup`, then fsyncs; both inside the
    /// timing, the fsync also timed alone. With `fresh`, the file is emptied first (so every
    /// run allocates its blocks anew); else the bytes are overwritten in place.
    pub fn write(
        &self,
        out: &OutputFile,
        device: Option<&str>,
        setup: &Setup,
        plan: Plan,
        seed: u64,
        fresh: bool,
    ) -> Result<Sample> {
        let target = Target {
            file: out.file(),
            name: out.name(),
            kind: out.kind(),
            device,
        };
        self.write_to(target, setup, plan, seed, fresh)
    }

    /// [`Harness::write`] into any open file (a descriptor of its own, say, whose close is
    /// timed after).
    pub fn write_to(
        &self,
        target: Target,
        setup: &Setup,
        plan: Plan,
        seed: u64,
        fresh: bool,
    ) -> Result<Sample> {
        let (file, name) = (target.file, target.name);
        if fresh && target.kind == InputKind::Regular {
            file.set_len(0)
                .with_context(|| format!("truncate {name}"))?;
        }
        let watch = Watch(self.progress);
        let job = job(target, setup, Op::Write, plan, false, seed, &watch);
        let (moved, claim, mut region, recording) = self.run(setup, &job, target.device)?;
        region.lap(&claim);
        // A FIFO or character device (given with --force) has nothing to sync: fsync
        // fails there with EINVAL after every byte was written.
        let syncable = matches!(target.kind, InputKind::Regular | InputKind::BlockDevice);
        let synced = if syncable {
            file.sync_all().with_context(|| format!("fsync {name}"))
        } else {
            Ok(())
        };
        let measured = region.stop(&claim);
        let (latency, call_times) = recording.finish(moved.calls);
        self.progress.end();
        synced?;
        let fsync_seconds = measured
            .lap_seconds
            .filter(|_| syncable)
            .map(|lap| measured.elapsed.seconds - lap);
        Ok(Sample {
            moved,
            elapsed: measured.elapsed,
            fsync_seconds,
            cache: None,
            kernel: measured.kernel,
            device: measured.device,
            other_io_bytes: interference::other_io(
                job.op,
                moved.bytes,
                measured.kernel,
                measured.device,
            ),
            pressure: measured.pressure,
            checks: kernel_checks(&claim, measured.kernel),
            latency,
            call_times,
        })
    }
}

impl Harness<'_> {
    /// Runs `work` once, timed on the meter's clock alone (a close or an fsync after the
    /// region that moved the bytes): its result and its wall seconds. `claim` is what it does,
    /// for a meter that models time (`--meter fixed`).
    pub fn time<R>(&self, claim: &Claim, work: impl FnOnce() -> R) -> (R, f64) {
        let mut work = Some(work);
        let mut out = None;
        let seconds = self
            .meter
            .time(claim, &mut || out = work.take().map(|w| w()));
        (out.expect("every meter runs the work once"), seconds)
    }

    /// Residency of the bytes `plan` touches (each piece of an interleaved lane on its own).
    pub fn residency(&self, target: Target, plan: &Plan) -> Option<Residency> {
        plan.extents().try_fold(
            Residency {
                resident_pages: 0,
                total_pages: 0,
            },
            |sum, (start, len)| {
                let r = self.meter.residency(target.file, target.name, start, len)?;
                Some(Residency {
                    resident_pages: sum.resident_pages + r.resident_pages,
                    total_pages: sum.total_pages + r.total_pages,
                })
            },
        )
    }

    /// Does now, before a caller's own timed region, what a read or write of `plan` would
    /// otherwise do once inside it: stock the engine's buffers (first-touch faults, about
    /// 1 s per GiB on this VM), make the generator's table for `seed` and settle the calls'
    /// clock. `mpi` times from open to close as IOR does, and IOR's buffers exist before
    /// its clock starts: measured at 16 MiB per rank, these first-use costs made ioscope's
    /// cold reads 0.84x IOR's on the very file IOR read.
    pub fn prime(&self, target: Target, setup: &Setup, op: Op, plan: Plan, seed: u64) {
        let watch = Watch(self.progress);
        let job = job(target, setup, op, plan, false, seed, &watch);
        crate::engine::buffer::stock(setup.engine.buffers(&job), plan.block as usize);
        if op == Op::Write {
            drop(crate::workload::data::DataStream::new(seed, plan.start));
        }
        crate::measure::probe::prime();
    }

    /// Runs the engine inside a timed region with the progress shown; returns what moved,
    /// the claim the kernel's counts are compared with, the region, still running, and the
    /// calls' times (summed once the region has stopped, so the summing is not timed).
    fn run(
        &self,
        setup: &Setup,
        job: &Job,
        device: Option<&str>,
    ) -> Result<(Moved, Claim, Box<dyn Region>, CallTimes)> {
        position(job)?;
        let total = (job.plan.len > 0).then_some(job.plan.len);
        self.progress
            .begin(&label(job.op, job.name, &job.plan), total);
        crate::engine::buffer::stock(setup.engine.buffers(job), job.plan.block as usize);
        setup.engine.before(job)?;
        // The histogram is made before the clock starts; the engine's threads inherit it.
        let calls = self.meter.times_calls().then(latency::Calls::new);
        let guard = calls.as_ref().map(|c| c.enter());
        let region = self.meter.start(device);
        let moved = setup.engine.run(job).inspect_err(|_| self.progress.end())?;
        let claim = Claim {
            op: Some(job.op),
            calls: moved.calls,
            bytes: moved.bytes,
            counted: setup.engine.caps().has(flag::COUNTED),
        };
        Ok((moved, claim, region, CallTimes { calls, guard }))
    }
}

/// The calls of one timed region being recorded.
struct CallTimes {
    calls: Option<std::sync::Arc<latency::Calls>>,
    guard: Option<latency::Recording>,
}

impl CallTimes {
    /// Stops recording; the summary and histogram when every one of the `calls` the engine
    /// made was timed (an engine that maps the file or batches requests times fewer, or none:
    /// its "calls" are not one block each, and no latency is given).
    fn finish(self, calls: u64) -> (Option<Latency>, Option<hdrhistogram::Histogram<u64>>) {
        drop(self.guard);
        let h = self.calls.and_then(|c| c.take());
        match h {
            Some(h) if h.len() == calls => (Latency::of(&h), Some(h)),
            _ => (None, None),
        }
    }
}

/// Puts a regular file's offset at the plan's first byte for an in-order job: engines that
/// work from the current offset (`stream`) start there, and the same file is read again
/// and again (sweeps, probes, the warming read after a growth).
fn position(job: &Job) -> Result<()> {
    if job.kind == InputKind::Regular && job.plan.is_sequential() {
        use std::io::{Seek, SeekFrom};
        (&*job.file)
            .seek(SeekFrom::Start(job.plan.start))
            .with_context(|| format!("seek {} to byte {}", job.name, job.plan.start))?;
    }
    Ok(())
}

fn job<'a>(
    target: Target<'a>,
    setup: &Setup,
    op: Op,
    plan: Plan,
    to_end: bool,
    seed: u64,
    observer: &'a dyn Observer,
) -> Job<'a> {
    Job {
        file: target.file,
        name: target.name,
        kind: target.kind,
        op,
        plan,
        to_end,
        threads: setup.threads,
        depth: setup.depth,
        seed,
        observer,
    }
}

fn label(op: Op, name: &str, plan: &Plan) -> String {
    format!(
        "{} {name} at {}",
        op.name(),
        crate::units::format_size(plan.block)
    )
}

/// The kernel's counts set beside the claim, for engines whose calls the kernel counts.
fn kernel_checks(claim: &Claim, kernel: Option<ProcIo>) -> Vec<Check> {
    match (claim.counted, claim.op, kernel) {
        (true, Some(op), Some(k)) => checks::against_proc_io(op, claim.calls, claim.bytes, &k),
        _ => Vec::new(),
    }
}
