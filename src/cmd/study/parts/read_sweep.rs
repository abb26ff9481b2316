//! read-sweep: read throughput of the scratch file against block size, cold (where a device
//! is behind it) and warm, through the stream engine; every byte verified in place.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, something};
use crate::cmd::sweep::SweepReport;
use crate::measure::caveat::Caveat;
use crate::measure::env::Environment;
use crate::measure::cache::CacheState;
use crate::report::page::Section;
use crate::results::study::answers::{Measured, POOL_BLOCK, PooledRun, unproven};
use crate::units::format_size;
use crate::warning::Marks;
use crate::report::views::media_figures::{Measure, Medium};
use crate::workload::Op;
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "read-sweep",
    "Read throughput against block size, cold and warm",
    "Read throughput against block size, cold and warm",
    [1.0, 10.3, 900.0],
);

/// The part.
pub struct ReadSweep;

impl Kept for ReadSweep {
    type Result = SweepReport;
    const FIELD: Option<&'static str> = Some("read_sweep");
    const ALWAYS: bool = true;
}

impl PartView for ReadSweep {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|s| crate::report::views::sweep::read_section(s, env, PART))
    }

    fn summary_rank(&self) -> u8 {
        20
    }

    /// Its point at 1 MiB in each state, or where its level has none its nearest above
    /// (`results::study::answers`); its best block size stays in its section.
    fn reads(&self, r: &StudyReport) -> Vec<Measured> {
        let Some(s) = self.kept(r) else {
            return Vec::new();
        };
        [CacheState::Cold, CacheState::Warm]
            .into_iter()
            .filter_map(|state| {
                let p = s
                    .points
                    .iter()
                    .filter(|p| p.cache == Some(state) && p.block_size >= POOL_BLOCK)
                    .min_by_key(|p| p.block_size)?;
                Some(Measured {
                    part: PART,
                    what: format!("at {}", format_size(p.block_size)),
                    state,
                    block_size: p.block_size,
                    engine: s.engine.clone(),
                    first_after_eviction: false,
                    runs: p
                        .runs
                        .iter()
                        .map(|x| PooledRun::new(x.bytes_per_second(), Marks::from(x)))
                        .collect(),
                    left_out: unproven(state, &p.runs),
                })
            })
            .collect()
    }

    fn ok(&self, r: &StudyReport) -> bool {
        self.kept(r).is_none_or(|x| x.ok())
    }

    fn caveats<'a>(&self, r: &'a StudyReport) -> &'a [Caveat] {
        self.kept(r).map_or(&[], |x| &x.caveats)
    }

    fn measures(&self, media: &[Medium]) -> Vec<Measure> {
        crate::report::views::media_figures::read_sweep(media, PART)
    }
}

impl StudyPart for ReadSweep {
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let path = cx.scratch.path().to_path_buf();
        let r = cx.sweep(Op::Read, path, cx.states(), 1, cx.size)?;
        let r = something(r.points.is_empty() && !r.complete, r)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
