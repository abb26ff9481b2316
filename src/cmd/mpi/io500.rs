//! `mpi io500`: an IO500-like preset (explicitly not the official IO500 score). Eight
//! phases in IO500's order: ior-easy write (a file per rank, large transfers), a small-file
//! create (a directory per rank, 3,901-byte files as mdtest-hard writes), ior-hard write (one
//! shared file, 47,008-byte records interleaved across the ranks), then ior-easy read, stat
//! of the small files, ior-hard read, small-file read and delete. Every read, stat and
//! delete works on another rank's data (IOR's `-C` shift from [`Reorder`]).
//!
//! Each write or create phase is bounded by a stonewall with wear-out: a rank stops issuing
//! new transfers (or files) when the stonewall time has passed since its phase started,
//! the ranks agree (an MPI max) on the largest count any reached, and every rank completes
//! to that count, so the later phases cover the same data on every rank. Each phase's
//! figure is IOR's aggregate: everything moved over (latest end − earliest start) on the
//! common clock. Reads are checked in place against the generator (ior-hard's records at
//! their interleaved offsets), small files by their content.
//!
//! The bytes move through plain `pwrite`/`pread` calls here, not the engine table: the
//! stonewall is checked between transfers, which the harness's whole-plan runs cannot do.

use super::ior::{Clock, PhaseTimes, Reorder, ior_aggregate, measure_clock};
use super::watchdog::{Watchdog, register_tree};
use super::{Comm, agree, gather_all, hostname};
use crate::files;
use crate::harness::Harness;
use crate::hooks;
use crate::measure::cache;
use crate::measure::wallclock;
use crate::options::Io500Options;
pub use crate::results::mpi::io500::{
    BadFiles, GIB, HARD_RECORD, Io500Phase, Io500Report, Kind, RankPhase, SMALL_FILE, Score,
    Stonewall, geometric_mean, invalid_reasons,
};
use crate::workload::data::{DataStream, fresh_seed};
use crate::workload::layout::Layout;
use crate::workload::layout::data_seed;
use crate::workload::verify::{InPlace, Written};
use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// This rank's job: who it is, whose data it reads, where the files are.
struct Job<'a> {
    options: &'a Io500Options,
    comm: &'a dyn Comm,
    harness: &'a Harness<'a>,
    host: String,
    rank: usize,
    ranks: usize,
    source: usize,
    seed: u64,
    dir: PathBuf,
    clock: Option<Clock>,
}

/// Removes the job's directory when the job ends (rank 0; unless `--keep`).
struct JobDir {
    path: PathBuf,
    remove: bool,
}

impl Drop for JobDir {
    fn drop(&mut self) {
        if self.remove {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// What one rank did in a stonewalled phase.
#[derive(Debug, Clone, Copy)]
struct WoreOut {
    at_stonewall: u64,
    by_time: bool,
    completed: u64,
}

/// One rank's figures, as gathered.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Gathered {
    part: RankPhase,
    at_stonewall: Option<u64>,
    by_time: Option<bool>,
    in_place: Option<InPlace>,
    bad_files: Option<BadFiles>,
}

impl Job<'_> {
    fn easy_seed(&self, owner: usize) -> u64 {
        data_seed(Layout::FilePerRank, self.seed, owner)
    }
    fn hard_seed(&self) -> u64 {
        self.seed ^ 0x6a09_e667_f3bc_c908
    }
    fn small_seed(&self, owner: usize) -> u64 {
        data_seed(
            Layout::FilePerRank,
            self.seed ^ 0xbb67_ae85_84ca_a73b,
            owner,
        )
    }
    fn easy_path(&self, owner: usize) -> PathBuf {
        self.dir.join(format!("easy-{owner}"))
    }
    fn hard_path(&self) -> PathBuf {
        self.dir.join("hard")
    }
    fn small_dir(&self, owner: usize) -> PathBuf {
        self.dir.join(format!("md-{owner}"))
    }
    fn small_path(&self, owner: usize, n: u64) -> PathBuf {
        self.small_dir(owner).join(format!("f{n}"))
    }

    /// Runs `step(n)` for n = 0, 1, ... until the stonewall or `cap`; then the ranks agree
    /// on the largest count and every rank completes to it.
    fn wear_out(&self, cap: u64, mut step: impl FnMut(u64) -> Result<()>) -> Result<WoreOut> {
        let limit = self.options.stonewall.as_secs_f64();
        let slow = hooks::io500_slowed(self.rank);
        let start = wallclock::now();
        let mut first = || -> Result<(u64, bool)> {
            let mut n = 0;
            while n < cap {
                if wallclock::now() - start >= limit {
                    return Ok((n, true));
                }
                if slow {
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                crate::interrupt::check()?;
                step(n)?;
                n += 1;
            }
            Ok((n, false))
        };
        let (at, by_time) = agree(self.comm, &self.host, first())?;
        // Counts stay far below 2^53, where f64 holds every integer exactly.
        let target = self.comm.max(at as f64) as u64;
        let rest = (at..target).try_for_each(|n| {
            crate::interrupt::check()?;
            step(n)
        });
        agree(self.comm, &self.host, rest)?;
        Ok(WoreOut {
            at_stonewall: at,
            by_time,
            completed: target,
        })
    }

    /// Gathers every rank's part to rank 0 and builds the phase there.
    fn phase(
        &self,
        name: &str,
        kind: Kind,
        mine: Gathered,
        cap: Option<u64>,
    ) -> Result<Option<Io500Phase>> {
        let all: Vec<Gathered> = agree(self.comm, &self.host, gather_all(self.comm, &mine))?;
        if all.is_empty() {
            return Ok(None);
        }
        let mut ranks: Vec<RankPhase> = all.iter().map(|g| g.part.clone()).collect();
        if let Some(clock) = &self.clock {
            for r in &mut ranks {
                r.times = clock.place(r.rank, r.times);
            }
        }
        let total_bytes = ranks.iter().map(|r| r.bytes).sum();
        let total_ops = ranks.iter().map(|r| r.count).sum();
        let amount = match kind {
            Kind::Bandwidth => total_bytes,
            Kind::Metadata => total_ops,
        };
        let (seconds, per_second) =
            ior_aggregate(amount, ranks.iter().map(|r| Some(&r.times))).unwrap_or((0.0, 0.0));
        let stonewall = cap.map(|cap| Stonewall {
            seconds: self.options.stonewall.as_secs_f64(),
            at_stonewall: all.iter().map(|g| g.at_stonewall.unwrap_or(0)).collect(),
            stopped_by_time: all.iter().map(|g| g.by_time.unwrap_or(false)).collect(),
            completed_to: ranks.iter().map(|r| r.count).max().unwrap_or(0),
            cap,
        });
        let mut phase = Io500Phase {
            name: name.to_string(),
            kind,
            ranks,
            total_bytes,
            total_ops,
            seconds,
            per_second,
            stonewall,
            verified_in_place: InPlace::merged(all.iter().filter_map(|g| g.in_place.as_ref())),
            bad_files: all
                .iter()
                .filter_map(|g| g.bad_files.clone())
                .reduce(|a, b| BadFiles {
                    checked: a.checked + b.checked,
                    bad: a.bad + b.bad,
                    first: a.first.or(b.first),
                }),
            invalid: Vec::new(),
        };
        phase.invalid = invalid_reasons(&phase);
        Ok(Some(phase))
    }

    fn part(&self, data_of: usize, count: u64, bytes: u64, times: PhaseTimes) -> Gathered {
        Gathered {
            part: RankPhase {
                rank: self.rank,
                data_of,
                count,
                bytes,
                times,
            },
            at_stonewall: None,
            by_time: None,
            in_place: None,
            bad_files: None,
        }
    }

    /// ior-easy write: this rank's own file, transfers until the stonewall, fsync, close.
    fn easy_write(&self) -> Result<Option<Io500Phase>> {
        let t = self.options.transfer;
        let cap = self.options.easy_cap_bytes / t;
        let path = self.easy_path(self.rank);
        let seed = self.easy_seed(self.rank);
        self.comm.barrier();
        let open_start = wallclock::now();
        let file = agree(self.comm, &self.host, create_new(&path))?;
        let open_end = wallclock::now();
        let mut buf = vec![0u8; t as usize];
        let worn = self.wear_out(cap, |n| {
            DataStream::new(seed, n * t).fill(&mut buf);
            file.write_all_at(&buf, n * t).with_context(|| {
                format!("write {} at {}", crate::text::printable_path(&path), n * t)
            })
        })?;
        let synced = file
            .sync_all()
            .with_context(|| format!("fsync {}", crate::text::printable_path(&path)));
        agree(self.comm, &self.host, synced)?;
        let transfer_end = wallclock::now();
        drop(file);
        let close_end = wallclock::now();
        let times = PhaseTimes::from_readings(open_start, open_end, transfer_end, close_end);
        let mut mine = self.part(self.rank, worn.completed, worn.completed * t, times);
        mine.at_stonewall = Some(worn.at_stonewall);
        mine.by_time = Some(worn.by_time);
        self.phase("ior-easy-write", Kind::Bandwidth, mine, Some(cap))
    }

    /// ior-hard write: records of 47,008 bytes at (i × ranks + rank) × record in one file.
    fn hard_write(&self) -> Result<Option<Io500Phase>> {
        let r = HARD_RECORD;
        let cap = self.options.easy_cap_bytes.div_ceil(r);
        let path = self.hard_path();
        if self.rank == 0 {
            agree(self.comm, &self.host, create_new(&path).map(drop))?;
        } else {
            agree(self.comm, &self.host, Ok(()))?;
        }
        self.comm.barrier();
        let open_start = wallclock::now();
        let opened = std::fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .with_context(|| format!("open {} for writing", crate::text::printable_path(&path)));
        let file = agree(self.comm, &self.host, opened)?;
        let open_end = wallclock::now();
        let seed = self.hard_seed();
        let mut buf = vec![0u8; r as usize];
        let (rank, ranks) = (self.rank as u64, self.ranks as u64);
        let worn = self.wear_out(cap, |i| {
            let at = (i * ranks + rank) * r;
            DataStream::new(seed, at).fill(&mut buf);
            file.write_all_at(&buf, at)
                .with_context(|| format!("write {} at {at}", crate::text::printable_path(&path)))
        })?;
        let synced = file
            .sync_all()
            .with_context(|| format!("fsync {}", crate::text::printable_path(&path)));
        agree(self.comm, &self.host, synced)?;
        let transfer_end = wallclock::now();
        drop(file);
        let close_end = wallclock::now();
        let times = PhaseTimes::from_readings(open_start, open_end, transfer_end, close_end);
        let mut mine = self.part(self.rank, worn.completed, worn.completed * r, times);
        mine.at_stonewall = Some(worn.at_stonewall);
        mine.by_time = Some(worn.by_time);
        self.phase("ior-hard-write", Kind::Bandwidth, mine, Some(cap))
    }

    /// Reads `extents` of `path` (evicted first, every rank before any reads), then checks
    /// them in place against `written`.
    fn ior_read(
        &self,
        name: &str,
        path: &Path,
        extents: &[(u64, u64)],
        written: Written,
        block: u64,
    ) -> Result<Option<Io500Phase>> {
        let label = files::display_name(path);
        let prepared = (|| -> Result<()> {
            let file = File::open(path).with_context(|| {
                format!("open {} for reading", crate::text::printable_path(path))
            })?;
            if hooks::io500_corrupting(self.rank)
                && let Some(&(at, _)) = extents.first()
            {
                hooks::flip_byte(path, at)?;
            }
            let len = file
                .metadata()
                .with_context(|| format!("stat {}", crate::text::printable_path(path)))?
                .len();
            cache::evict_extents(&file, &label, std::iter::once((0, len)))
        })();
        agree(self.comm, &self.host, prepared)?;
        self.comm.barrier();
        let open_start = wallclock::now();
        let run = (|| -> Result<(File, f64, f64, u64)> {
            let file = File::open(path).with_context(|| {
                format!("open {} for reading", crate::text::printable_path(path))
            })?;
            let open_end = wallclock::now();
            let mut buf = vec![0u8; block as usize];
            let mut bytes = 0;
            for &(at, len) in extents {
                crate::interrupt::check()?;
                let n = len as usize;
                file.read_exact_at(&mut buf[..n], at).with_context(|| {
                    format!("read {} at {at}", crate::text::printable_path(path))
                })?;
                std::hint::black_box(&buf[..n]);
                bytes += len;
            }
            let transfer_end = wallclock::now();
            Ok((file, open_end, transfer_end, bytes))
        })();
        let (file, open_end, transfer_end, bytes) = agree(self.comm, &self.host, run)?;
        let check = File::open(path)
            .with_context(|| format!("open {} for reading", crate::text::printable_path(path)));
        drop(file);
        let close_end = wallclock::now();
        let checked = check.and_then(|f| {
            super::super::inplace::verify(
                self.harness,
                &f,
                &label,
                extents.iter().copied(),
                written,
                block,
            )
        });
        let in_place = agree(self.comm, &self.host, checked)?;
        let times = PhaseTimes::from_readings(open_start, open_end, transfer_end, close_end);
        let mut mine = self.part(self.source, extents.len() as u64, bytes, times);
        mine.in_place = Some(in_place);
        self.phase(name, Kind::Bandwidth, mine, None)
    }

    /// Small files: this rank's directory, files of 3,901 bytes until the stonewall.
    fn small_create(&self) -> Result<Option<Io500Phase>> {
        let dir = self.small_dir(self.rank);
        agree(
            self.comm,
            &self.host,
            std::fs::create_dir(&dir)
                .with_context(|| format!("mkdir {}", crate::text::printable_path(&dir))),
        )?;
        let seed = self.small_seed(self.rank);
        let mut buf = vec![0u8; SMALL_FILE as usize];
        self.comm.barrier();
        let start = wallclock::now();
        let worn = self.wear_out(self.options.files, |n| {
            let path = self.small_path(self.rank, n);
            DataStream::new(seed, n * SMALL_FILE).fill(&mut buf);
            let file = create_new(&path)?;
            file.write_all_at(&buf, 0)
                .with_context(|| format!("write {}", crate::text::printable_path(&path)))
        })?;
        let end = wallclock::now();
        let times = PhaseTimes::from_readings(start, start, end, end);
        let mut mine = self.part(
            self.rank,
            worn.completed,
            worn.completed * SMALL_FILE,
            times,
        );
        mine.at_stonewall = Some(worn.at_stonewall);
        mine.by_time = Some(worn.by_time);
        self.phase("md-create", Kind::Metadata, mine, Some(self.options.files))
    }

    /// One pass over the source rank's `count` small files with `op`, timed from the first
    /// to the last; `op` returns the bytes it moved and whether the file was as written.
    fn small_pass(
        &self,
        name: &str,
        count: u64,
        mut op: impl FnMut(&Path, u64) -> Result<(u64, Option<String>)>,
        checks_content: bool,
    ) -> Result<Option<Io500Phase>> {
        self.comm.barrier();
        let start = wallclock::now();
        let run = (|| -> Result<(u64, BadFiles)> {
            let mut bytes = 0;
            let mut bad = BadFiles {
                checked: 0,
                bad: 0,
                first: None,
            };
            for n in 0..count {
                crate::interrupt::check()?;
                let (b, wrong) = op(&self.small_path(self.source, n), n)?;
                bytes += b;
                bad.checked += 1;
                if let Some(w) = wrong {
                    bad.bad += 1;
                    bad.first.get_or_insert(w);
                }
            }
            Ok((bytes, bad))
        })();
        let (bytes, bad) = agree(self.comm, &self.host, run)?;
        let end = wallclock::now();
        let times = PhaseTimes::from_readings(start, start, end, end);
        let mut mine = self.part(self.source, count, bytes, times);
        if checks_content {
            mine.bad_files = Some(bad);
        }
        self.phase(name, Kind::Metadata, mine, None)
    }
}

/// Creates `path`, refusing one that exists.
fn create_new(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("create {}", crate::text::printable_path(path)))
}

/// Runs `mpi io500` on this rank; rank 0 gets the report, the others `None`.
pub fn execute(
    options: &Io500Options,
    comm: &dyn Comm,
    harness: &Harness,
) -> Result<Option<Io500Report>> {
    let (rank, ranks) = (comm.rank(), comm.size());
    let host = hostname();
    let seed = comm.broadcast(options.seed.unwrap_or_else(fresh_seed));
    let tag = comm.broadcast(u64::from(std::process::id()));
    let hosts: Vec<String> = agree(comm, &host, gather_all(comm, &host))?;
    let reorder = (rank == 0).then(|| Reorder::of_hosts(&hosts));
    let shift = comm.broadcast(reorder.as_ref().map_or(0, |r| r.shift as u64)) as usize;
    let clock = agree(comm, &host, measure_clock(comm, &hosts))?;
    let dir = options.dir.join(format!(".ioscope-io500-{tag}"));
    // Declared before the directory's guard, so dropped after it has removed the tree. A
    // rank stopped inside MPI (a peer killed, mpirun's SIGTERM) removes the tree itself:
    // its files are opened by name by other ranks, so none can lose its name early.
    let _watchdog = (ranks > 1).then(|| Watchdog::start(rank, &host));
    let made = if rank == 0 {
        prepare_dir(options, ranks, &dir)
    } else {
        Ok(())
    };
    agree(comm, &host, made)?;
    if !options.keep {
        register_tree(&dir);
    }
    let _guard = JobDir {
        path: dir.clone(),
        remove: rank == 0 && !options.keep,
    };
    let job = Job {
        options,
        comm,
        harness,
        host,
        rank,
        ranks,
        source: (rank + shift) % ranks.max(1),
        seed,
        dir,
        clock,
    };
    let mut phases = Vec::new();
    let mut push = |p: Option<Io500Phase>| phases.extend(p);
    let easy = job.easy_write()?;
    // Every rank completed to the same count: rank 0's figure is every rank's.
    let easy_count = comm.broadcast(easy.as_ref().map_or(0, |p| p.ranks[0].count));
    push(easy);
    let create = job.small_create()?;
    let files = comm.broadcast(create.as_ref().map_or(0, |p| p.ranks[0].count));
    push(create);
    let hard = job.hard_write()?;
    let records = comm.broadcast(hard.as_ref().map_or(0, |p| p.ranks[0].count));
    push(hard);

    let t = options.transfer;
    let easy_extents: Vec<(u64, u64)> = (0..easy_count).map(|n| (n * t, t)).collect();
    push(job.ior_read(
        "ior-easy-read",
        &job.easy_path(job.source),
        &easy_extents,
        Written::Stream(job.easy_seed(job.source)),
        t,
    )?);
    push(job.small_pass(
        "md-stat",
        files,
        |path, _| {
            let len = std::fs::metadata(path)
                .with_context(|| format!("stat {}", crate::text::printable_path(path)))?
                .len();
            Ok((
                0,
                (len != SMALL_FILE)
                    .then(|| format!("{}: {len} bytes", crate::text::printable_path(path))),
            ))
        },
        false,
    )?);
    let (source, lanes) = (job.source as u64, ranks as u64);
    let hard_extents: Vec<(u64, u64)> = (0..records)
        .map(|i| ((i * lanes + source) * HARD_RECORD, HARD_RECORD))
        .collect();
    push(job.ior_read(
        "ior-hard-read",
        &job.hard_path(),
        &hard_extents,
        Written::Stream(job.hard_seed()),
        HARD_RECORD,
    )?);
    let small_seed = job.small_seed(job.source);
    if hooks::io500_corrupting(rank) && files > 0 {
        agree(
            comm,
            &job.host,
            hooks::flip_byte(&job.small_path(job.source, 0), 0),
        )?;
    } else {
        agree(comm, &job.host, Ok(()))?;
    }
    let mut want = vec![0u8; SMALL_FILE as usize];
    push(job.small_pass(
        "md-read",
        files,
        |path, n| {
            let got = std::fs::read(path)
                .with_context(|| format!("read {}", crate::text::printable_path(path)))?;
            DataStream::new(small_seed, n * SMALL_FILE).fill(&mut want);
            let wrong = crate::workload::verify::first_difference(&got, &want)
                .map(|at| format!("{}: byte {at}", files::display_name(path)))
                .or_else(|| {
                    (got.len() != want.len())
                        .then(|| format!("{}: {} bytes", files::display_name(path), got.len()))
                });
            Ok((got.len() as u64, wrong))
        },
        true,
    )?);
    push(job.small_pass(
        "md-delete",
        files,
        |path, _| {
            std::fs::remove_file(path)
                .with_context(|| format!("remove {}", crate::text::printable_path(path)))?;
            Ok((0, None))
        },
        false,
    )?);
    comm.barrier();
    if rank != 0 {
        return Ok(None);
    }
    let score = Score::of(&phases);
    Ok(Some(Io500Report {
        dir: files::display_name(&options.dir),
        official_io500_score: false,
        ranks,
        hosts: {
            let mut h = hosts.clone();
            h.sort_unstable();
            h.dedup();
            h.len()
        },
        launched_by_mpirun: comm.launched(),
        stonewall_seconds: options.stonewall.as_secs_f64(),
        easy_transfer_bytes: options.transfer,
        easy_cap_bytes: options.easy_cap_bytes / t * t,
        hard_record_bytes: HARD_RECORD,
        hard_cap_records: options.easy_cap_bytes.div_ceil(HARD_RECORD),
        small_file_bytes: SMALL_FILE,
        small_files_cap: options.files,
        seed,
        reorder: reorder.expect("rank 0 picks the reordering"),
        clock: job.clock.clone(),
        hosts_of_ranks: hosts,
        score,
        phases,
    }))
}

/// Checks the directory and the room for every phase at its cap, then makes the job's
/// directory.
fn prepare_dir(options: &Io500Options, ranks: usize, dir: &Path) -> Result<()> {
    let name = files::display_name(&options.dir);
    match std::fs::metadata(&options.dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(crate::error::input(format!(
                "mpi io500 {name}: not a directory"
            )));
        }
        Err(e) => {
            return Err(crate::error::input(format!(
                "mpi io500 {name}: {}",
                files::describe(&e)
            )));
        }
    }
    // Every phase at its cap: the blocks, and an inode for each file and directory.
    let space = files::space(&options.dir)?;
    let need = footprint(options, ranks, space.block);
    ensure_inodes(options, &name, ranks, need.files)?;
    files::ensure_room_for(space, &name, need, 0, options.min_free)?;
    std::fs::create_dir(dir).with_context(|| format!("mkdir {}", crate::text::printable_path(dir)))
}

/// What the job takes at its caps on a file system of `block`-byte blocks: every rank's
/// ior-easy file and small files, the shared ior-hard file, and the directories (the job's
/// and one per rank), each file's blocks and metadata counted.
pub fn footprint(options: &Io500Options, ranks: usize, block: u64) -> files::Footprint {
    let ranks = ranks as u64;
    let times = |one: files::Footprint, n: u64| files::Footprint {
        files: one.files.saturating_mul(n),
        data: one.data.saturating_mul(n),
        bytes: one.bytes.saturating_mul(n),
    };
    let easy = options.easy_cap_bytes / options.transfer * options.transfer;
    let hard = options
        .easy_cap_bytes
        .div_ceil(HARD_RECORD)
        .saturating_mul(HARD_RECORD)
        .saturating_mul(ranks);
    let parts = [
        times(files::Footprint::of_file(easy, block), ranks),
        files::Footprint::of_file(hard, block),
        times(
            files::Footprint::of_file(SMALL_FILE, block),
            options.files.saturating_mul(ranks),
        ),
        times(files::Footprint::of_file(0, block), ranks + 1),
    ];
    parts
        .into_iter()
        .fold(files::Footprint::default(), |sum, p| files::Footprint {
            files: sum.files.saturating_add(p.files),
            data: sum.data.saturating_add(p.data),
            bytes: sum.bytes.saturating_add(p.bytes),
        })
}

/// The inodes of the file system holding `dir`: all of them, and those an unprivileged
/// writer may still take; `None` where it does not count them (btrfs reports 0 of 0).
fn inodes(dir: &Path) -> Result<Option<(u64, u64)>> {
    let c_path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).with_context(|| {
        format!(
            "statvfs {}: path contains a NUL byte",
            crate::text::printable_path(dir)
        )
    })?;
    // SAFETY: statvfs only writes into the zeroed struct we pass; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the duration of the call.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut st) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("statvfs {}", crate::text::printable_path(dir)));
    }
    // The fields are u64 on 64-bit Linux but narrower elsewhere: the casts stay.
    #[allow(clippy::unnecessary_cast)]
    let (total, available) = (st.f_files as u64, st.f_favail as u64);
    Ok((total > 0).then_some((total, available)))
}

/// Refuses, with the numbers, a job whose files and directories at their caps would leave
/// fewer inodes free than the margin: 10% of the file system's (none with `--min-free 0`),
/// as blocks keep theirs. Many small files run out of inodes long before out of space.
fn ensure_inodes(options: &Io500Options, name: &str, ranks: usize, need: u64) -> Result<()> {
    let Some((total, available)) = inodes(&options.dir)? else {
        return Ok(());
    };
    let margin = if options.min_free == Some(0) {
        0
    } else {
        total / 10
    };
    if need.saturating_add(margin) > available {
        return Err(crate::error::input(format!(
            "mpi io500 {name}: not enough free inodes: {ranks} rank(s) create up to {need} files and directories (--files {} each, and their ior files), {available} of {total} can still be created, and {margin} must stay free (10% of them; none with --min-free 0): lower --files or use another file system",
            options.files
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footprint_counts_an_inode_for_every_file_and_directory_at_the_caps() {
        let options = Io500Options {
            dir: PathBuf::from("."),
            stonewall: std::time::Duration::from_secs(1),
            transfer: 1 << 20,
            easy_cap_bytes: 16 << 20,
            files: 1000,
            seed: None,
            keep: false,
            min_free: None,
            json: false,
        };
        let f = footprint(&options, 4, 4096);
        // 4 easy files, 1 hard file, 4,000 small files, 5 directories.
        assert_eq!(f.files, 4 + 1 + 4000 + 5);
        // Each small file takes two blocks (data and metadata), not 3,901 bytes.
        assert!(f.bytes >= 4000 * 2 * 4096 + 4 * (16 << 20), "{f:?}");
    }

    fn phase(kind: Kind, per_second: f64) -> Io500Phase {
        Io500Phase {
            name: "p".into(),
            kind,
            ranks: Vec::new(),
            total_bytes: 0,
            total_ops: 0,
            seconds: 2.0,
            per_second,
            stonewall: None,
            verified_in_place: None,
            bad_files: None,
            invalid: Vec::new(),
        }
    }

    #[test]
    fn the_geometric_means_combine_bandwidth_and_metadata_as_io500_does() {
        let phases = [
            phase(Kind::Bandwidth, 2.0 * GIB),
            phase(Kind::Bandwidth, 8.0 * GIB),
            phase(Kind::Metadata, 1000.0),
            phase(Kind::Metadata, 9000.0),
        ];
        let s = Score::of(&phases);
        assert!((s.bandwidth_gib_per_second - 4.0).abs() < 1e-9);
        assert!((s.metadata_kiops - 3.0).abs() < 1e-9);
        assert!((s.combined - 12f64.sqrt()).abs() < 1e-9);
        assert_eq!(geometric_mean([3.0, 0.0]), 0.0);
        assert_eq!(geometric_mean([]), 0.0);
    }

    #[test]
    fn a_stonewall_that_stopped_no_rank_and_a_phase_shorter_than_it_are_each_named() {
        let mut p = phase(Kind::Bandwidth, 1.0);
        p.seconds = 0.5;
        p.stonewall = Some(Stonewall {
            seconds: 1.0,
            at_stonewall: vec![4, 4],
            stopped_by_time: vec![false, false],
            completed_to: 4,
            cap: 4,
        });
        let why = invalid_reasons(&p);
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(why[0].contains("did not bind"), "{why:?}");
        assert!(why[1].contains("shorter than its stonewall"), "{why:?}");
    }

    #[test]
    fn a_phase_too_short_to_time_is_invalid_whatever_its_rate() {
        let mut p = phase(Kind::Metadata, 200.0);
        p.seconds = 0.0;
        let why = invalid_reasons(&p);
        assert_eq!(why.len(), 1, "{why:?}");
        assert!(why[0].contains("too short"), "{why:?}");
    }

    #[test]
    fn a_phase_that_lasted_past_a_stonewall_that_stopped_one_rank_is_valid() {
        // The other rank reached the cap before the time: one rank stopped by time is enough.
        let mut p = phase(Kind::Metadata, 1.0);
        p.seconds = 1.2;
        p.stonewall = Some(Stonewall {
            seconds: 1.0,
            at_stonewall: vec![7, 3],
            stopped_by_time: vec![false, true],
            completed_to: 7,
            cap: 7,
        });
        assert!(invalid_reasons(&p).is_empty());
    }

    #[test]
    fn a_read_that_failed_verification_is_invalid_with_its_first_bad_byte() {
        let mut p = phase(Kind::Bandwidth, 1.0);
        p.verified_in_place = Some(InPlace {
            block_bytes: HARD_RECORD,
            blocks: 10,
            bytes: 10 * HARD_RECORD,
            bad_blocks: 1,
            first_bad_offset: Some(94_016),
            seconds: 0.0,
        });
        let why = invalid_reasons(&p);
        assert_eq!(why.len(), 1);
        assert!(why[0].contains("first bad byte 94016"), "{why:?}");
    }
}
