//! `fast`: the XOR of a whole file as fast as the machine allows. Looks at what the input
//! is and how much of it is cached, picks the engine that wins in that case, runs it, and
//! says why it chose it.

use crate::engine::{self, Engine, Job, Moved};
use crate::files::{self, InputKind};
use crate::measure::cache::{self, Residency};
use crate::measure::timer::{Elapsed, Stopwatch};
use crate::options::FastOptions;
use crate::units::{MIB, per_second};
use anyhow::{Context, Result};
use serde::Serialize;
use std::io::{Seek, SeekFrom};

/// Files up to this size are read with one read() call: threads and mappings cost more.
pub const SMALL_FILE: u64 = MIB;
/// At or above this resident share, a file counts as warm.
pub const WARM_FRACTION: f64 = 0.9;
/// At or below this resident share, a file counts as cold; between the two it is mixed.
pub const COLD_FRACTION: f64 = 0.02;

/// What `fast` did and found.
#[derive(Debug, Clone, Serialize)]
pub struct FastReport {
    /// The input's name.
    pub file: String,
    /// Its kind.
    pub input_kind: InputKind,
    /// The engine that ran.
    pub engine: &'static str,
    /// How that engine moves bytes.
    pub method: &'static str,
    /// Why that engine.
    pub reason: String,
    /// Engines considered and passed over, with the reason (`ENGINE: why`), and what the
    /// engine that ran gave up (`ENGINE FEATURE: why`, such as uring without O_DIRECT).
    pub fallbacks: Vec<String>,
    /// Threads used.
    pub threads: usize,
    /// Bytes per read or chunk.
    pub block_size: u64,
    /// Reads in flight per thread (uring).
    pub depth: usize,
    /// Bytes, calls and checksum.
    #[serde(flatten)]
    pub moved: Moved,
    /// The checksum as printed.
    pub xor_hex: String,
    /// Seconds the engine ran.
    pub seconds: f64,
    /// Bytes per second over those seconds.
    pub bytes_per_second: f64,
    /// Wall and CPU time of the engine run.
    pub cpu: Elapsed,
    /// Residency before the run (regular files above the small-file size).
    pub residency_before: Option<Residency>,
}

/// A plan: engine and its parameters, and the reason.
struct Plan {
    engine: &'static dyn Engine,
    threads: usize,
    block_size: u64,
    depth: usize,
    reason: String,
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Default parameters for an engine on this machine.
fn defaults(engine: &dyn Engine) -> (usize, u64, usize) {
    if !engine.caps().parallel {
        // No CPU count needed: asking costs several cgroup file reads at start-up.
        return (1, MIB, 1);
    }
    let cores = cores();
    match engine.name() {
        "mmap" => (cores, 16 * MIB, 1),
        "pread" => (cores, MIB, 1),
        // Threads blocked in the device queue: the queue depth is the thread count. This
        // VM's disk is latency-bound, so throughput follows the bytes in flight: 128 x 4 MiB
        // beat every fio shape tried (see bench/RESULTS.md), within a memory budget.
        "direct" | "hybrid" => (direct_threads(4 * MIB, cores), 4 * MIB, 1),
        _ => (cores, 4 * MIB, 8),
    }
}

/// Threads for the direct engine: enough to keep 512 MiB in flight (less on small machines:
/// at most 1/16 of the memory available), and never fewer than the cores.
fn direct_threads(block: u64, cores: usize) -> usize {
    let available = crate::measure::env::meminfo_bytes("MemAvailable").unwrap_or(8 << 30);
    let budget = (512 * MIB).min(available / 16);
    ((budget / block) as usize).clamp(cores.max(4), 128)
}

/// Residency of a big file: from cachestat where the kernel has it, else mincore over the
/// whole file up to 4 GiB, else over 64 windows spread evenly.
fn sample_residency(file: &std::fs::File, name: &str, len: u64) -> Result<Residency> {
    if let Some(stat) = cache::cachestat(file, len) {
        return Ok(stat.residency());
    }
    const WHOLE: u64 = 4 << 30;
    const WINDOWS: u64 = 64;
    if len <= WHOLE {
        return cache::residency(file, name, len);
    }
    let window = 16 * MIB;
    let mut total = Residency {
        resident_pages: 0,
        total_pages: 0,
    };
    for i in 0..WINDOWS {
        let offset = (len - window) / (WINDOWS - 1) * i / 4096 * 4096;
        let r = cache::residency_at(file, name, offset, window)?;
        total.resident_pages += r.resident_pages;
        total.total_pages += r.total_pages;
    }
    Ok(total)
}

fn plan(
    options: &FastOptions,
    input: &files::Input,
    residency: Option<Residency>,
    fallbacks: &mut Vec<String>,
) -> Plan {
    let probe_job = Job {
        file: &input.file,
        name: &input.name,
        kind: input.kind,
        offset: input.offset,
        len: input.remaining(),
        pseudo_fs: input.pseudo_fs,
        threads: 1,
        block_size: MIB,
        depth: 1,
    };
    let choice: (&'static dyn Engine, String) = if let Some(engine) = options.engine {
        (engine, "chosen with --engine".to_string())
    } else if input.kind != InputKind::Regular {
        (
            &engine::stream::Stream,
            "not a regular file: read to its end".to_string(),
        )
    } else if let Some(fs) = input.pseudo_fs {
        (
            &engine::stream::Stream,
            format!("a file on {fs}, whose stat size is not its content's: read to its end"),
        )
    } else if input.len == 0 {
        (
            &engine::stream::Stream,
            "size 0 on stat (empty, or a file generated when read): read to its end".to_string(),
        )
    } else if input.remaining() <= SMALL_FILE {
        (
            &engine::stream::Stream,
            "small file: one read() is cheapest".to_string(),
        )
    } else {
        let fraction = residency.map_or(0.0, |r| r.fraction());
        let pct = format!("{:.1}% resident", 100.0 * fraction);
        if fraction >= WARM_FRACTION {
            (
                &engine::mmap::Mmap,
                format!("warm ({pct}): XOR the page cache in place"),
            )
        } else {
            match engine::direct::Direct.check(&probe_job) {
                Ok(()) if fraction > COLD_FRACTION => (
                    &engine::hybrid::Hybrid,
                    format!(
                        "partly cached ({pct}): cached chunks in place, the rest with O_DIRECT"
                    ),
                ),
                Ok(()) => (
                    &engine::direct::Direct,
                    format!("cold ({pct}): O_DIRECT with a deep queue"),
                ),
                Err(why) => {
                    fallbacks.push(format!("direct: {why}"));
                    (
                        &engine::pread::Pread,
                        format!("cold ({pct}) but O_DIRECT is refused: buffered pread"),
                    )
                }
            }
        }
    };
    let (engine, reason) = choice;
    Plan::for_engine(engine, reason, options)
}

impl Plan {
    /// The plan for `engine`: the user's --threads/--block-size/--depth, else its defaults.
    fn for_engine(engine: &'static dyn Engine, reason: String, options: &FastOptions) -> Self {
        let (threads, block_size, depth) = defaults(engine);
        Plan {
            engine,
            threads: options.threads.unwrap_or(threads),
            block_size: options.block_size.unwrap_or(block_size),
            depth: options.depth.unwrap_or(depth),
            reason,
        }
    }
}

/// Computes the checksum of the input.
pub fn execute(options: &FastOptions) -> Result<FastReport> {
    let input = files::open_input(&options.path, options.allow_device)?;
    let residency = if input.kind == InputKind::Regular
        && input.remaining() > SMALL_FILE
        && options.engine.is_none()
    {
        sample_residency(&input.file, &input.name, input.len).ok()
    } else {
        None
    };
    let mut fallbacks = Vec::new();
    let mut plan = plan(options, &input, residency, &mut fallbacks);
    let job = |plan: &Plan| Job {
        file: &input.file,
        name: &input.name,
        kind: input.kind,
        offset: input.offset,
        len: input.remaining(),
        pseudo_fs: input.pseudo_fs,
        threads: plan.threads,
        block_size: plan.block_size,
        depth: plan.depth,
    };
    // An engine that does not apply falls back to buffered pread, then to reading to the end,
    // never to one already refused. Silent in the output (the checksum is the same); visible
    // with --verbose and in JSON, as is what a running engine gives up.
    let chain: [&'static dyn Engine; 2] = [&engine::pread::Pread, &engine::stream::Stream];
    let mut refused: Vec<&str> = Vec::new();
    while let Err(why) = plan.engine.check(&job(&plan)) {
        fallbacks.push(format!("{}: {why}", plan.engine.name()));
        refused.push(plan.engine.name());
        let Some(&fallback) = chain.iter().find(|e| !refused.contains(&e.name())) else {
            // stream reads anything open_input lets through; this is a bug, not an input.
            anyhow::bail!("read {}: no engine can read it ({why})", input.name);
        };
        // The fallback gets its own defaults, not those of the engine it replaces.
        let reason = format!("fell back to {}: {why}", fallback.name());
        plan = Plan::for_engine(fallback, reason, options);
    }
    if let Some(note) = plan.engine.degraded(&job(&plan)) {
        fallbacks.push(format!("{} {note}", plan.engine.name()));
    }
    let clock = Stopwatch::start();
    let moved = plan.engine.run(&job(&plan)).map_err(|e| {
        // Engine errors name the file and the read; a panic's message does not.
        if e.is::<engine::parallel::WorkerPanic>() {
            e.context(format!(
                "read {} with the {} engine",
                input.name,
                plan.engine.name()
            ))
        } else {
            e
        }
    })?;
    let cpu = clock.stop();
    if plan.engine.caps().sized {
        // Sized engines read at offsets and leave the file position alone; leave it after
        // what was read, as cat would (it matters where stdin is shared with the caller).
        (&input.file)
            .seek(SeekFrom::Start(input.offset + moved.bytes))
            .with_context(|| format!("seek {} to the end of what was read", input.name))?;
    }
    Ok(FastReport {
        file: input.name.clone(),
        input_kind: input.kind,
        engine: plan.engine.name(),
        method: plan.engine.describe(),
        reason: plan.reason,
        fallbacks,
        // Workers never outnumber the chunks (see engine::parallel), so report those that ran.
        threads: if plan.engine.caps().parallel {
            let chunks = input.remaining().div_ceil(plan.block_size.max(1)).max(1);
            plan.threads
                .min(usize::try_from(chunks).unwrap_or(usize::MAX))
        } else {
            1
        },
        block_size: plan.block_size,
        depth: plan.depth,
        moved,
        xor_hex: crate::checksum::hex(moved.xor),
        seconds: cpu.seconds,
        bytes_per_second: per_second(moved.bytes, cpu.seconds),
        cpu,
        residency_before: residency,
    })
}
