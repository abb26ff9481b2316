//! The traced program's clock reads and the regions it timed with them. With the vDSO hidden
//! (`trace::vdso`), `clock_gettime`, `gettimeofday` and `time` are system calls the tracer
//! sees; from them, per thread, this finds the intervals the program timed and which calls
//! fell inside and after each.
//!
//! The rule (GUIDE.md, "Timed regions"): two consecutive clock reads of the same thread
//! bound an interval; an interval in which that thread moved data (a read-, write- or
//! copy-type call) is a **timed region**, and every call the thread made inside it is
//! counted there. An fsync-type call or close of the same thread on a file the region moved
//! data in, made after the region's closing clock read and before that thread's next region
//! that moves data in the same file, is **after** it: a figure the program computes over
//! the region leaves it out. Other threads' calls are not counted in a thread's own regions.
//!
//! Across tasks: an interval in which its thread moved no data, but other tasks of its
//! process tree did — the other threads of its process, or the processes it forked and
//! their descendants (a child that writes while the parent waits, `dd` run by vfork and
//! exec between two clock reads, as `time dd` does) — is a region **timed around their
//! I/O**: their calls inside it are counted there, and the tasks are named. An interval
//! with I/O only in traced tasks outside that tree (a sibling, a parent) is not attributed,
//! and counted as such.

use super::call::Call;
use super::sys::Syscall;
use super::vdso::Hidden;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

/// Whether the traced program keeps its vDSO (`--vdso`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Vdso {
    /// Hide it at each exec, so that clock reads are system calls the trace sees and timed
    /// regions are found (each clock read then costs a traced system call).
    #[default]
    Hide,
    /// Leave it: clock reads run at full speed, unseen, and no timed regions are found.
    Keep,
}

/// Calls of one type inside a region.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Moved {
    /// Calls made.
    pub calls: u64,
    /// Bytes they returned (reads and writes; 0 for the others).
    pub bytes: u64,
}

/// Where a region fell in one file's sequence of accesses (reads, writes and lseeks with
/// an offset, counted from 0 as the file's timeline counts them).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegionFile {
    /// The file (as the tally names it).
    pub path: String,
    /// The file's access number of the region's first data call there.
    pub first_access: u64,
    /// The file's access number of the region's last data call there.
    pub last_access: u64,
}

/// How a task whose I/O a region holds is related to the thread that timed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kin {
    /// Another thread of the same process.
    Thread,
    /// A process it forked (or vforked, or spawned), whatever that process executed.
    Child,
    /// A process further down: a child's child, and so on.
    Descendant,
}

impl Kin {
    /// The words the text uses: "thread", "child process", "descendant process".
    pub fn words(self) -> &'static str {
        match self {
            Self::Thread => "thread",
            Self::Child => "child process",
            Self::Descendant => "descendant process",
        }
    }
}

/// A task whose I/O is in a region timed by another thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Doer {
    /// The task (thread id).
    pub tid: i32,
    /// Its process.
    pub pid: i32,
    /// How it is related to the timing thread.
    pub relation: Kin,
    /// Its program's name (/proc comm) when its first call there was seen, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
}

/// Tasks named per region timed around other tasks' I/O (the count holds them all).
pub const DOERS_NAMED: usize = 8;

/// One interval the program timed: between two consecutive clock reads of one thread, with
/// data moved inside (by that thread, or, when it moved none, by other tasks of its tree).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// The thread.
    pub tid: i32,
    /// Its process, when known (absent in older documents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// When the thread moved no data in it: the other tasks of its tree whose I/O it holds
    /// (at most [`DOERS_NAMED`]); empty for a region of the thread's own I/O.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub io_of: Vec<Doer>,
    /// How many tasks those were (`io_of` names the first ones).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub io_tasks: u64,
    /// The clock call that opened it (and closed it).
    pub clock: String,
    /// Seconds from the start of the trace to the clock read that opened it.
    pub start_seconds: f64,
    /// Seconds from the start of the trace to the clock read that closed it.
    pub end_seconds: f64,
    /// The thread's calls inside it, by call.
    pub inside: BTreeMap<String, Moved>,
    /// Bytes read inside it.
    pub bytes_read: u64,
    /// Bytes written (or copied) inside it.
    pub bytes_written: u64,
    /// The fsync-type calls and closes inside it on the files it moved data in: what a
    /// figure over the region includes.
    pub closing_inside: BTreeMap<String, u64>,
    /// The fsync-type calls and closes on its files after it, before the thread's next
    /// region: what a figure over the region leaves out.
    pub after: BTreeMap<String, u64>,
    /// Seconds from the start of the trace to the end of the last call after it, if any.
    pub after_end_seconds: Option<f64>,
    /// Bytes read and written over the region's time: the rate a figure the program
    /// computed over this region would show (the tracer's clock, tracing's cost included).
    pub bytes_per_second_over_region: f64,
    /// The same bytes over the time from its start to the end of the last call after it.
    pub bytes_per_second_with_after: Option<f64>,
    /// Where it fell in each file it moved data in.
    pub files: Vec<RegionFile>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Calls that sync a file's data to its device (as the trace's `sync_seconds` counts them).
pub const SYNCS: &[&str] = &["fsync", "fdatasync", "sync_file_range", "msync"];

impl Region {
    /// Seconds between its two clock reads.
    pub fn seconds(&self) -> f64 {
        (self.end_seconds - self.start_seconds).max(0.0)
    }

    /// Bytes moved inside it.
    pub fn bytes(&self) -> u64 {
        self.bytes_read + self.bytes_written
    }

    /// Calls of the fsync type inside it on its files.
    pub fn syncs_inside(&self) -> u64 {
        SYNCS
            .iter()
            .filter_map(|n| self.closing_inside.get(*n))
            .sum()
    }

    /// Calls of the fsync type after it.
    pub fn syncs_after(&self) -> u64 {
        SYNCS.iter().filter_map(|n| self.after.get(*n)).sum()
    }

    /// Whether it holds other tasks' I/O, timed by a thread that moved no data in it.
    pub fn across(&self) -> bool {
        !self.io_of.is_empty()
    }
}

/// An interval timed by a thread that moved no data, with I/O only in traced tasks outside
/// its process and its descendants: not attributed to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unattributed {
    /// The thread that read the clock.
    pub tid: i32,
    /// Its process.
    pub pid: i32,
    /// Seconds from the start of the trace to its two clock reads.
    pub start_seconds: f64,
    /// See `start_seconds`.
    pub end_seconds: f64,
    /// The processes that moved data meanwhile (the first few).
    pub io_pids: Vec<i32>,
}

/// What the trace saw of the program's clock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClockReport {
    /// Whether the vDSO was hidden (the default) or kept (`--vdso keep`).
    pub vdso: Vdso,
    /// Programs whose vDSO was hidden at their exec.
    pub programs_hidden: u64,
    /// Programs the kernel gave no vDSO (nothing to hide).
    pub programs_without_vdso: u64,
    /// Programs whose vDSO could not be hidden, and why: their clock reads are not seen.
    pub not_hidden: Vec<String>,
    /// Clock reads seen, by call.
    pub reads: BTreeMap<String, u64>,
    /// Seconds one clock read takes through the kernel under trace, measured just before
    /// (tracing's cost per call plus an untraced `clock_gettime` system call).
    pub read_seconds_traced: Option<f64>,
    /// Seconds one clock read takes through the vDSO, untraced, measured just before.
    pub read_seconds_vdso: Option<f64>,
    /// Timed regions found (all of them; `regions` keeps the ones moving the most bytes).
    pub regions_found: u64,
    /// The regions moving the most bytes (at most [`KEPT`]), in the order they began.
    pub regions: Vec<Region>,
    /// Of the regions found, those timed by a thread around other tasks' I/O.
    #[serde(default)]
    pub regions_across: u64,
    /// Intervals of a thread that moved no data, while only traced tasks outside its
    /// process tree did: not attributed.
    #[serde(default)]
    pub unattributed: u64,
    /// The first of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unattributed_first: Option<Unattributed>,
}

/// Regions kept in a report: those moving the most bytes.
pub const KEPT: usize = 64;

/// Regions held while tracing before the smallest are dropped.
const HELD: usize = 4 * KEPT;

impl ClockReport {
    /// Clock reads in all.
    pub fn total_reads(&self) -> u64 {
        self.reads.values().sum()
    }

    /// Seconds the clock reads added to the run by going through the kernel under trace
    /// instead of the vDSO, when both costs were measured and the vDSO was hidden.
    pub fn added_seconds(&self) -> Option<f64> {
        if self.vdso == Vdso::Keep {
            return None;
        }
        let traced = self.read_seconds_traced?;
        let vdso = self.read_seconds_vdso?;
        Some(self.total_reads() as f64 * (traced - vdso).max(0.0))
    }
}

/// Whether `call` reads a clock.
pub fn is_clock(call: Call) -> bool {
    matches!(call, Call::ClockGettime | Call::Gettimeofday | Call::Time)
}

/// The descriptor whose file a call's place in a region depends on: the one data moves in
/// (the output of a copy), or the one synced or closed; `None` for other calls.
pub fn fd_of(call: Call, args: &[u64; 6]) -> Option<i32> {
    use Call::*;
    match call {
        CopyFileRange | Splice => Some(args[2] as i32),
        c if reads_data(c) || writes_data(c) || closes_or_syncs(c) => Some(args[0] as i32),
        _ => None,
    }
}

/// Read-type calls (their bytes are read).
fn reads_data(call: Call) -> bool {
    use Call::*;
    matches!(call, Read | Pread | Readv | Preadv)
}

/// Write- and copy-type calls (their bytes are written).
fn writes_data(call: Call) -> bool {
    use Call::*;
    matches!(
        call,
        Write | Pwrite | Writev | Pwritev | Sendfile | CopyFileRange | Splice
    )
}

/// Calls counted after a region when they act on one of its files.
fn closes_or_syncs(call: Call) -> bool {
    use Call::*;
    matches!(call, Fsync | Fdatasync | SyncFileRange | Close)
}

/// The calls of one thread since its last clock read.
#[derive(Default)]
struct Interval {
    inside: BTreeMap<String, Moved>,
    bytes_read: u64,
    bytes_written: u64,
    /// Per file: the first and last access number of a data call there.
    files: BTreeMap<String, (u64, u64)>,
    /// Syncs and closes, with the file and when they ended.
    closing: Vec<(Call, Option<String>, f64)>,
}

impl Interval {
    fn moved_data(&self) -> bool {
        !self.files.is_empty() || self.bytes_read + self.bytes_written > 0
    }

    /// Counts call `s` (which returned `got` bytes, ended at `when`) on `file`.
    fn add(&mut self, s: &Syscall, got: u64, when: f64, file: Option<(String, u64)>) {
        let m = self.inside.entry(s.call.name().to_string()).or_default();
        m.calls += 1;
        if reads_data(s.call) {
            m.bytes += got;
            self.bytes_read += got;
        } else if writes_data(s.call) {
            m.bytes += got;
            self.bytes_written += got;
        }
        let data = reads_data(s.call) || writes_data(s.call);
        match file {
            Some((path, n)) if data => {
                let e = self.files.entry(path).or_insert((n, n));
                e.1 = n;
            }
            file if closes_or_syncs(s.call) => {
                self.closing.push((s.call, file.map(|f| f.0), when));
            }
            _ => {}
        }
    }
}

/// What other tasks of a thread's tree did since its last clock read, while it moved no
/// data itself; and the processes outside the tree that moved data meanwhile.
#[derive(Default)]
struct Others {
    calls: Interval,
    /// The tasks that made them, in the order first seen (at most [`DOERS_NAMED`]).
    doers: Vec<Doer>,
    /// All the tasks that made them.
    tasks: std::collections::HashSet<i32>,
    /// Processes outside the tree that moved data (the first few).
    outside: Vec<i32>,
}

#[derive(Default)]
struct Thread {
    /// The last clock read: when, and which call.
    since: Option<(f64, Call)>,
    open: Interval,
    /// Other tasks' calls over the open interval, while the thread moved no data itself.
    others: Others,
    /// Per file, the thread's last region that moved data in it: where its later syncs
    /// and closes of that file go.
    last_for_file: HashMap<String, usize>,
}

/// How a thread's name is found: /proc/TID/comm.
fn proc_comm(tid: i32) -> Option<String> {
    super::comm(tid).map(|name| crate::text::printable(&name))
}

/// How deep the process tree is walked looking for an ancestor.
const MAX_DEPTH: usize = 64;

/// Follows the clock reads and calls of every thread and finds the timed regions.
pub struct Clocks {
    start: Instant,
    reads: BTreeMap<String, u64>,
    threads: HashMap<i32, Thread>,
    regions: Vec<Option<Region>>,
    found: u64,
    hidden: u64,
    without: u64,
    not_hidden: Vec<String>,
    /// Each task's process, where it is not its own id.
    tgid: HashMap<i32, i32>,
    /// Each process's parent process, for the processes seen forked.
    parent: HashMap<i32, i32>,
    /// The threads with an open interval in which they moved no data yet: other tasks'
    /// calls are followed for them.
    watchers: std::collections::HashSet<i32>,
    across: u64,
    unattributed: u64,
    unattributed_first: Option<Unattributed>,
    name_of: fn(i32) -> Option<String>,
    /// Task names the engine gave (the kernel engine's, from its fork and exec events),
    /// asked before `name_of`: a task may be gone when its calls are handed on.
    names: HashMap<i32, String>,
}

impl Clocks {
    /// Starts following, with times counted from `start` (the trace's start).
    pub fn new(start: Instant) -> Self {
        Self {
            start,
            reads: BTreeMap::new(),
            threads: HashMap::new(),
            regions: Vec::new(),
            found: 0,
            hidden: 0,
            without: 0,
            not_hidden: Vec::new(),
            tgid: HashMap::new(),
            parent: HashMap::new(),
            watchers: std::collections::HashSet::new(),
            across: 0,
            unattributed: 0,
            unattributed_first: None,
            name_of: proc_comm,
            names: HashMap::new(),
        }
    }

    /// Task `tid`'s name, as the engine saw it when the task started or executed.
    pub fn name(&mut self, tid: i32, name: String) {
        self.names.insert(tid, name);
    }

    /// The process of task `tid` (its own id when not seen created as a thread).
    fn pid_of(&self, tid: i32) -> i32 {
        self.tgid.get(&tid).copied().unwrap_or(tid)
    }

    /// Task `child` was created by task `parent`; `child_pid`: its process, when known
    /// (another thread of the parent's process, or a new process).
    pub fn spawned(&mut self, parent: i32, child: i32, child_pid: Option<i32>) {
        let ppid = self.pid_of(parent);
        let cpid = child_pid.unwrap_or(child);
        if cpid == child {
            self.tgid.remove(&child);
        } else {
            self.tgid.insert(child, cpid);
        }
        if cpid != ppid {
            self.parent.insert(cpid, ppid);
        }
    }

    /// How task `doer` is related to thread `timer`: another thread of its process, or a
    /// thread of one of its descendant processes; `None` otherwise (itself included).
    fn relation(&self, timer: i32, doer: i32) -> Option<Kin> {
        if timer == doer {
            return None;
        }
        let home = self.pid_of(timer);
        let mut p = self.pid_of(doer);
        if p == home {
            return Some(Kin::Thread);
        }
        for depth in 0..MAX_DEPTH {
            p = *self.parent.get(&p)?;
            if p == home {
                return Some(if depth == 0 {
                    Kin::Child
                } else {
                    Kin::Descendant
                });
            }
        }
        None
    }

    /// Call `s` of one task, for the threads watching their tree: counted in the interval
    /// of each whose tree holds the task, or noted as outside it.
    fn watched(&mut self, s: &Syscall, got: u64, when: f64, file: &Option<(String, u64)>) {
        if self.watchers.is_empty() {
            return;
        }
        let data = reads_data(s.call) || writes_data(s.call);
        let watchers: Vec<i32> = self.watchers.iter().copied().collect();
        for w in watchers {
            match self.relation(w, s.tid) {
                Some(relation) => {
                    let pid = self.pid_of(s.tid);
                    let name = self
                        .names
                        .get(&s.tid)
                        .cloned()
                        .or_else(|| (self.name_of)(s.tid));
                    let Some(t) = self.threads.get_mut(&w) else {
                        continue;
                    };
                    let o = &mut t.others;
                    if data && o.tasks.insert(s.tid) && o.doers.len() < DOERS_NAMED {
                        o.doers.push(Doer {
                            tid: s.tid,
                            pid,
                            relation,
                            program: name,
                        });
                    }
                    o.calls.add(s, got, when, file.clone());
                }
                None if data && w != s.tid => {
                    let pid = self.pid_of(s.tid);
                    if let Some(t) = self.threads.get_mut(&w)
                        && t.others.outside.len() < 4
                        && !t.others.outside.contains(&pid)
                    {
                        t.others.outside.push(pid);
                    }
                }
                None => {}
            }
        }
    }

    /// A program started in `tid` (its exec), with what became of its vDSO (`None`: kept).
    /// What the thread timed before is closed.
    pub fn exec(&mut self, tid: i32, hidden: Option<Hidden>) {
        match hidden {
            Some(Hidden::Yes) => self.hidden += 1,
            Some(Hidden::NoVdso) => self.without += 1,
            Some(Hidden::Failed(why)) if !self.not_hidden.contains(&why) => {
                self.not_hidden.push(why);
            }
            Some(Hidden::Failed(_)) | None => {}
        }
        self.ended(tid);
    }

    /// Thread `tid` ends (or executes another program): its open interval is not a region;
    /// its syncs and closes go after its last region.
    pub fn ended(&mut self, tid: i32) {
        self.watchers.remove(&tid);
        if let Some(mut t) = self.threads.remove(&tid) {
            let open = std::mem::take(&mut t.open);
            self.close_after(&t, open.closing, &[]);
        }
    }

    /// A call finished at `at`. `file`: the path of the file it acted on and the number of
    /// accesses the tally had counted there before it, when it acted on one.
    pub fn exit(&mut self, s: &Syscall, at: Instant, file: Option<(String, u64)>) {
        let when = at.saturating_duration_since(self.start).as_secs_f64();
        if is_clock(s.call) {
            if !s.failed {
                *self.reads.entry(s.call.name().to_string()).or_default() += 1;
                self.clock_read(s.tid, s.call, when);
            }
            return;
        }
        let got = if s.failed { 0 } else { s.ret.max(0) as u64 };
        self.watched(s, got, when, &file);
        let t = self.threads.entry(s.tid).or_default();
        if t.since.is_none() && t.last_for_file.is_empty() {
            // Before the thread's first clock read: in no region and after none.
            return;
        }
        t.open.add(s, got, when, file);
        if t.open.moved_data() && self.watchers.remove(&s.tid) {
            // Its own region now: other tasks' calls are not counted in it.
            t.others = Others::default();
        }
    }

    fn clock_read(&mut self, tid: i32, call: Call, when: f64) {
        let mut t = self.threads.remove(&tid).unwrap_or_default();
        let open = std::mem::take(&mut t.open);
        let others = std::mem::take(&mut t.others);
        let pid = self.pid_of(tid);
        if let Some((start, opened)) = t.since
            && !open.moved_data()
        {
            if others.calls.moved_data() {
                self.across += 1;
                self.found += 1;
                let region = region_of(
                    tid,
                    pid,
                    opened,
                    start,
                    when,
                    others.calls,
                    others.doers,
                    others.tasks.len() as u64,
                );
                self.regions.push(Some(region.0));
                self.threads.insert(tid, t);
                self.thin();
                t = self.threads.remove(&tid).unwrap_or_default();
            } else if !others.outside.is_empty() {
                self.unattributed += 1;
                self.unattributed_first.get_or_insert(Unattributed {
                    tid,
                    pid,
                    start_seconds: start,
                    end_seconds: when,
                    io_pids: others.outside,
                });
            }
        }
        if let Some((start, opened)) = t.since
            && open.moved_data()
        {
            self.found += 1;
            let (region, closing) = region_of(tid, pid, opened, start, when, open, Vec::new(), 0);
            let paths: Vec<String> = region.files.iter().map(|f| f.path.clone()).collect();
            // Syncs and closes of files this region did not move data in may still be
            // after an earlier one that did.
            self.close_after(&t, closing, &paths);
            self.regions.push(Some(region));
            let index = self.regions.len() - 1;
            for p in paths {
                t.last_for_file.insert(p, index);
            }
            self.threads.insert(tid, t);
            self.thin();
            t = self.threads.remove(&tid).unwrap_or_default();
        } else {
            self.close_after(&t, open.closing, &[]);
        }
        t.since = Some((when, call));
        self.threads.insert(tid, t);
        self.watchers.insert(tid);
    }

    /// Syncs and closes of an interval go after the thread's last region that moved data
    /// in their file, unless the interval is itself a region that did (`own`: its files).
    fn close_after(
        &mut self,
        t: &Thread,
        closing: Vec<(Call, Option<String>, f64)>,
        own: &[String],
    ) {
        for (call, path, when) in closing {
            let Some(path) = path else { continue };
            if own.contains(&path) {
                continue;
            }
            let Some(&i) = t.last_for_file.get(&path) else {
                continue;
            };
            let Some(Some(region)) = self.regions.get_mut(i) else {
                continue;
            };
            *region.after.entry(call.name().to_string()).or_default() += 1;
            region.after_end_seconds = Some(when);
            region.bytes_per_second_with_after =
                Some(rate(region.bytes(), when - region.start_seconds));
        }
    }

    /// Keeps the memory bounded: past [`HELD`] regions, the smallest by bytes are dropped
    /// (their slots stay, empty, so the threads' indices hold), except each file's last.
    fn thin(&mut self) {
        let held = self.regions.iter().filter(|r| r.is_some()).count();
        if held <= HELD {
            return;
        }
        let lasts: std::collections::HashSet<usize> = self
            .threads
            .values()
            .flat_map(|t| t.last_for_file.values().copied())
            .collect();
        let mut order: Vec<(u64, usize)> = self
            .regions
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.as_ref().map(|r| (r.bytes(), i)))
            .filter(|(_, i)| !lasts.contains(i))
            .collect();
        order.sort_unstable();
        for &(_, i) in order.iter().take(held - KEPT) {
            self.regions[i] = None;
        }
    }

    /// The report: every thread's open interval closed, the regions moving the most bytes.
    pub fn finish(
        mut self,
        vdso: Vdso,
        read_seconds_traced: Option<f64>,
        read_seconds_vdso: Option<f64>,
    ) -> ClockReport {
        let tids: Vec<i32> = self.threads.keys().copied().collect();
        for tid in tids {
            self.ended(tid);
        }
        let mut regions: Vec<Region> = self.regions.into_iter().flatten().collect();
        if regions.len() > KEPT {
            regions.sort_by_key(|r| std::cmp::Reverse(r.bytes()));
            regions.truncate(KEPT);
        }
        regions.sort_by(|a, b| a.start_seconds.total_cmp(&b.start_seconds));
        ClockReport {
            vdso,
            programs_hidden: self.hidden,
            programs_without_vdso: self.without,
            not_hidden: self.not_hidden,
            reads: self.reads,
            read_seconds_traced,
            read_seconds_vdso,
            regions_found: self.found,
            regions,
            regions_across: self.across,
            unattributed: self.unattributed,
            unattributed_first: self.unattributed_first,
        }
    }
}

/// The region of `interval` between two clock reads of thread `tid` (of process `pid`):
/// its own calls, or (`io_of` not empty) other tasks'; with the syncs and closes of the
/// interval, for what comes after it.
#[allow(clippy::too_many_arguments)]
fn region_of(
    tid: i32,
    pid: i32,
    opened: Call,
    start: f64,
    when: f64,
    interval: Interval,
    io_of: Vec<Doer>,
    io_tasks: u64,
) -> (Region, Vec<(Call, Option<String>, f64)>) {
    let seconds = (when - start).max(0.0);
    let bytes = interval.bytes_read + interval.bytes_written;
    let files: Vec<RegionFile> = interval
        .files
        .into_iter()
        .map(|(path, (first_access, last_access))| RegionFile {
            path,
            first_access,
            last_access,
        })
        .collect();
    let mut closing_inside: BTreeMap<String, u64> = BTreeMap::new();
    for (call, path, _) in &interval.closing {
        if path
            .as_ref()
            .is_some_and(|p| files.iter().any(|f| &f.path == p))
        {
            *closing_inside.entry(call.name().to_string()).or_default() += 1;
        }
    }
    let region = Region {
        tid,
        pid: Some(pid),
        io_of,
        io_tasks,
        clock: opened.name().to_string(),
        start_seconds: start,
        end_seconds: when,
        inside: interval.inside,
        closing_inside,
        bytes_read: interval.bytes_read,
        bytes_written: interval.bytes_written,
        after: BTreeMap::new(),
        after_end_seconds: None,
        bytes_per_second_over_region: rate(bytes, seconds),
        bytes_per_second_with_after: None,
        files,
    };
    (region, interval.closing)
}

/// Bytes per second, 0 over no time.
fn rate(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds
    } else {
        0.0
    }
}

/// Reads in the cost measurements below.
const COST_READS: u32 = 20_000;

/// Nanoseconds per `clock_gettime(CLOCK_MONOTONIC)` through the vDSO, in this (untraced)
/// process.
pub fn vdso_read_ns() -> f64 {
    fastest_of(|ts| {
        // SAFETY: a live timespec for the call to fill.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, ts) };
    })
}

/// Loops of [`COST_READS`] reads timed; the fastest is kept (a preemption inflates one).
const COST_LOOPS: u32 = 5;

/// Nanoseconds per `read` over the fastest of [`COST_LOOPS`] loops.
fn fastest_of(read: impl Fn(&mut libc::timespec)) -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    (0..COST_LOOPS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..COST_READS {
                read(&mut ts);
                std::hint::black_box(&ts);
            }
            start.elapsed().as_nanos() as f64 / f64::from(COST_READS)
        })
        .fold(f64::INFINITY, f64::min)
}

/// Nanoseconds per `clock_gettime(CLOCK_MONOTONIC)` made as a system call, untraced: what
/// a clock read costs without the vDSO, before tracing's own cost per call.
pub fn kernel_read_ns() -> f64 {
    fastest_of(|ts| {
        // SAFETY: the raw system call with a clock id and a live timespec to fill.
        unsafe {
            libc::syscall(
                libc::SYS_clock_gettime,
                libc::CLOCK_MONOTONIC,
                ts as *mut libc::timespec,
            )
        };
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A made-up trace: each step is a call at a time in milliseconds, on file "F" for
    /// data calls and syncs.
    struct Run {
        clocks: Clocks,
        start: Instant,
        accesses: u64,
    }

    impl Run {
        fn new() -> Self {
            let start = Instant::now();
            let mut clocks = Clocks::new(start);
            clocks.name_of = |tid| Some(format!("p{tid}"));
            Self {
                clocks,
                start,
                accesses: 0,
            }
        }
        fn call(&mut self, tid: i32, call: Call, ret: i64, ms: u64, path: Option<&str>) {
            let s = Syscall {
                tid,
                call,
                args: [3, 0, ret.max(0) as u64, 0, 0, 0],
                ret,
                failed: ret < 0,
                nanos: 10,
            };
            let file = path.map(|p| (p.to_string(), self.accesses));
            if reads_data(call) || writes_data(call) {
                self.accesses += 1;
            }
            self.clocks
                .exit(&s, self.start + Duration::from_millis(ms), file);
        }
        fn clock(&mut self, tid: i32, ms: u64) {
            self.call(tid, Call::Gettimeofday, 0, ms, None);
        }
    }

    #[test]
    fn writes_between_two_clock_reads_are_a_region_and_the_fsync_after_it_is_after() {
        let mut r = Run::new();
        r.clock(1, 0);
        for i in 0..64 {
            r.call(1, Call::Write, 4096, 1 + i, Some("F"));
        }
        r.clock(1, 100);
        r.call(1, Call::Fsync, 0, 400, Some("F"));
        r.call(1, Call::Close, 0, 401, Some("F"));
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!(report.reads["gettimeofday"], 2);
        assert_eq!(report.regions_found, 1);
        let g = &report.regions[0];
        assert_eq!(
            g.inside["write"],
            Moved {
                calls: 64,
                bytes: 64 * 4096
            }
        );
        assert_eq!(g.syncs_inside(), 0);
        assert_eq!((g.after["fsync"], g.after["close"]), (1, 1));
        assert!((g.bytes_per_second_over_region - 64.0 * 4096.0 / 0.1).abs() < 1.0);
        let with = g.bytes_per_second_with_after.expect("calls after it");
        assert!((with - 64.0 * 4096.0 / 0.401).abs() < 1.0, "{with}");
        assert_eq!((g.files[0].first_access, g.files[0].last_access), (0, 63));
    }

    #[test]
    fn an_fsync_before_the_closing_clock_read_is_inside_and_the_next_one_after() {
        let mut r = Run::new();
        r.clock(1, 0);
        r.call(1, Call::Write, 4096, 1, Some("F"));
        r.call(1, Call::Fsync, 0, 50, Some("F"));
        r.clock(1, 51);
        r.call(1, Call::Fsync, 0, 52, Some("F"));
        r.clock(1, 53);
        r.call(1, Call::Close, 0, 54, Some("F"));
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!(
            report.regions_found, 1,
            "an interval with only an fsync is no region"
        );
        let g = &report.regions[0];
        assert_eq!(g.syncs_inside(), 1);
        assert_eq!((g.after["fsync"], g.after["close"]), (1, 1));
    }

    #[test]
    fn a_result_printed_between_the_regions_does_not_take_the_fsync_from_the_write() {
        let mut r = Run::new();
        r.clock(1, 0);
        r.call(1, Call::Write, 4096, 1, Some("F"));
        r.clock(1, 2);
        r.call(1, Call::Write, 80, 3, Some("pipe:[1]"));
        r.call(1, Call::Fsync, 0, 4, Some("F"));
        r.clock(1, 5);
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!(report.regions_found, 2);
        let write = &report.regions[0];
        assert_eq!(write.after["fsync"], 1);
        let printed = &report.regions[1];
        assert_eq!(printed.inside["fsync"].calls, 1, "inside by the clock");
        assert_eq!(
            printed.syncs_inside(),
            0,
            "but not on a file it moved data in"
        );
    }

    #[test]
    fn calls_on_other_files_other_threads_or_before_any_clock_read_are_in_no_region() {
        let mut r = Run::new();
        r.call(1, Call::Write, 10, 0, Some("F"));
        r.clock(1, 1);
        r.call(2, Call::Write, 10, 2, Some("F"));
        r.call(1, Call::Read, 10, 3, Some("F"));
        r.clock(1, 4);
        r.call(1, Call::Fsync, 0, 5, Some("G"));
        r.call(2, Call::Fsync, 0, 6, Some("F"));
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!(report.regions_found, 1);
        let g = &report.regions[0];
        assert_eq!((g.bytes_read, g.bytes_written), (10, 0));
        assert!(g.after.is_empty(), "{:?}", g.after);
    }

    #[test]
    fn many_small_regions_keep_the_ones_moving_the_most_bytes_in_time_order() {
        let mut r = Run::new();
        r.clock(1, 0);
        for i in 0..(HELD as u64 * 3) {
            let big = i % 50 == 0;
            r.call(
                1,
                Call::Write,
                if big { 1 << 20 } else { 1 },
                2 * i + 1,
                Some("F"),
            );
            r.clock(1, 2 * i + 2);
        }
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!(report.regions_found, HELD as u64 * 3);
        assert_eq!(report.regions.len(), KEPT);
        let big = report
            .regions
            .iter()
            .filter(|g| g.bytes() == 1 << 20)
            .count();
        assert_eq!(big, (HELD * 3).div_ceil(50));
        assert!(
            report
                .regions
                .windows(2)
                .all(|w| w[0].start_seconds <= w[1].start_seconds)
        );
    }

    #[test]
    fn a_thread_that_moves_no_data_times_its_threads_and_descendants_not_its_parent() {
        let mut r = Run::new();
        // Process 1: threads 1 and 2; 1 forks process 3, which forks 4; 1 was forked by 9.
        r.clocks.spawned(9, 1, Some(1));
        r.clocks.spawned(1, 2, Some(1));
        r.clocks.spawned(1, 3, Some(3));
        r.clocks.spawned(3, 4, Some(4));
        // Thread 1 times thread 2's write.
        r.clock(1, 0);
        r.call(2, Call::Write, 100, 1, Some("F"));
        r.call(2, Call::Fsync, 0, 2, Some("F"));
        r.clock(1, 3);
        // Then process 4's read (a grandchild).
        r.call(4, Call::Read, 7, 4, Some("G"));
        r.clock(1, 5);
        // Process 9 (the parent) moved data while 3 timed: not 3's tree.
        r.clock(3, 6);
        r.call(9, Call::Write, 5, 7, Some("H"));
        r.clock(3, 8);
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!((report.regions_found, report.regions_across), (2, 2));
        let first = &report.regions[0];
        assert_eq!((first.tid, first.pid), (1, Some(1)));
        assert_eq!(first.bytes_written, 100);
        assert_eq!(first.closing_inside["fsync"], 1);
        assert_eq!(
            first.io_of,
            vec![Doer {
                tid: 2,
                pid: 1,
                relation: Kin::Thread,
                program: Some("p2".into())
            }]
        );
        let second = &report.regions[1];
        assert_eq!(second.bytes_read, 7);
        assert_eq!(second.io_of[0].relation, Kin::Descendant);
        assert_eq!(report.unattributed, 1);
        let u = report.unattributed_first.expect("one not attributed");
        assert_eq!((u.tid, u.io_pids.clone()), (3, vec![9]));
    }

    #[test]
    fn a_thread_that_moves_data_itself_keeps_its_own_region_without_the_others_calls() {
        let mut r = Run::new();
        r.clocks.spawned(1, 2, Some(1));
        r.clock(1, 0);
        r.call(2, Call::Write, 100, 1, Some("F"));
        r.call(1, Call::Read, 10, 2, Some("G"));
        r.call(2, Call::Write, 100, 3, Some("F"));
        r.clock(1, 4);
        let report = r.clocks.finish(Vdso::Hide, None, None);
        assert_eq!((report.regions_found, report.regions_across), (1, 0));
        let g = &report.regions[0];
        assert!(!g.across());
        assert_eq!((g.bytes_read, g.bytes_written), (10, 0));
    }

    #[test]
    fn the_added_time_is_each_read_s_extra_cost_and_nothing_when_kept() {
        let mut r = Run::new();
        for i in 0..10 {
            r.clock(1, i);
        }
        let hidden = r.clocks.finish(Vdso::Hide, Some(20e-6), Some(20e-9));
        let added = hidden.added_seconds().expect("both costs");
        assert!((added - 10.0 * (20e-6 - 20e-9)).abs() < 1e-12);
        let mut kept = hidden.clone();
        kept.vdso = Vdso::Keep;
        assert_eq!(kept.added_seconds(), None);
    }
}
