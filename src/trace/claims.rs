//! Each figure a traced tool printed, checked against what the trace saw over the right
//! time: the bytes of the figure's direction over the time inside the calls that moved them
//! (not the whole run, whose start-up makes every tool look slow), or, where the trace
//! knows the program's own timed region, over that region ([`check_against_region`]).
//! Whether fsync and close could have been inside what the tool timed is decided from the
//! same numbers. Every outcome is chosen by the one rule of [`crate::measure::verdict`],
//! and the reason told for a difference is the one the numbers support.

use crate::measure::external::{ClaimedFigure, Moves, ToolClaim};
use crate::measure::verdict::{self, Figure, Relation};
use crate::trace::clock::{Region, SYNCS};
use crate::trace::phases::{self, Stretch, Test};
use crate::trace::tally::FileStats;
use serde::{Deserialize, Serialize};

/// Read-type calls: their bytes are the bytes read.
pub const READ_CALLS: &[&str] = &["read", "pread64", "readv", "preadv"];
/// Write-type calls: their bytes are the bytes written.
pub const WRITE_CALLS: &[&str] = &["write", "pwrite64", "writev", "pwritev"];
/// Calls that push a file's data to its device.
pub const SYNC_CALLS: &[&str] = &["fsync", "fdatasync", "sync_file_range", "msync"];

/// libaio's read requests (counted from the iocbs io_submit took: see `trace::tally::aio`).
pub const AIO_READ_CALLS: &[&str] = &["aio pread", "aio preadv"];
/// libaio's write requests.
pub const AIO_WRITE_CALLS: &[&str] = &["aio pwrite", "aio pwritev"];

/// A direction's I/O was seen when one file moved at least this share of the bytes its
/// figures claim; below it, the files the trace saw moving bytes that way are others (the
/// libraries a loader reads, configuration) and the figures' own bytes moved where ptrace
/// does not see (io_uring, a mapping): 1%.
pub const SEEN_SHARE: f64 = 0.01;

/// A file carries a direction's bytes when it moved at least this share of all the bytes
/// traced that way (the tool's data files, not its output pipe or the files it read to
/// start): 1%.
pub const DATA_SHARE: f64 = 0.01;

/// What the traced figure covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Covers {
    /// The time inside the calls of the figure's direction on the data files.
    InsideCalls,
    /// The program's own timed region (between its clock reads around the I/O).
    TimedRegion,
    /// The time libaio requests of the figure's direction were in flight on the data files
    /// (from io_submit to the io_getevents that collected them): the tool's I/O went
    /// through libaio.
    AioInFlight,
    /// The stretch of the figure's own test from the open of its file to the close
    /// (bonnie++, which times each test from after the open to after the close).
    OpenToClose,
}

/// What the trace saw of one direction on the files that carried it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Traced {
    /// Which way (`both`: per byte read and written back, as dd's copy or bonnie++'s
    /// rewrite: the time inside one read and one write of each byte).
    pub moves: Moves,
    /// Bytes moved that way.
    pub bytes: u64,
    /// Calls that moved them.
    pub calls: u64,
    /// Seconds inside those calls (or the region's seconds).
    pub seconds: f64,
    /// What the seconds cover.
    pub covers: Covers,
    /// The files counted, busiest first.
    pub files: Vec<String>,
}

impl Traced {
    /// Bytes over seconds (0 without time).
    pub fn bytes_per_second(&self) -> f64 {
        crate::units::per_second(self.bytes, self.seconds)
    }
}

/// What one claimed figure is to the traced one, by the one rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Within 10%.
    Agree,
    /// The tool's figure is clearly above the traced one.
    ClaimHigher,
    /// The tool's figure is clearly below the traced one.
    ClaimLower,
    /// They differ but their spreads overlap.
    Unclear,
    /// The tool printed no figure (bonnie++'s `+++++`).
    NoFigure,
    /// The figure counts no bytes (bonnie++'s seeks/s).
    NotBytes,
    /// The trace saw no bytes that way.
    NotTraced,
}

/// Why a claim differs from the traced figure: the story the numbers support.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// No difference to explain.
    None,
    /// The trace saw clearly fewer bytes that way than the figures claim: the rest moved
    /// where ptrace does not see (a mapping, libaio, io_uring).
    Unseen,
    /// The traced figure also holds other bytes: other figures of the same direction, or
    /// bytes the figures do not claim (fio laying out its file).
    Mixed,
    /// The claim is higher and nothing else explains it: some of its calls fell outside
    /// what it timed.
    PartlyUntimed,
    /// The claim is lower, and the time inside fsync accounts for the difference.
    Fsync,
    /// The claim is lower, and tracing's own stops (calls × cost per call) account for it.
    TracingStops,
    /// The claim is lower by more than fsync or tracing's stops account for: the tool's own
    /// work between its calls.
    OwnWork,
}

/// Whether fsync or close was inside what the tool timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// No such call on the data files.
    NoneMade,
    /// Known inside (from the program's clock reads).
    Inside,
    /// Outside: known from its clock reads, or because the tool's seconds are clearly
    /// shorter than the time inside its calls and these together (they could not fit).
    Outside,
    /// They fit in its seconds: they may have been timed; only its clock reads can tell.
    Fits,
}

/// The fsync-type or close calls on the data files.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Calls {
    /// How many.
    pub calls: u64,
    /// Seconds inside them.
    pub seconds: f64,
    /// Whether they were inside what the tool timed.
    pub placement: Placement,
    /// The tool's seconds they were set against (its figures of that direction together).
    pub tool_seconds: f64,
    /// The seconds inside the I/O calls beside them in that test.
    pub calls_seconds: f64,
}

/// One claimed figure, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureCheck {
    /// The figure as the tool printed it.
    pub figure: ClaimedFigure,
    /// The traced figure it is compared with (none when nothing was traced that way).
    pub traced: Option<Traced>,
    /// The figure's rate over the traced one.
    pub ratio: Option<f64>,
    /// What the rule says.
    pub verdict: Verdict,
    /// Why, where they differ.
    pub reason: Reason,
    /// The other figures compared with the same traced figure (iozone's write and rewrite
    /// against every write() on its file).
    pub shared_with: Vec<String>,
    /// Seconds of the tool's figure beyond the traced seconds for its bytes (claim lower).
    pub gap_seconds: f64,
    /// Tracing's own cost over the calls of the figure's bytes (calls × cost per call).
    pub tracing_seconds: Option<f64>,
    /// fsync-type calls on its files (writes only).
    pub fsync: Option<Calls>,
    /// close calls on its files.
    pub close: Option<Calls>,
    /// bonnie++: the open-to-close stretch of the figure's own test, or that none was found
    /// (absent for other tools and in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stretch: Option<TestStretch>,
}

/// The stretch of one of bonnie++'s tests a figure was checked against.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestStretch {
    /// The test, as told by what the stretch did.
    pub test: Test,
    /// Stretches that did what the test does (the seek test: one per child; 0: not found).
    pub found: u64,
    /// The thread of the one checked against.
    pub tid: Option<i32>,
    /// Seconds from the trace's start to the end of its open.
    pub start_seconds: Option<f64>,
    /// Seconds from the trace's start to the end of its close.
    pub end_seconds: Option<f64>,
    /// Whether the thread read its clock after the close (before its next open): what
    /// shows fsync and close inside a figure timed from open to close. `None`: no clock
    /// read was seen at all (the vDSO was kept).
    pub clock_after_close: Option<bool>,
}

/// A direction's figures together against the trace: whether the bytes add up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BytesCheck {
    /// Read or write.
    pub moves: Moves,
    /// Bytes the figures that move this way claim, summed.
    pub claimed: u64,
    /// Bytes the trace saw that way on the data files.
    pub traced: u64,
    /// The rule's word on claimed against traced.
    pub verdict: Verdict,
}

/// Every figure of a claim, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimCheck {
    /// Per figure, in the tool's order.
    pub figures: Vec<FigureCheck>,
    /// Per direction, the bytes.
    pub bytes: Vec<BytesCheck>,
}

/// The traced figures of one direction on the files that carried it.
#[derive(Default)]
struct Side {
    bytes: u64,
    calls: u64,
    seconds: f64,
    files: Vec<String>,
    sync: (u64, f64),
    close: (u64, f64),
    /// The bytes of the file that moved the most.
    busiest: u64,
    /// Whether these are libaio requests.
    aio: bool,
}

/// A direction's side: its libaio requests where the tool's I/O went through libaio (the
/// plain reads beside them are its start-up's), else its plain calls.
fn side_of(files: &[FileStats], plain: &[&str], aio: &[&str]) -> Side {
    let requests = side(files, aio);
    if requests.bytes > 0 {
        Side {
            aio: true,
            ..requests
        }
    } else {
        side(files, plain)
    }
}

fn side(files: &[FileStats], names: &[&str]) -> Side {
    let moved = |f: &FileStats| -> (u64, u64, u64) {
        let mut out = (0, 0, 0);
        for n in names {
            if let Some(s) = f.calls.get(*n) {
                out.0 += s.bytes_returned;
                out.1 += s.calls;
                out.2 += s.nanos;
            }
        }
        out
    };
    let total: u64 = files.iter().map(|f| moved(f).0).sum();
    let mut data: Vec<&FileStats> = files
        .iter()
        .filter(|f| {
            let b = moved(f).0;
            b > 0 && b as f64 >= DATA_SHARE * total as f64
        })
        .collect();
    data.sort_by_key(|f| std::cmp::Reverse(moved(f).0));
    let of = |f: &FileStats, calls: &[&str]| -> (u64, f64) {
        calls
            .iter()
            .filter_map(|n| f.calls.get(*n))
            .fold((0, 0.0), |(c, s), st| {
                (c + st.calls, s + st.nanos as f64 / 1e9)
            })
    };
    let add = |a: (u64, f64), b: (u64, f64)| (a.0 + b.0, a.1 + b.1);
    Side {
        busiest: data.first().map_or(0, |f| moved(f).0),
        aio: false,
        bytes: data.iter().map(|f| moved(f).0).sum(),
        calls: data.iter().map(|f| moved(f).1).sum(),
        seconds: data.iter().map(|f| moved(f).2).sum::<u64>() as f64 / 1e9,
        files: data.iter().map(|f| f.path.clone()).collect(),
        sync: data.iter().map(|f| of(f, SYNC_CALLS)).fold((0, 0.0), add),
        close: data.iter().map(|f| of(f, &["close"])).fold((0, 0.0), add),
    }
}

/// The traced figure a figure moving `moves` is compared with.
fn traced_for(moves: Moves, read: &Side, write: &Side) -> Option<Traced> {
    let covers = |s: &Side| {
        if s.aio {
            Covers::AioInFlight
        } else {
            Covers::InsideCalls
        }
    };
    let one = |s: &Side, m: Moves| Traced {
        moves: m,
        bytes: s.bytes,
        calls: s.calls,
        seconds: s.seconds,
        covers: covers(s),
        files: s.files.clone(),
    };
    match moves {
        Moves::Read if read.bytes > 0 => Some(one(read, Moves::Read)),
        Moves::Write if write.bytes > 0 => Some(one(write, Moves::Write)),
        Moves::Both if read.bytes > 0 && write.bytes > 0 => {
            // Per byte read and written back: the bytes each way (the smaller), over the
            // time the calls of each way take for that many bytes.
            let bytes = read.bytes.min(write.bytes);
            let seconds = read.seconds * bytes as f64 / read.bytes as f64
                + write.seconds * bytes as f64 / write.bytes as f64;
            let mut files = write.files.clone();
            files.extend(
                read.files
                    .iter()
                    .filter(|f| !write.files.contains(f))
                    .cloned(),
            );
            Some(Traced {
                moves: Moves::Both,
                bytes,
                calls: read.calls + write.calls,
                seconds,
                covers: if read.aio || write.aio {
                    Covers::AioInFlight
                } else {
                    Covers::InsideCalls
                },
                files,
            })
        }
        _ => None,
    }
}

/// What the rule says of `a` against `b`, one value each.
fn relation(a: f64, b: f64) -> (Verdict, f64) {
    match verdict::relate(Figure::one(a), Figure::one(b)) {
        Relation::Same => (Verdict::Agree, verdict::ratio(a, b)),
        Relation::Above(r) => (Verdict::ClaimHigher, r),
        Relation::Below(r) => (Verdict::ClaimLower, r),
        Relation::Unclear(r) => (Verdict::Unclear, r),
    }
}

/// Whether calls taking `extra` seconds fit, beside `inside` seconds of I/O calls, in the
/// tool's `claimed` seconds: clearly not (the claimed seconds are below by the rule) means
/// they were outside what it timed.
fn placement(calls: u64, claimed: f64, inside: f64, extra: f64) -> Placement {
    if calls == 0 {
        return Placement::NoneMade;
    }
    match relation(claimed, inside + extra).0 {
        Verdict::ClaimLower => Placement::Outside,
        _ => Placement::Fits,
    }
}

/// Checks every figure of `claim` against the time inside the calls of its direction on
/// the files that carried that direction's bytes. `overhead_ns` is tracing's measured cost
/// per call, where known.
pub fn check(claim: &ToolClaim, files: &[FileStats], overhead_ns: Option<f64>) -> ClaimCheck {
    let moves_way = |f: &ClaimedFigure, way: Moves| f.moves == way || f.moves == Moves::Both;
    let claimed_bytes = |way: Moves| -> u64 {
        claim
            .figures
            .iter()
            .filter(|f| moves_way(f, way) && f.seconds.is_some())
            .map(|f| f.bytes)
            .sum()
    };
    // A direction whose figures' bytes no file carried (not even SEEN_SHARE of them) was
    // not seen: the bytes the trace saw that way are other files', and the figures are not
    // set against them.
    let seen = |s: Side, way: Moves| {
        if (s.busiest as f64) < SEEN_SHARE * claimed_bytes(way) as f64 {
            Side::default()
        } else {
            s
        }
    };
    let read = seen(side_of(files, READ_CALLS, AIO_READ_CALLS), Moves::Read);
    let write = seen(side_of(files, WRITE_CALLS, AIO_WRITE_CALLS), Moves::Write);
    let unseen_way = |way: Moves| {
        let s = if way == Moves::Read { &read } else { &write };
        s.bytes == 0 && claimed_bytes(way) > 0
    };
    let mut bytes = Vec::new();
    for (way, s) in [(Moves::Read, &read), (Moves::Write, &write)] {
        let claimed = claimed_bytes(way);
        if claimed > 0 || (s.bytes > 0 && claim.figures.iter().any(|f| moves_way(f, way))) {
            let v = if s.bytes == 0 {
                Verdict::NotTraced
            } else {
                relation(claimed as f64, s.bytes as f64).0
            };
            bytes.push(BytesCheck {
                moves: way,
                claimed,
                traced: s.bytes,
                verdict: v,
            });
        }
    }
    let bytes_verdict = |way: Moves| {
        bytes
            .iter()
            .find(|b| b.moves == way)
            .map_or(Verdict::Agree, |b| b.verdict)
    };
    // Seconds the figures of a direction claim together, against the calls' time: whether
    // fsync and close could have been inside.
    let claimed_seconds = |way: Moves| -> f64 {
        claim
            .figures
            .iter()
            .filter(|f| moves_way(f, way))
            .filter_map(|f| f.seconds)
            .sum()
    };
    let fsync = (write.sync.0 > 0).then(|| Calls {
        calls: write.sync.0,
        seconds: write.sync.1,
        tool_seconds: claimed_seconds(Moves::Write),
        calls_seconds: write.seconds,
        placement: placement(
            write.sync.0,
            claimed_seconds(Moves::Write),
            write.seconds,
            write.sync.1,
        ),
    });
    let close_of = |way: Moves, s: &Side| {
        let before = match (way, fsync) {
            (Moves::Write, Some(f)) if f.placement == Placement::Fits => f.seconds,
            _ => 0.0,
        };
        (s.close.0 > 0).then(|| Calls {
            calls: s.close.0,
            seconds: s.close.1,
            tool_seconds: claimed_seconds(way),
            calls_seconds: s.seconds + before,
            placement: placement(
                s.close.0,
                claimed_seconds(way),
                s.seconds + before,
                s.close.1,
            ),
        })
    };
    let close_read = close_of(Moves::Read, &read);
    let close_write = close_of(Moves::Write, &write);
    let figures = claim
        .figures
        .iter()
        .map(|f| {
            let traced = traced_for(f.moves, &read, &write);
            let shared_with: Vec<String> = claim
                .figures
                .iter()
                .filter(|o| !std::ptr::eq(*o, f) && o.seconds.is_some())
                .filter(|o| match f.moves {
                    Moves::Both => o.moves != Moves::Neither,
                    m => moves_way(o, m),
                })
                .map(|o| o.label.clone())
                .collect();
            let way = if f.moves == Moves::Read {
                Moves::Read
            } else {
                Moves::Write
            };
            let (fsync, close) = match f.moves {
                Moves::Read => (None, close_read),
                Moves::Write | Moves::Both => (fsync, close_write),
                Moves::Neither => (None, None),
            };
            let mut out = FigureCheck {
                figure: f.clone(),
                traced: traced.clone(),
                ratio: None,
                verdict: Verdict::NotTraced,
                reason: Reason::None,
                shared_with,
                gap_seconds: 0.0,
                tracing_seconds: None,
                fsync,
                close,
                stretch: None,
            };
            let (Some(claimed), Some(t)) = (f.bytes_per_second(), traced) else {
                out.verdict = match (f.moves, f.seconds) {
                    (Moves::Neither, _) => Verdict::NotBytes,
                    (_, None) => Verdict::NoFigure,
                    _ => Verdict::NotTraced,
                };
                // Its bytes moved, but not where the trace sees.
                let unseen = match f.moves {
                    Moves::Read | Moves::Write => unseen_way(f.moves),
                    Moves::Both => unseen_way(Moves::Read) || unseen_way(Moves::Write),
                    Moves::Neither => false,
                };
                if out.verdict == Verdict::NotTraced && f.bytes > 0 && unseen {
                    out.reason = Reason::Unseen;
                }
                return out;
            };
            let (v, r) = relation(claimed, t.bytes_per_second());
            out.verdict = v;
            out.ratio = Some(r);
            // The traced seconds and calls for this figure's bytes, at the traced rate.
            let share = f.bytes as f64 / t.bytes.max(1) as f64;
            let traced_seconds = t.seconds * share;
            out.gap_seconds = gap(f.seconds.unwrap_or(0.0), traced_seconds);
            out.tracing_seconds = overhead_ns.map(|ns| ns / 1e9 * t.calls as f64 * share);
            let unseen = bytes_verdict(way) == Verdict::ClaimHigher
                || (f.moves == Moves::Both && bytes_verdict(Moves::Read) == Verdict::ClaimHigher);
            let mixed = !out.shared_with.is_empty() || bytes_verdict(way) == Verdict::ClaimLower;
            out.reason = match v {
                Verdict::Agree => Reason::None,
                _ if unseen => Reason::Unseen,
                _ if mixed => Reason::Mixed,
                Verdict::ClaimHigher => Reason::PartlyUntimed,
                _ => {
                    let gap = out.gap_seconds;
                    let accounts = |s: f64| !matches!(relation(s, gap).0, Verdict::ClaimLower);
                    let fsync_fits = out.fsync.is_some_and(|c| c.placement == Placement::Fits);
                    if fsync_fits && accounts(out.fsync.map_or(0.0, |c| c.seconds)) {
                        Reason::Fsync
                    } else if out.tracing_seconds.is_some_and(accounts) {
                        Reason::TracingStops
                    } else {
                        Reason::OwnWork
                    }
                }
            };
            out
        })
        .collect();
    ClaimCheck { figures, bytes }
}

/// What the trace saw inside one of the program's own timed regions (between the clock
/// reads around its I/O): the hook by which a trace that finds them checks a figure against
/// its region instead of the time inside the calls.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionSeen {
    /// Bytes moved inside the region, in the figure's direction.
    pub bytes: u64,
    /// Calls that moved them.
    pub calls: u64,
    /// The region's seconds (from the first clock read to the last).
    pub seconds: f64,
    /// The files they moved on.
    pub files: Vec<String>,
    /// fsync-type calls on those files: how many, their seconds, and whether inside.
    pub fsync: Option<(u64, f64, bool)>,
    /// close calls on those files: how many, their seconds, and whether inside.
    pub close: Option<(u64, f64, bool)>,
}

/// Checks one figure against the program's own timed region: its rate against the bytes
/// moved inside the region over the region's seconds; fsync and close inside or after, as
/// the clock reads placed them.
pub fn check_against_region(figure: &ClaimedFigure, region: &RegionSeen) -> FigureCheck {
    let known = |c: Option<(u64, f64, bool)>| {
        c.map(|(calls, seconds, inside)| Calls {
            calls,
            seconds,
            // Placed by the clock reads themselves: no time argument is needed.
            tool_seconds: 0.0,
            calls_seconds: 0.0,
            placement: if inside {
                Placement::Inside
            } else {
                Placement::Outside
            },
        })
    };
    let traced = Traced {
        moves: figure.moves,
        bytes: region.bytes,
        calls: region.calls,
        seconds: region.seconds,
        covers: Covers::TimedRegion,
        files: region.files.clone(),
    };
    let (verdict, ratio) = match figure.bytes_per_second() {
        Some(c) if region.bytes > 0 => {
            let (v, r) = relation(c, traced.bytes_per_second());
            (v, Some(r))
        }
        Some(_) => (Verdict::NotTraced, None),
        None => (Verdict::NoFigure, None),
    };
    let reason = match verdict {
        Verdict::ClaimHigher | Verdict::ClaimLower | Verdict::Unclear => {
            match relation(figure.bytes as f64, region.bytes as f64).0 {
                Verdict::ClaimHigher => Reason::Unseen,
                Verdict::ClaimLower => Reason::Mixed,
                _ if verdict == Verdict::ClaimHigher => Reason::PartlyUntimed,
                _ => Reason::OwnWork,
            }
        }
        _ => Reason::None,
    };
    FigureCheck {
        figure: figure.clone(),
        gap_seconds: gap(figure.seconds.unwrap_or(0.0), region.seconds),
        traced: Some(traced),
        ratio,
        verdict,
        reason,
        shared_with: Vec::new(),
        tracing_seconds: None,
        fsync: known(region.fsync),
        close: known(region.close),
        stretch: None,
    }
}

/// Checks each figure against the program's own timed region where one matches it: the
/// regions in time order, each figure (in the tool's order, which is the order its tests
/// ran) taking the first unused region after the last one taken that moved, in the figure's
/// direction, the figure's bytes within the one rule's "same" (iozone's write test: the
/// region around its 1,024 write() calls). Figures with no such region keep their check
/// against the time inside the calls. `overhead_ns`, tracing's measured cost per call,
/// gives what the traced calls inside a region cost it.
pub fn against_regions(check: &mut ClaimCheck, regions: &[Region], overhead_ns: Option<f64>) {
    // A tool's figure is first looked for among the regions its threads timed around their
    // own I/O; one timed around other tasks' I/O (a parent timing its children) is taken
    // only where none of those matches.
    let mut ordered: Vec<&Region> = regions.iter().filter(|r| !r.across()).collect();
    ordered.sort_by(|a, b| a.start_seconds.total_cmp(&b.start_seconds));
    let mut across: Vec<&Region> = regions.iter().filter(|r| r.across()).collect();
    across.sort_by(|a, b| a.start_seconds.total_cmp(&b.start_seconds));
    let mut next = 0;
    let mut next_across = 0;
    for fc in &mut check.figures {
        // A copy's figure (dd's) counts the bytes copied once: those written, not the sum
        // of both directions.
        let moved = |r: &Region| match fc.figure.moves {
            Moves::Read => Some(r.bytes_read),
            Moves::Write | Moves::Both => Some(r.bytes_written),
            Moves::Neither => None,
        };
        let fits = |r: &Region| {
            moved(r).is_some_and(|b| b > 0 && verdict::same(b as f64, fc.figure.bytes as f64))
        };
        let region = match ordered.iter().enumerate().skip(next).find(|(_, r)| fits(r)) {
            Some((i, region)) => {
                next = i + 1;
                *region
            }
            None => match across
                .iter()
                .enumerate()
                .skip(next_across)
                .find(|(_, r)| fits(r))
            {
                Some((i, region)) => {
                    next_across = i + 1;
                    *region
                }
                None => continue,
            },
        };
        let bytes = moved(region).unwrap_or(0);
        let calls = region
            .inside
            .iter()
            .filter(|(name, _)| !SYNCS.contains(&name.as_str()) && name.as_str() != "close")
            .map(|(_, m)| m.calls)
            .sum();
        let syncs_inside = region.syncs_inside();
        let syncs_after = region.syncs_after();
        let placed = |inside: u64, after: u64| match (inside, after) {
            (0, 0) => None,
            (0, n) => Some((n, 0.0, false)),
            (n, _) => Some((n, 0.0, true)),
        };
        let seen = RegionSeen {
            bytes,
            calls,
            seconds: region.seconds(),
            files: region.files.iter().map(|f| f.path.clone()).collect(),
            fsync: placed(syncs_inside, syncs_after),
            close: placed(
                region.closing_inside.get("close").copied().unwrap_or(0),
                region.after.get("close").copied().unwrap_or(0),
            ),
        };
        *fc = check_against_region(&fc.figure, &seen);
        // Every traced call inside the region paid tracing's cost, inside the tool's time.
        let traced_calls: u64 = region.inside.values().map(|m| m.calls).sum();
        fc.tracing_seconds = overhead_ns.map(|ns| ns / 1e9 * traced_calls as f64);
    }
}

/// A stretch of one of bonnie++'s tests counts when it moved at least this share of the
/// bytes of the busiest stretch of that test (its data file, not a progress line written to
/// the terminal between tests): 1%.
pub const STRETCH_SHARE: f64 = 0.01;

/// The run a figure's label names (`rewrite (run 2)`: 1), counted from 0.
fn run_of(label: &str) -> usize {
    label
        .rsplit_once(" (run ")
        .and_then(|(_, n)| n.trim_end_matches(')').parse::<usize>().ok())
        .map_or(0, |n| n.saturating_sub(1))
}

/// The indices of the stretches of `test` that count ([`STRETCH_SHARE`]), in the order
/// they began.
fn stretches_of(stretches: &[Stretch], test: Test) -> Vec<usize> {
    let of: Vec<usize> = (0..stretches.len())
        .filter(|&i| phases::classify(&stretches[i]) == Some(test))
        .collect();
    let busiest = of.iter().map(|&i| stretches[i].bytes()).max().unwrap_or(0);
    of.into_iter()
        .filter(|&i| stretches[i].bytes() as f64 >= STRETCH_SHARE * busiest as f64)
        .collect()
}

/// The stretches that are one of bonnie++'s tests ([`STRETCH_SHARE`] of the busiest of
/// their test or more), in the order they began: what a trace of bonnie++ keeps.
pub fn test_stretches(stretches: Vec<Stretch>) -> Vec<Stretch> {
    let kept: Vec<usize> = phases::TESTS
        .iter()
        .flat_map(|t| stretches_of(&stretches, *t))
        .collect();
    stretches
        .into_iter()
        .enumerate()
        .filter_map(|(i, s)| kept.contains(&i).then_some(s))
        .collect()
}

/// Checks each of bonnie++'s figures against its own test's open-to-close stretch (the
/// test told apart by what the stretch did, [`phases::classify`]; with `-x N`, run k's
/// figure takes the k-th): its rate against the bytes of its direction over the stretch's
/// seconds, by the one rule. A per-char figure counts the bytes its stretch's one-byte
/// calls moved (not a size assumed for the version). fsync and close are inside a stretch;
/// they are inside the figure where the thread read its clock after the close (bonnie++
/// reads it after the open and again after the close). A figure whose stretch is not found
/// keeps its check against the calls and says so.
pub fn against_stretches(check: &mut ClaimCheck, stretches: &[Stretch]) {
    let clocks_seen = stretches.iter().any(|s| s.clock_after_close > 0);
    // Runs of the seek test: each starts as many seek processes (one stretch each).
    let runs = check
        .figures
        .iter()
        .filter(|f| Test::of_label(&f.figure.label) == Some(Test::Seeks))
        .count()
        .max(1);
    for fc in &mut check.figures {
        let Some(test) = Test::of_label(&fc.figure.label) else {
            continue;
        };
        let of = stretches_of(stretches, test);
        let run = run_of(&fc.figure.label);
        let at = if test == Test::Seeks {
            run * (of.len() / runs)
        } else {
            run
        };
        let Some(s) = of.get(at).map(|&i| &stretches[i]) else {
            // Not found: said where the figure has a value or was a test that ran. A figure
            // without one (a test not run) places no fsync or close: those of its direction
            // are the other tests'.
            if fc.figure.seconds.is_none() && fc.figure.moves != Moves::Neither {
                fc.fsync = None;
                fc.close = None;
            }
            if fc.figure.seconds.is_some() || fc.figure.moves == Moves::Neither {
                fc.stretch = Some(TestStretch {
                    test,
                    found: of.len() as u64,
                    tid: None,
                    start_seconds: None,
                    end_seconds: None,
                    clock_after_close: None,
                });
            }
            continue;
        };
        let note = TestStretch {
            test,
            found: of.len() as u64,
            tid: Some(s.tid),
            start_seconds: Some(s.start_seconds),
            end_seconds: Some(s.end_seconds),
            clock_after_close: clocks_seen.then_some(s.clock_after_close > 0),
        };
        if fc.figure.moves == Moves::Neither {
            fc.stretch = Some(note);
            continue;
        }
        let (bytes, calls) = match fc.figure.moves {
            Moves::Read => (s.read.bytes, s.read.calls),
            Moves::Write => (s.write.bytes, s.write.calls),
            _ => (
                s.read.bytes.min(s.write.bytes),
                s.read.calls + s.write.calls,
            ),
        };
        let mut figure = fc.figure.clone();
        if matches!(test, Test::PerCharWrite | Test::PerCharRead) && bytes > 0 {
            // The rate bonnie++ printed, over the bytes the stretch's calls moved.
            let rate = figure.bytes_per_second();
            adjust_claimed(&mut check.bytes, figure.moves, figure.bytes, bytes);
            figure.bytes = bytes;
            figure.seconds = rate.map(|r| bytes as f64 / r);
        }
        let inside = note.clock_after_close.unwrap_or(false);
        let seen = RegionSeen {
            bytes,
            calls,
            seconds: s.seconds(),
            files: vec![s.path.clone()],
            fsync: (s.syncs > 0).then_some((s.syncs, s.sync_seconds, inside)),
            close: s.closed.then_some((1, s.close_seconds, inside)),
        };
        let mut checked = check_against_region(&figure, &seen);
        if let Some(t) = checked.traced.as_mut() {
            t.covers = Covers::OpenToClose;
        }
        if !inside {
            // No clock read after the close was seen: they fit in the stretch, and only
            // the clock reads can tell whether the figure holds them.
            let io = s.seconds() - s.sync_seconds - s.close_seconds;
            for c in [checked.fsync.as_mut(), checked.close.as_mut()]
                .into_iter()
                .flatten()
            {
                c.placement = Placement::Fits;
                c.tool_seconds = figure.seconds.unwrap_or(0.0);
                c.calls_seconds = io.max(0.0);
            }
        }
        checked.stretch = Some(note);
        *fc = checked;
    }
}

/// A per-char figure's claimed bytes changed from `old` to `new`: its direction's bytes
/// check follows, by the one rule.
fn adjust_claimed(bytes: &mut [BytesCheck], moves: Moves, old: u64, new: u64) {
    for b in bytes.iter_mut().filter(|b| b.moves == moves) {
        b.claimed = (b.claimed + new).saturating_sub(old);
        if b.traced > 0 {
            b.verdict = relation(b.claimed as f64, b.traced as f64).0;
        }
    }
}

/// A tool's seconds less the traced ones, 0 where they differ by less than a nanosecond
/// (the clocks' unit): the difference of two equal figures computed two ways is rounding
/// noise such as 2e-17 s, not a gap, and no document may hold such a figure.
fn gap(claimed: f64, traced: f64) -> f64 {
    let d = claimed - traced;
    if d.abs() < 1e-9 { 0.0 } else { d }
}

#[cfg(test)]
mod gap_tests {
    use super::gap;

    #[test]
    fn a_gap_below_a_nanosecond_is_none() {
        assert_eq!(gap(0.1 + 0.2, 0.3), 0.0);
        assert!((gap(1.5, 1.0) - 0.5).abs() < 1e-12);
        assert!((gap(1.0, 1.5) + 0.5).abs() < 1e-12);
    }
}
