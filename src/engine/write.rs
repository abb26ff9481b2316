//! The `write` engine: write(2) calls of one block size from one reused buffer, filled
//! from a [`DataStream`] just before each call.

use super::{Cadence, Moved, Observer};
use crate::checksum::Xor32;
use crate::workload::data::DataStream;
use anyhow::{Context, Result, bail};
use std::fs::File;
use std::io::Write;

/// Writes `total` bytes of `data` to `file` with `buf.len()`-sized write() calls (a short
/// write is completed by further calls, each counted).
pub fn write_blocks(
    file: &File,
    name: &str,
    buf: &mut [u8],
    total: u64,
    data: &mut DataStream,
    observer: Observer,
) -> Result<Moved> {
    let mut xor = Xor32::new();
    let mut calls = 0u64;
    let mut cadence = Cadence::new();
    let mut writer = file;
    while xor.len() < total {
        let n = (total - xor.len()).min(buf.len() as u64) as usize;
        let block = &mut buf[..n];
        data.fill(block);
        let mut done = 0;
        while done < n {
            // As in read_blocks: a Ctrl-C between calls, before a write blocks on a full pipe.
            crate::interrupt::check()?;
            calls += 1;
            match writer.write(&block[done..]) {
                Ok(0) => bail!(
                    "write {name} at byte {}: the file accepted no bytes",
                    xor.len()
                ),
                Ok(k) => done += k,
                Err(e) if crate::interrupt::retry_after(&e)? => continue,
                Err(e) => {
                    return Err(e).with_context(|| {
                        format!("write {name} at byte {}", xor.len() + done as u64)
                    });
                }
            }
        }
        xor.update(block);
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
