//! Engines: each file here moves bytes between a file and memory in one way. Engines do
//! not time, print or parse options; the harness in `cmd/` measures around them. Every
//! engine computes the same checksum for the same bytes.

pub mod buffer;
pub mod direct;
pub mod hybrid;
pub mod mmap;
pub mod parallel;
pub mod pread;
pub mod read;
pub mod stream;
pub mod uring;
pub mod write;

use crate::files::InputKind;
use serde::{Deserialize, Serialize};
use std::fs::File;

/// What an engine moved: bytes, system calls made, and the checksum of the bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

/// One whole-file XOR job, as `fast` hands it to an engine.
#[derive(Debug, Clone, Copy)]
pub struct Job<'a> {
    /// The open input.
    pub file: &'a File,
    /// Its name, for messages.
    pub name: &'a str,
    /// What kind of input it is.
    pub kind: InputKind,
    /// Its size from stat (0 for pipes and /proc files).
    pub len: u64,
    /// Worker threads to use.
    pub threads: usize,
    /// Bytes per read call (or per chunk, for mmap).
    pub block_size: u64,
    /// Reads in flight per thread (io_uring).
    pub depth: usize,
}

/// What an engine needs and does; the chooser and the harness look only at these flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Caps {
    /// Needs a regular file of known size (it maps it or reads at offsets).
    pub sized: bool,
    /// Bypasses the page cache with O_DIRECT (so it suits cold data).
    pub direct: bool,
    /// Spreads the work over threads.
    pub parallel: bool,
}

/// A way of reading a whole file and computing its checksum.
pub trait Engine: Sync {
    /// The name users pass to `--engine`.
    fn name(&self) -> &'static str;
    /// One line on how it moves bytes.
    fn describe(&self) -> &'static str;
    /// Its capability flags.
    fn caps(&self) -> Caps;
    /// Whether it can run on this input here; `Err` carries the reason it cannot.
    fn check(&self, job: &Job) -> Result<(), String> {
        check_caps(self.name(), self.caps(), job)
    }
    /// Reads the whole input and returns what it moved.
    fn run(&self, job: &Job) -> anyhow::Result<Moved>;
}

impl std::fmt::Debug for dyn Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The checks every engine's capability flags imply; engines with more needs add theirs.
pub fn check_caps(name: &str, caps: Caps, job: &Job) -> Result<(), String> {
    if caps.sized && job.kind != InputKind::Regular {
        return Err(format!("{name} needs a regular file"));
    }
    if caps.sized && job.len == 0 {
        // Empty, or a /proc file that reports size 0 but has content: only reading to
        // the end tells which.
        return Err(format!("{name} needs the size, and stat says 0"));
    }
    Ok(())
}

/// Every engine, in the order `--engine` help lists them.
pub const ENGINES: &[&dyn Engine] = &[
    &stream::Stream,
    &pread::Pread,
    &mmap::Mmap,
    &direct::Direct,
    &hybrid::Hybrid,
    &uring::Uring,
];

/// The engine called `name`.
pub fn by_name(name: &str) -> Option<&'static dyn Engine> {
    ENGINES.iter().copied().find(|e| e.name() == name)
}

/// The names of all engines, comma-separated, for messages.
pub fn names() -> String {
    ENGINES
        .iter()
        .map(|e| e.name())
        .collect::<Vec<_>>()
        .join(", ")
}
