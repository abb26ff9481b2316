//! Compression the device may hide behind: the file system's own (its type from `statfs`,
//! btrfs's `compress` mount option from `/proc/self/mountinfo`, the per-file `FS_COMPR_FL`
//! attribute) and how compressible the data itself is, judged on sampled 64 KiB blocks with
//! LZ4 (fast, pure Rust).

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes per sampled block.
pub const SAMPLE_BLOCK: u64 = 64 << 10;
/// Blocks sampled, spread evenly over the file.
pub const SAMPLE_BLOCKS: u64 = 16;

const BTRFS_MAGIC: i64 = 0x9123_683E;
const ZFS_MAGIC: i64 = 0x2FC1_2FC1;
const F2FS_MAGIC: i64 = 0xF2F5_2010;
const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
const FS_COMPR_FL: libc::c_long = 0x0000_0004;
const FS_NOCOMP_FL: libc::c_long = 0x0000_0400;

/// What the file system says about compressing this file.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FsCompression {
    /// The file system's type by its `statfs` magic, where ioscope knows it.
    pub fs_type: Option<String>,
    /// btrfs: the `compress`/`compress-force` mount option (e.g. `compress=zstd:3`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mount_option: Option<String>,
    /// The file's own attribute: `true` for `FS_COMPR_FL` (chattr +c), `false` for
    /// `FS_NOCOMP_FL`; `None` when neither is set or the flags cannot be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_flag: Option<bool>,
}

impl FsCompression {
    /// Whether this file's data may be stored compressed: an explicit attribute decides,
    /// else a compressing mount option; `None` where it cannot be seen from here (ZFS keeps
    /// it in a dataset property).
    pub fn compresses(&self) -> Option<bool> {
        if let Some(flag) = self.file_flag {
            return Some(flag);
        }
        if self.mount_option.is_some() {
            return Some(true);
        }
        match self.fs_type.as_deref() {
            Some("zfs") => None,
            _ => Some(false),
        }
    }
}

/// The file system's compression for `file` at `path`.
pub fn fs_compression(file: &File, path: &Path) -> FsCompression {
    // SAFETY: statfs fills the struct we pass; both live across the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs on a descriptor we hold open, into a struct of the right type.
    let fs_type = (unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } == 0).then(|| {
        match st.f_type as i64 {
            BTRFS_MAGIC => "btrfs",
            ZFS_MAGIC => "zfs",
            F2FS_MAGIC => "f2fs",
            0xEF53 => "ext4",
            0x5846_5342 => "xfs",
            0x0102_1994 => "tmpfs",
            0x794C_7630 => "overlay",
            0x6969 => "nfs",
            _ => "other",
        }
        .to_string()
    });
    let mount_option = (fs_type.as_deref() == Some("btrfs"))
        .then(|| {
            let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
            let canonical = std::fs::canonicalize(path).ok()?;
            compress_option(&text, &canonical)
        })
        .flatten();
    let mut flags: libc::c_long = 0;
    // SAFETY: FS_IOC_GETFLAGS writes one long into `flags`, which lives across the call.
    let rc = unsafe {
        libc::ioctl(
            file.as_raw_fd(),
            FS_IOC_GETFLAGS as _,
            &mut flags as *mut libc::c_long,
        )
    };
    let file_flag = if rc != 0 {
        None
    } else if flags & FS_COMPR_FL != 0 {
        Some(true)
    } else if flags & FS_NOCOMP_FL != 0 {
        Some(false)
    } else {
        None
    };
    FsCompression {
        fs_type,
        mount_option,
        file_flag,
    }
}

/// The `compress…` super option of the mount whose point is the longest prefix of `path`.
pub fn compress_option(mountinfo: &str, path: &Path) -> Option<String> {
    mountinfo
        .lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let point = left.split(' ').nth(4)?.replace("\\040", " ");
            let options = right.split(' ').nth(2).unwrap_or("");
            path.starts_with(&point)
                .then_some((point, options.to_string()))
        })
        .max_by_key(|(point, _)| point.len())
        .and_then(|(_, options)| {
            options
                .split(',')
                .find(|o| o.starts_with("compress"))
                .map(str::to_string)
        })
}

/// How compressible a file's data is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Compressibility {
    /// Blocks sampled.
    pub sampled_blocks: u64,
    /// Bytes sampled.
    pub sampled_bytes: u64,
    /// Compressed bytes over sampled bytes (LZ4 block format): about 1.0 for random data,
    /// near 0 for zeros.
    pub ratio: f64,
}

/// LZ4 over `blocks` blocks of [`SAMPLE_BLOCK`] bytes spread evenly over `[0, len)` of
/// `file` (every block of a smaller file). `None` for an empty file or a failed read.
pub fn sample(file: &File, len: u64, blocks: u64) -> Option<Compressibility> {
    if len == 0 {
        return None;
    }
    let count = len.div_ceil(SAMPLE_BLOCK).min(blocks.max(1));
    let mut buf = vec![0u8; SAMPLE_BLOCK as usize];
    let (mut sampled, mut compressed) = (0u64, 0u64);
    for i in 0..count {
        let at = if count == 1 {
            0
        } else {
            (len.saturating_sub(SAMPLE_BLOCK)) / (count - 1) * i
        };
        let n = SAMPLE_BLOCK.min(len - at) as usize;
        file.read_exact_at(&mut buf[..n], at).ok()?;
        sampled += n as u64;
        compressed += ratio_bytes(&buf[..n]) as u64;
    }
    Some(Compressibility {
        sampled_blocks: count,
        sampled_bytes: sampled,
        ratio: compressed as f64 / sampled.max(1) as f64,
    })
}

/// The LZ4-compressed size of `block`, at most its own size (stored raw when it would grow).
pub fn ratio_bytes(block: &[u8]) -> usize {
    lz4_flex::block::compress(block).len().min(block.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compress_option_of_the_deepest_mount_is_found() {
        let text = "\
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro
40 22 8:17 / /data rw,relatime shared:2 - btrfs /dev/sdb1 rw,compress=zstd:3,space_cache=v2
41 22 8:18 / /data/raw rw shared:3 - btrfs /dev/sdb2 rw,space_cache=v2
";
        assert_eq!(
            compress_option(text, Path::new("/data/x")).as_deref(),
            Some("compress=zstd:3")
        );
        assert_eq!(compress_option(text, Path::new("/data/raw/x")), None);
        assert_eq!(compress_option(text, Path::new("/home/x")), None);
    }

    #[test]
    fn zeros_compress_and_the_generator_does_not() {
        assert!(ratio_bytes(&vec![0u8; 65536]) < 1024);
        let mut data = vec![0u8; 65536];
        crate::workload::data::DataStream::new(7, 0).fill(&mut data);
        assert!(
            ratio_bytes(&data) as f64 > 0.99 * 65536.0,
            "ioscope's generator must stay incompressible"
        );
    }

    #[test]
    fn a_file_attribute_decides_over_the_mount() {
        let fs = FsCompression {
            fs_type: Some("btrfs".into()),
            mount_option: Some("compress=zstd".into()),
            file_flag: Some(false),
        };
        assert_eq!(fs.compresses(), Some(false));
        let zfs = FsCompression {
            fs_type: Some("zfs".into()),
            ..FsCompression::default()
        };
        assert_eq!(zfs.compresses(), None);
    }
}
