//! Pseudo-random file contents: a seeded, counter-based stream, so byte `i` of a file
//! depends only on the seed and `i`. The same seed gives the same file whatever the block
//! size, and any prefix's checksum can be recomputed in memory.
//!
//! Word `i` (8 bytes) is `table[i mod 8192] + key(i / 8192)` (wrapping): a 64 KiB table of
//! SplitMix64 words made once per seed (and thread), plus a SplitMix64 key per 64 KiB block.
//! Every block differs from every other and no 64 KiB repeats, yet filling a buffer is a
//! copy with one add per word: 32–39 GiB/s into a 1 MiB buffer here (`cargo bench --bench
//! engines -- data_generator`), against 5.7 GB/s for SplitMix64 per word, so writes
//! measure the file system rather than the generator (fio reuses its buffers to the same
//! end). An add, not an XOR: an XOR-ed key cancels over any even number of words,
//! and every file of whole 128 KiB blocks then had XOR 00000000 whatever the seed.

use crate::checksum::Xor32;
use std::cell::RefCell;
use std::rc::Rc;

/// Words in the per-seed table (64 KiB).
pub(crate) const TABLE_WORDS: u64 = 8192;

/// An endless, seekable stream of pseudo-random bytes.
#[derive(Debug, Clone)]
pub struct DataStream {
    seed: u64,
    offset: u64,
    table: Rc<[u64]>,
}

/// SplitMix64's output for `index` of the sequence of `seed`.
#[inline(always)]
pub(crate) fn splitmix(seed: u64, index: u64) -> u64 {
    // SplitMix64's output function over a Weyl sequence: every bit depends on every bit of
    // the index.
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The key of 64 KiB block `block`.
#[inline(always)]
pub(crate) fn key(seed: u64, block: u64) -> u64 {
    splitmix(seed ^ 0x5eed_b10c_0000_0000, block)
}

thread_local! {
    static TABLE: RefCell<Option<(u64, Rc<[u64]>)>> = const { RefCell::new(None) };
}

/// The table of `seed`, made once per thread for the last seed asked.
pub(crate) fn table(seed: u64) -> Rc<[u64]> {
    TABLE.with(|t| {
        let mut t = t.borrow_mut();
        match &*t {
            Some((s, table)) if *s == seed => table.clone(),
            _ => {
                let table: Rc<[u64]> = (0..TABLE_WORDS).map(|i| splitmix(seed, i)).collect();
                *t = Some((seed, table.clone()));
                table
            }
        }
    })
}

impl DataStream {
    /// A stream for `seed`, positioned at byte `offset`.
    pub fn new(seed: u64, offset: u64) -> Self {
        Self {
            seed,
            offset,
            table: table(seed),
        }
    }

    /// The next byte offset the stream will produce.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    #[inline(always)]
    fn word(&self, index: u64) -> u64 {
        self.table[(index % TABLE_WORDS) as usize].wrapping_add(key(self.seed, index / TABLE_WORDS))
    }

    /// Fills `buf` with the next `buf.len()` bytes of the stream.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut pos = 0;
        while pos < buf.len() && !self.offset.is_multiple_of(8) {
            buf[pos] = self.byte_at(self.offset);
            pos += 1;
            self.offset += 1;
        }
        let mut words = buf[pos..].chunks_exact_mut(8);
        let first = self.offset / 8;
        let mut index = first;
        // A run of words within one 64 KiB block shares its key: copy the table, key added.
        loop {
            let within = (index % TABLE_WORDS) as usize;
            let run = TABLE_WORDS as usize - within;
            let k = key(self.seed, index / TABLE_WORDS);
            let mut n = 0;
            for (chunk, &t) in (&mut words).take(run).zip(&self.table[within..]) {
                chunk.copy_from_slice(&t.wrapping_add(k).to_le_bytes());
                n += 1;
            }
            index += n as u64;
            if n < run {
                break;
            }
        }
        self.offset += (index - first) * 8;
        for b in words.into_remainder() {
            *b = self.byte_at(self.offset);
            self.offset += 1;
        }
    }

    fn byte_at(&self, offset: u64) -> u8 {
        self.word(offset / 8).to_le_bytes()[(offset % 8) as usize]
    }
}

/// The checksum of the first `len` bytes of the stream for `seed`, computed in memory.
pub fn xor_of_prefix(seed: u64, len: u64) -> u32 {
    let mut stream = DataStream::new(seed, 0);
    let mut buf = vec![0u8; (1 << 20).min(len as usize)];
    let mut xor = Xor32::new();
    while xor.len() < len {
        let n = (len - xor.len()).min(buf.len() as u64) as usize;
        stream.fill(&mut buf[..n]);
        xor.update(&buf[..n]);
    }
    xor.value()
}

/// A seed for when the user gave none: different on every run.
pub fn fresh_seed() -> u64 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    splitmix(nanos, u64::from(std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_of_64k_join_seamlessly_and_never_repeat() {
        let len = 3 * 65536 + 1234;
        let mut whole = vec![0u8; len];
        DataStream::new(7, 5).fill(&mut whole);
        let mut pieces = vec![0u8; len];
        let mut s = DataStream::new(7, 5);
        for chunk in pieces.chunks_mut(4093) {
            s.fill(chunk);
        }
        assert_eq!(whole, pieces);
        assert_eq!(s.offset(), 5 + len as u64);
        let one = DataStream::new(7, 0);
        assert!(
            (0..len as u64)
                .step_by(997)
                .all(|o| one.byte_at(o + 5) == whole[o as usize])
        );
        assert_ne!(whole[..65536], whole[65536..131072]);
    }
    use proptest::prelude::*;

    fn generate(seed: u64, len: usize, block: usize) -> Vec<u8> {
        let mut stream = DataStream::new(seed, 0);
        let mut out = vec![0u8; len];
        for chunk in out.chunks_mut(block) {
            stream.fill(chunk);
        }
        out
    }

    #[test]
    fn checksums_of_whole_blocks_depend_on_the_seed() {
        // With a key XOR-ed into every word, any even number of 64 KiB blocks had XOR 0.
        let sums: std::collections::HashSet<u32> =
            (1..=16).map(|seed| xor_of_prefix(seed, 1 << 20)).collect();
        assert!(!sums.contains(&0), "{sums:?}");
        assert_eq!(sums.len(), 16, "{sums:?}");
        assert_ne!(xor_of_prefix(3, 128 << 10), xor_of_prefix(3, 256 << 10));
    }

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_another_seed_does_not() {
        assert_eq!(generate(7, 1000, 1000), generate(7, 1000, 1000));
        assert_ne!(generate(7, 1000, 1000), generate(8, 1000, 1000));
    }

    #[test]
    fn data_is_not_trivially_compressible() {
        let data = generate(1, 1 << 16, 4096);
        let mut seen = [0u32; 256];
        for &b in &data {
            seen[b as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 100), "every byte value occurs");
    }

    proptest! {
        #[test]
        fn block_size_does_not_change_the_bytes(seed in any::<u64>(), len in 0usize..3000, block in 1usize..300) {
            prop_assert_eq!(generate(seed, len, block), generate(seed, len, len.max(1)));
        }

        #[test]
        fn prefix_checksums_match_the_generated_bytes(seed in any::<u64>(), len in 0usize..3000) {
            let bytes = generate(seed, len, 97);
            prop_assert_eq!(xor_of_prefix(seed, len as u64), crate::checksum::xor_bytes(&bytes));
        }
    }
}
