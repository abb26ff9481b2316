//! `ioscope study` and the studies of several media side by side (`report A B C -o
//! compare.html`), the disk panel per medium among them. One test binary, a module per file.

#[path = "../common/mod.rs"]
mod common;

mod media;
mod media_disk;
mod study;
