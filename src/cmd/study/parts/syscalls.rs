//! syscalls: the cost of a 1-byte read() against lseek(), pread() and getpid(), at the
//! level's call counts that fit in the scratch file.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport};
use crate::cmd::syscalls::SyscallsReport;
use crate::measure::env::Environment;
use crate::options::SyscallsOptions;
use crate::report::page::{Headline, Section};
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::format_size;
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "syscalls",
    "The cost of a system call",
    "Cost of a 1-byte read() against lseek(), pread() and getpid()",
    [0.4, 1.3, 40.0],
);

/// The part.
pub struct Syscalls;

impl Kept for Syscalls {
    type Result = SyscallsReport;
    const FIELD: Option<&'static str> = Some("syscalls");
    const ALWAYS: bool = true;
}

impl PartView for Syscalls {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|s| crate::report::views::syscalls::section(s, r, PART))
    }

    fn headlines(&self, r: &StudyReport) -> Vec<Headline> {
        self.kept(r)
            .map(crate::report::views::syscalls::headlines)
            .unwrap_or_default()
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::syscalls(media, PART)
    }
}

impl StudyPart for Syscalls {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let sizes: Vec<u64> = cx
            .budget
            .syscall_sizes
            .iter()
            .copied()
            .filter(|&n| n <= cx.size)
            .collect();
        if sizes.is_empty() {
            return Ok(Outcome::Skipped {
                reason: format!(
                    "the file ({}) is smaller than every call count of this level",
                    format_size(cx.size)
                ),
            });
        }
        let options = SyscallsOptions {
            path: cx.scratch.path().to_path_buf(),
            sizes,
            export: cx.export(),
        };
        let r = crate::cmd::syscalls::execute(&options, cx.harness)?;
        Ok(self.keep(report, r, true))
    }
}
