//! The `mmap` engine: map the file and XOR the page cache in place, with no copy. Threads
//! take chunks; each chunk's page tables are filled in one call (MADV_POPULATE_READ) before
//! it is read, which is much cheaper than a page fault every few pages.
//!
//! A mapped file that shrinks under us raises SIGBUS on access. Populating first turns
//! most of those into an error return; for the rest a SIGBUS handler prints one clear line
//! and exits with status 1 instead of crashing.

use super::parallel::for_each_chunk;
use super::{Caps, Engine, Job, Moved};
use crate::checksum::xor_at;
use anyhow::{Context, Result};
use std::os::fd::AsRawFd;
use std::sync::Once;

/// mmap and XOR in place, on threads.
pub struct Mmap;

/// A read-only shared mapping, unmapped on drop.
pub struct Mapping {
    addr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and lives until drop; sharing reads across threads is sound.
unsafe impl Sync for Mapping {}
// SAFETY: as above; the pointer is only a handle to a process-wide mapping.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps the first `len` bytes of `file` read-only.
    pub fn new(file: &std::fs::File, name: &str, len: u64) -> Result<Self> {
        // SAFETY: a fresh read-only shared mapping of a file we hold open; no existing memory
        // is affected and the result is checked below.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error()).with_context(|| format!("mmap {name}"));
        }
        Ok(Self {
            addr,
            len: len as usize,
        })
    }

    /// Advises the kernel how the mapping will be used (errors are only advice lost).
    pub fn advise(&self, offset: usize, len: usize, advice: libc::c_int) -> bool {
        // SAFETY: the range lies inside our mapping (callers pass sub-ranges of it).
        unsafe { libc::madvise(self.addr.add(offset), len, advice) == 0 }
    }

    /// Whether every page of `[offset, offset + len)` is in the page cache (`offset` a
    /// multiple of the page size). Errors count as "not resident".
    pub fn resident(&self, offset: usize, len: usize) -> bool {
        let pages = len.div_ceil(crate::measure::cache::page_size() as usize);
        let mut vec = vec![0u8; pages];
        // SAFETY: the range lies inside our mapping and vec holds one byte per page.
        let rc = unsafe { libc::mincore(self.addr.add(offset), len, vec.as_mut_ptr()) };
        rc == 0 && vec.iter().all(|&b| b & 1 != 0)
    }

    /// The bytes `[offset, offset + len)` of the mapping.
    ///
    /// Reading them raises SIGBUS if the file was truncated below them meanwhile; the
    /// handler installed by [`install_sigbus_handler`] turns that into a clean exit.
    pub fn slice(&self, offset: usize, len: usize) -> &[u8] {
        assert!(offset + len <= self.len, "slice within the mapping");
        // SAFETY: the range is inside a live PROT_READ mapping owned by self.
        unsafe { std::slice::from_raw_parts((self.addr as *const u8).add(offset), len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in new(); no slices outlive self.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

extern "C" fn on_sigbus(_: libc::c_int) {
    const MSG: &[u8] = b"error: read of a memory-mapped file failed (SIGBUS): the file shrank or the device failed while it was read\n";
    // SAFETY: write and _exit are async-signal-safe; MSG is static.
    unsafe {
        libc::write(2, MSG.as_ptr().cast(), MSG.len());
        libc::_exit(1);
    }
}

/// Installs the SIGBUS handler once per process.
pub fn install_sigbus_handler() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: installing a handler that only calls async-signal-safe functions.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    });
}

/// Whether the kernel knows MADV_POPULATE_READ (Linux 5.14+); checked on first use.
const MADV_POPULATE_READ: libc::c_int = 22;

impl Engine for Mmap {
    fn name(&self) -> &'static str {
        "mmap"
    }
    fn describe(&self) -> &'static str {
        "mmap the file and XOR the page cache in place, one thread per core"
    }
    fn caps(&self) -> Caps {
        Caps {
            sized: true,
            direct: false,
            parallel: true,
        }
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        if job.len == 0 {
            return Ok(Moved::default());
        }
        install_sigbus_handler();
        let map = Mapping::new(job.file, job.name, job.len)?;
        map.advise(0, job.len as usize, libc::MADV_SEQUENTIAL);
        let (xor, calls) = for_each_chunk(
            job.len,
            job.block_size,
            job.threads,
            || Ok(()),
            |offset, len, _| {
                crate::interrupt::check()?;
                let (o, l) = (offset as usize, len as usize);
                if !map.advise(o, l, MADV_POPULATE_READ) {
                    let err = std::io::Error::last_os_error();
                    // EINVAL: an older kernel without POPULATE_READ; faults will do. Anything
                    // else (EFAULT, EIO) means the pages cannot be read.
                    if err.raw_os_error() != Some(libc::EINVAL) {
                        return Err(err).with_context(|| {
                            format!(
                                "read {} at byte {offset} through mmap (did the file shrink?)",
                                job.name
                            )
                        });
                    }
                }
                Ok((xor_at(offset, map.slice(o, l)), 1))
            },
        )?;
        Ok(Moved {
            bytes: job.len,
            calls,
            xor,
        })
    }
}
