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
