//! The extent map of a measured file: which of its bytes are written data on the device,
//! and which are not (unwritten, i.e. preallocated, extents and holes read as zeros without
//! the device; shared, inline and encoded extents read differently). Read with the FIEMAP
//! ioctl, or with `SEEK_DATA`/`SEEK_HOLE` where the file system refuses FIEMAP (tmpfs on
//! some kernels); the method used is part of the result.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;

/// How the map was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The FIEMAP ioctl: extents with their flags.
    Fiemap,
    /// `lseek(SEEK_DATA/SEEK_HOLE)`: data and holes only; an unwritten extent reads as a
    /// hole or as data, as the file system decides.
    SeekData,
}

impl Method {
    /// `FIEMAP` or `SEEK_DATA/SEEK_HOLE`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Fiemap => "FIEMAP",
            Method::SeekData => "SEEK_DATA/SEEK_HOLE",
        }
    }
}

/// What the extents of `[start, start + range_bytes)` of a file are, in bytes. A byte may
/// count in several of `shared`, `inline`, `delalloc`, `encoded` and `unknown` (flags of
/// one extent); `data + unwritten + holes = range_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ExtentMap {
    /// How it was read.
    pub method: Option<Method>,
    /// The first byte of the range.
    pub start_bytes: u64,
    /// Bytes in the range.
    pub range_bytes: u64,
    /// Bytes in extents that hold data (written, or delayed allocation not yet written).
    pub data_bytes: u64,
    /// Bytes in unwritten (preallocated) extents: read as zeros without the device.
    pub unwritten_bytes: u64,
    /// Bytes in no extent at all: read as zeros without the device.
    pub hole_bytes: u64,
    /// Bytes in extents shared with other files (reflinks, snapshots, deduplication).
    pub shared_bytes: u64,
    /// Bytes stored inline in metadata (tiny files).
    pub inline_bytes: u64,
    /// Bytes in delayed allocation: still in the page cache, not yet on the device.
    pub delalloc_bytes: u64,
    /// Bytes in encoded (compressed or encrypted) extents.
    pub encoded_bytes: u64,
    /// Bytes in extents whose place on the device is unknown (delayed, or not said).
    pub unknown_bytes: u64,
    /// Extents seen.
    pub extents: u64,
}

impl ExtentMap {
    /// Bytes whose reads return zeros without the device: unwritten extents and holes.
    pub fn unbacked_bytes(&self) -> u64 {
        self.unwritten_bytes + self.hole_bytes
    }

    /// [`ExtentMap::unbacked_bytes`] as a share of the range (0 for an empty range).
    pub fn unbacked_share(&self) -> f64 {
        share(self.unbacked_bytes(), self.range_bytes)
    }
}

/// `part` over `whole`, 0 when `whole` is 0.
pub fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

const FS_IOC_FIEMAP: libc::c_ulong = 0xC020_660B;
/// Write the file's dirty pages back before mapping: an unwritten extent whose pages were
/// just written (not yet written back) holds data, and is mapped as written once synced.
const FIEMAP_FLAG_SYNC: u32 = 0x0001;
const EXTENT_LAST: u32 = 0x0001;
const EXTENT_UNKNOWN: u32 = 0x0002;
const EXTENT_DELALLOC: u32 = 0x0004;
const EXTENT_ENCODED: u32 = 0x0008;
const EXTENT_DATA_INLINE: u32 = 0x0200;
const EXTENT_UNWRITTEN: u32 = 0x0800;
const EXTENT_SHARED: u32 = 0x2000;
/// Extents asked for per ioctl.
const BATCH: usize = 256;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct FiemapExtent {
    logical: u64,
    physical: u64,
    length: u64,
    reserved64: [u64; 2],
    flags: u32,
    reserved: [u32; 3],
}

#[repr(C)]
struct Fiemap {
    start: u64,
    length: u64,
    flags: u32,
    mapped_extents: u32,
    extent_count: u32,
    reserved: u32,
    extents: [FiemapExtent; BATCH],
}

/// One extent as FIEMAP gives it: `(logical offset, length, flags)`.
pub type Extent = (u64, u64, u32);

/// The extents of `[start, end)`, or the errno FIEMAP failed with.
fn fiemap(file: &File, start: u64, end: u64) -> Result<Vec<Extent>, i32> {
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        let mut map = Box::new(Fiemap {
            start: at,
            length: end - at,
            flags: FIEMAP_FLAG_SYNC,
            mapped_extents: 0,
            extent_count: BATCH as u32,
            reserved: 0,
            extents: [FiemapExtent::default(); BATCH],
        });
        // SAFETY: `map` is a repr(C) struct with the kernel's `struct fiemap` layout and room
        // for `extent_count` extents after it; it lives across the call.
        let rc = unsafe {
            libc::ioctl(
                file.as_raw_fd(),
                FS_IOC_FIEMAP as _,
                &mut *map as *mut Fiemap,
            )
        };
        if rc != 0 {
            return Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        let n = (map.mapped_extents as usize).min(BATCH);
        if n == 0 {
            break;
        }
        let mut last = false;
        for e in &map.extents[..n] {
            out.push((e.logical, e.length, e.flags));
            last |= e.flags & EXTENT_LAST != 0;
        }
        let next = map.extents[n - 1].logical + map.extents[n - 1].length;
        if last || next <= at {
            break;
        }
        at = next;
    }
    Ok(out)
}

/// Data regions of `[start, end)` by `SEEK_DATA`/`SEEK_HOLE`, or the errno it failed with.
fn seek_data(file: &File, start: u64, end: u64) -> Result<Vec<Extent>, i32> {
    let fd = file.as_raw_fd();
    let mut out = Vec::new();
    let mut at = start;
    while at < end {
        // SAFETY: lseek on a descriptor we hold open, with plain integers.
        let data = unsafe { libc::lseek(fd, at as libc::off_t, libc::SEEK_DATA) };
        if data < 0 {
            let errno = std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            // ENXIO: no data from here to the end of the file.
            if errno == libc::ENXIO {
                break;
            }
            return Err(errno);
        }
        let data = data as u64;
        if data >= end {
            break;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(fd, data as libc::off_t, libc::SEEK_HOLE) };
        if hole < 0 {
            return Err(std::io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO));
        }
        let hole = (hole as u64).min(end);
        if hole <= data {
            break;
        }
        out.push((data, hole - data, 0));
        at = hole;
    }
    Ok(out)
}

/// Adds up `extents` over `[start, start + len)`: clipped to the range, by flag; what no
/// extent covers is a hole.
pub fn summarize(method: Method, extents: &[Extent], start: u64, len: u64) -> ExtentMap {
    let end = start + len;
    let mut map = ExtentMap {
        method: Some(method),
        start_bytes: start,
        range_bytes: len,
        ..ExtentMap::default()
    };
    let mut covered = 0;
    for &(logical, length, flags) in extents {
        let lo = logical.max(start);
        let hi = logical.saturating_add(length).min(end);
        if hi <= lo {
            continue;
        }
        let n = hi - lo;
        map.extents += 1;
        covered += n;
        if flags & EXTENT_UNWRITTEN != 0 {
            map.unwritten_bytes += n;
        } else {
            map.data_bytes += n;
        }
        let add = |flag: u32, to: &mut u64| {
            if flags & flag != 0 {
                *to += n;
            }
        };
        add(EXTENT_SHARED, &mut map.shared_bytes);
        add(EXTENT_DATA_INLINE, &mut map.inline_bytes);
        add(EXTENT_DELALLOC, &mut map.delalloc_bytes);
        add(EXTENT_ENCODED, &mut map.encoded_bytes);
        add(EXTENT_UNKNOWN, &mut map.unknown_bytes);
    }
    map.hole_bytes = len.saturating_sub(covered);
    map
}

/// The extent map of `[start, start + len)` of `file`: FIEMAP first (the file's dirty
/// pages written back first, so data not yet written back counts as data), then
/// `SEEK_DATA/SEEK_HOLE` where FIEMAP is refused; `Err` with the reason when neither answers (a pipe, a file
/// system with neither).
pub fn map(file: &File, start: u64, len: u64) -> Result<ExtentMap, String> {
    let end = start.saturating_add(len);
    match fiemap(file, start, end) {
        Ok(extents) => return Ok(summarize(Method::Fiemap, &extents, start, len)),
        Err(errno) if refused(errno) => {}
        Err(errno) => {
            return Err(format!(
                "FIEMAP: {}",
                std::io::Error::from_raw_os_error(errno)
            ));
        }
    }
    seek_data(file, start, end)
        .map(|extents| summarize(Method::SeekData, &extents, start, len))
        .map_err(|errno| {
            format!(
                "FIEMAP is refused here and SEEK_DATA too: {}",
                std::io::Error::from_raw_os_error(errno)
            )
        })
}

/// The errors with which a file system says it has no FIEMAP.
fn refused(errno: i32) -> bool {
    matches!(
        errno,
        libc::EOPNOTSUPP | libc::ENOTTY | libc::EINVAL | libc::ENOSYS
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extents_are_clipped_to_the_range_and_the_rest_is_holes() {
        let extents = [
            (0, 4096, 0),
            (8192, 8192, EXTENT_UNWRITTEN),
            (16384, 1 << 20, EXTENT_SHARED | EXTENT_LAST),
        ];
        let m = summarize(Method::Fiemap, &extents, 0, 32768);
        assert_eq!(m.data_bytes, 4096 + 16384);
        assert_eq!(m.unwritten_bytes, 8192);
        assert_eq!(m.hole_bytes, 4096);
        assert_eq!(m.shared_bytes, 16384);
        assert_eq!(m.data_bytes + m.unwritten_bytes + m.hole_bytes, 32768);
        assert_eq!(m.unbacked_bytes(), 12288);
        let tail = summarize(Method::Fiemap, &extents, 12288, 8192);
        assert_eq!((tail.unwritten_bytes, tail.data_bytes), (4096, 4096));
    }

    #[test]
    fn a_file_with_no_extent_is_all_hole_and_an_empty_range_is_nothing() {
        let m = summarize(Method::SeekData, &[], 0, 1 << 20);
        assert_eq!(m.hole_bytes, 1 << 20);
        assert_eq!(m.unbacked_share(), 1.0);
        let empty = summarize(Method::Fiemap, &[], 0, 0);
        assert_eq!(empty.unbacked_share(), 0.0);
    }

    #[test]
    fn a_written_file_maps_as_data_by_either_method() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("f");
        std::fs::write(&path, vec![1u8; 1 << 20]).expect("write");
        let f = File::open(&path).expect("open");
        f.sync_all().expect("fsync");
        match map(&f, 0, 1 << 20) {
            Ok(m) => {
                assert_eq!(m.unbacked_bytes(), 0, "{m:?}");
                assert_eq!(m.data_bytes, 1 << 20);
            }
            Err(why) => eprintln!("skipped: {why}"),
        }
    }
}
