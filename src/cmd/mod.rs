//! Subcommands: each plans the work, runs engines from the table under the measuring
//! harness, and returns a typed result. Nothing here prints.

pub mod calibrate;
pub mod caveats;
pub mod coldwarm;
pub mod compare;
pub mod disk;
pub mod disk_curve;
pub mod disk_fsync;
pub mod disk_rates;
pub mod disk_sync_methods;
pub mod fast;
pub mod grade;
pub mod inplace;
pub mod mpi;
#[cfg(feature = "mpi")]
pub mod mpi_world;
pub mod patterns;
pub mod report;
pub mod run;
pub mod study;
pub mod sweep;
pub mod syscalls;
pub mod trace;
pub mod transfer;
