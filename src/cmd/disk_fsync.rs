//! `disk --preset fsync`: a database's write-ahead log, as etcd's disk check runs it with
//! fio (`--rw=write --bs=2300 --fdatasync=1`): small sequential writes, buffered, one at a
//! time, each followed by `fdatasync`, for `--runtime`, in a scratch file preallocated with
//! `fallocate` (as fio lays its file out, and etcd its WAL segments), wrapping to its start
//! at its end. The write's latency and the fdatasync's go into separate histograms; the
//! verdict sets fdatasync's percentile against the target (etcd: p99 under 10 ms) by the
//! one rule of [`crate::measure::verdict`].

use crate::cmd::disk::Latency;
use crate::files;
use crate::harness::Harness;
use crate::measure::devstats::Watch;
use crate::measure::inflight::{Window, took};
use crate::measure::latency::histogram;
use crate::options::DiskOptions;
use crate::options::disk::FsyncOptions;
pub use crate::results::disk_fsync::{FsyncReport, Verdict, judge};
use crate::warning::Warning;
use crate::workload::data::DataStream;
use anyhow::{Context, Result};
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::time::Duration;

/// Runs the write-ahead-log pattern for the runtime in a scratch file in the directory.
pub fn execute(
    options: &DiskOptions,
    fsync: &FsyncOptions,
    harness: &Harness,
) -> Result<FsyncReport> {
    let out = files::create_scratch(&options.path, "fsync", options.size, options.min_free)?;
    let name = out.name().to_string();
    let file = out.file();
    // SAFETY: fallocate only changes the blocks of a descriptor we hold open.
    let preallocated =
        unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, options.size as libc::off_t) } == 0;
    let device_name = crate::measure::diskstats::device_of(out.path());
    let block = fsync.block as usize;
    let mut buf = vec![0u8; block];
    let mut writes_h = histogram();
    let mut syncs_h = histogram();
    let (mut writes, mut wraps, mut offset) = (0u64, 0u64, 0u64);
    let mut interrupted = false;
    harness.progress.begin("fsync", None);
    let watch = device_name.as_deref().and_then(Watch::start);
    // The process's CPU, not the thread's: getrusage brings a running thread's own figure
    // up to date only at a tick or a switch (off by up to 4 ms here), the process's at once.
    let cpu_before = crate::measure::timer::process_cpu();
    let window = Window::open(
        options.runtime,
        Duration::from_secs(crate::options::MAX_DISK_RUNTIME_SECONDS),
    );
    loop {
        // At least one write and fdatasync: a run never measures nothing.
        if writes > 0 && window.over() {
            break;
        }
        if crate::interrupt::requested() {
            interrupted = true;
            break;
        }
        if offset + block as u64 > options.size {
            offset = 0;
            wraps += 1;
        }
        DataStream::new(options.seed, offset).fill(&mut buf);
        let (written, write_ns) = took(|| file.write_all_at(&buf, offset));
        written.with_context(|| format!("write {name} at byte {offset}"))?;
        let (synced, sync_ns) = took(|| file.sync_data());
        synced.with_context(|| format!("fdatasync {name} after the write at byte {offset}"))?;
        writes_h.saturating_record(write_ns);
        syncs_h.saturating_record(sync_ns);
        writes += 1;
        offset += block as u64;
    }
    let seconds = window.seconds();
    let cpu_after = crate::measure::timer::process_cpu();
    let device = watch.as_ref().and_then(Watch::finish);
    harness.progress.end();
    let fdatasync_latency_us = Latency::of(&syncs_h);
    let watched = crate::cmd::disk_curve::pick(&fdatasync_latency_us, fsync.target.percentile);
    let mut out = out;
    out.keep_on_drop(options.keep && !interrupted);
    Ok(FsyncReport {
        file: name,
        file_bytes: options.size,
        preallocated,
        device_name: device_name.clone(),
        runtime_seconds: options.runtime.as_secs_f64(),
        block_bytes: fsync.block,
        writes,
        bytes: writes * fsync.block,
        seconds,
        write_latency_us: Latency::of(&writes_h),
        fdatasync_latency_us,
        syncs_per_second: writes as f64 / seconds.max(1e-12),
        wraps,
        target: fsync.target,
        verdict: judge(watched, fsync.target.limit_us, device_name.is_some()),
        device,
        cpu: crate::results::disk::CpuUse::between(cpu_before, cpu_after, seconds, writes),
        complete: !interrupted,
        warnings: if interrupted {
            vec![Warning::Partial]
        } else {
            Vec::new()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_verdict_follows_the_numbers_not_the_usual_story() {
        // A fast disk: 2 ms against 10 ms.
        assert_eq!(judge(2_000.0, 10_000.0, true), Verdict::Under);
        // 10.5 ms and 9.5 ms are both within 10% of 10 ms: neither pass nor fail is told.
        assert_eq!(judge(10_500.0, 10_000.0, true), Verdict::AtTarget);
        assert_eq!(judge(9_500.0, 10_000.0, true), Verdict::AtTarget);
        assert_eq!(judge(25_000.0, 10_000.0, true), Verdict::Over);
        // A fast figure on tmpfs is no pass: no disk was waited for.
        assert_eq!(judge(3.0, 10_000.0, false), Verdict::NoDevice);
    }
}
