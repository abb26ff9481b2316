//! The bytes `patterns` writes, prepared before the clock starts: a seeded 256 KiB block
//! repeated along the file, with the first 8 bytes of every 4 KiB replaced by a key of that
//! offset (a SplitMix64 word of seed and page number). Byte `o` of the file depends only on
//! the seed and `o`, whatever the record size; no two 4 KiB pages are alike, and the block
//! itself does not compress.
//!
//! Writing from it costs what iozone's rewritten buffer costs: a record is a window of the
//! prepared block (kept twice over, so any window up to the record size is contiguous), and
//! only its stamps (one word per 4 KiB, skipped when the slot already holds that offset's
//! key) are written before each call. The checksum of any range is arithmetic — a prefix
//! table of the block's XOR plus the stamps' words — so neither the writer nor the check of
//! a whole file reads the data again.

use super::data::{DataStream, splitmix};
use crate::checksum::xor_bytes;

/// Bytes in the repeated block.
pub const PERIOD: u64 = 256 << 10;
/// Distance between stamps: every page of the file starts with its own key.
pub const STAMP_EVERY: u64 = 4096;
/// Bytes of a stamp.
const STAMP: u64 = 8;
/// Tells stamp keys apart from the data stream of the same seed.
const STAMP_SALT: u64 = 0x7374_616d_7073_0000;

/// The stamp of the page at file offset `page` (a multiple of [`STAMP_EVERY`]).
#[inline(always)]
fn stamp(seed: u64, page: u64) -> u64 {
    splitmix(seed ^ STAMP_SALT, page / STAMP_EVERY)
}

/// XOR contribution of bytes `[from, to)` of a stamp's little-endian word placed at a
/// 4-aligned offset: byte `i` lands in bits `8 * (i % 4)`.
#[inline(always)]
fn stamp_xor(value: u64, from: u64, to: u64) -> u32 {
    let keep = |n: u64| {
        if n >= 8 {
            u64::MAX
        } else {
            (1u64 << (8 * n)) - 1
        }
    };
    let masked = value & keep(to) & !keep(from);
    (masked as u32) ^ ((masked >> 32) as u32)
}

/// The prepared data for one seed and largest piece: a window of it is what a write of any
/// record sends, stamped.
#[derive(Debug)]
pub struct Ring {
    seed: u64,
    max_piece: u64,
    /// The block, then as much of it again as the largest piece needs, and room for a stamp,
    /// from byte `base` (the first page boundary of the allocation).
    buf: Vec<u8>,
    /// Where the data starts in `buf`: page-aligned, as iozone's buffer and the page
    /// cache's pages are, so no CPU whose copy minds a mismatch pays for one (on the AMD
    /// EPYC VM, 64 KiB pwrite()s from a page-aligned and a 16-byte-off source both ran at
    /// ~12.9 GiB/s).
    base: usize,
    /// `prefix[j]`: XOR of the block's first `j` 32-bit words with its stamp slots zero.
    prefix: Vec<u32>,
    /// Per stamp slot of `buf`, the file offset whose stamp it holds (`u64::MAX`: none).
    tags: Vec<u64>,
}

impl Clone for Ring {
    /// The same data laid out afresh (a copy of the buffer would lose its page alignment).
    fn clone(&self) -> Self {
        Self::new(self.seed, self.max_piece)
    }
}

impl Ring {
    /// The data of `seed` for pieces of at most `max_piece` bytes (its memory: 256 KiB plus
    /// `max_piece`).
    pub fn new(seed: u64, max_piece: u64) -> Self {
        let period = PERIOD as usize;
        let mut block = vec![0u8; period];
        DataStream::new(seed, 0).fill(&mut block);
        for slot in block.chunks_mut(STAMP_EVERY as usize) {
            slot[..STAMP as usize].fill(0);
        }
        let mut prefix = Vec::with_capacity(period / 4 + 1);
        let mut sum = 0u32;
        prefix.push(0);
        for word in block.chunks_exact(4) {
            sum ^= u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
            prefix.push(sum);
        }
        let len = period + max_piece as usize + STAMP as usize;
        const PAGE: usize = 4096;
        let mut buf = vec![0u8; len + PAGE];
        let base = buf.as_ptr().align_offset(PAGE).min(PAGE);
        for chunk in buf[base..base + len].chunks_mut(period) {
            chunk.copy_from_slice(&block[..chunk.len()]);
        }
        let tags = vec![u64::MAX; len.div_ceil(STAMP_EVERY as usize)];
        Self {
            seed,
            max_piece,
            buf,
            base,
            prefix,
            tags,
        }
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The largest piece a window can give.
    pub fn max_piece(&self) -> u64 {
        self.max_piece
    }

    /// Bytes of memory the data takes (the block twice over and the checksum table).
    pub fn bytes(&self) -> u64 {
        (self.buf.len() + 4 * self.prefix.len() + 8 * self.tags.len()) as u64
    }

    /// XOR of the block's bytes `[0, k)`, stamp slots zero, for `k <= PERIOD`.
    fn block_prefix(&self, k: u64) -> u32 {
        let word = (k / 4) as usize;
        let tail = k % 4;
        let mut x = self.prefix[word];
        if tail > 0 && (k / 4 * 4) % STAMP_EVERY >= STAMP {
            let at = self.base + word * 4;
            let bytes = &self.buf[at..at + tail as usize];
            x ^= xor_bytes(bytes);
        }
        x
    }

    /// XOR of the file's bytes `[0, x)` without their stamps.
    fn unstamped_prefix(&self, x: u64) -> u32 {
        let whole = if (x / PERIOD) % 2 == 1 {
            self.prefix[(PERIOD / 4) as usize]
        } else {
            0
        };
        whole ^ self.block_prefix(x % PERIOD)
    }

    /// XOR of the stamps' bytes that fall in `[start, end)`.
    fn stamps_xor(&self, start: u64, end: u64) -> u32 {
        let mut x = 0;
        let mut page = start / STAMP_EVERY * STAMP_EVERY;
        while page < end {
            let (from, to) = (start.max(page) - page, end.min(page + STAMP) - page);
            if from < to {
                x ^= stamp_xor(stamp(self.seed, page), from, to);
            }
            page += STAMP_EVERY;
        }
        x
    }

    /// Writes the stamps of file range `[start, end)` into the buffer window that starts
    /// at `window` and holds file offset `start`; returns their XOR as [`Ring::stamps_xor`].
    fn stamp_window(&mut self, start: u64, end: u64, window: u64) -> u32 {
        let mut x = 0;
        let mut page = start / STAMP_EVERY * STAMP_EVERY;
        while page < end {
            let (from, to) = (start.max(page) - page, end.min(page + STAMP) - page);
            if from < to {
                // The slot's place in the buffer. `window` is `start` modulo the period (a
                // multiple of the stamp distance), so slots fall on multiples of it there
                // too; a slot that begins before `start` begins `start - page` bytes before
                // the window, and `window` is at least that.
                let at = (window + page - start) as usize;
                let slot = at / STAMP_EVERY as usize;
                let held = &mut self.buf[self.base + at..self.base + at + STAMP as usize];
                let value = if self.tags[slot] == page {
                    // Written for this offset before (a record rewritten): no key to make.
                    u64::from_le_bytes(held.try_into().expect("a slot is 8 bytes"))
                } else {
                    let value = stamp(self.seed, page);
                    held.copy_from_slice(&value.to_le_bytes());
                    self.tags[slot] = page;
                    value
                };
                x ^= stamp_xor(value, from, to);
            }
            page += STAMP_EVERY;
        }
        x
    }

    /// XOR of the file's bytes `[start, start + len)`, each in the lane of its absolute
    /// offset (as `xor_at(start, bytes)` gives), from the tables alone.
    pub fn xor_of(&self, start: u64, len: u64) -> u32 {
        let end = start + len;
        self.unstamped_prefix(end) ^ self.unstamped_prefix(start) ^ self.stamps_xor(start, end)
    }

    /// The bytes of the file at `[offset, offset + len)`, ready to write, and their XOR in
    /// the lanes of their absolute offsets. Panics if `len` exceeds [`Ring::max_piece`].
    pub fn piece(&mut self, offset: u64, len: u64) -> (&[u8], u32) {
        assert!(
            len <= self.max_piece,
            "a piece longer than the data prepared"
        );
        let end = offset + len;
        let window = offset % PERIOD;
        let x = self.unstamped_prefix(end)
            ^ self.unstamped_prefix(offset)
            ^ self.stamp_window(offset, end, window);
        let at = self.base + window as usize;
        (&self.buf[at..at + len as usize], x)
    }
}

/// Byte `offset` of the file for `seed`, from the definition (slow; for checks).
pub fn byte_at(seed: u64, offset: u64) -> u8 {
    let page = offset / STAMP_EVERY * STAMP_EVERY;
    if offset - page < STAMP {
        stamp(seed, page).to_le_bytes()[(offset - page) as usize]
    } else {
        let mut b = [0u8];
        DataStream::new(seed, offset % PERIOD).fill(&mut b);
        b[0]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{xor_at, xor_bytes};

    fn reference(seed: u64, offset: u64, len: u64) -> Vec<u8> {
        (offset..offset + len).map(|o| byte_at(seed, o)).collect()
    }

    #[test]
    fn windows_hold_the_file_bytes_and_their_xor_whatever_the_offset_and_length() {
        let mut ring = Ring::new(5, 9000);
        for &(offset, len) in &[
            (0u64, 4096u64),
            (0, 9000),
            (4093, 11),
            (4100, 4000),
            (PERIOD - 3, 9000),
            (PERIOD * 3 + 4095, 8191),
            (7 * PERIOD + 17, 1),
            (123_457, 0),
        ] {
            let want = reference(5, offset, len);
            let (bytes, x) = ring.piece(offset, len);
            assert_eq!(bytes, &want[..], "{offset}+{len}");
            assert_eq!(x, xor_at(offset, &want), "{offset}+{len}");
            assert_eq!(ring.xor_of(offset, len), x, "{offset}+{len}");
        }
    }

    #[test]
    fn a_window_written_again_after_others_is_the_same() {
        let mut ring = Ring::new(1, 65536);
        let first = ring.piece(0, 65536).0.to_vec();
        for o in (65536..4 * PERIOD).step_by(65536) {
            ring.piece(o, 65536);
        }
        assert_eq!(ring.piece(0, 65536).0, &first[..]);
        // Odd records that straddle stamps rewrite them in place.
        let odd = ring.piece(4090, 9).0.to_vec();
        assert_eq!(odd, reference(1, 4090, 9));
    }

    #[test]
    fn the_xor_of_a_whole_file_is_the_xor_of_its_bytes() {
        for len in [
            0u64,
            1,
            3,
            4,
            5,
            4095,
            4096,
            4097,
            2 * PERIOD,
            2 * PERIOD + 3,
        ] {
            let ring = Ring::new(9, 1);
            assert_eq!(
                ring.xor_of(0, len),
                xor_bytes(&reference(9, 0, len)),
                "{len}"
            );
        }
    }

    #[test]
    fn files_of_whole_blocks_do_not_cancel_to_zero_and_depend_on_the_seed() {
        // An even number of identical blocks XORs to zero; the stamps keep the sum alive.
        let sums: std::collections::HashSet<u32> = (1..=16)
            .map(|seed| Ring::new(seed, 1).xor_of(0, 4 * PERIOD))
            .collect();
        assert!(!sums.contains(&0), "{sums:?}");
        assert_eq!(sums.len(), 16, "{sums:?}");
    }

    #[test]
    fn records_start_on_the_page_grid_as_the_page_cache_does_and_so_do_copies() {
        let mut ring = Ring::new(2, 65536);
        assert_eq!(ring.piece(0, 65536).0.as_ptr() as usize % 4096, 0);
        assert_eq!(ring.piece(3 * 65536, 65536).0.as_ptr() as usize % 4096, 0);
        let mut copy = ring.clone();
        assert_eq!(copy.piece(65536, 65536).0.as_ptr() as usize % 4096, 0);
        assert_eq!(copy.piece(65536, 65536).0, ring.piece(65536, 65536).0);
    }

    #[test]
    fn no_two_pages_are_alike() {
        let bytes = reference(3, 0, 2 * PERIOD);
        let mut pages: Vec<&[u8]> = bytes.chunks(STAMP_EVERY as usize).collect();
        let n = pages.len();
        pages.sort();
        pages.dedup();
        assert_eq!(pages.len(), n);
    }

    #[test]
    fn a_corrupted_byte_or_a_misplaced_page_changes_the_xor() {
        let len = 64 * STAMP_EVERY;
        let ring = Ring::new(11, 1);
        let expected = ring.xor_of(0, len);
        let good = reference(11, 0, len);
        assert_eq!(xor_bytes(&good), expected);
        let mut flipped = good.clone();
        flipped[123_456] ^= 0x10;
        assert_ne!(xor_bytes(&flipped), expected);
        // Page 7 written where page 21 belongs (page 21 lost, page 7 twice).
        let mut moved = good.clone();
        let page = STAMP_EVERY as usize;
        moved.copy_within(7 * page..8 * page, 21 * page);
        assert_ne!(xor_bytes(&moved), expected);
    }
}
