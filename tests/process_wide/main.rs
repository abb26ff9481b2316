//! Library tests of process-wide state: the Ctrl-C flag (`ioscope::interrupt`) and the buffer
//! pool. A binary apart from the other library tests (tests/classic's harness and engines),
//! whose runs the flag would stop; and inside it one test at a time ([`alone`]), since a
//! flag raised by one would stop the others' runs.

#[path = "../common/mod.rs"]
mod common;

mod interrupted_cache;
mod interrupted_sweep;
mod pool;

/// Held for the whole of a test of this binary: the tests here run one at a time.
fn alone() -> std::sync::MutexGuard<'static, ()> {
    static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    // A test that failed holding it poisoned it; the others still run.
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}
