//! The rows of `ioscope disk`: CrystalDiskMark's and KDiskMark's panel (SEQ1M Q8T1, SEQ1M
//! Q1T1, RND4K Q32T1, RND4K Q1T1, each read then written), or one row the user describes,
//! and the offsets a row visits: sequential (wrapping at the end of its region) or random
//! (whole blocks, aligned to the block size, drawn with repeats).
//!
//! The named presets (`--profile`, `--preset`, `disk --list`) are one table, [`PRESETS`]:
//! KDiskMark's profiles (default, peak, real-world), CrystalDiskMark's NVMe set, and the
//! write-ahead-log pattern of etcd's disk check (`fsync`), and pg_test_fsync's comparison
//! of the ways to make a write durable (`sync-methods`). A row that asks for more threads
//! than the machine has cores runs with one per core, and says so ([`PanelNote`]).

use super::Op;
use crate::units::{KIB, MIB};
use serde::{Deserialize, Serialize};

/// One row of the panel: what it asks of the file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RowSpec {
    /// Read or write; a mix is `Write` (it writes: the file is opened for writing, a
    /// user's file needs `--force-write`, the row ends with an fdatasync).
    pub op: Op,
    /// A read/write mix (fio's `rw=randrw` with `rwmixread`): the percent of its I/Os
    /// that read, each I/O's direction drawn from a seeded hash; `None`: one direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<u8>,
    /// Mixed block sizes (fio's `bssplit`): each I/O's size drawn by its share, `block`
    /// the largest; `None`: every I/O is `block` bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split: Option<super::split::BlockSplit>,
    /// How a random row's offsets are skewed (fio's `random_distribution`); `None`:
    /// uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dist: Option<super::skew::Dist>,
    /// Random offsets (else sequential).
    pub random: bool,
    /// Bytes per I/O.
    pub block: u64,
    /// I/Os kept in flight per thread.
    pub depth: usize,
    /// Threads, each with its own queue.
    pub threads: usize,
    /// An open-loop row's rate (`disk --rate`): I/Os arrive on a schedule and `depth` is the
    /// most each thread keeps in flight; `None`: closed loop, `depth` always in flight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<super::arrivals::Pace>,
}

impl RowSpec {
    /// The row's name as the panels print it: `SEQ1M Q8T1`, `RND4K Q32T1`,
    /// `RND4K:60,64K:30,1M:10 Q32T1`.
    pub fn name(&self) -> String {
        let skew = self.dist.map_or(String::new(), |d| format!(" {d}"));
        format!(
            "{}{} Q{}T{}{skew}",
            if self.random { "RND" } else { "SEQ" },
            self.split
                .map_or_else(|| short_size(self.block), |s| s.name()),
            self.depth,
            self.threads
        )
    }

    /// The mean bytes per I/O asked: the block, or a split's mean.
    pub fn mean_block(&self) -> f64 {
        self.split.map_or(self.block as f64, |s| s.mean_bytes())
    }

    /// What the row does, as labels print it: `read`, `write`, `mix 70/30`.
    pub fn direction(&self) -> String {
        match self.mix {
            Some(read) => format!("mix {read}/{}", 100 - read),
            None => self.op.name().to_string(),
        }
    }

    /// Whether the row writes (a write row or a mix).
    pub fn writes(&self) -> bool {
        self.op == Op::Write || self.mix.is_some()
    }

    /// The same row in one direction only (the pure rows a mix is set against).
    pub fn pure(&self, op: Op) -> Self {
        Self {
            op,
            mix: None,
            ..*self
        }
    }

    /// The same row as a mix reading `read_percent` of its I/Os.
    pub fn mixed(&self, read_percent: u8) -> Self {
        Self {
            op: Op::Write,
            mix: Some(read_percent),
            ..*self
        }
    }
}

pub use crate::units::short_size;

/// The default panel's four single-threaded rows, each read, then written (the default
/// preset on one core, without its Mix row: the study's panel).
pub fn default_panel() -> Vec<RowSpec> {
    match PRESETS[0].kind {
        PresetKind::Panel(shapes) => rows_of(shapes, 1)
            .0
            .into_iter()
            .filter(|r| r.mix.is_none())
            .collect(),
        PresetKind::Fsync { .. } | PresetKind::SyncMethods { .. } => Vec::new(),
    }
}

/// How many threads a preset's row asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Threads {
    /// This many, capped at the machine's cores (said when capped).
    Upto(usize),
    /// Half the cores, and the row only where the machine has at least `min_cores`
    /// (said when left out).
    HalfCores {
        /// The fewest cores for which the row is run.
        min_cores: usize,
    },
}

/// One row shape of a preset, run read then written (then mixed, where it has a mix).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Random offsets (else sequential).
    pub random: bool,
    /// Bytes per I/O.
    pub block: u64,
    /// I/Os in flight per thread.
    pub depth: usize,
    /// Threads.
    pub threads: Threads,
    /// A mix of this shape after its write, reading this percent of its I/Os (KDiskMark's
    /// Mix); `None`: read and write only.
    pub mix: Option<u8>,
}

impl Shape {
    /// The same shape with a Mix row reading `read_percent` of its I/Os.
    const fn with_mix(self, read_percent: u8) -> Self {
        Self {
            mix: Some(read_percent),
            ..self
        }
    }
}

/// The read percent of KDiskMark's Mix (its default ratio, R70%/W30%), and of `--mix`
/// when none is given.
pub const KDISKMARK_MIX: u8 = 70;

/// What a preset runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PresetKind {
    /// Panel rows, each read then written.
    Panel(&'static [Shape]),
    /// Small sequential writes each followed by fdatasync, buffered, one at a time (a
    /// database's write-ahead log).
    Fsync {
        /// Bytes per write.
        block: u64,
    },
    /// Every way to make a write durable (fdatasync, fsync, O_DSYNC, O_SYNC,
    /// O_DIRECT|O_DSYNC, RWF_DSYNC, io_uring linked to fsync), 1 and 2 writes per sync,
    /// sequential, one at a time (pg_test_fsync's comparison).
    SyncMethods {
        /// Bytes per write unless `--bs` gives others.
        block: u64,
    },
}

/// A named preset of `ioscope disk`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// Its name (`--preset NAME`; the three profiles are also `--profile NAME`).
    pub name: &'static str,
    /// Where it comes from and what it shows, in a few words.
    pub about: &'static str,
    /// What it runs.
    pub kind: PresetKind,
}

const fn shape(random: bool, block: u64, depth: usize, threads: Threads) -> Shape {
    Shape {
        random,
        block,
        depth,
        threads,
        mix: None,
    }
}

/// Bytes per write of the `fsync` preset: etcd's check (`fio --rw=write --bs=2300
/// --fdatasync=1`), about one WAL entry.
pub const WAL_WRITE_BYTES: u64 = 2300;

/// The region each sync method writes through when `--size` does not ask for less: 16 MiB,
/// the file pg_test_fsync writes (one WAL segment).
pub const SYNC_REGION_BYTES: u64 = 16 << 20;

/// Bytes per write of the `sync-methods` preset: PostgreSQL's page (`XLOG_BLCKSZ`), as
/// pg_test_fsync writes.
pub const PG_PAGE_BYTES: u64 = 8 * KIB;

/// Every named preset, in the order `disk --list` prints them; the first is the default.
pub const PRESETS: &[Preset] = &[
    Preset {
        name: "default",
        about: "KDiskMark's and CrystalDiskMark's default profile with KDiskMark's Mix (RND4K Q32T1, 70% read), and RND4K at half the cores where there are at least 4",
        kind: PresetKind::Panel(&[
            shape(false, MIB, 8, Threads::Upto(1)),
            shape(false, MIB, 1, Threads::Upto(1)),
            shape(true, 4 * KIB, 32, Threads::Upto(1)).with_mix(KDISKMARK_MIX),
            shape(true, 4 * KIB, 1, Threads::Upto(1)),
            shape(true, 4 * KIB, 32, Threads::HalfCores { min_cores: 4 }),
        ]),
    },
    Preset {
        name: "peak",
        about: "KDiskMark's peak performance profile: deep queues, 16 threads (at most one per core), and its Mix at 70% read",
        kind: PresetKind::Panel(&[
            shape(false, MIB, 8, Threads::Upto(1)),
            shape(true, 4 * KIB, 32, Threads::Upto(16)).with_mix(KDISKMARK_MIX),
        ]),
    },
    Preset {
        name: "real-world",
        about: "KDiskMark's real world performance profile: one I/O at a time, as most programs do, and its Mix at 70% read",
        kind: PresetKind::Panel(&[
            shape(false, MIB, 1, Threads::Upto(1)),
            shape(true, 4 * KIB, 1, Threads::Upto(1)).with_mix(KDISKMARK_MIX),
        ]),
    },
    Preset {
        name: "nvme",
        about: "CrystalDiskMark's NVMe SSD set: SEQ128K Q32T1 and RND4K Q32T16 besides the single-queue rows",
        kind: PresetKind::Panel(&[
            shape(false, MIB, 8, Threads::Upto(1)),
            shape(false, 128 * KIB, 32, Threads::Upto(1)),
            shape(true, 4 * KIB, 32, Threads::Upto(16)),
            shape(true, 4 * KIB, 1, Threads::Upto(1)),
        ]),
    },
    Preset {
        name: "fsync",
        about: "a write-ahead log, as etcd's disk check: 2,300-byte sequential writes, each followed by fdatasync, buffered, 1 at a time",
        kind: PresetKind::Fsync {
            block: WAL_WRITE_BYTES,
        },
    },
    Preset {
        name: "sync-methods",
        about: "pg_test_fsync's choice of wal_sync_method: every way to make an 8 KiB write durable, 1 and 2 writes per sync, with the device's flushes per op",
        kind: PresetKind::SyncMethods {
            block: PG_PAGE_BYTES,
        },
    },
];

/// The preset named `name`, if any.
pub fn preset(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// What a preset's rows became on this machine, as data (the words are the report's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PanelNote {
    /// A row asked for more threads than there are cores: run with one per core.
    Capped {
        /// The row as the preset names it (`RND4K Q32T16`).
        asked: String,
        /// The row as run (`RND4K Q32T2`).
        ran: String,
        /// The machine's cores.
        cores: usize,
    },
    /// A row of yours asked for more threads than there are cores: run as asked, the
    /// threads taking turns on the cores.
    Oversubscribed {
        /// The row (`RND4K Q32T1000`).
        row: String,
        /// Its threads.
        threads: usize,
        /// The machine's cores.
        cores: usize,
    },
    /// A row left out: the machine has too few cores for it.
    LeftOut {
        /// The row as it would have been named (`RND4K Q32T<cores/2>`).
        row: String,
        /// The machine's cores.
        cores: usize,
        /// The fewest cores it needs.
        needs: usize,
    },
}

/// The rows of preset `shapes` on a machine of `cores` cores (each read, then written, then
/// mixed where the shape has a mix), and what was capped or left out.
pub fn rows_of(shapes: &[Shape], cores: usize) -> (Vec<RowSpec>, Vec<PanelNote>) {
    let cores = cores.max(1);
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for s in shapes {
        let threads = match s.threads {
            Threads::Upto(n) if n > cores => {
                let named = |threads| {
                    RowSpec {
                        op: Op::Read,
                        mix: None,
                        split: None,
                        dist: None,
                        random: s.random,
                        block: s.block,
                        depth: s.depth,
                        threads,
                        pace: None,
                    }
                    .name()
                };
                notes.push(PanelNote::Capped {
                    asked: named(n),
                    ran: named(cores),
                    cores,
                });
                cores
            }
            Threads::Upto(n) => n,
            Threads::HalfCores { min_cores } if cores < min_cores => {
                notes.push(PanelNote::LeftOut {
                    row: format!(
                        "{}{} Q{}T<cores/2>",
                        if s.random { "RND" } else { "SEQ" },
                        short_size(s.block),
                        s.depth
                    ),
                    cores,
                    needs: min_cores,
                });
                continue;
            }
            Threads::HalfCores { .. } => cores / 2,
        };
        let row = |op| RowSpec {
            op,
            mix: None,
            split: None,
            dist: None,
            random: s.random,
            block: s.block,
            depth: s.depth,
            threads,
            pace: None,
        };
        rows.push(row(Op::Read));
        rows.push(row(Op::Write));
        if let Some(read) = s.mix {
            rows.push(row(Op::Write).mixed(read));
        }
    }
    (rows, notes)
}

/// The cores this process may run on (its affinity and cgroup limits), at least 1.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The offsets one thread of a row visits in `[start, end)` (whole blocks only).
#[derive(Debug, Clone)]
pub struct Offsets {
    start: u64,
    blocks: u64,
    block: u64,
    random: bool,
    next: u64,
    state: u64,
    /// Where the next sequential I/O of a row of mixed sizes starts.
    cursor: u64,
}

impl Offsets {
    /// Offsets of `block`-byte I/Os in `[start, end)`; `seed` draws the random ones.
    pub fn new(start: u64, end: u64, block: u64, random: bool, seed: u64) -> Self {
        let block = block.max(1);
        Self {
            start,
            blocks: (end.saturating_sub(start) / block).max(1),
            block,
            random,
            next: 0,
            state: seed,
            cursor: start,
        }
    }

    /// The next offset of an I/O of `len` bytes in a row of mixed sizes: a random one on
    /// the grid of `block` (the smallest size; the caller leaves room at the end for the
    /// largest), a sequential one right after the one before, back at the start where the
    /// next would pass the region's end.
    pub fn next_for(&mut self, len: u64) -> u64 {
        if self.random {
            return self.next_offset();
        }
        let end = self.start + self.blocks * self.block;
        if self.cursor + len > end {
            self.cursor = self.start;
        }
        let at = self.cursor;
        self.cursor += len;
        at
    }

    /// The next offset (sequential rows wrap to the start of their region).
    pub fn next_offset(&mut self) -> u64 {
        let index = if self.random {
            self.state = self.state.wrapping_add(1);
            super::data::splitmix(self.state, 0x0ff5e7) % self.blocks
        } else {
            let i = self.next;
            self.next = (self.next + 1) % self.blocks;
            i
        };
        self.start + index * self.block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_panel_is_the_four_rows_read_then_written() {
        let names: Vec<String> = default_panel()
            .iter()
            .map(|r| format!("{} {}", r.name(), r.op.name()))
            .collect();
        assert_eq!(
            names,
            [
                "SEQ1M Q8T1 read",
                "SEQ1M Q8T1 write",
                "SEQ1M Q1T1 read",
                "SEQ1M Q1T1 write",
                "RND4K Q32T1 read",
                "RND4K Q32T1 write",
                "RND4K Q1T1 read",
                "RND4K Q1T1 write"
            ]
        );
    }

    fn names(rows: &[RowSpec]) -> Vec<String> {
        rows.iter()
            .map(|r| format!("{} {}", r.name(), r.direction()))
            .collect()
    }

    fn panel(name: &str) -> &'static [Shape] {
        match preset(name).map(|p| p.kind) {
            Some(PresetKind::Panel(shapes)) => shapes,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn the_kdiskmark_profiles_mix_their_random_row_after_it_and_the_study_panel_does_not() {
        for (profile, row) in [
            ("default", "RND4K Q32T1"),
            ("peak", "RND4K Q32T2"),
            ("real-world", "RND4K Q1T1"),
        ] {
            let (rows, _) = rows_of(panel(profile), 2);
            let names = names(&rows);
            let mixes: Vec<&String> = names.iter().filter(|n| n.contains("mix")).collect();
            assert_eq!(mixes, [&format!("{row} mix 70/30")], "{profile}");
            let at = names.iter().position(|n| n.contains("mix")).unwrap();
            assert_eq!(
                names[at - 2..at],
                [format!("{row} read"), format!("{row} write")],
                "{profile}: the mix follows its pure rows"
            );
        }
        let (rows, _) = rows_of(panel("nvme"), 2);
        assert!(
            rows.iter().all(|r| r.mix.is_none()),
            "CrystalDiskMark's set"
        );
        assert!(default_panel().iter().all(|r| r.mix.is_none()));
    }

    #[test]
    fn the_default_profile_adds_a_half_the_cores_row_only_from_four_cores() {
        let (two, notes) = rows_of(panel("default"), 2);
        let pure: Vec<RowSpec> = two.iter().copied().filter(|r| r.mix.is_none()).collect();
        assert_eq!(names(&pure), names(&default_panel()));
        assert_eq!(two.len(), 9, "and its Mix row");
        assert_eq!(
            notes,
            [PanelNote::LeftOut {
                row: "RND4K Q32T<cores/2>".into(),
                cores: 2,
                needs: 4
            }]
        );
        let (eight, notes) = rows_of(panel("default"), 8);
        assert!(notes.is_empty());
        assert_eq!(eight.len(), 11);
        assert_eq!(eight[9].name(), "RND4K Q32T4");
        let (four, _) = rows_of(panel("default"), 4);
        assert_eq!(four[10].name(), "RND4K Q32T2");
    }

    #[test]
    fn peak_caps_its_sixteen_threads_at_the_cores_and_says_so() {
        let (rows, notes) = rows_of(panel("peak"), 2);
        assert_eq!(
            names(&rows),
            [
                "SEQ1M Q8T1 read",
                "SEQ1M Q8T1 write",
                "RND4K Q32T2 read",
                "RND4K Q32T2 write",
                "RND4K Q32T2 mix 70/30"
            ]
        );
        assert_eq!(
            notes,
            [PanelNote::Capped {
                asked: "RND4K Q32T16".into(),
                ran: "RND4K Q32T2".into(),
                cores: 2
            }]
        );
        let (rows, notes) = rows_of(panel("peak"), 32);
        assert_eq!(rows[2].name(), "RND4K Q32T16");
        assert!(notes.is_empty());
    }

    #[test]
    fn real_world_is_one_io_at_a_time() {
        let (rows, notes) = rows_of(panel("real-world"), 1);
        assert_eq!(
            names(&rows),
            [
                "SEQ1M Q1T1 read",
                "SEQ1M Q1T1 write",
                "RND4K Q1T1 read",
                "RND4K Q1T1 write",
                "RND4K Q1T1 mix 70/30"
            ]
        );
        assert!(notes.is_empty());
    }

    #[test]
    fn preset_names_are_unique_and_the_first_is_the_default() {
        assert_eq!(PRESETS[0].name, "default");
        for (i, p) in PRESETS.iter().enumerate() {
            assert!(
                PRESETS[i + 1..].iter().all(|o| o.name != p.name),
                "{}",
                p.name
            );
            assert_eq!(preset(p.name), Some(p));
        }
        assert_eq!(
            preset("fsync").map(|p| p.kind),
            Some(PresetKind::Fsync { block: 2300 })
        );
        assert!(preset("turbo").is_none());
    }

    #[test]
    fn random_offsets_are_whole_blocks_inside_the_region() {
        let mut o = Offsets::new(8192, 8192 + 40 * 4096 + 100, 4096, true, 7);
        for _ in 0..1000 {
            let off = o.next_offset();
            assert!(off >= 8192 && off + 4096 <= 8192 + 40 * 4096);
            assert_eq!((off - 8192) % 4096, 0);
        }
    }

    #[test]
    fn sequential_offsets_wrap_at_the_end_of_the_region() {
        let mut o = Offsets::new(0, 3 * MIB, MIB, false, 0);
        let seen: Vec<u64> = (0..4).map(|_| o.next_offset()).collect();
        assert_eq!(seen, [0, MIB, 2 * MIB, 0]);
    }
}
