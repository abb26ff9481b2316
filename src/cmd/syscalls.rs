//! `syscalls`: what a system call costs. The same number of 1-byte read() calls,
//! 1-byte pread() calls, lseek(fd, 0, SEEK_CUR) calls, raw getpid() calls and empty loop
//! iterations, timed over prefixes of a cached file; nanoseconds per call and calls/s.

use crate::engine::{self, Op};
use crate::error::{Failure, input};
use crate::files::{self};
use crate::harness::{Harness, Setup, Target};
use crate::measure::cache::CacheState;
use crate::measure::meter::Claim;
use crate::options::SyscallsOptions;
pub use crate::results::syscalls::{CallRow, OPS, SyscallsReport};
use crate::units::per_second;
use crate::workload::plan::Plan;
use anyhow::Result;
use std::fs::File;
use std::ops::Range;
use std::os::fd::AsRawFd;

/// Times `body` (`size` calls of `op`; it returns the bytes read) in one region of the
/// harness's meter, with the kernel's read count beside it for the reads.
fn timed(
    harness: &Harness,
    op: &str,
    size: u64,
    mut body: impl FnMut() -> Result<u64>,
) -> Result<CallRow> {
    let reads = op.starts_with("read") || op.starts_with("pread");
    let region = harness.meter.start(None);
    let bytes = body()?;
    let measured = region.stop(&Claim {
        op: reads.then_some(Op::Read),
        calls: size,
        bytes,
        counted: reads,
    });
    let seconds = measured.elapsed.seconds;
    let kernel = measured.kernel;
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
pub fn execute(options: &SyscallsOptions, harness: &Harness) -> Result<SyscallsReport> {
    let src = files::open_measurable(&options.path, "syscalls")?;
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
    let target = Target {
        file: &src.file,
        name: &name,
        kind: src.kind,
        device: None,
    };
    let mut rows = Vec::new();
    for &size in &sizes {
        // The reference: the same bytes read in large blocks, warm.
        let plan = Plan::sequential(0, size, crate::units::MIB);
        harness.prepare(target, &plan, CacheState::Warm, false)?;
        let expected = harness
            .read(
                target,
                &Setup::single(&engine::stream::Stream),
                plan,
                false,
                CacheState::Warm,
            )?
            .moved
            .xor;
        rows.push(timed(harness, "empty loop", size, || {
            in_batches(size, |batch| {
                for i in batch {
                    std::hint::black_box(i);
                }
                Ok(())
            })?;
            Ok(0)
        })?);
        rows.push(timed(harness, "getpid", size, || {
            in_batches(size, |batch| {
                for _ in batch {
                    // SAFETY: getpid has no preconditions; the raw syscall avoids libc's cache.
                    std::hint::black_box(unsafe { libc::syscall(libc::SYS_getpid) });
                }
                Ok(())
            })?;
            Ok(0)
        })?);
        rows.push(timed(harness, "lseek", size, || {
            in_batches(size, |batch| {
                for _ in batch {
                    // SAFETY: lseek on a descriptor we hold open.
                    std::hint::black_box(unsafe { libc::lseek(fd, 0, libc::SEEK_CUR) });
                }
                Ok(())
            })?;
            Ok(0)
        })?);
        let mut xor_pread = 0u32;
        rows.push(timed(harness, "pread 1 B", size, || {
            xor_pread = pread_bytes(&src.file, &name, size)?;
            Ok(size)
        })?);
        rewind(&src.file, &name)?;
        let mut xor_read = 0u32;
        rows.push(timed(harness, "read 1 B", size, || {
            xor_read = read_bytes(&src.file, &name, size)?;
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
    Ok(SyscallsReport {
        file: name,
        file_bytes: src.len,
        sizes,
        skipped_sizes,
        rows,
    })
}

/// Loop iterations between two looks at the Ctrl-C flag: the timed loops stay tight, and a
/// look costs one load per batch.
const POLL_EVERY: u64 = 4096;

/// Runs `body` over `0..count` in batches of [`POLL_EVERY`], checking for Ctrl-C and
/// SIGTERM before each.
fn in_batches(count: u64, mut body: impl FnMut(Range<u64>) -> Result<()>) -> Result<()> {
    let mut start = 0;
    while start < count {
        crate::interrupt::check()?;
        let end = count.min(start + POLL_EVERY);
        body(start..end)?;
        start = end;
    }
    Ok(())
}

/// `count` 1-byte pread() calls at offsets `0..count`; the XOR of the bytes.
fn pread_bytes(file: &File, name: &str, count: u64) -> Result<u32> {
    let fd = file.as_raw_fd();
    let mut xor = 0u32;
    let mut b = 0u8;
    in_batches(count, |batch| {
        for i in batch {
            loop {
                // SAFETY: one byte into a live local, from a descriptor we hold open.
                let n = unsafe { libc::pread(fd, (&mut b as *mut u8).cast(), 1, i as libc::off_t) };
                if one_byte(n, "pread", name, i)? {
                    break;
                }
            }
            xor ^= u32::from(b) << (8 * (i % 4));
        }
        Ok(())
    })?;
    Ok(xor)
}

/// `count` 1-byte read() calls from the current offset (byte `i` of the file is call `i`
/// after a rewind); the XOR of the bytes.
fn read_bytes(file: &File, name: &str, count: u64) -> Result<u32> {
    let fd = file.as_raw_fd();
    let mut xor = 0u32;
    let mut b = 0u8;
    in_batches(count, |batch| {
        for i in batch {
            loop {
                // SAFETY: one byte into a live local, from a descriptor we hold open.
                let n = unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) };
                if one_byte(n, "read", name, i)? {
                    break;
                }
            }
            xor ^= u32::from(b) << (8 * (i % 4));
        }
        Ok(())
    })?;
    Ok(xor)
}

/// What a 1-byte `call` at `offset` returned: `Ok(true)` for the byte, `Ok(false)` for an
/// EINTR to retry, and an error naming the file, the call and the offset for the end of the
/// file (it shrank: the sizes were checked against its length) or any other failure.
fn one_byte(returned: isize, call: &str, name: &str, offset: u64) -> Result<bool> {
    use anyhow::Context;
    match returned {
        1 => Ok(true),
        0 => Err(Failure::Check(format!(
            "{call} {name} at byte {offset}: a 1-byte {call}() found the end of the file (did it shrink?)"
        ))
        .into()),
        _ => {
            let err = std::io::Error::last_os_error();
            if crate::interrupt::retry_after(&err)? {
                return Ok(false);
            }
            Err(err).with_context(|| format!("{call} {name} at byte {offset}"))
        }
    }
}

/// Moves the file offset back to the start.
fn rewind(file: &std::fs::File, name: &str) -> Result<()> {
    use anyhow::Context;
    use std::io::Seek;
    let mut f = file;
    f.rewind()
        .with_context(|| format!("seek {name} to its start"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    fn short_file() -> File {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
            .expect("write");
        f.rewind().expect("rewind");
        f
    }

    #[test]
    fn batches_cover_every_iteration_once_in_order() {
        for count in [0, 1, POLL_EVERY - 1, POLL_EVERY, 3 * POLL_EVERY + 5] {
            let mut seen = Vec::new();
            in_batches(count, |batch| {
                assert!(batch.end - batch.start <= POLL_EVERY);
                seen.extend(batch);
                Ok(())
            })
            .expect("no interruption");
            assert_eq!(seen, (0..count).collect::<Vec<_>>());
        }
    }

    #[test]
    fn one_byte_calls_xor_the_bytes_like_the_checksum() {
        let f = short_file();
        let want = crate::checksum::xor_bytes(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        assert_eq!(pread_bytes(&f, "f", 10).expect("pread"), want);
        assert_eq!(read_bytes(&f, "f", 10).expect("read"), want);
    }

    #[test]
    fn a_file_that_ends_early_is_one_line_naming_the_file_the_call_and_the_offset() {
        let f = short_file();
        let err = pread_bytes(&f, "dir/f", 12).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "pread dir/f at byte 10: a 1-byte pread() found the end of the file (did it shrink?)"
        );
        assert_eq!(
            crate::error::exit_kind(&err),
            crate::error::ExitKind::Failed
        );
        let err = read_bytes(&f, "dir/f", 12).unwrap_err();
        assert_eq!(
            format!("{err:#}"),
            "read dir/f at byte 10: a 1-byte read() found the end of the file (did it shrink?)"
        );
    }
}
