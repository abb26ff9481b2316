//! `ioscope report A B C D -o compare.html`: any number of studies on one page, each medium
//! by its name (`study --label`, `report --label`/`--labels`, else its file system and
//! device), one merged table per measure with a column per medium and its ratio to the
//! first, curves overlaid and bars grouped, each medium's own tables folded away, and the
//! same figures written beside the page as JSON and CSV (which the footer then names).

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A saved study from a fixture, its storage (and label, when given) rewritten, as
/// `dir/name/study.json`.
fn study(dir: &Path, name: &str, from: &str, storage: Value, label: Option<&str>) -> PathBuf {
    scaled(dir, name, from, storage, label, 1.0)
}

/// As [`study`], its read sweep's rates multiplied by `scale` (the fixtures were all taken
/// on one disk: the media must differ for the sentences to say how).
fn scaled(
    dir: &Path,
    name: &str,
    from: &str,
    storage: Value,
    label: Option<&str>,
    scale: f64,
) -> PathBuf {
    let mut doc = fixture_doc(from);
    for point in doc["read_sweep"]["points"].as_array_mut().unwrap() {
        for key in ["min", "median", "mean", "max"] {
            let v = point["rate"][key].as_f64().unwrap();
            point["rate"][key] = (v * scale).into();
        }
    }
    doc["environment"]["storage"] = storage.clone();
    doc["device"] = storage["device"].clone();
    if storage["device"].is_null() {
        // As a study of a medium without a device is: no cold reads, the cache part skipped.
        doc["read_sweep"]["points"]
            .as_array_mut()
            .unwrap()
            .retain(|p| p["cache"] != "cold");
        doc["read_sweep"]["device"] = Value::Null;
        doc["cache"] = Value::Null;
        for step in doc["steps"].as_array_mut().unwrap() {
            if step["part"] == "cache" {
                step["outcome"] = "skipped".into();
                step["reason"] = "no block device under /tmp (tmpfs or another memory file system): its pages cannot be evicted, so every read is a warm read".into();
            }
        }
    }
    if let Some(l) = label {
        doc["label"] = l.into();
    }
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(d.join("study.json"), serde_json::to_string(&doc).unwrap()).unwrap();
    d
}

fn storage(fs: &str, source: &str, device: Option<&str>) -> Value {
    serde_json::json!({
        "filesystem": fs,
        "mount_point": "/mnt",
        "mount_source": source,
        "device": device,
        "rotational": device.map(|_| false),
        "read_ahead_kb": device.map(|_| 128),
        "scheduler": Value::Null,
    })
}

/// Four media: ext4 on a disk; tmpfs reading at half its rate (against the usual story that
/// memory is faster); xfs on a loop device within 10% of ext4; btrfs on an NVMe partition at
/// three times its rate.
fn four(dir: &Path) -> Vec<PathBuf> {
    vec![
        study(
            dir,
            "ext4",
            "study-sentences",
            storage("ext4", "/dev/vda", Some("vda")),
            None,
        ),
        scaled(
            dir,
            "shm",
            "study-fsync-no-device",
            storage("tmpfs", "tmpfs", None),
            None,
            0.5,
        ),
        scaled(
            dir,
            "xfs",
            "study-rewrite-slower",
            storage("xfs", "/dev/loop0", Some("loop0")),
            None,
            1.05,
        ),
        scaled(
            dir,
            "btrfs",
            "study-spread-wider",
            storage("btrfs", "/dev/nvme0n1p2", Some("nvme0n1")),
            None,
            3.0,
        ),
    ]
}

const LABELS: [&str; 4] = ["ext4 on vda", "tmpfs", "xfs on loop0", "btrfs on nvme0n1p2"];

fn report(cwd: &Path, studies: &[PathBuf], extra: &[&str]) -> Output {
    ioscope()
        .current_dir(cwd)
        .arg("report")
        .args(studies)
        .args(extra)
        .output()
        .unwrap()
}

/// The page with every `<details>` block cut out: what a reader sees without unfolding.
fn unfolded(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(i) = rest.find("<details") {
        out.push_str(&rest[..i]);
        let j = rest[i..].find("</details>").expect("closed") + i;
        rest = &rest[j + "</details>".len()..];
    }
    out.push_str(rest);
    out
}

#[test]
fn four_studies_are_one_page_with_a_merged_table_per_measure_and_a_column_per_medium() {
    let dir = tempfile::tempdir().unwrap();
    let studies = four(dir.path());
    let page = dir.path().join("compare.html");
    ok(&report(
        dir.path(),
        &studies,
        &["-o", page.to_str().unwrap()],
    ));
    let html = std::fs::read_to_string(&page).unwrap();
    for label in LABELS {
        assert!(html.contains(&format!("<b>{label}</b>")), "{label} listed");
    }
    assert!(!html.contains("<b>A</b>"), "no letters for names");
    // One merged table per measure, each with a column per medium, in every part measured.
    for id in [
        "write_read",
        "read_cold",
        "read_warm",
        "cache",
        "write",
        "patterns",
    ] {
        assert_eq!(
            html.matches(&format!("id=\"table-{id}\"")).count(),
            1,
            "one table for {id}"
        );
        let table = between(&html, &format!("id=\"table-{id}\""), "</table>");
        let head = between(table, "<thead>", "</thead>");
        assert_eq!(
            head.matches("<th>").count(),
            1 + LABELS.len(),
            "{id}: {head}"
        );
        for label in LABELS {
            assert!(head.contains(label), "{id}: {label} heads a column");
        }
        assert!(table.contains("×"), "{id}: ratios to the first medium");
    }
    // tmpfs has no cold reads: its cell is empty, and the others' ratios are to ext4.
    let cold = between(&html, "id=\"table-read_cold\"", "</table>");
    assert!(cold.contains("ratio to ext4 on vda"), "{cold}");
    assert!(cold.contains("<td>—</td>"), "tmpfs has no cold reads");
    // Curves overlaid: one chart per measure, every medium in its legend, in the same order.
    let chart = between(&html, "id=\"chart-read_warm\"", "</figure>");
    let at: Vec<usize> = LABELS.iter().map(|l| chart.find(l).expect(l)).collect();
    assert!(
        at.windows(2).all(|w| w[0] < w[1]),
        "legend in the media's order"
    );
    let bars = between(&html, "id=\"chart-cache\"", "</figure>");
    assert!(
        bars.contains("tmpfs (not measured)"),
        "tmpfs keeps its slot and colour"
    );
    // No stacking: outside the folded details, only the summary and the merged tables.
    let seen = unfolded(&html);
    let tables = seen.matches("<table").count();
    let merged = seen.matches("<table class=\"merged\" id=\"table-").count();
    assert_eq!(tables, merged + 1, "the summary and the merged tables only");
    assert!(
        html.contains("<details class=\"each\">"),
        "per-medium detail folded"
    );
    // The summary: a column per medium.
    let summary = between(&html, "<h2>Summary</h2>", "</table>");
    assert_eq!(
        between(summary, "<thead>", "</thead>")
            .matches("<th>")
            .count(),
        1 + LABELS.len()
    );
    // Sentences on what differs, by name.
    assert!(html.contains("tmpfs has no block device under it"));
    // Sentences chosen by the numbers: tmpfs reads slower than the disk here, xfs is the
    // same within 10%, btrfs three times faster; each said against the first medium.
    let warm = between(&html, "id=\"table-read_warm\"", "</ul>");
    assert!(warm.contains("against ext4 on vda ("), "{warm}");
    assert!(warm.contains("tmpfs is at 0.50×"), "{warm}");
    assert!(warm.contains("xfs on loop0 is within 10%"), "{warm}");
    assert!(warm.contains("btrfs on nvme0n1p2 is at 3.00×"), "{warm}");
    assert!(warm.contains("0.50× lower"), "the tmpfs cell says lower");
    // The footer names the figures beside the page, and they are there.
    let footer = between(&html, "<footer>", "</footer>");
    assert!(
        footer.contains("compare.json and compare.csv beside this page"),
        "{footer}"
    );
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("compare.json")).unwrap())
            .unwrap();
    assert_eq!(json["schema"], "ioscope/media/v1");
    let names: Vec<&str> = json["media"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["label"].as_str().unwrap())
        .collect();
    assert_eq!(names, LABELS);
    let warm = json["measures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["measure"] == "read_warm")
        .unwrap();
    assert_eq!(warm["unit"], "bytes_per_second");
    let cell = &warm["rows"][0]["cells"][1];
    assert!(cell["median_bytes_per_second"].as_f64().unwrap() > 0.0);
    assert!(cell["ratio_to_reference"].as_f64().is_some());
    assert!(["same", "higher", "lower", "overlap"].contains(&cell["relation"].as_str().unwrap()));
    let csv = std::fs::read_to_string(dir.path().join("compare.csv")).unwrap();
    assert!(csv.starts_with(
        "part,measure,key,block_size_bytes,medium,unit,median,min,max,runs,ratio_to_reference,relation,path\n"
    ));
    assert!(csv.contains(",btrfs on nvme0n1p2,bytes_per_second,"));
}

#[test]
fn the_page_and_its_figures_are_not_replaced_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let studies = four(dir.path());
    let page = dir.path().join("m.html");
    std::fs::write(dir.path().join("m.csv"), "mine").unwrap();
    let out = report(dir.path(), &studies, &["-o", page.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains("m.csv") && line.contains("--force"), "{line}");
    assert!(!page.exists(), "nothing written");
    assert!(!dir.path().join("m.json").exists(), "nothing written");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("m.csv")).unwrap(),
        "mine"
    );
    ok(&report(
        dir.path(),
        &studies,
        &["-o", page.to_str().unwrap(), "--force"],
    ));
    assert!(
        std::fs::read_to_string(dir.path().join("m.csv"))
            .unwrap()
            .starts_with("part,")
    );
}

#[test]
fn studies_are_renamed_by_position_by_argument_or_by_a_list() {
    let dir = tempfile::tempdir().unwrap();
    let studies = four(dir.path());
    let page = dir.path().join("p.html");
    let p = page.to_str().unwrap();
    let arg3 = format!("{}=loop xfs", studies[2].display());
    ok(&report(
        dir.path(),
        &studies,
        &["-o", p, "--label", "2=RAM disk", "--label", &arg3],
    ));
    let html = std::fs::read_to_string(&page).unwrap();
    for label in ["ext4 on vda", "RAM disk", "loop xfs", "btrfs on nvme0n1p2"] {
        assert!(html.contains(&format!("<b>{label}</b>")), "{label}");
    }
    assert!(!html.contains("<b>tmpfs</b>"));
    ok(&report(
        dir.path(),
        &studies,
        &["-o", p, "--force", "--labels", "ssd,,usb,nfs"],
    ));
    let html = std::fs::read_to_string(&page).unwrap();
    for label in ["ssd", "tmpfs", "usb", "nfs"] {
        assert!(html.contains(&format!("<b>{label}</b>")), "{label}");
    }
    for (args, needle) in [
        (vec!["--labels", "a,b"], "2 name(s) for 4 studies"),
        (vec!["--label", "9=x"], "no study"),
        (vec!["--label", "nameonly"], "KEY=NAME"),
        (vec!["--label", "1=x", "--label", "2=x"], "both named 'x'"),
        (vec!["--label", "1=x", "--label", "1=y"], "twice"),
        (vec!["--label", "1=  "], "cannot be empty"),
    ] {
        let mut all = vec!["-o", p, "--force"];
        all.extend(args.iter().copied());
        let out = report(dir.path(), &studies, &all);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let line = one_line_stderr(&out);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
    let out = report(dir.path(), &studies[..1], &["--label", "1=x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("two or more"));
}

#[test]
fn a_stored_label_names_the_medium_and_studies_without_one_get_their_storage_name() {
    let dir = tempfile::tempdir().unwrap();
    let studies = vec![
        study(
            dir.path(),
            "a",
            "study-sentences",
            storage("ext4", "/dev/vda", Some("vda")),
            Some("work laptop SSD"),
        ),
        study(
            dir.path(),
            "b",
            "study-fsync-no-device",
            storage("nfs4", "host:/export", None),
            None,
        ),
        // The same storage twice: the second is numbered apart.
        study(
            dir.path(),
            "c",
            "study-rewrite-slower",
            storage("nfs4", "host:/export", None),
            None,
        ),
    ];
    let page = dir.path().join("p.html");
    ok(&report(
        dir.path(),
        &studies,
        &["-o", page.to_str().unwrap()],
    ));
    let html = std::fs::read_to_string(&page).unwrap();
    for label in [
        "work laptop SSD",
        "nfs4 on host:/export",
        "nfs4 on host:/export (2)",
    ] {
        assert!(html.contains(&format!("<b>{label}</b>")), "{label}");
    }
}

#[test]
fn control_characters_in_labels_are_escaped_wherever_they_are_printed() {
    let dir = tempfile::tempdir().unwrap();
    let mut studies = four(dir.path());
    studies[1] = study(
        dir.path(),
        "evil",
        "study-fsync-no-device",
        storage("tmpfs", "tmpfs", None),
        Some("ram\u{7}\u{1b}[2J"),
    );
    let page = dir.path().join("p.html");
    let out = report(
        dir.path(),
        &studies,
        &[
            "-o",
            page.to_str().unwrap(),
            "--label",
            "3=x\u{1b}]0;owned\u{7}",
        ],
    );
    ok(&out);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(controls(&html).is_empty(), "{:?}", controls(&html));
    assert!(html.contains("ram\\u{7}\\u{1b}[2J"), "shown as escapes");
    assert!(html.contains("x\\u{1b}]0;owned\\u{7}"), "shown as escapes");
    for side in ["p.json", "p.csv"] {
        let text = std::fs::read_to_string(dir.path().join(side)).unwrap();
        assert!(controls(&text).is_empty(), "{side}");
    }
    assert!(controls(&String::from_utf8_lossy(&out.stderr)).is_empty());
}

#[test]
fn study_label_is_stored_in_its_json_and_defaults_to_the_storage_name() {
    let dir = tempfile::tempdir().unwrap();
    let res = tempfile::tempdir().unwrap();
    let run = |out: &str, label: Option<&str>| {
        let mut args = vec![
            "study",
            dir.path().to_str().unwrap(),
            "--level",
            "quick",
            "--only",
            "write-read",
            "--size",
            "1m",
            "-q",
            "--json",
            "-o",
        ];
        let target = res.path().join(out);
        let target = target.to_str().unwrap().to_string();
        args.push(&target);
        if let Some(l) = label {
            args.extend(["--label", l]);
        }
        let o = ioscope()
            .current_dir(res.path())
            .args(&args)
            .output()
            .unwrap();
        ok(&o);
        let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
        let saved: Value = serde_json::from_str(
            &std::fs::read_to_string(res.path().join(out).join("study.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(printed["label"], saved["label"]);
        saved
    };
    let named = run("named", Some("usb stick"));
    assert_eq!(named["label"], "usb stick");
    let plain = run("plain", None);
    let label = plain["label"].as_str().unwrap();
    let fs = plain["environment"]["storage"]["filesystem"]
        .as_str()
        .unwrap_or("an unknown");
    assert!(label.starts_with(fs), "{label} names its file system {fs}");
    if let Some(dev) = plain["environment"]["storage"]["device"].as_str() {
        assert!(
            label.contains(" on "),
            "{label} names what it is on ({dev})"
        );
    }
    // Blank or overlong names are refused before anything is measured.
    for bad in ["", "   ", &"x".repeat(49)] {
        let o = ioscope()
            .current_dir(res.path())
            .args(["study", dir.path().to_str().unwrap(), "--label", bad])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        assert!(one_line_stderr(&o).contains("--label"));
    }
}

#[test]
fn the_four_media_page_renders_in_a_browser_with_every_chart_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let studies = four(dir.path());
    let page = dir.path().join("compare.html");
    ok(&report(
        dir.path(),
        &studies,
        &["-o", page.to_str().unwrap()],
    ));
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped the browser check: chromium is not installed (apt-get install chromium)"
        );
        return;
    };
    let dom = std::process::Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--window-size=1280,4000",
            "--dump-dom",
        ])
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    if !dom.status.success() {
        eprintln!(
            "skipped the browser check: chromium failed here: {}",
            String::from_utf8_lossy(&dom.stderr)
                .lines()
                .next()
                .unwrap_or("")
        );
        return;
    }
    let dom = String::from_utf8_lossy(&dom.stdout);
    for id in [
        "write_read",
        "read_cold",
        "read_warm",
        "cache",
        "write",
        "patterns",
    ] {
        let figure = between(&dom, &format!("id=\"chart-{id}\""), "</figure>");
        assert!(figure.contains("<svg"), "{id}: inline SVG");
        for label in LABELS {
            assert!(figure.contains(label), "{id}: {label} in the legend");
        }
    }
}
