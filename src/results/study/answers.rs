//! One answer per question: the cold (and the warm) read of the scratch file as every part
//! that measured it did, pooled into one figure — or, where the parts disagree beyond their
//! spreads by the one rule (`measure::verdict`), the range, which part gave which, and the
//! causes the runs carry. The parts say what they measured (`PartView::reads`); the rule that
//! pools them is here, on numbers, so the study's summary never shows one part's figure alone.
//!
//! What is pooled: reads of the scratch file in the cache state asked for, **proven** so by
//! every run's cache proof (residency before and device bytes; compare's contender by its
//! residency before), through the stream engine in calls of [`POOL_BLOCK`] — the block size
//! of every part's read of the file (cache, compare's `ioscope run -r 1m`, calibrate). The
//! read sweep gives its point at that size, or where its level has none (quick: 512 KiB and
//! 2 MiB) its nearest point above it, labelled with its own block size. A part whose runs are
//! not proven is left out, and the answer says so.

use crate::measure::cache::{CacheState, Verdict};
use crate::measure::pressure::Resource;
use crate::measure::stats::{Summary, summarize};
use crate::measure::verdict::{Figure, Relation, relate};
use crate::warning::Marks;
use crate::workload::study::Part;
use serde::Serialize;

/// The block size the study's answers pool at: 1 MiB.
pub const POOL_BLOCK: u64 = 1 << 20;

/// One timed run of a measurement, with what marks it as taken under interference.
#[derive(Debug, Clone, Serialize)]
pub struct PooledRun {
    /// Its rate, bytes per second.
    pub bytes_per_second: f64,
    /// Whether its interference was recorded (compare's contenders and calibrate's probes
    /// record none: no mark on them proves nothing).
    #[serde(skip)]
    pub recorded: bool,
    /// Bytes the device moved beyond the run's own, when clearly more.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub other_io_bytes: Option<u64>,
    /// The resources tasks on the machine stalled on beyond the rule during it, with the
    /// stalled share of its wall time.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub contended: Vec<(Resource, f64)>,
}

impl PooledRun {
    /// A run of `bytes_per_second` marked by `marks` (the harness's sample).
    pub fn new(bytes_per_second: f64, marks: Marks) -> Self {
        Self {
            bytes_per_second,
            recorded: true,
            other_io_bytes: marks.other_io_bytes,
            contended: marks.pressure.map_or(Vec::new(), |p| {
                crate::measure::interference::contended(&p, marks.own_device_bytes)
            }),
        }
    }

    /// A run whose interference was not recorded (compare's contenders).
    pub fn unmarked(bytes_per_second: f64) -> Self {
        Self {
            recorded: false,
            ..Self::new(bytes_per_second, Marks::default())
        }
    }
}

/// Why timed runs in `state` are not pooled: `None` when every run's cache proof says it
/// was proven so (residency before and device bytes), else how many were not.
pub fn unproven<'a>(
    state: CacheState,
    runs: impl IntoIterator<Item = &'a crate::harness::Sample>,
) -> Option<String> {
    let (mut n, mut not) = (0, 0);
    for s in runs {
        n += 1;
        if !s
            .cache
            .is_some_and(|p| p.asked == state && p.verdict == Verdict::Proven)
        {
            not += 1;
        }
    }
    (not > 0).then(|| {
        format!(
            "{not} of its {n} run(s) not proven {} by the residency before and the device bytes",
            state.name()
        )
    })
}

/// One part's measurement of a question: its runs in one cache state.
#[derive(Debug, Clone, Serialize)]
pub struct Measured {
    /// The part.
    pub part: Part,
    /// Which of its measurements (`at 1 MiB`, `first cold read`).
    pub what: String,
    /// The cache state.
    pub state: CacheState,
    /// Bytes per call.
    pub block_size: u64,
    /// The engine that read.
    pub engine: String,
    /// The first cold read after the file's pages were evicted (the cache part's first).
    pub first_after_eviction: bool,
    /// Its timed runs.
    pub runs: Vec<PooledRun>,
    /// Why it is not pooled (its state not proven); `None` when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_out: Option<String>,
}

impl Measured {
    /// The median and range of its runs (`None` without runs).
    pub fn figure(&self) -> Option<Summary> {
        let rates: Vec<f64> = self.runs.iter().map(|r| r.bytes_per_second).collect();
        summarize(&rates)
    }

    /// Whether its runs recorded their interference (other I/O, pressure).
    pub fn recorded(&self) -> bool {
        self.runs.iter().all(|r| r.recorded)
    }

    /// The part's name and which measurement: `cache (first cold read)`.
    pub fn label(&self) -> String {
        format!("{} ({})", self.part.name(), self.what)
    }
}

/// What the runs show about why the parts disagree.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "cause")]
pub enum Cause {
    /// Another process used the device during these runs of `who` (index in `parts`).
    OtherIo {
        /// The measurement.
        who: usize,
        /// The most bytes beyond a run's own.
        bytes: u64,
        /// How many of its runs were marked.
        runs: usize,
    },
    /// Tasks on the machine stalled on `resource` during these runs of `who`.
    Contended {
        /// The measurement.
        who: usize,
        /// The resource.
        resource: Resource,
        /// The largest stalled share of a run's wall time.
        share: f64,
        /// How many of its runs were stalled.
        runs: usize,
    },
    /// `who`, at one extreme, is the first cold read after an eviction, and a later cold read
    /// of the same part differs from it.
    FirstAfterEviction {
        /// The measurement.
        who: usize,
        /// The later cold read of the same part that differs from it.
        later: usize,
    },
    /// The lowest and the highest read in calls of different sizes.
    BlockSize {
        /// The lowest.
        low: usize,
        /// The highest.
        high: usize,
    },
    /// The lowest and the highest read through different engines.
    Engine {
        /// The lowest.
        low: usize,
        /// The highest.
        high: usize,
    },
}

/// The parts disagree: two of them stand apart by the one rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// The measurement with the lowest median (index in `parts`).
    pub low: usize,
    /// The one with the highest.
    pub high: usize,
    /// Highest median over lowest.
    pub ratio: f64,
    /// What the runs show, in the order found; empty when they show nothing.
    pub causes: Vec<Cause>,
}

/// One question's answer.
#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    /// Cold or warm.
    pub state: CacheState,
    /// Every run of the pooled measurements together (`None` when none is pooled).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pooled: Option<Summary>,
    /// The pooled measurements, in the order the parts ran.
    pub parts: Vec<Measured>,
    /// Those left out, with the reason in each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left_out: Vec<Measured>,
    /// Where the pooled parts stand apart.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disagreement: Option<Disagreement>,
}

impl Answer {
    /// Whether more than one measurement is pooled (else it is one part's figure, said so).
    pub fn is_pooled(&self) -> bool {
        self.parts.len() > 1
    }
}

/// The answer to "how fast is a read in `state`" from every measurement of it; `None` when
/// no part measured it.
pub fn answer(state: CacheState, measured: Vec<Measured>) -> Option<Answer> {
    let (mut parts, left_out): (Vec<Measured>, Vec<Measured>) = measured
        .into_iter()
        .filter(|m| m.state == state && !m.runs.is_empty())
        .partition(|m| m.left_out.is_none());
    if parts.is_empty() && left_out.is_empty() {
        return None;
    }
    parts.retain(|m| m.figure().is_some());
    let rates: Vec<f64> = parts
        .iter()
        .flat_map(|m| m.runs.iter().map(|r| r.bytes_per_second))
        .collect();
    let disagreement = disagreement(&parts);
    Some(Answer {
        state,
        pooled: summarize(&rates),
        parts,
        left_out,
        disagreement,
    })
}

/// The widest pair of measurements that stand apart by the one rule, with what their runs
/// show; `None` when every pair is the same or overlaps.
fn disagreement(parts: &[Measured]) -> Option<Disagreement> {
    let figures: Vec<Figure> = parts
        .iter()
        .map(|m| Figure::from(&m.figure().expect("pooled measurements have runs")))
        .collect();
    let mut widest: Option<(usize, usize, f64)> = None;
    for (i, a) in figures.iter().enumerate() {
        for (j, b) in figures.iter().enumerate() {
            if let Relation::Above(r) = relate(*a, *b)
                && widest.is_none_or(|(.., w)| r > w)
            {
                widest = Some((j, i, r));
            }
        }
    }
    let (low, high, ratio) = widest?;
    let mut causes = Vec::new();
    for (who, m) in parts.iter().enumerate() {
        let marked: Vec<u64> = m.runs.iter().filter_map(|r| r.other_io_bytes).collect();
        if let Some(&bytes) = marked.iter().max() {
            causes.push(Cause::OtherIo {
                who,
                bytes,
                runs: marked.len(),
            });
        }
        for resource in Resource::ALL {
            let shares: Vec<f64> = m
                .runs
                .iter()
                .filter_map(|r| r.contended.iter().find(|(x, _)| *x == resource))
                .map(|(_, s)| *s)
                .collect();
            if let Some(share) = shares.iter().copied().reduce(f64::max) {
                causes.push(Cause::Contended {
                    who,
                    resource,
                    share,
                    runs: shares.len(),
                });
            }
        }
    }
    // The first read after an eviction is a cause only where a later cold read of the same
    // part differs from it by the rule: otherwise it is as the others are.
    for who in [low, high] {
        let m = &parts[who];
        let later = parts.iter().enumerate().position(|(i, x)| {
            i != who
                && x.part == m.part
                && !x.first_after_eviction
                && relate(figures[who], figures[i]) != Relation::Same
        });
        if let Some(later) = later.filter(|_| m.first_after_eviction) {
            causes.push(Cause::FirstAfterEviction { who, later });
        }
    }
    if parts[low].block_size != parts[high].block_size {
        causes.push(Cause::BlockSize { low, high });
    }
    if parts[low].engine != parts[high].engine {
        causes.push(Cause::Engine { low, high });
    }
    Some(Disagreement {
        low,
        high,
        ratio,
        causes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: f64 = (1u64 << 20) as f64;
    const SWEEP: Part = Part::new("read-sweep", "", "", [0.0; 3]);
    const CACHE: Part = Part::new("cache", "", "", [0.0; 3]);
    const COMPARE: Part = Part::new("compare", "", "", [0.0; 3]);

    fn measured(part: Part, what: &str, mib_s: &[f64]) -> Measured {
        Measured {
            part,
            what: what.into(),
            state: CacheState::Cold,
            block_size: POOL_BLOCK,
            engine: "stream".into(),
            first_after_eviction: false,
            runs: mib_s
                .iter()
                .map(|&x| PooledRun::unmarked(x * MIB))
                .collect(),
            left_out: None,
        }
    }

    #[test]
    fn parts_that_agree_give_one_pooled_figure_over_every_run() {
        let a = answer(
            CacheState::Cold,
            vec![
                measured(SWEEP, "the point at 1 MiB", &[900.0, 950.0, 1000.0]),
                measured(CACHE, "the first cold read", &[960.0]),
                measured(COMPARE, "ioscope run -r 1m", &[920.0, 980.0, 1010.0]),
            ],
        )
        .expect("measured");
        let pooled = a.pooled.expect("runs");
        assert_eq!(pooled.n, 7);
        assert_eq!(pooled.median, 960.0 * MIB);
        assert_eq!((pooled.min, pooled.max), (900.0 * MIB, 1010.0 * MIB));
        assert!(a.disagreement.is_none());
        assert!(a.is_pooled());
    }

    #[test]
    fn parts_apart_beyond_their_spreads_disagree_and_name_the_extremes() {
        // The VM's study: the cache's first cold read 163, the sweep 906, compare 1464.
        let mut first = measured(CACHE, "the first cold read", &[163.0]);
        // (and the cache part's later cold read, 793, differs from it)
        first.first_after_eviction = true;
        first.runs[0].other_io_bytes = Some(498 << 20);
        let a = answer(
            CacheState::Cold,
            vec![
                measured(SWEEP, "the point at 1 MiB", &[880.0, 906.0, 930.0]),
                first,
                measured(CACHE, "the cold read again", &[793.0]),
                measured(COMPARE, "ioscope run -r 1m", &[1400.0, 1464.0, 1500.0]),
            ],
        )
        .expect("measured");
        let d = a.disagreement.expect("they stand apart");
        assert_eq!((d.low, d.high), (1, 3));
        assert!((d.ratio - 1464.0 / 163.0).abs() < 1e-9);
        assert_eq!(
            d.causes,
            vec![
                Cause::OtherIo {
                    who: 1,
                    bytes: 498 << 20,
                    runs: 1
                },
                Cause::FirstAfterEviction { who: 1, later: 2 }
            ]
        );
    }

    #[test]
    fn medians_apart_with_overlapping_runs_do_not_disagree() {
        let a = answer(
            CacheState::Cold,
            vec![
                measured(SWEEP, "the point at 1 MiB", &[500.0, 900.0, 1500.0]),
                measured(COMPARE, "ioscope run -r 1m", &[600.0, 1400.0, 1450.0]),
            ],
        )
        .expect("measured");
        assert!(a.disagreement.is_none(), "the runs overlap: no direction");
    }

    #[test]
    fn a_part_not_proven_cold_is_left_out_of_the_pool() {
        let mut warm_really = measured(CACHE, "the first cold read", &[9000.0]);
        warm_really.left_out = Some("not proven cold".into());
        let a = answer(
            CacheState::Cold,
            vec![
                measured(SWEEP, "the point at 1 MiB", &[900.0, 950.0]),
                warm_really,
            ],
        )
        .expect("measured");
        assert_eq!(a.parts.len(), 1);
        assert_eq!(a.left_out.len(), 1);
        assert_eq!(a.pooled.expect("runs").max, 950.0 * MIB);
        assert!(a.disagreement.is_none());
        assert!(!a.is_pooled());
    }

    #[test]
    fn a_different_block_size_or_engine_at_the_extremes_is_named() {
        let mut big = measured(SWEEP, "the point at 2 MiB", &[2000.0, 2100.0]);
        big.block_size = 2 << 20;
        big.engine = "mmap".into();
        let a = answer(
            CacheState::Cold,
            vec![big, measured(CACHE, "the cold read again", &[800.0])],
        )
        .expect("measured");
        let d = a.disagreement.expect("apart");
        assert_eq!((d.low, d.high), (1, 0));
        assert_eq!(
            d.causes,
            vec![
                Cause::BlockSize { low: 1, high: 0 },
                Cause::Engine { low: 1, high: 0 }
            ]
        );
    }

    #[test]
    fn no_part_that_measured_the_state_gives_no_answer() {
        assert!(answer(CacheState::Warm, vec![measured(SWEEP, "x", &[1.0])]).is_none());
    }
}
