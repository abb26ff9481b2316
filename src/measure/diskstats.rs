//! The block layer's account, from `/proc/diskstats`: sectors read and written by the
//! device (or partition) behind a path, resolved through the file's `st_dev`.

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Bytes the device moved between two readings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskDelta {
    /// Bytes read by the device (sectors × 512).
    pub read_bytes: u64,
    /// Bytes written by the device (sectors × 512).
    pub write_bytes: u64,
}

/// A reading of one device's counters.
#[derive(Debug, Clone)]
pub struct DiskProbe {
    name: String,
    read_sectors: u64,
    write_sectors: u64,
}

/// The kernel name of the block device (or partition) holding `path`, if it has one; tmpfs,
/// overlay and network file systems have none.
/// A btrfs mount has an anonymous st_dev of its own: its device is its mount's source.
pub fn device_of(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let dev = meta.dev();
    let name = |major: u32, minor: u32| {
        let link = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        Some(link.file_name()?.to_string_lossy().into_owned())
    };
    name(libc::major(dev), libc::minor(dev)).or_else(|| {
        let (major, minor) = super::env::mounted_block_device(path)?;
        name(major, minor)
    })
}

/// Parses `/proc/diskstats` text for `name`: (sectors read, sectors written).
pub fn parse(text: &str, name: &str) -> Option<(u64, u64)> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(2) != Some(&name) {
            return None;
        }
        Some((f.get(5)?.parse().ok()?, f.get(9)?.parse().ok()?))
    })
}

impl DiskProbe {
    /// Reads the counters of device `name`.
    pub fn start(name: &str) -> Option<Self> {
        let text = std::fs::read_to_string("/proc/diskstats").ok()?;
        let (read_sectors, write_sectors) = parse(&text, name)?;
        Some(Self {
            name: name.to_string(),
            read_sectors,
            write_sectors,
        })
    }

    /// What the device moved since [`DiskProbe::start`] (all processes, not only ours).
    pub fn finish(&self) -> Option<DiskDelta> {
        let after = Self::start(&self.name)?;
        Some(DiskDelta {
            read_bytes: after.read_sectors.saturating_sub(self.read_sectors) * 512,
            write_bytes: after.write_sectors.saturating_sub(self.write_sectors) * 512,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_device_line() {
        let text = " 254       0 vda 5405 2 400962 2113 2981 2437 156904 7322 0 6000 9436 0 0 0 0 0 0\n 254       1 vda1 10 0 80 1 0 0 0 0 0 1 1 0 0 0 0 0 0\n";
        assert_eq!(parse(text, "vda"), Some((400962, 156904)));
        assert_eq!(parse(text, "vda1"), Some((80, 0)));
        assert_eq!(parse(text, "sdz"), None);
    }

    #[test]
    fn the_current_directory_resolves_to_a_device_or_says_none() {
        match device_of(Path::new(".")) {
            Some(name) => assert!(
                DiskProbe::start(&name).is_some(),
                "{name} is in /proc/diskstats"
            ),
            None => eprintln!("skipped: no block device behind the current directory"),
        }
    }
}
