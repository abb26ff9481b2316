//! transfer: the transfer matrix on the classic workloads (one large file, small files),
//! over loopback TCP, every method pair.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, ignore};
use crate::cmd::transfer::TransferReport;
use crate::measure::env::Environment;
use crate::options::TransferOptions;
use crate::report::page::Section;
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::{KIB, MIB};
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "transfer",
    "Files over a socket: read/write, mmap and zero-copy",
    "Files over a socket, every method pair",
    [0.3, 2.4, 120.0],
);

/// The part.
pub struct Transfer;

impl Kept for Transfer {
    type Result = TransferReport;
    const FIELD: Option<&'static str> = Some("transfer");
    const ALWAYS: bool = true;
}

impl PartView for Transfer {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|t| crate::report::views::transfer::section(t, PART))
    }

    fn ok(&self, r: &StudyReport) -> bool {
        self.kept(r).is_none_or(|x| x.ok())
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::transfer(media, PART)
    }
}

impl StudyPart for Transfer {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let b = cx.budget;
        let options = TransferOptions {
            files: Vec::new(),
            to: cx.dir.to_path_buf(),
            large: b.transfer_large,
            small: 10,
            small_size: 4 * KIB,
            repeat: b.transfer_repeat,
            senders: crate::transfer::methods::SendMethod::ALL.to_vec(),
            receivers: crate::transfer::methods::RecvMethod::ALL.to_vec(),
            unix: false,
            sync: true,
            buffer: MIB as usize,
            min_free: cx.options.min_free,
        };
        let r = crate::cmd::transfer::execute(&options, &mut ignore)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
