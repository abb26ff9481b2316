//! Facts about the machine that [`super::env::Environment`] does not keep but a baseline
//! needs, to say what changed since it was saved: the host's name, the CPU frequency
//! governor, the memory free now, the mount options and the device's model. Each is read
//! from `/proc` or `/sys` and is `None` where the machine does not say.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The machine's facts beside the environment.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Host {
    /// The host name (`/proc/sys/kernel/hostname`).
    pub hostname: Option<String>,
    /// The frequency governor of CPU 0 (`performance`, `powersave`, …).
    pub governor: Option<String>,
    /// Memory available now (`MemAvailable`), in bytes.
    pub memory_available_bytes: Option<u64>,
    /// The mount options of the file system holding the path (`rw,relatime`).
    pub mount_options: Option<String>,
    /// The model the device reports (`/sys/class/block/DEV/device/model`).
    pub device_model: Option<String>,
}

fn read_trimmed(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

impl Host {
    /// The facts now, for the file system mounted at `mount_point` on `device` (as
    /// [`super::env::Storage`] found them).
    pub fn collect(mount_point: Option<&str>, device: Option<&str>) -> Self {
        Self {
            hostname: read_trimmed("/proc/sys/kernel/hostname"),
            governor: read_trimmed("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            memory_available_bytes: super::env::meminfo_bytes("MemAvailable"),
            mount_options: mount_point.and_then(|point| {
                let text = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
                mount_options(&text, point)
            }),
            device_model: device.and_then(|d| {
                read_trimmed(format!("/sys/class/block/{d}/device/model"))
                    .or_else(|| read_trimmed(format!("/sys/class/block/{d}/../device/model")))
            }),
        }
    }
}

/// The options of the mount at `point` in `/proc/self/mountinfo` text: the mount's own and
/// the file system's (`rw,relatime` and `rw,errors=remount-ro`), the last such line winning
/// (the one mounted on top).
pub fn mount_options(text: &str, point: &str) -> Option<String> {
    text.lines().rev().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let fields: Vec<&str> = left.split(' ').collect();
        if fields.get(4)?.replace("\\040", " ") != point {
            return None;
        }
        let own = *fields.get(5)?;
        let fs = right.split(' ').nth(2).unwrap_or("");
        Some(if fs.is_empty() || fs == own {
            own.to_string()
        } else {
            format!("{own} ({fs})")
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_of_the_mount_at_a_point_are_read_from_mountinfo() {
        let text = "22 1 252:1 / / rw,relatime shared:1 - ext4 /dev/vda1 rw,errors=remount-ro\n\
                    40 22 0:35 / /tmp rw,nosuid,nodev shared:2 - tmpfs tmpfs rw,size=1g\n";
        assert_eq!(
            mount_options(text, "/").as_deref(),
            Some("rw,relatime (rw,errors=remount-ro)")
        );
        assert_eq!(
            mount_options(text, "/tmp").as_deref(),
            Some("rw,nosuid,nodev (rw,size=1g)")
        );
        assert_eq!(mount_options(text, "/home"), None);
    }
}
