//! The corruptions the `IOSCOPE_CORRUPT` hook makes, by their definition: for the tests of
//! verification in place (tests/classic/verify_inplace.rs and, under mpirun,
//! tests/mpi/verify_inplace.rs) to know the first byte each one changes.

use ioscope::workload::data::DataStream;

/// The corruptions the `IOSCOPE_CORRUPT` hook makes, applied to `bytes` (two blocks at
/// least, from the start of the damaged range).
pub fn corrupt(kind: &str, bytes: &mut [u8], block: usize) {
    match kind {
        "swap" => {
            let (a, b) = bytes[..2 * block].split_at_mut(block);
            a.swap_with_slice(b);
        }
        "shift" => bytes[block..2 * block].rotate_right(1),
        "byte" => bytes[block + block / 2] ^= 0x55,
        _ => unreachable!("{kind}"),
    }
}

/// The first byte a corruption of two blocks at `start` changes, by `byte_at` of the data.
pub fn first_changed(kind: &str, start: u64, block: usize, byte_at: impl Fn(u64) -> u8) -> u64 {
    let good: Vec<u8> = (0..2 * block as u64).map(|i| byte_at(start + i)).collect();
    let mut bad = good.clone();
    corrupt(kind, &mut bad, block);
    let i = (0..good.len())
        .find(|&i| good[i] != bad[i])
        .expect("the corruption changes a byte");
    start + i as u64
}

pub fn stream_byte(seed: u64) -> impl Fn(u64) -> u8 {
    move |o| {
        let mut b = [0u8];
        DataStream::new(seed, o).fill(&mut b);
        b[0]
    }
}

pub const KINDS: [&str; 3] = ["swap", "shift", "byte"];
