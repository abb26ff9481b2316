//! The `mmap` engine: map the file and XOR the page cache in place, with no copy. Threads
//! take chunks; each chunk's page tables are filled in one call (MADV_POPULATE_READ) before
//! it is read, which is much cheaper than a page fault every few pages.
//!
//! A mapped file that shrinks under us raises SIGBUS on access. Populating first turns
//! most of those into an error return; for the rest a SIGBUS handler prints one clear line
//! and exits with status 1 instead of crashing.

use super::flag::*;
use super::parallel::for_each_piece;
use super::{Caps, Defaults, Engine, Job, Moved, Spec, Threads};
use crate::checksum::xor_at;
use anyhow::{Context, Result};
use std::os::fd::AsRawFd;
use std::sync::Once;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// mmap and XOR in place, on threads.
pub struct Mmap;

/// A read-only shared mapping of the bytes `[base, base + len)` of a file, unmapped on drop.
/// Every accessor takes file offsets and checks them against the mapping.
pub struct Mapping {
    addr: *mut libc::c_void,
    base: u64,
    len: usize,
}

// SAFETY: the mapping is read-only and lives until drop; sharing reads across threads is sound.
unsafe impl Sync for Mapping {}
// SAFETY: as above; the pointer is only a handle to a process-wide mapping.
unsafe impl Send for Mapping {}

impl Mapping {
    /// Maps the bytes `[start, end)` of `file` read-only (from the page below `start`).
    pub fn new(file: &std::fs::File, name: &str, start: u64, end: u64) -> Result<Self> {
        let page = crate::measure::cache::page_size();
        let base = start / page * page;
        let len = usize::try_from(end.saturating_sub(base))
            .with_context(|| format!("mmap {name}: too large for this address space"))?;
        if len == 0 {
            anyhow::bail!("mmap {name}: nothing to map");
        }
        // SAFETY: a fresh read-only shared mapping of a file we hold open; no existing memory
        // is affected and the result is checked below.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                base as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error()).with_context(|| format!("mmap {name}"));
        }
        Ok(Self { addr, base, len })
    }

    /// The position inside the mapping of the file range `[offset, offset + len)`, if the
    /// whole range lies inside it.
    fn inside(&self, offset: u64, len: usize) -> Option<usize> {
        let at = usize::try_from(offset.checked_sub(self.base)?).ok()?;
        (at.checked_add(len)? <= self.len).then_some(at)
    }

    /// Advises the kernel how a file range will be used, extended down to its page (the
    /// kernel wants page-aligned addresses). False when the advice was refused or the range
    /// is outside the mapping.
    pub fn advise(&self, offset: u64, len: usize, advice: libc::c_int) -> bool {
        let Some(at) = self.inside(offset, len) else {
            return false;
        };
        let page = crate::measure::cache::page_size() as usize;
        let aligned = at / page * page;
        // SAFETY: [aligned, at + len) lies inside our live mapping (checked above).
        unsafe { libc::madvise(self.addr.add(aligned), at + len - aligned, advice) == 0 }
    }

    /// Whether every page of a file range is in the page cache. Errors and ranges outside
    /// the mapping count as "not resident".
    pub fn resident(&self, offset: u64, len: usize) -> bool {
        let Some(at) = self.inside(offset, len) else {
            return false;
        };
        let page = crate::measure::cache::page_size() as usize;
        let aligned = at / page * page;
        let span = at + len - aligned;
        let mut vec = vec![0u8; span.div_ceil(page)];
        // SAFETY: the range lies inside our mapping (checked) and vec holds a byte per page.
        let rc = unsafe { libc::mincore(self.addr.add(aligned), span, vec.as_mut_ptr()) };
        rc == 0 && vec.iter().all(|&b| b & 1 != 0)
    }

    /// Whether the page cache maps the file range `[offset, offset + len)` with huge pages
    /// (2 MiB folios, one page-table entry each), judged on its first 2 MiB-aligned 2 MiB:
    /// `None` when the range holds no such stretch or the pages tested are not cached.
    ///
    /// How: touch the stretch's first byte, then a byte 1 MiB further on, counting this
    /// thread's minor faults. Where the folio is 2 MiB the first fault maps all of it and
    /// the second touch does not fault; where folios are small, a fault maps at most
    /// `fault_around_bytes` (64 KiB) and the second touch faults again. Two faults at most:
    /// microseconds, against milliseconds to read the range.
    pub fn maps_huge(&self, offset: u64, len: usize) -> Option<bool> {
        const STRETCH: usize = 2 << 20;
        let at = self.inside(offset, len)?;
        let addr = self.addr as usize + at;
        let first = addr.next_multiple_of(STRETCH) - self.addr as usize;
        if first + STRETCH > at + len {
            return None;
        }
        // Only the two pages touched must be cached (so that touching them reads nothing
        // from the device); asking about all 512 pages would cost 35 us per chunk.
        let page = crate::measure::cache::page_size() as usize;
        let cached = |at: usize| self.resident(self.base + at as u64, page);
        if !cached(first) || !cached(first + STRETCH / 2) {
            return None;
        }
        let touch = |at: usize| {
            // SAFETY: `at` lies inside the live read-only mapping (checked above); a volatile
            // read of one byte, which the SIGBUS handler covers if the file shrank meanwhile.
            unsafe { std::ptr::read_volatile((self.addr as *const u8).add(at)) };
        };
        touch(first);
        let before = minor_faults();
        touch(first + STRETCH / 2);
        Some(minor_faults() == before)
    }

    /// The bytes of a file range, or `None` when it is not inside the mapping.
    ///
    /// Reading them raises SIGBUS if the file was truncated below them meanwhile; the
    /// handler installed by [`install_sigbus_handler`] turns that into a clean exit.
    pub fn slice(&self, offset: u64, len: usize) -> Option<&[u8]> {
        let at = self.inside(offset, len)?;
        // SAFETY: the range is inside a live PROT_READ mapping owned by self (checked).
        Some(unsafe { std::slice::from_raw_parts((self.addr as *const u8).add(at), len) })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in new(); no slices outlive self.
        unsafe { libc::munmap(self.addr, self.len) };
    }
}

/// Minor page faults of the calling thread so far.
fn minor_faults() -> i64 {
    // SAFETY: getrusage fills the zeroed struct we pass; RUSAGE_THREAD is Linux's own.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_THREAD, &mut usage);
        usage.ru_minflt
    }
}

/// The longest file name the SIGBUS line shows (longer names are cut).
const SIGBUS_NAME_MAX: usize = 512;
/// The name of the file being mapped, for the SIGBUS line: plain atomics, so the handler
/// can read them without locks or allocation.
static SIGBUS_NAME: [AtomicU8; SIGBUS_NAME_MAX] = [const { AtomicU8::new(0) }; SIGBUS_NAME_MAX];
/// How many bytes of [`SIGBUS_NAME`] are set.
static SIGBUS_NAME_LEN: AtomicUsize = AtomicUsize::new(0);
/// Room for the whole SIGBUS line.
const SIGBUS_LINE_MAX: usize = SIGBUS_NAME_MAX + 256;

/// Writes the SIGBUS line naming `name` (cut at [`SIGBUS_NAME_MAX`] bytes) into `line` and
/// returns its length. Async-signal-safe: no locks, no allocation.
fn sigbus_line(name: impl Iterator<Item = u8>, line: &mut [u8; SIGBUS_LINE_MAX]) -> usize {
    const HEAD: &[u8] = b"error: read ";
    const TAIL: &[u8] =
        b" through mmap failed (SIGBUS): the file shrank or the device failed while it was read\n";
    let name = name.take(SIGBUS_NAME_MAX);
    let mut n = 0;
    for b in HEAD.iter().copied().chain(name).chain(TAIL.iter().copied()) {
        line[n] = b;
        n += 1;
    }
    n
}

extern "C" fn on_sigbus(_: libc::c_int) {
    let name_len = SIGBUS_NAME_LEN.load(Ordering::Acquire).min(SIGBUS_NAME_MAX);
    let name = SIGBUS_NAME[..name_len]
        .iter()
        .map(|b| b.load(Ordering::Relaxed));
    let mut line = [0u8; SIGBUS_LINE_MAX];
    let n = sigbus_line(name, &mut line);
    // SAFETY: write and _exit are async-signal-safe; line is a local buffer of n bytes.
    unsafe {
        libc::write(2, line.as_ptr().cast(), n);
        libc::_exit(1);
    }
}

/// Installs the SIGBUS handler once per process, and names `name` in its line: call it
/// before mapping that file.
pub fn install_sigbus_handler(name: &str) {
    let bytes = &name.as_bytes()[..name.len().min(SIGBUS_NAME_MAX)];
    SIGBUS_NAME_LEN.store(0, Ordering::Release);
    for (slot, &b) in SIGBUS_NAME.iter().zip(bytes) {
        slot.store(b, Ordering::Relaxed);
    }
    SIGBUS_NAME_LEN.store(bytes.len(), Ordering::Release);
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
pub(crate) const MADV_POPULATE_READ: libc::c_int = 22;

/// What the `mmap` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "mmap",
    describe: "mmap the file and XOR the page cache in place, one thread per core",
    caps: Caps::of(READ | SIZED | ANY_ORDER | PARALLEL | ZERO_COPY | MOVES_BYTES),
    defaults: Defaults {
        threads: Threads::PerCore,
        block_size: 16 << 20,
        depth: 1,
    },
};

impl Engine for Mmap {
    fn spec(&self) -> &'static Spec {
        &SPEC
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        if job.plan.len == 0 {
            return Ok(Moved::default());
        }
        install_sigbus_handler(job.name);
        let map = Mapping::new(
            job.file,
            job.name,
            job.plan.start,
            job.plan.start + job.plan.len,
        )?;
        if job.plan.is_sequential() {
            map.advise(job.plan.start, job.plan.len as usize, libc::MADV_SEQUENTIAL);
        }
        let mut moved = for_each_piece(
            &job.plan,
            job.threads,
            job.observer,
            || Ok(()),
            |offset, len, _| Ok((in_place(&map, job, offset, len)?, 1)),
        )?;
        moved.in_place = moved.bytes;
        // A tail cut off inside the last page read as zeros, with no fault.
        expect_size(job)?;
        Ok(moved)
    }
}

/// The XOR of the file range `[offset, offset + len)` (inside `map`), read in place: its
/// page tables are filled in one call first, which turns most faults of a file that shrank
/// into an error return.
pub fn in_place(map: &Mapping, job: &Job, offset: u64, len: u64) -> Result<u32> {
    let l = len as usize;
    if !map.advise(offset, l, MADV_POPULATE_READ) {
        let err = std::io::Error::last_os_error();
        // EINVAL: an older kernel without POPULATE_READ; faults will do. Anything
        // else (EFAULT, EIO) means the pages cannot be read.
        if err.raw_os_error() != Some(libc::EINVAL) {
            // Past the end of a file that shrank: the one rule for every engine.
            let now = job.file.metadata().map_or(0, |m| m.len());
            if now < offset + len {
                return Err(super::shrank(job.name, now, job.plan.start + job.plan.len));
            }
            return Err(err)
                .with_context(|| format!("read {} at byte {offset} through mmap", job.name));
        }
    }
    let bytes = map
        .slice(offset, l)
        .expect("plan pieces lie inside the mapping");
    Ok(xor_at(job.plan_offset(offset), bytes))
}

/// Checks that a mapped file is still as long as the plan says: past its end, the last page
/// of a mapping reads as zeros without any fault, so only the size tells.
pub fn expect_size(job: &Job) -> Result<()> {
    let end = job.plan.start + job.plan.len;
    let now = job
        .file
        .metadata()
        .with_context(|| format!("stat {} after reading it through mmap", job.name))?
        .len();
    if now < end {
        return Err(super::shrank(job.name, now, end));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sigbus_line_is_one_line_naming_the_file_even_when_the_name_is_long() {
        let mut line = [0u8; SIGBUS_LINE_MAX];
        let n = sigbus_line(b"big".iter().copied(), &mut line);
        assert_eq!(
            std::str::from_utf8(&line[..n]).unwrap(),
            "error: read big through mmap failed (SIGBUS): the file shrank or the device failed while it was read\n"
        );
        let long = vec![b'x'; 4 * SIGBUS_NAME_MAX];
        let n = sigbus_line(long.iter().copied(), &mut line);
        assert_eq!(line[..n].iter().filter(|&&b| b == b'\n').count(), 1);
        assert!(n <= SIGBUS_LINE_MAX);
    }
}
