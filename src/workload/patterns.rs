//! The vocabulary of `patterns`: iozone's tests, and the grid of file and record sizes its
//! `-a` mode measures. Plain data, below the command line and the command.

use super::plan::doubling;
use serde::{Deserialize, Serialize};

/// One of iozone's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "kebab-case")]
pub enum Test {
    /// Sequential write() of a new file (its blocks allocated anew every run).
    Write,
    /// Sequential write() over the existing file.
    Rewrite,
    /// Sequential read().
    Read,
    /// Sequential read() again, right after `read`: from the page cache.
    Reread,
    /// pread() of every record once, in a seeded random order.
    RandomRead,
    /// pwrite() of every record once, in a seeded random order.
    RandomWrite,
    /// pread() from the last record to the first.
    BackwardRead,
    /// pwrite() of the first record, again and again.
    RecordRewrite,
    /// pread() of every `stride`-th record, lane after lane.
    StrideRead,
    /// pread() or pwrite() per record, in a seeded random order, at a read share.
    Mixed,
}

impl Test {
    /// Every test, in iozone's order.
    pub const ALL: [Test; 10] = [
        Test::Write,
        Test::Rewrite,
        Test::Read,
        Test::Reread,
        Test::RandomRead,
        Test::RandomWrite,
        Test::BackwardRead,
        Test::RecordRewrite,
        Test::StrideRead,
        Test::Mixed,
    ];

    /// The name shown in tables.
    pub fn name(self) -> &'static str {
        match self {
            Test::Write => "write",
            Test::Rewrite => "rewrite",
            Test::Read => "read",
            Test::Reread => "reread",
            Test::RandomRead => "random read",
            Test::RandomWrite => "random write",
            Test::BackwardRead => "backward read",
            Test::RecordRewrite => "record rewrite",
            Test::StrideRead => "stride read",
            Test::Mixed => "mixed",
        }
    }

    /// Whether it writes (and so ends with a timed fsync).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Test::Write | Test::Rewrite | Test::RandomWrite | Test::RecordRewrite | Test::Mixed
        )
    }

    /// Whether its offsets are random (its coverage is part of the result).
    pub fn random(self) -> bool {
        matches!(self, Test::RandomRead | Test::RandomWrite | Test::Mixed)
    }
}

/// The file sizes and record sizes of iozone's `-a`, cut to what this run allows.
pub fn auto_grid(max_size: u64) -> (Vec<u64>, Vec<u64>) {
    let sizes = doubling(64 << 10, max_size)
        .into_iter()
        .filter(|s| s.trailing_zeros() % 2 == 0)
        .collect();
    let records = doubling(4 << 10, (16 << 20).min(max_size));
    (sizes, records)
}
