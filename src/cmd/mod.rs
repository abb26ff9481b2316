//! Subcommands: each plans the work, runs engines under the measuring harness, and
//! returns a report. Nothing here prints.

pub mod calibrate;
pub mod coldwarm;
pub mod compare;
pub mod fast;
pub mod harness;
pub mod run;
pub mod study;
pub mod sweep;
pub mod syscalls;

use crate::engine::buffer::AlignedBuffer;
use crate::report::progress::Progress;

/// A page-aligned buffer of `len` bytes whose pages are already touched, so first-touch
/// page faults stay out of the timed region.
pub fn touched_buffer(len: u64) -> AlignedBuffer {
    AlignedBuffer::new(len as usize)
}

/// The observer engines call between system calls: honours Ctrl-C and moves the bar.
pub fn observer(progress: &mut Progress) -> impl FnMut(u64) -> anyhow::Result<()> + '_ {
    move |bytes| {
        crate::interrupt::check()?;
        progress.set(bytes);
        Ok(())
    }
}
