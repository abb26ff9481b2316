//! Which known tool (dd, fio, iozone, bonnie++, ioscope) a traced command runs, and how many
//! times it ran: the command itself, or one a shell's `-c` script names (`sh -c 'dd ...;
//! dd ...'`), counted at each exec by the program the task then runs. What the report says
//! of its output (read once per run, or not read) follows from these counts.

use serde::{Deserialize, Serialize};
use std::ffi::OsString;

/// Tools whose own output `trace` reads.
pub const KNOWN: &[&str] = &["dd", "fio", "ioscope", "iozone", "bonnie++"];

/// Shells whose `-c` script is searched for a known tool.
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox"];

/// The known tool a command runs and the shell that runs it, if one does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runs {
    /// The tool's name (empty: none known).
    pub tool: String,
    /// The shell whose script names it, when the command is not the tool itself.
    pub shell: Option<String>,
}

/// The known tool `command` runs: its program, or the first known tool a shell's `-c`
/// script names as a command word (`dd`, `/usr/bin/dd`, after `;`, `&&`, `|` or a newline).
pub fn of(command: &[OsString]) -> Runs {
    let program = command
        .first()
        .map(|p| super::tool_name(p))
        .unwrap_or_default();
    if !SHELLS.contains(&program.as_str()) {
        return Runs {
            tool: program,
            shell: None,
        };
    }
    let script = command
        .iter()
        .position(|a| a == "-c")
        .and_then(|i| command.get(i + 1))
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tool = script
        .split(|c: char| c.is_whitespace() || ";|&()`".contains(c))
        .map(|w| w.rsplit('/').next().unwrap_or(w))
        .find(|w| KNOWN.contains(w))
        .unwrap_or_default()
        .to_string();
    Runs {
        shell: (!tool.is_empty()).then_some(program.clone()),
        tool: if tool.is_empty() { program } else { tool },
    }
}

/// The base name of the program task `tid` runs now (read at its exec stop).
pub fn running(tid: i32) -> Option<String> {
    let exe = std::fs::read_link(format!("/proc/{tid}/exe")).ok()?;
    Some(super::tool_name(exe.as_os_str()))
}

/// How many times a known tool ran in the trace, and how many of its outputs were read:
/// what the report says when it is not one run read once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolRuns {
    /// The tool.
    pub tool: String,
    /// The shell that ran it, when the command was not the tool itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shell: Option<String>,
    /// Times a program of that name was executed.
    pub runs: u64,
    /// Outputs of it read (dd: summaries; the others: 1 when read).
    pub outputs_read: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(args: &[&str]) -> Runs {
        of(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn a_shell_script_naming_dd_runs_dd_and_a_plain_command_is_itself() {
        let r = runs(&["sh", "-c", "dd if=a of=b; /bin/dd if=b of=c"]);
        assert_eq!((r.tool.as_str(), r.shell.as_deref()), ("dd", Some("sh")));
        let r = runs(&["/usr/bin/dd", "if=a"]);
        assert_eq!((r.tool.as_str(), r.shell), ("dd", None));
        let r = runs(&["bash", "-c", "echo hi && cat ddx"]);
        assert_eq!((r.tool.as_str(), r.shell), ("bash", None));
        let r = runs(&["sh", "script.sh"]);
        assert_eq!((r.tool.as_str(), r.shell), ("sh", None));
    }
}
