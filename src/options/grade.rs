//! `grade`'s options: the command (with `{}` where the file goes), the runs per size, the
//! deadline of a run, the battery (`--big`) and where its files are made.

use crate::cli::GradeArgs;
use crate::error::input;
use crate::units::parse_duration;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Validated options of `grade`.
#[derive(Debug, Clone)]
pub struct GradeOptions {
    /// The program and its arguments, as given.
    pub command: Vec<OsString>,
    /// The same, escaped for printing.
    pub shown: Vec<String>,
    /// Runs on each file.
    pub runs: usize,
    /// A run's deadline on an empty file (more for bigger files).
    pub timeout: Duration,
    /// The battery includes 2 GiB and 4 GiB + 8.
    pub big: bool,
    /// Where the files are made.
    pub dir: PathBuf,
    /// Free space to keep.
    pub min_free: Option<u64>,
}

impl GradeOptions {
    /// Checks `grade`'s arguments.
    pub fn from_args(args: &GradeArgs) -> Result<Self> {
        if args.command.first().is_none_or(|c| c.is_empty()) {
            return Err(input(
                "grade: the command is empty: give the reader after --",
            ));
        }
        if args.runs == 0 {
            return Err(input("grade: --runs 0: at least one run per size"));
        }
        let timeout = parse_duration(&args.timeout).context("grade: --timeout")?;
        if timeout.is_zero() {
            return Err(input(format!(
                "grade: --timeout {}: must be more than 0 (how long one run may take)",
                args.timeout
            )));
        }
        super::existing_dir(&args.dir, "grade: --dir")?;
        let shown = args
            .command
            .iter()
            .map(|a| crate::text::printable(&crate::text::lossless(a)))
            .collect();
        Ok(Self {
            command: args.command.clone(),
            shown,
            runs: args.runs,
            timeout,
            big: args.big,
            dir: args.dir.clone(),
            min_free: super::min_free(args.min_free.as_deref(), "grade")?,
        })
    }
}
