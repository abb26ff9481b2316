//! Engines: each file here moves bytes between a file and memory in one way. Engines do
//! not time, print or parse options; the harness in `cmd/` measures around them. Every
//! engine computes the same checksum for the same bytes.

pub mod buffer;
pub mod read;
pub mod write;

use serde::Serialize;

/// What an engine moved: bytes, system calls made, and the checksum of the bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Moved {
    /// Bytes read or written.
    pub bytes: u64,
    /// System calls that moved data (including a final read that returned 0).
    pub calls: u64,
    /// XOR of the bytes, per the checksum convention.
    pub xor: u32,
}

/// Called between system calls now and then with the bytes moved so far; returning an
/// error (such as an interruption) stops the engine with that error.
pub type Observer<'a> = &'a mut dyn FnMut(u64) -> anyhow::Result<()>;

/// How often an engine calls its observer: after this many calls or bytes, whichever first.
pub(crate) struct Cadence {
    calls: u64,
    bytes: u64,
}

impl Cadence {
    const CALLS: u64 = 1 << 16;
    const BYTES: u64 = 32 << 20;

    pub(crate) fn new() -> Self {
        Self { calls: 0, bytes: 0 }
    }

    /// True when the observer is due, given the running totals.
    #[inline]
    pub(crate) fn due(&mut self, calls: u64, bytes: u64) -> bool {
        if calls - self.calls >= Self::CALLS || bytes - self.bytes >= Self::BYTES {
            self.calls = calls;
            self.bytes = bytes;
            true
        } else {
            false
        }
    }
}
