//! The device's write cache, read from sysfs beside every figure that includes an fsync:
//! its mode (`queue/write_cache`: "write back" keeps written data in a volatile cache until a
//! flush, "write through" does not), whether it honours FUA (`queue/fua`) and whether it
//! says it rotates (`queue/rotational`). The device is resolved as [`super::env::Storage`]
//! does (a partition's queue belongs to its disk; dm and virtio devices have their own).

use serde::{Deserialize, Serialize};
use std::path::Path;

/// What sysfs says about a device's write cache.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct WriteCache {
    /// The block device (`None`: tmpfs, overlay, network).
    pub device: Option<String>,
    /// `write back` or `write through`, as sysfs spells it.
    pub mode: Option<String>,
    /// Whether the device takes Force Unit Access writes.
    pub fua: Option<bool>,
    /// Whether it says it rotates (virtual disks often say so wrongly).
    pub rotational: Option<bool>,
}

impl WriteCache {
    /// Whether the mode is "write back" (a volatile cache acknowledges writes).
    pub fn write_back(&self) -> Option<bool> {
        self.mode.as_deref().map(|m| m.trim() == "write back")
    }
}

/// The write cache of the device behind `path` (its directory when it does not exist).
pub fn of(path: &Path) -> WriteCache {
    let storage = super::env::Storage::of(path);
    let Some(device) = storage.device else {
        return WriteCache::default();
    };
    let queue = Path::new("/sys/block").join(&device).join("queue");
    let read = |name: &str| {
        std::fs::read_to_string(queue.join(name))
            .ok()
            .map(|s| s.trim().to_string())
    };
    WriteCache {
        mode: read("write_cache"),
        fua: read("fua").map(|s| s == "1"),
        rotational: read("rotational").map(|s| s == "1").or(storage.rotational),
        device: Some(device),
    }
}
