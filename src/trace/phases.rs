//! Open-to-close stretches: per thread and descriptor, what a program did to one file from
//! its open to its close (the calls and bytes each way, the request sizes, the seeks, and
//! the fsync-type calls and close inside), and when. A benchmark that opens its file for
//! each test and times from the open to the close (bonnie++: it reads its clock after the
//! open, and again only after fsync and close) has each test in one stretch, so each of its
//! figures can be set against its own test's bytes and time ([`classify`] tells bonnie++'s
//! tests apart by what each stretch did).

use super::call::Call;
use super::sys::Syscall;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Instant;

/// The calls of one direction in a stretch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Way {
    /// Calls made.
    pub calls: u64,
    /// Bytes they returned.
    pub bytes: u64,
    /// Calls that asked for exactly one byte.
    pub one_byte: u64,
    /// The smallest request (bytes asked for; 0 without calls).
    pub smallest: u64,
    /// The largest request.
    pub largest: u64,
}

impl Way {
    fn add(&mut self, asked: u64, got: u64) {
        self.smallest = if self.calls == 0 {
            asked
        } else {
            self.smallest.min(asked)
        };
        self.largest = self.largest.max(asked);
        self.calls += 1;
        self.bytes += got;
        if asked == 1 {
            self.one_byte += 1;
        }
    }

    /// Every call asked for one byte.
    pub fn per_char(&self) -> bool {
        self.calls > 0 && self.one_byte == self.calls
    }

    /// Every call asked for more than one byte.
    pub fn blocks(&self) -> bool {
        self.calls > 0 && self.one_byte == 0
    }
}

/// What one thread did to one file between an open and the close of that descriptor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stretch {
    /// The thread.
    pub tid: i32,
    /// The file (as the tally names it).
    pub path: String,
    /// Seconds from the start of the trace to the end of the open.
    pub start_seconds: f64,
    /// Seconds from the start of the trace to the end of the close (or of the thread's last
    /// call on it, when it was never closed).
    pub end_seconds: f64,
    /// Reads (read, pread64, readv, preadv).
    pub read: Way,
    /// Writes (write, pwrite64, writev, pwritev).
    pub write: Way,
    /// lseek calls.
    pub seeks: u64,
    /// fsync-type calls inside it, and their seconds.
    pub syncs: u64,
    /// Seconds inside them.
    pub sync_seconds: f64,
    /// Whether it ended with a close (not the thread's end), and that close's seconds.
    pub closed: bool,
    /// Seconds inside the close.
    pub close_seconds: f64,
    /// Clock reads of the thread after the close, before its next open: the stamp that
    /// ends a test timed from open to close (none seen when the vDSO was kept).
    pub clock_after_close: u64,
}

impl Stretch {
    /// Seconds from the end of the open to the end of the close.
    pub fn seconds(&self) -> f64 {
        (self.end_seconds - self.start_seconds).max(0.0)
    }

    /// Bytes moved either way.
    pub fn bytes(&self) -> u64 {
        self.read.bytes + self.write.bytes
    }
}

/// One of bonnie++'s tests, as told by what a stretch did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    /// One-byte writes only: `sequential output per char`.
    PerCharWrite,
    /// Block writes only: `sequential output block`.
    BlockWrite,
    /// Block reads each written back at the same size, as many bytes each way, a seek
    /// back per block: `rewrite`.
    Rewrite,
    /// One-byte reads only: `sequential input per char`.
    PerCharRead,
    /// Block reads from one place on, no more than one seek: `sequential input block`.
    BlockRead,
    /// Block reads each after a seek, some written back: a `random seeks` child.
    Seeks,
}

impl Test {
    /// bonnie++'s own name for it (its figure's label).
    pub fn label(self) -> &'static str {
        match self {
            Test::PerCharWrite => "sequential output per char",
            Test::BlockWrite => "sequential output block",
            Test::Rewrite => "rewrite",
            Test::PerCharRead => "sequential input per char",
            Test::BlockRead => "sequential input block",
            Test::Seeks => "random seeks",
        }
    }

    /// The test a figure's label names (a `(run N)` suffix aside).
    pub fn of_label(label: &str) -> Option<Test> {
        let base = label.split(" (run ").next().unwrap_or(label);
        TESTS.iter().copied().find(|t| t.label() == base)
    }
}

/// bonnie++'s tests in the order it runs them.
pub const TESTS: [Test; 6] = [
    Test::PerCharWrite,
    Test::BlockWrite,
    Test::Rewrite,
    Test::PerCharRead,
    Test::BlockRead,
    Test::Seeks,
];

/// Which of bonnie++'s tests a stretch is, from what it did alone: the size of its requests
/// each way, whether it moved as many bytes back as it read, and its seeks per read. `None`
/// when it is none of them (no data, one-byte and block calls mixed, reads and writes
/// without the rewrite's or the seek test's shape).
pub fn classify(s: &Stretch) -> Option<Test> {
    let (r, w) = (&s.read, &s.write);
    match (r.calls, w.calls) {
        (0, 0) => None,
        (0, _) if w.per_char() => Some(Test::PerCharWrite),
        (0, _) if w.blocks() => Some(Test::BlockWrite),
        (_, 0) if r.per_char() => Some(Test::PerCharRead),
        // Sequential: at most the one seek back to the start.
        (_, 0) if r.blocks() && s.seeks <= 1 => Some(Test::BlockRead),
        (_, _) if !(r.blocks() && w.blocks()) => None,
        // Every block read is written back in place: as many calls and bytes each way, and
        // a seek back between each read and its write.
        (rc, wc) if rc == wc && r.bytes == w.bytes && s.seeks >= wc => Some(Test::Rewrite),
        // Seeks before each read; fewer writes than reads (a share written back).
        (rc, wc) if s.seeks >= rc && wc < rc => Some(Test::Seeks),
        _ => None,
    }
}

/// A descriptor's stretch while it is open.
struct Opened {
    stretch: Stretch,
}

/// Stretches held before the smallest are dropped.
pub const HELD: usize = 256;

/// Follows the opens, I/O and closes of every thread and keeps the stretches that moved
/// data.
pub struct Phases {
    start: Instant,
    open: HashMap<(i32, i32), Opened>,
    done: Vec<Stretch>,
    /// Per thread, the index in `done` of its last closed stretch (its clock reads after
    /// the close go there until its next open).
    last_closed: HashMap<i32, usize>,
    /// Stretches dropped to keep the memory bounded.
    pub dropped: u64,
}

/// The descriptor a call acts on, for the calls a stretch counts.
fn fd_of(call: Call, args: &[u64; 6]) -> Option<i32> {
    use Call::*;
    matches!(
        call,
        Read | Pread
            | Readv
            | Preadv
            | Write
            | Pwrite
            | Writev
            | Pwritev
            | Lseek
            | Fsync
            | Fdatasync
            | SyncFileRange
            | Close
    )
    .then_some(args[0] as i32)
}

impl Phases {
    /// Starts following, with times counted from `start` (the trace's start).
    pub fn new(start: Instant) -> Self {
        Self {
            start,
            open: HashMap::new(),
            done: Vec::new(),
            last_closed: HashMap::new(),
            dropped: 0,
        }
    }

    /// A call finished at `at`, before the tally saw it (a close's file is still known):
    /// `path` gives the file behind a descriptor of the calling thread.
    pub fn before(&mut self, s: &Syscall, at: Instant, path: impl Fn(i32) -> Option<String>) {
        let when = at.saturating_duration_since(self.start).as_secs_f64();
        if super::clock::is_clock(s.call) {
            if let Some(&i) = self.last_closed.get(&s.tid)
                && let Some(st) = self.done.get_mut(i)
            {
                st.clock_after_close += 1;
            }
            return;
        }
        let Some(fd) = fd_of(s.call, &s.args) else {
            return;
        };
        if s.failed {
            return;
        }
        let key = (s.tid, fd);
        let o = match self.open.entry(key) {
            std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
            // Opened before the trace saw it (inherited, or a dup): from its first call.
            std::collections::hash_map::Entry::Vacant(v) => {
                let Some(p) = path(fd) else { return };
                v.insert(Opened::new(s.tid, p, when))
            }
        };
        let st = &mut o.stretch;
        let got = s.ret.max(0) as u64;
        // The bytes asked for: the count argument, or what a vector call returned.
        let asked = match s.call {
            Call::Read | Call::Write | Call::Pread | Call::Pwrite => s.args[2],
            _ => got,
        };
        let secs = s.nanos as f64 / 1e9;
        use Call::*;
        match s.call {
            Read | Pread | Readv | Preadv => st.read.add(asked, got),
            Write | Pwrite | Writev | Pwritev => st.write.add(asked, got),
            Lseek => st.seeks += 1,
            Fsync | Fdatasync | SyncFileRange => {
                st.syncs += 1;
                st.sync_seconds += secs;
            }
            _ => {}
        }
        st.end_seconds = when;
        if s.call == Close
            && let Some(mut o) = self.open.remove(&key)
        {
            o.stretch.closed = true;
            o.stretch.close_seconds = secs;
            if let Some(i) = self.keep(o.stretch) {
                self.last_closed.insert(s.tid, i);
            }
        }
    }

    /// A call finished, after the tally saw it: an open starts a stretch on the descriptor
    /// it returned.
    pub fn after(&mut self, s: &Syscall, at: Instant, path: impl Fn(i32) -> Option<String>) {
        if s.failed || !matches!(s.call, Call::Open | Call::Openat | Call::Creat) {
            return;
        }
        let when = at.saturating_duration_since(self.start).as_secs_f64();
        let fd = s.ret as i32;
        self.last_closed.remove(&s.tid);
        if let Some(p) = path(fd) {
            // A descriptor reused without a close seen ends the stretch before it.
            if let Some(o) = self.open.insert((s.tid, fd), Opened::new(s.tid, p, when)) {
                self.keep(o.stretch);
            }
        }
    }

    /// Thread `tid` ended (or executed another program): its open stretches end unclosed.
    pub fn ended(&mut self, tid: i32) {
        self.last_closed.remove(&tid);
        let keys: Vec<(i32, i32)> = self.open.keys().filter(|k| k.0 == tid).copied().collect();
        let mut ended: Vec<Stretch> = keys
            .into_iter()
            .filter_map(|k| self.open.remove(&k))
            .map(|o| o.stretch)
            .collect();
        ended.sort_by(|a, b| a.start_seconds.total_cmp(&b.start_seconds));
        for s in ended {
            self.keep(s);
        }
    }

    /// Keeps a stretch that moved data; past [`HELD`], the one moving the fewest bytes goes.
    fn keep(&mut self, s: Stretch) -> Option<usize> {
        if s.read.calls + s.write.calls == 0 {
            return None;
        }
        self.done.push(s);
        if self.done.len() > HELD {
            let smallest = self
                .done
                .iter()
                .enumerate()
                .min_by_key(|(_, s)| s.bytes())
                .map(|(i, _)| i)
                .expect("more than HELD stretches are held");
            self.done.remove(smallest);
            self.dropped += 1;
            self.last_closed.clear();
            if smallest == self.done.len() {
                return None;
            }
        }
        Some(self.done.len() - 1)
    }

    /// Every stretch that moved data, closed or ended, in the order they began.
    pub fn finish(mut self) -> Vec<Stretch> {
        let tids: Vec<i32> = self.open.keys().map(|k| k.0).collect();
        for t in tids {
            self.ended(t);
        }
        let mut v = self.done;
        v.sort_by(|a, b| a.start_seconds.total_cmp(&b.start_seconds));
        v
    }
}

impl Opened {
    fn new(tid: i32, path: String, when: f64) -> Self {
        Self {
            stretch: Stretch {
                tid,
                path,
                start_seconds: when,
                end_seconds: when,
                read: Way::default(),
                write: Way::default(),
                seeks: 0,
                syncs: 0,
                sync_seconds: 0.0,
                closed: false,
                close_seconds: 0.0,
                clock_after_close: 0,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stretch of `reads` and `writes` (calls, bytes asked each) with `seeks`.
    pub(crate) fn made(reads: (u64, u64), writes: (u64, u64), seeks: u64) -> Stretch {
        let mut s = Opened::new(1, "/f".into(), 0.0).stretch;
        for _ in 0..reads.0 {
            s.read.add(reads.1, reads.1);
        }
        for _ in 0..writes.0 {
            s.write.add(writes.1, writes.1);
        }
        s.seeks = seeks;
        s
    }

    #[test]
    fn one_byte_writes_are_the_per_char_write_and_block_writes_the_block_write() {
        assert_eq!(
            classify(&made((0, 0), (3 << 20, 1), 0)),
            Some(Test::PerCharWrite)
        );
        assert_eq!(
            classify(&made((0, 0), (8192, 8192), 0)),
            Some(Test::BlockWrite)
        );
        // A single one-byte write is still per char (the count does not decide).
        assert_eq!(classify(&made((0, 0), (1, 1), 0)), Some(Test::PerCharWrite));
    }

    #[test]
    fn one_byte_and_block_writes_mixed_are_no_test() {
        let mut s = made((0, 0), (100, 8192), 0);
        s.write.add(1, 1);
        assert_eq!(classify(&s), None);
    }

    #[test]
    fn a_rewrite_stretch_with_no_reads_is_not_a_rewrite() {
        // Writes with a seek before each, as the rewrite does, but nothing read: a block
        // write, not a rewrite.
        assert_eq!(
            classify(&made((0, 0), (8192, 8192), 8192)),
            Some(Test::BlockWrite)
        );
    }

    #[test]
    fn reads_written_back_without_seeking_back_are_not_a_rewrite() {
        // As many blocks each way but no seek back: the writes went after the reads, not
        // over them.
        assert_eq!(classify(&made((8192, 8192), (8192, 8192), 1)), None);
    }

    #[test]
    fn each_block_read_written_back_in_place_is_the_rewrite() {
        assert_eq!(
            classify(&made((8192, 8192), (8192, 8192), 8193)),
            Some(Test::Rewrite)
        );
    }

    #[test]
    fn block_reads_with_a_seek_each_are_the_seek_test_and_without_the_block_read() {
        assert_eq!(
            classify(&made((8000, 8192), (800, 8192), 8000)),
            Some(Test::Seeks)
        );
        assert_eq!(classify(&made((8000, 8192), (0, 0), 8000)), None);
        assert_eq!(
            classify(&made((8000, 8192), (0, 0), 1)),
            Some(Test::BlockRead)
        );
        // Read-only seeks (no block written back) are no bonnie++ test.
    }

    #[test]
    fn one_byte_reads_are_the_per_char_read_even_with_seeks() {
        assert_eq!(
            classify(&made((3 << 20, 1), (0, 0), 5)),
            Some(Test::PerCharRead)
        );
    }

    #[test]
    fn a_stretch_with_no_data_is_no_test() {
        let mut s = made((0, 0), (0, 0), 0);
        s.syncs = 1;
        s.closed = true;
        assert_eq!(classify(&s), None);
    }

    #[test]
    fn labels_with_a_run_suffix_name_their_test() {
        assert_eq!(Test::of_label("rewrite (run 2)"), Some(Test::Rewrite));
        assert_eq!(
            Test::of_label("sequential input per char"),
            Some(Test::PerCharRead)
        );
        assert_eq!(Test::of_label("write"), None);
    }
}
