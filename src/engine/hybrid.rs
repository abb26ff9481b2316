//! The `hybrid` engine, for files partly in the page cache: the file is mapped, and each
//! 4 MiB chunk is XOR-ed in place when all its pages are cached, or read from the device
//! with O_DIRECT when any is missing. Many threads, so the device sees a deep queue while
//! cached chunks are XOR-ed at memory speed.

use super::buffer::{ALIGN, AlignedBuffer};
use super::direct::{aligned_block, check_direct, flush, open_direct, read_chunk};
use super::mmap::{Mapping, expect_size, install_sigbus_handler};
use super::parallel::for_each_chunk;
use super::{Caps, Engine, Job, Moved, xor_from};
use anyhow::Result;

/// mmap for cached chunks, O_DIRECT for the others.
pub struct Hybrid;

impl Engine for Hybrid {
    fn name(&self) -> &'static str {
        "hybrid"
    }
    fn describe(&self) -> &'static str {
        "per 4 MiB chunk: XOR in place through mmap when cached, else O_DIRECT from the device"
    }
    fn caps(&self) -> Caps {
        Caps {
            sized: true,
            direct: true,
            parallel: true,
        }
    }
    fn check(&self, job: &Job) -> Result<(), String> {
        check_direct(self, job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        flush(job)?;
        install_sigbus_handler(job.name);
        let direct = open_direct(job.file, job.name)?;
        // Page-aligned for the mapping, hence aligned for O_DIRECT too (both powers of two).
        let start = job.aligned_start(crate::measure::cache::page_size().max(ALIGN as u64));
        let map = Mapping::new(job.file, job.name, start, job.end() - start)?;
        let block = aligned_block(job.block_size);
        let (xor, calls) = for_each_chunk(
            job.end() - start,
            block,
            job.threads,
            || Ok(None::<AlignedBuffer>),
            |rel, len, buf| {
                crate::interrupt::check()?;
                let (o, l) = (rel as usize, len as usize);
                if map.resident(o, l) {
                    return Ok((xor_from(job.offset, start + rel, map.slice(o, l)), 1));
                }
                let buf = buf.get_or_insert_with(|| AlignedBuffer::untouched(block as usize));
                read_chunk(&direct, job, buf, start + rel, len)
            },
        )?;
        // Cached chunks were read through the mapping, which does not see a shorter file.
        expect_size(job)?;
        Ok(Moved {
            bytes: job.len,
            calls,
            xor,
        })
    }
}
