//! `syscalls`: what a system call costs. The same number of 1-byte read() calls,
//! 1-byte pread() calls, lseek(fd, 0, SEEK_CUR) calls, raw getpid() calls and empty loop
//! iterations, timed over prefixes of a cached file; nanoseconds per call and calls/s.

use super::harness::{self, State, Subject};
use crate::error::{Failure, input};
use crate::files::{self, InputKind};
use crate::measure::procio::IoProbe;
use crate::measure::timer::Stopwatch;
use crate::options::SyscallsOptions;
use crate::units::per_second;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;

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
    /// Why lseek is cheaper than read, with this machine's figures.
    pub explanation: String,
}

fn timed(op: &str, size: u64, mut body: impl FnMut() -> Result<u64>) -> Result<CallRow> {
    let probe = IoProbe::start();
    let clock = Stopwatch::start();
    let bytes = body()?;
    let seconds = clock.seconds();
    let kernel = probe.and_then(|p| p.finish());
    let reads = op.starts_with("read") || op.starts_with("pread");
    Ok(CallRow {
        op: op.to_string(),
        size,
        calls: size,
        seconds,
        ns_per_call: seconds * 1e9 / size as f64,
        calls_per_second: per_second(size, seconds),
        bytes_per_second: reads.then(|| per_second(bytes, seconds)),
        kernel_calls: if reads { kernel.map(|k| k.syscr) } else { None },
    })
}

/// Runs every operation at every size.
pub fn execute(options: &SyscallsOptions) -> Result<SyscallsReport> {
    let src = files::open_regular(&options.path, "syscalls")?;
    if src.kind != InputKind::Regular || src.len == 0 {
        return Err(input(format!(
            "syscalls {}: needs a non-empty regular file",
            src.name
        )));
    }
    let (sizes, skipped_sizes): (Vec<u64>, Vec<u64>) =
        options.sizes.iter().partition(|&&s| s <= src.len);
    if sizes.is_empty() {
        return Err(input(format!(
            "syscalls {}: the file ({} bytes) is smaller than every size asked for",
            src.name, src.len
        )));
    }
    let fd = src.file.as_raw_fd();
    let name = src.name.clone();
    let subject = Subject {
        file: &src.file,
        name: &name,
        device: None,
    };
    let mut rows = Vec::new();
    for &size in &sizes {
        harness::prepare(subject, size, State::Warm, false)?;
        let expected = {
            let mut buf = super::touched_buffer(crate::units::MIB);
            rewind(&src.file, &name)?;
            crate::engine::read::read_blocks(
                &src.file,
                &name,
                buf.as_mut_slice(),
                Some(size),
                &mut |_| Ok(()),
            )?
            .xor
        };
        rows.push(timed("empty loop", size, || {
            for i in 0..size {
                std::hint::black_box(i);
            }
            Ok(0)
        })?);
        rows.push(timed("getpid", size, || {
            for _ in 0..size {
                // SAFETY: getpid has no preconditions; the raw syscall avoids any libc cache.
                std::hint::black_box(unsafe { libc::syscall(libc::SYS_getpid) });
            }
            Ok(0)
        })?);
        rows.push(timed("lseek", size, || {
            for _ in 0..size {
                // SAFETY: lseek on a descriptor we hold open.
                std::hint::black_box(unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) });
            }
            Ok(0)
        })?);
        let mut xor_pread = 0u32;
        rows.push(timed("pread 1 B", size, || {
            let mut b = 0u8;
            for i in 0..size {
                // SAFETY: one byte into a live local, at an offset inside the file.
                let n = unsafe { libc::pread(fd, (&mut b as *mut u8).cast(), 1, i as libc::off_t) };
                if n != 1 {
                    return Err(std::io::Error::last_os_error().into());
                }
                xor_pread ^= u32::from(b) << (8 * (i % 4));
            }
            Ok(size)
        })?);
        rewind(&src.file, &name)?;
        let mut xor_read = 0u32;
        rows.push(timed("read 1 B", size, || {
            let mut b = 0u8;
            for i in 0..size {
                // SAFETY: one byte into a live local from a descriptor we hold open.
                let n = unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) };
                if n != 1 {
                    return Err(std::io::Error::last_os_error().into());
                }
                xor_read ^= u32::from(b) << (8 * (i % 4));
            }
            Ok(size)
        })?);
        if xor_read != expected || xor_pread != expected {
            return Err(Failure::Check(format!(
                "syscalls {name}: 1-byte reads of the first {size} bytes gave XOR {:08x} (read) and {:08x} (pread), large reads {:08x}",
                xor_read, xor_pread, expected
            ))
            .into());
        }
    }
    let ns = |op: &str| {
        let v: Vec<f64> = rows
            .iter()
            .filter(|r| r.op == op)
            .map(|r| r.ns_per_call)
            .collect();
        crate::measure::stats::summarize(&v).map_or(0.0, |s| s.median)
    };
    let explanation = format!(
        "lseek(SEEK_CUR) enters and leaves the kernel like read() but only returns the file offset: no page-cache lookup and no copy to user memory; here it costs {:.0} ns against {:.0} ns for a 1-byte read(), so {:.0} ns of each read() is moving one byte through the page cache, and {:.0} ns (getpid) is the bare price of a system call.",
        ns("lseek"),
        ns("read 1 B"),
        ns("read 1 B") - ns("lseek"),
        ns("getpid"),
    );
    Ok(SyscallsReport {
        file: name,
        file_bytes: src.len,
        sizes,
        skipped_sizes,
        rows,
        explanation,
    })
}

/// Moves the file offset back to the start.
fn rewind(file: &std::fs::File, name: &str) -> Result<()> {
    use anyhow::Context;
    use std::io::Seek;
    let mut f = file;
    f.rewind()
        .with_context(|| format!("seek {name} to its start"))
}
