//! The `pread` engine: buffered pread() of large blocks at offsets, on several threads.

use super::parallel::for_each_chunk;
use super::{Caps, Engine, Job, Moved, expect_whole};
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
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("read {name} at byte {}", offset + done as u64));
            }
        }
    }
    Ok((done, calls))
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
            |rel, len, buf| {
                crate::interrupt::check()?;
                let slice = &mut buf.as_mut_slice()[..len as usize];
                let offset = job.offset + rel;
                let (n, calls) = pread_full(job.file, job.name, slice, offset)?;
                expect_whole(job.name, offset, len, n as u64, job.end())?;
                Ok((xor_at(rel, &slice[..n]), calls))
            },
        )?;
        Ok(Moved {
            bytes: job.len,
            calls,
            xor,
        })
    }
}
