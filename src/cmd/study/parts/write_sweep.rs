//! write-sweep: write throughput against block size, fsync included, on a file of its own
//! beside the scratch file.

use super::super::{Context, Kept, PartView, Outcome, RemoveOnDrop, StudyPart, StudyReport, something};
use crate::cmd::sweep::SweepReport;
use crate::measure::caveat::Caveat;
use crate::measure::env::Environment;
use crate::report::page::{Headline, Section};
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::MIB;
use crate::workload::Op;
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "write-sweep",
    "Write throughput against block size (fsync included)",
    "Write throughput against block size, fsync included",
    [0.4, 4.6, 600.0],
);

/// The part.
pub struct WriteSweep;

impl Kept for WriteSweep {
    type Result = SweepReport;
    const FIELD: Option<&'static str> = Some("write_sweep");
    const ALWAYS: bool = true;
}

impl PartView for WriteSweep {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|s| crate::report::views::sweep::write_section(s, PART))
    }

    fn summary_rank(&self) -> u8 {
        30
    }

    fn headlines(&self, r: &StudyReport) -> Vec<Headline> {
        self.kept(r)
            .map(crate::report::views::sweep::write_headlines)
            .unwrap_or_default()
    }

    fn ok(&self, r: &StudyReport) -> bool {
        self.kept(r).is_none_or(|x| x.ok())
    }

    fn caveats<'a>(&self, r: &'a StudyReport) -> &'a [Caveat] {
        self.kept(r).map_or(&[], |x| &x.caveats)
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::write_sweep(media, PART)
    }
}

impl StudyPart for WriteSweep {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let b = cx.budget;
        let file = cx
            .dir
            .join(format!(".ioscope-study-write-{}", std::process::id()));
        let _remove = RemoveOnDrop::new(file.clone());
        // At least the largest block: the read sweep's blocks all fit in the scratch file,
        // and the write sweep takes the same ones.
        let largest = b.sweep_blocks.iter().copied().max().unwrap_or(0);
        let size = b
            .write_size
            .min(cx.size.max(MIB))
            .max(largest.min(cx.size));
        let r = cx.sweep(Op::Write, file, Vec::new(), 0, size)?;
        let r = something(r.points.is_empty() && !r.complete, r)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
