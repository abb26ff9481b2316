//! Text that came from outside — a file name, a peer's message, a string in a saved
//! document, a traced program's path — made safe to print: control characters (newlines,
//! terminal escapes, BEL, DEL) are written as escapes (`\u{1b}`, `\n`), so nothing printed
//! can forge a line of output or drive the terminal. Every printed name goes through here.

use std::path::Path;

/// `text` with its control characters escaped; the rest (any script) kept as it is.
pub fn printable(text: &str) -> String {
    if !text.chars().any(char::is_control) {
        return text.to_string();
    }
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// A path made printable: control characters escaped as by [`printable`], and bytes that
/// are not UTF-8 written as `\xNN` (instead of being replaced, so two names stay apart).
pub fn printable_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let bytes = path.as_os_str().as_bytes();
    let mut out = String::with_capacity(bytes.len());
    for chunk in bytes.utf8_chunks() {
        out.push_str(&printable(chunk.valid()));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(printable("ünï/ok"), "ünï/ok");
        assert_eq!(printable("a\u{1b}[2J\nb\u{7f}"), "a\\u{1b}[2J\\nb\\u{7f}");
    }

    #[test]
    fn a_path_that_is_not_utf8_keeps_its_bytes_as_escapes() {
        use std::os::unix::ffi::OsStrExt;
        let name = std::ffi::OsStr::from_bytes(b"a\xff\x07b");
        assert_eq!(printable_path(Path::new(name)), "a\\xff\\u{7}b");
    }
}
