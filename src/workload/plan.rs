//! Offset plans: which piece of a range each step touches. A plan cuts `[start, start+len)`
//! into `block`-sized pieces (the last may be short) and orders them: sequential, backward,
//! random (a seeded permutation: every piece exactly once, in O(1) memory) or stride (every
//! `stride`-th piece, lane after lane, as iozone's stride read); or, when asked, the same
//! first piece again and again (iozone's record rewrite) or random draws that may repeat.
//! Engines ask for piece `i`; threads may claim pieces in any order and the checksum is the
//! same. An interleaved plan is one lane of a range shared by several writers (IOR's strided
//! layout): its pieces lie `lanes` pieces apart, so they are not one contiguous range;
//! [`Plan::extents`] gives the byte ranges it touches. [`Coverage`] counts where a plan's pieces fall, to prove what a random test touched.

use serde::{Deserialize, Serialize};

/// The order in which the pieces of a range are visited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "order", rename_all = "snake_case")]
pub enum Order {
    /// First piece to last.
    Sequential,
    /// Last piece to first.
    Backward,
    /// A permutation chosen by `seed`: every piece once.
    Random {
        /// The seed of the permutation.
        seed: u64,
    },
    /// Pieces 0, s, 2s, ..., then 1, 1+s, ...: every piece once.
    Stride {
        /// Distance between consecutive pieces, in pieces (at least 1).
        stride: u64,
    },
    /// The first piece, every step (`len / block` steps): iozone's record rewrite.
    Same,
    /// Independent seeded draws: a piece may come twice and another never (as iozone's
    /// random tests, which call rand()).
    Draws {
        /// The seed of the draws.
        seed: u64,
    },
    /// In order, lane `lane` of `lanes` interleaved ones: piece `i` lies at
    /// `start + (i * lanes + lane) * block`, so `len` bytes of this lane span about
    /// `lanes * len` bytes of the file (the other lanes' pieces sit between).
    Interleaved {
        /// Lanes sharing the range (at least 1).
        lanes: u64,
        /// This plan's lane, below `lanes`.
        lane: u64,
    },
}

/// A range cut into pieces, and the order to visit them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Offset of the first byte of the range.
    pub start: u64,
    /// Bytes in the range.
    pub len: u64,
    /// Bytes per piece (the last piece may be shorter).
    pub block: u64,
    /// Visiting order.
    #[serde(flatten)]
    pub order: Order,
}

impl Plan {
    /// `len` bytes from `start`, in order, `block` bytes at a time.
    pub fn sequential(start: u64, len: u64, block: u64) -> Self {
        Self::new(start, len, block, Order::Sequential)
    }

    /// A plan with any order (`block` 0 is taken as 1; a stride of 0 as 1).
    pub fn new(start: u64, len: u64, block: u64, order: Order) -> Self {
        let order = match order {
            Order::Stride { stride } => Order::Stride {
                stride: stride.max(1),
            },
            Order::Interleaved { lanes, lane } => Order::Interleaved {
                lanes: lanes.max(1),
                lane: lane.min(lanes.max(1) - 1),
            },
            other => other,
        };
        Self {
            start,
            len,
            block: block.max(1),
            order,
        }
    }

    /// The same range and order with another piece size.
    pub fn with_block(self, block: u64) -> Self {
        Self::new(self.start, self.len, block, self.order)
    }

    /// Number of pieces.
    pub fn pieces(&self) -> u64 {
        self.len.div_ceil(self.block)
    }

    /// Whether the pieces are visited first to last.
    pub fn is_sequential(&self) -> bool {
        self.order == Order::Sequential
    }

    /// The `i`-th piece visited (`i < pieces()`), as an absolute `(offset, len)`.
    pub fn piece(&self, i: u64) -> (u64, u64) {
        let n = self.pieces();
        debug_assert!(i < n, "piece {i} of {n}");
        let j = match self.order {
            Order::Sequential => i,
            Order::Backward => n - 1 - i,
            Order::Random { seed } => permute(i, n, seed),
            Order::Stride { stride } => stride_index(i, n, stride),
            Order::Same => 0,
            Order::Draws { seed } => mix(seed ^ mix(i)) % n,
            Order::Interleaved { lanes, lane } => {
                let len = self.block.min(self.len - i * self.block);
                return (self.start + (i * lanes + lane) * self.block, len);
            }
        };
        let offset = j * self.block;
        (self.start + offset, self.block.min(self.len - offset))
    }

    /// Whether the pieces lie apart (an interleaved lane) rather than tiling one range.
    pub fn is_interleaved(&self) -> bool {
        matches!(self.order, Order::Interleaved { .. })
    }

    /// The byte ranges `(offset, len)` the plan touches: `[start, start + len)` for every
    /// order but an interleaved lane, whose pieces are each a range of their own.
    pub fn extents(&self) -> Box<dyn Iterator<Item = (u64, u64)> + '_> {
        if self.is_interleaved() {
            Box::new(self.iter())
        } else {
            Box::new(std::iter::once((self.start, self.len)).filter(|&(_, len)| len > 0))
        }
    }

    /// Every piece in visiting order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.pieces()).map(|i| self.piece(i))
    }
}

/// Where a plan's steps fall: a histogram of offsets over the range and how many distinct
/// pieces were touched. For a random test it proves the coverage ("every record once").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Steps counted.
    pub steps: u64,
    /// Pieces in the range.
    pub pieces: u64,
    /// Distinct pieces touched.
    pub distinct: u64,
    /// Bytes of the range per bucket.
    pub bucket_bytes: u64,
    /// Steps whose piece starts in each bucket.
    pub buckets: Vec<u64>,
}

impl Coverage {
    /// Buckets a coverage is counted in (fewer for ranges of fewer pieces).
    pub const BUCKETS: u64 = 32;

    /// Counts every step of `plan` (one bit per piece: 1 MiB of memory per 8 Mi pieces).
    pub fn of(plan: &Plan) -> Self {
        let pieces = plan.pieces();
        let buckets = Self::BUCKETS.min(pieces).max(1);
        let per_bucket = pieces.div_ceil(buckets).max(1);
        let mut counts = vec![0u64; buckets as usize];
        let mut seen = vec![0u64; pieces.div_ceil(64) as usize];
        let mut distinct = 0;
        for (offset, _) in plan.iter() {
            let piece = (offset - plan.start) / plan.block;
            counts[(piece / per_bucket) as usize] += 1;
            let (word, bit) = ((piece / 64) as usize, piece % 64);
            if seen[word] & (1 << bit) == 0 {
                seen[word] |= 1 << bit;
                distinct += 1;
            }
        }
        Self {
            steps: plan.pieces(),
            pieces,
            distinct,
            bucket_bytes: per_bucket * plan.block,
            buckets: counts,
        }
    }

    /// Whether every piece was touched exactly once.
    pub fn every_once(&self) -> bool {
        self.distinct == self.pieces && self.steps == self.pieces
    }
}

/// Piece index of step `i` in a stride order over `n` pieces: lanes `0..s`, each lane the
/// pieces `lane, lane + s, lane + 2s, ...`.
fn stride_index(i: u64, n: u64, s: u64) -> u64 {
    let s = s.min(n.max(1));
    let (q, r) = (n / s, n % s);
    let long = r * (q + 1);
    let (lane, k) = if i < long {
        (i / (q + 1), i % (q + 1))
    } else {
        let i = i - long;
        (r + i / q, i % q)
    };
    lane + k * s
}

/// A seeded bijection on `[0, n)`: a 4-round Feistel network on the smallest even number
/// of bits that covers `n`, cycle-walked until the value falls inside the range.
fn permute(i: u64, n: u64, seed: u64) -> u64 {
    if n <= 1 {
        return 0;
    }
    let bits = (64 - (n - 1).leading_zeros()).max(2).next_multiple_of(2);
    let half = bits / 2;
    let mask = (1u64 << half) - 1;
    let mut x = i;
    loop {
        let (mut l, mut r) = (x >> half, x & mask);
        for round in 0..4u64 {
            let f = mix(r ^ seed.rotate_left(round as u32 * 16) ^ round) & mask;
            (l, r) = (r, l ^ f);
        }
        x = (l << half) | r;
        if x < n {
            return x;
        }
    }
}

/// A 64-bit mixer (splitmix64's finaliser): seeded choices derived from an index.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The stride read's default distance, in records (iozone's).
pub const DEFAULT_STRIDE: u64 = 17;

/// Block sizes from `from` to `to`, doubling.
pub fn doubling(from: u64, to: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut bs = from;
    while bs <= to {
        sizes.push(bs);
        match bs.checked_mul(2) {
            Some(next) => bs = next,
            None => break,
        }
    }
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers_every_byte_once(plan: &Plan) {
        let mut seen = vec![false; plan.len as usize];
        for (offset, len) in plan.iter() {
            assert!(len > 0 && len <= plan.block);
            for b in offset - plan.start..offset - plan.start + len {
                assert!(!seen[b as usize], "byte {b} twice in {plan:?}");
                seen[b as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s), "a byte missed in {plan:?}");
    }

    #[test]
    fn every_order_covers_the_range_exactly_once() {
        for len in [0u64, 1, 7, 100, 4096, 10_007] {
            for block in [1u64, 3, 64, 4096] {
                for order in [
                    Order::Sequential,
                    Order::Backward,
                    Order::Random { seed: 7 },
                    Order::Random { seed: 8 },
                    Order::Stride { stride: 3 },
                    Order::Stride { stride: 1000 },
                ] {
                    covers_every_byte_once(&Plan::new(5, len, block, order));
                }
            }
        }
    }

    #[test]
    fn same_repeats_the_first_piece_and_draws_repeat_by_seed() {
        let same = Plan::new(8, 12, 4, Order::Same);
        assert_eq!(same.iter().collect::<Vec<_>>(), [(8, 4), (8, 4), (8, 4)]);
        let draws = |seed| {
            Plan::new(0, 1000, 1, Order::Draws { seed })
                .iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(1), draws(1));
        assert_ne!(draws(1), draws(2));
        let c = Coverage::of(&Plan::new(0, 1000, 1, Order::Draws { seed: 1 }));
        // 1000 draws from 1000: about 1 - 1/e of them distinct.
        assert!((560..=700).contains(&c.distinct), "{c:?}");
        assert!(!c.every_once());
    }

    #[test]
    fn coverage_counts_every_step_in_its_bucket() {
        let c = Coverage::of(&Plan::new(0, 64 * 4096, 4096, Order::Random { seed: 9 }));
        assert!(c.every_once());
        assert_eq!((c.steps, c.pieces, c.bucket_bytes), (64, 64, 2 * 4096));
        assert_eq!(c.buckets, vec![2; 32], "a flat histogram");
        let c = Coverage::of(&Plan::new(0, 10, 1, Order::Same));
        assert_eq!(
            (c.distinct, c.buckets[0], c.buckets.iter().sum::<u64>()),
            (1, 10, 10)
        );
        // Fewer pieces than buckets: one bucket per piece; an empty plan counts nothing.
        assert_eq!(Coverage::of(&Plan::sequential(0, 5, 1)).buckets, vec![1; 5]);
        assert!(Coverage::of(&Plan::sequential(0, 0, 1)).every_once());
    }

    #[test]
    fn sequential_and_backward_are_mirror_images() {
        let fwd = Plan::sequential(0, 10, 3);
        let back = Plan::new(0, 10, 3, Order::Backward);
        assert_eq!(
            fwd.iter().collect::<Vec<_>>(),
            [(0, 3), (3, 3), (6, 3), (9, 1)]
        );
        assert_eq!(
            back.iter().collect::<Vec<_>>(),
            [(9, 1), (6, 3), (3, 3), (0, 3)]
        );
    }

    #[test]
    fn interleaved_lanes_tile_the_shared_range_without_overlap() {
        // 3 lanes of 10 bytes in blocks of 4: pieces 4, 4, 2 per lane.
        let lane = |l| Plan::new(100, 10, 4, Order::Interleaved { lanes: 3, lane: l });
        assert_eq!(
            lane(1).iter().collect::<Vec<_>>(),
            [(104, 4), (116, 4), (128, 2)]
        );
        let mut seen = std::collections::HashSet::new();
        for l in 0..3 {
            let plan = lane(l);
            assert!(plan.is_interleaved() && !plan.is_sequential());
            assert_eq!(
                plan.extents().collect::<Vec<_>>(),
                plan.iter().collect::<Vec<_>>()
            );
            assert_eq!(plan.iter().map(|(_, n)| n).sum::<u64>(), 10);
            for (offset, len) in plan.iter() {
                for b in offset..offset + len {
                    assert!(seen.insert(b), "byte {b} in two lanes");
                }
            }
        }
        assert_eq!(
            Plan::sequential(7, 9, 4).extents().collect::<Vec<_>>(),
            [(7, 9)]
        );
        assert_eq!(Plan::sequential(7, 0, 4).extents().count(), 0);
    }

    #[test]
    fn stride_visits_lane_after_lane() {
        let p = Plan::new(0, 7, 1, Order::Stride { stride: 3 });
        let order: Vec<u64> = p.iter().map(|(o, _)| o).collect();
        assert_eq!(order, [0, 3, 6, 1, 4, 2, 5]);
    }

    #[test]
    fn random_depends_on_the_seed_and_is_repeatable() {
        let a: Vec<_> = Plan::new(0, 1000, 1, Order::Random { seed: 1 })
            .iter()
            .collect();
        let b: Vec<_> = Plan::new(0, 1000, 1, Order::Random { seed: 1 })
            .iter()
            .collect();
        let c: Vec<_> = Plan::new(0, 1000, 1, Order::Random { seed: 2 })
            .iter()
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
        let sequential: Vec<_> = Plan::sequential(0, 1000, 1).iter().collect();
        assert_ne!(a, sequential, "a permutation, not the identity");
    }
}
