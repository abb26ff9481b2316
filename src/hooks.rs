//! Test hooks: the fault injection and forced fallbacks the test suite uses to show a check
//! failing, a rank stopping or a fallback taken. Every environment variable behind them is
//! read here and only here, and only in a build with the `test-hooks` cargo feature, which
//! the test suite turns on (the crate's dev-dependency on itself, in Cargo.toml). A build
//! without it (`cargo build --release`, `cargo install`) gets the stand-ins below, which
//! inject nothing and name no variable: nothing left in a user's environment can change
//! their data or their results. `tests/layers.rs` keeps every hook's name in this file.

use anyhow::Result;
use std::path::Path;

/// The hooks of a test build.
#[cfg(feature = "test-hooks")]
mod imp {
    use anyhow::{Context, Result};
    use std::os::unix::fs::FileExt;
    use std::path::Path;

    /// Whether variable `name` is set to exactly `value`.
    fn is(name: &str, value: &str) -> bool {
        std::env::var_os(name).is_some_and(|v| v == value)
    }

    /// The rank variable `name` names, if it names one.
    fn rank(name: &str) -> Option<usize> {
        std::env::var(name)
            .ok()
            .and_then(|r| r.parse::<usize>().ok())
    }

    pub fn corrupt(path: &Path, name: &str, start: u64, block: u64) -> Result<()> {
        use std::sync::atomic::{AtomicBool, Ordering};
        static DONE: AtomicBool = AtomicBool::new(false);
        let Some(kind) = std::env::var_os("IOSCOPE_CORRUPT") else {
            return Ok(());
        };
        if DONE.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| format!("open {name} to corrupt it (IOSCOPE_CORRUPT)"))?;
        let b = block as usize;
        let mut two = vec![0u8; 2 * b];
        file.read_exact_at(&mut two, start)
            .with_context(|| format!("read {name} at byte {start} to corrupt it"))?;
        match kind.to_str() {
            Some("swap") => {
                let (first, second) = two.split_at_mut(b);
                first.swap_with_slice(second);
            }
            Some("shift") => two[b..].rotate_right(1),
            Some("byte") => two[b + b / 2] ^= 0x55,
            _ => {
                return Err(crate::error::input(format!(
                    "IOSCOPE_CORRUPT={}: expected swap, shift or byte",
                    kind.to_string_lossy()
                )));
            }
        }
        file.write_all_at(&two, start)
            .with_context(|| format!("write {name} at byte {start} to corrupt it"))?;
        file.sync_all()
            .with_context(|| format!("fsync {name} after corrupting it"))
    }

    pub fn flip_byte(path: &Path, at: u64) -> Result<()> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .with_context(|| {
                format!(
                    "open {} to corrupt it (test hook)",
                    crate::text::printable_path(path)
                )
            })?;
        let mut b = [0u8; 1];
        file.read_exact_at(&mut b, at)
            .with_context(|| format!("read {} at {at}", crate::text::printable_path(path)))?;
        b[0] ^= 0xff;
        file.write_all_at(&b, at)
            .with_context(|| format!("write {} at {at}", crate::text::printable_path(path)))
    }

    pub fn disk_refuses(what: &str) -> bool {
        std::env::var("IOSCOPE_DISK_REFUSE").is_ok_and(|v| v.split(',').any(|w| w == what))
    }

    pub fn mpi_fails(rank: usize, step: &str) -> bool {
        let wanted = std::env::var("IOSCOPE_MPI_FAIL_STEP").unwrap_or_else(|_| "checksum".into());
        self::rank("IOSCOPE_MPI_FAIL_RANK") == Some(rank) && wanted == step
    }

    pub fn mpi_hosts_apart() -> bool {
        is("IOSCOPE_MPI_HOSTS_APART", "1")
    }

    pub fn io500_slowed(rank: usize) -> bool {
        self::rank("IOSCOPE_IO500_SLOW_RANK") == Some(rank)
    }

    pub fn io500_corrupting(rank: usize) -> bool {
        rank == 0 && is("IOSCOPE_IO500_CORRUPT", "1")
    }

    pub fn simulated_device() -> Option<(usize, std::time::Duration)> {
        let v = std::env::var("IOSCOPE_SIMULATE_DEVICE").ok()?;
        let (servers, service) = v.split_once(':')?;
        let servers = servers.parse::<usize>().ok().filter(|&s| s > 0)?;
        let service = crate::units::parse_duration(service).ok()?;
        Some((servers, service))
    }

    pub fn trace_every_call() -> Option<String> {
        const NAME: &str = "IOSCOPE_TRACE_EVERY_CALL";
        std::env::var_os(NAME)
            .is_some_and(|v| v != "0" && !v.is_empty())
            .then(|| format!("{NAME} is set"))
    }
}

/// The stand-ins of a build without the feature: nothing is read, nothing injected.
#[cfg(not(feature = "test-hooks"))]
mod imp {
    use anyhow::Result;
    use std::path::Path;

    pub fn corrupt(_: &Path, _: &str, _: u64, _: u64) -> Result<()> {
        Ok(())
    }

    pub fn flip_byte(_: &Path, _: u64) -> Result<()> {
        Ok(())
    }

    pub fn disk_refuses(_: &str) -> bool {
        false
    }

    pub fn mpi_fails(_: usize, _: &str) -> bool {
        false
    }

    pub fn mpi_hosts_apart() -> bool {
        false
    }

    pub fn io500_slowed(_: usize) -> bool {
        false
    }

    pub fn io500_corrupting(_: usize) -> bool {
        false
    }

    pub fn simulated_device() -> Option<(usize, std::time::Duration)> {
        None
    }

    pub fn trace_every_call() -> Option<String> {
        None
    }
}

/// With `IOSCOPE_CORRUPT` set to `swap`, `shift` or `byte`, damages the file at `path` once
/// per process, before the first read that asks, around byte `start` in blocks of `block`:
/// `swap` trades blocks 0 and 1 (their XOR stays the same), `shift` moves block 1's bytes
/// one place on, `byte` flips one byte in the middle of block 1. Lets the tests show each
/// caught, with its offset, by commands that write the file they read.
#[inline]
pub fn corrupt(path: &Path, name: &str, start: u64, block: u64) -> Result<()> {
    imp::corrupt(path, name, start, block)
}

/// Flips the byte at `at` of `path`: what `mpi io500` does where [`io500_corrupting`] says.
#[inline]
pub fn flip_byte(path: &Path, at: u64) -> Result<()> {
    imp::flip_byte(path, at)
}

/// For tests of the fallbacks on kernels that allow everything: `IOSCOPE_DISK_REFUSE`
/// listing `direct` and/or `uring` makes `disk` act as if the kernel refused `what`.
#[inline]
pub fn disk_refuses(what: &str) -> bool {
    imp::disk_refuses(what)
}

/// `IOSCOPE_MPI_FAIL_RANK=R` makes rank R fail on purpose at `IOSCOPE_MPI_FAIL_STEP`
/// (`checksum`, the default: its read sees a wrong XOR; `dir`: it finds no directory), so
/// the tests can show every rank stopping. Whether `rank` fails at `step`.
#[inline]
pub fn mpi_fails(rank: usize, step: &str) -> bool {
    imp::mpi_fails(rank, step)
}

/// `IOSCOPE_MPI_HOSTS_APART=1` treats the ranks of one machine as if they ran on several
/// hosts (the scratch files keep their names while open), so the tests can show the
/// watchdog removing them.
#[inline]
pub fn mpi_hosts_apart() -> bool {
    imp::mpi_hosts_apart()
}

/// `IOSCOPE_IO500_SLOW_RANK=R` makes rank R of `mpi io500` sleep 20 ms before each transfer
/// or file until its stonewall, so it reaches fewer than the others and wears out to their
/// count. Whether `rank` is that rank.
#[inline]
pub fn io500_slowed(rank: usize) -> bool {
    imp::io500_slowed(rank)
}

/// `IOSCOPE_IO500_CORRUPT=1` makes rank 0 of `mpi io500` change one byte of the data it is
/// about to read (ior-easy, ior-hard and one small file), so the checks can be seen to
/// fail. Whether `rank` does.
#[inline]
pub fn io500_corrupting(rank: usize) -> bool {
    imp::io500_corrupting(rank)
}

/// `IOSCOPE_TRACE_EVERY_CALL=1` makes `trace` stop at every system call, as on a machine
/// without seccomp, whatever `--every-call` says: the tests check that the fallback counts
/// what the filter counts. The reason the report gives, when set.
#[inline]
pub fn trace_every_call() -> Option<String> {
    imp::trace_every_call()
}

/// `IOSCOPE_SIMULATE_DEVICE=SERVERS:TIME` (`1:500us`) makes `disk`'s rows run on
/// [`crate::engine::simulated::Simulated`] instead of the file: a device of that many servers,
/// each taking exactly TIME per I/O and moving no bytes, so the tests can set open-loop
/// latencies against queueing theory (M/D/1, M/D/c). The servers and the time, when set.
#[inline]
pub fn simulated_device() -> Option<(usize, std::time::Duration)> {
    imp::simulated_device()
}
