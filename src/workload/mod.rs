//! Workloads: what to do (read or write), in what order to touch the bytes (offset plans),
//! and what bytes to write.

pub mod arrivals;
pub mod data;
pub mod estimate;
pub mod layout;
pub mod panel;
pub mod patterns;
pub mod plan;
pub mod ring;
pub mod skew;
pub mod split;
pub mod study;
pub mod verify;

use serde::{Deserialize, Serialize};

/// Whether bytes go out of a file into memory, or into a file from memory. The one name
/// for the direction of I/O everywhere below the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// From the file (or source) into memory.
    Read,
    /// From memory into the file (or sink).
    Write,
}

impl Op {
    /// `read` or `write`.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
        }
    }
}
