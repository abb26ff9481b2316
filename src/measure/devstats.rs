//! The device's own view of a stretch of time, from every field of its `/proc/diskstats`
//! line: requests completed and merged, bytes, time spent per direction, the weighted time
//! in queue and the busy time, turned into what `iostat -x` shows (await per direction,
//! average request size, average queue size `aqu-sz`, utilisation). The device is found as
//! in [`super::diskstats`] (through the file's `st_dev`); the counters are everybody's, not
//! only this process's. Kernels from 5.5 add the flush requests the device completed and the
//! time spent on them (the 16th and 17th statistics); older ones leave them out (`None`).

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// One reading of a device's counters (the fields of `Documentation/admin-guide/iostats`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counters {
    /// Reads completed.
    pub reads: u64,
    /// Reads merged into others.
    pub read_merges: u64,
    /// Sectors (512 bytes) read.
    pub read_sectors: u64,
    /// Milliseconds spent reading (each request's own time, summed).
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Writes merged into others.
    pub write_merges: u64,
    /// Sectors written.
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// Milliseconds the device had at least one request (busy time).
    pub busy_ms: u64,
    /// Milliseconds of requests in queue, weighted by how many (the integral of the queue).
    pub weighted_ms: u64,
    /// Flush requests completed (kernel 5.5 and later; `None` on a shorter line). The
    /// kernel counts them on the whole disk, never on a partition.
    pub flushes: Option<u64>,
    /// Milliseconds spent flushing (kernel 5.5 and later).
    pub flush_ms: Option<u64>,
}

impl Counters {
    /// Flush requests completed between `self` and the later reading `after`, where both
    /// count them.
    pub fn flushes_until(&self, after: &Counters) -> Option<u64> {
        Some(after.flushes?.saturating_sub(self.flushes?))
    }

    /// Milliseconds spent flushing between `self` and `after`, where both count them.
    pub fn flush_ms_until(&self, after: &Counters) -> Option<u64> {
        Some(after.flush_ms?.saturating_sub(self.flush_ms?))
    }
}

/// Parses the line of device `name` from `/proc/diskstats` text.
pub fn parse(text: &str, name: &str) -> Option<Counters> {
    text.lines().find_map(|line| {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.get(2) != Some(&name) {
            return None;
        }
        let n = |i: usize| -> Option<u64> { f.get(i)?.parse().ok() };
        Some(Counters {
            reads: n(3)?,
            read_merges: n(4)?,
            read_sectors: n(5)?,
            read_ms: n(6)?,
            writes: n(7)?,
            write_merges: n(8)?,
            write_sectors: n(9)?,
            write_ms: n(10)?,
            busy_ms: n(12)?,
            weighted_ms: n(13)?,
            flushes: n(18),
            flush_ms: n(19),
        })
    })
}

/// What the device did between two readings, as `iostat -x` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DeviceView {
    /// Reads the device completed.
    pub reads: u64,
    /// Writes the device completed.
    pub writes: u64,
    /// Reads merged into neighbours before reaching it.
    pub read_merges: u64,
    /// Writes merged into neighbours before reaching it.
    pub write_merges: u64,
    /// Bytes it read.
    pub read_bytes: u64,
    /// Bytes it wrote.
    pub write_bytes: u64,
    /// Mean bytes per request (both directions).
    pub request_bytes: f64,
    /// Mean milliseconds per read, queue included (`r_await`); `None` without reads.
    pub read_await_ms: Option<f64>,
    /// Mean milliseconds per write, queue included (`w_await`); `None` without writes.
    pub write_await_ms: Option<f64>,
    /// Mean number of requests in its queue (`aqu-sz`): weighted queue time over wall time.
    pub queue: f64,
    /// Share of the wall time it was busy (0–1; above 1 cannot happen, parallel devices
    /// show 1 while far from saturated).
    pub utilisation: f64,
    /// The wall time the two readings are apart.
    pub seconds: f64,
}

impl DeviceView {
    /// The difference `after - before` over `seconds` of wall time.
    pub fn between(before: &Counters, after: &Counters, seconds: f64) -> Self {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        let reads = d(after.reads, before.reads);
        let writes = d(after.writes, before.writes);
        let read_bytes = d(after.read_sectors, before.read_sectors) * 512;
        let write_bytes = d(after.write_sectors, before.write_sectors) * 512;
        let requests = reads + writes;
        let wall_ms = (seconds * 1000.0).max(1e-9);
        let per = |ms: u64, n: u64| (n > 0).then(|| ms as f64 / n as f64);
        Self {
            reads,
            writes,
            read_merges: d(after.read_merges, before.read_merges),
            write_merges: d(after.write_merges, before.write_merges),
            read_bytes,
            write_bytes,
            request_bytes: if requests > 0 {
                (read_bytes + write_bytes) as f64 / requests as f64
            } else {
                0.0
            },
            read_await_ms: per(d(after.read_ms, before.read_ms), reads),
            write_await_ms: per(d(after.write_ms, before.write_ms), writes),
            queue: d(after.weighted_ms, before.weighted_ms) as f64 / wall_ms,
            utilisation: (d(after.busy_ms, before.busy_ms) as f64 / wall_ms).min(1.0),
            seconds,
        }
    }

    /// Requests completed in both directions.
    pub fn requests(&self) -> u64 {
        self.reads + self.writes
    }
}

/// A device watched from one moment: [`Watch::finish`] gives its view since.
#[derive(Debug, Clone)]
pub struct Watch {
    name: String,
    before: Counters,
    at: Instant,
}

/// Reads `name`'s counters now (`None` when it has no line in `/proc/diskstats`).
pub fn read(name: &str) -> Option<Counters> {
    parse(&std::fs::read_to_string("/proc/diskstats").ok()?, name)
}

impl Watch {
    /// Starts watching device `name` (`None` when it has no line in `/proc/diskstats`).
    pub fn start(name: &str) -> Option<Self> {
        Some(Self {
            name: name.to_string(),
            before: read(name)?,
            at: Instant::now(),
        })
    }

    /// The device's view since [`Watch::start`].
    pub fn finish(&self) -> Option<DeviceView> {
        let after = read(&self.name)?;
        Some(DeviceView::between(
            &self.before,
            &after,
            self.at.elapsed().as_secs_f64(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str =
        " 254       0 vda 5405 2 400962 2113 2981 2437 156904 7322 0 6000 9436 0 0 0 0 0 0\n";

    #[test]
    fn every_field_of_the_device_line_is_read() {
        let c = parse(TEXT, "vda").expect("vda is there");
        assert_eq!(
            (c.reads, c.read_merges, c.read_sectors, c.read_ms),
            (5405, 2, 400962, 2113)
        );
        assert_eq!(
            (c.writes, c.write_merges, c.write_sectors, c.write_ms),
            (2981, 2437, 156904, 7322)
        );
        assert_eq!((c.busy_ms, c.weighted_ms), (6000, 9436));
        assert_eq!(parse(TEXT, "vdb"), None);
    }

    #[test]
    fn the_flush_fields_of_a_kernel_from_5_5_are_read() {
        // 20 fields: the 17 statistics of a 5.5+ kernel, flushes 812 taking 1,530 ms.
        let line = " 259       0 nvme0n1 91 0 3816 20 7410 1222 183536 4101 0 5012 6051 0 0 0 0 812 1530\n";
        let c = parse(line, "nvme0n1").expect("nvme0n1 is there");
        assert_eq!((c.flushes, c.flush_ms), (Some(812), Some(1530)));
        let later = Counters {
            flushes: Some(815),
            flush_ms: Some(1533),
            ..c
        };
        assert_eq!(c.flushes_until(&later), Some(3));
        assert_eq!(c.flush_ms_until(&later), Some(3));
    }

    #[test]
    fn an_old_kernels_line_has_no_flush_fields() {
        // 14 fields: before 4.18 (no discards) and 5.5 (no flushes).
        let old = "   8       0 sda 5405 2 400962 2113 2981 2437 156904 7322 0 6000 9436\n";
        let c = parse(old, "sda").expect("sda is there");
        assert_eq!((c.reads, c.weighted_ms), (5405, 9436));
        assert_eq!((c.flushes, c.flush_ms), (None, None));
        // 4.18 to 5.4: 18 fields, discards but still no flushes.
        let discards =
            "   8       0 sda 5405 2 400962 2113 2981 2437 156904 7322 0 6000 9436 0 0 0 0\n";
        let c = parse(discards, "sda").expect("sda is there");
        assert_eq!((c.flushes, c.flush_ms), (None, None));
        let counted = Counters {
            flushes: Some(9),
            ..c
        };
        assert_eq!(c.flushes_until(&counted), None);
    }

    #[test]
    fn the_queue_is_the_weighted_time_over_the_wall_time() {
        let before = Counters::default();
        let after = Counters {
            reads: 1000,
            read_sectors: 8000,
            read_ms: 4000,
            weighted_ms: 7800,
            busy_ms: 900,
            ..Counters::default()
        };
        let v = DeviceView::between(&before, &after, 1.0);
        assert!((v.queue - 7.8).abs() < 1e-9);
        assert_eq!(v.read_await_ms, Some(4.0));
        assert_eq!(v.write_await_ms, None);
        assert!((v.request_bytes - 4096.0).abs() < 1e-9);
        assert!((v.utilisation - 0.9).abs() < 1e-9);
    }
}
