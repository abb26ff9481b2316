//! The link a block device sits behind, from sysfs, and the most bytes per second it can
//! carry after its line encoding: a figure above that came from a cache, not the device,
//! and a link trained below its maximum (a PCIe slot with fewer lanes, a SATA port at
//! 3 Gb/s, a USB 3 disk on a USB 2 port) caps every figure before the device does.
//!
//! - NVMe: the PCI function's `current_link_speed`/`current_link_width` against
//!   `max_link_speed`/`max_link_width`. 2.5 and 5 GT/s use 8b/10b, 8 GT/s and above
//!   128b/130b (PCIe 6's 64 GT/s is counted the same: a bound, not a guess).
//! - SATA: the port's `sata_spd` (`6.0 Gbps`), 8b/10b, against `sata_spd_limit`.
//! - USB: the device's `speed` in Mb/s; 480 (USB 2) as raw bits, 5000 with 8b/10b,
//!   10000 and 20000 with 128b/132b.
//! - virtio, a RAM disk, a loop device, anything else: `unknown`, with the reason, and never
//!   a guess.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// A device's link as sysfs reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Link {
    /// `pcie`, `sata` or `usb`.
    pub transport: String,
    /// How it is trained now, as sysfs says it (`8.0 GT/s PCIe x4`, `6.0 Gbps`, `5000 Mb/s`).
    pub current: String,
    /// The most it could be trained to, where sysfs says it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    /// Bytes per second the current link carries after its encoding.
    pub ceiling_bytes_per_second: f64,
    /// Bytes per second at its maximum, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes_per_second: Option<f64>,
}

impl Link {
    /// Whether it is trained below what it could be.
    pub fn below_max(&self) -> bool {
        self.max_bytes_per_second
            .is_some_and(|m| m > self.ceiling_bytes_per_second * 1.001)
    }
}

/// Bytes per second of one PCIe lane at `gts` GT/s after encoding.
fn pcie_lane(gts: f64) -> f64 {
    let efficiency = if gts < 8.0 { 8.0 / 10.0 } else { 128.0 / 130.0 };
    gts * 1e9 * efficiency / 8.0
}

/// `8.0 GT/s PCIe` (or `8 GT/s`) as GT/s.
fn gts_of(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// A SATA speed (`6.0 Gbps`) as bytes per second after 8b/10b.
fn sata(text: &str) -> Option<f64> {
    let gbps: f64 = text.split_whitespace().next()?.parse().ok()?;
    Some(gbps * 1e9 * 0.8 / 8.0)
}

/// A USB speed in Mb/s as bytes per second after its encoding.
fn usb(mbps: f64) -> f64 {
    let efficiency = if mbps <= 480.0 {
        1.0
    } else if mbps <= 5000.0 {
        0.8
    } else {
        128.0 / 132.0
    };
    mbps * 1e6 * efficiency / 8.0
}

/// A sysfs file's first line, trimmed.
fn read(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().next()?.trim().to_string();
    (!line.is_empty()).then_some(line)
}

/// The PCIe link of a PCI function's directory.
fn pcie(dir: &Path) -> Option<Link> {
    let speed = read(&dir.join("current_link_speed"))?;
    let width: f64 = read(&dir.join("current_link_width"))?.parse().ok()?;
    let gts = gts_of(&speed)?;
    let max = read(&dir.join("max_link_speed"))
        .zip(read(&dir.join("max_link_width")).and_then(|w| w.parse::<f64>().ok()));
    Some(Link {
        transport: "pcie".into(),
        current: format!("{speed} x{width}"),
        max: max.as_ref().map(|(s, w)| format!("{s} x{w}")),
        ceiling_bytes_per_second: pcie_lane(gts) * width,
        max_bytes_per_second: max
            .as_ref()
            .and_then(|(s, w)| gts_of(s).map(|g| pcie_lane(g) * w)),
    })
}

/// Why a device's link cannot be known, or its link: `sys` is sysfs's root (`/sys`),
/// `device` a block device's name (`nvme0n1`, `sda`, `vda`).
pub fn of_device(sys: &Path, device: &str) -> Result<Link, String> {
    // A partition's link is its disk's.
    let mut block = std::fs::canonicalize(sys.join("class/block").join(device))
        .unwrap_or_else(|_| sys.join("block").join(device));
    if block.join("partition").is_file()
        && let Some(disk) = block.parent()
    {
        block = disk.to_path_buf();
    }
    let real = std::fs::canonicalize(block.join("device")).map_err(|_| {
        format!("{device} has no device of its own in sysfs (device-mapper, RAID, a RAM disk or a loop device)")
    })?;
    let path = real.to_string_lossy().into_owned();
    if path.contains("/virtio") {
        return Err(format!(
            "{device} is a virtio disk: the host's link is out of sight"
        ));
    }
    // Walk up from the block device's parent: the first directory that says a link wins.
    let root = std::fs::canonicalize(sys).unwrap_or_else(|_| sys.to_path_buf());
    let mut dir: Option<PathBuf> = Some(real);
    while let Some(d) = dir {
        if d.join("current_link_speed").is_file()
            && let Some(link) = pcie(&d)
        {
            return Ok(link);
        }
        if d.join("speed").is_file() && d.join("idVendor").is_file() {
            let mbps: f64 = read(&d.join("speed"))
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| format!("{device}: the USB speed in sysfs does not parse"))?;
            return Ok(Link {
                transport: "usb".into(),
                current: format!("{mbps} Mb/s"),
                max: None,
                ceiling_bytes_per_second: usb(mbps),
                max_bytes_per_second: None,
            });
        }
        if let Some(name) = d.file_name().and_then(|n| n.to_str())
            && name.starts_with("ata")
            && name[3..].parse::<u32>().is_ok()
            && let Some(link) = sata_link(&d)
        {
            return Ok(link);
        }
        dir = d
            .parent()
            .filter(|p| p.starts_with(&root))
            .map(Path::to_path_buf);
    }
    Err(format!(
        "{device}: no PCIe, SATA or USB link found in sysfs"
    ))
}

/// The SATA link under an `ataN` port directory (`linkN/ata_link/linkN/sata_spd`).
fn sata_link(port: &Path) -> Option<Link> {
    for entry in std::fs::read_dir(port).ok()?.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("link") {
            continue;
        }
        let dir = entry.path().join("ata_link").join(&name);
        let speed = read(&dir.join("sata_spd"))?;
        let ceiling = sata(&speed)?;
        let limit = read(&dir.join("sata_spd_limit"));
        return Some(Link {
            transport: "sata".into(),
            current: speed,
            max_bytes_per_second: limit.as_deref().and_then(sata),
            max: limit,
            ceiling_bytes_per_second: ceiling,
        });
    }
    None
}

/// sysfs trees written under a temporary directory, for the tests here and of the caveat.
#[cfg(test)]
pub(crate) mod fixtures {
    use std::path::Path;

    /// Writes `files` (path, content) under `root`, and a `device` link for `block`.
    pub(crate) fn sysfs(root: &Path, block: &str, target: &str, files: &[(&str, &str)]) {
        for (path, content) in files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{content}\n")).unwrap();
        }
        std::fs::create_dir_all(root.join(target)).unwrap();
        let b = root.join("block").join(block);
        std::fs::create_dir_all(&b).unwrap();
        std::os::unix::fs::symlink(root.join(target), b.join("device")).unwrap();
    }

    /// `nvme0n1` on a PCIe 3 link trained at `width` lanes of a maximum of 4 (984.6 MB/s a
    /// lane after 128b/130b).
    pub(crate) fn nvme_pcie3(root: &Path, width: u32) {
        let pci = "devices/pci0000:00/0000:00:01.0/0000:01:00.0";
        sysfs(
            root,
            "nvme0n1",
            &format!("{pci}/nvme/nvme0"),
            &[
                (&format!("{pci}/current_link_speed"), "8.0 GT/s PCIe"),
                (&format!("{pci}/current_link_width"), &width.to_string()),
                (&format!("{pci}/max_link_speed"), "8.0 GT/s PCIe"),
                (&format!("{pci}/max_link_width"), "4"),
            ],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::sysfs;
    use super::*;

    #[test]
    fn an_nvme_disk_on_a_pcie_3_x4_link_trained_at_x2_is_named() {
        let dir = tempfile::tempdir().unwrap();
        super::fixtures::nvme_pcie3(dir.path(), 2);
        let link = of_device(dir.path(), "nvme0n1").unwrap();
        assert_eq!(link.transport, "pcie");
        assert_eq!(link.current, "8.0 GT/s PCIe x2");
        // 8 GT/s, 128b/130b: 984.6 MB/s a lane.
        assert!((link.ceiling_bytes_per_second - 2.0 * 8e9 * 128.0 / 130.0 / 8.0).abs() < 1.0);
        assert!(link.below_max());
    }

    #[test]
    fn pcie_2_and_sata_lose_a_fifth_to_8b_10b() {
        assert!((pcie_lane(5.0) - 500e6).abs() < 1.0);
        assert!((sata("6.0 Gbps").unwrap() - 600e6).abs() < 1.0);
        assert!((sata("3.0 Gbps").unwrap() - 300e6).abs() < 1.0);
    }

    #[test]
    fn a_sata_disk_on_a_port_at_3_gbps_of_6_is_below_its_maximum() {
        let dir = tempfile::tempdir().unwrap();
        let port = "devices/pci0000:00/0000:00:1f.2/ata1";
        sysfs(
            dir.path(),
            "sda",
            &format!("{port}/host0/target0:0:0/0:0:0:0"),
            &[
                (&format!("{port}/link1/ata_link/link1/sata_spd"), "3.0 Gbps"),
                (
                    &format!("{port}/link1/ata_link/link1/sata_spd_limit"),
                    "6.0 Gbps",
                ),
            ],
        );
        let link = of_device(dir.path(), "sda").unwrap();
        assert_eq!(link.transport, "sata");
        assert!((link.ceiling_bytes_per_second - 300e6).abs() < 1.0);
        assert!(link.below_max());
    }

    #[test]
    fn a_usb_3_disk_on_a_usb_2_port_is_capped_at_480_mb_s() {
        let dir = tempfile::tempdir().unwrap();
        let usbdev = "devices/pci0000:00/0000:00:14.0/usb1/1-2";
        sysfs(
            dir.path(),
            "sdb",
            &format!("{usbdev}/1-2:1.0/host2/target2:0:0/2:0:0:0"),
            &[
                (&format!("{usbdev}/speed"), "480"),
                (&format!("{usbdev}/idVendor"), "0781"),
            ],
        );
        let link = of_device(dir.path(), "sdb").unwrap();
        assert_eq!(link.transport, "usb");
        assert!((link.ceiling_bytes_per_second - 60e6).abs() < 1.0);
        assert!((usb(5000.0) - 500e6).abs() < 1.0);
        assert!((usb(10000.0) - 10e9 * 128.0 / 132.0 / 8.0).abs() < 1.0);
    }

    #[test]
    fn virtio_and_a_device_without_sysfs_are_unknown_and_say_why() {
        let dir = tempfile::tempdir().unwrap();
        sysfs(
            dir.path(),
            "vda",
            "devices/pci0000:00/0000:00:05.0/virtio2",
            &[],
        );
        assert!(of_device(dir.path(), "vda").unwrap_err().contains("virtio"));
        assert!(
            of_device(dir.path(), "ram0")
                .unwrap_err()
                .contains("no device of its own")
        );
    }
}
