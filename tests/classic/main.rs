//! The measuring commands and what they stand on: `run`, `calibrate`, `sweep` (with `cache`,
//! `syscalls`), `fast`, `compare`, `patterns`, latency and `--series` on them, the rules
//! they share, verification in place, the engines and the harness through the library, and
//! what could make a figure wrong (honesty). One test binary (as ripgrep's `tests/tests.rs`):
//! a module per file.

#[path = "../common/mod.rs"]
mod common;

mod calibrate;
mod compare;
mod engines;
mod fast;
mod harness;
mod honesty;
mod latency;
mod patterns;
mod policy;
mod repeats;
mod run;
mod series;
mod sweep;
mod verify_inplace;
