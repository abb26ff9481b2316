//! From what the user typed (`cli::*Args`) to what the engine needs (`*Options`): sizes in
//! bytes, durations, defaults, and every check that needs no I/O beyond a `stat`.

use crate::cli::{
    CacheChoice, CacheMode, CalibrateArgs, EngineArgs, OpArg, ReceiveArgs, RunArgs, SendArgs,
    StudyArgs, TransferArgs,
};
use crate::engine::flag;
use crate::engine::{Engine, Setup};
use crate::error::input;
use crate::files::display_name;
use crate::measure::cache::CacheState;
use crate::measure::converge::Stopping;
use crate::measure::medium::LABEL_CHARS;
use crate::measure::meter::{self, Meter, SystemMeter};
use crate::transfer::methods::{RecvMethod, SendMethod};
use crate::transfer::{Endpoint, Receiving, Sending, Serving};
use crate::units::{GIB, format_size, parse_duration, parse_nonzero_size, parse_size};
use crate::workload::Op;
use crate::workload::data::fresh_seed;
use crate::workload::layout::{Layout, Phases};
use crate::workload::patterns::{Test, auto_grid};
use crate::workload::plan::{DEFAULT_STRIDE, doubling};
use crate::workload::study::{Level, Part};
use anyhow::{Context, Result};
use std::path::PathBuf;
use std::time::Duration;

pub mod disk;
pub mod grade;

/// The largest block size accepted: one buffer of it is allocated.
pub const MAX_BLOCK_SIZE: u64 = GIB;

/// What `run` does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunMode {
    /// Read up to `limit` bytes (to EOF when `None`).
    Read {
        /// Block size × block count, when a count was given.
        limit: Option<u64>,
        /// The seed ioscope wrote the file with (`--seed`): every byte read is then
        /// verified in place against the generator.
        seed: Option<u64>,
    },
    /// Write `bytes` bytes generated from `seed`.
    Write {
        /// Block size × block count.
        bytes: u64,
        /// Seed of the data.
        seed: u64,
    },
}

/// The meter every timed run reads: the system's clocks and counters, or, with the hidden
/// `--meter fixed` (tests), [`meter::FIXED`], so a whole command's output is exact; with
/// `--no-latency`, the system's without the time of each call.
pub fn meter(choice: Option<&str>, no_latency: bool) -> &'static dyn Meter {
    match choice {
        Some("fixed") => &meter::FIXED,
        _ if no_latency => &meter::SystemMeterNoLatency,
        _ => &SystemMeter,
    }
}

/// The engine named with `--engine` (or `stream`), checked for `op`.
pub fn engine_choice(args: &EngineArgs, what: &str, op: Op) -> Result<Setup> {
    let engine = match args.engine.as_deref() {
        None => &crate::engine::stream::Stream,
        Some(name) => engine_named(name, what)?,
    };
    if !engine.caps().does(op) {
        return Err(input(format!(
            "{what}: the {} engine cannot {}; engines that can: {}",
            engine.name(),
            op.name(),
            crate::engine::engines_for(op)
                .map(|e| e.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    let (threads, depth) = bounded(what, args.threads, args.depth)?;
    Ok(Setup {
        engine,
        threads: threads.unwrap_or(1),
        depth: depth.unwrap_or(engine.defaults(0).depth),
    })
}

/// The engine called `name`, or an error listing the table.
fn engine_named(name: &str, what: &str) -> Result<&'static dyn Engine> {
    crate::engine::by_name(name).ok_or_else(|| {
        input(format!(
            "{what}: unknown engine '{name}'; choose one of {}",
            crate::engine::names()
        ))
    })
}

/// Checks --threads (1 to 1024) and --depth (1 to 256).
fn bounded(
    what: &str,
    threads: Option<usize>,
    depth: Option<usize>,
) -> Result<(Option<usize>, Option<usize>)> {
    if threads == Some(0) || threads.is_some_and(|t| t > 1024) {
        return Err(input(format!(
            "{what}: --threads must be between 1 and 1024"
        )));
    }
    if depth == Some(0) || depth.is_some_and(|d| d > 256) {
        return Err(input(format!("{what}: --depth must be between 1 and 256")));
    }
    Ok((threads, depth))
}

/// The cache states a `--cache` choice stands for, in order.
pub fn cache_states(choice: CacheChoice) -> Vec<CacheState> {
    match choice {
        CacheChoice::Warm => vec![CacheState::Warm],
        CacheChoice::Cold => vec![CacheState::Cold],
        CacheChoice::Both => vec![CacheState::Warm, CacheState::Cold],
    }
}

/// The cache state a `--cache warm|cold` choice stands for.
pub fn cache_state(mode: CacheMode) -> CacheState {
    match mode {
        CacheMode::Warm => CacheState::Warm,
        CacheMode::Cold => CacheState::Cold,
    }
}

/// Validated options of `run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The file (or `-`).
    pub path: PathBuf,
    /// Bytes per call.
    pub block_size: u64,
    /// Number of calls, when given.
    pub block_count: Option<u64>,
    /// Read or write.
    pub mode: RunMode,
    /// Replace an existing file.
    pub force: bool,
    /// Accept device nodes.
    pub allow_device: bool,
    /// Free space to keep (`None`: the default margin).
    pub min_free: Option<u64>,
    /// The engine that moves the bytes, with its threads and depth.
    pub setup: Setup,
    /// The run over time, when asked for.
    pub series: Option<SeriesOptions>,
    /// JSON output.
    pub json: bool,
    /// Timed runs (`--repeat`; 5 by default under a baseline flag, else 1).
    pub repeat: usize,
}

/// Validated `--series` options.
#[derive(Debug, Clone)]
pub struct SeriesOptions {
    /// The JSON Lines file.
    pub path: PathBuf,
    /// The chart.
    pub svg: PathBuf,
    /// One interval.
    pub interval: Duration,
    /// Replace existing files.
    pub force: bool,
}

impl SeriesOptions {
    /// `--series`, `--series-svg` and `--series-interval` (`None` without `--series`).
    pub fn from_args(
        args: &crate::cli::SeriesArgs,
        force: bool,
        what: &str,
    ) -> Result<Option<Self>> {
        let Some(path) = &args.series else {
            return Ok(None);
        };
        let interval = parse_duration(&args.series_interval)
            .with_context(|| format!("{what}: --series-interval"))?;
        if interval < Duration::from_millis(10) {
            return Err(input(format!(
                "{what}: --series-interval must be at least 10ms, not '{}'",
                args.series_interval
            )));
        }
        let svg = args.series_svg.clone().unwrap_or_else(|| {
            let mut name = path.as_os_str().to_owned();
            name.push(".svg");
            PathBuf::from(name)
        });
        Ok(Some(Self {
            path: path.clone(),
            svg,
            interval,
            force,
        }))
    }
}

/// Parses and bounds a block size.
pub fn block_size(text: &str, what: &str) -> Result<u64> {
    let bs = parse_nonzero_size(text).with_context(|| format!("{what}: block size"))?;
    if bs > MAX_BLOCK_SIZE {
        return Err(input(format!(
            "{what}: block size '{text}' is larger than the {} limit (one buffer of that size is allocated)",
            format_size(MAX_BLOCK_SIZE)
        )));
    }
    Ok(bs)
}

/// A command's runs per point when the user names no count: at least `min_runs`, at most
/// `max_runs`, no new run after `max_seconds`, until the median's interval is within
/// [`crate::measure::converge::PRECISION`].
#[derive(Debug, Clone, Copy)]
pub struct RunsDefault {
    /// Runs always made.
    pub min_runs: usize,
    /// Runs never exceeded.
    pub max_runs: usize,
    /// Seconds after which no new run starts.
    pub max_seconds: f64,
}

/// Sweep points, compare contenders, patterns tests: 3 to 30 runs, none started after 3 s
/// of a point's runs (hyperfine's budget); the time ends most repeats of slow runs.
pub const RUNS_DEFAULT: RunsDefault = RunsDefault {
    min_runs: 3,
    max_runs: 30,
    max_seconds: 3.0,
};

/// Checks `--repeat`, `--min-runs`, `--max-runs`, `--max-time` and `--precision` and
/// turns them into the rule that stops a point's repeats; counts above `limit` are refused.
pub fn stopping(
    args: &crate::cli::RunsArgs,
    default: RunsDefault,
    limit: usize,
    what: &str,
) -> Result<Stopping> {
    stopping_of(args.repeat, "--repeat", &args.budget, default, limit, what)
}

/// [`stopping`] for a command whose fixed count is `flag` (`patterns --runs`).
pub fn stopping_of(
    repeat: Option<usize>,
    flag: &str,
    args: &crate::cli::BudgetArgs,
    default: RunsDefault,
    limit: usize,
    what: &str,
) -> Result<Stopping> {
    let count = |flag: &str, n: usize| -> Result<usize> {
        if (1..=limit).contains(&n) {
            Ok(n)
        } else {
            Err(input(format!(
                "{what}: {flag} must be 1 to {limit}, not {n}"
            )))
        }
    };
    if let Some(n) = repeat {
        return Ok(Stopping::fixed(count(flag, n)?));
    }
    // A --max-runs below the default minimum lowers the minimum with it (`--max-runs 1`:
    // one run); only two numbers the user gave can contradict each other.
    let max_given = args.max_runs.map(|n| count("--max-runs", n)).transpose()?;
    let min_runs = match (args.min_runs, max_given) {
        (Some(n), _) => count("--min-runs", n)?,
        (None, Some(max)) => default.min_runs.min(max),
        (None, None) => default.min_runs,
    };
    let max_runs = max_given.unwrap_or_else(|| default.max_runs.max(min_runs).min(limit));
    if max_runs < min_runs {
        return Err(input(format!(
            "{what}: --max-runs ({max_runs}) is below --min-runs ({min_runs})"
        )));
    }
    let max_seconds = match &args.max_time {
        Some(text) => {
            let d = parse_duration(text).with_context(|| format!("{what}: --max-time"))?;
            if d.is_zero() {
                return Err(input(format!(
                    "{what}: --max-time must be above 0, not '{text}' (--repeat N fixes the count)"
                )));
            }
            d.as_secs_f64()
        }
        None => default.max_seconds,
    };
    let precision = match &args.precision {
        Some(text) => {
            // One '%' at most: "5%%" is a typo, not five percent.
            let trimmed = text.trim();
            let number = trimmed.strip_suffix('%').unwrap_or(trimmed).trim();
            let finest = 100.0 * crate::measure::converge::FINEST_PRECISION;
            match number.parse::<f64>() {
                Ok(p) if p >= finest && p < 100.0 => p / 100.0,
                _ => {
                    return Err(input(format!(
                        "{what}: --precision must be a percentage from {finest} to below 100 (like 5%), not '{text}'"
                    )));
                }
            }
        }
        None => crate::measure::converge::PRECISION,
    };
    Ok(Stopping {
        min_runs,
        max_runs,
        max_seconds,
        precision,
    })
}

/// Parses `--min-free` (`None`: the default margin).
pub fn min_free(text: Option<&str>, what: &str) -> Result<Option<u64>> {
    text.map(|t| parse_size(t).with_context(|| format!("{what}: --min-free")))
        .transpose()
}

impl RunOptions {
    /// Checks and converts `run`'s arguments.
    pub fn from_args(args: &RunArgs) -> Result<Self> {
        let op = if args.write { "write" } else { "read" };
        let what = format!("{op} {}", display_name(&args.file));
        let block_size = block_size(&args.block_size, &what)?;
        let block_count = args
            .block_count
            .as_deref()
            .map(|c| parse_nonzero_size(c).with_context(|| format!("{what}: block count")))
            .transpose()?;
        let total = block_count
            .map(|c| {
                c.checked_mul(block_size).ok_or_else(|| {
                    input(format!(
                        "{what}: block size x block count ({} x {c}) does not fit in 64 bits",
                        args.block_size
                    ))
                })
            })
            .transpose()?;
        let mode = if args.write {
            let bytes = total.ok_or_else(|| {
                input(format!(
                    "{what}: writing needs BLOCK_COUNT (the file gets BLOCK_SIZE x BLOCK_COUNT bytes)"
                ))
            })?;
            if args.file.as_os_str() == "-" {
                return Err(input(
                    "write -: writing to stdout is not supported; name a file",
                ));
            }
            RunMode::Write {
                bytes,
                seed: args.seed.unwrap_or_else(fresh_seed),
            }
        } else {
            RunMode::Read {
                limit: total,
                seed: args.seed,
            }
        };
        let choice = engine_choice(
            &args.engine,
            &what,
            if args.write { Op::Write } else { Op::Read },
        )?;
        let series = SeriesOptions::from_args(&args.series, args.force, &what)?;
        if series.is_some()
            && let Some(why) = choice.engine.caps().latency_absent(choice.engine.name())
        {
            return Err(input(format!(
                "{what}: --series times each call into its interval, and {why}; use an engine that makes one call per block (stream, pread, direct)"
            )));
        }
        Ok(Self {
            setup: choice,
            path: args.file.clone(),
            block_size,
            block_count,
            mode,
            force: args.force,
            allow_device: args.allow_device,
            min_free: min_free(args.min_free.as_deref(), &what)?,
            repeat: repeat(
                args.repeat,
                &args.baseline,
                series.is_some(),
                args.file.as_os_str() == "-",
                &what,
            )?,
            series,
            json: args.json,
        })
    }
}

/// `--repeat` of `run` and `fast`: 1 by default, 5 under a baseline flag (a comparison
/// needs a spread on each side); between 1 and 100. `--series` follows one run.
fn repeat(
    given: Option<usize>,
    baseline: &crate::cli::BaselineArgs,
    series: bool,
    stdin: bool,
    what: &str,
) -> Result<usize> {
    let wanted = baseline.save_baseline.is_some() || baseline.baseline.is_some();
    let n = given.unwrap_or(if wanted && !series {
        BASELINE_REPEAT
    } else {
        1
    });
    if !(1..=100).contains(&n) {
        return Err(input(format!("{what}: --repeat must be between 1 and 100")));
    }
    if n > 1 && stdin {
        return Err(input(format!(
            "{what}: standard input can be read once; --repeat needs a file"
        )));
    }
    if n > 1 && series {
        return Err(input(format!(
            "{what}: --series follows one run over time; leave out --repeat (or give --repeat 1)"
        )));
    }
    Ok(n)
}

/// The runs `run` and `fast` make under a baseline flag unless `--repeat` says otherwise.
pub const BASELINE_REPEAT: usize = 5;

/// Validated `--save-baseline`, `--baseline` and `--baseline-dir`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BaselineOptions {
    /// The name to save this result under.
    pub save: Option<String>,
    /// The name of the baseline to compare this result with.
    pub compare: Option<String>,
    /// The name of the baseline to add this result to, as one more moment.
    pub add: Option<String>,
    /// The directory baselines are kept in.
    pub dir: PathBuf,
    /// How many processes measure the figures a baseline keeps or compares (1: this one).
    pub processes: usize,
    /// Whether this process is one of another's processes (`--baseline-part`).
    pub part: bool,
}

/// The most processes `--processes` may ask for.
pub const PROCESSES_MAX: usize = 20;

/// The most characters a baseline name may have.
pub const BASELINE_NAME_MAX: usize = 64;

impl BaselineOptions {
    /// Checks the names (letters, digits, `-_.`, no leading dot, at most
    /// [`BASELINE_NAME_MAX`] characters) and finds the directory; `what` starts errors.
    pub fn from_args(args: &crate::cli::BaselineArgs, what: &str) -> Result<Self> {
        for (flag, name) in [
            ("--save-baseline", &args.save_baseline),
            ("--baseline", &args.baseline),
            ("--add-to-baseline", &args.add_to_baseline),
        ] {
            if let Some(name) = name {
                baseline_name(name).map_err(|why| {
                    input(format!(
                        "{what}: {flag} {}: {why}",
                        crate::text::printable(name)
                    ))
                })?;
            }
        }
        let wanted = args.save_baseline.is_some()
            || args.baseline.is_some()
            || args.add_to_baseline.is_some();
        let dir = match &args.baseline_dir {
            Some(dir) => dir.clone(),
            None if !wanted => PathBuf::new(),
            None => default_baseline_dir(
                std::env::var_os("XDG_DATA_HOME"),
                std::env::var_os("HOME"),
            )
            .ok_or_else(|| {
                input(format!(
                    "{what}: neither XDG_DATA_HOME nor HOME is set; name the directory with --baseline-dir"
                ))
            })?,
        };
        let processes = args.processes.unwrap_or(1);
        if !(1..=PROCESSES_MAX).contains(&processes) {
            return Err(input(format!(
                "{what}: --processes must be between 1 and {PROCESSES_MAX}"
            )));
        }
        if processes > 1 && !wanted {
            return Err(input(format!(
                "{what}: --processes pools the runs a baseline keeps or compares: give --save-baseline, --add-to-baseline or --baseline"
            )));
        }
        Ok(Self {
            save: args.save_baseline.clone(),
            compare: args.baseline.clone(),
            add: args.add_to_baseline.clone(),
            dir,
            processes,
            part: args.baseline_part,
        })
    }

    /// Whether a baseline is saved or compared with.
    pub fn any(&self) -> bool {
        self.save.is_some() || self.compare.is_some() || self.add.is_some()
    }
}

/// Why `name` cannot name a baseline, if it cannot.
pub fn baseline_name(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() {
        return Err("a baseline name cannot be empty");
    }
    if name.chars().count() > BASELINE_NAME_MAX {
        return Err("a baseline name has at most 64 characters");
    }
    if name.starts_with('.') {
        return Err("a baseline name cannot start with a dot");
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err("a baseline name has only letters, digits, '-', '_' and '.'");
    }
    Ok(())
}

/// `$XDG_DATA_HOME/ioscope/baselines`, else `$HOME/.local/share/ioscope/baselines` (an
/// empty or relative XDG_DATA_HOME is ignored, as the XDG specification says).
pub fn default_baseline_dir(
    xdg_data_home: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    let xdg = xdg_data_home.map(PathBuf::from).filter(|p| p.is_absolute());
    let base = match xdg {
        Some(x) => x,
        None => PathBuf::from(home.filter(|h| !h.is_empty())?)
            .join(".local")
            .join("share"),
    };
    Some(base.join("ioscope").join("baselines"))
}

/// Validated options of `calibrate`.
#[derive(Debug, Clone)]
pub struct CalibrateOptions {
    /// The file to read.
    pub path: PathBuf,
    /// Bytes per read() call.
    pub block_size: u64,
    /// Shortest acceptable read time.
    pub min: Duration,
    /// Longest acceptable read time.
    pub max: Duration,
    /// Warm or cold reads.
    pub cache: CacheState,
    /// The engine that moves the bytes, with its threads and depth.
    pub setup: Setup,
    /// Whether the file may be extended.
    pub grow: bool,
    /// The largest the file may grow to (`None`: the free-space margin and, warm, half the
    /// memory available decide).
    pub max_bytes: Option<u64>,
    /// Seed for appended data.
    pub seed: u64,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// The device and inode the file must be (the study's scratch file, opened once):
    /// a file put at its name since is refused, never read or grown.
    pub expect: Option<crate::files::FileId>,
    /// JSON output.
    pub json: bool,
}

impl CalibrateOptions {
    /// Checks and converts `calibrate`'s arguments.
    pub fn from_args(args: &CalibrateArgs) -> Result<Self> {
        let what = format!("calibrate {}", display_name(&args.file));
        let min = parse_duration(&args.min).with_context(|| format!("{what}: --min"))?;
        let max = parse_duration(&args.max).with_context(|| format!("{what}: --max"))?;
        if min.is_zero() || min >= max {
            return Err(input(format!(
                "{what}: --min ({}) must be above zero and below --max ({})",
                args.min, args.max
            )));
        }
        if args.file.as_os_str() == "-" {
            return Err(input(format!(
                "{what}: needs a regular file it can re-read, not standard input"
            )));
        }
        let choice = engine_choice(&args.engine, &what, Op::Read)?;
        if !choice.engine.caps().has(flag::MOVES_BYTES) {
            // Its reads take no time whatever the size: no size lands in the window, and
            // --grow would append real data up to the free-space margin looking for one.
            return Err(input(format!(
                "{what}: the {} engine moves no bytes, so no file size takes {}..{} to read; choose an engine that reads",
                choice.engine.name(),
                args.min,
                args.max
            )));
        }
        Ok(Self {
            path: args.file.clone(),
            block_size: block_size(&args.block_size, &what)?,
            min,
            max,
            cache: cache_state(args.cache),
            setup: choice,
            grow: args.grow,
            max_bytes: None,
            seed: args.seed.unwrap_or_else(fresh_seed),
            min_free: min_free(args.min_free.as_deref(), &what)?,
            expect: None,
            json: args.json,
        })
    }
}

/// Validated options of `study`.
#[derive(Debug, Clone)]
pub struct StudyOptions {
    /// Directory to study; `None` means a new `./ioscope-study`.
    pub dir: Option<PathBuf>,
    /// How much to measure.
    pub level: Level,
    /// The parts to run, write-read always among them.
    pub parts: Vec<Part>,
    /// Where the report goes; `None`: a new `./ioscope-report-DATE-TIME`.
    pub out: Option<PathBuf>,
    /// Scratch file size; `None` means: choose for this machine.
    pub size: Option<u64>,
    /// Block sizes of the sweeps, ascending; `None`: the level's.
    pub block_sizes: Option<Vec<u64>>,
    /// Keep the scratch file.
    pub keep: bool,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// The medium's name (`--label`); `None`: derived from the file system and device.
    pub label: Option<String>,
    /// Outputs.
    pub export: ExportOptions,
}

/// Checks a medium's name (`study --label`, `report --label`): not blank, at most
/// [`LABEL_CHARS`] characters; kept as given (printed with control characters escaped).
pub fn medium_label(text: &str, what: &str) -> Result<String> {
    let label = text.trim();
    if label.is_empty() {
        return Err(input(format!(
            "{what}: a label cannot be empty; give a name such as \"usb stick\" or leave it out for the default (\"ext4 on vda\")"
        )));
    }
    let chars = label.chars().count();
    if chars > LABEL_CHARS {
        return Err(input(format!(
            "{what}: '{}' is {chars} characters; a label heads a table column and a legend: at most {LABEL_CHARS}",
            crate::text::shortened(label, LABEL_CHARS)
        )));
    }
    Ok(label.to_string())
}

/// Parses a comma-separated list of block sizes.
pub fn block_size_list(text: &str, what: &str) -> Result<Vec<u64>> {
    let mut sizes = text
        .split(',')
        .map(|item| block_size(item.trim(), what))
        .collect::<Result<Vec<u64>>>()?;
    sizes.sort_unstable();
    sizes.dedup();
    Ok(sizes)
}

impl StudyOptions {
    /// Checks and converts `study`'s arguments.
    pub fn from_args(args: &StudyArgs) -> Result<Self> {
        let what = "study";
        let size = args
            .size
            .as_deref()
            .map(|s| parse_nonzero_size(s).with_context(|| format!("{what}: --size")))
            .transpose()?;
        let write_read = |p: &Part| p.name() == "write-read";
        if args.skip.iter().any(write_read) {
            return Err(input(format!(
                "{what}: --skip write-read: the write and read back always run (every other part reads that file)"
            )));
        }
        if let Some(size) = size
            && size < crate::units::MIB
        {
            return Err(input(format!(
                "{what}: --size must be at least 1 MiB (the parts read the file in 1 MiB blocks), not {}",
                args.size.as_deref().unwrap_or_default()
            )));
        }
        let parts = crate::workload::study::all()
            .filter(|p| {
                write_read(p)
                    || (args.only.is_empty() || args.only.contains(p)) && !args.skip.contains(p)
            })
            .collect();
        Ok(Self {
            dir: args.dir.clone(),
            level: args.level,
            parts,
            out: args.out.clone(),
            size,
            block_sizes: args
                .block_sizes
                .as_deref()
                .map(|list| block_size_list(list, what))
                .transpose()?,
            keep: args.keep,
            min_free: min_free(args.min_free.as_deref(), what)?,
            label: args
                .label
                .as_deref()
                .map(|l| medium_label(l, "study: --label"))
                .transpose()?,
            export: ExportOptions {
                json: args.json,
                force: args.force,
                ..ExportOptions::default()
            },
        })
    }
}

/// Validated options of `fast`.
#[derive(Debug, Clone)]
pub struct FastOptions {
    /// The file (or `-`).
    pub path: PathBuf,
    /// A forced engine.
    pub engine: Option<&'static dyn crate::engine::Engine>,
    /// Forced thread count.
    pub threads: Option<usize>,
    /// Forced block size.
    pub block_size: Option<u64>,
    /// Forced queue depth.
    pub depth: Option<usize>,
    /// Accept device nodes.
    pub allow_device: bool,
    /// Details on stderr.
    pub verbose: bool,
    /// JSON output and the `--markdown` file.
    pub export: ExportOptions,
    /// Timed reads (`--repeat`; 5 by default under a baseline flag, else 1).
    pub repeat: usize,
}

impl FastOptions {
    /// Checks and converts `fast`'s arguments.
    pub fn from_args(args: &crate::cli::FastArgs) -> Result<Self> {
        let what = format!("fast {}", display_name(&args.file));
        let engine = args
            .engine
            .as_deref()
            .map(|name| engine_named(name, &what))
            .transpose()?;
        if let Some(e) = engine.filter(|e| !e.caps().has(flag::READ)) {
            return Err(input(format!(
                "{what}: the {} engine cannot read",
                e.name()
            )));
        }
        let (threads, depth) = bounded(&what, args.threads, args.depth)?;
        Ok(Self {
            path: args.file.clone(),
            engine,
            threads,
            block_size: args
                .block_size
                .as_deref()
                .map(|b| block_size(b, &what))
                .transpose()?,
            depth,
            allow_device: args.allow_device,
            verbose: args.verbose,
            repeat: repeat(
                args.repeat,
                &args.baseline,
                false,
                args.file.as_os_str() == "-",
                &what,
            )?,
            export: ExportOptions {
                json: args.json,
                markdown: args.markdown.clone(),
                force: args.force,
                ..ExportOptions::default()
            },
        })
    }
}

/// Validated options of `compare`.
#[derive(Debug, Clone)]
pub struct CompareOptions {
    /// The file to read.
    pub path: PathBuf,
    /// Block size for run, dd and fio.
    pub block_size: u64,
    /// The block size in the form dd and fio accept (`1m`, `256k`, `512`).
    pub block_size_text: String,
    /// Cache states to measure, in order.
    pub states: Vec<CacheState>,
    /// Runs per contender and state.
    pub runs: Stopping,
    /// Readers of the user's (`--cmd NAME=CMD`), each a name and its arguments, `{}` where
    /// the file goes.
    pub commands: Vec<(String, Vec<String>)>,
    /// Outputs.
    pub export: ExportOptions,
}

/// One `--cmd NAME=CMD`: the name, and the command split as a POSIX shell would.
fn user_command(text: &str, what: &str) -> Result<(String, Vec<String>)> {
    let refuse = |why: &str| {
        input(format!(
            "{what}: --cmd {}: {why}",
            crate::text::printable(text)
        ))
    };
    let Some((name, command)) = text.split_once('=') else {
        return Err(refuse("give it as NAME=CMD, e.g. 'mine=./fast {}'"));
    };
    let name = name.trim();
    if name.is_empty() {
        return Err(refuse("the name before '=' is empty"));
    }
    if name.chars().any(char::is_control) {
        return Err(refuse(
            "the name holds a control character; it is shown in a table",
        ));
    }
    let argv =
        shlex::split(command).ok_or_else(|| refuse("an unclosed quote or a trailing backslash"))?;
    if argv.is_empty() {
        return Err(refuse("no command after '='"));
    }
    Ok((name.to_string(), argv))
}

impl CompareOptions {
    /// Checks and converts `compare`'s arguments.
    pub fn from_args(args: &crate::cli::CompareArgs) -> Result<Self> {
        let what = format!("compare {}", display_name(&args.file));
        let bs = block_size(&args.block_size, &what)?;
        let runs = stopping(&args.runs, RUNS_DEFAULT, 100, &what)?;
        if args.file.as_os_str() == "-" {
            return Err(input(format!(
                "{what}: needs a regular file every tool can open, not standard input"
            )));
        }
        Ok(Self {
            path: args.file.clone(),
            block_size: bs,
            block_size_text: crate::units::format_block_size(bs),
            states: cache_states(args.cache),
            runs,
            commands: {
                let mut commands: Vec<(String, Vec<String>)> = Vec::new();
                for text in &args.commands {
                    let (name, argv) = user_command(text, &what)?;
                    if commands.iter().any(|(n, _)| *n == name) {
                        return Err(input(format!(
                            "{what}: --cmd {name}=...: the name {name} is given twice"
                        )));
                    }
                    commands.push((name, argv));
                }
                commands
            },
            export: ExportOptions::from_args(&args.export, &what)?,
        })
    }
}

/// Where results go, checked before any measuring starts.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// JSON on stdout instead of text.
    pub json: bool,
    /// CSV file to write.
    pub csv: Option<PathBuf>,
    /// SVG file to write.
    pub svg: Option<PathBuf>,
    /// Markdown file to write.
    pub markdown: Option<PathBuf>,
    /// Replace existing output files.
    pub force: bool,
    /// Every detail in the text (`--verbose`).
    pub verbose: bool,
    /// Only the result (`-q`): its answer alone where it has one and every check held.
    pub quiet: bool,
}

impl ExportOptions {
    /// Text or JSON on stdout, no files: for commands without `--csv`/`--svg`/`--markdown`.
    pub fn json_only(json: bool) -> Self {
        Self {
            json,
            ..Self::default()
        }
    }

    /// The outputs asked for; they are checked and reserved (`report::outputs`) just before
    /// the command measures.
    pub fn from_args(args: &crate::cli::ExportArgs, _what: &str) -> Result<Self> {
        Ok(Self {
            json: args.json,
            csv: args.csv.clone(),
            svg: args.svg.clone(),
            markdown: args.markdown.clone(),
            force: args.force,
            verbose: args.verbose,
            quiet: args.quiet,
        })
    }
}

/// Validated options of `sweep`.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The file.
    pub path: PathBuf,
    /// Read or write.
    pub op: Op,
    /// The engine that moves the bytes, with its threads and depth.
    pub setup: Setup,
    /// Block sizes, ascending.
    pub block_sizes: Vec<u64>,
    /// Whether the block sizes were listed one by one (`--block-sizes`): one larger than
    /// the file is then an error. A range (`--from`/`--to`, a study level's) is cut at the
    /// file's size instead.
    pub blocks_listed: bool,
    /// Cache states, in order.
    pub states: Vec<CacheState>,
    /// Timed runs per point.
    pub runs: Stopping,
    /// Untimed runs per point.
    pub warmup: usize,
    /// Cap on calls per run (`None`: whole size).
    pub max_calls: Option<u64>,
    /// Bytes per write run.
    pub size: u64,
    /// Global cache drop for cold runs.
    pub drop_caches: bool,
    /// Cold figures over unwritten extents or holes do not fail the exit code.
    pub allow_unwritten: bool,
    /// Overwrite FILE (--op write).
    pub force: bool,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// Reads: the seed the file was written with, so every run is verified in place.
    pub seed: Option<u64>,
    /// Outputs.
    pub export: ExportOptions,
}

impl SweepOptions {
    /// Checks and converts `sweep`'s arguments.
    pub fn from_args(args: &crate::cli::SweepArgs) -> Result<Self> {
        let what = format!("sweep {}", display_name(&args.file));
        let block_sizes = match &args.block_sizes {
            Some(list) => block_size_list(list, &what)?,
            None => {
                let from = block_size(&args.from, &what).context("--from")?;
                let to = block_size(&args.to, &what).context("--to")?;
                if from > to {
                    return Err(input(format!(
                        "{what}: --from ({}) is above --to ({})",
                        args.from, args.to
                    )));
                }
                doubling(from, to)
            }
        };
        let runs = stopping(&args.runs, RUNS_DEFAULT, 1000, &what)?;
        if args.warmup > 100 {
            return Err(input(format!("{what}: --warmup must be at most 100")));
        }
        if args.file.as_os_str() == "-" {
            return Err(input(format!(
                "{what}: needs a file it can re-read, not standard input"
            )));
        }
        let states = cache_states(args.cache);
        let op = match args.op {
            OpArg::Read => Op::Read,
            OpArg::Write => Op::Write,
        };
        let choice = engine_choice(&args.engine, &what, op)?;
        if args.drop_caches && !crate::measure::cache::can_drop_caches() {
            return Err(input(format!(
                "{what}: --drop-caches needs root (it writes /proc/sys/vm/drop_caches); without it, --cache cold evicts just this file with fadvise"
            )));
        }
        Ok(Self {
            path: args.file.clone(),
            op,
            setup: choice,
            block_sizes,
            blocks_listed: args.block_sizes.is_some(),
            states,
            runs,
            warmup: args.warmup,
            max_calls: if args.full {
                None
            } else {
                Some(
                    parse_nonzero_size(&args.max_calls)
                        .with_context(|| format!("{what}: --max-calls"))?,
                )
            },
            size: parse_nonzero_size(&args.size).with_context(|| format!("{what}: --size"))?,
            drop_caches: args.drop_caches,
            allow_unwritten: args.allow_unwritten,
            force: args.export.force,
            min_free: min_free(args.min_free.as_deref(), &what)?,
            seed: args.seed,
            export: ExportOptions::from_args(&args.export, &what)?,
        })
    }
}

/// Validated options of `patterns`.
#[derive(Debug, Clone)]
pub struct PatternsOptions {
    /// The file to create, or a directory for a scratch file.
    pub path: PathBuf,
    /// File sizes, ascending.
    pub sizes: Vec<u64>,
    /// Record sizes, ascending.
    pub records: Vec<u64>,
    /// Auto mode (sizes × records).
    pub auto: bool,
    /// Tests, in the order run.
    pub tests: Vec<Test>,
    /// Timed runs per test: a count, or until the median is stable.
    pub runs: Stopping,
    /// Cache state of read tests.
    pub cache: CacheState,
    /// Stride in records.
    pub stride: u64,
    /// Whether the stride was given (else it shrinks to fit files of few records).
    pub stride_given: bool,
    /// Share of reads in the mixed test.
    pub read_percent: u8,
    /// Random tests with repeats.
    pub draws: bool,
    /// Global cache drop for cold runs.
    pub drop_caches: bool,
    /// Keep the file.
    pub keep: bool,
    /// Replace an existing FILE (only its successor is written).
    pub force: bool,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// Outputs.
    pub export: ExportOptions,
}

impl PatternsOptions {
    /// Checks and converts `patterns`' arguments.
    pub fn from_args(args: &crate::cli::PatternsArgs) -> Result<Self> {
        let what = format!("patterns {}", display_name(&args.path));
        let size = parse_nonzero_size(&args.size).with_context(|| format!("{what}: --size"))?;
        let record =
            block_size(args.record.as_deref().unwrap_or("64k"), &what).context("--record")?;
        let (sizes, records) = if args.auto {
            auto_grid(size)
        } else {
            if record > size {
                let (record, size) = crate::units::format_size_pair(record, size);
                return Err(input(format!(
                    "{what}: --record ({record}) is larger than --size ({size})"
                )));
            }
            let records = size.div_ceil(record);
            if let Some(stride) = args.stride
                && stride >= records
                && records > 1
            {
                return Err(input(format!(
                    "{what}: --stride {stride} is not below the number of records ({records}): the stride read would be sequential"
                )));
            }
            (vec![size], vec![record])
        };
        if sizes.is_empty() {
            return Err(input(format!(
                "{what}: --auto needs --size of at least 64k (the smallest file size it measures)"
            )));
        }
        if args.auto && args.keep && !args.path.is_dir() {
            return Err(input(format!(
                "{what}: --keep with --auto needs a directory (one file per size)"
            )));
        }
        let runs = if args.auto && args.runs.is_none() && !args.budget.given() {
            Stopping::fixed(1)
        } else {
            stopping_of(args.runs, "--runs", &args.budget, RUNS_DEFAULT, 1000, &what)?
        };
        if args.read_percent > 100 {
            return Err(input(format!(
                "{what}: --read-percent must be 0 to 100, not {}",
                args.read_percent
            )));
        }
        if args.stride == Some(0) {
            return Err(input(format!("{what}: --stride must be at least 1 record")));
        }
        if args.path.as_os_str() == "-" {
            return Err(input(format!(
                "{what}: needs a file to create or a directory, not standard input"
            )));
        }
        if args.drop_caches && !crate::measure::cache::can_drop_caches() {
            return Err(input(format!(
                "{what}: --drop-caches needs root (it writes /proc/sys/vm/drop_caches); without it, --cache cold evicts just this file with fadvise"
            )));
        }
        let mut tests = if args.tests.is_empty() {
            Test::ALL.to_vec()
        } else {
            args.tests.clone()
        };
        let mut seen = std::collections::HashSet::new();
        tests.retain(|t| seen.insert(*t));
        Ok(Self {
            path: args.path.clone(),
            sizes,
            records,
            auto: args.auto,
            tests,
            runs,
            cache: cache_state(args.cache),
            stride: args.stride.unwrap_or(DEFAULT_STRIDE),
            stride_given: args.stride.is_some(),
            read_percent: args.read_percent,
            draws: args.draws,
            drop_caches: args.drop_caches,
            keep: args.keep,
            force: args.export.force,
            min_free: min_free(args.min_free.as_deref(), &what)?,
            export: ExportOptions::from_args(&args.export, &what)?,
        })
    }
}

/// Validated options of `disk`.
#[derive(Debug, Clone)]
pub struct DiskOptions {
    /// A directory for the scratch file, or the user's file.
    pub path: PathBuf,
    /// Size of the scratch file.
    pub size: u64,
    /// Time per row.
    pub runtime: Duration,
    /// Time each run spends before its figures start (`--ramp`, fio's `ramp_time`).
    pub ramp: Duration,
    /// Runs per row and per point of the depth curve (the search's steps run once).
    pub repeat: Stopping,
    /// Each row's figures are its fastest run's (CrystalDiskMark's), not the median.
    pub best: bool,
    /// The rows, in order.
    pub rows: Vec<crate::workload::panel::RowSpec>,
    /// What the preset's rows became on this machine (capped threads, rows left out).
    pub notes: Vec<crate::workload::panel::PanelNote>,
    /// The panel, the queue-depth curve or the fsync preset.
    pub mode: disk::DiskMode,
    /// Whether write rows may write to the user's file.
    pub force_write: bool,
    /// Seed of the scratch file's content.
    pub seed: u64,
    /// The file given is the study's own scratch file, written whole from `seed`: its reads
    /// are checked and its writes put the bytes it already holds.
    pub own_file: bool,
    /// The file, already open (the study's scratch file): measured through this descriptor,
    /// never reopened by `path`.
    pub open: Option<std::sync::Arc<std::fs::File>>,
    /// Keep the scratch file.
    pub keep: bool,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// Each row over time, when asked for.
    pub series: Option<SeriesOptions>,
    /// After the panel, one open-loop row at this share of the peak of its first random read
    /// row with a queue (the study's: response p99 at half the peak); `None`: none.
    pub open_loop: Option<f64>,
    /// Outputs.
    pub export: ExportOptions,
}

/// The read percent of a mix when `--mix` is not given: KDiskMark's Mix (70% reads).
pub const DEFAULT_MIX: u8 = crate::workload::panel::KDISKMARK_MIX;

/// The deepest queue `disk` keeps per thread (io_uring's rings are sized by it).
pub const MAX_DISK_DEPTH: usize = 4096;

/// The most threads `disk` runs one row on.
pub const MAX_DISK_THREADS: usize = 1024;

/// Runs of each `disk` row when no count is given: 3 to 5 (KDiskMark runs 5), until the
/// median is stable; each run is `--runtime` long, so no time budget beyond the count.
pub const DISK_RUNS: RunsDefault = RunsDefault {
    min_runs: 3,
    max_runs: 5,
    max_seconds: f64::INFINITY,
};

/// The most runs `disk --repeat` makes of one row.
pub const MAX_DISK_REPEAT: usize = 1000;

/// The longest `--runtime` of `disk`, in seconds: 365 days. Longer is refused, not run
/// (a deadline beyond what the clock can hold would end the process with a panic).
pub const MAX_DISK_RUNTIME_SECONDS: u64 = 365 * 24 * 3600;

impl DiskOptions {
    /// Checks and converts `disk`'s arguments.
    pub fn from_args(args: &crate::cli::DiskArgs) -> Result<Self> {
        use crate::cli::DiskRw;
        use crate::workload::panel::RowSpec;
        let Some(path) = args.path.clone() else {
            return Err(input("disk: give a directory or a file to measure"));
        };
        let what = format!("disk {}", display_name(&path));
        if path.as_os_str() == "-" {
            return Err(input(format!(
                "{what}: needs a directory or a file, not standard input"
            )));
        }
        let size = parse_nonzero_size(&args.size).with_context(|| format!("{what}: --size"))?;
        let runtime =
            parse_duration(&args.runtime).with_context(|| format!("{what}: --runtime"))?;
        if runtime.is_zero() {
            return Err(input(format!(
                "{what}: --runtime must be above 0 (each row runs for it), not '{}'",
                args.runtime
            )));
        }
        if runtime > Duration::from_secs(MAX_DISK_RUNTIME_SECONDS) {
            return Err(input(format!(
                "{what}: --runtime '{}' is longer than the limit of {}h (365 days) per row",
                args.runtime,
                MAX_DISK_RUNTIME_SECONDS / 3600
            )));
        }
        let ramp = match &args.ramp {
            None => Duration::ZERO,
            Some(text) => {
                let ramp = parse_duration(text).with_context(|| format!("{what}: --ramp"))?;
                if ramp > Duration::from_secs(MAX_DISK_RUNTIME_SECONDS) {
                    return Err(input(format!(
                        "{what}: --ramp '{text}' is longer than the limit of {}h (365 days)",
                        MAX_DISK_RUNTIME_SECONDS / 3600
                    )));
                }
                ramp
            }
        };
        if args.dist.is_some() && args.rw.is_none() {
            return Err(input(format!(
                "{what}: --dist skews a custom row's random offsets: give --rw randread, randwrite or randrw"
            )));
        }
        let mix = args
            .mix
            .as_deref()
            .map(|m| disk::mix_percent(m, &what))
            .transpose()?;
        let series_asked = args.series.series.is_some();
        let runs_asked = &args.runs;
        let rated = args.more.rate.is_some();
        let repeat = if rated && runs_asked.repeat.is_none() && !runs_asked.budget.given() {
            // Each step of an open loop once: its percentiles come from every I/O of it, and
            // the median of runs that all achieve the rate asked would choose among them by
            // nothing.
            Stopping::fixed(1)
        } else if series_asked && runs_asked.repeat.is_none() {
            if runs_asked.budget.given() {
                return Err(input(format!(
                    "{what}: --series follows one run of each row over time; --min-runs, --max-runs, --max-time and --precision repeat rows: leave them out or leave out --series"
                )));
            }
            Stopping::fixed(1)
        } else {
            stopping(runs_asked, DISK_RUNS, MAX_DISK_REPEAT, &what)?
        };
        if series_asked && repeat.max_runs > 1 {
            return Err(input(format!(
                "{what}: --series follows one run of each row over time; give --repeat 1 (its default with --series) or leave out --series"
            )));
        }
        let custom = args.bs.is_some() || args.depth.is_some() || args.threads.is_some();
        let more = &args.more;
        let curve =
            !rated && (more.depth_curve || more.depths.is_some() || more.latency_target.is_some());
        let preset = more.preset.is_some() || more.profile.is_some();
        let rw = args.rw.or((curve || rated).then_some(DiskRw::Randread));
        let row = match rw {
            None if custom && !preset => {
                return Err(input(format!(
                    "{what}: --bs, --depth and --threads describe a custom row: give --rw read|write|randread|randwrite|rw|randrw too"
                )));
            }
            None => None,
            Some(rw) => {
                let (op, random) = match rw {
                    DiskRw::Read => (Op::Read, false),
                    DiskRw::Write | DiskRw::Rw => (Op::Write, false),
                    DiskRw::Randread => (Op::Read, true),
                    DiskRw::Randwrite | DiskRw::Randrw => (Op::Write, true),
                };
                let mixed = matches!(rw, DiskRw::Rw | DiskRw::Randrw);
                if mix.is_some() && !mixed && args.rw.is_some() {
                    return Err(input(format!(
                        "{what}: --mix is the read share of a mix: give --rw randrw or rw, or leave out --rw for a Mix row after each row of the panel"
                    )));
                }
                let bs_text = args
                    .bs
                    .clone()
                    .unwrap_or_else(|| if random { "4k" } else { "1m" }.to_string());
                let split = if bs_text.contains(':') {
                    Some(disk::block_split(&bs_text, &what)?)
                } else {
                    None
                };
                let block = match split {
                    Some(s) => s.largest(),
                    None => block_size(&bs_text, &what).context("--bs")?,
                };
                if !block.is_multiple_of(512) {
                    return Err(input(format!(
                        "{what}: --bs '{bs_text}' is not a multiple of 512 bytes, which O_DIRECT needs"
                    )));
                }
                let depth = args.depth.unwrap_or(if rated {
                    disk::DEFAULT_RATE_CAP
                } else if random {
                    32
                } else {
                    8
                });
                if !(1..=MAX_DISK_DEPTH).contains(&depth) {
                    return Err(input(format!(
                        "{what}: --depth must be 1 to {MAX_DISK_DEPTH}, not {depth}"
                    )));
                }
                let threads = args.threads.unwrap_or(1);
                if !(1..=MAX_DISK_THREADS).contains(&threads) {
                    return Err(input(format!(
                        "{what}: --threads must be 1 to {MAX_DISK_THREADS}, not {threads}"
                    )));
                }
                if op == Op::Write && path.is_file() && !args.force_write {
                    return Err(input(format!(
                        "{what}: --rw {} would overwrite blocks of your file; give --force-write to allow it (it is never truncated)",
                        match rw {
                            DiskRw::Write => "write",
                            DiskRw::Rw => "rw",
                            DiskRw::Randrw => "randrw",
                            _ => "randwrite",
                        }
                    )));
                }
                let dist = match args.dist.as_deref() {
                    None => None,
                    Some(_) if !random => {
                        return Err(input(format!(
                            "{what}: --dist skews random offsets: give --rw randread, randwrite or randrw"
                        )));
                    }
                    Some(text) => Some(
                        text.parse::<crate::workload::skew::Dist>()
                            .map_err(|e| input(format!("{what}: {e}")))?,
                    ),
                };
                let row = RowSpec {
                    op,
                    mix: None,
                    split,
                    dist,
                    random,
                    block,
                    depth,
                    threads,
                    pace: None,
                };
                Some(if mixed {
                    row.mixed(mix.unwrap_or(DEFAULT_MIX))
                } else {
                    row
                })
            }
        };
        let (mut mode, rows, notes) = disk::mode(args, row, runtime, &what)?;
        let rows = disk::with_mixes(&mode, rows, mix, &what)?;
        if let disk::DiskMode::SyncMethods(m) = &mut mode {
            // 16 MiB as pg_test_fsync's file, or less where --size asks, down to one write
            // (rewritten in place every op, as pg_test_fsync writes; a row of 2 writes per
            // sync gets room for both).
            m.region = m.region.min(size);
            let largest = m.blocks.iter().copied().max().unwrap_or(0);
            if m.region < largest {
                let (size, largest) = crate::units::format_size_pair(size, largest);
                return Err(input(format!(
                    "{what}: --size ({size}) is smaller than one write of {largest}"
                )));
            }
        }
        disk::buffers_fit(&mode, &rows, &what)?;
        if let disk::DiskMode::Fsync(f) = &mode
            && size < f.block
        {
            let (size, block) = crate::units::format_size_pair(size, f.block);
            return Err(input(format!(
                "{what}: --size ({size}) is smaller than one write of the fsync preset ({block})"
            )));
        }
        if path.is_dir() {
            let largest = rows.iter().map(|r| r.block).max().unwrap_or(0);
            if size < largest {
                let (size, largest) = crate::units::format_size_pair(size, largest);
                return Err(input(format!(
                    "{what}: --size ({size}) is smaller than one block of {largest}"
                )));
            }
        }
        if matches!(
            mode,
            disk::DiskMode::Fsync(_) | disk::DiskMode::SyncMethods(_)
        ) && !ramp.is_zero()
        {
            return Err(input(format!(
                "{what}: --ramp is for the panel and the depth curve; the fsync and sync-methods presets count every sync from the first (a cold start is part of what a log meets)"
            )));
        }
        if matches!(mode, disk::DiskMode::SyncMethods(_))
            && (runs_asked.repeat.is_some() || runs_asked.budget.given() || args.best)
        {
            return Err(input(format!(
                "{what}: the sync-methods preset runs each row once, its spread from thirds of the run: --repeat, --min-runs, --max-runs, --max-time, --precision and --best are for the panel and the depth curve (give a longer --runtime)"
            )));
        }
        if matches!(mode, disk::DiskMode::Fsync(_))
            && (runs_asked.repeat.is_some() || runs_asked.budget.given() || args.best)
        {
            return Err(input(format!(
                "{what}: the fsync preset runs once, its figures the distribution of every fdatasync in it: --repeat, --min-runs, --max-runs, --max-time, --precision and --best are for the panel and the depth curve (give a longer --runtime for more fdatasyncs)"
            )));
        }
        if rated && args.best {
            return Err(input(format!(
                "{what}: --best keeps the fastest of a row's runs; an open loop's rate is asked, not raced: leave out --best"
            )));
        }
        if args.more.arrivals.is_some() && !rated {
            return Err(input(format!(
                "{what}: --arrivals spaces the I/Os of an open loop: give --rate too"
            )));
        }
        let series = SeriesOptions::from_args(&args.series, args.export.force, &what)?;
        if series.is_some() && !matches!(mode, disk::DiskMode::Panel) {
            return Err(input(format!(
                "{what}: --series follows the panel's rows over time; the depth curve and the fsync and sync-methods presets have none"
            )));
        }
        Ok(Self {
            path,
            size,
            runtime,
            ramp,
            repeat,
            best: args.best,
            rows,
            notes,
            mode,
            force_write: args.force_write,
            seed: args.seed.unwrap_or_else(fresh_seed),
            own_file: false,
            open: None,
            keep: args.keep,
            min_free: min_free(args.min_free.as_deref(), &what)?,
            series,
            open_loop: None,
            export: ExportOptions::from_args(&args.export, &what)?,
        })
    }
}

/// Validated options of `cache`.
#[derive(Debug, Clone)]
pub struct CacheOptions {
    /// The file.
    pub path: PathBuf,
    /// Block sizes.
    pub block_sizes: Vec<u64>,
    /// The engine that moves the bytes, with its threads and depth.
    pub setup: Setup,
    /// Global cache drop for cold runs.
    pub drop_caches: bool,
    /// Cold figures over unwritten extents or holes do not fail the exit code.
    pub allow_unwritten: bool,
    /// Cycles (cold, warm, cold again) per block size: a count, or until stable.
    pub runs: Stopping,
    /// Outputs.
    pub export: ExportOptions,
}

impl CacheOptions {
    /// Checks and converts `cache`'s arguments.
    pub fn from_args(args: &crate::cli::CacheArgs) -> Result<Self> {
        let what = format!("cache {}", display_name(&args.file));
        if args.drop_caches && !crate::measure::cache::can_drop_caches() {
            return Err(input(format!(
                "{what}: --drop-caches needs root (it writes /proc/sys/vm/drop_caches); without it, cold runs evict just this file with fadvise"
            )));
        }
        let choice = engine_choice(&args.engine, &what, Op::Read)?;
        Ok(Self {
            path: args.file.clone(),
            block_sizes: block_size_list(&args.block_size, &what)?,
            setup: choice,
            drop_caches: args.drop_caches,
            allow_unwritten: args.allow_unwritten,
            runs: stopping(&args.runs, RUNS_DEFAULT, 1000, &what)?,
            export: ExportOptions::from_args(&args.export, &what)?,
        })
    }
}

/// Validated options of `syscalls`.
#[derive(Debug, Clone)]
pub struct SyscallsOptions {
    /// The file.
    pub path: PathBuf,
    /// Sizes (= calls per measurement), ascending.
    pub sizes: Vec<u64>,
    /// Outputs.
    pub export: ExportOptions,
}

impl SyscallsOptions {
    /// Checks and converts `syscalls`' arguments.
    pub fn from_args(args: &crate::cli::SyscallsArgs) -> Result<Self> {
        let what = format!("syscalls {}", display_name(&args.file));
        let mut sizes = args
            .sizes
            .split(',')
            .map(|s| parse_nonzero_size(s.trim()).with_context(|| format!("{what}: --sizes")))
            .collect::<Result<Vec<u64>>>()?;
        sizes.sort_unstable();
        sizes.dedup();
        Ok(Self {
            path: args.file.clone(),
            sizes,
            export: ExportOptions::from_args(&args.export, &what)?,
        })
    }
}

/// `mpi` phases: 3 to 10 runs of each (a write and a read per run), none started after
/// 30 s of a phase's runs. A run is a collective job step, so the budget is smaller than a
/// single process's and rank 0 decides for every rank.
pub const MPI_RUNS: RunsDefault = RunsDefault {
    min_runs: 3,
    max_runs: 10,
    max_seconds: 30.0,
};

/// Validated options of `mpi` (the same on every rank).
#[derive(Debug, Clone)]
pub struct MpiOptions {
    /// The directory for the files.
    pub dir: PathBuf,
    /// The timed phases.
    pub phases: Phases,
    /// How the ranks share the files.
    pub layout: Layout,
    /// Bytes per rank.
    pub size: u64,
    /// Bytes per call.
    pub block_size: u64,
    /// When to stop repeating the phases (rank 0 decides, from every phase's aggregate).
    pub runs: Stopping,
    /// Cache state of the reads.
    pub cache: CacheState,
    /// Seed of the data (`None`: rank 0 picks one).
    pub seed: Option<u64>,
    /// Keep the files after a successful run.
    pub keep: bool,
    /// Repeats after the first overwrite the files in place (IOR's -E).
    pub reuse_files: bool,
    /// Read the files an earlier `--keep` left under this name, without writing.
    pub existing: Option<String>,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// JSON output.
    pub json: bool,
}

impl MpiOptions {
    /// Checks and converts `mpi`'s arguments.
    pub fn from_args(args: &crate::cli::MpiArgs) -> Result<Self> {
        let what = format!("mpi {}", display_name(&args.dir));
        let Some(phases) = args.phases.phases() else {
            return Err(input(format!(
                "{what}: io500 is a preset of its own (Io500Options), not timed phases"
            )));
        };
        let size = parse_nonzero_size(args.size.as_deref().unwrap_or("64m"))
            .with_context(|| format!("{what}: --size"))?;
        let block_size = block_size(&args.block_size, &what)?;
        if !size.is_multiple_of(block_size) {
            return Err(input(format!(
                "{what}: --size ({}) is not a multiple of --block-size ({}); the strided layout interleaves whole blocks",
                args.size.as_deref().unwrap_or("64m"),
                args.block_size
            )));
        }
        let runs = stopping(&args.runs, MPI_RUNS, 1000, &what)?;
        if let Some(name) = &args.existing {
            if phases != Phases::Read {
                return Err(input(format!(
                    "{what}: --existing reads files back: use it with `mpi read`, not `mpi {}`",
                    phases.name()
                )));
            }
            if args.seed.is_none() {
                return Err(input(format!(
                    "{what}: --existing {name}: give the --seed the files were written with (printed by the run that kept them)"
                )));
            }
            if name.is_empty() || name.contains('/') || name == "." || name == ".." {
                return Err(input(format!(
                    "{what}: --existing {name:?}: a file name in DIR, without '/'"
                )));
            }
        }
        Ok(Self {
            dir: args.dir.clone(),
            phases,
            layout: args.layout,
            size,
            block_size,
            runs,
            cache: cache_state(args.cache),
            seed: args.seed,
            keep: args.keep,
            reuse_files: args.reuse_files,
            existing: args.existing.clone(),
            min_free: min_free(args.min_free.as_deref(), &what)?,
            json: args.json,
        })
    }
}

/// Validated options of `mpi io500` (the same on every rank).
#[derive(Debug, Clone)]
pub struct Io500Options {
    /// The directory for the files.
    pub dir: PathBuf,
    /// The stonewall of each write and create phase.
    pub stonewall: Duration,
    /// ior-easy's bytes per transfer.
    pub transfer: u64,
    /// ior-easy's (and ior-hard's) most bytes per rank.
    pub easy_cap_bytes: u64,
    /// The most small files per rank.
    pub files: u64,
    /// Seed of the data (`None`: rank 0 picks one).
    pub seed: Option<u64>,
    /// Keep the files.
    pub keep: bool,
    /// Free space to keep.
    pub min_free: Option<u64>,
    /// JSON output.
    pub json: bool,
}

impl Io500Options {
    /// Checks and converts `mpi io500`'s arguments; the flags of timed phases alone
    /// (`--layout`, `--repeat` and the budget flags, `--existing`, `--reuse-files`, `--cache`)
    /// are refused.
    pub fn from_args(args: &crate::cli::MpiArgs) -> Result<Self> {
        let what = format!("mpi io500 {}", display_name(&args.dir));
        let size = args.size.as_deref().unwrap_or("1g");
        let easy_cap_bytes = parse_nonzero_size(size).with_context(|| format!("{what}: --size"))?;
        let transfer = block_size(&args.block_size, &what)?;
        if easy_cap_bytes < transfer {
            return Err(input(format!(
                "{what}: --size ({size}) is less than one transfer (--block-size {})",
                args.block_size
            )));
        }
        let stonewall =
            parse_duration(&args.stonewall).with_context(|| format!("{what}: --stonewall"))?;
        if stonewall.is_zero() {
            return Err(input(format!(
                "{what}: --stonewall {}: must be more than 0",
                args.stonewall
            )));
        }
        if args.files == 0 {
            return Err(input(format!("{what}: --files must be at least 1")));
        }
        let refused = [
            (
                args.layout != crate::workload::layout::Layout::FilePerRank,
                "--layout",
            ),
            (args.runs.repeat.is_some(), "--repeat"),
            (args.runs.budget.min_runs.is_some(), "--min-runs"),
            (args.runs.budget.max_runs.is_some(), "--max-runs"),
            (args.runs.budget.max_time.is_some(), "--max-time"),
            (args.runs.budget.precision.is_some(), "--precision"),
            (args.existing.is_some(), "--existing"),
            (args.reuse_files, "--reuse-files"),
            (args.cache != crate::cli::CacheMode::Cold, "--cache"),
        ];
        if let Some((_, flag)) = refused.iter().find(|(given, _)| *given) {
            return Err(input(format!(
                "{what}: {flag} is for `mpi write|read|both`; io500 fixes its phases (ior-easy a file per rank, ior-hard one shared file, small files), runs each once and evicts before its reads"
            )));
        }
        Ok(Self {
            dir: args.dir.clone(),
            stonewall,
            transfer,
            easy_cap_bytes,
            files: args.files,
            seed: args.seed,
            keep: args.keep,
            min_free: min_free(args.min_free.as_deref(), &what)?,
            json: args.json,
        })
    }
}

/// Refuses `dir` unless it is an existing directory, saying why (missing, not a directory,
/// no permission) after `what`.
pub(crate) fn existing_dir(dir: &std::path::Path, what: &str) -> Result<()> {
    let meta = std::fs::metadata(dir).map_err(|e| {
        input(format!(
            "{what} {}: {}",
            crate::text::printable_path(dir),
            crate::files::describe(&e)
        ))
    })?;
    if !meta.is_dir() {
        return Err(input(format!(
            "{what} {}: not a directory",
            crate::text::printable_path(dir)
        )));
    }
    Ok(())
}

/// Parses `--timeout`; 0 is refused: a socket given a zero timeout has none at all, and a
/// silent peer would be waited for forever.
fn timeout(text: &str, what: &str) -> Result<Duration> {
    let t = parse_duration(text).with_context(|| format!("{what}: --timeout"))?;
    if t.is_zero() {
        return Err(input(format!(
            "{what}: --timeout {text}: must be more than 0 (how long a silent peer is waited for)"
        )));
    }
    Ok(t)
}

/// Validated options of `send`.
#[derive(Debug, Clone)]
pub struct SendOptions {
    /// The receiver.
    pub to: Endpoint,
    /// Files, or directories (sent with their files).
    pub files: Vec<PathBuf>,
    /// How the bytes are moved: method, buffer and token.
    pub sending: Sending,
    /// How long a silent receiver is waited for.
    pub timeout: Duration,
    /// JSON output.
    pub json: bool,
}

impl SendOptions {
    /// Checks and converts `send`'s arguments.
    pub fn from_args(args: &SendArgs) -> Result<Self> {
        let to = Endpoint::parse(&args.to)?;
        let buffer = block_size(&args.buffer, "send").context("--buffer")? as usize;
        let timeout = timeout(&args.timeout, "send")?;
        Ok(Self {
            sending: Sending {
                method: args.method,
                buffer,
                token: args.token.clone().unwrap_or_default().into_bytes(),
                to: to.to_string(),
            },
            to,
            files: args.files.clone(),
            timeout,
            json: args.json,
        })
    }
}

/// Validated options of `receive`.
#[derive(Debug, Clone)]
pub struct ReceiveOptions {
    /// Where it listens.
    pub listen: Endpoint,
    /// Whether other machines may connect (a token is then required: `receive` makes one
    /// when none was given).
    pub allow_remote: bool,
    /// How files are taken: directory, method, buffer, token, checks.
    pub receiving: Receiving,
    /// Connections at once, or one only.
    pub serving: Serving,
    /// JSON output (a document per connection).
    pub json: bool,
}

impl ReceiveOptions {
    /// Checks and converts `receive`'s arguments.
    pub fn from_args(args: &ReceiveArgs) -> Result<Self> {
        existing_dir(&args.dir, "receive")?;
        let listen = Endpoint::parse(&args.listen)?;
        let buffer = block_size(&args.buffer, "receive").context("--buffer")? as usize;
        let timeout = timeout(&args.timeout, "receive")?;
        let min_free = min_free(args.min_free.as_deref(), "receive")?;
        if args.max_peers == 0 {
            return Err(input(
                "receive: --max-peers must be at least 1 (senders served at once)",
            ));
        }
        let token = match &args.token {
            Some(t) if t.is_empty() || t.len() > crate::transfer::proto::MAX_TOKEN => {
                return Err(input("receive: --token must be 1 to 256 bytes"));
            }
            Some(t) => Some(t.clone().into_bytes()),
            None => None,
        };
        Ok(Self {
            listen,
            allow_remote: args.allow_remote,
            receiving: Receiving {
                dir: args.dir.clone(),
                method: args.method,
                buffer,
                token,
                force: args.force,
                min_free,
                sync: !args.no_sync,
                timeout,
                keep_mode: args.keep_mode,
                pending: Default::default(),
            },
            serving: Serving {
                max_peers: args.max_peers,
                once: args.once,
            },
            json: args.json,
        })
    }
}

/// Validated options of `transfer`.
#[derive(Debug, Clone)]
pub struct TransferOptions {
    /// Files to send (empty: generate the classic workloads).
    pub files: Vec<PathBuf>,
    /// Where the scratch directory goes.
    pub to: PathBuf,
    /// Size of the generated large file.
    pub large: u64,
    /// Number of generated small files.
    pub small: usize,
    /// Size of each small file.
    pub small_size: u64,
    /// Transfers per pair.
    pub repeat: usize,
    /// Sender methods.
    pub senders: Vec<SendMethod>,
    /// Receiver methods.
    pub receivers: Vec<RecvMethod>,
    /// Over a Unix socket.
    pub unix: bool,
    /// The receiver fsyncs each file.
    pub sync: bool,
    /// Buffer of read and write.
    pub buffer: usize,
    /// Free space to keep.
    pub min_free: Option<u64>,
}

impl TransferOptions {
    /// Checks and converts `transfer`'s arguments.
    pub fn from_args(args: &TransferArgs) -> Result<Self> {
        let what = "transfer";
        let size = |t: &str, flag: &str| parse_size(t).with_context(|| format!("{what}: {flag}"));
        if !(1..=1000).contains(&args.repeat) {
            return Err(input(format!("{what}: --repeat must be 1 to 1000")));
        }
        let to = args.to.clone().unwrap_or_else(|| PathBuf::from("."));
        existing_dir(&to, "transfer: --to")?;
        Ok(Self {
            files: args.files.clone(),
            to,
            large: size(&args.large, "--large")?,
            small: args.small,
            small_size: size(&args.small_size, "--small-size")?,
            repeat: args.repeat,
            senders: if args.senders.is_empty() {
                SendMethod::ALL.to_vec()
            } else {
                args.senders.clone()
            },
            receivers: if args.receivers.is_empty() {
                RecvMethod::ALL.to_vec()
            } else {
                args.receivers.clone()
            },
            unix: args.unix,
            sync: !args.no_sync,
            buffer: block_size(&args.buffer, what).context("--buffer")? as usize,
            min_free: min_free(args.min_free.as_deref(), what)?,
        })
    }
}

#[cfg(test)]
mod baseline_tests {
    use super::*;

    #[test]
    fn baseline_names_are_letters_digits_and_three_marks() {
        for good in ["before", "v1.2", "kernel-6.8_rc1", &"a".repeat(64)] {
            assert!(baseline_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            ".x",
            "..",
            "a/b",
            "../up",
            "sp ace",
            "é",
            &"a".repeat(65),
        ] {
            assert!(baseline_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_baseline_dir_is_under_xdg_data_home_else_home() {
        let dir = |x: Option<&str>, h: Option<&str>| {
            default_baseline_dir(x.map(Into::into), h.map(Into::into))
        };
        assert_eq!(
            dir(Some("/d"), Some("/h")),
            Some(PathBuf::from("/d/ioscope/baselines"))
        );
        // A relative XDG_DATA_HOME is ignored, as the specification says.
        assert_eq!(
            dir(Some("rel"), Some("/h")),
            Some(PathBuf::from("/h/.local/share/ioscope/baselines"))
        );
        assert_eq!(dir(None, None), None);
    }

    #[test]
    fn repeat_defaults_to_five_under_a_baseline_flag() {
        let none = crate::cli::BaselineArgs::default();
        let saving = crate::cli::BaselineArgs {
            save_baseline: Some("a".to_string()),
            ..Default::default()
        };
        assert_eq!(repeat(None, &none, false, false, "run f").unwrap(), 1);
        assert_eq!(
            repeat(None, &saving, false, false, "run f").unwrap(),
            BASELINE_REPEAT
        );
        assert_eq!(repeat(Some(2), &saving, false, false, "run f").unwrap(), 2);
        assert!(repeat(Some(0), &none, false, false, "run f").is_err());
        assert!(repeat(Some(3), &none, false, true, "run -").is_err());
        assert!(repeat(Some(3), &none, true, false, "run f").is_err());
    }
}

#[cfg(test)]
mod mpi_tests {
    use super::*;
    use clap::Parser;

    fn args(line: &[&str]) -> crate::cli::MpiArgs {
        let mut all = vec!["ioscope", "mpi"];
        all.extend_from_slice(line);
        match crate::cli::Cli::try_parse_from(all)
            .expect("parses")
            .command
        {
            crate::cli::Command::Mpi(a) => a,
            other => panic!("not mpi: {other:?}"),
        }
    }

    #[test]
    fn mpi_phases_repeat_until_stable_by_default_or_a_fixed_count() {
        let dir = std::env::temp_dir();
        let dir = dir.to_str().expect("utf-8");
        let runs = |line: &[&str]| MpiOptions::from_args(&args(line)).map(|o| o.runs);
        let default = runs(&["both", dir]).expect("default");
        assert_eq!(
            (default.min_runs, default.max_runs, default.max_seconds),
            (MPI_RUNS.min_runs, MPI_RUNS.max_runs, MPI_RUNS.max_seconds)
        );
        assert!(!default.is_fixed());
        assert_eq!(
            runs(&["write", dir, "--repeat", "4"]).unwrap(),
            Stopping::fixed(4)
        );
        let tight = runs(&["read", dir, "--precision", "2%", "--max-runs", "6"]).unwrap();
        assert_eq!((tight.precision, tight.max_runs), (0.02, 6));
        for bad in [
            vec!["write", dir, "--repeat", "0"],
            vec!["write", dir, "--min-runs", "5", "--max-runs", "3"],
            vec!["write", dir, "--precision", "150"],
        ] {
            let err = runs(&bad).expect_err("refused").to_string();
            assert!(err.starts_with("mpi "), "{err}");
        }
    }

    #[test]
    fn io500_refuses_every_flag_of_the_repeats() {
        let dir = std::env::temp_dir();
        let dir = dir.to_str().expect("utf-8");
        for flag in [
            "--repeat",
            "--min-runs",
            "--max-runs",
            "--max-time",
            "--precision",
        ] {
            let value = if flag == "--max-time" { "5s" } else { "3" };
            let err = Io500Options::from_args(&args(&["io500", dir, flag, value]))
                .expect_err("refused")
                .to_string();
            assert!(
                err.contains(&format!("{flag} is for `mpi write|read|both`")),
                "{err}"
            );
        }
        assert!(Io500Options::from_args(&args(&["io500", dir])).is_ok());
    }
}
