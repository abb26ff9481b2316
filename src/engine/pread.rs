//! The `pread` engine: buffered pread() of large blocks at offsets, on several threads.

use super::parallel::for_each_chunk;
use super::{Caps, Engine, Job, Moved};
use crate::checksum::xor_at;
use crate::engine::buffer::AlignedBuffer;
use anyhow::{Context, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Buffered pread() on threads.
pub struct Pread;

/// Reads exactly `buf.len()` bytes at `offset` unless the file ends first; returns the bytes
/// read and the calls made.
pub fn pread_full(file: &File, name: &str, buf: &mut [u8], offset: u64) -> Result<(usize, u64)> {
    let mut done = 0;
    let mut calls = 0;
    while done < buf.len() {
        calls += 1;
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("read {name} at byte {}", offset + done as u64));
            }
        }
    }
    Ok((done, calls))
}

/// Checks that a piece of a sized file was read whole: a shorter read means the file shrank.
pub fn expect_whole(name: &str, offset: u64, want: u64, got: u64) -> Result<()> {
    if got < want {
        return Err(crate::error::Failure::Check(format!(
            "read {name}: the file ended at byte {} but its size was {} when reading began (did it shrink?)",
            offset + got,
            offset + want
        ))
        .into());
    }
    Ok(())
}

impl Engine for Pread {
    fn name(&self) -> &'static str {
        "pread"
    }
    fn describe(&self) -> &'static str {
        "buffered pread() of large blocks at offsets, one thread per core"
    }
    fn caps(&self) -> Caps {
        Caps {
            sized: true,
            direct: false,
            parallel: true,
        }
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        let (xor, calls) = for_each_chunk(
            job.len,
            job.block_size,
            job.threads,
            || Ok(AlignedBuffer::new(job.block_size as usize)),
            |offset, len, buf| {
                crate::interrupt::check()?;
                let slice = &mut buf.as_mut_slice()[..len as usize];
                let (n, calls) = pread_full(job.file, job.name, slice, offset)?;
                expect_whole(job.name, offset, len, n as u64)?;
                Ok((xor_at(offset, &slice[..n]), calls))
            },
        )?;
        Ok(Moved {
            bytes: job.len,
            calls,
            xor,
        })
    }
}
