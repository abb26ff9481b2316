//! What could make a figure wrong, as data: one [`Caveat`] per check (the file's extents,
//! compression, the device's write cache), each a verdict chosen here by named thresholds
//! from the evidence it carries. The words are written in `report::caveats` only.
//!
//! Named `Caveat`, not `Check`: [`super::checks::Check`] is the kernel-counter self-check
//! (claimed against counted), and the `checks` key of a run's JSON already holds those; a
//! caveat is saved under `caveats`.

use super::compression::{Compressibility, FsCompression};
use super::extents::ExtentMap;
use super::writecache::WriteCache;
use serde::{Deserialize, Serialize};

/// A read is "not the device" when at least this share of its range is unwritten extents
/// or holes (zeros the file system makes up): 1%.
pub const UNBACKED_AT_LEAST: f64 = 0.01;

/// Data "compresses" when LZ4 shrinks sampled blocks below this share of their size: 90%.
pub const COMPRESSES_BELOW: f64 = 0.9;

/// The device moved "far fewer" bytes than the program when it moved less than this share
/// of them: 50%.
pub const FAR_FEWER: f64 = 0.5;

/// A flush acknowledged faster than this by a disk that says it rotates came from a
/// volatile cache: 1 ms, an eighth of a turn of a 7,200 rpm platter (8.3 ms).
pub const FLUSH_FASTER_THAN_A_PLATTER_SECONDS: f64 = 0.001;

/// What a check says about the figure beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Nothing here makes the figure wrong.
    Ok,
    /// The figure stands, but something shapes it that the reader should know.
    Warn,
    /// The figure does not measure the device (zeros made up by the file system).
    NotTheDevice,
    /// It cannot be known from here; `reason` says why.
    Unknown,
}

impl Verdict {
    /// `ok`, `warn`, `not the device` or `unknown`.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::NotTheDevice => "not the device",
            Verdict::Unknown => "unknown",
        }
    }
}

/// What a check looked at: the numbers its verdict was chosen from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "name", content = "evidence", rename_all = "snake_case")]
pub enum Evidence {
    /// The file's extents over the range measured.
    Extents(ExtentMap),
    /// The file system's compression and the data's compressibility.
    Compression(CompressionEvidence),
    /// The device's write cache beside an fsync-including figure.
    WriteCache(WriteCacheEvidence),
    /// A long write's fall from its steady state and what the page cache was doing then
    /// (`--series`: [`super::writeback`]).
    WriteBackCliff(super::writeback::Finding),
    /// The link the device sits behind, and the fastest figure set against it.
    Link(LinkEvidence),
}

/// A figure is "above the link" when it passes what the link carries by more than this
/// share: 2% (the bound is exact; timers and rounding are not).
pub const ABOVE_THE_LINK: f64 = 1.02;

/// The evidence of the link check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkEvidence {
    /// The block device (`None`: no block device is behind the file, as on tmpfs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Its link, where sysfs shows one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<super::link::Link>,
    /// The fastest figure of the result (its name, `SEQ1M Q8T1 read`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest: Option<String>,
    /// Its bytes per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fastest_bytes_per_second: Option<f64>,
}

/// The link check: not the device when the fastest figure passes what the link carries
/// ([`ABOVE_THE_LINK`]: it came from a cache); warn when the link is trained below its
/// maximum; unknown where sysfs shows no link (virtio, a RAM disk) or no device is behind
/// the file (tmpfs), with the reason.
pub fn link(
    device: Option<&str>,
    found: Result<super::link::Link, String>,
    fastest: Option<(String, f64)>,
) -> Caveat {
    let (name, rate) = fastest.unzip();
    match found {
        Err(reason) => Caveat {
            verdict: Verdict::Unknown,
            reason: Some(reason),
            evidence: Evidence::Link(LinkEvidence {
                device: device.map(str::to_string),
                link: None,
                fastest: name,
                fastest_bytes_per_second: rate,
            }),
        },
        Ok(l) => {
            let verdict = if rate.is_some_and(|r| r > l.ceiling_bytes_per_second * ABOVE_THE_LINK) {
                Verdict::NotTheDevice
            } else if l.below_max() {
                Verdict::Warn
            } else {
                Verdict::Ok
            };
            Caveat {
                verdict,
                reason: None,
                evidence: Evidence::Link(LinkEvidence {
                    device: device.map(str::to_string),
                    link: Some(l),
                    fastest: name,
                    fastest_bytes_per_second: rate,
                }),
            }
        }
    }
}

/// The evidence of the compression check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressionEvidence {
    /// What the file system does.
    pub file_system: FsCompression,
    /// What LZ4 made of sampled blocks (reads of a user's file; `None` for ioscope's own
    /// data, incompressible by construction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Compressibility>,
    /// Bytes the program read or wrote in the run judged (a cold or device run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program_bytes: Option<u64>,
    /// Bytes the device moved in that run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_bytes: Option<u64>,
    /// Bytes of that run's range in unwritten extents or holes, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unbacked_bytes: Option<u64>,
    /// Share of the file resident in the page cache before that run (0 to 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resident_before: Option<f64>,
}

impl CompressionEvidence {
    /// Whether the device moved far fewer bytes than the program ([`FAR_FEWER`]).
    pub fn shortfall(&self) -> bool {
        match (self.program_bytes, self.device_bytes) {
            (Some(p), Some(d)) if p > 0 => (d as f64) < FAR_FEWER * p as f64,
            _ => false,
        }
    }

    /// Whether the sampled data compresses ([`COMPRESSES_BELOW`]).
    pub fn compressible(&self) -> Option<bool> {
        self.data.map(|d| d.ratio < COMPRESSES_BELOW)
    }
}

/// The evidence of the write-cache check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WriteCacheEvidence {
    /// What sysfs says.
    pub cache: WriteCache,
    /// Seconds of the fsync judged (the median over runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_seconds: Option<f64>,
    /// Bytes that fsync made durable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
}

/// One thing that could make a figure wrong: its verdict and its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Caveat {
    /// What it says.
    pub verdict: Verdict,
    /// Why it cannot be known (verdict `unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The check and what it looked at.
    #[serde(flatten)]
    pub evidence: Evidence,
}

impl Caveat {
    /// The check's name as saved (`extents`, `compression`, `write_cache`).
    pub fn name(&self) -> &'static str {
        match self.evidence {
            Evidence::Extents(_) => "extents",
            Evidence::Compression(_) => "compression",
            Evidence::WriteCache(_) => "write_cache",
            Evidence::WriteBackCliff(_) => "write_back_cliff",
            Evidence::Link(_) => "link",
        }
    }
}

/// The write-back check as a caveat: ok when the write never fell from its steady state;
/// warn when it fell and the numbers name why (the dirty limit or throttle: the figure
/// before the fall was the page cache's, after it the device's; or the device itself
/// slowed); unknown when there was no steady state to leave or no cause was seen.
pub fn write_back(finding: super::writeback::Finding) -> Caveat {
    use super::writeback::CliffVerdict as C;
    let (verdict, reason) = match finding.verdict {
        C::NoCliff => (Verdict::Ok, None),
        C::DirtyLimit | C::DirtyThrottle | C::DeviceSlowed => (Verdict::Warn, None),
        C::NoSteadyState => (
            Verdict::Unknown,
            Some("the write had no steady state to leave".to_string()),
        ),
        C::CauseNotSeen => (
            Verdict::Unknown,
            Some("the fall's cause was not in the numbers".to_string()),
        ),
    };
    Caveat {
        verdict,
        reason,
        evidence: Evidence::WriteBackCliff(finding),
    }
}

/// The extents check: not the device when [`UNBACKED_AT_LEAST`] of the range reads as
/// made-up zeros; warn for encoded (compressed, encrypted) extents; unknown without a map.
pub fn extents(map: Result<ExtentMap, String>) -> Caveat {
    match map {
        Err(reason) => Caveat {
            verdict: Verdict::Unknown,
            reason: Some(reason),
            evidence: Evidence::Extents(ExtentMap::default()),
        },
        Ok(m) => {
            let verdict = if m.range_bytes > 0 && m.unbacked_share() >= UNBACKED_AT_LEAST {
                Verdict::NotTheDevice
            } else if m.encoded_bytes > 0 {
                Verdict::Warn
            } else {
                Verdict::Ok
            };
            Caveat {
                verdict,
                reason: None,
                evidence: Evidence::Extents(m),
            }
        }
    }
}

/// The compression check: warn when the file system compresses this file and the sampled
/// data compresses (ioscope's own data, not sampled, never does); unknown where the file
/// system keeps it out of sight (ZFS).
pub fn compression(e: CompressionEvidence) -> Caveat {
    let (verdict, reason) = match e.file_system.compresses() {
        None => (
            Verdict::Unknown,
            Some("ZFS keeps compression in a dataset property that no system call shows; `zfs get compression,dedup` tells".to_string()),
        ),
        Some(true) if e.compressible() == Some(true) => (Verdict::Warn, None),
        Some(_) => (Verdict::Ok, None),
    };
    Caveat {
        verdict,
        reason,
        evidence: Evidence::Compression(e),
    }
}

/// The write-cache check beside an fsync-including figure: warn when a disk that says it
/// rotates acknowledged the flush faster than a platter can
/// ([`FLUSH_FASTER_THAN_A_PLATTER_SECONDS`]); unknown for a write-back cache on a device
/// that does not rotate (power-loss protection is not in sysfs) and without a device; ok
/// for write through.
pub fn write_cache(e: WriteCacheEvidence) -> Caveat {
    let fast_flush = e
        .fsync_seconds
        .is_some_and(|s| s < FLUSH_FASTER_THAN_A_PLATTER_SECONDS);
    let (verdict, reason) = if e.cache.device.is_none() {
        (
            Verdict::Unknown,
            Some("no block device is behind this file (tmpfs, overlay or a network file system): where an fsync's data goes is not the device's to say".to_string()),
        )
    } else if e.cache.rotational == Some(true) && fast_flush {
        (Verdict::Warn, None)
    } else {
        match e.cache.write_back() {
            None => (
                Verdict::Unknown,
                Some("sysfs does not say whether the device caches writes".to_string()),
            ),
            Some(true) => (
                Verdict::Unknown,
                Some("the device caches writes (write back) and Linux sends it a flush with every fsync; whether that flush reaches the medium, or a power-loss-protected cache makes it safe, sysfs cannot say".to_string()),
            ),
            Some(false) => (Verdict::Ok, None),
        }
    };
    Caveat {
        verdict,
        reason,
        evidence: Evidence::WriteCache(e),
    }
}

/// Whether any caveat says the figure is not the device's.
pub fn not_the_device(caveats: &[Caveat]) -> bool {
    caveats.iter().any(|c| c.verdict == Verdict::NotTheDevice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::extents::Method;

    fn map(data: u64, unwritten: u64, holes: u64) -> ExtentMap {
        ExtentMap {
            method: Some(Method::Fiemap),
            range_bytes: data + unwritten + holes,
            data_bytes: data,
            unwritten_bytes: unwritten,
            hole_bytes: holes,
            ..ExtentMap::default()
        }
    }

    #[test]
    fn unwritten_extents_or_holes_make_a_read_not_the_device() {
        assert_eq!(extents(Ok(map(100, 0, 0))).verdict, Verdict::Ok);
        assert_eq!(extents(Ok(map(62, 38, 0))).verdict, Verdict::NotTheDevice);
        assert_eq!(extents(Ok(map(0, 0, 100))).verdict, Verdict::NotTheDevice);
        assert_eq!(
            extents(Ok(map(1000, 0, 1))).verdict,
            Verdict::Ok,
            "a sliver below 1% is not enough"
        );
        let unknown = extents(Err("no map".into()));
        assert_eq!(unknown.verdict, Verdict::Unknown);
        assert!(unknown.reason.is_some());
    }

    #[test]
    fn a_caveat_is_saved_as_name_verdict_and_evidence_and_read_back() {
        let c = extents(Ok(map(62, 38, 0)));
        let json = serde_json::to_value(&c).expect("serialize");
        assert_eq!(json["name"], "extents");
        assert_eq!(json["verdict"], "not_the_device");
        assert_eq!(json["evidence"]["unwritten_bytes"], 38);
        let back: Caveat = serde_json::from_value(json).expect("deserialize");
        assert_eq!(back, c);
    }

    fn fs(mount: Option<&str>, fs_type: &str) -> FsCompression {
        FsCompression {
            fs_type: Some(fs_type.into()),
            mount_option: mount.map(str::to_string),
            file_flag: None,
        }
    }

    fn sampled(ratio: f64) -> Option<Compressibility> {
        Some(Compressibility {
            sampled_blocks: 16,
            sampled_bytes: 16 << 16,
            ratio,
        })
    }

    #[test]
    fn compression_warns_only_when_the_file_system_compresses_data_that_compresses() {
        let e = |fs, data| CompressionEvidence {
            file_system: fs,
            data,
            program_bytes: Some(1000),
            device_bytes: Some(100),
            unbacked_bytes: Some(0),
            resident_before: Some(0.0),
        };
        // Zeros on ext4: compressible, but stored as they are.
        let c = compression(e(fs(None, "ext4"), sampled(0.01)));
        assert_eq!(c.verdict, Verdict::Ok);
        let c = compression(e(fs(Some("compress=zstd:3"), "btrfs"), sampled(0.01)));
        assert_eq!(c.verdict, Verdict::Warn);
        // Random data on a compressing btrfs: stored as it is.
        let c = compression(e(fs(Some("compress=zstd:3"), "btrfs"), sampled(1.0)));
        assert_eq!(c.verdict, Verdict::Ok);
        assert_eq!(
            compression(e(fs(None, "zfs"), sampled(1.0))).verdict,
            Verdict::Unknown
        );
        assert!(e(fs(None, "ext4"), None).shortfall());
    }

    #[test]
    fn a_rotating_disk_that_flushes_in_microseconds_is_flagged_and_an_ssd_is_unknown() {
        let e = |rot: bool, mode: &str, s: f64| WriteCacheEvidence {
            cache: WriteCache {
                device: Some("sda".into()),
                mode: Some(mode.into()),
                fua: Some(false),
                rotational: Some(rot),
            },
            fsync_seconds: Some(s),
            bytes: Some(1 << 20),
        };
        assert_eq!(
            write_cache(e(true, "write back", 0.0002)).verdict,
            Verdict::Warn
        );
        // A slow flush on a rotating disk with a write-back cache: the platter speaks.
        assert_eq!(
            write_cache(e(true, "write back", 0.012)).verdict,
            Verdict::Unknown
        );
        assert_eq!(
            write_cache(e(false, "write back", 0.0002)).verdict,
            Verdict::Unknown
        );
        assert_eq!(
            write_cache(e(false, "write through", 0.0002)).verdict,
            Verdict::Ok
        );
        let none = WriteCacheEvidence {
            cache: WriteCache::default(),
            fsync_seconds: Some(0.0001),
            bytes: None,
        };
        assert_eq!(write_cache(none).verdict, Verdict::Unknown);
    }
}
