//! `calibrate`: find the file size (a multiple of the block size) whose read takes a
//! reasonable time. Short probes measure the rate; the rate then predicts the size that
//! lands in the middle of the window, so the whole search costs little more than one read
//! of the answer. `--grow` appends data when the file is too small, within the free-space
//! margin; any growth is undone if the search fails or is interrupted.

use crate::engine::flag;
use crate::engine::{self, Engine, Op};
use crate::error::{Failure, input};
use crate::files::{self, InputKind};
use crate::harness::{Harness, Setup, Target};
use crate::measure::cache::CacheState;
use crate::measure::env::meminfo_bytes;
use crate::options::CalibrateOptions;
pub use crate::results::calibrate::{CalibrateReport, Probe, all_started_evicted};
use crate::units::{KIB, MIB, format_seconds, format_size};
use crate::warning::Warning;
use crate::workload::plan::Plan;
use anyhow::{Context, Result};
use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom};

/// The most probes before giving up (each one is cheap until the last few).
const MAX_PROBES: usize = 16;

/// The file being calibrated, and the undo record for `--grow`.
struct Calibrated {
    file: File,
    name: String,
    len: u64,
    original_len: u64,
    keep_growth: bool,
}

impl Drop for Calibrated {
    fn drop(&mut self) {
        if self.len != self.original_len && !self.keep_growth {
            let _ = self.file.set_len(self.original_len);
        }
    }
}

/// Runs the search.
pub fn execute(options: &CalibrateOptions, harness: &Harness) -> Result<CalibrateReport> {
    let opened = files::open_regular(&options.path, "calibrate")?;
    let name = opened.name.clone();
    if options.expect.is_some() && files::file_id(&opened.file) != options.expect {
        return Err(input(format!(
            "calibrate {name}: the file was replaced under the study; not read or grown"
        )));
    }
    let file = if options.grow {
        // --grow writes: never through a symbolic link (the file it names could be anyone's),
        // and only to the very file just opened for reading.
        files::refuse_symlink(&options.path, &format!("calibrate {name} --grow"))?;
        use std::os::unix::fs::OpenOptionsExt;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&options.path)
            .map_err(|e| input(format!("open {name} for --grow: {}", files::describe(&e))))?;
        let (a, b) = (files::file_id(&opened.file), files::file_id(&file));
        if a.is_none() || a != b {
            return Err(input(format!(
                "calibrate {name} --grow: the file was replaced while it was opened; not grown"
            )));
        }
        file
    } else {
        opened.file
    };
    let mut target = Calibrated {
        file,
        name,
        len: opened.len,
        original_len: opened.len,
        keep_growth: false,
    };
    let bs = options.block_size;
    let (min, max) = (options.min.as_secs_f64(), options.max.as_secs_f64());
    let goal = (min + max) / 2.0;
    let trust = (min / 5.0).min(1.0);
    let room = if options.grow {
        files::room(&files::parent_dir(&options.path), options.min_free)?
    } else {
        0
    };
    let mut largest = round_down(target.len + room, bs);
    if options.grow && options.cache == CacheState::Warm {
        // A warm read needs the file in the page cache: growing it past half the memory
        // available cannot give a warm time (and once filled a disk with tens of GiB).
        let memory = meminfo_bytes("MemAvailable").unwrap_or(u64::MAX) / 2;
        largest = largest.min(round_down(memory.max(target.len), bs));
    }
    if let Some(cap) = options.max_bytes {
        largest = largest.min(round_down(cap.max(target.len), bs));
    }
    if largest == 0 {
        let fix = if options.grow {
            "and the free-space margin leaves no room to grow it (lower --min-free, or free some space)"
        } else {
            "pass --grow to extend it"
        };
        return Err(input(format!(
            "calibrate {}: the file holds {} bytes, less than one block of {}; {fix}",
            target.name,
            target.len,
            format_size(bs)
        )));
    }
    let setup = options.setup;
    let mut size = round_up((64 * bs).max(256 * KIB), bs).min(largest);
    let mut probes: Vec<Probe> = Vec::new();
    loop {
        if size > target.len {
            if !options.grow {
                return Err(too_small(&target, bs, &probes, size, goal));
            }
            grow(&mut target, harness, size, options.seed)?;
        }
        let probe = timed_read(&target, harness, &setup, size, bs, options.cache)?;
        let t = probe.seconds;
        probes.push(probe);
        if (min..=max).contains(&t) {
            break;
        }
        if probes.len() >= MAX_PROBES {
            return Err(Failure::Check(format!(
                "calibrate {}: no size read in {}..{} after {MAX_PROBES} probes; the read time is too erratic here",
                target.name,
                format_seconds(min),
                format_seconds(max)
            ))
            .into());
        }
        let rate = estimated_rate(&probes, trust);
        let aim = if t < trust / 2.0 { trust } else { goal };
        let mut next = round_up(((rate * aim) as u64).min(size.saturating_mul(64)), bs).max(bs);
        if t < min && next <= size {
            next = size + bs;
        }
        if next > target.len && !options.grow {
            return Err(too_small(&target, bs, &probes, next, goal));
        }
        if next > largest {
            if size == largest {
                return Err(infeasible(&target, options, bs, size, t, goal, rate));
            }
            next = largest;
        }
        size = next;
    }
    target.keep_growth = true;
    let last = probes
        .last()
        .expect("the loop pushes a probe before it breaks")
        .clone();
    let memory_bytes = meminfo_bytes("MemTotal").unwrap_or(0);
    let mut warnings = warnings(options, &probes, memory_bytes);
    if let Some(proof) = last.cache.filter(|p| !p.ok()) {
        warnings.push(Warning::CacheState {
            at: None,
            proof,
            allowed: false,
        });
    }
    if !setup.engine.caps().has(flag::COUNTED) {
        warnings.push(Warning::NotCounted {
            engine: setup.engine.name().to_string(),
        });
    }
    Ok(CalibrateReport {
        file: target.name.clone(),
        engine: setup.engine.name().to_string(),
        block_size: bs,
        cache: options.cache,
        min_seconds: min,
        max_seconds: max,
        bytes: last.bytes,
        block_count: last.bytes / bs,
        seconds: last.seconds,
        bytes_per_second: last.bytes_per_second,
        xor_hex: last.xor_hex.clone(),
        grown_from: (target.len != target.original_len).then_some(target.original_len),
        file_bytes: target.len,
        total_read_seconds: probes.iter().map(|p| p.seconds).sum(),
        probes,
        memory_bytes,
        warnings,
    })
}

/// The read rate to aim with: the median over the probes long enough to trust (so one
/// disturbed probe on a busy machine does not throw the next size off), else the last one's.
fn estimated_rate(probes: &[Probe], trust: f64) -> f64 {
    let rate = |p: &Probe| p.bytes as f64 / p.seconds.max(1e-6);
    let trusted: Vec<f64> = probes
        .iter()
        .filter(|p| p.seconds >= trust / 2.0)
        .map(rate)
        .collect();
    crate::measure::stats::summarize(&trusted)
        .map(|s| s.median)
        .or_else(|| probes.last().map(rate))
        .unwrap_or(1.0)
}

fn round_up(n: u64, unit: u64) -> u64 {
    n.div_ceil(unit).saturating_mul(unit)
}

fn round_down(n: u64, unit: u64) -> u64 {
    n / unit * unit
}

/// Puts the first `size` bytes in the cache state asked for, then reads them with timing.
fn timed_read(
    target: &Calibrated,
    harness: &Harness,
    setup: &Setup,
    size: u64,
    bs: u64,
    state: CacheState,
) -> Result<Probe> {
    let t = Target {
        file: &target.file,
        name: &target.name,
        kind: InputKind::Regular,
        device: None,
    };
    let plan = Plan::sequential(0, size, bs);
    harness.check(t, setup, Op::Read, plan)?;
    harness.prepare(t, &plan, state, false)?;
    let sample = harness.read(t, setup, plan, false, state)?;
    Ok(Probe {
        bytes: size,
        seconds: sample.elapsed.seconds,
        bytes_per_second: sample.bytes_per_second(),
        cache: sample.cache,
        checks_ok: sample.checks.iter().all(|c| c.ok),
        xor_hex: setup
            .engine
            .caps()
            .has(flag::MOVES_BYTES)
            .then(|| crate::checksum::hex(sample.moved.xor)),
    })
}

/// Appends pseudo-random data until the file holds `size` bytes.
fn grow(target: &mut Calibrated, harness: &Harness, size: u64, seed: u64) -> Result<()> {
    let name = target.name.clone();
    let extra = size - target.len;
    let writer = &engine::stream::Stream;
    // The stream engine appends from the current offset: put it at the end.
    (&target.file)
        .seek(SeekFrom::Start(target.len))
        .with_context(|| format!("seek {name} to its end to grow it"))?;
    let job = engine::Job {
        file: &target.file,
        name: &name,
        kind: InputKind::Regular,
        op: Op::Write,
        plan: Plan::sequential(target.len, extra, MIB),
        to_end: false,
        threads: 1,
        depth: 1,
        seed,
        observer: &engine::Interruptible,
    };
    harness.progress.begin(
        &format!("grow {name} to {}", format_size(size)),
        Some(extra),
    );
    let result = writer.run(&job);
    harness.progress.end();
    // Whatever was appended is undone by Calibrated's drop if the search does not succeed.
    target.len = target
        .file
        .metadata()
        .with_context(|| format!("stat {name}"))?
        .len();
    result?;
    target
        .file
        .sync_data()
        .with_context(|| format!("fdatasync {name} after growing it"))?;
    Ok(())
}

fn too_small(
    target: &Calibrated,
    bs: u64,
    probes: &[Probe],
    next: u64,
    goal: f64,
) -> anyhow::Error {
    let (seen, needed) = match probes.last() {
        Some(p) => (
            format!(
                "reading {} at {} takes {}; ",
                format_size(p.bytes),
                format_size(bs),
                format_seconds(p.seconds)
            ),
            ((p.bytes_per_second * goal) as u64).max(next),
        ),
        None => (String::new(), next),
    };
    input(format!(
        "calibrate {}: the file is too small ({}): {seen}a {} read needs about {}; pass --grow to extend it",
        target.name,
        format_size(target.len),
        format_seconds(goal),
        format_size(needed)
    ))
}

fn infeasible(
    target: &Calibrated,
    options: &CalibrateOptions,
    bs: u64,
    size: u64,
    t: f64,
    goal: f64,
    rate: f64,
) -> anyhow::Error {
    let hint = match options.cache {
        CacheState::Warm => {
            "warm reads are fast: try --cache cold, a smaller --min, or a smaller block size"
        }
        _ if options.grow => "try a smaller --min or a smaller block size",
        _ => "try a smaller --min, a smaller block size, or --grow",
    };
    let limit = if options.grow && size > target.original_len {
        format!(
            "the file can grow only to {} here (keeping the free-space margin; warm, within half the memory available; within the caller's cap)",
            format_size(size)
        )
    } else {
        format!(
            "the file holds {} whole block{} of {} ({} of its {}){}",
            size / bs,
            if size / bs == 1 { "" } else { "s" },
            format_size(bs),
            format_size(size),
            format_size(target.len),
            if options.grow {
                ", and the free-space margin leaves no room to grow it"
            } else {
                ""
            }
        )
    };
    Failure::Check(format!(
        "calibrate {}: at {} per read a {} read needs about {}, but {limit}, which reads in {}; {hint}",
        target.name,
        format_size(bs),
        format_seconds(goal),
        format_size((rate * goal) as u64),
        format_seconds(t),
    ))
    .into()
}

/// What the reader should know about the size found (the last of `probes`). A cold size
/// that fits in RAM is a warning only where a probe did not start evicted; where every
/// one did, the section says so in a sentence ([`all_started_evicted`]).
fn warnings(options: &CalibrateOptions, probes: &[Probe], memory: u64) -> Vec<Warning> {
    let Some(last) = probes.last() else {
        return Vec::new();
    };
    let size = last.bytes;
    let ram = memory;
    match (options.cache, memory) {
        (_, 0) => Vec::new(),
        (CacheState::Warm, _) if size > ram => vec![Warning::WarmLargerThanRam { size, ram }],
        (CacheState::Cold, _) if size > ram => vec![Warning::ColdLargerThanRam { size, ram }],
        (CacheState::Warm, _) => vec![Warning::CalibratedWarm],
        (CacheState::Cold, _) if all_started_evicted(probes) => Vec::new(),
        (CacheState::Cold, _) => vec![Warning::ColdFitsInRam { size, ram }],
        (CacheState::AsIs, _) => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(bytes: u64, seconds: f64) -> Probe {
        Probe {
            bytes,
            seconds,
            bytes_per_second: bytes as f64 / seconds,
            cache: None,
            checks_ok: true,
            xor_hex: None,
        }
    }

    #[test]
    fn one_disturbed_probe_does_not_throw_the_rate_off() {
        // Three probes at 100 MB/s and one slowed tenfold by other work on the machine.
        let probes = [
            probe(100_000_000, 1.0),
            probe(200_000_000, 2.0),
            probe(100_000_000, 10.0),
            probe(300_000_000, 3.0),
        ];
        let rate = estimated_rate(&probes, 1.0);
        assert!((rate - 1e8).abs() < 1.0, "{rate}");
    }

    fn cold_probe(resident_pages: u64) -> Probe {
        let cache = serde_json::json!({
            "asked": "cold",
            "residency_before": {"resident_pages": resident_pages, "total_pages": 1000},
            "device_read_bytes": 4096000,
            "bytes": 4096000,
            "verdict": "proven",
        });
        Probe {
            cache: Some(serde_json::from_value(cache).unwrap()),
            ..probe(4_096_000, 0.01)
        }
    }

    #[test]
    fn a_cold_size_that_fits_in_ram_is_a_warning_only_where_an_eviction_did_not_hold() {
        // Every probe 0.0% and 0.9% resident before it: the eviction held, no warning
        // (the section says it in a sentence instead).
        assert!(all_started_evicted(&[cold_probe(0), cold_probe(9)]));
        // One probe found 5% of its range cached: the advice to evict is earned.
        assert!(!all_started_evicted(&[cold_probe(0), cold_probe(50)]));
        // A probe whose residency was not measured proves nothing.
        assert!(!all_started_evicted(&[cold_probe(0), probe(1000, 0.001)]));
        assert!(!all_started_evicted(&[]));
    }

    #[test]
    fn probes_too_short_to_trust_fall_back_to_the_last_one() {
        let probes = [probe(1000, 0.001), probe(4000, 0.002)];
        assert_eq!(estimated_rate(&probes, 1.0), 2e6);
    }
}
