//! What a person reads: terminal text that fits 80 columns, charts and tables that read at
//! 1280 and 400 px wide and on an A4 page (measured in a real browser's DOM, and printed to
//! PDF), one source for the study's time estimates (the README states its figures), and a
//! manual page with its examples, exit status and environment.

use crate::common::*;
use std::path::Path;
use std::process::Output;

/// The longest line of `text`, in characters (every character we print is one column wide).
fn widest(text: &str) -> (usize, String) {
    text.lines()
        .map(|l| (l.chars().count(), l.to_string()))
        .max_by_key(|(n, _)| *n)
        .unwrap_or_default()
}

fn assert_fits(what: &str, out: &Output, columns: usize) {
    assert!(
        out.status.success(),
        "{what}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let (n, line) = widest(&text);
        assert!(
            n <= columns,
            "{what} {stream}: a line of {n} columns, over {columns}:\n{line}\n---\n{text}"
        );
    }
}

/// Runs ioscope with `COLUMNS=80` in `cwd`.
fn at_80(cwd: &Path, args: &[&str]) -> Output {
    ioscope()
        .current_dir(cwd)
        .env("COLUMNS", "80")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn sweep_patterns_and_transfer_print_no_line_over_80_columns_when_columns_is_80() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let f = f.to_str().unwrap();
    let d = dir.path().to_str().unwrap();
    let to = tempfile::tempdir().unwrap();
    let runs: [(&str, Vec<&str>); 3] = [
        ("sweep", vec!["sweep", f, "--block-sizes", "4k,64k,1m"]),
        (
            "patterns",
            vec![
                "patterns", d, "--size", "1m", "--record", "64k", "--cache", "warm",
            ],
        ),
        (
            "transfer",
            vec![
                "transfer",
                f,
                "--to",
                to.path().to_str().unwrap(),
                "--repeat",
                "1",
                "--no-sync",
            ],
        ),
    ];
    for (what, args) in runs {
        assert_fits(what, &at_80(dir.path(), &args), 80);
    }
}

#[test]
fn without_a_terminal_or_columns_lines_are_left_whole() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let out = ioscope()
        .env_remove("COLUMNS")
        .args(["sweep", f.to_str().unwrap(), "--block-sizes", "4k,64k"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let (n, _) = widest(&String::from_utf8_lossy(&out.stdout));
    assert!(n > 80, "a pipe gets whole lines (widest {n})");
}

const BROWSER: [&str; 4] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--hide-scrollbars",
];

/// Measures `page` in chromium at `width` px: each shown chart's smallest text in CSS px,
/// each table's width against its box, the page's own width. The page is shown in an
/// iframe `width` px wide (headless chromium's window is at least 500 px), so its media
/// queries see that width. `print`: the page's print stylesheet applied on screen (its
/// `@media print` made `@media all`), as on paper.
fn measure(browser: &Path, page: &Path, width: u32, print: bool) -> serde_json::Value {
    let mut html = std::fs::read_to_string(page).unwrap();
    if print {
        html = html.replace("@media print", "@media all");
    }
    let script = r#"<script>
function measure(frame) {
  const doc = frame.contentDocument, win = frame.contentWindow;
  const out = { viewport: win.innerWidth, page: doc.documentElement.scrollWidth,
                charts: [], tables: [] };
  for (const svg of doc.querySelectorAll('figure.chart svg')) {
    const r = svg.getBoundingClientRect();
    if (r.width === 0) continue;
    const scale = r.width / svg.viewBox.baseVal.width;
    let smallest = 1e9;
    for (const t of svg.querySelectorAll('text')) {
      if (!t.textContent.trim()) continue;
      smallest = Math.min(smallest, parseFloat(win.getComputedStyle(t).fontSize) * scale);
    }
    out.charts.push({ id: svg.closest('figure').id, kind: svg.getAttribute('class'),
                      px: smallest, right: r.right });
  }
  for (const t of doc.querySelectorAll('table')) {
    const section = t.closest('section');
    const cell = t.querySelector('td') || t.querySelector('th');
    out.tables.push({ section: section ? section.id : 'summary',
                      landscape: section ? section.classList.contains('wide') : false,
                      width: t.getBoundingClientRect().width,
                      box: t.parentElement.clientWidth,
                      px: cell ? parseFloat(win.getComputedStyle(cell).fontSize) : 0 });
  }
  const pre = document.createElement('pre');
  pre.id = 'measured';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
</script>"#;
    let srcdoc = html.replace('&', "&amp;").replace('"', "&quot;");
    let outer = format!(
        "<!DOCTYPE html><html><body style=\"margin:0\">{script}<iframe style=\"width:{width}px;height:3000px;border:0\" onload=\"measure(this)\" srcdoc=\"{srcdoc}\"></iframe></body></html>"
    );
    let probe = page.with_file_name(format!("probe-{width}-{print}.html"));
    std::fs::write(&probe, outer).unwrap();
    let dom = std::process::Command::new(browser)
        .args(BROWSER)
        .arg(format!("--window-size={},2000", width.max(500) + 100))
        .arg("--dump-dom")
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&dom.stdout);
    let start = dom.find("<pre id=\"measured\">").expect("the script ran") + 19;
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    let value: serde_json::Value =
        serde_json::from_str(&json.replace("&amp;", "&").replace("&quot;", "\"")).unwrap();
    assert_eq!(value["viewport"], width, "the page saw {width} px");
    let smallest = |key: &str, field: &str| {
        value[key]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x[field].as_f64())
            .fold(f64::MAX, f64::min)
    };
    eprintln!(
        "at {width} px{}: smallest chart text {:.1} px, smallest table text {:.1} px, page {} px wide",
        if print { " (print)" } else { "" },
        smallest("charts", "px"),
        smallest("tables", "px"),
        value["page"]
    );
    value
}

/// A quick study of a new directory at `COLUMNS=80`; its output and its report directory.
fn quick_study(out: &Path) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    at_80(
        cwd.path(),
        &[
            "study",
            dir.path().to_str().unwrap(),
            "--level",
            "quick",
            "--size",
            "8m",
            "-o",
            out.to_str().unwrap(),
        ],
    )
}

/// The whole quick study: its terminal text fits 80 columns, and its page reads at 1280 and
/// 400 px wide and on paper, measured in a real browser when there is one.
#[test]
fn a_quick_study_fits_80_columns_and_its_page_reads_on_a_screen_a_phone_and_paper() {
    let res = tempfile::tempdir().unwrap();
    let out = res.path().join("r");
    let o = quick_study(&out);
    assert_fits("study", &o, 80);
    let page = out.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        !html.contains(".ioscope-study-"),
        "titles name the medium, not the scratch file"
    );
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped the browser checks: chromium is not installed (apt-get install chromium)"
        );
        return;
    };
    // A screen at 1280 px: every chart in its wide drawing, its text at least 14 px; every
    // table whole in its box.
    let wide = measure(&browser, &page, 1280, false);
    let charts = wide["charts"].as_array().unwrap();
    assert!(charts.len() >= 6, "charts shown: {wide}");
    for c in charts {
        assert_eq!(c["kind"], "wide", "{c}");
        assert!(c["px"].as_f64().unwrap() >= 14.0, "at 1280 px: {c}");
    }
    for t in wide["tables"].as_array().unwrap() {
        assert!(
            t["width"].as_f64().unwrap() <= t["box"].as_f64().unwrap() + 1.0,
            "at 1280 px a table is whole: {t}"
        );
        assert!(t["px"].as_f64().unwrap() >= 14.0, "{t}");
    }
    // A phone at 400 px: the narrow drawings, text at least 14 px, nothing wider than the
    // screen (a wide table scrolls inside its own box, its text still 14 px).
    let phone = measure(&browser, &page, 400, false);
    for c in phone["charts"].as_array().unwrap() {
        assert_eq!(c["kind"], "narrow", "{c}");
        assert!(c["px"].as_f64().unwrap() >= 14.0, "at 400 px: {c}");
        assert!(c["right"].as_f64().unwrap() <= 400.0, "{c}");
    }
    assert!(
        phone["page"].as_f64().unwrap() <= phone["viewport"].as_f64().unwrap(),
        "the page itself does not scroll sideways at 400 px: {phone}"
    );
    for t in phone["tables"].as_array().unwrap() {
        assert!(t["px"].as_f64().unwrap() >= 14.0, "{t}");
        assert!(t["box"].as_f64().unwrap() <= 400.0, "{t}");
    }
    // Paper: A4 less 12 mm margins is 703 px wide (portrait) or 1032 px (landscape, for
    // sections marked wide); the print drawings' text is 14 px there, and every table is
    // whole on its page.
    for (width, landscape) in [(703, false), (1032, true)] {
        let paper = measure(&browser, &page, width, true);
        for c in paper["charts"].as_array().unwrap() {
            assert_eq!(c["kind"], "print", "{c}");
            if !landscape {
                assert!(c["px"].as_f64().unwrap() >= 14.0, "on paper: {c}");
            }
        }
        for t in paper["tables"].as_array().unwrap() {
            if t["landscape"].as_bool().unwrap() != landscape {
                continue;
            }
            assert!(
                t["width"].as_f64().unwrap() <= width as f64 + 1.0,
                "on a {} page a table is whole: {t}",
                if landscape { "landscape" } else { "portrait" }
            );
        }
    }
    // And printed for real.
    let pdf = res.path().join("report.pdf");
    let printed = std::process::Command::new(&browser)
        .args(BROWSER)
        .arg("--no-pdf-header-footer")
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let bytes = std::fs::read(&pdf).unwrap();
    assert!(bytes.starts_with(b"%PDF"));
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        text.contains("/MediaBox [0 0 59"),
        "A4 portrait pages in the PDF"
    );
}

/// The pages of a PDF as chromium writes it (one uncompressed `/Type /Page` object each).
fn pdf_pages(pdf: &[u8]) -> usize {
    let text = String::from_utf8_lossy(pdf);
    text.match_indices("/Type /Page")
        .filter(|(at, m)| !text[at + m.len()..].starts_with('s'))
        .count()
}

/// A real standard study (tests/fixtures/study-standard.json: `ioscope study --level
/// standard` on ext4 on vda, every part) printed to A4 by a real browser: at most 13 pages,
/// as a student hands it in (12 until the summary named where its parts disagree on the cold
/// and the warm read, and each part's figure, issue 38).
#[test]
fn a_standard_study_prints_on_at_most_13_a4_pages() {
    let Some(browser) = chromium() else {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("study.html");
    let out = ioscope()
        .arg("report")
        .arg(fixture_path("study-standard.json"))
        .arg("-o")
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pdf = dir.path().join("study.pdf");
    let printed = std::process::Command::new(&browser)
        .args(BROWSER)
        .arg("--no-pdf-header-footer")
        .arg(format!("--print-to-pdf={}", pdf.display()))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        printed.status.success(),
        "{}",
        String::from_utf8_lossy(&printed.stderr)
    );
    let pages = pdf_pages(&std::fs::read(&pdf).unwrap());
    assert!((1..=13).contains(&pages), "{pages} A4 pages");
}

#[test]
fn the_readme_states_the_study_times_of_the_one_source() {
    use ioscope::workload::estimate::{LEVELS, readme_phrase};
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    for level in LEVELS {
        let phrase = readme_phrase(level);
        assert!(readme.contains(&phrase), "README lacks {phrase:?}");
    }
    // Every "about N s/min/h" in the README is one of the levels' own.
    let allowed: Vec<String> = LEVELS.iter().map(|l| l.about()).collect();
    for (at, _) in readme.match_indices("about ") {
        let rest = &readme[at..];
        let words: Vec<&str> = rest.splitn(4, ' ').collect();
        let (Some(number), Some(unit)) = (words.get(1), words.get(2)) else {
            continue;
        };
        let unit = unit.trim_end_matches([',', ')', ';', ':', '.']);
        if number.parse::<f64>().is_ok() && ["s", "min", "h"].contains(&unit) {
            let said = format!("about {number} {unit}");
            assert!(
                allowed.contains(&said),
                "README says {said:?}; the source: {allowed:?}"
            );
        }
    }
    assert!(!readme.contains("~1–3 min") && !readme.contains("~10 s"));
}

#[test]
fn the_readmes_man_page_loop_covers_every_subcommand() {
    use clap::CommandFactory;
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("for c in "))
        .expect("the loop");
    let named: Vec<&str> = line["for c in ".len()..]
        .split(';')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    for c in ioscope::cli::Cli::command().get_subcommands() {
        if !c.is_hide_set() {
            assert!(
                named.contains(&c.get_name()),
                "the loop skips {}",
                c.get_name()
            );
        }
    }
}

#[test]
fn the_man_page_lists_every_ioscope_variable_the_code_reads_and_no_test_hook() {
    let roff = ioscope().arg("man").output().unwrap();
    assert!(roff.status.success());
    let roff = String::from_utf8_lossy(&roff.stdout).replace("\\-", "-");
    let (mut seen, mut hooks) = (Vec::new(), Vec::new());
    let mut stack = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // The test hooks, read only in a build with the `test-hooks` feature.
            let list = if path.ends_with("src/hooks.rs") {
                &mut hooks
            } else {
                &mut seen
            };
            for (at, _) in text.match_indices("\"IOSCOPE_") {
                let name: String = text[at + 1..]
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
                    .collect();
                // Set at build time (env!), not read while running.
                if !["IOSCOPE_VERSION", "IOSCOPE_COMMIT"].contains(&name.as_str())
                    && !list.contains(&name)
                {
                    list.push(name);
                }
            }
        }
    }
    assert!(hooks.len() >= 5, "{hooks:?}");
    let environment = roff
        .split(".SH ENVIRONMENT")
        .nth(1)
        .expect("an ENVIRONMENT section");
    for name in &seen {
        assert!(
            environment.contains(name.as_str()),
            "{name} is not in ENVIRONMENT"
        );
    }
    for name in ["COLUMNS", "NO_COLOR"] {
        assert!(environment.contains(name), "{name}");
    }
    for name in &hooks {
        assert!(
            !roff.contains(name.as_str()),
            "the test hook {name} is in the manual"
        );
    }
}

#[test]
fn tables_narrower_than_forty_columns_are_lists_and_never_split_a_number() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    for (name, columns) in [("disk.json", "5"), ("sweep.json", "5"), ("disk.json", "39")] {
        let out = ioscope()
            .env("COLUMNS", columns)
            .arg("report")
            .arg(fixtures.join(name))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            !text.contains('┆'),
            "{name} at {columns}: a table drawn\n{text}"
        );
        assert!(
            text.contains("MB/s: ") || text.contains("MiB/s: "),
            "{name}\n{text}"
        );
        // Not one digit per line: no line is a lone fragment of a number.
        for line in text.lines() {
            let t = line.trim();
            assert!(
                t.is_empty() || t.len() > 2 || !t.chars().all(|c| c.is_ascii_digit() || c == ','),
                "{name} at {columns}: {line:?}\n{text}"
            );
        }
    }
}

#[test]
fn a_point_measured_once_says_n_1_instead_of_a_spread_of_nothing() {
    // The sweep fixture's 4 KiB point cut to one run, beside points of three.
    let mut doc = fixture_json("sweep.json");
    let m = doc["points"][0]["rate"]["median"].as_f64().unwrap();
    set_summary(&mut doc["points"][0]["rate"], m, m, m, 1);
    let text = report_text(&doc);
    let row = text
        .lines()
        .find(|l| l.contains("┆    4k ┆"))
        .expect("the 4 KiB row");
    assert!(row.contains(" n=1 ┆"), "{text}");
    assert!(!row.contains("±0.0%"), "{text}");
    let md = report_markdown(&doc);
    assert!(md.contains("2621.2 (n=1)"), "{md}");
    // The same for a pattern run once.
    let mut doc = fixture_json("patterns.json");
    let r = &mut doc["results"][0]["bytes_per_second"];
    let m = r["median"].as_f64().unwrap();
    set_summary(r, m, m, m, 1);
    let text = report_text(&doc);
    let row = text
        .lines()
        .find(|l| l.starts_with("│ write "))
        .expect("the write row");
    assert!(row.contains(" n=1 "), "{text}");
}
