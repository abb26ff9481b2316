//! A sentence is a claim: every explanation is chosen by the numbers beside it. Saved
//! results (a real `cache` run and a real quick study, kept in tests/fixtures) are edited to
//! numbers that contradict the usual story — cold again far faster than cold, a rewrite
//! slower than the write, random reads faster than sequential ones, repeats that scatter
//! more than they differ, fsync on a file system with no device — and re-rendered with
//! `ioscope report`: the sentences must follow the numbers.

use crate::common::{
    fixture_doc, fixture_json, ioscope, iozone_result, report_markdown, report_text, set_rate,
    set_summary,
};
use serde_json::Value;

const MIB: f64 = 1048576.0;

fn set_cache_rates(rows: &mut Value, cold: f64, warm: f64, again: f64) {
    let row = rows.as_array_mut().unwrap().last_mut().unwrap();
    set_rate(&mut row["cold"], cold);
    set_rate(&mut row["warm"], warm);
    set_rate(&mut row["cold_again"], again);
}

#[test]
fn a_second_cold_read_one_and_a_half_times_the_first_is_not_called_a_repeat() {
    let mut doc = fixture_json("cache.json");
    set_cache_rates(&mut doc["rows"], 1820.0, 6000.0, 2770.0);
    let text = report_text(&doc);
    assert!(!text.contains("repeats the first"), "{text}");
    assert!(
        text.contains("The second cold read is 1.5x the first (2770 MiB/s against 1820 MiB/s)"),
        "{text}"
    );
    assert!(text.contains("the cold figures disagree"), "{text}");
}

#[test]
fn a_second_cold_read_within_ten_percent_is_a_repeat_and_the_cache_is_the_difference() {
    let mut doc = fixture_json("cache.json");
    set_cache_rates(&mut doc["rows"], 1000.0, 6000.0, 1050.0);
    let text = report_text(&doc);
    assert!(
        text.contains("the warm read is 6.0x the cold one"),
        "{text}"
    );
    assert!(
        text.contains("repeats the first (1000 MiB/s) within 10%, so the difference is the cache"),
        "{text}"
    );
}

#[test]
fn a_warm_read_slower_than_the_cold_one_is_not_credited_to_the_cache() {
    let mut doc = fixture_json("cache.json");
    set_cache_rates(&mut doc["rows"], 3000.0, 1500.0, 2950.0);
    let text = report_text(&doc);
    assert!(
        text.contains("the warm read is slower than the cold one (0.50x"),
        "{text}"
    );
    assert!(!text.contains("the difference is the cache"), "{text}");
}

#[test]
fn device_counters_that_contradict_the_states_are_said_to() {
    let mut doc = fixture_json("cache.json");
    let row = doc["rows"].as_array_mut().unwrap().last_mut().unwrap();
    row["cold"]["device"]["read_bytes"] = 0.into();
    let text = report_text(&doc);
    assert!(!text.contains("The kernel agrees"), "{text}");
    assert!(text.contains("do not bear the states out"), "{text}");
}

#[test]
fn warm_and_cold_alike_with_no_device_says_there_is_no_device() {
    let mut doc = fixture_json("cache.json");
    set_cache_rates(&mut doc["rows"], 5000.0, 5200.0, 5100.0);
    doc["device"] = Value::Null;
    for row in doc["rows"].as_array_mut().unwrap() {
        for state in ["cold", "warm", "cold_again"] {
            row[state]["device"] = Value::Null;
        }
    }
    let text = report_text(&doc);
    assert!(
        text.contains("there is no block device under this file system"),
        "{text}"
    );
    assert!(!text.contains("x the cold one"), "{text}");
}

#[test]
fn a_rewrite_slower_than_the_write_is_not_explained_by_allocated_blocks() {
    // The study with the rewrite at 0.65x the write (tests/common/fixtures.rs).
    let doc = fixture_doc("study-rewrite-slower");
    let md = report_markdown(&doc);
    assert!(
        md.contains("Rewriting an existing file is slower than the first write (0.65x"),
        "{md}"
    );
    assert!(!md.contains("so only data moves"), "{md}");
}

#[test]
fn repeats_that_scatter_more_than_they_differ_claim_no_direction() {
    // Write 1000 MiB/s (500..2500) and rewrite 1500 (900..2000), 5 runs each
    // (tests/common/fixtures.rs).
    let doc = fixture_doc("study-spread-wider");
    let md = report_markdown(&doc);
    assert!(
        md.contains("Rewrite and write differ (1.50x: 1500 MiB/s against 1000 MiB/s) by less than their runs scatter"),
        "{md}"
    );
    assert!(!md.contains("so only data moves"), "{md}");
}

#[test]
fn random_reads_faster_than_sequential_ones_are_not_blamed_on_read_ahead() {
    let mut doc = fixture_json("study-sentences.json");
    let read = iozone_result(&mut doc, "read")["bytes_per_second"]["median"]
        .as_f64()
        .unwrap();
    let fast = 2.0 * read;
    set_summary(
        &mut iozone_result(&mut doc, "random_read")["bytes_per_second"],
        fast,
        fast,
        fast,
        1,
    );
    let md = report_markdown(&doc);
    assert!(
        md.contains("Random reads are faster than sequential ones (2.00x"),
        "{md}"
    );
    assert!(!md.contains("read-ahead cannot predict"), "{md}");
}

#[test]
fn the_fsync_on_a_file_system_without_a_device_is_not_the_devices_rate() {
    let mut doc = fixture_json("study-sentences.json");
    doc["write_sweep"]["device"] = Value::Null;
    let md = report_markdown(&doc);
    assert!(
        !md.contains("the device's own rate shows in the fsync"),
        "{md}"
    );
    assert!(
        md.contains(
            "no block device is under this file system, so the fsync has nothing to write back"
        ),
        "{md}"
    );
}

#[test]
fn a_small_fsync_share_is_not_called_the_devices_rate() {
    let mut doc = fixture_json("study-sentences.json");
    for p in doc["write_sweep"]["points"].as_array_mut().unwrap() {
        for run in p["runs"].as_array_mut().unwrap() {
            let total = run["elapsed"]["seconds"].as_f64().unwrap();
            run["fsync_seconds"] = (0.02 * total).into();
        }
    }
    let md = report_markdown(&doc);
    assert!(
        !md.contains("the device's own rate shows in the fsync"),
        "{md}"
    );
    assert!(md.contains("takes 2.0% of each run's time"), "{md}");
    assert!(md.contains("little was left to write back"), "{md}");
}

#[test]
fn warm_reads_no_faster_than_cold_ones_are_not_called_a_cache_gain() {
    let mut doc = fixture_json("study-sentences.json");
    // Every warm point at 0.8x the best cold point, each a single run.
    let points = doc["read_sweep"]["points"].as_array_mut().unwrap();
    let best_cold = points
        .iter()
        .filter(|p| p["cache"] == "cold")
        .map(|p| p["rate"]["median"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for p in points.iter_mut().filter(|p| p["cache"] == "warm") {
        let slow = 0.8 * best_cold;
        set_summary(&mut p["rate"], slow, slow, slow, 1);
    }
    let md = report_markdown(&doc);
    assert!(!md.contains("the warm cache is"), "{md}");
    assert!(
        md.contains("At their best cold reads are faster than warm ones (warm 0.80x cold"),
        "{md}"
    );
}

#[test]
fn a_cost_model_far_from_a_point_is_not_told_as_the_whole_story() {
    let mut doc = fixture_json("sweep.json");
    let text = report_text(&doc);
    assert!(
        text.contains("whatever its size"),
        "the fixture fits: {text}"
    );
    // The middle point three times slower in every run: no fixed-cost-plus-bandwidth line
    // passes near all three points.
    for run in doc["points"][1]["runs"].as_array_mut().unwrap() {
        let t = run["elapsed"]["seconds"].as_f64().unwrap();
        run["elapsed"]["seconds"] = (3.0 * t).into();
    }
    let text = report_text(&doc);
    assert!(!text.contains("whatever its size"), "{text}");
    assert!(text.contains("fits these times only roughly"), "{text}");
}

#[test]
fn a_curve_flat_below_the_page_is_not_blamed_on_the_cost_of_a_call() {
    let mut doc = fixture_json("study-sentences.json");
    let points = doc["read_sweep"]["points"].as_array_mut().unwrap();
    let flat = 5000.0 * MIB;
    for p in points.iter_mut().filter(|p| p["cache"] == "warm") {
        set_summary(&mut p["rate"], flat, flat, flat, 1);
    }
    let md = report_markdown(&doc);
    assert!(!md.contains("that is the steep rise on the left"), "{md}");
    assert!(md.contains("the rate rises only 1.0x"), "{md}");
}

#[test]
fn repeats_that_scatter_are_named_in_a_typed_warning() {
    use ioscope::measure::stats::summarize;
    use ioscope::warning::{Warning, scattered};
    let steady = summarize(&[100.0, 101.0, 102.0]).unwrap();
    let wide = summarize(&[100.0, 150.0, 300.0]).unwrap();
    let wider = summarize(&[100.0, 200.0, 400.0]).unwrap();
    assert_eq!(scattered([("a".to_string(), &steady)]), None);
    match scattered([
        ("steady".to_string(), &steady),
        ("wide".to_string(), &wide),
        ("wider".to_string(), &wider),
    ]) {
        Some(Warning::Scattered {
            at, runs, others, ..
        }) => assert_eq!((at.as_str(), runs, others), ("wider", 3, 1)),
        other => panic!("{other:?}"),
    }
    // As a saved result carries it, in the words of the text output.
    let mut doc = fixture_json("sweep.json");
    doc["warnings"] = serde_json::json!([{
        "kind": "scattered", "at": "warm at 4k", "min": 100.0 * MIB, "median": 150.0 * MIB,
        "max": 300.0 * MIB, "runs": 3, "others": 2
    }]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sweep.json");
    std::fs::write(&path, doc.to_string()).unwrap();
    let out = ioscope().arg("report").arg(&path).output().unwrap();
    assert!(out.status.success());
    // Warnings go to stderr, as every command's do.
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains(
            "(warm at 4k) its 3 runs scatter from 100.0 to 300.0 MiB/s (median 150.0), 3x apart"
        ),
        "{text}"
    );
    assert!(
        text.contains("2 other measurements scatter as well"),
        "{text}"
    );
}

#[test]
fn small_files_whose_pairs_are_twelve_times_apart_are_not_said_to_barely_differ() {
    let mut doc = fixture_json("transfer.json");
    let small = doc["workloads"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|w| w["files"].as_u64() > Some(1))
        .expect("the fixture has small files");
    let cells = small["cells"].as_array_mut().unwrap();
    let last = cells.len() - 1;
    for (i, c) in cells.iter_mut().enumerate() {
        let factor = if i == last { 11.78 } else { 1.0 };
        let per_file = 0.0001 * factor;
        c["seconds_per_file"] = per_file.into();
        c["bytes_per_second"] = (4096.0 / per_file).into();
    }
    let text = report_text(&doc);
    assert!(!text.contains("barely differ"), "{text}");
    assert!(
        text.contains("11.78x): the methods differ even for files this small"),
        "{text}"
    );
    // And alike pairs are said to be alike.
    for c in doc["workloads"][0]["cells"].as_array_mut().unwrap() {
        c["seconds_per_file"] = 0.0001.into();
        c["bytes_per_second"] = 40960000.0.into();
    }
    let text = report_text(&doc);
    assert!(text.contains("so the methods barely differ"), "{text}");
}

/// Sets every row of one syscalls operation to `ns` nanoseconds per call.
fn set_ns(doc: &mut Value, op: &str, ns: f64) {
    for row in doc["rows"].as_array_mut().unwrap() {
        if row["op"] == op {
            let calls = row["calls"].as_f64().unwrap();
            row["ns_per_call"] = ns.into();
            row["seconds"] = (ns * calls * 1e-9).into();
        }
    }
}

#[test]
fn an_lseek_dearer_than_a_read_is_not_told_as_the_cost_of_the_page_cache() {
    let mut doc = fixture_json("syscalls.json");
    set_ns(&mut doc, "read 1 B", 200.0);
    set_ns(&mut doc, "lseek", 600.0);
    set_ns(&mut doc, "getpid", 100.0);
    let text = report_text(&doc);
    assert!(
        !text.contains("page-cache lookup and the one-byte copy to user memory"),
        "{text}"
    );
    assert!(
        text.contains("lseek(SEEK_CUR) (600 ns) cost more than a 1-byte read() (200 ns)"),
        "{text}"
    );
    // The usual order is told as usual, with the difference computed.
    set_ns(&mut doc, "lseek", 150.0);
    let text = report_text(&doc);
    assert!(
        text.contains("the 50 ns between them is the page-cache lookup"),
        "{text}"
    );
    assert!(text.contains("getpid (100 ns) is the bare price"), "{text}");
    // A getpid dearer than lseek is not called the bare price of a call.
    set_ns(&mut doc, "getpid", 400.0);
    let text = report_text(&doc);
    assert!(!text.contains("bare price of a system call."), "{text}");
}

/// Sets every run of one compare row to the given rates (MiB/s), in order.
fn set_runs(doc: &mut Value, contender: &str, cache: &str, mib: &[f64]) {
    let row = doc["rows"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["contender"] == contender && r["cache"] == cache)
        .unwrap_or_else(|| panic!("the fixture has {contender} {cache}"));
    let runs = row["runs"].as_array_mut().unwrap();
    for (run, &m) in runs.iter_mut().zip(mib) {
        run["bytes_per_second"] = (m * MIB).into();
    }
    let mut sorted = mib.to_vec();
    sorted.sort_by(f64::total_cmp);
    row["median_bytes_per_second"] = (sorted[sorted.len() / 2] * MIB).into();
}

#[test]
fn contenders_whose_runs_overlap_the_fastest_are_not_ranked_below_it() {
    let mut doc = fixture_json("compare.json");
    set_runs(
        &mut doc,
        "ioscope run -r 1m",
        "warm",
        &[1000.0, 5000.0, 9000.0],
    );
    set_runs(&mut doc, "cat", "warm", &[1000.0, 3000.0, 6000.0]);
    set_runs(&mut doc, "dd bs=1m", "warm", &[400.0, 410.0, 420.0]);
    set_runs(&mut doc, "ioscope fast", "warm", &[4700.0, 4800.0, 4900.0]);
    let text = report_text(&doc);
    // ioscope run's runs (1000–9000) overlap cat's: it is first by the median, not the
    // fastest.
    let warm = text
        .lines()
        .find(|l| l.starts_with("warm: first by the median"))
        .expect("a ranking line for warm");
    assert!(
        warm.contains("first by the median ioscope run -r 1m"),
        "{warm}"
    );
    assert!(warm.contains("the same within 10%: ioscope fast"), "{warm}");
    let overlap = warm
        .split("(no order shown; more --repeat or a quieter machine would tell): ")
        .nth(1)
        .expect("an overlapping group");
    assert!(overlap.contains("cat (0.60x)"), "{warm}");
    let apart = warm
        .split("slower, their runs apart from the first's: ")
        .nth(1)
        .expect("a clearly slower group");
    assert!(apart.starts_with("dd bs=1m (0.08x)"), "{warm}");
}

/// Sets one transfer cell's median rate (MiB/s) with repeats within 1% of it.
fn set_cell(doc: &mut Value, sender: &str, receiver: &str, mib: f64) {
    let w = large_workload(doc);
    let bytes = w["bytes"].as_f64().unwrap();
    let c = w["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["sender"] == sender && c["receiver"] == receiver)
        .unwrap();
    let seconds = bytes / (mib * MIB);
    c["bytes_per_second"] = (mib * MIB).into();
    set_summary(
        &mut c["receiver_seconds"],
        seconds,
        seconds * 0.99,
        seconds * 1.01,
        3,
    );
}

fn large_workload(doc: &mut Value) -> &mut Value {
    doc["workloads"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|w| w["files"].as_u64() == Some(1))
        .expect("the fixture has one large file")
}

#[test]
fn a_pair_that_copies_more_yet_wins_is_not_credited_to_copies_it_makes() {
    let mut doc = fixture_json("transfer.json");
    for (s, r) in [("read", "write"), ("sendfile", "splice")] {
        set_cell(&mut doc, s, r, if s == "read" { 2000.0 } else { 400.0 });
    }
    for c in large_workload(&mut doc)["cells"].as_array_mut().unwrap() {
        let pair = (c["sender"].as_str(), c["receiver"].as_str());
        if pair != (Some("read"), Some("write")) && pair != (Some("sendfile"), Some("splice")) {
            c["bytes_per_second"] = (1000.0 * MIB).into();
        }
    }
    doc["synced"] = false.into();
    let text = report_text(&doc);
    assert!(!text.contains("no user-space copy"), "{text}");
    assert!(
        text.contains("read → write saves no copy that sendfile → splice makes, yet it was faster"),
        "{text}"
    );
    assert!(
        text.contains("it makes no copy the fastest avoids, so its cost is elsewhere"),
        "{text}"
    );
    // The usual order keeps the usual reasons.
    set_cell(&mut doc, "read", "write", 400.0);
    set_cell(&mut doc, "sendfile", "splice", 2000.0);
    let text = report_text(&doc);
    assert!(
        text.contains("sender: sendfile() hands page-cache pages"),
        "{text}"
    );
    assert!(text.contains("read() copies every byte"), "{text}");
}

/// Sets the last cache row's device read counts (cold, cold again) in bytes.
fn set_device_reads(doc: &mut Value, cold: u64, again: u64) {
    let row = doc["rows"].as_array_mut().unwrap().last_mut().unwrap();
    row["cold"]["device"]["read_bytes"] = cold.into();
    row["cold_again"]["device"]["read_bytes"] = again.into();
}

#[test]
fn a_device_count_far_above_the_file_is_other_io_not_agreement() {
    // 8 MiB file; the device read three times that during the cold run.
    let mut doc = fixture_json("cache.json");
    let file = doc["file_bytes"].as_u64().unwrap();
    set_device_reads(&mut doc, 3 * file, file);
    let text = report_text(&doc);
    assert!(!text.contains("The kernel agrees"), "{text}");
    assert!(text.contains("3.0x the 8 MiB file"), "{text}");
    assert!(text.contains("other processes' I/O"), "{text}");
}

#[test]
fn a_second_cold_read_that_took_the_whole_file_from_the_device_is_not_said_to_have_skipped_it() {
    // The second cold read is 1.5x the first, and took all 8 MiB from the device; the
    // first's count was three times the file (other I/O).
    let mut doc = fixture_json("cache.json");
    set_cache_rates(&mut doc["rows"], 1000.0, 6000.0, 1500.0);
    let file = doc["file_bytes"].as_u64().unwrap();
    set_device_reads(&mut doc, 3 * file, file);
    let text = report_text(&doc);
    assert!(!text.contains("somewhere faster than the device"), "{text}");
    assert!(
        text.contains("other I/O on the device slowed the first run"),
        "{text}"
    );
    // A count short of the file is what says part came from elsewhere.
    set_device_reads(&mut doc, file, file / 2);
    let text = report_text(&doc);
    assert!(text.contains("somewhere faster than the device"), "{text}");
}

#[test]
fn a_write_block_size_whose_runs_overlap_others_is_not_called_best() {
    // The fixture's write sweep: 128 KiB's median is highest (1448 MB/s) but its runs,
    // 1026–1872, overlap 512 KiB's and 2 MiB's.
    let doc = fixture_json("study-sentences.json");
    let md = report_markdown(&doc);
    assert!(!md.contains("write, best block size"), "{md}");
    assert!(md.contains("write, highest median"), "{md}");
    assert!(md.contains("tied with 2 others"), "{md}");
    // Apart from every other point, it is the best.
    let mut doc = doc;
    let points = doc["write_sweep"]["points"].as_array_mut().unwrap();
    for p in points.iter_mut() {
        let m = p["rate"]["median"].as_f64().unwrap();
        let m = if p["block_size"] == 131072 {
            3.0 * m
        } else {
            m
        };
        set_summary(&mut p["rate"], m, 0.99 * m, 1.01 * m, 2);
    }
    let md = report_markdown(&doc);
    assert!(md.contains("write, best block size"), "{md}");
}

#[test]
fn the_summarys_next_reader_follows_the_sections_order() {
    // ioscope fast first by the median (8000 MB/s) but its runs (5000–9000) overlap
    // the next reader's: the compare section says "no order shown", so must the summary.
    let mut doc = fixture_json("study-sentences.json");
    let mut compare = fixture_json("compare.json");
    for r in compare["rows"].as_array_mut().unwrap() {
        if r["cache"] != "warm" {
            continue;
        }
        if r["contender"] == "ioscope fast" {
            r["median_bytes_per_second"] = 8e9.into();
            r["ratio_to_best"] = 1.0.into();
            for (run, v) in r["runs"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .zip([5e9, 8e9, 9e9])
            {
                run["bytes_per_second"] = v.into();
            }
        } else {
            let m = r["median_bytes_per_second"].as_f64().unwrap();
            r["ratio_to_best"] = (m / 8e9).into();
        }
    }
    doc["compare"] = compare;
    let md = report_markdown(&doc);
    assert!(md.contains("no order shown"), "{md}");
    assert!(!md.contains("next: ioscope run -r 1m"), "{md}");
}

#[test]
fn a_pair_with_others_tied_is_never_called_fastest_in_the_same_sentence() {
    // The 1 MiB workload: read → write first, seven pairs within 10% of it.
    let text = report_text(&fixture_json("transfer.json"));
    assert!(text.contains("so no single fastest"), "{text}");
    for line in text.lines().filter(|l| l.contains("no single fastest")) {
        assert!(!line.trim_start().starts_with("fastest"), "{line}");
        assert!(!line.contains("fastest is"), "{line}");
    }
}

#[test]
fn a_fall_past_a_peak_already_beyond_the_l2_is_not_blamed_on_the_l2() {
    // A 64 KiB L2, the warm peak at 128 KiB (already twice it), the fall at 512 KiB: the
    // L2 cannot explain a fall its peak was already past.
    let mut doc = fixture_json("study-sentences.json");
    doc["environment"]["cpu_caches"][1]["bytes"] = 65536.into();
    for p in doc["read_sweep"]["points"].as_array_mut().unwrap() {
        if p["cache"] == "warm" && p["block_size"].as_u64() >= Some(524288) {
            let m = 6000.0 * MIB;
            set_summary(&mut p["rate"], m, 0.99 * m, 1.01 * m, 2);
        }
    }
    let md = report_markdown(&doc);
    assert!(
        md.contains("peaks at 128 KiB per call and falls from 512 KiB"),
        "{md}"
    );
    assert!(!md.contains("no longer fits the per-core L2"), "{md}");
    assert!(md.contains("the CPU caches do not explain it"), "{md}");
}

/// The study fixture with its read sweep's cold curve alone (points and fitted models).
fn cold_curve_only() -> Value {
    let mut doc = fixture_json("study-sentences.json");
    let sweep = &mut doc["read_sweep"];
    for key in ["points", "analyses"] {
        sweep[key]
            .as_array_mut()
            .unwrap()
            .retain(|x| x["cache"] != "warm");
    }
    doc
}

#[test]
fn the_study_and_sweep_tell_one_story_of_the_rise_the_models_crossover() {
    // The cold curve alone, whose fitted model fits (crossover 767 B, as `sweep` says):
    // the rise is told up to the crossover, not blamed on the 4 KiB page.
    let md = report_markdown(&cold_curve_only());
    assert!(
        !md.contains("memory page each call moves part of a page"),
        "{md}"
    );
    assert!(
        md.contains("Below 767 B per call (the fitted model's crossover"),
        "{md}"
    );
}

#[test]
fn a_steep_rise_below_ten_times_is_written_to_a_tenth_as_every_other_rise() {
    // The cold curve alone: 267 MiB/s in calls of 128 B, 2237 MiB/s in calls of 2 KiB (the
    // first past the 767 B crossover), 8.4 times. Once written "8x" in this branch alone.
    let md = report_markdown(&cold_curve_only());
    assert!(
        md.contains("the rate rises 8.4x (267 MiB/s in calls of 128 B against 2237 MiB/s in calls of 2 KiB): the fixed cost of the call"),
        "{md}"
    );
    assert!(md.contains("the steep rise on the left"), "{md}");
}

#[test]
fn where_no_model_fits_the_study_names_no_cause_for_the_rise() {
    // The cold curve alone, its 32 KiB runs three times slower than the fitted model says:
    // `sweep` says the model fits only roughly, so the study blames neither the model's
    // crossover nor the 4 KiB page (named only as where the rise is measured to).
    let mut doc = fixture_json("study-sentences.json");
    let sweep = &mut doc["read_sweep"];
    let points = sweep["points"].as_array_mut().unwrap();
    points.retain(|p| p["cache"] != "warm");
    for p in points.iter_mut().filter(|p| p["block_size"] == 32768) {
        for run in p["runs"].as_array_mut().unwrap() {
            let t = run["elapsed"]["seconds"].as_f64().unwrap();
            run["elapsed"]["seconds"] = (3.0 * t).into();
        }
    }
    sweep["analyses"]
        .as_array_mut()
        .unwrap()
        .retain(|a| a["cache"] != "warm");
    let md = report_markdown(&doc);
    assert!(md.contains("fits these times only roughly"), "{md}");
    assert!(!md.contains("memory page each call"), "{md}");
    assert!(!md.contains("the fitted model's crossover"), "{md}");
    assert!(
        md.contains("up to the 4 KiB memory page") && md.contains("so no cause is named"),
        "{md}"
    );
}

#[test]
fn two_media_on_one_machine_never_cite_the_machines() {
    // The same study twice on one machine, the second's warm reads at a third the rate:
    // the warm reads differ, and the machines cannot be why.
    let dir = tempfile::tempdir().unwrap();
    let doc = fixture_json("study-sentences.json");
    let mut slow = doc.clone();
    slow["dir"] = "/mnt/other".into();
    for p in slow["read_sweep"]["points"].as_array_mut().unwrap() {
        if p["cache"] == "warm" {
            let m = p["rate"]["median"].as_f64().unwrap() / 3.0;
            set_summary(&mut p["rate"], m, 0.99 * m, 1.01 * m, 2);
        }
    }
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, doc.to_string()).unwrap();
    std::fs::write(&b, slow.to_string()).unwrap();
    let page = dir.path().join("both.html");
    let out = ioscope()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("Warm reads at their best differ"), "{html}");
    assert!(!html.contains("the machines, or the load"), "{html}");
    assert!(
        html.contains("from the page cache on one machine"),
        "{html}"
    );
}

/// `calibrate.json` turned into a cold calibration with a 2–8 ms window and three probes at
/// `mib` MiB/s, `resident` of 1000 pages cached before each; rendered as Markdown.
fn calibrate_markdown(mib: [f64; 3], resident: [u64; 3]) -> String {
    let mut doc = fixture_json("calibrate.json");
    doc["cache"] = "cold".into();
    doc["min_seconds"] = 0.002.into();
    doc["max_seconds"] = 0.008.into();
    doc["warnings"] = serde_json::json!([]);
    let template = doc["probes"][0].clone();
    let probes: Vec<Value> = (0..3)
        .map(|i| {
            let mut p = template.clone();
            let bytes = 4_096_000u64 << i;
            p["bytes"] = bytes.into();
            p["bytes_per_second"] = (mib[i] * MIB).into();
            p["seconds"] = (bytes as f64 / (mib[i] * MIB)).into();
            p["cache"]["asked"] = "cold".into();
            p["cache"]["residency_before"] =
                serde_json::json!({"resident_pages": resident[i], "total_pages": 1000});
            p["cache"]["bytes"] = bytes.into();
            p["cache"]["device_read_bytes"] = bytes.into();
            p
        })
        .collect();
    let last = probes[2].clone();
    doc["probes"] = probes.into();
    for key in ["bytes", "seconds", "bytes_per_second"] {
        doc[key] = last[key].clone();
    }
    report_markdown(&doc)
}

#[test]
fn a_size_predicted_from_probes_that_disagree_carries_their_range() {
    // Probes at 726, 1500 and 2068 MiB/s: the 10 s size is one of a wide range, said so.
    let md = calibrate_markdown([726.0, 1500.0, 2068.0], [0, 0, 0]);
    assert!(
        md.contains("the probes' rates (726–2068 MiB/s) put it anywhere from 7.1 GiB to 20.2 GiB"),
        "{md}"
    );
    // Probes within 10% of each other: one size, no range.
    let md = calibrate_markdown([1000.0, 1040.0, 1050.0], [0, 0, 0]);
    assert!(md.contains("needs a file of about"), "{md}");
    assert!(!md.contains("put it anywhere from"), "{md}");
}

#[test]
fn a_cold_calibration_whose_probes_all_started_evicted_says_so_rather_than_warn() {
    let md = calibrate_markdown([1000.0, 1040.0, 1050.0], [0, 0, 0]);
    assert!(
        md.contains("Every probe started with its range evicted"),
        "{md}"
    );
    // One probe found half its range cached: no claim that the eviction held.
    let md = calibrate_markdown([1000.0, 1040.0, 1050.0], [0, 500, 0]);
    assert!(
        !md.contains("Every probe started with its range evicted"),
        "{md}"
    );
}

#[test]
fn compare_ends_with_its_verdict_and_keeps_how_readers_work_for_the_documents() {
    let doc = fixture_json("compare.json");
    let text = report_text(&doc);
    let last: Vec<&str> = text.trim_end().lines().rev().take(2).collect();
    assert!(
        last.iter()
            .all(|l| l.contains(": fastest ") || l.contains(": first by the median ")),
        "the ranking per cache state closes the output: {text}"
    );
    // How dd counts its units and how the readers reach the cache: in the documents.
    assert!(!text.contains("dd prints decimal units"), "{text}");
    let md = report_markdown(&doc);
    assert!(md.contains("dd prints decimal units"), "{md}");
}

#[test]
fn fio_clearly_behind_dd_on_warm_reads_is_given_its_buffer_as_a_reason() {
    // The fixture: fio psync 2000 MiB/s against dd's 4434, their runs apart.
    let mut doc = fixture_json("compare.json");
    let text = report_text(&doc);
    assert!(text.contains("--iomem_align=4096"), "{text}");
    // fio as fast as dd: no reason to give.
    set_runs(
        &mut doc,
        "fio psync bs=1m",
        "warm",
        &[4400.0, 4434.0, 4450.0],
    );
    set_runs(&mut doc, "dd bs=1m", "warm", &[4400.0, 4434.0, 4450.0]);
    let text = report_text(&doc);
    assert!(!text.contains("--iomem_align"), "{text}");
}

#[test]
fn a_sweep_whose_small_blocks_overlap_its_best_says_not_where_it_levels_off() {
    // The fixture: 4 KiB (2413–2878 MiB/s) stands clearly below the best (1 MiB,
    // 4496–6273), 64 KiB is within 5% of it: the knee is told.
    let mut doc = fixture_json("sweep.json");
    let text = report_text(&doc);
    assert!(
        text.contains("at 64 KiB the rate first comes within 5% of its best"),
        "{text}"
    );
    // 4 KiB at 4000 MiB/s by the median, its runs reaching 4800: they overlap the best's
    // from 4496 up, so no block size is shown to be where the rate levels off.
    set_summary(
        &mut doc["points"][0]["rate"],
        4000.0 * MIB,
        2400.0 * MIB,
        4800.0 * MIB,
        3,
    );
    let text = report_text(&doc);
    assert!(!text.contains("first comes within"), "{text}");
    assert!(
        text.contains("where the rate levels off is within the noise: already in calls of 4 KiB its runs (2400–4800 MiB/s, n=3) overlap"),
        "{text}"
    );
    assert!(
        text.contains("more --repeat or a quieter machine would tell"),
        "{text}"
    );
}

#[test]
fn a_small_block_within_ten_percent_of_the_best_is_where_the_rate_first_levels_off() {
    // 4 KiB at 5100 MiB/s, runs 5050–5150: 8% under the best's median, the same by the
    // rule, though under the 5% the analysis drew its knee at (64 KiB).
    let mut doc = fixture_json("sweep.json");
    set_summary(
        &mut doc["points"][0]["rate"],
        5100.0 * MIB,
        5050.0 * MIB,
        5150.0 * MIB,
        3,
    );
    let text = report_text(&doc);
    assert!(
        !text.contains("at 64 KiB the rate first comes within 5%"),
        "{text}"
    );
    assert!(
        text.contains(
            "at 4 KiB the rate first comes within 10% of its best (5545 MiB/s in calls of 1 MiB)"
        ),
        "{text}"
    );
}

#[test]
fn a_first_contender_whose_runs_overlap_the_next_ones_is_not_called_fastest() {
    // The fixture's warm runs stand apart (ioscope run 5982–6376 against fast's
    // 5106–5864); its cold ones overlap (run 713–912, fio psync 667–1000).
    let doc = fixture_json("compare.json");
    let text = report_text(&doc);
    assert!(text.contains("warm: fastest ioscope run"), "{text}");
    assert!(!text.contains("cold: fastest"), "{text}");
    assert!(
        text.contains("cold: first by the median ioscope run -r 1m"),
        "{text}"
    );
    assert!(
        text.contains("more --repeat or a quieter machine would tell"),
        "{text}"
    );
}

#[test]
fn media_whose_best_warm_runs_overlap_are_not_said_to_differ() {
    // Two studies on one machine, the second's warm reads at a third of the rate by the
    // median but with runs reaching the first's: no medium is shown faster.
    let dir = tempfile::tempdir().unwrap();
    let mut doc = fixture_json("study-sentences.json");
    for p in doc["read_sweep"]["points"].as_array_mut().unwrap() {
        if p["cache"] == "warm" {
            let m = p["rate"]["median"].as_f64().unwrap();
            set_summary(&mut p["rate"], m, 0.9 * m, 1.1 * m, 3);
        }
    }
    let mut slow = doc.clone();
    slow["dir"] = "/mnt/other".into();
    for p in slow["read_sweep"]["points"].as_array_mut().unwrap() {
        if p["cache"] == "warm" {
            let m = p["rate"]["median"].as_f64().unwrap();
            set_summary(&mut p["rate"], m / 3.0, m / 6.0, 0.95 * m, 3);
        }
    }
    let (a, b) = (dir.path().join("a.json"), dir.path().join("b.json"));
    std::fs::write(&a, doc.to_string()).unwrap();
    std::fs::write(&b, slow.to_string()).unwrap();
    let page = dir.path().join("both.html");
    let out = ioscope()
        .arg("report")
        .arg(&a)
        .arg(&b)
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("but the runs of the fastest and the slowest overlap"),
        "{html}"
    );
    assert!(
        !html.contains("from the page cache on one machine: the file"),
        "{html}"
    );
}

#[test]
fn a_fall_past_the_peak_whose_runs_overlap_the_peaks_is_not_claimed() {
    // The warm peak at 128 KiB (runs 8367–17009 MiB/s); 512 KiB and up at 6000 by the
    // median, below 85% of it, but with runs up to 9000: no fall is shown, none explained.
    let mut doc = fixture_json("study-sentences.json");
    for p in doc["read_sweep"]["points"].as_array_mut().unwrap() {
        if p["cache"] == "warm" && p["block_size"].as_u64() >= Some(524288) {
            let m = 6000.0 * MIB;
            set_summary(&mut p["rate"], m, 0.5 * m, 1.5 * m, 3);
        }
    }
    let md = report_markdown(&doc);
    assert!(!md.contains("falls from 512 KiB"), "{md}");
    assert!(
        md.contains("drops below 85% of it from 512 KiB per call up, but the runs there overlap the peak's: no fall is shown"),
        "{md}"
    );
}

/// The study fixture's cache part, its row at 1 MiB.
fn cache_row_1m(doc: &mut Value) -> &mut Value {
    doc["cache"]["rows"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|r| r["block_size"] == 1048576)
        .expect("the cache part read in calls of 1 MiB")
}

#[test]
fn parts_that_agree_on_the_cold_read_give_one_pooled_figure() {
    // The quick study with the cache part's two cold reads at 1 MiB (2641 and 2340 MiB/s:
    // 13% over the sweep's, which the rule calls apart) made 2330 and 2350: within the rule
    // of the sweep's at 2 MiB (2292–2370, n=2).
    let mut doc = fixture_json("study-sentences.json");
    let row = cache_row_1m(&mut doc);
    set_rate(&mut row["cold"], 2330.0);
    set_rate(&mut row["cold_again"], 2350.0);
    let text = report_text(&doc);
    assert!(
        text.contains("2340.0 MiB/s ┆ 2292.2–2369.6 (n=4), pooled over the runs of 2 parts (read-sweep 2, cache 2) in calls of 1 MiB and 2 MiB"),
        "{text}"
    );
    assert!(!text.contains("disagree"), "{text}");
    assert!(
        !text.contains("read, cold, highest median"),
        "no one part's figure alone: {text}"
    );
}

#[test]
fn parts_apart_on_the_cold_read_give_the_range_which_part_gave_which_and_the_cause() {
    // As on the VM: the cache part's first cold read at 163 MiB/s while another process read
    // 498 MiB from the device, against the sweep's 2292–2370 and the cold read again's 2340.
    let mut doc = fixture_json("study-sentences.json");
    let row = cache_row_1m(&mut doc);
    set_rate(&mut row["cold"], 163.0);
    row["cold"]["other_io_bytes"] = (498u64 << 20).into();
    let text = report_text(&doc);
    assert!(text.contains("163.0–2340.1 MiB/s"), "{text}");
    assert!(
        text.contains("Cold read: the parts disagree beyond their spreads, 163.0 to 2340.1 MiB/s (14.4x), so no one figure stands for the medium: read-sweep (at 2 MiB) 2330.9 MiB/s (2292.2–2369.6, n=2); cache (first cold read) 163.0 MiB/s (one run); cache (cold read again) 2340.1 MiB/s (one run)."),
        "{text}"
    );
    assert!(
        text.contains("another process used the device during cache (first cold read): 498 MiB beyond its own in 1 of 1 run(s)"),
        "{text}"
    );
    assert!(
        text.contains("cache (first cold read) is the first read after the file's pages were evicted, and its cold read again (2340.1 MiB/s) differs from it"),
        "{text}"
    );
    // The same numbers in Markdown.
    let md = report_markdown(&doc);
    assert!(
        md.contains("the parts disagree beyond their spreads"),
        "{md}"
    );
}

#[test]
fn parts_apart_with_no_mark_say_the_data_shows_no_cause() {
    // Both of the cache part's cold reads at 800 MiB/s, the sweep's (made a 1 MiB point, so
    // that the block size differs nowhere) at 2292–2370: apart, and nothing recorded why.
    let mut doc = fixture_json("study-sentences.json");
    for p in doc["read_sweep"]["points"].as_array_mut().unwrap() {
        if p["block_size"] == 2097152 {
            p["block_size"] = 1048576.into();
        }
    }
    let row = cache_row_1m(&mut doc);
    set_rate(&mut row["cold"], 800.0);
    set_rate(&mut row["cold_again"], 820.0);
    let text = report_text(&doc);
    assert!(text.contains("the parts disagree"), "{text}");
    assert!(
        text.contains("the data does not show why they differ"),
        "{text}"
    );
}

#[test]
fn a_cold_read_not_proven_cold_is_left_out_of_the_pool_and_said_to_be() {
    let mut doc = fixture_json("study-sentences.json");
    let row = cache_row_1m(&mut doc);
    set_rate(&mut row["cold"], 2330.0);
    set_rate(&mut row["cold_again"], 9000.0);
    row["cold_again"]["cache"]["verdict"] = "contradicted".into();
    let text = report_text(&doc);
    assert!(
        !text.contains("disagree"),
        "the warm-looking read is not pooled: {text}"
    );
    assert!(
        text.contains("Left out of the cold read: cache (cold read again) 9000.0 MiB/s (one run): 1 of its 1 run(s) not proven cold"),
        "{text}"
    );
    assert!(
        text.contains("pooled over the runs of 2 parts (read-sweep 2, cache 1)"),
        "{text}"
    );
}

#[test]
fn a_study_that_took_clearly_longer_than_estimated_says_so_and_what_the_machine_did() {
    let mut doc = fixture_json("study-sentences.json");
    doc["seconds"] = 20.0.into();
    let sweep = doc["steps"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|s| s["part"] == "read-sweep")
        .unwrap();
    sweep["seconds"] = 12.0.into();
    doc["environment"]["load_1m"] = 9.8.into();
    doc["environment"]["cores_online"] = 2.into();
    let text = report_text(&doc);
    assert!(
        text.contains("The study took 20.000 s, 4.0x the 5.000 s estimated (on an idle 2-vCPU VM): read-sweep 12.000 s against 1.500 s; while it ran, the load was 9.8 on 2 cores at the end."),
        "{text}"
    );
    assert!(
        text.contains("read-sweep   done in 12.000 s, estimated 1.500 s"),
        "{text}"
    );
}

#[test]
fn a_study_within_its_estimate_says_nothing_of_its_time() {
    let text = report_text(&fixture_json("study-sentences.json"));
    assert!(!text.contains("estimated"), "{text}");
}

/// Gives the last cache row these cycles (cold, warm, cold again, in MiB/s): each read's
/// figure is then the median of its cycles, with their range.
fn set_cache_cycles(rows: &mut Value, cycles: &[(f64, f64, f64)]) {
    let row = rows.as_array_mut().unwrap().last_mut().unwrap();
    row["cycles"] = cycles
        .iter()
        .map(|&(cold, warm, again)| {
            serde_json::json!({
                "cold": cold * MIB,
                "warm": warm * MIB,
                "cold_again": again * MIB,
            })
        })
        .collect();
}

#[test]
fn a_warm_median_above_the_cold_one_with_overlapping_cycles_shows_no_gain_from_the_cache() {
    let mut doc = fixture_json("cache.json");
    // Warm 1500 against cold 1200 by the medians (1.25x), but the cold cycles reach 1800
    // and the warm ones fall to 1100.
    set_cache_cycles(
        &mut doc["rows"],
        &[
            (1000.0, 1500.0, 1000.0),
            (1200.0, 1100.0, 1200.0),
            (1800.0, 1600.0, 1800.0),
        ],
    );
    let text = report_text(&doc);
    assert!(
        text.contains("the warm read is 1.2x the cold one by the medians (1500 MiB/s against 1200 MiB/s), but their runs overlap: no gain from the cache is shown"),
        "{text}"
    );
    assert!(!text.contains("the difference is the cache"), "{text}");
}

#[test]
fn a_warm_median_below_the_cold_one_with_overlapping_cycles_is_not_called_slower() {
    let mut doc = fixture_json("cache.json");
    // Warm 1000 against cold 1200 by the medians, but the warm cycles reach 1900.
    set_cache_cycles(
        &mut doc["rows"],
        &[
            (1000.0, 1000.0, 1000.0),
            (1200.0, 900.0, 1200.0),
            (1800.0, 1900.0, 1800.0),
        ],
    );
    let text = report_text(&doc);
    assert!(!text.contains("slower than the cold one"), "{text}");
    assert!(!text.contains("which no cache explains"), "{text}");
    assert!(
        text.contains("the warm read is 0.83x the cold one by the medians (1000 MiB/s against 1200 MiB/s), but their runs overlap: no gain from the cache is shown"),
        "{text}"
    );
}

#[test]
fn cold_reads_whose_cycles_overlap_are_not_said_to_disagree() {
    let mut doc = fixture_json("cache.json");
    // Cold again 1500 against cold 1000 by the medians (1.5x), their cycles overlapping.
    set_cache_cycles(
        &mut doc["rows"],
        &[
            (1000.0, 6000.0, 1500.0),
            (900.0, 6100.0, 950.0),
            (1600.0, 5900.0, 1700.0),
        ],
    );
    let text = report_text(&doc);
    assert!(!text.contains("the cold figures disagree"), "{text}");
    assert!(!text.contains("first-run effect"), "{text}");
    assert!(
        text.contains("The second cold read is 1.5x the first by the medians (1500 MiB/s against 1000 MiB/s), but their runs overlap: the cold reads are not shown to differ"),
        "{text}"
    );
}
