//! Rows of mixed block sizes (fio's `bssplit`, `--bs 4k:60,64k:30,1m:10`): each I/O's size
//! drawn by its share, from a seeded hash. A split is a small fixed array so that a row
//! ([`super::panel::RowSpec`]) stays `Copy`; it is saved as a list.

use serde::{Deserialize, Serialize};

/// The most sizes one split holds (fio allows more; eight covers every published mix).
pub const MAX_SIZES: usize = 8;

/// One size of a split and its share of the I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SizeShare {
    /// Bytes per I/O.
    pub bytes: u64,
    /// Percent of the I/Os of that size.
    pub percent: u8,
}

/// Sizes with their shares of the I/Os, adding up to 100, smallest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Vec<SizeShare>", try_from = "Vec<SizeShare>")]
pub struct BlockSplit {
    len: u8,
    parts: [SizeShare; MAX_SIZES],
}

impl BlockSplit {
    /// A split of `parts`: 1 to [`MAX_SIZES`] distinct sizes above 0, each share above 0,
    /// the shares adding up to 100; else why not, in words.
    pub fn new(parts: &[SizeShare]) -> Result<Self, String> {
        if parts.is_empty() || parts.len() > MAX_SIZES {
            return Err(format!("give 1 to {MAX_SIZES} sizes"));
        }
        let mut sorted = parts.to_vec();
        sorted.sort_by_key(|p| p.bytes);
        if sorted.iter().any(|p| p.bytes == 0) {
            return Err("a size must be above 0".into());
        }
        if sorted.iter().any(|p| p.percent == 0) {
            return Err("each share must be above 0%".into());
        }
        if sorted.windows(2).any(|w| w[0].bytes == w[1].bytes) {
            return Err("a size is given twice".into());
        }
        let sum: u32 = sorted.iter().map(|p| u32::from(p.percent)).sum();
        if sum != 100 {
            return Err(format!("the shares add up to {sum}%, not 100%"));
        }
        let mut out = Self {
            len: sorted.len() as u8,
            parts: [SizeShare::default(); MAX_SIZES],
        };
        out.parts[..sorted.len()].copy_from_slice(&sorted);
        Ok(out)
    }

    /// The sizes and their shares, smallest first.
    pub fn parts(&self) -> &[SizeShare] {
        &self.parts[..usize::from(self.len)]
    }

    /// The largest size (a slot's buffer).
    pub fn largest(&self) -> u64 {
        self.parts().last().map_or(0, |p| p.bytes)
    }

    /// The smallest size (the grid random offsets fall on).
    pub fn smallest(&self) -> u64 {
        self.parts().first().map_or(0, |p| p.bytes)
    }

    /// The mean bytes per I/O the shares ask for.
    pub fn mean_bytes(&self) -> f64 {
        self.parts()
            .iter()
            .map(|p| p.bytes as f64 * f64::from(p.percent) / 100.0)
            .sum()
    }

    /// The size for a uniform draw (`draw % 100` picks by the cumulative shares).
    #[inline]
    pub fn pick(&self, draw: u64) -> u64 {
        let mut at = (draw % 100) as u8;
        for p in self.parts() {
            if at < p.percent {
                return p.bytes;
            }
            at -= p.percent;
        }
        self.largest()
    }

    /// The index of `bytes` among the sizes.
    #[inline]
    pub fn index_of(&self, bytes: u64) -> Option<usize> {
        self.parts().iter().position(|p| p.bytes == bytes)
    }

    /// `4K:60,64K:30,1M:10`, as `--bs` takes it (the panels' short sizes).
    pub fn name(&self) -> String {
        self.parts()
            .iter()
            .map(|p| format!("{}:{}", crate::units::short_size(p.bytes), p.percent))
            .collect::<Vec<_>>()
            .join(",")
    }
}

impl From<BlockSplit> for Vec<SizeShare> {
    fn from(s: BlockSplit) -> Self {
        s.parts().to_vec()
    }
}

impl TryFrom<Vec<SizeShare>> for BlockSplit {
    type Error = String;
    fn try_from(parts: Vec<SizeShare>) -> Result<Self, String> {
        Self::new(&parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(parts: &[(u64, u8)]) -> Result<BlockSplit, String> {
        let parts: Vec<SizeShare> = parts
            .iter()
            .map(|&(bytes, percent)| SizeShare { bytes, percent })
            .collect();
        BlockSplit::new(&parts)
    }

    #[test]
    fn a_split_is_sorted_and_picks_each_size_by_its_share() {
        let s = split(&[(1 << 20, 10), (4096, 60), (65536, 30)]).unwrap();
        assert_eq!(s.name(), "4K:60,64K:30,1M:10");
        assert_eq!((s.smallest(), s.largest()), (4096, 1 << 20));
        let mut counts = [0u32; 3];
        for d in 0..100 {
            counts[s.index_of(s.pick(d)).unwrap()] += 1;
        }
        assert_eq!(counts, [60, 30, 10]);
        assert!((s.mean_bytes() - (0.6 * 4096.0 + 0.3 * 65536.0 + 0.1 * 1048576.0)).abs() < 1e-6);
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<BlockSplit>(&json).unwrap(), s);
    }

    #[test]
    fn splits_that_do_not_add_up_or_repeat_a_size_are_refused() {
        assert!(
            split(&[(4096, 60), (65536, 30)])
                .unwrap_err()
                .contains("90%")
        );
        assert!(
            split(&[(4096, 50), (4096, 50)])
                .unwrap_err()
                .contains("twice")
        );
        assert!(
            split(&[(4096, 100), (8192, 0)])
                .unwrap_err()
                .contains("above 0%")
        );
        assert!(split(&[]).is_err());
        let nine: Vec<(u64, u8)> = (1..=9)
            .map(|i| (i * 4096, if i == 1 { 20 } else { 10 }))
            .collect();
        assert!(split(&nine).unwrap_err().contains("1 to 8"));
        // A crafted document cannot smuggle one in.
        assert!(serde_json::from_str::<BlockSplit>(r#"[{"bytes":4096,"percent":50}]"#).is_err());
    }
}
