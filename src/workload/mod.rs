//! Workloads: what bytes to write and in what order to touch them.

pub mod data;
