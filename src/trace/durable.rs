//! Whether the writes a figure timed waited for the disk, or only for the page cache: read
//! from the trace, not assumed. A write that returns has reached the page cache; it waits
//! for the device only under an fsync-type call on its file (fsync, fdatasync,
//! sync_file_range, msync), or when the file was opened O_DIRECT, O_SYNC or O_DSYNC. Where
//! the figure's written files had none of these inside what it timed, its figure is the
//! page cache's (dd without `conv=fdatasync`, fio without `--end_fsync=1`).

use crate::measure::external::Moves;
use crate::trace::claims::{FigureCheck, Placement, SYNC_CALLS};
use crate::trace::tally::FileStats;

/// What a figure's timed writes waited for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// No fsync-type call, and no O_DIRECT, O_SYNC or O_DSYNC, on the written files: the
    /// figure is the page cache's.
    PageCache,
    /// An fsync-type call on the written files inside what the program timed: the figure
    /// includes the wait for the disk.
    SyncInside,
    /// An fsync-type call on the written files after the program's timer stopped (placed by
    /// its clock reads): the figure leaves it out, and is the page cache's.
    SyncAfter,
    /// An fsync-type call the figure's time cannot hold beside its I/O calls: made outside
    /// what it timed, and the figure is the page cache's.
    SyncOutside,
    /// An fsync-type call that fits in the figure's time beside its I/O calls: it may have
    /// been timed; only the program's clock reads can tell.
    SyncMaybe,
    /// Every written file was opened O_DIRECT: the writes went around the page cache.
    Direct,
    /// Every written file was opened O_SYNC or O_DSYNC: each write waited for the disk.
    SyncWrites,
}

/// What a figure's (or the run's) writes waited for, and the numbers that say so.
#[derive(Debug, Clone, PartialEq)]
pub struct Durability {
    /// What they waited for.
    pub waited: Waited,
    /// The written files the sentence is about: those without a flag where the figure is the
    /// page cache's, else every written file.
    pub files: Vec<String>,
    /// The flag that made the writes wait (`O_DIRECT`, `O_SYNC`, `O_DSYNC`), where one did.
    pub flag: Option<String>,
    /// The written files an fsync-type call was made on.
    pub synced: Vec<String>,
    /// The written files with neither such a call nor a flag, where others had one.
    pub unsynced: Vec<String>,
    /// The fsync-type calls on the written files, by name (`fdatasync`), where any.
    pub sync_calls: Vec<String>,
    /// How many such calls, and the seconds inside them.
    pub syncs: u64,
    /// Seconds inside them.
    pub sync_seconds: f64,
}

/// The files among `names` that were written and can store data (not the pipe a tool
/// prints its figures to), in the order of `names`.
fn written<'a>(names: &[String], files: &'a [FileStats]) -> Vec<&'a FileStats> {
    names
        .iter()
        .filter_map(|n| files.iter().find(|f| &f.path == n))
        .filter(|f| f.bytes_written > 0 || wrote_through_aio(f))
        .filter(|f| crate::trace::role::stores_data(f))
        .collect()
}

/// Whether a file's bytes were written by libaio requests (counted per file, not in
/// `bytes_written` alone).
fn wrote_through_aio(f: &FileStats) -> bool {
    crate::trace::claims::AIO_WRITE_CALLS
        .iter()
        .filter_map(|n| f.calls.get(*n))
        .any(|s| s.bytes_returned > 0)
}

/// The flag every one of `files` was opened with that made its writes wait: O_DIRECT
/// first, then O_SYNC, then O_DSYNC.
fn common_flag(files: &[&FileStats]) -> Option<String> {
    if files.is_empty() {
        return None;
    }
    let all = |names: &[&str]| {
        files
            .iter()
            .all(|f| names.iter().any(|n| f.opened_with.contains_key(*n)))
    };
    if all(&["O_DIRECT"]) {
        Some("O_DIRECT".into())
    } else if all(&["O_SYNC"]) {
        Some("O_SYNC".into())
    } else if all(&["O_SYNC", "O_DSYNC"]) {
        Some("O_DSYNC".into())
    } else {
        None
    }
}

/// The fsync-type calls made on `files`: their names, count and seconds.
fn syncs_on(files: &[&FileStats]) -> (Vec<String>, u64, f64) {
    let mut names: Vec<String> = Vec::new();
    let (mut calls, mut nanos) = (0, 0);
    for f in files {
        for n in SYNC_CALLS {
            if let Some(s) = f.calls.get(*n).filter(|s| s.calls > s.errors) {
                if !names.iter().any(|m| m == n) {
                    names.push((*n).to_string());
                }
                calls += s.calls - s.errors;
                nanos += s.nanos;
            }
        }
    }
    (names, calls, nanos as f64 / 1e9)
}

/// The written files and what made them wait, before the sync placement is known.
fn base(files: Vec<&FileStats>) -> Option<Durability> {
    if files.is_empty() {
        return None;
    }
    let (sync_calls, syncs, sync_seconds) = syncs_on(&files);
    let flag = common_flag(&files);
    let waited = match flag.as_deref() {
        Some("O_DIRECT") => Waited::Direct,
        Some(_) => Waited::SyncWrites,
        None => Waited::PageCache,
    };
    // Where the figure is the page cache's, the sentence names the files no flag covered.
    let named: Vec<String> = files
        .iter()
        .filter(|f| flag.is_some() || f.opened_with.is_empty())
        .map(|f| f.path.clone())
        .collect();
    let synced: Vec<String> = files
        .iter()
        .filter(|f| !syncs_on(&[**f]).0.is_empty())
        .map(|f| f.path.clone())
        .collect();
    let unsynced: Vec<String> = if synced.is_empty() {
        Vec::new()
    } else {
        files
            .iter()
            .filter(|f| f.opened_with.is_empty() && !synced.contains(&f.path))
            .map(|f| f.path.clone())
            .collect()
    };
    Some(Durability {
        waited,
        synced,
        unsynced,
        files: if named.is_empty() {
            files.iter().map(|f| f.path.clone()).collect()
        } else {
            named
        },
        flag,
        sync_calls,
        syncs,
        sync_seconds,
    })
}

/// What a checked figure's writes waited for: `None` for a figure that writes nothing, or
/// whose writes the trace did not see. The sync's place is the one the claim check found
/// (from the program's clock reads, or from whether its time can hold the sync).
pub fn of_figure(fc: &FigureCheck, files: &[FileStats]) -> Option<Durability> {
    if !matches!(fc.figure.moves, Moves::Write | Moves::Both) {
        return None;
    }
    let traced = fc.traced.as_ref()?;
    let mut d = base(written(&traced.files, files))?;
    if d.waited != Waited::PageCache {
        return Some(d);
    }
    d.waited = match fc.fsync.map(|c| (c.placement, c.tool_seconds > 0.0)) {
        Some((Placement::Inside, _)) => Waited::SyncInside,
        // Placed by the clock reads (no time argument): after the timer stopped.
        Some((Placement::Outside, false)) => Waited::SyncAfter,
        Some((Placement::Outside, true)) => Waited::SyncOutside,
        Some((Placement::Fits, _)) => Waited::SyncMaybe,
        // Syncs on its files that its region neither held nor was followed by: outside.
        Some((Placement::NoneMade, _)) | None if d.syncs > 0 => Waited::SyncOutside,
        _ => Waited::PageCache,
    };
    Some(d)
}

/// What the whole run's writes waited for, where no figure of the program is checked: its
/// written regular files and block devices (`None` where it wrote to none). A sync on them
/// anywhere in the run is inside the run's time.
pub fn of_run(files: &[FileStats]) -> Option<Durability> {
    let data: Vec<&FileStats> = files
        .iter()
        .filter(|f| f.bytes_written > 0 || wrote_through_aio(f))
        .filter(|f| crate::trace::role::stores_data(f))
        .collect();
    let mut d = base(data)?;
    if d.waited == Waited::PageCache && d.syncs > 0 {
        d.waited = Waited::SyncInside;
    }
    Some(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::external::ClaimedFigure;
    use crate::trace::claims::{Calls, Covers, Reason, Traced, Verdict};
    use crate::trace::tally::{CallStats, FileKind};

    fn file(path: &str, written: u64, syncs: &[(&str, u64)], flags: &[&str]) -> FileStats {
        let mut f: FileStats = serde_json::from_value(serde_json::json!({
            "path": path, "calls": {}, "bytes_read": 0, "bytes_written": written,
            "syncs": 0, "sync_nanos": 0, "seeks": 0,
            "offsets": {"width": 4096, "counts": vec![0; 32]},
            "timeline": {"stride": 0, "offsets": [], "seen": 0}
        }))
        .expect("a file's JSON");
        f.kind = Some(FileKind::Regular);
        f.calls.insert(
            "write".into(),
            CallStats {
                calls: 1,
                bytes_returned: written,
                ..CallStats::default()
            },
        );
        for (name, n) in syncs {
            f.calls.insert(
                (*name).into(),
                CallStats {
                    calls: *n,
                    nanos: 5_000_000,
                    ..CallStats::default()
                },
            );
            f.syncs += n;
        }
        for flag in flags {
            f.opened_with.insert((*flag).into(), 1);
        }
        f
    }

    fn figure(moves: Moves, fsync: Option<Placement>, by_clock: bool) -> FigureCheck {
        FigureCheck {
            figure: ClaimedFigure {
                label: "copy".into(),
                moves,
                bytes: 64 << 20,
                record_size: None,
                seconds: Some(0.03),
                said: "2.1 GB/s".into(),
            },
            traced: Some(Traced {
                moves,
                bytes: 64 << 20,
                calls: 64,
                seconds: 0.03,
                covers: Covers::TimedRegion,
                files: vec!["/dev/zero".into(), "/d/f".into(), "pipe:[7]".into()],
            }),
            ratio: Some(1.0),
            verdict: Verdict::Agree,
            reason: Reason::None,
            shared_with: Vec::new(),
            gap_seconds: 0.0,
            tracing_seconds: None,
            fsync: fsync.map(|placement| Calls {
                calls: 1,
                seconds: 0.005,
                placement,
                tool_seconds: if by_clock { 0.0 } else { 0.03 },
                calls_seconds: 0.02,
            }),
            close: None,
            stretch: None,
        }
    }

    #[test]
    fn a_plain_copy_with_no_sync_is_the_page_caches() {
        // Its figures printed to a pipe, inside its region: not a file it stored data in.
        let mut pipe = file("pipe:[7]", 94, &[], &[]);
        pipe.kind = Some(FileKind::Pipe);
        let files = [file("/d/f", 64 << 20, &[], &[]), pipe];
        let d = of_figure(&figure(Moves::Both, None, true), &files).unwrap();
        assert_eq!(d.waited, Waited::PageCache);
        assert_eq!(d.files, vec!["/d/f".to_string()]);
    }

    #[test]
    fn an_fdatasync_inside_the_timed_region_is_the_disks() {
        let files = [file("/d/f", 64 << 20, &[("fdatasync", 1)], &[])];
        let d = of_figure(&figure(Moves::Both, Some(Placement::Inside), true), &files).unwrap();
        assert_eq!(d.waited, Waited::SyncInside);
        assert_eq!(d.sync_calls, vec!["fdatasync".to_string()]);
    }

    #[test]
    fn a_sync_after_the_timer_stopped_leaves_the_figure_the_page_caches() {
        let files = [file("/d/f", 64 << 20, &[("fsync", 1)], &[])];
        let by_clock = figure(Moves::Write, Some(Placement::Outside), true);
        assert_eq!(
            of_figure(&by_clock, &files).unwrap().waited,
            Waited::SyncAfter
        );
        let by_time = figure(Moves::Write, Some(Placement::Outside), false);
        assert_eq!(
            of_figure(&by_time, &files).unwrap().waited,
            Waited::SyncOutside
        );
        let fits = figure(Moves::Write, Some(Placement::Fits), false);
        assert_eq!(of_figure(&fits, &files).unwrap().waited, Waited::SyncMaybe);
        // Synced, but neither inside its region nor after it: outside.
        assert_eq!(
            of_figure(&figure(Moves::Write, None, true), &files)
                .unwrap()
                .waited,
            Waited::SyncOutside
        );
    }

    #[test]
    fn o_direct_or_o_dsync_writes_are_not_the_page_caches_even_with_no_sync() {
        let direct = [file("/d/f", 64 << 20, &[], &["O_DIRECT"])];
        let d = of_figure(&figure(Moves::Both, None, true), &direct).unwrap();
        assert_eq!(d.waited, Waited::Direct);
        assert_eq!(d.flag.as_deref(), Some("O_DIRECT"));
        let dsync = [file("/d/f", 64 << 20, &[], &["O_DSYNC"])];
        let d = of_figure(&figure(Moves::Both, None, true), &dsync).unwrap();
        assert_eq!(d.waited, Waited::SyncWrites);
        assert_eq!(d.flag.as_deref(), Some("O_DSYNC"));
    }

    #[test]
    fn one_direct_file_among_two_written_leaves_the_other_the_page_caches() {
        let mut fc = figure(Moves::Write, None, true);
        fc.traced.as_mut().unwrap().files = vec!["/d/a".into(), "/d/b".into()];
        let files = [
            file("/d/a", 1 << 20, &[], &["O_DIRECT"]),
            file("/d/b", 1 << 20, &[], &[]),
        ];
        let d = of_figure(&fc, &files).unwrap();
        assert_eq!(d.waited, Waited::PageCache);
        assert_eq!(d.files, vec!["/d/b".to_string()]);
    }

    #[test]
    fn a_read_figure_or_a_figure_with_nothing_written_says_nothing() {
        let files = [file("/d/f", 64 << 20, &[], &[])];
        assert!(of_figure(&figure(Moves::Read, None, true), &files).is_none());
        let unwritten = [file("/d/f", 0, &[], &[])];
        assert!(of_figure(&figure(Moves::Write, None, true), &unwritten).is_none());
    }

    #[test]
    fn a_run_is_the_page_caches_unless_its_written_files_were_synced() {
        let mut pipe = file("pipe:[1]", 100, &[], &[]);
        pipe.kind = Some(FileKind::Pipe);
        let plain = [file("/d/f", 1 << 20, &[], &[]), pipe.clone()];
        let d = of_run(&plain).unwrap();
        assert_eq!(d.waited, Waited::PageCache);
        assert_eq!(d.files, vec!["/d/f".to_string()]);
        let synced = [
            file("/d/f", 1 << 20, &[("fsync", 1)], &[]),
            file("/d/log", 10, &[], &[]),
            pipe.clone(),
        ];
        let d = of_run(&synced).unwrap();
        assert_eq!(d.waited, Waited::SyncInside);
        // The sync is told on the file it was made on; the other is named apart.
        assert_eq!(d.synced, vec!["/d/f".to_string()]);
        assert_eq!(d.unsynced, vec!["/d/log".to_string()]);
        // Only a pipe written: nothing stored, nothing to say.
        assert!(of_run(&[pipe]).is_none());
    }
}
