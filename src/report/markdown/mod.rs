//! Markdown (GitHub-flavoured): a results document to paste into an issue or commit beside
//! the code, as hyperfine's `--export-markdown`. One generic renderer: [`table`] turns a
//! [`Table`] of display cells and a caption into a pipe table, [`document`] puts a title,
//! the one-sentence [`environment`] and the blocks together. Each result builds its tables
//! from the same typed result as its text and CSV (`results`), or, by default, from its CSV
//! table made readable by [`humanize`]: units in the headers, human units in the cells, and
//! `median (min–max)` where the CSV has the three columns.

use super::csv::Table;
use super::json::Provenance;
use crate::units::{MIB, format_block_size, format_size, group_thousands};
use std::fmt::Write;

/// Escapes text for Markdown: every ASCII character GFM could read as markup gets a
/// backslash (so `|` never ends a cell), and a line break becomes a space.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Whether a cell reads as a number (right-aligned): a digit first, after an optional sign.
fn numeric(cell: &str) -> bool {
    cell.trim_start_matches(['-', '+'])
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

/// A pipe table: the caption as a paragraph above it (when given), the header, a separator
/// (`---:` for columns whose every cell is a number or `-`), then the rows. Cells are
/// escaped; rows shorter than the header are padded with empty cells.
pub fn table(table: &Table, caption: Option<&str>) -> String {
    let mut out = String::new();
    if let Some(caption) = caption {
        let _ = writeln!(out, "{}\n", escape(caption));
    }
    let width = table.header.len();
    let row = |out: &mut String, cells: &mut dyn Iterator<Item = String>| {
        out.push('|');
        for cell in cells {
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    };
    row(&mut out, &mut table.header.iter().map(|h| escape(h)));
    row(
        &mut out,
        &mut (0..width).map(|col| {
            let cells: Vec<&str> = table
                .rows
                .iter()
                .filter_map(|r| r.get(col).map(String::as_str))
                .filter(|c| *c != "-")
                .collect();
            if !cells.is_empty() && cells.iter().all(|c| numeric(c)) {
                "---:".to_string()
            } else {
                "---".to_string()
            }
        }),
    );
    for cells in &table.rows {
        row(
            &mut out,
            &mut (0..width).map(|col| escape(cells.get(col).map_or("", String::as_str))),
        );
    }
    out
}

/// A bulleted list of escaped lines (notes, warnings), with a caption above it.
pub fn list(caption: &str, items: &[String]) -> String {
    let mut out = format!("{}\n\n", escape(caption));
    for item in items {
        let _ = writeln!(out, "- {}", escape(item));
    }
    out
}

/// A whole document: `# title`, the environment sentence, the command line in a code span,
/// then the blocks (tables, lists), one blank line apart.
pub fn document(title: &str, provenance: &Provenance, blocks: &[String]) -> String {
    let mut out = format!("# {}\n\n{}\n", escape(title), environment(provenance));
    if !provenance.command_line.is_empty() {
        // Printable: a file name in the command line may hold control characters.
        let line = crate::text::printable(&command_line(provenance));
        let _ = writeln!(out, "\nCommand: {}", code(&line));
    }
    for block in blocks {
        out.push('\n');
        out.push_str(block);
    }
    out
}

/// The command line as a shell would need it typed: arguments with spaces or quotes quoted.
pub(crate) fn command_line(p: &Provenance) -> String {
    let mut args = p.command_line.iter().map(|a| {
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./,:=@+%".contains(c));
        if plain {
            a.clone()
        } else {
            format!("'{}'", a.replace('\'', r"'\''"))
        }
    });
    // The program as it was invoked is a path on that machine; its name says enough.
    let program = args.next().map(|p| {
        std::path::Path::new(&p)
            .file_name()
            .map_or(p.clone(), |n| n.to_string_lossy().into_owned())
    });
    program
        .into_iter()
        .chain(args)
        .collect::<Vec<_>>()
        .join(" ")
}

/// A code span that holds any text: delimited by one more backtick than the text's longest
/// run of them.
fn code(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    let pad = if longest > 0 { " " } else { "" };
    format!("{fence}{pad}{text}{pad}{fence}")
}

/// How and where a result was measured, in one sentence: "Measured by ioscope 0.1.0 (commit
/// abc1234) on Linux 6.1.0, 2 × Intel Xeon, 23.4 GiB RAM, ext4 on /dev/vda (not rotational,
/// read-ahead 128 KiB), 2026-11-23." Facts the document lacks are left out.
pub fn environment(p: &Provenance) -> String {
    let env = &p.environment;
    let mut tool = format!("ioscope {}", p.version);
    if let Some(commit) = &p.commit {
        let _ = write!(tool, " (commit {commit})");
    }
    let mut parts = Vec::new();
    if !env.kernel.is_empty() {
        parts.push(format!("Linux {}", env.kernel));
    }
    match (env.cpus, env.cpu_model.is_empty()) {
        (0, _) => {}
        (n, true) => parts.push(format!("{n} CPUs")),
        (n, false) => parts.push(format!("{n} × {}", env.cpu_model)),
    }
    if let Some(load) = load(env) {
        parts.push(load);
    }
    if env.memory_bytes > 0 {
        parts.push(format!("{} RAM", format_size(env.memory_bytes)));
    }
    let s = &env.storage;
    if let Some(fs) = &s.filesystem {
        let mut storage = fs.clone();
        if let Some(source) = &s.mount_source {
            let _ = write!(storage, " on {source}");
        }
        let mut details = Vec::new();
        if let Some(r) = s.rotational {
            details.push(if r { "rotational" } else { "not rotational" }.to_string());
        }
        if let Some(kb) = s.read_ahead_kb {
            details.push(format!("read-ahead {kb} KiB"));
        }
        if !details.is_empty() {
            let _ = write!(storage, " ({})", details.join(", "));
        }
        parts.push(storage);
    }
    if let Some(date) = &p.date {
        parts.push(date.clone());
    }
    let place = if parts.is_empty() {
        String::new()
    } else {
        format!(" on {}", parts.join(", "))
    };
    escape(&format!("Measured by {tool}{place}."))
}

/// The machine's load when the result was measured: "load 1.93 on 2 cores (1-minute
/// average)"; `None` for a document saved without it.
pub fn load(env: &crate::measure::env::Environment) -> Option<String> {
    let load = env.load_1m?;
    Some(match env.cores_online {
        Some(cores) => format!(
            "load {load:.2} on {cores} core{} (1-minute average)",
            if cores == 1 { "" } else { "s" }
        ),
        None => format!("load {load:.2} (1-minute average)"),
    })
}

/// How one CSV column is shown: its unit, and how a raw cell becomes a human one.
#[derive(Clone, Copy)]
enum Unit {
    MibPerSecond,
    CallsPerSecond,
    Milliseconds,
    Size,
    BlockSize,
    Percent,
    Plain,
}

impl Unit {
    /// The unit of a raw column, from its name, and the name with the unit's words taken out.
    fn of(name: &str) -> (Unit, String) {
        let strip = |words: &str| {
            let rest = name.replace(words, "").replace("__", "_");
            rest.trim_matches('_').replace('_', " ")
        };
        if name.contains("calls_per_second") {
            (Unit::CallsPerSecond, strip("calls_per_second"))
        } else if name.contains("bytes_per_second") {
            (Unit::MibPerSecond, strip("bytes_per_second"))
        } else if name.contains("seconds") {
            (Unit::Milliseconds, strip("seconds"))
        } else if name.contains("share") {
            (Unit::Percent, strip("share"))
        } else if name == "record" {
            // Beside `records` (a count): the size of one.
            (Unit::BlockSize, "record size".to_string())
        } else if ["block_size", "size"].contains(&name) {
            (Unit::BlockSize, name.replace('_', " "))
        } else if name == "bytes" || name.ends_with("_bytes") || name.starts_with("bytes_") {
            (Unit::Size, strip("bytes"))
        } else {
            (Unit::Plain, name.replace('_', " "))
        }
    }

    /// The header: the words left, with the unit in parentheses (or the unit alone).
    fn header(self, words: &str) -> String {
        let unit = match self {
            Unit::MibPerSecond => "MiB/s",
            Unit::CallsPerSecond => "calls/s",
            Unit::Milliseconds => "ms",
            Unit::Percent => "%",
            Unit::Size if words.is_empty() => return "size".to_string(),
            Unit::Size | Unit::BlockSize | Unit::Plain => return words.to_string(),
        };
        if words.is_empty() {
            unit.to_string()
        } else {
            format!("{words} ({unit})")
        }
    }

    /// A raw cell in this unit; an empty cell is `-`, and one that does not parse is kept.
    fn cell(self, raw: &str) -> String {
        if raw.is_empty() {
            return "-".to_string();
        }
        let float = raw.parse::<f64>();
        let int = raw.parse::<u64>();
        match (self, float, int) {
            (Unit::MibPerSecond, Ok(v), _) => format!("{:.1}", v / MIB as f64),
            (Unit::CallsPerSecond, Ok(v), _) => group_thousands(v.max(0.0).round() as u64),
            (Unit::Milliseconds, Ok(v), _) => format!("{:.3}", v * 1e3),
            (Unit::Percent, Ok(v), _) => format!("{:.1}", v * 100.0),
            (Unit::Size, _, Ok(v)) => format_size(v),
            // Under 1 KiB the compact form is a bare number: say it is bytes.
            (Unit::BlockSize, _, Ok(v)) if v < 1024 => format_size(v),
            (Unit::BlockSize, _, Ok(v)) => format_block_size(v),
            _ => raw.to_string(),
        }
    }
}

/// A CSV table made readable: each column's unit moves into its header (MiB/s, calls/s,
/// ms, %), cells get human units, `X_median`, `X_min` and `X_max` become one column
/// `median (min–max)`, and empty cells become `-`.
pub fn humanize(raw: &Table) -> Table {
    let find = |name: &str| raw.header.iter().position(|h| h == name);
    // Each shown column: the raw column it comes from, and the min and max beside it.
    let mut shown: Vec<(usize, Option<(usize, usize)>)> = Vec::new();
    let mut merged = Vec::new();
    for (i, name) in raw.header.iter().enumerate() {
        if merged.contains(&i) {
            continue;
        }
        let spread = name
            .strip_suffix("_median")
            .and_then(|base| Some((find(&format!("{base}_min"))?, find(&format!("{base}_max"))?)));
        if let Some((lo, hi)) = spread {
            merged.extend([lo, hi]);
        }
        shown.push((i, spread));
    }
    shown.retain(|(i, _)| !merged.contains(i));
    let header = shown
        .iter()
        .map(|&(i, spread)| {
            let name = &raw.header[i];
            let base = if spread.is_some() {
                name.trim_end_matches("_median")
            } else {
                name
            };
            let (unit, words) = Unit::of(base);
            let header = unit.header(&words);
            if spread.is_some() {
                format!("{header}, median (min–max)")
            } else {
                header
            }
        })
        .collect();
    let rows = raw
        .rows
        .iter()
        .map(|row| {
            let raw_cell = |i: usize| row.get(i).map_or("", String::as_str);
            shown
                .iter()
                .map(|&(i, spread)| {
                    let name = &raw.header[i];
                    let (unit, _) = Unit::of(name.trim_end_matches("_median"));
                    let median = unit.cell(raw_cell(i));
                    match spread {
                        Some((lo, hi)) => format!(
                            "{median} ({}–{})",
                            unit.cell(raw_cell(lo)),
                            unit.cell(raw_cell(hi))
                        ),
                        None => median,
                    }
                })
                .collect()
        })
        .collect();
    Table { header, rows }
}

pub(crate) fn header(names: &[&str]) -> Vec<String> {
    names.iter().map(|h| h.to_string()).collect()
}

/// `median (min–max)`, each in MiB/s.
pub(crate) fn rate_spread(median: f64, min: f64, max: f64) -> String {
    format!(
        "{} ({}–{})",
        crate::report::cells::rate(median),
        crate::report::cells::rate(min),
        crate::report::cells::rate(max)
    )
}

/// A percentage without its sign (the header carries `%`).
pub(crate) fn percent(fraction: f64) -> String {
    crate::report::cells::pct(fraction)
        .trim_end_matches('%')
        .to_string()
}

/// A flag after a cell whose run did not start in its cache state.
pub(crate) fn flagged(cell: String, ok: bool) -> String {
    if ok { cell } else { format!("{cell} (!)") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::env::{Environment, Storage};

    fn provenance() -> Provenance {
        Provenance {
            version: "0.1.0".into(),
            commit: Some("abc1234".into()),
            date: Some("2026-11-23".into()),
            command_line: vec![
                "/usr/bin/ioscope".into(),
                "sweep".into(),
                "my file".into(),
                "--block-sizes".into(),
                "4k,1m".into(),
            ],
            environment: Environment {
                kernel: "6.1.0".into(),
                cpu_model: "Intel Xeon".into(),
                cpus: 2,
                memory_bytes: 24 << 30,
                path: "my file".into(),
                storage: Storage {
                    filesystem: Some("ext4".into()),
                    mount_source: Some("/dev/vda".into()),
                    rotational: Some(false),
                    read_ahead_kb: Some(128),
                    ..Storage::default()
                },
                ..Environment::default()
            },
        }
    }

    #[test]
    fn a_fixed_table_and_environment_render_to_fixed_text() {
        let t = Table {
            header: vec!["block".into(), "MiB/s, median (min–max)".into()],
            rows: vec![
                vec!["4k".into(), "1234.5 (1200.1–1250.0)".into()],
                vec!["a|b".into(), "-".into()],
            ],
        };
        let text = document(
            "ioscope sweep",
            &provenance(),
            &[table(&t, Some("read my_file"))],
        );
        assert_eq!(
            text,
            "# ioscope sweep\n\
             \n\
             Measured by ioscope 0.1.0 (commit abc1234) on Linux 6.1.0, 2 × Intel Xeon, 24 GiB RAM, ext4 on /dev/vda (not rotational, read-ahead 128 KiB), 2026-11-23.\n\
             \n\
             Command: `ioscope sweep 'my file' --block-sizes 4k,1m`\n\
             \n\
             read my\\_file\n\
             \n\
             | block | MiB/s, median (min–max) |\n\
             | --- | ---: |\n\
             | 4k | 1234.5 (1200.1–1250.0) |\n\
             | a\\|b | - |\n"
        );
    }

    #[test]
    fn the_load_and_the_cores_follow_the_cpu_when_the_document_has_them() {
        let mut p = provenance();
        p.environment.load_1m = Some(1.934);
        p.environment.cores_online = Some(2);
        assert!(
            environment(&p)
                .contains("2 × Intel Xeon, load 1.93 on 2 cores (1-minute average), 24 GiB RAM"),
            "{}",
            environment(&p)
        );
        p.environment.cores_online = None;
        assert!(environment(&p).contains("Xeon, load 1.93 (1-minute average), 24 GiB"));
    }

    #[test]
    fn missing_facts_are_left_out_of_the_sentence() {
        let p = Provenance {
            version: "0.1.0".into(),
            ..Provenance::default()
        };
        assert_eq!(environment(&p), "Measured by ioscope 0.1.0.");
    }

    #[test]
    fn a_code_span_holds_backticks() {
        assert_eq!(code("a`b"), "`` a`b ``");
        assert_eq!(code("ab"), "`ab`");
    }

    #[test]
    fn csv_columns_become_readable_with_units_in_headers_and_spreads_merged() {
        let raw = Table {
            header: [
                "test",
                "record",
                "bytes_per_second_median",
                "bytes_per_second_min",
                "bytes_per_second_max",
                "fsync_seconds",
                "calls_per_second",
                "resident_share_before",
                "device_read_bytes",
            ]
            .map(String::from)
            .to_vec(),
            rows: vec![
                [
                    "read", "65536", "2097152", "1048576", "3145728", "0.0015", "1234.4", "1",
                    "4096",
                ]
                .map(String::from)
                .to_vec(),
                ["write", "4096", "1", "1", "1", "", "", "", ""]
                    .map(String::from)
                    .to_vec(),
            ],
        };
        let t = humanize(&raw);
        assert_eq!(
            t.header,
            [
                "test",
                "record size",
                "MiB/s, median (min–max)",
                "fsync (ms)",
                "calls/s",
                "resident before (%)",
                "device read",
            ]
        );
        assert_eq!(
            t.rows[0],
            [
                "read",
                "64k",
                "2.0 (1.0–3.0)",
                "1.500",
                "1,234",
                "100.0",
                "4 KiB"
            ]
        );
        assert_eq!(t.rows[1][3..], ["-", "-", "-", "-"]);
    }
}
