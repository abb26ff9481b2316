//! Runs over time: per interval (1 s unless asked otherwise) the bytes and I/Os completed in
//! it, their rate, the p99 and max latency of those I/Os, and at each interval's end the
//! page cache's `Dirty` and `Writeback` (`/proc/meminfo`) and the device's bytes
//! (`/proc/diskstats`, all processes).
//!
//! Cost on the hot path: each thread that records keeps its interval in a thread-local
//! histogram (allocated when the thread enters, never per call; `reset` at each boundary),
//! so a call costs one relaxed atomic load (the interval number), one histogram record and
//! a few additions; every [`CHECK_EVERY`] calls, or when the calls since the last look
//! took a 64th of an interval, the thread reads the clock, and the first thread to see a
//! boundary pass takes it: reads `/proc/meminfo` and `/proc/diskstats` and moves the
//! interval number on. There is no sampler thread on purpose: with one, a warm 4 KiB read
//! cost 60-80 ns more a call on this VM, four times the recording itself (bench/RESULTS.md;
//! most likely because a second thread in the process makes every read()/write() take the
//! file's reference and position lock in `fdget_pos`). A boundary is therefore taken when a call completes after it: a
//! call that blocks for longer than an interval makes one longer interval, with its own
//! `seconds`. A thread that sees the number moved adds its interval to the shared one under
//! a lock (once per interval, not per call). Intervals every thread has passed are reduced
//! to their figures at once, so memory does not grow with the length of the run.

use super::steady::{self, SteadyState};
use super::writeback::{self, DirtyLimits, Finding, Point};
use crate::units::MIB;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// The interval when none is asked for.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(1);

/// A final interval shorter than this share of the others is left out of the steady-state
/// rule (it is still in the series).
pub const SHORTEST_SHARE: f64 = 0.5;

/// A recording thread reads the clock at least once in this many calls.
pub const CHECK_EVERY: u32 = 64;

/// What the values given to [`note`] count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Clock {
    /// The ticks of [`super::probe::ticks`], converted to nanoseconds at the end.
    Ticks,
    /// Nanoseconds.
    Nanos,
}

/// One interval of a run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Its number, from 0.
    pub index: u64,
    /// Seconds from the start of the run to its beginning.
    pub start_seconds: f64,
    /// Its length in seconds.
    pub seconds: f64,
    /// Bytes of the I/Os completed in it.
    pub bytes: u64,
    /// Bytes completed from the start to its end.
    pub bytes_total: u64,
    /// I/Os (calls) completed in it.
    pub ios: u64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// MiB per second.
    pub mib_per_second: f64,
    /// I/Os per second.
    pub iops: f64,
    /// 99th percentile latency of its I/Os, ns (`None`: none completed).
    pub p99_ns: Option<u64>,
    /// Its slowest I/O, ns.
    pub max_ns: Option<u64>,
    /// `Dirty` of `/proc/meminfo` at its end.
    pub dirty_bytes: Option<u64>,
    /// `Writeback` of `/proc/meminfo` at its end.
    pub writeback_bytes: Option<u64>,
    /// Bytes the device read in it (all processes).
    pub device_read_bytes: Option<u64>,
    /// Bytes the device wrote in it (all processes).
    pub device_write_bytes: Option<u64>,
}

/// A run over time: its intervals, its steady state and, for writes, why it left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OverTime {
    /// The interval asked for, seconds.
    pub interval_seconds: f64,
    /// The steady state of MiB/s (the rule of [`super::steady`]).
    pub steady: SteadyState,
    /// The dirty limits when the run began (writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty_limits: Option<DirtyLimits>,
    /// What could make the figure wrong over time: the write-back check (writes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<Finding>,
    /// Every interval, in order.
    pub intervals: Vec<Interval>,
}

impl OverTime {
    /// The steady state of `intervals` and, for a write, the write-back check against
    /// `limits`.
    pub fn of(
        intervals: Vec<Interval>,
        interval: Duration,
        write: bool,
        limits: Option<DirtyLimits>,
    ) -> Self {
        let asked = interval.as_secs_f64();
        let counted = judged(&intervals, asked);
        let values: Vec<f64> = counted.iter().map(|i| i.bytes_per_second).collect();
        let steady = steady::detect(&values);
        let checks = if write {
            let points: Vec<Point> = counted.iter().map(point).collect();
            vec![writeback::write_back(&steady, &points, limits.as_ref())]
        } else {
            Vec::new()
        };
        Self {
            interval_seconds: asked,
            steady,
            dirty_limits: limits.filter(|_| write),
            checks,
            intervals,
        }
    }

    /// The interval where the steady stretch began or ended, by its number in the rule.
    pub fn at(&self, index: usize) -> Option<&Interval> {
        self.intervals.get(index)
    }
}

/// The intervals the rule looks at: up to the last in which an I/O completed (what follows
/// is the closing fsync, no I/O of the run's own), and without a short last one.
fn judged(intervals: &[Interval], asked: f64) -> &[Interval] {
    let end = intervals
        .iter()
        .rposition(|i| i.ios > 0)
        .map_or(0, |k| k + 1);
    let intervals = &intervals[..end];
    match intervals.split_last() {
        Some((last, rest)) if !rest.is_empty() && last.seconds < SHORTEST_SHARE * asked => rest,
        _ => intervals,
    }
}

fn point(i: &Interval) -> Point {
    Point {
        bytes_per_second: i.bytes_per_second,
        bytes_before: i.bytes_total - i.bytes,
        start_seconds: i.start_seconds,
        dirty: i.dirty_bytes.zip(i.writeback_bytes).map(|(d, w)| d + w),
        device_bytes_per_second: i.device_write_bytes.map(|b| b as f64 / i.seconds.max(1e-9)),
    }
}

/// `Dirty` and `Writeback` from `/proc/meminfo` text, in bytes.
pub fn parse_meminfo(text: &str) -> (Option<u64>, Option<u64>) {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key == name).then(|| {
                value
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .map(|kib| kib * 1024)
            })?
        })
    };
    (field("Dirty"), field("Writeback"))
}

/// The machine at one interval boundary.
#[derive(Debug, Clone, Copy, Default)]
struct Boundary {
    /// Seconds since the start.
    at: f64,
    dirty: Option<u64>,
    writeback: Option<u64>,
    /// The device's bytes read and written since boot.
    device: Option<(u64, u64)>,
}

fn boundary(started: Instant, device: Option<&str>) -> Boundary {
    // Counted as the watcher's own reads: the work's checks against /proc/self/io leave
    // them out.
    let (dirty, writeback) = super::procio::read_own("/proc/meminfo")
        .map(|t| parse_meminfo(&t))
        .unwrap_or((None, None));
    let device = device.and_then(|name| {
        let text = super::procio::read_own("/proc/diskstats")?;
        let c = super::devstats::parse(&text, name)?;
        Some((c.read_sectors * 512, c.write_sectors * 512))
    });
    Boundary {
        at: started.elapsed().as_secs_f64(),
        dirty,
        writeback,
        device,
    }
}

/// The I/Os of one interval (one thread's, or several threads' added).
#[derive(Debug)]
struct Piece {
    latency: Histogram<u64>,
    bytes: u64,
    ios: u64,
}

/// Latencies are kept at 2 significant digits per interval (1%, plenty for a p99 per
/// second; a quarter of the memory of 3), 1 to 2^45 (ten hours in ns, three in ticks).
fn interval_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 45, 2).expect("1 to 2^45 at 2 digits are valid bounds")
}

impl Piece {
    fn new() -> Self {
        Self {
            latency: interval_histogram(),
            bytes: 0,
            ios: 0,
        }
    }

    fn add(&mut self, other: &Piece) {
        self.latency
            .add(&other.latency)
            .expect("interval histograms have the same bounds");
        self.bytes += other.bytes;
        self.ios += other.ios;
    }

    fn reset(&mut self) {
        self.latency.reset();
        self.bytes = 0;
        self.ios = 0;
    }

    fn figures(&self) -> Figures {
        Figures {
            bytes: self.bytes,
            ios: self.ios,
            p99: (!self.latency.is_empty()).then(|| self.latency.value_at_quantile(0.99)),
            max: (!self.latency.is_empty()).then(|| self.latency.max()),
        }
    }
}

/// An interval reduced to its figures (latencies in the recorder's clock).
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    bytes: u64,
    ios: u64,
    p99: Option<u64>,
    max: Option<u64>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Intervals some thread may still add to.
    open: BTreeMap<u64, Piece>,
    /// Intervals every thread has passed.
    done: BTreeMap<u64, Figures>,
    /// The interval each recording thread is in.
    positions: BTreeMap<usize, u64>,
    boundaries: Vec<Boundary>,
}

impl Shared {
    /// Reduces the intervals no thread can add to any more.
    fn settle(&mut self, current: u64) {
        let low = self
            .positions
            .values()
            .copied()
            .min()
            .unwrap_or(current)
            .min(current);
        let passed: Vec<u64> = self.open.range(..low).map(|(&k, _)| k).collect();
        for k in passed {
            if let Some(p) = self.open.remove(&k) {
                self.done.insert(k, p.figures());
            }
        }
    }
}

/// Where the threads of one run put their intervals.
#[derive(Debug)]
pub struct Recorder {
    interval: Duration,
    clock: Clock,
    device: Option<String>,
    started: Instant,
    started_ticks: u64,
    index: AtomicU64,
    /// When the next boundary is due, in nanoseconds from the start.
    due_ns: AtomicU64,
    /// Call time (in the recorder's clock) after which a thread looks at the clock.
    budget: u64,
    next_token: AtomicUsize,
    shared: Mutex<Shared>,
}

impl Recorder {
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts recording this thread's I/Os into `self` (nothing new when it already does).
    pub fn enter(self: &Arc<Self>) -> Entered {
        let already = LOCAL.with_borrow(|l| l.as_ref().is_some_and(|l| Arc::ptr_eq(&l.rec, self)));
        if already {
            return Entered { owner: false };
        }
        let token = self.next_token.fetch_add(1, Ordering::Relaxed);
        let index = self.index.load(Ordering::Relaxed);
        self.lock().positions.insert(token, index);
        LOCAL.with_borrow_mut(|l| {
            *l = Some(Local {
                rec: Arc::clone(self),
                token,
                index,
                piece: Piece::new(),
                calls: 0,
                spent: 0,
            })
        });
        super::probe::series_on(true);
        Entered { owner: true }
    }

    /// Takes the machine's state at a boundary and moves the interval number on.
    fn sample(&self, s: &mut Shared) {
        s.boundaries
            .push(boundary(self.started, self.device.as_deref()));
        let next = s.boundaries.len() as u64 - 1;
        let interval = self.interval.as_nanos().max(1) as u64;
        let now = self.started.elapsed().as_nanos() as u64;
        self.due_ns
            .store((now / interval + 1) * interval, Ordering::Relaxed);
        self.index.store(next, Ordering::Relaxed);
        s.settle(next);
    }

    /// Takes a boundary if one is due (the first thread to see it does).
    fn look(&self) {
        let now = self.started.elapsed().as_nanos() as u64;
        if now < self.due_ns.load(Ordering::Relaxed) {
            return;
        }
        let mut s = self.lock();
        // Another thread may have taken it while this one waited for the lock.
        if self.started.elapsed().as_nanos() as u64 >= self.due_ns.load(Ordering::Relaxed) {
            self.sample(&mut s);
        }
    }
}

/// While alive, this thread's I/Os go into a [`Recorder`]; on drop its interval is added.
#[must_use = "recording stops when the guard is dropped"]
#[derive(Debug)]
pub struct Entered {
    owner: bool,
}

impl Drop for Entered {
    fn drop(&mut self) {
        if !self.owner {
            return;
        }
        super::probe::series_on(false);
        if let Some(mut l) = LOCAL.with_borrow_mut(Option::take) {
            let rec = Arc::clone(&l.rec);
            let mut s = rec.lock();
            l.add_to(&mut s);
            s.positions.remove(&l.token);
            let current = rec.index.load(Ordering::Relaxed);
            s.settle(current);
        }
    }
}

/// One thread's interval in progress.
struct Local {
    rec: Arc<Recorder>,
    token: usize,
    index: u64,
    piece: Piece,
    /// Calls and call time since this thread last looked at the clock.
    calls: u32,
    spent: u64,
}

impl Local {
    fn add_to(&mut self, s: &mut Shared) {
        if self.piece.ios > 0 {
            s.open
                .entry(self.index)
                .or_insert_with(Piece::new)
                .add(&self.piece);
        }
        self.piece.reset();
    }

    #[inline]
    fn note(&mut self, value: u64, bytes: u64) {
        self.calls += 1;
        self.spent = self.spent.saturating_add(value);
        if self.calls >= CHECK_EVERY || self.spent >= self.rec.budget {
            self.calls = 0;
            self.spent = 0;
            self.rec.look();
        }
        let now = self.rec.index.load(Ordering::Relaxed);
        if now != self.index {
            let rec = Arc::clone(&self.rec);
            let mut s = rec.lock();
            self.add_to(&mut s);
            s.positions.insert(self.token, now);
            s.settle(now);
            self.index = now;
        }
        self.piece.latency.saturating_record(value.max(1));
        self.piece.bytes += bytes;
        self.piece.ios += 1;
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// Counts one completed I/O of `bytes` that took `value` (in the recorder's clock) in this
/// thread's interval, when this thread records a series.
#[inline]
pub fn note(value: u64, bytes: u64) {
    LOCAL.with_borrow_mut(|l| {
        if let Some(l) = l {
            l.note(value, bytes);
        }
    });
}

/// The recorder this thread records into, if any: threads it starts for the same work
/// enter it.
pub fn current() -> Option<Arc<Recorder>> {
    LOCAL.with_borrow(|l| l.as_ref().map(|l| Arc::clone(&l.rec)))
}

/// A series being recorded; [`Series::finish`] gives the intervals.
#[derive(Debug)]
pub struct Series {
    rec: Arc<Recorder>,
}

impl Series {
    /// Starts a series of `interval`s whose I/O times are counted in `clock`, with the
    /// device `device`'s bytes at each boundary (`None`: no block device).
    pub fn start(interval: Duration, clock: Clock, device: Option<&str>) -> Self {
        let interval = interval.max(Duration::from_millis(1));
        let started = Instant::now();
        let rec = Arc::new(Recorder {
            interval,
            clock,
            device: device.map(str::to_string),
            started,
            started_ticks: super::probe::ticks(),
            index: AtomicU64::new(0),
            due_ns: AtomicU64::new(0),
            // Ticks run at least as fast as nanoseconds: in ticks the look comes sooner.
            budget: (interval.as_nanos() / 64).max(1) as u64,
            next_token: AtomicUsize::new(0),
            shared: Mutex::new(Shared::default()),
        });
        {
            let mut s = rec.lock();
            rec.sample(&mut s);
        }
        Self { rec }
    }

    /// The recorder, for the threads that move the bytes to [`Recorder::enter`].
    pub fn recorder(&self) -> &Arc<Recorder> {
        &self.rec
    }

    /// Stops the series (every thread that entered it must have left) and gives its
    /// intervals; the last one ends now.
    pub fn finish(self) -> Vec<Interval> {
        let ns_per_tick = match self.rec.clock {
            Clock::Nanos => 1.0,
            Clock::Ticks => {
                let ticks = super::probe::ticks().saturating_sub(self.rec.started_ticks);
                let ns = self.rec.started.elapsed().as_nanos() as f64;
                if ticks == 0 { 1.0 } else { ns / ticks as f64 }
            }
        };
        let mut s = self.rec.lock();
        self.rec.sample(&mut s);
        s.positions.clear();
        s.settle(u64::MAX);
        let scale = |v: u64| (v as f64 * ns_per_tick).round() as u64;
        let mut total = 0u64;
        s.boundaries
            .windows(2)
            .enumerate()
            .map(|(k, pair)| {
                let f = s.done.get(&(k as u64)).copied().unwrap_or_default();
                let (a, b) = (pair[0], pair[1]);
                let seconds = (b.at - a.at).max(1e-9);
                total += f.bytes;
                let bps = f.bytes as f64 / seconds;
                Interval {
                    index: k as u64,
                    start_seconds: a.at,
                    seconds,
                    bytes: f.bytes,
                    bytes_total: total,
                    ios: f.ios,
                    bytes_per_second: bps,
                    mib_per_second: bps / MIB as f64,
                    iops: f.ios as f64 / seconds,
                    p99_ns: f.p99.map(scale),
                    max_ns: f.max.map(scale),
                    dirty_bytes: b.dirty,
                    writeback_bytes: b.writeback,
                    device_read_bytes: a.device.zip(b.device).map(|(x, y)| y.0.saturating_sub(x.0)),
                    device_write_bytes: a
                        .device
                        .zip(b.device)
                        .map(|(x, y)| y.1.saturating_sub(x.1)),
                }
            })
            .collect()
    }
}

/// The intervals as JSON Lines: one object per line, `extra`'s keys first (the row of a
/// panel), then the interval's in their order.
pub fn json_lines(intervals: &[Interval], extra: &[(&str, &str)]) -> String {
    let head: String = extra
        .iter()
        .map(|(k, v)| format!("{}:{},", Value::from(*k), Value::from(*v)))
        .collect();
    let mut out = String::new();
    for i in intervals {
        let body = serde_json::to_string(i).expect("an interval is plain numbers");
        out.push('{');
        out.push_str(&head);
        out.push_str(body.strip_prefix('{').unwrap_or(&body));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dirty_and_writeback_are_read_in_bytes() {
        let text = "MemTotal:       16318412 kB\nDirty:              1024 kB\nWriteback:             8 kB\nWritebackTmp:          0 kB\n";
        assert_eq!(parse_meminfo(text), (Some(1 << 20), Some(8192)));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), (None, None));
    }

    #[test]
    fn every_io_noted_on_several_threads_lands_in_one_interval_or_another() {
        let series = Series::start(Duration::from_millis(20), Clock::Nanos, None);
        let rec = Arc::clone(series.recorder());
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let rec = Arc::clone(&rec);
                s.spawn(move || {
                    let _on = rec.enter();
                    for i in 0..200u64 {
                        note(1000 + t * 10 + i, 4096);
                        if i % 50 == 0 {
                            std::thread::sleep(Duration::from_millis(7));
                        }
                    }
                });
            }
        });
        drop(rec);
        let intervals = series.finish();
        assert!(!intervals.is_empty());
        assert_eq!(intervals.iter().map(|i| i.ios).sum::<u64>(), 600);
        assert_eq!(intervals.last().unwrap().bytes_total, 600 * 4096);
        let starts: Vec<f64> = intervals.iter().map(|i| i.start_seconds).collect();
        assert!(starts.windows(2).all(|w| w[0] < w[1]), "{starts:?}");
        assert!(
            intervals
                .iter()
                .filter(|i| i.ios > 0)
                .all(|i| i.p99_ns.is_some_and(|p| p <= i.max_ns.unwrap()))
        );
        assert!(current().is_none());
    }

    #[test]
    fn a_thread_that_never_entered_notes_nothing() {
        let series = Series::start(Duration::from_millis(10), Clock::Nanos, None);
        note(5, 5);
        let intervals = series.finish();
        assert_eq!(intervals.iter().map(|i| i.ios).sum::<u64>(), 0);
    }

    #[test]
    fn json_lines_are_one_object_per_interval_with_the_extra_keys() {
        let i = Interval {
            index: 0,
            start_seconds: 0.0,
            seconds: 1.0,
            bytes: MIB,
            bytes_total: MIB,
            ios: 256,
            bytes_per_second: MIB as f64,
            mib_per_second: 1.0,
            iops: 256.0,
            p99_ns: Some(1000),
            max_ns: Some(2000),
            dirty_bytes: None,
            writeback_bytes: None,
            device_read_bytes: None,
            device_write_bytes: None,
        };
        let text = json_lines(&[i, i], &[("row", "SEQ1M Q8T1")]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["row"], "SEQ1M Q8T1");
        assert_eq!(v["p99_ns"], 1000);
        assert_eq!(v["mib_per_second"], 1.0);
        assert!(
            lines[0].starts_with(r#"{"row":"SEQ1M Q8T1","index":0,"#),
            "{}",
            lines[0]
        );
    }

    #[test]
    fn a_short_last_interval_is_left_out_of_the_rule_but_kept_in_the_series() {
        let mk = |k: u64, seconds: f64, bps: f64| Interval {
            index: k,
            start_seconds: k as f64,
            seconds,
            bytes: (bps * seconds) as u64,
            bytes_total: 0,
            ios: 1,
            bytes_per_second: bps,
            mib_per_second: bps / MIB as f64,
            iops: 1.0,
            p99_ns: None,
            max_ns: None,
            dirty_bytes: None,
            writeback_bytes: None,
            device_read_bytes: None,
            device_write_bytes: None,
        };
        let mut v: Vec<Interval> = (0..8).map(|k| mk(k, 1.0, 100.0 * MIB as f64)).collect();
        v.push(mk(8, 0.05, 5.0 * MIB as f64));
        let o = OverTime::of(v, Duration::from_secs(1), false, None);
        assert_eq!(o.steady.verdict, steady::Steadiness::Steady);
        assert_eq!(o.intervals.len(), 9);
        assert!(o.checks.is_empty(), "reads get no write-back check");
    }
}
