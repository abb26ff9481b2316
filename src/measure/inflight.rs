//! The clock of requests in flight, kept as fio's core keeps it: each request is stamped as
//! it goes to the kernel (`td_io_queue`'s issue time) and, when reaped, its latency goes into
//! a log-bucketed histogram (`hdrhistogram`, 3 significant digits), into the sum of latencies
//! (Σ latency / wall time is the mean number in flight: Little's law, exact here) and into
//! the series being recorded, if any (`account_io_completion`). Engines read no clock: the
//! harness stamps what they queue and reap.

use super::latency::histogram;
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

/// A reading of the monotonic clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Stamp(Instant);

impl From<Instant> for Stamp {
    fn from(at: Instant) -> Self {
        Self(at)
    }
}

impl From<Stamp> for Instant {
    fn from(at: Stamp) -> Self {
        at.0
    }
}

impl Stamp {
    /// Now.
    #[inline]
    pub fn now() -> Self {
        Self(Instant::now())
    }
}

/// A run of a fixed length: opened now, counting from the end of its ramp (fio's
/// `ramp_time`: what completes before is run but not counted), over at its deadline.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    opened: Instant,
    started: Instant,
    deadline: Instant,
}

impl Window {
    /// A window of `runtime` from now (of `longest` where `runtime` would overflow the
    /// clock).
    pub fn open(runtime: Duration, longest: Duration) -> Self {
        Self::after(Duration::ZERO, runtime, longest)
    }

    /// A window of `runtime` that starts counting `ramp` from now (each capped at
    /// `longest` where the clock would overflow).
    pub fn after(ramp: Duration, runtime: Duration, longest: Duration) -> Self {
        let now = Instant::now();
        let started = now.checked_add(ramp).unwrap_or_else(|| now + longest);
        Self {
            opened: now,
            started,
            deadline: started
                .checked_add(runtime)
                .unwrap_or_else(|| started + longest),
        }
    }

    /// A window of the same ramp and runtime opened now.
    pub fn again(&self) -> Self {
        let now = Instant::now();
        let ramp = self.started - self.opened;
        let runtime = self.deadline - self.started;
        let started = now + ramp;
        Self {
            opened: now,
            started,
            deadline: started + runtime,
        }
    }

    /// Whether what completes at `at` counts (the ramp is over).
    #[inline]
    pub fn counts_at(&self, at: Stamp) -> bool {
        at.0 >= self.started
    }

    /// The moment the ramp ends and figures start.
    pub fn counting_from(&self) -> Instant {
        self.started
    }

    /// The moment the window closes.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Whether the window was over at `at`.
    #[inline]
    pub fn over_at(&self, at: Stamp) -> bool {
        at.0 >= self.deadline
    }

    /// Whether the window is over now.
    pub fn over(&self) -> bool {
        self.over_at(Stamp::now())
    }

    /// Seconds since it started counting (0 while ramping).
    pub fn seconds(&self) -> f64 {
        Instant::now()
            .saturating_duration_since(self.started)
            .as_secs_f64()
    }
}

/// Waits until `at`, to within a few microseconds: sleeps to within `spin` of it (the
/// harness: [`SPIN`]), then spins. A sleep alone overshoots: by the timer slack (50 µs unless the thread lowered it,
/// as the disk rows' do) and the wake-up (on this VM, with the slack at 1 ns: 12 µs at the
/// median, 16 µs at p90; 63 µs and 68 µs with the default slack).
pub fn sleep_until(at: Instant, spin: Duration) {
    loop {
        let now = Instant::now();
        if now >= at {
            return;
        }
        let left = at - now;
        if left > spin + Duration::from_micros(20) {
            std::thread::sleep(left - spin);
        } else {
            std::hint::spin_loop();
        }
    }
}

/// How close to its moment [`sleep_until`] spins instead of sleeping: the wake-up's p90
/// and then some, so the spin costs a thread pacing 2,000 I/Os a second about 6% of a core
/// rather than the 40% of spinning the last 200 µs.
pub const SPIN: Duration = Duration::from_micros(30);

/// Runs `work` once: its result and the nanoseconds it took (at least 1).
#[inline]
pub fn took<R>(work: impl FnOnce() -> R) -> (R, u64) {
    let started = Instant::now();
    let out = work();
    (out, (started.elapsed().as_nanos() as u64).max(1))
}

/// The account of one thread's requests: when each one in flight was issued, and the
/// latency, count and bytes of those reaped.
#[derive(Debug)]
pub struct InFlight {
    issued: Vec<Instant>,
    latency: Histogram<u64>,
    busy_ns: u128,
    ios: u64,
    bytes: u64,
}

impl InFlight {
    /// An empty account for requests with ids `0..slots`.
    pub fn new(slots: usize) -> Self {
        let now = Instant::now();
        Self {
            issued: vec![now; slots],
            latency: histogram(),
            busy_ns: 0,
            ios: 0,
            bytes: 0,
        }
    }

    /// Request `id` went to the kernel at `at`.
    #[inline]
    pub fn issue(&mut self, id: usize, at: Stamp) {
        self.issued[id] = at.0;
    }

    /// Request `id` was reaped at `at`, having moved `bytes`: its latency in nanoseconds
    /// (at least 1).
    #[inline]
    pub fn complete(&mut self, id: usize, bytes: u64, at: Stamp) -> u64 {
        let ns = at.0.duration_since(self.issued[id]).as_nanos();
        self.busy_ns += ns;
        let latency = (ns as u64).max(1);
        self.latency.saturating_record(latency);
        super::series::note(ns as u64, bytes);
        self.ios += 1;
        self.bytes += bytes;
        latency
    }

    /// Requests reaped.
    pub fn ios(&self) -> u64 {
        self.ios
    }

    /// Bytes they moved.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Their latencies, in nanoseconds.
    pub fn latency(&self) -> &Histogram<u64> {
        &self.latency
    }

    /// The sum of their latencies, in nanoseconds.
    pub fn busy_ns(&self) -> u128 {
        self.busy_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_timed_from_its_issue_to_its_reaping_and_counted_once() {
        let mut a = InFlight::new(2);
        let t0 = Stamp::now();
        a.issue(0, t0);
        a.issue(1, t0);
        std::thread::sleep(Duration::from_millis(2));
        let t1 = Stamp::now();
        a.complete(1, 4096, t1);
        assert_eq!((a.ios(), a.bytes()), (1, 4096));
        assert!(a.latency().max() >= 2_000_000, "{}", a.latency().max());
        assert!(a.busy_ns() >= 2_000_000);
    }

    #[test]
    fn a_window_is_over_at_its_deadline_and_not_before() {
        let w = Window::open(Duration::from_secs(3600), Duration::from_secs(3600));
        assert!(!w.over());
        let w = Window::open(Duration::ZERO, Duration::from_secs(1));
        assert!(w.over());
        // A runtime past what the clock can hold ends at the longest allowed.
        let w = Window::open(Duration::MAX, Duration::from_secs(3600));
        assert!(!w.over());
    }

    #[test]
    fn a_ramp_is_run_but_not_counted_and_the_seconds_start_after_it() {
        let w = Window::after(
            Duration::from_secs(3600),
            Duration::ZERO,
            Duration::from_secs(7200),
        );
        let now = Stamp::now();
        assert!(!w.counts_at(now) && !w.over_at(now));
        assert_eq!(w.seconds(), 0.0);
        let w = Window::after(Duration::ZERO, Duration::from_secs(3600), Duration::MAX);
        assert!(w.counts_at(Stamp::now()));
    }
}
