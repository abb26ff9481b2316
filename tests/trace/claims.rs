//! `trace`'s check of what a tool printed: each figure against the bytes of its direction
//! over the time inside the calls that moved them (or the program's own timed region), with
//! fsync and close placed by the numbers. Made-up traces whose numbers contradict the usual
//! story (a claim higher than its calls allow, an fsync that does not fit, bytes the trace
//! never saw) must get the sentence they support; real fio, iozone and bonnie++ runs are
//! read and checked where those tools are installed, and skipped with a reason where not.

use crate::common::*;
use ioscope::measure::external::{ClaimedFigure, Moves, ToolClaim};
use ioscope::report::views::trace::{claim_figure, placement_sentence};
use ioscope::trace::claims::{
    Covers, Placement, Reason, RegionSeen, Verdict, check, check_against_region,
};
use ioscope::trace::tally::{CallStats, FileStats, Histogram, Timeline};
use std::collections::BTreeMap;

/// A file with the given calls: (name, calls, bytes, seconds inside).
fn file(path: &str, calls: &[(&str, u64, u64, f64)]) -> FileStats {
    let mut map = BTreeMap::new();
    let (mut read, mut written) = (0, 0);
    for &(name, n, bytes, seconds) in calls {
        if ["read", "pread64"].contains(&name) {
            read += bytes;
        }
        if ["write", "pwrite64"].contains(&name) {
            written += bytes;
        }
        map.insert(
            name.to_string(),
            CallStats {
                calls: n,
                errors: 0,
                bytes_requested: bytes,
                bytes_returned: bytes,
                empty: 0,
                nanos: (seconds * 1e9) as u64,
                ..CallStats::default()
            },
        );
    }
    FileStats {
        path: path.to_string(),
        path_not_utf8: false,
        calls: map,
        bytes_read: read,
        bytes_written: written,
        syncs: 0,
        sync_nanos: 0,
        seeks: 0,
        offsets: Histogram {
            width: 4096,
            counts: vec![0; Histogram::BUCKETS],
        },
        timeline: Timeline::default(),
        sizes: Default::default(),
        order: Default::default(),
        opened_with: Default::default(),
        kind: None,
    }
}

/// A figure of `bytes` moved `moves` in `seconds`.
fn figure(label: &str, moves: Moves, bytes: u64, seconds: f64) -> ClaimedFigure {
    ClaimedFigure {
        label: label.to_string(),
        moves,
        bytes,
        record_size: Some(65536),
        seconds: Some(seconds),
        said: format!("{:.0} kB/s", bytes as f64 / seconds / 1024.0),
    }
}

fn claim(figures: Vec<ClaimedFigure>) -> ToolClaim {
    ToolClaim {
        tool: "tool".into(),
        bytes_read: 0,
        bytes_written: 0,
        seconds: 0.0,
        records_in: None,
        records_out: None,
        figures,
    }
}

const MIB: u64 = 1 << 20;

#[test]
fn a_write_figure_shorter_than_its_writes_and_fsync_together_left_the_fsync_out() {
    // iozone's default: 64 MiB written in 19 ms by its clock; its writes took 18 ms inside
    // and its fsync 300 ms after. 19 ms cannot hold 318 ms: the fsync was outside.
    let files = [file(
        "/d/F",
        &[("write", 1024, 64 * MIB, 0.018), ("fsync", 1, 0, 0.300)],
    )];
    let c = check(
        &claim(vec![figure("write", Moves::Write, 64 * MIB, 0.019)]),
        &files,
        None,
    );
    let f = &c.figures[0];
    let fsync = f.fsync.unwrap();
    assert_eq!(fsync.placement, Placement::Outside);
    assert_eq!(
        f.verdict,
        Verdict::Agree,
        "the figure itself agrees with its calls"
    );
    let s = placement_sentence("fsync", &fsync);
    assert!(s.contains("outside what it timed"), "{s}");
    assert!(s.contains("leaves them out"), "{s}");
}

#[test]
fn a_write_figure_with_room_for_its_fsync_is_lower_and_the_fsync_accounts_for_it() {
    // iozone -e: 64 MiB in 330 ms by its clock; 18 ms inside writes, 300 ms in fsync. The
    // claim is far below the writes' rate, and the fsync, which fits, is the difference.
    let files = [file(
        "/d/F",
        &[("write", 1024, 64 * MIB, 0.018), ("fsync", 1, 0, 0.300)],
    )];
    let c = check(
        &claim(vec![figure("write", Moves::Write, 64 * MIB, 0.330)]),
        &files,
        Some(100.0),
    );
    let f = &c.figures[0];
    assert_eq!(f.fsync.unwrap().placement, Placement::Fits);
    assert_eq!((f.verdict, f.reason), (Verdict::ClaimLower, Reason::Fsync));
    let s = claim_figure(f);
    assert!(s.contains("claim lower"), "{s}");
    assert!(s.contains("room for the fsync"), "{s}");
    let p = placement_sentence("fsync", &f.fsync.unwrap());
    assert!(p.contains("may have been timed"), "{p}");
}

#[test]
fn a_claim_above_the_time_inside_its_own_calls_says_some_calls_were_not_timed() {
    // The usual story is that the tool is slower than its calls; here it reports 64 MiB in
    // 10 ms while its writes alone took 40 ms inside.
    let files = [file("/d/F", &[("write", 1024, 64 * MIB, 0.040)])];
    let c = check(
        &claim(vec![figure("write", Moves::Write, 64 * MIB, 0.010)]),
        &files,
        None,
    );
    let f = &c.figures[0];
    assert_eq!(
        (f.verdict, f.reason),
        (Verdict::ClaimHigher, Reason::PartlyUntimed)
    );
    assert!((f.ratio.unwrap() - 4.0).abs() < 1e-6);
    let s = claim_figure(f);
    assert!(s.contains("claim higher (4.00x"), "{s}");
    assert!(s.contains("fell outside what it timed"), "{s}");
    assert!(f.fsync.is_none(), "no fsync made: none to place");
}

#[test]
fn bytes_the_trace_never_saw_are_named_as_unseen_not_as_speed() {
    // fio with libaio: it claims 128 MiB read, the trace saw 1 MiB of read() (its start).
    let files = [file("/d/data", &[("read", 16, MIB, 0.001)])];
    let c = check(
        &claim(vec![figure("READ, group 0", Moves::Read, 128 * MIB, 0.1)]),
        &files,
        None,
    );
    // Under 1% of its bytes: not the figure's I/O at all, so not set against it.
    assert_eq!(c.bytes[0].verdict, Verdict::NotTraced);
    let f = &c.figures[0];
    assert_eq!(f.reason, Reason::Unseen);
    assert!(claim_figure(f).contains("where ptrace does not see"));
}

#[test]
fn a_claim_lower_than_its_calls_is_put_on_tracing_only_when_tracing_accounts_for_it() {
    let files = [file("/d/F", &[("write", 1000, 64 * MIB, 0.020)])];
    // 30 ms against 20 ms inside: 10 ms more, and 1000 calls at 15 µs are 15 ms.
    let c = check(
        &claim(vec![figure("write", Moves::Write, 64 * MIB, 0.030)]),
        &files,
        Some(15_000.0),
    );
    assert_eq!(c.figures[0].reason, Reason::TracingStops);
    assert!(claim_figure(&c.figures[0]).contains("tracing's own stops"));
    // 300 ms against 20 ms: tracing's 15 ms cannot account for 280 ms.
    let c = check(
        &claim(vec![figure("write", Moves::Write, 64 * MIB, 0.300)]),
        &files,
        Some(15_000.0),
    );
    assert_eq!(c.figures[0].reason, Reason::OwnWork);
    assert!(claim_figure(&c.figures[0]).contains("its own work between the calls"));
}

#[test]
fn figures_sharing_one_traced_figure_say_so_and_a_claim_within_ten_percent_agrees() {
    // write and rewrite: one traced figure for both (every write on the file).
    let files = [file("/d/F", &[("write", 2048, 128 * MIB, 0.040)])];
    let c = check(
        &claim(vec![
            figure("write", Moves::Write, 64 * MIB, 0.021),
            figure("rewrite", Moves::Write, 64 * MIB, 0.010),
        ]),
        &files,
        None,
    );
    assert_eq!(c.figures[0].verdict, Verdict::Agree);
    assert!(claim_figure(&c.figures[0]).contains("agrees"));
    let rewrite = &c.figures[1];
    assert_eq!(
        (rewrite.verdict, rewrite.reason),
        (Verdict::ClaimHigher, Reason::Mixed)
    );
    assert_eq!(rewrite.shared_with, ["write"]);
    assert!(claim_figure(rewrite).contains("its other figures' too (write)"));
}

#[test]
fn the_output_pipe_is_not_a_data_file_and_a_copy_is_set_against_both_directions() {
    // dd: 64 MiB read from one file and written to another in 50 ms; it also wrote its
    // summary to a pipe (under 1% of the bytes: not a data file).
    let files = [
        file("/d/in", &[("read", 64, 64 * MIB, 0.010)]),
        file("/d/out", &[("write", 64, 64 * MIB, 0.030)]),
        file("pipe:[1]", &[("write", 3, 200, 0.001)]),
    ];
    let c = check(
        &claim(vec![figure("copy", Moves::Both, 64 * MIB, 0.040)]),
        &files,
        None,
    );
    let f = &c.figures[0];
    let t = f.traced.as_ref().unwrap();
    assert_eq!((t.moves, t.bytes), (Moves::Both, 64 * MIB));
    assert!((t.seconds - 0.040).abs() < 1e-9, "{}", t.seconds);
    assert!(!t.files.iter().any(|p| p.starts_with("pipe:")));
    assert_eq!(f.verdict, Verdict::Agree);
}

#[test]
fn a_figure_checked_against_its_timed_region_knows_where_fsync_fell() {
    let w = figure("write", Moves::Write, 64 * MIB, 0.020);
    let region = RegionSeen {
        bytes: 64 * MIB,
        calls: 1024,
        seconds: 0.020,
        files: vec!["/d/F".into()],
        fsync: Some((1, 0.3, false)),
        close: Some((1, 0.0001, false)),
    };
    let c = check_against_region(&w, &region);
    assert_eq!(c.verdict, Verdict::Agree);
    assert_eq!(c.traced.as_ref().unwrap().covers, Covers::TimedRegion);
    assert_eq!(c.fsync.unwrap().placement, Placement::Outside);
    assert!(claim_figure(&c).contains("over its own timed region"));
    let inside = RegionSeen {
        fsync: Some((1, 0.3, true)),
        seconds: 0.32,
        ..region
    };
    let c = check_against_region(&figure("write", Moves::Write, 64 * MIB, 0.32), &inside);
    let s = placement_sentence("fsync", &c.fsync.unwrap());
    assert!(s.contains("inside its timed region"), "{s}");
}

#[test]
fn a_figure_the_tool_did_not_print_is_not_compared() {
    let mut f = figure("sequential input block", Moves::Read, 256 * MIB, 1.0);
    f.seconds = None;
    f.said = "+++++".into();
    let files = [file("/d/B", &[("read", 10, 256 * MIB, 0.5)])];
    let c = check(&claim(vec![f]), &files, None);
    assert_eq!(c.figures[0].verdict, Verdict::NoFigure);
    assert!(claim_figure(&c.figures[0]).contains("printed no figure (+++++)"));
}

/// The program's path when it is installed (on PATH or in /work/tools/bin), else `None`
/// with the reason printed.
fn tool(name: &str) -> Option<String> {
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
fn fio_normal_output_is_read_and_checked_against_its_write_calls() {
    let Some(fio) = tool("fio") else { return };
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let name = format!("--filename={}", dir.path().join("f").display());
    let Some(doc) = trace_doc(&[
        &fio,
        "--name=x",
        "--rw=write",
        "--size=4m",
        "--bs=64k",
        "--ioengine=psync",
        &name,
    ]) else {
        return;
    };
    let f = &doc["claim_check"]["figures"][0];
    assert_eq!(f["figure"]["label"], "WRITE, group 0", "{doc:#}");
    assert_eq!(f["figure"]["bytes"], 4 << 20);
    assert_eq!(f["traced"]["covers"], "inside_calls");
    assert_eq!(f["traced"]["calls"], 64);
    assert!(f["figure"]["said"].as_str().unwrap().starts_with("bw="));
    assert!(f["verdict"].is_string() && f["ratio"].as_f64().unwrap() > 0.0);
    let text = report_text(&doc);
    assert!(
        text.contains("WRITE, group 0 (4 MiB, 64 KiB records)"),
        "{text}"
    );
}

#[test]
fn iozone_table_is_read_and_its_fsync_placed_when_iozone_is_installed() {
    let Some(iozone) = tool("iozone") else { return };
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let f = dir.path().join("F").display().to_string();
    let Some(doc) = trace_doc(&[
        &iozone, "-i", "0", "-i", "1", "-s", "1m", "-r", "64k", "-f", &f,
    ]) else {
        return;
    };
    let labels: Vec<&str> = doc["claim_check"]["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["figure"]["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["write", "rewrite", "read", "reread"], "{doc:#}");
    let write = &doc["claim_check"]["figures"][0];
    if write["traced"]["covers"] == "timed_region" {
        // Its clock reads were seen: the write test's own region, the fsync after it.
        assert_eq!(write["traced"]["bytes"], 1 << 20, "{doc:#}");
        assert_eq!(write["fsync"]["placement"], "outside", "{doc:#}");
    } else {
        assert_eq!(write["shared_with"][0], "rewrite");
    }
    // iozone fsyncs its file after each write test; where it placed them depends on time.
    assert!(write["fsync"]["calls"].as_u64().unwrap() >= 1);
    let bytes = &doc["claim_check"]["bytes"];
    assert!(
        bytes
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["claimed"] == 2 << 20)
    );
}

#[test]
fn bonnie_csv_line_is_read_when_bonnie_is_installed() {
    let Some(bonnie) = tool("bonnie++") else {
        return;
    };
    if !is_root() {
        // As root bonnie++ needs -u; as another user it refuses without it too when the
        // scratch directory is not writable; keep to the simple case.
        eprintln!("skipped: the bonnie++ run here is written for root (-u root)");
        return;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let d = dir.path().display().to_string();
    // -f skips the per-char tests (3 MiB a byte at a time: minutes under ptrace).
    let Some(doc) = trace_doc(&[
        &bonnie, "-d", &d, "-s", "32m", "-r", "16", "-n", "0", "-u", "root", "-f",
    ]) else {
        return;
    };
    let figures = doc["claim_check"]["figures"].as_array().unwrap();
    let block = figures
        .iter()
        .find(|f| f["figure"]["label"] == "sequential output block")
        .unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(block["figure"]["bytes"], 32 << 20);
    assert_eq!(block["traced"]["moves"], "write");
    let rewrite = figures
        .iter()
        .find(|f| f["figure"]["label"] == "rewrite")
        .unwrap();
    assert_eq!(rewrite["figure"]["moves"], "both");
}

/// A region of `written` bytes in `seconds` from `start`, with `inside` and `after` calls.
fn region(
    start: f64,
    seconds: f64,
    written: u64,
    inside: &[(&str, u64)],
    after: &[(&str, u64)],
) -> ioscope::trace::clock::Region {
    let mut calls: BTreeMap<String, ioscope::trace::clock::Moved> = BTreeMap::new();
    calls.insert(
        "write".into(),
        ioscope::trace::clock::Moved {
            calls: written / (64 << 10),
            bytes: written,
        },
    );
    for &(name, n) in inside {
        calls.insert(
            name.into(),
            ioscope::trace::clock::Moved { calls: n, bytes: 0 },
        );
    }
    ioscope::trace::clock::Region {
        tid: 1,
        clock: "gettimeofday".into(),
        pid: None,
        io_of: Vec::new(),
        io_tasks: 0,
        start_seconds: start,
        end_seconds: start + seconds,
        inside: calls,
        bytes_read: 0,
        bytes_written: written,
        closing_inside: inside.iter().map(|&(n, c)| (n.to_string(), c)).collect(),
        after: after.iter().map(|&(n, c)| (n.to_string(), c)).collect(),
        after_end_seconds: None,
        bytes_per_second_over_region: written as f64 / seconds,
        bytes_per_second_with_after: None,
        files: vec![ioscope::trace::clock::RegionFile {
            path: "/d/F".into(),
            first_access: 0,
            last_access: 0,
        }],
    }
}

#[test]
fn each_figure_is_checked_against_the_region_that_moved_its_bytes_in_the_order_they_ran() {
    // iozone -i 0: write then rewrite, 16 MiB each; a small set-up region first (4 KiB)
    // that must not be taken for the write test; the write's fsync after its region, the
    // rewrite's (with -e) inside.
    let files = [file(
        "/d/F",
        &[("write", 513, 32 * MIB + 4096, 0.012), ("fsync", 2, 0, 0.2)],
    )];
    let mut c = check(
        &claim(vec![
            figure("write", Moves::Write, 16 * MIB, 0.008),
            figure("rewrite", Moves::Write, 16 * MIB, 0.005),
        ]),
        &files,
        None,
    );
    let regions = [
        region(0.001, 0.001, 4096, &[], &[("fsync", 1)]),
        region(0.100, 0.008, 16 * MIB, &[], &[("fsync", 1), ("close", 1)]),
        region(0.300, 0.010, 16 * MIB, &[("fsync", 1)], &[("close", 1)]),
    ];
    ioscope::trace::claims::against_regions(&mut c, &regions, None);
    let (write, rewrite) = (&c.figures[0], &c.figures[1]);
    for f in [write, rewrite] {
        let t = f.traced.as_ref().expect("a traced figure");
        assert_eq!(t.covers, Covers::TimedRegion, "{f:?}");
        assert_eq!(t.bytes, 16 * MIB);
    }
    assert!((write.traced.as_ref().unwrap().seconds - 0.008).abs() < 1e-9);
    assert_eq!(write.verdict, Verdict::Agree);
    assert_eq!(write.fsync.as_ref().unwrap().placement, Placement::Outside);
    assert_eq!(write.close.as_ref().unwrap().placement, Placement::Outside);
    // The rewrite's claim (5 ms) against its region (10 ms): the claim is higher.
    assert_eq!(rewrite.verdict, Verdict::ClaimHigher);
    assert_eq!(rewrite.fsync.as_ref().unwrap().placement, Placement::Inside);
    let said = placement_sentence("fsync", write.fsync.as_ref().unwrap());
    assert!(
        said.contains("after its timed region: its figure leaves them out"),
        "{said}"
    );
    // A figure no region matches keeps its check against the time inside the calls.
    let mut c = check(
        &claim(vec![figure("write", Moves::Write, 64 * MIB, 0.03)]),
        &files,
        None,
    );
    ioscope::trace::claims::against_regions(&mut c, &regions, None);
    assert_ne!(
        c.figures[0].traced.as_ref().unwrap().covers,
        Covers::TimedRegion
    );
}

#[test]
fn a_claim_that_agrees_under_a_trace_that_took_half_its_time_says_first_it_is_not_its_own_speed() {
    // 1000 writes, 30 ms inside; the tool says 31 ms: it agrees with the traced figure.
    let files = [file("/d/F", &[("write", 1000, 64 * MIB, 0.030)])];
    let claimed = claim(vec![figure("write", Moves::Write, 64 * MIB, 0.031)]);
    // At 15 µs a call, tracing took 15 of its 31 ms: the line says so before "agrees".
    let c = check(&claimed, &files, Some(15_000.0));
    assert_eq!(c.figures[0].verdict, Verdict::Agree);
    let s = claim_figure(&c.figures[0]);
    let (before, _) = s.split_once("agrees").expect("agrees");
    assert!(before.contains("not its own speed"), "{s}");
    assert!(
        before.contains("48%") && before.contains("1.9x faster"),
        "{s}"
    );
    // At 1 µs a call, tracing took 1 ms of 31 (3%): nothing is said of it.
    let c = check(&claimed, &files, Some(1_000.0));
    let s = claim_figure(&c.figures[0]);
    assert!(!s.contains("not its own speed"), "{s}");
    // No measure of tracing's cost: nothing claimed either way.
    let c = check(&claimed, &files, None);
    assert!(!claim_figure(&c.figures[0]).contains("not its own speed"));
}
