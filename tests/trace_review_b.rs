//! The second hostile review of `trace` (issue 24, items 5 to 9): each break it found, made
//! into a test that failed before its fix. Order labels name the step most accesses took;
//! bonnie++'s figures are each checked against the calls of their own test; dd's against
//! its own timed region, in one direction, and every dd run a shell made is read; the sync
//! time of many threads is not subtracted from the wall time; the clock sentence follows
//! what was seen; iozone's throughput mode is read; the study's patterns section says that
//! iozone's reads are warm. Tests that trace a real program skip with a reason where there
//! is no C compiler, no tool, or ptrace is refused.

mod common;
#[allow(unused_imports)]
use common::*;
use ioscope::trace::order::{Kind, Order};

/// The order of `accesses` (offset, length) on one file.
fn order_of(accesses: impl IntoIterator<Item = (u64, u64)>) -> Order {
    let mut o = Order::default();
    for (at, len) in accesses {
        o.add(at, len);
    }
    o
}

#[test]
fn a_mostly_sequential_file_with_a_repeated_jump_at_its_end_is_not_called_strided_by_the_jump() {
    // The review's program: 200,000 one-byte writes and reads in order, a pass backward by
    // 3 bytes, then 30,000 reads 7,919 bytes apart (mod the size): the old rule named the
    // last repeated step, "strided: each access 7.7 KiB forward".
    let mut v: Vec<(u64, u64)> = (0..200_000).map(|i| (i, 1)).collect();
    v.extend((0..200_000).map(|i| (i, 1)));
    v.extend((0..66_667u64).rev().map(|i| (i * 3, 1)));
    v.extend((0..30_000u64).map(|i| (i * 7919 % 200_000, 1)));
    let o = order_of(v);
    assert_eq!(o.kind(), Some(Kind::Sequential), "{o:?}");
    let text = o.label().unwrap().text();
    assert!(
        text.starts_with("mostly in rising order (sequential)"),
        "{text}"
    );
    assert!(text.contains("80% of the transitions"), "{text}");
}

#[test]
fn a_stride_most_accesses_took_is_named_when_a_minority_stride_came_last() {
    let mut v: Vec<(u64, u64)> = (0..900u64).map(|i| (i * 16384, 4096)).collect();
    v.extend((0..100u64).map(|i| ((1 << 30) + i * 3072, 1024)));
    let o = order_of(v);
    assert_eq!(o.kind(), Some(Kind::Strided(16384)), "{o:?}");
    assert_eq!(o.step, 16384);
    let text = o.label().unwrap().text();
    assert!(
        text.starts_with("mostly strided: each access 16 KiB forward from the one before (89%"),
        "{text}"
    );
}
