//! Dispatch: one function per subcommand turns arguments into options, runs the command,
//! and hands the result to a renderer. Returns the exit kind; errors go back to `main`.

use crate::cli::{Cli, Command};
use crate::cmd;
use crate::error::ExitKind;
use crate::measure::env::Environment;
use crate::options::{
    CacheOptions, CalibrateOptions, CompareOptions, ExportOptions, FastOptions, RunOptions,
    StudyOptions, SweepOptions, SyscallsOptions,
};
use crate::report::exports::Exportable;
use crate::report::{self, json, text};
use anyhow::Result;
use serde::Serialize;
use std::path::Path;

/// Runs the parsed command line.
pub fn run(cli: Cli) -> Result<ExitKind> {
    match cli.command {
        Command::Run(args) => {
            crate::interrupt::install();
            let options = RunOptions::from_args(&args)?;
            let result = cmd::run::execute(&options)?;
            for w in text::check_warnings(&result.checks) {
                report::warn(&w);
            }
            output("run", options.json, &result, &options.path, text::run)?;
        }
        Command::Calibrate(args) => {
            crate::interrupt::install();
            let options = CalibrateOptions::from_args(&args)?;
            let result = cmd::calibrate::execute(&options)?;
            if !options.json {
                for w in &result.warnings {
                    report::warn(w);
                }
            }
            output(
                "calibrate",
                options.json,
                &result,
                &options.path,
                text::calibrate,
            )?;
        }
        Command::Fast(args) => {
            crate::interrupt::install();
            let options = FastOptions::from_args(&args)?;
            let result = cmd::fast::execute(&options)?;
            if options.verbose {
                report::note(&text::fast_details(&result));
            }
            output("fast", options.json, &result, &options.path, text::fast)?;
        }
        Command::Compare(args) => {
            crate::interrupt::install();
            let options = CompareOptions::from_args(&args)?;
            let result = cmd::compare::execute(&options)?;
            output(
                "compare",
                options.json,
                &result,
                &options.path,
                text::compare,
            )?;
        }
        Command::Sweep(args) => {
            crate::interrupt::install();
            let options = SweepOptions::from_args(&args)?;
            let result = cmd::sweep::execute(&options)?;
            export(&result, &options.export, &options.path)?;
        }
        Command::Cache(args) => {
            crate::interrupt::install();
            let options = CacheOptions::from_args(&args)?;
            let result = cmd::coldwarm::execute(&options)?;
            export(&result, &options.export, &options.path)?;
        }
        Command::Syscalls(args) => {
            crate::interrupt::install();
            let options = SyscallsOptions::from_args(&args)?;
            let result = cmd::syscalls::execute(&options)?;
            export(&result, &options.export, &options.path)?;
        }
        Command::Report(args) => {
            crate::interrupt::install();
            let export_options = ExportOptions::from_args(
                &args.export,
                &format!("report {}", args.result.display()),
            )?;
            rerender(&args.result, &export_options)?;
        }
        Command::Study(args) => {
            crate::interrupt::install();
            let options = StudyOptions::from_args(&args)?;
            let result = cmd::study::execute(&options)?;
            let dir = Path::new(&result.dir).to_path_buf();
            output("study", options.json, &result, &dir, text::study)?;
            if !result.verified {
                return Ok(ExitKind::Failed);
            }
        }
    }
    Ok(ExitKind::Success)
}

fn output<T: Serialize>(
    command: &str,
    as_json: bool,
    result: &T,
    path: &Path,
    render: fn(&T) -> String,
) -> Result<()> {
    let rendered = if as_json {
        json::document(command, result, &Environment::collect(path))
    } else {
        render(result)
    };
    report::emit(&rendered)?;
    Ok(())
}

/// Prints a table-producing result (text or JSON) and writes its CSV and SVG if asked.
fn export<T: Exportable>(result: &T, options: &ExportOptions, path: &Path) -> Result<()> {
    use anyhow::Context;
    if let Some(csv_path) = &options.csv {
        let bytes = report::csv::render(&result.table())?;
        std::fs::write(csv_path, bytes).with_context(|| format!("write {}", csv_path.display()))?;
    }
    if let Some(svg_path) = &options.svg {
        let svg = report::svg::render(&result.chart())?;
        std::fs::write(svg_path, svg).with_context(|| format!("write {}", svg_path.display()))?;
    }
    let rendered = if options.json {
        json::document(result.command(), result, &Environment::collect(path))
    } else {
        result.text()
    };
    report::emit(&rendered)?;
    Ok(())
}

/// `report`: reads a saved JSON document and renders it again without measuring.
fn rerender(path: &Path, options: &ExportOptions) -> Result<()> {
    use crate::error::input;
    let name = path.display();
    let text = crate::files::read_text(path, &format!("report {name}"))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| input(format!("report {name}: not JSON: {e}")))?;
    if options.json {
        // The saved document already carries its environment and command line.
        report::emit(&text)?;
        return Ok(());
    }
    let schema = value["schema"].as_str().unwrap_or("").to_string();
    let bad =
        |e: serde_json::Error| input(format!("report {name}: not a valid {schema} document: {e}"));
    match schema.as_str() {
        "ioscope/sweep/v1" => export(
            &serde_json::from_value::<cmd::sweep::SweepReport>(value).map_err(bad)?,
            options,
            path,
        ),
        "ioscope/cache/v1" => export(
            &serde_json::from_value::<cmd::coldwarm::CacheReport>(value).map_err(bad)?,
            options,
            path,
        ),
        "ioscope/syscalls/v1" => export(
            &serde_json::from_value::<cmd::syscalls::SyscallsReport>(value).map_err(bad)?,
            options,
            path,
        ),
        other => Err(input(format!(
            "report {name}: schema '{other}' is not one report can render (ioscope/sweep/v1, ioscope/cache/v1, ioscope/syscalls/v1)"
        ))),
    }
}
