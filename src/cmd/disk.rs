//! `disk`: the panel engineers know from CrystalDiskMark and KDiskMark (SEQ1M Q8T1, SEQ1M
//! Q1T1, RND4K Q32T1, RND4K Q1T1, read and write), each row for a fixed time on a test file
//! fully written first with incompressible generated data. The bytes move through the queue
//! engine ([`crate::engine::queue`]) with O_DIRECT, `depth` requests kept in flight per
//! thread; where O_DIRECT or the ring is refused the row falls back (buffered, or
//! pread/pwrite one at a time) and says so. The harness's queue loop
//! ([`crate::harness::queue`]) keeps the clock: every completed I/O's latency (from
//! just before the kernel call that submits it to when its completion is reaped: fio's
//! `lat`, its slat + clat) goes into a log-bucketed histogram; the mean number in flight is
//! Σ latency / wall time (Little's law, exact here). This file plans the rows and builds
//! their results. Beside the app's figures, the device's own view of the same stretch from
//! `/proc/diskstats`.
//!
//! With `--series`, each row is also recorded over time ([`crate::measure::series`]): every
//! completion is counted in its interval beside its latency.
//!
//! Data: writes put the generator's bytes for their offsets (the ones the fill wrote), so
//! the file's content never changes and reads stay checkable; one read in
//! [`VERIFY_EVERY`] is checked in place as it completes, after its latency was taken.
//!
//! Failures end a row in one line, never an abort that would leave the scratch file: a
//! worker that fails stops its siblings at once, a thread or buffer that cannot be had is
//! an error, a row that cannot fit under `ulimit -v` is refused before it starts, and a
//! short I/O says when the file shrank under the run.

use crate::engine::buffer::AlignedBuffer;
use crate::engine::queue::{Calls, Completion, Queue, Request, Ring};
use crate::error::input;
use crate::files::{self, OutputFile};
use crate::harness::Harness;
use crate::harness::queue::Feed;
use crate::measure::converge::{Repeats, Stopping};
use crate::measure::devstats::Watch;
use crate::measure::inflight::{InFlight, Window, took};
use crate::measure::series::{Clock, OverTime, Series};
use crate::measure::writeback::DirtyLimits;
use crate::options::{DiskOptions, SeriesOptions};
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::arrivals::Schedule;
use crate::workload::data::DataStream;
use crate::workload::panel::{Offsets, RowSpec};
use crate::workload::verify::{Checker, InPlace, Written};
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

pub use crate::engine::queue::Path;
pub use crate::results::disk::{DiskReport, DiskRow, Latency, VERIFY_EVERY};
use crate::results::disk::{FileHeader, HotShare, MixFigures, MixSide, OpenFigures, SizeCount};
use crate::workload::split::MAX_SIZES;

/// The test file: a scratch file kept alive (removed on drop), or the user's. It is opened
/// once, and every row reopens that descriptor (`/proc/self/fd/N`), never the path: a file,
/// link or device put at the path during the run is never written.
pub(crate) struct Target {
    /// The scratch file (`None`: the user's file).
    pub(crate) guard: Option<OutputFile>,
    /// Where it is.
    pub(crate) path: std::path::PathBuf,
    /// Its size.
    pub(crate) bytes: u64,
    /// The descriptor of its first open, held for the whole run.
    pub(crate) file: File,
    /// Its device and inode at that open: every later open must find the same.
    pub(crate) id: files::FileId,
    /// Whether the scratch file is kept (`--keep`).
    kept: bool,
    /// Whether its name may be a link to it (the user's file, only read): the name is then
    /// followed when checking it still names the file.
    follow: bool,
}

impl Drop for Target {
    fn drop(&mut self) {
        // A scratch file moved away from its name cannot be removed by it (its guard
        // removes only what its name still names): its blocks are given back instead.
        if self.guard.is_some() && !self.kept && !self.named() {
            let _ = self.file.set_len(0);
        }
    }
}

impl Target {
    /// The test file held by `file`, opened first at `path`.
    fn new(guard: Option<OutputFile>, path: std::path::PathBuf, file: File) -> Result<Self> {
        use std::os::unix::fs::MetadataExt;
        let meta = file
            .metadata()
            .with_context(|| format!("fstat {}", files::display_name(&path)))?;
        Ok(Self {
            guard,
            path,
            bytes: meta.len(),
            id: (meta.dev(), meta.ino()),
            file,
            kept: false,
            follow: false,
        })
    }

    /// Keeps the scratch file when `keep` (`--keep` on a complete run); whether it is kept.
    pub(crate) fn keep(&mut self, keep: bool) -> bool {
        match self.guard.as_mut() {
            Some(guard) => {
                guard.keep_on_drop(keep);
                self.kept = keep;
                keep
            }
            None => false,
        }
    }

    /// Whether its name still names it (lstat: a link put there does not).
    fn named(&self) -> bool {
        use std::os::unix::fs::MetadataExt;
        let meta = if self.follow {
            std::fs::metadata(&self.path)
        } else {
            std::fs::symlink_metadata(&self.path)
        };
        meta.is_ok_and(|m| (m.dev(), m.ino()) == self.id)
    }

    /// A path naming the open file itself (`/proc/self/fd/N`), whatever is at its name now;
    /// the name where /proc is not mounted.
    pub(crate) fn fd_path(&self) -> std::path::PathBuf {
        let p = std::path::PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
        if p.exists() { p } else { self.path.clone() }
    }

    /// Refuses `file` unless it is the file first opened (same device and inode).
    fn same(&self, file: &File) -> Result<()> {
        match files::file_id(file) {
            Some(id) if id == self.id => Ok(()),
            _ => Err(anyhow::anyhow!(
                "disk {}: the file was replaced during the run (another file, link or device is at its name now); refusing to measure or write it",
                files::display_name(&self.path)
            )),
        }
    }
}

/// Makes the scratch file in `dir`: `size` bytes of the generator's stream for `seed`,
/// written whole and synced, so no extent is left unwritten.
fn fill(options: &DiskOptions, seed: u64) -> Result<(Target, f64)> {
    let out = files::create_scratch(&options.path, "disk", options.size, options.min_free)?;
    let name = out.name().to_string();
    let chunk = (4 << 20).min(options.size as usize);
    let mut buf = AlignedBuffer::try_new(chunk).ok_or_else(|| {
        anyhow::anyhow!("write {name}: allocate a buffer of {chunk} bytes: out of memory")
    })?;
    let mut stream = DataStream::new(seed, 0);
    let clock = crate::measure::timer::Stopwatch::start();
    let mut at = 0u64;
    while at < options.size {
        crate::interrupt::check()?;
        let n = (options.size - at).min(chunk as u64) as usize;
        stream.fill(&mut buf.as_mut_slice()[..n]);
        out.file()
            .write_all_at(&buf.as_slice()[..n], at)
            .with_context(|| format!("write {name} at byte {at}"))?;
        at += n as u64;
    }
    out.file()
        .sync_all()
        .with_context(|| format!("fsync {name}"))?;
    let seconds = clock.seconds();
    let path = out.path().to_path_buf();
    let file = out
        .file()
        .try_clone()
        .with_context(|| format!("dup the descriptor of {name}"))?;
    Ok((Target::new(Some(out), path, file)?, seconds))
}

/// For tests of the fallbacks on kernels that allow everything (a test hook).
fn refused(what: &str) -> bool {
    crate::hooks::disk_refuses(what)
}

/// Opens for reading the file `file` holds open (`/proc/self/fd/N`: never by a name, which
/// another program may have pointed elsewhere), and checks it is the same file.
pub(crate) fn reopen_for_reading(file: &File) -> std::io::Result<File> {
    let again = File::open(format!("/proc/self/fd/{}", file.as_raw_fd()))?;
    if files::file_id(&again).is_none() || files::file_id(&again) != files::file_id(file) {
        return Err(std::io::Error::from_raw_os_error(libc::ESTALE));
    }
    Ok(again)
}

/// Opens the test file for a row, through the descriptor of its first open (never its name:
/// see [`Target`]), and checks it is still that file: O_DIRECT where allowed, else buffered
/// with the reason.
fn open(target: &Target, write: bool) -> Result<(File, Option<String>)> {
    if !target.named() {
        return Err(anyhow::anyhow!(
            "disk {}: the file at this name was replaced during the run (moved, or another file or a link put there); stopped: nothing is written through the name",
            files::display_name(&target.path)
        ));
    }
    let (file, why) = open_path(&target.fd_path(), &target.path, write)?;
    target.same(&file)?;
    Ok((file, why))
}

/// Opens `path` (`/proc/self/fd/N`, or the name where /proc is not mounted: then without
/// following a link) for a row; `shown` names it in messages.
fn open_path(
    path: &std::path::Path,
    shown: &std::path::Path,
    write: bool,
) -> Result<(File, Option<String>)> {
    let name = files::display_name(shown);
    let opts = |direct: bool| {
        if direct && refused("direct") {
            return Err(std::io::Error::from_raw_os_error(libc::EINVAL));
        }
        let mut o = OpenOptions::new();
        o.read(true).write(write);
        let mut flags = if path == shown { libc::O_NOFOLLOW } else { 0 };
        if direct {
            flags |= libc::O_DIRECT;
        }
        o.custom_flags(flags);
        o.open(path)
    };
    match opts(true) {
        Ok(f) => Ok((f, None)),
        Err(e) => {
            let why = format!("O_DIRECT refused ({})", files::describe(&e));
            let f = opts(false).map_err(|e| {
                input(format!(
                    "open {name} for {}: {}",
                    if write { "writing" } else { "reading" },
                    files::describe(&e)
                ))
            })?;
            Ok((f, Some(why)))
        }
    }
}

/// The offset and size alignment O_DIRECT needs on `file` (its device's logical block,
/// `statx` STATX_DIOALIGN, Linux 6.1+), where the kernel says.
fn direct_alignment(file: &File) -> Option<u64> {
    // SAFETY: statx only writes the zeroed struct we pass; the empty path with AT_EMPTY_PATH
    // names the open descriptor itself.
    let mut stx: libc::statx = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the path is a static NUL-terminated empty string.
    let rc = unsafe {
        libc::statx(
            file.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_DIOALIGN,
            &mut stx,
        )
    };
    (rc == 0 && stx.stx_mask & libc::STATX_DIOALIGN != 0 && stx.stx_dio_offset_align > 1)
        .then_some(u64::from(stx.stx_dio_offset_align))
}

/// What one thread of a row measured.
struct Part {
    times: InFlight,
    verify: Option<InPlace>,
    /// The thread's user and system CPU seconds over its queue loop (after the ramp).
    cpu: (f64, f64),
    /// A mix's reads and writes apart.
    split: Option<Split>,
    /// The I/Os of each size of a row of mixed sizes, in the split's order.
    sizes: [u64; MAX_SIZES],
    /// Where a skewed row's I/Os went (its first thread's).
    hot: Option<crate::workload::skew::HotCount>,
    /// An open-loop row's response times, lags and backlog.
    paced: Option<crate::harness::queue::Paced>,
}

/// A mix's completions apart by direction (0: reads, 1: writes): counts, bytes and
/// latencies, as [`InFlight`] keeps them for the whole row.
struct Split {
    ios: [u64; 2],
    bytes: [u64; 2],
    latency: [hdrhistogram::Histogram<u64>; 2],
}

impl Split {
    fn new() -> Self {
        Self {
            ios: [0; 2],
            bytes: [0; 2],
            latency: [
                crate::measure::latency::histogram(),
                crate::measure::latency::histogram(),
            ],
        }
    }

    /// Counts one completion of direction `op`.
    #[inline]
    fn add(&mut self, op: Op, bytes: u64, latency_ns: u64) {
        let i = usize::from(op == Op::Write);
        self.ios[i] += 1;
        self.bytes[i] += bytes;
        self.latency[i].saturating_record(latency_ns);
    }

    fn merge(mut self, other: Self) -> Result<Self> {
        for i in 0..2 {
            self.ios[i] += other.ios[i];
            self.bytes[i] += other.bytes[i];
            self.latency[i]
                .add(&other.latency[i])
                .map_err(|e| anyhow::anyhow!("merge a mix's latencies: {e}"))?;
        }
        Ok(self)
    }

    /// Direction `i`'s figures over `seconds`.
    fn side(&self, i: usize, seconds: f64) -> MixSide {
        let seconds = seconds.max(1e-12);
        MixSide {
            ios: self.ios[i],
            bytes: self.bytes[i],
            iops: self.ios[i] as f64 / seconds,
            bytes_per_second: self.bytes[i] as f64 / seconds,
            latency_us: if self.ios[i] > 0 {
                Latency::of(&self.latency[i])
            } else {
                Latency::default()
            },
        }
    }
}

/// The stack of a row's worker thread: its buffers and histograms are on the heap, so a
/// quarter of Rust's default 2 MiB is plenty, and 1,024 threads under a limit on the
/// address space (`ulimit -v`) need 512 MiB of it rather than 2 GiB.
const WORKER_STACK: usize = 512 << 10;

/// What a thread needs to run its share of a row.
struct Work<'a> {
    file: &'a File,
    name: &'a str,
    spec: RowSpec,
    start: u64,
    end: u64,
    seed: Option<u64>,
    draw: u64,
    /// The thread's index in the row (the first counts a skewed row's hot share).
    thread: usize,
    window: Window,
    /// Raised when a sibling thread failed (or could not start): the others stop at once
    /// instead of running on to the deadline.
    halt: &'a AtomicBool,
}

impl Work<'_> {
    /// The check of the row's reads (a read row's, a mix's), where the content is known.
    fn checker(&self) -> Option<Checker> {
        let reads = self.spec.op == Op::Read || self.spec.mix.is_some_and(|r| r > 0);
        match self.seed {
            Some(seed) if reads => Some(Checker::new(Written::Stream(seed), self.spec.block)),
            _ => None,
        }
    }
}

/// One row asked of [`run_repeated`]: what to run, for how long, how many times.
pub(crate) struct Asked<'a> {
    /// The row.
    pub spec: RowSpec,
    /// The seed of the file's content.
    pub seed: Option<u64>,
    /// Time per run.
    pub runtime: Duration,
    /// Time each run spends before its figures start.
    pub ramp: Duration,
    /// How many runs: a fixed count, or until the median is stable.
    pub repeat: Stopping,
    /// Keep the fastest run's figures instead of the median (`--best`).
    pub best: bool,
    /// The block device behind the file.
    pub device: Option<&'a str>,
    /// The row over time (options refuse it with more than one run; were it given, the
    /// first run's only).
    pub series: Option<&'a SeriesOptions>,
    /// What the progress line adds after the row's name (`(curve)`).
    pub label: &'a str,
}

/// Runs a row as many times as `asked.repeat` says (a count, or until its median rate is
/// stable), each for `asked.runtime`, and keeps the median run with every run's figures
/// ([`DiskRow::median_of`]).
pub(crate) fn run_repeated(target: &Target, asked: &Asked, harness: &Harness) -> Result<DiskRow> {
    let spec = asked.spec;
    let stop = asked.repeat;
    let mut runs: Vec<DiskRow> = Vec::with_capacity(stop.min_runs);
    let mut repeats = Repeats::new(stop);
    let mut starts = crate::measure::cpus::Starts::new();
    while repeats.more() {
        starts.next();
        let i = runs.len();
        let of = match (stop.is_fixed(), stop.max_runs) {
            (_, 1) => String::new(),
            (true, n) => format!(" (run {} of {n})", i + 1),
            (false, n) => format!(" (run {} of up to {n}, until stable)", i + 1),
        };
        harness.progress.begin(
            &format!("{} {}{}{of}", spec.name(), spec.direction(), asked.label),
            None,
        );
        let series = if i == 0 { asked.series } else { None };
        let row = run_row(
            target,
            spec,
            asked.seed,
            asked.runtime,
            asked.ramp,
            asked.device,
            series,
        );
        harness.progress.end();
        let row = row?;
        repeats.push_marked(row.bytes_per_second, row.seconds, marks(&row).interfered());
        runs.push(row);
    }
    let mut row = if asked.best {
        DiskRow::best_of(runs)
    } else {
        DiskRow::median_of(runs)
    }
    .expect("at least one run");
    row.settled = repeats.outcome();
    Ok(row)
}

/// Runs `spec` on the test file for `runtime`, after `ramp` run but not counted.
pub(crate) fn run_row(
    target: &Target,
    spec: RowSpec,
    seed: Option<u64>,
    runtime: Duration,
    ramp: Duration,
    device: Option<&str>,
    series: Option<&SeriesOptions>,
) -> Result<DiskRow> {
    let name = files::display_name(&target.path);
    let write = spec.writes();
    let (file, direct_refused) = open(target, write)?;
    let uring_refused = crate::engine::queue::ring_refused(spec.depth, refused("uring"));
    let sizes: Vec<u64> = spec.split.map_or(vec![spec.block], |s| {
        s.parts().iter().map(|p| p.bytes).collect()
    });
    if direct_refused.is_none()
        && let Some(align) = direct_alignment(&file)
        && sizes.iter().any(|b| !b.is_multiple_of(align))
    {
        // The kernel would fail every I/O with EINVAL (a 4Kn device, 512-byte blocks).
        return Err(input(format!(
            "disk {name}: the {} row's blocks of {} bytes are not a multiple of {align} bytes, the O_DIRECT alignment of this file's device; give --bs a multiple of {align}",
            spec.name(),
            spec.block
        )));
    }
    let path = Path::of(uring_refused.is_none(), direct_refused.is_none());
    if path.direct() || !write {
        // The file's pages leave the cache first (works without root), as fio's default
        // `invalidate=1` does before each job. Buffered reads would find the fill's pages.
        // Under O_DIRECT, pages left cached (the caveats' sample reads, a fill) send every
        // write through the page cache's invalidation and its completion through a
        // workqueue: in a randrw 70/30 QD16 mix on this VM's ext4 (kernel 6.18), the
        // sample's 304 pages made about 0.9% of the writes complete that way (133 of ~15,000
        // a half second), and a single cached page moved fio's write p99 from 276-309 µs to
        // 253-289.
        crate::measure::cache::evict(&file, &name)?;
    }
    let fallback = match (&uring_refused, &direct_refused) {
        (None, None) => None,
        (u, d) => Some(
            [d.clone(), u.clone()]
                .into_iter()
                .flatten()
                .chain([path.fallback_note().to_string()])
                .collect::<Vec<_>>()
                .join("; "),
        ),
    };
    let limits = series.filter(|_| write).and_then(|_| DirtyLimits::read());
    let recording = series.map(|s| Series::start(s.interval, Clock::Nanos, device));
    // The device's and the machine's counters start with the figures: after the ramp.
    let mut ramping = !ramp.is_zero();
    let mut pressure = (!ramping)
        .then(crate::measure::pressure::PressureProbe::start)
        .flatten();
    let mut watch = device.filter(|_| !ramping).and_then(Watch::start);
    // Bounded by the options (MAX_DISK_RUNTIME_SECONDS); a far deadline rather than a panic
    // anyway, for callers that build the options themselves.
    let window = Window::after(
        ramp,
        runtime,
        Duration::from_secs(crate::options::MAX_DISK_RUNTIME_SECONDS),
    );
    let threads = spec.threads.max(1);
    fits_address_space(&name, spec, path)?;
    let halt = AtomicBool::new(false);
    // The smallest size the file had while the row ran: a write past the end of a file
    // another program truncated grows it back, silently (a read says it: a short I/O).
    let size_before = file.metadata().map_or(target.bytes, |m| m.len());
    let mut smallest = size_before;
    let waiter = std::thread::current();
    let parts: Vec<Result<Part>> = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(threads);
        for t in 0..threads {
            let spawned = {
                let region = target.bytes / threads as u64;
                let start = (region * t as u64) / spec.block * spec.block;
                let end = if spec.random {
                    target.bytes
                } else {
                    start + region.max(spec.block)
                };
                let work = Work {
                    file: &file,
                    name: &name,
                    spec,
                    start: if spec.random { 0 } else { start },
                    end: end.min(target.bytes),
                    seed,
                    draw: seed.unwrap_or(0) ^ ((t as u64 + 1) << 32),
                    thread: t,
                    window,
                    halt: &halt,
                };
                let rec = recording
                    .as_ref()
                    .map(|r| std::sync::Arc::clone(r.recorder()));
                let halt = &halt;
                let waiter = waiter.clone();
                std::thread::Builder::new()
                    .stack_size(WORKER_STACK)
                    .spawn_scoped(s, move || {
                        let _series = rec.as_ref().map(|r| r.enter());
                        let part = part(&work, path);
                        if part.is_err() {
                            halt.store(true, Ordering::Relaxed);
                        }
                        waiter.unpark();
                        part
                    })
            };
            match spawned {
                Ok(h) => handles.push(Ok(h)),
                Err(e) => {
                    // Out of threads (`ulimit -u`) or of memory for a stack (`ulimit -v`):
                    // the ones started stop, and the row fails with the reason.
                    halt.store(true, Ordering::Relaxed);
                    handles.push(Err(anyhow::anyhow!(
                        "disk {name}: start thread {} of {threads} for the {} row: {}; lower --threads",
                        t + 1,
                        spec.name(),
                        files::describe(&e)
                    )));
                    break;
                }
            }
        }
        let running = |handles: &[Result<std::thread::ScopedJoinHandle<'_, Result<Part>>>]| {
            handles
                .iter()
                .any(|h| h.as_ref().is_ok_and(|h| !h.is_finished()))
        };
        // While a write row runs, its file's size is watched (each millisecond, and as
        // each worker ends: the wake-up costs the row no time); the device's counters
        // start as the ramp ends.
        while (write || ramping) && running(&handles) {
            if ramping && std::time::Instant::now() >= window.counting_from() {
                ramping = false;
                pressure = crate::measure::pressure::PressureProbe::start();
                watch = device.and_then(Watch::start);
            }
            if write && let Ok(m) = file.metadata() {
                smallest = smallest.min(m.len());
            }
            std::thread::park_timeout(Duration::from_millis(1));
        }
        handles
            .into_iter()
            .map(|h| {
                h.and_then(|h| {
                    h.join().unwrap_or_else(|_| {
                        Err(anyhow::anyhow!("disk {name}: a worker thread panicked"))
                    })
                })
            })
            .collect()
    });
    let mut latency = crate::measure::latency::histogram();
    let (mut ios, mut bytes, mut busy_ns) = (0u64, 0u64, 0u128);
    let mut cpu = crate::results::disk::CpuUse {
        user_seconds: 0.0,
        system_seconds: 0.0,
    };
    let mut verify: Option<InPlace> = None;
    let mut split: Option<Split> = None;
    let mut sizes = [0u64; MAX_SIZES];
    let mut hot = None;
    let mut paced: Option<crate::harness::queue::Paced> = None;
    for part in parts {
        let part = part?;
        hot = hot.or(part.hot);
        paced = match (paced, part.paced) {
            (Some(a), Some(b)) => Some(a.merge(b)?),
            (a, b) => a.or(b),
        };
        for (all, one) in sizes.iter_mut().zip(part.sizes) {
            *all += one;
        }
        split = match (split, part.split) {
            (Some(a), Some(b)) => Some(a.merge(b)?),
            (a, b) => a.or(b),
        };
        ios += part.times.ios();
        bytes += part.times.bytes();
        busy_ns += part.times.busy_ns();
        cpu.user_seconds += part.cpu.0;
        cpu.system_seconds += part.cpu.1;
        latency
            .add(part.times.latency())
            .map_err(|e| anyhow::anyhow!("disk {name}: merge latencies: {e}"))?;
        verify = match (verify, part.verify) {
            (Some(a), Some(b)) => Some(a.merge(b)),
            (a, b) => a.or(b),
        };
    }
    if write {
        if let Ok(m) = file.metadata() {
            smallest = smallest.min(m.len());
        }
        if smallest < target.bytes {
            return Err(anyhow::anyhow!(
                "write {name}: the file was cut to {smallest} bytes during the {} write row (truncated by another program?) and the row's writes grew it back to {} bytes: its figures are not those of overwriting the file",
                spec.name(),
                file.metadata().map_or(0, |m| m.len())
            ));
        }
    }
    let fsync_seconds = if write {
        let (synced, ns) = took(|| file.sync_data());
        synced.with_context(|| format!("fdatasync {name} after the {} row", spec.name()))?;
        Some(ns as f64 / 1e9)
    } else {
        None
    };
    let seconds = window.seconds();
    let device_view = watch.as_ref().and_then(Watch::finish);
    let pressure = pressure.map(|p| p.finish(seconds));
    let delta = device_view.map(|d| crate::measure::diskstats::DiskDelta {
        read_bytes: d.read_bytes,
        write_bytes: d.write_bytes,
    });
    let mix = split.zip(spec.mix).map(|(s, read_percent)| MixFigures {
        read_percent,
        read: s.side(0, seconds),
        write: s.side(1, seconds),
        device_read_share: device_view
            .filter(|d| d.reads + d.writes > 0)
            .map(|d| d.reads as f64 / (d.reads + d.writes) as f64),
    });
    let other_io_bytes = match &mix {
        // Each direction against the device's bytes in it.
        Some(m) => {
            let other = |op, moved| crate::measure::interference::other_io(op, moved, None, delta);
            match (
                other(Op::Read, m.read.bytes),
                other(Op::Write, m.write.bytes),
            ) {
                (None, None) => None,
                (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
            }
        }
        None => crate::measure::interference::other_io(spec.op, bytes, None, delta),
    };
    let over_time = recording
        .zip(series)
        .map(|(r, s)| OverTime::of(r.finish(), s.interval, write, limits));
    crate::interrupt::check()?;
    let open = spec.pace.zip(paced).map(|(pace, p)| {
        OpenFigures::of(
            pace,
            &p,
            backlog_every(&window).as_secs_f64(),
            spec.depth.max(1) * threads,
        )
    });
    Ok(DiskRow {
        name: spec.name(),
        spec,
        open,
        path,
        fallback,
        skipped: None,
        ios,
        bytes,
        seconds,
        fsync_seconds,
        bytes_per_second: bytes as f64 / seconds.max(1e-12),
        iops: ios as f64 / seconds.max(1e-12),
        latency_us: Latency::of(&latency),
        mean_in_flight: busy_ns as f64 / 1e9 / seconds.max(1e-12),
        device: device_view,
        verify,
        over_time,
        cores: Some(crate::workload::panel::cores()),
        cpu: Some(cpu),
        runs: Vec::new(),
        settled: None,
        best_of: false,
        other_io_bytes,
        pressure,
        mix,
        hot: spec.dist.zip(hot).and_then(|(d, h)| {
            Some(HotShare {
                measured: h.hot_share()?,
                theory: d.hot_share(h.blocks()),
                counted: h.total(),
                blocks: h.blocks(),
                blocks_per_bucket: h.blocks_per_bucket(),
            })
        }),
        sizes: spec.split.map(|s| {
            s.parts()
                .iter()
                .zip(sizes)
                .map(|(p, ios)| SizeCount {
                    bytes: p.bytes,
                    percent: p.percent,
                    ios,
                })
                .collect()
        }),
    })
}

/// Fills `buf` with the generator's bytes for `offset` (writes keep the content).
fn generate(seed: Option<u64>, offset: u64, buf: &mut [u8]) {
    DataStream::new(seed.unwrap_or(0), offset).fill(buf);
}

/// Refuses a row whose threads would not fit under a limit on the address space
/// (`ulimit -v`): past it an allocation fails, and a failed allocation aborts the process,
/// leaving the scratch file behind. Counted generously: per thread its stack, its buffers and
/// 1 MiB for its histograms, and 64 MiB for each malloc arena glibc may reserve for the
/// threads (at most 8 per core).
fn fits_address_space(name: &str, spec: RowSpec, path: Path) -> Result<()> {
    // SAFETY: getrlimit only writes the struct we pass.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0
        || limit.rlim_cur == libc::RLIM_INFINITY
    {
        return Ok(());
    }
    let used = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("VmSize:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024);
    // The arenas glibc already reserved are left out of what is used and counted in what
    // is needed (the row's threads reuse them): whether an earlier thread could reserve one
    // depends on the limit itself, and counting it in both made the check refuse a limit
    // and accept a smaller one.
    let existing = std::fs::read_to_string("/proc/self/maps").map_or(0, |t| arenas_in(&t));
    let used = used.saturating_sub(existing.saturating_mul(ARENA));
    let room = limit.rlim_cur.saturating_sub(used);
    let threads = spec.threads.max(1) as u64;
    let depth = if path.uring() { spec.depth.max(1) } else { 1 } as u64;
    let per_thread = (WORKER_STACK as u64)
        .saturating_add(depth.saturating_mul(spec.block + 4096))
        .saturating_add(1 << 20);
    let arenas = threads
        .min(8 * crate::workload::panel::cores() as u64)
        .max(existing)
        .saturating_mul(ARENA);
    let need = threads.saturating_mul(per_thread).saturating_add(arenas);
    if need > room {
        return Err(input(format!(
            "disk {name}: the {} row's {threads} thread(s) need about {} of address space (stacks, buffers, histograms), more than the {} this process may still map (ulimit -v); lower --threads, --depth or --bs, or raise the limit",
            spec.name(),
            crate::units::format_size(need),
            crate::units::format_size(room)
        )));
    }
    Ok(())
}

/// The address space one glibc malloc arena of a thread reserves (`HEAP_MAX_SIZE`, 64 MiB
/// on 64-bit).
const ARENA: u64 = 64 << 20;

/// The glibc arenas in `maps` (`/proc/self/maps`): anonymous mappings that start on a
/// 64 MiB boundary and, with the anonymous mappings right after them, span exactly 64 MiB.
fn arenas_in(maps: &str) -> u64 {
    let anon: Vec<(u64, u64)> = maps
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (a, b) = f.next()?.split_once('-')?;
            // Address, perms, offset, dev, inode: a path after them is not anonymous.
            if f.nth(4).is_some() {
                return None;
            }
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
            ))
        })
        .collect();
    let mut count = 0;
    for (i, &(start, _)) in anon.iter().enumerate() {
        if !start.is_multiple_of(ARENA) {
            continue;
        }
        let mut end = start;
        for &(a, b) in &anon[i..] {
            if a != end || b > start + ARENA {
                break;
            }
            end = b;
        }
        if end == start + ARENA {
            count += 1;
        }
    }
    count
}

/// One thread's share of a row on `path`: `depth` I/Os in flight through the ring, or one at
/// a time with pread/pwrite, until the deadline.
fn part(w: &Work, path: Path) -> Result<Part> {
    // Sleeps (to an open loop's next arrival, a simulated device's completion) end within
    // microseconds of their moment, not the default 50 µs of timer slack (this thread only).
    // SAFETY: PR_SET_TIMERSLACK takes a number and touches no memory of ours.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
    // A simulated device (a test hook) takes the row's whole depth whatever the path.
    let simulated = crate::hooks::simulated_device();
    let depth = if path.uring() || simulated.is_some() {
        w.spec.depth.max(1)
    } else {
        1
    };
    let mut buffers = Vec::with_capacity(depth);
    for _ in 0..depth {
        buffers.push(buffer(w, depth)?);
    }
    let mut queue: Box<dyn Queue + '_> = if let Some((servers, service)) = simulated {
        Box::new(crate::engine::simulated::Simulated::new(
            buffers, servers, service,
        ))
    } else if path.uring() {
        let whom = format!(
            "{} ({} row, {} threads)",
            w.name,
            w.spec.name(),
            w.spec.threads
        );
        Box::new(Ring::new(w.file, w.name, buffers, &whom)?)
    } else {
        Box::new(Calls::new(w.file, buffers))
    };
    // Mixed sizes: random offsets on the grid of the smallest, with room for the largest.
    let (grid, end) = match w.spec.split {
        Some(s) if w.spec.random => (
            s.smallest(),
            w.end.saturating_sub(s.largest() - s.smallest()),
        ),
        Some(s) => (s.smallest(), w.end),
        None => (w.spec.block, w.end),
    };
    // A skewed row draws block indices from its distribution over the same grid; its first
    // thread counts where they went (every thread draws the same distribution over the
    // same blocks, and one count keeps the memory to one thread's 4 MiB at most).
    let skew = w.spec.dist.filter(|_| w.spec.random).map(|d| {
        let blocks = (end.saturating_sub(w.start) / grid.max(1)).max(1);
        (
            crate::workload::skew::Sampler::new(d, blocks, w.draw),
            (w.thread == 0).then(|| crate::workload::skew::HotCount::new(blocks)),
        )
    });
    let mut feed = RowFeed {
        w,
        grid,
        skew,
        offsets: Offsets::new(w.start, end, grid, w.spec.random, w.draw),
        sizes: [0; MAX_SIZES],
        lengths: w.draw ^ 0x0005_12e5,
        // A simulated device moves no bytes: nothing to check.
        checker: w.checker().filter(|_| simulated.is_none()),
        reads: 0,
        directions: w.draw ^ 0xd1ec_7105,
        split: w.spec.mix.map(|_| Split::new()),
        cpu_from: None,
    };
    let mut times = InFlight::new(depth);
    // An open loop's schedule starts now, after the thread's setup (its buffers, its ring),
    // with its ramp and runtime whole: the row's window opened before it, and a setup of
    // 128 buffers of 1 MiB ate a 0.3 s run.
    let window = match w.spec.pace {
        Some(_) => w.window.again(),
        None => w.window,
    };
    let paced = match w.spec.pace {
        None => {
            crate::harness::queue::run(queue.as_mut(), &mut feed, &window, &mut times)?;
            None
        }
        Some(pace) => {
            let threads = w.spec.threads.max(1);
            let mut schedule = Schedule::new(
                pace.arrivals,
                pace.iops / threads as f64,
                w.thread as f64 / threads as f64,
                w.draw ^ 0x0a77_17a1,
            );
            Some(crate::harness::queue::run_paced(
                queue.as_mut(),
                &mut feed,
                &window,
                &mut times,
                &mut schedule,
                backlog_every(&window),
            )?)
        }
    };
    let after = crate::measure::timer::thread_cpu();
    let before = feed.cpu_from.unwrap_or(after);
    Ok(Part {
        times,
        verify: feed.checker.map(|c| c.found()),
        cpu: ((after.0 - before.0).max(0.0), (after.1 - before.1).max(0.0)),
        split: feed.split,
        sizes: feed.sizes,
        hot: feed.skew.and_then(|(_, h)| h),
        paced,
    })
}

/// How often an open-loop row's backlog is sampled: a hundred times a run, at most every
/// 10 ms.
fn backlog_every(window: &Window) -> Duration {
    let runtime = window
        .deadline()
        .saturating_duration_since(window.counting_from());
    (runtime / 100).max(Duration::from_millis(10))
}

/// A row's requests for the harness's queue loop: the next offset of the row's plan, its
/// direction (a mix's drawn from a seeded hash), a write's bytes from the generator, and
/// one read in [`VERIFY_EVERY`] checked in place.
struct RowFeed<'a> {
    w: &'a Work<'a>,
    /// The offsets' grid: the block, or a split's smallest size.
    grid: u64,
    /// A skewed row's draws of block index, and its count of where they went.
    skew: Option<(
        crate::workload::skew::Sampler,
        Option<crate::workload::skew::HotCount>,
    )>,
    offsets: Offsets,
    checker: Option<Checker>,
    /// Reads seen.
    reads: u64,
    /// The state of a mix's draws of direction.
    directions: u64,
    /// A mix's completions by direction.
    split: Option<Split>,
    /// The thread's CPU clock when the figures started (after the ramp).
    cpu_from: Option<(f64, f64)>,
    /// A row of mixed sizes: the I/Os counted of each size.
    sizes: [u64; MAX_SIZES],
    /// The state of its draws of size.
    lengths: u64,
}

impl RowFeed<'_> {
    /// The next request's direction: the row's, or a mix's draw.
    #[inline]
    fn direction(&mut self) -> Op {
        match self.w.spec.mix {
            None => self.w.spec.op,
            Some(read) => {
                self.directions = self.directions.wrapping_add(1);
                if crate::workload::data::splitmix(self.directions, 0x6d1c) % 100 < u64::from(read)
                {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }
}

impl Feed for RowFeed<'_> {
    fn next(&mut self, id: usize, buf: &mut [u8]) -> Option<Request> {
        let len = match self.w.spec.split {
            None => buf.len(),
            Some(s) => {
                self.lengths = self.lengths.wrapping_add(1);
                s.pick(crate::workload::data::splitmix(self.lengths, 0xb5)) as usize
            }
        };
        // One draw of offset per I/O: a skewed row's from its sampler, else the plan's.
        let offset = match (self.skew.as_mut(), self.w.spec.split) {
            (Some((sampler, _)), _) => self.w.start + sampler.next_block() * self.grid,
            (None, Some(_)) => self.offsets.next_for(len as u64),
            (None, None) => self.offsets.next_offset(),
        };
        let op = self.direction();
        if op == Op::Write {
            generate(self.w.seed, offset, &mut buf[..len]);
        }
        Some(Request {
            id,
            op,
            offset,
            len,
        })
    }

    fn counting(&mut self) {
        self.cpu_from = Some(crate::measure::timer::thread_cpu());
    }

    fn moved(&self, c: &Completion) -> Result<usize> {
        c.whole(self.w.name, || shrunk(self.w))
    }

    fn done(&mut self, c: &Completion, buf: &[u8], latency_ns: Option<u64>) {
        if let (Some(split), Some(ns)) = (self.split.as_mut(), latency_ns) {
            split.add(c.request.op, c.request.len as u64, ns);
        }
        if let (Some((_, Some(hot))), Some(_)) = (self.skew.as_mut(), latency_ns) {
            hot.add((c.request.offset - self.w.start) / self.grid);
        }
        if let (Some(s), Some(_)) = (self.w.spec.split, latency_ns)
            && let Some(i) = s.index_of(c.request.len as u64)
        {
            self.sizes[i] += 1;
        }
        if c.request.op != Op::Read {
            return;
        }
        self.reads += 1;
        if let Some(checker) = self.checker.as_mut()
            && self.reads % VERIFY_EVERY == 1
        {
            checker.check(c.request.offset, &buf[..c.request.len]);
        }
    }

    fn halted(&self) -> bool {
        crate::interrupt::requested() || self.w.halt.load(Ordering::Relaxed)
    }
}

/// A buffer of the row's block size for `w`, or an error naming what did not fit (a limit on
/// the address space): never an abort that would leave the scratch file behind.
fn buffer(w: &Work, count: usize) -> Result<AlignedBuffer> {
    AlignedBuffer::try_new(w.spec.block as usize).ok_or_else(|| {
        anyhow::anyhow!(
            "disk {}: allocate {count} buffers of {} for the {} row: out of memory (ulimit -v?); lower --depth, --threads or --bs",
            w.name,
            crate::units::format_size(w.spec.block),
            w.spec.name()
        )
    })
}

/// `: the file is now N bytes, shorter than when the run began` when another program
/// truncated it during the run (an I/O past its end moves nothing), else nothing.
fn shrunk(w: &Work) -> String {
    match w.file.metadata() {
        Ok(m) if m.len() < w.end => format!(
            ": the file is now {} bytes, shorter than when the run began (truncated by another program?)",
            m.len()
        ),
        _ => String::new(),
    }
}

/// The test file of a run: the scratch file in the directory given, written whole (its
/// seed and the seconds the fill took), or the user's file as it is, opened once here (see
/// [`Target`]).
pub(crate) fn prepare(options: &DiskOptions) -> Result<(Target, Option<u64>, Option<f64>)> {
    let writes = options.rows.iter().any(|r| r.op == Op::Write);
    let (target, seed, fill_seconds) = if let Some(own) = &options.open {
        // The study's scratch file, open since it was made: never reopened by its name.
        let file = own.try_clone().with_context(|| {
            format!(
                "dup the descriptor of {}",
                files::display_name(&options.path)
            )
        })?;
        let target = Target::new(None, options.path.clone(), file)?;
        (target, options.own_file.then_some(options.seed), None)
    } else if options.path.is_dir() {
        let seed = options.seed;
        let (t, s) = fill(options, seed)?;
        (t, Some(seed), Some(s))
    } else {
        let name = files::display_name(&options.path);
        let force_write = options.force_write && writes;
        if force_write {
            // As `run -w`: no write through a link, whatever it leads to.
            files::refuse_symlink(&options.path, &format!("disk {name} --force-write"))?;
        }
        // O_NOFOLLOW with --force-write: a link put there since the check fails the open;
        // O_NONBLOCK: a FIFO put there does not block it (it is refused below).
        let mut flags = libc::O_NONBLOCK;
        if force_write {
            flags |= libc::O_NOFOLLOW;
        }
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(&options.path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::ELOOP) {
                    files::symlink_refusal(&options.path, &format!("disk {name} --force-write"))
                } else {
                    input(format!("disk {name}: {}", files::describe(&e)))
                }
            })?;
        let meta = file
            .metadata()
            .map_err(|e| input(format!("disk {name}: {}", files::describe(&e))))?;
        if !meta.is_file() {
            return Err(input(format!(
                "disk {name}: not a regular file or a directory"
            )));
        }
        // A file of /proc or /sys says 4096 bytes and is a kernel setting: its reads are not
        // storage, and --force-write would write generated bytes into the setting.
        if let Some(fs) = files::pseudo_fs(&file) {
            return Err(input(format!(
                "disk {name}: a file of {fs}, the kernel's interface, not storage; give a file or a directory on a disk"
            )));
        }
        let mut target = Target::new(None, options.path.clone(), file)?;
        target.follow = !force_write;
        if force_write {
            holes_fit(&target, options.min_free)?;
        }
        (target, options.own_file.then_some(options.seed), None)
    };
    let largest = options.rows.iter().map(|r| r.block).max().unwrap_or(0);
    if target.bytes < largest {
        return Err(input(format!(
            "disk {}: the file ({} bytes) is smaller than one block of {largest} bytes",
            files::display_name(&target.path),
            target.bytes
        )));
    }
    Ok((target, seed, fill_seconds))
}

/// Bytes of `file` (of `len` bytes) that have no block yet: holes the write rows will fill.
/// Preallocated (unwritten) extents have their blocks already: st_blocks counts them.
fn unallocated(meta: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    meta.len().saturating_sub(meta.blocks().saturating_mul(512))
}

/// Refuses `--force-write` on a file whose holes, filled by the write rows, would leave less
/// than the margin free (a sparse file on a small file system filled it up).
fn holes_fit(target: &Target, min_free: Option<u64>) -> Result<()> {
    let Ok(meta) = target.file.metadata() else {
        return Ok(());
    };
    let holes = unallocated(&meta);
    if holes == 0 {
        return Ok(());
    }
    let space = files::space(&target.fd_path())?;
    let need = files::Footprint {
        files: 0,
        data: holes,
        bytes: holes.div_ceil(space.block).saturating_mul(space.block),
    };
    files::ensure_room_for(
        space,
        &format!(
            "{} (its {} of holes, which the write rows fill)",
            files::display_name(&target.path),
            crate::units::format_size(holes)
        ),
        need,
        0,
        min_free,
    )
}

/// The head of a disk command's result: `target`, on device `device_name`, of content
/// `seed`, each run asked for `options.runtime` (not kept yet).
pub(crate) fn header(
    target: &Target,
    seed: Option<u64>,
    device_name: Option<String>,
    options: &DiskOptions,
) -> FileHeader {
    FileHeader {
        file: files::display_name(&target.path),
        scratch: target.guard.is_some(),
        kept: false,
        file_bytes: target.bytes,
        device_name,
        seed,
        runtime_seconds: options.runtime.as_secs_f64(),
    }
}

/// Runs the panel (or the one row asked for) and returns the report; `save` gets it after
/// every row.
pub fn execute(
    options: &DiskOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&DiskReport) -> Result<()>,
) -> Result<DiskReport> {
    let (target, seed, fill_seconds) = prepare(options)?;
    let device_name = crate::measure::diskstats::device_of(&target.fd_path());
    // The file's extents and compression as the rows find it, before the first: the write
    // rows fill its holes (a preallocated or sparse file reads as zeros without the
    // device, O_DIRECT or not). Through the descriptor: the file measured, whatever is at
    // its name.
    let caveats = super::caveats::of_read(&target.file, &target.fd_path(), 0, target.bytes, None);
    let holes = crate::measure::extents::map(&target.file, 0, target.bytes)
        .map_or(0, |m| m.unbacked_bytes());
    let mut report = DiskReport {
        header: header(&target, seed, device_name.clone(), options),
        ramp_seconds: options.ramp.as_secs_f64(),
        fill_seconds,
        rows: Vec::new(),
        open_loop: None,
        notes: options.notes.clone(),
        complete: false,
        warnings: Vec::new(),
        caveats,
    };
    let mut run_all = || -> Result<()> {
        for &spec in &options.rows {
            if spec.op == Op::Write && target.guard.is_none() && !options.force_write {
                report.rows.push(skipped(
                    spec,
                    "writes to a file of yours need --force-write",
                ));
                save(&report)?;
                continue;
            }
            let row = run_repeated(
                &target,
                &Asked {
                    spec,
                    seed,
                    runtime: options.runtime,
                    ramp: options.ramp,
                    repeat: options.repeat,
                    best: options.best,
                    device: device_name.as_deref(),
                    series: options.series.as_ref(),
                    label: "",
                },
                harness,
            );
            report.rows.push(row?);
            save(&report)?;
        }
        let peak = report.peak();
        if let (Some(share), Some(peak)) = (options.open_loop, peak) {
            let spec = RowSpec {
                pace: Some(crate::workload::arrivals::Pace {
                    iops: (peak.iops * share).max(1.0),
                    arrivals: crate::workload::arrivals::Arrivals::Poisson,
                }),
                ..peak.spec
            };
            let row = run_repeated(
                &target,
                &Asked {
                    spec,
                    seed,
                    runtime: options.runtime,
                    ramp: options.ramp,
                    repeat: crate::measure::converge::Stopping::fixed(1),
                    best: false,
                    device: device_name.as_deref(),
                    series: None,
                    label: &format!(" open loop at {:.0}% of its peak", share * 100.0),
                },
                harness,
            )?;
            report.open_loop = Some(row);
            save(&report)?;
        }
        Ok(())
    };
    let outcome = run_all();
    let holes = holes_read(&report.rows, holes, report.header.file_bytes);
    report.complete = ended(
        outcome,
        &mut report.warnings,
        holes,
        &report.rows,
        DiskRow::label,
    )?;
    // The link the device sits behind, and the fastest row set against what it carries.
    let fastest = super::caveats::fastest(
        report
            .rows
            .iter()
            .filter(|r| r.measured())
            .map(|r| (r.label(), r.bytes_per_second)),
    );
    report
        .caveats
        .push(super::caveats::link(&target.fd_path(), fastest));
    report.warnings.extend(crate::warning::unsettled(
        report
            .rows
            .iter()
            .filter(|r| r.measured())
            .map(|r| (r.label(), r.settled, r.n())),
        options.repeat.precision,
    ));
    let mut target = target;
    report.header.kept = target.keep(options.keep && report.complete);
    Ok(report)
}

/// The end of a disk command's run, `outcome` being its `run_all`'s: whether it ran to the
/// end. Interrupted, the result is partial (warned); any other error is returned. Then
/// `own` (the command's own warnings) and the interference warnings of `rows` (`at` naming
/// each) are added to `warnings`.
pub(crate) fn ended(
    outcome: Result<()>,
    warnings: &mut Vec<Warning>,
    own: impl IntoIterator<Item = Warning>,
    rows: &[DiskRow],
    at: impl Fn(&DiskRow) -> String,
) -> Result<bool> {
    let complete = match outcome {
        Ok(()) => true,
        Err(e) if crate::error::exit_kind(&e) == crate::error::ExitKind::Interrupted => {
            warnings.push(Warning::Partial);
            false
        }
        Err(e) => return Err(e),
    };
    warnings.extend(own);
    warnings.extend(interference(rows, at));
    Ok(complete)
}

/// The warning that the read rows before the first write measured holes (or unwritten
/// extents) of `holes` bytes of the file's `of`: zeros the file system made up, not the
/// device's reads. `None` without holes or such a row.
fn holes_read(rows: &[DiskRow], holes: u64, of: u64) -> Option<Warning> {
    if holes == 0 {
        return None;
    }
    let rows: Vec<String> = rows
        .iter()
        .take_while(|r| r.spec.op == Op::Read || !r.measured())
        .filter(|r| r.spec.op == Op::Read && r.measured())
        .map(|r| format!("{} read", r.name))
        .collect();
    (!rows.is_empty()).then_some(Warning::Holes {
        bytes: holes,
        of,
        rows,
    })
}

/// The interference warnings of measured rows (`at` naming each): other I/O on the device
/// and stalls, the worst named.
pub(crate) fn interference(rows: &[DiskRow], at: impl Fn(&DiskRow) -> String) -> Vec<Warning> {
    crate::warning::interference(
        rows.iter()
            .filter(|r| r.measured())
            .map(|r| (Some(at(r)), marks(r))),
    )
}

/// What marks a row as run under interference. The row reads or writes the device itself
/// (O_DIRECT): its I/O wait is its own.
fn marks(r: &DiskRow) -> crate::warning::Marks {
    crate::warning::Marks {
        other_io_bytes: r.other_io_bytes,
        pressure: r.pressure,
        own_device_bytes: r.bytes,
    }
}

/// A row not run, and why.
fn skipped(spec: RowSpec, why: &str) -> DiskRow {
    DiskRow {
        name: spec.name(),
        spec,
        path: Path::UringDirect,
        fallback: None,
        skipped: Some(why.to_string()),
        ios: 0,
        bytes: 0,
        seconds: 0.0,
        fsync_seconds: None,
        bytes_per_second: 0.0,
        iops: 0.0,
        latency_us: Latency::default(),
        mean_in_flight: 0.0,
        device: None,
        verify: None,
        over_time: None,
        cores: None,
        cpu: None,
        runs: Vec::new(),
        settled: None,
        best_of: false,
        other_io_bytes: None,
        pressure: None,
        mix: None,
        sizes: None,
        hot: None,
        open: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::latency::histogram;

    #[test]
    fn percentiles_of_merged_histograms_rise_with_the_quantile() {
        let mut a = histogram();
        for v in [1_000u64, 2_000, 3_000, 50_000] {
            a.saturating_record(v);
        }
        let mut all = histogram();
        all.add(&a).expect("auto-resizing");
        let l = Latency::of(&all);
        eprintln!("{l:?}");
        assert!(l.p50 > 0.0 && l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.max);
        assert!((l.max - 50.0).abs() < 0.1, "{l:?}");
    }
}
