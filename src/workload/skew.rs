//! Skewed random offsets (`--dist`, fio's `random_distribution`): which block index each
//! random I/O visits under a zipf, pareto, normal or uniform law, the theoretical share of
//! draws on the hottest 10% of blocks, and a counter that measures the share achieved.
//!
//! The parameters mean what they mean to fio: `zipf:θ` (θ > 0, not 1), `pareto:h` (h in
//! (0, 1); h = 0.9 sends 90% of the I/O to the hottest 10% of blocks) and `normal:σ` (σ in
//! percent of the range, as fio's manual describes it). Where this module departs from fio,
//! it does so to make the measured share comparable with the theoretical one:
//! - zipf is drawn exactly (Hörmann and Derflinger's rejection-inversion), not with the
//!   approximation of Gray et al. that fio uses, so the draws follow the law the
//!   theoretical share is summed over;
//! - zipf and pareto ranks are scattered over the blocks by a bijection of `0..blocks`
//!   (a keyed mix on the next power of two, walked until it lands inside), where fio takes
//!   `hash(rank) % blocks`, which merges ranks; the hottest 10% of ranks is then exactly some
//!   10% of the blocks. The scatter depends on `blocks` only, not on the seed, so threads
//!   that draw with different seeds share one hot set;
//! - normal is a true Gaussian centred in the middle of the range, redrawn when it falls
//!   outside, and not scattered: a hot band in the middle (fio averages 12 uniform draws,
//!   adds a uniform jitter of `σ`% and hashes the result);
//! - pareto ranks use all `blocks` (fio scales by `blocks - 1`, and never draws the last).

use super::data::splitmix;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A law for the block index of random I/O.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dist {
    /// Every block equally likely.
    Uniform,
    /// Rank `r` (from 1) drawn with probability proportional to `r^-θ`.
    Zipf {
        /// The exponent θ: above 0 and not 1.
        theta: f64,
    },
    /// fio's pareto: a share `h` of the draws on the hottest `1 - h` of the blocks.
    Pareto {
        /// The share h: between 0 and 1, both excluded.
        h: f64,
    },
    /// A Gaussian centred in the middle of the range.
    Normal {
        /// The standard deviation in percent of the range: above 0 and below 100.
        sigma_percent: f64,
    },
}

/// The forms `--dist` accepts, for error messages.
const FORMS: &str = "uniform, zipf:θ, pareto:h or normal:σ%";

/// Blocks up to which the zipf normalisation is summed term by term.
const ZETA_EXACT: u64 = 4096;

impl FromStr for Dist {
    type Err = String;

    /// `uniform` (or fio's `random`), `zipf:1.2`, `pareto:0.9`, `normal:5`.
    fn from_str(s: &str) -> Result<Self, String> {
        let (name, value) = match s.split_once(':') {
            Some((name, value)) => (name, Some(value)),
            None => (s, None),
        };
        let number = |what: &str, example: &str| -> Result<f64, String> {
            let value = value.ok_or_else(|| format!("--dist {s}: needs {what}, as {example}"))?;
            value
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("--dist {s}: {what} must be a number, as {example}"))
        };
        match name {
            "uniform" | "random" => match value {
                None => Ok(Dist::Uniform),
                Some(_) => Err(format!("--dist {s}: uniform takes no parameter")),
            },
            "zipf" => {
                let theta = number("θ", "zipf:1.2")?;
                if theta > 0.0 && theta != 1.0 {
                    Ok(Dist::Zipf { theta })
                } else {
                    Err(format!(
                        "--dist {s}: θ must be above 0 and not 1 (fio's zipf: 1.2 is common)"
                    ))
                }
            }
            "pareto" => {
                let h = number("h", "pareto:0.9")?;
                if h > 0.0 && h < 1.0 {
                    Ok(Dist::Pareto { h })
                } else {
                    Err(format!(
                        "--dist {s}: h must be between 0 and 1, both excluded \
                         (pareto:0.9 sends 90% of the I/O to 10% of the blocks)"
                    ))
                }
            }
            "normal" => {
                let sigma_percent = number("σ", "normal:5")?;
                if sigma_percent > 0.0 && sigma_percent < 100.0 {
                    Ok(Dist::Normal { sigma_percent })
                } else {
                    Err(format!(
                        "--dist {s}: σ is a percent of the range, above 0 and below 100 \
                         (normal:5)"
                    ))
                }
            }
            _ => Err(format!("--dist '{s}': expected {FORMS}")),
        }
    }
}

impl fmt::Display for Dist {
    /// The form `--dist` takes: `uniform`, `zipf:1.2`, `pareto:0.9`, `normal:5`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Uniform => write!(f, "uniform"),
            Dist::Zipf { theta } => write!(f, "zipf:{theta}"),
            Dist::Pareto { h } => write!(f, "pareto:{h}"),
            Dist::Normal { sigma_percent } => write!(f, "normal:{sigma_percent}"),
        }
    }
}

/// The hottest 10% of `blocks`: `ceil(blocks / 10)`, at least 1.
pub fn hot_blocks(blocks: u64) -> u64 {
    blocks.div_ceil(10).max(1)
}

impl Dist {
    /// The theoretical share of draws that land on the hottest 10% of `blocks`
    /// ([`hot_blocks`]).
    pub fn hot_share(&self, blocks: u64) -> f64 {
        let n = blocks.max(1);
        let k = hot_blocks(n);
        match *self {
            Dist::Uniform => k as f64 / n as f64,
            Dist::Zipf { theta } => harmonic(k, theta) / harmonic(n, theta),
            Dist::Pareto { h } => {
                // Rank floor(n·u^p) is below k when u < (k/n)^(1/p): the density is
                // monotone, so the hottest k ranks are the lowest or the highest k.
                let e = 1.0 / pareto_power(h);
                let low = (k as f64 / n as f64).powf(e);
                let high = 1.0 - ((n - k) as f64 / n as f64).powf(e);
                low.max(high)
            }
            Dist::Normal { sigma_percent } => {
                // Block i holds the draws in [i, i+1): the hottest k blocks are the k in
                // the middle.
                let (c, s) = (n as f64 / 2.0, sigma_percent / 100.0 * n as f64);
                let mass = |a: f64, b: f64| phi((b - c) / s) - phi((a - c) / s);
                let lo = ((n - k) / 2) as f64;
                mass(lo, lo + k as f64) / mass(0.0, n as f64)
            }
        }
    }
}

/// fio's pareto exponent: a rank is `blocks · u^p` with `p = ln h / ln(1 - h)`.
fn pareto_power(h: f64) -> f64 {
    h.ln() / (1.0 - h).ln()
}

/// The generalised harmonic number `Σ_{i=1..n} i^-θ`: summed term by term up to
/// [`ZETA_EXACT`], beyond that Euler–Maclaurin after an exact head of 1024 terms (error
/// below 1e-12 relative).
fn harmonic(n: u64, theta: f64) -> f64 {
    let f = |x: f64| x.powf(-theta);
    if n <= ZETA_EXACT {
        return (1..=n).rev().map(|i| f(i as f64)).sum();
    }
    let m = 1024.0_f64;
    let head: f64 = (1..1024u64).rev().map(|i| f(i as f64)).sum();
    let nf = n as f64;
    let integral = (nf.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta);
    let ends = (f(m) + f(nf)) / 2.0;
    let d1 = theta / 12.0 * (m.powf(-theta - 1.0) - nf.powf(-theta - 1.0));
    head + integral + ends + d1
}

/// The standard normal distribution function.
fn phi(z: f64) -> f64 {
    0.5 * erfc(-z / std::f64::consts::SQRT_2)
}

/// The complementary error function (Numerical Recipes' Chebyshev fit, relative error
/// below 1.2e-7).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// A bijection of `0..blocks`: a keyed mix on the next power of two (each step, a xor, a
/// multiplication by an odd number or a right xor-shift, is one-to-one there), walked until
/// it lands below `blocks` (fewer than two steps on average).
#[derive(Debug, Clone, Copy)]
struct Scatter {
    blocks: u64,
    mask: u64,
    shift: u32,
    key: u64,
}

impl Scatter {
    fn new(blocks: u64) -> Self {
        let bits = 64 - (blocks.max(1) - 1).leading_zeros();
        let mask = if bits == 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        Self {
            blocks,
            mask,
            shift: bits.div_ceil(2).max(1),
            key: splitmix(blocks, 0x5ca7_7e12) & mask,
        }
    }

    #[inline(always)]
    fn mix(&self, mut x: u64) -> u64 {
        x = (x ^ self.key).wrapping_mul(0x9e37_79b9_7f4a_7c15) & self.mask;
        x ^= x >> self.shift;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9) & self.mask;
        x ^= x >> self.shift;
        x = x.wrapping_mul(0x94d0_49bb_1331_11eb) & self.mask;
        x ^ (x >> self.shift)
    }

    #[inline(always)]
    fn apply(&self, rank: u64) -> u64 {
        let mut x = self.mix(rank);
        while x >= self.blocks {
            x = self.mix(x);
        }
        x
    }
}

/// What a [`Sampler`] precomputed for its law.
#[derive(Debug, Clone, Copy)]
enum Law {
    Uniform,
    /// Rejection-inversion constants (Hörmann and Derflinger 1996, as Apache Commons RNG).
    Zipf {
        theta: f64,
        h_x1: f64,
        h_n: f64,
        s: f64,
    },
    Pareto {
        power: f64,
    },
    Normal {
        centre: f64,
        sigma: f64,
        spare: Option<f64>,
    },
}

/// Draws block indices in `0..blocks` under a [`Dist`], from a seed; no allocation per draw.
#[derive(Debug, Clone)]
pub struct Sampler {
    blocks: u64,
    base: u64,
    count: u64,
    law: Law,
    scatter: Scatter,
}

impl Sampler {
    /// A sampler over `blocks` (at least 1) seeded with `seed`; any two different seeds give
    /// unrelated sequences, and the hot set depends on `dist` and `blocks` only.
    pub fn new(dist: Dist, blocks: u64, seed: u64) -> Self {
        let blocks = blocks.max(1);
        let n = blocks as f64;
        let law = match dist {
            Dist::Uniform => Law::Uniform,
            Dist::Zipf { theta } => {
                let h_x1 = h_integral(1.5, theta) - 1.0;
                let h_n = h_integral(n + 0.5, theta);
                let s = 2.0 - h_integral_inverse(h_integral(2.5, theta) - h(2.0, theta), theta);
                Law::Zipf {
                    theta,
                    h_x1,
                    h_n,
                    s,
                }
            }
            Dist::Pareto { h } => Law::Pareto {
                power: pareto_power(h),
            },
            Dist::Normal { sigma_percent } => Law::Normal {
                centre: n / 2.0,
                sigma: sigma_percent / 100.0 * n,
                spare: None,
            },
        };
        Self {
            blocks,
            base: splitmix(seed, 0x736b_6577),
            count: 0,
            law,
            scatter: Scatter::new(blocks),
        }
    }

    /// The next 64 random bits.
    #[inline(always)]
    fn bits(&mut self) -> u64 {
        self.count = self.count.wrapping_add(1);
        splitmix(self.base, self.count)
    }

    /// A uniform draw in [0, 1).
    #[inline(always)]
    fn unit(&mut self) -> f64 {
        (self.bits() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// The next block index, in `0..blocks`.
    #[inline]
    pub fn next_block(&mut self) -> u64 {
        let n = self.blocks;
        match self.law {
            Law::Uniform => ((self.bits() as u128 * n as u128) >> 64) as u64,
            Law::Zipf {
                theta,
                h_x1,
                h_n,
                s,
            } => loop {
                let u = h_n + self.unit() * (h_x1 - h_n);
                let x = h_integral_inverse(u, theta);
                let k = (x + 0.5).clamp(1.0, n as f64).floor();
                if k - x <= s || u >= h_integral(k + 0.5, theta) - h(k, theta) {
                    return self.scatter.apply(k as u64 - 1);
                }
            },
            Law::Pareto { power } => {
                let rank = (n as f64 * self.unit().powf(power)) as u64;
                self.scatter.apply(rank.min(n - 1))
            }
            Law::Normal {
                centre,
                sigma,
                spare,
            } => {
                let mut spare = spare;
                let block = loop {
                    let z = match spare.take() {
                        Some(z) => z,
                        None => {
                            let r = (-2.0 * (1.0 - self.unit()).ln()).sqrt();
                            let (sin, cos) = (std::f64::consts::TAU * self.unit()).sin_cos();
                            spare = Some(r * sin);
                            r * cos
                        }
                    };
                    let x = centre + sigma * z;
                    if x >= 0.0 && x < n as f64 {
                        break (x as u64).min(n - 1);
                    }
                };
                if let Law::Normal { spare: s, .. } = &mut self.law {
                    *s = spare;
                }
                block
            }
        }
    }
}

/// `h(x) = x^-θ`, the zipf weight.
#[inline(always)]
fn h(x: f64, theta: f64) -> f64 {
    (-theta * x.ln()).exp()
}

/// `∫_1^x t^-θ dt = (x^(1-θ) - 1) / (1 - θ)`, written to stay exact as θ nears 1.
#[inline(always)]
fn h_integral(x: f64, theta: f64) -> f64 {
    let log_x = x.ln();
    expm1_over_x((1.0 - theta) * log_x) * log_x
}

/// The inverse of [`h_integral`].
#[inline(always)]
fn h_integral_inverse(x: f64, theta: f64) -> f64 {
    let t = (x * (1.0 - theta)).max(-1.0);
    (log1p_over_x(t) * x).exp()
}

/// `ln(1 + x) / x`, 1 at 0.
#[inline(always)]
fn log1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x / 3.0)
    }
}

/// `(e^x - 1) / x`, 1 at 0.
#[inline(always)]
fn expm1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * (0.5 + x / 6.0)
    }
}

/// Counters kept by a [`HotCount`] at most (4 MiB of `u32`).
pub const MAX_COUNTERS: u64 = 1 << 20;

/// Counts accesses per block, or per bucket of neighbouring blocks when there are more than
/// [`MAX_COUNTERS`] / 2 blocks, in two halves (alternate accesses), to measure the share of
/// the accesses on the hottest 10% of blocks.
///
/// The hottest blocks are chosen on one half and their share measured on the other (and the
/// other way round, averaged): choosing and measuring on the same draws counts their luck as
/// heat (200k uniform draws over 100k blocks put 24% of them on the "hottest" 10%).
#[derive(Debug, Clone)]
pub struct HotCount {
    blocks: u64,
    per_bucket: u64,
    halves: [Vec<u32>; 2],
    total: u64,
}

impl HotCount {
    /// Counters for `blocks` blocks.
    pub fn new(blocks: u64) -> Self {
        let blocks = blocks.max(1);
        let per_bucket = blocks.div_ceil(MAX_COUNTERS / 2);
        let buckets = blocks.div_ceil(per_bucket) as usize;
        Self {
            blocks,
            per_bucket,
            halves: [vec![0; buckets], vec![0; buckets]],
            total: 0,
        }
    }

    /// Counts one access to `block`.
    #[inline]
    pub fn add(&mut self, block: u64) {
        let half = &mut self.halves[(self.total & 1) as usize];
        let i = ((block / self.per_bucket) as usize).min(half.len() - 1);
        half[i] = half[i].saturating_add(1);
        self.total += 1;
    }

    /// Adds the counts of `other` (kept over the same number of blocks).
    pub fn merge(&mut self, other: HotCount) {
        for (mine, theirs) in self.halves.iter_mut().zip(other.halves) {
            for (a, b) in mine.iter_mut().zip(theirs) {
                *a = a.saturating_add(b);
            }
        }
        self.total += other.total;
    }

    /// The blocks counted over.
    pub fn blocks(&self) -> u64 {
        self.blocks
    }

    /// Accesses counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Blocks per counter: 1, or the bucket size when the blocks were too many, and the
    /// share is then of the hottest 10% of buckets.
    pub fn blocks_per_bucket(&self) -> u64 {
        self.per_bucket
    }

    /// The share of the counted accesses on the hottest 10% of blocks (or buckets); `None`
    /// before any access.
    pub fn hot_share(&self) -> Option<f64> {
        if self.total == 0 {
            return None;
        }
        let [a, b] = &self.halves;
        let (sum_a, sum_b) = (sum(a), sum(b));
        let share = |choose: &[u32], measure: &[u32], measured: u64| {
            (measured > 0).then(|| {
                let hot = hottest(choose, hot_blocks(choose.len() as u64) as usize);
                hot.iter().map(|&i| measure[i] as u64).sum::<u64>() as f64 / measured as f64
            })
        };
        match (share(a, b, sum_b), share(b, a, sum_a)) {
            (Some(x), Some(y)) => Some((x + y) / 2.0),
            (x, y) => x.or(y).or(Some(1.0)),
        }
    }
}

/// The sum of the counters.
fn sum(counts: &[u32]) -> u64 {
    counts.iter().map(|&c| c as u64).sum()
}

/// The indices of the `k` largest counters (ties broken by a scatter of the index, so that
/// a tie does not favour the start of the file).
fn hottest(counts: &[u32], k: usize) -> Vec<usize> {
    let mut keyed: Vec<(u32, u32, usize)> = counts
        .iter()
        .enumerate()
        .map(|(i, &c)| (c, splitmix(0x71e, i as u64) as u32, i))
        .collect();
    let k = k.min(keyed.len());
    if k < keyed.len() {
        keyed.select_nth_unstable_by(k, |x, y| (y.0, y.1).cmp(&(x.0, x.1)));
    }
    keyed[..k].iter().map(|&(_, _, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn measured(dist: Dist, blocks: u64, draws: u64, seed: u64) -> f64 {
        let mut sampler = Sampler::new(dist, blocks, seed);
        let mut count = HotCount::new(blocks);
        for _ in 0..draws {
            count.add(sampler.next_block());
        }
        count.hot_share().expect("draws were counted")
    }

    #[test]
    fn each_distribution_prints_as_it_parses() {
        for text in [
            "uniform",
            "zipf:1.2",
            "zipf:0.8",
            "pareto:0.9",
            "normal:5",
            "normal:0.5",
        ] {
            let dist: Dist = text.parse().expect("valid");
            assert_eq!(dist.to_string(), text);
            assert_eq!(dist.to_string().parse::<Dist>(), Ok(dist));
        }
        assert_eq!("random".parse::<Dist>(), Ok(Dist::Uniform));
        assert_eq!("zipf:1.2".parse::<Dist>(), Ok(Dist::Zipf { theta: 1.2 }));
    }

    #[test]
    fn each_bad_value_is_a_one_line_error_that_repeats_it() {
        for bad in [
            "zipf:-1",
            "zipf:1",
            "zipf:0",
            "zipf:abc",
            "zipf:inf",
            "zipf",
            "pareto:0",
            "pareto:1",
            "pareto",
            "normal:0",
            "normal:100",
            "normal:101",
            "gauss",
            "uniform:2",
            "",
        ] {
            let err = bad.parse::<Dist>().expect_err(bad);
            assert!(err.starts_with("--dist "), "{err}");
            assert!(err.contains(bad), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
        assert_eq!(
            "zipf:-1".parse::<Dist>(),
            Err("--dist zipf:-1: θ must be above 0 and not 1 (fio's zipf: 1.2 is common)".into())
        );
    }

    #[test]
    fn the_theoretical_shares_match_their_closed_forms() {
        assert!((Dist::Uniform.hot_share(100_000) - 0.1).abs() < 1e-12);
        assert_eq!(Dist::Uniform.hot_share(5), 0.2);
        // pareto:h sends h of the I/O to the hottest 1 - h of the blocks.
        assert!((Dist::Pareto { h: 0.9 }.hot_share(100_000) - 0.9).abs() < 1e-9);
        // 90% of a normal lies within 1.645σ of its centre: the middle 10% holds 90% when
        // 1.645σ is 5% of the range.
        let sigma = 5.0 / 1.644_853_6;
        let share = Dist::Normal {
            sigma_percent: sigma,
        }
        .hot_share(10_000_000);
        assert!((share - 0.9).abs() < 1e-5, "{share}");
    }

    #[test]
    fn the_zipf_normalisation_beyond_the_exact_sums_agrees_with_them() {
        for theta in [0.5, 0.8, 0.99, 1.2, 2.0] {
            let exact: f64 = (1..=200_000u64)
                .rev()
                .map(|i| (i as f64).powf(-theta))
                .sum();
            let approx = harmonic(200_000, theta);
            assert!((exact - approx).abs() / exact < 1e-10, "{theta}");
        }
    }

    #[test]
    fn the_measured_hot_share_is_near_the_theoretical_one() {
        // 20 draws a block: with 2 (200k over 100k blocks) the split halves choose the hot
        // set on too few draws, and the share reads 0.02 to 0.05 low.
        let blocks = 10_000;
        for (text, tolerance) in [
            ("uniform", 0.015),
            ("zipf:1.2", 0.015),
            ("zipf:0.8", 0.015),
            ("pareto:0.9", 0.015),
            ("normal:5", 0.015),
        ] {
            let dist: Dist = text.parse().expect("valid");
            let theory = dist.hot_share(blocks);
            let got = measured(dist, blocks, 200_000, 7);
            assert!(
                (got - theory).abs() < tolerance,
                "{text}: measured {got:.4}, theory {theory:.4}"
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_sequence_and_another_seed_another() {
        for dist in ["uniform", "zipf:1.2", "pareto:0.9", "normal:5"] {
            let dist: Dist = dist.parse().expect("valid");
            let draw = |seed| {
                let mut s = Sampler::new(dist, 1_000_000, seed);
                (0..100).map(|_| s.next_block()).collect::<Vec<u64>>()
            };
            assert_eq!(draw(3), draw(3));
            assert_ne!(draw(3), draw(4));
        }
    }

    #[test]
    fn the_scatter_is_a_permutation_of_the_blocks() {
        for blocks in [1u64, 2, 3, 7, 8, 9, 1000, 4097] {
            let scatter = Scatter::new(blocks);
            let mut seen = vec![false; blocks as usize];
            for rank in 0..blocks {
                let b = scatter.apply(rank);
                assert!(!seen[b as usize], "{blocks}: {b} twice");
                seen[b as usize] = true;
            }
        }
    }

    #[test]
    fn bucketing_keeps_memory_bounded_and_the_zipf_share_near_the_theory() {
        let blocks = 1u64 << 24;
        let mut count = HotCount::new(blocks);
        let counters: usize = count.halves.iter().map(Vec::len).sum();
        assert!(counters as u64 <= MAX_COUNTERS);
        assert!(count.blocks_per_bucket() > 1);
        let dist = Dist::Zipf { theta: 1.2 };
        let mut sampler = Sampler::new(dist, blocks, 11);
        for _ in 0..1_000_000 {
            count.add(sampler.next_block());
        }
        let (got, theory) = (count.hot_share().expect("counted"), dist.hot_share(blocks));
        // Buckets of 32 blocks each hold one scattered hot block among cold ones: the share
        // of the hottest buckets reads lower than that of the hottest blocks (0.91 for 0.98).
        assert!(got < theory && theory - got < 0.1, "{got} against {theory}");
    }

    #[test]
    fn counts_merge_and_no_access_has_no_share() {
        let mut a = HotCount::new(10);
        assert_eq!(a.hot_share(), None);
        let mut b = HotCount::new(10);
        for _ in 0..4 {
            a.add(3);
            b.add(3);
        }
        a.merge(b);
        assert_eq!(a.total(), 8);
        assert_eq!(a.hot_share(), Some(1.0));
    }

    proptest! {
        #[test]
        fn every_draw_is_a_block_of_the_range(
            blocks in 1u64..=u64::MAX,
            seed: u64,
            which in 0usize..5,
        ) {
            let dist = [
                Dist::Uniform,
                Dist::Zipf { theta: 1.2 },
                Dist::Zipf { theta: 0.8 },
                Dist::Pareto { h: 0.9 },
                Dist::Normal { sigma_percent: 5.0 },
            ][which];
            let mut sampler = Sampler::new(dist, blocks, seed);
            for _ in 0..200 {
                prop_assert!(sampler.next_block() < blocks);
            }
        }

        #[test]
        fn small_ranges_are_drawn_in_range_too(blocks in 1u64..64, seed: u64) {
            for dist in [Dist::Zipf { theta: 3.0 }, Dist::Pareto { h: 0.1 }, Dist::Normal { sigma_percent: 99.0 }] {
                let mut sampler = Sampler::new(dist, blocks, seed);
                for _ in 0..100 {
                    prop_assert!(sampler.next_block() < blocks);
                }
            }
        }
    }
}
