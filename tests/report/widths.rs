//! The tables of `disk`, `disk --depth-curve`, `sweep`, `cache`, `syscalls`, `compare` and
//! `patterns` at a terminal's width: no line wider than it, and every number of the full
//! table whole in the fitted text, or its column named as hidden; below the floor, a list
//! with every number whole.

use crate::common::{fixture_file, ioscope};

/// The fixtures whose tables are fitted to the width by one column list.
const WIDE: &[&str] = &[
    "disk",
    "disk-curve",
    "disk-rates",
    "sweep",
    "sweep-write",
    "cache",
    "syscalls",
    "compare",
    "patterns",
    // The study, whose summary's cells are the longest.
    "study-sentences",
];

/// `ioscope report` of `name`'s fixture with `$COLUMNS` (none: no width).
fn text(name: &str, columns: Option<usize>) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = ioscope();
    if let Some(c) = columns {
        cmd.env("COLUMNS", c.to_string());
    }
    let out = cmd
        .arg("report")
        .arg(fixture_file(name, dir.path()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{name}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// The cells of a drawn row (`│ a ┆ b │`), trimmed.
fn cells(line: &str) -> Vec<String> {
    line.trim()
        .trim_start_matches('│')
        .trim_end_matches('│')
        .split('┆')
        .map(|c| c.trim().to_string())
        .collect()
}

/// Each drawn table of `text` as its heading and rows (drawn without a width: one line a row).
fn tables(text: &str) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('┌') {
            i += 1;
            continue;
        }
        let header = cells(lines[i + 1]);
        let mut rows = Vec::new();
        i += 3;
        while i < lines.len() && lines[i].starts_with('│') {
            rows.push(cells(lines[i]));
            i += 1;
        }
        out.push((header, rows));
    }
    out
}

/// The numbers in a cell: its words made of digits, `,` and `.` (units and signs apart).
fn numbers(cell: &str) -> Vec<String> {
    cell.split(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
        .map(|w| w.trim_matches(['.', ',']))
        .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
        .map(str::to_string)
        .collect()
}

/// Whether `number` stands whole in `text`: not a part of a longer number.
fn whole(text: &str, number: &str) -> bool {
    text.match_indices(number).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + number.len()..].chars().next();
        let part = |c: Option<char>| c.is_some_and(|c| c.is_ascii_digit() || c == ',' || c == '.');
        // A number ending a sentence (`4.`) is whole.
        let after_ok = !part(after)
            || (after == Some('.')
                && !text[at + number.len() + 1..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit()));
        !part(before) && after_ok
    })
}

/// The names a fitted text says it hid.
fn hidden(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once(" hidden — "))
        .flat_map(|(names, _)| names.split(", ").map(str::to_string).collect::<Vec<_>>())
        .collect()
}

#[test]
fn at_80_columns_no_line_is_wider_and_every_number_is_whole_or_its_column_named_hidden() {
    for name in WIDE {
        let full = text(name, None);
        let fitted = text(name, Some(80));
        for line in fitted.lines() {
            assert!(
                line.chars().count() <= 80,
                "{name}: {} columns: {line}\n{fitted}",
                line.chars().count()
            );
        }
        let gone = hidden(&fitted);
        for (header, rows) in tables(&full) {
            for row in rows {
                for (k, cell) in row.iter().enumerate() {
                    if gone.contains(&header[k]) {
                        continue;
                    }
                    for n in numbers(cell) {
                        assert!(
                            whole(&fitted, &n),
                            "{name}: {n} ({}) is not whole at 80 columns\n{fitted}",
                            header[k]
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn at_5_columns_every_rows_name_and_figures_are_whole() {
    // The study's summary is a list there too, its long labels wrapped between words.
    for name in WIDE.iter().filter(|n| !n.starts_with("study")) {
        let full = text(name, None);
        let narrow = text(name, Some(5));
        assert!(!narrow.contains('┆'), "{name}: a table drawn\n{narrow}");
        for (_, rows) in tables(&full) {
            for row in rows {
                assert!(narrow.contains(&row[0]), "{name}: {}\n{narrow}", row[0]);
                for n in row.iter().flat_map(|c| numbers(c)) {
                    assert!(whole(&narrow, &n), "{name}: {n}\n{narrow}");
                }
            }
        }
    }
}

#[test]
fn wide_keeps_every_column_at_any_width() {
    for name in WIDE {
        let fitted = text(name, Some(80));
        let dir = tempfile::tempdir().unwrap();
        let out = ioscope()
            .env("COLUMNS", "80")
            .arg("report")
            .arg(fixture_file(name, dir.path()))
            .arg("--wide")
            .output()
            .unwrap();
        let wide = String::from_utf8(out.stdout).unwrap();
        assert!(hidden(&wide).is_empty(), "{name}\n{wide}");
        if !hidden(&fitted).is_empty() {
            assert!(
                wide.lines().any(|l| l.chars().count() > 80),
                "{name}\n{wide}"
            );
        }
    }
}

/// `report` of the disk fixture at 80 columns, `--verbose` or not.
fn disk_text(verbose: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = ioscope();
    cmd.env("COLUMNS", "80")
        .arg("report")
        .arg(fixture_file("disk", dir.path()));
    if verbose {
        cmd.arg("--verbose");
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn disk_ends_with_its_read_write_grid_on_the_last_screen_and_keeps_details_for_verbose() {
    let plain = disk_text(false);
    let lines: Vec<&str> = plain.lines().collect();
    // The grid is the last thing printed, whole within the last 24 lines.
    assert!(lines.last().unwrap().starts_with('└'), "{plain}");
    let top = lines.iter().rposition(|l| l.starts_with('┌')).unwrap();
    assert!(lines.len() - top <= 24, "{plain}");
    let grid = lines[top..].join("\n");
    for word in ["read", "write", "MB/s", "IOPS", "p99"] {
        assert!(grid.contains(word), "{word}\n{plain}");
    }
    // One line per panel row, its read and write side by side.
    assert_eq!(
        lines[top..]
            .iter()
            .filter(|l| l.contains("SEQ1M Q8T1"))
            .count(),
        1,
        "{plain}"
    );
    assert!(!plain.contains("device's view ("), "{plain}");
    assert!(!plain.lines().any(|l| l.starts_with("queue ")), "{plain}");
    assert!(plain.contains("--verbose"), "{plain}");

    let verbose = disk_text(true);
    assert!(verbose.contains("device's view ("), "{verbose}");
    assert!(
        verbose
            .lines()
            .any(|l| l.starts_with("queue     SEQ1M Q8T1 read")),
        "{verbose}"
    );
    // The full table last: a row per direction, MiB/s among its columns.
    let lines: Vec<&str> = verbose.lines().collect();
    let top = lines.iter().rposition(|l| l.starts_with('┌')).unwrap();
    let table = lines[top..].join("\n");
    assert!(table.contains("MiB/s"), "{verbose}");
    assert_eq!(
        lines[top..]
            .iter()
            .filter(|l| l.contains("SEQ1M Q8T1"))
            .count(),
        2,
        "{verbose}"
    );
    for line in &lines {
        assert!(line.chars().count() <= 80, "{line}\n{verbose}");
    }
}

#[test]
fn at_40_columns_no_line_is_wider_but_a_word_that_cannot_break() {
    for name in WIDE {
        let fitted = text(name, Some(40));
        for line in fitted.lines() {
            let wide = line.chars().count() > 40;
            assert!(
                !wide || line.split_whitespace().any(|w| w.chars().count() > 30),
                "{name}: {} columns: {line}\n{fitted}",
                line.chars().count()
            );
        }
    }
}

#[test]
fn the_study_ends_with_its_answer_the_summary_then_the_verdict() {
    // At 80 columns what each part did comes first; the summary's table and the
    // verification verdict are the last lines, so the last screen holds the answer.
    let fitted = text("study-sentences", Some(80));
    let lines: Vec<&str> = fitted.lines().collect();
    let verdict = lines
        .iter()
        .position(|l| l.starts_with("every read's XOR"))
        .unwrap_or_else(|| panic!("no verdict\n{fitted}"));
    assert!(
        lines[verdict + 1..].iter().all(|l| l.starts_with("  ")),
        "only the verdict's own lines after it\n{fitted}"
    );
    let bottom = lines.iter().rposition(|l| l.starts_with('└')).unwrap();
    assert_eq!(bottom + 1, verdict, "{fitted}");
    let top = lines.iter().position(|l| l.starts_with('┌')).unwrap();
    assert!(
        lines[..top].iter().any(|l| l.starts_with("patterns")),
        "the parts come before the summary\n{fitted}"
    );
    assert!(
        lines.len() - top <= 24,
        "{} lines from the summary on\n{fitted}",
        lines.len() - top
    );
}
