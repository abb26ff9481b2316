//! The check in place that follows a timed read: once the read's clock has stopped, the
//! bytes it covered are read again (large `pread` calls, from the page cache where it
//! holds them) and every block is compared
//! with what the generator wrote at its offset (`workload::verify`). The
//! check's own time is measured on the harness's clock, apart from every timed figure, so
//! a result can say what verifying cost beside what reading took.

use crate::harness::Harness;
use crate::measure::meter::Claim;
use crate::units::MIB;
use crate::workload::Op;
use crate::workload::verify::{Checker, InPlace, Written};
use anyhow::{Context, Result};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Largest read of the check: its buffer stays in the CPU's cache between the copy and
/// the check (8 MiB ran at a third of the speed).
const CHUNK: u64 = MIB;

/// Reads `extents` of `file` again and checks each byte against `written`, counting
/// blocks of `block` bytes; the time it took is in [`InPlace::seconds`].
pub fn verify(
    harness: &Harness,
    file: &File,
    name: &str,
    extents: impl Iterator<Item = (u64, u64)>,
    written: Written,
    block: u64,
) -> Result<InPlace> {
    let extents: Vec<(u64, u64)> = extents.collect();
    let bytes: u64 = extents.iter().map(|e| e.1).sum();
    let chunk = if block >= CHUNK {
        block
    } else {
        CHUNK / block.max(1) * block.max(1)
    };
    let claim = Claim {
        op: Some(Op::Read),
        calls: bytes.div_ceil(chunk),
        bytes,
        counted: false,
    };
    let (found, seconds) = harness.time(&claim, || {
        check(file, name, &extents, written, block, chunk)
    });
    let mut found = found?;
    found.seconds = seconds;
    Ok(found)
}

/// The check itself, untimed: the extents read again with large `pread` calls (never
/// through a mapping: a file another process truncates meanwhile would end the process with
/// SIGBUS, reported as the read's failure and leaving its outputs behind); bytes past the
/// file's end, at the start or found during the check, are missing.
fn check(
    file: &File,
    name: &str,
    extents: &[(u64, u64)],
    written: Written,
    block: u64,
    chunk: u64,
) -> Result<InPlace> {
    let mut checker = Checker::new(written, block);
    let mut buf = Vec::new();
    for &(start, len) in extents {
        let mut done = 0u64;
        while done < len {
            crate::interrupt::check()?;
            let at = start + done;
            let want = (len - done).min(chunk);
            buf.resize(want as usize, 0);
            let n = read_at(file, &mut buf, at)
                .with_context(|| format!("verify {name} in place: read at byte {at}"))?;
            checker.check(at, &buf[..n]);
            done += n as u64;
            if (n as u64) < want {
                // The file ends before the bytes that were read: every block after is bad.
                checker.missing(start + done, len - done);
                break;
            }
        }
    }
    Ok(checker.found())
}

/// Reads until `buf` is full or the file ends; the bytes read.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match file.read_at(&mut buf[n..], offset + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::data::DataStream;

    #[test]
    fn a_file_truncated_while_it_is_verified_reads_as_missing_blocks_not_a_sigbus() {
        // Another process truncates the file at some moment of the check: the blocks from
        // there on are missing (a failed verification), and the process lives on (through
        // a mapping it died of SIGBUS, reported as the read's failure). Tried at several
        // moments until one falls inside the check.
        const LEN: u64 = 32 * MIB;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let mut bytes = vec![0u8; LEN as usize];
        DataStream::new(7, 0).fill(&mut bytes);
        for delay_us in [500u64, 1000, 2000, 4000, 8000, 16000, 250, 100, 3000, 6000] {
            std::fs::write(&path, &bytes).unwrap();
            let file = File::open(&path).unwrap();
            let truncate = {
                let path = path.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(std::time::Duration::from_micros(delay_us));
                    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
                    f.set_len(MIB).unwrap();
                })
            };
            let found = check(&file, "f", &[(0, LEN)], Written::Stream(7), 64 * 1024, MIB)
                .expect("a truncated file is a finding, not an error");
            truncate.join().unwrap();
            if found.bad_blocks > 0 && found.bad_blocks < found.blocks {
                assert!(!found.ok());
                assert!(found.first_bad_offset.is_some_and(|o| o >= MIB));
                return;
            }
        }
        eprintln!("skipped: no truncation fell inside the check on this machine");
    }
}
