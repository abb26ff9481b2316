//! The `ioscope` binary: parse, dispatch, print the one error, map it to an exit code.

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = ioscope::cli::Cli::parse();
    match ioscope::app::run(cli) {
        Ok(kind) => ExitCode::from(kind.code()),
        Err(err) => {
            let kind = ioscope::error::exit_kind(&err);
            if kind != ioscope::error::ExitKind::Interrupted {
                ioscope::report::error(&err);
            } else {
                ioscope::report::warn("interrupted; scratch files removed");
            }
            ExitCode::from(kind.code())
        }
    }
}
