//! What makes `mpi` comparable with IOR: each repeat's files written from empty (or reused,
//! as `ior -E`), the open, transfer and close of every rank placed on one clock (offsets to
//! rank 0 measured at a barrier), the aggregate by IOR's formula (all bytes over latest
//! close end minus earliest open start), and the read reordering shifted by a node's worth
//! of ranks (IOR's `-C`). Plain data and pure functions; the command calls them.

use crate::workload::Op;
use serde::{Deserialize, Serialize};

/// What a repeat's write starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepeatFiles {
    /// Every repeat's write starts from empty files (truncated to zero, the ranks agreeing
    /// at a barrier), as IOR deletes and recreates them each iteration.
    Recreated,
    /// Repeats after the first overwrite the files in place, as `ior -E`.
    Reused,
}

impl RepeatFiles {
    /// What documents from before this field did: overwrite in place.
    pub fn older() -> Self {
        RepeatFiles::Reused
    }

    /// The sentence the output says it with.
    pub fn sentence(self) -> &'static str {
        match self {
            RepeatFiles::Recreated => {
                "each repeat wrote new files (emptied at a barrier before its write), as IOR does"
            }
            RepeatFiles::Reused => {
                "repeats after the first overwrote the files in place, as `ior -E` (--reuse-files)"
            }
        }
    }
}

/// One rank's open, transfer and close in one repeat, on the common clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PhaseTimes {
    /// Seconds of the open() of the file.
    pub open_seconds: f64,
    /// Seconds of the transfer (the calls, and for writes their fsync).
    pub transfer_seconds: f64,
    /// Seconds of the close().
    pub close_seconds: f64,
    /// When the open started: seconds after the job's epoch on the common clock.
    pub start_seconds: f64,
    /// When the close ended: seconds after the job's epoch on the common clock.
    pub end_seconds: f64,
}

impl PhaseTimes {
    /// From this rank's real-time readings (its own clock): open start, open end, transfer
    /// end and close end; start and end still on this rank's clock until [`Clock::place`].
    pub fn from_readings(
        open_start: f64,
        open_end: f64,
        transfer_end: f64,
        close_end: f64,
    ) -> Self {
        Self {
            open_seconds: (open_end - open_start).max(0.0),
            transfer_seconds: (transfer_end - open_end).max(0.0),
            close_seconds: (close_end - transfer_end).max(0.0),
            start_seconds: open_start,
            end_seconds: close_end,
        }
    }
}

/// A rank's clock against rank 0's, measured at a barrier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockOffset {
    /// The rank.
    pub rank: usize,
    /// Its clock minus rank 0's (the median over the rounds), seconds.
    pub offset_seconds: f64,
    /// Half the spread of that difference over the rounds: how unevenly the barrier let
    /// the ranks go, the uncertainty of the offset.
    pub uncertainty_seconds: f64,
    /// Whether it was subtracted: only for a rank on another host than rank 0 (on rank 0's
    /// host there is one clock, and the measured offset is the barrier's unevenness alone).
    pub applied: bool,
}

/// The common clock: rank 0's, with every other host's offset to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// Rank 0's real-time clock (Unix seconds) when the offsets were measured: the zero of
    /// every start and end.
    pub epoch_unix_seconds: f64,
    /// How many barrier rounds measured the offsets.
    pub rounds: usize,
    /// Every rank's offset, in rank order.
    pub offsets: Vec<ClockOffset>,
}

impl Clock {
    /// The largest uncertainty of an applied offset, or of the barrier on one host.
    pub fn uncertainty_seconds(&self) -> f64 {
        self.offsets
            .iter()
            .map(|o| o.uncertainty_seconds)
            .fold(0.0, f64::max)
    }

    /// Puts `rank`'s own-clock readings on the common clock, relative to the epoch.
    pub fn place(&self, rank: usize, times: PhaseTimes) -> PhaseTimes {
        let offset = self
            .offsets
            .get(rank)
            .filter(|o| o.applied)
            .map_or(0.0, |o| o.offset_seconds);
        PhaseTimes {
            start_seconds: times.start_seconds - offset - self.epoch_unix_seconds,
            end_seconds: times.end_seconds - offset - self.epoch_unix_seconds,
            ..times
        }
    }

    /// The offsets from each round's readings (`rounds[i][r]`: rank r's clock right after
    /// barrier i), applied for the ranks whose host differs from rank 0's.
    pub fn from_rounds(rounds: &[Vec<f64>], hosts: &[String]) -> Self {
        let ranks = rounds.first().map_or(0, Vec::len);
        let offsets = (0..ranks)
            .map(|r| {
                let mut d: Vec<f64> = rounds.iter().map(|round| round[r] - round[0]).collect();
                d.sort_by(f64::total_cmp);
                let median = d[d.len() / 2];
                let spread = d[d.len() - 1] - d[0];
                ClockOffset {
                    rank: r,
                    offset_seconds: median,
                    uncertainty_seconds: spread / 2.0,
                    applied: hosts.get(r) != hosts.first(),
                }
            })
            .collect();
        Self {
            epoch_unix_seconds: rounds
                .first()
                .and_then(|r| r.first())
                .copied()
                .unwrap_or(0.0),
            rounds: rounds.len(),
            offsets,
        }
    }
}

/// Whose data each rank reads, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reorder {
    /// Rank r reads the segment of rank (r + shift) mod ranks.
    pub shift: usize,
    /// Ranks on rank 0's host (IOR's tasks per node).
    pub ranks_on_first_host: usize,
    /// Whether ranks are packed by host (rank 1 on rank 0's host: IOR shifts by a node's
    /// worth of ranks) rather than placed round-robin (IOR shifts by one).
    pub packed: bool,
    /// Whether IOR's shift came round to each rank's own data (every rank on one host), so
    /// the next rank's data is read instead.
    pub wrapped: bool,
}

impl Reorder {
    /// IOR's `-C` for ranks on `hosts` (in rank order): shift by the ranks on rank 0's host
    /// when ranks are packed by host, by one when round-robin; a shift that wraps to a
    /// rank's own data (one host) reads the next rank's instead.
    pub fn of_hosts(hosts: &[String]) -> Self {
        let ranks = hosts.len();
        let on_first = hosts.iter().filter(|h| Some(*h) == hosts.first()).count();
        let packed = ranks > 1 && hosts[1] == hosts[0];
        let ior = if packed { on_first } else { 1 };
        let wrapped = ranks > 1 && ior % ranks == 0;
        Self {
            shift: if ranks <= 1 {
                0
            } else if wrapped {
                1
            } else {
                ior % ranks
            },
            ranks_on_first_host: on_first,
            packed,
            wrapped,
        }
    }

    /// The rank whose segment `rank` reads.
    pub fn source(&self, rank: usize, ranks: usize) -> usize {
        (rank + self.shift) % ranks.max(1)
    }
}

/// A phase that failed on some ranks after others' results were in: what the report keeps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedPhase {
    /// The phase that failed.
    pub op: Op,
    /// Its repeat, from 1.
    pub repeat: usize,
    /// One line per failed rank (`rank 2 on host X: ...`).
    pub errors: Vec<String>,
}

/// Files an earlier run left with `--keep`, and how to read them back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// The name the files share (`--existing NAME` reads them back).
    pub name: String,
    /// Every file, as named in DIR.
    pub files: Vec<String>,
    /// The seed of their data (`--seed`).
    pub seed: u64,
}

/// All bytes over (latest close end − earliest open start): IOR's aggregate of one repeat,
/// with that time; `None` without every rank's times.
pub fn ior_aggregate<'a>(
    total_bytes: u64,
    times: impl IntoIterator<Item = Option<&'a PhaseTimes>>,
) -> Option<(f64, f64)> {
    let mut first = f64::INFINITY;
    let mut last = f64::NEG_INFINITY;
    for t in times {
        let t = t?;
        first = first.min(t.start_seconds);
        last = last.max(t.end_seconds);
    }
    let seconds = last - first;
    (seconds.is_finite() && seconds > 0.0).then(|| (seconds, total_bytes as f64 / seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn ranks_packed_two_per_host_read_the_data_of_the_rank_two_along_as_ior_c_does() {
        let r = Reorder::of_hosts(&hosts(&["a", "a", "b", "b"]));
        assert_eq!((r.shift, r.packed, r.wrapped), (2, true, false));
        assert_eq!(r.source(0, 4), 2);
        assert_eq!(r.source(3, 4), 1);
    }

    #[test]
    fn ranks_placed_round_robin_read_the_next_rank_which_is_on_another_host() {
        let r = Reorder::of_hosts(&hosts(&["a", "b", "a", "b"]));
        assert_eq!((r.shift, r.packed, r.wrapped), (1, false, false));
        assert_eq!(r.ranks_on_first_host, 2);
    }

    #[test]
    fn on_one_host_the_shift_wraps_to_a_ranks_own_data_so_the_next_rank_is_read_and_said() {
        let r = Reorder::of_hosts(&hosts(&["a", "a", "a"]));
        assert_eq!((r.shift, r.wrapped, r.ranks_on_first_host), (1, true, 3));
        assert_eq!(r.source(2, 3), 0);
        let one = Reorder::of_hosts(&hosts(&["a"]));
        assert_eq!((one.shift, one.wrapped), (0, false));
    }

    #[test]
    fn the_ior_aggregate_spans_the_earliest_open_start_to_the_latest_close_end() {
        // The slowest rank's own time (3 s) is not IOR's span (0.5 to 4.0 s).
        let a = PhaseTimes::from_readings(0.5, 0.6, 3.5, 3.6);
        let b = PhaseTimes::from_readings(1.0, 1.1, 3.9, 4.0);
        assert!((a.transfer_seconds - 2.9).abs() < 1e-9);
        let (seconds, rate) = ior_aggregate(700, [Some(&a), Some(&b)]).expect("all times");
        assert!((seconds - 3.5).abs() < 1e-9, "{seconds}");
        assert!((rate - 200.0).abs() < 1e-9, "{rate}");
        assert_eq!(ior_aggregate(700, [Some(&a), None]), None);
    }

    #[test]
    fn offsets_are_medians_over_rounds_applied_only_to_ranks_on_another_host() {
        // Rank 1 shares rank 0's host (skew only); rank 2 runs 5 s ahead on another host.
        let rounds = vec![
            vec![100.0, 100.000_010, 105.000_020],
            vec![101.0, 101.000_030, 106.000_000],
            vec![102.0, 102.000_020, 107.000_010],
        ];
        let clock = Clock::from_rounds(&rounds, &hosts(&["a", "a", "b"]));
        assert_eq!(clock.epoch_unix_seconds, 100.0);
        let o = &clock.offsets;
        assert!(!o[0].applied && !o[1].applied && o[2].applied);
        assert!((o[1].offset_seconds - 0.000_020).abs() < 1e-9);
        assert!((o[1].uncertainty_seconds - 0.000_010).abs() < 1e-9);
        assert!((o[2].offset_seconds - 5.000_010).abs() < 1e-6);
        let placed = clock.place(2, PhaseTimes::from_readings(106.0, 106.1, 107.0, 107.1));
        assert!((placed.start_seconds - 0.999_99).abs() < 1e-6, "{placed:?}");
        let same = clock.place(1, PhaseTimes::from_readings(101.0, 101.1, 102.0, 102.1));
        assert!((same.start_seconds - 1.0).abs() < 1e-9, "{same:?}");
        assert!(clock.uncertainty_seconds() >= o[2].uncertainty_seconds);
    }
}
