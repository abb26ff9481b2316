//! One file per result: its [`Exportable`](super::view::Exportable) implementation (CSV
//! table, JSON schema, warnings, checks), its terminal text, its Markdown, its chart, its
//! study section and the sentences that explain it. Formats (`csv`, `json`, `markdown`,
//! `html`, `svg`, `text`) live one level up and name no command; a view may use any of them,
//! and no format imports a view. Adding a command costs one file here and one line in the
//! registry.

pub mod cache;
pub mod calibrate;
pub mod compare;
pub mod fast;
pub mod media;
pub mod mpi;
pub mod patterns;
pub mod run;
pub mod study;
pub mod sweep;
pub mod syscalls;
pub mod trace;
pub mod transfer;
