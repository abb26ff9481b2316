//! The caveats of a result, measured once the timing is over (sampling the data reads a
//! little of the file, which must not touch a timed run): the extents and compression of a
//! file read, the write cache and compression beside a figure that includes an fsync, and
//! beside every result that moved a device's bytes, the link the device sits behind set
//! against the fastest figure the result reports ([`link`]: the one place that check is made).

use crate::harness::Sample;
use crate::measure::caveat::{self, Caveat, CompressionEvidence, WriteCacheEvidence};
use crate::measure::compression::{self, SAMPLE_BLOCKS};
use crate::measure::{diskstats, extents, link as links, writecache};
use std::fs::File;
use std::path::Path;

/// The link check of a result whose file is at `path`: the device behind it, its link from
/// `/sys`, and `fastest`, the highest rate the result reports (its name, bytes per second),
/// set against what the link carries. Unknown, with the reason, on tmpfs, virtio, dm.
pub fn link(path: &Path, fastest: Option<(String, f64)>) -> Caveat {
    link_in(
        Path::new("/sys"),
        diskstats::device_of(path).as_deref(),
        fastest,
    )
}

/// [`link`] on sysfs at `sys`, for `device` (`None`: no block device behind the file).
fn link_in(sys: &Path, device: Option<&str>, fastest: Option<(String, f64)>) -> Caveat {
    let found = match device {
        Some(dev) => links::of_device(sys, dev),
        None => Err("no block device is behind this file (tmpfs, overlay or NFS)".to_string()),
    };
    caveat::link(device, found, fastest)
}

/// The fastest of `figures` (name, bytes per second), for [`link`]; none measured, none.
pub fn fastest(figures: impl IntoIterator<Item = (String, f64)>) -> Option<(String, f64)> {
    figures
        .into_iter()
        .filter(|(_, rate)| rate.is_finite())
        .max_by(|a, b| a.1.total_cmp(&b.1))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::caveat::Verdict;
    use crate::measure::link::fixtures::nvme_pcie3;

    fn read_at(rate: f64) -> Option<(String, f64)> {
        Some(("the read".to_string(), rate))
    }

    #[test]
    fn a_rate_above_the_links_ceiling_is_not_the_device_and_one_below_it_is_ok() {
        let dir = tempfile::tempdir().unwrap();
        // PCIe 3 x4 at its maximum: 3,938 MB/s after 128b/130b.
        nvme_pcie3(dir.path(), 4);
        let above = link_in(dir.path(), Some("nvme0n1"), read_at(6.0e9));
        assert_eq!(above.verdict, Verdict::NotTheDevice);
        assert!(crate::measure::caveat::not_the_device(&[above]));
        let below = link_in(dir.path(), Some("nvme0n1"), read_at(3.0e9));
        assert_eq!(below.verdict, Verdict::Ok);
    }

    #[test]
    fn a_link_trained_below_its_maximum_is_named_whatever_the_figure() {
        let dir = tempfile::tempdir().unwrap();
        nvme_pcie3(dir.path(), 2);
        let c = link_in(dir.path(), Some("nvme0n1"), read_at(1.0e9));
        assert_eq!(c.verdict, Verdict::Warn);
        let text = crate::report::caveats::sentence(&c);
        assert!(text.contains("below its maximum"), "{text}");
        // Still above what two lanes carry: the cache, not the device.
        let c = link_in(dir.path(), Some("nvme0n1"), read_at(3.0e9));
        assert_eq!(c.verdict, Verdict::NotTheDevice);
    }

    #[test]
    fn no_device_or_a_virtio_one_is_unknown_and_never_a_guess() {
        let dir = tempfile::tempdir().unwrap();
        let none = link_in(dir.path(), None, read_at(9.0e9));
        assert_eq!(none.verdict, Verdict::Unknown);
        assert!(none.reason.as_deref().unwrap().contains("tmpfs"));
        crate::measure::link::fixtures::sysfs(
            dir.path(),
            "vda",
            "devices/pci0000:00/0000:00:05.0/virtio2",
            &[],
        );
        let virtio = link_in(dir.path(), Some("vda"), read_at(9.0e9));
        assert_eq!(virtio.verdict, Verdict::Unknown);
        assert!(virtio.reason.as_deref().unwrap().contains("virtio"));
    }

    #[test]
    fn the_fastest_figure_is_the_highest_finite_rate() {
        let f = fastest([
            ("a".to_string(), 1.0),
            ("b".to_string(), f64::NAN),
            ("c".to_string(), 3.0),
        ]);
        assert_eq!(f, Some(("c".to_string(), 3.0)));
        assert_eq!(fastest(Vec::new()), None);
    }
}
