//! ioscope: measure, explain and verify file and storage I/O performance on Linux.
//!
//! The binary is a thin shell over this library: `cli` (syntax) → `options` (meaning) →
//! `cmd` (orchestration) → `engine` (moving bytes) and `measure` (clocks, counters, cache),
//! which returns a type of `results`, rendered by `report`. Tests and benches call the
//! library directly. The layer order is CONTRIBUTING.md's, checked by `tests/layers.rs`.

#![warn(missing_docs)]

pub mod app;
pub mod checksum;
pub mod cli;
pub mod cmd;
pub mod engine;
pub mod error;
pub mod files;
pub mod harness;
pub mod hooks;
pub mod interrupt;
pub mod measure;
pub mod options;
pub mod report;
pub mod results;
pub mod text;
pub mod trace;
pub mod transfer;
pub mod units;
pub mod warning;
pub mod workload;
