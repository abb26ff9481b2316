//! The disk panel per medium on the side-by-side page: quick studies of only the disk part,
//! one on a directory on the disk and one on tmpfs (and tmpfs again with O_DIRECT refused),
//! rendered by `ioscope report A B C -o compare.html`: a merged table and grouped bars per
//! figure (MB/s, IOPS, p50, p99), each cell's path in the JSON and CSV beside the page, and
//! the sentences each study's rows call for, chosen by what the rows' paths were.

use crate::common::*;
use serde_json::Value;
use std::path::Path;

/// A quick study of only the disk part of `dir`, saved in `out`; `refuse`: what
/// `IOSCOPE_DISK_REFUSE` makes the panel act as refused. Returns its JSON, or `None` (and
/// says why) where the file system has no room for the scratch file.
fn quick_disk(dir: &Path, out: &Path, refuse: Option<&str>) -> Option<Value> {
    let cwd = tempfile::tempdir().unwrap();
    let mut cmd = ioscope();
    cmd.current_dir(cwd.path()).args([
        "study",
        dir.to_str().unwrap(),
        "--level",
        "quick",
        "--only",
        "disk",
        "--size",
        "4m",
        "--min-free",
        "16m",
        "-o",
        out.to_str().unwrap(),
        "--json",
    ]);
    if let Some(r) = refuse {
        cmd.env("IOSCOPE_DISK_REFUSE", r);
    }
    let o = cmd.output().unwrap();
    if !o.status.success() && String::from_utf8_lossy(&o.stderr).contains("not enough free") {
        eprintln!("skipped: {}", one_line_stderr(&o));
        return None;
    }
    ok(&o);
    Some(serde_json::from_slice(&o.stdout).unwrap())
}

/// The paths the study's measured panel rows took (`uring_direct` …).
fn paths(study: &Value) -> Vec<String> {
    study["disk"]["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|r| r["skipped"].is_null())
                .map(|r| r["path"].as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn the_disk_panel_of_a_disk_and_of_tmpfs_is_shown_side_by_side_per_medium_with_its_paths() {
    if !Path::new("/dev/shm").is_dir() {
        eprintln!("skipped: no /dev/shm to compare a memory file system with the disk");
        return;
    }
    let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
        eprintln!("skipped: /dev/shm is not writable here");
        return;
    };
    let disk = tempfile::tempdir_in(".").unwrap();
    let res = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        res.path().join("disk"),
        res.path().join("shm"),
        res.path().join("shm-buffered"),
    );
    let (Some(va), Some(vb), Some(vc)) = (
        quick_disk(disk.path(), &a, None),
        quick_disk(shm.path(), &b, None),
        quick_disk(shm.path(), &c, Some("direct")),
    ) else {
        return;
    };
    for v in [&va, &vb, &vc] {
        assert!(
            !paths(v).is_empty(),
            "every study has a measured panel: {}",
            v["steps"]
        );
    }
    let page = res.path().join("compare.html");
    let cwd = tempfile::tempdir().unwrap();
    let out = ioscope()
        .current_dir(cwd.path())
        .args([
            "report",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            c.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
            "--labels",
            "disk,shm,shm buffered",
        ])
        .output()
        .unwrap();
    ok(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    let section = between(&html, "<section class=\"part\" id=\"disk\">", "</section>");
    // A merged table and grouped bars per figure, a column and a bar series per medium.
    for id in [
        "disk_rate",
        "disk_iops",
        "disk_latency_p50",
        "disk_latency_p99",
        "disk_open_loop_p99",
    ] {
        let table = between(section, &format!("id=\"table-{id}\""), "</table>");
        let head = between(table, "<thead>", "</thead>");
        assert_eq!(head.matches("<th>").count(), 4, "{id}: {head}");
        let rows: &[&str] = if id == "disk_open_loop_p99" {
            &["RND4K Q32T1 read, open loop"]
        } else {
            &["SEQ1M Q8T1 read", "RND4K Q32T1 read", "RND4K Q1T1 write"]
        };
        for row in rows {
            assert!(table.contains(&format!("<td>{row}</td>")), "{id}: {row}");
        }
        let chart = between(section, &format!("id=\"chart-{id}\""), "</figure>");
        for label in ["disk", "shm", "shm buffered"] {
            assert!(chart.contains(label), "{id}: {label} in the legend");
        }
    }
    // The lead sentences, by the rule, against the first medium.
    assert!(
        section.contains("Sequential 1 MiB reads with 8 in flight (SEQ1M Q8T1): against disk ("),
        "{section}"
    );
    assert!(section.contains("Random 4 KiB reads with 32 in flight (RND4K Q32T1): against disk ("));
    assert!(section.contains("One random 4 KiB read at a time (RND4K Q1T1), its median latency"));
    // The buffered study: marked in its cells and said to be the page cache, against what
    // the disk's rows were.
    assert!(
        paths(&vc).iter().all(|p| p.ends_with("buffered")),
        "O_DIRECT refused: {:?}",
        paths(&vc)
    );
    assert!(section.contains("<small class=\"fallback\">buffered: through the page cache</small>"));
    assert!(
        section.contains("shm buffered: O_DIRECT refused (")
            && section.contains("so every row went through the page cache"),
        "{section}"
    );
    if paths(&va).iter().all(|p| p.ends_with("direct")) && !va["disk"]["device_name"].is_null() {
        assert!(section.contains(
            "beside each other these rows compare the page cache with a device, not two devices"
        ));
    }
    // tmpfs itself: memory, whichever path its rows took.
    let shm_direct = paths(&vb).iter().any(|p| p.ends_with("direct"));
    if shm_direct {
        assert!(
            section.contains("shm has no block device under it: even with O_DIRECT"),
            "{section}"
        );
    } else {
        assert!(section.contains("shm: O_DIRECT refused"));
    }
    // The figures beside the page: the new measures with units in their keys, and paths.
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(res.path().join("compare.json")).unwrap())
            .unwrap();
    let measures = json["measures"].as_array().unwrap();
    let of = |id: &str| measures.iter().find(|m| m["measure"] == id).unwrap();
    assert_eq!(of("disk_rate")["unit"], "bytes_per_second");
    assert_eq!(of("disk_iops")["unit"], "iops");
    assert_eq!(of("disk_latency_p99")["unit"], "latency_us");
    let cell = &of("disk_iops")["rows"][0]["cells"][2];
    assert!(cell["median_iops"].as_f64().unwrap() > 0.0, "{cell}");
    assert!(
        cell["path"].as_str().unwrap().ends_with("buffered"),
        "{cell}"
    );
    assert!(
        of("disk_latency_p50")["rows"][0]["cells"][0]["median_latency_us"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let sentences = json["sentences"].as_array().unwrap();
    assert!(
        sentences
            .iter()
            .any(|s| s.as_str().unwrap().contains("went through the page cache")),
        "the part's sentences are in the JSON too"
    );
    let csv = std::fs::read_to_string(res.path().join("compare.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",relation,path"));
    assert!(csv.contains("disk,disk_iops,RND4K Q32T1 read,,shm buffered,iops,"));
    assert!(csv.contains(",latency_us,"));
}

/// `tests/fixtures/media-disk/NAME.json`. `ext4-mix` and `tmpfs-mix` are `ext4` and `tmpfs`
/// made by hand with a 70/30 mix row (RND4K Q32T1) after the pure rows of its shape, as a
/// study whose panel has a mix would be saved: the default study runs none (an eighth more
/// of the part's time), and `report` must render one all the same.
fn media_fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/media-disk/{name}.json"))
}

/// The side-by-side page of `names` in a fresh directory: its JSON figures.
fn side_by_side(names: &[&str]) -> Value {
    let res = tempfile::tempdir().unwrap();
    let page = res.path().join("compare.html");
    let out = ioscope()
        .arg("report")
        .args(names.iter().map(|n| media_fixture(n)))
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    ok(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("table-disk_iops"), "{html}");
    serde_json::from_str(&std::fs::read_to_string(res.path().join("compare.json")).unwrap())
        .unwrap()
}

#[test]
fn two_studies_with_a_mix_show_its_iops_and_its_reads_p99_side_by_side() {
    let json = side_by_side(&["ext4-mix", "tmpfs-mix"]);
    let measures = json["measures"].as_array().unwrap();
    let of = |id: &str| {
        measures
            .iter()
            .find(|m| m["measure"] == id)
            .unwrap_or_else(|| panic!("no {id}"))
    };
    let row = |id: &str| {
        of(id)["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["key"] == "RND4K Q32T1 mix 70/30")
            .unwrap_or_else(|| panic!("{id}: no mix row"))
            .clone()
    };
    // The mix's IOPS beside the pure rows' in the IOPS table, each study's.
    let iops = row("disk_iops");
    let cells: Vec<f64> = iops["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["median_iops"].as_f64().unwrap())
        .collect();
    assert_eq!(cells.len(), 2, "{iops}");
    assert!((cells[0] - 60_000.0).abs() < 10.0, "{iops}");
    assert!((cells[1] - 540_000.0).abs() < 10.0, "{iops}");
    // Its reads' p99, a measure of its own (the row's p99 is reads and writes together).
    let p99 = row("disk_mix_read_p99");
    let cells: Vec<f64> = p99["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["median_latency_us"].as_f64().unwrap())
        .collect();
    assert_eq!(cells, [2100.0, 98.0], "{p99}");
    assert_eq!(of("disk_mix_read_p99")["unit"], "latency_us");
    let sentences: Vec<&str> = json["sentences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    let said = sentences
        .iter()
        .find(|s| s.starts_with("RND4K Q32T1 mix 70/30 side by side: "))
        .unwrap_or_else(|| panic!("{sentences:?}"));
    assert!(
        said.contains("ext4 on vda 59,999 IOPS, its reads' p99 2,100 µs against 459 µs alone")
            && said.contains("tmpfs 539,998 IOPS, its reads' p99 98.0 µs against 95.1 µs alone"),
        "{said}"
    );
}

#[test]
fn a_mix_in_one_study_only_is_a_row_the_other_did_not_measure_and_no_side_by_side_sentence() {
    let json = side_by_side(&["ext4-mix", "tmpfs"]);
    let measures = json["measures"].as_array().unwrap();
    let mix = measures
        .iter()
        .find(|m| m["measure"] == "disk_mix_read_p99")
        .expect("the mix's measure, from the study that has one");
    let cells = mix["rows"][0]["cells"].as_array().unwrap();
    assert_eq!(
        cells[0]["median_latency_us"].as_f64(),
        Some(2100.0),
        "{mix}"
    );
    assert!(
        cells
            .get(1)
            .is_none_or(|c| c["median_latency_us"].is_null()),
        "{mix}"
    );
    assert!(
        !json["sentences"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s.as_str().unwrap().contains("side by side")),
        "{}",
        json["sentences"]
    );
    // Studies without a mix have no mix measure at all.
    let json = side_by_side(&["ext4", "tmpfs"]);
    assert!(
        !json["measures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["measure"] == "disk_mix_read_p99")
    );
}

#[test]
fn a_studys_disk_section_says_what_its_mix_cost_in_markdown_and_its_summary() {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("study.md");
    let out = ioscope()
        .arg("report")
        .arg(media_fixture("ext4-mix"))
        .arg("--markdown")
        .arg(&md)
        .output()
        .unwrap();
    ok(&out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("disk, RND4K Q32T1 mix 70/30")
            && text.contains(
                "reads' p99 2.10 ms (459 µs alone); 82,079 IOPS predicted by the pure rows"
            ),
        "the summary's line: {text}"
    );
    let md = std::fs::read_to_string(&md).unwrap();
    let said = md
        .lines()
        .find(|l| l.starts_with("- RND4K Q32T1 mix 70/30: "))
        .unwrap_or_else(|| panic!("{md}"));
    assert!(
        said.contains("27% below the 82,079 IOPS the pure rows predict")
            && said.contains("its reads' p99 2,100 µs against 459 µs in the pure read row (4.6x: reads waited behind writes)"),
        "{said}"
    );
    // The panel's table has the mix as a row of its own.
    assert!(md.contains("| RND4K Q32T1 | mix 70/30 |"), "{md}");
}
