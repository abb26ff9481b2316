//! The result of `grade`: another program's reader run on a battery of files, each size's
//! verdict with every run, and the diagnoses its pattern of failures supports.

use crate::measure::stats::Summary;
use serde::{Deserialize, Serialize};

/// What one size, or one run, came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It printed the reference XOR and exited 0.
    Correct,
    /// It exited 0 without printing the reference XOR.
    Wrong,
    /// A signal ended it.
    Crashed,
    /// It ran past its deadline and was killed.
    Timeout,
    /// It exited with a status other than 0.
    Exit,
}

impl Verdict {
    /// How bad: a size's verdict is the worst of its runs'.
    pub fn severity(self) -> u8 {
        match self {
            Verdict::Correct => 0,
            Verdict::Wrong => 1,
            Verdict::Exit => 2,
            Verdict::Timeout => 3,
            Verdict::Crashed => 4,
        }
    }
}

/// One run of the program on one file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradeRun {
    /// What it came to.
    pub verdict: Verdict,
    /// Its exit status, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it (`SIGSEGV`), when one did (`SIGKILL` at the deadline).
    pub signal: Option<String>,
    /// The XOR it printed (the one equal to the reference, or the likely one), as 8 hex
    /// digits; `None` when it printed nothing hex-looking.
    pub printed: Option<String>,
    /// That XOR as it printed it.
    pub token: Option<String>,
    /// Hex-looking words in its output.
    pub candidates: usize,
    /// Whether its output held the right XOR written in base 10.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub decimal: bool,
    /// Whole-process wall seconds, from before the fork to its exit.
    pub wall_seconds: f64,
    /// Its CPU seconds in user mode.
    pub user_seconds: f64,
    /// Its CPU seconds in the kernel.
    pub system_seconds: f64,
    /// The last line it wrote on stderr (escaped), when it did not end with 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<String>,
}

/// One file of the battery and what the program made of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SizeGrade {
    /// The file's size in bytes.
    pub size: u64,
    /// The size as the battery names it (`10 MiB + 3`).
    pub label: String,
    /// Whether the file is sparse (holes between islands of data): its times are not reads
    /// of the medium.
    pub sparse: bool,
    /// The reference XOR of the file, 8 hex digits.
    pub reference: String,
    /// The worst of its runs' verdicts.
    pub verdict: Verdict,
    /// How many of its runs were not correct.
    pub failed_runs: usize,
    /// Every distinct XOR it printed over the runs that exited 0, in the order first seen.
    pub distinct: Vec<String>,
    /// The run that gives the verdict (the first with the worst verdict), by its index.
    pub shown_run: usize,
    /// Whole-process wall seconds over the runs (median, min–max).
    pub wall: Option<Summary>,
    /// Every run, in order.
    pub runs: Vec<GradeRun>,
}

/// The run shown for a size without one (a saved document edited by hand).
static NO_RUN: GradeRun = GradeRun {
    verdict: Verdict::Wrong,
    exit_code: None,
    signal: None,
    printed: None,
    token: None,
    candidates: 0,
    decimal: false,
    wall_seconds: 0.0,
    user_seconds: 0.0,
    system_seconds: 0.0,
    stderr: None,
};

impl SizeGrade {
    /// The run the verdict stands on (one that says nothing, where a saved document names
    /// a run it does not hold).
    pub fn shown(&self) -> &GradeRun {
        self.runs.get(self.shown_run).unwrap_or(&NO_RUN)
    }
}

/// A pattern in the failures, and what it points at.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// A stable name for the pattern (`drops_tail`, `offsets_32`, `one_call`, `empty`,
    /// `unstable`, `byte_order`, `crashes_from`, `no_xor`, `tail`, `unexplained`).
    pub kind: String,
    /// The sentence: the pattern, the evidence, the likely cause.
    pub sentence: String,
}

/// What `grade` did and found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GradeReport {
    /// The command as given, `{}` where the file goes.
    pub command: Vec<String>,
    /// Runs asked for on each size.
    pub runs: usize,
    /// The deadline of a run: this many seconds ...
    pub timeout_seconds: f64,
    /// ... plus one second per this many bytes of the file.
    pub timeout_bytes_per_second: u64,
    /// Where the files were made.
    pub dir: String,
    /// Every size graded, smallest first.
    pub sizes: Vec<SizeGrade>,
    /// Sizes not graded, each with the reason.
    pub skipped: Vec<String>,
    /// The patterns found in the failures, most telling first.
    pub diagnoses: Vec<Diagnosis>,
    /// Whether every size planned was graded (false after an interruption).
    pub complete: bool,
}

impl GradeReport {
    /// Whether every size planned was graded, and correct.
    pub fn passed(&self) -> bool {
        !self.sizes.is_empty()
            && self.skipped.is_empty()
            && self.sizes.iter().all(|s| s.verdict == Verdict::Correct)
    }
}
