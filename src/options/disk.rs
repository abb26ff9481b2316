//! `disk`'s choices beyond one panel: the preset or profile (their rows on this machine),
//! the queue-depth curve (its depths, its latency target), the fsync preset (its target)
//! and the sync-methods preset (its block sizes and region).

use crate::cli::{DiskArgs, DiskProfile};
use crate::error::input;
use crate::measure::percentile::{Percentile, Target};
use crate::units::parse_duration;
use crate::workload::Op;
use crate::workload::panel::{self, PanelNote, PresetKind, RowSpec};
use crate::workload::split::{BlockSplit, SizeShare};
use anyhow::{Context, Result};

/// The curve's depths when none are given: 1 to 128 in powers of two.
pub const DEFAULT_DEPTHS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, 128];

/// The fsync preset's target when none is given: fdatasync's p99 under 10 ms, the figure
/// etcd's documentation gives for a disk fast enough for its write-ahead log.
pub const FSYNC_TARGET: Target = Target {
    limit_us: 10_000.0,
    percentile: Percentile::P99,
};

/// What `disk` runs.
#[derive(Debug, Clone, PartialEq)]
pub enum DiskMode {
    /// The rows of [`super::DiskOptions::rows`], each for the runtime.
    Panel,
    /// One row at several depths (and/or the search for the deepest under a target).
    Curve(Box<CurveOptions>),
    /// One row in an open loop at one rate or several (and/or the search for the highest
    /// rate under a latency target).
    Rates(Box<RateOptions>),
    /// Small writes each followed by fdatasync.
    Fsync(FsyncOptions),
    /// Every way to make a write durable, compared.
    SyncMethods(SyncMethodsOptions),
}

/// The queue-depth curve.
#[derive(Debug, Clone, PartialEq)]
pub struct CurveOptions {
    /// The row whose depth varies (its own depth is the first of `depths`).
    pub spec: RowSpec,
    /// The depths, ascending, without repeats.
    pub depths: Vec<usize>,
    /// Whether every depth is run (`--depth-curve`, `--depths`); else only the search.
    pub sweep: bool,
    /// The latency target to search the deepest queue for.
    pub target: Option<Target>,
}

/// The most an open-loop row keeps in flight per thread when `--depth` does not say:
/// enough for a fast NVMe device's peak (its IOPS × its latency) without hiding a device
/// that cannot keep up behind an endless queue.
pub const DEFAULT_RATE_CAP: usize = 128;

/// The most steps `--rate` may ask for.
pub const MAX_RATE_STEPS: usize = 100;

/// The highest rate `--rate` may ask for, I/Os per second (a schedule finer than this is
/// below what the clock and one submission per I/O can keep).
pub const MAX_RATE_IOPS: f64 = 10_000_000.0;

/// A rate asked of an open-loop row.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// I/Os per second.
    Iops(f64),
    /// A percent of the peak the closed-loop probe finds.
    Percent(f64),
}

/// The open loop.
#[derive(Debug, Clone, PartialEq)]
pub struct RateOptions {
    /// The row (its depth the cap on what each thread keeps in flight).
    pub spec: RowSpec,
    /// The rates, in the order given (a range ascending).
    pub steps: Vec<Rate>,
    /// How arrivals are spaced.
    pub arrivals: crate::workload::arrivals::Arrivals,
    /// The latency target to search the highest rate for.
    pub target: Option<Target>,
}

impl RateOptions {
    /// Whether a closed-loop probe of the peak is needed: a rate in percent, or a target
    /// (its answer is said against the peak).
    pub fn needs_peak(&self) -> bool {
        self.target.is_some() || self.steps.iter().any(|r| matches!(r, Rate::Percent(_)))
    }
}

/// Parses one rate: `20000`, `20k`, `1.5m` (I/Os per second, k = 1,000) or `50%` (of the
/// peak).
fn one_rate(text: &str) -> Option<Rate> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v = p.trim().parse::<f64>().ok()?;
        return (v.is_finite() && v > 0.0 && v <= 1000.0).then_some(Rate::Percent(v));
    }
    let lower = t.to_ascii_lowercase();
    let (num, mult) = match lower.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => match lower.strip_suffix('m') {
            Some(n) => (n, 1e6),
            None => (lower.as_str(), 1.0),
        },
    };
    let v = num.trim().parse::<f64>().ok()? * mult;
    (v.is_finite() && v > 0.0 && v <= MAX_RATE_IOPS).then_some(Rate::Iops(v))
}

/// Parses `--rate`: one rate (`20k`, `50%`), a list (`10k,20k,40k`) or a range of steps
/// (`10%..100%`: ten steps; `5k..50k:5k`: every 5k).
pub fn rates(text: &str, runtime: std::time::Duration, what: &str) -> Result<Vec<Rate>> {
    let bad = |why: String| {
        input(format!(
            "{what}: --rate '{text}': {why} (I/Os per second or a percent of the peak: 20k, 50%, a list 10k,20k, or a range 10%..100% or 5k..50k:5k)"
        ))
    };
    let parse = |item: &str| {
        one_rate(item).ok_or_else(|| {
            bad(format!(
                "'{}' is not a rate above 0 (at most 10m I/Os per second, 1000%)",
                item.trim()
            ))
        })
    };
    let steps = if let Some((from, rest)) = text.split_once("..") {
        let (to, step) = match rest.split_once(':') {
            Some((t, s)) => (t, Some(s)),
            None => (rest, None),
        };
        let (from, to) = (parse(from)?, parse(to)?);
        let step = step.map(parse).transpose()?;
        let value = |r: Rate| match r {
            Rate::Iops(v) | Rate::Percent(v) => v,
        };
        let same = |a: Rate, b: Rate| std::mem::discriminant(&a) == std::mem::discriminant(&b);
        if !same(from, to) || step.is_some_and(|s| !same(s, from)) {
            return Err(bad(
                "the ends and the step must all be rates or all percents".into(),
            ));
        }
        let (lo, hi) = (value(from), value(to));
        if lo >= hi {
            return Err(bad("the range must go up".into()));
        }
        let gap = step.map_or((hi - lo) / 9.0, value);
        // Counted as a float first: a step of 1e-300 would overflow the count.
        let steps = ((hi - lo) / gap + 1e-9).floor() + 1.0;
        if steps.is_nan() || steps > MAX_RATE_STEPS as f64 {
            return Err(bad(format!(
                "{} steps; at most {MAX_RATE_STEPS}",
                if steps.is_finite() && steps < 1e15 {
                    format!("{steps:.0}")
                } else {
                    "too many".to_string()
                }
            )));
        }
        (0..steps as usize)
            .map(|i| {
                // Kept to a thousandth: no two steps of a range round to one rate.
                let v = ((lo + gap * i as f64) * 1e3).round() / 1e3;
                match from {
                    Rate::Iops(_) => Rate::Iops(v),
                    Rate::Percent(_) => Rate::Percent(v),
                }
            })
            .collect()
    } else {
        text.split(',').map(parse).collect::<Result<Vec<_>>>()?
    };
    if steps.len() > MAX_RATE_STEPS {
        return Err(bad(format!(
            "{} steps; at most {MAX_RATE_STEPS}",
            steps.len()
        )));
    }
    let low = steps
        .iter()
        .filter_map(|r| match r {
            Rate::Iops(v) => Some(*v),
            Rate::Percent(_) => None,
        })
        .fold(f64::INFINITY, f64::min);
    let ios = low * runtime.as_secs_f64();
    if ios < MIN_RATE_IOS as f64 {
        return Err(bad(format!(
            "{low} I/Os per second for {} is {ios:.0} I/Os, and a p99 needs {MIN_RATE_IOS} at least: raise the rate or --runtime",
            crate::units::format_seconds(runtime.as_secs_f64()),
        )));
    }
    Ok(steps)
}

/// The fewest I/Os a rate's run must be asked for: enough for a p99 to be one of many.
pub const MIN_RATE_IOS: u64 = 100;

/// The fsync preset.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FsyncOptions {
    /// Bytes per write.
    pub block: u64,
    /// fdatasync's percentile and the time it must stay under.
    pub target: Target,
}

/// The sync-methods preset.
#[derive(Debug, Clone, PartialEq)]
pub struct SyncMethodsOptions {
    /// Bytes per write, one set of rows each (8 KiB unless `--bs` gives a list).
    pub blocks: Vec<u64>,
    /// Bytes each scratch file holds and the writes go through: 16 MiB (pg_test_fsync's
    /// file), or `--size` where smaller.
    pub region: u64,
}

/// The command whose schema a `disk` run's document has: `disk`, `disk-curve` or
/// `disk-fsync` or `disk-sync-methods` (from the arguments alone, for a document interrupted before its result).
pub fn schema_command(args: &DiskArgs) -> &'static str {
    let more = &args.more;
    if more.rate.is_some() {
        "disk-rates"
    } else if more.depth_curve || more.depths.is_some() || more.latency_target.is_some() {
        "disk-curve"
    } else if more.preset.as_deref() == Some("fsync") {
        "disk-fsync"
    } else if more.preset.as_deref() == Some("sync-methods") {
        "disk-sync-methods"
    } else {
        "disk"
    }
}

/// Refuses rows whose buffers (`--bs` × `--depth` × `--threads`, each buffer touched before
/// the row starts) would take more than half of this machine's memory: the run would push
/// the machine into swap or the OOM killer instead of measuring the disk.
pub fn buffers_fit(mode: &DiskMode, rows: &[RowSpec], what: &str) -> Result<()> {
    let Some(memory) = crate::measure::env::meminfo_bytes("MemTotal") else {
        return Ok(());
    };
    buffers_fit_in(mode, rows, memory, what)
}

/// [`buffers_fit`] on a machine with `memory` bytes.
pub fn buffers_fit_in(mode: &DiskMode, rows: &[RowSpec], memory: u64, what: &str) -> Result<()> {
    let deepest = match mode {
        DiskMode::Curve(c) => c.depths.iter().copied().max().unwrap_or(1),
        _ => 0,
    };
    for row in rows {
        let depth = row.depth.max(deepest) as u64;
        let need = row
            .block
            .saturating_mul(depth)
            .saturating_mul(row.threads as u64);
        if need > memory / 2 {
            return Err(input(format!(
                "{what}: {} {} needs {} of buffers ({} × depth {depth} × {} thread(s)), more than half of this machine's memory ({}); lower --bs, --depth or --threads",
                row.name(),
                row.op.name(),
                crate::units::format_size(need),
                crate::units::format_size(row.block),
                row.threads,
                crate::units::format_size(memory)
            )));
        }
    }
    Ok(())
}

/// Parses `--depths`: comma-separated depths from 1 to `max`, sorted, repeats dropped.
pub fn depths(text: &str, max: usize, what: &str) -> Result<Vec<usize>> {
    let mut out = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        match item.parse::<usize>() {
            Ok(d) if (1..=max).contains(&d) => out.push(d),
            _ => {
                return Err(input(format!(
                    "{what}: --depths '{text}': '{item}' is not a depth from 1 to {max} (a list such as 1,2,4,8)"
                )));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parses a latency target: `2ms`, `500us:p99.9`, `10ms:99` (the percentile defaults to p99).
pub fn target(text: &str, flag: &str, what: &str) -> Result<Target> {
    let bad = |why: &str| {
        input(format!(
            "{what}: {flag} '{text}': {why} (a time and an optional percentile: 2ms, 500us:p99.9, 10ms:p99)"
        ))
    };
    let (time, pct) = match text.split_once(':') {
        Some((t, p)) => (t, Some(p)),
        None => (text, None),
    };
    let duration = parse_duration(time).map_err(|_| bad("not a time"))?;
    if duration.is_zero() {
        return Err(bad("the time must be above 0"));
    }
    let percentile = match pct {
        None => Percentile::P99,
        Some(p) => Percentile::parse(p)
            .ok_or_else(|| bad("the percentile is one of p50, p90, p99, p99.9, p99.99, max"))?,
    };
    Ok(Target {
        limit_us: duration.as_secs_f64() * 1e6,
        percentile,
    })
}

/// Parses a `--bs` of mixed sizes (fio's `bssplit`): `4k:60,64k:30,1m:10`, each size a
/// multiple of 512 bytes (O_DIRECT), the shares adding up to 100.
pub fn block_split(text: &str, what: &str) -> Result<BlockSplit> {
    let bad = |why: String| {
        input(format!(
            "{what}: --bs '{text}': {why} (sizes with their percent of the I/Os: 4k:60,64k:30,1m:10)"
        ))
    };
    let mut parts = Vec::new();
    for item in text.split(',') {
        let Some((size, pct)) = item.trim().split_once(':') else {
            return Err(bad(format!("'{item}' has no share")));
        };
        let bytes = super::block_size(size.trim(), what)
            .map_err(|_| bad(format!("'{size}' is not a block size")))?;
        if !bytes.is_multiple_of(512) {
            return Err(bad(format!(
                "{size} is not a multiple of 512 bytes, which O_DIRECT needs"
            )));
        }
        let percent = match pct.trim().trim_end_matches('%').parse::<u8>() {
            Ok(p) if p <= 100 => p,
            _ => return Err(bad(format!("'{pct}' is not a percent from 1 to 100"))),
        };
        parts.push(SizeShare { bytes, percent });
    }
    BlockSplit::new(&parts).map_err(bad)
}

/// Parses `--mix`: the percent of a mix's I/Os that read, 0 to 100 (`70`, `70%`).
pub fn mix_percent(text: &str, what: &str) -> Result<u8> {
    match text.trim().trim_end_matches('%').parse::<u8>() {
        Ok(p) if p <= 100 => Ok(p),
        _ => Err(input(format!(
            "{what}: --mix '{text}' is not a percent of reads from 0 to 100 (70: 70% of the I/Os read, 30% write)"
        ))),
    }
}

/// The rows with their mixes: a mix row (`--rw randrw|rw`, a profile's Mix) comes after the
/// pure read and write rows of its shape, which its cost is measured against (added where
/// missing); with `--mix` every mix reads that share and a panel gains a Mix row after
/// each shape's write (KDiskMark's Mix). Refused where a mix has no meaning: the depth
/// curve and the fsync presets.
pub fn with_mixes(
    mode: &DiskMode,
    rows: Vec<RowSpec>,
    mix: Option<u8>,
    what: &str,
) -> Result<Vec<RowSpec>> {
    let mixed = rows.iter().any(|r| r.mix.is_some());
    match mode {
        DiskMode::Rates(_) if mix.is_some() && !mixed => Err(input(format!(
            "{what}: --mix with --rate is the read share of the open loop's row: give --rw randrw or rw"
        ))),
        DiskMode::Curve(_) if mixed || mix.is_some() => Err(input(format!(
            "{what}: the depth curve runs one direction: --rw read, write, randread or randwrite, without --mix"
        ))),
        DiskMode::Fsync(_) | DiskMode::SyncMethods(_) if mix.is_some() => Err(input(format!(
            "{what}: --mix is for the panel and --rw randrw|rw; the fsync and sync-methods presets only write"
        ))),
        DiskMode::Panel if mixed || mix.is_some() => {
            let has_mix = |w: &RowSpec| {
                rows.iter()
                    .any(|r| r.mix.is_some() && r.pure(Op::Write) == *w)
            };
            let mut out: Vec<RowSpec> = Vec::new();
            let push = |out: &mut Vec<RowSpec>, r: RowSpec| {
                if !out.contains(&r) {
                    out.push(r);
                }
            };
            for &r in &rows {
                match (r.mix, r.op) {
                    (Some(_), _) => {
                        let r = mix.map_or(r, |read| r.mixed(read));
                        push(&mut out, r.pure(Op::Read));
                        push(&mut out, r.pure(Op::Write));
                        push(&mut out, r);
                    }
                    (None, Op::Write) => {
                        push(&mut out, r);
                        if let Some(read) = mix
                            && !has_mix(&r)
                        {
                            push(&mut out, r.mixed(read));
                        }
                    }
                    (None, Op::Read) => push(&mut out, r),
                }
            }
            Ok(out)
        }
        _ => Ok(rows),
    }
}

/// The preset asked for (by `--profile` or `--preset`), if any.
fn preset_asked(args: &DiskArgs, what: &str) -> Result<Option<&'static panel::Preset>> {
    let name = match (&args.more.profile, &args.more.preset) {
        (Some(DiskProfile::Default), _) => "default",
        (Some(DiskProfile::Peak), _) => "peak",
        (Some(DiskProfile::RealWorld), _) => "real-world",
        (None, Some(name)) => name.as_str(),
        (None, None) => return Ok(None),
    };
    panel::preset(name).map(Some).ok_or_else(|| {
        let names: Vec<&str> = panel::PRESETS.iter().map(|p| p.name).collect();
        input(format!(
            "{what}: no preset '{name}' (the presets: {}; `ioscope disk --list` shows their rows)",
            names.join(", ")
        ))
    })
}

/// What `disk` runs, its rows and what they became on this machine, from the arguments and
/// the custom row (`custom`: from --rw/--bs/--depth/--threads, `None` without --rw).
pub fn mode(
    args: &DiskArgs,
    custom: Option<RowSpec>,
    runtime: std::time::Duration,
    what: &str,
) -> Result<(DiskMode, Vec<RowSpec>, Vec<PanelNote>)> {
    let more = &args.more;
    let curve = more.depth_curve || more.depths.is_some() || more.latency_target.is_some();
    if let Some(text) = &more.rate {
        if more.depth_curve || more.depths.is_some() {
            return Err(input(format!(
                "{what}: --rate runs an open loop; the depth curve a closed one: give one of them"
            )));
        }
        let Some(spec) = custom else {
            return Err(input(format!("{what}: --rate needs a row: --rw")));
        };
        let target = more
            .latency_target
            .as_deref()
            .map(|t| target(t, "--latency-target", what))
            .transpose()?;
        let rates = RateOptions {
            spec,
            steps: rates(text, runtime, what)?,
            arrivals: more
                .arrivals
                .unwrap_or(crate::workload::arrivals::Arrivals::Uniform),
            target,
        };
        return Ok((DiskMode::Rates(Box::new(rates)), vec![spec], Vec::new()));
    }
    if curve && args.depth.is_some() {
        return Err(input(format!(
            "{what}: --latency-target searches the depth: --depth is for one row (give the depths to search with --depths, or --rate for the highest rate at a fixed depth)"
        )));
    }
    let preset = preset_asked(args, what)?;
    let fsync = matches!(preset.map(|p| p.kind), Some(PresetKind::Fsync { .. }));
    if more.fsync_target.is_some() && !fsync {
        return Err(input(format!(
            "{what}: --fsync-target is the verdict of --preset fsync: give that too"
        )));
    }
    let sync_methods = matches!(preset.map(|p| p.kind), Some(PresetKind::SyncMethods { .. }));
    if let Some(p) = preset
        && sync_methods
        && (args.depth.is_some() || args.threads.is_some())
    {
        return Err(input(format!(
            "{what}: --preset {} writes one at a time: --depth and --threads are for the panel (--bs sets its block sizes)",
            p.name
        )));
    }
    if let Some(p) = preset
        && !sync_methods
        && (args.bs.is_some() || args.depth.is_some() || args.threads.is_some())
    {
        return Err(input(format!(
            "{what}: --preset {} sets its own rows: --bs, --depth and --threads describe a custom row (with --rw, without --preset)",
            p.name
        )));
    }
    match preset.map(|p| p.kind) {
        Some(PresetKind::Fsync { block }) => {
            let path = args.path.as_deref().unwrap_or(std::path::Path::new("."));
            if !path.is_dir() {
                return Err(input(format!(
                    "{what}: --preset fsync writes a scratch file of its own: give a directory"
                )));
            }
            let target = match &more.fsync_target {
                Some(t) => target(t, "--fsync-target", what)?,
                None => FSYNC_TARGET,
            };
            Ok((
                DiskMode::Fsync(FsyncOptions { block, target }),
                Vec::new(),
                Vec::new(),
            ))
        }
        Some(PresetKind::SyncMethods { block }) => {
            let path = args.path.as_deref().unwrap_or(std::path::Path::new("."));
            if !path.is_dir() {
                return Err(input(format!(
                    "{what}: --preset sync-methods writes scratch files of its own: give a directory"
                )));
            }
            let blocks = match &args.bs {
                Some(text) => crate::options::block_size_list(text, what).context("--bs")?,
                None => vec![block],
            };
            Ok((
                DiskMode::SyncMethods(SyncMethodsOptions {
                    blocks,
                    region: panel::SYNC_REGION_BYTES,
                }),
                Vec::new(),
                Vec::new(),
            ))
        }
        Some(PresetKind::Panel(shapes)) => {
            let (rows, notes) = panel::rows_of(shapes, panel::cores());
            Ok((DiskMode::Panel, rows, notes))
        }
        None if curve => {
            let Some(spec) = custom else {
                return Err(input(format!("{what}: the curve needs a row: --rw")));
            };
            let depths = match &more.depths {
                Some(text) => depths(text, super::MAX_DISK_DEPTH, what)?,
                None => DEFAULT_DEPTHS.to_vec(),
            };
            let target = more
                .latency_target
                .as_deref()
                .map(|t| target(t, "--latency-target", what))
                .transpose()?;
            let spec = RowSpec {
                depth: depths[0],
                ..spec
            };
            Ok((
                DiskMode::Curve(Box::new(CurveOptions {
                    spec,
                    depths,
                    sweep: more.depth_curve || more.depths.is_some(),
                    target,
                })),
                vec![spec],
                Vec::new(),
            ))
        }
        None => match custom {
            Some(row) => {
                let cores = panel::cores();
                let notes = (row.threads > cores)
                    .then(|| PanelNote::Oversubscribed {
                        row: row.name(),
                        threads: row.threads,
                        cores,
                    })
                    .into_iter()
                    .collect();
                Ok((DiskMode::Panel, vec![row], notes))
            }
            None => match panel::PRESETS[0].kind {
                PresetKind::Panel(shapes) => {
                    let (rows, notes) = panel::rows_of(shapes, panel::cores());
                    Ok((DiskMode::Panel, rows, notes))
                }
                PresetKind::Fsync { .. } | PresetKind::SyncMethods { .. } => {
                    Ok((DiskMode::Panel, Vec::new(), Vec::new()))
                }
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depths_are_sorted_without_repeats_and_zero_is_refused() {
        assert_eq!(depths("8, 1,2,8", 4096, "disk d").unwrap(), [1, 2, 8]);
        for bad in ["0", "1,,2", "x", "5000", "-1"] {
            let e = depths(bad, 4096, "disk d").unwrap_err().to_string();
            assert!(e.contains("--depths"), "{bad}: {e}");
        }
    }

    #[test]
    fn buffers_beyond_half_the_memory_are_refused_with_the_numbers() {
        let row = RowSpec {
            op: crate::workload::Op::Read,
            mix: None,
            split: None,
            dist: None,
            random: true,
            block: 1 << 20,
            depth: 64,
            threads: 4,
            pace: None,
        };
        // 1 MiB × 64 × 4 = 256 MiB: fits in 1 GiB, not in 256 MiB.
        assert!(buffers_fit_in(&DiskMode::Panel, &[row], 1 << 30, "disk d").is_ok());
        let e = buffers_fit_in(&DiskMode::Panel, &[row], 256 << 20, "disk d")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("256 MiB of buffers") && e.contains("--depth"),
            "{e}"
        );
        // The curve's deepest depth counts, not its first.
        let curve = DiskMode::Curve(Box::new(CurveOptions {
            spec: RowSpec { depth: 1, ..row },
            depths: vec![1, 1024],
            sweep: true,
            target: None,
        }));
        let one = RowSpec { depth: 1, ..row };
        assert!(buffers_fit_in(&curve, &[one], 1 << 30, "disk d").is_err());
        assert!(buffers_fit_in(&DiskMode::Panel, &[one], 1 << 30, "disk d").is_ok());
    }

    #[test]
    fn a_mix_comes_after_its_pure_rows_and_a_panel_gains_one_per_shape() {
        let row = |op| RowSpec {
            op,
            mix: None,
            split: None,
            dist: None,
            random: true,
            block: 4096,
            depth: 32,
            threads: 1,
            pace: None,
        };
        let custom = row(Op::Write).mixed(70);
        let rows = with_mixes(&DiskMode::Panel, vec![custom], None, "disk d").unwrap();
        assert_eq!(rows, [row(Op::Read), row(Op::Write), custom]);
        let panel = vec![row(Op::Read), row(Op::Write)];
        let rows = with_mixes(&DiskMode::Panel, panel.clone(), Some(50), "disk d").unwrap();
        assert_eq!(
            rows,
            [row(Op::Read), row(Op::Write), row(Op::Write).mixed(50)]
        );
        assert_eq!(
            with_mixes(&DiskMode::Panel, panel.clone(), None, "disk d").unwrap(),
            panel
        );
        // A profile's Mix row is not repeated, and --mix sets its share.
        let profile = vec![row(Op::Read), row(Op::Write), row(Op::Write).mixed(70)];
        assert_eq!(
            with_mixes(&DiskMode::Panel, profile.clone(), None, "disk d").unwrap(),
            profile
        );
        assert_eq!(
            with_mixes(&DiskMode::Panel, profile, Some(50), "disk d").unwrap(),
            [row(Op::Read), row(Op::Write), row(Op::Write).mixed(50)]
        );
        assert_eq!(mix_percent("70%", "disk d").unwrap(), 70);
        assert_eq!(mix_percent("0", "disk d").unwrap(), 0);
        for bad in ["101", "-1", "x", "", "70.5"] {
            let e = mix_percent(bad, "disk d").unwrap_err().to_string();
            assert!(e.contains("--mix"), "{bad}: {e}");
        }
    }

    #[test]
    fn targets_take_a_time_and_an_optional_percentile() {
        let t = target("2ms", "--latency-target", "disk d").unwrap();
        assert_eq!((t.limit_us, t.percentile), (2000.0, Percentile::P99));
        let t = target("500us:p99.9", "--latency-target", "disk d").unwrap();
        assert_eq!((t.limit_us, t.percentile), (500.0, Percentile::P99_9));
        for bad in ["abc", "0ms", "2ms:p98", "2ms:", ":p99"] {
            let e = target(bad, "--latency-target", "disk d")
                .unwrap_err()
                .to_string();
            assert!(e.contains("--latency-target"), "{bad}: {e}");
        }
    }
}
