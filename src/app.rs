//! Dispatch: each subcommand's arguments become options, the command runs on the real
//! meter with a progress bar, and its typed result goes to the one exporter
//! ([`report::outputs::finish`]: files reserved before measuring, rewritten after every
//! point, the text or JSON printed, and the exit said: 130 when interrupted, after printing
//! what was measured; 1 when a check failed; 0 otherwise). A measuring command asked for
//! `--json` prints one JSON document however early it is interrupted (`"complete": false`).
//! `report` reads saved results back (`cmd::report`) and renders them through the registry
//! of results (`report::views::RESULTS`).

use crate::cli::{Cli, Command, ReceiveArgs, ReportArgs, SendArgs, TraceArgs, TransferArgs};
use crate::cmd;
use crate::error::ExitKind;
use crate::harness::Harness;
use crate::options::{
    BaselineOptions, CacheOptions, CalibrateOptions, CompareOptions, ExportOptions, FastOptions,
    PatternsOptions, RunOptions, StudyOptions, SweepOptions, SyscallsOptions,
};
use crate::report::baseline::Pending;
use crate::report::json::Provenance;
use crate::report::outputs::{Exports, compared, finish, finish_against, finish_compared, save};
use crate::report::progress::Bar;
use crate::report::view::Exportable;
use crate::report::views::over_time::{self, SeriesFiles};
use crate::report::{self, json};
use crate::results::figures::Figures;
use anyhow::Result;
use std::path::{Path, PathBuf};

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitKind> {
    // A dozen sigaction calls: cheap enough even for `fast` on a small file (main installs
    // the handler before parsing; this is for callers that skip main).
    crate::interrupt::install();
    let json = json_command(&cli.command);
    match dispatch(cli) {
        Err(e)
            if crate::error::exit_kind(&e) == ExitKind::Interrupted
                && !report::emitted()
                && json.is_some() =>
        {
            let (command, path) = json.expect("matched as Some");
            // Interrupted before it had a result of its own (while opening its file, say):
            // the head every document has (schema, version, command line, environment).
            let mut unmeasured = serde_json::json!({
                "complete": false,
                "warnings": [crate::warning::Warning::Partial],
            });
            // A run with `--series` keeps the intervals it measured.
            if let Some(so_far) = e.downcast_ref::<cmd::run::SeriesSoFar>() {
                unmeasured["over_time"] = serde_json::to_value(&so_far.over_time)?;
            }
            report::emit(&json::document(
                command,
                &unmeasured,
                &Provenance::here(&path),
            ))?;
            Ok(ExitKind::Interrupted)
        }
        other => other,
    }
}

/// The schema name and the measured path of a measuring command given `--json`.
fn json_command(command: &Command) -> Option<(&'static str, PathBuf)> {
    let (name, json, path) = match command {
        Command::Run(a) => ("run", a.json, a.file.clone()),
        Command::Calibrate(a) => ("calibrate", a.json, a.file.clone()),
        Command::Fast(a) => ("fast", a.json, a.file.clone()),
        Command::Compare(a) => ("compare", a.export.json, a.file.clone()),
        Command::Sweep(a) => ("sweep", a.export.json, a.file.clone()),
        Command::Cache(a) => ("cache", a.export.json, a.file.clone()),
        Command::Syscalls(a) => ("syscalls", a.export.json, a.file.clone()),
        Command::Patterns(a) => ("patterns", a.export.json, a.path.clone()),
        Command::Disk(a) => (
            crate::options::disk::schema_command(a),
            a.export.json,
            a.path.clone().unwrap_or_else(|| PathBuf::from(".")),
        ),
        Command::Study(a) => (
            "study",
            a.json,
            a.dir.clone().unwrap_or_else(|| PathBuf::from(".")),
        ),
        _ => return None,
    };
    json.then_some((name, path))
}

/// Runs one subcommand.
fn dispatch(cli: Cli) -> Result<ExitKind> {
    let quiet = cli.command.quiet();
    report::set_quiet(quiet);
    report::terminal::set_wide(cli.wide);
    let bar = if quiet { Bar::hidden() } else { Bar::new() };
    let harness = Harness {
        meter: crate::options::meter(cli.meter.as_deref(), cli.no_latency),
        progress: &bar,
    };
    let h = &harness;
    match cli.command {
        Command::Run(args) => {
            let o = RunOptions::from_args(&args)?;
            let export = ExportOptions {
                quiet,
                ..ExportOptions::json_only(o.json)
            };
            let baselines = pending("run", &args.baseline, "run")?;
            let series = SeriesFiles::reserve(o.series.as_ref(), &export, &[&o.path], "run")?;
            let result = measured_against(&export, &o.path, &baselines, |_| {
                let r = cmd::run::execute_repeated(&o, h)?;
                if let Some(files) = &series {
                    files.write(&over_time::run_panels(&r))?;
                }
                Ok(r)
            });
            // Interrupted: the intervals measured so far are kept, as `disk` keeps its rows.
            if let (Err(e), Some(files)) = (&result, &series)
                && let Some(so_far) = e.downcast_ref::<cmd::run::SeriesSoFar>()
            {
                files.write(&[(so_far.label.clone(), Vec::new(), &so_far.over_time)])?;
            }
            result
        }
        Command::Calibrate(args) => {
            let o = CalibrateOptions::from_args(&args)?;
            let export = ExportOptions::json_only(o.json);
            measured(&export, &o.path, |_| cmd::calibrate::execute(&o, h))
        }
        Command::Fast(args) => {
            let o = FastOptions::from_args(&args)?;
            let baselines = pending("fast", &args.baseline, "fast")?;
            measured_against(&o.export, &o.path, &baselines, |_| fast(&o))
        }
        Command::Compare(args) => {
            let o = CompareOptions::from_args(&args)?;
            let baselines = pending("compare", &args.baseline, "compare")?;
            measured_against(&o.export, &o.path, &baselines, |s| {
                cmd::compare::execute(&o, h, s)
            })
        }
        Command::Sweep(args) => {
            let o = SweepOptions::from_args(&args)?;
            let baselines = pending("sweep", &args.baseline, "sweep")?;
            measured_against(&o.export, &o.path, &baselines, |s| {
                cmd::sweep::execute(&o, h, s)
            })
        }
        Command::Cache(args) => {
            let o = CacheOptions::from_args(&args)?;
            let baselines = pending("cache", &args.baseline, "cache")?;
            measured_against(&o.export, &o.path, &baselines, |s| {
                cmd::coldwarm::execute(&o, h, s)
            })
        }
        Command::Syscalls(args) => {
            let o = SyscallsOptions::from_args(&args)?;
            measured(&o.export, &o.path, |_| cmd::syscalls::execute(&o, h))
        }
        Command::Patterns(args) => {
            let o = PatternsOptions::from_args(&args)?;
            measured(&o.export, &o.path, |s| cmd::patterns::execute(&o, h, s))
        }
        Command::Disk(args) if args.more.list => printed(&report::views::disk_presets::list(
            crate::workload::panel::cores(),
        )),
        Command::Disk(args) => {
            use crate::options::disk::DiskMode;
            let o = crate::options::DiskOptions::from_args(&args)?;
            // The panel, the depth curve and the fsync preset keep baselines apart
            // (`disk-NAME.json`, `disk-curve-NAME.json`, `disk-fsync-NAME.json`, `disk-sync-methods-NAME.json`): their
            // figures are of different things.
            let baselines = pending(
                crate::options::disk::schema_command(&args),
                &args.baseline,
                "disk",
            )?;
            match &o.mode {
                DiskMode::Panel => {
                    let series =
                        SeriesFiles::reserve(o.series.as_ref(), &o.export, &[&o.path], "disk")?;
                    measured_against(&o.export, &o.path, &baselines, |s| {
                        cmd::disk::execute(&o, h, &mut |r| {
                            s(r)?;
                            match &series {
                                Some(files) => files.write(&over_time::disk_panels(r)),
                                None => Ok(()),
                            }
                        })
                    })
                }
                DiskMode::Curve(c) => measured_against(&o.export, &o.path, &baselines, |s| {
                    cmd::disk_curve::execute(&o, c, h, s)
                }),
                DiskMode::Rates(r) => measured_against(&o.export, &o.path, &baselines, |s| {
                    cmd::disk_rates::execute(&o, r, h, s)
                }),
                DiskMode::Fsync(f) => measured_against(&o.export, &o.path, &baselines, |_| {
                    cmd::disk_fsync::execute(&o, f, h)
                }),
                DiskMode::SyncMethods(m) => {
                    measured_against(&o.export, &o.path, &baselines, |_| {
                        cmd::disk_sync_methods::execute(&o, m, h)
                    })
                }
            }
        }
        Command::Study(args) => study(
            &StudyOptions::from_args(&args)?,
            &pending("study", &args.baseline, "study")?,
            quiet,
        ),
        Command::Trace(args) => trace(&args),
        Command::Grade(args) => grade(&args, &bar),
        Command::Send(args) => send(&args),
        Command::Receive(args) => receive(&args),
        Command::Transfer(args) => transfer(&args),
        Command::Mpi(args) => mpi(&args),
        Command::Report(args) => report_command(&args),
        Command::Completions { shell } => printed(&report::manual::completions(shell)),
        Command::Man { subcommand } => printed(&report::manual::man(subcommand.as_deref())?),
        Command::Tee { to, channel } => {
            crate::trace::tee::forward(to, channel);
            Ok(ExitKind::Success)
        }
        Command::SyscallLoop { calls } => {
            printed(&format!("{}\n", cmd::trace::syscall_loop(calls)))
        }
    }
}

/// A measuring command: its output files reserved before anything is measured (none may
/// be `path`, what it measures), rewritten after every point `execute` hands to `save`,
/// then the result printed.
fn measured<T: Exportable + Figures>(
    export: &ExportOptions,
    path: &Path,
    execute: impl FnOnce(&mut dyn FnMut(&T) -> Result<()>) -> Result<T>,
) -> Result<ExitKind> {
    measured_against(export, path, &Pending::default(), execute)
}

/// As [`measured`], with the baseline to compare with read and the name to save under
/// checked before anything is measured (`pending`).
fn measured_against<T: Exportable + Figures>(
    export: &ExportOptions,
    path: &Path,
    pending: &Pending,
    execute: impl FnOnce(&mut dyn FnMut(&T) -> Result<()>) -> Result<T>,
) -> Result<ExitKind> {
    if pending.is_part() {
        // One of another's --processes: its figures, for that one to pool.
        let result = execute(&mut |_| Ok(()))?;
        let figures = serde_json::to_string(&result.figures())?;
        return printed(&format!("{figures}\n"));
    }
    let out = Exports::reserve::<T>(export, &[path])?;
    let result = execute(&mut |r| save(r, &out, path))?;
    pending.measure_others()?;
    finish_against(&result, export, &out, path, pending)
}

/// The baselines of `command` (`--save-baseline`, `--baseline`), settled before measuring.
fn pending(command: &'static str, args: &crate::cli::BaselineArgs, what: &str) -> Result<Pending> {
    let options = BaselineOptions::from_args(args, what)?;
    if command == "study" && (options.processes > 1 || options.part) {
        return Err(crate::error::input(
            "study: --processes is for run, sweep, cache, fast, compare and disk; a study's parts repeat their own runs",
        ));
    }
    Pending::before(command, &options)
}

/// Text printed on stdout, and nothing else to do.
fn printed(text: &str) -> Result<ExitKind> {
    report::emit(text).map(|()| ExitKind::Success)
}

/// `fast`: the checksum, and with `--verbose` how it was read (on stderr).
fn fast(options: &FastOptions) -> Result<cmd::fast::FastReport> {
    let result = cmd::fast::execute_repeated(options)?;
    if options.verbose {
        report::note(&report::views::fast::fast_details(&result));
    }
    Ok(result)
}

/// `trace`: the traced command's I/O, then its own exit status: its exit code, or 128 +
/// the signal that killed it.
fn trace(args: &TraceArgs) -> Result<ExitKind> {
    let export = ExportOptions::from_args(&args.export, "trace")?;
    let out = Exports::reserve::<cmd::trace::TraceReport>(&export, &[])?;
    let ptrace_only = if args.every_call {
        Some("--every-call")
    } else if args.seccomp {
        Some("--seccomp")
    } else {
        None
    };
    let preferred = std::env::var_os(crate::trace::ENGINE_VARIABLE);
    let chosen = crate::trace::choose(args.engine, preferred.as_deref(), ptrace_only)?;
    let vdso = args.vdso.unwrap_or_default();
    // Either engine may use a seccomp filter (ptrace's on the counted calls, the kernel
    // engine's on the opens alone); it needs a keeper for what the command may leave
    // running: the process the shell waits for splits off the tracer now, before any
    // thread exists.
    crate::trace::filter::ask(!args.every_call);
    if crate::trace::filter::refusal().is_none() {
        crate::trace::keeper::split();
    }
    let result = cmd::trace::execute(&args.command, export.json, vdso, chosen, args.reference)?;
    finish(&result, &export, &out, Path::new("."))?;
    if !result.complete {
        return Ok(ExitKind::Interrupted);
    }
    Ok(ExitKind::Child(match (result.exit_code, result.signal) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => (128 + signal) as u8,
        (None, None) => 1,
    }))
}

/// `grade`: the battery made and graded one size at a time, the outputs rewritten after
/// each; exit 1 unless every size is correct.
fn grade(args: &crate::cli::GradeArgs, bar: &Bar) -> Result<ExitKind> {
    let o = crate::options::grade::GradeOptions::from_args(args)?;
    let export = ExportOptions::from_args(&args.export, "grade")?;
    let out = Exports::reserve::<cmd::grade::GradeReport>(&export, &[])?;
    let result = cmd::grade::execute(&o, bar, &mut |r| save(r, &out, &o.dir))?;
    finish(&result, &export, &out, &o.dir)
}

/// `send`: what was sent, as text or one JSON document.
fn send(args: &SendArgs) -> Result<ExitKind> {
    let options = crate::options::SendOptions::from_args(args)?;
    let result = cmd::transfer::send(&options)?;
    if options.json {
        return printed(&json::document(
            "send",
            &result,
            &Provenance::here(Path::new(".")),
        ));
    }
    let kind = printed(&report::views::transfer::sent(&result))?;
    for w in &result.warnings {
        report::warn(&report::text::warning(w));
    }
    Ok(kind)
}

/// `receive`: each session as it ends; a failed one is said and the next awaited, and the
/// exit is 1 if any failed.
fn receive(args: &ReceiveArgs) -> Result<ExitKind> {
    let options = crate::options::ReceiveOptions::from_args(args)?;
    let mut failed = false;
    let announce = report::views::transfer::Announce;
    cmd::transfer::receive(&options, &announce, &mut |outcome| {
        match outcome {
            Ok(session) if options.json => report::emit(&json::document(
                "receive",
                &session,
                &Provenance::here(&options.receiving.dir),
            ))?,
            Ok(session) => report::emit(&report::views::transfer::received(
                &session,
                options.receiving.sync,
            ))?,
            Err(e) if crate::error::exit_kind(&e) == ExitKind::Interrupted => return Err(e),
            Err(e) => {
                failed = true;
                // One `error:` line, escaped (it may carry a name the sender chose).
                report::error(&e);
            }
        }
        Ok(())
    })?;
    Ok(if failed {
        ExitKind::Failed
    } else {
        ExitKind::Success
    })
}

/// `transfer`: every method between two places; the files rewritten after each.
fn transfer(args: &TransferArgs) -> Result<ExitKind> {
    let options = crate::options::TransferOptions::from_args(args)?;
    let export = ExportOptions::from_args(&args.export, "transfer")?;
    let out = Exports::reserve::<cmd::transfer::TransferReport>(&export, &[])?;
    let result = cmd::transfer::execute(&options, &mut |r| save(r, &out, &options.to))?;
    finish(&result, &export, &out, &options.to)
}

/// The line `ioscope mpi` prints in a build without the `mpi` feature.
pub const MPI_BUILD_HINT: &str = "mpi: this ioscope was built without MPI; build it with `cargo build --release --features mpi` (needs OpenMPI: apt-get install openmpi-bin libopenmpi-dev libclang-dev) and run it as `mpirun -np N ioscope mpi ...`";

/// `mpi` without the feature: the one line saying how to get it.
#[cfg(not(feature = "mpi"))]
fn mpi(_args: &crate::cli::MpiArgs) -> Result<ExitKind> {
    Err(crate::error::input(MPI_BUILD_HINT))
}

/// `mpi`: every rank runs the command; rank 0 alone prints. Before any work the ranks
/// check that they were given the same command and options (one line and exit 2 on every
/// rank when not). A step that failed on any rank stops every rank with the same exit
/// code, rank 0 printing one line per failed rank.
#[cfg(feature = "mpi")]
fn mpi(args: &crate::cli::MpiArgs) -> Result<ExitKind> {
    use crate::cmd::mpi::Comm;
    use crate::cmd::mpi::must_match::{MustMatch, Offer, settle};
    let world = crate::cmd::mpi_world::World::init()
        .ok_or_else(|| anyhow::anyhow!("mpi: MPI was initialised already"))?;
    let root = world.rank() == 0;
    enum Parsed {
        Ior(crate::options::MpiOptions),
        Io500(crate::options::Io500Options),
    }
    let parsed = if args.phases == crate::cli::MpiWork::Io500 {
        crate::options::Io500Options::from_args(args).map(Parsed::Io500)
    } else {
        crate::options::MpiOptions::from_args(args).map(Parsed::Ior)
    };
    let offer = match &parsed {
        Ok(Parsed::Ior(o)) => Offer::Terms(MustMatch::of_ior(o)),
        Ok(Parsed::Io500(o)) => Offer::Terms(MustMatch::of_io500(o)),
        Err(e) => Offer::Refused(format!("{e:#}")),
    };
    // The first collective of every rank, whatever it was given: no rank can wait in
    // another one for a rank that was told something else.
    if let Err(e) = settle(&world, &offer) {
        return ranks_failed(e);
    }
    let which = match &parsed {
        Ok(Parsed::Io500(_)) => "mpi io500",
        _ => "mpi",
    };
    if root && !world.launched() {
        report::note(&format!(
            "note: not started by mpirun: running as a single rank (start N ranks with `mpirun -np N ioscope {which} ...`)\n",
        ));
    }
    let progress = crate::harness::NoProgress;
    let harness = Harness::system(&progress);
    match parsed.expect("every rank's options were accepted") {
        Parsed::Ior(o) => mpi_finish(
            cmd::mpi::execute(&o, &world, &harness),
            o.json,
            &o.dir,
            // A phase that failed after others' results: its ranks' errors, as without them.
            |r| {
                r.failed
                    .iter()
                    .flat_map(|f| &f.errors)
                    .for_each(|l| report::error_line(l))
            },
        ),
        Parsed::Io500(o) => mpi_finish(
            cmd::mpi::io500::execute(&o, &world, &harness),
            o.json,
            &o.dir,
            |_| {},
        ),
    }
}

/// What rank 0 prints of an MPI command's outcome (`Some` only there), then `after` it;
/// a collective failure is printed by [`ranks_failed`].
#[cfg(feature = "mpi")]
fn mpi_finish<R: Exportable>(
    outcome: Result<Option<R>>,
    json: bool,
    dir: &Path,
    after: impl FnOnce(&R),
) -> Result<ExitKind> {
    match outcome {
        Ok(Some(result)) => {
            let kind = finish(
                &result,
                &ExportOptions::json_only(json),
                &Exports::default(),
                dir,
            );
            after(&result);
            kind
        }
        Ok(None) => Ok(ExitKind::Success),
        Err(e) => ranks_failed(e),
    }
}

/// A collective failure: rank 0 prints its lines; every rank exits with its kind.
#[cfg(feature = "mpi")]
fn ranks_failed(e: anyhow::Error) -> Result<ExitKind> {
    match e.downcast_ref::<crate::cmd::mpi::RanksFailed>() {
        Some(failed) => {
            for line in &failed.lines {
                report::error_line(line);
            }
            Ok(failed.kind)
        }
        None => Err(e),
    }
}

/// `study`: the report directory is made first (a bad --out fails before anything is
/// measured), rewritten after every part, and named at the end.
fn study(options: &StudyOptions, baselines: &Pending, quiet: bool) -> Result<ExitKind> {
    let out =
        crate::report::results::ResultDir::create(options.out.as_deref(), options.export.force)?;
    let bar = if quiet {
        crate::report::progress::StudyBar::hidden()
    } else {
        crate::report::progress::StudyBar::new()
    };
    let harness = Harness::system(&bar);
    let result = cmd::study::execute(options, &harness, &bar, &mut |r| out.save(r));
    drop(bar);
    let result = match result {
        Ok(r) => r,
        Err(e) => {
            // Nothing was measured: an empty report directory would only mislead.
            out.discard();
            return Err(e);
        }
    };
    let dir = Path::new(&result.dir).to_path_buf();
    let exports = Exports::default();
    // The comparison goes into the report directory's page, Markdown and study.json too.
    let against = compared(&result, &exports, &dir, baselines);
    if against.is_some() {
        out.save_against(&result, against.as_ref())?;
    }
    let kind = finish_compared(
        &result,
        &options.export,
        &exports,
        &dir,
        baselines,
        against.as_ref(),
    )?;
    report::note(&format!(
        "report: {}\n",
        crate::text::printable_path(&out.html())
    ));
    Ok(kind)
}

/// `report`: one saved result rendered again, or studies on one HTML page.
fn report_command(args: &ReportArgs) -> Result<ExitKind> {
    let export = ExportOptions::from_args(&args.export, "report")?;
    let names = cmd::report::Names {
        label: args.label.clone(),
        labels: args.labels.clone(),
    };
    let request = cmd::report::execute(&args.results, args.output.as_deref(), export, &names)?;
    report::views::report::render(request)
}
