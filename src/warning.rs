//! Warnings as data: what went wrong or deserves attention, with the figures. Their words
//! (naming the cause and the fix) are written in `report/` only.

use crate::measure::cache::CacheProof;
use crate::measure::checks::Check;
use serde::{Deserialize, Serialize};

/// Something the reader of a result should know.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Warning {
    /// What ioscope claims and what the kernel counted disagree.
    KernelMismatch {
        /// Where in the result (e.g. `read at 4 KiB, cold`), if not the only run.
        at: Option<String>,
        /// The comparison that failed.
        check: Check,
    },
    /// A run did not start in the cache state it asked for.
    CacheState {
        /// Where in the result.
        at: Option<String>,
        /// The proof that failed.
        proof: CacheProof,
        /// The user kept figures over unwritten extents or holes (`--allow-unwritten`).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        allowed: bool,
    },
    /// The engine's calls are not the kind /proc/self/io counts, so they are not checked.
    NotCounted {
        /// The engine.
        engine: String,
    },
    /// A calibrated size larger than RAM, read warm: partly from the device.
    WarmLargerThanRam {
        /// The size found.
        size: u64,
        /// RAM.
        ram: u64,
    },
    /// A calibrated size larger than RAM, read cold: right, but never readable warm.
    ColdLargerThanRam {
        /// The size found.
        size: u64,
        /// RAM.
        ram: u64,
    },
    /// A size calibrated warm: a cold read of it may take longer.
    CalibratedWarm,
    /// A size calibrated cold that fits in RAM: it must be evicted before every cold run.
    ColdFitsInRam {
        /// The size found.
        size: u64,
        /// RAM.
        ram: u64,
    },
    /// The work was interrupted; the result holds what was measured before.
    Partial,
    /// A read of BLOCK_COUNT blocks found the end of its input first: its figures are of
    /// fewer bytes than asked.
    ShortRead {
        /// The input, as named.
        file: String,
        /// Bytes read before the end.
        read: u64,
        /// Bytes per block asked for.
        block_size: u64,
        /// Blocks asked for.
        block_count: u64,
    },
    /// The repeats of a measurement disagree beyond the spread rule
    /// ([`crate::measure::verdict::SCATTERED`]): its median is uncertain by more than the
    /// differences the sentences compare. The worst one is named, and how many others.
    Scattered {
        /// Which measurement (e.g. `warm at 4k`).
        at: String,
        /// Its slowest repeat, bytes per second.
        min: f64,
        /// Its median, bytes per second.
        median: f64,
        /// Its fastest repeat, bytes per second.
        max: f64,
        /// How many repeats.
        runs: usize,
        /// How many other measurements of the result scatter as well.
        others: usize,
    },
    /// A point repeated until stable ran out of budget (`--max-runs`, `--max-time`) before
    /// its median's 95% interval came within the precision asked
    /// ([`crate::measure::converge`]): its figure is less certain than asked. The widest is
    /// named, and how many others.
    Unsettled {
        /// Which point (e.g. `warm at 4 KiB`).
        at: String,
        /// Its interval's relative half-width (`None`: one run, no interval).
        half_width: Option<f64>,
        /// The half-width asked.
        precision: f64,
        /// How many runs it got.
        runs: usize,
        /// How many other points of the result did not settle either.
        others: usize,
    },
    /// Entries of the directories given to send that are neither regular files nor
    /// directories (symlinks, FIFOs, sockets, devices): left out.
    LeftOut {
        /// How many.
        count: usize,
        /// The first, as found.
        first: String,
    },
    /// A file grew while it was sent: the receiver has the bytes it held when sending
    /// began, as its header announced.
    Grew {
        /// The file, by the name it was sent under.
        file: String,
    },
    /// `disk`'s read rows ran over holes or unwritten extents before any write row filled
    /// them: the file system made up zeros, the device read nothing.
    Holes {
        /// Bytes of holes and unwritten extents before the first row.
        bytes: u64,
        /// The file's size.
        of: u64,
        /// The read rows that measured them (`SEQ1M Q8T1 read`).
        rows: Vec<String>,
    },
    /// The device moved clearly more than the runs did during them
    /// ([`crate::measure::interference::other_io`]): another process used it, and the
    /// figures were taken under interference. The run with the most is named.
    OtherIo {
        /// Which run (e.g. `cold at 1 MiB`); `None` for a command's only run.
        at: Option<String>,
        /// Bytes beyond that run's own.
        bytes: u64,
        /// How many runs were marked.
        runs: usize,
        /// Of how many timed runs.
        of: usize,
    },
    /// Tasks on the machine waited for a resource during at least
    /// [`crate::measure::verdict::STALLED`] of a run (`/proc/pressure`): the figure was
    /// taken under interference. The most stalled run is named.
    Contended {
        /// The resource.
        resource: crate::measure::pressure::Resource,
        /// Which run; `None` for a command's only run.
        at: Option<String>,
        /// Its stalled share of the wall time (0 to 1).
        share: f64,
        /// How many runs were stalled on it beyond the threshold.
        runs: usize,
        /// Of how many timed runs.
        of: usize,
    },
}

/// What marks one timed run as taken under interference.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Marks {
    /// Bytes the device moved beyond the run's own, when clearly more.
    pub other_io_bytes: Option<u64>,
    /// Stalls over the run.
    pub pressure: Option<crate::measure::pressure::Pressure>,
    /// Bytes the run itself fetched from or sent to the device (`/proc/self/io`).
    pub own_device_bytes: u64,
}

impl From<&crate::harness::Sample> for Marks {
    fn from(s: &crate::harness::Sample) -> Self {
        Self {
            other_io_bytes: s.other_io_bytes,
            pressure: s.pressure,
            own_device_bytes: s.kernel.map_or(0, |k| k.read_bytes + k.write_bytes),
        }
    }
}

impl Marks {
    /// Whether these marks say the run was taken under interference.
    pub fn interfered(&self) -> bool {
        crate::measure::interference::marked(
            self.other_io_bytes,
            self.pressure.as_ref(),
            self.own_device_bytes,
        )
    }
}

/// The interference warnings of a command's timed runs (`at` naming each run, `None` for a
/// command's only one): one [`Warning::OtherIo`] for the runs the device served others
/// during, one [`Warning::Contended`] per resource stalled on; the worst run named, the rest
/// counted. Nothing when no run was marked.
pub fn interference(marks: impl IntoIterator<Item = (Option<String>, Marks)>) -> Vec<Warning> {
    use crate::measure::interference::contended;
    use crate::measure::pressure::Resource;
    let mut of = 0;
    let mut other: Option<(Option<String>, u64)> = None;
    let mut other_runs = 0;
    let mut stalled: Vec<(Resource, Option<String>, f64, usize)> = Vec::new();
    for (at, s) in marks {
        of += 1;
        if let Some(bytes) = s.other_io_bytes {
            other_runs += 1;
            if other.as_ref().is_none_or(|(_, b)| bytes > *b) {
                other = Some((at.clone(), bytes));
            }
        }
        let own = s.own_device_bytes;
        for (resource, share) in s.pressure.map_or(Vec::new(), |p| contended(&p, own)) {
            match stalled.iter_mut().find(|(r, ..)| *r == resource) {
                Some(worst) => {
                    worst.3 += 1;
                    if share > worst.2 {
                        (worst.1, worst.2) = (at.clone(), share);
                    }
                }
                None => stalled.push((resource, at.clone(), share, 1)),
            }
        }
    }
    let mut out: Vec<Warning> = other
        .map(|(at, bytes)| Warning::OtherIo {
            at,
            bytes,
            runs: other_runs,
            of,
        })
        .into_iter()
        .collect();
    stalled.sort_by_key(|(r, ..)| Resource::ALL.iter().position(|x| x == r));
    out.extend(
        stalled
            .into_iter()
            .map(|(resource, at, share, runs)| Warning::Contended {
                resource,
                at,
                share,
                runs,
                of,
            }),
    );
    out
}

/// One [`Warning::Scattered`] for the measurements whose repeats scatter beyond the rule:
/// the widest named, the rest counted. `None` when none does.
pub fn scattered<'a>(
    figures: impl IntoIterator<Item = (String, &'a crate::measure::stats::Summary)>,
) -> Option<Warning> {
    use crate::measure::verdict::{Figure, scattered};
    let wide: Vec<(String, &crate::measure::stats::Summary)> = figures
        .into_iter()
        .filter(|(_, s)| scattered(Figure::from(*s)))
        .collect();
    let (at, worst) = wide
        .iter()
        .max_by(|a, b| (a.1.max / a.1.min.max(1e-12)).total_cmp(&(b.1.max / b.1.min.max(1e-12))))?;
    Some(Warning::Scattered {
        at: at.clone(),
        min: worst.min,
        median: worst.median,
        max: worst.max,
        runs: worst.n,
        others: wide.len() - 1,
    })
}

/// One [`Warning::Unsettled`] for the points whose repeats ran out of budget before they
/// were stable: the widest named, the rest counted. `None` when every point settled, or
/// none was repeated until stable.
pub fn unsettled(
    points: impl IntoIterator<Item = (String, Option<crate::measure::converge::Settled>, usize)>,
    precision: f64,
) -> Option<Warning> {
    let open: Vec<(String, Option<f64>, usize)> = points
        .into_iter()
        .filter_map(|(at, s, n)| s.filter(|s| !s.settled).map(|s| (at, s.half_width, n)))
        .collect();
    let width = |w: Option<f64>| w.unwrap_or(f64::INFINITY);
    let (at, half_width, runs) = open
        .iter()
        .max_by(|a, b| width(a.1).total_cmp(&width(b.1)))?
        .clone();
    Some(Warning::Unsettled {
        at,
        half_width,
        precision,
        runs,
        others: open.len() - 1,
    })
}

/// The spread warning of repeated points, each `(at, its summary, how it settled, runs)`:
/// repeated until stable (`until_stable`), the widest that the budget stopped before it
/// settled ([`unsettled`]); a fixed count, those whose runs scatter ([`scattered`]).
pub fn spread<'a>(
    until_stable: Option<crate::measure::converge::Stopping>,
    points: impl IntoIterator<
        Item = (
            String,
            &'a crate::measure::stats::Summary,
            Option<crate::measure::converge::Settled>,
            usize,
        ),
    >,
) -> Option<Warning> {
    let points = points.into_iter();
    match until_stable {
        Some(stop) => unsettled(points.map(|(at, _, s, n)| (at, s, n)), stop.precision),
        None => scattered(points.map(|(at, summary, ..)| (at, summary))),
    }
}

/// The warnings a run's checks and cache proof give, `at` naming the run.
pub fn of_sample(sample: &crate::harness::Sample, at: Option<String>) -> Vec<Warning> {
    let mut out: Vec<Warning> = sample
        .checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| Warning::KernelMismatch {
            at: at.clone(),
            check: c.clone(),
        })
        .collect();
    if let Some(proof) = sample.cache.filter(|p| !p.ok()) {
        out.push(Warning::CacheState {
            at,
            proof,
            allowed: false,
        });
    }
    out
}

/// Replaces the interference warnings in `warnings` with `fresh` (a command that says them
/// after every row, over all rows so far, keeps one set).
pub fn set_interference(warnings: &mut Vec<Warning>, fresh: Vec<Warning>) {
    warnings.retain(|w| !matches!(w, Warning::OtherIo { .. } | Warning::Contended { .. }));
    warnings.extend(fresh);
}

/// Marks the cache-state warnings as kept by `--allow-unwritten` (`allow`): their text then
/// says the figure was kept as asked instead of suggesting the flag.
pub fn allowing_unwritten(warnings: &mut [Warning], allow: bool) {
    for w in warnings {
        if let Warning::CacheState { allowed, .. } = w {
            *allowed = allow;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::pressure::{Pressure, Resource, Stall};

    const MIB: u64 = 1 << 20;

    fn cpu(share: f64) -> Option<Pressure> {
        Some(Pressure {
            cpu: Some(Stall {
                // Over a run of one second.
                stalled_us: (share * 1e6) as u64,
                share,
                avg10: 0.0,
            }),
            ..Pressure::default()
        })
    }

    fn marks(other_io_bytes: Option<u64>, pressure: Option<Pressure>) -> Marks {
        Marks {
            other_io_bytes,
            pressure,
            own_device_bytes: 256 * MIB,
        }
    }

    #[test]
    fn marked_runs_give_one_warning_each_naming_the_worst_and_counting_the_rest() {
        let runs = [
            (
                Some("cold at 1 MiB".to_string()),
                marks(Some(2 * MIB), cpu(0.25)),
            ),
            (
                Some("cold at 4 MiB".to_string()),
                marks(Some(498 * MIB), None),
            ),
            (Some("warm at 1 MiB".to_string()), marks(None, cpu(0.6))),
            (Some("warm at 4 MiB".to_string()), marks(None, cpu(0.05))),
        ];
        assert_eq!(
            interference(runs),
            vec![
                Warning::OtherIo {
                    at: Some("cold at 4 MiB".into()),
                    bytes: 498 * MIB,
                    runs: 2,
                    of: 4
                },
                Warning::Contended {
                    resource: Resource::Cpu,
                    at: Some("warm at 1 MiB".into()),
                    share: 0.6,
                    runs: 2,
                    of: 4
                },
            ]
        );
    }

    #[test]
    fn quiet_runs_and_runs_without_a_device_or_pressure_files_give_nothing() {
        let runs = [(None, marks(None, cpu(0.1))), (None, Marks::default())];
        assert!(interference(runs).is_empty());
    }

    #[test]
    fn interference_said_after_every_row_is_said_once() {
        let mut warnings = vec![Warning::Partial];
        let one = interference([(None, marks(Some(9 * MIB), None))]);
        set_interference(&mut warnings, one.clone());
        set_interference(&mut warnings, one.clone());
        assert_eq!(warnings.len(), 2);
        assert_eq!(warnings[1], one[0]);
    }
}
