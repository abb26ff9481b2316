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

/// A saved trace document from tests/fixtures.
fn fixture(name: &str) -> serde_json::Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
}

#[test]
fn sync_time_summed_over_threads_beyond_the_wall_time_is_not_taken_from_it() {
    // The review's 8 threads that each fsync: 2.4 s inside fsync summed, in a 0.9 s run;
    // the old text said "0 ns without the 2.400 s inside fsync-type calls".
    let mut doc = fixture("trace.json");
    doc["seconds"] = 0.9.into();
    doc["sync_seconds"] = 2.4.into();
    doc["tasks"] = 9.into();
    let text = report_text(&doc);
    assert!(!text.contains("without the 2.400 s"), "{text}");
    assert!(
        text.contains("2.400 s inside fsync-type calls summed over its 9 tasks, more than the wall time: they synced at the same time, so no time without them is given"),
        "{text}"
    );
    // Below the wall time, the time without them is still given.
    doc["sync_seconds"] = 0.3.into();
    let text = report_text(&doc);
    assert!(
        text.contains("600.00 ms without the 300.00 ms inside fsync-type calls"),
        "{text}"
    );
}

#[test]
fn with_the_vdso_kept_raw_clock_system_calls_seen_are_said_to_be_the_regions_source() {
    // The review: --vdso keep and a program reading its clock through syscall(): the text
    // said the clock reads were not seen, then listed regions.
    let mut doc = fixture("trace-clock.json");
    assert!(doc["clock"]["regions_found"].as_u64().unwrap() > 0);
    doc["clock"]["vdso"] = "keep".into();
    let text = report_text(&doc);
    assert!(
        !text.contains("so the regions the program timed are not found"),
        "{text}"
    );
    assert!(
        text.contains("made as system calls were seen, and the "),
        "{text}"
    );
    assert!(
        text.contains("timed region(s) below come from those alone"),
        "{text}"
    );
    doc["clock"]["reads"] = serde_json::json!({});
    doc["clock"]["regions_found"] = 0.into();
    doc["clock"]["regions"] = serde_json::json!([]);
    let text = report_text(&doc);
    assert!(
        text.contains("vDSO kept (--vdso keep): clock reads through it are not seen, so the regions the program timed are not found; no clock reads seen"),
        "{text}"
    );
}

#[test]
fn the_study_s_patterns_section_says_iozone_s_reads_are_warm_as_patterns_does() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("study.md");
    let saved = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/study-sentences.json");
    ioscope()
        .arg("report")
        .arg(&saved)
        .arg("--markdown")
        .arg(&md)
        .assert()
        .success();
    let text = std::fs::read_to_string(&md).unwrap();
    let sentence = "iozone's read tests read the file it has just written, from the page cache (warm); these started cold";
    assert!(text.contains(sentence), "{text}");
    // The one `patterns` prints for the same result, word for word.
    let doc = fixture("study-sentences.json");
    let mut patterns = doc["patterns"].clone();
    assert!(patterns.is_object(), "the study holds a patterns result");
    patterns["schema"] = "ioscope/patterns/v2".into();
    for key in ["version", "command_line", "environment"] {
        if patterns.get(key).is_none() {
            patterns[key] = doc[key].clone();
        }
    }
    let own = report_text(&patterns);
    let at = own
        .find("iozone's read tests read")
        .unwrap_or_else(|| panic!("{own}"));
    let line = own[at..].lines().next().unwrap();
    assert!(text.contains(line), "{line}\n{text}");
}
