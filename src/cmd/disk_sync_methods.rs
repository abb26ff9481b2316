//! `disk --preset sync-methods`: pg_test_fsync's comparison of the ways to make a write
//! durable (PostgreSQL's `wal_sync_method`), with the device's own count of the flushes
//! each sent. For each block size, writes per op (1, then 2) and method of
//! [`SyncMethod::ALL`], a fresh scratch file in the directory is written whole and synced
//! (as pg_test_fsync writes its 16 MiB file first, so no write fills a hole), then written
//! again in order, one operation at a time, after an untimed warm-up (a tenth of the
//! runtime, at most 0.2 s), for `--runtime`, wrapping to its start at its
//! end. The disk's flush count (`/proc/diskstats`, kernel ≥ 5.5) is read around the timed
//! loop. A method the kernel or file system refuses is a row skipped with the reason.

use crate::engine::sync::{SyncMethod, SyncWriter};
use crate::files;
use crate::harness::Harness;
use crate::measure::devstats::{self, Counters};
use crate::measure::inflight::{Window, took};
use crate::measure::latency::histogram;
use crate::options::DiskOptions;
use crate::options::disk::SyncMethodsOptions;
use crate::results::disk::{CpuUse, Latency};
pub use crate::results::disk_sync_methods::{
    Flushes, NotCounted, SLICES, Speed, SyncMethodsReport, SyncRow,
};
use crate::warning::Warning;
use crate::workload::data::DataStream;
use anyhow::{Context, Result};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::time::Duration;

/// The warm-up before each row's timed loop is this share of `--runtime` (1/10)...
const WARM_UP_SHARE: u32 = 10;

/// ...and at most this long.
const WARM_UP_LONGEST: Duration = Duration::from_millis(200);

/// What the rows share: where, how much, and the disk whose flushes are counted.
struct Setup<'a> {
    options: &'a DiskOptions,
    region: u64,
    disk: Option<String>,
}

/// Runs every method, writes per op and block size in scratch files in the directory.
pub fn execute(
    options: &DiskOptions,
    methods: &SyncMethodsOptions,
    harness: &Harness,
) -> Result<SyncMethodsReport> {
    let cache = crate::measure::writecache::of(&options.path);
    let disk = cache.device.clone();
    let stacked = |d: &str| {
        let sys = std::path::Path::new("/sys/block").join(d);
        sys.join("dm").exists() || sys.join("md").exists()
    };
    let flushes_not_counted = match disk.as_deref() {
        None => Some(NotCounted::NoDevice),
        Some(d) => match devstats::read(d) {
            None => Some(NotCounted::NoDevice),
            Some(c) if c.flushes.is_none() => Some(NotCounted::OldKernel),
            Some(_) if stacked(d) => Some(NotCounted::Stacked),
            Some(_) => None,
        },
    };
    let setup = Setup {
        options,
        region: methods.region,
        disk: disk.filter(|_| flushes_not_counted.is_none()),
    };
    let mut rows = Vec::new();
    let mut interrupted = false;
    'all: for &block in &methods.blocks {
        for writes in [1u32, 2] {
            for method in SyncMethod::ALL {
                if crate::interrupt::requested() {
                    interrupted = true;
                    break 'all;
                }
                harness.progress.begin(method.name(), None);
                let row = run_row(&setup, method, writes, block);
                harness.progress.end();
                let (row, stopped) = row?;
                rows.push(row);
                if stopped {
                    interrupted = true;
                    break 'all;
                }
            }
        }
    }
    let mut report = SyncMethodsReport {
        dir: crate::text::lossless(options.path.as_os_str()),
        region_bytes: methods.region,
        device_name: cache.device,
        write_cache: cache.mode,
        fua: cache.fua,
        flushes_not_counted,
        runtime_seconds: options.runtime.as_secs_f64(),
        rows,
        speed: Speed::NoComparison,
        flush_check: Flushes::NoFdatasync,
        complete: !interrupted,
        warnings: if interrupted {
            vec![Warning::Partial]
        } else {
            Vec::new()
        },
    };
    report.judged();
    Ok(report)
}

/// A row skipped for `reason`.
fn skipped(method: SyncMethod, writes: u32, block: u64, reason: String) -> SyncRow {
    SyncRow {
        method,
        writes_per_op: writes,
        block_bytes: block,
        skipped: Some(reason),
        ops: 0,
        seconds: 0.0,
        ops_per_second: 0.0,
        slices_per_second: Vec::new(),
        latency_us: None,
        flushes: None,
        flush_ms: None,
        device_writes: None,
        cpu: None,
        evicted: None,
    }
}

/// One row in its own scratch file: the row and whether an interruption stopped it.
fn run_row(setup: &Setup, method: SyncMethod, writes: u32, block: u64) -> Result<(SyncRow, bool)> {
    let options = setup.options;
    // One name per row: `--keep` leaves each row's file, and no row may meet another's.
    let tag = format!("sync-{}-{writes}x{block}", method.slug());
    // At least one op's writes: a `--size` of one block rewrites it every op (at 2 writes
    // a sync, the first two blocks), as pg_test_fsync does.
    let region = setup.region.max(block * u64::from(writes));
    let out = files::create_scratch(&options.path, &tag, region, options.min_free)?;
    let name = out.name().to_string();
    // The region written whole and made durable first, untimed.
    let mut chunk = vec![0u8; (1 << 20).min(region as usize)];
    let mut at = 0u64;
    while at < region {
        let n = chunk.len().min((region - at) as usize);
        DataStream::new(options.seed, at).fill(&mut chunk[..n]);
        out.file()
            .write_all_at(&chunk[..n], at)
            .with_context(|| format!("write {name} at byte {at}"))?;
        at += n as u64;
    }
    out.file()
        .sync_all()
        .with_context(|| format!("fsync {name}"))?;
    // Then none of it left in the page cache, so every row starts alike whatever wrote the
    // file: the folios a 1 MiB write leaves are large, and an 8 KiB write into one, synced,
    // cost this kernel (6.18, ext4) about 20 µs more CPU per op than into a page-sized one
    // (a 16 MiB file written in one call: 1.2x fewer fdatasyncs a second), and an O_DIRECT
    // write into cached pages must first drop them (as `disk` evicts before O_DIRECT rows).
    crate::measure::cache::evict(out.file(), &name)?;
    // Whether it took: tmpfs keeps its pages (they are the file).
    // (mincore needs a mapping, a mapping a descriptor open for reading: the scratch one is
    // write-only, so a second, never through a link.)
    let evicted = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(out.path())
        .ok()
        .and_then(|f| crate::measure::cache::residency(&f, &name, region).ok())
        .map(|r| r.resident_pages == 0);
    let seed = options.seed;
    let writer = SyncWriter::open(out.path(), &name, method, block as usize, |b| {
        DataStream::new(seed ^ 0x5eed, 0).fill(b)
    })?;
    let mut writer = match writer {
        Ok(w) => w,
        Err(reason) => return Ok((skipped(method, writes, block, reason), false)),
    };
    // Offsets: `writes` blocks in order, wrapping to the start where they would pass the end.
    let per_op = block * writes as u64;
    let mut offset = 0u64;
    let next = |offset: &mut u64| -> Vec<u64> {
        if *offset + per_op > region {
            *offset = 0;
        }
        let v: Vec<u64> = (0..writes as u64).map(|i| *offset + i * block).collect();
        *offset += per_op;
        v
    };
    if let Err(reason) = writer.probe(&next(&mut offset))? {
        return Ok((skipped(method, writes, block, reason), false));
    }
    // Untimed warm-up, so no row starts cold: on this VM's tmpfs the first row of a run was
    // often the slowest (not always; the 2 vCPUs are shared, so the cause is not settled).
    let warm = Window::open(
        (options.runtime / WARM_UP_SHARE).min(WARM_UP_LONGEST),
        WARM_UP_LONGEST,
    );
    while !warm.over() && !crate::interrupt::requested() {
        let at = next(&mut offset);
        writer
            .op(&at)
            .with_context(|| format!("{} {name} at byte {} (warm-up)", method.about(), at[0]))?;
    }
    let mut h = histogram();
    let mut slice_ops = [0u64; SLICES];
    let runtime = options.runtime.as_secs_f64();
    let mut ops = 0u64;
    let mut interrupted = false;
    let before: Option<Counters> = setup.disk.as_deref().and_then(devstats::read);
    let cpu_before = crate::measure::timer::process_cpu();
    let window = Window::open(
        options.runtime,
        Duration::from_secs(crate::options::MAX_DISK_RUNTIME_SECONDS),
    );
    loop {
        // At least one operation: a row never measures nothing.
        if ops > 0 && window.over() {
            break;
        }
        if crate::interrupt::requested() {
            interrupted = true;
            break;
        }
        let at = next(&mut offset);
        let (done, ns) = took(|| writer.op(&at));
        done.with_context(|| {
            format!(
                "{} {name} at byte {} ({} write(s) per op)",
                method.about(),
                at[0],
                writes
            )
        })?;
        h.saturating_record(ns);
        ops += 1;
        let now = window.seconds();
        let slice = ((now / runtime.max(1e-12)) * SLICES as f64) as usize;
        let slice = slice.min(SLICES - 1);
        slice_ops[slice] += 1;
    }
    let seconds = window.seconds();
    let cpu_after = crate::measure::timer::process_cpu();
    let after: Option<Counters> = setup.disk.as_deref().and_then(devstats::read);
    drop(writer);
    let mut out = out;
    out.keep_on_drop(options.keep && !interrupted);
    let (flushes, flush_ms, device_writes) = match (before, after) {
        (Some(b), Some(a)) => (
            b.flushes_until(&a),
            b.flush_ms_until(&a),
            Some(a.writes.saturating_sub(b.writes)),
        ),
        _ => (None, None, None),
    };
    // Each slice's rate over its own span (the last one's to the loop's end); a slice
    // without an op (a run shorter than its runtime, or slower ops) is left out.
    let mut slices_per_second = Vec::new();
    let mut start = 0.0;
    for (i, &n) in slice_ops.iter().enumerate() {
        let end = if i + 1 == SLICES {
            seconds
        } else {
            (runtime * (i + 1) as f64 / SLICES as f64).min(seconds)
        };
        if n > 0 && end > start {
            slices_per_second.push(n as f64 / (end - start));
        }
        start = end;
    }
    Ok((
        SyncRow {
            method,
            writes_per_op: writes,
            block_bytes: block,
            skipped: None,
            ops,
            seconds,
            ops_per_second: ops as f64 / seconds.max(1e-12),
            slices_per_second,
            latency_us: Some(Latency::of(&h)),
            flushes,
            flush_ms,
            device_writes,
            cpu: CpuUse::between(cpu_before, cpu_after, seconds, ops),
            evicted,
        },
        interrupted,
    ))
}
