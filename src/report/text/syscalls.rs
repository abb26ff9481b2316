//! `syscalls`: nanoseconds per call for each operation, and why lseek is cheaper.

use super::{right_align, table_with};
use crate::cmd::syscalls::SyscallsReport;
use crate::units::{format_size, group_thousands};
use std::fmt::Write;

/// Renders `syscalls`.
pub fn syscalls(r: &SyscallsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "syscalls {} ({}), cached; one call per byte of each size",
        r.file,
        format_size(r.file_bytes)
    );
    let mut table = table_with(&[
        "op",
        "calls",
        "ns/call",
        "calls/s",
        "MiB/s",
        "kernel-counted reads",
    ]);
    for row in &r.rows {
        table.add_row(vec![
            row.op.clone(),
            group_thousands(row.calls),
            format!("{:.1}", row.ns_per_call),
            group_thousands(row.calls_per_second.round() as u64),
            row.bytes_per_second.map_or("-".into(), |b| {
                format!("{:.2}", b / crate::units::MIB as f64)
            }),
            row.kernel_calls.map_or("-".into(), group_thousands),
        ]);
    }
    right_align(&mut table, 1..6);
    let _ = writeln!(out, "{table}");
    for s in &r.skipped_sizes {
        let _ = writeln!(out, "skipped size {}: the file is smaller", format_size(*s));
    }
    let _ = writeln!(out, "{}", syscalls_explanation(r));
    out
}

/// Why lseek is cheaper than read, with this machine's figures.
pub fn syscalls_explanation(r: &SyscallsReport) -> String {
    let (lseek, read, getpid) = (
        r.ns_per_call("lseek"),
        r.ns_per_call("read 1 B"),
        r.ns_per_call("getpid"),
    );
    format!(
        "lseek(SEEK_CUR) enters and leaves the kernel like read() but only returns the file offset: no page-cache lookup and no copy to user memory; here it costs {lseek:.0} ns against {read:.0} ns for a 1-byte read(), so {:.0} ns of each read() is moving one byte through the page cache, and {getpid:.0} ns (getpid) is the bare price of a system call.",
        read - lseek,
    )
}
