//! The name of a medium: what a study's directory lives on, in a few words ("ext4 on vda",
//! "tmpfs", "nfs4 on host:/export", "btrfs on nvme0n1p2"), read from the file system type
//! and the mount source of /proc/self/mountinfo and the block device behind them, as
//! [`Storage`] resolved them. A study stores it (or the user's `--label`) so that pages
//! putting several studies side by side name each medium by what it is, not "A" and "B".

use super::env::Storage;
use crate::text::printable;

/// The name of the medium `storage` describes: the file system, and what it is on — the
/// block device or partition mounted (`/dev/vda1` → `vda1`), or a network or pool source
/// (`host:/export`, `//server/share`, `pool/data`); a memory or pseudo file system alone
/// (`tmpfs`, `overlay`). Control characters are escaped (see [`printable`]).
pub fn default_label(storage: &Storage) -> String {
    let fs = storage.filesystem.as_deref();
    let source = storage
        .mount_source
        .as_deref()
        .filter(|s| !s.is_empty() && Some(*s) != fs && *s != "none");
    let on = match (&storage.device, source) {
        // The partition or mapping mounted is more precise than the whole disk.
        (Some(_), Some(src)) if src.starts_with("/dev/") => {
            Some(src.rsplit('/').next().unwrap_or(src).to_string())
        }
        (Some(device), _) => Some(device.clone()),
        // A device file mounted whose st_dev is not the device's (btrfs gives each mount
        // an anonymous 0:N): still the device it is on.
        (None, Some(src)) if src.starts_with("/dev/") => {
            Some(src.rsplit('/').next().unwrap_or(src).to_string())
        }
        // No block device: a network share or a pool names where the bytes go; a bare word
        // ("tmpfs", "shm", "overlay") names nothing more than the file system does.
        (None, Some(src)) if src.contains(':') || src.contains('/') => Some(src.to_string()),
        (None, _) => None,
    };
    let label = match (fs, on) {
        (Some(fs), Some(on)) => format!("{fs} on {on}"),
        (Some(fs), None) => fs.to_string(),
        (None, Some(on)) => format!("an unknown file system on {on}"),
        (None, None) => "an unknown medium".to_string(),
    };
    printable(&label)
}

/// The label a study goes by: the one it was given (or stored) when there is one, else the
/// name [`default_label`] derives from its storage; control characters escaped.
pub fn label(given: Option<&str>, storage: &Storage) -> String {
    let label = match given.map(str::trim).filter(|l| !l.is_empty()) {
        Some(l) => printable(l),
        None => default_label(storage),
    };
    shown(label)
}

/// The longest name a medium may be given (`--label`): it heads a table column and a chart
/// legend.
pub const LABEL_CHARS: usize = 48;

/// The most characters of a label drawn: twice what `--label` takes, so a derived one (a
/// long device path) stays whole while a document's label of any size heads a column.
pub const SHOWN_CHARS: usize = 2 * LABEL_CHARS;

/// `label` cut to [`SHOWN_CHARS`] characters, an ellipsis ending one that was longer.
fn shown(label: String) -> String {
    if label.chars().count() <= SHOWN_CHARS {
        return label;
    }
    let mut cut: String = label.chars().take(SHOWN_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Makes `labels` distinct: the second and later of a repeated label get ` (2)`, ` (3)`…
/// so that every column and legend names one medium.
pub fn distinct(labels: &mut [String]) {
    for i in 1..labels.len() {
        if labels[..i].contains(&labels[i]) {
            let base = labels[i].clone();
            let mut n = 2;
            while labels.contains(&format!("{base} ({n})")) {
                n += 1;
            }
            labels[i] = format!("{base} ({n})");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(fs: Option<&str>, source: Option<&str>, device: Option<&str>) -> Storage {
        Storage {
            filesystem: fs.map(str::to_string),
            mount_source: source.map(str::to_string),
            device: device.map(str::to_string),
            ..Storage::default()
        }
    }

    #[test]
    fn a_disk_file_system_is_named_with_what_is_mounted() {
        let s = storage(Some("ext4"), Some("/dev/vda"), Some("vda"));
        assert_eq!(default_label(&s), "ext4 on vda");
        let s = storage(Some("btrfs"), Some("/dev/nvme0n1p2"), Some("nvme0n1"));
        assert_eq!(default_label(&s), "btrfs on nvme0n1p2");
        let s = storage(Some("xfs"), Some("/dev/mapper/vg-data"), Some("dm-0"));
        assert_eq!(default_label(&s), "xfs on vg-data");
        let s = storage(Some("ext4"), Some("/dev/root"), Some("vda"));
        assert_eq!(default_label(&s), "ext4 on root");
    }

    #[test]
    fn a_device_without_a_device_path_source_is_named_by_the_device() {
        let s = storage(Some("ext4"), None, Some("loop0"));
        assert_eq!(default_label(&s), "ext4 on loop0");
        // btrfs: st_dev is an anonymous 0:N, so no device resolved; the source names it.
        let s = storage(Some("btrfs"), Some("/dev/loop1"), None);
        assert_eq!(default_label(&s), "btrfs on loop1");
    }

    #[test]
    fn memory_and_network_file_systems_are_named_by_what_they_are() {
        assert_eq!(
            default_label(&storage(Some("tmpfs"), Some("tmpfs"), None)),
            "tmpfs"
        );
        assert_eq!(
            default_label(&storage(Some("tmpfs"), Some("shm"), None)),
            "tmpfs"
        );
        assert_eq!(
            default_label(&storage(Some("overlay"), Some("overlay"), None)),
            "overlay"
        );
        assert_eq!(
            default_label(&storage(Some("nfs4"), Some("host:/export"), None)),
            "nfs4 on host:/export"
        );
        assert_eq!(
            default_label(&storage(Some("cifs"), Some("//server/share"), None)),
            "cifs on //server/share"
        );
        assert_eq!(
            default_label(&storage(Some("zfs"), Some("tank/data"), None)),
            "zfs on tank/data"
        );
        assert_eq!(default_label(&Storage::default()), "an unknown medium");
    }

    #[test]
    fn control_characters_in_a_label_are_escaped() {
        let s = storage(Some("nfs4"), Some("h\u{1b}[2J:/x\n"), None);
        assert_eq!(default_label(&s), "nfs4 on h\\u{1b}[2J:/x\\n");
        assert_eq!(label(Some("usb\u{7}"), &s), "usb\\u{7}");
        assert_eq!(label(Some("  "), &s), default_label(&s));
    }

    #[test]
    fn repeated_labels_are_numbered() {
        let mut l: Vec<String> = ["ext4 on vda", "tmpfs", "ext4 on vda", "ext4 on vda"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        distinct(&mut l);
        assert_eq!(
            l,
            ["ext4 on vda", "tmpfs", "ext4 on vda (2)", "ext4 on vda (3)"]
        );
    }
}
