//! The `read` engine: plain read(2) calls of one block size, into one reused buffer.

use super::{Cadence, Moved, Observer};
use crate::checksum::Xor32;
use anyhow::{Context, Result};
use std::fs::File;
use std::io::Read;

/// Reads `file` from its current position with `buf.len()`-sized read() calls until EOF or
/// until `limit` bytes (the last call asks only for what is left of the limit).
pub fn read_blocks(
    file: &File,
    name: &str,
    buf: &mut [u8],
    limit: Option<u64>,
    observer: Observer,
) -> Result<Moved> {
    let mut xor = Xor32::new();
    let mut calls = 0u64;
    let mut cadence = Cadence::new();
    let mut reader = file;
    let limit = limit.unwrap_or(u64::MAX);
    while xor.len() < limit {
        let want = (limit - xor.len()).min(buf.len() as u64) as usize;
        // Also catches a Ctrl-C that came between two calls: the next read() of a quiet pipe
        // would otherwise block before the signal could interrupt it.
        crate::interrupt::check()?;
        calls += 1;
        let n = match reader.read(&mut buf[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if crate::interrupt::retry_after(&e)? => continue,
            Err(e) => {
                return Err(e).with_context(|| format!("read {name} at byte {}", xor.len()));
            }
        };
        xor.update(&buf[..n]);
        if cadence.due(calls, xor.len()) {
            observer(xor.len())?;
        }
    }
    Ok(Moved {
        bytes: xor.len(),
        calls,
        xor: xor.value(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Seek, Write};

    fn file_with(bytes: &[u8]) -> File {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(bytes).expect("write");
        f.rewind().expect("rewind");
        f
    }

    #[test]
    fn counts_calls_including_the_final_empty_read() {
        let f = file_with(&[1u8; 10]);
        let mut buf = vec![0u8; 4];
        let moved = read_blocks(&f, "t", &mut buf, None, &mut |_| Ok(())).expect("read");
        assert_eq!(moved.bytes, 10);
        assert_eq!(moved.calls, 4, "4 + 4 + 2 + the read that found EOF");
    }

    #[test]
    fn stops_at_the_limit_without_reading_further() {
        let f = file_with(&[1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let mut buf = vec![0u8; 4];
        let moved = read_blocks(&f, "t", &mut buf, Some(6), &mut |_| Ok(())).expect("read");
        assert_eq!((moved.bytes, moved.calls), (6, 2));
        assert_eq!(moved.xor, crate::checksum::xor_bytes(&[1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn an_observer_error_stops_the_engine() {
        let f = file_with(&vec![0u8; 1 << 20]);
        let mut buf = vec![0u8; 1];
        let err = read_blocks(&f, "t", &mut buf, None, &mut |_| anyhow::bail!("stop")).unwrap_err();
        assert_eq!(err.to_string(), "stop");
    }
}
