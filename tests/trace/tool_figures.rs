//! `trace`'s reading of each tool's figures and of access order, from the second hostile
//! review of `trace` (issue 24, items 5 to 9): each break it found, made into a test that
//! failed before its fix. Order labels name the step most accesses took;
//! bonnie++'s figures are each checked against the calls of their own test; dd's against
//! its own timed region, in one direction, and every dd run a shell made is read; the sync
//! time of many threads is not subtracted from the wall time; the clock sentence follows
//! what was seen; iozone's throughput mode is read; the study's patterns section says that
//! iozone's reads are warm. Tests that trace a real program skip with a reason where there
//! is no C compiler, no tool, or ptrace is refused.

#[allow(unused_imports)]
use crate::common::*;
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

#[test]
fn sync_time_summed_over_threads_beyond_the_wall_time_is_not_taken_from_it() {
    // The review's 8 threads that each fsync: 2.4 s inside fsync summed, in a 0.9 s run;
    // the old text said "0 ns without the 2.400 s inside fsync-type calls".
    let mut doc = fixture_json("trace.json");
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
    let mut doc = fixture_json("trace-clock.json");
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
    let doc = fixture_json("study-sentences.json");
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

use ioscope::measure::external::{ClaimedFigure, Moves, ToolClaim};
use ioscope::trace::claims::{Covers, Verdict, against_regions, check};
use std::collections::BTreeMap;

const MIB: u64 = 1 << 20;

/// dd's copy region: `bytes` read and written in `seconds` (its clock reads around them).
fn copy_region(start: f64, seconds: f64, bytes: u64) -> ioscope::trace::clock::Region {
    use ioscope::trace::clock::{Moved, Region, RegionFile};
    let moved = |calls, bytes| Moved { calls, bytes };
    Region {
        tid: 1,
        clock: "clock_gettime".into(),
        pid: None,
        io_of: Vec::new(),
        io_tasks: 0,
        start_seconds: start,
        end_seconds: start + seconds,
        inside: BTreeMap::from([
            ("read".to_string(), moved(bytes / 65536, bytes)),
            ("write".to_string(), moved(bytes / 65536, bytes)),
        ]),
        bytes_read: bytes,
        bytes_written: bytes,
        closing_inside: BTreeMap::new(),
        after: BTreeMap::from([("close".to_string(), 1)]),
        after_end_seconds: None,
        bytes_per_second_over_region: 2.0 * bytes as f64 / seconds,
        bytes_per_second_with_after: None,
        files: vec![RegionFile {
            path: "/d/out".into(),
            first_access: 0,
            last_access: 0,
        }],
    }
}

fn dd_claim(figures: &[(u64, f64)]) -> ToolClaim {
    ToolClaim {
        tool: "dd".into(),
        bytes_read: 0,
        bytes_written: 0,
        seconds: 0.0,
        records_in: None,
        records_out: None,
        figures: figures
            .iter()
            .enumerate()
            .map(|(i, &(bytes, seconds))| ClaimedFigure {
                label: format!("copy (run {})", i + 1),
                moves: Moves::Both,
                bytes,
                record_size: None,
                seconds: Some(seconds),
                said: format!("{bytes} bytes copied, {seconds} s"),
            })
            .collect(),
    }
}

#[test]
fn dd_s_copy_is_checked_against_its_own_timed_region_in_one_direction() {
    // dd copied 16 MiB in 0.1 s by its clock; the trace saw its two clock reads 0.1 s
    // apart with 16 MiB read and 16 MiB written between them. The old check skipped the
    // region for a copy (and over the region would have counted 32 MiB: 2x dd's figure).
    // (No file stats needed: the region alone decides.)
    let files = [];
    let mut c = check(&dd_claim(&[(16 * MIB, 0.1)]), &files, None);
    against_regions(&mut c, &[copy_region(1.0, 0.1, 16 * MIB)], None);
    let f = &c.figures[0];
    let t = f.traced.as_ref().expect("a traced figure");
    assert_eq!(t.covers, Covers::TimedRegion, "{f:?}");
    assert_eq!(t.bytes, 16 * MIB, "bytes copied, one direction");
    assert_eq!(f.verdict, Verdict::Agree, "{f:?}");
    // Against the usual story: the region is half as fast as dd says; the rule says so.
    let mut c = check(&dd_claim(&[(16 * MIB, 0.1)]), &files, None);
    against_regions(&mut c, &[copy_region(1.0, 0.2, 16 * MIB)], None);
    assert_eq!(c.figures[0].verdict, Verdict::ClaimHigher);
}

/// The path of `name` on PATH, or `None` with the reason printed.
fn installed(name: &str) -> Option<String> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([std::path::PathBuf::from("/work/tools/bin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipped: {name} is not installed");
    }
    found.map(|p| p.display().to_string())
}

#[test]
fn a_shell_running_dd_twice_gets_each_run_s_summary_checked_and_says_so() {
    let (Some(_), Some(sh)) = (installed("dd"), installed("sh")) else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let script = format!(
        "dd if=/dev/zero of={} bs=64k count=16 && dd if={} of={} bs=4k",
        a.display(),
        a.display(),
        b.display()
    );
    let Some(doc) = trace_doc(&[&sh, "-c", &script]) else {
        return;
    };
    let runs = &doc["tool_runs"];
    assert_eq!(runs["tool"], "dd", "{doc:#}");
    assert_eq!(runs["runs"], 2, "{runs:#}");
    assert_eq!(runs["outputs_read"], 2, "{runs:#}");
    let figures = doc["claim_check"]["figures"].as_array().expect("checked");
    assert_eq!(figures.len(), 2, "{doc:#}");
    for (i, f) in figures.iter().enumerate() {
        assert_eq!(f["figure"]["label"], format!("copy (run {})", i + 1));
        assert_eq!(f["figure"]["bytes"], 1 << 20);
        if doc["clock"]["regions_found"].as_u64().unwrap_or(0) > 0 {
            assert_eq!(f["traced"]["covers"], "timed_region", "{f:#}");
            // Bytes copied (dd's summary lines to its stderr fall inside its region too),
            // not read and written together.
            let bytes = f["traced"]["bytes"].as_u64().unwrap();
            assert!(
                (1 << 20..(1 << 20) + 4096).contains(&bytes),
                "one direction: {f:#}"
            );
        }
    }
    let text = report_text(&doc);
    assert!(
        text.contains(
            "dd ran 2 times (from sh's script): each run's output is read and checked on its own"
        ),
        "{text}"
    );
}

#[test]
fn iozone_s_throughput_mode_is_read_and_checked_when_iozone_is_installed() {
    let Some(iozone) = installed("iozone") else {
        return;
    };
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let (a, b) = (dir.path().join("t1"), dir.path().join("t2"));
    let Some(doc) = trace_doc(&[
        &iozone,
        "-i",
        "0",
        "-t",
        "2",
        "-s",
        "1m",
        "-r",
        "64k",
        "-F",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
    ]) else {
        return;
    };
    let figures = doc["claim_check"]["figures"]
        .as_array()
        .unwrap_or_else(|| panic!("no claim checked: {doc:#}"));
    let w = &figures[0];
    assert_eq!(
        w["figure"]["label"], "initial writers (2 processes)",
        "{doc:#}"
    );
    assert_eq!(w["figure"]["bytes"], 2 << 20);
    assert!(w["verdict"].is_string());
    let text = report_text(&doc);
    assert!(
        text.contains("initial writers (2 processes) (2 MiB, 64 KiB records)"),
        "{text}"
    );
    assert!(text.contains("said children see "), "{text}");
}

#[test]
fn bonnie_s_figures_it_did_not_print_say_why_and_per_char_calls_are_one_byte() {
    // -f: no per-char tests, empty CSV fields; a block test too quick to time: +++++.
    let csv = "1.98,2.00a,vm,1,1795499156,64M,,8192,5,,,+++++,+++,109975,23,,,+++++,+++,+++++,+++,,,,,,,,,,,,,,,,,,,4058us,9164us,,5464us,8684us,,,,,,";
    let c = ioscope::measure::external::bonnie(csv).unwrap();
    let putc = &c.figures[0];
    assert_eq!(putc.label, "sequential output per char");
    assert_eq!(putc.record_size, Some(1), "one byte per call");
    let checked = check(&c, &[], None);
    let text = ioscope::report::views::trace::claim_figure(&checked.figures[0]);
    assert!(
        text.contains("bonnie++ ran no per-char test (-f)"),
        "{text}"
    );
    let block = ioscope::report::views::trace::claim_figure(&checked.figures[1]);
    assert!(
        block.contains("printed no figure (+++++): the test ran too quickly for it to time"),
        "{block}"
    );
}
