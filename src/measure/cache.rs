//! Page-cache control and proof: how much of a file is resident (mincore), and eviction
//! of one file's pages without root (fdatasync + POSIX_FADV_DONTNEED).

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;

/// How much of a file was in the page cache at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Residency {
    /// Pages of the file in the page cache.
    pub resident_pages: u64,
    /// Pages the file spans.
    pub total_pages: u64,
}

impl Residency {
    /// Share of the file's pages that were resident, 0.0 to 1.0 (1.0 for an empty file).
    pub fn fraction(&self) -> f64 {
        if self.total_pages == 0 {
            1.0
        } else {
            self.resident_pages as f64 / self.total_pages as f64
        }
    }

    /// Warm, cold or mixed, by the one set of thresholds.
    pub fn observed(&self) -> Observed {
        observe(self.fraction())
    }

    /// The share as a percentage string, e.g. `100.0%`.
    pub fn percent(&self) -> String {
        format!("{:.1}%", 100.0 * self.fraction())
    }
}

/// The cache state a run is asked to start from: the one type for warm, cold and "as it is".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheState {
    /// Every page of the range in the page cache.
    Warm,
    /// No page of the range in the page cache.
    Cold,
    /// Whatever the cache holds; nothing is done to it and nothing is claimed.
    AsIs,
}

impl CacheState {
    /// `warm`, `cold` or `as_is`.
    pub fn name(self) -> &'static str {
        match self {
            CacheState::Warm => "warm",
            CacheState::Cold => "cold",
            CacheState::AsIs => "as_is",
        }
    }
}

/// A range counts as warm from this resident share up.
pub const WARM_AT_LEAST: f64 = 0.99;
/// A range counts as cold up to this resident share.
pub const COLD_AT_MOST: f64 = 0.05;
/// A warm read may fetch this share of its bytes from the device (metadata, a stray page).
const WARM_DEVICE_SLACK: f64 = 0.01;
/// A cold read must fetch at least this share of its bytes from the device.
const COLD_DEVICE_SHARE: f64 = 0.9;

/// What the residency says about a range, by the thresholds above.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Observed {
    /// At least [`WARM_AT_LEAST`] resident.
    Warm,
    /// At most [`COLD_AT_MOST`] resident.
    Cold,
    /// In between.
    Mixed,
}

/// Warm, cold or mixed for a resident share from 0.0 to 1.0, by the one set of thresholds.
pub fn observe(share: f64) -> Observed {
    if share >= WARM_AT_LEAST {
        Observed::Warm
    } else if share <= COLD_AT_MOST {
        Observed::Cold
    } else {
        Observed::Mixed
    }
}

impl Observed {
    /// Whether this is the state asked for (`as_is` is always reached).
    pub fn reaches(self, asked: CacheState) -> bool {
        match asked {
            CacheState::Warm => self == Observed::Warm,
            CacheState::Cold => self == Observed::Cold,
            CacheState::AsIs => true,
        }
    }
}

/// Whether a run started in the cache state it was asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Residency and device bytes both agree with the state asked for.
    Proven,
    /// Nothing contradicts it, but a measurement was missing (no mincore, no counters).
    Unproven,
    /// Residency or device bytes contradict it.
    Contradicted,
    /// No state was asked for (`as_is`).
    NotAsked,
    /// Warm was asked, but the reader bypasses the page cache (O_DIRECT): whatever is
    /// cached, its bytes come from the device.
    Bypassed,
}

/// The proof of a run's cache state: what was asked, what was measured, the verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CacheProof {
    /// The state asked for.
    pub asked: CacheState,
    /// Residency of the range just before the run.
    pub residency_before: Option<Residency>,
    /// Bytes this process caused the device to read during the run (/proc/self/io).
    pub device_read_bytes: Option<u64>,
    /// Bytes the run read.
    pub bytes: u64,
    /// The verdict.
    pub verdict: Verdict,
    /// Bytes of the range read that lie in unwritten extents or holes, which the file
    /// system reads as zeros without the device ([`super::extents`]); measured for cold
    /// runs, `None` where the extent map could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbacked_bytes: Option<u64>,
}

impl CacheProof {
    /// True unless the measurements contradict the state asked for.
    pub fn ok(&self) -> bool {
        self.verdict != Verdict::Contradicted
    }

    /// A cold run whose device read too little because the bytes it missed are unwritten
    /// extents or holes: zeros made up by the file system, never on the device. The pages
    /// were evicted (the residency agrees), and the device read at least
    /// [`COLD_DEVICE_SHARE`] of the bytes that are backed.
    pub fn not_the_device(&self) -> bool {
        let (Some(unbacked), Some(device)) = (self.unbacked_bytes, self.device_read_bytes) else {
            return false;
        };
        self.asked == CacheState::Cold
            && self.verdict == Verdict::Contradicted
            && unbacked > 0
            && self
                .residency_before
                .is_none_or(|r| r.observed() == Observed::Cold)
            && (device + unbacked) as f64 >= self.bytes as f64 * COLD_DEVICE_SHARE
    }

    /// Whether a cold run's device read fell short with every byte of the file written (an
    /// extent map says so): only then is the file system (or memory pressure) to blame.
    pub fn written_and_unread(&self) -> bool {
        self.asked == CacheState::Cold && self.unbacked_bytes == Some(0)
    }
}

/// Turns the state asked for, the residency measured before a read of `bytes` bytes and
/// the bytes the device read during it into a proof with a verdict. A reader that bypasses
/// the cache (O_DIRECT) reads from the device whatever the state, so only the residency
/// speaks for the state then.
pub fn prove(
    asked: CacheState,
    residency_before: Option<Residency>,
    device_read_bytes: Option<u64>,
    bytes: u64,
    bypass: bool,
) -> CacheProof {
    let observed = residency_before.map(|r| r.observed());
    // Recorded either way; it speaks for the state only when the reader uses the cache.
    let device_says = device_read_bytes.filter(|_| !bypass).map(|d| match asked {
        CacheState::Warm => d as f64 <= (bytes as f64 * WARM_DEVICE_SLACK).max(65536.0),
        CacheState::Cold => d as f64 >= bytes as f64 * COLD_DEVICE_SHARE,
        CacheState::AsIs => true,
    });
    let residency_says = observed.map(|o| o.reaches(asked));
    let verdict = match (asked, residency_says, device_says) {
        (CacheState::AsIs, _, _) => Verdict::NotAsked,
        (CacheState::Warm, _, _) if bypass => Verdict::Bypassed,
        (_, Some(false), _) | (_, _, Some(false)) => Verdict::Contradicted,
        (_, Some(true), Some(true)) => Verdict::Proven,
        _ => Verdict::Unproven,
    };
    CacheProof {
        asked,
        residency_before,
        device_read_bytes,
        bytes,
        verdict,
        unbacked_bytes: None,
    }
}

/// The system's page size in bytes (4096 when it cannot be asked).
pub fn page_size() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if size > 0 { size as u64 } else { 4096 }
}

/// Measures which of the first `len` bytes of `file` are in the page cache, mapping at most
/// 1 GiB at a time so that huge files need little memory. `file` must be open for reading.
pub fn residency(file: &File, name: &str, len: u64) -> Result<Residency> {
    residency_at(file, name, 0, len)
}

/// Like [`residency`], for the `len` bytes at `start` (a multiple of the page size).
pub fn residency_at(file: &File, name: &str, start: u64, len: u64) -> Result<Residency> {
    const WINDOW: u64 = 1 << 30;
    let page = page_size();
    let total_pages = len.div_ceil(page);
    let mut resident_pages = 0;
    let mut vec = Vec::new();
    let end = start + len;
    let mut offset = start;
    while offset < end {
        let span = (end - offset).min(WINDOW);
        let pages = span.div_ceil(page) as usize;
        vec.clear();
        vec.resize(pages, 0u8);
        // SAFETY: a read-only shared mapping of a file we hold open; it is only passed to
        // mincore (never dereferenced) and unmapped before the loop continues.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                span as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset as libc::off_t,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("mmap {name} at byte {offset} to measure residency"));
        }
        // SAFETY: addr..addr+span is the mapping made above; vec holds one byte per page.
        let rc = unsafe { libc::mincore(addr, span as usize, vec.as_mut_ptr()) };
        let err = std::io::Error::last_os_error();
        // SAFETY: unmapping exactly the mapping made above.
        unsafe { libc::munmap(addr, span as usize) };
        if rc != 0 {
            return Err(err).with_context(|| format!("mincore {name} at byte {offset}"));
        }
        resident_pages += vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
        offset += span;
    }
    Ok(Residency {
        resident_pages,
        total_pages,
    })
}

/// Residency of `[start, start + len)` judged on `windows` windows of `window` bytes spread
/// evenly over it (every page when the range is no larger than all the windows together).
/// `start` is rounded down to a page. One mapping, a mincore call per window: tens of
/// microseconds for 64 windows of 64 KiB, where counting every page of a 2 GiB file held
/// in 4 KiB pages (cachestat, or mincore over all of it) took 17 ms here.
pub fn sampled_residency(
    file: &File,
    name: &str,
    start: u64,
    len: u64,
    windows: u64,
    window: u64,
) -> Result<Residency> {
    let page = page_size();
    let base = start / page * page;
    let len = len + (start - base);
    let window = window.max(page) / page * page;
    if windows < 2 || len <= windows * window {
        return residency_at(file, name, base, len);
    }
    // SAFETY: a read-only shared mapping of a file we hold open; it is only passed to
    // mincore (never dereferenced) and unmapped below.
    let addr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len as usize,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            base as libc::off_t,
        )
    };
    if addr == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("mmap {name} to measure residency"));
    }
    let mut vec = vec![0u8; (window / page) as usize];
    let mut result = Ok(Residency {
        resident_pages: 0,
        total_pages: 0,
    });
    for i in 0..windows {
        let at = (len - window) / (windows - 1) * i / page * page;
        // SAFETY: [addr + at, addr + at + window) lies inside the mapping (at + window <=
        // len); vec holds one byte per page of the window.
        let rc = unsafe { libc::mincore(addr.add(at as usize), window as usize, vec.as_mut_ptr()) };
        if rc != 0 {
            result = Err(std::io::Error::last_os_error())
                .with_context(|| format!("mincore {name} at byte {}", base + at));
            break;
        }
        if let Ok(r) = &mut result {
            r.resident_pages += vec.iter().filter(|&&b| b & 1 != 0).count() as u64;
            r.total_pages += window / page;
        }
    }
    // SAFETY: unmapping exactly the mapping made above.
    unsafe { libc::munmap(addr, len as usize) };
    result
}

/// Evicts `file`'s pages from the page cache: writes dirty pages back first (so they can
/// be dropped), then advises the kernel that none of the file is needed.
pub fn evict(file: &File, name: &str) -> Result<()> {
    // A length of 0 means "to the end of the file" to posix_fadvise.
    evict_extents(file, name, [(0, 0)])
}

/// Like [`evict`], for the byte ranges `(offset, len)` of `file` only: one reader's share
/// of a file that others read too.
pub fn evict_extents(
    file: &File,
    name: &str,
    extents: impl IntoIterator<Item = (u64, u64)>,
) -> Result<()> {
    file.sync_data()
        .with_context(|| format!("fdatasync {name} before evicting it from the page cache"))?;
    for (offset, len) in extents {
        // SAFETY: posix_fadvise only takes a descriptor we hold open and plain integers.
        let rc = unsafe {
            libc::posix_fadvise(
                file.as_raw_fd(),
                offset as libc::off_t,
                len as libc::off_t,
                libc::POSIX_FADV_DONTNEED,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc))
                .with_context(|| format!("posix_fadvise(DONTNEED) {name} at byte {offset}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_file_just_written_is_resident_and_eviction_drops_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f");
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .expect("create");
        f.write_all(&vec![7u8; 1 << 20]).expect("write");
        let before = residency(&f, "f", 1 << 20).expect("residency");
        assert_eq!(before.total_pages, (1 << 20) / page_size());
        assert_eq!(
            before.fraction(),
            1.0,
            "pages just written are in the cache"
        );
        evict(&f, "f").expect("evict");
        let after = residency(&f, "f", 1 << 20).expect("residency");
        if after.fraction() > 0.0 {
            // tmpfs and some overlay set-ups cannot drop pages: that is a property of the
            // file system, not a failure of eviction.
            eprintln!(
                "skipped: this file system keeps pages after DONTNEED ({})",
                after.percent()
            );
            return;
        }
        assert_eq!(after.resident_pages, 0);
    }

    #[test]
    fn cachestat_agrees_with_mincore_where_the_kernel_has_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f");
        std::fs::write(&path, vec![3u8; 1 << 20]).expect("write");
        let f = File::open(&path).expect("open");
        let Some(stat) = cachestat(&f, 1 << 20) else {
            eprintln!("skipped: this kernel has no cachestat (Linux 6.5+)");
            return;
        };
        let mincore = residency(&f, "f", 1 << 20).expect("residency");
        assert_eq!(stat.residency(), mincore);
        assert_eq!(
            stat.dirty_pages, stat.total_pages,
            "just written, not yet synced"
        );
        f.sync_all().expect("fsync");
        assert_eq!(cachestat(&f, 1 << 20).expect("cachestat").dirty_pages, 0);
    }

    #[test]
    fn the_proof_needs_residency_and_device_bytes_to_agree() {
        let r = |resident_pages| {
            Some(Residency {
                resident_pages,
                total_pages: 1000,
            })
        };
        let mib = 1 << 20;
        assert_eq!(
            prove(CacheState::Cold, r(0), Some(mib), mib, false).verdict,
            Verdict::Proven
        );
        assert_eq!(
            prove(CacheState::Cold, r(0), Some(0), mib, false).verdict,
            Verdict::Contradicted
        );
        assert_eq!(
            prove(CacheState::Cold, r(500), Some(mib), mib, false).verdict,
            Verdict::Contradicted
        );
        assert_eq!(
            prove(CacheState::Cold, r(0), None, mib, false).verdict,
            Verdict::Unproven
        );
        assert_eq!(
            prove(CacheState::Warm, r(1000), Some(0), mib, false).verdict,
            Verdict::Proven
        );
        assert_eq!(
            prove(CacheState::Warm, r(990), Some(0), mib, false).verdict,
            Verdict::Proven
        );
        assert_eq!(
            prove(CacheState::Warm, r(980), Some(0), mib, false).verdict,
            Verdict::Contradicted
        );
        assert_eq!(
            prove(CacheState::Warm, None, Some(mib), mib, false).verdict,
            Verdict::Contradicted
        );
        assert_eq!(
            prove(CacheState::AsIs, r(500), Some(7), mib, false).verdict,
            Verdict::NotAsked
        );
        assert!(prove(CacheState::AsIs, None, None, 0, false).ok());
        let mut unwritten = prove(CacheState::Cold, r(0), Some(0), mib, false);
        assert!(
            !unwritten.not_the_device(),
            "no extent map: nothing to name"
        );
        unwritten.unbacked_bytes = Some(mib);
        assert!(
            unwritten.not_the_device(),
            "every byte unwritten, none read"
        );
        unwritten.unbacked_bytes = Some(mib / 2);
        assert!(
            !unwritten.not_the_device(),
            "half unwritten does not explain a device that read nothing"
        );
        let mut written = prove(CacheState::Cold, r(0), Some(0), mib, false);
        written.unbacked_bytes = Some(0);
        assert!(written.written_and_unread() && !written.not_the_device());
        let direct = prove(CacheState::Warm, r(1000), Some(mib), mib, true);
        assert_eq!(direct.verdict, Verdict::Bypassed);
        assert!(direct.ok(), "a device rate, said so; not a failed check");
    }

    #[test]
    fn an_empty_file_counts_as_fully_resident() {
        let f = tempfile::tempfile().expect("temp file");
        let r = residency(&f, "f", 0).expect("residency");
        assert_eq!((r.total_pages, r.fraction()), (0, 1.0));
    }
}

/// Page-cache state of a file range from the `cachestat` system call (Linux 6.5+): cheaper
/// than `mincore` on big files, and it also counts dirty pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct CacheStat {
    /// Pages of the range in the page cache.
    pub cached_pages: u64,
    /// Of those, pages not yet written back.
    pub dirty_pages: u64,
    /// Pages the range spans.
    pub total_pages: u64,
}

#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

#[repr(C)]
#[derive(Default)]
struct CachestatOut {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// The `cachestat` system call number (the same on x86-64 and arm64).
const SYS_CACHESTAT: libc::c_long = 451;

/// `cachestat` over `[0, len)`; `None` where the kernel lacks it (older than 6.5, or a
/// sandbox that filters it).
pub fn cachestat(file: &File, len: u64) -> Option<CacheStat> {
    let range = CachestatRange { off: 0, len };
    let mut out = CachestatOut::default();
    // SAFETY: both structs are repr(C) with the kernel's layout and live across the call.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const CachestatRange,
            &mut out as *mut CachestatOut,
            0u32,
        )
    };
    (rc == 0).then(|| CacheStat {
        cached_pages: out.nr_cache,
        dirty_pages: out.nr_dirty + out.nr_writeback,
        total_pages: len.div_ceil(page_size()),
    })
}

impl CacheStat {
    /// As a residency figure.
    pub fn residency(&self) -> Residency {
        Residency {
            resident_pages: self.cached_pages.min(self.total_pages),
            total_pages: self.total_pages,
        }
    }
}

/// Whether this process may drop the global page cache (root, and /proc/sys writable).
pub fn can_drop_caches() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    root && std::fs::OpenOptions::new()
        .write(true)
        .open("/proc/sys/vm/drop_caches")
        .is_ok()
}

/// `sync; echo 3 > /proc/sys/vm/drop_caches`: drops every clean page of every file.
pub fn drop_caches() -> Result<()> {
    if !can_drop_caches() {
        return Err(crate::error::input(
            "--drop-caches: writing /proc/sys/vm/drop_caches needs root; without it, --cache cold evicts just the file (fadvise), which needs no privileges",
        ));
    }
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").context("write 3 to /proc/sys/vm/drop_caches")
}
