//! Dispatch: one function per subcommand turns arguments into options, runs the command on
//! the real meter with a progress bar, and hands the typed result to the one exporter. The
//! exit policy lives here, once: 130 when interrupted (after printing what was measured),
//! 1 when a check failed, 0 otherwise. A measuring command asked for `--json` prints one
//! JSON document however early it is interrupted (`"complete": false`).

use crate::cli::{Cli, Command, ExportArgs};
use crate::cmd;
use crate::cmd::harness::Harness;
use crate::error::ExitKind;
use crate::options::{
    CacheOptions, CalibrateOptions, CompareOptions, ExportOptions, FastOptions, PatternsOptions,
    RunOptions, StudyOptions, SweepOptions, SyscallsOptions,
};
use crate::report::json::Provenance;
use crate::report::outputs::Outputs;
use crate::report::progress::Bar;
use crate::report::view::Exportable;
use crate::report::{self, json, text};
use anyhow::{Context, Result};
use std::cell::OnceCell;
use std::path::Path;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitKind> {
    // Four sigaction calls: cheap enough even for `fast` on a small file (main installs the
    // handler before parsing; this is for callers that skip main).
    crate::interrupt::install();
    let json = json_command(&cli.command);
    match dispatch(cli) {
        Err(e)
            if crate::error::exit_kind(&e) == ExitKind::Interrupted
                && !report::emitted()
                && json.is_some() =>
        {
            let (command, path) = json.expect("matched as Some");
            report::emit(&json::document(
                command,
                &Unmeasured::default(),
                &Provenance::here(&path),
            ))?;
            Ok(ExitKind::Interrupted)
        }
        other => other,
    }
}

/// What a measuring command's JSON document holds when it was interrupted before it had a
/// result of its own (while opening its file, say): the head every document has (schema,
/// version, command line, environment), then this.
#[derive(serde::Serialize)]
struct Unmeasured {
    complete: bool,
    warnings: Vec<crate::cmd::warning::Warning>,
}

impl Default for Unmeasured {
    fn default() -> Self {
        Self {
            complete: false,
            warnings: vec![crate::cmd::warning::Warning::Partial],
        }
    }
}

/// The schema name and the measured path of a measuring command given `--json`.
fn json_command(command: &Command) -> Option<(&'static str, std::path::PathBuf)> {
    let (name, json, path) = match command {
        Command::Run(a) => ("run", a.json, a.file.clone()),
        Command::Calibrate(a) => ("calibrate", a.json, a.file.clone()),
        Command::Fast(a) => ("fast", a.json, a.file.clone()),
        Command::Compare(a) => ("compare", a.export.json, a.file.clone()),
        Command::Sweep(a) => ("sweep", a.export.json, a.file.clone()),
        Command::Cache(a) => ("cache", a.export.json, a.file.clone()),
        Command::Syscalls(a) => ("syscalls", a.export.json, a.file.clone()),
        Command::Patterns(a) => ("patterns", a.export.json, a.path.clone()),
        Command::Study(a) => (
            "study",
            a.json,
            a.dir
                .clone()
                .unwrap_or_else(|| std::path::PathBuf::from(".")),
        ),
        _ => return None,
    };
    json.then_some((name, path))
}

/// Runs one subcommand.
fn dispatch(cli: Cli) -> Result<ExitKind> {
    let quiet = cli.command.quiet();
    report::set_quiet(quiet);
    let bar = if quiet { Bar::hidden() } else { Bar::new() };
    let harness = Harness::system(&bar);
    match cli.command {
        Command::Run(args) => {
            let options = RunOptions::from_args(&args)?;
            let result = cmd::run::execute(&options, &harness)?;
            let export = ExportOptions::json_only(options.json);
            finish(&result, &export, &Exports::default(), &options.path)
        }
        Command::Calibrate(args) => {
            let options = CalibrateOptions::from_args(&args)?;
            let result = cmd::calibrate::execute(&options, &harness)?;
            let export = ExportOptions::json_only(options.json);
            finish(&result, &export, &Exports::default(), &options.path)
        }
        Command::Fast(args) => {
            let options = FastOptions::from_args(&args)?;
            let export = &options.export;
            let out = reserve::<cmd::fast::FastReport>(export, &[&options.path])?;
            let result = cmd::fast::execute(&options)?;
            if options.verbose {
                report::note(&crate::report::views::fast::fast_details(&result));
            }
            finish(&result, export, &out, &options.path)
        }
        Command::Compare(args) => {
            let options = CompareOptions::from_args(&args)?;
            let (export, path) = (&options.export, options.path.as_path());
            let out = reserve::<cmd::compare::CompareReport>(export, &[path])?;
            let result = cmd::compare::execute(&options, &harness, &mut |r| save(r, &out, path))?;
            finish(&result, export, &out, path)
        }
        Command::Sweep(args) => {
            let options = SweepOptions::from_args(&args)?;
            let (export, path) = (&options.export, options.path.as_path());
            let out = reserve::<cmd::sweep::SweepReport>(export, &[path])?;
            let result = cmd::sweep::execute(&options, &harness, &mut |r| save(r, &out, path))?;
            finish(&result, export, &out, path)
        }
        Command::Cache(args) => {
            let options = CacheOptions::from_args(&args)?;
            let (export, path) = (&options.export, options.path.as_path());
            let out = reserve::<cmd::coldwarm::CacheReport>(export, &[path])?;
            let result = cmd::coldwarm::execute(&options, &harness, &mut |r| save(r, &out, path))?;
            finish(&result, export, &out, path)
        }
        Command::Syscalls(args) => {
            let options = SyscallsOptions::from_args(&args)?;
            let export = &options.export;
            let out = reserve::<cmd::syscalls::SyscallsReport>(export, &[&options.path])?;
            let result = cmd::syscalls::execute(&options, &harness)?;
            finish(&result, export, &out, &options.path)
        }
        Command::Study(args) => {
            let options = StudyOptions::from_args(&args)?;
            study(&options, quiet)
        }
        Command::Patterns(args) => {
            let options = PatternsOptions::from_args(&args)?;
            let (export, path) = (&options.export, options.path.as_path());
            let out = reserve::<cmd::patterns::PatternsReport>(export, &[path])?;
            let result = cmd::patterns::execute(&options, &harness, &mut |r| save(r, &out, path))?;
            finish(&result, export, &out, path)
        }
        Command::Trace(args) => {
            let export = ExportOptions::from_args(&args.export, "trace")?;
            let out = reserve::<cmd::trace::TraceReport>(&export, &[])?;
            let result = cmd::trace::execute(&args.command, export.json)?;
            finish(&result, &export, &out, Path::new("."))?;
            if !result.complete {
                return Ok(ExitKind::Interrupted);
            }
            // The command's own status: its exit code, or 128 + the signal that killed it.
            Ok(ExitKind::Child(match (result.exit_code, result.signal) {
                (Some(code), _) => code as u8,
                (None, Some(signal)) => (128 + signal) as u8,
                (None, None) => 1,
            }))
        }
        Command::Send(args) => {
            let options = crate::options::SendOptions::from_args(&args)?;
            let result = cmd::transfer::send(&options)?;
            if options.json {
                report::emit(&json::document(
                    "send",
                    &result,
                    &Provenance::here(Path::new(".")),
                ))?;
            } else {
                report::emit(&crate::report::views::transfer::sent(&result))?;
                for w in &result.warnings {
                    report::warn(&text::warning(w));
                }
            }
            Ok(ExitKind::Success)
        }
        Command::Receive(args) => {
            let options = crate::options::ReceiveOptions::from_args(&args)?;
            let mut failed = false;
            let announce = crate::report::views::transfer::Announce;
            cmd::transfer::receive(&options, &announce, &mut |outcome| {
                match outcome {
                    Ok(session) if options.json => report::emit(&json::document(
                        "receive",
                        &session,
                        &Provenance::here(&options.receiving.dir),
                    ))?,
                    Ok(session) => report::emit(&crate::report::views::transfer::received(
                        &session,
                        options.receiving.sync,
                    ))?,
                    Err(e) if crate::error::exit_kind(&e) == ExitKind::Interrupted => {
                        return Err(e);
                    }
                    Err(e) => {
                        failed = true;
                        // The error may carry a name the sender chose.
                        report::warn(&format!(
                            "error: {}",
                            crate::text::printable(&format!("{e:#}"))
                        ));
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
        Command::Transfer(args) => {
            let options = crate::options::TransferOptions::from_args(&args)?;
            let export = ExportOptions::from_args(&args.export, "transfer")?;
            let out = reserve::<cmd::transfer::TransferReport>(&export, &[])?;
            let result = cmd::transfer::execute(&options, &mut |r| save(r, &out, &options.to))?;
            finish(&result, &export, &out, &options.to)
        }
        Command::Completions { shell } => {
            report::emit(&report::manual::completions(shell))?;
            Ok(ExitKind::Success)
        }
        Command::Man { subcommand } => {
            report::emit(&report::manual::man(subcommand.as_deref())?)?;
            Ok(ExitKind::Success)
        }
        Command::Tee { to, channel } => {
            crate::trace::tee::forward(to, channel);
            Ok(ExitKind::Success)
        }
        Command::SyscallLoop { calls } => {
            report::emit(&format!("{}\n", cmd::trace::syscall_loop(calls)))?;
            Ok(ExitKind::Success)
        }
        Command::Mpi(args) => mpi(&args),
        Command::Report(args) => report_command(&args),
    }
}

/// The line `ioscope mpi` prints in a build without the `mpi` feature.
pub const MPI_BUILD_HINT: &str = "mpi: this ioscope was built without MPI; build it with `cargo build --release --features mpi` (needs OpenMPI: apt-get install openmpi-bin libopenmpi-dev libclang-dev) and run it as `mpirun -np N ioscope mpi ...`";

/// `mpi` without the feature: the one line saying how to get it.
#[cfg(not(feature = "mpi"))]
fn mpi(_args: &crate::cli::MpiArgs) -> Result<ExitKind> {
    Err(crate::error::input(MPI_BUILD_HINT))
}

/// `mpi`: every rank runs the command; rank 0 alone prints. A step that failed on any rank
/// stops every rank with the same exit code, rank 0 printing one line per failed rank.
#[cfg(feature = "mpi")]
fn mpi(args: &crate::cli::MpiArgs) -> Result<ExitKind> {
    use crate::cmd::mpi::{Comm, RanksFailed};
    let world = crate::cmd::mpi_world::World::init()
        .ok_or_else(|| anyhow::anyhow!("mpi: MPI was initialised already"))?;
    let root = world.rank() == 0;
    // The same arguments on every rank: the same error; rank 0 alone says it.
    let options = match crate::options::MpiOptions::from_args(args) {
        Ok(o) => o,
        Err(e) if root => return Err(e),
        Err(e) => return Ok(crate::error::exit_kind(&e)),
    };
    if root && !world.launched() {
        report::note(
            "note: not started by mpirun: running as a single rank (start N ranks with `mpirun -np N ioscope mpi ...`)\n",
        );
    }
    let progress = crate::cmd::harness::NoProgress;
    let harness = Harness::system(&progress);
    match cmd::mpi::execute(&options, &world, &harness) {
        Ok(Some(result)) => finish(
            &result,
            &ExportOptions::json_only(options.json),
            &Exports::default(),
            &options.dir,
        ),
        Ok(None) => Ok(ExitKind::Success),
        Err(e) => match e.downcast_ref::<RanksFailed>() {
            Some(failed) => {
                for line in &failed.lines {
                    report::error_line(line);
                }
                Ok(failed.kind)
            }
            None => Err(e),
        },
    }
}

/// The files a command writes besides stdout, and who measured where (collected once, when
/// the JSON document or the Markdown first needs it).
#[derive(Default)]
struct Exports {
    files: Outputs,
    provenance: OnceCell<Provenance>,
}

impl Exports {
    fn provenance(&self, path: &Path) -> &Provenance {
        self.provenance.get_or_init(|| Provenance::here(path))
    }
}

/// Checks and reserves the output files before anything is measured.
fn reserve<T: Exportable>(export: &ExportOptions, measured: &[&Path]) -> Result<Exports> {
    let what = T::COMMAND;
    if export.svg.is_some() && !T::HAS_CHART {
        return Err(crate::error::input(format!(
            "{what}: --svg: {what} has no chart; use --csv, --markdown or --json"
        )));
    }
    let wanted: Vec<(&'static str, &Path)> = [
        ("--csv", &export.csv),
        ("--svg", &export.svg),
        ("--markdown", &export.markdown),
    ]
    .into_iter()
    .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
    .collect();
    Ok(Exports {
        files: Outputs::reserve(&wanted, export.force, measured, what)?,
        provenance: OnceCell::new(),
    })
}

/// Writes the CSV, SVG and Markdown files of a result (the whole result so far: called
/// after every measured point, so an interruption or failure later loses nothing); `path`
/// is what was measured, for the environment.
fn save<T: Exportable>(result: &T, out: &Exports, path: &Path) -> Result<()> {
    if !result.complete() && result.is_empty() {
        // Interrupted before anything was measured: no file is better than an empty one
        // (the reserved paths are removed again).
        return Ok(());
    }
    // The chart first: a result without one is refused before any file is written.
    let chart = if out.files.wants_svg() {
        Some(result.chart().ok_or_else(|| {
            crate::error::input(format!(
                "{} --svg: this result has no chart (no part with a curve was measured); use --csv or --markdown",
                T::COMMAND
            ))
        })?)
    } else {
        None
    };
    out.files
        .write_csv(&report::csv::render(&result.table())?)?;
    if let Some(chart) = chart {
        out.files
            .write("--svg", report::svg::render(&chart)?.as_bytes())?;
    }
    if out.files.wants_markdown() {
        let text = crate::report::view::markdown_document(result, out.provenance(path));
        out.files.write("--markdown", text.as_bytes())?;
    }
    Ok(())
}

/// Prints a result (text or JSON), writes its exports, prints its warnings, and says how
/// the process should exit.
fn finish<T: Exportable>(
    result: &T,
    options: &ExportOptions,
    out: &Exports,
    path: &Path,
) -> Result<ExitKind> {
    if !result.complete() && result.is_empty() && !options.json {
        // Nothing measured and no document asked for: the one "interrupted" line.
        return Err(crate::error::Failure::Interrupted.into());
    }
    save(result, out, path)?;
    let rendered = if options.json {
        json::document(T::COMMAND, result, out.provenance(path))
    } else {
        result.text()
    };
    report::emit(&rendered)?;
    if !options.json {
        for w in result.warnings() {
            report::warn(&text::warning(w));
        }
    }
    Ok(if !result.complete() {
        ExitKind::Interrupted
    } else if !result.ok() {
        ExitKind::Failed
    } else {
        ExitKind::Success
    })
}

/// `study`: the report directory is made first (a bad --out fails before anything is
/// measured), rewritten after every part, and named at the end.
fn study(options: &StudyOptions, quiet: bool) -> Result<ExitKind> {
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
    let kind = finish(&result, &options.export, &Exports::default(), &dir)?;
    report::note(&format!("report: {}\n", out.html().display()));
    Ok(kind)
}

/// `report`: one saved result rendered again, or several studies side by side.
fn report_command(args: &crate::cli::ReportArgs) -> Result<ExitKind> {
    use crate::error::input;
    if args.results.len() == 1 && args.output.is_none() {
        return rerender(&args.results[0], &args.export);
    }
    // The HTML page is all this form writes: an option it would silently drop is refused.
    let e = &args.export;
    let dropped: Vec<&str> = [
        (e.json, "--json"),
        (e.csv.is_some(), "--csv"),
        (e.svg.is_some(), "--svg"),
        (e.markdown.is_some(), "--markdown"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !dropped.is_empty() {
        return Err(input(format!(
            "report: {} cannot go with -o or several studies, which write one HTML page; re-render one saved result without -o for them",
            dropped.join(", ")
        )));
    }
    let mut loaded: Vec<LoadedStudy> = Vec::new();
    // The same file however it is named (a directory and its study.json, a link, a hard
    // link): its device and inode.
    let mut seen: Vec<((u64, u64), &Path)> = Vec::new();
    for path in &args.results {
        let shown = crate::text::printable_path(path);
        if let Ok(meta) = std::fs::metadata(study_file(path)) {
            use std::os::unix::fs::MetadataExt;
            let id = (meta.dev(), meta.ino());
            if let Some((_, first)) = seen.iter().find(|(s, _)| *s == id) {
                let first = crate::text::printable_path(first);
                return Err(input(if shown == first {
                    format!("report: {shown} is given twice; name each study once")
                } else {
                    format!(
                        "report: {shown} is the same study as {first} (the same study.json); name each study once"
                    )
                }));
            }
            seen.push((id, path));
        }
        let study = load_study(path)?;
        if let Some(i) = loaded.iter().position(|l| l.hash == study.hash) {
            report::warn(&format!(
                "report: {shown} holds the same document as {} (a copy of one study?): it is compared with itself",
                crate::text::printable_path(&args.results[i])
            ));
        }
        loaded.push(study);
    }
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("compare.html"));
    let media: Vec<crate::report::views::media::Medium> = loaded
        .iter()
        .map(|l| crate::report::views::media::Medium {
            label: crate::report::views::media::label(&l.report, &l.environment),
            report: &l.report,
            env: &l.environment,
        })
        .collect();
    let page = if media.len() == 1 {
        let line = std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ");
        crate::report::views::study::page(media[0].report, media[0].env, &line)?
    } else {
        crate::report::views::media::page(&media)?
    };
    let name = crate::text::printable_path(&output);
    match std::fs::symlink_metadata(&output) {
        Ok(meta) if meta.is_dir() => {
            return Err(input(format!(
                "report: write {name}: it is a directory; name the HTML file to write"
            )));
        }
        // A FIFO would block the open until a reader comes; a device is nobody's report.
        Ok(meta) if !meta.is_file() => {
            return Err(input(format!(
                "report: write {name}: not a regular file; name a new file"
            )));
        }
        _ => {}
    }
    if let Ok(out) = std::fs::canonicalize(&output) {
        for input_path in &args.results {
            if std::fs::canonicalize(study_file(input_path)).is_ok_and(|p| p == out) {
                return Err(input(format!(
                    "report: write {name}: that is one of the studies being read"
                )));
            }
        }
    }
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if args.export.force {
        open.create(true).truncate(true);
    } else {
        open.create_new(true);
    }
    let mut file = open.open(&output).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            input(format!(
                "report: write {name}: file exists; refusing to overwrite it without --force"
            ))
        } else {
            input(format!(
                "report: write {name}: {}",
                crate::files::describe(&e)
            ))
        }
    })?;
    std::io::Write::write_all(&mut file, page.as_bytes())
        .with_context(|| format!("report: write {name}"))?;
    report::note(&format!("report: {name}\n"));
    Ok(ExitKind::Success)
}

/// The file a study argument names: `DIR/study.json`, or the document itself.
fn study_file(path: &Path) -> std::path::PathBuf {
    if path.is_dir() {
        path.join("study.json")
    } else {
        path.to_path_buf()
    }
}

/// A saved study, read back: the report, the environment it was measured in, and a hash of
/// its text (two files with the same hash are copies of one study).
struct LoadedStudy {
    report: cmd::study::StudyReport,
    environment: crate::measure::env::Environment,
    hash: u64,
}

/// A saved study: `DIR/study.json` or the document itself.
fn load_study(path: &Path) -> Result<LoadedStudy> {
    use crate::error::input;
    let file = study_file(path);
    let name = crate::text::printable_path(&file);
    let (text, schema) = read_saved(&file, &name)?;
    let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
    let want = crate::report::view::schema("study");
    if schema != want {
        let schema = crate::text::printable(&schema);
        return Err(input(if schema.starts_with("ioscope/study/") {
            format!(
                "report {name}: schema '{schema}' is another version of the study ({want} is read here); run the study again with this ioscope"
            )
        } else {
            format!(
                "report {name}: schema '{schema}' is not a study ({want}); only studies can be put side by side"
            )
        }));
    }
    let text = printable_text(text);
    #[derive(serde::Deserialize)]
    struct Head {
        environment: crate::measure::env::Environment,
    }
    let environment = serde_json::from_str::<Head>(&text)
        .map_err(|e| input(format!("report {name}: bad environment: {e}")))?
        .environment;
    let report = serde_json::from_str(&text)
        .map_err(|e| input(format!("report {name}: not a valid {want} document: {e}")))?;
    Ok(LoadedStudy {
        report,
        environment,
        hash,
    })
}

/// The largest saved document `report` reads. A study is well under 1 MiB; the largest
/// real results are traces, about 1.4 KiB per file touched (31 MB for 22,000 files), so
/// this reads a trace of some 90,000 files.
const SAVED_LIMIT: u64 = 128 << 20;

/// The most JSON values a saved document may hold. Read back, each takes up to a few dozen
/// bytes whatever its text takes (`0,` is 2 bytes of text and 8 in a Vec<u64>), so this
/// and [`SAVED_LIMIT`] bound `report` to well under 1 GiB (a real trace holds about one
/// value per 10 bytes of text: 13 million at the limit).
const SAVED_VALUES: u64 = 16 << 20;

/// A saved document's text and its schema, read without building the document in memory;
/// one that is far larger than any result, or holds far more values, is refused.
fn read_saved(path: &Path, name: &str) -> Result<(String, String)> {
    use crate::error::input;
    let what = format!("report {name}");
    let text = crate::files::read_text(path, &what, SAVED_LIMIT)?;
    let not_json = |e: serde_json::Error| input(format!("{what}: not JSON: {e}"));
    let values = json::values_in(&text).map_err(not_json)?;
    if values > SAVED_VALUES {
        return Err(input(format!(
            "{what}: {} values, more than a saved ioscope result holds ({}); not read",
            crate::units::group_thousands(values),
            crate::units::group_thousands(SAVED_VALUES)
        )));
    }
    let schema = json::schema_of(&text).map_err(not_json)?;
    Ok((text, schema))
}

/// The text as it is read back: control characters in its strings made printable (see
/// [`json::printable_strings`]), so nothing a renderer prints of it drives a terminal.
fn printable_text(text: String) -> String {
    json::printable_strings(&text).unwrap_or(text)
}

/// `report`: reads a saved JSON document and renders it again without measuring.
fn rerender(path: &Path, args: &ExportArgs) -> Result<ExitKind> {
    use crate::error::input;
    let dir_json;
    let path = if path.is_dir() {
        dir_json = path.join("study.json");
        dir_json.as_path()
    } else {
        path
    };
    let name = crate::text::printable_path(path);
    let options = ExportOptions::from_args(args, &format!("report {name}"))?;
    let (text, schema) = read_saved(path, &name)?;
    if options.json {
        // The saved document already carries its environment and command line (JSON
        // escapes its control characters).
        report::emit(&text)?;
        return Ok(ExitKind::Success);
    }
    let text = printable_text(text);
    fn again<T: Exportable>(
        text: String,
        options: &ExportOptions,
        path: &Path,
        name: &str,
        schema: &str,
    ) -> Result<ExitKind> {
        // Where and how it was measured is the saved run's, not this machine's.
        let provenance: Provenance = serde_json::from_str(&text).unwrap_or_default();
        // Straight into the typed result: a serde_json::Value of the whole document took
        // 10-19x its size.
        let result: T = serde_json::from_str(&text)
            .map_err(|e| input(format!("report {name}: not a valid {schema} document: {e}")))?;
        drop(text);
        let out = reserve::<T>(options, &[path])?;
        let _ = out.provenance.set(provenance);
        // The exit code is the re-rendering's, not the saved run's.
        finish(&result, options, &out, path).map(|_| ExitKind::Success)
    }
    let value = text;
    let s = crate::report::view::schema;
    match schema.as_str() {
        x if x == s("run") => again::<cmd::run::RunReport>(value, &options, path, &name, x),
        x if x == s("calibrate") => {
            again::<cmd::calibrate::CalibrateReport>(value, &options, path, &name, x)
        }
        x if x == s("fast") => again::<cmd::fast::FastReport>(value, &options, path, &name, x),
        x if x == s("study") => again::<cmd::study::StudyReport>(value, &options, path, &name, x),
        x if x == s("compare") => {
            again::<cmd::compare::CompareReport>(value, &options, path, &name, x)
        }
        x if x == s("sweep") => again::<cmd::sweep::SweepReport>(value, &options, path, &name, x),
        x if x == s("cache") => {
            again::<cmd::coldwarm::CacheReport>(value, &options, path, &name, x)
        }
        x if x == s("syscalls") => {
            again::<cmd::syscalls::SyscallsReport>(value, &options, path, &name, x)
        }
        x if x == s("patterns") => {
            again::<cmd::patterns::PatternsReport>(value, &options, path, &name, x)
        }
        x if x == s("transfer") => {
            again::<cmd::transfer::TransferReport>(value, &options, path, &name, x)
        }
        x if x == s("trace") => again::<cmd::trace::TraceReport>(value, &options, path, &name, x),
        x if x == s("mpi") => again::<cmd::mpi::MpiReport>(value, &options, path, &name, x),
        other
            if other.starts_with("ioscope/") && other.ends_with("/v1")
                || other == "ioscope/study/v2" =>
        {
            Err(input(format!(
                "report {name}: schema '{}' was written by an older ioscope; run the command again to get a v2 document",
                crate::text::printable(other)
            )))
        }
        other => Err(input(format!(
            "report {name}: schema '{}' is not an ioscope result (ioscope/<command>/v2)",
            crate::text::printable(other)
        ))),
    }
}
