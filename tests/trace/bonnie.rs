//! bonnie++'s figures checked per test (issue 24, hostile review item 6): each figure
//! against its own test's open-to-close stretch (the test told apart by what the stretch
//! did), per-char bytes from the traced calls, fsync and close placed by the clock reads
//! after the close, and a figure whose stretch is not found saying so. Unit tests on
//! made-up and recorded stretches (numbers that contradict the usual story); the real runs
//! skip with a reason where bonnie++ is not installed, the user is not root, or ptrace is
//! refused.

#[allow(unused_imports)]
use crate::common::*;
use ioscope::measure::external::bonnie;
use ioscope::trace::claims::{
    ClaimCheck, Covers, Placement, Reason, Verdict, against_stretches, check,
};
use ioscope::trace::phases::{Stretch, Test, Way};
use serde_json::Value;

/// Requests of one size: `calls` of `size` bytes each.
fn way(calls: u64, size: u64) -> Way {
    Way {
        calls,
        bytes: calls * size,
        one_byte: if size == 1 { calls } else { 0 },
        smallest: if calls > 0 { size } else { 0 },
        largest: if calls > 0 { size } else { 0 },
    }
}

/// A closed stretch of thread 7 on the data file, fsynced once, from `start` to `end`.
fn stretch(start: f64, end: f64, read: Way, write: Way, seeks: u64, clocks: u64) -> Stretch {
    Stretch {
        tid: 7,
        path: "/d/Bonnie.7".into(),
        start_seconds: start,
        end_seconds: end,
        read,
        write,
        seeks,
        syncs: 1,
        sync_seconds: 0.03,
        closed: true,
        close_seconds: 0.00002,
        clock_after_close: clocks,
    }
}

/// bonnie++'s CSV line with per-char write, block write, rewrite, per-char read and block
/// read figures (K/sec) over a 64 MiB file.
fn csv(putc: &str, block: &str, rewrite: &str, getc: &str, read: &str) -> String {
    format!(
        "1.98,2.00a,vm,1,1,64M,,8192,5,{putc},30,{block},25,{rewrite},23,{getc},26,{read},25,5765,260,,,,,,,,,,,,,,,,,,1047ms,8069us,7369us,1070ms,4174us,201ms,,,,,,"
    )
}

/// The claim of `stdout` checked against `stretches` (no per-file calls).
fn checked(stdout: &str, stretches: &[Stretch]) -> ClaimCheck {
    let claim = bonnie(stdout).unwrap();
    let mut c = check(&claim, &[], None);
    against_stretches(&mut c, stretches);
    c
}

/// The figure labelled `label`.
fn figure<'a>(c: &'a ClaimCheck, label: &str) -> &'a ioscope::trace::claims::FigureCheck {
    c.figures
        .iter()
        .find(|f| f.figure.label == label)
        .unwrap_or_else(|| panic!("no {label} in {c:?}"))
}

/// Every sentence the report prints for the check.
fn sentences(c: &ClaimCheck) -> String {
    let mut out: Vec<String> = c
        .figures
        .iter()
        .map(ioscope::report::views::trace::claim_figure)
        .collect();
    out.extend(
        c.figures
            .iter()
            .filter_map(ioscope::report::views::trace::stretch_sentence),
    );
    out.join("\n")
}

/// The five stretches of a recorded run (`bonnie++ -s 64 -r 32 -n 0 -z 1` under trace on
/// this 2-core VM; its CSV line is `RECORDED`): per-char write, block write, rewrite,
/// per-char read, block read.
fn recorded() -> Vec<Stretch> {
    vec![
        stretch(0.006775876, 91.35076218, way(0, 0), way(3_145_728, 1), 0, 1),
        stretch(91.362467809, 92.369792632, way(0, 0), way(8192, 8192), 0, 1),
        stretch(
            92.36991833,
            93.742498237,
            way(8192, 8192),
            way(8192, 8192),
            8193,
            1,
        ),
        stretch(
            93.742644535,
            178.378976891,
            way(3_145_728, 1),
            way(0, 0),
            0,
            1,
        ),
        stretch(
            178.379078473,
            178.887003998,
            way(8192, 8192),
            way(0, 0),
            1,
            2,
        ),
    ]
}

const RECORDED: &str = "1.98,2.00a,vm,1,1,64M,,8192,5,33,30,65066,25,47748,23,36,26,129048,25,5765,260,,,,,,,,,,,,,,,,,,1047ms,8069us,7369us,1070ms,4174us,201ms,,,,,,";

#[test]
fn each_figure_of_a_recorded_run_is_checked_against_its_own_test_s_stretch() {
    let c = checked(RECORDED, &recorded());
    for (label, test) in [
        ("sequential output per char", Test::PerCharWrite),
        ("sequential output block", Test::BlockWrite),
        ("rewrite", Test::Rewrite),
        ("sequential input per char", Test::PerCharRead),
        ("sequential input block", Test::BlockRead),
    ] {
        let f = figure(&c, label);
        let t = f.traced.as_ref().unwrap();
        assert_eq!(t.covers, Covers::OpenToClose, "{label}");
        assert_eq!(f.stretch.as_ref().unwrap().test, test);
        // The recorded figures are each within 10% of their stretch (0.98x to 1.0002x).
        assert_eq!(f.verdict, Verdict::Agree, "{label}: {f:?}");
        assert_eq!(f.fsync.unwrap().placement, Placement::Inside, "{label}");
        assert_eq!(f.close.unwrap().placement, Placement::Inside, "{label}");
    }
    // The rewrite counts the bytes read and written back once, over the stretch's time.
    let r = figure(&c, "rewrite").traced.clone().unwrap();
    assert_eq!((r.bytes, r.calls), (64 << 20, 16384));
    let text = sentences(&c);
    assert!(
        text.contains("rewrite: its test is the stretch of thread 7 from 92.370 s to 93.742 s (block reads each written back over itself), and the thread read its clock after the close: 64 MiB read and written back in 1.373 s = 46.6 MiB/s"),
        "{text}"
    );
}

#[test]
fn per_char_figures_count_the_bytes_their_stretch_moved_not_a_size_assumed_for_the_version() {
    // A per-char write stretch of 1,000,000 one-byte calls (not bonnie++ 2.x's 3 MiB) at
    // 50 KiB/s: the figure stands for the bytes traced, and its rate stays as printed.
    let s = vec![stretch(0.0, 19.53125, way(0, 0), way(1_000_000, 1), 0, 1)];
    let c = checked(&csv("50", "", "", "", ""), &s);
    let f = figure(&c, "sequential output per char");
    assert_eq!(f.figure.bytes, 1_000_000);
    assert_eq!(f.figure.bytes_per_second(), Some(50.0 * 1024.0));
    assert_eq!(f.traced.as_ref().unwrap().calls, 1_000_000);
    assert_eq!(f.verdict, Verdict::Agree, "{f:?}");
    // The write direction's bytes check follows: the per-char test's traced bytes.
    let w = c
        .bytes
        .iter()
        .find(|b| b.moves == ioscope::measure::external::Moves::Write);
    assert_eq!(w.map(|b| b.claimed), Some(1_000_000), "{:?}", c.bytes);
    let text = sentences(&c);
    assert!(text.contains("(976.6 KiB, 1 B records)"), "{text}");
}

#[test]
fn a_figure_clearly_above_its_stretch_is_higher_and_one_clearly_below_is_lower() {
    // The block write's stretch moved 64 MiB in 1 s (64 MiB/s): a claim of 128 MiB/s is
    // above it (some of the test fell outside what it timed), 32 MiB/s below.
    let s = vec![stretch(1.0, 2.0, way(0, 0), way(8192, 8192), 0, 1)];
    let high = checked(&csv("", "131072", "", "", ""), &s);
    let f = figure(&high, "sequential output block");
    assert_eq!(f.verdict, Verdict::ClaimHigher);
    assert_eq!(f.reason, Reason::PartlyUntimed);
    assert!((f.ratio.unwrap() - 2.0).abs() < 1e-9);
    let low = checked(&csv("", "32768", "", "", ""), &s);
    let f = figure(&low, "sequential output block");
    assert_eq!(f.verdict, Verdict::ClaimLower);
    assert!((f.ratio.unwrap() - 0.5).abs() < 1e-9);
    assert_eq!(
        f.traced.as_ref().unwrap().covers,
        Covers::OpenToClose,
        "checked against its stretch, not every write"
    );
}

#[test]
fn a_rewrite_whose_stretch_read_nothing_is_not_found_and_says_so() {
    // Two stretches of block writes (the second with a seek before each write, as the
    // rewrite does, but no reads): both are block writes; no stretch is a rewrite.
    let s = vec![
        stretch(0.0, 1.0, way(0, 0), way(8192, 8192), 0, 1),
        stretch(1.0, 2.0, way(0, 0), way(8192, 8192), 8193, 1),
    ];
    let c = checked(&csv("", "65536", "32768", "", ""), &s);
    let block = figure(&c, "sequential output block");
    assert_eq!(block.traced.as_ref().unwrap().covers, Covers::OpenToClose);
    let rewrite = figure(&c, "rewrite");
    let note = rewrite.stretch.as_ref().unwrap();
    assert_eq!((note.found, note.tid), (0, None));
    assert_ne!(
        rewrite.traced.as_ref().map(|t| t.covers),
        Some(Covers::OpenToClose)
    );
    let text = sentences(&c);
    assert!(
        text.contains("rewrite: its test's stretch was not found (no open-to-close stretch of a file did block reads each written back over itself): it is checked against every call of its direction instead"),
        "{text}"
    );
}

#[test]
fn fsync_and_close_are_not_placed_inside_without_a_clock_read_after_the_close() {
    // The vDSO kept: no clock read seen at all. fsync and close are inside the stretch,
    // so they fit; only the clock reads could place them in the figure.
    let s = vec![stretch(0.0, 1.0, way(0, 0), way(8192, 8192), 0, 0)];
    let c = checked(&csv("", "65536", "", "", ""), &s);
    let f = figure(&c, "sequential output block");
    assert_eq!(f.stretch.as_ref().unwrap().clock_after_close, None);
    assert_eq!(f.fsync.unwrap().placement, Placement::Fits);
    assert_eq!(f.close.unwrap().placement, Placement::Fits);
    // Clock reads seen, but none after this close: said as such, and still only fits.
    let s = vec![
        stretch(0.0, 1.0, way(0, 0), way(8192, 8192), 0, 0),
        stretch(1.0, 2.0, way(8192, 8192), way(0, 0), 1, 3),
    ];
    let c = checked(&csv("", "65536", "", "", "65536"), &s);
    let f = figure(&c, "sequential output block");
    assert_eq!(f.stretch.as_ref().unwrap().clock_after_close, Some(false));
    assert_eq!(f.fsync.unwrap().placement, Placement::Fits);
    let text = sentences(&c);
    assert!(
        text.contains("(block writes only), but the thread read no clock after the close"),
        "{text}"
    );
    let r = figure(&c, "sequential input block");
    assert_eq!(r.fsync.unwrap().placement, Placement::Inside);
}

#[test]
fn a_progress_line_on_the_terminal_is_not_taken_for_a_test() {
    // "Writing intelligently..." (24 bytes in one write to stderr) comes first and is a
    // block write too; the data file's 64 MiB stretch is the test.
    let mut progress = stretch(0.0, 0.1, way(0, 0), way(1, 24), 0, 0);
    progress.path = "/dev/pts/0".into();
    progress.closed = false;
    let s = vec![
        progress,
        stretch(0.2, 1.2, way(0, 0), way(8192, 8192), 0, 1),
    ];
    let c = checked(&csv("", "65536", "", "", ""), &s);
    let f = figure(&c, "sequential output block");
    assert_eq!(f.traced.as_ref().unwrap().bytes, 64 << 20);
    assert_eq!(f.stretch.as_ref().unwrap().found, 1);
    assert_eq!(ioscope::trace::claims::test_stretches(s).len(), 1);
}

#[test]
fn with_several_runs_each_run_s_figure_takes_its_own_stretch() {
    let one = csv("", "65536", "", "", "");
    let two = csv("", "32768", "", "", "");
    let s = vec![
        stretch(0.0, 1.0, way(0, 0), way(8192, 8192), 0, 1),
        stretch(5.0, 7.0, way(0, 0), way(8192, 8192), 0, 1),
    ];
    let c = checked(&format!("{one}\n{two}\n"), &s);
    let first = figure(&c, "sequential output block (run 1)");
    let second = figure(&c, "sequential output block (run 2)");
    assert_eq!(first.stretch.as_ref().unwrap().start_seconds, Some(0.0));
    assert_eq!(second.stretch.as_ref().unwrap().start_seconds, Some(5.0));
    assert_eq!(first.verdict, Verdict::Agree);
    assert_eq!(second.verdict, Verdict::Agree);
}

/// `ioscope trace --json [extra] -- bonnie++ ...` on a small file with -f (the per-char
/// tests take minutes under ptrace), or `None` with the reason printed.
fn traced_bonnie(extra: &[&str]) -> Option<Value> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("bonnie++"))
        .find(|p| p.is_file());
    let Some(bonnie) = found else {
        eprintln!("skipped: bonnie++ is not installed");
        return None;
    };
    if !is_root() {
        eprintln!("skipped: the bonnie++ run here is written for root (-u root)");
        return None;
    }
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let d = dir.path().display().to_string();
    let out = ioscope()
        .args(["trace", "--json"])
        .args(extra)
        .arg("--")
        .arg(&bonnie)
        .args([
            "-d", &d, "-s", "32m", "-r", "16", "-n", "0", "-f", "-z", "1", "-u", "root",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("ptrace refused") {
        eprintln!("skipped: ptrace is not allowed here: {err}");
        return None;
    }
    assert!(out.status.success(), "{err}");
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

#[test]
fn bonnie_s_block_figures_are_checked_against_their_own_stretches_with_fsync_and_close_inside() {
    let Some(doc) = traced_bonnie(&[]) else {
        return;
    };
    let figures = doc["claim_check"]["figures"].as_array().unwrap();
    let of = |label: &str| {
        figures
            .iter()
            .find(|f| f["figure"]["label"] == label)
            .unwrap_or_else(|| panic!("{label}: {doc:#}"))
    };
    for (label, calls) in [
        ("sequential output block", 4096),
        ("rewrite", 8192),
        ("sequential input block", 4096),
    ] {
        let f = of(label);
        if f["figure"]["seconds"].is_null() {
            // +++++: too quick to time; its stretch is still found.
            eprintln!("note: {label} printed no figure here");
        }
        assert_eq!(f["traced"]["covers"], "open_to_close", "{f:#}");
        assert_eq!(f["traced"]["bytes"], 32 << 20, "{f:#}");
        assert_eq!(f["traced"]["calls"], calls, "{f:#}");
        assert_eq!(f["stretch"]["clock_after_close"], true, "{f:#}");
        assert_eq!(f["fsync"]["calls"], 1, "{f:#}");
        assert_eq!(f["fsync"]["placement"], "inside", "{f:#}");
        assert_eq!(f["close"]["placement"], "inside", "{f:#}");
    }
    // -f: no per-char test ran; nothing is placed for it.
    let putc = of("sequential output per char");
    assert!(putc.get("stretch").is_none(), "{putc:#}");
    assert!(putc["fsync"].is_null(), "{putc:#}");
    // The seek test: one stretch per seek process.
    assert!(of("random seeks")["stretch"]["found"].as_u64().unwrap() >= 1);
    // The report keeps the tests' stretches only (not the libraries, pipes or terminal).
    let kept = doc["stretches"].as_array().unwrap();
    assert!(kept.len() >= 4, "{kept:#?}");
    assert!(
        kept.iter()
            .all(|s| s["path"].as_str().unwrap().contains("Bonnie.")),
        "{kept:#?}"
    );
    let text = report_text(&doc);
    assert!(
        text.contains("rewrite: its test is the stretch of thread "),
        "{text}"
    );
}

#[test]
fn with_the_vdso_kept_bonnie_s_fsync_and_close_only_fit_in_its_stretch() {
    let Some(doc) = traced_bonnie(&["--vdso", "keep"]) else {
        return;
    };
    let figures = doc["claim_check"]["figures"].as_array().unwrap();
    let block = figures
        .iter()
        .find(|f| f["figure"]["label"] == "sequential output block")
        .unwrap();
    assert_eq!(block["traced"]["covers"], "open_to_close", "{block:#}");
    assert!(block["stretch"]["clock_after_close"].is_null(), "{block:#}");
    assert_eq!(block["fsync"]["placement"], "fits", "{block:#}");
}

#[test]
fn with_several_runs_each_run_s_seek_figure_takes_the_first_of_its_own_seek_processes() {
    let one = csv("", "", "", "", "");
    let seeker = |start: f64, tid: i32| {
        let mut s = stretch(start, start + 1.0, way(100, 8192), way(10, 8192), 100, 1);
        s.tid = tid;
        s
    };
    // Two runs of three seek processes each.
    let s: Vec<Stretch> = [(0.0, 1), (0.0, 2), (0.0, 3), (9.0, 4), (9.0, 5), (9.0, 6)]
        .iter()
        .map(|&(t, tid)| seeker(t, tid))
        .collect();
    let c = checked(&format!("{one}\n{one}\n"), &s);
    let second = figure(&c, "random seeks (run 2)");
    let note = second.stretch.as_ref().unwrap();
    assert_eq!((note.tid, note.found), (Some(4), 6));
    assert_eq!(second.verdict, Verdict::NotBytes);
}
