//! The kernel's account of this process's I/O, from `/proc/self/io`: bytes and calls
//! through read/write system calls, and bytes that reached the block layer.

use serde::{Deserialize, Serialize};
use std::io::Read;

/// One reading of `/proc/self/io` (or the difference of two).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcIo {
    /// Bytes returned by read-like system calls.
    pub rchar: u64,
    /// Bytes passed to write-like system calls.
    pub wchar: u64,
    /// Read-like system calls.
    pub syscr: u64,
    /// Write-like system calls.
    pub syscw: u64,
    /// Bytes this process caused to be fetched from storage.
    pub read_bytes: u64,
    /// Bytes this process caused to be sent to storage.
    pub write_bytes: u64,
}

/// A reading taken before some work; [`IoProbe::finish`] gives the work's own counts.
#[derive(Debug, Clone, Copy)]
pub struct IoProbe {
    before: ProcIo,
    /// Bytes the reading itself returned: its own read() shows up in the difference.
    own_bytes: u64,
    /// [`own_reads`] at the first reading.
    own_before: (u64, u64),
}

/// Read calls and bytes ioscope's own watchers made of kernel files while work was measured
/// ([`read_own`]): a series' samples of /proc/meminfo and /proc/diskstats every interval.
/// /proc/self/io counts every thread's reads; these are taken out of the work's.
static OWN_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static OWN_BYTES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The read calls and bytes of [`read_own`] so far.
fn own_reads() -> (u64, u64) {
    use std::sync::atomic::Ordering::Relaxed;
    (OWN_CALLS.load(Relaxed), OWN_BYTES.load(Relaxed))
}

/// Reads a small kernel file (`/proc/meminfo`) whole, counting its read calls and bytes so
/// that a measurement running beside it ([`IoProbe`]) can take them out of its own.
pub fn read_own(path: &str) -> Option<String> {
    use std::sync::atomic::Ordering::Relaxed;
    let mut file = std::fs::File::open(path).ok()?;
    let mut out = Vec::with_capacity(4096);
    let mut buf = [0u8; 8192];
    loop {
        let n = match file.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return None,
        };
        // Every call counts, the last (0 bytes: the end) too, as the kernel counts it.
        OWN_CALLS.fetch_add(1, Relaxed);
        OWN_BYTES.fetch_add(n as u64, Relaxed);
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    String::from_utf8(out).ok()
}

fn read_raw() -> Option<(ProcIo, u64)> {
    let mut file = std::fs::File::open("/proc/self/io").ok()?;
    let mut buf = [0u8; 1024];
    // Exactly one read() call, so that the probe's own cost is known: 1 call, n bytes.
    let n = file.read(&mut buf).ok()?;
    let text = std::str::from_utf8(&buf[..n]).ok()?;
    Some((parse(text)?, n as u64))
}

/// Parses the text of `/proc/<pid>/io`.
pub fn parse(text: &str) -> Option<ProcIo> {
    let mut io = ProcIo::default();
    let mut seen = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let Ok(value) = value.trim().parse::<u64>() else {
            continue;
        };
        let slot = match key.trim() {
            "rchar" => &mut io.rchar,
            "wchar" => &mut io.wchar,
            "syscr" => &mut io.syscr,
            "syscw" => &mut io.syscw,
            "read_bytes" => &mut io.read_bytes,
            "write_bytes" => &mut io.write_bytes,
            _ => continue,
        };
        *slot = value;
        seen += 1;
    }
    (seen == 6).then_some(io)
}

impl IoProbe {
    /// Takes the first reading; `None` where the kernel does not offer `/proc/self/io`.
    pub fn start() -> Option<Self> {
        let own_before = own_reads();
        let (before, own_bytes) = read_raw()?;
        Some(Self {
            before,
            own_bytes,
            own_before,
        })
    }

    /// The counts caused by the work since [`IoProbe::start`], the probe's own read removed.
    pub fn finish(&self) -> Option<ProcIo> {
        let (after, _) = read_raw()?;
        let own = own_reads();
        let (calls, bytes) = (own.0 - self.own_before.0, own.1 - self.own_before.1);
        let b = self.before;
        Some(ProcIo {
            rchar: after.rchar.saturating_sub(b.rchar + self.own_bytes + bytes),
            wchar: after.wchar.saturating_sub(b.wchar),
            syscr: after.syscr.saturating_sub(b.syscr + 1 + calls),
            syscw: after.syscw.saturating_sub(b.syscw),
            read_bytes: after.read_bytes.saturating_sub(b.read_bytes),
            write_bytes: after.write_bytes.saturating_sub(b.write_bytes),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_kernel_format() {
        let text = "rchar: 10\nwchar: 20\nsyscr: 3\nsyscw: 4\nread_bytes: 4096\nwrite_bytes: 0\ncancelled_write_bytes: 0\n";
        let io = parse(text).expect("parse");
        assert_eq!(io.rchar, 10);
        assert_eq!(io.syscw, 4);
        assert_eq!(io.read_bytes, 4096);
        assert_eq!(parse("rchar: 1\n"), None);
    }

    #[test]
    fn the_probe_sees_exactly_the_reads_made_between_its_readings() {
        let Some(probe) = IoProbe::start() else {
            eprintln!("skipped: /proc/self/io is not available here");
            return;
        };
        let mut f = std::fs::File::open("/proc/self/stat").expect("open");
        let mut buf = [0u8; 4096];
        let n = f.read(&mut buf).expect("read") as u64;
        let m = f.read(&mut buf).expect("read") as u64;
        let seen = probe.finish().expect("second reading");
        // Other test threads may read too, so the counts are at least ours.
        assert!(seen.syscr >= 2, "{seen:?}");
        assert!(seen.rchar >= n + m, "{seen:?}");
    }
}
