//! The `adaptive` engine, for files in the page cache: each chunk is read the way that is
//! fastest for how the page cache holds it. Where the kernel maps the chunk with 2 MiB
//! pages (a file written in large pieces keeps large folios), it is XOR-ed in place through
//! a mapping, with no copy and a page-table entry per 2 MiB. Elsewhere (a file written in
//! small pieces, by `head -c`, `cp` or `dd bs=64k`, keeps 4 KiB pages), mapping costs a
//! page-table entry and a reference per 4 KiB and stops scaling, so the chunk is copied
//! with pread() into a buffer small enough to stay in the CPU's cache while it is XOR-ed.
//!
//! Measured on 2 GiB files, warm, 2 vCPUs (medians of 5 alternating runs): written by
//! `head -c`, mmap 9.9 GiB/s against pread in 128 KiB pieces 17.2; written in 4 MiB pieces,
//! mmap 26.8 against pread 19.4. The test per chunk is two page faults (see
//! [`Mapping::maps_huge`]), so a file with both kinds of stretch gets the better way for
//! each.

use super::buffer::{self, AlignedBuffer, Pooled};
use super::flag::*;
use super::mmap::{Mapping, expect_size, in_place, install_sigbus_handler};
use super::parallel::for_each_piece;
use super::pread::{expect_whole, pread_full};
use super::{Caps, ChunkTests, Defaults, Engine, Job, Moved, Spec, Threads};
use crate::checksum::xor_at;
use anyhow::Result;
use std::sync::atomic::{AtomicU64, Ordering};

/// In place where the page cache has huge pages, pread() copies elsewhere.
pub struct Adaptive;

/// Bytes per pread() on the copying path: the copy and the XOR that reads it back stay in
/// the CPU's L2 cache (512 KiB per core on the development VM's Zen 3).
pub const COPY: usize = 256 << 10;

/// What the `adaptive` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "adaptive",
    describe: "per chunk: XOR in place through mmap where the page cache maps it in 2 MiB pages, else pread() copies through a 256 KiB buffer; one thread per core",
    caps: Caps::of(READ | SIZED | ANY_ORDER | PARALLEL | ZERO_COPY | PER_CHUNK | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::PerCore,
        block_size: 8 << 20,
        depth: 1,
    },
};

impl Engine for Adaptive {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        if job.plan.len == 0 {
            return Ok(Moved::default());
        }
        install_sigbus_handler(job.name);
        // A file system that cannot map the file is read by copying only.
        let map = Mapping::new(
            job.file,
            job.name,
            job.plan.start,
            job.plan.start + job.plan.len,
        )
        .ok();
        let tally = Tally::default();
        let mut moved = for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(Worker::new(&tally)),
            |offset, len, worker| cached(map.as_ref(), job, offset, len, worker),
        )?;
        if map.is_some() {
            expect_size(job)?;
        }
        tally.report(&mut moved);
        Ok(moved)
    }
}

/// What the workers of one run found, summed as each finishes.
#[derive(Default)]
pub struct Tally {
    in_place: AtomicU64,
    tested: AtomicU64,
    huge: AtomicU64,
    nanos: AtomicU64,
}

impl Tally {
    /// Puts the totals into `moved`.
    pub fn report(&self, moved: &mut Moved) {
        moved.in_place = self.in_place.load(Ordering::Relaxed);
        moved.tests = ChunkTests {
            tested: self.tested.load(Ordering::Relaxed),
            huge: self.huge.load(Ordering::Relaxed),
            nanos: self.nanos.load(Ordering::Relaxed),
        };
    }
}

/// What a worker thread keeps between chunks: its copy buffer and what its tests found.
pub struct Worker<'a> {
    tally: &'a Tally,
    buf: Option<Pooled>,
    /// The last test's verdict: huge pages or not.
    verdict: Option<bool>,
    /// Tests in a row with that verdict.
    streak: u32,
    /// Chunks since the last test.
    since: u32,
    /// Bytes read in place.
    in_place: u64,
    /// The tests made.
    tests: ChunkTests,
}

impl Drop for Worker<'_> {
    fn drop(&mut self) {
        let t = &self.tally;
        t.in_place.fetch_add(self.in_place, Ordering::Relaxed);
        t.tested.fetch_add(self.tests.tested, Ordering::Relaxed);
        t.huge.fetch_add(self.tests.huge, Ordering::Relaxed);
        t.nanos.fetch_add(self.tests.nanos, Ordering::Relaxed);
    }
}

impl<'a> Worker<'a> {
    /// A worker that adds what it found to `tally` when it finishes.
    pub fn new(tally: &'a Tally) -> Self {
        Self {
            tally,
            buf: None,
            verdict: None,
            streak: 0,
            since: 0,
            in_place: 0,
            tests: ChunkTests::default(),
        }
    }

    /// After this many tests in a row agree, test only every [`Self::EVERY`]th chunk: a
    /// test costs two page faults (about 10 us where pages are small), which on 2 MiB
    /// chunks was 10% of the run.
    const TRUST: u32 = 4;
    const EVERY: u32 = 16;

    /// Whether the page cache holds this chunk in huge pages: tested, or taken from the
    /// tests before when they have agreed long enough.
    fn huge(&mut self, map: &Mapping, offset: u64, len: u64) -> bool {
        if self.streak >= Self::TRUST && self.since < Self::EVERY {
            self.since += 1;
            return self.verdict == Some(true);
        }
        self.since = 0;
        let clock = std::time::Instant::now();
        let verdict = map.maps_huge(offset, len as usize);
        self.tests.nanos += clock.elapsed().as_nanos() as u64;
        self.tests.tested += 1;
        self.tests.huge += u64::from(verdict == Some(true));
        match verdict {
            None => false,
            Some(huge) => {
                if self.verdict == Some(huge) {
                    self.streak += 1;
                } else {
                    (self.verdict, self.streak) = (Some(huge), 1);
                }
                huge
            }
        }
    }
}

/// The XOR and calls of a cached chunk, read in place when `map` maps it with huge pages,
/// else copied with pread() through the worker's buffer.
pub fn cached(
    map: Option<&Mapping>,
    job: &Job,
    offset: u64,
    len: u64,
    worker: &mut Worker,
) -> Result<(u32, u64)> {
    if let Some(map) = map
        && worker.huge(map, offset, len)
    {
        worker.in_place += len;
        return Ok((in_place(map, job, offset, len)?, 1));
    }
    let buf = worker
        .buf
        .get_or_insert_with(|| buffer::take(COPY, AlignedBuffer::new));
    copy(job, buf.as_mut_slice(), offset, len)
}

/// The XOR and calls of `[offset, offset + len)` read with pread() in pieces of `buf`'s
/// length (or less).
pub fn copy(job: &Job, buf: &mut [u8], offset: u64, len: u64) -> Result<(u32, u64)> {
    let piece = buf.len() as u64;
    let (mut xor, mut calls) = (0u32, 0u64);
    let end = offset + len;
    let mut at = offset;
    while at < end {
        let want = piece.min(end - at);
        let slice = &mut buf[..want as usize];
        let (n, c) = pread_full(job.file, job.name, slice, at)?;
        expect_whole(job, at, want, n as u64)?;
        xor ^= xor_at(job.plan_offset(at), slice);
        calls += c;
        at += want;
    }
    Ok((xor, calls))
}
