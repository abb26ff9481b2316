//! When each I/O of an open-loop row is meant to start: arrivals at a fixed rate, evenly
//! spaced (`uniform`, fio's `rate_process=linear`, wrk2's) or as a Poisson process
//! (`poisson`: exponential gaps of the same mean, as independent clients arrive). The
//! schedule is drawn ahead of the clock and never waits for the device: a stalled device
//! makes I/Os late, it does not move their intended start (the fix for "coordinated
//! omission" that wrk2 and HdrHistogram made for request benchmarks).

use serde::{Deserialize, Serialize};

/// How arrivals are spaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly spaced: one I/O every 1/rate seconds.
    Uniform,
    /// A Poisson process: gaps drawn from the exponential distribution of mean 1/rate.
    Poisson,
}

impl Arrivals {
    /// `uniform` or `poisson`.
    pub fn name(self) -> &'static str {
        match self {
            Arrivals::Uniform => "uniform",
            Arrivals::Poisson => "poisson",
        }
    }
}

/// A rate asked of an open-loop row.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Pace {
    /// I/Os per second asked of the whole row (all its threads).
    pub iops: f64,
    /// How they are spaced.
    pub arrivals: Arrivals,
}

/// The intended starts of one thread's I/Os, in nanoseconds from the thread's origin.
#[derive(Debug, Clone)]
pub struct Schedule {
    arrivals: Arrivals,
    /// Mean gap, nanoseconds.
    gap_ns: f64,
    /// The next intended start, nanoseconds (kept in f64: a gap of 333.3 ns does not drift).
    next_ns: f64,
    /// The state of the Poisson draws.
    state: u64,
}

impl Schedule {
    /// A thread's share `iops` of a row's rate; `phase` (0 to 1) offsets its first arrival
    /// by that fraction of a gap, so the threads of a uniform row interleave instead of
    /// arriving together; `seed` draws a Poisson row's gaps.
    pub fn new(arrivals: Arrivals, iops: f64, phase: f64, seed: u64) -> Self {
        let gap_ns = 1e9 / iops.max(1e-9);
        Self {
            arrivals,
            gap_ns,
            next_ns: match arrivals {
                Arrivals::Uniform => gap_ns * phase.clamp(0.0, 1.0),
                Arrivals::Poisson => 0.0,
            },
            state: seed,
        }
        .primed()
    }

    /// A Poisson schedule's first arrival is a draw too (else every row starts with one).
    fn primed(mut self) -> Self {
        if self.arrivals == Arrivals::Poisson {
            self.next_ns = self.draw();
        }
        self
    }

    /// An exponential gap of mean `gap_ns` (inverse transform of a uniform in (0, 1]).
    fn draw(&mut self) -> f64 {
        self.state = self.state.wrapping_add(1);
        let bits = super::data::splitmix(self.state, 0xa771_7a15) >> 11;
        // (bits + 1) / 2^53 is in (0, 1]: its logarithm is finite.
        let u = (bits + 1) as f64 / (1u64 << 53) as f64;
        -u.ln() * self.gap_ns
    }

    /// The intended start of the next I/O, nanoseconds from the origin, and moves on.
    #[inline]
    pub fn next_start(&mut self) -> u64 {
        let at = self.next_ns;
        self.next_ns += match self.arrivals {
            Arrivals::Uniform => self.gap_ns,
            Arrivals::Poisson => self.draw(),
        };
        at as u64
    }

    /// The mean gap, nanoseconds.
    pub fn gap_ns(&self) -> f64 {
        self.gap_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_arrivals_are_evenly_spaced_from_their_phase() {
        let mut s = Schedule::new(Arrivals::Uniform, 1000.0, 0.5, 1);
        let got: Vec<u64> = (0..4).map(|_| s.next_start()).collect();
        assert_eq!(got, [500_000, 1_500_000, 2_500_000, 3_500_000]);
    }

    #[test]
    fn a_uniform_gap_that_is_not_a_whole_nanosecond_does_not_drift() {
        let mut s = Schedule::new(Arrivals::Uniform, 3e6, 0.0, 1);
        let last = (0..3_000_001).map(|_| s.next_start()).last().unwrap();
        // The 3,000,001st arrival is at exactly one second.
        assert!((last as i64 - 1_000_000_000).abs() <= 1, "{last}");
    }

    #[test]
    fn poisson_gaps_have_the_mean_and_the_spread_of_the_exponential() {
        let mut s = Schedule::new(Arrivals::Poisson, 10_000.0, 0.0, 7);
        let n = 200_000;
        let mut prev = 0u64;
        let (mut sum, mut sq, mut over_three_means) = (0.0, 0.0, 0u64);
        for _ in 0..n {
            let at = s.next_start();
            let gap = (at - prev) as f64;
            prev = at;
            sum += gap;
            sq += gap * gap;
            if gap > 3.0 * 100_000.0 {
                over_three_means += 1;
            }
        }
        let mean = sum / n as f64;
        let sd = (sq / n as f64 - mean * mean).sqrt();
        // Exponential: sd = mean, P(gap > 3 means) = e^-3 = 4.98%.
        assert!((mean / 100_000.0 - 1.0).abs() < 0.01, "mean {mean}");
        assert!(
            (sd / mean - 1.0).abs() < 0.02,
            "sd {sd} against mean {mean}"
        );
        let tail = over_three_means as f64 / n as f64;
        assert!((tail - (-3.0f64).exp()).abs() < 0.003, "tail {tail}");
    }

    #[test]
    fn the_same_seed_draws_the_same_poisson_schedule_and_another_seed_another() {
        let draw = |seed| {
            let mut s = Schedule::new(Arrivals::Poisson, 500.0, 0.0, seed);
            (0..50).map(|_| s.next_start()).collect::<Vec<_>>()
        };
        assert_eq!(draw(3), draw(3));
        assert_ne!(draw(3), draw(4));
    }
}
