//! Wall time from the monotonic clock, with the process's user and system CPU time beside it.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// A running measurement.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    start: Instant,
    cpu: (f64, f64),
}

/// Time taken by one measured piece of work.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Elapsed {
    /// Wall-clock seconds (monotonic).
    pub seconds: f64,
    /// User CPU seconds of the whole process.
    pub user_seconds: f64,
    /// System (kernel) CPU seconds of the whole process.
    pub system_seconds: f64,
}

/// CPU seconds the whole process (every thread, io_uring's workers included) has used so
/// far, in user mode and in the kernel (`getrusage(RUSAGE_SELF)`; zeros where it fails).
pub fn process_cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass and touches nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// CPU seconds the calling thread has used so far, in user mode and in the kernel
/// (`getrusage(RUSAGE_THREAD)`; zeros where it fails).
pub fn thread_cpu() -> (f64, f64) {
    // SAFETY: getrusage fills the zeroed struct we pass and touches nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_THREAD is Linux's own, valid for the calling thread.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

impl Stopwatch {
    /// Starts measuring now.
    pub fn start() -> Self {
        let cpu = process_cpu();
        Self {
            start: Instant::now(),
            cpu,
        }
    }

    /// Wall seconds so far, without reading CPU times.
    pub fn seconds(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }

    /// Stops and returns wall and CPU time since [`Stopwatch::start`].
    pub fn stop(&self) -> Elapsed {
        let seconds = self.start.elapsed().as_secs_f64();
        let (user, system) = process_cpu();
        Elapsed {
            seconds,
            user_seconds: (user - self.cpu.0).max(0.0),
            system_seconds: (system - self.cpu.1).max(0.0),
        }
    }
}

impl Elapsed {
    /// CPU time as a share of wall time, in percent (may exceed 100 with threads).
    pub fn cpu_percent(&self) -> f64 {
        if self.seconds > 0.0 {
            100.0 * (self.user_seconds + self.system_seconds) / self.seconds
        } else {
            0.0
        }
    }
}
