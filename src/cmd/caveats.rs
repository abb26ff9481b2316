//! The caveats of a result, measured once the timing is over (sampling the data reads a
//! little of the file, which must not touch a timed run): the extents and compression of a
//! file read, the write cache and compression beside a figure that includes an fsync.

use crate::harness::Sample;
use crate::measure::caveat::{self, Caveat, CompressionEvidence, WriteCacheEvidence};
use crate::measure::compression::{self, SAMPLE_BLOCKS};
use crate::measure::{extents, writecache};
use std::fs::File;
use std::path::Path;

/// The caveats of reading `[start, start + len)` of `file` (at `path`); `judged` is the
/// run whose device bytes are set against the program's (a cold run, or the only run).
pub fn of_read(
    file: &File,
    path: &Path,
    start: u64,
    len: u64,
    judged: Option<&Sample>,
) -> Vec<Caveat> {
    let map = extents::map(file, start, len);
    let unbacked = map.as_ref().ok().map(|m| m.unbacked_bytes());
    let file_len = file.metadata().map_or(start + len, |m| m.len());
    let evidence = CompressionEvidence {
        file_system: compression::fs_compression(file, path),
        data: compression::sample(file, file_len, SAMPLE_BLOCKS),
        program_bytes: judged.map(|s| s.moved.bytes),
        device_bytes: judged.and_then(|s| s.cache.and_then(|c| c.device_read_bytes)),
        unbacked_bytes: unbacked,
        resident_before: judged
            .and_then(|s| s.cache.and_then(|c| c.residency_before))
            .map(|r| r.fraction()),
    };
    vec![caveat::extents(map), caveat::compression(evidence)]
}

/// The caveats of writing `bytes` with ioscope's own data into a file at `path` and
/// fsyncing it in `fsync_seconds`.
pub fn of_write(file: &File, path: &Path, bytes: u64, fsync_seconds: Option<f64>) -> Vec<Caveat> {
    let evidence = CompressionEvidence {
        file_system: compression::fs_compression(file, path),
        // ioscope's generator is incompressible by construction (tested).
        data: None,
        program_bytes: None,
        device_bytes: None,
        unbacked_bytes: None,
        resident_before: None,
    };
    let cache = WriteCacheEvidence {
        cache: writecache::of(path),
        fsync_seconds,
        bytes: Some(bytes),
    };
    vec![caveat::write_cache(cache), caveat::compression(evidence)]
}
