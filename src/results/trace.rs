//! The result of `trace`: the system calls a command made, per kind and per file, and what
//! its tools claimed.

use crate::measure::external::ToolClaim;
use crate::measure::procio::ProcIo;
use crate::trace::claims::ClaimCheck;
use crate::trace::clock::ClockReport;
use crate::trace::sys::Left;
use crate::trace::tally::{CallStats, FileStats};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What `trace` found.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TraceReport {
    /// The command traced: each argument exactly where it is UTF-8, otherwise with each
    /// byte that is not written as `\xNN` (as [`crate::text::lossless`] does).
    pub command: Vec<String>,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
    /// False when Ctrl-C cut the trace short.
    pub complete: bool,
    /// Wall seconds from start to the end of the command's first process (what it left
    /// running is not waited for).
    pub seconds: f64,
    /// Seconds inside fsync, fdatasync, sync_file_range and msync (summed over tasks).
    pub sync_seconds: f64,
    /// Tasks (processes and threads) traced, and programs executed.
    pub tasks: u64,
    /// Programs executed.
    pub execs: u64,
    /// Per file, most bytes first.
    pub files: Vec<FileStats>,
    /// Every call over all files.
    pub totals: BTreeMap<String, CallStats>,
    /// Bytes returned by read-type calls, all files.
    pub bytes_read: u64,
    /// Bytes returned by write-type calls, all files.
    pub bytes_written: u64,
    /// The kernel's counters of the command's process at its exit.
    pub proc_io: Option<ProcIo>,
    /// Processes still there when the command's first process ended (its unreaped
    /// children, zombies included, and every traced process still running): their I/O is
    /// not in its counters, so the counters are not compared.
    #[serde(default)]
    pub outlived: u64,
    /// Processes still running when the command's first process ended: the trace let go of
    /// them (they run on, untraced); their later I/O is not counted.
    #[serde(default)]
    pub still_running: Vec<Left>,
    /// When the command did not end after the signal passed on to it: seconds the trace
    /// waited (the grace, or less when a second signal cut the wait short).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waited_seconds: Option<f64>,
    /// The process that stays behind the processes still running, to let their calls
    /// through the seccomp filter (which cannot be removed) until they end; absent when
    /// they were let go of (no filter), or none was left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_by: Option<i32>,
    /// What the tool itself said, when it is one ioscope knows (dd, fio, iozone, bonnie++,
    /// ioscope).
    pub claim: Option<ToolClaim>,
    /// Each of its figures checked against what the trace saw over the right time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claim_check: Option<ClaimCheck>,
    /// Nanoseconds tracing adds to each system call, measured on this machine just before.
    pub overhead_ns_per_call: Option<f64>,
    /// Under the kernel engine: the calls the program was stopped at (opens, libaio's
    /// calls, calls of another ABI), and what each stop costs it (a ptrace stop, measured
    /// just after).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_calls: Option<u64>,
    /// Nanoseconds each of those stops adds (a ptrace stop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_per_stop: Option<f64>,
    /// What ptrace cannot see in this trace.
    pub unseen: Vec<String>,
    /// The program's clock reads and the regions it timed (absent in older documents).
    #[serde(default)]
    pub clock: Option<ClockReport>,
    /// Where the traced tasks stopped: `filtered` (only at the calls trace counts, chosen by
    /// a seccomp-bpf filter in the kernel) or `every call`; absent in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stops: Option<String>,
    /// Why the trace stopped at every call, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stops_why: Option<String>,
    /// System calls made through the 32-bit ABI (int 0x80) and counted as their 64-bit
    /// equivalents (those not counted are named in `unseen`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub calls_32bit: u64,
    /// How many times the known tool ran and how many of its outputs were read, when it ran
    /// more than once or from a shell's script (absent otherwise and in older reports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_runs: Option<crate::trace::tools::ToolRuns>,
    /// bonnie++: each open-to-close stretch that moved data, per thread and file, in the
    /// order they began (its tests; absent for other tools and in older reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stretches: Vec<crate::trace::phases::Stretch>,
    /// What recorded the calls, `kernel` or `ptrace`, and why that one (absent in older
    /// reports: ptrace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<crate::trace::Chosen>,
    /// Records the kernel could not write (a ring full): every count is then a lower
    /// bound. Absent under ptrace, which loses nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_events: Option<u64>,
    /// Under the kernel engine: whether libaio's requests and events were read inside the
    /// kernel at each call (eBPF), rather than at a stop of the program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libaio_in_kernel: Option<bool>,
    /// Why they were not read in the kernel, when they were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libaio_why: Option<String>,
    /// libaio calls whose memory the kernel's programs did not give (a record lost, or
    /// more requests in one call than they read): those requests were read from the
    /// program afterwards, which may have reused them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub libaio_unread: u64,
    /// `--reference`: the command run once untraced just before, for its own figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference: Option<Reference>,
}

/// The command run once untraced (`trace --reference`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reference {
    /// Its wall time, start to exit.
    pub seconds: f64,
    /// Its exit code, when it exited.
    pub exit_code: Option<i32>,
    /// What the known tool said of itself, when it is one.
    pub claim: Option<crate::measure::external::ToolClaim>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// [`TraceReport::stops`] when the seccomp filter chose the stops.
pub const STOPS_FILTERED: &str = "filtered";
/// [`TraceReport::stops`] when every system call stopped.
pub const STOPS_EVERY_CALL: &str = "every call";
/// [`TraceReport::stops`] under the kernel engine: the program never stopped.
pub const STOPS_NEVER: &str = "never";
/// [`TraceReport::stops`] under the kernel engine with ptrace beside it: only at each
/// open, exec, fork and signal.
pub const STOPS_AT_EXEC: &str = "at open and exec";

/// Read-type and write-type calls, as /proc/<pid>/io counts them (syscr, syscw).
const READS: &[&str] = &["read", "pread64", "readv", "preadv"];
const WRITES: &[&str] = &["write", "pwrite64", "writev", "pwritev"];

impl TraceReport {
    /// Calls of the named kinds over all files.
    pub fn calls_of(&self, names: &[&str]) -> u64 {
        names
            .iter()
            .filter_map(|n| self.totals.get(*n))
            .map(|s| s.calls)
            .sum()
    }

    /// Whether the traced totals agree with the kernel's counters (read bytes and calls;
    /// write bytes and calls). `None` without counters.
    pub fn kernel_agrees(&self) -> Option<bool> {
        if self.outlived > 0 {
            return None;
        }
        let io = self.proc_io?;
        let read_bytes: u64 = READS
            .iter()
            .filter_map(|n| self.totals.get(*n))
            .map(|s| s.bytes_returned)
            .sum();
        let write_bytes: u64 = WRITES
            .iter()
            .filter_map(|n| self.totals.get(*n))
            .map(|s| s.bytes_returned)
            .sum();
        // The kernel counts a call only once it reaches the file (a read on a bad
        // descriptor fails before): the calls that succeeded are what it must hold at least.
        let succeeded = |names: &[&str]| -> u64 {
            names
                .iter()
                .filter_map(|n| self.totals.get(*n))
                .map(|s| s.calls.saturating_sub(s.errors))
                .sum()
        };
        // Write calls the kernel counted where the trace saw none that it counts as one
        // (sendfile and copy_file_range are in syscw too) were not seen: not an agreement.
        // (Reads have no such test: execve's own reads of the program are in syscr.)
        let writes_seen = succeeded(WRITES) + succeeded(&["sendfile", "copy_file_range", "splice"]);
        Some(
            io.rchar >= read_bytes
                && io.wchar >= write_bytes
                && io.syscr >= succeeded(READS)
                && io.syscw >= succeeded(WRITES)
                && !(io.syscw > 0 && writes_seen == 0),
        )
    }

    /// Seconds without the time inside sync calls.
    pub fn seconds_without_sync(&self) -> f64 {
        (self.seconds - self.sync_seconds).max(0.0)
    }
}
