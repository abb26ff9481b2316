//! Offset plans: which piece of a range each step touches. A plan cuts `[start, start+len)`
//! into `block`-sized pieces (the last may be short) and orders them: sequential, backward,
//! random (a seeded permutation: every piece exactly once, in O(1) memory) or stride (every
//! `stride`-th piece, lane after lane, as iozone's stride read). Engines ask for piece `i`;
//! threads may claim pieces in any order and the checksum is the same.

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
        };
        let offset = j * self.block;
        (self.start + offset, self.block.min(self.len - offset))
    }

    /// Every piece in visiting order.
    pub fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.pieces()).map(|i| self.piece(i))
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

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
