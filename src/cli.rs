//! The command line, as clap sees it: names, flags and help text. Syntax only; meaning
//! (sizes, limits, defaults that depend on the machine) is decided in `options`.

use crate::workload::layout::{Layout, Phases};
use crate::workload::patterns::Test;
use crate::workload::study::{Level, Part};
use clap::{
    ArgGroup, Args, ColorChoice, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum,
};
use std::path::PathBuf;

/// Measure, explain and verify file and storage I/O performance.
#[derive(Debug, Parser)]
#[command(
    name = "ioscope",
    version = env!("IOSCOPE_VERSION"),
    about,
    propagate_version = true,
    after_help = EXAMPLES_TOP
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// Internal, for tests (as hyperfine's `--debug-mode`), hidden from help: `fixed` times
    /// every run with a deterministic meter, so a command's output is exact.
    #[arg(long, global = true, hide = true, value_name = "METER", value_parser = ["fixed", "system"])]
    pub meter: Option<String>,
    /// Do not time each call: results leave out their latency percentiles (recording costs
    /// two reads of the time-stamp counter per call, 1–3% of a warm 4 KiB read; see
    /// bench/RESULTS.md).
    #[arg(long, global = true)]
    pub no_latency: bool,
    /// Tables keep every column, however narrow the terminal (by default the columns that
    /// matter least are left out, and named, where a table does not fit).
    #[arg(long, global = true)]
    pub wide: bool,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read (-r) or write (-w) FILE with BLOCK_SIZE-sized calls and print the XOR checksum.
    #[command(after_help = RUN)]
    Run(RunArgs),
    /// Find the file size whose read takes a "reasonable" time (5-15 s by default).
    #[command(after_help = CALIBRATE)]
    Calibrate(CalibrateArgs),
    /// The whole study on one directory: write a scratch file, read it at many block sizes.
    #[command(after_help = STUDY)]
    Study(StudyArgs),
    /// Print the XOR of FILE as fast as this machine allows, cold or warm (`-` is stdin).
    #[command(after_help = FAST)]
    Fast(FastArgs),
    /// Read FILE with ioscope, dd, cat and fio in alternation and compare their rates.
    #[command(after_help = COMPARE)]
    Compare(CompareArgs),
    /// Throughput against block size, with repeats, spread, kernel checks and a cost model.
    #[command(after_help = SWEEP)]
    Sweep(SweepArgs),
    /// Cold read, warm read, cold again: the page cache's effect, proven by residency.
    #[command(after_help = CACHE)]
    Cache(CacheArgs),
    /// The cost of a system call: 1-byte read() against lseek(), pread(), getpid().
    #[command(after_help = SYSCALLS)]
    Syscalls(SyscallsArgs),
    /// iozone's tests (write, rewrite, read, reread, random, backward, stride, ...), fsync shown.
    #[command(after_help = PATTERNS)]
    Patterns(PatternsArgs),
    /// The disk panel (SEQ1M Q8T1 … RND4K Q1T1): MB/s, IOPS, latency percentiles, the device's queue.
    #[command(after_help = DISK)]
    Disk(DiskArgs),
    /// Run CMD under ptrace and report the file-I/O system calls it really made.
    #[command(after_help = TRACE)]
    Trace(TraceArgs),
    /// Grade a reader (a student's fast): its XOR checked on the sizes that break readers.
    #[command(after_help = GRADE)]
    Grade(GradeArgs),
    /// Send files to a receiver (`ioscope receive`), each verified and in place on arrival.
    #[command(after_help = SEND)]
    Send(SendArgs),
    /// Receive files into DIR: names confined, nothing overwritten, every byte verified.
    #[command(after_help = RECEIVE)]
    Receive(ReceiveArgs),
    /// Both ends on this machine: every sender × receiver method, small files and one large.
    #[command(after_help = TRANSFER)]
    Transfer(TransferArgs),
    /// Many clients at once under MPI (`mpirun -np N ioscope mpi ...`), aggregated like IOR.
    #[command(after_help = MPI)]
    Mpi(MpiArgs),
    /// Re-render a saved JSON result (any command's --json) as text, CSV, Markdown or SVG.
    #[command(after_help = REPORT)]
    Report(ReportArgs),
    /// Print a shell completion script for SHELL (generated from these definitions).
    #[command(after_help = COMPLETIONS)]
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), of ioscope or of one subcommand.
    #[command(after_help = MAN)]
    Man {
        /// A subcommand whose page to print instead of the main one.
        subcommand: Option<String>,
    },
    /// Internal: CALLS getppid() calls, printing nanoseconds per call (trace's overhead).
    /// Recognised by [`Cli::parse_args`] before clap, so neither help, completions nor the
    /// manual page show it.
    #[command(skip)]
    SyscallLoop {
        /// How many calls.
        calls: u64,
    },
    /// Internal: `trace`'s forwarder of a known tool's output (see `trace::tee`). Recognised
    /// by [`Cli::parse_args`] before clap, like `__syscall-loop`.
    #[command(skip)]
    Tee {
        /// The descriptor to pass the output on to (1 or 2).
        to: i32,
        /// The socket to send ioscope its copy on.
        channel: i32,
    },
}

/// The examples at the end of each `--help`.
const EXAMPLES_TOP: &str = concat!(
    "Examples:\n",
    "  ioscope study\n",
    "      the whole study in a new directory\n",
    "  ioscope sweep big --markdown sweep.md\n",
    "      throughput against block size, also as Markdown\n",
    "  ioscope completions bash > ~/.local/share/bash-completion/completions/ioscope\n",
    "      tab completion",
);
const RUN: &str = concat!(
    "Examples:\n",
    "  ioscope run big -w 1m 64 --seed 1\n",
    "      create a 64 MiB file of seeded data, fsync'd\n",
    "  ioscope run big -r 4k\n",
    "      read it back in 4 KiB read() calls and print the XOR",
);
const CALIBRATE: &str = concat!(
    "Examples:\n",
    "  ioscope calibrate big 1m --grow\n",
    "      grow big until a 1 MiB-block read takes 5-15 s\n",
    "  ioscope calibrate big 4k --cache cold --min 2s --max 4s\n",
    "      the size whose cold read takes 2-4 s",
);
const STUDY: &str = concat!(
    "Examples:\n",
    "  ioscope study\n",
    "      the whole study here, its report in a new ./ioscope-report-DATE-TIME\n",
    "  ioscope study /mnt/disk --level quick -o disk-report\n",
    "      a quick study of another disk, its report in ./disk-report",
);
const FAST: &str = concat!(
    "Examples:\n",
    "  x=$(ioscope fast big)\n",
    "      the XOR alone, as fast as this machine allows\n",
    "  ioscope fast big --verbose --markdown fast.md\n",
    "      how it was read, also as a Markdown table",
);
const COMPARE: &str = concat!(
    "Examples:\n",
    "  ioscope compare big\n",
    "      ioscope, dd, cat and fio, warm and cold\n",
    "  ioscope compare big --cache warm --repeat 5 --markdown cmp.md\n",
    "      warm only, five runs each, a table to paste",
);
const SWEEP: &str = concat!(
    "Examples:\n",
    "  ioscope sweep big --block-sizes 4k,64k,1m --csv s.csv --svg s.svg\n",
    "      three block sizes, with a CSV and a chart\n",
    "  ioscope sweep big --cache cold --from 4k --to 16m --markdown s.md -q\n",
    "      cold, quietly, as a Markdown table\n",
    "  ioscope sweep big --verbose\n",
    "      each block size's call latency and every XOR under the table",
);
const CACHE: &str = concat!(
    "Examples:\n",
    "  ioscope cache big\n",
    "      cold, warm and cold again with 1 MiB reads\n",
    "  ioscope cache big --block-size 4k,1m --json > cache.json\n",
    "      two block sizes, saved for `ioscope report`",
);
const SYSCALLS: &str = concat!(
    "Examples:\n",
    "  ioscope syscalls big\n",
    "      read() of 1 byte against lseek() and getpid()\n",
    "  ioscope syscalls big --sizes 1m,4m --markdown calls.md\n",
    "      fewer calls, as a Markdown table\n",
    "  ioscope syscalls big --svg calls.svg\n",
    "      time against number of calls, read() beside lseek(), linear axes",
);
const PATTERNS: &str = concat!(
    "Examples:\n",
    "  ioscope patterns .\n",
    "      iozone's tests on a 64 MiB scratch file here\n",
    "  ioscope patterns . --size 256m --cache warm\n",
    "      beside iozone -i 0 -i 1 -i 2 -i 4 -s 256m -r 64k, whose reads are warm\n",
    "  ioscope patterns /mnt/disk --auto --size 256m --svg heat.svg\n",
    "      every record and file size, a heat map per test",
);
const DISK: &str = concat!(
    "Examples:\n",
    "  ioscope disk .\n",
    "      the panel on a 256 MiB scratch file here, 2 s per row, read then write\n",
    "  ioscope disk /mnt/disk --rw randread --bs 4k --depth 32 --runtime 10s\n",
    "      one row, as fio --rw=randread --bs=4k --iodepth=32 --direct=1 --ioengine=io_uring\n",
    "  ioscope disk . --depth-curve --latency-target 2ms --svg qd.svg\n",
    "      IOPS and p99 at depths 1 to 128, the knee, the deepest queue under 2 ms\n",
    "  ioscope disk . --preset fsync --runtime 10s\n",
    "      fdatasync latency of a write-ahead log against etcd's 10 ms p99\n",
    "  ioscope disk /var/lib/postgresql --preset sync-methods --runtime 5s\n",
    "      pg_test_fsync's sync methods, with the flushes each sent to the device",
);
const TRACE: &str = concat!(
    "Examples:\n",
    "  ioscope trace -- cp big copy\n",
    "      the reads and writes cp really made\n",
    "  ioscope trace --svg where.svg -- sqlite3 db.sqlite 'select count(*) from t'\n",
    "      where in each file the calls went",
);
const GRADE: &str = concat!(
    "Examples:\n",
    "  ioscope grade -- ./fast\n",
    "      ./fast FILE on each file of the battery (the file goes last)\n",
    "  ioscope grade --big -- python3 fast.py --input {}\n",
    "      the file where {} stands; also 2 GiB and 4 GiB + 8 (sparse)\n",
    "\n",
    "Each size's verdict: correct, wrong (both XORs), crashed (the signal), timeout or ",
    "exit N; then the pattern of the failures (the last size % 4 bytes dropped, 32-bit ",
    "sizes, one read call for 2 GiB, an empty file, different answers for one file). ",
    "Exit 0 only when every size is correct.",
);
const SEND: &str = concat!(
    "Examples:\n",
    "  ioscope send 127.0.0.1:7878 big dir/\n",
    "      send a file and a directory to `ioscope receive`\n",
    "  ioscope send unix:/tmp/io.sock big --method sendfile\n",
    "      over a Unix socket with sendfile()",
);
const RECEIVE: &str = concat!(
    "Examples:\n",
    "  ioscope receive incoming --once\n",
    "      take one connection's files into ./incoming\n",
    "  ioscope receive incoming --listen unix:/tmp/io.sock --method splice\n",
    "      on a Unix socket, written with splice()",
);
const TRANSFER: &str = concat!(
    "Examples:\n",
    "  ioscope transfer\n",
    "      every method pair on ten small files and one of 64 MiB\n",
    "  ioscope transfer big --unix --markdown transfer.md\n",
    "      a given file over a Unix socket, as Markdown",
);
const REPORT: &str = concat!(
    "Examples:\n",
    "  ioscope report sweep.json --markdown sweep.md --svg sweep.svg\n",
    "      a saved `sweep --json` again, as Markdown tables and a chart\n",
    "  ioscope report usb-report shm-report nfs-report -o compare.html --labels usb,shm,nfs\n",
    "      studies side by side: one table per measure with a column per medium and\n",
    "      ratios, curves overlaid; compare.json and compare.csv written beside it",
);
const MPI: &str = concat!(
    "Examples:\n",
    "  mpirun -np 4 ioscope mpi both /shared/scratch --layout shared-strided\n",
    "      four ranks write one shared file, each reads another rank's blocks\n",
    "  mpirun -np 2 ioscope mpi write /nfs/dir --size 1g --json\n",
    "      a file per rank, 1 GiB each, aggregated as JSON\n",
    "  mpirun -np 2 ioscope mpi write /nfs/dir --keep --seed 7\n",
    "      write and keep the files; it prints their name\n",
    "  mpirun -np 2 ioscope mpi read /nfs/dir --existing .ioscope-mpi-1234 --seed 7\n",
    "      read them back, verified, without writing first\n",
    "  mpirun -np 4 ioscope mpi io500 /shared/scratch --stonewall 30s\n",
    "      an IO500-like run (not the official score): phases, stonewall counts, geometric means",
);
const COMPLETIONS: &str = concat!(
    "Examples:\n",
    "  source <(ioscope completions bash)\n",
    "      completion in this bash session\n",
    "  ioscope completions zsh > ~/.zfunc/_ioscope\n",
    "      install for zsh (~/.zfunc on $fpath)\n",
    "  ioscope completions fish > ~/.config/fish/completions/ioscope.fish\n",
    "      install for fish",
);
const MAN: &str = concat!(
    "Examples:\n",
    "  ioscope man | man -l -\n",
    "      read the manual page now\n",
    "  ioscope man > ~/.local/share/man/man1/ioscope.1\n",
    "      install it for `man ioscope`\n",
    "  ioscope man sweep | man -l -\n",
    "      the page of one subcommand",
);

/// `ioscope run FILE -r|-w BLOCK_SIZE [BLOCK_COUNT]`
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("mode").required(true).args(["read", "write"])))]
pub struct RunArgs {
    /// The file to read or create (`-` reads standard input).
    pub file: PathBuf,
    /// Read FILE and print the XOR of its bytes.
    #[arg(short = 'r', long)]
    pub read: bool,
    /// Create FILE with BLOCK_SIZE x BLOCK_COUNT bytes of pseudo-random data.
    #[arg(short = 'w', long)]
    pub write: bool,
    /// Bytes per read()/write() call: 4096, 4k, 1m, ... (powers of 1024).
    pub block_size: String,
    /// Number of calls; reading without it goes to the end of the file.
    pub block_count: Option<String>,
    /// Seed for the written data (a fresh one is chosen and shown when omitted); with -r,
    /// the seed FILE was written with: every byte read is then verified in place.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Overwrite FILE if it exists (-w).
    #[arg(long)]
    pub force: bool,
    /// Allow FILE to be a block or character device.
    #[arg(long)]
    pub allow_device: bool,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Engine, threads and depth.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// The run over time.
    #[command(flatten)]
    pub series: SeriesArgs,
    /// Timed runs, each measured the same way: the figure is their median, with n and
    /// their range (default 1, and 5 with --save-baseline or --baseline). With -w, the
    /// file this run created is rewritten by each run; an existing one needs --force.
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the XOR alone (the whole result where a check failed) and errors: no
    /// progress bar, no warnings.
    #[arg(short, long)]
    pub quiet: bool,
}

/// A run over time: per-interval figures as JSON Lines and an SVG (`run`, `disk`).
#[derive(Debug, Clone, Args)]
pub struct SeriesArgs {
    /// Write per-interval MiB/s, IOPS, p99 and max latency, Dirty/Writeback and the device's
    /// bytes to FILE as JSON Lines, and state the steady state (an existing FILE needs --force).
    #[arg(long, value_name = "FILE")]
    pub series: Option<PathBuf>,
    /// The series' chart (MiB/s and p99 over time, the steady stretch shaded); default FILE.svg.
    #[arg(long, value_name = "FILE", requires = "series")]
    pub series_svg: Option<PathBuf>,
    /// Length of one interval of the series.
    #[arg(
        long,
        default_value = "1s",
        value_name = "DURATION",
        requires = "series"
    )]
    pub series_interval: String,
}

/// Which engine moves the bytes, and how many threads and requests in flight it uses.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// The engine that moves the bytes (default: stream, block-sized read()/write()).
    #[arg(long, value_name = "NAME", long_help = engine_help())]
    pub engine: Option<String>,
    /// Worker threads, for engines that use them (default: 1).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Requests in flight per thread, for queued engines (default: the engine's own).
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
}

/// The `--engine` help: the engine table itself, so it never drifts from it.
fn engine_help() -> String {
    format!(
        "The engine that moves the bytes (default: stream). Every engine:\n{}",
        crate::engine::table()
    )
}

/// `fast`'s `--engine` help: it chooses an engine unless told, so no default is named.
fn fast_engine_help() -> String {
    format!(
        "Force an engine instead of the one fast chooses for the file and machine. Every engine:\n{}",
        crate::engine::table()
    )
}

/// Whether the timed reads find the file in the page cache (`calibrate`, `patterns`, `mpi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheMode {
    /// Read the file once first so every timed read is served from memory.
    Warm,
    /// Evict the file's pages before every timed read (fdatasync + fadvise, no root needed),
    /// proven by residency and device bytes.
    Cold,
}

/// `ioscope calibrate FILE BLOCK_SIZE`
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The file to read (a prefix of it is read; --grow extends it when too small).
    pub file: PathBuf,
    /// Bytes per read() call.
    pub block_size: String,
    /// Shortest acceptable read time.
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub min: String,
    /// Longest acceptable read time.
    #[arg(long, default_value = "15s", value_name = "DURATION")]
    pub max: String,
    /// Cache state of every timed read.
    #[arg(long, value_enum, default_value_t = CacheMode::Warm)]
    pub cache: CacheMode,
    /// Append pseudo-random data to FILE when it is too small (never past --min-free).
    #[arg(long)]
    pub grow: bool,
    /// Seed for data appended by --grow.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Engine, threads and depth.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Print one JSON document instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print only the result and errors: no progress bar, no warnings.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `ioscope study [DIR]`
#[derive(Debug, Args)]
pub struct StudyArgs {
    /// Directory to study (default: a new ./ioscope-study, removed afterwards if empty).
    pub dir: Option<PathBuf>,
    /// How much to measure (the help states each level's time: `workload::estimate`).
    #[arg(long, value_enum, default_value_t = Level::Standard, help = crate::workload::estimate::level_help())]
    pub level: Level,
    /// Where the report goes (study.json, report.html, CSV and SVG files); default: a new
    /// ./ioscope-report-DATE-TIME.
    #[arg(long, short = 'o', value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Only these parts (comma-separated; write-read always runs: the others read its file).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "PARTS")]
    pub only: Vec<Part>,
    /// Leave these parts out (comma-separated; not write-read).
    #[arg(
        long,
        value_enum,
        value_delimiter = ',',
        value_name = "PARTS",
        conflicts_with = "only"
    )]
    pub skip: Vec<Part>,
    /// Size of the scratch file (default: suits the machine and the level).
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Comma-separated block sizes of the sweeps (default: the level's, 128 B to 16 MiB for
    /// standard).
    #[arg(long, value_name = "LIST")]
    pub block_sizes: Option<String>,
    /// Keep the scratch file afterwards.
    #[arg(long)]
    pub keep: bool,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Name the medium (e.g. "usb stick"), as `report` names it beside other studies
    /// (default: the file system and device, e.g. "ext4 on vda", "tmpfs").
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Print the study as one JSON document on stdout (study.json is written either way).
    #[arg(long)]
    pub json: bool,
    /// Write into an --out directory that already holds files (the study's own files there
    /// are replaced).
    #[arg(long)]
    pub force: bool,
    /// Only the result and errors: no progress bar, no warnings.
    #[arg(short, long)]
    pub quiet: bool,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// `ioscope fast FILE`
#[derive(Debug, Args)]
pub struct FastArgs {
    /// The file to checksum (`-` reads standard input).
    pub file: PathBuf,
    /// Force an engine instead of choosing one.
    #[arg(long, value_name = "NAME", long_help = fast_engine_help())]
    pub engine: Option<String>,
    /// Worker threads (default: chosen per engine and machine).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Bytes per read or per chunk (default: chosen per engine).
    #[arg(long, value_name = "SIZE")]
    pub block_size: Option<String>,
    /// Reads in flight per thread for the uring engine.
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Timed reads, each measured the same way: the figure is their median, with n and
    /// their range (default 1, and 5 with --save-baseline or --baseline).
    #[arg(long, value_name = "N")]
    pub repeat: Option<usize>,
    /// Allow FILE to be a block or character device.
    #[arg(long)]
    pub allow_device: bool,
    /// Also print the method, bytes, time, rate and residency on stderr.
    #[arg(short, long)]
    pub verbose: bool,
    /// Print one JSON document instead of the checksum line.
    #[arg(long)]
    pub json: bool,
    /// Also write the figures of --verbose as a Markdown table to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Overwrite an existing --markdown file.
    #[arg(long)]
    pub force: bool,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// Which cache states a command measures in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CacheChoice {
    /// Every timed run starts fully cached.
    Warm,
    /// Every timed run starts evicted.
    Cold,
    /// Both, warm first.
    Both,
}

/// `ioscope compare FILE`
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The file to read.
    pub file: PathBuf,
    /// Block size for `ioscope run`, dd and fio.
    #[arg(long, default_value = "1m", value_name = "SIZE")]
    pub block_size: String,
    /// Cache state(s) to compare in.
    #[arg(long, value_enum, default_value_t = CacheChoice::Both)]
    pub cache: CacheChoice,
    /// Another reader as a contender, e.g. --cmd 'mine=./fast {}' (repeatable): split as a
    /// shell would (no shell runs), `{}` the file (else it goes last). Its whole-process wall
    /// time over the file's size is its rate, as a marker times it; the XOR it prints is
    /// checked against the file's, and a wrong one is never ranked.
    #[arg(long = "cmd", value_name = "NAME=CMD")]
    pub commands: Vec<String>,
    /// Runs of each contender per cache state: the median is reported, with its spread.
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// `ioscope patterns FILE|DIR`
#[derive(Debug, Args)]
pub struct PatternsArgs {
    /// The file to create for the tests (removed after; an existing one needs --force and
    /// is left whole), or a directory to make a scratch file in.
    pub path: PathBuf,
    /// File size.
    #[arg(long, default_value = "64m", value_name = "SIZE")]
    pub size: String,
    /// Record size: bytes per call (default 64k; --auto measures 4k to 16m instead).
    #[arg(long, value_name = "SIZE", conflicts_with = "auto")]
    pub record: Option<String>,
    /// iozone's -a: every record size from 4k to 16m at every file size from 64k to --size
    /// (by fours), as a table per test and a heat map (--svg).
    #[arg(long)]
    pub auto: bool,
    /// Comma-separated tests to run (default: all, in iozone's order).
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_enum)]
    pub tests: Vec<Test>,
    /// Exactly N timed runs per test (default: 1 with --auto; without it, each test is
    /// repeated until its median is stable: see --min-runs, --max-runs, --max-time,
    /// --precision).
    #[arg(long, value_name = "N", conflicts_with_all = BUDGET_FLAGS)]
    pub runs: Option<usize>,
    /// The budget of runs until stable.
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Cache state the read tests start in (reread always follows read, warm).
    #[arg(long, value_enum, default_value_t = CacheMode::Cold)]
    pub cache: CacheMode,
    /// Stride read: distance between records read, in records (default 17, or less on a
    /// file of 17 records or fewer).
    #[arg(long, value_name = "N")]
    pub stride: Option<u64>,
    /// Mixed test: share of records read, in percent (the rest are written).
    #[arg(long, default_value_t = 50, value_name = "PERCENT")]
    pub read_percent: u8,
    /// Random tests draw records with repeats instead of touching each once (iozone drew
    /// with repeats before 3.292; since then it shuffles, every record once, as the default).
    #[arg(long)]
    pub draws: bool,
    /// Cold runs drop the whole page cache (root only) instead of evicting the file.
    #[arg(long)]
    pub drop_caches: bool,
    /// Keep the test file afterwards (with --force on an existing FILE, it takes FILE's
    /// place; in a directory with --auto, one file per size). Never kept when interrupted.
    #[arg(long)]
    pub keep: bool,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
}

/// What one custom `disk` row does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiskRw {
    /// Sequential reads.
    Read,
    /// Sequential writes.
    Write,
    /// Random reads.
    Randread,
    /// Random writes.
    Randwrite,
    /// Sequential reads and writes mixed (--mix: the read percent).
    Rw,
    /// Random reads and writes mixed (--mix: the read percent).
    Randrw,
}

/// `ioscope disk DIR|FILE`
#[derive(Debug, Args)]
pub struct DiskArgs {
    /// A directory to make a scratch test file in (written whole first, removed after), or
    /// a file of yours to read (written only with --force-write, never truncated).
    #[arg(required_unless_present = "list")]
    pub path: Option<PathBuf>,
    /// Size of the scratch test file.
    #[arg(long, default_value = "256m", value_name = "SIZE")]
    pub size: String,
    /// Seconds each row runs for.
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub runtime: String,
    /// Runs of each row and each depth of the curve, each for --runtime: the figure is
    /// their median, with their range (by default 3 to 5 runs, until stable; KDiskMark runs
    /// 5; 1 with --series).
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Give each row its fastest run, as CrystalDiskMark does, instead of the median of
    /// its runs (labelled "best of N"; the median is the figure to compare).
    #[arg(long)]
    pub best: bool,
    /// One custom row instead of the panel: its direction and order.
    #[arg(long, value_enum)]
    pub rw: Option<DiskRw>,
    /// Bytes per I/O of the custom row (default 1m sequential, 4k random); with --preset
    /// sync-methods, its block sizes (8k by default; a list such as 8k,16k).
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<String>,
    /// I/Os in flight per thread of the custom row (default 8 sequential, 32 random).
    #[arg(long, value_name = "N")]
    pub depth: Option<usize>,
    /// Threads of the custom row, each with its own queue (default 1).
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// Percent of a mix's I/Os that read (0-100, default 70 as KDiskMark's Mix): with
    /// --rw randrw|rw, or with a panel its Mix rows' share and a Mix row after each shape.
    #[arg(long, value_name = "PCT")]
    pub mix: Option<String>,
    /// How the random row's offsets are skewed, as fio's random_distribution: uniform,
    /// zipf:θ (1.2 is common), pareto:h (0.9), normal:σ (percent of the file).
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,
    /// Time each run spends before its figures start (fio's ramp_time): a device's
    /// cache, a file system's allocation or a ring's warm-up left out of every figure.
    #[arg(long, value_name = "DURATION")]
    pub ramp: Option<String>,
    /// Let write rows overwrite blocks of the FILE given (with generated data, in place).
    #[arg(long)]
    pub force_write: bool,
    /// Seed of the scratch file's content (default: a fresh one).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Keep the scratch file afterwards (never when interrupted).
    #[arg(long)]
    pub keep: bool,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Each row over time (one series file, a `row` key on each line).
    #[command(flatten)]
    pub series: SeriesArgs,
    /// Profiles, presets, the queue-depth curve and the fsync preset.
    #[command(flatten)]
    pub more: DiskMoreArgs,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// KDiskMark's profiles (`disk --profile`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DiskProfile {
    /// SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1 + its 70/30 Mix, RND4K Q1T1 (and RND4K
    /// Q32T<cores/2> from 4 cores).
    Default,
    /// SEQ1M Q8T1, RND4K Q32T16 + its 70/30 Mix (threads capped at the cores).
    Peak,
    /// SEQ1M Q1T1, RND4K Q1T1 + its 70/30 Mix.
    RealWorld,
}

/// `disk`'s profiles, presets, queue-depth curve and fsync preset.
#[derive(Debug, Args)]
pub struct DiskMoreArgs {
    /// Which rows: KDiskMark's profile (the same as --preset NAME).
    #[arg(long, value_enum, conflicts_with_all = ["preset", "rw"])]
    pub profile: Option<DiskProfile>,
    /// A named preset (see --list): default, peak, real-world, nvme, fsync, sync-methods.
    #[arg(long, value_name = "NAME", conflicts_with = "rw")]
    pub preset: Option<String>,
    /// Print the presets and their rows, and exit.
    #[arg(long)]
    pub list: bool,
    /// IOPS and latency against queue depth (1 to 128 in powers of two, or --depths), the
    /// knee marked: random 4 KiB reads unless --rw/--bs say otherwise.
    #[arg(long, conflicts_with_all = ["profile", "preset", "depth"])]
    pub depth_curve: bool,
    /// The depths of the curve, comma-separated (implies --depth-curve): 1,2,4,8.
    #[arg(long, value_name = "LIST", conflicts_with_all = ["profile", "preset", "depth"])]
    pub depths: Option<String>,
    /// Find the deepest queue whose latency percentile stays under TIME (fio's
    /// latency_target): bisect over the depths, one short run each. `2ms`, `500us:p99.9`.
    /// With --rate: the highest rate whose response percentile stays under it.
    #[arg(long, value_name = "TIME[:PCT]", conflicts_with_all = ["profile", "preset"])]
    pub latency_target: Option<String>,
    /// An open loop: I/Os arrive at this rate whatever the device does, each timed from
    /// its intended start (response) and from its submission (service). I/Os per second
    /// (20k) or a percent of the closed-loop peak (50%); a list (10k,20k) or a range of
    /// steps (10%..100%, 5k..50k:5k). --depth caps what each thread keeps in flight
    /// (default 128); with --latency-target, the highest rate that holds it.
    #[arg(long, value_name = "RATE", conflicts_with_all = ["profile", "preset"])]
    pub rate: Option<String>,
    /// How an open loop's arrivals are spaced: evenly (uniform, the default, as fio's
    /// rate_iops) or as a Poisson process (independent clients).
    #[arg(long, value_enum, value_name = "HOW")]
    pub arrivals: Option<crate::workload::arrivals::Arrivals>,
    /// The fsync preset's verdict: fdatasync's percentile against TIME (default 10ms:p99,
    /// etcd's figure).
    #[arg(long, value_name = "TIME[:PCT]")]
    pub fsync_target: Option<String>,
}

/// `ioscope send ADDR FILE...`
#[derive(Debug, Args)]
pub struct SendArgs {
    /// The receiver: HOST:PORT or unix:PATH.
    pub to: String,
    /// Files, or directories (sent with their files, names relative to their parent).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// How the sender moves the bytes.
    #[arg(long, value_enum, default_value_t = crate::transfer::methods::SendMethod::Read)]
    pub method: crate::transfer::methods::SendMethod,
    /// Buffer size of the read method.
    #[arg(long, default_value = "1m", value_name = "SIZE")]
    pub buffer: String,
    /// The token the receiver asks for.
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// Give up on a silent receiver after this long.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub timeout: String,
    /// Print one JSON document.
    #[arg(long)]
    pub json: bool,
}

/// `ioscope receive DIR`
#[derive(Debug, Args)]
pub struct ReceiveArgs {
    /// Where received files go (it must exist).
    pub dir: PathBuf,
    /// Address to listen on: HOST:PORT or unix:PATH.
    #[arg(long, default_value = "127.0.0.1:7878", value_name = "ADDR")]
    pub listen: String,
    /// Listen on an address other machines can reach (a token is then required).
    #[arg(long)]
    pub allow_remote: bool,
    /// The token senders must present (with --allow-remote, one is made and printed if not given).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// How the receiver moves the bytes.
    #[arg(long, value_enum, default_value_t = crate::transfer::methods::RecvMethod::Write)]
    pub method: crate::transfer::methods::RecvMethod,
    /// Buffer size of the write method.
    #[arg(long, default_value = "1m", value_name = "SIZE")]
    pub buffer: String,
    /// Serve one connection, then exit with its status.
    #[arg(long)]
    pub once: bool,
    /// Replace existing files.
    #[arg(long)]
    pub force: bool,
    /// Keep the sender's permission bits whole (also setuid, setgid, sticky and those the
    /// umask would clear); by default a file gets the sender's rwx bits less the umask.
    #[arg(long)]
    pub keep_mode: bool,
    /// Senders served at once; one more is refused as busy.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub max_peers: usize,
    /// Do not fsync each file before renaming it into place (faster; a crash may lose it).
    #[arg(long)]
    pub no_sync: bool,
    /// Free space to keep (default: 10% of the file system or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Give up on a silent sender after this long.
    #[arg(long, default_value = "30s", value_name = "DURATION")]
    pub timeout: String,
    /// Print one JSON document per connection.
    #[arg(long)]
    pub json: bool,
}

/// `ioscope transfer [FILE...]`
#[derive(Debug, Args)]
pub struct TransferArgs {
    /// Files or directories to send (default: 10 small files and one large, made here).
    pub files: Vec<PathBuf>,
    /// Directory for the received copies and generated files (default: the current one).
    #[arg(long, value_name = "DIR")]
    pub to: Option<PathBuf>,
    /// Size of the generated large file.
    #[arg(long, default_value = "64m", value_name = "SIZE")]
    pub large: String,
    /// Number of generated small files.
    #[arg(long, default_value_t = 10, value_name = "N")]
    pub small: usize,
    /// Size of each generated small file.
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub small_size: String,
    /// Timed transfers per method pair.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeat: usize,
    /// Sender methods, comma-separated (default: all).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub senders: Vec<crate::transfer::methods::SendMethod>,
    /// Receiver methods, comma-separated (default: all).
    #[arg(long, value_enum, value_delimiter = ',', value_name = "LIST")]
    pub receivers: Vec<crate::transfer::methods::RecvMethod>,
    /// Over a Unix domain socket instead of loopback TCP.
    #[arg(long)]
    pub unix: bool,
    /// The receiver does not fsync each file (as `nc > file` does not): the channel's and
    /// the methods' cost alone.
    #[arg(long)]
    pub no_sync: bool,
    /// Buffer size of the read and write methods.
    #[arg(long, default_value = "1m", value_name = "SIZE")]
    pub buffer: String,
    /// Free space to keep.
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
}

/// How many timed runs each point gets: repeated until its figure is stable, within a
/// budget, or a fixed count.
#[derive(Debug, Clone, Default, Args)]
pub struct RunsArgs {
    /// Exactly N runs of each point, whatever their spread. Without it a point is repeated
    /// until the 95% confidence interval of its median is within --precision, at least
    /// --min-runs and at most --max-runs times, starting no run after --max-time.
    #[arg(long, value_name = "N", conflicts_with_all = BUDGET_FLAGS)]
    pub repeat: Option<usize>,
    /// The budget of runs until stable.
    #[command(flatten)]
    pub budget: BudgetArgs,
}

/// The ids of [`BudgetArgs`]' flags, which a fixed count excludes.
pub const BUDGET_FLAGS: [&str; 4] = ["min_runs", "max_runs", "max_time", "precision"];

/// How long a point is repeated until its median is stable.
#[derive(Debug, Clone, Default, Args)]
pub struct BudgetArgs {
    /// Runs every point gets, however stable (default 3).
    #[arg(long, value_name = "N")]
    pub min_runs: Option<usize>,
    /// Runs no point exceeds (default 30; `disk`: 5; `mpi`: 10).
    #[arg(long, value_name = "N")]
    pub max_runs: Option<usize>,
    /// Seconds of runs after which a point starts no new one, its --min-runs aside
    /// (default 3s; `disk`: none, its runs are --runtime long; `mpi`: 30s).
    #[arg(long, value_name = "DURATION")]
    pub max_time: Option<String>,
    /// Stop repeating a point once its median's 95% confidence interval is within this
    /// share of the median (default 5%; 0.1% at the finest).
    #[arg(long, value_name = "PERCENT")]
    pub precision: Option<String>,
}

impl BudgetArgs {
    /// Whether any budget flag was given.
    pub fn given(&self) -> bool {
        self.min_runs.is_some()
            || self.max_runs.is_some()
            || self.max_time.is_some()
            || self.precision.is_some()
    }
}

/// Where a measuring command's results go besides the text on stdout.
#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Print one JSON document instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also write the table as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Also draw a chart as SVG to FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Also write the tables as GitHub-flavoured Markdown to FILE (units in the headers,
    /// the spread beside each median, where and how it was measured).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Overwrite existing output files.
    #[arg(long)]
    pub force: bool,
    /// Print only the result and errors: no progress bar, no warnings.
    #[arg(short, long)]
    pub quiet: bool,
    /// Every detail in the text, the answer still last: `disk` adds its full table (MiB/s,
    /// every percentile, the queue kept), the device's view and a sentence per row on its
    /// queue; `sweep` each block size's call latency (p50, p99, p99.9, max) and every XOR
    /// read; `trace` every file in full (also those opened only to load the program or its
    /// locale) and every detail of the kernel's counters. --json has them all.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Whether sweep reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OpArg {
    /// Read FILE.
    Read,
    /// Write FILE (created; an existing one needs --force), fsync inside the timing.
    Write,
}

/// `--save-baseline`, `--baseline` and `--baseline-dir` (criterion's flags), on every
/// measuring command and the study.
#[derive(Debug, Clone, Default, Args)]
pub struct BaselineArgs {
    /// Keep this result as baseline NAME (letters, digits, `-_.`; an existing one of that
    /// name is never replaced: remove it or choose another name).
    #[arg(long, value_name = "NAME")]
    pub save_baseline: Option<String>,
    /// Measure, then compare every figure with baseline NAME: improved, regressed or within
    /// the noise measured now, and what changed in the environment. Exit 1 on a regression.
    #[arg(long, value_name = "NAME")]
    pub baseline: Option<String>,
    /// Measure again and add this moment's runs to baseline NAME (saved before with
    /// --save-baseline): a baseline over several moments (minutes, hours apart) carries
    /// the machine's own drift between them, and a later --baseline tells a change apart
    /// only from that drift. Cannot be given with --save-baseline.
    #[arg(long, value_name = "NAME", conflicts_with = "save_baseline")]
    pub add_to_baseline: Option<String>,
    /// Where baselines are kept (default: $XDG_DATA_HOME/ioscope/baselines, else
    /// ~/.local/share/ioscope/baselines).
    #[arg(long, value_name = "DIR")]
    pub baseline_dir: Option<PathBuf>,
    /// With a baseline flag: measure in N separate processes (this one and N-1 more, one
    /// after another), pooling each figure's runs, so that what sets one process apart
    /// (the CPU it ran on, its memory's layout) is inside the spread instead of between a
    /// baseline and its check. Each process makes the runs one would; 1 by default. From 4
    /// processes on both sides, the comparison's interval and noise are drawn over
    /// processes (each one's median counts once), not over runs.
    #[arg(long, value_name = "N")]
    pub processes: Option<usize>,
    /// Internal: this process is one of another's `--processes`: measure, print the
    /// figures as JSON, save and compare nothing.
    #[arg(long, hide = true)]
    pub baseline_part: bool,
}

/// `ioscope sweep FILE`
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The file to read, or to create with --op write.
    pub file: PathBuf,
    /// Read or write.
    #[arg(long, value_enum, default_value_t = OpArg::Read)]
    pub op: OpArg,
    /// Comma-separated block sizes (instead of --from/--to).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["from", "to"])]
    pub block_sizes: Option<String>,
    /// Smallest block size (powers of two from here).
    #[arg(long, default_value = "1", value_name = "SIZE")]
    pub from: String,
    /// Largest block size.
    #[arg(long, default_value = "64m", value_name = "SIZE")]
    pub to: String,
    /// Cache state of the timed runs.
    #[arg(long, value_enum, default_value_t = CacheChoice::Warm)]
    pub cache: CacheChoice,
    /// Timed runs per point.
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Untimed runs before the timed ones, per point.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub warmup: usize,
    /// At most this many calls per run: small blocks read a prefix (see --full).
    #[arg(long, default_value = "1m", value_name = "N")]
    pub max_calls: String,
    /// Read or write the whole size at every block size, however long it takes.
    #[arg(long)]
    pub full: bool,
    /// Bytes to write per run with --op write.
    #[arg(long, default_value = "64m", value_name = "SIZE")]
    pub size: String,
    /// Cold runs drop the whole page cache (root only) instead of evicting FILE.
    #[arg(long)]
    pub drop_caches: bool,
    /// Keep cold figures of a file that is partly unwritten extents or holes (zeros the
    /// file system makes up without the device): they are labelled "not the device", and
    /// the exit code no longer fails for them.
    #[arg(long)]
    pub allow_unwritten: bool,
    /// Free space to keep on the file system (--op write).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// Reads: the seed FILE was written with (as `run -w` and `sweep --op write` print
    /// it); every run's bytes are then verified in place after its timing.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Engine, threads and depth.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// `ioscope cache FILE`
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// The file to read.
    pub file: PathBuf,
    /// Comma-separated block sizes.
    #[arg(long, default_value = "1m", value_name = "LIST")]
    pub block_size: String,
    /// Cold runs drop the whole page cache (root only) instead of evicting FILE: `sync`,
    /// then `echo 3 > /proc/sys/vm/drop_caches`.
    ///
    /// What the kernel drops for each value written there (its
    /// Documentation/admin-guide/sysctl/vm.rst): 1, the page cache (the files' contents);
    /// 2, the reclaimable slab objects, dentries and inodes among them; 3, both. Only clean
    /// objects are dropped: a dirty page (written, not yet on the device) stays cached, so
    /// `sync` comes first, to write dirty pages back and let them be dropped too.
    #[arg(long)]
    pub drop_caches: bool,
    /// Keep cold figures of a file that is partly unwritten extents or holes (zeros the
    /// file system makes up without the device): they are labelled "not the device", and
    /// the exit code no longer fails for them.
    #[arg(long)]
    pub allow_unwritten: bool,
    /// Cycles of the three reads per block size: each read's figure is the median of its
    /// runs, with their spread.
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Engine, threads and depth.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
    /// Saving this result as a baseline, or comparing it with one.
    #[command(flatten)]
    pub baseline: BaselineArgs,
}

/// `ioscope syscalls FILE`
#[derive(Debug, Args)]
pub struct SyscallsArgs {
    /// The file to read (prefixes of it, one per size).
    pub file: PathBuf,
    /// Comma-separated sizes: how many bytes (and so calls) each measurement covers.
    #[arg(long, default_value = "1m,4m,8m,16m", value_name = "LIST")]
    pub sizes: String,
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
}

/// `ioscope trace [--json] -- CMD [ARGS...]`
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
    /// What records the calls: `kernel` (the kernel's tracepoints: the program runs
    /// unstopped; needs root or CAP_PERFMON) or `ptrace` (stops it at each counted call).
    /// By default the kernel's where it can run (or the one IOSCOPE_TRACE_ENGINE names), and
    /// ptrace where it cannot or where a flag only ptrace has is given; the choice and its
    /// reason are printed.
    #[arg(long, value_enum)]
    pub engine: Option<crate::trace::Engine>,
    /// Whether the traced program keeps its vDSO: `hide` (the default) makes its clock
    /// reads system calls the trace sees, to find the regions it timed (each read then
    /// costs a traced call; the kernel engine stops the program at each exec to hide it);
    /// `keep` leaves them fast and unseen.
    #[arg(long, value_enum)]
    pub vdso: Option<crate::trace::clock::Vdso>,
    /// Run the command once untraced first, its output kept aside, for its own wall time
    /// and figures beside the traced ones (it runs twice: what it writes is written twice).
    #[arg(long)]
    pub reference: bool,
    /// Stop the traced program only at the calls trace counts (the default where the kernel
    /// has seccomp): a seccomp-bpf filter in the kernel, as `strace --seccomp-bpf`, lets its
    /// other calls run at full speed. A filter cannot be removed, so when the command leaves
    /// processes running, ioscope stays behind them in the background (untraced, counting
    /// nothing) to let their calls through until they end.
    #[arg(long, conflicts_with = "every_call")]
    pub seccomp: bool,
    /// Stop the traced program at every system call (no seccomp filter): slower for a
    /// program that makes many other calls, but nothing stays behind when the command
    /// leaves processes running.
    #[arg(long)]
    pub every_call: bool,
    /// The command to trace and its arguments (put them after `--`).
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<std::ffi::OsString>,
}

/// `ioscope grade -- CMD [ARGS...]`
#[derive(Debug, Args)]
pub struct GradeArgs {
    /// Outputs.
    #[command(flatten)]
    pub export: ExportArgs,
    /// Runs of the program on each file.
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub runs: usize,
    /// How long one run may take on an empty file; a run on a file of S bytes gets one
    /// second more per 100 MiB of S. A run past it is killed (its whole process group).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub timeout: String,
    /// Also exactly 2 GiB and 4 GiB + 8 bytes (sparse: a few MiB of data where the bugs
    /// show, holes between).
    #[arg(long)]
    pub big: bool,
    /// Where to make the files (each removed after its runs).
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// The reader and its arguments (after `--`): `{}` stands for the file; without it the
    /// file goes last.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "CMD"
    )]
    pub command: Vec<std::ffi::OsString>,
}

/// `ioscope mpi write|read|both DIR` (run as `mpirun -np N ioscope mpi ...`)
#[derive(Debug, Args)]
pub struct MpiArgs {
    /// Timed phases: write (fsync included), read (of files written untimed first), or
    /// both, every repeat; or io500, an IO500-like preset (not the official score):
    /// ior-easy, ior-hard and small files, stonewalled writes, a geometric-mean summary.
    #[arg(value_enum)]
    pub phases: MpiWork,
    /// The directory for the files (on a shared file system, the same path on every host).
    pub dir: PathBuf,
    /// A file per rank (N-N), or one shared file with a segment per rank (N-1), its blocks
    /// interleaved (strided) or not (contiguous).
    #[arg(long, value_enum, default_value_t = Layout::FilePerRank)]
    pub layout: Layout,
    /// Bytes each rank writes and reads (a multiple of --block-size) [default: 64m]; io500:
    /// the most ior-easy (and ior-hard) bytes per rank when the stonewall does not stop it
    /// first [default: 1g].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Bytes per read()/write() call.
    #[arg(long, default_value = "1m", value_name = "SIZE")]
    pub block_size: String,
    /// Timed runs of each phase: repeated (a write and a read each time) until every
    /// phase's aggregate is stable, 3 to 10 times by default, or exactly --repeat N.
    #[command(flatten)]
    pub runs: RunsArgs,
    /// Cache state of the reads: cold evicts the reader's range and proves it by residency.
    #[arg(long, value_enum, default_value_t = CacheMode::Cold)]
    pub cache: CacheMode,
    /// Seed for the written data (default: a fresh one, chosen by rank 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep the files after a successful run (their names and the seed are printed).
    #[arg(long)]
    pub keep: bool,
    /// Repeats after the first overwrite the files in place (IOR's -E) instead of writing
    /// each repeat into emptied files (IOR's default).
    #[arg(long)]
    pub reuse_files: bool,
    /// `read` only: read back the files an earlier `--keep` left, named NAME (DIR/NAME-R
    /// per rank, DIR/NAME shared), without writing first; needs the --seed they were
    /// written with, and the same --layout, --size and number of ranks.
    #[arg(long, value_name = "NAME")]
    pub existing: Option<String>,
    /// Free space to keep on the file system (default: 10% of it or 1 GiB, the larger).
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// io500: seconds after which each write or create phase stops issuing new work (then
    /// every rank completes to the largest count any rank reached).
    #[arg(long, default_value = "5s", value_name = "DURATION")]
    pub stonewall: String,
    /// io500: the most small files each rank creates when the stonewall does not stop it.
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    pub files: u64,
    /// Print one JSON document instead of the table (rank 0).
    #[arg(long)]
    pub json: bool,
}

/// What `mpi` runs: timed phases of one layout, or the IO500-like preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum MpiWork {
    /// Timed writes (fsync included).
    Write,
    /// Timed reads of files written (untimed) first.
    Read,
    /// Timed writes, then timed reads, every repeat.
    Both,
    /// The IO500-like preset: ior-easy, ior-hard, small files; not the official score.
    Io500,
}

impl MpiWork {
    /// The timed phases, or `None` for the io500 preset.
    pub fn phases(self) -> Option<Phases> {
        match self {
            MpiWork::Write => Some(Phases::Write),
            MpiWork::Read => Some(Phases::Read),
            MpiWork::Both => Some(Phases::Both),
            MpiWork::Io500 => None,
        }
    }
}

/// `ioscope report RESULT...`
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A saved JSON document (any command's `--json`), or a study's result directory; two or
    /// more studies are put side by side in one HTML page.
    #[arg(required = true, num_args = 1..)]
    pub results: Vec<PathBuf>,
    /// The HTML page to write (a study: its report; several studies: the comparison, with
    /// its figures in FILE's name .json and .csv beside it).
    #[arg(long, short = 'o', value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Rename a study on the page: KEY=NAME, KEY its position (1, 2…) or the argument as
    /// given (repeatable; default: its `study --label`, else "ext4 on vda", "tmpfs"…).
    #[arg(long, value_name = "KEY=NAME", conflicts_with = "labels")]
    pub label: Vec<String>,
    /// Name every study on the page, in order, comma-separated (an empty item keeps that
    /// study's own name).
    #[arg(long, value_name = "N1,N2,...")]
    pub labels: Option<String>,
    /// Outputs (`--json` prints the document again).
    #[command(flatten)]
    pub export: ExportArgs,
}

impl Command {
    /// Whether `-q/--quiet` was given: no progress bar and no warnings, only the result and
    /// errors.
    pub fn quiet(&self) -> bool {
        match self {
            Command::Calibrate(a) => a.quiet,
            Command::Run(a) => a.quiet,
            Command::Study(a) => a.quiet,
            Command::Compare(CompareArgs { export, .. })
            | Command::Sweep(SweepArgs { export, .. })
            | Command::Cache(CacheArgs { export, .. })
            | Command::Syscalls(SyscallsArgs { export, .. })
            | Command::Patterns(PatternsArgs { export, .. })
            | Command::Disk(DiskArgs { export, .. })
            | Command::Trace(TraceArgs { export, .. })
            | Command::Grade(GradeArgs { export, .. })
            | Command::Transfer(TransferArgs { export, .. })
            | Command::Report(ReportArgs { export, .. }) => export.quiet,
            _ => false,
        }
    }
}

impl Cli {
    /// Parses the command line. `ioscope fast FILE` alone is recognised without building
    /// clap's parser: it is the headline job, and on small files process start-up is most of
    /// its time. Anything else (flags, help, errors) goes through clap as usual.
    pub fn parse_args() -> Self {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if let [_, command, calls] = args.as_slice()
            && command == "__syscall-loop"
            && let Some(calls) = calls.to_str().and_then(|c| c.parse().ok())
        {
            return Self {
                command: Command::SyscallLoop { calls },
                meter: None,
                no_latency: false,
                wide: false,
            };
        }
        if let [_, command, to, channel] = args.as_slice()
            && command == "__tee"
            && let Some(to) = to.to_str().and_then(|t| t.parse().ok())
            && let Some(channel) = channel.to_str().and_then(|c| c.parse().ok())
        {
            return Self {
                command: Command::Tee { to, channel },
                meter: None,
                no_latency: false,
                wide: false,
            };
        }
        if let Some(cli) = Self::fast_alone(&args) {
            return cli;
        }
        // clap colours help and errors only on a terminal; NO_COLOR (https://no-color.org:
        // set and not empty) turns that off too.
        let color = match std::env::var_os("NO_COLOR") {
            Some(v) if !v.is_empty() => ColorChoice::Never,
            _ => ColorChoice::Auto,
        };
        let matches = Self::command().color(color).get_matches_from(args);
        Self::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
    }

    /// `ioscope fast FILE` alone, built by hand as clap would build it; `None` for anything
    /// else.
    fn fast_alone(args: &[std::ffi::OsString]) -> Option<Self> {
        let [_, command, file] = args else {
            return None;
        };
        let plain = file == "-" || !file.as_encoded_bytes().starts_with(b"-");
        (command == "fast" && plain).then(|| Self {
            command: Command::Fast(FastArgs {
                file: PathBuf::from(file),
                engine: None,
                threads: None,
                block_size: None,
                depth: None,
                repeat: None,
                allow_device: false,
                verbose: false,
                json: false,
                markdown: None,
                force: false,
                baseline: BaselineArgs::default(),
            }),
            meter: None,
            no_latency: false,
            wide: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<std::ffi::OsString> {
        args.iter().map(Into::into).collect()
    }

    #[test]
    fn the_hand_built_fast_file_equals_what_clap_parses() {
        for file in ["big", "-", "a b", "./-x"] {
            let args = argv(&["ioscope", "fast", file]);
            let by_hand = Cli::fast_alone(&args).expect("fast FILE alone is built by hand");
            let by_clap = Cli::try_parse_from(&args).expect("clap parses fast FILE");
            assert_eq!(
                format!("{by_hand:?}"),
                format!("{by_clap:?}"),
                "fast {file}"
            );
        }
    }

    #[test]
    fn anything_more_than_fast_file_goes_through_clap() {
        for args in [
            &["ioscope", "fast", "--json"][..],
            &["ioscope", "fast", "-v"],
            &["ioscope", "fast", "big", "--json"],
            &["ioscope", "run", "big"],
            &["ioscope", "fast"],
        ] {
            assert!(Cli::fast_alone(&argv(args)).is_none(), "{args:?}");
        }
    }
}
