//! Failures that decide the exit code, and the exit codes themselves (CONVENTIONS: 0 success,
//! 1 the work ran but a check failed, 2 usage or input error, 130 interrupted).

use thiserror::Error;

/// The process exit codes ioscope uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitKind {
    /// Everything worked and every check passed.
    Success,
    /// The work ran but a check failed, or the work itself failed part-way.
    Failed,
    /// The command line or an input was wrong; nothing was done.
    Usage,
    /// Interrupted by a signal (Ctrl-C, SIGTERM, SIGUSR1, …); scratch files were removed.
    /// 130, or 128 + the signal's number for those past SIGINT/SIGTERM/SIGHUP/SIGQUIT.
    Interrupted,
    /// The status of a command ioscope ran for the user (`trace`): its own.
    Child(u8),
}

impl ExitKind {
    /// The numeric code handed to the operating system; `signal` is the one that interrupted
    /// the work, if one did (`interrupt::last_signal`).
    pub fn code(self, signal: Option<i32>) -> u8 {
        match self {
            Self::Success => 0,
            Self::Failed => 1,
            Self::Usage => 2,
            Self::Interrupted => exit_code_for(signal),
            Self::Child(code) => code,
        }
    }
}

/// The exit code after `signal` (or no signal: a request from the code): 130 for an
/// interruption (SIGINT, SIGTERM, SIGHUP, SIGQUIT), 128 + the number for the others.
pub fn exit_code_for(signal: Option<i32>) -> u8 {
    match signal {
        Some(s)
            if s > 0
                && ![libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT].contains(&s) =>
        {
            (128 + s).min(255) as u8
        }
        _ => 130,
    }
}

/// A failure whose kind selects the exit code; the rest of an error's chain is context.
#[derive(Debug, Error)]
pub enum Failure {
    /// Bad input found before any work: missing file, wrong type, existing output, no space.
    #[error("{0}")]
    Input(String),
    /// The user interrupted the work.
    #[error("interrupted")]
    Interrupted,
    /// The work ran but what it checked did not hold.
    #[error("{0}")]
    Check(String),
}

/// Shorthand for an input error as an `anyhow::Error`.
pub fn input(message: impl Into<String>) -> anyhow::Error {
    Failure::Input(message.into()).into()
}

/// The exit kind an error maps to: the first [`Failure`] in its chain decides.
pub fn exit_kind(err: &anyhow::Error) -> ExitKind {
    for cause in err.chain() {
        if let Some(failure) = cause.downcast_ref::<Failure>() {
            return match failure {
                Failure::Input(_) => ExitKind::Usage,
                Failure::Interrupted => ExitKind::Interrupted,
                Failure::Check(_) => ExitKind::Failed,
            };
        }
        if cause.is::<crate::units::UnitError>() {
            return ExitKind::Usage;
        }
        // EINTR reaches an error only through our SIGINT/SIGTERM handler (see interrupt).
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::Interrupted)
        {
            return ExitKind::Interrupted;
        }
    }
    ExitKind::Failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use anyhow::Context;

    #[test]
    fn the_failure_kind_survives_added_context() {
        let err = Err::<(), _>(input("no such file"))
            .context("read x")
            .unwrap_err();
        assert_eq!(exit_kind(&err), ExitKind::Usage);
        let err = anyhow::Error::from(Failure::Interrupted).context("write y");
        assert_eq!(exit_kind(&err), ExitKind::Interrupted);
        assert_eq!(
            exit_kind(&anyhow::anyhow!("disk on fire")),
            ExitKind::Failed
        );
        let eintr = anyhow::Error::from(std::io::Error::from_raw_os_error(libc::EINTR))
            .context("read stdin at byte 0");
        assert_eq!(exit_kind(&eintr), ExitKind::Interrupted);
        let unit = crate::units::parse_size("4x").unwrap_err();
        assert_eq!(exit_kind(&anyhow::Error::from(unit)), ExitKind::Usage);
    }
}
