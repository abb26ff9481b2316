//! The clock of each timed call and the switches the sinks turn: per thread, whether
//! [`timed`](super::latency::timed) times calls at all, for the latency histogram
//! ([`super::latency::Calls`]) and for a series ([`super::series::Recorder`]). Each sink
//! turns its own switch and reads this clock; neither needs the other.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    /// Whether calls are timed: this thread records latencies or a series.
    static ON: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread records latencies.
    static CALLS: Cell<bool> = const { Cell::new(false) };
    /// Whether this thread records a series.
    static SERIES: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread's calls are timed (for latencies, a series or both).
#[inline]
pub fn on() -> bool {
    ON.get()
}

/// Whether this thread's calls are timed into a series.
#[inline]
pub fn series() -> bool {
    SERIES.get()
}

/// Turns this thread's latency recording on or off ([`super::latency::Calls::enter`]).
pub(crate) fn calls_on(on: bool) {
    CALLS.set(on);
    ON.set(on || SERIES.get());
}

/// Turns this thread's series on or off ([`super::series::Recorder::enter`]): its calls
/// are then timed into the series as well.
pub(crate) fn series_on(on: bool) {
    SERIES.set(on);
    ON.set(on || CALLS.get());
}

/// Settles what the first recording would otherwise settle inside its timed region: which
/// clock times the calls (read from /proc/cpuinfo once).
pub fn prime() {
    steady_tsc();
}

/// Whether the time-stamp counter ticks at one rate on every core, whatever the power
/// state (`constant_tsc` and `nonstop_tsc`): then it is the clock of each call.
pub(crate) fn steady_tsc() -> bool {
    static STEADY: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *STEADY.get_or_init(|| {
        cfg!(target_arch = "x86_64")
            && std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|info| {
                info.lines()
                    .find(|l| l.starts_with("flags"))
                    .is_some_and(|flags| {
                        let has = |f: &str| flags.split_whitespace().any(|w| w == f);
                        has("constant_tsc") && has("nonstop_tsc")
                    })
            })
    })
}

/// The clock of each call: the time-stamp counter where it is steady (one instruction,
/// about a third of the monotonic clock's cost on a VM: see bench/RESULTS.md), else
/// nanoseconds of the monotonic clock. [`super::latency::Calls`] converts ticks to nanoseconds against the
/// monotonic clock over the whole region.
#[inline]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    if steady_tsc() {
        // SAFETY: RDTSC reads a counter; it has no memory effects and exists on every
        // x86_64 processor.
        return unsafe { std::arch::x86_64::_rdtsc() };
    }
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    u64::try_from(EPOCH.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}
