//! The result of `syscalls`: the cost of a system call, next to an empty loop.

use serde::{Deserialize, Serialize};

/// The operations timed, cheapest first.
pub const OPS: [&str; 5] = ["empty loop", "getpid", "lseek", "pread 1 B", "read 1 B"];

/// One operation at one size.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallRow {
    /// Which operation.
    pub op: String,
    /// Bytes covered (= calls made).
    pub size: u64,
    /// Calls (or loop iterations) made.
    pub calls: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// Nanoseconds per call.
    pub ns_per_call: f64,
    /// Calls per second.
    pub calls_per_second: f64,
    /// Bytes per second, for the reads.
    pub bytes_per_second: Option<f64>,
    /// Read calls the kernel counted (/proc/self/io syscr), for the reads.
    pub kernel_calls: Option<u64>,
}

impl SyscallsReport {
    /// Nanoseconds per call of `op` over the sizes measured (`None`: not measured).
    pub fn ns_summary(&self, op: &str) -> Option<crate::measure::stats::Summary> {
        let v: Vec<f64> = self
            .rows
            .iter()
            .filter(|r| r.op == op)
            .map(|r| r.ns_per_call)
            .collect();
        crate::measure::stats::summarize(&v)
    }

    /// Median nanoseconds per call of `op` over the sizes measured.
    pub fn ns_per_call(&self, op: &str) -> f64 {
        self.ns_summary(op).map_or(0.0, |s| s.median)
    }

    /// Whether the kernel counted one read per 1-byte read call.
    pub fn ok(&self) -> bool {
        self.rows.iter().all(|r| {
            r.kernel_calls
                .is_none_or(|k| k.abs_diff(r.calls) <= 16 + r.calls / 100)
        })
    }
}

/// The result of `syscalls`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SyscallsReport {
    /// The file.
    pub file: String,
    /// Its size.
    pub file_bytes: u64,
    /// Sizes measured.
    pub sizes: Vec<u64>,
    /// Sizes skipped because the file is smaller.
    pub skipped_sizes: Vec<u64>,
    /// Every measurement.
    pub rows: Vec<CallRow>,
}
