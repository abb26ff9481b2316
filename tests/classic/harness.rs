//! The harness on the `null` engine with a deterministic meter: statistics, the cost model,
//! the exports and interruption, checked exactly, with no real I/O timed.

use crate::common::*;
use ioscope::cmd::sweep::SweepReport;
use ioscope::harness::{Harness, NoProgress};
use ioscope::report::view::Exportable;
use ioscope::warning::Warning;

fn null_sweep(path: &str) -> SweepReport {
    let options = sweep_options(&[
        path,
        "--engine",
        "null",
        "--block-sizes",
        "4k,64k,1m",
        "--repeat",
        "3",
        "--warmup",
        "1",
    ]);
    let harness = Harness {
        meter: &FIXED_METER,
        progress: &NoProgress,
    };
    ioscope::cmd::sweep::execute(&options, &harness, &mut |_| Ok(())).expect("sweep")
}

#[test]
fn a_null_sweep_on_a_fixed_meter_gives_exact_rates_and_recovers_the_cost_model() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let r = null_sweep(path.to_str().unwrap());
    assert!(r.complete);
    assert_eq!(r.points.len(), 3);
    for p in &r.points {
        let calls = (1u64 << 20).div_ceil(p.block_size) as f64;
        let expected = (1u64 << 20) as f64 / (calls * 1e-6 + (1u64 << 20) as f64 / 1e9);
        assert_eq!(p.runs.len(), 3, "repeat 3 after 1 warm-up");
        assert!((p.rate.median - expected).abs() < 1e-6 * expected, "{p:?}");
        assert!(
            p.rate.stddev < 1e-9 * expected,
            "a fixed meter has no spread"
        );
        assert!(
            p.runs.iter().all(|s| s.checks.is_empty()),
            "null is not counted"
        );
        assert!(p.state_ok, "warm by the fixed meter's residency");
    }
    let model = r.analyses[0].model.expect("three points fit the model");
    assert!((model.seconds_per_call - 1e-6).abs() < 1e-12, "{model:?}");
    assert!((model.bytes_per_second - 1e9).abs() < 1.0, "{model:?}");
    assert_eq!(
        r.analyses[0].knee_block_size,
        64 << 10,
        "939 MiB/s is within 5% of 953"
    );
    assert!(
        r.warnings
            .iter()
            .any(|w| matches!(w, Warning::NotCounted { .. }))
    );
    assert!(r.ok());
}

#[test]
fn the_text_and_csv_of_a_null_sweep_are_exactly_as_rendered() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let name = path.to_str().unwrap();
    let r = null_sweep(name);
    let text = r.text().replace(name, "FILE");
    let expected = "\
sweep read FILE (1 MiB) with the null engine: 3 timed runs per point after 1 warm-up, median and spread
┌───────┬───────┬───────────┬───────┬────────────────┬─────────┬─────┬─────────────────┬─────────────┬────────┐
│ cache ┆ block ┆ bytes/run ┆ MiB/s ┆         spread ┆ calls/s ┆ CPU ┆ resident before ┆ device read ┆ checks │
╞═══════╪═══════╪═══════════╪═══════╪════════════════╪═════════╪═════╪═════════════════╪═════════════╪════════╡
│ warm  ┆    4k ┆     1 MiB ┆ 766.5 ┆ 767..767 ±0.0% ┆ 196,232 ┆   - ┆          100.0% ┆           - ┆ -      │
│ warm  ┆   64k ┆     1 MiB ┆ 939.3 ┆ 939..939 ±0.0% ┆  15,029 ┆   - ┆          100.0% ┆           - ┆ -      │
│ warm  ┆    1m ┆     1 MiB ┆ 952.8 ┆ 953..953 ±0.0% ┆     953 ┆   - ┆          100.0% ┆           - ┆ -      │
└───────┴───────┴───────────┴───────┴────────────────┴─────────┴─────┴─────────────────┴─────────────┴────────┘
model (warm): time = calls x 1000 ns + bytes / 954 MiB/s
warm: Each read() costs about 1000 ns whatever its size (at most 1,000,000 calls/s) and bytes move at about 954 MiB/s; below 1000 B per call the fixed cost dominates, and at 64 KiB the rate first comes within 5% of its best (953 MiB/s).
";
    assert_eq!(text, expected, "got:\n{text}");
    let csv = String::from_utf8(ioscope::report::csv::render(&r.table()).unwrap()).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "op,engine,cache,block_size,bytes,runs,bytes_per_second_median,bytes_per_second_min,bytes_per_second_max,bytes_per_second_stddev,outliers,calls_per_second,cpu_percent,resident_share_before_min,resident_share_before_max,device_read_bytes,checks_ok,state_ok,in_place,verify_seconds"
    );
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &first[..6],
        ["read", "null", "warm", "4096", "1048576", "3"]
    );
    let median: f64 = first[6].parse().unwrap();
    assert_eq!(
        median, r.points[0].rate.median,
        "CSV carries the raw figure"
    );
}

#[test]
fn a_cold_null_sweep_is_not_contradicted_by_the_device_bytes_it_never_asked_for() {
    // `null` moves no bytes, so the device reading 0 of them says nothing about the cache.
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let options = sweep_options(&[
        path.to_str().unwrap(),
        "--engine",
        "null",
        "--cache",
        "cold",
        "--block-sizes",
        "64k",
        "--repeat",
        "1",
    ]);
    let cold = ioscope::measure::meter::FixedMeter {
        resident: Some(0.0),
        ..FIXED_METER
    };
    let harness = Harness {
        meter: &cold,
        progress: &NoProgress,
    };
    let r = ioscope::cmd::sweep::execute(&options, &harness, &mut |_| Ok(())).expect("sweep");
    let proof = r.points[0].runs[0]
        .cache
        .expect("a proof for a regular file");
    assert_ne!(
        proof.verdict,
        ioscope::measure::cache::Verdict::Contradicted,
        "{proof:?}"
    );
    assert!(r.points[0].state_ok);
    assert!(
        !r.warnings
            .iter()
            .any(|w| matches!(w, Warning::CacheState { .. })),
        "{:?}",
        r.warnings
    );
    assert!(r.ok(), "exit 0, not 1");
}

#[test]
fn warming_a_file_works_wherever_its_offset_stands() {
    use ioscope::files::InputKind;
    use ioscope::harness::Target;
    use ioscope::measure::cache::{self, CacheState};
    use ioscope::workload::plan::Plan;
    use std::io::{Seek, SeekFrom};
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let file = std::fs::File::open(&path).unwrap();
    cache::evict(&file, "f").unwrap();
    if cache::residency(&file, "f", 1 << 20).unwrap().fraction() > 0.0 {
        eprintln!("skipped: this file system keeps pages after eviction");
        return;
    }
    // As after --grow appended to it: the offset at the end of the file.
    (&file).seek(SeekFrom::End(0)).unwrap();
    let target = Target {
        file: &file,
        name: "f",
        kind: InputKind::Regular,
        device: None,
    };
    let harness = Harness::system(&NoProgress);
    harness
        .prepare(
            target,
            &Plan::sequential(0, 1 << 20, 4096),
            CacheState::Warm,
            false,
        )
        .expect("warming reads from the start, not from where the offset was");
    assert_eq!(
        cache::residency(&file, "f", 1 << 20).unwrap().fraction(),
        1.0
    );
}
