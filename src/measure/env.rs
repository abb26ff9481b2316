//! The environment a result was measured in: kernel, CPU, memory, and the file system and
//! block device behind the target path (resolved through the file's `st_dev`).

use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Where and on what a measurement ran (read back from saved documents by `report`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Environment {
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name.
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// Total RAM in bytes.
    pub memory_bytes: u64,
    /// The target the storage facts below describe.
    pub path: String,
    /// The storage behind that path.
    pub storage: Storage,
    /// The CPU's data caches (of the first CPU), smallest level first.
    pub cpu_caches: Vec<CpuCache>,
    /// The memory page size in bytes.
    pub page_size: u64,
    /// The 1-minute load average when the result was measured (`/proc/loadavg`): tasks
    /// running or waiting to run (or in uninterruptible sleep), the machine's, not ours.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_1m: Option<f64>,
    /// The cores online on the machine, which the load is spread over (`cpus` is the share
    /// this process may use).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cores_online: Option<usize>,
}

/// One data (or unified) cache of the CPU, from sysfs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuCache {
    /// 1, 2, 3...
    pub level: u32,
    /// Bytes.
    pub bytes: u64,
    /// How many CPUs share it.
    pub shared_by: usize,
}

impl Environment {
    /// The size of the cache of `level`, if the machine said.
    pub fn cache_bytes(&self, level: u32) -> Option<u64> {
        self.cpu_caches
            .iter()
            .find(|c| c.level == level)
            .map(|c| c.bytes)
    }
}

/// The data and unified caches of CPU 0 (`/sys/devices/system/cpu/cpu0/cache`).
pub fn cpu_caches() -> Vec<CpuCache> {
    let root = Path::new("/sys/devices/system/cpu/cpu0/cache");
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut caches: Vec<CpuCache> = entries
        .filter_map(|e| {
            let dir = e.ok()?.path();
            let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
            let kind = read("type")?;
            if kind.trim() == "Instruction" {
                return None;
            }
            Some(CpuCache {
                level: read("level")?.trim().parse().ok()?,
                bytes: parse_cache_size(&read("size")?)?,
                shared_by: read("shared_cpu_list").map_or(1, |l| cpu_list_len(&l)),
            })
        })
        .collect();
    caches.sort_by_key(|c| c.level);
    caches.dedup_by_key(|c| c.level);
    caches
}

/// `32K`, `512K`, `32768K`, `1M` as sysfs writes them.
fn parse_cache_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let (digits, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len()));
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "" => n,
        "K" => n << 10,
        "M" => n << 20,
        "G" => n << 30,
        _ => return None,
    })
}

/// The number of CPUs in a list like `0-3,8`.
fn cpu_list_len(text: &str) -> usize {
    text.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|part| match part.split_once('-') {
            Some((a, b)) => match (a.parse::<usize>(), b.parse::<usize>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum::<usize>()
        .max(1)
}

/// The file system and device behind a path.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Storage {
    /// File system type, e.g. `ext4`, `tmpfs`, `overlay`.
    pub filesystem: Option<String>,
    /// Mount point of that file system.
    pub mount_point: Option<String>,
    /// What is mounted there, e.g. `/dev/vda`.
    pub mount_source: Option<String>,
    /// The block device's kernel name, e.g. `vda`; `None` for tmpfs, overlay, NFS...
    pub device: Option<String>,
    /// Whether the device reports itself rotational (virtual disks often say yes wrongly).
    pub rotational: Option<bool>,
    /// Read-ahead of the device in KiB.
    pub read_ahead_kb: Option<u64>,
    /// The active I/O scheduler.
    pub scheduler: Option<String>,
}

impl Environment {
    /// Collects the environment for `path` (its directory when it does not exist yet).
    pub fn collect(path: &Path) -> Self {
        Self {
            kernel: kernel_release(),
            cpu_model: cpu_model(),
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            memory_bytes: meminfo_bytes("MemTotal").unwrap_or(0),
            path: crate::text::lossless(path.as_os_str()),
            storage: Storage::of(path),
            cpu_caches: cpu_caches(),
            page_size: crate::measure::cache::page_size(),
            load_1m: std::fs::read_to_string("/proc/loadavg")
                .ok()
                .and_then(|t| parse_loadavg(&t)),
            cores_online: cores_online(),
        }
    }
}

/// The 1-minute load average from `/proc/loadavg` text (`0.52 0.58 0.59 1/345 12345`).
pub fn parse_loadavg(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// The cores online (`sysconf(_SC_NPROCESSORS_ONLN)`).
fn cores_online() -> Option<usize> {
    // SAFETY: sysconf reads a system value and touches no memory of ours.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    usize::try_from(n).ok().filter(|&n| n > 0)
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

fn cpu_model() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    text.lines()
        .find_map(|l| {
            let (key, value) = l.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_string())
        })
        .unwrap_or_default()
}

/// A field of `/proc/meminfo` in bytes, e.g. `MemTotal` or `MemAvailable`.
pub fn meminfo_bytes(field: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines().find_map(|l| {
        let (key, value) = l.split_once(':')?;
        if key != field {
            return None;
        }
        let kib: u64 = value.trim().trim_end_matches("kB").trim().parse().ok()?;
        Some(kib * 1024)
    })
}

/// The nearest existing path at or above `path`.
fn existing(path: &Path) -> PathBuf {
    let mut p = path.to_path_buf();
    if p.as_os_str().is_empty() {
        p = PathBuf::from(".");
    }
    while !p.exists() {
        match p.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => p = parent.to_path_buf(),
            _ => return PathBuf::from("."),
        }
    }
    p
}

impl Storage {
    /// Resolves the file system and device holding `path`.
    pub fn of(path: &Path) -> Self {
        let target = existing(path);
        let Ok(meta) = std::fs::metadata(&target) else {
            return Self::default();
        };
        let dev = meta.dev();
        let (major, minor) = (libc::major(dev), libc::minor(dev));
        let canonical = std::fs::canonicalize(&target).unwrap_or(target);
        let mut storage = Self::default();
        if let Some(mount) = find_mount(&format!("{major}:{minor}"), &canonical) {
            storage.filesystem = Some(mount.fstype);
            storage.mount_point = Some(mount.point);
            storage.mount_source = Some(mount.source);
        }
        // A mount whose st_dev is anonymous (btrfs gives each an 0:N of its own) is still on
        // the block device its source names.
        let (major, minor) = match &storage.mount_source {
            Some(src) if queue_dir(major, minor).is_none() => {
                block_device_number(Path::new(src)).unwrap_or((major, minor))
            }
            _ => (major, minor),
        };
        if let Some(queue) = queue_dir(major, minor) {
            storage.device = queue
                .parent()
                .and_then(|d| d.file_name())
                .map(|n| n.to_string_lossy().into_owned());
            let read = |name: &str| std::fs::read_to_string(queue.join(name)).ok();
            storage.rotational = read("rotational").map(|s| s.trim() == "1");
            storage.read_ahead_kb = read("read_ahead_kb").and_then(|s| s.trim().parse().ok());
            storage.scheduler = read("scheduler").and_then(|s| active_scheduler(&s));
        }
        storage
    }
}

/// The device number of `path` when it is a block device file (`/dev/loop1`).
fn block_device_number(path: &Path) -> Option<(u32, u32)> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).ok()?;
    meta.file_type()
        .is_block_device()
        .then(|| (libc::major(meta.rdev()), libc::minor(meta.rdev())))
}

/// The block device under `path` by the source of its mount, for file systems whose st_dev
/// is not a block device's (btrfs): its device number, if the source is a block device file.
pub fn mounted_block_device(path: &Path) -> Option<(u32, u32)> {
    let target = existing(path);
    let dev = std::fs::metadata(&target).ok()?.dev();
    let canonical = std::fs::canonicalize(&target).unwrap_or(target);
    let mount = find_mount(
        &format!("{}:{}", libc::major(dev), libc::minor(dev)),
        &canonical,
    )?;
    block_device_number(Path::new(&mount.source))
}

struct Mount {
    point: String,
    fstype: String,
    source: String,
}

/// The mount with device `majmin` whose mount point is the longest prefix of `path`.
/// An anonymous device (major 0: btrfs gives each subvolume its own, which mountinfo does
/// not list) falls back to the mount whose point is the longest prefix of `path`.
fn find_mount(majmin: &str, path: &Path) -> Option<Mount> {
    let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    parse_mountinfo(&text, majmin, path).or_else(|| {
        majmin
            .starts_with("0:")
            .then(|| parse_mountinfo(&text, "", path))
            .flatten()
    })
}

/// The mount with device `majmin` (any device when empty) whose point is the longest prefix
/// of `path`.
fn parse_mountinfo(text: &str, majmin: &str, path: &Path) -> Option<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let mut tail = right.split(' ');
            let fstype = tail.next()?.to_string();
            let source = tail.next()?.to_string();
            let point = fields.get(4)?.replace("\\040", " ");
            let device_matches = majmin.is_empty() || fields.get(2)? == &majmin;
            (device_matches && path.starts_with(&point)).then_some(Mount {
                point,
                fstype,
                source,
            })
        })
        .max_by_key(|m| m.point.len())
}

/// The sysfs `queue/` directory of the whole disk behind device `major:minor`.
fn queue_dir(major: u32, minor: u32) -> Option<PathBuf> {
    let dev = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let queue = dev.join("queue");
    if queue.is_dir() {
        return Some(queue);
    }
    // A partition: the queue belongs to the parent disk.
    let parent = dev.parent()?.join("queue");
    parent.is_dir().then_some(parent)
}

fn active_scheduler(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')?;
    Some(text[start + 1..start + end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_matching_mount_wins() {
        let text = "22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n\
                    30 22 0:40 / /tmp rw - tmpfs tmpfs rw\n\
                    31 22 254:0 /srv /data rw - ext4 /dev/vda rw\n";
        let m = parse_mountinfo(text, "254:0", Path::new("/data/x")).expect("mount");
        assert_eq!((m.point.as_str(), m.fstype.as_str()), ("/data", "ext4"));
        let m = parse_mountinfo(text, "0:40", Path::new("/tmp/f")).expect("mount");
        assert_eq!(m.fstype, "tmpfs");
        assert!(parse_mountinfo(text, "9:9", Path::new("/x")).is_none());
        // btrfs: a file's st_dev (0:41, its subvolume's) is not the mount's (0:39).
        let text = format!("{text}44 27 0:39 / /mnt/b rw - btrfs /dev/loop1 rw\n");
        let m = parse_mountinfo(&text, "", Path::new("/mnt/b/dir")).expect("by path");
        assert_eq!(
            (m.fstype.as_str(), m.source.as_str()),
            ("btrfs", "/dev/loop1")
        );
    }

    #[test]
    fn sysfs_cache_sizes_and_cpu_lists_parse() {
        assert_eq!(parse_cache_size("32K\n"), Some(32 << 10));
        assert_eq!(parse_cache_size("32768K"), Some(32 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("x"), None);
        assert_eq!(cpu_list_len("0-1\n"), 2);
        assert_eq!(cpu_list_len("0-3,8,10-11"), 7);
        assert_eq!(cpu_list_len("0"), 1);
    }

    #[test]
    fn the_active_scheduler_is_the_bracketed_one() {
        assert_eq!(
            active_scheduler("none [mq-deadline] kyber\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(active_scheduler("none\n"), None);
    }

    #[test]
    fn the_environment_of_the_current_directory_is_filled_in() {
        let env = Environment::collect(Path::new("."));
        assert!(env.cpus >= 1);
        assert!(env.memory_bytes > 0);
        assert!(!env.kernel.is_empty());
        assert!(env.storage.filesystem.is_some(), "{env:?}");
    }

    #[test]
    fn the_load_is_the_first_figure_of_loadavg() {
        assert_eq!(parse_loadavg("1.93 0.58 0.59 3/345 12345\n"), Some(1.93));
        assert_eq!(parse_loadavg(""), None);
        assert_eq!(parse_loadavg("x 0.58"), None);
    }

    #[test]
    fn an_environment_saved_before_the_load_was_kept_still_loads() {
        let env: Environment = serde_json::from_str(r#"{"kernel":"6.1","cpus":2}"#).unwrap();
        assert_eq!((env.load_1m, env.cores_online), (None, None));
        let now = Environment::collect(Path::new("."));
        if std::path::Path::new("/proc/loadavg").exists() {
            assert!(now.load_1m.is_some_and(|l| l >= 0.0));
        }
        assert!(now.cores_online.is_some_and(|c| c >= 1));
    }
}
