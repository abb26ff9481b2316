//! Dispatch: one function per subcommand turns arguments into options, runs the command,
//! and hands the result to a renderer. Returns the exit kind; errors go back to `main`.

use crate::cli::{Cli, Command};
use crate::cmd;
use crate::error::ExitKind;
use crate::measure::env::Environment;
use crate::options::{CalibrateOptions, CompareOptions, FastOptions, RunOptions, StudyOptions};
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
