//! Accounting of traced calls: file descriptors resolved to paths (following dup, close,
//! fork, threads and exec), and per file the calls by type, bytes requested and returned,
//! errors, time inside, fsync time, and a histogram of the offsets accessed. Pure
//! bookkeeping over [`Event`]s plus a [`Resolver`] for what only /proc knows, so it can be
//! tested with made-up events.

pub mod aio;

use super::call::Call;
use super::order::Order;
use super::sizes::Sizes;
use super::sys::{Event, Syscall};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ffi::{OsStr, OsString};

/// What /proc tells about a task's descriptors and identity.
pub trait Resolver {
    /// The path (or `pipe:[…]`, `socket:[…]`) of descriptor `fd` of task `tid`, as the
    /// bytes the kernel gave (a name need not be UTF-8).
    fn path(&self, tid: i32, fd: i32) -> Option<OsString>;
    /// The file position of descriptor `fd` of task `tid`.
    fn position(&self, tid: i32, fd: i32) -> Option<u64>;
    /// The thread group (process) of task `tid`.
    fn tgid(&self, tid: i32) -> Option<i32>;
    /// `len` bytes of task `tid`'s memory at `addr` (libaio's iocbs and events), if readable.
    fn memory(&self, _tid: i32, _addr: u64, _len: usize) -> Option<Vec<u8>> {
        None
    }
    /// The NUL-terminated string at `addr` of task `tid` (a path a failed open was given).
    fn string(&self, _tid: i32, _addr: u64) -> Option<OsString> {
        None
    }
    /// The working directory of task `tid`.
    fn cwd(&self, _tid: i32) -> Option<OsString> {
        None
    }
    /// What kind of file descriptor `fd` of task `tid` stands for.
    fn kind(&self, _tid: i32, _fd: i32) -> Option<FileKind> {
        None
    }
    /// What became of the vDSO of the program task `tid` has just executed, where the
    /// engine hid it at the exec itself (the kernel engine); `None`: hide it now, at the
    /// exec stop (ptrace).
    fn hidden_at_exec(&self, _tid: i32) -> Option<super::vdso::Hidden> {
        None
    }
    /// The program task `tid` runs, as the engine saw it at its exec (`None`: ask /proc
    /// now, as ptrace, which stops the task there, does).
    fn program(&self, _tid: i32) -> Option<OsString> {
        None
    }
    /// Task `tid`'s name as the kernel keeps it (comm), as the engine saw it at its fork or
    /// exec (`None`: ask /proc now).
    fn comm(&self, _tid: i32) -> Option<OsString> {
        None
    }
}

/// `name` as an open was given it, relative to descriptor `dirfd`, made absolute against
/// `dir_of(dirfd)` (the caller's answer for AT_FDCWD: the working directory) where it is
/// relative and that directory is known; as given otherwise.
pub(super) fn absolute(
    name: OsString,
    dirfd: i32,
    dir_of: impl FnOnce(i32) -> Option<OsString>,
) -> OsString {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    if name.as_bytes().starts_with(b"/") {
        return name;
    }
    match dir_of(dirfd) {
        Some(dir) => {
            let mut p = dir.into_vec();
            if !p.ends_with(b"/") {
                p.push(b'/');
            }
            p.extend_from_slice(name.as_bytes());
            OsString::from_vec(p)
        }
        None => name,
    }
}

/// What kind of file a descriptor stood for, as `stat` saw it when the trace first met it:
/// what tells a data file from the pipes and character devices a program's plumbing uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A directory.
    Directory,
    /// A character device (`/dev/null`, `/dev/zero`, a terminal).
    CharDevice,
    /// A block device (a disk or a partition).
    BlockDevice,
    /// A pipe or FIFO.
    Pipe,
    /// A socket.
    Socket,
    /// Anything else (an eventfd, an epoll instance, another anonymous inode).
    Other,
}

impl FileKind {
    /// The kind of a file type, as `stat` gives it.
    pub fn of(t: std::fs::FileType) -> Self {
        use std::os::unix::fs::FileTypeExt;
        if t.is_file() {
            Self::Regular
        } else if t.is_dir() {
            Self::Directory
        } else if t.is_char_device() {
            Self::CharDevice
        } else if t.is_block_device() {
            Self::BlockDevice
        } else if t.is_fifo() {
            Self::Pipe
        } else if t.is_socket() {
            Self::Socket
        } else {
            Self::Other
        }
    }
}

/// The open flags that make writes wait for the device, as [`FileStats::opened_with`]
/// names them: O_SYNC holds O_DSYNC's bit, so it is tested first.
pub const SYNC_FLAGS: [(&str, u64); 3] = [
    ("O_DIRECT", libc::O_DIRECT as u64),
    ("O_SYNC", libc::O_SYNC as u64),
    ("O_DSYNC", libc::O_DSYNC as u64),
];

/// The names of [`SYNC_FLAGS`] set in `flags` (O_DSYNC not named again under O_SYNC).
pub fn sync_flags(flags: u64) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (name, bits) in SYNC_FLAGS {
        let under_sync = name == "O_DSYNC" && out.contains(&"O_SYNC");
        if flags & bits == bits && !under_sync {
            out.push(name);
        }
    }
    out
}

/// Where calls that act on no file are counted: sync(), anonymous mmap and munmap, libaio's
/// io_submit and io_getevents (their requests are counted on each file), a close(-1), a
/// failed open whose path could not be read.
pub const NO_FILE: &str = "(no file)";

/// Figures of one kind of call on one file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallStats {
    /// Calls made.
    pub calls: u64,
    /// Calls that failed.
    pub errors: u64,
    /// Bytes asked for (reads and writes).
    pub bytes_requested: u64,
    /// Bytes the calls returned.
    pub bytes_returned: u64,
    /// Reads and writes that returned 0 bytes (end of file).
    #[serde(default)]
    pub empty: u64,
    /// Nanoseconds inside the calls (entry to exit, as the tracer saw them).
    pub nanos: u64,
    /// Failed calls by error name (ENOENT, EACCES, …).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errnos: BTreeMap<String, u64>,
}

impl CallStats {
    /// Adds `other`'s figures to these.
    pub fn add(&mut self, other: &CallStats) {
        self.calls += other.calls;
        self.errors += other.errors;
        for (name, n) in &other.errnos {
            *self.errnos.entry(name.clone()).or_default() += n;
        }
        self.bytes_requested += other.bytes_requested;
        self.bytes_returned += other.bytes_returned;
        self.empty += other.empty;
        self.nanos += other.nanos;
    }
}

/// Where in a file the accesses fell: counts per bucket of `width` bytes from offset 0;
/// the width doubles (merging buckets) when an access lands beyond the last one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Histogram {
    /// Bytes per bucket.
    pub width: u64,
    /// Accesses starting in each bucket.
    pub counts: Vec<u64>,
}

impl Histogram {
    /// Buckets kept.
    pub const BUCKETS: usize = 32;

    fn new() -> Self {
        Self {
            width: 4096,
            counts: vec![0; Self::BUCKETS],
        }
    }

    /// Counts an access at `offset`.
    pub fn add(&mut self, offset: u64) {
        while offset / self.width >= Self::BUCKETS as u64 {
            let merged: Vec<u64> = self.counts.chunks(2).map(|p| p.iter().sum()).collect();
            self.counts = merged;
            self.counts.resize(Self::BUCKETS, 0);
            self.width *= 2;
        }
        self.counts[(offset / self.width) as usize] += 1;
    }

    /// Accesses counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// The figures of call `name` in `calls`, created at its first (its name allocated only
/// then: this is done at every traced call).
pub(super) fn call_stats<'a>(
    calls: &'a mut BTreeMap<String, CallStats>,
    name: &str,
) -> &'a mut CallStats {
    if !calls.contains_key(name) {
        calls.insert(name.to_string(), CallStats::default());
    }
    calls.get_mut(name).expect("inserted just above")
}

/// Everything traced on one file (or pipe, socket, device).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FileStats {
    /// Its path, as /proc showed it: exactly, where it is UTF-8; otherwise each byte that
    /// is not written as `\xNN` (and `path_not_utf8` is set), so two names stay apart.
    pub path: String,
    /// Whether the path is not UTF-8 (`path` then holds `\xNN` escapes for those bytes).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub path_not_utf8: bool,
    /// Figures per call, by call name.
    pub calls: BTreeMap<String, CallStats>,
    /// Bytes read from it (returned by read-type calls).
    pub bytes_read: u64,
    /// Bytes written to it.
    pub bytes_written: u64,
    /// fsync, fdatasync, sync_file_range and msync calls.
    pub syncs: u64,
    /// Nanoseconds inside those.
    pub sync_nanos: u64,
    /// lseek calls.
    pub seeks: u64,
    /// Offsets of reads, writes (positioned or at the current position) and seeks.
    pub offsets: Histogram,
    /// Offsets in the order they were accessed, every `stride`-th one: a ramp for
    /// sequential access, scatter for random.
    pub timeline: Timeline,
    /// Sizes asked for by reads and writes (and libaio requests), by power of two.
    #[serde(default, skip_serializing_if = "Sizes::is_empty")]
    pub sizes: Sizes,
    /// The order of the data accesses (sequential, descending, strided, random).
    #[serde(default, skip_serializing_if = "Order::is_empty")]
    pub order: Order,
    /// Opens of it whose flags made its writes wait for the device (O_DIRECT, O_SYNC,
    /// O_DSYNC; an fcntl(F_SETFL) that set O_DIRECT counts as one), by flag name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub opened_with: BTreeMap<String, u64>,
    /// What it is (a regular file, a pipe, a character device…), as `stat` saw it when the
    /// trace first met it; absent where it could not be seen, and in older reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FileKind>,
}

/// Every `stride`-th access offset, in order; at most [`Timeline::POINTS`] (the stride
/// doubles, dropping every other point, when full).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Timeline {
    /// Accesses per point kept.
    pub stride: u64,
    /// The offsets kept.
    pub offsets: Vec<u64>,
    /// Accesses seen.
    seen: u64,
}

impl FileStats {
    /// Whether the file moved bytes or had syncs or seeks (not only opened, mapped or
    /// closed, as the libraries a loader maps are).
    pub fn busy(&self) -> bool {
        self.bytes_read + self.bytes_written > 0 || self.syncs > 0 || self.seeks > 0
    }
}

impl Timeline {
    /// Points kept at most.
    pub const POINTS: usize = 64;

    pub(super) fn add(&mut self, offset: u64) {
        if self.stride == 0 {
            self.stride = 1;
        }
        if self.seen.is_multiple_of(self.stride) {
            if self.offsets.len() == Self::POINTS {
                self.offsets = self.offsets.iter().copied().step_by(2).collect();
                self.stride *= 2;
            }
            if self.seen.is_multiple_of(self.stride) {
                self.offsets.push(offset);
            }
        }
        self.seen += 1;
    }
}

impl FileStats {
    fn new(path: &OsStr) -> Self {
        Self {
            path: crate::text::lossless(path),
            path_not_utf8: path.to_str().is_none(),
            calls: BTreeMap::new(),
            bytes_read: 0,
            bytes_written: 0,
            syncs: 0,
            sync_nanos: 0,
            seeks: 0,
            offsets: Histogram::new(),
            timeline: Timeline::default(),
            sizes: Sizes::default(),
            order: Order::default(),
            opened_with: BTreeMap::new(),
            kind: None,
        }
    }

    /// All calls on the file together.
    pub fn total(&self) -> CallStats {
        let mut t = CallStats::default();
        for s in self.calls.values() {
            t.add(s);
        }
        t
    }
}

/// An open file description: shared by dup'ed descriptors and across fork.
#[derive(Debug, Clone)]
struct Description {
    path: OsString,
    /// The file position where known.
    position: Option<u64>,
    /// What kind of file it is, where `stat` could tell.
    kind: Option<FileKind>,
}

/// The accounting of a whole trace.
#[derive(Default)]
pub struct Tally {
    /// Open file descriptions.
    descriptions: Vec<Description>,
    /// Descriptor tables: fd to description.
    tables: Vec<HashMap<i32, usize>>,
    /// The table of each task.
    table_of: HashMap<i32, usize>,
    /// Each task's process.
    pub(super) tgid_of: HashMap<i32, i32>,
    /// Mappings per table: start address to (length, description).
    maps: HashMap<usize, BTreeMap<u64, (u64, usize)>>,
    /// Per path, by its exact bytes.
    files: BTreeMap<OsString, FileStats>,
    /// Descriptions that stand for no open file: [`NO_FILE`], and the paths failed opens
    /// were given, by name.
    named: HashMap<OsString, usize>,
    /// libaio requests submitted and not yet completed: (process, iocb address) to the
    /// description and request.
    pub(super) aio_pending: HashMap<(i32, u64), (usize, aio::Op)>,
    /// libaio requests in flight per file and request name: how many, and since when (the
    /// nanoseconds of [`Tally::at`]) the first of them.
    pub(super) aio_in_flight: HashMap<(OsString, &'static str), (u64, u64)>,
    /// The time of the event being taken, in nanoseconds from the start of the trace
    /// ([`Tally::at`]; 0 where the caller gives none).
    pub(super) now_nanos: u64,
    /// libaio requests (or io_submit arrays) that could not be read from memory.
    pub aio_unread: u64,
    /// libaio completions whose request was not seen.
    pub aio_unmatched: u64,
    /// Tasks seen.
    pub tasks: u64,
    /// Execs seen.
    pub execs: u64,
}

/// Calls whose first argument is the descriptor they act on.
fn fd_first(call: Call) -> bool {
    use Call::*;
    matches!(
        call,
        Read | Write
            | Pread
            | Pwrite
            | Readv
            | Writev
            | Preadv
            | Pwritev
            | Lseek
            | Fsync
            | Fdatasync
            | SyncFileRange
            | Ftruncate
            | Fallocate
            | Close
            | Dup
            | Dup2
            | Dup3
            | Fcntl
            | IoUringEnter
            | Syncfs
    )
}

const F_DUPFD: u64 = 0;
const F_DUPFD_CLOEXEC: u64 = 1030;
const F_SETFL: u64 = libc::F_SETFL as u64;

impl Tally {
    /// A new tally whose first task is `tid`.
    pub fn new(tid: i32) -> Self {
        let mut t = Self::default();
        t.tables.push(HashMap::new());
        t.table_of.insert(tid, 0);
        t.tgid_of.insert(tid, tid);
        t.tasks = 1;
        t
    }

    fn table(&mut self, tid: i32) -> usize {
        if let Some(&t) = self.table_of.get(&tid) {
            return t;
        }
        self.tables.push(HashMap::new());
        let t = self.tables.len() - 1;
        self.table_of.insert(tid, t);
        t
    }

    /// The description behind `fd` of `tid`, resolved through /proc when not yet known.
    pub(super) fn description(
        &mut self,
        tid: i32,
        fd: i32,
        resolve: &dyn Resolver,
    ) -> Option<usize> {
        if fd < 0 {
            return None;
        }
        let t = self.table(tid);
        if let Some(&d) = self.tables[t].get(&fd) {
            return Some(d);
        }
        // A descriptor /proc no longer shows (closed meanwhile by another thread, say)
        // still gets its calls counted, under a name that says so.
        let path = resolve
            .path(tid, fd)
            .unwrap_or_else(|| format!("fd {fd} (unresolved)").into());
        let position = resolve.position(tid, fd);
        let kind = resolve.kind(tid, fd);
        self.descriptions.push(Description {
            path,
            position,
            kind,
        });
        let d = self.descriptions.len() - 1;
        self.tables[t].insert(fd, d);
        Some(d)
    }

    /// The description standing for `name` (no descriptor behind it).
    fn named(&mut self, name: OsString) -> usize {
        if let Some(&d) = self.named.get(&name) {
            return d;
        }
        self.descriptions.push(Description {
            path: name.clone(),
            position: None,
            kind: None,
        });
        let d = self.descriptions.len() - 1;
        self.named.insert(name, d);
        d
    }

    /// The path a failed open was given, made absolute against its directory descriptor
    /// or the working directory where it can be.
    fn failed_path(&mut self, s: &Syscall, resolve: &dyn Resolver) -> Option<OsString> {
        let (dirfd, addr) = match s.call {
            Call::Openat => (s.args[0] as i32, s.args[1]),
            _ => (libc::AT_FDCWD, s.args[0]),
        };
        let name = resolve.string(s.tid, addr)?;
        Some(absolute(name, dirfd, |relative| {
            if relative == libc::AT_FDCWD {
                resolve.cwd(s.tid)
            } else {
                resolve.path(s.tid, relative)
            }
        }))
    }

    /// The path of description `d`.
    pub(super) fn descriptions_path(&self, d: usize) -> OsString {
        self.descriptions[d].path.clone()
    }

    pub(super) fn file(&mut self, d: usize) -> &mut FileStats {
        let path = &self.descriptions[d].path;
        let kind = self.descriptions[d].kind;
        if !self.files.contains_key(path) {
            self.files.insert(path.clone(), FileStats::new(path));
        }
        let file = self
            .files
            .get_mut(&self.descriptions[d].path)
            .expect("inserted just above");
        if file.kind.is_none() {
            file.kind = kind;
        }
        file
    }

    /// Sets the time of the next event, in nanoseconds from the start of the trace: what
    /// libaio's requests take in flight is measured with it.
    pub fn at(&mut self, nanos: u64) {
        self.now_nanos = nanos;
    }

    /// Takes one event of the trace.
    pub fn event(&mut self, event: &Event, resolve: &dyn Resolver) {
        match *event {
            Event::Spawned { parent, child } => {
                self.tasks += 1;
                let ptgid = *self
                    .tgid_of
                    .entry(parent)
                    .or_insert_with(|| resolve.tgid(parent).unwrap_or(parent));
                let ctgid = resolve.tgid(child).unwrap_or(child);
                self.tgid_of.insert(child, ctgid);
                let pt = self.table(parent);
                if ctgid == ptgid {
                    // A thread: the same descriptors.
                    self.table_of.insert(child, pt);
                } else {
                    // A process: a copy of the table, sharing the descriptions.
                    self.tables.push(self.tables[pt].clone());
                    let ct = self.tables.len() - 1;
                    self.table_of.insert(child, ct);
                    if let Some(m) = self.maps.get(&pt).cloned() {
                        self.maps.insert(ct, m);
                    }
                }
            }
            Event::Exec { tid } => {
                // exec unshares and closes close-on-exec descriptors: start afresh and
                // learn the survivors from /proc when they are used.
                self.execs += 1;
                self.tables.push(HashMap::new());
                let t = self.tables.len() - 1;
                let tgid = self.tgid_of.get(&tid).copied().unwrap_or(tid);
                let same: Vec<i32> = self
                    .tgid_of
                    .iter()
                    .filter(|&(_, &g)| g == tgid)
                    .map(|(&k, _)| k)
                    .collect();
                for task in same {
                    self.table_of.insert(task, t);
                }
                self.table_of.insert(tid, t);
            }
            Event::Enter { tid, call, args } => {
                // Resolve the descriptors now, while they are open (close, dup2 over).
                if fd_first(call) {
                    self.description(tid, args[0] as i32, resolve);
                }
                match call {
                    Call::Mmap => {
                        self.description(tid, args[4] as i32, resolve);
                    }
                    Call::CopyFileRange | Call::Splice => {
                        self.description(tid, args[2] as i32, resolve);
                    }
                    Call::Sendfile => {
                        self.description(tid, args[1] as i32, resolve);
                    }
                    _ => {}
                }
            }
            Event::Exit(s) => self.exit(&s, resolve),
            Event::Exiting { .. } => {}
        }
    }

    fn exit(&mut self, s: &Syscall, resolve: &dyn Resolver) {
        if s.call.watched_only() {
            return;
        }
        let tid = s.tid;
        let a = s.args;
        let ok = !s.failed;
        let got = if ok { s.ret.max(0) as u64 } else { 0 };
        let t = self.table(tid);
        // The description the call acts on, and the bytes it asked for.
        let (target, requested) = match s.call {
            Call::Open | Call::Openat | Call::Creat => {
                if ok {
                    let fd = s.ret as i32;
                    self.tables[t].remove(&fd);
                    self.description(tid, fd, resolve)
                        .map_or((None, 0), |d| (Some(d), 0))
                } else {
                    // Counted on the path it was given, which did not open.
                    let path = self.failed_path(s, resolve);
                    (path.map(|p| self.named(p)), 0)
                }
            }
            Call::IoSubmit => {
                if ok {
                    self.aio_submit(s, resolve);
                }
                (None, 0)
            }
            Call::IoGetevents => {
                if ok {
                    self.aio_complete(s, resolve);
                }
                (None, 0)
            }
            Call::Mmap => {
                let d = self.tables[t].get(&(a[4] as i32)).copied();
                if let (true, Some(d)) = (ok, d) {
                    self.maps.entry(t).or_default().insert(got, (a[1], d));
                }
                (d, 0)
            }
            Call::Munmap | Call::Msync => {
                let maps = self.maps.entry(t).or_default();
                let d = maps
                    .range(..=a[0])
                    .next_back()
                    .filter(|(start, (len, _))| a[0] < *start + *len)
                    .map(|(_, &(_, d))| d);
                if s.call == Call::Munmap && ok {
                    maps.remove(&a[0]);
                }
                (d, 0)
            }
            Call::Sendfile => (self.tables[t].get(&(a[1] as i32)).copied(), a[3]),
            Call::CopyFileRange | Call::Splice => {
                (self.tables[t].get(&(a[0] as i32)).copied(), a[4])
            }
            Call::Read | Call::Write | Call::Pread | Call::Pwrite => {
                (self.tables[t].get(&(a[0] as i32)).copied(), a[2])
            }
            _ if fd_first(s.call) => (self.tables[t].get(&(a[0] as i32)).copied(), 0),
            _ => (None, 0),
        };
        // Every call is counted: one with no file of its own under NO_FILE.
        let d = match target {
            Some(d) => d,
            None => self.named(NO_FILE.into()),
        };
        // Offsets, before the position moves.
        let position = self.descriptions[d].position;
        let offset = match s.call {
            // pread64(fd, buf, count, offset); preadv(fd, iov, iovcnt, offset)
            Call::Pread | Call::Pwrite | Call::Preadv | Call::Pwritev => Some(a[3]),
            Call::Read | Call::Write | Call::Readv | Call::Writev => position,
            Call::Lseek if ok => Some(got),
            _ => None,
        };
        // The position after the call.
        match s.call {
            Call::Read | Call::Write | Call::Readv | Call::Writev if ok => {
                self.descriptions[d].position = position.map(|p| p + got);
            }
            Call::Lseek if ok => self.descriptions[d].position = Some(got),
            Call::Lseek => {}
            Call::Open | Call::Openat | Call::Creat if ok => {
                self.descriptions[d].position = Some(0)
            }
            _ => {}
        }
        let name = s.call.name();
        let file = self.file(d);
        let stats = call_stats(&mut file.calls, name);
        stats.calls += 1;
        stats.errors += u64::from(!ok);
        if !ok {
            *stats.errnos.entry(super::errno::name(-s.ret)).or_default() += 1;
        }
        stats.bytes_requested += requested;
        stats.nanos += s.nanos;
        use Call::*;
        match s.call {
            Read | Pread | Readv | Preadv | Sendfile | CopyFileRange | Splice => {
                stats.bytes_returned += got;
                stats.empty += u64::from(ok && got == 0);
                file.bytes_read += got;
            }
            Write | Pwrite | Writev | Pwritev => {
                stats.bytes_returned += got;
                stats.empty += u64::from(ok && got == 0);
                file.bytes_written += got;
            }
            Fsync | Fdatasync | SyncFileRange | Msync | Sync | Syncfs => {
                file.syncs += 1;
                file.sync_nanos += s.nanos;
            }
            Lseek => file.seeks += 1,
            _ => {}
        }
        if matches!(s.call, Read | Write | Pread | Pwrite) {
            file.sizes.add(requested);
        }
        // The flags that make its writes wait for the device: open's, or fcntl(F_SETFL)'s.
        let flags = match s.call {
            Open if ok => Some(a[1]),
            Openat if ok => Some(a[2]),
            Fcntl if ok && a[1] == F_SETFL => Some(a[2] & SYNC_FLAGS[0].1),
            _ => None,
        };
        for name in flags.map(sync_flags).unwrap_or_default() {
            *file.opened_with.entry(name.to_string()).or_default() += 1;
        }
        if let (Some(o), true) = (offset, ok) {
            file.offsets.add(o);
            file.timeline.add(o);
            if got > 0 && s.call != Lseek {
                file.order.add(o, got);
            }
        }
        // Descriptor table changes.
        match s.call {
            Close if ok => {
                self.tables[t].remove(&(a[0] as i32));
            }
            Close => {}
            Dup if ok => {
                self.tables[t].insert(s.ret as i32, d);
            }
            Dup2 | Dup3 if ok => {
                self.tables[t].insert(a[1] as i32, d);
            }
            Fcntl if ok && (a[1] == F_DUPFD || a[1] == F_DUPFD_CLOEXEC) => {
                self.tables[t].insert(s.ret as i32, d);
            }
            CloseRange if ok => self.close_range(tid, a),
            // The bytes a copy between descriptors wrote land on the output side.
            Sendfile | CopyFileRange | Splice if ok => {
                let out = self.tables[t]
                    .get(&(a[if s.call == Sendfile { 0 } else { 2 }] as i32))
                    .copied();
                if let Some(o) = out {
                    self.file(o).bytes_written += got;
                }
            }
            _ => {}
        }
    }

    /// `close_range(first, last, flags)` succeeded: with CLOSE_RANGE_UNSHARE the task first
    /// gets a table of its own (a copy; the threads it shared one with keep theirs); then the
    /// descriptors in the range are closed, or, with CLOSE_RANGE_CLOEXEC, only marked
    /// close-on-exec: they stay open until the next exec, which starts the table afresh.
    fn close_range(&mut self, tid: i32, a: [u64; 6]) {
        const UNSHARE: u64 = 1 << 1;
        const CLOEXEC: u64 = 1 << 2;
        let (first, last, flags) = (a[0] as u32, a[1] as u32, a[2]);
        let mut t = self.table(tid);
        if flags & UNSHARE != 0 && self.table_of.iter().any(|(&k, &v)| v == t && k != tid) {
            self.tables.push(self.tables[t].clone());
            let own = self.tables.len() - 1;
            if let Some(m) = self.maps.get(&t).cloned() {
                self.maps.insert(own, m);
            }
            self.table_of.insert(tid, own);
            t = own;
        }
        if flags & CLOEXEC == 0 {
            self.tables[t].retain(|&fd, _| !(first..=last).contains(&(fd as u32)));
        }
    }

    /// The file behind descriptor `fd` of task `tid` as the tally knows it (its path, made
    /// lossless), and how many accesses it has counted there so far.
    pub fn file_of(&self, tid: i32, fd: i32) -> Option<(String, u64)> {
        let t = *self.table_of.get(&tid)?;
        let d = *self.tables.get(t)?.get(&fd)?;
        let path = &self.descriptions[d].path;
        let accesses = self.files.get(path).map_or(0, |f| f.offsets.total());
        Some((crate::text::lossless(path), accesses))
    }

    /// Per file, most bytes first.
    pub fn files(&self) -> Vec<FileStats> {
        let mut v: Vec<FileStats> = self.files.values().cloned().collect();
        v.sort_by_key(|f| std::cmp::Reverse((f.bytes_read + f.bytes_written, f.total().calls)));
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A resolver over a made-up /proc: fd N of any task is "/f/N"; tasks 100-199 form
    /// process 100, others are their own.
    struct Fake;
    impl Resolver for Fake {
        fn path(&self, _: i32, fd: i32) -> Option<OsString> {
            use std::os::unix::ffi::OsStringExt;
            (fd >= 0).then(|| match fd {
                // Two names that differ only in a byte that is not UTF-8.
                40 => OsString::from_vec(b"/f/bad\xff".to_vec()),
                41 => OsString::from_vec(b"/f/bad\xfe".to_vec()),
                _ => format!("/f/{fd}").into(),
            })
        }
        fn position(&self, _: i32, _: i32) -> Option<u64> {
            Some(0)
        }
        fn tgid(&self, tid: i32) -> Option<i32> {
            Some(if (100..200).contains(&tid) { 100 } else { tid })
        }
    }

    fn call(t: &mut Tally, tid: i32, call: Call, args: [u64; 6], ret: i64) {
        t.event(&Event::Enter { tid, call, args }, &Fake);
        t.event(
            &Event::Exit(Syscall {
                tid,
                call,
                args,
                ret,
                failed: ret < 0,
                nanos: 10,
            }),
            &Fake,
        );
    }

    #[test]
    fn the_histogram_doubles_its_width_and_keeps_every_count() {
        let mut h = Histogram::new();
        for o in [0, 4095, 4096, 1 << 20, 1 << 30] {
            h.add(o);
        }
        assert_eq!(h.total(), 5);
        assert!(h.width * Histogram::BUCKETS as u64 > 1 << 30);
        assert_eq!(
            h.width,
            1 << 26,
            "the smallest power of two that reaches 1 GiB in 32"
        );
        assert_eq!(h.counts[0], 4, "all but the last fall in the first 64 MiB");
        assert_eq!(h.counts[16], 1);
    }

    #[test]
    fn the_timeline_keeps_order_and_thins_evenly() {
        let mut t = Timeline::default();
        for i in 0..1000u64 {
            t.add(i * 10);
        }
        assert!(t.offsets.len() <= Timeline::POINTS && t.offsets.len() >= Timeline::POINTS / 2);
        assert!(t.offsets.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(t.offsets[1] - t.offsets[0], 10 * t.stride);
    }

    #[test]
    fn positions_follow_reads_seeks_dup_and_fork_and_close_forgets() {
        let mut t = Tally::new(100);
        // read 100 bytes twice at the current position, seek to 5000, write 10.
        call(&mut t, 100, Call::Read, [3, 0, 100, 0, 0, 0], 100);
        call(&mut t, 100, Call::Read, [3, 0, 100, 0, 0, 0], 100);
        call(&mut t, 100, Call::Lseek, [3, 5000, 0, 0, 0, 0], 5000);
        call(&mut t, 100, Call::Write, [3, 0, 10, 0, 0, 0], 10);
        // dup 3 to 7: the same description, so the position goes on from 5010.
        call(&mut t, 100, Call::Dup2, [3, 7, 0, 0, 0, 0], 7);
        call(&mut t, 100, Call::Read, [7, 0, 1, 0, 0, 0], 1);
        // A thread of the same process shares the table; a forked process copies it.
        t.event(
            &Event::Spawned {
                parent: 100,
                child: 101,
            },
            &Fake,
        );
        t.event(
            &Event::Spawned {
                parent: 100,
                child: 300,
            },
            &Fake,
        );
        call(&mut t, 101, Call::Pread, [7, 0, 50, 9000, 0, 0], 50);
        call(&mut t, 300, Call::Fsync, [3, 0, 0, 0, 0, 0], 0);
        call(&mut t, 100, Call::Close, [3, 0, 0, 0, 0, 0], 0);
        let files = t.files();
        assert_eq!(files.len(), 1, "fd 7 is a dup of fd 3: {files:#?}");
        let f = &files[0];
        assert_eq!(f.path, "/f/3");
        assert_eq!(f.calls["read"].calls, 3);
        assert_eq!(f.calls["read"].bytes_returned, 201);
        assert_eq!((f.bytes_read, f.bytes_written), (251, 10));
        assert_eq!((f.syncs, f.seeks), (1, 1));
        assert_eq!(f.timeline.offsets, vec![0, 100, 5000, 5000, 5010, 9000]);
        // Closed: a later use of fd 3 is a new description, resolved again.
        call(&mut t, 100, Call::Read, [3, 0, 1, 0, 0, 0], 1);
        assert_eq!(t.files()[0].calls["read"].calls, 4);
        assert_eq!(t.descriptions.len(), 2);
    }

    #[test]
    fn names_that_are_not_utf8_stay_apart_and_keep_their_bytes_as_escapes() {
        let mut t = Tally::new(1);
        call(&mut t, 1, Call::Read, [40, 0, 10, 0, 0, 0], 10);
        call(&mut t, 1, Call::Read, [41, 0, 10, 0, 0, 0], 7);
        call(&mut t, 1, Call::Read, [3, 0, 10, 0, 0, 0], 1);
        let files = t.files();
        assert_eq!(files.len(), 3, "{files:#?}");
        let bad: Vec<(&str, u64, bool)> = files
            .iter()
            .map(|f| (f.path.as_str(), f.bytes_read, f.path_not_utf8))
            .collect();
        assert!(bad.contains(&("/f/bad\\xff", 10, true)), "{bad:?}");
        assert!(bad.contains(&("/f/bad\\xfe", 7, true)), "{bad:?}");
        assert!(bad.contains(&("/f/3", 1, false)), "{bad:?}");
    }

    #[test]
    fn failed_calls_count_as_errors_and_move_nothing() {
        let mut t = Tally::new(1);
        call(
            &mut t,
            1,
            Call::Read,
            [4, 0, 100, 0, 0, 0],
            -(libc::EIO as i64),
        );
        let f = &t.files()[0];
        assert_eq!((f.calls["read"].calls, f.calls["read"].errors), (1, 1));
        assert_eq!(f.bytes_read, 0);
        assert_eq!(f.offsets.total(), 0);
    }

    #[test]
    fn close_range_forgets_its_range_keeps_cloexec_ones_until_exec_and_unshares_one_thread() {
        // Fake resolves fd N to "/f/N"; a pipe is made up by naming fd 3 anew after it.
        let mut t = Tally::new(100);
        call(&mut t, 100, Call::Read, [3, 0, 1, 0, 0, 0], 1);
        call(&mut t, 100, Call::Read, [9, 0, 1, 0, 0, 0], 1);
        // close_range(3, 5, 0): fd 3 is gone, fd 9 is not.
        call(&mut t, 100, Call::CloseRange, [3, 5, 0, 0, 0, 0], 0);
        assert!(t.file_of(100, 3).is_none());
        assert_eq!(t.file_of(100, 9).map(|f| f.0), Some("/f/9".to_string()));
        // close_range(0, ~0U, CLOSE_RANGE_CLOEXEC): all stay until the exec.
        call(&mut t, 100, Call::Read, [4, 0, 1, 0, 0, 0], 1);
        call(
            &mut t,
            100,
            Call::CloseRange,
            [0, u64::from(u32::MAX), 4, 0, 0, 0],
            0,
        );
        assert!(t.file_of(100, 4).is_some() && t.file_of(100, 9).is_some());
        t.event(&Event::Exec { tid: 100 }, &Fake);
        assert!(t.file_of(100, 4).is_none() && t.file_of(100, 9).is_none());
        // A thread that unshares before closing keeps its sibling's table whole.
        t.event(
            &Event::Spawned {
                parent: 100,
                child: 101,
            },
            &Fake,
        );
        call(&mut t, 100, Call::Read, [6, 0, 1, 0, 0, 0], 1);
        call(&mut t, 101, Call::CloseRange, [6, 6, 2, 0, 0, 0], 0);
        assert!(
            t.file_of(101, 6).is_none(),
            "closed in the thread's own copy"
        );
        assert!(
            t.file_of(100, 6).is_some(),
            "still open in the table it left"
        );
        // A failed close_range closes nothing.
        call(
            &mut t,
            100,
            Call::CloseRange,
            [6, 6, 0, 0, 0, 0],
            -(libc::EINVAL as i64),
        );
        assert!(t.file_of(100, 6).is_some());
        let none = t.files().into_iter().find(|f| f.path == NO_FILE).unwrap();
        assert_eq!(none.calls["close_range"].calls, 4);
    }
}
