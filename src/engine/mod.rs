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
    /// Where the input starts in the file: the position of a standard input redirected
    /// from a file, else 0. Engines that read() expect the file position to be here;
    /// engines that read at offsets read from here. Either way the byte at `offset` is byte
    /// 0 of the checksum.
    pub offset: u64,
    /// Bytes from `offset` to the end stat gave (0 for pipes and /proc files).
    pub len: u64,
    /// The pseudo file system the input is on (`proc`, `sysfs`…), whose stat sizes are not
    /// content sizes: only reading to the end applies.
    pub pseudo_fs: Option<&'static str>,
    /// Worker threads to use.
    pub threads: usize,
    /// Bytes per read call (or per chunk, for mmap).
    pub block_size: u64,
    /// Reads in flight per thread (io_uring).
    pub depth: usize,
}

impl Job<'_> {
    /// The file position where the input ends: its size when reading began.
    pub fn end(&self) -> u64 {
        self.offset + self.len
    }

    /// Where an engine whose reads must start at multiples of `align` begins: `offset`
    /// rounded down. The bytes before `offset` are read but not counted ([`xor_from`]).
    pub fn aligned_start(&self, align: u64) -> u64 {
        self.offset - self.offset % align
    }
}

/// The XOR of `bytes`, read at file position `at`, as part of an input that starts at file
/// position `origin`: bytes before `origin` do not count, and `origin` is byte 0.
pub fn xor_from(origin: u64, at: u64, bytes: &[u8]) -> u32 {
    let skip = origin.saturating_sub(at);
    if skip >= bytes.len() as u64 {
        return 0;
    }
    crate::checksum::xor_at(at + skip - origin, &bytes[skip as usize..])
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
    /// What it gives up on this input while still running on it, as `FEATURE: reason`
    /// (uring without O_DIRECT); `fast` lists it with the fallbacks.
    fn degraded(&self, _job: &Job) -> Option<String> {
        None
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
    if let Some(fs) = job.pseudo_fs.filter(|_| caps.sized) {
        return Err(format!(
            "{name} needs the size, and on {fs} stat does not give the content's size"
        ));
    }
    if caps.sized && job.len == 0 {
        // Empty, or a /proc file that reports size 0 but has content: only reading to
        // the end tells which.
        return Err(if job.offset == 0 {
            format!("{name} needs the size, and stat says 0")
        } else {
            format!(
                "{name} needs bytes to read, and stat says none are left after byte {}",
                job.offset
            )
        });
    }
    Ok(())
}

/// The error for a regular file that ended at byte `reached`, before the `size` it had when
/// reading began: one rule for every engine and for `run -r` (exit 1, a failed check).
pub fn shrank(name: &str, reached: u64, size: u64) -> anyhow::Error {
    crate::error::Failure::Check(format!(
        "read {name}: the file ended at byte {reached} but its size was {size} when reading began (did it shrink?)"
    ))
    .into()
}

/// Checks that the `want` bytes at `offset` of a file of `size` bytes (when reading began)
/// were read whole: `got` fewer means the file shrank.
pub fn expect_whole(name: &str, offset: u64, want: u64, got: u64, size: u64) -> anyhow::Result<()> {
    if got < want {
        return Err(shrank(name, offset + got, size));
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ExitKind, exit_kind};
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Whether this kernel fills mapped pages on request (MADV_POPULATE_READ, Linux 5.14+):
    /// without it, an engine that maps a file shorter than the job takes a SIGBUS.
    fn kernel_populates() -> bool {
        let mut file = tempfile::tempfile().expect("temp file");
        file.write_all(b"probe").expect("write");
        let map = mmap::Mapping::new(&file, "probe", 0, 5).expect("map");
        map.advise(0, 5, mmap::MADV_POPULATE_READ).is_ok()
    }

    /// Runs `engine` on another thread on a file of `real` bytes, with a job that says
    /// `claimed`; `Err(reason)` when it cannot run here, a panic if it does not return.
    fn run_claiming(
        engine: &'static dyn Engine,
        real: usize,
        claimed: u64,
    ) -> Result<anyhow::Result<Moved>, String> {
        let mut file = tempfile::tempfile().expect("temp file");
        let mut data = vec![0u8; real];
        crate::workload::data::DataStream::new(7, 0).fill(&mut data);
        file.write_all(&data).expect("write");
        std::io::Seek::rewind(&mut file).expect("rewind");
        if ["mmap", "hybrid"].contains(&engine.name()) && !kernel_populates() {
            return Err("no MADV_POPULATE_READ (Linux < 5.14): a SIGBUS would end the test".into());
        }
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let job = Job {
                file: &file,
                name: "short-file",
                kind: InputKind::Regular,
                offset: 0,
                len: claimed,
                pseudo_fs: None,
                threads: 3,
                block_size: 64 << 10,
                depth: 4,
            };
            let outcome = engine.check(&job).map(|()| engine.run(&job));
            let _ = tx.send(outcome);
        });
        rx.recv_timeout(Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("{} hung", engine.name()))
    }

    #[test]
    fn bytes_before_the_origin_do_not_count_and_the_origin_is_byte_0() {
        let data: Vec<u8> = (1..=40).collect();
        for origin in [0u64, 1, 3, 4, 7, 39, 40] {
            let want = crate::checksum::xor_bytes(&data[origin as usize..]);
            for cut in [0usize, 2, 5, 8, 13, 40] {
                // Two reads, at 0 and at `cut`, as engines make them.
                let x =
                    xor_from(origin, 0, &data[..cut]) ^ xor_from(origin, cut as u64, &data[cut..]);
                assert_eq!(x, want, "origin {origin} cut {cut}");
            }
        }
        assert_eq!(xor_from(100, 0, &data), 0, "all before the origin");
    }

    #[test]
    fn every_engine_fails_a_check_naming_the_file_the_end_reached_and_the_size() {
        // Within the last page (mappings read zeros there), and far past the end.
        for (real, claimed) in [(10_000usize, 12_000u64), (10_000, (1 << 20) + 3), (0, 5000)] {
            for &engine in ENGINES {
                let outcome = match run_claiming(engine, real, claimed) {
                    Ok(outcome) => outcome,
                    Err(why) => {
                        eprintln!("skipped: {} on {real}/{claimed}: {why}", engine.name());
                        continue;
                    }
                };
                let what = format!("{} on {real} bytes claimed as {claimed}", engine.name());
                let err = outcome.expect_err(&what);
                assert_eq!(exit_kind(&err), ExitKind::Failed, "{what}: {err:#}");
                assert!(err.is::<crate::error::Failure>(), "{what}: {err:#}");
                let text = err.to_string();
                assert!(
                    text.starts_with("read short-file: the file ended at byte ")
                        && text.contains(&format!("but its size was {claimed} when reading began")),
                    "{what}: {text}"
                );
                let reached: u64 = text["read short-file: the file ended at byte ".len()..]
                    .split(' ')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .expect("a byte offset");
                assert!(
                    reached >= real as u64 && reached < claimed,
                    "{what}: {text}"
                );
            }
        }
    }
}
