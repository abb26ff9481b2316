//! `ioscope disk`: the panel, the depth curve and the latency target, profiles and presets, the sync methods,
//! and the command attacked as a hostile user would. One test binary, a module per file.

#[path = "../common/mod.rs"]
mod common;

mod curve;
mod hostile;
mod mixes;
mod open_loop;
mod panel;
mod profiles;
mod sync_methods;
