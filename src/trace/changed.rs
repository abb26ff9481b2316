//! What tracing may have changed in the program's own behaviour, where the trace can tell:
//! its own seccomp (strict mode is refused with EINVAL while the trace's seccomp filter is
//! in place; a filter of its own stacks on the trace's) and a crash with its vDSO hidden.
//! Each becomes one sentence of the report, naming the program and the option that avoids
//! the difference (`--every-call`, `--vdso keep`).

use super::call::Call;
use super::sys::Syscall;

/// `prctl(PR_SET_SECCOMP, mode)` and its modes; `seccomp(op, ...)` and its operations.
const PR_SET_SECCOMP: u64 = 22;
const SECCOMP_MODE_STRICT: u64 = 1;
const SECCOMP_MODE_FILTER: u64 = 2;
const SECCOMP_SET_MODE_STRICT: u64 = 0;
const SECCOMP_SET_MODE_FILTER: u64 = 1;

/// Signals that end a program with a crash (a fault, an abort).
const CRASHES: &[(i32, &str)] = &[
    (libc::SIGSEGV, "SIGSEGV"),
    (libc::SIGBUS, "SIGBUS"),
    (libc::SIGILL, "SIGILL"),
    (libc::SIGFPE, "SIGFPE"),
    (libc::SIGABRT, "SIGABRT"),
    (libc::SIGSYS, "SIGSYS"),
];

/// Programs named per kind of change (the count holds them all).
const NAMED: usize = 4;

/// One program's attempt at seccomp of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Attempt {
    pid: i32,
    program: String,
    /// The call as the program made it.
    how: &'static str,
    strict: bool,
    /// The error it got, if any (errno).
    errno: Option<i64>,
}

/// What the trace watched for, and saw.
#[derive(Debug, Default)]
pub struct Changed {
    attempts: Vec<Attempt>,
    crashes: Vec<(i32, String, &'static str)>,
}

/// The program task `tid` runs (/proc comm) and its process.
fn who(tid: i32) -> (i32, String) {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).unwrap_or_default();
    let pid = super::field(&status, "Tgid:")
        .and_then(|v| i32::try_from(v).ok())
        .unwrap_or(tid);
    let name = super::comm(tid).unwrap_or_default();
    (pid, crate::text::printable(&name))
}

impl Changed {
    /// A watched call ([`Call::watched_only`]) finished.
    pub fn exit(&mut self, s: &Syscall) {
        let (how, strict) = match (s.call, s.args[0], s.args[1]) {
            (Call::Prctl, PR_SET_SECCOMP, SECCOMP_MODE_STRICT) => {
                ("prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)", true)
            }
            (Call::Prctl, PR_SET_SECCOMP, SECCOMP_MODE_FILTER) => {
                ("prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)", false)
            }
            (Call::Seccomp, SECCOMP_SET_MODE_STRICT, _) => {
                ("seccomp(SECCOMP_SET_MODE_STRICT)", true)
            }
            (Call::Seccomp, SECCOMP_SET_MODE_FILTER, _) => {
                ("seccomp(SECCOMP_SET_MODE_FILTER)", false)
            }
            _ => return,
        };
        let (pid, program) = who(s.tid);
        self.attempts.push(Attempt {
            pid,
            program,
            how,
            strict,
            errno: s.failed.then_some(-s.ret),
        });
    }

    /// Task `tid` is exiting with wait status `status`: a crash is kept.
    pub fn exiting(&mut self, tid: i32, status: Option<i32>) {
        self.exiting_named(tid, status, None);
    }

    /// As [`Changed::exiting`], with the task's process and name where the engine knows
    /// them (the kernel engine's: /proc may be gone when the exit is handed on).
    pub fn exiting_named(&mut self, tid: i32, status: Option<i32>, known: Option<(i32, String)>) {
        let Some(status) = status else { return };
        if !libc::WIFSIGNALED(status) {
            return;
        }
        let signal = libc::WTERMSIG(status);
        let Some(&(_, name)) = CRASHES.iter().find(|(s, _)| *s == signal) else {
            return;
        };
        let (pid, program) = known.unwrap_or_else(|| who(tid));
        if !self.crashes.iter().any(|c| c.0 == pid) {
            self.crashes.push((pid, program, name));
        }
    }

    /// The sentences for the report: `filtered`, whether the trace's seccomp filter was in
    /// place; `vdso_hidden`, whether programs ran with their vDSO hidden.
    pub fn sentences(&self, filtered: bool, vdso_hidden: bool) -> Vec<String> {
        let mut out = Vec::new();
        let refused: Vec<&Attempt> = self
            .attempts
            .iter()
            .filter(|a| a.strict && a.errno == Some(i64::from(libc::EINVAL)) && filtered)
            .collect();
        if let Some(a) = refused.first() {
            out.push(format!(
                "seccomp: {} asked for seccomp strict mode ({}) and was refused (EINVAL) because the trace's own seccomp filter was in place: untraced it would have run in strict mode, so here it behaved differently (it may have failed or taken another path); trace it with --every-call (no filter) to let it enter strict mode",
                programs(&refused),
                a.how
            ));
        }
        let entered: Vec<&Attempt> = self
            .attempts
            .iter()
            .filter(|a| a.strict && a.errno.is_none())
            .collect();
        if !entered.is_empty() {
            out.push(format!(
                "seccomp: {} entered seccomp strict mode: from then on it may only read, write and exit{}",
                programs(&entered),
                if vdso_hidden {
                    "; with its vDSO hidden (the default) a clock read is then a system call that strict mode kills (SIGKILL), where untraced it runs in the vDSO: trace it with --vdso keep if it reads its clock"
                } else {
                    ""
                }
            ));
        }
        let other: Vec<&Attempt> = self
            .attempts
            .iter()
            .filter(|a| a.strict && a.errno.is_some() && !refused.contains(a))
            .collect();
        if let Some(a) = other.first() {
            out.push(format!(
                "seccomp: {} asked for seccomp strict mode ({}) and was refused ({})",
                programs(&other),
                a.how,
                super::errno::name(a.errno.unwrap_or(0))
            ));
        }
        let filters: Vec<&Attempt> = self
            .attempts
            .iter()
            .filter(|a| !a.strict && a.errno.is_none())
            .collect();
        if filtered && !filters.is_empty() {
            out.push(format!(
                "seccomp: {} installed a seccomp filter of its own; it stacks on the trace's: a call it refuses (with an error or a kill) is refused before the trace sees it, and not counted (--every-call sees every call before any filter)",
                programs(&filters)
            ));
        }
        if vdso_hidden && !self.crashes.is_empty() {
            let named: Vec<String> = self
                .crashes
                .iter()
                .take(NAMED)
                .map(|(pid, program, signal)| format!("{program} (pid {pid}, {signal})"))
                .collect();
            out.push(format!(
                "vdso: {}{} killed by a crash with its vDSO hidden (the default): a program that looks for its vDSO itself (getauxval(AT_SYSINFO_EHDR) is 0 under trace) may crash or take another path; if it does not crash untraced, trace it with --vdso keep (its clock reads are then not seen)",
                named.join(", "),
                if self.crashes.len() > NAMED {
                    format!(" and {} more process(es) were", self.crashes.len() - NAMED)
                } else if self.crashes.len() == 1 {
                    " was".to_string()
                } else {
                    " were".to_string()
                }
            ));
        }
        out
    }
}

/// "prog (pid 12)", "a (pid 1) and b (pid 2)", the first few, once each.
fn programs(list: &[&Attempt]) -> String {
    let mut seen: Vec<(i32, &str)> = Vec::new();
    for a in list {
        if !seen.iter().any(|s| s.0 == a.pid) {
            seen.push((a.pid, &a.program));
        }
    }
    let mut words: Vec<String> = seen
        .iter()
        .take(NAMED)
        .map(|(pid, p)| format!("{p} (pid {pid})"))
        .collect();
    if seen.len() > NAMED {
        words.push(format!("{} more process(es)", seen.len() - NAMED));
    }
    match words.as_slice() {
        [one] => one.clone(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
        [] => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(call: Call, args: [u64; 6], ret: i64) -> Syscall {
        Syscall {
            tid: i32::MAX,
            call,
            args,
            ret,
            failed: ret < 0,
            nanos: 1,
        }
    }

    #[test]
    fn strict_mode_refused_under_the_filter_is_said_with_every_call_as_the_way_out() {
        let mut c = Changed::default();
        c.exit(&call(Call::Seccomp, [0, 0, 0, 0, 0, 0], -22));
        let s = c.sentences(true, true);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].contains("seccomp(SECCOMP_SET_MODE_STRICT)"), "{s:?}");
        assert!(s[0].contains("--every-call"), "{s:?}");
        // Without the filter, the same refusal is not the trace's doing.
        let s = c.sentences(false, true);
        assert!(!s[0].contains("--every-call"), "{s:?}");
        assert!(s[0].contains("EINVAL"), "{s:?}");
    }

    #[test]
    fn other_prctl_calls_are_not_seccomp_and_a_fault_needs_a_hidden_vdso_to_be_named() {
        let mut c = Changed::default();
        c.exit(&call(Call::Prctl, [15, 0, 0, 0, 0, 0], 0));
        assert!(c.sentences(true, true).is_empty());
        // A wait status of SIGSEGV (signal 11, no core).
        c.exiting(i32::MAX, Some(libc::SIGSEGV));
        c.exiting(i32::MAX, Some(0));
        assert!(c.sentences(true, false).is_empty());
        let s = c.sentences(true, true);
        assert_eq!(s.len(), 1, "{s:?}");
        assert!(s[0].contains("SIGSEGV"), "{s:?}");
        assert!(s[0].contains("--vdso keep"), "{s:?}");
    }
}
