//! Latency of every timed call: each read/write/pread/pwrite an engine makes inside a timed
//! region goes into a log-bucketed histogram (`hdrhistogram`, 3 significant digits), in
//! time-stamp counter ticks where that counter is steady, converted to nanoseconds against
//! the monotonic clock when the region ends (a value is then off by at most 0.2%); a result
//! carries its percentiles under numeric keys (`p99_9`, not fio's `"99.900000"`).
//!
//! Recording is per thread and needs no lock on the hot path: the harness turns it on for
//! its thread ([`Calls::enter`]), the engine threads started through
//! `engine::parallel::on_threads` inherit it, and each thread's histogram is added to the
//! shared one when the thread leaves. Where recording is off, [`timed`] costs one
//! thread-local flag test. Engines only wrap their system calls in [`timed`]; they read no
//! clock themselves.

use super::probe::{self, ticks};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Significant digits kept: a value is recorded within 0.1% of itself.
pub const SIGNIFICANT_DIGITS: u8 = 3;
/// The longest call recorded as itself, in nanoseconds (one hour); longer ones count as this.
pub const HIGHEST_NS: u64 = 3_600 * 1_000_000_000;

/// An empty histogram of call times in nanoseconds.
pub fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
        .expect("1 ns to 1 h at 3 digits are valid bounds")
}

/// The distribution of call times of one result, in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Latency {
    /// Calls timed.
    pub count: u64,
    /// Fastest call.
    pub min: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
    /// Slowest call.
    pub max: u64,
}

impl Latency {
    /// The summary of `h`; `None` when it holds no call.
    pub fn of(h: &Histogram<u64>) -> Option<Self> {
        (!h.is_empty()).then(|| Self {
            count: h.len(),
            min: h.min(),
            p50: h.value_at_quantile(0.5),
            p90: h.value_at_quantile(0.9),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            p99_99: h.value_at_quantile(0.9999),
            // The histogram's max is the highest value equivalent to the slowest call: at
            // least every percentile.
            max: h.max(),
        })
    }

    /// The percentiles shown in text, with their labels: p50, p99, p99.9 and max.
    pub fn shown(&self) -> [(&'static str, u64); 4] {
        [
            ("p50", self.p50),
            ("p99", self.p99),
            ("p99.9", self.p99_9),
            ("max", self.max),
        ]
    }
}

/// The calls of several runs together (a sweep point's repeats): `None` when none was timed.
pub fn merged<'a>(runs: impl IntoIterator<Item = &'a Histogram<u64>>) -> Option<Histogram<u64>> {
    let mut all: Option<Histogram<u64>> = None;
    for h in runs {
        match &mut all {
            None => all = Some(h.clone()),
            Some(sum) => sum
                .add(h)
                .expect("histograms made by histogram() have the same bounds"),
        }
    }
    all
}

/// `h` with every value multiplied by `factor` (ticks to nanoseconds): each bucket's
/// count moves to its scaled value, so the error stays within twice the histogram's
/// (0.2% at 3 digits).
fn rescaled(h: &Histogram<u64>, factor: f64) -> Histogram<u64> {
    let mut out = histogram();
    for v in h.iter_recorded() {
        // The middle of the bucket, so scaling adds at most the new bucket's half-width.
        let middle = h.median_equivalent(v.value_iterated_to());
        let scaled = (middle as f64 * factor).round() as u64;
        out.saturating_record_n(scaled.max(1), v.count_at_value());
    }
    out
}

/// Where the threads of one timed region put their call times.
#[derive(Debug)]
pub struct Calls {
    merged: Mutex<Option<Histogram<u64>>>,
    /// The clock of the calls and the monotonic clock when the region began.
    began: (u64, Instant),
}

thread_local! {
    static LOCAL: RefCell<Option<Histogram<u64>>> = const { RefCell::new(None) };
    static SINK: RefCell<Option<Arc<Calls>>> = const { RefCell::new(None) };
}

/// While alive, this thread's calls are timed into a [`Calls`]; on drop they are added to it.
#[must_use = "recording stops when the guard is dropped"]
#[derive(Debug)]
pub struct Recording {
    owner: bool,
}

impl Calls {
    /// A new, empty place for the calls of one region.
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            merged: Mutex::new(None),
            began: (ticks(), Instant::now()),
        })
    }

    /// Starts timing this thread's calls into `self` (nothing new when it already does).
    pub fn enter(self: &Arc<Self>) -> Recording {
        let already = SINK.with_borrow(|s| s.as_ref().is_some_and(|s| Arc::ptr_eq(s, self)));
        if !already {
            SINK.with_borrow_mut(|s| *s = Some(Arc::clone(self)));
            LOCAL.with_borrow_mut(|h| *h = Some(histogram()));
            probe::calls_on(true);
        }
        Recording { owner: !already }
    }

    /// Every call recorded so far (by threads that have left), in nanoseconds; `None` when
    /// none was.
    pub fn take(&self) -> Option<Histogram<u64>> {
        let (ticks_now, now) = (ticks(), Instant::now());
        let mut slot = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        let h = slot.take().filter(|h| !h.is_empty())?;
        let spent_ticks = ticks_now.saturating_sub(self.began.0);
        let spent_ns = now.duration_since(self.began.1).as_nanos() as f64;
        if !probe::steady_tsc() || spent_ticks == 0 {
            return Some(h);
        }
        Some(rescaled(&h, spent_ns / spent_ticks as f64))
    }

    fn add(&self, h: &Histogram<u64>) {
        let mut slot = self.merged.lock().unwrap_or_else(|p| p.into_inner());
        match &mut *slot {
            None => *slot = Some(h.clone()),
            Some(sum) => sum
                .add(h)
                .expect("histograms made by histogram() have the same bounds"),
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if !self.owner {
            return;
        }
        probe::calls_on(false);
        let local = LOCAL.with_borrow_mut(Option::take);
        let sink = SINK.with_borrow_mut(Option::take);
        if let (Some(h), Some(sink)) = (local, sink) {
            if !h.is_empty() {
                sink.add(&h);
            }
        }
    }
}

/// The calls this thread records into, if any: threads it starts for the same work enter it.
pub fn current() -> Option<Arc<Calls>> {
    SINK.with_borrow(|s| s.clone())
}

/// What a timed call moved, for the series: the bytes of a read or write that succeeded.
pub trait CallBytes {
    /// Bytes moved (0 when none, or when the result is no count of bytes).
    fn call_bytes(&self) -> u64 {
        0
    }
}

impl CallBytes for std::io::Result<usize> {
    fn call_bytes(&self) -> u64 {
        self.as_ref().map_or(0, |&n| n as u64)
    }
}

impl CallBytes for () {}
impl CallBytes for i32 {}

/// Runs one system call, timing it when this thread records (latencies, a series or both).
#[inline]
pub fn timed<R: CallBytes>(call: impl FnOnce() -> R) -> R {
    if !probe::on() {
        return call();
    }
    let started = ticks();
    let out = call();
    let spent = ticks().saturating_sub(started).max(1);
    LOCAL.with_borrow_mut(|h| {
        if let Some(h) = h {
            h.saturating_record(spent);
        }
    });
    if probe::series() {
        super::series::note(spent, out.call_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_timed_on_several_threads_all_reach_the_shared_histogram() {
        let calls = Calls::new();
        {
            let _on = calls.enter();
            for _ in 0..10 {
                timed(|| std::hint::black_box(1));
            }
            let sink = current().expect("this thread records");
            std::thread::scope(|s| {
                for _ in 0..3 {
                    let sink = Arc::clone(&sink);
                    s.spawn(move || {
                        let _on = sink.enter();
                        for _ in 0..5 {
                            timed(|| std::hint::black_box(2));
                        }
                    });
                }
            });
            // Entering again on a thread that records changes nothing.
            let again = calls.enter();
            drop(again);
            timed(|| ());
        }
        let h = calls.take().expect("calls were timed");
        assert_eq!(h.len(), 10 + 15 + 1);
        assert!(current().is_none());
    }

    #[test]
    fn nothing_is_timed_when_no_thread_records() {
        let calls = Calls::new();
        timed(|| ());
        assert!(calls.take().is_none());
    }

    #[test]
    fn percentiles_never_decrease_and_max_is_at_least_p99_99() {
        let mut h = histogram();
        // A long tail: most calls fast, a few very slow (the usual story inverted in the
        // next test).
        for v in 1..=10_000u64 {
            h.record(if v % 1000 == 0 { 5_000_000 } else { 1_000 + v })
                .expect("in range");
        }
        let l = Latency::of(&h).expect("not empty");
        assert_eq!(l.count, 10_000);
        let order = [l.min, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.max];
        assert!(order.windows(2).all(|w| w[0] <= w[1]), "{order:?}");
        assert!(l.max >= 5_000_000);
    }

    #[test]
    fn a_flat_distribution_has_every_percentile_within_the_recording_error() {
        let mut h = histogram();
        for _ in 0..1000 {
            h.record(250_000).expect("in range");
        }
        let l = Latency::of(&h).expect("not empty");
        for (_, v) in l.shown() {
            assert!(v.abs_diff(250_000) <= 250, "{v}");
        }
    }

    #[test]
    fn summaries_are_saved_with_numeric_keys() {
        let mut h = histogram();
        h.record(1000).expect("in range");
        let json = serde_json::to_value(Latency::of(&h).expect("not empty")).expect("json");
        let keys: Vec<&str> = json
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        for key in ["count", "p50", "p90", "p99", "p99_9", "p99_99", "max"] {
            assert!(keys.contains(&key), "{key} in {keys:?}");
            assert!(json[key].is_u64(), "{key} is a number");
        }
    }

    #[test]
    fn rescaling_keeps_every_count_and_scales_each_value() {
        let mut h = histogram();
        h.record_n(3_000, 10).expect("in range");
        h.record(9_000_000).expect("in range");
        let r = rescaled(&h, 0.5);
        assert_eq!(r.len(), 11);
        assert!(r.value_at_quantile(0.5).abs_diff(1_500) <= 2);
        // Within 0.2%: the old bucket's and the new one's resolution.
        assert!(r.max().abs_diff(4_500_000) <= 9_000, "{}", r.max());
    }

    #[test]
    fn merged_runs_hold_every_call_of_each() {
        let (mut a, mut b) = (histogram(), histogram());
        a.record(10).expect("in range");
        b.record(20).expect("in range");
        b.record(30).expect("in range");
        let all = merged([&a, &b]).expect("some");
        assert_eq!(all.len(), 3);
        assert!(merged(std::iter::empty()).is_none());
    }
}
