//! The `ioscope` binary: parse, dispatch, print the one error, map it to an exit code.
//!
//! `main` is the C entry point (`no_main`): Rust's runtime set-up (stack-guard discovery
//! through /proc/self/maps, an alternate signal stack) is skipped, which is a measurable
//! part of `ioscope fast` on small files. What that set-up did that we need — ignoring
//! SIGPIPE so a closed pipe is an error we can handle quietly — is done here.
// The test harness brings its own entry point, so the C one exists only outside tests.
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::ffi::{c_char, c_int};

/// The process entry point.
#[cfg(not(test))]
#[unsafe(no_mangle)]
pub extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // SAFETY: setting a signal disposition before any thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    // Ctrl-C and SIGTERM are caught from the start: one that comes while the command line is
    // parsed is seen by the command, which still answers (with `--json`, a document).
    ioscope::interrupt::install();
    // Also skipped with the runtime: fds 0-2 reserved before anything opens a file.
    ioscope::files::reserve_standard_fds();
    let cli = ioscope::cli::Cli::parse_args();
    let code = match ioscope::app::run(cli) {
        Ok(kind) => {
            // Interrupted with a result to show (the text so far, or a document that says
            // it is incomplete): the closing line on stderr all the same, so that a
            // `--json` run's reader sees why it stopped (where stderr can take it at once:
            // a traced command's may be a pipe its reader no longer reads).
            if kind == ioscope::error::ExitKind::Interrupted {
                ioscope::report::warn_without_waiting(&format!(
                    "{}: incomplete output; unfinished files removed, others kept",
                    ioscope::interrupt::described()
                ));
            }
            kind.code(ioscope::interrupt::last_signal())
        }
        Err(err) => {
            let kind = ioscope::error::exit_kind(&err);
            if kind != ioscope::error::ExitKind::Interrupted {
                ioscope::report::error(&err);
            } else {
                ioscope::report::warn(&format!(
                    "{}: unfinished files removed, existing files left as they were",
                    ioscope::interrupt::described()
                ));
            }
            kind.code(ioscope::interrupt::last_signal())
        }
    };
    // A trace's tracer may stay behind as the keeper of what the command left running.
    c_int::from(ioscope::trace::keeper::hand_over(code))
}
