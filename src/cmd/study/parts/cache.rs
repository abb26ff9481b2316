//! cache: cold, warm and cold again at 4 KiB and 1 MiB, with residency and device bytes;
//! skipped where no block device is behind the directory.

use super::super::{Context, Kept, PartView, Outcome, StudyPart, StudyReport, ignore, something};
use crate::cmd::coldwarm::CacheReport;
use crate::harness::Setup;
use crate::engine;
use crate::measure::caveat::Caveat;
use crate::measure::env::Environment;
use crate::options::CacheOptions;
use crate::measure::cache::CacheState;
use crate::report::page::Section;
use crate::results::study::answers::{Measured, POOL_BLOCK, PooledRun, unproven};
use crate::warning::Marks;
use crate::report::views::media_figures::{Measure, Medium};
use crate::units::{KIB, MIB};
use crate::workload::study::Part;
use anyhow::Result;

/// Its names and seconds at each level.
pub const PART: Part = Part::new(
    "cache",
    "Cold against warm page cache",
    "Cold, warm, cold again, with residency and device bytes",
    [0.1, 0.6, 4.0],
);

/// The part.
pub struct Cache;

impl Kept for Cache {
    type Result = CacheReport;
    const FIELD: Option<&'static str> = Some("cache");
    const ALWAYS: bool = true;
}

impl PartView for Cache {
    fn part(&self) -> Part {
        PART
    }

    fn section(&self, r: &StudyReport, _env: &Environment) -> Option<Section> {
        self.kept(r)
            .map(|c| crate::report::views::cache::section(c, PART))
    }

    /// Its row at 1 MiB: the first cold read, the cold read again and the warm read.
    fn reads(&self, r: &StudyReport) -> Vec<Measured> {
        let Some(c) = self.kept(r) else {
            return Vec::new();
        };
        let Some(row) = c.rows.iter().find(|x| x.block_size == POOL_BLOCK) else {
            return Vec::new();
        };
        [
            (&row.cold, CacheState::Cold, "first cold read", true),
            (&row.cold_again, CacheState::Cold, "cold read again", false),
            (&row.warm, CacheState::Warm, "warm read", false),
        ]
        .into_iter()
        .map(|(sample, state, what, first)| Measured {
            part: PART,
            what: what.into(),
            state,
            block_size: row.block_size,
            engine: c.engine.clone(),
            first_after_eviction: first,
            runs: vec![PooledRun::new(sample.bytes_per_second(), Marks::from(sample))],
            left_out: unproven(state, [sample]),
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
        crate::report::views::media_figures::cache(media, PART)
    }
}

impl StudyPart for Cache {
    fn skip_reason(&self, cx: &Context) -> Option<String> {
        (!cx.has_device).then(|| format!(
            "no block device under {} (tmpfs or another memory file system): its pages cannot be evicted, so every read is a warm read",
            crate::text::printable_path(cx.dir)
        ))
    }

    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome> {
        let options = CacheOptions {
            path: cx.scratch.path().to_path_buf(),
            block_sizes: vec![4 * KIB, MIB],
            setup: Setup::single(&engine::stream::Stream),
            drop_caches: false,
            allow_unwritten: false,
            runs: crate::measure::converge::Stopping::fixed(1),
            export: cx.export(),
        };
        let r = crate::cmd::coldwarm::execute(&options, cx.harness, &mut ignore)?;
        let r = something(r.rows.is_empty() && !r.complete, r)?;
        let complete = r.complete;
        Ok(self.keep(report, r, complete))
    }
}
