//! What `ioscope report` and every output make of a result: exact outputs kept in
//! tests/golden (`golden`), saved documents rendered again, sentences that follow the numbers,
//! output files, what a person reads (80 columns, a browser, A4), and the ecosystem
//! (Markdown, completions, manual page, NO_COLOR). One test binary, a module per file.
//!
//! To accept a change of the golden files on purpose:
//! `IOSCOPE_BLESS=1 cargo test --release --test report golden`, then review the diff.

#[path = "../common/mod.rs"]
mod common;

mod documents;
mod ecosystem;
mod golden;
mod outputs;
mod readable;
mod sentences;
mod widths;
