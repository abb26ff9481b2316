//! What each command produces: its result types (the fields its JSON document carries,
//! with their serde derives) and the small pure functions on them that both the command and
//! its view use. Below `report/` (which renders them) and `cmd/` (which builds them), so a
//! view names no command; a result names no command and no view.

pub mod baseline;
pub mod cache;
pub mod calibrate;
pub mod compare;
pub mod disk;
pub mod disk_curve;
pub mod disk_fsync;
pub mod disk_rates;
pub mod disk_sync_methods;
pub mod fast;
pub mod figures;
pub mod grade;
pub mod mpi;
pub mod patterns;
pub mod run;
pub mod study;
pub mod sweep;
pub mod syscalls;
pub mod trace;
pub mod transfer;
