//! The terminal the text goes to: how wide it is, and text made to fit it.
//!
//! The width is the terminal's own where the stream is one, else `$COLUMNS`, else none: a
//! pipe or a file gets whole lines. That is what clap's help does (ripgrep's and hyperfine's
//! `--help`: the terminal, then `$COLUMNS`), and ripgrep's results (never wrapped for a
//! pipe), so `ioscope … | less -S` and saved output keep one row per line, while
//! `COLUMNS=80 ioscope … > file` asks for 80. Tables are arranged to the width by
//! comfy-table (its dynamic arrangement wraps the widest cells); every other line longer than
//! the width is wrapped by `textwrap` with a hanging indent: under the value of a
//! `label   value` line, two columns in from the line's own indent otherwise.

use std::io::IsTerminal;
use std::sync::OnceLock;

/// Which stream the text is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Results.
    Stdout,
    /// Progress, warnings and notes.
    Stderr,
}

/// No table or line is fitted to fewer columns than this: a narrower setting is taken as
/// this one for lines, and tables are written as lists (`name: value` lines), which a
/// column of one digit per line would not be.
pub const MIN_WIDTH: usize = 40;

/// The width to fit `stream`'s text to, if any (see the module's note), never less than
/// [`MIN_WIDTH`].
pub fn width(stream: Stream) -> Option<usize> {
    given_width(stream).map(|w| w.max(MIN_WIDTH))
}

/// The width of `stream` as the terminal or `$COLUMNS` gives it, however narrow.
fn given_width(stream: Stream) -> Option<usize> {
    static OUT: OnceLock<Option<usize>> = OnceLock::new();
    static ERR: OnceLock<Option<usize>> = OnceLock::new();
    let cell = match stream {
        Stream::Stdout => &OUT,
        Stream::Stderr => &ERR,
    };
    *cell.get_or_init(|| {
        let own = match stream {
            Stream::Stdout => {
                let out = std::io::stdout();
                out.is_terminal()
                    .then(|| terminal_size::terminal_size_of(&out))
                    .flatten()
            }
            Stream::Stderr => {
                let err = std::io::stderr();
                err.is_terminal()
                    .then(|| terminal_size::terminal_size_of(&err))
                    .flatten()
            }
        };
        own.map(|(w, _)| usize::from(w.0))
            .or_else(|| columns(std::env::var("COLUMNS").ok().as_deref()))
    })
}

/// Whether `--wide` was given: tables keep every column, whatever the width.
static WIDE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Sets `--wide`: tables keep every column at its natural width (lines are still wrapped).
pub fn set_wide(wide: bool) {
    WIDE.store(wide, std::sync::atomic::Ordering::Relaxed);
}

/// The width a result's table is fitted to ([`super::columns::text`]): none with `--wide`
/// or where stdout has no width; 0 (a list) below [`MIN_WIDTH`], as [`fit`] does for drawn
/// tables.
pub fn table_width() -> Option<usize> {
    if WIDE.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    given_width(Stream::Stdout).map(|w| if w < MIN_WIDTH { 0 } else { w })
}

/// `$COLUMNS` as a width: a positive whole number, or nothing.
pub fn columns(value: Option<&str>) -> Option<usize> {
    value?.trim().parse::<usize>().ok().filter(|&w| w > 0)
}

/// Whether `line` is a row of a drawn table (comfy-table has fitted it already).
fn is_table_row(line: &str) -> bool {
    line.trim_start()
        .starts_with(['│', '┌', '└', '├', '╞', '╭', '╰', '|', '+'])
}

/// A space no wrap breaks at: [`glued`] puts it after a number so that the number and its
/// unit (`32 KiB`, `23.84 ms`, `8 in flight`) stay on one line.
pub(crate) const GLUE: char = '\u{a0}';

/// `s` with every space after a word that ends in a digit made a [`GLUE`]: a number is
/// never parted from the word after it (its unit) when the cell wraps. So are the spaces
/// around a `+` before a number, so that a size such as `10 MiB + 3` stays whole. A path
/// that ends in a digit (`dir/.ioscope-disk-25913`) is not a number: it is not glued to
/// what follows.
pub(crate) fn glued(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    // Whether the word so far holds a `/`.
    let mut path = false;
    for (i, &c) in chars.iter().enumerate() {
        let last = i.checked_sub(1).map(|k| chars[k]);
        if c == ' ' && path {
            path = false;
            out.push(c);
            continue;
        }
        path = match c {
            ' ' => false,
            '/' => true,
            _ => path,
        };
        let plus_next = chars.get(i + 1) == Some(&'+')
            && chars.get(i + 2) == Some(&' ')
            && chars.get(i + 3).is_some_and(|d| d.is_ascii_digit());
        let after_plus = last == Some('+') && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit());
        if c == ' ' && (last.is_some_and(|l: char| l.is_ascii_digit()) || plus_next || after_plus) {
            out.push(GLUE);
        } else {
            out.push(c);
        }
    }
    out
}

/// The column a wrapped `line` continues at: under the value of a `label   value` line (a
/// label then two or more spaces, within the first 16 columns), else two in from the line's
/// own indent; never more than half the width.
fn hanging_indent(line: &str, width: usize) -> usize {
    let lead = line.len() - line.trim_start_matches(' ').len();
    let rest = &line[lead..];
    let value = rest
        .char_indices()
        .take(16)
        .find(|&(i, c)| c == ' ' && rest[i..].starts_with("  "))
        .and_then(|(i, _)| {
            let after = rest[i..].len() - rest[i..].trim_start_matches(' ').len();
            let col = lead + i + after;
            (i > 0 && col < line.len()).then_some(col)
        });
    let indent = value.unwrap_or(lead + 2);
    if indent > width / 2 {
        2.min(width / 2)
    } else {
        indent
    }
}

/// `text` fitted to `width` columns: every line longer than it, but a table's, wrapped at
/// spaces with a hanging indent. A word longer than the width (a path) stays whole.
pub fn fit_to(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        if textwrap::core::display_width(body) <= width || is_table_row(body) {
            out.push_str(line);
            continue;
        }
        let lead = body.len() - body.trim_start_matches(' ').len();
        let hang = " ".repeat(hanging_indent(body, width));
        let first = " ".repeat(lead);
        let options = textwrap::Options::new(width)
            .initial_indent(&first)
            .subsequent_indent(&hang)
            .break_words(false)
            // Only at spaces: a flag (`--every-call`), a path or a range stays whole.
            .word_separator(textwrap::WordSeparator::AsciiSpace)
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        // A number keeps the word after it (its unit) on its line: `573 MiB/s`, `28.2 µs`.
        let glued = glued(body[lead..].trim_end());
        let wrapped = textwrap::wrap(&glued, options);
        for (i, l) in wrapped.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&l.replace('\u{a0}', " "));
        }
        out.push_str(end);
    }
    out
}

/// `text` fitted to `stream`'s width, or as it is where there is none; narrower than
/// [`MIN_WIDTH`], its tables are written as lists.
pub fn fit(text: &str, stream: Stream) -> String {
    match given_width(stream) {
        Some(w) if w < MIN_WIDTH => fit_to(&tables_as_lists(text), MIN_WIDTH),
        Some(w) => fit_to(text, w),
        None => text.to_string(),
    }
}

/// Whether a line of a drawn table holds cells (not a border).
fn is_content(line: &str) -> bool {
    line.starts_with(['│', '|'])
}

/// The cells of a drawn table's row (`│ a ┆ b │`), trimmed.
fn cells(line: &str) -> Vec<String> {
    let inner = line
        .trim()
        .trim_start_matches(['│', '|'])
        .trim_end_matches(['│', '|']);
    inner
        .split(['┆', '│', '|'])
        .map(|c| c.trim().to_string())
        .collect()
}

/// `text` with every drawn table written as a list: for each row, its first cell under the
/// first heading (`row: 1`), then each other non-empty cell under its heading, indented
/// (`  MB/s: 1,234`). Lines that are not a table's are kept as they are.
pub fn tables_as_lists(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        if !is_table_row(lines[i].trim_end_matches('\n')) {
            out.push_str(lines[i]);
            i += 1;
            continue;
        }
        let start = i;
        while i < lines.len() && is_table_row(lines[i].trim_end_matches('\n')) {
            i += 1;
        }
        let block: Vec<&str> = lines[start..i].iter().map(|l| l.trim()).collect();
        let (header, rows): (Vec<String>, Vec<Vec<String>>) =
            match block.iter().position(|l| l.starts_with('╞')) {
                Some(sep) => {
                    let mut header: Vec<String> = Vec::new();
                    for l in block[..sep].iter().copied().filter(|l| is_content(l)) {
                        for (k, c) in cells(l).into_iter().enumerate() {
                            match header.get_mut(k) {
                                Some(h) if !c.is_empty() => {
                                    h.push(' ');
                                    h.push_str(&c);
                                }
                                Some(_) => {}
                                None => header.push(c),
                            }
                        }
                    }
                    let rows = block[sep..]
                        .iter()
                        .copied()
                        .filter(|l| is_content(l))
                        .map(cells)
                        .collect();
                    (header, rows)
                }
                None => (
                    Vec::new(),
                    block
                        .iter()
                        .copied()
                        .filter(|l| is_content(l))
                        .map(cells)
                        .collect(),
                ),
            };
        for row in rows {
            for (k, cell) in row.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
                let indent = if k == 0 { "" } else { "  " };
                match header.get(k).filter(|h| !h.is_empty()) {
                    Some(h) => out.push_str(&format!("{indent}{h}: {cell}\n")),
                    None => out.push_str(&format!("{indent}{cell}\n")),
                }
            }
        }
    }
    out
}

/// A table arranged to the width of stdout (comfy-table wraps its widest cells), or left
/// at its natural width where there is none, or where it is narrower than [`MIN_WIDTH`]
/// (the table is then written as a list: see [`fit`]).
pub fn arrange(table: &mut comfy_table::Table) {
    if let Some(w) = given_width(Stream::Stdout).filter(|w| *w >= MIN_WIDTH) {
        table
            .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(u16::try_from(w).unwrap_or(u16::MAX));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_with_bytes_beyond_a_unit_is_never_parted() {
        let text = "on every size not a multiple of 4 (1 B, 3 B, 4095 B, 4097 B, 1 MiB + 2 and 10 MiB + 3) it printed";
        for width in 20..80 {
            let fitted = fit_to(text, width);
            assert!(
                !fitted.contains("+\n") && !fitted.contains("MiB\n"),
                "{width}: {fitted}"
            );
        }
        assert_eq!(glued("a + b"), "a + b");
    }

    #[test]
    fn columns_is_a_positive_whole_number_or_nothing() {
        assert_eq!(columns(Some("80")), Some(80));
        assert_eq!(columns(Some(" 132 ")), Some(132));
        assert_eq!(columns(Some("0")), None);
        assert_eq!(columns(Some("wide")), None);
        assert_eq!(columns(None), None);
    }

    #[test]
    fn a_labelled_line_continues_under_its_value() {
        let text = "write-read   The write's time includes its fsync (23.84 ms of 294.28 ms): before it the bytes had only reached the page cache.\n";
        let fitted = fit_to(text, 40);
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines.len() > 2, "{fitted}");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{fitted}");
        assert!(lines[0].starts_with("write-read   The"));
        for l in &lines[1..] {
            assert!(
                l.starts_with("             ") && !l.starts_with("              "),
                "{l:?}"
            );
        }
        assert!(fitted.ends_with('\n'));
    }

    #[test]
    fn an_explanation_hangs_two_columns_in_and_tables_and_short_lines_are_kept() {
        let text = "warm: Each read() costs about 765 ns whatever its size and bytes move at about 5497 MiB/s\nshort\n│ a ┆ very long table row that is wider than forty columns │\n";
        let fitted = fit_to(text, 40);
        let lines: Vec<&str> = fitted.lines().collect();
        assert!(lines[0].starts_with("warm: Each"));
        assert!(lines[1].starts_with("  ") && !lines[1].starts_with("   "));
        assert!(fitted.contains("\nshort\n"));
        assert!(fitted.contains("│ a ┆ very long table row that is wider than forty columns │"));
    }

    #[test]
    fn a_table_too_narrow_for_its_numbers_becomes_a_list() {
        let mut t = comfy_table::Table::new();
        t.load_style(comfy_table::presets::UTF8_FULL_CONDENSED);
        t.set_header(vec!["row", "MB/s", "p99"]);
        t.add_row(vec!["1 read", "1,234.5", "12"]);
        t.add_row(vec!["2 write", "987", ""]);
        let text = format!("before\n{t}\nafter\n");
        assert_eq!(
            tables_as_lists(&text),
            "before\nrow: 1 read\n  MB/s: 1,234.5\n  p99: 12\nrow: 2 write\n  MB/s: 987\nafter\n"
        );
    }

    #[test]
    fn a_wrapped_line_never_parts_a_number_from_its_unit() {
        let text = "before it the bytes had only reached the page cache, at 573 MiB/s; the fsync\n";
        for width in 40..70 {
            let fitted = fit_to(text, width);
            assert!(fitted.contains("573 MiB/s;"), "{width}: {fitted}");
            assert!(!fitted.contains('\u{a0}'));
        }
    }

    #[test]
    fn a_word_longer_than_the_width_stays_whole() {
        let path = "/a/very/long/path/that/no/terminal/of/forty/columns/holds/report.html";
        let fitted = fit_to(&format!("report: {path}\n"), 40);
        assert!(fitted.contains(path));
    }

    #[test]
    fn a_flag_a_hyphenated_path_or_a_range_is_never_broken_at_its_hyphen() {
        let text = "stops     only at the calls counted: a seccomp-bpf filter let the other calls run (--every-call stops at every call) over /tmp/my-data-file and 726–2068 MiB/s\n";
        for width in [40, 60, 72, 80] {
            let fitted = fit_to(text, width);
            for word in [
                "--every-call",
                "seccomp-bpf",
                "/tmp/my-data-file",
                "726–2068",
            ] {
                assert!(fitted.contains(word), "{word} at {width}:\n{fitted}");
            }
        }
    }
}
