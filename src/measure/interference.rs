//! Interference: what other processes did while a run was timed. `/proc/diskstats` counts
//! every process's bytes, so a device that moved clearly more than the run did during it
//! was serving someone else too; `/proc/pressure` says how long tasks on the machine waited
//! for a CPU, for I/O or for memory. The rules that mark a run are here, on numbers; the
//! thresholds are [`super::verdict`]'s.

use super::diskstats::DiskDelta;
use super::pressure::{Pressure, Resource};
use super::procio::ProcIo;
use super::verdict::{OTHER_IO, OTHER_IO_BYTES, STALLED, STALLED_US};
use crate::workload::Op;

/// The bytes the device moved beyond the run's `own` when it moved clearly more
/// ([`OTHER_IO`] times them, and at least [`OTHER_IO_BYTES`] beyond); `None` otherwise.
pub fn beyond(device: u64, own: u64) -> Option<u64> {
    let extra = device.saturating_sub(own);
    (device as f64 > OTHER_IO * own as f64 && extra >= OTHER_IO_BYTES).then_some(extra)
}

/// The bytes another process moved on the device during a run that moved `moved` bytes in
/// direction `op`, by [`beyond`]; `None` when not clearly more, or without a block device.
/// The run's own bytes are the larger of what it asked for and what the kernel fetched or
/// sent for it (`/proc/self/io`'s `read_bytes`, which holds its read-ahead).
pub fn other_io(
    op: Op,
    moved: u64,
    kernel: Option<ProcIo>,
    device: Option<DiskDelta>,
) -> Option<u64> {
    beyond(device_bytes(op, device?), own_bytes(op, moved, kernel))
}

/// A run's own bytes in direction `op`: the larger of what it moved and what the kernel
/// fetched or sent for it (`/proc/self/io`, which holds its read-ahead).
pub fn own_bytes(op: Op, moved: u64, kernel: Option<ProcIo>) -> u64 {
    let counted = kernel.map_or(0, |k| match op {
        Op::Read => k.read_bytes,
        Op::Write => k.write_bytes,
    });
    moved.max(counted)
}

/// The bytes the device moved in direction `op`.
pub fn device_bytes(op: Op, device: DiskDelta) -> u64 {
    match op {
        Op::Read => device.read_bytes,
        Op::Write => device.write_bytes,
    }
}

/// The resources tasks on the machine waited for during at least [`STALLED`] of a run, with
/// that share, most stalled first. I/O is named only for a run that reached the device with
/// no bytes of its own (`own_device_bytes`, from `/proc/self/io`): a run that reads from or
/// writes to the device waits for its own I/O, and the kernel counts that wait as a stall.
pub fn contended(pressure: &Pressure, own_device_bytes: u64) -> Vec<(Resource, f64)> {
    let mut out: Vec<(Resource, f64)> = Resource::ALL
        .into_iter()
        .filter(|r| *r != Resource::Io || own_device_bytes == 0)
        .filter_map(|r| pressure.get(r).map(|stall| (r, stall)))
        .filter(|(_, stall)| stall.share >= STALLED && stall.stalled_us >= STALLED_US)
        .map(|(r, stall)| (r, stall.share))
        .collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1));
    out
}

/// Whether a run is marked as taken under interference: the device served another
/// process clearly beyond the run (`other_io_bytes`), or the machine stalled on a resource
/// by [`contended`].
pub fn marked(
    other_io_bytes: Option<u64>,
    pressure: Option<&Pressure>,
    own_device_bytes: u64,
) -> bool {
    other_io_bytes.is_some() || pressure.is_some_and(|p| !contended(p, own_device_bytes).is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::pressure::Stall;

    const MIB: u64 = 1 << 20;

    fn read(device: u64) -> Option<DiskDelta> {
        Some(DiskDelta {
            read_bytes: device,
            write_bytes: 0,
        })
    }

    #[test]
    fn a_device_that_moved_three_times_the_runs_bytes_marks_the_run() {
        assert_eq!(
            other_io(Op::Read, 256 * MIB, None, read(768 * MIB)),
            Some(512 * MIB)
        );
        // The study's cold read: 754 MiB on the device for 256 MiB read.
        assert_eq!(
            other_io(Op::Read, 256 * MIB, None, read(754 * MIB)),
            Some(498 * MIB)
        );
    }

    #[test]
    fn a_direct_row_with_nearly_half_again_on_the_device_is_marked() {
        // A SEQ1M Q1T1 read row (O_DIRECT): 610 MB read, 884 MB on the device.
        assert_eq!(
            other_io(Op::Read, 610_271_232, None, read(884_211_712)),
            Some(884_211_712 - 610_271_232)
        );
    }

    #[test]
    fn read_ahead_of_a_tenth_more_is_the_runs_own() {
        let device = 256 * MIB + 256 * MIB / 10;
        assert_eq!(other_io(Op::Read, 256 * MIB, None, read(device)), None);
    }

    #[test]
    fn what_the_kernel_fetched_for_the_run_counts_as_its_own() {
        // 4 KiB random reads whose read-ahead made the process fetch 3x what it asked.
        let kernel = ProcIo {
            read_bytes: 96 * MIB,
            ..ProcIo::default()
        };
        assert_eq!(
            other_io(Op::Read, 32 * MIB, Some(kernel), read(100 * MIB)),
            None
        );
        assert_eq!(
            other_io(Op::Read, 32 * MIB, Some(kernel), read(300 * MIB)),
            Some(204 * MIB)
        );
    }

    #[test]
    fn writes_compare_the_devices_writes_not_its_reads() {
        let device = DiskDelta {
            read_bytes: 900 * MIB,
            write_bytes: 65 * MIB,
        };
        assert_eq!(other_io(Op::Write, 64 * MIB, None, Some(device)), None);
        let busy = DiskDelta {
            read_bytes: 0,
            write_bytes: 200 * MIB,
        };
        assert_eq!(
            other_io(Op::Write, 64 * MIB, None, Some(busy)),
            Some(136 * MIB)
        );
    }

    #[test]
    fn without_a_block_device_nothing_is_marked() {
        assert_eq!(other_io(Op::Read, 256 * MIB, None, None), None);
    }

    #[test]
    fn a_small_run_is_not_marked_for_its_file_systems_journal() {
        // 4 KiB written, 48 KiB on the device (journal, metadata): 12x, but 44 KiB.
        assert_eq!(beyond(48 << 10, 4 << 10), None);
        assert_eq!(beyond(4 * MIB, 0), Some(4 * MIB));
    }

    fn stalls(cpu: f64, io: f64, memory: f64) -> Pressure {
        // Over a run of one second.
        let s = |share: f64| {
            Some(Stall {
                stalled_us: (share * 1e6) as u64,
                share,
                avg10: 0.0,
            })
        };
        Pressure {
            cpu: s(cpu),
            io: s(io),
            memory: s(memory),
        }
    }

    #[test]
    fn a_high_stall_share_names_its_resource_most_stalled_first() {
        let named = contended(&stalls(0.35, 0.6, 0.05), 0);
        assert_eq!(named, vec![(Resource::Io, 0.6), (Resource::Cpu, 0.35)]);
        assert!(contended(&stalls(0.1, 0.1, 0.1), 0).is_empty());
        assert!(contended(&Pressure::default(), 0).is_empty());
    }

    #[test]
    fn a_run_that_reached_the_device_is_not_told_its_own_io_wait() {
        assert_eq!(
            contended(&stalls(0.0, 0.9, 0.0), 64 * MIB),
            Vec::<(Resource, f64)>::new()
        );
        assert_eq!(
            contended(&stalls(0.5, 0.9, 0.0), 64 * MIB),
            vec![(Resource::Cpu, 0.5)]
        );
    }

    #[test]
    fn a_run_is_marked_by_other_io_or_a_stall_not_by_its_own_io_wait() {
        assert!(marked(Some(64 * MIB), None, 0));
        assert!(marked(None, Some(&stalls(0.5, 0.0, 0.0)), 64 * MIB));
        assert!(!marked(None, Some(&stalls(0.0, 0.9, 0.0)), 64 * MIB));
        assert!(marked(None, Some(&stalls(0.0, 0.9, 0.0)), 0));
        assert!(!marked(None, Some(&stalls(0.1, 0.1, 0.1)), 0));
        assert!(!marked(None, None, 0));
    }

    #[test]
    fn a_high_share_of_a_run_of_a_few_milliseconds_is_not_named() {
        // 60% of a 10 ms run: 6 ms of some other task's wait, too little to tell.
        let short = Pressure {
            cpu: Some(Stall {
                stalled_us: 6_000,
                share: 0.6,
                avg10: 0.0,
            }),
            ..Pressure::default()
        };
        assert!(contended(&short, 0).is_empty());
        let long = Pressure {
            cpu: Some(Stall {
                stalled_us: 600_000,
                share: 0.6,
                avg10: 0.0,
            }),
            ..Pressure::default()
        };
        assert_eq!(contended(&long, 0), vec![(Resource::Cpu, 0.6)]);
    }
}
