//! I/O buffers: page-aligned and touched before use.
//!
//! Alignment matters beyond O_DIRECT: the kernel copies read() data with `rep movsb`, which
//! on some CPUs (AMD Zen 3 here) runs several times slower into a destination that is not
//! page-aligned (measured: 1 MiB reads of a cached file, 1840 MiB/s into a malloc'd buffer,
//! 9671 MiB/s into an aligned one).

/// The alignment of every buffer: one page, also enough for O_DIRECT on common devices.
pub const ALIGN: usize = 4096;

/// Buffers of at least this size start on a 2 MiB boundary and ask for transparent huge
/// pages (`MADV_HUGEPAGE`; honoured when THP is `always` or `madvise`, else ignored).
///
/// For O_DIRECT this is the difference between a request of a few large physically
/// contiguous segments and one of 4 KiB pages that the block layer must split (a queue
/// takes at most `max_segments` per request, 254 here): cold reads of a 2 GiB file, 32
/// threads x 4 MiB, went from 1.35 to 3.42 GiB/s on this VM (8 threads: 3.95), medians of
/// 3 alternating runs.
pub const HUGE: usize = 2 << 20;

/// A page-aligned byte buffer.
#[derive(Debug)]
pub struct AlignedBuffer {
    storage: Storage,
    len: usize,
}

/// Where a buffer's bytes live.
#[derive(Debug)]
enum Storage {
    /// A heap block with a page boundary `offset` bytes in.
    Heap { bytes: Vec<u8>, offset: usize },
    /// An anonymous mapping of `map_len` bytes at `base`; the buffer starts `offset` bytes
    /// in, on a [`HUGE`] boundary.
    Mapped {
        base: *mut u8,
        map_len: usize,
        offset: usize,
    },
}

// SAFETY: a Mapped buffer owns its private anonymous mapping exactly as a Vec owns its heap
// block; nothing else points into it.
unsafe impl Send for Storage {}
// SAFETY: as above; shared access only reads.
unsafe impl Sync for Storage {}

impl AlignedBuffer {
    /// Allocates `len` bytes at a page boundary and touches every page.
    pub fn new(len: usize) -> Self {
        Self::untouched(len).touched()
    }

    /// The buffer with every page faulted in now, outside any timing (a non-zero byte
    /// written in each).
    fn touched(mut self) -> Self {
        for page in self.as_mut_slice().chunks_mut(ALIGN) {
            page[0] = 0x5a;
        }
        self
    }

    /// [`AlignedBuffer::new`], or `None` where the memory cannot be had (a limit on the
    /// address space, `ulimit -v`): for a caller that must fail with a message rather than
    /// abort the process, leaving its scratch files behind.
    pub fn try_new(len: usize) -> Option<Self> {
        let mapped = if len >= HUGE { Self::mapped(len) } else { None };
        let storage = match mapped {
            Some(storage) => storage,
            None => {
                let mut bytes = Vec::new();
                bytes.try_reserve_exact(len.checked_add(ALIGN)?).ok()?;
                bytes.resize(len + ALIGN, 0);
                let offset = bytes.as_ptr().align_offset(ALIGN);
                Storage::Heap { bytes, offset }
            }
        };
        Some(Self { storage, len }.touched())
    }

    /// Allocates `len` zeroed bytes at a page boundary without touching them: for large
    /// sizes the pages are faulted in later, by whoever writes them first. For O_DIRECT
    /// buffers that is the kernel, while earlier requests are already in flight; touching
    /// fresh memory here costs about 1 s per GiB on this VM (see MACHINE.md).
    pub fn untouched(len: usize) -> Self {
        if len >= HUGE
            && let Some(storage) = Self::mapped(len)
        {
            return Self { storage, len };
        }
        let bytes = vec![0u8; len + ALIGN];
        let offset = bytes.as_ptr().align_offset(ALIGN);
        Self {
            storage: Storage::Heap { bytes, offset },
            len,
        }
    }

    /// An anonymous mapping with room for `len` bytes from a [`HUGE`] boundary, advised to
    /// use huge pages; `None` when the kernel refuses the mapping.
    fn mapped(len: usize) -> Option<Storage> {
        let map_len = len.checked_add(HUGE)?;
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return None;
        }
        let base = base.cast::<u8>();
        let offset = base.align_offset(HUGE);
        // SAFETY: [base + offset, base + offset + len) lies inside the mapping made above.
        // Advice only; a kernel without THP refuses it and the buffer works the same.
        unsafe {
            libc::madvise(base.add(offset).cast(), len, libc::MADV_HUGEPAGE);
        }
        Some(Storage::Mapped {
            base,
            map_len,
            offset,
        })
    }

    /// The aligned bytes.
    pub fn as_slice(&self) -> &[u8] {
        match &self.storage {
            Storage::Heap { bytes, offset } => &bytes[*offset..*offset + self.len],
            // SAFETY: the mapping holds `len` bytes from `offset` and lives as long as self.
            Storage::Mapped { base, offset, .. } => unsafe {
                std::slice::from_raw_parts(base.add(*offset), self.len)
            },
        }
    }

    /// The aligned bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.storage {
            Storage::Heap { bytes, offset } => &mut bytes[*offset..*offset + self.len],
            // SAFETY: as in as_slice, and &mut self makes this the only borrow.
            Storage::Mapped { base, offset, .. } => unsafe {
                std::slice::from_raw_parts_mut(base.add(*offset), self.len)
            },
        }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True for a zero-length buffer.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for Storage {
    fn drop(&mut self) {
        if let Storage::Mapped { base, map_len, .. } = *self {
            // SAFETY: unmapping exactly the mapping made in AlignedBuffer::mapped.
            unsafe { libc::munmap(base.cast(), map_len) };
        }
    }
}

/// Buffers kept ready for engines, so that first-touch page faults (slow on some VMs: about
/// 1 s per GiB here) happen before a timed region, not inside it.
static POOL: std::sync::Mutex<Vec<AlignedBuffer>> = std::sync::Mutex::new(Vec::new());

/// The buffer size last stocked: only buffers of that size go back to the pool. Others are
/// freed as usual (keeping them measurably slowed `fast`'s cold reads: 0.8 against 1.4 GiB/s
/// in alternating runs here).
static STOCKED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(usize::MAX);

fn pool() -> std::sync::MutexGuard<'static, Vec<AlignedBuffer>> {
    POOL.lock().unwrap_or_else(|p| p.into_inner())
}

/// Keeps `count` touched buffers of `len` bytes ready, dropping any of other sizes: call it
/// before timing an engine that will [`take`] that many.
pub fn stock(count: usize, len: usize) {
    STOCKED.store(len, std::sync::atomic::Ordering::Relaxed);
    let mut pool = pool();
    pool.retain(|b| b.len() == len);
    while pool.len() < count {
        pool.push(AlignedBuffer::new(len));
    }
}

/// A buffer of `len` bytes: one from the pool when it has one of that size, else a new one
/// made by `make` (`AlignedBuffer::new` or `untouched`). It goes back to the pool on drop.
pub fn take(len: usize, make: fn(usize) -> AlignedBuffer) -> Pooled {
    let found = {
        let mut pool = pool();
        pool.iter()
            .position(|b| b.len() == len)
            .map(|i| pool.swap_remove(i))
    };
    Pooled(Some(found.unwrap_or_else(|| make(len))))
}

/// A buffer on loan from the pool.
#[derive(Debug)]
pub struct Pooled(Option<AlignedBuffer>);

impl std::ops::Deref for Pooled {
    type Target = AlignedBuffer;
    fn deref(&self) -> &AlignedBuffer {
        self.0.as_ref().expect("present until drop")
    }
}

impl std::ops::DerefMut for Pooled {
    fn deref_mut(&mut self) -> &mut AlignedBuffer {
        self.0.as_mut().expect("present until drop")
    }
}

impl Drop for Pooled {
    fn drop(&mut self) {
        if let Some(buf) = self.0.take() {
            if buf.len() != STOCKED.load(std::sync::atomic::Ordering::Relaxed) {
                return;
            }
            let mut pool = pool();
            // A bound, so a run with many threads cannot pin memory for ever.
            if pool.len() < 256 {
                pool.push(buf);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn try_new_gives_an_aligned_buffer_or_none_where_the_memory_cannot_be_had() {
        let b = AlignedBuffer::try_new(10_000).expect("10 kB can be had");
        assert_eq!(b.as_slice().as_ptr() as usize % ALIGN, 0);
        assert_eq!(b.len(), 10_000);
        let big = AlignedBuffer::try_new(HUGE + 1).expect("2 MiB can be had");
        assert_eq!(big.as_slice().as_ptr() as usize % HUGE, 0);
        assert!(AlignedBuffer::try_new(usize::MAX / 2).is_none());
    }

    #[test]
    fn buffers_start_on_a_page_boundary_and_large_ones_on_a_huge_page() {
        for len in [0, 1, 4095, 4096, 1 << 20, HUGE, HUGE + 1, 5 << 20] {
            for mut b in [AlignedBuffer::new(len), AlignedBuffer::untouched(len)] {
                let at = b.as_mut_slice().as_ptr() as usize;
                assert_eq!(at % if len >= HUGE { HUGE } else { ALIGN }, 0, "{len}");
                assert_eq!(b.len(), len);
                b.as_mut_slice().fill(7);
                assert!(b.as_slice().iter().all(|&x| x == 7));
            }
        }
        assert!(
            AlignedBuffer::untouched(HUGE)
                .as_slice()
                .iter()
                .all(|&x| x == 0)
        );
    }

    #[test]
    fn a_stocked_buffer_is_lent_and_comes_back() {
        stock(1, 12_345);
        let first = take(12_345, AlignedBuffer::untouched);
        let addr = first.as_slice().as_ptr();
        assert_eq!(first.as_slice()[0], 0x5a, "the stocked one: touched");
        drop(first);
        let again = take(12_345, AlignedBuffer::untouched);
        assert_eq!(
            again.as_slice().as_ptr(),
            addr,
            "the same buffer, back from its loan"
        );
    }
}
