//! Baselines: `--save-baseline`, `--baseline` and `--baseline-dir` on the measuring
//! commands, end to end (the verdict's statistics are unit tests beside the rule,
//! `measure::baseline` and `measure::verdict`). On the deterministic meter where the
//! command takes it, and no test depends on a timing. One test binary (as ripgrep's
//! `tests/tests.rs`): a module per file.

#[path = "../common/mod.rs"]
mod common;

mod commands;
mod compare;
mod moments;
mod storage;
