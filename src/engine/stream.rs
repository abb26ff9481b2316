//! The `stream` engine: read() to the end of the input, one thread. The only engine for
//! pipes, stdin and /proc files (which report size 0), and the fastest for small files.

use super::{Caps, Engine, Job, Moved};
use crate::engine::buffer::AlignedBuffer;
use std::os::fd::AsRawFd;

/// Plain read() to EOF.
pub struct Stream;

/// The buffer for a stream read: big enough for a small file in one call, at most 1 MiB.
fn buffer_len(job: &Job) -> u64 {
    const MAX: u64 = 1 << 20;
    if job.len > 0 && job.len < MAX {
        // One call for the data and one that finds EOF.
        (job.len + 1).next_multiple_of(4096)
    } else if job.len == 0 {
        64 << 10
    } else {
        job.block_size.clamp(4096, MAX)
    }
}

impl Engine for Stream {
    fn name(&self) -> &'static str {
        "stream"
    }
    fn describe(&self) -> &'static str {
        "read() to end of input, one thread (pipes, stdin, /proc, small files)"
    }
    fn caps(&self) -> Caps {
        Caps {
            sized: false,
            direct: false,
            parallel: false,
        }
    }
    fn run(&self, job: &Job) -> anyhow::Result<Moved> {
        if job.kind == crate::files::InputKind::Stream {
            // A bigger pipe buffer means fewer, larger reads; refusal is harmless.
            // SAFETY: F_SETPIPE_SZ on a descriptor we hold; it fails cleanly on non-pipes.
            unsafe { libc::fcntl(job.file.as_raw_fd(), libc::F_SETPIPE_SZ, 1 << 20) };
        }
        let mut buf = AlignedBuffer::new(buffer_len(job) as usize);
        let moved =
            super::read::read_blocks(job.file, job.name, buf.as_mut_slice(), None, &mut |_| {
                crate::interrupt::check()
            })?;
        if job.kind == crate::files::InputKind::Regular {
            // A regular file must reach the size stat gave (0 for /proc files: no promise).
            super::expect_whole(job.name, job.offset, job.len, moved.bytes, job.end())?;
        }
        Ok(moved)
    }
}
