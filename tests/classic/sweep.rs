//! `sweep`, `cache`, `syscalls` and `report`: tables, JSON, CSV and SVG that agree, cache
//! states proven by residency, and bad input refused. No timing is asserted.

use crate::common;
use crate::common::*;

fn csv_rows(path: &std::path::Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn a_sweep_exports_json_csv_and_svg_that_agree() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(2 << 20));
    let (csv, svg) = (dir.path().join("s.csv"), dir.path().join("s.svg"));
    // The deterministic meter: the sentence checked last is chosen by the rates, which a
    // real clock on a busy machine moves.
    let v = json_of(&[
        "--meter",
        "fixed",
        "sweep",
        path.to_str().unwrap(),
        "--from",
        "1k",
        "--to",
        "64k",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--csv",
        csv.to_str().unwrap(),
        "--svg",
        svg.to_str().unwrap(),
    ]);
    assert_eq!(v["schema"], "ioscope/sweep/v2");
    let points = v["points"].as_array().unwrap();
    let sizes: Vec<u64> = points
        .iter()
        .map(|p| p["block_size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [1024, 2048, 4096, 8192, 16384, 32768, 65536]);
    let rows = csv_rows(&csv);
    assert_eq!(rows[0][3], "block_size");
    assert_eq!(rows.len(), points.len() + 1);
    for (p, row) in points.iter().zip(&rows[1..]) {
        assert_eq!(row[3], p["block_size"].as_u64().unwrap().to_string());
        let csv_rate: f64 = row[6].parse().unwrap();
        assert_eq!(
            csv_rate,
            p["rate"]["median"].as_f64().unwrap(),
            "CSV and JSON agree"
        );
        assert_eq!(p["runs"].as_array().unwrap().len(), 2);
        assert_eq!(p["checks_ok"], true);
        for run in p["runs"].as_array().unwrap() {
            assert_eq!(run["bytes"], 2 << 20, "every run read the whole file");
        }
    }
    let chart = std::fs::read_to_string(&svg).unwrap();
    assert!(chart.starts_with("<svg") && chart.contains("block size") && chart.contains("MiB/s"));
    assert!(report_text(&v).contains("within 5%"));
}

#[test]
fn small_blocks_read_a_prefix_unless_full_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let v = json_of(&[
        "sweep",
        path.to_str().unwrap(),
        "--block-sizes",
        "16,64k",
        "--repeat",
        "1",
        "--max-calls",
        "1000",
    ]);
    assert_eq!(v["points"][0]["bytes"], 16_000);
    assert_eq!(v["points"][1]["bytes"], 1 << 20);
    let v = json_of(&[
        "sweep",
        path.to_str().unwrap(),
        "--block-sizes",
        "512",
        "--repeat",
        "1",
        "--full",
    ]);
    assert_eq!(v["points"][0]["bytes"], 1 << 20);
}

#[test]
fn warm_and_cold_runs_prove_their_state_with_residency() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4 << 20));
    let v = json_of(&[
        "sweep",
        path.to_str().unwrap(),
        "--block-sizes",
        "64k",
        "--cache",
        "both",
        "--repeat",
        "2",
    ]);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points[0]["cache"], "warm");
    assert_eq!(
        points[0]["resident_share_before"]["min"], 1.0,
        "warm runs start fully cached"
    );
    assert_eq!(points[1]["cache"], "cold");
    let cold_max = points[1]["resident_share_before"]["max"].as_f64().unwrap();
    if cold_max > 0.05 {
        eprintln!("note: this file system keeps pages after eviction; the run is flagged");
        assert_eq!(points[1]["state_ok"], false);
    } else {
        assert_eq!(points[1]["state_ok"], true);
    }
}

#[test]
fn a_write_sweep_creates_the_file_and_fsyncs_inside_the_timing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let v = json_of(&[
        "sweep",
        path.to_str().unwrap(),
        "--op",
        "write",
        "--block-sizes",
        "4k,1m",
        "--size",
        "1m",
        "--repeat",
        "1",
        "--warmup",
        "0",
    ]);
    assert_eq!(v["op"], "write");
    for p in v["points"].as_array().unwrap() {
        let run = &p["runs"][0];
        assert!(run["fsync_seconds"].as_f64().unwrap() >= 0.0);
        assert!(
            run["elapsed"]["seconds"].as_f64().unwrap() >= run["fsync_seconds"].as_f64().unwrap()
        );
    }
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
    let out = ioscope()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "--op",
            "write",
            "--block-sizes",
            "4k",
            "--size",
            "4k",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "an existing file needs --force");
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 1 << 20);
}

#[test]
fn the_cache_table_shows_cold_warm_cold_with_residency_and_device_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4 << 20));
    let csv = dir.path().join("c.csv");
    let v = json_of(&[
        "cache",
        path.to_str().unwrap(),
        "--block-size",
        "64k,1m",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    assert_eq!(v["schema"], "ioscope/cache/v2");
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for row in rows {
        assert_eq!(
            row["warm"]["cache"]["residency_before"]["resident_pages"],
            row["warm"]["cache"]["residency_before"]["total_pages"]
        );
        for run in ["cold", "warm", "cold_again"] {
            assert_eq!(row[run]["bytes"], 4 << 20);
        }
    }
    assert_eq!(csv_rows(&csv).len(), 3);
    let out = ioscope()
        .args(["cache", path.to_str().unwrap()])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("cold MiB/s") && text.contains("warm MiB/s") && text.contains("cold again"),
        "{text}"
    );
}

#[test]
fn syscalls_counts_every_call_and_verifies_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(300_000));
    let v = json_of(&[
        "syscalls",
        path.to_str().unwrap(),
        "--sizes",
        "100000,200000,1m",
    ]);
    assert_eq!(v["schema"], "ioscope/syscalls/v2");
    assert_eq!(v["skipped_sizes"][0], 1 << 20);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 10, "five operations at two sizes");
    for row in rows
        .iter()
        .filter(|r| r["op"].as_str().unwrap().contains("read"))
    {
        let kernel = row["kernel_calls"].as_u64().unwrap();
        let calls = row["calls"].as_u64().unwrap();
        assert!(kernel >= calls && kernel <= calls + 4, "{row}");
        assert!(row["bytes_per_second"].as_f64().unwrap() > 0.0);
    }
    // Which story the sentence tells depends on the numbers (tests/report/sentences.rs);
    // that one is told is what this run checks.
    let text = report_text(&v);
    assert!(text.contains("lseek(SEEK_CUR)"), "{text}");
}

/// The `<text>` elements of an SVG that plotters wrote: their `x`, `y`, `text-anchor` and
/// the text (one element per label, its text on the line after the tag).
fn svg_texts(svg: &str) -> Vec<(f64, f64, String, String)> {
    let attr = |tag: &str, name: &str| -> String {
        let start = tag
            .find(&format!(" {name}=\""))
            .map(|i| i + name.len() + 3)
            .unwrap_or_else(|| panic!("no {name} in {tag}"));
        tag[start..].split('"').next().unwrap().to_string()
    };
    svg.split("<text ")
        .skip(1)
        .map(|rest| {
            let (tag, body) = rest.split_once('>').unwrap();
            let tag = &format!(" {tag}");
            let text = body.split("</text>").next().unwrap().trim().to_string();
            let number = |n: &str| attr(tag, n).parse::<f64>().unwrap();
            (number("x"), number("y"), attr(tag, "text-anchor"), text)
        })
        .collect()
}

/// Whether `values` step by one amount, within `tolerance`.
fn evenly_spaced(values: &[f64], tolerance: f64) -> bool {
    let steps: Vec<f64> = values.windows(2).map(|w| w[1] - w[0]).collect();
    steps
        .iter()
        .all(|s| (s - steps[0]).abs() <= tolerance && *s != 0.0)
}

#[test]
fn syscalls_svg_draws_time_against_number_of_calls_for_read_and_lseek_on_linear_axes() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let svg_path = dir.path().join("calls.svg");
    let out = ioscope()
        .args([
            "syscalls",
            path.to_str().unwrap(),
            "--sizes",
            "64k,256k,512k,1m",
        ])
        .arg("--svg")
        .arg(&svg_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    // XML-ish: one root, every text element closed.
    assert!(svg.starts_with("<svg ") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(
        svg.matches("<text ").count(),
        svg.matches("</text>").count()
    );
    let texts = svg_texts(&svg);
    let labels: Vec<&str> = texts.iter().map(|t| t.3.as_str()).collect();
    for name in ["read 1 B", "lseek", "number of calls", "time (s)"] {
        assert!(labels.contains(&name), "{name:?} not among {labels:?}");
    }
    assert!(!svg.contains("log scale"), "no axis is logarithmic");
    // Linear axes: the tick labels are numbers a constant step apart, drawn a constant
    // distance apart (y labels are right-aligned at the left; x labels centred below).
    let ticks = |anchor: &str| -> Vec<(f64, f64, f64)> {
        texts
            .iter()
            .filter(|t| t.2 == anchor)
            .filter_map(|t| Some((t.0, t.1, t.3.replace(',', "").parse::<f64>().ok()?)))
            .collect()
    };
    let y = ticks("end");
    let x = ticks("middle");
    assert!(y.len() >= 3 && x.len() >= 3, "x {x:?}, y {y:?}");
    let values = |t: &[(f64, f64, f64)]| t.iter().map(|t| t.2).collect::<Vec<_>>();
    let (xv, yv) = (values(&x), values(&y));
    assert!(
        evenly_spaced(&xv, xv[1].abs() * 1e-9 + 1e-12),
        "x ticks {xv:?}"
    );
    assert!(
        evenly_spaced(&yv, (yv[1] - yv[0]).abs() * 1e-6),
        "y ticks {yv:?}"
    );
    let xs: Vec<f64> = x.iter().map(|t| t.0).collect();
    let ys: Vec<f64> = y.iter().map(|t| t.1).collect();
    assert!(evenly_spaced(&xs, 1.0), "x ticks drawn at {xs:?}");
    assert!(evenly_spaced(&ys, 1.0), "y ticks drawn at {ys:?}");
    assert_eq!((xv[0], yv[0]), (0.0, 0.0), "both axes start at zero");
}

#[test]
fn report_re_renders_a_saved_result_without_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let out = ioscope()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "--block-sizes",
            "4k,64k",
            "--repeat",
            "1",
            "--json",
        ])
        .output()
        .unwrap();
    let saved = dir.path().join("r.json");
    std::fs::write(&saved, &out.stdout).unwrap();
    let direct_csv = dir.path().join("a.csv");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let (csv, svg) = (dir.path().join("b.csv"), dir.path().join("b.svg"));
    let again = ioscope()
        .args([
            "report",
            saved.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let text = String::from_utf8(again.stdout).unwrap();
    assert!(text.contains("64k") && text.contains("MiB/s"));
    let rows = csv_rows(&csv);
    assert_eq!(
        rows[1][6],
        v["points"][0]["rate"]["median"]
            .as_f64()
            .unwrap()
            .to_string()
    );
    assert!(std::fs::read_to_string(&svg).unwrap().starts_with("<svg"));
    assert!(!direct_csv.exists());
    let json_again = ioscope()
        .args(["report", saved.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    assert_eq!(
        json_again.stdout, out.stdout,
        "--json gives back the saved document"
    );
}

#[test]
fn bad_input_to_the_measuring_commands_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4096));
    let existing = file_with(dir.path(), "exists.csv", b"keep");
    let not_json = file_with(dir.path(), "x.json", b"{\"schema\": \"ioscope/run/v1\"}");
    let p = path.to_str().unwrap();
    for (args, needle) in [
        (vec!["sweep", "/nonexistent/f"], "/nonexistent/f"),
        (vec!["sweep", p, "--from", "64k", "--to", "1k"], "--from"),
        (vec!["sweep", p, "--repeat", "0"], "--repeat"),
        (
            vec!["sweep", p, "--csv", existing.to_str().unwrap()],
            "--force",
        ),
        (
            vec!["sweep", p, "--block-sizes", "4k,zz"],
            "invalid size 'zz'",
        ),
        (
            vec!["cache", dir.path().to_str().unwrap()],
            "is a directory",
        ),
        (vec!["syscalls", p, "--sizes", "1m"], "smaller"),
        (vec!["syscalls", p, "--sizes", "zz"], "invalid size 'zz'"),
        (vec!["cache", p, "--block-size", "0"], "greater than zero"),
        (vec!["sweep", p, "--max-calls", "0"], "greater than zero"),
        (vec!["report", not_json.to_str().unwrap()], "ioscope/run/v1"),
        (vec!["report", "/nonexistent.json"], "/nonexistent.json"),
    ] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(one_line_stderr(&out).contains(needle), "{args:?}");
    }
    assert_eq!(std::fs::read(&existing).unwrap(), b"keep");
}

#[test]
fn drop_caches_is_refused_clearly_without_root() {
    if is_root() {
        eprintln!("skipped: running as root, where --drop-caches is allowed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4096));
    let out = ioscope()
        .args(["cache", path.to_str().unwrap(), "--drop-caches"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("root"));
}

#[test]
fn drop_caches_help_and_the_faq_say_what_1_2_and_3_drop_and_why_sync_comes_first() {
    // The claims of the kernel's Documentation/admin-guide/sysctl/vm.rst, in one line
    // whatever the width clap wraps the help at.
    let out = ioscope().args(["cache", "--help"]).output().unwrap();
    assert!(out.status.success());
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let help = flat(&String::from_utf8_lossy(&out.stdout));
    let help = between(&help, "--drop-caches", "--allow-unwritten");
    for claim in [
        "`sync`, then `echo 3 > /proc/sys/vm/drop_caches`",
        "1, the page cache",
        "2, the reclaimable slab objects, dentries and inodes among them",
        "3, both",
        "Only clean objects are dropped",
        "`sync` comes first, to write dirty pages back",
    ] {
        assert!(help.contains(claim), "{claim:?} not in: {help}");
    }
    let faq = flat(include_str!("../../FAQ.md"));
    let faq = between(&faq, "/proc/sys/vm/drop_caches mean", "##");
    for claim in [
        "`echo 1` drops the page cache",
        "`echo 2` drops the reclaimable slab objects, dentries and inodes among them",
        "`echo 3` drops both",
        "Only clean objects are dropped",
        "`sync` comes first, to write dirty pages back",
    ] {
        assert!(faq.contains(claim), "{claim:?} not in the FAQ: {faq}");
    }
}
#[test]
fn syscalls_on_a_file_that_shrinks_names_the_file_the_call_and_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(4 << 20));
    let Some(child) = syscalls_in_its_loops(&path, "4m") else {
        return;
    };
    // The 1-byte loops are past byte 100,000; the next call finds the end of the file.
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(1000)
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    let name = path.to_str().unwrap();
    let (call, rest) = line
        .strip_prefix("error: ")
        .and_then(|l| l.split_once(&format!(" {name} at byte ")))
        .unwrap_or_else(|| panic!("names the call, the file and the offset: {line}"));
    assert!(call == "read" || call == "pread", "{line}");
    let (offset, tail) = rest.split_once(':').unwrap();
    assert!(offset.parse::<u64>().unwrap() >= 1000, "{line}");
    assert_eq!(
        tail,
        format!(" a 1-byte {call}() found the end of the file (did it shrink?)")
    );
}

/// `fast` decides warm, cold or mixed on residency sampled in windows; the sample agrees
/// with counting every page, whether all, none or half of the file is cached, from any
/// start.
#[test]
fn sampled_residency_agrees_with_counting_every_page() {
    use ioscope::measure::cache;
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let len = 16usize << 20;
    let path = common::file_with(dir.path(), "f", &common::pattern(len));
    let file = std::fs::File::open(&path).unwrap();
    let share = |r: cache::Residency| r.resident_pages as f64 / r.total_pages.max(1) as f64;
    let compare = |state: &str| {
        for start in [0u64, 4097, 5 << 20] {
            let rest = len as u64 - start;
            let exact =
                cache::residency_at(&file, "f", start / 4096 * 4096, rest + start % 4096).unwrap();
            let sampled = cache::sampled_residency(&file, "f", start, rest, 64, 64 << 10).unwrap();
            assert!(
                sampled.total_pages >= 64 * 16 && sampled.total_pages < exact.total_pages,
                "{state}: {sampled:?}"
            );
            let (e, s) = (share(exact), share(sampled));
            assert!(
                (e - s).abs() <= 0.1,
                "{state}, from {start}: exact {e:.3}, sampled {s:.3}"
            );
        }
    };
    std::io::Read::read_to_end(&mut &file, &mut Vec::new()).unwrap();
    compare("read whole");
    cache::evict(&file, "f").unwrap();
    if share(cache::residency_at(&file, "f", 0, len as u64).unwrap()) > 0.05 {
        eprintln!(
            "skipped: this file system keeps evicted pages (tmpfs?), so only the warm case ran"
        );
        return;
    }
    compare("evicted");
    // The first half only, with pread of 64 KiB (readahead may bring in a little more).
    let mut buf = vec![0u8; 64 << 10];
    for at in (0..len / 2).step_by(buf.len()) {
        std::os::unix::fs::FileExt::read_exact_at(&file, &mut buf, at as u64).unwrap();
    }
    compare("half read");
}

#[test]
fn block_sizes_above_the_file_are_refused_when_listed_and_cut_from_a_range() {
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "f", &pattern(1 << 20));
    let p = path.to_str().unwrap();
    // Listed: the point would be labelled 4 MiB for calls that moved 1 MiB.
    let out = ioscope()
        .args(["sweep", p, "--block-sizes", "4k,4m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("block size 4 MiB is larger than the file (1 MiB)"));
    // Writing: the same against --size, before the file is created.
    let w = dir.path().join("w");
    let out = ioscope()
        .args([
            "sweep",
            w.to_str().unwrap(),
            "--op",
            "write",
            "--size",
            "1m",
        ])
        .args(["--block-sizes", "2m"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("larger than the size written (1 MiB)"));
    assert!(!w.exists());
    // A range is cut at the file's size.
    let v = json_of(&["sweep", p, "--from", "256k", "--to", "16m", "--repeat", "1"]);
    let sizes: Vec<u64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["block_size"].as_u64().unwrap())
        .collect();
    assert_eq!(sizes, [256 << 10, 512 << 10, 1 << 20]);
}

#[test]
fn a_sweep_of_a_file_that_changes_between_runs_fails_its_check_and_shows_the_xors() {
    // Another process rewrites the file in place, over and over, while many small runs read
    // it: runs over the same bytes then read different data, which is a failed check (exit
    // 1), said in the text and in JSON, with the XORs read. Retried where every run happened
    // to read the same bytes.
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1024 * 1024));
    for _ in 0..5 {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (stop, f) = (stop.clone(), f.clone());
            std::thread::spawn(move || {
                let file = std::fs::OpenOptions::new().write(true).open(&f).unwrap();
                let mut n = 0u8;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    // One word changes, and with it the XOR of the file.
                    n = n.wrapping_add(1);
                    file.write_all_at(&[n, 1, 2, 3], 8192).unwrap();
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
            })
        };
        let out = ioscope()
            .args([
                "sweep",
                f.to_str().unwrap(),
                "--block-sizes",
                "4k,16k",
                "--repeat",
                "40",
            ])
            .args(["--warmup", "0", "--json"])
            .output()
            .unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        writer.join().unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let groups = doc["same_bytes"].as_array().expect("same_bytes in JSON");
        let xors = groups[0]["xors"].as_array().unwrap().len();
        if xors < 2 {
            continue;
        }
        assert_eq!(out.status.code(), Some(1), "a failed check");
        let saved = dir.path().join("sweep.json");
        std::fs::write(&saved, &out.stdout).unwrap();
        let shown = ioscope().arg("report").arg(&saved).output().unwrap();
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(text.contains("DATA CHANGED"), "{text}");
        assert!(text.contains("CHANGED "), "the rows say it: {text}");
        for xor in groups[0]["xors"].as_array().unwrap() {
            assert!(text.contains(xor.as_str().unwrap()), "{xor} in {text}");
        }
        return;
    }
    panic!("no sweep saw the file change in 5 tries");
}

#[test]
fn a_sweep_of_a_file_that_holds_still_shows_the_one_xor_it_read() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = pattern(64 * 1024);
    let f = file_with(dir.path(), "f", &bytes);
    let out = ioscope()
        .args([
            "sweep",
            f.to_str().unwrap(),
            "--block-sizes",
            "4k,16k",
            "--repeat",
            "2",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "xor {}: each of the 4 timed run(s) read the same data",
            reference_xor(&bytes)
        )),
        "{text}"
    );
}

#[test]
fn two_sizes_in_a_refusal_that_would_read_the_same_are_shown_in_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(2300));
    let err = usage_error(&["sweep", f.to_str().unwrap(), "--block-sizes", "2302"]);
    assert!(
        err.contains("block size 2,302 bytes is larger than the file (2,300 bytes)"),
        "{err}"
    );
    // Sizes that read apart keep their short form.
    let err = usage_error(&["sweep", f.to_str().unwrap(), "--block-sizes", "4k"]);
    assert!(
        err.contains("block size 4 KiB is larger than the file (2.2 KiB)"),
        "{err}"
    );
}

/// `sweep`'s stdout with `args` after the file, and the file's directory kept alive.
fn sweep_text(path: &std::path::Path, args: &[&str]) -> String {
    let out = ioscope()
        .arg("sweep")
        .arg(path)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_sweep_ends_with_its_table_and_answer_and_keeps_the_latency_lines_for_verbose() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    // Three block sizes over three ranges (4 calls a run): one folded XOR line by default.
    let args = [
        "--block-sizes",
        "4k,16k,64k",
        "--max-calls",
        "4",
        "--repeat",
        "2",
    ];
    let text = sweep_text(&f, &args);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        !lines.iter().any(|l| l.starts_with("latency ")),
        "no latency line by default: {text}"
    );
    assert!(
        text.contains("p99 per call"),
        "the table's p99 column: {text}"
    );
    // After the table's bottom border come only notes, and the answer is the last one: the
    // sentence on the curve.
    let bottom = lines.iter().rposition(|l| l.starts_with('└')).unwrap();
    assert!(lines.last().unwrap().starts_with("warm: "), "{text}");
    assert!(
        lines[bottom..]
            .iter()
            .filter(|l| l.starts_with("xor"))
            .count()
            == 1
            && text
                .contains("(3 ranges, the first 16 KiB up to 256 KiB); --verbose shows each XOR"),
        "{text}"
    );
    let verbose = sweep_text(&f, &[&args[..], &["--verbose"]].concat());
    assert_eq!(
        verbose
            .lines()
            .filter(|l| l.starts_with("latency warm "))
            .count(),
        3,
        "{verbose}"
    );
    assert_eq!(
        verbose.lines().filter(|l| l.starts_with("xor ")).count(),
        3,
        "{verbose}"
    );
    assert!(
        verbose.lines().last().unwrap().starts_with("warm: "),
        "{verbose}"
    );
}

#[test]
fn a_write_sweep_shows_its_rate_without_the_fsync_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w");
    let csv = dir.path().join("s.csv");
    let v = json_of(&[
        "sweep",
        path.to_str().unwrap(),
        "--op",
        "write",
        "--block-sizes",
        "4k,64k",
        "--size",
        "256k",
        "--repeat",
        "2",
        "--warmup",
        "0",
        "--csv",
        csv.to_str().unwrap(),
    ]);
    let rows = csv_rows(&csv);
    let at = rows[0]
        .iter()
        .position(|h| h == "without_fsync_bytes_per_second")
        .expect("a CSV column for the rate without fsync");
    for (p, row) in v["points"].as_array().unwrap().iter().zip(&rows[1..]) {
        let without = p["without_fsync"]["median"].as_f64().expect("in JSON");
        assert_eq!(
            row[at].parse::<f64>().unwrap(),
            without,
            "CSV and JSON agree"
        );
        // The same runs timed up to their fsync: never slower than with it.
        assert!(without >= p["rate"]["median"].as_f64().unwrap(), "{p}");
    }
    let text = report_text(&v);
    assert!(
        text.contains("MiB/s with fsync") && text.contains("MiB/s without fsync"),
        "{text}"
    );
    assert!(text.contains("the page cache's rate"), "{text}");
    // The sentence that names where the curve levels off says which figure it ranks
    // (or, where the runs overlap the best's, that the noise hides it).
    assert!(
        text.contains("the rate with fsync first comes within")
            || text.contains("where the rate with fsync levels off is within the noise"),
        "{text}"
    );
}
