//! What must never happen to the user's data or disk: every signal that ends ioscope stops
//! it cleanly, removing only its own files, and writers running at once never fill the disk
//! together. One test binary, a module per file.

#[path = "../common/mod.rs"]
mod common;

mod signals;
mod space;
