//! disk: the disk panel (SEQ1M Q8T1 … RND4K Q1T1, read and write) on the scratch file, each
//! row run once for the level's runtime (not repeated: the estimate counts one run per
//! row; `disk` repeats them): its writes put the bytes the file already holds, so the
//! later parts still read what write-read wrote. Then one open-loop row: random 4 KiB reads
//! arriving (Poisson) at half the panel's RND4K Q32T1 read IOPS, its response p99 set
//! against RND4K Q1T1's closed-loop p99 (one more row's runtime in the estimate).

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, ignore, something};
use crate::cmd::disk::DiskReport;
use crate::measure::caveat::Caveat;
use crate::measure::env::Environment;
use crate::options::DiskOptions;
use crate::report::page::{Headline, Section};
use crate::report::views::media_figures::{Measure, Medium};
use crate::workload::study::Part;
use anyhow::{Context as _, Result};
use std::time::Duration;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "disk",
    "What the disk delivers: IOPS and latency at a queue depth",
    "The disk panel: sequential and random I/O at queue depths, IOPS and latency",
    [2.65, 10.6, 50.0],
);

/// The share of the peak (the panel's RND4K Q32T1 read) the part's open-loop row asks: half,
/// a device loaded as a service sized with room to spare is.
pub const OPEN_LOOP_SHARE: f64 = 0.5;

/// The part.
pub struct Disk;

impl Kept for Disk {
    type Result = DiskReport;
    /// Absent from studies that predate it.
    const FIELD: Option<&'static str> = Some("disk");
}

impl PartView for Disk {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r).map(|d| {
            crate::report::views::disk_study::section(
                d,
                crate::report::views::study::write_cache(r),
                PART,
            )
        })
    }

    fn headlines(&self, r: &StudyReport) -> Vec<Headline> {
        self.kept(r)
            .map(crate::report::views::disk_study::headlines)
            .unwrap_or_default()
    }

    fn caveats<'a>(&self, r: &'a StudyReport) -> &'a [Caveat] {
        self.kept(r).map_or(&[], |x| &x.caveats)
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_disk::measures(media, PART)
    }

    fn media_sentences(&self, media: &[Medium]) -> Vec<String> {
        crate::report::views::media_disk::sentences(media)
    }

    fn absent(&self, r: &StudyReport) -> Option<&'static str> {
        (r.budget.disk_runtime == 0.0).then_some(
            "not measured: the study was made by a version of ioscope without the disk part",
        )
    }
}

impl StudyPart for Disk {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let options = DiskOptions {
            path: cx.scratch.path().to_path_buf(),
            size: cx.size,
            runtime: Duration::from_secs_f64(cx.budget.disk_runtime),
            ramp: Duration::ZERO,
            // One run per row: the level's seconds (PART) count one; `disk --repeat` is
            // the command for rows repeated.
            repeat: crate::measure::converge::Stopping::fixed(1),
            best: false,
            rows: crate::workload::panel::default_panel(),
            notes: Vec::new(),
            mode: crate::options::disk::DiskMode::Panel,
            force_write: true,
            seed: cx.seed,
            own_file: true,
            open: Some(std::sync::Arc::new(
                crate::cmd::disk::reopen_for_reading(cx.scratch.file())
                    .with_context(|| format!("open {} for the disk panel", cx.scratch.name()))?,
            )),
            keep: false,
            min_free: cx.options.min_free,
            series: None,
            open_loop: Some(OPEN_LOOP_SHARE),
            export: cx.export(),
        };
        let r = crate::cmd::disk::execute(&options, cx.harness, &mut ignore)?;
        let r = something(r.rows.is_empty() && !r.complete, r)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
