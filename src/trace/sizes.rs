//! How large each request to a file was: a histogram of the sizes asked for by reads and
//! writes (and libaio requests), in power-of-two buckets from 1 byte to 16 MiB and above,
//! so a million one-byte calls show as such and not only as a count.

use serde::{Deserialize, Serialize};

/// Requests by size: bucket `k` counts sizes from 2^k up to (not including) 2^(k+1) bytes,
/// the last bucket everything from 16 MiB up; `zero` counts requests for 0 bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sizes {
    /// Requests for 0 bytes.
    #[serde(default)]
    pub zero: u64,
    /// Counts per power-of-two bucket, 1 B first; trailing empty buckets are left out.
    #[serde(default)]
    pub counts: Vec<u64>,
}

impl Sizes {
    /// Buckets: 1 B, 2 B, … 8 MiB, and 16 MiB (and up).
    pub const BUCKETS: usize = 25;

    /// The lower bound in bytes of bucket `k`.
    pub fn bound(k: usize) -> u64 {
        1u64 << k
    }

    /// Counts a request for `bytes`.
    pub fn add(&mut self, bytes: u64) {
        if bytes == 0 {
            self.zero += 1;
            return;
        }
        let k = (63 - bytes.leading_zeros() as usize).min(Self::BUCKETS - 1);
        if self.counts.len() <= k {
            self.counts.resize(k + 1, 0);
        }
        self.counts[k] += 1;
    }

    /// Requests counted.
    pub fn total(&self) -> u64 {
        self.zero + self.counts.iter().sum::<u64>()
    }

    /// Whether nothing was counted (the field is then left out of JSON).
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    /// The non-empty buckets, smallest first, as (lower bound in bytes, count); 0 first
    /// where there were requests for 0 bytes.
    pub fn buckets(&self) -> Vec<(u64, u64)> {
        let mut v = Vec::new();
        if self.zero > 0 {
            v.push((0, self.zero));
        }
        v.extend(
            self.counts
                .iter()
                .enumerate()
                .filter(|(_, c)| **c > 0)
                .map(|(k, &c)| (Self::bound(k), c)),
        );
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_size_lands_in_the_bucket_of_its_power_of_two_and_big_ones_in_the_last() {
        let mut s = Sizes::default();
        for b in [0, 1, 1, 2, 3, 4095, 4096, 65536, 16 << 20, 1 << 30] {
            s.add(b);
        }
        assert_eq!(s.total(), 10);
        assert_eq!(
            s.buckets(),
            vec![
                (0, 1),
                (1, 2),
                (2, 2),
                (2048, 1),
                (4096, 1),
                (65536, 1),
                (16 << 20, 2)
            ]
        );
        assert_eq!(s.counts.len(), Sizes::BUCKETS);
    }
}
