//! Self-checks: what ioscope believes it did, set beside what the kernel counted.

use super::procio::ProcIo;
use serde::{Deserialize, Serialize};

/// One comparison between a claim and the kernel's count.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Check {
    /// What is compared, e.g. `read_calls`.
    pub name: String,
    /// What ioscope claims.
    pub claimed: u64,
    /// What the kernel counted.
    pub kernel: u64,
    /// Whether they agree within the tolerance.
    pub ok: bool,
    /// Where the kernel's figure comes from.
    pub source: String,
}

use crate::workload::Op;

fn agree(claimed: u64, kernel: u64, slack: u64) -> bool {
    let tolerance = slack.max(claimed / 100);
    claimed.abs_diff(kernel) <= tolerance
}

/// Compares calls and bytes with `/proc/self/io` for work that made `calls` system calls
/// moving `bytes` bytes.
pub fn against_proc_io(direction: Op, calls: u64, bytes: u64, seen: &ProcIo) -> Vec<Check> {
    let (kernel_calls, kernel_bytes, call_name, byte_name, call_src, byte_src) = match direction {
        Op::Read => (
            seen.syscr,
            seen.rchar,
            "read_calls",
            "read_bytes",
            "/proc/self/io syscr",
            "/proc/self/io rchar",
        ),
        Op::Write => (
            seen.syscw,
            seen.wchar,
            "write_calls",
            "write_bytes",
            "/proc/self/io syscw",
            "/proc/self/io wchar",
        ),
    };
    // A few calls of slack for progress output and signal handling around the work.
    vec![
        Check {
            name: call_name.to_string(),
            claimed: calls,
            kernel: kernel_calls,
            ok: agree(calls, kernel_calls, 16),
            source: call_src.to_string(),
        },
        Check {
            name: byte_name.to_string(),
            claimed: bytes,
            kernel: kernel_bytes,
            ok: agree(bytes, kernel_bytes, 4096),
            source: byte_src.to_string(),
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_differences_pass_and_large_ones_fail() {
        let seen = ProcIo {
            syscr: 1002,
            rchar: 4_096_000,
            ..ProcIo::default()
        };
        let checks = against_proc_io(Op::Read, 1000, 4_096_000, &seen);
        assert!(checks.iter().all(|c| c.ok), "{checks:?}");
        let checks = against_proc_io(Op::Read, 10, 4_096_000, &seen);
        assert!(!checks[0].ok);
        assert!(checks[1].ok);
        let checks = against_proc_io(Op::Write, 5000, 1 << 20, &seen);
        assert!(
            checks.iter().all(|c| !c.ok),
            "writes compare with syscw/wchar: {checks:?}"
        );
        let checks = against_proc_io(Op::Write, 10, 40, &seen);
        assert!(
            checks.iter().all(|c| c.ok),
            "a few calls of slack: {checks:?}"
        );
    }
}
