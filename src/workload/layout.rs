//! The vocabulary of `mpi`: how the ranks share the files (IOR's layouts), which phases are
//! timed, and the plan math every rank agrees on without talking: where each rank's bytes
//! lie and which data stream fills them. Plain data, below the command line and the command.

use super::plan::{Order, Plan, mix};
use serde::{Deserialize, Serialize};

/// How the ranks share the files (IOR's layouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Layout {
    /// N-N: a file per rank.
    FilePerRank,
    /// N-1: one shared file, blocks of the ranks interleaved (block j of rank r at
    /// `(j * ranks + r) * block`).
    SharedStrided,
    /// N-1: one shared file, a contiguous segment per rank (rank r owns
    /// `[r * size, (r + 1) * size)`).
    SharedContiguous,
}

impl Layout {
    /// The name as typed on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Layout::FilePerRank => "file-per-rank",
            Layout::SharedStrided => "shared-strided",
            Layout::SharedContiguous => "shared-contiguous",
        }
    }

    /// Whether the ranks share one file.
    pub fn shared(self) -> bool {
        self != Layout::FilePerRank
    }
}

/// Which phases are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Phases {
    /// Timed writes (fsync included).
    Write,
    /// Timed reads of files written (untimed) first.
    Read,
    /// Timed writes, then timed reads, every repeat.
    Both,
}

impl Phases {
    /// `write`, `read` or `both`.
    pub fn name(self) -> &'static str {
        match self {
            Phases::Write => "write",
            Phases::Read => "read",
            Phases::Both => "both",
        }
    }
}

/// The bytes `owner` writes, where they lie in its file.
pub fn segment(layout: Layout, ranks: usize, owner: usize, size: u64, block: u64) -> Plan {
    match layout {
        Layout::FilePerRank => Plan::sequential(0, size, block),
        Layout::SharedContiguous => Plan::sequential(owner as u64 * size, size, block),
        Layout::SharedStrided => Plan::new(
            0,
            size,
            block,
            Order::Interleaved {
                lanes: ranks as u64,
                lane: owner as u64,
            },
        ),
    }
}

/// The seed of `owner`'s data: one stream over a shared file (byte `o` is the stream's
/// byte `o`), a stream per file otherwise, so no two files hold the same bytes.
pub fn data_seed(layout: Layout, seed: u64, owner: usize) -> u64 {
    if layout.shared() {
        seed
    } else {
        seed ^ mix(owner as u64 + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_segments_of_every_rank_cover_a_shared_file_once_in_both_shared_layouts_when_the_size_is_whole_blocks()
     {
        for layout in [Layout::SharedStrided, Layout::SharedContiguous] {
            let mut bytes: Vec<(u64, u64)> = (0..3)
                .flat_map(|owner| {
                    segment(layout, 3, owner, 3 * 4096, 4096)
                        .extents()
                        .collect::<Vec<_>>()
                })
                .collect();
            bytes.sort_unstable();
            let mut end = 0;
            for (offset, len) in bytes {
                assert_eq!(offset, end, "{layout:?}: no gap, no overlap");
                end = offset + len;
            }
            assert_eq!(end, 9 * 4096, "{layout:?}");
        }
    }

    #[test]
    fn a_file_per_rank_gets_a_data_stream_of_its_own_and_a_shared_file_one_stream() {
        assert_ne!(
            data_seed(Layout::FilePerRank, 7, 0),
            data_seed(Layout::FilePerRank, 7, 1)
        );
        assert_eq!(data_seed(Layout::SharedStrided, 7, 2), 7);
        assert_eq!(segment(Layout::FilePerRank, 4, 3, 8192, 4096).start, 0);
    }
}
