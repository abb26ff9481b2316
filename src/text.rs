//! Text that came from outside — a file name, a peer's message, a string in a saved
//! document, a traced program's path — made safe to print: control characters (newlines,
//! terminal escapes, BEL, DEL) and the invisible characters that reorder or break lines
//! (bidirectional overrides and isolates, direction marks, line and paragraph separators)
//! are written as escapes (`\u{1b}`, `\n`, `\u{202e}`), so nothing printed can forge a line
//! of output, drive the terminal or make a name read as another. Every printed name goes
//! through here.

use std::ffi::OsStr;
use std::path::Path;

/// Whether `c` is escaped by [`printable`]: a control character (C0, DEL, C1), or one of
/// the format and separator characters that reorder or break the text around them
/// (U+061C, U+200E, U+200F, U+2028, U+2029, U+202A–U+202E, U+2066–U+2069), and the
/// invisible ones that make a name read as another (U+200B zero width space, U+FEFF).
pub fn escaped(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061c}'
                | '\u{200b}'
                | '\u{feff}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
        )
}

/// `text` with its control characters and its line-breaking or reordering format
/// characters escaped (`\n`, `\u{1b}`, `\u{202e}`); the rest (any script) kept as it is.
pub fn printable(text: &str) -> String {
    if !text.chars().any(escaped) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if escaped(c) {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `text` made printable (see [`printable`]) and, past `chars` characters, cut short with
/// an ellipsis and its length: what a message echoes of a text that may be any size.
pub fn shortened(text: &str, chars: usize) -> String {
    let count = text.chars().count();
    if count <= chars {
        return printable(text);
    }
    let head: String = text.chars().take(chars).collect();
    format!("{}… ({count} characters)", printable(&head))
}

/// A name from the system as text without losing it: valid UTF-8 kept exactly as it is,
/// and each byte that is not UTF-8 written as `\xNN` (instead of being replaced, so two
/// names that differ in such bytes stay apart). Not yet printable: see [`printable`].
pub fn lossless(name: &OsStr) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

/// A path made printable: control characters escaped as by [`printable`], and bytes that
/// are not UTF-8 written as `\xNN` (instead of being replaced, so two names stay apart).
pub fn printable_path(path: &Path) -> String {
    printable(&lossless(path.as_os_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("ünï/ok"), "ünï/ok");
        assert_eq!(printable("a\u{1b}[2J\nb\u{7f}"), "a\\u{1b}[2J\\nb\\u{7f}");
        assert_eq!(printable("c1 \u{9b}31m"), "c1 \\u{9b}31m");
    }

    #[test]
    fn characters_that_reorder_or_break_lines_are_escaped() {
        // A right-to-left override makes "txt.exe" read as "exe.txt"; isolates, marks and
        // the Unicode line and paragraph separators are escaped too.
        assert_eq!(printable("a\u{202e}txt.exe"), "a\\u{202e}txt.exe");
        for c in [
            '\u{061c}', '\u{200e}', '\u{200f}', '\u{2028}', '\u{2029}', '\u{202a}', '\u{202b}',
            '\u{202c}', '\u{202d}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
        ] {
            let shown = printable(&format!("x{c}y"));
            assert_eq!(shown, format!("x\\u{{{:x}}}y", u32::from(c)));
        }
        // Joiners and other scripts' letters are text, kept as they are.
        assert_eq!(printable("שלום \u{200d} ok"), "שלום \u{200d} ok");
    }

    #[test]
    fn a_path_that_is_not_utf8_keeps_its_bytes_as_escapes() {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"a\xff\x07b");
        assert_eq!(printable_path(Path::new(name)), "a\\xff\\u{7}b");
        assert_eq!(lossless(name), "a\\xff\u{7}b");
        assert_ne!(
            lossless(OsStr::from_bytes(b"bad\xff")),
            lossless(OsStr::from_bytes(b"bad\xfe"))
        );
        assert_eq!(lossless(OsStr::new("plain ü")), "plain ü");
    }
}
