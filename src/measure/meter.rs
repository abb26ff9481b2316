//! The meter: every clock and kernel counter a timed run reads, behind one trait, so the
//! harness can be driven by the real system ([`SystemMeter`]) or by a deterministic stand-in
//! ([`FixedMeter`]) that makes whole outputs checkable exactly (as hyperfine's mock
//! executor does).

use super::cache::{self, CacheState, Residency};
use super::diskstats::{DiskDelta, DiskProbe};
use super::pressure::{Pressure, PressureProbe};
use super::procio::{IoProbe, ProcIo};
use super::timer::{Elapsed, Stopwatch};
use crate::workload::Op;
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// What was measured around one timed region.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Measured {
    /// Wall and CPU time of the whole region.
    pub elapsed: Elapsed,
    /// Wall seconds at the lap (for writes: before the final fsync).
    pub lap_seconds: Option<f64>,
    /// The process's I/O counters over the region.
    pub kernel: Option<ProcIo>,
    /// The device's counters over the region (all processes).
    pub device: Option<DiskDelta>,
    /// How long tasks on the machine stalled on the CPU, I/O and memory over the region
    /// (`None` without `/proc/pressure`).
    pub pressure: Option<Pressure>,
}

/// What the work in a timed region claims it did, for meters that model it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Claim {
    /// Direction of the bytes.
    pub op: Option<Op>,
    /// System calls made.
    pub calls: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Whether the calls and bytes pass through read()/write()-like calls the kernel counts.
    pub counted: bool,
}

impl Claim {
    /// `calls` system calls that move no bytes the kernel counts (a close, an fsync, getpid).
    pub fn calls(calls: u64) -> Self {
        Self {
            calls,
            ..Self::default()
        }
    }
}

/// A timed region in progress.
pub trait Region {
    /// Marks a point inside the region (the end of the writes, before the fsync).
    fn lap(&mut self, claim: &Claim);
    /// Ends the region.
    fn stop(self: Box<Self>, claim: &Claim) -> Measured;
}

/// The clocks and counters the harness reads.
pub trait Meter: Sync {
    /// Starts a timed region; `device` is the block device behind the file, if known.
    fn start(&self, device: Option<&str>) -> Box<dyn Region>;
    /// Residency of the bytes `[start, start + len)` of `file`.
    fn residency(&self, file: &File, name: &str, start: u64, len: u64) -> Option<Residency>;
    /// The harness has just put the file in `state` (for a meter that models the page
    /// cache; the real one has nothing to do).
    fn prepared(&self, state: CacheState) {
        let _ = state;
    }
    /// Runs `work` once and returns its wall seconds, read from the clock alone (no counters
    /// around it: a close or an fsync timed on its own); `claim` is what the work does, for
    /// meters that model its time. By default the monotonic clock.
    fn time(&self, claim: &Claim, work: &mut dyn FnMut()) -> f64 {
        let _ = claim;
        let started = Instant::now();
        work();
        started.elapsed().as_secs_f64()
    }
    /// Whether each call inside a timed region is timed into a latency histogram (the real
    /// clock only: a modelled meter has no call times to give).
    fn times_calls(&self) -> bool {
        false
    }
}

/// The real clocks and counters: the monotonic clock, getrusage, /proc/self/io,
/// /proc/diskstats and mincore.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemMeter;

struct SystemRegion {
    pressure: Option<PressureProbe>,
    disk: Option<DiskProbe>,
    io: Option<IoProbe>,
    clock: Stopwatch,
    lap: Option<f64>,
}

impl Meter for SystemMeter {
    fn start(&self, device: Option<&str>) -> Box<dyn Region> {
        // Read before /proc/self/io, so that its reads are not counted as the run's.
        let pressure = PressureProbe::start();
        let disk = device.and_then(DiskProbe::start);
        let io = IoProbe::start();
        Box::new(SystemRegion {
            pressure,
            disk,
            io,
            clock: Stopwatch::start(),
            lap: None,
        })
    }

    fn times_calls(&self) -> bool {
        true
    }

    fn residency(&self, file: &File, name: &str, start: u64, len: u64) -> Option<Residency> {
        // mincore works on whole pages: from the page that holds `start`.
        let page = cache::page_size();
        let from = start / page * page;
        cache::residency_at(file, name, from, start + len - from).ok()
    }
}

/// The real clocks and counters without the time of each call (`--no-latency`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemMeterNoLatency;

impl Meter for SystemMeterNoLatency {
    fn start(&self, device: Option<&str>) -> Box<dyn Region> {
        SystemMeter.start(device)
    }

    fn residency(&self, file: &File, name: &str, start: u64, len: u64) -> Option<Residency> {
        SystemMeter.residency(file, name, start, len)
    }
}

impl Region for SystemRegion {
    fn lap(&mut self, _: &Claim) {
        self.lap = Some(self.clock.seconds());
    }

    fn stop(self: Box<Self>, _: &Claim) -> Measured {
        let elapsed = self.clock.stop();
        let kernel = self.io.and_then(|p| p.finish());
        let device = self.disk.and_then(|d| d.finish());
        Measured {
            elapsed,
            lap_seconds: self.lap,
            kernel,
            device,
            // Read after /proc/self/io, for the same reason.
            pressure: self.pressure.map(|p| p.finish(elapsed.seconds)),
        }
    }
}

/// A deterministic meter: time is `calls × seconds_per_call + bytes / bytes_per_second`
/// (plus `fsync_seconds` after a lap), CPU time is the wall time split evenly, the kernel
/// counts exactly what was claimed, and residency is whatever `resident` says.
#[derive(Debug, Clone, Copy)]
pub struct FixedMeter {
    /// Seconds per system call.
    pub seconds_per_call: f64,
    /// Bytes per second.
    pub bytes_per_second: f64,
    /// Seconds added between the lap and the stop (a final fsync).
    pub fsync_seconds: f64,
    /// Resident share reported for every range (`None`: unknown).
    pub resident: Option<f64>,
}

struct FixedRegion {
    meter: FixedMeter,
    lap: Option<f64>,
}

impl FixedMeter {
    fn seconds(&self, claim: &Claim) -> f64 {
        claim.calls as f64 * self.seconds_per_call + claim.bytes as f64 / self.bytes_per_second
    }
}

impl Meter for FixedMeter {
    fn start(&self, _: Option<&str>) -> Box<dyn Region> {
        Box::new(FixedRegion {
            meter: *self,
            lap: None,
        })
    }

    fn residency(&self, _: &File, _: &str, _: u64, len: u64) -> Option<Residency> {
        let total_pages = len.div_ceil(4096);
        self.resident.map(|f| Residency {
            resident_pages: (total_pages as f64 * f).round() as u64,
            total_pages,
        })
    }

    fn time(&self, claim: &Claim, work: &mut dyn FnMut()) -> f64 {
        work();
        self.seconds(claim)
    }
}

impl Region for FixedRegion {
    fn lap(&mut self, claim: &Claim) {
        self.lap = Some(self.meter.seconds(claim));
    }

    fn stop(self: Box<Self>, claim: &Claim) -> Measured {
        let base = self.meter.seconds(claim);
        let seconds = match self.lap {
            Some(_) => base + self.meter.fsync_seconds,
            None => base,
        };
        let counted = |op| {
            if claim.counted && claim.op == Some(op) {
                (claim.calls, claim.bytes)
            } else {
                (0, 0)
            }
        };
        let (syscr, rchar) = counted(Op::Read);
        let (syscw, wchar) = counted(Op::Write);
        Measured {
            elapsed: Elapsed {
                seconds,
                user_seconds: seconds / 4.0,
                system_seconds: seconds / 2.0,
            },
            lap_seconds: self.lap,
            kernel: Some(ProcIo {
                rchar,
                wchar,
                syscr,
                syscw,
                read_bytes: 0,
                write_bytes: if claim.op == Some(Op::Write) {
                    claim.bytes
                } else {
                    0
                },
            }),
            device: None,
            pressure: None,
        }
    }
}

/// [`FixedMeter`]'s costs over a modelled page cache, for whole commands: evicting empties
/// the cache, warming fills it, and every timed region leaves it full (what was read or
/// written stays cached). A read that starts on an empty cache also costs its bytes at
/// `device_bytes_per_second`, and the device is counted as reading them; residency is 0% or
/// 100% accordingly. [`FIXED`] is the meter of the hidden `--meter fixed`.
#[derive(Debug)]
pub struct FixedCacheMeter {
    /// Costs of calls, bytes and the final fsync (its `resident` is not used).
    pub costs: FixedMeter,
    /// Bytes per second from the device, added to reads that start on an empty cache.
    pub device_bytes_per_second: f64,
    cached: AtomicBool,
}

/// The meter of `--meter fixed` (tests, as hyperfine's `--debug-mode`): 1 µs per call,
/// 1 GB/s from the cache, 250 MB/s more from the device, 1 ms per final fsync.
pub static FIXED: FixedCacheMeter = FixedCacheMeter::new(
    FixedMeter {
        seconds_per_call: 1e-6,
        bytes_per_second: 1e9,
        fsync_seconds: 1e-3,
        resident: None,
    },
    250e6,
);

impl FixedCacheMeter {
    /// A meter with these costs whose cache starts full.
    pub const fn new(costs: FixedMeter, device_bytes_per_second: f64) -> Self {
        Self {
            costs,
            device_bytes_per_second,
            cached: AtomicBool::new(true),
        }
    }
}

struct FixedCacheRegion {
    inner: Box<dyn Region>,
    /// Whether the cache was empty when the region started.
    cold: bool,
    device_bytes_per_second: f64,
}

impl Meter for FixedCacheMeter {
    fn start(&self, device: Option<&str>) -> Box<dyn Region> {
        Box::new(FixedCacheRegion {
            inner: self.costs.start(device),
            cold: !self.cached.swap(true, Ordering::Relaxed),
            device_bytes_per_second: self.device_bytes_per_second,
        })
    }

    fn residency(&self, _: &File, _: &str, _: u64, len: u64) -> Option<Residency> {
        let total_pages = len.div_ceil(4096);
        let cached = self.cached.load(Ordering::Relaxed);
        Some(Residency {
            resident_pages: if cached { total_pages } else { 0 },
            total_pages,
        })
    }

    fn prepared(&self, state: CacheState) {
        match state {
            CacheState::Cold => self.cached.store(false, Ordering::Relaxed),
            CacheState::Warm => self.cached.store(true, Ordering::Relaxed),
            CacheState::AsIs => {}
        }
    }

    fn time(&self, claim: &Claim, work: &mut dyn FnMut()) -> f64 {
        self.costs.time(claim, work)
    }
}

impl Region for FixedCacheRegion {
    fn lap(&mut self, claim: &Claim) {
        self.inner.lap(claim);
    }

    fn stop(self: Box<Self>, claim: &Claim) -> Measured {
        let mut measured = self.inner.stop(claim);
        if self.cold && claim.op == Some(Op::Read) {
            measured.elapsed.seconds += claim.bytes as f64 / self.device_bytes_per_second;
            if let Some(kernel) = measured.kernel.as_mut() {
                kernel.read_bytes = claim.bytes;
            }
        }
        measured
    }
}
