//! The `mmap` engine: map the file and XOR the page cache in place, with no copy. Threads
//! take chunks; each chunk's page tables are filled in one call (MADV_POPULATE_READ) before
//! it is read, which is much cheaper than a page fault every few pages.
//!
//! A mapped file that shrinks under us raises SIGBUS on access. Populating first turns
//! most of those into an error return; for the rest a SIGBUS handler prints one clear line
//! and exits with status 1 instead of crashing.

use super::parallel::for_each_chunk;
use super::{Caps, Engine, Job, Moved, xor_from};
use anyhow::{Context, Result};
use std::os::fd::AsRawFd;
use std::sync::Once;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

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
    /// Maps `len` bytes of `file` from `offset` (a multiple of the page size) read-only.
    pub fn new(file: &std::fs::File, name: &str, offset: u64, len: u64) -> Result<Self> {
        let offset = libc::off_t::try_from(offset)
            .with_context(|| format!("mmap {name} at byte {offset}: offset too large"))?;
        // SAFETY: a fresh read-only shared mapping of a file we hold open; no existing memory
        // is affected and the result is checked below.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                offset,
            )
        };
        if addr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error())
                .with_context(|| format!("mmap {name} at byte {offset}"));
        }
        Ok(Self {
            addr,
            len: len as usize,
        })
    }

    /// Whether `[offset, offset + len)` lies inside the mapping.
    fn covers(&self, offset: usize, len: usize) -> bool {
        offset.checked_add(len).is_some_and(|end| end <= self.len)
    }

    /// Advises the kernel how `[offset, offset + len)` of the mapping will be used; a range
    /// outside the mapping is refused (`InvalidInput`) without calling the kernel. `offset`
    /// must be a multiple of the page size, or the kernel answers `EINVAL`.
    pub fn advise(&self, offset: usize, len: usize, advice: libc::c_int) -> std::io::Result<()> {
        if !self.covers(offset, len) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "madvise of bytes {offset}+{len} outside a mapping of {}",
                    self.len
                ),
            ));
        }
        // SAFETY: the range lies inside our mapping (checked above). The mapping is
        // read-only and shared, so no advice can change the bytes that slices show: at most
        // pages are dropped and faulted in again from the page cache.
        if unsafe { libc::madvise(self.addr.add(offset), len, advice) } == 0 {
            Ok(())
        } else {
            Err(std::io::Error::last_os_error())
        }
    }

    /// Whether every page of `[offset, offset + len)` is in the page cache (`offset` a
    /// multiple of the page size). Errors, and a range outside the mapping, count as "not
    /// resident".
    pub fn resident(&self, offset: usize, len: usize) -> bool {
        if !self.covers(offset, len) {
            return false;
        }
        let pages = len.div_ceil(crate::measure::cache::page_size() as usize);
        let mut vec = vec![0u8; pages];
        // SAFETY: the range lies inside our mapping (checked above) and vec holds one byte
        // per page of it.
        let rc = unsafe { libc::mincore(self.addr.add(offset), len, vec.as_mut_ptr()) };
        rc == 0 && vec.iter().all(|&b| b & 1 != 0)
    }

    /// The bytes `[offset, offset + len)` of the mapping (panics outside it).
    ///
    /// Reading them raises SIGBUS if the file was truncated below them meanwhile; the
    /// handler installed by [`install_sigbus_handler`] turns that into a clean exit.
    pub fn slice(&self, offset: usize, len: usize) -> &[u8] {
        assert!(self.covers(offset, len), "slice within the mapping");
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

/// Fill the page tables of a range now (Linux 5.14+; older kernels answer EINVAL).
pub(crate) const MADV_POPULATE_READ: libc::c_int = 22;

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
        install_sigbus_handler(job.name);
        // Mappings start on a page: from the page that holds the job's first byte.
        let start = job.aligned_start(crate::measure::cache::page_size());
        let mapped = job.end() - start;
        let map = Mapping::new(job.file, job.name, start, mapped)?;
        // Only advice: a kernel that ignores it reads the same bytes.
        let _ = map.advise(0, mapped as usize, libc::MADV_SEQUENTIAL);
        let (xor, calls) = for_each_chunk(
            mapped,
            job.block_size,
            job.threads,
            || Ok(()),
            |rel, len, _| {
                crate::interrupt::check()?;
                let (o, l) = (rel as usize, len as usize);
                let offset = start + rel;
                if let Err(err) = map.advise(o, l, MADV_POPULATE_READ) {
                    // EINVAL: an older kernel without POPULATE_READ; faults will do. Anything
                    // else (EFAULT, EIO) means the pages cannot be read: a shorter file is
                    // reported as such, anything else as the kernel's error.
                    if err.raw_os_error() != Some(libc::EINVAL) {
                        expect_size(job)?;
                        return Err(err).with_context(|| {
                            format!("read {} at byte {offset} through mmap", job.name)
                        });
                    }
                }
                Ok((xor_from(job.offset, offset, map.slice(o, l)), 1))
            },
        )?;
        expect_size(job)?;
        Ok(Moved {
            bytes: job.len,
            calls,
            xor,
        })
    }
}

/// Checks that a mapped file is still as long as the job says: past its end, the last page
/// of a mapping reads as zeros without any fault, so only the size tells.
pub fn expect_size(job: &Job) -> Result<()> {
    let now = job
        .file
        .metadata()
        .with_context(|| format!("stat {} after reading it through mmap", job.name))?
        .len();
    if now < job.end() {
        return Err(super::shrank(job.name, now, job.end()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn mapped(bytes: usize) -> (std::fs::File, Mapping) {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(&vec![1u8; bytes]).expect("write");
        let map = Mapping::new(&f, "t", 0, bytes as u64).expect("map");
        (f, map)
    }

    #[test]
    fn advice_and_residency_outside_the_mapping_are_refused_without_a_system_call() {
        let (_f, map) = mapped(3 * 4096);
        assert!(map.advise(0, 3 * 4096, libc::MADV_SEQUENTIAL).is_ok());
        for (offset, len) in [
            (0, 3 * 4096 + 1),
            (4096, 3 * 4096),
            (1 << 40, 1),
            (4096, usize::MAX),
        ] {
            let err = map
                .advise(offset, len, libc::MADV_SEQUENTIAL)
                .expect_err("outside the mapping");
            assert_eq!(
                err.kind(),
                std::io::ErrorKind::InvalidInput,
                "{offset}+{len}"
            );
            assert!(!map.resident(offset, len), "{offset}+{len}");
        }
        assert!(map.resident(0, 3 * 4096), "just written, so cached");
    }

    #[test]
    fn the_sigbus_line_is_one_line_naming_the_file_even_when_the_name_is_long() {
        let mut line = [0u8; SIGBUS_LINE_MAX];
        let n = sigbus_line(b"dir/some file".iter().copied(), &mut line);
        let text = std::str::from_utf8(&line[..n]).expect("utf-8");
        assert!(
            text.starts_with("error: read dir/some file through mmap failed (SIGBUS)"),
            "{text}"
        );
        assert!(text.ends_with("while it was read\n") && text.lines().count() == 1);
        let n = sigbus_line(std::iter::repeat_n(b'x', 5000), &mut line);
        assert!(line[..n].ends_with(b"while it was read\n"));
        assert_eq!(
            line[..n].iter().filter(|&&b| b == b'x').count(),
            SIGBUS_NAME_MAX
        );
    }

    /// In a child process (this test binary again): map a file, truncate it, touch the
    /// lost page. The handler must print one line naming the file and exit with status 1.
    #[test]
    fn a_file_truncated_under_its_mapping_gives_one_line_naming_it_and_exit_1() {
        const CHILD: &str = "IOSCOPE_TEST_SIGBUS_FILE";
        if let Some(path) = std::env::var_os(CHILD) {
            let file = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(&path)
                .expect("open");
            let name = path.to_string_lossy().into_owned();
            install_sigbus_handler(&name);
            let map = Mapping::new(&file, &name, 0, 3 * 4096).expect("map");
            file.set_len(0).expect("truncate");
            let byte = std::hint::black_box(map.slice(2 * 4096, 1))[0];
            eprintln!("no SIGBUS: read {byte}");
            std::process::exit(3);
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("victim");
        std::fs::write(&path, vec![1u8; 3 * 4096]).expect("write");
        let out = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "engine::mmap::tests::a_file_truncated_under_its_mapping_gives_one_line_naming_it_and_exit_1",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(CHILD, &path)
            .output()
            .expect("run the child");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: read {} through mmap failed (SIGBUS): the file shrank or the device failed while it was read\n",
                path.display()
            )
        );
    }
}
