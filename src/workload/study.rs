//! The vocabulary of `study`: its levels (how much it measures) and its parts (which
//! commands it runs), with the names used in flags, files and headings. Plain data, below the
//! command line and the command; what each level measures is the command's
//! (`cmd::study`).

use serde::{Deserialize, Serialize};

/// How much the study measures, and so how long it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Every part once, few points (its time and the value list: `workload::estimate`).
    Quick,
    /// The classic block sizes, repeated.
    Standard,
    /// The classic report's rigour: 50 runs per point, 5–15 s calibration; long.
    Thorough,
}

impl Level {
    /// `quick`, `standard` or `thorough`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Standard => "standard",
            Self::Thorough => "thorough",
        }
    }
}

/// One part of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Part {
    /// Write the file, read it back, checksum verified.
    WriteRead,
    /// Read throughput against block size, cold and warm.
    ReadSweep,
    /// Cold, warm, cold again, with residency and device bytes.
    Cache,
    /// Cost of a 1-byte read() against lseek(), pread() and getpid().
    Syscalls,
    /// `fast` against dd, cat and fio.
    Compare,
    /// Write throughput against block size, fsync included.
    WriteSweep,
    /// iozone's tests.
    Patterns,
    /// The disk panel: sequential and random I/O at queue depths, IOPS and latency.
    Disk,
    /// Files over a socket, every method pair.
    Transfer,
    /// The file size for a read in the calibration window.
    Calibrate,
}

impl Part {
    /// Every part, in the order the study runs them (calibrate grows the scratch file, so it
    /// comes last).
    pub const ALL: [Part; 10] = [
        Part::WriteRead,
        Part::ReadSweep,
        Part::Cache,
        Part::Syscalls,
        Part::Compare,
        Part::WriteSweep,
        Part::Patterns,
        Part::Disk,
        Part::Transfer,
        Part::Calibrate,
    ];

    /// The name used in files and flags (`read-sweep`).
    pub fn name(self) -> &'static str {
        match self {
            Self::WriteRead => "write-read",
            Self::ReadSweep => "read-sweep",
            Self::Cache => "cache",
            Self::Syscalls => "syscalls",
            Self::Compare => "compare",
            Self::WriteSweep => "write-sweep",
            Self::Patterns => "patterns",
            Self::Disk => "disk",
            Self::Transfer => "transfer",
            Self::Calibrate => "calibrate",
        }
    }

    /// The heading of its section.
    pub fn title(self) -> &'static str {
        match self {
            Self::WriteRead => "Write, then read back and check against the bytes written",
            Self::ReadSweep => "Read throughput against block size, cold and warm",
            Self::Cache => "Cold against warm page cache",
            Self::Syscalls => "The cost of a system call",
            Self::Compare => "The fastest reader against dd, cat and fio",
            Self::WriteSweep => "Write throughput against block size (fsync included)",
            Self::Patterns => "Access patterns (iozone's tests)",
            Self::Disk => "What the disk delivers: IOPS and latency at a queue depth",
            Self::Transfer => "Files over a socket: read/write, mmap and zero-copy",
            Self::Calibrate => "A file size for a reasonable read time",
        }
    }
}
