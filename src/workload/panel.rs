//! The rows of `ioscope disk`: CrystalDiskMark's and KDiskMark's panel (SEQ1M Q8T1, SEQ1M
//! Q1T1, RND4K Q32T1, RND4K Q1T1, each read then written), or one row the user describes,
//! and the offsets a row visits: sequential (wrapping at the end of its region) or random
//! (whole blocks, aligned to the block size, drawn with repeats).

use super::Op;
use crate::units::{KIB, MIB};
use serde::{Deserialize, Serialize};

/// One row of the panel: what it asks of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowSpec {
    /// Read or write.
    pub op: Op,
    /// Random offsets (else sequential).
    pub random: bool,
    /// Bytes per I/O.
    pub block: u64,
    /// I/Os kept in flight per thread.
    pub depth: usize,
    /// Threads, each with its own queue.
    pub threads: usize,
}

impl RowSpec {
    /// The row's name as the panels print it: `SEQ1M Q8T1`, `RND4K Q32T1`.
    pub fn name(&self) -> String {
        format!(
            "{}{} Q{}T{}",
            if self.random { "RND" } else { "SEQ" },
            short_size(self.block),
            self.depth,
            self.threads
        )
    }
}

/// `1M`, `4K`, `512`, `64K`: the size in the panels' short form.
pub fn short_size(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{}M", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{}K", bytes / KIB)
    } else {
        bytes.to_string()
    }
}

/// The default panel: each of the four rows read, then written.
pub fn default_panel() -> Vec<RowSpec> {
    let shapes = [
        (false, MIB, 8),
        (false, MIB, 1),
        (true, 4 * KIB, 32),
        (true, 4 * KIB, 1),
    ];
    let mut rows = Vec::new();
    for (random, block, depth) in shapes {
        for op in [Op::Read, Op::Write] {
            rows.push(RowSpec {
                op,
                random,
                block,
                depth,
                threads: 1,
            });
        }
    }
    rows
}

/// The offsets one thread of a row visits in `[start, end)` (whole blocks only).
#[derive(Debug, Clone)]
pub struct Offsets {
    start: u64,
    blocks: u64,
    block: u64,
    random: bool,
    next: u64,
    state: u64,
}

impl Offsets {
    /// Offsets of `block`-byte I/Os in `[start, end)`; `seed` draws the random ones.
    pub fn new(start: u64, end: u64, block: u64, random: bool, seed: u64) -> Self {
        let block = block.max(1);
        Self {
            start,
            blocks: (end.saturating_sub(start) / block).max(1),
            block,
            random,
            next: 0,
            state: seed,
        }
    }

    /// The next offset (sequential rows wrap to the start of their region).
    pub fn next_offset(&mut self) -> u64 {
        let index = if self.random {
            self.state = self.state.wrapping_add(1);
            super::data::splitmix(self.state, 0x0ff5e7) % self.blocks
        } else {
            let i = self.next;
            self.next = (self.next + 1) % self.blocks;
            i
        };
        self.start + index * self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_panel_is_the_four_rows_read_then_written() {
        let names: Vec<String> = default_panel()
            .iter()
            .map(|r| format!("{} {}", r.name(), r.op.name()))
            .collect();
        assert_eq!(
            names,
            [
                "SEQ1M Q8T1 read",
                "SEQ1M Q8T1 write",
                "SEQ1M Q1T1 read",
                "SEQ1M Q1T1 write",
                "RND4K Q32T1 read",
                "RND4K Q32T1 write",
                "RND4K Q1T1 read",
                "RND4K Q1T1 write"
            ]
        );
    }

    #[test]
    fn random_offsets_are_whole_blocks_inside_the_region() {
        let mut o = Offsets::new(8192, 8192 + 40 * 4096 + 100, 4096, true, 7);
        for _ in 0..1000 {
            let off = o.next_offset();
            assert!(off >= 8192 && off + 4096 <= 8192 + 40 * 4096);
            assert_eq!((off - 8192) % 4096, 0);
        }
    }

    #[test]
    fn sequential_offsets_wrap_at_the_end_of_the_region() {
        let mut o = Offsets::new(0, 3 * MIB, MIB, false, 0);
        let seen: Vec<u64> = (0..4).map(|_| o.next_offset()).collect();
        assert_eq!(seen, [0, MIB, 2 * MIB, 0]);
    }
}
