//! Engines: each file here moves bytes between memory and a file (or any descriptor) in one
//! way, following an offset plan from `workload::plan`. Engines do not time, print or parse
//! options, and know no command; the harness in `cmd/` measures around them. Every engine
//! computes the same checksum for the same bytes. The table at the bottom is the only list
//! of engines: a new engine is one file and one line there, and every command can use it.

pub mod adaptive;
pub mod buffer;
pub mod direct;
pub mod hybrid;
pub mod mixed;
pub mod mmap;
pub mod null;
pub mod parallel;
pub mod pread;
pub mod prepared;
pub mod queue;
pub mod simulated;
pub mod stream;
pub mod sync;
pub mod uring;

use crate::files::InputKind;
pub use crate::workload::Op;
use crate::workload::plan::Plan;
use serde::{Deserialize, Serialize};
use std::fs::File;

/// What an engine moved: bytes, system calls made, and the checksum of the bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    /// Bytes read or written.
    pub bytes: u64,
    /// System calls that moved data (including a final read that returned 0).
    pub calls: u64,
    /// XOR of the bytes, per the checksum convention (0 for an engine that moves none).
    pub xor: u32,
    /// Of `bytes`, those XOR-ed where they lay in the page cache, through a mapping,
    /// without a copy.
    #[serde(default)]
    pub in_place: u64,
    /// What an engine that decides per chunk (`per_chunk`) tested to decide.
    #[serde(default)]
    pub tests: ChunkTests,
}

/// The tests a per-chunk engine made of how the page cache holds its chunks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkTests {
    /// Chunks tested.
    pub tested: u64,
    /// Of those, chunks found in huge pages.
    pub huge: u64,
    /// Nanoseconds spent testing, summed over threads.
    pub nanos: u64,
}

/// Told about progress between system calls; an error (such as an interruption) stops the
/// engine with that error. Shared by an engine's threads.
pub trait Observer: Sync {
    /// `bytes` more bytes were moved since the last call.
    fn moved(&self, bytes: u64) -> anyhow::Result<()>;
}

/// The observer that only honours Ctrl-C.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interruptible;

impl Observer for Interruptible {
    fn moved(&self, _: u64) -> anyhow::Result<()> {
        crate::interrupt::check()
    }
}

/// How often a single-threaded engine calls its observer: after this many calls or bytes.
pub(crate) struct Cadence {
    calls: u64,
    bytes: u64,
    reported: u64,
}

impl Cadence {
    const CALLS: u64 = 1 << 16;
    const BYTES: u64 = 32 << 20;

    pub(crate) fn new() -> Self {
        Self {
            calls: 0,
            bytes: 0,
            reported: 0,
        }
    }

    /// Calls the observer when due, given the running totals.
    #[inline]
    pub(crate) fn tick(
        &mut self,
        observer: &dyn Observer,
        calls: u64,
        bytes: u64,
    ) -> anyhow::Result<()> {
        if calls - self.calls >= Self::CALLS || bytes - self.bytes >= Self::BYTES {
            self.calls = calls;
            self.bytes = bytes;
            let delta = bytes - self.reported;
            self.reported = bytes;
            observer.moved(delta)?;
        }
        Ok(())
    }
}

/// One piece of work for an engine: what to move, where, how.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// The open file (or pipe, socket, device).
    pub file: &'a File,
    /// Its name, for messages.
    pub name: &'a str,
    /// What kind of thing it is.
    pub kind: InputKind,
    /// Read from it or write to it.
    pub op: Op,
    /// The bytes to move and their order. For reads with `to_end`, `plan.len` is the size
    /// the input had when reading began (0 when unknown). Engines that read or write in
    /// order from the current offset (`stream`) expect the file to stand at `plan.start`.
    pub plan: Plan,
    /// Read until end of input rather than exactly `plan.len` bytes (pipes, /proc, and
    /// regular files read whole, which must not end before `plan.len`).
    pub to_end: bool,
    /// Worker threads.
    pub threads: usize,
    /// Requests in flight per thread (io_uring).
    pub depth: usize,
    /// Writes: byte `o` of the file is byte `o` of `DataStream::new(seed, 0)`.
    pub seed: u64,
    /// Progress and interruption.
    pub observer: &'a dyn Observer,
}

impl std::fmt::Debug for Job<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("name", &self.name)
            .field("op", &self.op)
            .field("plan", &self.plan)
            .field("to_end", &self.to_end)
            .field("threads", &self.threads)
            .finish()
    }
}

impl Job<'_> {
    /// The checksum offset of absolute file offset `offset`: checksums count from the
    /// first byte of the plan.
    pub fn plan_offset(&self, offset: u64) -> u64 {
        offset - self.plan.start
    }
}

/// What an engine can do, as bits (fio's `enum fio_ioengine_flags`): the constants in
/// [`flag`], combined with `|` and given to [`Caps::of`], asked with [`Caps::has`] and
/// [`Caps::lacks`].
/// Commands and the chooser look only at these flags, never at names. In JSON it is an
/// object of one bool per flag, named as in [`flag::NAMES`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Caps(u16);

/// Capability flags, combined with `|` for [`Caps::of`].
pub mod flag {
    /// Reads.
    pub const READ: u16 = 1;
    /// Writes.
    pub const WRITE: u16 = 1 << 1;
    /// Needs a regular file of known size (it maps it or reads at offsets).
    pub const SIZED: u16 = 1 << 2;
    /// Follows any offset plan (else sequential only).
    pub const ANY_ORDER: u16 = 1 << 3;
    /// Bypasses the page cache with O_DIRECT (so it suits cold data).
    pub const DIRECT: u16 = 1 << 4;
    /// Spreads the work over threads.
    pub const PARALLEL: u16 = 1 << 5;
    /// Keeps several requests in flight per thread (`--depth`).
    pub const QUEUED: u16 = 1 << 6;
    /// Reads the page cache in place, without copying into a buffer.
    pub const ZERO_COPY: u16 = 1 << 7;
    /// Its calls and bytes go through read()/write()-like calls that /proc/self/io counts.
    pub const COUNTED: u16 = 1 << 8;
    /// Moves real bytes (not set for `null`).
    pub const MOVES_BYTES: u16 = 1 << 9;
    /// Decides per chunk how to read it, by how the page cache holds that chunk.
    pub const PER_CHUNK: u16 = 1 << 10;

    /// Every flag with its name in JSON, in the order JSON lists them.
    pub const NAMES: [(u16, &str); 11] = [
        (READ, "read"),
        (WRITE, "write"),
        (SIZED, "sized"),
        (ANY_ORDER, "any_order"),
        (DIRECT, "direct"),
        (PARALLEL, "parallel"),
        (QUEUED, "queued"),
        (ZERO_COPY, "zero_copy"),
        (COUNTED, "counted"),
        (MOVES_BYTES, "moves_bytes"),
        (PER_CHUNK, "per_chunk"),
    ];

    /// Flags added after the first results were saved: JSON without them reads as unset.
    pub const ADDED_LATER: u16 = PER_CHUNK;
}

impl Caps {
    /// The flags set in `bits` (see [`flag`]).
    pub const fn of(bits: u16) -> Self {
        Self(bits)
    }

    /// Whether every flag in `flags` is set.
    pub const fn has(self, flags: u16) -> bool {
        self.0 & flags == flags
    }

    /// Whether no flag in `flags` is set.
    pub const fn lacks(self, flags: u16) -> bool {
        self.0 & flags == 0
    }

    /// Whether it can do `op` (read or write).
    pub const fn does(self, op: Op) -> bool {
        self.has(match op {
            Op::Read => flag::READ,
            Op::Write => flag::WRITE,
        })
    }

    /// Why the results of engine `engine`, which has these flags, carry no per-call
    /// latency, when its calls are not one block each; `None` for an engine that makes one
    /// call per block.
    pub fn latency_absent(self, engine: &str) -> Option<String> {
        if !self.has(flag::MOVES_BYTES) {
            Some(format!("the {engine} engine makes no system call"))
        } else if self.has(flag::ZERO_COPY) {
            Some(format!(
                "the {engine} engine reads through a mapping: no system call per block to time"
            ))
        } else if self.has(flag::QUEUED) {
            Some(format!(
                "the {engine} engine submits requests in batches: one call moves many blocks, so a call's time is not one I/O's"
            ))
        } else {
            None
        }
    }
}

impl std::fmt::Debug for Caps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set: Vec<&str> = flag::NAMES
            .iter()
            .filter(|(bit, _)| self.has(*bit))
            .map(|(_, name)| *name)
            .collect();
        write!(f, "Caps({})", set.join(" | "))
    }
}

impl Serialize for Caps {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut s = serializer.serialize_struct("Caps", flag::NAMES.len())?;
        for (bit, name) in flag::NAMES {
            s.serialize_field(name, &self.has(bit))?;
        }
        s.end()
    }
}

impl<'de> Deserialize<'de> for Caps {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let named = std::collections::BTreeMap::<String, bool>::deserialize(deserializer)?;
        let mut bits = 0;
        for (bit, name) in flag::NAMES {
            match named.get(name) {
                Some(true) => bits |= bit,
                Some(false) => {}
                None if bit & flag::ADDED_LATER != 0 => {}
                None => return Err(serde::de::Error::missing_field(name)),
            }
        }
        Ok(Self(bits))
    }
}

/// What an engine is: its name, what it does, its flags and its defaults.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The name users pass to `--engine`.
    pub name: &'static str,
    /// One line on how it moves bytes.
    pub describe: &'static str,
    /// Its capability flags.
    pub caps: Caps,
    /// Its defaults.
    pub defaults: Defaults,
}

/// How many threads an engine wants by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// One.
    One,
    /// One per core.
    PerCore,
    /// Enough to keep this many bytes in flight (threads blocked in the device queue),
    /// at least two, at most 128, within 1/16 of the available memory.
    InFlight(u64),
}

/// An engine's own defaults, used when the user gives none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    /// Worker threads.
    pub threads: Threads,
    /// Bytes per call or chunk.
    pub block_size: u64,
    /// Requests in flight per thread.
    pub depth: usize,
}

/// An engine with its threads and requests in flight, as a command runs it (the block
/// size comes with each run's plan).
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// The engine.
    pub engine: &'static dyn Engine,
    /// Worker threads.
    pub threads: usize,
    /// Requests in flight per thread.
    pub depth: usize,
}

impl Setup {
    /// `engine` with one thread and depth one: the classic single-stream measurement.
    pub fn single(engine: &'static dyn Engine) -> Self {
        Self {
            engine,
            threads: 1,
            depth: 1,
        }
    }
}

/// A way of moving bytes.
pub trait Engine: Sync {
    /// What it is and can do.
    fn spec(&self) -> &'static Spec;
    /// The name users pass to `--engine`.
    fn name(&self) -> &'static str {
        self.spec().name
    }
    /// One line on how it moves bytes.
    fn describe(&self) -> &'static str {
        self.spec().describe
    }
    /// Its capability flags.
    fn caps(&self) -> Caps {
        self.spec().caps
    }
    /// Its defaults for an input of `len` bytes (0: unknown).
    fn defaults(&self, _len: u64) -> Defaults {
        self.spec().defaults
    }
    /// Whether it can run this job here; `Err` carries the reason it cannot.
    fn check(&self, job: &Job) -> Result<(), String> {
        check_caps(self.name(), self.caps(), job)
    }
    /// How many `plan.block`-sized buffers a run of the job takes from
    /// [`buffer`]'s pool: the harness stocks them before timing, so that allocating and
    /// first touching them (about 1 s per GiB on some VMs) stays out of the measurement.
    fn buffers(&self, _job: &Job) -> usize {
        0
    }
    /// Work that must precede the job but is not part of moving its bytes (writing back
    /// dirty pages before O_DIRECT reads, say); the harness runs it before timing.
    fn before(&self, _job: &Job) -> anyhow::Result<()> {
        Ok(())
    }
    /// Things the user should know about how the job will run (a refused O_DIRECT, say).
    fn notes(&self, _job: &Job) -> Vec<String> {
        Vec::new()
    }
    /// Moves the bytes of the job and returns what it moved.
    fn run(&self, job: &Job) -> anyhow::Result<Moved>;
}

impl std::fmt::Debug for dyn Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The checks every engine's capability flags imply; engines with more needs add theirs.
pub fn check_caps(name: &str, caps: Caps, job: &Job) -> Result<(), String> {
    if !caps.does(job.op) {
        return Err(format!("{name} cannot {}", job.op.name()));
    }
    if !job.plan.is_sequential() && !caps.has(flag::ANY_ORDER) {
        return Err(format!("{name} reads and writes only in order"));
    }
    if !job.plan.is_sequential() && job.kind != InputKind::Regular {
        return Err(format!("{name}: offsets need a regular file"));
    }
    if caps.has(flag::SIZED) && job.plan.is_interleaved() {
        // Sized engines map or bound the range [start, start + len); an interleaved lane's
        // pieces lie beyond it.
        return Err(format!(
            "{name} needs one contiguous range, not interleaved pieces"
        ));
    }
    if caps.has(flag::SIZED) && job.kind != InputKind::Regular {
        return Err(format!("{name} needs a regular file"));
    }
    if caps.has(flag::SIZED) && job.op == Op::Read && job.plan.len == 0 && job.to_end {
        // Size unknown: a /proc file reports 0 but has content; only reading to the end
        // tells. (A file known to be empty comes with `to_end` false, and reads nothing.)
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
    &adaptive::Adaptive,
    &uring::Uring,
    &null::Null,
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

/// The engines that can do `op`, in table order.
pub fn engines_for(op: Op) -> impl Iterator<Item = &'static dyn Engine> {
    ENGINES.iter().copied().filter(move |e| e.caps().does(op))
}

/// Every engine, one per line with what it can and does: for `--engine` help.
pub fn table() -> String {
    ENGINES
        .iter()
        .map(|e| {
            let c = e.caps();
            let can = match (c.has(flag::READ), c.has(flag::WRITE)) {
                (true, true) => "read+write",
                (true, false) => "read",
                (false, true) => "write",
                (false, false) => "-",
            };
            format!("{:<8} [{can}] {}", e.name(), e.describe())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The error for a file that ended at `reached` although it had `size` bytes when reading
/// began: the one rule for every engine.
pub fn shrank(name: &str, reached: u64, size: u64) -> anyhow::Error {
    crate::error::Failure::Check(format!(
        "read {name}: the file ended at byte {reached} but its size was {size} when reading began (did it shrink?)"
    ))
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engines_without_a_call_per_block_say_why_and_the_others_do_not() {
        let e = |n: &str| by_name(n).expect("engine");
        let absent = |n: &str| e(n).caps().latency_absent(n);
        assert!(absent("mmap").is_some());
        assert!(absent("uring").is_some());
        assert!(absent("null").is_some());
        assert!(absent("stream").is_none());
        assert!(absent("pread").is_none());
    }

    #[test]
    fn caps_are_saved_as_one_bool_per_flag_in_the_order_of_the_names() {
        let caps = Caps::of(flag::READ | flag::ANY_ORDER | flag::PER_CHUNK);
        let json = serde_json::to_string(&caps).expect("caps serialize");
        assert_eq!(
            json,
            r#"{"read":true,"write":false,"sized":false,"any_order":true,"direct":false,"parallel":false,"queued":false,"zero_copy":false,"counted":false,"moves_bytes":false,"per_chunk":true}"#
        );
        let back: Caps = serde_json::from_str(&json).expect("caps deserialize");
        assert_eq!(back, caps);
    }

    #[test]
    fn caps_saved_before_per_chunk_read_it_as_unset_and_other_missing_flags_are_refused() {
        let old = r#"{"read":true,"write":true,"sized":true,"any_order":true,"direct":false,"parallel":true,"queued":false,"zero_copy":false,"counted":true,"moves_bytes":true}"#;
        let caps: Caps = serde_json::from_str(old).expect("older caps");
        assert_eq!(caps, pread::SPEC.caps);
        assert!(caps.lacks(flag::PER_CHUNK));
        let missing = old.replace(r#""read":true,"#, "");
        let err = serde_json::from_str::<Caps>(&missing).expect_err("read is required");
        assert!(err.to_string().contains("missing field `read`"), "{err}");
    }

    #[test]
    fn has_asks_for_every_flag_given_and_lacks_for_none_of_them() {
        let caps = mmap::SPEC.caps;
        assert!(caps.has(flag::READ | flag::ZERO_COPY));
        assert!(!caps.has(flag::READ | flag::WRITE));
        assert!(caps.lacks(flag::WRITE | flag::DIRECT));
        assert!(!caps.lacks(flag::WRITE | flag::READ));
        assert!(caps.does(Op::Read) && !caps.does(Op::Write));
        assert_eq!(
            format!("{:?}", null::SPEC.caps),
            "Caps(read | write | any_order)"
        );
    }
}
