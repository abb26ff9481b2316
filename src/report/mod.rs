//! Rendering: human text, JSON and the progress bar. Renderers return strings; only
//! [`emit`] and [`warn`] write, to stdout and stderr respectively.

pub mod csv;
pub mod exports;
pub mod json;
pub mod progress;
pub mod svg;
pub mod text;

use std::io::Write;

/// Writes a rendered result to stdout. A closed pipe (`| head`) is not an error.
pub fn emit(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// Writes one warning line to stderr.
pub fn warn(message: &str) {
    let _ = writeln!(std::io::stderr(), "warning: {message}");
}

/// Writes informational text (e.g. `--verbose` details) to stderr.
pub fn note(text: &str) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Writes the one error line of a failed command to stderr.
pub fn error(err: &anyhow::Error) {
    let _ = writeln!(std::io::stderr(), "error: {err:#}");
}
