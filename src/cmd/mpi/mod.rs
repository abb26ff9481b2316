//! `mpi`: the same verified write and read on every rank of an MPI job at once, aggregated
//! as IOR does. Ranks write their segment (a file each, or a share of one file: contiguous
//! or strided), then each reads another rank's segment (shifted by a node's worth of ranks,
//! as IOR's `-C`; the next rank's when all share one host), in the cache state asked for with its proof,
//! and verifies the checksum against the generator (data are seeded by file offset, so any
//! rank can compute any segment's XOR). Barriers line the phases up; reductions and gathers
//! bring the figures to rank 0, which alone returns the report.
//!
//! The collective operations come through [`Comm`]: the real one (rsmpi, behind the `mpi`
//! cargo feature) is `cmd::mpi_world`; [`Solo`] is one rank without MPI, so the whole
//! orchestration runs in the default build and its tests. The result types are plain serde
//! structs in every build (`results::mpi`), so `ioscope report` renders a saved run anywhere.
//!
//! Failure is collective: after every step each rank says ok or not in an all-reduce; when
//! any failed, every rank's error goes to rank 0 and every rank stops with the same exit
//! code ([`RanksFailed`]). No rank returns while others wait in a collective.

use crate::checksum::{Xor32, hex, xor_at};
use crate::engine::stream::Stream;
use crate::error::{ExitKind, Failure};
use crate::files::{self, CreatePolicy, InputKind, OutputFile};
use crate::harness::{Harness, Sample, Setup, Target};
use crate::hooks;
use crate::measure::cache::{self, CacheState};
use crate::measure::converge::Stopping;
use crate::measure::diskstats;
use crate::measure::env::Environment;
use crate::measure::interference;
use crate::measure::meter::Claim;
use crate::measure::stats::{Summary, summarize};
use crate::measure::wallclock;
use crate::options::MpiOptions;
use crate::units::per_second;
use crate::warning;
use crate::workload::Op;
use crate::workload::data::{DataStream, fresh_seed};
pub use crate::workload::layout::{Layout, Phases, data_seed, segment};
use crate::workload::plan::Plan;
use crate::workload::verify::Written;
use anyhow::{Context, Result};
use serde::Serialize;
use std::fs::File;
use std::path::{Path, PathBuf};

pub mod io500;
mod ior;
pub mod must_match;
mod watchdog;
pub use crate::results::mpi::{Aggregate, MpiReport, Phase, RankInfo, RankRun, RankTime, Repeat};
pub use ior::{
    Clock, ClockOffset, FailedPhase, Kept, PhaseTimes, Reorder, RepeatFiles, ior_aggregate,
};
pub use watchdog::abandon_after_mpi_error;
use watchdog::{Watchdog, register, scratch};

/// The collective operations the command needs: MPI's, or one rank's.
pub trait Comm {
    /// This process's rank, from 0.
    fn rank(&self) -> usize;
    /// Ranks in the job.
    fn size(&self) -> usize;
    /// Waits until every rank has called it.
    fn barrier(&self);
    /// Rank 0's `value`, on every rank.
    fn broadcast(&self, value: u64) -> u64;
    /// Whether `value` is true on every rank.
    fn all_true(&self, value: bool) -> bool;
    /// The sum of `value` over the ranks, on every rank.
    fn sum(&self, value: u64) -> u64;
    /// The largest `value` of any rank, on every rank.
    fn max(&self, value: f64) -> f64;
    /// Every rank's `bytes` on rank 0, in rank order; nothing on the others.
    fn gather(&self, bytes: &[u8]) -> Vec<Vec<u8>>;
    /// Whether the job was started by an MPI launcher (`mpirun`), not as a singleton.
    fn launched(&self) -> bool;
}

/// One rank without MPI: every collective is the identity.
#[derive(Debug, Clone, Copy, Default)]
pub struct Solo;

impl Comm for Solo {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn barrier(&self) {}
    fn broadcast(&self, value: u64) -> u64 {
        value
    }
    fn all_true(&self, value: bool) -> bool {
        value
    }
    fn sum(&self, value: u64) -> u64 {
        value
    }
    fn max(&self, value: f64) -> f64 {
        value
    }
    fn gather(&self, bytes: &[u8]) -> Vec<Vec<u8>> {
        vec![bytes.to_vec()]
    }
    fn launched(&self) -> bool {
        false
    }
}

/// Some ranks failed a step: every rank returns this, with the same exit kind; on rank 0
/// it holds one line per failed rank (`rank 2 on host X: ...`), elsewhere none.
#[derive(Debug)]
pub struct RanksFailed {
    /// One line per failed rank (rank 0 only).
    pub lines: Vec<String>,
    /// How every rank exits.
    pub kind: ExitKind,
}

impl std::fmt::Display for RanksFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.lines.is_empty() {
            f.write_str("another rank failed")
        } else {
            f.write_str(&self.lines.join("; "))
        }
    }
}

impl std::error::Error for RanksFailed {}

/// The name the job's files share: the one `--existing` gives, or `.ioscope-mpi-TAG`.
fn stem_of(options: &MpiOptions, tag: u64) -> String {
    options
        .existing
        .clone()
        .unwrap_or_else(|| format!(".ioscope-mpi-{tag}"))
}

/// The file of `owner` (or the shared one) in `dir`, named by the job's `stem`.
fn path_of(dir: &Path, layout: Layout, stem: &str, owner: usize) -> PathBuf {
    if layout.shared() {
        dir.join(stem)
    } else {
        dir.join(format!("{stem}-{owner}"))
    }
}

/// A new descriptor for `file` (at `path`): by its name while it has one, else through
/// /proc/self/fd (its name was removed early so a killed job leaves nothing).
fn reopen(file: &File, path: &Path, write: bool) -> Result<File> {
    use std::os::fd::AsRawFd;
    let via = if std::fs::symlink_metadata(path).is_ok() {
        path.to_path_buf()
    } else {
        PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
    };
    std::fs::OpenOptions::new()
        .read(!write)
        .write(write)
        .open(&via)
        .with_context(|| {
            let how = if write { "writing" } else { "reading" };
            format!("open {} for {how}", crate::text::printable_path(path))
        })
}

/// The checksum of `plan` read from a file written with `seed`, computed in memory: what
/// every engine returns for those bytes (each piece at its offset from the plan's start).
pub fn expected_xor(seed: u64, plan: &Plan) -> u32 {
    let mut buf = vec![0u8; plan.block.min(1 << 20) as usize];
    let mut xor = 0;
    for (offset, len) in plan.iter() {
        let mut stream = DataStream::new(seed, offset);
        let mut done = 0;
        while done < len {
            let n = (len - done).min(buf.len() as u64) as usize;
            stream.fill(&mut buf[..n]);
            xor ^= xor_at(offset + done - plan.start, &buf[..n]);
            done += n as u64;
        }
    }
    xor
}

/// This machine's host name.
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".to_string())
}

/// After a step: every rank says whether it succeeded; if any did not, every rank's error
/// goes to rank 0 and every rank returns [`RanksFailed`] with the same exit kind.
fn agree<T>(comm: &dyn Comm, host: &str, result: Result<T>) -> Result<T> {
    if comm.all_true(result.is_ok()) {
        return result;
    }
    let mine = match &result {
        Ok(_) => String::new(),
        Err(e) => format!(
            "{} rank {} on host {host}: {e:#}",
            crate::error::exit_kind(e).code(crate::interrupt::last_signal()),
            comm.rank()
        ),
    };
    // Files this step made are removed here, before the others are told.
    drop(result);
    let mut lines = Vec::new();
    let mut codes = Vec::new();
    for bytes in comm.gather(mine.as_bytes()) {
        let text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some((code, line)) = text.split_once(' ') {
            codes.push(code.parse::<u8>().unwrap_or(1));
            // A rank's error names its files and host: printed by rank 0 as they are.
            lines.push(crate::text::printable(line));
        }
    }
    // Interrupted wins; input errors alone give 2; anything else 1.
    let code = if codes.contains(&130) {
        130
    } else if !codes.is_empty() && codes.iter().all(|&c| c == 2) {
        2
    } else {
        1
    };
    let kind = match comm.broadcast(code) {
        130 => ExitKind::Interrupted,
        2 => ExitKind::Usage,
        _ => ExitKind::Failed,
    };
    Err(RanksFailed { lines, kind }.into())
}

/// Every rank's `value` on rank 0 (as JSON through a gather); empty elsewhere.
fn gather_all<T: Serialize + serde::de::DeserializeOwned>(
    comm: &dyn Comm,
    value: &T,
) -> Result<Vec<T>> {
    let bytes = serde_json::to_vec(value).context("encode a rank's result")?;
    comm.gather(&bytes)
        .iter()
        .map(|b| serde_json::from_slice(b).context("decode a rank's result"))
        .collect()
}

/// This rank's open files.
struct Files {
    /// The file it writes (created by it, or by rank 0 when shared), removed on drop.
    created: Option<OutputFile>,
    /// The file it writes, when shared and created by rank 0.
    write: Option<File>,
    /// The file it reads (the next rank's, or the shared one).
    read: Option<File>,
    write_name: String,
    read_name: String,
    write_path: PathBuf,
    read_path: PathBuf,
    device: Option<String>,
}

impl Files {
    fn write_file(&self) -> &File {
        match (&self.created, &self.write) {
            (Some(out), _) => out.file(),
            (None, Some(file)) => file,
            (None, None) => unreachable!("open() gives every rank a file to write"),
        }
    }
}

/// Checks DIR and creates this rank's file (rank 0 creates a shared one).
fn create(options: &MpiOptions, comm: &dyn Comm, stem: &str) -> Result<Option<OutputFile>> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let dir = &options.dir;
    let name = files::display_name(dir);
    let meta = if hooks::mpi_fails(rank, "dir") {
        Err(std::io::Error::from_raw_os_error(libc::ENOENT))
    } else {
        std::fs::metadata(dir)
    };
    match meta {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(crate::error::input(format!("mpi {name}: not a directory")));
        }
        Err(e) => {
            return Err(crate::error::input(format!(
                "mpi {name}: {}",
                files::describe(&e)
            )));
        }
    }
    let total = options.size * ranks as u64;
    let policy = CreatePolicy {
        min_free: options.min_free,
        ..CreatePolicy::default()
    };
    if options.existing.is_some() {
        // The files are an earlier run's: nothing to create.
        return Ok(None);
    }
    let path = path_of(dir, options.layout, stem, rank);
    let created = if options.layout.shared() {
        if rank != 0 {
            return Ok(None);
        }
        files::create_output(&path, total, policy)?
    } else {
        if rank == 0 {
            // The ranks' files together, when they share this file system (one machine).
            files::ensure_room(dir, &name, total, 0, options.min_free)?;
        }
        files::create_output(&path, options.size, policy)?
    };
    register(&path);
    Ok(Some(created))
}

/// Opens what this rank writes (when shared) and what it reads.
fn open(
    options: &MpiOptions,
    comm: &dyn Comm,
    stem: &str,
    created: Option<OutputFile>,
    source: usize,
) -> Result<Files> {
    let rank = comm.rank();
    let reads = options.phases != Phases::Write;
    let existing = options.existing.is_some();
    let own = path_of(&options.dir, options.layout, stem, rank);
    let write = match &created {
        Some(_) => None,
        None if existing => None,
        None => {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&own)
                .with_context(|| {
                    format!("open {} for writing", crate::text::printable_path(&own))
                })?;
            register(&own);
            Some(file)
        }
    };
    let theirs = path_of(&options.dir, options.layout, stem, source);
    let read = if reads {
        let file = File::open(&theirs).map_err(|e| {
            let what = format!("open {} for reading", crate::text::printable_path(&theirs));
            if existing {
                crate::error::input(format!(
                    "mpi read --existing: {what}: {}",
                    files::describe(&e)
                ))
            } else {
                anyhow::Error::new(e).context(what)
            }
        })?;
        if existing {
            // An earlier run's file: checked, and never registered for removal.
            kept_size_fits(options, comm.size(), &file, &theirs)?;
        } else {
            register(&theirs);
        }
        Some(file)
    } else {
        None
    };
    Ok(Files {
        created,
        write,
        read,
        write_name: files::display_name(&own),
        read_name: files::display_name(&theirs),
        device: diskstats::device_of(&theirs).or_else(|| diskstats::device_of(&own)),
        write_path: own,
        read_path: theirs,
    })
}

/// Refuses a kept file whose size does not fit this run's --size, --layout and ranks.
fn kept_size_fits(options: &MpiOptions, ranks: usize, file: &File, path: &Path) -> Result<()> {
    let len = file
        .metadata()
        .with_context(|| format!("stat {}", crate::text::printable_path(path)))?
        .len();
    let want = if options.layout.shared() {
        options.size.saturating_mul(ranks as u64)
    } else {
        options.size
    };
    if len != want {
        return Err(crate::error::input(format!(
            "mpi read --existing: {} holds {len} bytes; --size {} --layout {} on {ranks} rank(s) reads {want} (give the --size, --layout and rank count it was written with)",
            files::display_name(path),
            options.size,
            options.layout.name()
        )));
    }
    Ok(())
}

/// Runs `mpi` on this rank; rank 0 gets the report, the others `None`.
pub fn execute(
    options: &MpiOptions,
    comm: &dyn Comm,
    harness: &Harness,
) -> Result<Option<MpiReport>> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let host = hostname();
    let seed = comm.broadcast(options.seed.unwrap_or_else(fresh_seed));
    let tag = comm.broadcast(u64::from(std::process::id()));
    let info = RankInfo {
        rank,
        host: host.clone(),
        environment: Environment::collect(&options.dir),
    };
    let rank_info = agree(comm, &host, gather_all(comm, &info))?;
    let reads = options.phases != Phases::Write;
    // Rank 0 knows the hosts: it picks IOR's shift and tells the others.
    let hosts: Vec<String> = rank_info.iter().map(|i| i.host.clone()).collect();
    let reorder = (rank == 0).then(|| Reorder::of_hosts(&hosts));
    let shift = comm.broadcast(reorder.as_ref().map_or(0, |r| r.shift as u64)) as usize;
    let next = (rank + shift) % ranks;
    let clock = agree(comm, &host, ior::measure_clock(comm, &hosts))?;
    let stem = stem_of(options, tag);
    // Declared before the files, so dropped after their guards have removed them.
    let _watchdog = (ranks > 1).then(|| Watchdog::start(rank, &host));
    let files = prepare(options, comm, &host, &stem, &rank_info, next)?;
    let read_plan = segment(
        options.layout,
        ranks,
        next,
        options.size,
        options.block_size,
    );
    let mut me = Rank {
        options,
        comm,
        harness,
        host,
        rank,
        ranks,
        next,
        seed,
        setup: Setup::single(&Stream),
        write_plan: segment(
            options.layout,
            ranks,
            rank,
            options.size,
            options.block_size,
        ),
        expected: expected_xor(data_seed(options.layout, seed, next), &read_plan),
        read_plan,
        files,
        clock,
    };
    let mut phases: Vec<Phase> = Vec::new();
    if options.phases == Phases::Read && options.existing.is_none() {
        // The files to read, written once, untimed.
        me.write(false)?;
    }
    let mut failed = None;
    for repeat in 1.. {
        if options.phases != Phases::Read {
            add(&mut phases, Op::Write, me.write(true)?);
        }
        if reads {
            match me.read() {
                Ok(r) => add(&mut phases, Op::Read, r),
                // Every rank gets the same kind: all keep what they have and stop here.
                Err(e) => {
                    failed = Some(kept_failure(e, Op::Read, repeat)?);
                    break;
                }
            }
        }
        // Rank 0 alone holds the phases: it decides, and every rank follows.
        let more = rank == 0 && another_run(&options.runs, &phases);
        if comm.broadcast(u64::from(more)) == 0 {
            break;
        }
    }
    if options.keep
        && let Some(out) = me.files.created.as_mut()
    {
        out.keep_on_drop(true);
    }
    if rank != 0 {
        return Ok(None);
    }
    let mut report = me.report(phases, rank_info);
    report.reorder = reorder;
    report.read_existing = options.existing.clone();
    report.failed = failed;
    if options.keep && options.existing.is_none() {
        let owners = if options.layout.shared() { 1 } else { ranks };
        report.kept = Some(Kept {
            files: (0..owners)
                .map(|o| files::display_name(&path_of(&options.dir, options.layout, &stem, o)))
                .collect(),
            name: stem,
            seed,
        });
    }
    Ok(Some(report))
}

/// A phase's failure on some ranks as the report keeps it (the results before it stay),
/// when the work failed; an interruption or an input error still ends the run.
fn kept_failure(e: anyhow::Error, op: Op, repeat: usize) -> Result<FailedPhase> {
    match e.downcast_ref::<RanksFailed>() {
        Some(f) if f.kind == ExitKind::Failed => Ok(FailedPhase {
            op,
            repeat,
            errors: f.lines.clone(),
        }),
        _ => Err(e),
    }
}

/// Creates and opens this rank's files, and removes their names at once where no other
/// host opens them.
fn prepare(
    options: &MpiOptions,
    comm: &dyn Comm,
    host: &str,
    stem: &str,
    rank_info: &[RankInfo],
    source: usize,
) -> Result<Files> {
    let reads = options.phases != Phases::Write;
    let created = agree(comm, host, create(options, comm, stem))?;
    let mut files = agree(comm, host, open(options, comm, stem, created, source))?;
    // Every rank was admitted and holds its file: the free-space claims have done their
    // work, and a rank SIGKILLed from here on must leave no claim file behind.
    if let Some(out) = files.created.as_mut() {
        out.release_claim();
    }
    // Every rank holds what it needs open now. Where no other host opens these files (one
    // host, or a file per rank that only its writer uses) each creator removes its file's
    // name at once: a rank killed with SIGKILL, or a job killed while a rank waits in a
    // collective, then leaves nothing behind (the space is freed when the last rank ends).
    // Across hosts a name stays (NFS serves an open but removed file to its own client
    // only) and the watchdog and the MPI error handler remove it.
    let one_host = comm.broadcast(u64::from(
        comm.rank() == 0 && distinct_hosts(rank_info) == 1 && !hooks::mpi_hosts_apart(),
    )) == 1;
    let private = !options.layout.shared() && !reads;
    if !options.keep && (one_host || private) {
        if let Some(out) = files.created.as_mut()
            && std::fs::remove_file(out.path()).is_ok()
        {
            out.keep_on_drop(true);
        }
        // Until every rank has removed its name, the others' watchdogs still know it.
        comm.barrier();
        scratch().paths.clear();
    }
    Ok(files)
}

/// Whether another run of the phases is worth making: while any phase's aggregate is not
/// yet stable within the budget (`runs`), or below a fixed count.
fn another_run(runs: &Stopping, phases: &[Phase]) -> bool {
    phases.iter().any(|p| {
        let (rates, seconds) = rates_of(p);
        runs.more(&rates, seconds)
    })
}

/// A phase's aggregate rate of each repeat, and the seconds they took (the slowest rank's).
fn rates_of(phase: &Phase) -> (Vec<f64>, f64) {
    let rates = phase
        .repeats
        .iter()
        .map(|r| r.aggregate.bytes_per_second)
        .collect();
    let seconds = phase
        .repeats
        .iter()
        .map(|r| r.aggregate.slowest_seconds)
        .sum();
    (rates, seconds)
}

/// Adds a repeat (rank 0's; `None` elsewhere) to the phase of `op`.
fn add(phases: &mut Vec<Phase>, op: Op, repeat: Option<Repeat>) {
    let Some(repeat) = repeat else { return };
    match phases.iter_mut().find(|p| p.op == op) {
        Some(p) => p.repeats.push(repeat),
        None => phases.push(Phase {
            op,
            repeats: vec![repeat],
            bytes_per_second: one(0.0),
            ior_bytes_per_second: None,
            without_xor_bytes_per_second: None,
            settled: None,
        }),
    }
}

/// This rank's part of the job: what it writes and reads, where, and what it must find.
struct Rank<'a> {
    options: &'a MpiOptions,
    comm: &'a dyn Comm,
    harness: &'a Harness<'a>,
    host: String,
    rank: usize,
    ranks: usize,
    /// The rank whose segment this one reads.
    next: usize,
    seed: u64,
    setup: Setup,
    write_plan: Plan,
    read_plan: Plan,
    /// The checksum the generator gives for the segment read.
    expected: u32,
    files: Files,
    /// The common clock (rank 0; `None` elsewhere).
    clock: Option<Clock>,
}

impl Rank<'_> {
    /// One write of this rank's segment, all ranks starting together; the repeat when
    /// `timed` (on rank 0).
    fn write(&self, timed: bool) -> Result<Option<Repeat>> {
        let (options, files) = (self.options, &self.files);
        if timed && !options.reuse_files {
            agree(self.comm, &self.host, self.empty_files())?;
        }
        // Every rank has emptied (or not) and none writes before the barrier: the size now
        // is what each write starts from.
        let at_start = files.write_file().metadata().map(|m| m.len()).ok();
        let seed = data_seed(options.layout, self.seed, self.rank);
        self.harness.prime(
            Target {
                file: files.write_file(),
                name: &files.write_name,
                kind: InputKind::Regular,
                device: files.device.as_deref(),
            },
            &self.setup,
            Op::Write,
            self.write_plan,
            seed,
        );
        self.comm.barrier();
        let timed_run = || -> Result<(Sample, PhaseTimes)> {
            let open_start = wallclock::now();
            let file = reopen(files.write_file(), &files.write_path, true)?;
            let open_end = wallclock::now();
            let target = Target {
                file: &file,
                name: &files.write_name,
                kind: InputKind::Regular,
                device: files.device.as_deref(),
            };
            let sample =
                self.harness
                    .write_to(target, &self.setup, self.write_plan, seed, false)?;
            let transfer_end = wallclock::now();
            drop(file);
            let close_end = wallclock::now();
            let times = PhaseTimes::from_readings(open_start, open_end, transfer_end, close_end);
            Ok((sample, times))
        };
        let run = timed_run().map(|(sample, times)| RankRun {
            rank: self.rank,
            host: self.host.clone(),
            file: files.write_name.clone(),
            segment_of: self.rank,
            offset: first_byte(&self.write_plan),
            bytes_per_second: sample.bytes_per_second(),
            xor_hex: hex(sample.moved.xor),
            expected_xor_hex: None,
            times: Some(times),
            xor_seconds: None,
            file_bytes_at_start: at_start,
            in_place: None,
            sample,
        });
        let run = agree(self.comm, &self.host, run)?;
        if timed {
            collect(self.comm, run, self.clock.as_ref())
        } else {
            Ok(None)
        }
    }

    /// Empties the files before a repeat's write, as IOR recreates them: each rank its own
    /// file, or rank 0 the shared one (the barrier after it lets no rank write before).
    fn empty_files(&self) -> Result<()> {
        if self.options.layout.shared() && self.rank != 0 {
            return Ok(());
        }
        let files = &self.files;
        files
            .write_file()
            .set_len(0)
            .with_context(|| format!("truncate {}", files.write_name))
    }

    /// Seconds the XOR of `bytes` of this segment's data takes alone, on a buffer of one
    /// block (the size each read call XORs), after the timed read.
    fn xor_alone(&self, bytes: u64) -> f64 {
        let block = self.read_plan.block.clamp(1, 1 << 24);
        let mut buf = vec![0u8; block as usize];
        DataStream::new(data_seed(self.options.layout, self.seed, self.next), 0).fill(&mut buf);
        let (xor, seconds) = self.harness.time(&Claim::default(), || {
            let mut xor = Xor32::new();
            let mut left = bytes;
            while left > 0 {
                let n = left.min(block) as usize;
                xor.update(std::hint::black_box(&buf[..n]));
                left -= n as u64;
            }
            xor.value()
        });
        std::hint::black_box(xor);
        seconds
    }

    /// Puts the segment to read in the cache state asked for (evicted, or read once).
    fn prepare_read(&self, file: &File, target: Target<'_>) -> Result<()> {
        let options = self.options;
        match options.cache {
            // A shared file is evicted whole by every rank: the page cache holds large
            // folios that straddle neighbouring ranks' strided blocks, and DONTNEED on one
            // rank's blocks leaves every folio it only partly covers (measured: 11-34% of
            // the range still resident on 4 strided ranks, 0% once the whole file goes).
            CacheState::Cold if options.layout.shared() => cache::evict_extents(
                file,
                &self.files.read_name,
                std::iter::once((0, options.size.saturating_mul(self.ranks as u64))),
            ),
            CacheState::Cold => {
                cache::evict_extents(file, &self.files.read_name, self.read_plan.extents())
            }
            CacheState::Warm => self
                .harness
                .read(target, &self.setup, self.read_plan, false, CacheState::AsIs)
                .map(drop),
            CacheState::AsIs => Ok(()),
        }
    }

    /// The residency of the segment to read, on a shared file, taken by every rank after
    /// all have prepared and before any reads.
    fn residency_at_start(&self, file: &File) -> Result<cache::Residency> {
        self.read_plan.extents().try_fold(
            cache::Residency {
                resident_pages: 0,
                total_pages: 0,
            },
            |sum, (offset, len)| {
                cache::residency_at(file, &self.files.read_name, offset, len).map(|r| {
                    cache::Residency {
                        resident_pages: sum.resident_pages + r.resident_pages,
                        total_pages: sum.total_pages + r.total_pages,
                    }
                })
            },
        )
    }

    /// One read of the next rank's segment in the cache state asked for, all ranks
    /// starting together, its checksum verified against the generator; the repeat on rank
    /// 0.
    fn read(&self) -> Result<Option<Repeat>> {
        let (comm, host, files) = (self.comm, self.host.as_str(), &self.files);
        let file = files.read.as_ref().expect("reads open a file to read");
        let target = Target {
            file,
            name: &files.read_name,
            kind: InputKind::Regular,
            device: files.device.as_deref(),
        };
        // Test hook (hooks::corrupt): rank 0 damages what it is about to read.
        let hook = if self.rank == 0 {
            // Through the open descriptor: the file may have lost its name already.
            hooks::corrupt(
                &std::path::PathBuf::from(format!(
                    "/proc/self/fd/{}",
                    std::os::fd::AsRawFd::as_raw_fd(file)
                )),
                &files.read_name,
                first_byte(&self.read_plan),
                self.read_plan.block,
            )
        } else {
            Ok(())
        };
        agree(comm, host, hook)?;
        agree(comm, host, self.prepare_read(file, target))?;
        // On a shared file the state that matters is the one at the common start: once the
        // first rank reads, its read-ahead fetches blocks its neighbours will read (strided
        // blocks interleave), so a residency taken by a rank that starts a moment later
        // counts the others' run, not the start. Every rank measures its range after all
        // have evicted and before any reads.
        let shared = self.options.layout.shared() && self.ranks > 1;
        self.harness
            .prime(target, &self.setup, Op::Read, self.read_plan, self.seed);
        comm.barrier();
        let at_start = if shared {
            Some(agree(comm, host, self.residency_at_start(file))?)
        } else {
            None
        };
        comm.barrier();
        let open_start = wallclock::now();
        let opened = reopen(file, &files.read_path, false);
        let open_end = wallclock::now();
        let result = opened
            .and_then(|fresh| {
                let sample = self.harness.read(
                    Target {
                        file: &fresh,
                        ..target
                    },
                    &self.setup,
                    self.read_plan,
                    false,
                    self.options.cache,
                );
                let transfer_end = wallclock::now();
                drop(fresh);
                let close_end = wallclock::now();
                sample.map(|s| {
                    let t =
                        PhaseTimes::from_readings(open_start, open_end, transfer_end, close_end);
                    (s, t)
                })
            })
            .map(|(mut sample, times)| {
                if let Some(start) = at_start {
                    // A process's device bytes say nothing about its own range either (the
                    // neighbours' read-ahead reads it): residency at the start alone
                    // speaks; the device bytes stay recorded.
                    if let Some(p) = sample.cache.as_mut() {
                        let device = p.device_read_bytes;
                        *p = cache::prove(p.asked, Some(start), None, p.bytes, false);
                        p.device_read_bytes = device;
                    }
                }
                (sample, times)
            })
            .and_then(|(sample, times)| {
                let xor_seconds = self.xor_alone(sample.moved.bytes);
                self.verified(sample).map(|run| RankRun {
                    times: Some(times),
                    xor_seconds: Some(xor_seconds),
                    ..run
                })
            });
        let run = agree(comm, host, result)?;
        collect(comm, run, self.clock.as_ref())
    }

    /// The read's run, if every byte it read is in place (checked after its timing, the
    /// segment's offsets against the generator) and its checksum is the generator's.
    fn verified(&self, sample: Sample) -> Result<RankRun> {
        let (next, expected, files) = (self.next, self.expected, &self.files);
        let file = files.read.as_ref().expect("reads open a file to read");
        let in_place = super::inplace::verify(
            self.harness,
            file,
            &files.read_name,
            self.read_plan.extents(),
            Written::Stream(data_seed(self.options.layout, self.seed, next)),
            self.read_plan.block,
        )?;
        if let Some(line) = in_place.mismatch(&files.read_name) {
            return Err(Failure::Check(format!(
                "{line} (read by rank {}, written by rank {next})",
                self.rank
            ))
            .into());
        }
        let got = if hooks::mpi_fails(self.rank, "checksum") {
            sample.moved.xor ^ 1
        } else {
            sample.moved.xor
        };
        if got != expected {
            return Err(Failure::Check(format!(
                "checksum mismatch: read {} of {} (written by rank {next}) from byte {}: XOR {}, the generator says {}",
                crate::units::format_size(sample.moved.bytes),
                files.read_name,
                self.read_plan.start,
                hex(got),
                hex(expected)
            ))
            .into());
        }
        Ok(RankRun {
            rank: self.rank,
            host: self.host.clone(),
            file: files.read_name.clone(),
            segment_of: next,
            offset: first_byte(&self.read_plan),
            bytes_per_second: sample.bytes_per_second(),
            xor_hex: hex(got),
            expected_xor_hex: Some(hex(expected)),
            times: None,
            xor_seconds: None,
            file_bytes_at_start: None,
            in_place: Some(in_place),
            sample,
        })
    }

    /// Rank 0's report: each phase's rate over its repeats, and the warnings of every run.
    fn report(&self, mut phases: Vec<Phase>, rank_info: Vec<RankInfo>) -> MpiReport {
        let options = self.options;
        for phase in &mut phases {
            let (rates, _) = rates_of(phase);
            phase.bytes_per_second = summarize(&rates).unwrap_or_else(|| one(0.0));
            phase.settled = options.runs.outcome(&rates);
            phase.ior_bytes_per_second = over_repeats(phase, |a| a.ior_bytes_per_second);
            phase.without_xor_bytes_per_second =
                over_repeats(phase, |a| a.without_xor_bytes_per_second);
        }
        let mut warnings: Vec<warning::Warning> = phases
            .iter()
            .flat_map(|p| &p.repeats)
            .flat_map(|r| &r.ranks)
            .flat_map(|r| {
                warning::of_sample(
                    &r.sample,
                    Some(format!("{} by rank {}", r.sample_op(), r.rank)),
                )
            })
            .collect();
        // The aggregate of each phase over its repeats: one that the budget stopped before
        // it was stable, or (a fixed count) whose runs scatter.
        warnings.extend(warning::spread(
            options.runs.until_stable(),
            phases.iter().map(|p| {
                (
                    format!("{} aggregate", p.op.name()),
                    &p.bytes_per_second,
                    p.settled,
                    p.repeats.len(),
                )
            }),
        ));
        let hosts = distinct_hosts(&rank_info);
        warnings.extend(warning::interference(phases.iter().flat_map(|p| {
            p.repeats.iter().enumerate().flat_map(move |(i, r)| {
                per_host(p.op, r).into_iter().map(move |(host, marks)| {
                    let on = if hosts > 1 {
                        format!(" on {host}")
                    } else {
                        String::new()
                    };
                    (Some(format!("{} run {}{on}", p.op.name(), i + 1)), marks)
                })
            })
        })));
        MpiReport {
            dir: files::display_name(&options.dir),
            phases_timed: options.phases,
            layout: options.layout,
            ranks: self.ranks,
            hosts: distinct_hosts(&rank_info),
            launched_by_mpirun: self.comm.launched(),
            bytes_per_rank: options.size,
            block_size: options.block_size,
            engine: self.setup.engine.name().to_string(),
            cache: options.cache,
            seed: self.seed,
            rank_info,
            results: phases,
            warnings,
            repeat_files: if options.reuse_files {
                RepeatFiles::Reused
            } else {
                RepeatFiles::Recreated
            },
            clock: self.clock.clone(),
            reorder: None,
            read_existing: None,
            kept: None,
            failed: None,
            until_stable: options.runs.until_stable(),
        }
    }
}

/// What marks one repeat of a phase as taken under interference, per host: the ranks on a
/// host share its devices, so each rank's device count holds its neighbours' bytes. Their
/// own bytes are summed and set against the device's count over the longest rank's run
/// (they start at one barrier, so its window holds the others'); the pressure is that run's.
fn per_host(op: Op, repeat: &Repeat) -> Vec<(String, warning::Marks)> {
    let mut hosts: Vec<&str> = repeat.ranks.iter().map(|r| r.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts
        .into_iter()
        .filter_map(|host| {
            let ranks: Vec<&RankRun> = repeat.ranks.iter().filter(|r| r.host == host).collect();
            let longest = ranks.iter().max_by(|a, b| {
                a.sample
                    .elapsed
                    .seconds
                    .total_cmp(&b.sample.elapsed.seconds)
            })?;
            let own: u64 = ranks
                .iter()
                .map(|r| interference::own_bytes(op, r.sample.moved.bytes, r.sample.kernel))
                .sum();
            let device = longest
                .sample
                .device
                .map(|d| interference::device_bytes(op, d));
            let own_device_bytes = ranks
                .iter()
                .map(|r| warning::Marks::from(&r.sample).own_device_bytes)
                .sum();
            Some((
                host.to_string(),
                warning::Marks {
                    other_io_bytes: device.and_then(|d| interference::beyond(d, own)),
                    pressure: longest.sample.pressure,
                    own_device_bytes,
                },
            ))
        })
        .collect()
}

/// The summary of one aggregate figure over a phase's repeats, when every repeat has it.
fn over_repeats(phase: &Phase, figure: fn(&Aggregate) -> Option<f64>) -> Option<Summary> {
    let values: Option<Vec<f64>> = phase.repeats.iter().map(|r| figure(&r.aggregate)).collect();
    values.and_then(|v| summarize(&v))
}

/// How many hosts the ranks ran on.
fn distinct_hosts(info: &[RankInfo]) -> usize {
    let mut hosts: Vec<&str> = info.iter().map(|r| r.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    hosts.len()
}

/// The offset of a plan's first piece (its start, unless it is an interleaved lane).
fn first_byte(plan: &Plan) -> u64 {
    plan.iter().next().map_or(plan.start, |(offset, _)| offset)
}

/// A summary of one value.
fn one(value: f64) -> Summary {
    summarize(&[value]).expect("one value")
}

/// The ranks' runs of one repeat, reduced and gathered: the repeat on rank 0, `None`
/// elsewhere.
fn collect(comm: &dyn Comm, run: RankRun, clock: Option<&Clock>) -> Result<Option<Repeat>> {
    let total_bytes = comm.sum(run.sample.moved.bytes);
    let slowest_seconds = comm.max(run.sample.elapsed.seconds);
    let mut ranks: Vec<RankRun> = gather_all(comm, &run)?;
    if ranks.is_empty() {
        return Ok(None);
    }
    if let Some(clock) = clock {
        for r in &mut ranks {
            r.times = r.times.map(|t| clock.place(r.rank, t));
        }
    }
    Ok(Some(Repeat {
        aggregate: aggregate(&ranks, total_bytes, slowest_seconds),
        ranks,
    }))
}

/// The figures over all ranks of one repeat: the total and the slowest time come from MPI
/// reductions, the rest from the gathered runs.
pub fn aggregate(ranks: &[RankRun], total_bytes: u64, slowest_seconds: f64) -> Aggregate {
    let time = |r: &RankRun| RankTime {
        rank: r.rank,
        host: r.host.clone(),
        seconds: r.sample.elapsed.seconds,
    };
    let by_time = |a: &&RankRun, b: &&RankRun| {
        a.sample
            .elapsed
            .seconds
            .total_cmp(&b.sample.elapsed.seconds)
    };
    let first = ranks.iter().min_by(by_time).expect("at least one rank");
    let last = ranks.iter().max_by(by_time).expect("at least one rank");
    let rates: Vec<f64> = ranks.iter().map(|r| r.bytes_per_second).collect();
    let ior = ior_aggregate(total_bytes, ranks.iter().map(|r| r.times.as_ref()));
    // Reads: the slowest rank's time less its XOR, when every rank timed its XOR.
    let without_xor: Option<Vec<f64>> = ranks
        .iter()
        .map(|r| {
            r.xor_seconds
                .map(|x| (r.sample.elapsed.seconds - x).max(0.0))
        })
        .collect();
    let without_xor = without_xor
        .and_then(|s| s.into_iter().max_by(f64::total_cmp))
        .filter(|s| *s > 0.0)
        .map(|s| total_bytes as f64 / s);
    Aggregate {
        total_bytes,
        slowest_seconds,
        bytes_per_second: per_second(total_bytes, slowest_seconds),
        first_done: time(first),
        last_done: time(last),
        rank_rates: summarize(&rates).expect("at least one rank"),
        fsync_seconds_max: ranks
            .iter()
            .filter_map(|r| r.sample.fsync_seconds)
            .max_by(f64::total_cmp),
        ior_seconds: ior.map(|(seconds, _)| seconds),
        ior_bytes_per_second: ior.map(|(_, rate)| rate),
        without_xor_bytes_per_second: without_xor,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::NoProgress;

    fn options(dir: &Path, phases: Phases, layout: Layout) -> MpiOptions {
        MpiOptions {
            dir: dir.to_path_buf(),
            phases,
            layout,
            size: 3 << 20,
            block_size: 1 << 20,
            runs: Stopping::fixed(2),
            cache: CacheState::Cold,
            seed: Some(42),
            keep: false,
            reuse_files: false,
            existing: None,
            min_free: Some(0),
            json: true,
        }
    }

    #[test]
    fn one_rank_writes_reads_and_verifies_in_every_layout_and_leaves_nothing() {
        let dir = tempfile::tempdir().expect("temp dir");
        for layout in [
            Layout::FilePerRank,
            Layout::SharedStrided,
            Layout::SharedContiguous,
        ] {
            let harness = Harness::system(&NoProgress);
            let report = execute(&options(dir.path(), Phases::Both, layout), &Solo, &harness)
                .expect("runs")
                .expect("rank 0 gets the report");
            assert_eq!(report.ranks, 1);
            assert!(!report.launched_by_mpirun);
            assert_eq!(report.results.len(), 2, "write and read");
            for phase in &report.results {
                assert_eq!(phase.repeats.len(), 2);
                for repeat in &phase.repeats {
                    let sum: u64 = repeat.ranks.iter().map(|r| r.sample.moved.bytes).sum();
                    assert_eq!(repeat.aggregate.total_bytes, sum);
                    assert_eq!(sum, 3 << 20);
                }
            }
            let read = report.phase(Op::Read).expect("a read phase");
            let run = &read.repeats[0].ranks[0];
            assert_eq!(run.expected_xor_hex.as_deref(), Some(run.xor_hex.as_str()));
            let written = &report.phase(Op::Write).expect("a write phase").repeats[0].ranks[0];
            assert_eq!(written.xor_hex, run.xor_hex, "{layout:?}");
            assert_eq!(
                std::fs::read_dir(dir.path()).expect("list").count(),
                0,
                "scratch files removed"
            );
        }
    }

    #[test]
    fn the_generator_predicts_what_the_engine_wrote_in_an_interleaved_lane() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("shared");
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create");
        let harness = Harness::system(&NoProgress);
        let target = Target {
            file: &file,
            name: "shared",
            kind: InputKind::Regular,
            device: None,
        };
        let setup = Setup::single(&Stream);
        for lane in 0..3 {
            let plan = segment(Layout::SharedStrided, 3, lane, 40_000, 4096);
            let sample = harness
                .write_to(target, &setup, plan, 9, false)
                .expect("write");
            assert_eq!(sample.moved.xor, expected_xor(9, &plan), "lane {lane}");
        }
        // Ten pieces per lane, the last of 3136 bytes: lane 2's ends the file.
        let end = (9 * 3 + 2) * 4096 + 3136;
        assert_eq!(file.metadata().expect("stat").len(), end);
        let plan = segment(Layout::SharedStrided, 3, 1, 40_000, 4096);
        let sample = harness
            .read(target, &setup, plan, false, CacheState::AsIs)
            .expect("read");
        assert_eq!(sample.moved.xor, expected_xor(9, &plan));
        assert_eq!(sample.moved.bytes, 40_000);
    }

    #[test]
    fn a_missing_directory_is_an_input_error_naming_the_rank_and_host() {
        let dir = tempfile::tempdir().expect("temp dir");
        let gone = dir.path().join("gone");
        let harness = Harness::system(&NoProgress);
        let err = execute(
            &options(&gone, Phases::Write, Layout::FilePerRank),
            &Solo,
            &harness,
        )
        .expect_err("no directory");
        let failed = err
            .downcast_ref::<RanksFailed>()
            .expect("a collective failure");
        assert_eq!(failed.kind, ExitKind::Usage);
        assert_eq!(failed.lines.len(), 1);
        let line = &failed.lines[0];
        assert!(
            line.starts_with(&format!("rank 0 on host {}: mpi ", hostname())),
            "{line}"
        );
        assert!(line.contains("No such file or directory"), "{line}");
    }

    /// A rank's write run of `bytes` in `seconds` on `host`, its device having written
    /// `device` bytes over the run (`None`: no block device).
    fn rank_run(rank: usize, host: &str, seconds: f64, bytes: u64, device: Option<u64>) -> RankRun {
        let sample: Sample = serde_json::from_value(serde_json::json!({
            "bytes": bytes, "calls": 1, "xor": 0,
            "elapsed": {"seconds": seconds, "user_seconds": 0.0, "system_seconds": 0.0},
            "fsync_seconds": seconds / 2.0, "cache": null, "kernel": null,
            "device": device.map(|d| serde_json::json!({"read_bytes": 0, "write_bytes": d})),
            "checks": []
        }))
        .expect("a sample");
        RankRun {
            rank,
            host: host.to_string(),
            file: "f".into(),
            segment_of: rank,
            offset: 0,
            bytes_per_second: per_second(bytes, seconds),
            xor_hex: "00000000".into(),
            expected_xor_hex: None,
            times: None,
            xor_seconds: None,
            file_bytes_at_start: None,
            in_place: None,
            sample,
        }
    }

    /// A write phase whose repeats' aggregates ran at `rates` (one rank, 1 s each).
    fn phase_at(rates: &[f64]) -> Phase {
        let repeats = rates
            .iter()
            .map(|&rate| {
                let ranks = vec![rank_run(0, "h", 1.0, rate as u64, None)];
                Repeat {
                    aggregate: aggregate(&ranks, rate as u64, 1.0),
                    ranks,
                }
            })
            .collect();
        Phase {
            op: Op::Write,
            repeats,
            bytes_per_second: one(0.0),
            ior_bytes_per_second: None,
            without_xor_bytes_per_second: None,
            settled: None,
        }
    }

    #[test]
    fn rank_0_repeats_the_phases_until_every_one_is_stable_or_the_budget_is_spent() {
        let budget = crate::options::MPI_RUNS;
        let until = Stopping {
            min_runs: budget.min_runs,
            max_runs: budget.max_runs,
            max_seconds: budget.max_seconds,
            precision: crate::measure::converge::PRECISION,
        };
        let mib = 1_048_576.0;
        let steady = phase_at(&[500.0 * mib; 3]);
        // Three equal runs settle; two do not make the minimum.
        assert!(!another_run(&until, std::slice::from_ref(&steady)));
        assert!(another_run(&until, &[phase_at(&[500.0 * mib; 2])]));
        // One scattered phase keeps both going: a run is a write and a read.
        let scattered = phase_at(&[500.0 * mib, 800.0 * mib, 420.0 * mib]);
        assert!(another_run(&until, &[steady.clone(), scattered]));
        // The run budget ends it however wide the spread.
        let wild: Vec<f64> = (0..10)
            .map(|i| (100 + 400 * (i % 2)) as f64 * mib)
            .collect();
        assert!(!another_run(&until, &[phase_at(&wild)]));
        // So does the time budget: 30 runs of 1 s.
        let slow = Stopping {
            max_runs: 100,
            ..until
        };
        let long: Vec<f64> = (0..30)
            .map(|i| (100 + 400 * (i % 2)) as f64 * mib)
            .collect();
        assert!(!another_run(&slow, &[phase_at(&long)]));
        assert!(another_run(&slow, &[phase_at(&long[..29])]));
        // A fixed count ignores the spread.
        assert!(!another_run(&Stopping::fixed(2), &[phase_at(&[1.0, 9.0])]));
        assert!(another_run(&Stopping::fixed(3), &[phase_at(&[1.0, 1.0])]));
    }

    #[test]
    fn ranks_sharing_a_host_are_not_each_other_s_interference_but_a_stranger_is() {
        const MIB: u64 = 1 << 20;
        let repeat = |ranks: Vec<RankRun>| {
            let total = ranks.iter().map(|r| r.sample.moved.bytes).sum();
            Repeat {
                aggregate: aggregate(&ranks, total, 2.0),
                ranks,
            }
        };
        // Two ranks on one host: each rank's device count holds both ranks' bytes.
        let shared = repeat(vec![
            rank_run(0, "a", 2.0, 256 * MIB, Some(512 * MIB)),
            rank_run(1, "a", 1.5, 256 * MIB, Some(512 * MIB)),
        ]);
        let marks = per_host(Op::Write, &shared);
        assert_eq!(marks.len(), 1);
        assert_eq!(marks[0].1.other_io_bytes, None, "the ranks' own bytes");
        // The same with another process writing 1 GiB beside them.
        let busy = repeat(vec![
            rank_run(0, "a", 2.0, 256 * MIB, Some(1536 * MIB)),
            rank_run(1, "a", 1.5, 256 * MIB, Some(1400 * MIB)),
        ]);
        assert_eq!(
            per_host(Op::Write, &busy)[0].1.other_io_bytes,
            Some(1024 * MIB),
            "the longest run's count less both ranks' bytes"
        );
        // Hosts apart are judged apart: only b's device served someone else.
        let apart = repeat(vec![
            rank_run(0, "a", 2.0, 256 * MIB, Some(256 * MIB)),
            rank_run(1, "b", 2.0, 256 * MIB, Some(1024 * MIB)),
        ]);
        let marks = per_host(Op::Write, &apart);
        assert_eq!(marks[0].1.other_io_bytes, None);
        assert_eq!(marks[1].0, "b");
        assert_eq!(marks[1].1.other_io_bytes, Some(768 * MIB));
    }

    #[test]
    fn the_aggregate_takes_the_slowest_rank_and_names_first_and_last() {
        let run = |rank: usize, seconds: f64, bytes: u64| {
            rank_run(rank, &format!("h{rank}"), seconds, bytes, None)
        };
        let ranks = [run(0, 2.0, 100), run(1, 1.0, 100), run(2, 4.0, 100)];
        let a = aggregate(&ranks, 300, 4.0);
        assert_eq!(a.bytes_per_second, 75.0);
        assert_eq!((a.first_done.rank, a.first_done.host.as_str()), (1, "h1"));
        assert_eq!((a.last_done.rank, a.last_done.seconds), (2, 4.0));
        assert_eq!((a.rank_rates.min, a.rank_rates.max), (25.0, 100.0));
        assert_eq!(a.fsync_seconds_max, Some(2.0));
    }
}
