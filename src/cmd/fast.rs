//! `fast`: the XOR of a whole file as fast as the machine allows. Looks at what the input
//! is and how much of it is cached, picks the engine that wins in that case, runs it, and
//! says why it chose it.

use crate::engine::flag;
use crate::engine::{self, Defaults, Engine, Interruptible, Job, Op, Threads};
use crate::files::{self, InputKind};
use crate::measure::cache::{self, Observed, Residency};
use crate::measure::timer::Stopwatch;
use crate::options::FastOptions;
pub use crate::results::fast::FastReport;
use crate::units::{MIB, per_second};
use crate::workload::plan::Plan;
use anyhow::Result;

/// Files up to this size are read with one read() call: threads and mappings cost more.
pub const SMALL_FILE: u64 = MIB;

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Worker threads for an engine's default on this machine.
fn threads_for(defaults: &Defaults) -> usize {
    match defaults.threads {
        // No CPU count needed: asking costs several cgroup file reads at start-up.
        Threads::One => 1,
        Threads::PerCore => cores(),
        Threads::InFlight(bytes) => {
            // Enough threads blocked in the device queue to keep `bytes` in flight (less on
            // small machines: at most 1/16 of the memory available), at least two, at most
            // 128. Not tied to the cores: the device is the bound, and more requests than
            // it serves at once only wait (O_DIRECT, 4 GiB head -c file, cold, on the
            // 16-core machine: 4 threads x 4 MiB 2.08/1.95 GiB/s, 16 threads 1.48/1.67).
            let available = crate::measure::env::meminfo_bytes("MemAvailable").unwrap_or(8 << 30);
            let budget = bytes.min(available / 16);
            let block = defaults.block_size.max(1);
            ((budget / block) as usize).clamp(2, 128)
        }
    }
}

/// Residency of a big file, sampled in 64 windows of 64 KiB: the choice needs only
/// warm, cold or mixed, and counting every page cost 13% of a warm 2 GiB read.
fn sample_residency(file: &std::fs::File, name: &str, start: u64, len: u64) -> Result<Residency> {
    cache::sampled_residency(file, name, start, len, 64, 64 << 10)
}

/// The first engine in the table whose flags satisfy `want` (the table always has one).
fn pick(want: impl Fn(engine::Caps) -> bool) -> &'static dyn Engine {
    engine::ENGINES
        .iter()
        .copied()
        .find(|e| want(e.caps()) && e.caps().has(flag::READ | flag::MOVES_BYTES))
        .expect("the engine table covers every case fast chooses")
}

/// Reads to the end of any input, one thread.
fn streaming() -> &'static dyn Engine {
    pick(|c| c.lacks(flag::SIZED | flag::PARALLEL))
}

/// Buffered reads at offsets on threads: the fallback when O_DIRECT or mapping is refused.
fn buffered() -> &'static dyn Engine {
    pick(|c| c.has(flag::SIZED | flag::PARALLEL) && c.lacks(flag::DIRECT | flag::ZERO_COPY))
}

fn choose(
    options: &FastOptions,
    input: &files::Input,
    residency: Option<Residency>,
    fallbacks: &mut Vec<String>,
) -> (&'static dyn Engine, String) {
    if let Some(engine) = options.engine {
        return (engine, "chosen with --engine".to_string());
    }
    if input.kind != InputKind::Regular {
        return (
            streaming(),
            "not a regular file: read to its end".to_string(),
        );
    }
    if let Some(fs) = input.pseudo {
        return (
            streaming(),
            format!("a {fs} file (stat's size is not its content's): read to its end"),
        );
    }
    if input.len == 0 {
        return (
            streaming(),
            "size 0 on stat (a /proc file, or empty): read to its end".to_string(),
        );
    }
    if input.len <= SMALL_FILE {
        return (
            streaming(),
            "small file: one read() is cheapest".to_string(),
        );
    }
    let (observed, pct) = match residency {
        Some(r) => (r.observed(), format!("{} resident", r.percent())),
        None => (Observed::Cold, "residency unknown".to_string()),
    };
    if observed == Observed::Warm {
        return (
            pick(|c| c.has(flag::PER_CHUNK) && c.lacks(flag::DIRECT)),
            format!(
                "warm ({pct}): per chunk, XOR in place where the page cache has huge pages, else copy through a small buffer"
            ),
        );
    }
    let (engine, reason) = if observed == Observed::Mixed {
        (
            pick(|c| c.has(flag::PER_CHUNK | flag::DIRECT)),
            format!("partly cached ({pct}): cached chunks from memory, the rest with O_DIRECT"),
        )
    } else {
        (
            pick(|c| c.has(flag::DIRECT) && c.lacks(flag::ZERO_COPY | flag::QUEUED)),
            format!("cold ({pct}): O_DIRECT, large reads into huge-page buffers"),
        )
    };
    let probe = Job {
        plan: Plan::sequential(
            input.start,
            input.len,
            engine.defaults(input.len).block_size,
        ),
        threads: 1,
        ..job_for(input, Plan::sequential(input.start, input.len, 1), 1, 1)
    };
    match engine.check(&probe) {
        Ok(()) => (engine, reason),
        Err(why) => {
            fallbacks.push(format!("{}: {why}", engine.name()));
            (
                buffered(),
                format!("{reason}, but O_DIRECT is refused: buffered reads instead"),
            )
        }
    }
}

/// The job of reading the whole input from its start with `engine`'s parameters.
fn job_for(input: &files::Input, plan: Plan, threads: usize, depth: usize) -> Job<'_> {
    Job {
        file: &input.file,
        name: &input.name,
        kind: input.kind,
        op: Op::Read,
        plan,
        to_end: !plan_is_sized(input),
        threads,
        depth,
        seed: 0,
        observer: &Interruptible,
    }
}

fn plan_is_sized(input: &files::Input) -> bool {
    input.kind == InputKind::Regular && input.pseudo.is_none() && input.len > 0
}

/// An engine with its parameters: the user's --threads/--block-size/--depth, else the
/// engine's own defaults.
struct Setup {
    engine: &'static dyn Engine,
    threads: usize,
    block_size: u64,
    depth: usize,
    reason: String,
}

impl Setup {
    fn new(engine: &'static dyn Engine, reason: String, options: &FastOptions, len: u64) -> Self {
        let defaults = engine.defaults(len);
        let block_size = options.block_size.unwrap_or(defaults.block_size);
        Setup {
            engine,
            threads: options.threads.unwrap_or_else(|| {
                if engine.caps().has(flag::PARALLEL) {
                    threads_for(&Defaults {
                        block_size,
                        ..defaults
                    })
                } else {
                    1
                }
            }),
            block_size,
            depth: options.depth.unwrap_or(defaults.depth),
            reason,
        }
    }

    fn job<'a>(&self, input: &'a files::Input) -> Job<'a> {
        let len = if plan_is_sized(input) { input.len } else { 0 };
        job_for(
            input,
            Plan::sequential(input.start, len, self.block_size),
            self.threads,
            self.depth,
        )
    }
}

/// `fast --repeat N`: N reads, each chosen and measured the same way; the result is the
/// read whose rate is the median, with every read's rate. A standard input cannot be read
/// twice (`options` refuses it).
pub fn execute_repeated(options: &FastOptions) -> Result<FastReport> {
    if options.repeat <= 1 {
        return execute(options);
    }
    let mut reports: Vec<FastReport> = Vec::with_capacity(options.repeat);
    for _ in 0..options.repeat {
        reports.push(execute(options)?);
    }
    let rates: Vec<f64> = reports.iter().map(|r| r.bytes_per_second).collect();
    let xor = reports[0].xor_hex.clone();
    if let Some(other) = reports.iter().find(|r| r.xor_hex != xor) {
        return Err(crate::error::Failure::Check(format!(
            "fast {}: the reads gave different checksums ({xor} and {}): the file changed while it was read",
            other.file, other.xor_hex
        ))
        .into());
    }
    let mut report = reports.swap_remove(crate::measure::baseline::median_index(&rates));
    report.repeats = rates;
    Ok(report)
}

/// Computes the checksum of the input.
pub fn execute(options: &FastOptions) -> Result<FastReport> {
    let input = files::open_input(&options.path, options.allow_device)?;
    let choosing = std::time::Instant::now();
    let residency = if plan_is_sized(&input) && input.len > SMALL_FILE && options.engine.is_none() {
        sample_residency(&input.file, &input.name, input.start, input.len).ok()
    } else {
        None
    };
    let mut fallbacks = Vec::new();
    let (engine, reason) = choose(options, &input, residency, &mut fallbacks);
    let mut setup = Setup::new(engine, reason, options, input.len);
    // An engine that does not apply falls back to buffered reads at offsets, then to reading
    // to the end. Silent in the output (the checksum is the same); visible with --verbose
    // and in JSON. Each fallback gets its own defaults, not those of the engine it replaces.
    for fallback in [buffered(), streaming()] {
        if fallback.name() == setup.engine.name() {
            continue; // never an engine's own fallback
        }
        let why = match (setup.engine.check(&setup.job(&input)), input.pseudo) {
            (Ok(()), _) => break,
            (Err(why), Some(fs)) => {
                format!("{why} (a {fs} file: stat's size is not its content's)")
            }
            (Err(why), None) => why,
        };
        fallbacks.push(format!("{}: {why}", setup.engine.name()));
        let reason = format!("fell back to {}: {why}", fallback.name());
        setup = Setup::new(fallback, reason, options, input.len);
    }
    let job = setup.job(&input);
    if let Err(why) = setup.engine.check(&job) {
        return Err(crate::error::input(format!(
            "fast {}: no engine can read it: {why}",
            input.name
        )));
    }
    fallbacks.extend(setup.engine.notes(&job));
    let choice_seconds = choosing.elapsed().as_secs_f64();
    let clock = Stopwatch::start();
    let moved = setup.engine.run(&job)?;
    let elapsed = clock.stop();
    input.finish(moved.bytes)?;
    let details = options.verbose || options.export.json || options.export.markdown.is_some();
    let caveats = if details && plan_is_sized(&input) {
        let mut caveats =
            super::caveats::of_read(&input.file, &options.path, input.start, moved.bytes, None);
        let figure = (
            "the read".to_string(),
            per_second(moved.bytes, elapsed.seconds),
        );
        caveats.push(super::caveats::link(&options.path, Some(figure)));
        caveats
    } else {
        Vec::new()
    };
    Ok(FastReport {
        file: input.name.clone(),
        input_kind: input.kind,
        engine: setup.engine.name().to_string(),
        method: setup.engine.describe().to_string(),
        caps: setup.engine.caps(),
        reason: setup.reason,
        fallbacks,
        // Workers never outnumber the pieces (see engine::parallel), so report those that ran.
        threads: engine::parallel::workers(&job),
        block_size: setup.block_size,
        depth: setup.depth,
        moved,
        xor_hex: crate::checksum::hex(moved.xor),
        seconds: elapsed.seconds,
        bytes_per_second: per_second(moved.bytes, elapsed.seconds),
        elapsed,
        residency_before: residency,
        choice_seconds,
        caveats,
        repeats: Vec::new(),
    })
}
