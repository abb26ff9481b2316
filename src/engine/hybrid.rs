//! The `hybrid` engine, for files partly in the page cache: the file is mapped, and each
//! 4 MiB chunk is XOR-ed in place when all its pages are cached, or read from the device
//! with O_DIRECT when any is missing. Many threads, so the device sees a deep queue while
//! cached chunks are XOR-ed at memory speed.

use super::buffer::AlignedBuffer;
use super::direct::{check_direct, flush, open_direct, read_piece};
use super::mmap::{Mapping, install_sigbus_handler};
use super::parallel::for_each_piece;
use super::{Caps, Defaults, Engine, Job, Moved};
use crate::checksum::xor_at;
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
            read: true,
            write: false,
            sized: true,
            any_order: true,
            direct: true,
            parallel: true,
            queued: false,
            zero_copy: true,
            counted: false,
            moves_bytes: true,
        }
    }
    fn defaults(&self, len: u64) -> Defaults {
        super::direct::Direct.defaults(len)
    }
    fn check(&self, job: &Job) -> Result<(), String> {
        check_direct(self, job)
    }
    fn run(&self, job: &Job) -> Result<Moved> {
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
        let (xor, calls) = for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(None::<AlignedBuffer>),
            |offset, len, buf| {
                let l = len as usize;
                if map.resident(offset, l) {
                    let bytes = map
                        .slice(offset, l)
                        .expect("plan pieces lie inside the mapping");
                    return Ok((xor_at(job.rel(offset), bytes), 1));
                }
                let buf = buf.get_or_insert_with(|| AlignedBuffer::untouched(block));
                read_piece(job, &direct, buf, offset, len)
            },
        )?;
        super::mmap::expect_size(job)?;
        Ok(Moved {
            bytes: job.plan.len,
            calls,
            xor,
        })
    }
}
