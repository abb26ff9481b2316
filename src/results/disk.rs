//! The result of `disk`: one row per test of the panel, with its latency percentiles.

pub use crate::engine::queue::Path;
use crate::measure::devstats::DeviceView;
use crate::measure::series::OverTime;
use crate::measure::verdict::Figure;
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::panel::RowSpec;
use crate::workload::verify::InPlace;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// One completed read in this many is checked in place against the generator.
pub const VERIFY_EVERY: u64 = 8;

/// Latency percentiles of every completed I/O of a row, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Latency {
    /// The mean.
    pub mean: f64,
    /// The median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// 99.99th percentile.
    pub p99_99: f64,
    /// The slowest.
    pub max: f64,
}

impl Latency {
    /// The percentiles of `h` (nanoseconds) in microseconds.
    pub fn of(h: &Histogram<u64>) -> Self {
        let us = |ns: u64| ns as f64 / 1000.0;
        Self {
            mean: h.mean() / 1000.0,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            p99_99: us(h.value_at_quantile(0.9999)),
            max: us(h.max()),
        }
    }

    /// The percentiles in order, named: p50 … max.
    pub fn named(&self) -> [(&'static str, f64); 6] {
        [
            ("p50", self.p50),
            ("p90", self.p90),
            ("p99", self.p99),
            ("p99.9", self.p99_9),
            ("p99.99", self.p99_99),
            ("max", self.max),
        ]
    }
}

/// One measured row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskRow {
    /// `SEQ1M Q8T1`.
    pub name: String,
    /// What was asked.
    pub spec: RowSpec,
    /// How the bytes moved.
    pub path: Path,
    /// Why it is not the ring with O_DIRECT (`Path::UringDirect`), when it is not.
    pub fallback: Option<String>,
    /// Why the row was not run (a write to the user's FILE without --force-write).
    pub skipped: Option<String>,
    /// I/Os completed.
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Wall time from the first submission to the last completion (and, for writes, the
    /// closing fdatasync).
    pub seconds: f64,
    /// The closing fdatasync of a write row, inside `seconds`.
    pub fsync_seconds: Option<f64>,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// I/Os per second.
    pub iops: f64,
    /// Latency of every completed I/O, microseconds.
    pub latency_us: Latency,
    /// Mean I/Os the app had in flight (Σ latency / wall time).
    pub mean_in_flight: f64,
    /// The device's own view of the row (`None`: no block device behind the file).
    pub device: Option<DeviceView>,
    /// Reads checked in place (a sample, see [`VERIFY_EVERY`]).
    pub verify: Option<InPlace>,
    /// The row over time (`--series`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub over_time: Option<OverTime>,
    /// The cores the machine had when the row ran (its threads beyond them took turns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cores: Option<usize>,
    /// The CPU its threads used while their I/O ran (each thread's own clock around its
    /// queue loop, summed), as fio's `usr`/`sys` and DiskSpd's CPU columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuUse>,
    /// Each run of a repeated row (`--repeat`), in the order run: the row's
    /// `bytes_per_second` and `iops` are their medians, and the rest of the row (latency,
    /// device, checks) is its median run's. Empty: the row ran once (every file written
    /// before repeats).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub runs: Vec<RowRun>,
    /// How the repeats ended when they ran until stable (absent with `--repeat`): the
    /// relative half-width of the median's 95% interval, and whether it came within the
    /// precision asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<crate::measure::converge::Settled>,
    /// The row's figures are its fastest run's (`--best`, CrystalDiskMark's figure), not
    /// the median of its runs.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub best_of: bool,
    /// Bytes the device moved in the row's direction beyond the row's own, when clearly
    /// more: another process's I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// Stalls on the CPU, I/O and memory over the row (`/proc/pressure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::measure::pressure::Pressure>,
    /// A mix's reads and writes apart (`--rw randrw`, a panel's Mix row).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<MixFigures>,
    /// An open-loop row (`--rate`): the rate asked and held, response beside service time
    /// (`latency_us` is the service time), the backlog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenFigures>,
    /// A skewed row (`--dist`): the share of its I/Os on the hottest 10% of blocks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hot: Option<HotShare>,
    /// A row of mixed sizes (`--bs 4k:60,64k:30`): the I/Os completed of each size, in the
    /// split's order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<SizeCount>>,
}

/// Where a skewed row's I/Os went: the share on the hottest 10% of its blocks, measured
/// (its first thread's I/Os, the hot set chosen on half of them and measured on the other
/// half, so that chance does not make a uniform row look skewed) and as the distribution
/// says.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HotShare {
    /// The measured share (0–1).
    pub measured: f64,
    /// The distribution's share.
    pub theory: f64,
    /// I/Os counted.
    pub counted: u64,
    /// Blocks they were drawn over.
    pub blocks: u64,
    /// Blocks per counter: above 1, the share is of the hottest 10% of buckets of that
    /// many neighbouring blocks (it then reads low: the hot blocks are scattered).
    pub blocks_per_bucket: u64,
}

/// The I/Os of one size a row of mixed sizes completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeCount {
    /// Bytes per I/O.
    pub bytes: u64,
    /// The percent of I/Os asked of this size.
    pub percent: u8,
    /// I/Os of this size completed.
    pub ios: u64,
}

/// One direction of a mix: its share of the row's I/O.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MixSide {
    /// I/Os completed.
    pub ios: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// I/Os per second (over the row's time).
    pub iops: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Latency of its I/Os, µs.
    pub latency_us: Latency,
}

/// The share of the rate asked an open-loop row must achieve to have held it.
pub const HELD_SHARE: f64 = 0.95;

/// An open-loop row's figures beyond a closed-loop row's (`disk --rate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpenFigures {
    /// I/Os per second asked (all threads).
    pub asked_iops: f64,
    /// How the arrivals were spaced.
    pub arrivals: crate::workload::arrivals::Arrivals,
    /// I/Os per second completed by the deadline of those that arrived in the counted
    /// window, over the window's length.
    pub achieved_iops: f64,
    /// The most the row may keep in flight (depth × threads): an arrival that finds them all
    /// busy waits, timed from its intended start.
    pub cap: usize,
    /// The most it had in flight at once (the threads' maxima added).
    pub most_in_flight: usize,
    /// Response time: completion − intended start, µs (the service time is the row's
    /// `latency_us`).
    pub response_us: Latency,
    /// How late I/Os were issued: issue − intended start, µs.
    pub lag_us: Latency,
    /// Arrivals issued in the counted window.
    pub issued: u64,
    /// Arrivals of the window never issued (the device could not keep up); in the response
    /// percentiles at the time they had waited when the run ended, a lower bound.
    pub unissued: u64,
    /// Seconds an arrival waited because every slot was in flight (the cap held it back).
    pub capped_seconds: f64,
    /// The backlog (arrived, not complete) sampled every `backlog_every_seconds`.
    pub backlog: Vec<u64>,
    /// Seconds between the backlog's samples.
    pub backlog_every_seconds: f64,
    /// How fast the backlog grew, I/Os per second (least squares over the samples): about 0
    /// where the device keeps up.
    pub backlog_change_per_second: f64,
}

impl OpenFigures {
    /// The figures of a run at `pace` whose threads' accounts add up to `paced`, `ios`
    /// completed and counted; `cap`: depth × threads.
    pub fn of(
        pace: crate::workload::arrivals::Pace,
        paced: &crate::harness::queue::Paced,
        every: f64,
        cap: usize,
    ) -> Self {
        let latency = |h: &Histogram<u64>| {
            if h.is_empty() {
                Latency::default()
            } else {
                Latency::of(h)
            }
        };
        Self {
            asked_iops: pace.iops,
            arrivals: pace.arrivals,
            achieved_iops: paced.completed as f64 / paced.seconds.max(1e-12),
            cap,
            most_in_flight: paced.most_in_flight.min(cap),
            response_us: latency(&paced.response),
            lag_us: latency(&paced.lag),
            issued: paced.issued,
            unissued: paced.unissued,
            capped_seconds: paced.capped_ns as f64 / 1e9,
            backlog_change_per_second: slope(&paced.backlog, every),
            backlog: paced.backlog.clone(),
            backlog_every_seconds: every,
        }
    }

    /// Whether the row held the rate asked: it achieved [`HELD_SHARE`] of it and left no
    /// more than 1% of the arrivals unissued.
    pub fn held(&self) -> bool {
        self.achieved_iops >= HELD_SHARE * self.asked_iops
            && (self.unissued as f64) <= 0.01 * (self.issued + self.unissued).max(1) as f64
    }
}

/// The least-squares slope of `samples` taken every `every` seconds, per second.
pub fn slope(samples: &[u64], every: f64) -> f64 {
    let n = samples.len() as f64;
    if samples.len() < 2 || every <= 0.0 {
        return 0.0;
    }
    let mean_x = (n - 1.0) / 2.0 * every;
    let mean_y = samples.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, &y) in samples.iter().enumerate() {
        let dx = i as f64 * every - mean_x;
        sxy += dx * (y as f64 - mean_y);
        sxx += dx * dx;
    }
    // A flat backlog gives rounding noise (3e-16), not a slope: below a millionth of an I/O
    // per second it is 0 (a document refuses figures that near zero as made up).
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    if slope.abs() < 1e-6 { 0.0 } else { slope }
}

/// A mix row's reads and writes apart, and the share that read as the app and the device
/// counted it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MixFigures {
    /// The percent of I/Os asked to read.
    pub read_percent: u8,
    /// Its reads.
    pub read: MixSide,
    /// Its writes.
    pub write: MixSide,
    /// The share of the device's completed requests that were reads (`/proc/diskstats`;
    /// `None` without a block device or a request).
    pub device_read_share: Option<f64>,
}

/// How far (in points of percent) the app's and the device's read shares of a mix may be
/// apart before it is said: half a point.
pub const MIX_SHARE_POINTS: f64 = 0.5;

impl MixFigures {
    /// The share of the app's completed I/Os that read (0–1).
    pub fn read_share(&self) -> f64 {
        let all = self.read.ios + self.write.ios;
        if all == 0 {
            0.0
        } else {
            self.read.ios as f64 / all as f64
        }
    }

    /// Whether the device's read share is further than [`MIX_SHARE_POINTS`] from the app's.
    pub fn shares_disagree(&self) -> bool {
        self.device_read_share
            .is_some_and(|d| (100.0 * (d - self.read_share())).abs() > MIX_SHARE_POINTS)
    }
}

/// The IOPS a mix reading `read_share` of its I/Os would reach if each I/O took what it
/// takes in its pure row: the harmonic mean of the pure rows' IOPS weighted by the shares
/// (time per I/O adds up: r/R + (1−r)/W). `None` without both rates.
pub fn predicted_mix_iops(read_share: f64, read_iops: f64, write_iops: f64) -> Option<f64> {
    (read_iops > 0.0 && write_iops > 0.0)
        .then(|| 1.0 / (read_share / read_iops + (1.0 - read_share) / write_iops))
}

/// One run of a repeated row: its figures.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RowRun {
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// I/Os per second.
    pub iops: f64,
    /// The 99th percentile of its latency, microseconds.
    pub p99_us: f64,
}

/// A row is CPU-bound when its threads kept the cores they could have busy for at least
/// this share of its time: 90%. The figure is then the CPU's, not the device's.
pub const CPU_BOUND: f64 = 0.9;

/// The CPU a row's threads used while their I/O ran (the panel's rows: their own threads;
/// the sync rows: the whole process, whose one thread runs them with io_uring's workers).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuUse {
    /// Seconds in user mode.
    pub user_seconds: f64,
    /// Seconds in the kernel.
    pub system_seconds: f64,
}

/// The shortest timed loop whose CPU is counted, seconds. Reading the CPU costs about a
/// microsecond and rounds to one, so a row of a few operations (`--runtime 1us`) would show
/// more CPU per op than its ops took; from 10 ms on, that is under a thousandth.
pub const CPU_COUNTED_FROM_SECONDS: f64 = 0.01;

impl CpuUse {
    /// User and system CPU microseconds per one of `count` operations; `None` for none.
    pub fn us_per(&self, count: u64) -> Option<(f64, f64)> {
        (count > 0).then(|| {
            (
                1e6 * self.user_seconds / count as f64,
                1e6 * self.system_seconds / count as f64,
            )
        })
    }

    /// The CPU between two readings of (user, system) seconds over a loop of `seconds` and
    /// `ops` operations; `None` when the loop did nothing or was too short to count
    /// ([`CPU_COUNTED_FROM_SECONDS`]).
    pub fn between(before: (f64, f64), after: (f64, f64), seconds: f64, ops: u64) -> Option<Self> {
        (ops > 0 && seconds >= CPU_COUNTED_FROM_SECONDS).then(|| Self {
            user_seconds: (after.0 - before.0).max(0.0),
            system_seconds: (after.1 - before.1).max(0.0),
        })
    }
}

impl DiskRow {
    /// The row as every line and table names it: its name and direction, `RND4K Q32T1
    /// read`, `RND4K Q32T1 mix 70/30`.
    pub fn label(&self) -> String {
        format!("{} {}", self.name, self.spec.direction())
    }

    /// User and system CPU microseconds per I/O.
    pub fn cpu_us_per_io(&self) -> Option<(f64, f64)> {
        self.cpu?.us_per(self.ios)
    }

    /// The share of the cores its threads could use (one each, at most the machine's) that
    /// they kept busy over the row's time.
    pub fn core_share(&self) -> Option<f64> {
        let cpu = self.cpu?;
        let cores = self
            .cores
            .unwrap_or(usize::MAX)
            .min(self.spec.threads.max(1));
        (self.seconds > 0.0)
            .then(|| (cpu.user_seconds + cpu.system_seconds) / (self.seconds * cores as f64))
    }

    /// Whether its threads were busy on the CPU nearly all the time ([`CPU_BOUND`]).
    pub fn cpu_bound(&self) -> bool {
        self.core_share().is_some_and(|s| s >= CPU_BOUND)
    }
}

/// Whether `x` is 0 (a field left out of the document).
fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// The file a disk command measured and the seconds each run was asked for: the head of
/// the panel's, the curve's and the rates' results, flattened into each (the documents'
/// keys and their order are those of the fields it replaced). `fill_seconds` is not in it:
/// the rates write `ramp_seconds` before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileHeader {
    /// The file measured.
    pub file: String,
    /// Whether it was a scratch file made (and written) for the run.
    pub scratch: bool,
    /// Whether that scratch file was kept (`--keep`): it is the user's now, at `file`. Only
    /// the panel says so (the curve and the rates leave it false and so out).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub kept: bool,
    /// Its size.
    pub file_bytes: u64,
    /// The block device behind it, if any.
    pub device_name: Option<String>,
    /// The seed of its content (`None`: the user's file, not checkable).
    pub seed: Option<u64>,
    /// Seconds each row, depth or rate ran for (asked).
    pub runtime_seconds: f64,
}

/// The result of `disk`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiskReport {
    /// The file measured, its size, device and seed, and the seconds each row ran for.
    #[serde(flatten)]
    pub header: FileHeader,
    /// Seconds the fill of the scratch file took (write + fdatasync).
    pub fill_seconds: Option<f64>,
    /// The rows, in the order run.
    pub rows: Vec<DiskRow>,
    /// One row in an open loop at a share of the peak of the first random read row with a
    /// queue (the study's disk part: half of RND4K Q32T1's), its reads Poisson arrivals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_loop: Option<DiskRow>,
    /// What the preset's rows became on this machine (threads capped at the cores, a row
    /// left out for want of cores).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<crate::workload::panel::PanelNote>,
    /// Seconds each run spent before its figures started (`--ramp`), 0 without.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_seconds: f64,
    /// Whether every row ran.
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
    /// What could make these figures wrong (see `report::caveats`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<crate::measure::caveat::Caveat>,
}

impl DiskRow {
    /// Whether the row ran and completed I/O: a figure, not a skipped or empty row.
    pub fn measured(&self) -> bool {
        self.skipped.is_none() && self.ios > 0
    }

    /// How many runs the row's figures are of (1 for a row run once).
    pub fn n(&self) -> usize {
        self.runs.len().max(1)
    }

    /// The row's bytes per second: the median with the range of its runs.
    pub fn rate(&self) -> Figure {
        self.figure(self.bytes_per_second, |r| r.bytes_per_second)
    }

    /// The row's IOPS: the median with the range of its runs.
    pub fn iops_figure(&self) -> Figure {
        self.figure(self.iops, |r| r.iops)
    }

    fn figure(&self, median: f64, of: impl Fn(&RowRun) -> f64) -> Figure {
        if self.runs.is_empty() {
            return Figure::one(median);
        }
        let min = self.runs.iter().map(&of).fold(f64::INFINITY, f64::min);
        let max = self.runs.iter().map(&of).fold(f64::NEG_INFINITY, f64::max);
        Figure {
            median,
            min,
            max,
            n: self.runs.len(),
        }
    }

    /// One row of `runs` (the same spec, in the order run): with one run, that run; with
    /// more, the run whose bytes per second is the median (the lower of the two middle ones
    /// for an even count) with `bytes_per_second` and `iops` set to the medians of all and
    /// every run's figures in `runs`. A skipped or empty run is returned as it is.
    pub fn median_of(mut runs: Vec<DiskRow>) -> Option<DiskRow> {
        if runs.len() <= 1 || runs.iter().any(|r| !r.measured()) {
            return runs.pop();
        }
        let figures = Self::figures_of(&runs);
        let median = |of: fn(&RowRun) -> f64| {
            let mut v: Vec<f64> = figures.iter().map(of).collect();
            v.sort_by(f64::total_cmp);
            let m = v.len() / 2;
            if v.len() % 2 == 1 {
                v[m]
            } else {
                (v[m - 1] + v[m]) / 2.0
            }
        };
        let bytes_per_second = median(|r| r.bytes_per_second);
        let iops = median(|r| r.iops);
        let middle =
            crate::measure::stats::median_index_by(runs.len(), |i| runs[i].bytes_per_second)
                .expect("more than one run");
        let mut row = runs.swap_remove(middle);
        row.bytes_per_second = bytes_per_second;
        row.iops = iops;
        row.runs = figures;
        Some(row)
    }

    /// One row of `runs` whose figures are the fastest run's, whole (`--best`: the figure
    /// CrystalDiskMark prints), with every run's figures beside them and the row marked
    /// [`DiskRow::best_of`]; one run, or a run that did not measure, as [`DiskRow::median_of`].
    pub fn best_of(mut runs: Vec<DiskRow>) -> Option<DiskRow> {
        if runs.len() <= 1 || runs.iter().any(|r| !r.measured()) {
            return Self::median_of(runs);
        }
        let figures = Self::figures_of(&runs);
        let fastest = (0..runs.len())
            .max_by(|&a, &b| {
                runs[a]
                    .bytes_per_second
                    .total_cmp(&runs[b].bytes_per_second)
            })
            .expect("more than one run");
        let mut row = runs.swap_remove(fastest);
        row.runs = figures;
        row.best_of = true;
        Some(row)
    }

    fn figures_of(runs: &[DiskRow]) -> Vec<RowRun> {
        runs.iter()
            .map(|r| RowRun {
                bytes_per_second: r.bytes_per_second,
                iops: r.iops,
                p99_us: r.latency_us.p99,
            })
            .collect()
    }
}

impl DiskReport {
    /// The measured row named `name` (`RND4K Q32T1`) doing `op`, if the panel has one.
    pub fn row(&self, name: &str, op: Op) -> Option<&DiskRow> {
        self.rows
            .iter()
            .find(|x| x.name == name && x.spec.op == op && x.spec.mix.is_none() && x.measured())
    }

    /// The peak row: the first measured random pure read with a queue (the panel's RND4K
    /// Q32T1), whose IOPS the open loop is a share of.
    pub fn peak(&self) -> Option<&DiskRow> {
        self.rows.iter().find(|r| {
            r.spec.random
                && r.spec.op == Op::Read
                && r.spec.mix.is_none()
                && r.spec.depth > 1
                && r.measured()
        })
    }

    /// Whether every byte checked was in place.
    pub fn ok(&self) -> bool {
        self.rows
            .iter()
            .all(|r| r.verify.as_ref().is_none_or(InPlace::ok))
    }
}
/// Made-up rows for the views' and the curve's tests.
#[cfg(test)]
impl DiskRow {
    /// A measured random 4 KiB row of `op` at `depth` on one thread, one second long:
    /// `iops`, a median of `p50` µs and a p99 of `p99` µs (p99.9 1.5x and max 2x the p99),
    /// the app keeping `depth` in flight, no device behind it.
    pub(crate) fn made_up(op: Op, depth: usize, iops: f64, p50: f64, p99: f64) -> Self {
        DiskRow {
            name: format!("RND4K Q{depth}T1"),
            spec: RowSpec {
                op,
                mix: None,
                split: None,
                dist: None,
                random: true,
                block: 4096,
                depth,
                threads: 1,
                pace: None,
            },
            path: Path::UringDirect,
            fallback: None,
            skipped: None,
            ios: iops as u64,
            bytes: iops as u64 * 4096,
            seconds: 1.0,
            fsync_seconds: None,
            bytes_per_second: iops * 4096.0,
            iops,
            latency_us: Latency {
                p50,
                p99,
                p99_9: p99 * 1.5,
                max: p99 * 2.0,
                ..Latency::default()
            },
            mean_in_flight: depth as f64,
            device: None,
            verify: None,
            over_time: None,
            cores: None,
            cpu: None,
            runs: Vec::new(),
            settled: None,
            best_of: false,
            mix: None,
            sizes: None,
            hot: None,
            open: None,
            other_io_bytes: None,
            pressure: None,
        }
    }
}

#[cfg(test)]
mod slope_tests {
    #[test]
    fn a_flat_backlog_has_a_slope_of_exactly_zero_and_a_rising_one_its_rate() {
        assert_eq!(super::slope(&[3, 3, 3, 3, 3, 3, 3], 0.013), 0.0);
        assert_eq!(super::slope(&[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1], 0.01), 0.0);
        let rising = super::slope(&[0, 10, 20, 30], 0.5);
        assert!((rising - 20.0).abs() < 1e-9, "{rising}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mbs: f64, iops: f64, p99: f64) -> DiskRow {
        DiskRow {
            bytes_per_second: mbs * 1e6,
            ..DiskRow::made_up(Op::Write, 8, iops, 10.0, p99)
        }
    }

    #[test]
    fn cpu_is_counted_only_over_a_loop_long_enough_to_count_it() {
        let (before, after) = ((1.0, 2.0), (1.004, 2.118));
        let cpu = CpuUse::between(before, after, 0.5, 3000).unwrap();
        assert!((cpu.user_seconds - 0.004).abs() < 1e-9);
        assert!((cpu.system_seconds - 0.118).abs() < 1e-9);
        // `--runtime 1us`: one op, a few µs of readings around it.
        assert_eq!(CpuUse::between(before, after, 4e-6, 1), None);
        // Interrupted before its first op.
        assert_eq!(CpuUse::between(before, after, 0.5, 0), None);
        // A clock that went back gives zero, never a negative.
        let back = CpuUse::between(after, before, 0.5, 10).unwrap();
        assert_eq!((back.user_seconds, back.system_seconds), (0.0, 0.0));
    }

    #[test]
    fn cpu_per_io_and_the_share_of_the_cores_follow_from_the_threads_clocks() {
        let mut row = DiskRow::made_up(Op::Read, 32, 100_000.0, 10.0, 50.0);
        assert_eq!(row.cpu_us_per_io(), None, "no clock, no figure");
        row.ios = 200_000;
        row.seconds = 2.0;
        row.spec.threads = 4;
        row.cores = Some(2);
        row.cpu = Some(CpuUse {
            user_seconds: 0.6,
            system_seconds: 3.0,
        });
        let (user, system) = row.cpu_us_per_io().unwrap();
        assert!((user - 3.0).abs() < 1e-9 && (system - 15.0).abs() < 1e-9);
        // Four threads on two cores: 3.6 s of CPU over 2 s of two cores is 90%.
        assert!((row.core_share().unwrap() - 0.9).abs() < 1e-9);
        assert!(row.cpu_bound());
        row.cores = Some(8);
        // On eight cores the four threads could have had four: 45%.
        assert!((row.core_share().unwrap() - 0.45).abs() < 1e-9);
        assert!(!row.cpu_bound());
    }

    #[test]
    fn three_runs_give_the_median_run_with_every_runs_figures() {
        // The SEQ1M write: 493, 1581 and 427 MB/s.
        let row = DiskRow::median_of(vec![
            run(493.0, 470.0, 900.0),
            run(1581.0, 1508.0, 300.0),
            run(427.0, 407.0, 1200.0),
        ])
        .unwrap();
        assert_eq!(row.n(), 3);
        assert_eq!(row.bytes_per_second, 493e6);
        assert_eq!(row.iops, 470.0);
        assert_eq!(row.latency_us.p99, 900.0, "the median run's latency");
        let f = row.rate();
        assert_eq!((f.min, f.max, f.n), (427e6, 1581e6, 3));
        assert_eq!(row.runs[1].p99_us, 300.0, "in the order run");
    }

    #[test]
    fn two_runs_give_the_mean_of_the_middle_and_one_run_stays_as_it_is() {
        let row = DiskRow::median_of(vec![run(400.0, 100.0, 5.0), run(600.0, 300.0, 9.0)]).unwrap();
        assert_eq!(row.bytes_per_second, 500e6);
        assert_eq!(row.iops, 200.0);
        let f = row.iops_figure();
        assert!(f.min <= f.median && f.median <= f.max);
        let one = DiskRow::median_of(vec![run(400.0, 100.0, 5.0)]).unwrap();
        assert!(one.runs.is_empty());
        assert_eq!(one.n(), 1);
        assert_eq!(one.rate(), Figure::one(400e6));
    }

    #[test]
    fn best_of_keeps_the_fastest_run_whole_and_says_so() {
        let runs = vec![
            run(493.0, 470.0, 900.0),
            run(1581.0, 1508.0, 300.0),
            run(427.0, 407.0, 1200.0),
        ];
        let best = DiskRow::best_of(runs.clone()).unwrap();
        assert!(best.best_of);
        assert_eq!(best.bytes_per_second, 1581e6);
        assert_eq!(best.iops, 1508.0, "the fastest run's own IOPS");
        assert_eq!(best.latency_us.p99, 300.0, "and its latency");
        assert_eq!(best.n(), 3);
        let median = DiskRow::median_of(runs).unwrap();
        assert!(!median.best_of);
        assert_eq!(median.bytes_per_second, 493e6);
        let one = DiskRow::best_of(vec![run(400.0, 100.0, 5.0)]).unwrap();
        assert!(!one.best_of, "one run is no best of anything");
    }
}
