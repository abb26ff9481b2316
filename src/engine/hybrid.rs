//! The `hybrid` engine, for files partly in the page cache: the file is mapped, and each
//! 4 MiB chunk is XOR-ed in place when all its pages are cached, or read from the device
//! with O_DIRECT when any is missing. Many threads, so the device sees a deep queue while
//! cached chunks are XOR-ed at memory speed.

use super::buffer::{self, AlignedBuffer};
use super::direct::{check_direct, flush, open_direct, read_piece};
use super::flag::*;
use super::mmap::{Mapping, install_sigbus_handler};
use super::parallel::for_each_piece;
use super::{Caps, Engine, Job, Moved, Spec};
use crate::checksum::xor_at;
use anyhow::Result;

/// mmap for cached chunks, O_DIRECT for the others.
pub struct Hybrid;

/// What the `hybrid` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "hybrid",
    describe: "per 4 MiB chunk: XOR in place through mmap when cached, else O_DIRECT from the device",
    caps: Caps::of(READ | SIZED | ANY_ORDER | DIRECT | PARALLEL | ZERO_COPY | MOVES_BYTES),
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
        let moved = for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(None::<buffer::Pooled>),
            |offset, len, buf| {
                let l = len as usize;
                if map.resident(offset, l) {
                    let bytes = map
                        .slice(offset, l)
                        .expect("plan pieces lie inside the mapping");
                    return Ok((xor_at(job.rel(offset), bytes), 1));
                }
                let buf = buf.get_or_insert_with(|| buffer::take(block, AlignedBuffer::untouched));
                read_piece(job, &direct, buf, offset, len)
            },
        )?;
        super::mmap::expect_size(job)?;
        Ok(moved)
    }
}
