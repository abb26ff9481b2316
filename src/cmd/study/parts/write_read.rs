//! write-read: the scratch file written from the seeded generator and fsynced, then read
//! back whole and every byte checked in place. Every other part reads this file, so it
//! always runs, and its failure ends the study.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, StudyRow};
use crate::harness::{Sample, Setup, Target};
use crate::warning::{self, Warning};
use crate::engine;
use crate::files::InputKind;
use crate::measure::cache::CacheState;
use crate::measure::env::Environment;
use crate::report::page::{Headline, Section};
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::MIB;
use crate::workload::Op;
use crate::workload::data::xor_of_prefix;
use crate::workload::plan::Plan;
use crate::workload::study::Part;
use crate::workload::verify::Written;
use anyhow::{Context as _, Result};

/// Block size of the write that creates the scratch file, and of the verified read.
const WRITE_BLOCK: u64 = MIB;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "write-read",
    "Write, then read back and check against the bytes written",
    "Write the file, read it back, checksum verified",
    [0.1, 0.3, 4.0],
);

/// The part.
pub struct WriteRead;

impl Kept for WriteRead {
    /// Its rows are the study's own `write_read`.
    type Result = ();
    const FIELD: Option<&'static str> = None;

    /// The study's own warnings (the write and the read back are the study's rows).
    fn kept_warnings<'a>(&self, r: &'a StudyReport) -> &'a [Warning] {
        &r.warnings
    }
}

impl PartView for WriteRead {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        crate::report::views::study::write_read(r, PART)
    }

    fn summary_rank(&self) -> u8 {
        10
    }

    fn headlines(&self, r: &StudyReport) -> Vec<Headline> {
        crate::report::views::study::write_headline(r)
            .into_iter()
            .collect()
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::write_read(media, PART)
    }
}

impl StudyPart for WriteRead {
    fn required(&self) -> bool {
        true
    }

    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        write_read(cx, report).map(|()| Outcome::Done)
    }
}

/// Writes the scratch file, then reads it all back and checks the checksum.
fn write_read(cx: &Context, report: &mut StudyReport) -> Result<()> {
    let setup = Setup::single(&engine::stream::Stream);
    let size = cx.size;
    let written = cx.harness.write(
        cx.scratch,
        None,
        &setup,
        Plan::sequential(0, size, WRITE_BLOCK.min(size)),
        cx.seed,
        false,
    )?;
    add(report, row(Op::Write, WRITE_BLOCK, written, true));
    let whole_xor = report.write_read[0].moved.xor;
    let reader = crate::cmd::disk::reopen_for_reading(cx.scratch.file())
        .with_context(|| format!("open {} for reading", cx.scratch.name()))?;
    let target = Target {
        file: &reader,
        name: cx.scratch.name(),
        kind: InputKind::Regular,
        device: None,
    };
    let bs = WRITE_BLOCK.min(size);
    let sample = cx.harness.read(
        target,
        &setup,
        Plan::sequential(0, size, bs),
        false,
        CacheState::AsIs,
    )?;
    // The clock has stopped: every byte read, checked where it lay.
    let in_place = crate::cmd::inplace::verify(
        cx.harness,
        &reader,
        cx.scratch.name(),
        std::iter::once((0, size)),
        Written::Stream(cx.seed),
        bs,
    )?;
    let verified = sample.moved.xor == whole_xor && sample.moved.bytes == size;
    // A cross-check that does not trust the write's own figure.
    let expected = xor_of_prefix(cx.seed, size);
    let (mut read, warnings) = row(
        Op::Read,
        bs,
        sample,
        verified && expected == whole_xor && in_place.ok(),
    );
    read.in_place = Some(in_place);
    add(report, (read, warnings));
    Ok(())
}

/// Adds the write or the read.
fn add(report: &mut StudyReport, (row, warnings): (StudyRow, Vec<Warning>)) {
    report.verified &= row.verified;
    report.write_read.push(row);
    report.warnings.extend(warnings);
}

fn row(op: Op, block_size: u64, sample: Sample, verified: bool) -> (StudyRow, Vec<Warning>) {
    let at = format!(
        "{} at {}",
        op.name(),
        crate::units::format_block_size(block_size)
    );
    let warnings = warning::of_sample(&sample, Some(at));
    let row = StudyRow {
        op,
        block_size,
        moved: sample.moved,
        xor_hex: crate::checksum::hex(sample.moved.xor),
        verified,
        seconds: sample.elapsed.seconds,
        bytes_per_second: sample.bytes_per_second(),
        calls_per_second: sample.calls_per_second(),
        fsync_seconds: sample.fsync_seconds,
        elapsed: sample.elapsed,
        cache: sample.cache,
        checks_ok: sample.checks.iter().all(|c| c.ok),
        in_place: None,
    };
    (row, warnings)
}
