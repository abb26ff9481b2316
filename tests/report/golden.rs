//! Exact outputs, as hyperfine's `export/tests.rs`: one saved result per schema (real runs
//! on small files, kept in tests/fixtures) re-rendered with `ioscope report` to text (with
//! its warnings), CSV, Markdown, SVG where the result has a chart and, for the study, HTML,
//! and compared byte for byte with the files kept in tests/golden. Beside them: results
//! whose numbers contradict each usual story (the sentences must follow the numbers), the
//! older schema versions `report` refuses, and whole commands run on the hidden
//! `--meter fixed` (a deterministic meter, as hyperfine's `--debug-mode`), whose output is
//! exact end to end. A renderer that changes a word, a digit or a column shows up here. To
//! accept a change on purpose, rewrite them and review the diff:
//!
//! ```sh
//! IOSCOPE_BLESS=1 cargo test --release --test report golden
//! git diff tests/golden
//! ```

use crate::common::{file_with, fixture_file, ioscope, pattern};
use std::path::{Path, PathBuf};

/// Each fixture and the formats `report` renders it in: text, CSV and Markdown for every
/// schema, SVG where the result has a chart (checked against `--svg` below), HTML for the
/// study.
const FIXTURES: &[(&str, &[&str])] = &[
    ("run", &["text", "csv", "md"]),
    ("calibrate", &["text", "csv", "md"]),
    ("fast", &["text", "csv", "md"]),
    // `ioscope grade --runs 2 --json -- ./drops_tail` (issue 40): a reader that drops the
    // last size % 4 bytes, each size's verdict, the diagnosis checked, the verdict last.
    ("grade", &["text", "csv", "md"]),
    ("compare", &["text", "csv", "md", "svg"]),
    ("sweep", &["text", "csv", "md", "svg"]),
    // `ioscope sweep w --op write --block-sizes 4k,64k,1m --size 4m --repeat 3 --seed 1`
    // (issue 37): the rate with the final fsync and without it (the page cache's), each
    // call's p99.
    ("sweep-write", &["text", "csv", "md", "svg"]),
    ("cache", &["text", "csv", "md", "svg"]),
    ("syscalls", &["text", "csv", "md", "svg"]),
    ("patterns", &["text", "csv", "md", "svg"]),
    // `ioscope disk DIR --size 8m --runtime 0.1s --seed 1` (issue 25): the panel, the
    // device's view and one queue sentence per row.
    ("disk", &["text", "csv", "md", "svg"]),
    // `ioscope disk dir --size 8m --runtime 0.1s --repeat 3 --seed 1` (issue 38): each row
    // the median of 3 runs, n in the rows line, the runs and their range in the CSV and
    // Markdown.
    ("disk-repeat", &["text", "csv", "md", "svg"]),
    // `ioscope disk dir --depths 1,4,16,64 --latency-target 2ms --size 8m --runtime 0.1s
    // --seed 1` (issue 25): the curve, its knee, the search's steps read off it.
    ("disk-curve", &["text", "csv", "md", "svg"]),
    // `ioscope disk dir --size 64m --rate 10%..100%:30% --latency-target 1ms:p99 --runtime
    // 0.5s --seed 1` on vda (issue 42): the peak, four rates and the search's four, one of
    // them (57,857 IOPS) caught by a stall of the device that it drained before the end.
    ("disk-rates", &["text", "csv", "md", "svg"]),
    // `ioscope disk dir --preset fsync --size 1m --runtime 0.2s`: write and fdatasync
    // latency apart, the verdict against etcd's 10 ms p99 (missed on this shared disk).
    ("disk-fsync", &["text", "csv", "md"]),
    // `ioscope disk dir --preset sync-methods --size 1m --runtime 0.1s` on ext4 (issue 41):
    // each method at 1 and 2 writes per sync, 1 flush per fdatasync on the write-back vda,
    // O_DSYNC 2.66x fdatasync by the median but within the noise of this shared disk.
    ("disk-sync-methods", &["text", "csv", "md"]),
    ("trace", &["text", "csv", "md", "svg"]),
    // A real trace of `iozone -i 0 -i 1 -s 1m -r 64k` (3.471): its table's claims checked.
    ("trace-claims", &["text", "csv", "md", "svg"]),
    // `ioscope trace -- iozone -i 0 -s 4m -r 64k -f F` with the vDSO hidden: its clock reads
    // and timed regions, the fsync after the write's region (issue 24).
    ("trace-clock", &["text", "csv", "md", "svg"]),
    ("transfer", &["text", "csv", "md", "svg"]),
    // A real run of 2 ranks (`mpirun -np 2 ioscope mpi both DIR --size 4m --block-size 1m
    // --repeat 2 --seed 1`), its command line's binary named `ioscope`.
    ("mpi", &["text", "csv", "md"]),
    // `mpirun -np 2 ioscope mpi both DIR --layout shared-strided --size 4m --block-size 1m
    // --repeat 2 --seed 1 --cache warm --keep` (issue 28): IOR's formula beside the
    // slowest-rank figure, the clock, emptied files, the reordering and why, the read
    // without the XOR, and the files kept.
    ("mpi-ior", &["text", "csv", "md"]),
    // `mpirun -np 2 ioscope mpi io500 DIR --stonewall 1s --size 16m --files 200 --seed 3`
    // with IOSCOPE_IO500_SLOW_RANK=1 (issue 28): rank 1 wears out to rank 0's counts; the
    // ior-easy write reached its cap first and is invalid, the others valid.
    ("mpi-io500", &["text", "csv", "md"]),
    ("study-sentences", &["text", "csv", "md", "svg", "html"]),
];

/// The tables' text at a terminal's width (`$COLUMNS`), kept as `NAME.WIDTH.txt`: at 80
/// columns their lowest-priority columns are left out and named, at 200 all shown.
const WIDTHS: &[(&str, usize)] = &[
    ("grade", 80),
    ("disk", 80),
    ("disk", 200),
    // Each repeated row's rate with its farthest run glued (`±17%`): still 80 columns.
    ("disk-repeat", 80),
    ("disk-repeat", 200),
    ("disk-curve", 80),
    ("disk-curve", 200),
    ("disk-rates", 80),
    ("disk-rates", 200),
    ("sweep", 80),
    ("sweep", 200),
    ("sweep-write", 80),
    ("sweep-write", 200),
    ("cache", 80),
    ("cache", 200),
    ("syscalls", 80),
    ("syscalls", 200),
    ("compare", 80),
    ("compare", 200),
    ("patterns", 80),
    ("patterns", 200),
    // The study's summary (issue 37): at 80 columns its cells wrap between words, a number
    // kept with its unit, and the answer (summary, verification) comes last.
    ("study-sentences", 80),
    ("study-sentences", 200),
    // mpi's tables on the column model: at 80 columns the least needed columns go, named.
    ("mpi", 80),
    ("mpi", 200),
];

/// Saved results edited to numbers that contradict each usual story (the edits of
/// sentences.rs, made from their base in tests/common/fixtures.rs; one is a real run): the
/// golden text and Markdown show the sentence the numbers support.
const CONTRARY: &[(&str, &[&str])] = &[
    // cache.json: cold 852, warm 11200, cold again 3738 MiB/s (the issue's `ioscope cache`).
    ("cache-cold-again-faster", &["text", "md"]),
    // A real run (not edited): `ioscope cache prealloc --block-size 1m --allow-unwritten` on ext4, of a file of 8 MiB
    // preallocated with fallocate and its first 2 MiB written (issue 27): the cold figures
    // named "not the device", the caveats block, the warnings naming the unwritten extents.
    ("cache-unwritten", &["text", "md"]),
    // study-sentences.json: rewrite at 0.65x the write, one run each.
    ("study-rewrite-slower", &["text", "md"]),
    // transfer.json: the small files' last method pair 11.78x slower than the others.
    ("transfer-pairs-12x", &["text", "md"]),
    // study-sentences.json: the write sweep's file system has no block device (tmpfs).
    ("study-fsync-no-device", &["text", "md"]),
    // study-sentences.json: write 1000 MiB/s (500..2500) and rewrite 1500 (900..2000), 5
    // runs each: they scatter more than they differ.
    ("study-spread-wider", &["text", "md"]),
];

/// Documents of older schema versions (today's documents under the old schema name, made
/// in tests/common/fixtures.rs: `report` decides by the schema alone): refused with one line naming the file, exit 2.
const OLDER: &[&str] = &["run-v1", "study-v2"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Compares `actual` with the kept file, or rewrites it under IOSCOPE_BLESS=1. Returns a
/// line describing a difference, for one failure listing them all.
fn check(name: &str, actual: &str) -> Option<String> {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("IOSCOPE_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return None;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; run IOSCOPE_BLESS=1 cargo test --release --test report golden",
            path.display()
        )
    });
    if expected == actual {
        return None;
    }
    let first = expected
        .lines()
        .zip(actual.lines())
        .position(|(a, b)| a != b)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{name}: differs from line {}:\n  kept:   {}\n  now:    {}",
        first + 1,
        expected.lines().nth(first).unwrap_or("<end>"),
        actual.lines().nth(first).unwrap_or("<end>")
    ))
}

/// Fails listing every difference found.
fn assert_none_differ(differences: Vec<String>) {
    assert!(
        differences.is_empty(),
        "{} output(s) changed (IOSCOPE_BLESS=1 rewrites them on purpose):\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// The same output anywhere: this checkout, the test binary and the temporary directory
/// are named, not spelled out.
fn normalize(text: &str, dir: &Path) -> String {
    let binary = assert_cmd::cargo::cargo_bin("ioscope");
    text.replace(&*binary.to_string_lossy(), "ioscope")
        .replace(&*dir.to_string_lossy(), "<tmp>")
        .replace(&*root().to_string_lossy(), "<repo>")
}

/// What a user sees: the result on stdout, then the warnings on stderr.
fn seen(out: &std::process::Output) -> String {
    format!(
        "{}--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The extension a format's golden file has.
fn extension(format: &str) -> &str {
    if format == "text" { "txt" } else { format }
}

fn render(fixture: &Path, format: &str, dir: &Path) -> String {
    render_at(fixture, format, dir, None)
}

/// [`render`] with `$COLUMNS` set to `columns`.
fn render_at(fixture: &Path, format: &str, dir: &Path, columns: Option<usize>) -> String {
    let mut cmd = ioscope();
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    cmd.arg("report").arg(fixture);
    let out_file = dir.join(format!("out.{format}"));
    let flag = match format {
        "text" => None,
        "csv" => Some("--csv"),
        "md" => Some("--markdown"),
        "svg" => Some("--svg"),
        "html" => Some("-o"),
        other => unreachable!("{other}"),
    };
    if let Some(flag) = flag {
        cmd.arg(flag).arg(&out_file);
    }
    let out = cmd.output().expect("run ioscope report");
    assert!(
        out.status.success(),
        "report {} ({format}): {}",
        fixture.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = if format == "text" {
        seen(&out)
    } else {
        std::fs::read_to_string(&out_file).expect("the output file")
    };
    // The re-rendering's own command line (the HTML footer) names this checkout, the test
    // binary and a temporary directory.
    normalize(&text, dir)
}

/// Renders each fixture of `list` in its formats and compares them with the kept files.
fn differences(list: &[(&str, &[&str])]) -> Vec<String> {
    let mut differences = Vec::new();
    for (name, formats) in list {
        for format in *formats {
            let dir = tempfile::tempdir().unwrap();
            let actual = render(&fixture_file(name, dir.path()), format, dir.path());
            differences.extend(check(&format!("{name}.{}", extension(format)), &actual));
        }
    }
    differences
}

#[test]
fn every_schema_renders_exactly_as_kept_in_every_format() {
    assert_none_differ(differences(FIXTURES));
}

#[test]
fn the_widest_tables_render_exactly_as_kept_at_80_and_200_columns() {
    let mut differences = Vec::new();
    for (name, columns) in WIDTHS {
        let dir = tempfile::tempdir().unwrap();
        let fixture = fixture_file(name, dir.path());
        let actual = render_at(&fixture, "text", dir.path(), Some(*columns));
        differences.extend(check(&format!("{name}.{columns}.txt"), &actual));
    }
    assert_none_differ(differences);
}

#[test]
fn results_that_contradict_the_usual_story_render_exactly_as_kept() {
    assert_none_differ(differences(CONTRARY));
}

#[test]
fn every_schema_has_a_golden_fixture() {
    // A new result schema must come with its fixture: the list of schemas `report` reads.
    let names: Vec<&str> = FIXTURES.iter().map(|(n, _)| *n).collect();
    for command in [
        "run",
        "calibrate",
        "fast",
        "grade",
        "compare",
        "sweep",
        "cache",
        "syscalls",
        "patterns",
        "trace",
        "transfer",
        "mpi",
    ] {
        assert!(names.contains(&command), "no golden fixture for {command}");
    }
    assert!(names.iter().any(|n| n.starts_with("study")));
    for (name, formats) in FIXTURES {
        for format in ["text", "csv", "md"] {
            assert!(
                formats.contains(&format),
                "{name} is not checked as {format}"
            );
        }
    }
}

#[test]
fn every_result_with_a_chart_has_its_svg_kept_and_the_others_are_refused_one() {
    // `report --svg` draws the chart of a result that has one and refuses the others up
    // front: the SVG column of the table above is exactly the results with a chart.
    for (name, formats) in FIXTURES {
        let dir = tempfile::tempdir().unwrap();
        let out = ioscope()
            .arg("report")
            .arg(fixture_file(name, dir.path()))
            .arg("--svg")
            .arg(dir.path().join("out.svg"))
            .output()
            .unwrap();
        if formats.contains(&"svg") {
            assert!(out.status.success(), "{name}: {}", seen(&out));
        } else {
            assert_eq!(out.status.code(), Some(2), "{name}: {}", seen(&out));
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("has no chart"),
                "{name}: {}",
                seen(&out)
            );
        }
    }
}

#[test]
fn report_json_prints_every_saved_document_back_unchanged() {
    for (name, _) in FIXTURES.iter().chain(CONTRARY) {
        let dir = tempfile::tempdir().unwrap();
        let file = fixture_file(name, dir.path());
        let out = ioscope()
            .arg("report")
            .arg(&file)
            .arg("--json")
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", seen(&out));
        let saved = std::fs::read(&file).unwrap();
        assert!(out.stdout == saved, "{name}: --json changed the document");
    }
}

#[test]
fn documents_of_older_schema_versions_are_refused_exactly_as_kept() {
    // Made from today's fixtures in a temporary tests/fixtures: the kept text names the
    // file `<tmp>/tests/fixtures/NAME.json`.
    let checkout = tempfile::tempdir().unwrap();
    let kept = checkout.path().join("tests/fixtures");
    std::fs::create_dir_all(&kept).unwrap();
    let mut differences = Vec::new();
    for name in OLDER {
        let file = fixture_file(name, &kept);
        let out = ioscope().arg("report").arg(file).output().unwrap();
        let actual = format!("exit {:?}\n{}", out.status.code(), seen(&out));
        differences.extend(check(
            &format!("{name}.txt"),
            &normalize(&actual, checkout.path()),
        ));
    }
    assert_none_differ(differences);
}

#[test]
fn two_studies_side_by_side_render_exactly_as_kept() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("compare.html");
    // The variant is made in a temporary tests/fixtures, named on the page as the kept
    // fixture beside it is: `<repo>/tests/fixtures/NAME.json`.
    let checkout = tempfile::tempdir().unwrap();
    let kept = checkout.path().join("tests/fixtures");
    std::fs::create_dir_all(&kept).unwrap();
    let out = ioscope()
        .arg("report")
        .arg(fixture_file("study-sentences", &kept))
        .arg(fixture_file("study-fsync-no-device", &kept))
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", seen(&out));
    let html = std::fs::read_to_string(&page).unwrap().replace(
        &*checkout.path().to_string_lossy(),
        &root().to_string_lossy(),
    );
    assert_none_differ(
        check("studies-side-by-side.html", &normalize(&html, dir.path()))
            .into_iter()
            .collect(),
    );
}

#[test]
fn three_disk_panels_side_by_side_render_exactly_as_kept_with_their_figures() {
    // Real quick studies of the disk part alone (`study --level quick --only disk`, issue
    // 25 item 7) on ext4 on vda, on tmpfs (O_DIRECT accepted: memory), and on tmpfs with
    // IOSCOPE_DISK_REFUSE=direct (every row buffered; labelled "tmpfs buffered"); their
    // directories renamed /mnt/disk and /dev/shm/study.
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("compare.html");
    let media = root().join("tests/fixtures/media-disk");
    let out = ioscope()
        .arg("report")
        .args(["ext4", "tmpfs", "tmpfs-buffered"].map(|n| media.join(format!("{n}.json"))))
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", seen(&out));
    let mut differences = Vec::new();
    for (file, kept) in [
        ("compare.html", "studies-disk-side-by-side.html"),
        ("compare.json", "studies-disk-side-by-side.json"),
        ("compare.csv", "studies-disk-side-by-side.csv"),
    ] {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        differences.extend(check(kept, &normalize(&text, dir.path())));
    }
    assert_none_differ(differences);
}

/// A whole command on the hidden fixed meter: its arguments (`{dir}` is a fresh directory
/// holding `f`, 1 MiB of known bytes) and the formats it is kept in (`csv` where it has
/// `--csv`; `json` with what names this machine and this build blanked).
struct Whole {
    name: &'static str,
    args: &'static [&'static str],
    formats: &'static [&'static str],
}

const WHOLE: &[Whole] = &[
    Whole {
        name: "sweep",
        args: &[
            "sweep",
            "{dir}/f",
            "--engine",
            "null",
            "--cache",
            "both",
            "--block-sizes",
            "4k,64k,1m",
            "--repeat",
            "3",
        ],
        formats: &["text", "csv", "json"],
    },
    Whole {
        name: "cache",
        args: &[
            "cache",
            "{dir}/f",
            "--engine",
            "null",
            "--block-size",
            "4k,1m",
        ],
        formats: &["text", "csv", "json"],
    },
    Whole {
        name: "run-read",
        args: &["run", "-r", "{dir}/f", "64k"],
        formats: &["text", "json"],
    },
    Whole {
        name: "run-write",
        args: &["run", "-w", "{dir}/w", "64k", "16", "--seed", "1"],
        formats: &["text", "json"],
    },
    Whole {
        name: "syscalls",
        args: &["syscalls", "{dir}/f", "--sizes", "64k,1m"],
        formats: &["text", "csv", "json"],
    },
    Whole {
        // Every test but mixed, whose split between reads and writes follows the fresh seed.
        name: "patterns",
        args: &[
            "patterns",
            "{dir}/p",
            "--size",
            "1m",
            "--record",
            "64k",
            "--runs",
            "2",
            "--tests",
            "write,rewrite,read,reread,random-read,random-write,backward-read,record-rewrite,stride-read",
        ],
        formats: &["text", "csv", "json"],
    },
];

/// The patterns' fresh seed (`seed 0x…` in the text), which no option fixes.
fn blank_seed(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("seed 0x") {
        let (head, tail) = rest.split_at(at + "seed ".len());
        out.push_str(head);
        out.push_str("<seed>");
        let digits = tail[2..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(tail.len() - 2);
        rest = &tail[2 + digits..];
    }
    out.push_str(rest);
    out
}

/// The JSON document with what names this machine, this build and this day blanked (the
/// result itself is exact), pretty-printed. `seeded`: also every `seed` and `xor` (data of a
/// fresh seed), wherever they are.
fn blank_json(text: &str, seeded: bool) -> String {
    fn blank_seeds(value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, v) in map.iter_mut() {
                    if key == "seed" || key == "xor" {
                        *v = format!("<{key}>").into();
                    } else {
                        blank_seeds(v);
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(blank_seeds),
            _ => {}
        }
    }
    let mut doc: serde_json::Value = serde_json::from_str(text).expect("one JSON document");
    // `device`: the block device under the directory (none on tmpfs).
    for key in ["version", "commit", "date", "environment", "device"] {
        if doc.get(key).is_some() {
            doc[key] = format!("<{key}>").into();
        }
    }
    if seeded {
        blank_seeds(&mut doc);
    }
    serde_json::to_string_pretty(&doc).expect("JSON") + "\n"
}

/// Runs `whole` on the fixed meter in a fresh directory, in one format.
fn run_whole(whole: &Whole, format: &str) -> String {
    // Beside the build rather than in /tmp: the same kind of file system as the checkout.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    file_with(dir.path(), "f", &pattern(1 << 20));
    let spelled = dir.path().to_string_lossy().into_owned();
    let mut cmd = ioscope();
    cmd.args(["--meter", "fixed"])
        .args(whole.args.iter().map(|a| a.replace("{dir}", &spelled)));
    let csv = dir.path().join("out.csv");
    match format {
        "text" => {}
        "csv" => {
            cmd.arg("--csv").arg(&csv);
        }
        "json" => {
            cmd.arg("--json");
        }
        other => unreachable!("{other}"),
    }
    let out = cmd.output().expect("run ioscope");
    assert!(
        out.status.success(),
        "ioscope --meter fixed {:?} ({format}): {}",
        whole.args,
        seen(&out)
    );
    let seeded = whole.name == "patterns";
    let text = match format {
        "csv" => std::fs::read_to_string(&csv).expect("the CSV file"),
        "json" => blank_json(&String::from_utf8_lossy(&out.stdout), seeded),
        _ => seen(&out),
    };
    let text = normalize(&blank_caveats(&text), dir.path());
    if seeded { blank_seed(&text) } else { text }
}

/// The result without its caveats (the file system's extents and compression, the device's
/// write cache): they describe the machine, not the command, so tests/classic/honesty.rs
/// checks them and the kept files do not: the text block and the JSON key are left out.
fn blank_caveats(text: &str) -> String {
    if let Ok(mut doc) = serde_json::from_str::<serde_json::Value>(text) {
        if let Some(map) = doc.as_object_mut() {
            if map.remove("caveats").is_some() {
                return serde_json::to_string_pretty(&doc).expect("JSON") + "\n";
            }
        }
        return text.to_string();
    }
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("What could make this figure wrong") {
            inside = true;
            continue;
        }
        if inside && line.starts_with("  ") {
            continue;
        }
        inside = false;
        out.push_str(line);
    }
    out
}

#[test]
fn whole_commands_on_the_fixed_meter_print_exactly_as_kept() {
    let mut differences = Vec::new();
    for whole in WHOLE {
        for format in whole.formats {
            let actual = run_whole(whole, format);
            let name = format!("cli-{}.{}", whole.name, extension(format));
            differences.extend(check(&name, &actual));
        }
    }
    assert_none_differ(differences);
}

#[test]
fn the_fixed_meter_is_hidden_from_help() {
    for args in [&["--help"][..], &["sweep", "--help"]] {
        let out = ioscope().args(args).output().unwrap();
        assert!(out.status.success());
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("--meter"),
            "ioscope {args:?}"
        );
    }
}
