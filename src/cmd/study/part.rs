//! What a study part is: the half that runs, here, over the half that the page shows
//! (`report::views::part::PartView`, with `Kept`, its typed result). The list of parts is
//! `parts::PARTS`; a new part is a file under `parts/` implementing both and one line there.
//!
//! A part is a command run on the study's scratch file and that command's section of the
//! page, so its file names both its command (`cmd::`) and its view (`report::views::`): the
//! one place below `report/` that names a view, as `app.rs` is for whole commands.

use super::{Context, Outcome, StudyReport};
pub use crate::report::views::part::{Kept, PartView};
use anyhow::Result;

/// One part of the study, as it runs (what it shows is its [`PartView`]).
pub trait StudyPart: PartView {
    /// Whether every other part needs it (write-read: they read its file): then its failure
    /// ends the study instead of being recorded.
    fn required(&self) -> bool {
        false
    }

    /// Why it cannot run here, if it cannot.
    fn skip_reason(&self, _cx: &Context) -> Option<String> {
        None
    }

    /// Runs it into `report`: done, partial (interrupted after measuring some), or skipped
    /// when it turns out it cannot be measured here.
    fn run(&self, cx: &Context, report: &mut StudyReport) -> Result<Outcome>;
}
