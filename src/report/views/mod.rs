//! One file per result: its [`Exportable`] implementation (CSV table, JSON schema, warnings,
//! checks), its terminal text, its Markdown, its chart, its study section and the sentences
//! that explain it. Formats (`csv`, `json`, `markdown`, `html`, `svg`, `text`) live one level
//! up and name no command; a view may use any of them, and no format imports a view.
//!
//! Adding a command costs one file here and one line in [`RESULTS`], the registry through
//! which `ioscope report` reads its saved results back.

pub mod cache;
pub mod calibrate;
pub mod compare;
pub mod disk;
pub mod disk_curve;
pub mod disk_fsync;
pub mod disk_mix;
pub mod disk_presets;
pub mod disk_rates;
pub mod disk_study;
pub mod disk_sync_methods;
pub mod fast;
pub mod grade;
pub mod media;
pub mod media_disk;
pub mod media_figures;
pub mod mpi;
pub mod mpi_io500;
pub mod over_time;
pub mod part;
pub mod patterns;
pub mod report;
pub mod run;
pub mod study;
pub mod sweep;
pub mod syscalls;
pub mod trace;
pub mod trace_clock;
pub mod transfer;

use self::report::Saved;
use super::view::{Exportable, schema};
use crate::error::ExitKind;
use crate::results;
use crate::results::study::StudyReport;
use anyhow::Result;

/// A result `ioscope report` reads back: its command, whose [`schema`] a saved document
/// names, and how such a document is rendered again.
pub struct Registered {
    /// The subcommand whose result this is ([`Exportable::COMMAND`]).
    pub command: &'static str,
    /// Renders a saved document of this schema again, in the formats it asks for.
    pub rerender: fn(Saved) -> Result<ExitKind>,
}

/// The entry of result `T`.
const fn result<T: Exportable>() -> Registered {
    Registered {
        command: T::COMMAND,
        rerender: report::again::<T>,
    }
}

/// Every result `ioscope report` renders again, one line each.
pub const RESULTS: &[Registered] = &[
    result::<results::run::RunReport>(),
    result::<results::calibrate::CalibrateReport>(),
    result::<results::fast::FastReport>(),
    result::<results::grade::GradeReport>(),
    result::<StudyReport>(),
    result::<results::compare::CompareReport>(),
    result::<results::sweep::SweepReport>(),
    result::<results::cache::CacheReport>(),
    result::<results::syscalls::SyscallsReport>(),
    result::<results::patterns::PatternsReport>(),
    result::<results::disk::DiskReport>(),
    result::<results::disk_curve::CurveReport>(),
    result::<results::disk_rates::RatesReport>(),
    result::<results::disk_fsync::FsyncReport>(),
    result::<results::disk_sync_methods::SyncMethodsReport>(),
    result::<results::transfer::TransferReport>(),
    result::<results::trace::TraceReport>(),
    result::<results::mpi::MpiReport>(),
    result::<results::mpi::io500::Io500Report>(),
];

/// The registered result whose schema is `name` (`ioscope/sweep/v2`), if any.
pub fn registered(name: &str) -> Option<&'static Registered> {
    RESULTS.iter().find(|r| schema(r.command) == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_command_is_registered_once() {
        for (i, r) in RESULTS.iter().enumerate() {
            assert!(
                RESULTS[i + 1..].iter().all(|o| o.command != r.command),
                "{} twice",
                r.command
            );
            assert_eq!(
                registered(&schema(r.command)).map(|x| x.command),
                Some(r.command)
            );
        }
    }
}
