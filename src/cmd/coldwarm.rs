//! `cache`: the classic three columns — a cold read, an immediate warm read, a cold read
//! again — for each block size, with the residency and the device bytes that prove each
//! state. Cold runs evict the file with fadvise (no root), or drop every cache with
//! `--drop-caches` (root).

use super::harness::{self, Sample, State, Subject};
use crate::error::input;
use crate::files::{self, InputKind};
use crate::measure::diskstats;
use crate::options::CacheOptions;
use anyhow::Result;
use serde::{Deserialize, Serialize};

/// One block size: the three runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheRow {
    /// Bytes per read() call.
    pub block_size: u64,
    /// The first cold read.
    pub cold: Sample,
    /// The warm read right after it.
    pub warm: Sample,
    /// Cold again, after another eviction.
    pub cold_again: Sample,
}

/// The result of `cache`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CacheReport {
    /// The file.
    pub file: String,
    /// Its size.
    pub file_bytes: u64,
    /// How cold runs were made cold.
    pub eviction: String,
    /// The block device behind the file.
    pub device: Option<String>,
    /// One row per block size.
    pub rows: Vec<CacheRow>,
}

/// Runs the three reads for every block size.
pub fn execute(options: &CacheOptions) -> Result<CacheReport> {
    let src = files::open_regular(&options.path, "cache")?;
    if src.kind != InputKind::Regular || src.len == 0 {
        return Err(input(format!(
            "cache {}: needs a non-empty regular file",
            src.name
        )));
    }
    let device = diskstats::device_of(&options.path);
    let subject = Subject {
        file: &src.file,
        name: &src.name,
        device: device.as_deref(),
    };
    let mut rows = Vec::new();
    for &bs in &options.block_sizes {
        let mut buf = super::touched_buffer(bs);
        let mut run = |state: State| -> Result<Sample> {
            if state == State::Cold {
                harness::prepare(subject, src.len, state, options.drop_caches)?;
            }
            harness::timed_read(subject, buf.as_mut_slice(), src.len, Some(state))
        };
        let cold = run(State::Cold)?;
        let warm = run(State::Warm)?;
        let cold_again = run(State::Cold)?;
        rows.push(CacheRow {
            block_size: bs,
            cold,
            warm,
            cold_again,
        });
    }
    Ok(CacheReport {
        file: src.name.clone(),
        file_bytes: src.len,
        eviction: if options.drop_caches {
            "sync; echo 3 > /proc/sys/vm/drop_caches (every file's cache)".into()
        } else {
            "fdatasync + posix_fadvise(DONTNEED) on this file (no root needed)".into()
        },
        device,
        rows,
    })
}
