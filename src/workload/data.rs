//! Pseudo-random file contents: a seeded, counter-based stream (SplitMix64 of the word
//! index), so byte `i` of a file depends only on the seed and `i`. The same seed gives the
//! same file whatever the block size, and any prefix's checksum can be recomputed in memory.

use crate::checksum::Xor32;

/// An endless, seekable stream of pseudo-random bytes.
#[derive(Debug, Clone)]
pub struct DataStream {
    seed: u64,
    offset: u64,
}

#[inline(always)]
fn word(seed: u64, index: u64) -> u64 {
    // SplitMix64's output function over a Weyl sequence: fast, and every bit depends on
    // every bit of the index.
    let mut z = seed.wrapping_add(index.wrapping_add(1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl DataStream {
    /// A stream for `seed`, positioned at byte `offset`.
    pub fn new(seed: u64, offset: u64) -> Self {
        Self { seed, offset }
    }

    /// The next byte offset the stream will produce.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Fills `buf` with the next `buf.len()` bytes of the stream.
    pub fn fill(&mut self, buf: &mut [u8]) {
        let mut pos = 0;
        while pos < buf.len() && !self.offset.is_multiple_of(8) {
            buf[pos] = self.byte_at(self.offset);
            pos += 1;
            self.offset += 1;
        }
        let first_word = self.offset / 8;
        let mut words = buf[pos..].chunks_exact_mut(8);
        let mut count = 0u64;
        for (k, chunk) in (&mut words).enumerate() {
            chunk.copy_from_slice(&word(self.seed, first_word + k as u64).to_le_bytes());
            count += 1;
        }
        self.offset += count * 8;
        for b in words.into_remainder() {
            *b = self.byte_at(self.offset);
            self.offset += 1;
        }
    }

    fn byte_at(&self, offset: u64) -> u8 {
        word(self.seed, offset / 8).to_le_bytes()[(offset % 8) as usize]
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
    word(nanos, u64::from(std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;
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
