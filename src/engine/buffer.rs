//! I/O buffers: page-aligned and touched before use.
//!
//! Alignment matters beyond O_DIRECT: the kernel copies read() data with `rep movsb`, which
//! on some CPUs (AMD Zen 3 here) runs several times slower into a destination that is not
//! page-aligned (measured: 1 MiB reads of a cached file, 1840 MiB/s into a malloc'd buffer,
//! 9671 MiB/s into an aligned one).

/// The alignment of every buffer: one page, also enough for O_DIRECT on common devices.
pub const ALIGN: usize = 4096;

/// A page-aligned byte buffer whose pages are already faulted in.
#[derive(Debug, Clone)]
pub struct AlignedBuffer {
    storage: Vec<u8>,
    offset: usize,
    len: usize,
}

impl AlignedBuffer {
    /// Allocates `len` bytes at a page boundary and touches every page.
    pub fn new(len: usize) -> Self {
        // Writing a non-zero byte everywhere faults the pages in now, outside any timing.
        Self::within(vec![0x5au8; len + ALIGN], len)
    }

    /// Allocates `len` zeroed bytes at a page boundary without touching them: for large
    /// sizes the pages are faulted in later, by whoever writes them first. For O_DIRECT
    /// buffers that is the kernel, while earlier requests are already in flight; touching
    /// fresh memory here costs about 1 s per GiB on this VM (see MACHINE.md).
    pub fn untouched(len: usize) -> Self {
        Self::within(vec![0u8; len + ALIGN], len)
    }

    /// The page-aligned `len` bytes inside `storage` (which has `ALIGN` bytes to spare).
    fn within(storage: Vec<u8>, len: usize) -> Self {
        let offset = storage.as_ptr().align_offset(ALIGN);
        Self {
            storage,
            offset,
            len,
        }
    }

    /// The aligned bytes.
    pub fn as_slice(&self) -> &[u8] {
        &self.storage[self.offset..self.offset + self.len]
    }

    /// The aligned bytes, writable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + self.len]
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
    fn buffers_start_on_a_page_boundary() {
        for len in [0, 1, 4095, 4096, 1 << 20] {
            let mut b = AlignedBuffer::new(len);
            assert_eq!(b.as_mut_slice().as_ptr() as usize % ALIGN, 0);
            assert_eq!(b.len(), len);
        }
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
