//! The `hybrid` engine, for files partly in the page cache: the file is mapped, and each
//! 4 MiB chunk whose pages are all cached is read as the `adaptive` engine reads it (in
//! place where the page cache has huge pages, else copied); a chunk with any page missing
//! is read from the device with O_DIRECT. Many threads, so the device sees a deep queue
//! while cached chunks are XOR-ed at memory speed.

use super::adaptive::{Tally, Worker, cached};
use super::buffer::{self, AlignedBuffer};
use super::direct::{check_direct, flush, open_direct, read_piece};
use super::flag::*;
use super::mmap::{Mapping, install_sigbus_handler};
use super::parallel::for_each_piece;
use super::{Caps, Engine, Job, Moved, Spec};
use anyhow::Result;

/// mmap for cached chunks, O_DIRECT for the others.
pub struct Hybrid;

/// What the `hybrid` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "hybrid",
    describe: "per 4 MiB chunk: when cached, as adaptive reads it; else O_DIRECT from the device",
    caps: Caps::of(
        READ | SIZED | ANY_ORDER | DIRECT | PARALLEL | ZERO_COPY | PER_CHUNK | MOVES_BYTES,
    ),
    defaults: super::direct::SPEC.defaults,
};

impl Engine for Hybrid {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn buffers(&self, job: &Job) -> usize {
        super::parallel::workers(job)
    }
    fn check(&self, job: &Job) -> Result<(), String> {
        check_direct(self, job)
    }
    fn before(&self, job: &Job) -> Result<()> {
        flush(job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        if job.plan.len == 0 {
            return Ok(Moved::default());
        }
        // Again, for callers that time the whole run (`fast`): cheap when already clean.
        flush(job)?;
        install_sigbus_handler(job.name);
        let direct = open_direct(job.file, job.name)?;
        let map = Mapping::new(
            job.file,
            job.name,
            job.plan.start,
            job.plan.start + job.plan.len,
        )?;
        let block = job.plan.block as usize;
        let tally = Tally::default();
        let mut moved = for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok((Worker::new(&tally), None::<buffer::Pooled>)),
            |offset, len, (worker, buf)| {
                if map.resident(offset, len as usize) {
                    return cached(Some(&map), job, offset, len, worker);
                }
                let buf = buf.get_or_insert_with(|| buffer::take(block, AlignedBuffer::untouched));
                read_piece(job, &direct, buf, offset, len)
            },
        )?;
        tally.report(&mut moved);
        super::mmap::expect_size(job)?;
        Ok(moved)
    }
}
