//! `ioscope mpi` under `mpirun` as an IOR user compares it (the `mpi` feature): emptied files
//! every repeat, every rank's open/transfer/close on one clock with IOR's aggregate
//! recomputable from the JSON, the reordering and why, files kept and read back, and a
//! failed read that keeps the write results. Skipped, with the reason, without `mpirun`.
#![cfg(feature = "mpi")]

use crate::common::*;
use serde_json::Value;
use std::process::Output;

fn json(out: &Output, what: &str) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{what}: stdout is not one JSON document ({e}): {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn phase<'a>(v: &'a Value, op: &str) -> Option<&'a Value> {
    v["results"].as_array()?.iter().find(|p| p["op"] == op)
}

#[test]
fn two_ranks_time_open_transfer_and_close_on_one_clock_and_ior_s_aggregate_recomputes() {
    for layout in ["file-per-rank", "shared-strided"] {
        let dir = tempfile::tempdir().expect("temp dir");
        let d = dir.path().to_str().expect("UTF-8 temp dir");
        let args = [
            "both",
            d,
            "--layout",
            layout,
            "--size",
            "4m",
            "--block-size",
            "1m",
            "--repeat",
            "2",
            "--min-free",
            "0",
            "--json",
        ];
        let Some(out) = mpirun(2, &args, &[]) else {
            return;
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json(&out, layout);
        assert_eq!(v["repeat_files"], "recreated", "{layout}");
        let offsets = v["clock"]["offsets"].as_array().expect("clock offsets");
        assert_eq!(offsets.len(), 2);
        for o in offsets {
            assert!(o["uncertainty_seconds"].as_f64().expect("uncertainty") >= 0.0);
            assert_eq!(o["applied"], false, "one host: one clock");
        }
        // One host: IOR's shift (2 ranks on the node) wraps; the next rank is read, and why.
        assert_eq!(v["reorder"]["wrapped"], true);
        assert_eq!(v["reorder"]["shift"], 1);
        for op in ["write", "read"] {
            let p = phase(&v, op).expect("phase");
            for repeat in p["repeats"].as_array().expect("repeats") {
                let ranks = repeat["ranks"].as_array().expect("ranks");
                let t = |r: &Value, k: &str| r["times"][k].as_f64().expect(k);
                let first = ranks
                    .iter()
                    .map(|r| t(r, "start_seconds"))
                    .fold(f64::MAX, f64::min);
                let last = ranks
                    .iter()
                    .map(|r| t(r, "end_seconds"))
                    .fold(f64::MIN, f64::max);
                let total = repeat["aggregate"]["total_bytes"].as_f64().expect("total");
                let ior = repeat["aggregate"]["ior_bytes_per_second"]
                    .as_f64()
                    .expect("IOR");
                let recomputed = total / (last - first);
                assert!(
                    (ior - recomputed).abs() <= ior * 1e-9,
                    "{op}: {ior} {recomputed}"
                );
                for r in ranks {
                    let parts =
                        t(r, "open_seconds") + t(r, "transfer_seconds") + t(r, "close_seconds");
                    let span = t(r, "end_seconds") - t(r, "start_seconds");
                    assert!((parts - span).abs() < 1e-6, "{op}: {r}");
                    if op == "write" {
                        assert_eq!(r["file_bytes_at_start"], 0, "{layout}: emptied first");
                    } else {
                        assert!(r["xor_seconds"].as_f64().expect("XOR timed") > 0.0);
                    }
                }
            }
        }
        let text = report_text(&v);
        assert!(text.contains("IOR formula MiB/s"), "{text}");
        assert!(text.contains("each repeat wrote new files"), "{text}");
        assert!(
            text.contains("comes round to each rank's own data"),
            "{text}"
        );
        assert!(text.contains("read without the XOR"), "{text}");
    }
}

#[test]
fn a_failed_read_keeps_the_write_results_and_names_the_rank() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    let args = [
        "both",
        d,
        "--size",
        "1m",
        "--repeat",
        "2",
        "--min-free",
        "0",
        "--json",
    ];
    let Some(out) = mpirun(2, &args, &[("IOSCOPE_MPI_FAIL_RANK", "1")]) else {
        return;
    };
    assert_eq!(out.status.code(), Some(1), "a failed check exits 1");
    let v = json(&out, "failed read");
    let write = phase(&v, "write").expect("the write results kept");
    assert_eq!(write["repeats"].as_array().expect("repeats").len(), 1);
    assert!(phase(&v, "read").is_none());
    assert_eq!(v["failed"]["op"], "read");
    assert_eq!(v["failed"]["repeat"], 1);
    let errors = v["failed"]["errors"].as_array().expect("errors");
    assert_eq!(errors.len(), 1);
    let line = errors[0].as_str().expect("a line");
    assert!(line.starts_with("rank 1 on host "), "{line}");
    assert!(line.contains("checksum mismatch"), "{line}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("error: {line}")), "{stderr}");
    assert!(
        std::fs::read_dir(dir.path())
            .expect("list")
            .next()
            .is_none(),
        "removed"
    );
}

#[test]
fn files_kept_by_two_ranks_are_read_back_verified_by_a_read_only_run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path().to_str().expect("UTF-8 temp dir");
    for layout in ["file-per-rank", "shared-contiguous"] {
        let write = [
            "write",
            d,
            "--layout",
            layout,
            "--size",
            "2m",
            "--repeat",
            "1",
            "--keep",
            "--seed",
            "5",
            "--min-free",
            "0",
            "--json",
        ];
        let Some(out) = mpirun(2, &write, &[]) else {
            return;
        };
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let kept = json(&out, "write --keep")["kept"].clone();
        assert_eq!(kept["seed"], 5);
        let name = kept["name"].as_str().expect("name").to_string();
        let files = kept["files"].as_array().expect("files");
        assert_eq!(files.len(), if layout == "file-per-rank" { 2 } else { 1 });
        let read = [
            "read",
            d,
            "--layout",
            layout,
            "--size",
            "2m",
            "--repeat",
            "2",
            "--existing",
            &name,
            "--seed",
            "5",
            "--min-free",
            "0",
            "--json",
        ];
        let out = mpirun(2, &read, &[]).expect("mpirun is here");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v = json(&out, "read --existing");
        assert!(phase(&v, "write").is_none(), "nothing written");
        let read = phase(&v, "read").expect("read");
        for repeat in read["repeats"].as_array().expect("repeats") {
            for r in repeat["ranks"].as_array().expect("ranks") {
                assert_eq!(r["xor_hex"], r["expected_xor_hex"], "{layout}");
            }
        }
        for f in files {
            let f = f.as_str().expect("a name");
            assert!(std::path::Path::new(f).is_file(), "{f} left in place");
            std::fs::remove_file(f).expect("remove");
        }
    }
}
