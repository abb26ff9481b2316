//! The result of `compare`: ioscope beside dd, cat and fio on one file, per cache state.

use crate::measure::cache::CacheState;
use crate::measure::stats::{Summary, summarize};
use crate::warning::Warning;
use serde::{Deserialize, Serialize};

/// How a contender's own figures are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FigureSource {
    /// ioscope's JSON: `bytes` and `seconds`.
    IoscopeJson,
    /// dd's `N bytes ... copied, S s` line.
    DdSummary,
    /// fio's JSON: its io_bytes and runtime.
    FioJson,
    /// No figures of its own: the process's wall time and the file size.
    ProcessWall,
    /// A reader of the user's (`--cmd`): the process's wall time and the file size, and the
    /// XOR it printed checked against the file's.
    ProcessXor,
}

/// One contender: a command line and where its figures come from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Contender {
    /// Short name for the table.
    pub name: String,
    /// The program and its arguments, as shown.
    pub argv: Vec<String>,
    /// The program and its arguments as run: the file's path as its bytes, which need not
    /// be UTF-8 (`argv` shows them as text). Not saved.
    #[serde(skip)]
    pub run: Vec<std::ffi::OsString>,
    /// Where its figures come from.
    pub figures: FigureSource,
    /// Whether it reads with O_DIRECT (bypassing the cache).
    pub direct: bool,
}

/// One run of one contender.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    /// Bytes as the tool reported (or the file size).
    pub bytes: u64,
    /// Seconds as the tool reported (or wall time).
    pub seconds: f64,
    /// Rate from those figures.
    pub bytes_per_second: f64,
    /// Wall seconds of the whole process, start-up included.
    pub wall_seconds: f64,
    /// Share of the file resident just before the run.
    pub resident_share_before: f64,
    /// Bytes the device read during the run beyond the file's own size, when clearly more:
    /// another process's reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// Stalls on the CPU, I/O and memory over the run (`/proc/pressure`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressure: Option<crate::measure::pressure::Pressure>,
    /// The XOR a reader of the user's printed (the one equal to the file's, or the likely
    /// one), 8 hex digits; `None` for the other contenders, or when it printed nothing
    /// hex-looking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub printed: Option<String>,
    /// Whether it printed the file's XOR (readers of the user's only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xor_ok: Option<bool>,
}

/// A contender's results in one cache state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    /// The contender.
    pub contender: String,
    /// The cache state every run started from.
    pub cache: CacheState,
    /// Median rate over the runs (own figures).
    pub median_bytes_per_second: f64,
    /// Median rate by process wall time.
    pub median_wall_bytes_per_second: f64,
    /// Median rate divided by the best median of the same cache state.
    pub ratio_to_best: f64,
    /// Whether every run started in the intended cache state (by the one set of thresholds).
    pub state_ok: bool,
    /// How the repeats ended when they ran until stable (absent with `--repeat`): the
    /// relative half-width of the median's 95% interval, and whether it came within the
    /// precision asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settled: Option<crate::measure::converge::Settled>,
    /// Every run.
    pub runs: Vec<Run>,
}

impl Row {
    /// Whether every run of a reader of the user's printed the file's XOR (`None` for the
    /// other contenders).
    pub fn xor_ok(&self) -> Option<bool> {
        let checked: Vec<bool> = self.runs.iter().filter_map(|r| r.xor_ok).collect();
        (!checked.is_empty()).then(|| checked.iter().all(|&ok| ok))
    }

    /// The first wrong XOR it printed, if one was (`none` when it printed nothing hex).
    pub fn wrong_xor(&self) -> Option<String> {
        self.runs
            .iter()
            .find(|r| r.xor_ok == Some(false))
            .map(|r| r.printed.clone().unwrap_or_else(|| "none".to_string()))
    }

    /// Its own figures' rates over the runs (`None` without runs).
    pub fn rates(&self) -> Option<Summary> {
        let rates: Vec<f64> = self.runs.iter().map(|x| x.bytes_per_second).collect();
        summarize(&rates)
    }
}

/// The comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CompareReport {
    /// The file.
    pub file: String,
    /// Its size.
    pub file_bytes: u64,
    /// Block size given to run, dd and fio.
    pub block_size: u64,
    /// Runs per contender and state (the least, when they ran until stable).
    pub repeat: usize,
    /// The rule that ended each point's repeats when they ran until stable (absent with
    /// `--repeat`, and in results saved before it existed); `repeat` is then its minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_stable: Option<crate::measure::converge::Stopping>,
    /// The file's XOR, which readers of the user's must print (with `--cmd` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<String>,
    /// Readers of the user's (`--cmd`) that crashed, exited non-zero or ran past their
    /// deadline (the reason is under `skipped`): the comparison fails with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failed_readers: Vec<String>,
    /// The contenders that ran.
    pub contenders: Vec<Contender>,
    /// Contenders that could not run here, with the reason.
    pub skipped: Vec<String>,
    /// One row per contender and cache state.
    pub rows: Vec<Row>,
    /// Whether every cache state planned was measured (false after an interruption).
    pub complete: bool,
    /// What the reader should know.
    pub warnings: Vec<Warning>,
}

impl CompareReport {
    /// Whether every contender's runs started in their cache state.
    pub fn ok(&self) -> bool {
        // A comparison that ran to its end and measured no contender failed; so did one
        // where a reader printed a wrong XOR.
        self.rows
            .iter()
            .all(|r| r.state_ok && r.xor_ok() != Some(false))
            && self.failed_readers.is_empty()
            && (!self.rows.is_empty() || !self.complete)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_comparison_that_ran_to_its_end_and_measured_no_contender_is_not_ok() {
        let report = CompareReport {
            file: "f".into(),
            file_bytes: 1 << 20,
            block_size: 1 << 20,
            repeat: 1,
            until_stable: None,
            reference: None,
            failed_readers: Vec::new(),
            contenders: Vec::new(),
            skipped: vec!["cat (warm): cat failed (exit status: 1)".into()],
            rows: Vec::new(),
            complete: true,
            warnings: Vec::new(),
        };
        assert!(!report.ok(), "every contender failed: exit 1");
        let interrupted = CompareReport {
            complete: false,
            ..report
        };
        assert!(
            interrupted.ok(),
            "interrupted before a row: 130, not a failure"
        );
    }
}
