//! Verification in place: bytes read at file offset `o` are compared with the bytes the
//! generator wrote at `o`, so a block moved, shifted or changed is found at its exact byte,
//! where one XOR over a whole segment only says "something differs" (and misses blocks
//! that traded places, since XOR does not care where a block sits).
//!
//! The written data depends only on the seed and the offset ([`Written`]): the stream of
//! `workload::data` (`run -w`, `sweep`, `study`, `mpi`) or the stamped ring of
//! `workload::ring` (`patterns`). A [`Checker`] takes buffers at any offset, in any order,
//! and keeps the blocks and bytes checked, the blocks that differ and the first bad byte
//! ([`InPlace`]). Blocks are `[k·B, (k+1)·B)` of the file for the block size `B` asked for.
//!
//! The stream's check is one hand-written loop that makes the expected words on the fly
//! (table word + block key, as `DataStream::fill` does) and ORs the XOR of 8 words at a time
//! with what was read, so nothing is written to memory; the exact byte is looked for only
//! in a 64-byte group that differs. Measured with `cargo bench --bench verify` (figures in
//! bench/RESULTS.md).

use super::data::{self, TABLE_WORDS};
use super::ring::Ring;
use crate::units::format_size;
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// The bytes a file holds when ioscope wrote it: what byte `o` must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "data", content = "seed")]
pub enum Written {
    /// Byte `o` is byte `o` of `DataStream::new(seed, 0)` (`run -w`, `sweep`, `study`, `mpi`).
    Stream(u64),
    /// Byte `o` is byte `o` of `patterns`' stamped ring for the seed (`workload::ring`).
    Stamped(u64),
}

/// What a verification in place found.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct InPlace {
    /// Block size the blocks are counted in (blocks start at multiples of it); 0 when
    /// checks of several block sizes were merged.
    pub block_bytes: u64,
    /// Blocks checked (a block partly read counts).
    pub blocks: u64,
    /// Bytes checked.
    pub bytes: u64,
    /// Blocks holding at least one byte that is not the one written there.
    pub bad_blocks: u64,
    /// The first byte (file offset) that is not the one written there.
    pub first_bad_offset: Option<u64>,
    /// Seconds the check took (outside every timed region).
    pub seconds: f64,
}

impl InPlace {
    /// Whether every byte checked was the one written there.
    pub fn ok(&self) -> bool {
        self.bad_blocks == 0 && self.first_bad_offset.is_none()
    }

    /// Two verifications together (of several runs or ranks): counts and seconds add up,
    /// the first bad byte is the lower.
    pub fn merge(self, other: InPlace) -> InPlace {
        let first_bad_offset = match (self.first_bad_offset, other.first_bad_offset) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        InPlace {
            // 0 once checks of different block sizes are merged (the blocks are of each).
            block_bytes: match (self.block_bytes, other.block_bytes) {
                (a, b) if a == b => a,
                (0, b) if self.blocks == 0 => b,
                (a, 0) if other.blocks == 0 => a,
                _ => 0,
            },
            blocks: self.blocks + other.blocks,
            bytes: self.bytes + other.bytes,
            bad_blocks: self.bad_blocks + other.bad_blocks,
            first_bad_offset,
            seconds: self.seconds + other.seconds,
        }
    }

    /// All of `runs` merged (`None` when there are none).
    pub fn merged<'a>(runs: impl IntoIterator<Item = &'a InPlace>) -> Option<InPlace> {
        runs.into_iter().copied().reduce(InPlace::merge)
    }

    /// The one line a mismatch is told in: the file, the first bad byte, the blocks that
    /// differ; `None` when every byte was in place.
    pub fn mismatch(&self, file: &str) -> Option<String> {
        if self.ok() {
            return None;
        }
        Some(format!(
            "verify {file}: byte {} is not the byte written there (first bad byte); {} of {} block(s) of {} differ",
            self.first_bad_offset
                .map_or_else(|| "?".to_string(), |o| o.to_string()),
            self.bad_blocks,
            self.blocks,
            self.blocks_of()
        ))
    }

    /// `1 MiB`, or `each size read` when checks of several block sizes were merged.
    pub fn blocks_of(&self) -> String {
        if self.block_bytes == 0 {
            "each size read".to_string()
        } else {
            format_size(self.block_bytes)
        }
    }
}

/// Bytes of expected data the stamped ring gives per window.
const RING_WINDOW: u64 = 1 << 20;

/// Compares buffers read at known offsets with what was written there.
pub struct Checker {
    written: Written,
    block: u64,
    /// The stream's table (one per seed).
    table: Rc<[u64]>,
    /// The stamped data, made on first use.
    ring: Option<Ring>,
    found: InPlace,
    last_block: Option<u64>,
    last_bad: Option<u64>,
}

impl std::fmt::Debug for Checker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Checker")
            .field("written", &self.written)
            .field("block", &self.block)
            .field("found", &self.found)
            .finish()
    }
}

impl Checker {
    /// A checker of data `written`, counting blocks of `block` bytes (at least 1).
    pub fn new(written: Written, block: u64) -> Self {
        let seed = match written {
            Written::Stream(s) | Written::Stamped(s) => s,
        };
        Self {
            written,
            block: block.max(1),
            table: data::table(seed),
            ring: None,
            found: InPlace {
                block_bytes: block.max(1),
                ..InPlace::default()
            },
            last_block: None,
            last_bad: None,
        }
    }

    /// Checks `bytes`, read at file offset `offset`.
    pub fn check(&mut self, offset: u64, bytes: &[u8]) {
        let mut pos = 0usize;
        while pos < bytes.len() {
            let at = offset + pos as u64;
            let index = at / self.block;
            let room = (index + 1) * self.block - at;
            let n = ((bytes.len() - pos) as u64).min(room) as usize;
            let piece = &bytes[pos..pos + n];
            self.count(index, n as u64);
            if self.last_bad != Some(index)
                && let Some(i) = self.difference(at, piece)
            {
                self.bad(index, at + i as u64);
            }
            pos += n;
        }
    }

    /// Bytes `[offset, offset + len)` that should have been there and could not be read (the
    /// file ends early): each block they touch differs, the first of them is bad.
    pub fn missing(&mut self, offset: u64, len: u64) {
        if len == 0 {
            return;
        }
        let (first, last) = (offset / self.block, (offset + len - 1) / self.block);
        for index in first..=last {
            let from = (index * self.block).max(offset);
            let to = ((index + 1) * self.block).min(offset + len);
            self.count(index, to - from);
            if self.last_bad != Some(index) {
                self.bad(index, from);
            }
        }
    }

    /// What was found so far.
    pub fn found(&self) -> InPlace {
        self.found
    }

    fn count(&mut self, index: u64, bytes: u64) {
        if self.last_block != Some(index) {
            self.found.blocks += 1;
            self.last_block = Some(index);
        }
        self.found.bytes += bytes;
    }

    fn bad(&mut self, index: u64, offset: u64) {
        self.found.bad_blocks += 1;
        self.last_bad = Some(index);
        self.found.first_bad_offset = Some(
            self.found
                .first_bad_offset
                .map_or(offset, |o| o.min(offset)),
        );
    }

    /// Index in `bytes` (read at `offset`) of the first byte that is not the one written.
    fn difference(&mut self, offset: u64, bytes: &[u8]) -> Option<usize> {
        match self.written {
            Written::Stream(seed) => stream_difference(seed, &self.table, offset, bytes),
            Written::Stamped(seed) => {
                let ring = self
                    .ring
                    .get_or_insert_with(|| Ring::new(seed, RING_WINDOW));
                let mut done = 0usize;
                for piece in bytes.chunks(RING_WINDOW as usize) {
                    let (expected, _) = ring.piece(offset + done as u64, piece.len() as u64);
                    if let Some(i) = first_difference(piece, expected) {
                        return Some(done + i);
                    }
                    done += piece.len();
                }
                None
            }
        }
    }
}

/// The stream's byte at `offset`.
#[inline]
fn stream_byte(seed: u64, table: &[u64], offset: u64) -> u8 {
    let index = offset / 8;
    let word =
        table[(index % TABLE_WORDS) as usize].wrapping_add(data::key(seed, index / TABLE_WORDS));
    word.to_le_bytes()[(offset % 8) as usize]
}

/// First byte of `bytes` (read at `offset`) that differs from the stream of `seed`.
fn stream_difference(seed: u64, table: &[u64], offset: u64, bytes: &[u8]) -> Option<usize> {
    let len = bytes.len();
    let mut pos = 0usize;
    while pos < len && !(offset + pos as u64).is_multiple_of(8) {
        if bytes[pos] != stream_byte(seed, table, offset + pos as u64) {
            return Some(pos);
        }
        pos += 1;
    }
    let mut index = (offset + pos as u64) / 8;
    while len - pos >= 8 {
        // A run of words within one 64 KiB block of the stream shares its key.
        let within = (index % TABLE_WORDS) as usize;
        let words = ((len - pos) / 8).min(TABLE_WORDS as usize - within);
        let key = data::key(seed, index / TABLE_WORDS);
        let got = &bytes[pos..pos + words * 8];
        if let Some(i) = words_difference(got, &table[within..within + words], key) {
            return Some(pos + i);
        }
        pos += words * 8;
        index += words as u64;
    }
    while pos < len {
        if bytes[pos] != stream_byte(seed, table, offset + pos as u64) {
            return Some(pos);
        }
        pos += 1;
    }
    None
}

#[inline(always)]
fn read_u64(bytes: &[u8]) -> u64 {
    u64::from_le_bytes(bytes.try_into().expect("callers pass exactly 8 bytes"))
}

/// First byte of `got` that differs from the words `table[i] + key` (little-endian).
#[inline]
fn words_difference(got: &[u8], table: &[u64], key: u64) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    {
        if got.len() >= 256 && std::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU supports AVX2, checked just above.
            return unsafe { words_difference_avx2(got, table, key) };
        }
    }
    words_difference_body(got, table, key)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn words_difference_avx2(got: &[u8], table: &[u64], key: u64) -> Option<usize> {
    words_difference_body(got, table, key)
}

/// The hot loop: 8 lanes of 64-bit differences (as the checksum's kernel), ORed over 256
/// bytes per step; only a step that differs is searched for its first byte.
#[inline(always)]
fn words_difference_body(got: &[u8], table: &[u64], key: u64) -> Option<usize> {
    const STEP: usize = 32;
    let mut g = got.chunks_exact(STEP * 8);
    let mut t = table.chunks_exact(STEP);
    let mut done = 0usize;
    for (gc, tc) in (&mut g).zip(&mut t) {
        let mut lanes = [0u64; 8];
        for (g64, t8) in gc.chunks_exact(64).zip(tc.chunks_exact(8)) {
            for (i, lane) in lanes.iter_mut().enumerate() {
                *lane |= read_u64(&g64[i * 8..i * 8 + 8]) ^ t8[i].wrapping_add(key);
            }
        }
        if lanes.iter().fold(0, |a, b| a | b) != 0 {
            return first_word_difference(gc, tc, key).map(|i| done + i);
        }
        done += STEP * 8;
    }
    first_word_difference(g.remainder(), t.remainder(), key).map(|i| done + i)
}

/// Word by word: the first byte of `got` that differs from `table[i] + key`.
fn first_word_difference(got: &[u8], table: &[u64], key: u64) -> Option<usize> {
    got.chunks_exact(8)
        .zip(table)
        .enumerate()
        .find_map(|(j, (w, &t))| {
            let d = read_u64(w) ^ t.wrapping_add(key);
            (d != 0).then(|| j * 8 + (d.trailing_zeros() / 8) as usize)
        })
}

/// Index of the first byte where `a` and `b` differ (over the shorter length).
pub fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    // The library's slice comparison is memcmp (vectorised); only a 4 KiB piece that differs
    // is searched byte by byte.
    let mut done = 0usize;
    for (x, y) in a.chunks(4096).zip(b.chunks(4096)) {
        if x != y {
            return x.iter().zip(y).position(|(p, q)| p != q).map(|i| done + i);
        }
        done += x.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::data::DataStream;
    use proptest::prelude::*;

    fn stream(seed: u64, offset: u64, len: usize) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        DataStream::new(seed, offset).fill(&mut buf);
        buf
    }

    fn stamped(seed: u64, offset: u64, len: usize) -> Vec<u8> {
        (offset..offset + len as u64)
            .map(|o| crate::workload::ring::byte_at(seed, o))
            .collect()
    }

    fn check(written: Written, block: u64, offset: u64, bytes: &[u8]) -> InPlace {
        let mut c = Checker::new(written, block);
        c.check(offset, bytes);
        c.found()
    }

    #[test]
    fn the_generators_own_bytes_are_in_place_at_any_offset_and_length() {
        for &(offset, len) in &[(0, 0), (0, 1), (3, 5), (5, 70_000), (65_530, 200_000)] {
            let got = check(Written::Stream(9), 4096, offset, &stream(9, offset, len));
            assert!(got.ok(), "{offset}+{len}: {got:?}");
            assert_eq!(got.bytes, len as u64);
            let got = check(Written::Stamped(9), 4096, offset, &stamped(9, offset, len));
            assert!(got.ok(), "stamped {offset}+{len}: {got:?}");
        }
    }

    #[test]
    fn two_blocks_that_traded_places_are_both_found_though_the_xor_is_unchanged() {
        let block = 64 << 10;
        let mut file = stream(4, 0, 4 * block);
        let whole = crate::checksum::xor_bytes(&file);
        let (a, b) = file.split_at_mut(2 * block);
        a[block..2 * block].swap_with_slice(&mut b[..block]);
        assert_eq!(crate::checksum::xor_bytes(&file), whole);
        let got = check(Written::Stream(4), block as u64, 0, &file);
        assert_eq!(got.bad_blocks, 2);
        assert_eq!(got.blocks, 4);
        assert_eq!(got.first_bad_offset, Some(block as u64));
    }

    #[test]
    fn a_block_shifted_by_one_byte_is_found_at_the_first_byte_that_moved() {
        let block = 4096usize;
        let mut file = stream(6, 0, 3 * block);
        file[block..2 * block].rotate_right(1);
        let got = check(Written::Stream(6), block as u64, 0, &file);
        assert_eq!(got.bad_blocks, 1);
        // The first byte that differs: rotating moves the last byte first; where it equals
        // the byte it replaced, the first difference is later.
        let expected = stream(6, 0, 3 * block);
        let first = (0..file.len()).find(|&i| file[i] != expected[i]);
        assert_eq!(got.first_bad_offset, first.map(|i| i as u64));
        assert!(got.first_bad_offset.unwrap() < 2 * block as u64);
    }

    #[test]
    fn one_changed_byte_is_found_at_its_offset_in_both_layouts() {
        for written in [Written::Stream(2), Written::Stamped(2)] {
            let make = |o, n| match written {
                Written::Stream(s) => stream(s, o, n),
                Written::Stamped(s) => stamped(s, o, n),
            };
            let mut file = make(100, 300_000);
            file[123_457] ^= 0x10;
            let got = check(written, 65536, 100, &file);
            assert_eq!(got.first_bad_offset, Some(100 + 123_457), "{written:?}");
            assert_eq!(got.bad_blocks, 1);
        }
    }

    #[test]
    fn stamped_pages_that_traded_places_a_whole_period_apart_are_found() {
        // The ring repeats every 256 KiB: only the stamps tell the periods apart.
        let period = crate::workload::ring::PERIOD as usize;
        let mut file = stamped(1, 0, 2 * period);
        let (a, b) = file.split_at_mut(period);
        a.swap_with_slice(b);
        let got = check(Written::Stamped(1), 4096, 0, &file);
        assert_eq!(got.first_bad_offset, Some(0));
        assert_eq!(got.bad_blocks, 2 * period as u64 / 4096);
    }

    #[test]
    fn bytes_missing_at_the_end_count_as_bad_blocks_from_where_the_file_ended() {
        let mut c = Checker::new(Written::Stream(1), 1000);
        c.check(0, &stream(1, 0, 1500));
        c.missing(1500, 1500);
        let got = c.found();
        assert_eq!(got.first_bad_offset, Some(1500));
        assert_eq!((got.blocks, got.bad_blocks, got.bytes), (3, 2, 3000));
    }

    #[test]
    fn the_mismatch_line_names_the_file_the_first_bad_byte_and_the_blocks() {
        let found = InPlace {
            block_bytes: 1 << 20,
            blocks: 8,
            bytes: 8 << 20,
            bad_blocks: 2,
            first_bad_offset: Some(1_048_576),
            seconds: 0.0,
        };
        assert_eq!(
            found.mismatch("f").as_deref(),
            Some(
                "verify f: byte 1048576 is not the byte written there (first bad byte); 2 of 8 block(s) of 1 MiB differ"
            )
        );
        assert_eq!(InPlace::default().mismatch("f"), None);
        let merged = found.merge(InPlace {
            first_bad_offset: Some(7),
            bad_blocks: 1,
            ..found
        });
        assert_eq!(merged.first_bad_offset, Some(7));
        assert_eq!(merged.bad_blocks, 3);
        assert_eq!(merged.block_bytes, 1 << 20);
        let mixed = merged.merge(InPlace {
            block_bytes: 4096,
            ..found
        });
        assert_eq!(mixed.block_bytes, 0, "blocks of two sizes");
        assert!(
            mixed
                .mismatch("f")
                .unwrap()
                .ends_with("of each size read differ")
        );
    }

    proptest! {
        #[test]
        fn random_corruption_is_found_at_its_exact_first_byte(
            seed in any::<u64>(),
            offset in 0u64..200_000,
            len in 1usize..20_000,
            block in 1u64..9000,
            changes in proptest::collection::vec((any::<usize>(), 1u8..=255), 0..4),
            stamped_layout in any::<bool>(),
        ) {
            let written = if stamped_layout { Written::Stamped(seed) } else { Written::Stream(seed) };
            let good = if stamped_layout { stamped(seed, offset, len) } else { stream(seed, offset, len) };
            let mut bad = good.clone();
            for &(at, flip) in &changes {
                bad[at % len] ^= flip;
            }
            let first = (0..len).find(|&i| bad[i] != good[i]);
            let mut bad_blocks: Vec<u64> = (0..len)
                .filter(|&i| bad[i] != good[i])
                .map(|i| (offset + i as u64) / block)
                .collect();
            bad_blocks.dedup();
            // Checked in two pieces cut anywhere: the same answer.
            let cut = changes.first().map_or(len / 2, |c| c.0 % (len + 1));
            let mut c = Checker::new(written, block);
            c.check(offset, &bad[..cut]);
            c.check(offset + cut as u64, &bad[cut..]);
            let got = c.found();
            prop_assert_eq!(got.first_bad_offset, first.map(|i| offset + i as u64));
            prop_assert_eq!(got.bad_blocks, bad_blocks.len() as u64);
            prop_assert_eq!(got.bytes, len as u64);
            prop_assert_eq!(got.blocks, (offset + len as u64 - 1) / block - offset / block + 1);
        }

        #[test]
        fn first_difference_agrees_with_a_byte_by_byte_search(
            a in proptest::collection::vec(any::<u8>(), 0..600),
            at in any::<usize>(),
        ) {
            let mut b = a.clone();
            if !b.is_empty() {
                let i = at % b.len();
                b[i] = b[i].wrapping_add(1);
            }
            let expected = a.iter().zip(&b).position(|(x, y)| x != y);
            prop_assert_eq!(first_difference(&a, &b), expected);
        }
    }
}
