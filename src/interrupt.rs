//! Ctrl-C and SIGTERM: the handler only raises a flag; long loops poll it through
//! [`check`] and unwind with [`Failure::Interrupted`], so scratch-file guards run.

use crate::error::Failure;
use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler once per process; later calls do nothing.
pub fn install() {
    // An error here means a handler is already installed, which is what we want.
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
}

/// Raises the flag as Ctrl-C would (for tests, and for code that must stop the work).
pub fn request() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Lowers the flag again (tests only: a real interruption ends the process).
pub fn reset() {
    INTERRUPTED.store(false, Ordering::SeqCst);
}

/// True once the user asked to stop.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

/// Returns `Err(Failure::Interrupted)` once the user asked to stop.
pub fn check() -> anyhow::Result<()> {
    if requested() {
        Err(Failure::Interrupted.into())
    } else {
        Ok(())
    }
}
