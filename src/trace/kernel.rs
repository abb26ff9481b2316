//! The kernel engine: the command runs at full speed while the kernel's own tracepoints
//! record its file-I/O system calls into ring buffers that ioscope reads beside it, as
//! DTrace's probes did for the study `trace` grows from, and as `perf trace` does.
//!
//! Through `perf_event_open(2)`, no library and no BPF object: on every CPU, one event per
//! tracepoint — `raw_syscalls:sys_enter`/`sys_exit` with a filter in the kernel that keeps
//! only the calls [`Call::of`] knows, and `sched:sched_process_fork`/`exec`/`exit` for the
//! process tree — opened on the command's first task with `inherit` (its children and
//! threads carry the events with them) and `enable_on_exec` (nothing of ioscope's own
//! child before the exec is counted), all of a CPU's events writing into one ring. Each
//! record carries the task, its process and a CLOCK_MONOTONIC time; the CPUs' rings are
//! merged by time and handed to the same sink the ptrace loop feeds ([`super::sys`]), with
//! a resolver ([`Tracked`]) that answers from what the events said and from /proc.
//!
//! What it cannot do as ptrace does: read a task's memory at the moment of the call. The
//! path an open was given and libaio's requests are read a few milliseconds later, from
//! the task's memory if it is still there; a descriptor's path from /proc while it is
//! open. Records the kernel could not write (a ring full) are counted, never hidden:
//! [`Finish::lost`] says how many, and the counts are then lower bounds.

use super::call::Call;
use super::sys::{Ended, Event, Finish, OnSignal, Syscall};
use super::tally::{FileKind, Resolver};
use anyhow::{Context, Result, bail};
use std::collections::{HashMap, VecDeque};
use std::ffi::{CString, OsString};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::time::{Duration, Instant};

/// Where the kernel's tracing file system is, or may be mounted.
const TRACEFS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// What an open's name is called when it could not be read at its stop: said for a failed
/// open; a successful one's path is then asked of /proc.
const UNREAD_NAME: &str = "(a name that could not be read)";

/// Pages of each CPU's ring (a power of two): 4 MiB, about 40,000 call records.
const RING_PAGES: usize = 1024;

/// How often the rings are read while the command runs.
const POLL: Duration = Duration::from_millis(2);

/// How far behind the newest record the merge waits for a CPU that has written nothing:
/// a record is published a few microseconds after its time is taken.
const SLACK_NS: u64 = 5_000_000;

/// How far apart in time an eBPF program's record and the tracepoint record of the same
/// call may be (two probes of one tracepoint, run one after the other): well inside
/// [`SLACK_NS`], so a record that far ahead has been read.
const BESIDE_NS: u64 = 2_000_000;

/// Whether the kernel engine can run here, or why not (the sentence `trace` prints when it
/// falls back to ptrace).
pub fn available() -> std::result::Result<(), String> {
    let root = tracefs().map_err(|e| format!("{e:#}"))?;
    for event in ["raw_syscalls/sys_enter", "raw_syscalls/sys_exit"] {
        Format::read(&root, event).map_err(|e| format!("{e:#}"))?;
    }
    // One event on this process, opened and closed at once: the privilege test.
    let id = Format::read(&root, "raw_syscalls/sys_enter")
        .map_err(|e| format!("{e:#}"))?
        .id;
    let attr = Attr::tracepoint(id, false);
    let fd = open_event(&attr, 0, -1).map_err(|e| {
        format!("the kernel refused a tracepoint event ({e}); it needs root or CAP_PERFMON")
    })?;
    // Not kept as an anchor (see `Held`): the keeper's process, forked after this, would
    // hold it to its own end, and close it the slow way as ioscope exits.
    // SAFETY: closing the descriptor we just opened.
    unsafe { libc::close(fd) };
    Ok(())
}

/// Events kept open after their run, while ioscope traces (see [`release_held`]):
/// - one disabled event on this process per tracepoint the engine has used, never enabled
///   (an anchor): it keeps the tracepoint registered with perf. The last event on a
///   tracepoint waits out an RCU grace period as it closes (35–70 ms each on this VM, one
///   after another under the kernel's lock): without anchors, every run (the calibration's
///   and the command's) paid a dozen of those, 0.6 s, at its end;
/// - the events holding the eBPF programs on their tracepoints, whose closes (the
///   programs' detaching) wait the same way, 0.24 s a run.
struct Held {
    anchors: Vec<(u64, std::os::fd::OwnedFd)>,
    later: Vec<std::os::fd::OwnedFd>,
}

static HELD: std::sync::Mutex<Held> = std::sync::Mutex::new(Held {
    anchors: Vec::new(),
    later: Vec::new(),
});

fn held() -> std::sync::MutexGuard<'static, Held> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

/// Anchors tracepoint `id` (see [`Held`]), where it is not yet and the kernel lets us;
/// without one, the run's own events close the slow way.
fn anchor(id: u64) {
    let mut held = held();
    if held.anchors.iter().any(|&(i, _)| i == id) {
        return;
    }
    if let Ok(fd) = open_event(&Attr::tracepoint(id, false), 0, -1) {
        // SAFETY: a descriptor perf_event_open just returned, owned by nothing else.
        held.anchors
            .push((id, unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) }));
    }
}

/// Closes what [`Held`] keeps once ioscope traces no more, without waiting out those
/// closes (about 0.5 s here, one after another): a process of their own, let go of at
/// once, closes them, while ioscope goes on to its report and its exit.
pub fn release_held() {
    let fds: Vec<std::os::fd::OwnedFd> = {
        let mut held = held();
        let later = std::mem::take(&mut held.later);
        std::mem::take(&mut held.anchors)
            .into_iter()
            .map(|(_, fd)| fd)
            .chain(later)
            .collect()
    };
    if fds.is_empty() {
        return;
    }
    // The closer waits for ours to close first (the end of this pipe): a close while
    // another copy is open is quick, and the slow one would be ours.
    let mut done = [-1i32; 2];
    // SAFETY: pipe2 fills the array it is given.
    if unsafe { libc::pipe2(done.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let mut keep: Vec<i32> = fds.iter().map(|fd| fd.as_raw_fd()).collect();
    keep.push(done[0]);
    keep.sort_unstable();
    // SAFETY: fork in a process that may have other threads: both children call only
    // async-signal-safe functions (fork, close, close_range, read, _exit) before they
    // exit.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // SAFETY: as above.
        unsafe {
            if libc::fork() == 0 {
                // The closer: nothing of ioscope's but these (a pipe it held would keep
                // the reader of ioscope's output from its end).
                let mut from = 0u32;
                for &fd in &keep {
                    if fd as u32 > from {
                        close_range(from, fd as u32 - 1);
                    }
                    from = fd as u32 + 1;
                }
                close_range(from, u32::MAX);
                let mut byte = 0u8;
                while libc::read(done[0], (&raw mut byte).cast(), 1) < 0
                    && *libc::__errno_location() == libc::EINTR
                {}
                for &fd in &keep {
                    libc::close(fd);
                }
            }
            libc::_exit(0);
        }
    }
    if child > 0 {
        let mut status = 0;
        // SAFETY: reaping the child just forked, which exits at once.
        unsafe { libc::waitpid(child, &mut status, 0) };
    }
    // Where the closer holds them, ours close at once; where fork failed, the slow way.
    drop(fds);
    // SAFETY: closing the pipe's ends we own: the closer reads its end.
    unsafe {
        libc::close(done[0]);
        libc::close(done[1]);
    }
}

/// Closes descriptors `from..=to` (close_range, Linux 5.9+; one by one before that, up
/// to the descriptor limit). Async-signal-safe.
unsafe fn close_range(from: u32, to: u32) {
    // SAFETY: closing descriptors of this (forked) process only.
    unsafe {
        if libc::syscall(libc::SYS_close_range, from, to, 0) != 0 {
            let mut limit = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
            let last = (limit.rlim_cur.min(1 << 20) as u32).min(to.saturating_add(1));
            for fd in from..last {
                libc::close(fd as i32);
            }
        }
    }
}

/// The tracing file system's root, mounted there when it is not and we may (root).
fn tracefs() -> Result<std::path::PathBuf> {
    for root in TRACEFS {
        let p = std::path::Path::new(root);
        if p.join("events").is_dir() {
            return Ok(p.to_path_buf());
        }
    }
    let target = std::path::Path::new(TRACEFS[0]);
    if target.is_dir() {
        let dir = CString::new(TRACEFS[0]).expect("no NUL");
        // SAFETY: NUL-terminated strings that live across the call; no data.
        let rc = unsafe {
            libc::mount(
                c"nodev".as_ptr(),
                dir.as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc == 0 && target.join("events").is_dir() {
            return Ok(target.to_path_buf());
        }
        let err = std::io::Error::last_os_error();
        bail!(
            "the tracing file system is not mounted at {} and could not be ({err})",
            TRACEFS[0]
        );
    }
    bail!("the kernel has no tracing file system (tracefs)")
}

/// A tracepoint's id and the offsets of its fields, from its `format` file.
#[derive(Debug, Clone)]
struct Format {
    id: u64,
    fields: HashMap<String, usize>,
    /// The fields that are arrays held in the record itself (`char child_comm[16]`, as
    /// kernels before 2025 declare the task names), with their size; any other string is
    /// a `__data_loc` word.
    inline: HashMap<String, usize>,
}

impl Format {
    fn read(root: &std::path::Path, event: &str) -> Result<Format> {
        let path = root.join("events").join(event).join("format");
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "no tracepoint {event} ({})",
                crate::text::printable_path(&path)
            )
        })?;
        Format::parse(&text).with_context(|| format!("tracepoint {event}: unreadable format"))
    }

    fn parse(text: &str) -> Result<Format> {
        let mut id = None;
        let mut fields = HashMap::new();
        let mut inline = HashMap::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(v) = line.strip_prefix("ID:") {
                id = v.trim().parse().ok();
            }
            let Some(rest) = line.strip_prefix("field:") else {
                continue;
            };
            let mut parts = rest.split(';');
            let decl = parts.next().unwrap_or("");
            let name = decl
                .split_whitespace()
                .last()
                .unwrap_or("")
                .split('[')
                .next()
                .unwrap_or("")
                .to_string();
            let mut offset = None;
            let mut size = None;
            for p in parts {
                let p = p.trim();
                if let Some(v) = p.strip_prefix("offset:") {
                    offset = v.parse().ok();
                } else if let Some(v) = p.strip_prefix("size:") {
                    size = v.parse::<usize>().ok();
                }
            }
            if let Some(offset) = offset {
                if decl.contains('[') && !decl.contains("__data_loc") {
                    inline.insert(name.clone(), size.unwrap_or(0));
                }
                fields.insert(name, offset);
            }
        }
        Ok(Format {
            id: id.context("no ID")?,
            fields,
            inline,
        })
    }

    /// String field `name` of record `raw`, up to its first NUL: held in the record, or
    /// where its `__data_loc` word says.
    fn text(&self, raw: &[u8], name: &str) -> Vec<u8> {
        let Some(&at) = self.fields.get(name) else {
            return Vec::new();
        };
        match self.inline.get(name) {
            Some(&size) => at
                .checked_add(size)
                .and_then(|end| raw.get(at..end))
                .and_then(|b| b.split(|&c| c == 0).next())
                .unwrap_or(&[])
                .to_vec(),
            None => data_loc(raw, at),
        }
    }

    fn at(&self, name: &str) -> Result<usize> {
        self.fields
            .get(name)
            .copied()
            .with_context(|| format!("no field {name}"))
    }
}

/// `struct perf_event_attr` as far as version 8 (the kernel takes any known size).
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved2: u16,
    aux_sample_size: u32,
    reserved3: u32,
    sig_data: u64,
    config3: u64,
}

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_TYPE_TRACEPOINT: u32 = 2;
const COUNT_SW_BPF_OUTPUT: u64 = 10;
const SAMPLE_TID: u64 = 1 << 1;
const SAMPLE_TIME: u64 = 1 << 2;
const SAMPLE_RAW: u64 = 1 << 10;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_INHERIT: u64 = 1 << 1;
const FLAG_ENABLE_ON_EXEC: u64 = 1 << 12;
const FLAG_USE_CLOCKID: u64 = 1 << 25;
const IOC_SET_OUTPUT: libc::c_ulong = 0x2405;
const IOC_SET_FILTER: libc::c_ulong = 0x4008_2406;
const IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
const RECORD_LOST: u32 = 2;
const RECORD_SAMPLE: u32 = 9;

impl Attr {
    /// Every event of `kind` and `config` sampled with its task, time (CLOCK_MONOTONIC)
    /// and raw data.
    fn sampled(kind: u32, config: u64, flags: u64) -> Attr {
        Attr {
            kind,
            size: std::mem::size_of::<Attr>() as u32,
            config,
            sample_period: 1,
            sample_type: SAMPLE_TID | SAMPLE_TIME | SAMPLE_RAW,
            flags: flags | FLAG_USE_CLOCKID,
            clockid: libc::CLOCK_MONOTONIC,
            ..Attr::default()
        }
    }

    /// Every hit of tracepoint `id`, with its raw fields; on a command (`follow`): its
    /// children too, and only from its exec on.
    fn tracepoint(id: u64, follow: bool) -> Attr {
        let mut flags = FLAG_DISABLED;
        if follow {
            flags |= FLAG_INHERIT | FLAG_ENABLE_ON_EXEC;
        }
        Attr::sampled(PERF_TYPE_TRACEPOINT, id, flags)
    }

    /// The event eBPF programs write their records to ([`super::bpf`]): on from its open,
    /// its records shaped as a tracepoint's.
    fn bpf_output() -> Attr {
        Attr::sampled(PERF_TYPE_SOFTWARE, COUNT_SW_BPF_OUTPUT, 0)
    }
}

fn open_event(attr: &Attr, pid: i32, cpu: i32) -> std::io::Result<i32> {
    // SAFETY: `attr` is a live, fully initialised perf_event_attr of the size it states.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            attr as *const Attr,
            pid,
            cpu,
            -1,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd as i32)
}

/// One CPU's ring and the events writing into it.
struct Ring {
    cpu: i32,
    fds: Vec<i32>,
    base: *mut u8,
    len: usize,
    page: usize,
}

impl Ring {
    /// The largest ring the kernel allows this user, from [`RING_PAGES`] down (locked
    /// memory: a user without CAP_IPC_LOCK has perf_event_mlock_kb, 516 KiB by default).
    fn map(fd: i32, cpu: i32) -> std::io::Result<Ring> {
        let mut pages = RING_PAGES;
        loop {
            match Ring::map_pages(fd, cpu, pages) {
                Err(e) if pages > 8 && e.raw_os_error() == Some(libc::EPERM) => pages /= 4,
                other => return other,
            }
        }
    }

    fn map_pages(fd: i32, cpu: i32, pages: usize) -> std::io::Result<Ring> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = page * (1 + pages);
        // SAFETY: a shared read-write mapping of a perf event's ring, of the size the
        // kernel expects (one header page and a power of two of data pages).
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Ring {
            cpu,
            fds: vec![fd],
            base: base.cast(),
            len,
            page,
        })
    }

    /// Appends every byte written since the last call to `out` (whole records, in
    /// order), and frees their room.
    fn drain(&mut self, out: &mut Vec<u8>) {
        use std::sync::atomic::{AtomicU64, Ordering};
        // struct perf_event_mmap_page: data_head at 1024, data_tail at 1032.
        // SAFETY: both words are inside the mapped header page, 8-byte aligned; the
        // kernel writes the head and reads the tail, as atomics.
        let (head_word, tail_word) = unsafe {
            (
                &*(self.base.add(1024) as *const AtomicU64),
                &*(self.base.add(1032) as *const AtomicU64),
            )
        };
        let head = head_word.load(Ordering::Acquire);
        let tail = tail_word.load(Ordering::Relaxed);
        let size = self.len - self.page;
        if head > tail {
            // SAFETY: the data pages follow the header page; [tail, head) is at most the
            // ring's size, read in at most two pieces around its end.
            let data = unsafe { std::slice::from_raw_parts(self.base.add(self.page), size) };
            let from = (tail % size as u64) as usize;
            let n = ((head - tail) as usize).min(size);
            let first = n.min(size - from);
            out.extend_from_slice(&data[from..from + first]);
            out.extend_from_slice(&data[..n - first]);
        }
        tail_word.store(head, Ordering::Release);
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping the mapping we made and closing the descriptors we opened.
        unsafe {
            libc::munmap(self.base.cast(), self.len);
            for &fd in &self.fds {
                libc::close(fd);
            }
        }
    }
}

/// The tracepoints the engine decodes, with their fields' offsets.
struct Points {
    enter: Format,
    exit: Format,
    fork: Format,
    exec: Format,
    gone: Format,
}

impl Points {
    fn read(root: &std::path::Path) -> Result<Points> {
        let points = Points {
            enter: Format::read(root, "raw_syscalls/sys_enter")?,
            exit: Format::read(root, "raw_syscalls/sys_exit")?,
            fork: Format::read(root, "sched/sched_process_fork")?,
            exec: Format::read(root, "sched/sched_process_exec")?,
            gone: Format::read(root, "sched/sched_process_exit")?,
        };
        // Every field decoded, or none: a kernel that renamed one is refused here.
        for (f, names) in [
            (&points.enter, &["id", "args"][..]),
            (&points.exit, &["id", "ret"][..]),
            (&points.fork, &["parent_pid", "child_pid", "child_comm"][..]),
            (&points.exec, &["pid", "old_pid", "filename"][..]),
            (&points.gone, &["pid"][..]),
        ] {
            for name in names {
                f.at(name).context("a tracepoint's format")?;
            }
        }
        Ok(points)
    }

    fn all(&self) -> [&Format; 5] {
        [&self.enter, &self.exit, &self.fork, &self.exec, &self.gone]
    }
}

/// One record, decoded.
#[derive(Debug, Clone)]
enum Raw {
    Enter {
        nr: u64,
        args: [u64; 6],
    },
    Exit {
        nr: u64,
        ret: i64,
    },
    Fork {
        parent: i32,
        child: i32,
        comm: Vec<u8>,
    },
    Exec {
        tid: i32,
        old: i32,
        filename: Vec<u8>,
    },
    Gone {
        tid: i32,
    },
    /// What an eBPF program read at a libaio call.
    Memory(super::bpf::Record),
}

#[derive(Debug, Clone)]
struct Record {
    pid: i32,
    tid: i32,
    time: u64,
    raw: Raw,
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    at.checked_add(8)
        .and_then(|end| b.get(at..end))
        .map_or(0, |s| u64::from_ne_bytes(s.try_into().expect("8 bytes")))
}

/// A `__data_loc` string field: a word at `at` holding its offset (low 16 bits) and length
/// (high 16) in the record; the bytes up to the first NUL.
fn data_loc(b: &[u8], at: usize) -> Vec<u8> {
    let word = i32_at(b, at) as u32;
    let (start, len) = ((word & 0xffff) as usize, (word >> 16) as usize);
    let bytes = b.get(start..start + len).unwrap_or(&[]);
    bytes.split(|&c| c == 0).next().unwrap_or(&[]).to_vec()
}

fn i32_at(b: &[u8], at: usize) -> i32 {
    at.checked_add(4)
        .and_then(|end| b.get(at..end))
        .map_or(0, |s| i32::from_ne_bytes(s.try_into().expect("4 bytes")))
}

impl Points {
    /// A sample record's task, time and tracepoint fields; `None` for another record.
    fn decode(&self, rec: &[u8]) -> Option<Record> {
        let kind = u32::from_ne_bytes(rec.get(0..4)?.try_into().ok()?);
        if kind != RECORD_SAMPLE {
            return None;
        }
        // header, u32 pid, u32 tid, u64 time, u32 size, raw.
        let pid = i32_at(rec, 8);
        let tid = i32_at(rec, 12);
        let time = u64_at(rec, 16);
        let size = u32::from_ne_bytes(rec.get(24..28)?.try_into().ok()?) as usize;
        let raw = rec.get(28..28 + size)?;
        let kind = u16::from_ne_bytes(raw.get(0..2)?.try_into().ok()?) as u64;
        if kind == super::bpf::MARK as u64 {
            return Some(Record {
                pid,
                tid,
                time,
                raw: Raw::Memory(super::bpf::Record::decode(raw)?),
            });
        }
        let f = |fmt: &Format, name: &str| fmt.fields.get(name).copied().unwrap_or(usize::MAX);
        let raw = if kind == self.enter.id {
            let a = f(&self.enter, "args");
            let mut args = [0u64; 6];
            for (i, arg) in args.iter_mut().enumerate() {
                *arg = u64_at(raw, a + 8 * i);
            }
            Raw::Enter {
                nr: u64_at(raw, f(&self.enter, "id")),
                args,
            }
        } else if kind == self.exit.id {
            Raw::Exit {
                nr: u64_at(raw, f(&self.exit, "id")),
                ret: u64_at(raw, f(&self.exit, "ret")) as i64,
            }
        } else if kind == self.fork.id {
            Raw::Fork {
                parent: i32_at(raw, f(&self.fork, "parent_pid")),
                child: i32_at(raw, f(&self.fork, "child_pid")),
                comm: self.fork.text(raw, "child_comm"),
            }
        } else if kind == self.exec.id {
            Raw::Exec {
                tid: i32_at(raw, f(&self.exec, "pid")),
                old: i32_at(raw, f(&self.exec, "old_pid")),
                filename: self.exec.text(raw, "filename"),
            }
        } else if kind == self.gone.id {
            Raw::Gone {
                tid: i32_at(raw, f(&self.gone, "pid")),
            }
        } else {
            return None;
        };
        Some(Record {
            pid,
            tid,
            time,
            raw,
        })
    }
}

/// The kernel's filter on the system-call events: the calls [`Call::of`] knows, less the
/// ones ptrace watches only for its own seccomp filter.
fn filter() -> String {
    // The records carry an i386 call's own number: those counted are kept too (the
    // filter's stop says which ABI a call was made in).
    let i386 = |nr: u64| {
        cfg!(target_arch = "x86_64")
            && matches!(
                super::i386::call(nr),
                Some(super::i386::Compat::Counted(c)) if !c.watched_only()
            )
    };
    (0..1024u64)
        .filter(|&nr| Call::of(nr).is_some_and(|c| !c.watched_only()) || i386(nr))
        .map(|nr| format!("id == {nr}"))
        // x32 calls, counted as not decoded.
        .chain(cfg!(target_arch = "x86_64").then(|| format!("id >= {}", super::i386::X32_BIT)))
        .collect::<Vec<_>>()
        .join(" || ")
}

/// What the engine knows of the traced tasks, for the tally to ask ([`Resolver`]).
#[derive(Default)]
pub struct Tracked {
    tgid: HashMap<i32, i32>,
    /// How many of the tasks in `tgid` each process has: its descriptors are forgotten
    /// when the last is retired.
    members: HashMap<i32, usize>,
    /// Descriptors opened during the trace: (process, fd) → what the open said.
    opened: HashMap<(i32, i32), Opened>,
    /// The descriptors the command started with (its standard ones, say), read from /proc
    /// before it ran: what a descriptor it never opened stands for once /proc is gone.
    inherited: Inherited,
    /// What became of each program's vDSO at its exec, by the task that executed it.
    hidden: HashMap<i32, super::vdso::Hidden>,
    /// The open being handed on, and the name it was given (absolute), read at its stop.
    named: Option<(i32, OsString)>,
    /// Memory read while the call being handed on stopped: (task, regions).
    memory: Option<(i32, Regions)>,
    /// Each task's name (comm) and program, from its fork and exec events.
    comm: HashMap<i32, OsString>,
    program: HashMap<i32, OsString>,
}

/// A descriptor opened during the trace.
#[derive(Debug, Clone)]
struct Opened {
    path: OsString,
    kind: Option<FileKind>,
    /// Opened with O_CLOEXEC: an exec closes it.
    cloexec: bool,
    /// Opened with O_APPEND: its position is the file's end, not its start.
    append: bool,
}

/// The descriptors a process had, with their paths, kinds and positions.
#[derive(Debug, Clone, Default)]
struct Inherited(HashMap<i32, (OsString, Option<FileKind>, Option<u64>)>);

impl Inherited {
    /// The descriptors of `pid`, waiting to exec, that the exec keeps (not close-on-exec,
    /// as ioscope's own pipes to it are).
    fn of(pid: i32) -> Inherited {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
            return Inherited::default();
        };
        Inherited(
            dir.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
                .filter(|&fd| !close_on_exec(pid, fd))
                .filter_map(|fd| {
                    let path = super::Proc.path(pid, fd)?;
                    Some((
                        fd,
                        (
                            path,
                            super::Proc.kind(pid, fd),
                            super::Proc.position(pid, fd),
                        ),
                    ))
                })
                .collect(),
        )
    }
}

/// Whether descriptor `fd` of `pid` closes at exec (its fdinfo's flags hold O_CLOEXEC).
fn close_on_exec(pid: i32, fd: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/fdinfo/{fd}"))
        .ok()
        .and_then(|t| {
            let flags = t.lines().find_map(|l| l.strip_prefix("flags:"))?;
            u64::from_str_radix(flags.trim(), 8).ok()
        })
        .is_some_and(|f| f & libc::O_CLOEXEC as u64 != 0)
}

impl Tracked {
    /// Task `tid` is of `process`.
    fn join(&mut self, tid: i32, process: i32) {
        match self.tgid.insert(tid, process) {
            Some(was) if was == process => return,
            Some(was) => self.leave(was),
            None => {}
        }
        *self.members.entry(process).or_default() += 1;
    }

    /// One task fewer in `process`; the last one takes its descriptors with it.
    fn leave(&mut self, process: i32) {
        let Some(n) = self.members.get_mut(&process) else {
            return;
        };
        *n -= 1;
        if *n == 0 {
            self.members.remove(&process);
            self.opened.retain(|&(p, _), _| p != process);
        }
    }

    /// Forgets task `tid`: its process, name and program (and, with it the process's last,
    /// the process's descriptors).
    fn retire(&mut self, tid: i32) {
        self.comm.remove(&tid);
        self.program.remove(&tid);
        if let Some(process) = self.tgid.remove(&tid) {
            self.leave(process);
        }
        // Descriptors copied under its own id at a fork whose process was not known yet.
        if !self.members.contains_key(&tid) {
            self.opened.retain(|&(p, _), _| p != tid);
        }
    }

    fn process(&self, tid: i32) -> i32 {
        self.tgid
            .get(&tid)
            .copied()
            .or_else(|| super::Proc.tgid(tid))
            .unwrap_or(tid)
    }
}

impl Resolver for Tracked {
    fn path(&self, tid: i32, fd: i32) -> Option<OsString> {
        if let Some(o) = self.opened.get(&(self.process(tid), fd)) {
            return Some(o.path.clone());
        }
        super::Proc
            .path(tid, fd)
            .or_else(|| self.inherited.0.get(&fd).map(|i| i.0.clone()))
    }
    fn position(&self, tid: i32, fd: i32) -> Option<u64> {
        // Opened during the trace: at its start (an O_APPEND one at its end: /proc's
        // answer while the process lives, else unknown).
        match self.opened.get(&(self.process(tid), fd)) {
            Some(o) if o.append => return super::Proc.position(tid, fd),
            Some(_) => return Some(0),
            None => {}
        }
        super::Proc
            .position(tid, fd)
            .or_else(|| self.inherited.0.get(&fd).and_then(|i| i.2))
    }
    fn tgid(&self, tid: i32) -> Option<i32> {
        self.tgid
            .get(&tid)
            .copied()
            .or_else(|| super::Proc.tgid(tid))
    }
    fn memory(&self, tid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
        // What the program could have reused since is read as it was at the call.
        if let Some((task, regions)) = &self.memory
            && *task == tid
        {
            if let Some(b) = super::tally::aio::within(regions, addr, len) {
                return Some(b);
            }
        }
        super::Proc.memory(tid, addr, len)
    }
    fn string(&self, tid: i32, addr: u64) -> Option<OsString> {
        if let Some((t, name)) = &self.named
            && *t == tid
        {
            return Some(name.clone());
        }
        // Read after the call: one with control characters is taken for memory the
        // program has reused since, and refused.
        super::Proc
            .string(tid, addr)
            .filter(|s| !s.as_bytes().iter().any(|&b| b < 0x20 || b == 0x7f))
    }
    fn kind(&self, tid: i32, fd: i32) -> Option<FileKind> {
        if let Some(o) = self.opened.get(&(self.process(tid), fd)) {
            return o.kind;
        }
        super::Proc
            .kind(tid, fd)
            .or_else(|| self.inherited.0.get(&fd).and_then(|i| i.1))
    }
    fn cwd(&self, tid: i32) -> Option<OsString> {
        super::Proc.cwd(tid)
    }
    fn hidden_at_exec(&self, tid: i32) -> Option<super::vdso::Hidden> {
        self.hidden.get(&tid).cloned()
    }
    fn program(&self, tid: i32) -> Option<OsString> {
        self.program.get(&tid).cloned()
    }
    fn comm(&self, tid: i32) -> Option<OsString> {
        self.comm.get(&tid).cloned()
    }
}

/// What the kernel engine adds to a [`Finish`]: records lost and its own reading.
#[derive(Debug, Clone, Default)]
pub struct Counted {
    /// Records the kernel could not write (a ring was full): the counts are lower bounds.
    pub lost: u64,
    /// Records read.
    pub records: u64,
    /// Calls the program was stopped at (the filter's: opens, libaio's calls, calls of
    /// another ABI), each costing it what a ptrace stop costs.
    pub stops: u64,
    /// x32 calls recorded: counted, not decoded.
    pub x32: u64,
    /// How libaio's requests and events were read: in the kernel at each call (eBPF), or
    /// at a stop of the program, and why not in the kernel.
    pub libaio: Option<std::result::Result<(), String>>,
    /// libaio calls whose memory the eBPF programs' records did not give (their
    /// requests then read from the program afterwards, as it may have reused them).
    pub libaio_unread: u64,
}

/// libaio read inside the kernel: the loaded programs, the events holding them on their
/// tracepoints, and the events their records go through (closed at the end, which
/// detaches them).
struct InKernel {
    loaded: super::bpf::Loaded,
    holders: Vec<std::os::fd::OwnedFd>,
}

impl InKernel {
    /// Loads the programs and attaches them, before the command starts; why not where the
    /// kernel or this process's place refuses it.
    fn start(root: &std::path::Path) -> std::result::Result<InKernel, String> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        if !super::bpf::initial_pid_namespace() {
            return Err("ioscope runs in a process-id namespace of its own, and the programs see the kernel's ids".to_string());
        }
        let read = |e: &str| Format::read(root, e).map_err(|e| format!("{e:#}"));
        let offset = |f: &Format, name: &str| {
            f.at(name)
                .ok()
                .and_then(|o| i16::try_from(o).ok())
                .ok_or_else(|| format!("a tracepoint without the field {name}"))
        };
        let submit = read("syscalls/sys_enter_io_submit")?;
        let enter = read("syscalls/sys_enter_io_getevents")?;
        let exit = read("syscalls/sys_exit_io_getevents")?;
        let newtask = read("task/task_newtask")?;
        let offsets = super::bpf::Offsets {
            submit_nr: offset(&submit, "nr")?,
            submit_array: offset(&submit, "iocbpp")?,
            events: offset(&enter, "events")?,
            ret: offset(&exit, "ret")?,
            new_pid: offset(&newtask, "pid")?,
        };
        // io_pgetevents, where its fields sit where io_getevents' do.
        let p_enter = read("syscalls/sys_enter_io_pgetevents")
            .ok()
            .filter(|f| offset(f, "events") == Ok(offsets.events));
        let p_exit = read("syscalls/sys_exit_io_pgetevents")
            .ok()
            .filter(|f| offset(f, "ret") == Ok(offsets.ret));
        // SAFETY: sysconf has no preconditions.
        let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as u32;
        let loaded = super::bpf::Loaded::load(offsets, cpus)?;
        let mut points = vec![
            (submit.id, loaded.submit.as_raw_fd()),
            (enter.id, loaded.events_enter.as_raw_fd()),
            (exit.id, loaded.events_exit.as_raw_fd()),
            (newtask.id, loaded.newtask.as_raw_fd()),
        ];
        if let (Some(i), Some(o)) = (p_enter, p_exit) {
            points.push((i.id, loaded.events_enter.as_raw_fd()));
            points.push((o.id, loaded.events_exit.as_raw_fd()));
        }
        let mut holders = Vec::new();
        for (id, prog) in points {
            anchor(id);
            // One event per tracepoint holds the program there (on the first CPU that
            // takes it; the program runs on every CPU), never enabled.
            let fd = (0..cpus as i32)
                .map(|cpu| open_event(&Attr::tracepoint(id, false), -1, cpu))
                .find(|r| !matches!(r, Err(e) if e.raw_os_error() == Some(libc::ENODEV)))
                .unwrap_or_else(|| Err(std::io::Error::from_raw_os_error(libc::ENODEV)))
                .map_err(|e| format!("the kernel refused a tracepoint event ({e})"))?;
            // SAFETY: a descriptor perf_event_open just returned, owned by nothing else.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            // SAFETY: our event and our loaded program's descriptor.
            if unsafe { libc::ioctl(fd.as_raw_fd(), IOC_SET_BPF, prog) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(format!(
                    "the kernel refused to attach an eBPF program ({e})"
                ));
            }
            holders.push(fd);
        }
        Ok(InKernel { loaded, holders })
    }

    /// Detaches nothing now: the events holding the programs are closed with the anchors
    /// (see [`Held`]); with no traced process left, the programs write nothing more.
    fn hold(self) {
        held().later.extend(self.holders);
    }

    /// Sends the programs' records into each CPU's ring and follows process `pid`.
    fn connect(&mut self, rings: &mut [Ring], pid: i32) -> std::result::Result<(), String> {
        for r in rings {
            let fd = open_event(&Attr::bpf_output(), -1, r.cpu)
                .map_err(|e| format!("the kernel refused an output event ({e})"))?;
            r.fds.push(fd);
            // SAFETY: both descriptors are our perf events on the same CPU.
            if unsafe { libc::ioctl(fd, IOC_SET_OUTPUT, r.fds[0]) } != 0 {
                let e = std::io::Error::last_os_error();
                return Err(format!("the kernel refused to share a ring ({e})"));
            }
            self.loaded
                .output(r.cpu as u32, fd)
                .map_err(|e| format!("the kernel refused an eBPF map update ({e})"))?;
        }
        self.loaded
            .follow(pid)
            .map_err(|e| format!("the kernel refused an eBPF map update ({e})"))
    }
}

/// Starts `command` with the kernel's tracepoints on it and reports its calls to `sink`,
/// with the time each happened and the resolver to ask about them, until its first
/// process ends (what it left running runs on, no longer traced). `prepare` runs in the
/// child before exec (async-signal-safe calls only); `started` here with its pid.
pub fn trace(
    command: &[OsString],
    hide_vdso: bool,
    on_signal: OnSignal,
    prepare: &dyn Fn(),
    started: &mut dyn FnMut(i32),
    sink: &mut dyn FnMut(Event, Instant, &dyn Resolver),
) -> Result<(Finish, Counted)> {
    let Some(program) = command.first() else {
        bail!("trace: no command given (ioscope trace -- CMD [ARGS...])");
    };
    let shown = crate::text::printable_path(std::path::Path::new(program));
    let root = tracefs().context("trace: the kernel engine")?;
    let points = Points::read(&root).context("trace: the kernel engine")?;
    for point in points.all() {
        anchor(point.id);
    }
    let argv: Vec<CString> = command
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
        .context("trace: an argument contains a NUL byte")?;
    crate::interrupt::check()?;
    let mut argv_ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    argv_ptrs.push(std::ptr::null());
    // The opens (and libaio's calls, unless read in the kernel) stop: a seccomp filter on
    // them alone, so that names and requests are read while the program waits; everything
    // else runs on. Both filters are made before fork; the child is told which to install.
    let plan = super::filter::Plan::decide_for(&super::filter::stop_numbers(false));
    let plan_in_kernel = super::filter::Plan::decide_for(&super::filter::stop_numbers(true));
    // `go`: the child waits on it until the events are on it; `errno`: exec's failure.
    let mut go = [0; 2];
    let mut errno_pipe = [0; 2];
    // SAFETY: pipe2 fills the two-int arrays we pass.
    if unsafe { libc::pipe2(go.as_mut_ptr(), libc::O_CLOEXEC) } != 0
        || unsafe { libc::pipe2(errno_pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0
    {
        return Err(std::io::Error::last_os_error()).context("trace: pipe");
    }
    // SAFETY: after fork the child calls only async-signal-safe functions (read, close,
    // signal, raise, write, execvp, _exit, and `prepare`, which promises the same).
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(std::io::Error::last_os_error()).context("trace: fork");
    }
    if pid == 0 {
        // SAFETY: see above; argv_ptrs is a NULL-terminated array of live C strings.
        unsafe {
            libc::close(go[1]);
            libc::close(errno_pipe[0]);
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            prepare();
            // Ready: its descriptors are what the command will inherit. (A stop, not a
            // write, which /proc/<pid>/io would count against the command.)
            libc::raise(libc::SIGSTOP);
            let mut byte = 0u8;
            if libc::read(go[0], (&mut byte as *mut u8).cast(), 1) != 1 {
                libc::_exit(127);
            }
            // Attached (with PTRACE_O_TRACESECCOMP) where byte is 2 or 3: the stops reach
            // us; 3: libaio is read in the kernel.
            match byte {
                2 => plan.install(),
                3 => plan_in_kernel.install(),
                _ => {}
            }
            libc::execvp(argv_ptrs[0], argv_ptrs.as_ptr());
            let errno = *libc::__errno_location();
            libc::write(errno_pipe[1], (&errno as *const i32).cast(), 4);
            libc::_exit(127);
        }
    }
    // SAFETY: closing our copies of the child's ends.
    unsafe {
        libc::close(go[0]);
        libc::close(errno_pipe[1]);
    }
    let kill_child = |why: anyhow::Error| -> anyhow::Error {
        let mut status = 0;
        // SAFETY: killing and reaping the child we forked; closing the ends we own.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, &mut status, 0);
            libc::close(go[1]);
            libc::close(errno_pipe[0]);
        }
        why
    };
    let mut status = 0;
    if let Err(e) = super::ptrace::wait(pid, &mut status, libc::WUNTRACED) {
        return Err(kill_child(
            anyhow::Error::new(e).context("trace: waiting for the child to stop"),
        ));
    }
    let inherited = Inherited::of(pid);
    // libaio's requests and events read in the kernel at each call, where it can be
    // (loaded now, so that the child holds none of its descriptors).
    let mut in_kernel = InKernel::start(&root);
    let mut rings = match open_rings(&points, pid) {
        Ok(r) => r,
        Err(e) => {
            return Err(kill_child(
                e.context(format!("trace {shown}: the kernel engine")),
            ));
        }
    };
    if let Ok(k) = &mut in_kernel
        && let Err(why) = k.connect(&mut rings, pid)
    {
        in_kernel = Err(why);
    }
    let mut execs = ExecStops::attach(pid, hide_vdso);
    // The clock the records carry, against ours.
    let base = Instant::now();
    let base_ns = monotonic_ns();
    started(pid);
    // SAFETY: one byte to the child (2: attached, install the filter), then our end
    // closed, and the stop it put itself in ended.
    unsafe {
        let word = match (&execs, &in_kernel) {
            (None, _) => 1u8,
            (Some(_), Err(_)) => 2,
            (Some(_), Ok(_)) => 3,
        };
        libc::write(go[1], [word].as_ptr().cast(), 1);
        libc::close(go[1]);
        libc::kill(pid, libc::SIGCONT);
    }
    // SIGCHLD blocked here, and waited for: a task stopped at an open is served at once.
    let chld = Chld::block();
    let mut engine = Engine {
        points,
        rings,
        queues: Vec::new(),
        tracked: Tracked {
            inherited,
            ..Tracked::default()
        },
        pending: HashMap::new(),
        stops: HashMap::new(),
        filled: HashMap::new(),
        awaiting: Default::default(),
        ended: HashMap::new(),
        gone: HashMap::new(),
        retiring: VecDeque::new(),
        libaio_in_kernel: in_kernel.is_ok(),
        submits: HashMap::new(),
        completions: HashMap::new(),
        counted: Counted::default(),
        base,
        base_ns,
        leader: pid,
    };
    engine.queues = (0..engine.rings.len()).map(|_| VecDeque::new()).collect();
    let mut ended = None;
    let mut interruption = super::sys::Interruption::default();
    // Without ptrace (refused), the first process alone is known to be signalled.
    let mut alone: HashMap<i32, super::sys::Task> =
        [(pid, super::sys::Task::default())].into_iter().collect();
    let no_signals = HashMap::new();
    let at;
    // The rings are read every POLL at most: a stop wakes the loop at once, and is served
    // without waiting for a read.
    let mut read_at = Instant::now();
    loop {
        if let Some(x) = &mut execs {
            x.serve(pid);
            engine.take(x);
        }
        if read_at.elapsed() >= POLL {
            engine.read(sink, false);
            read_at = Instant::now();
        }
        if let Some(status) = exited(pid) {
            at = Instant::now();
            ended = Some(status);
            break;
        }
        let (tasks, delivered) = match &execs {
            Some(x) => (&x.tasks, &x.delivered),
            None => (&alone, &no_signals),
        };
        if interruption.act(on_signal, pid, tasks, delivered).0 {
            at = Instant::now();
            break;
        }
        chld.wait(POLL);
    }
    drop(chld);
    // Every record of the command is written once it has ended: the last ones read, while
    // the first process, unreaped, can still be asked about.
    if let Some(x) = &mut execs {
        x.serve(pid);
        engine.take(x);
    }
    engine.read(sink, true);
    let errno = super::sys::read_errno(errno_pipe[0]);
    // SAFETY: closing the read end we own.
    unsafe { libc::close(errno_pipe[0]) };
    if ended.is_some() {
        let mut status = 0;
        // SAFETY: reaping the child whose exit we saw.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        alone.clear();
        if let Some(x) = &mut execs {
            x.tasks.remove(&pid);
        }
    }
    // What the command left running, as the ptrace engine finds it: tasks with the filter
    // cannot be let go of (their opens would fail with ENOSYS), so a keeper takes them over
    // where there is one; the others are let go of, running or stopped as they were.
    let left = match &mut execs {
        Some(x) if x.filtered && super::keeper::available() => {
            let left = super::sys::still_running(&mut x.tasks);
            if !left.is_empty() {
                super::keeper::needed();
            }
            left
        }
        Some(x) => super::sys::let_go(&mut x.tasks),
        None => left_untraced(ended.is_some().then_some(pid), &engine.tracked),
    };
    if let Some(errno) = errno {
        return Err(crate::error::input(format!(
            "trace {shown}: cannot run it: {}",
            std::io::Error::from_raw_os_error(errno)
        )));
    }
    let ended = match ended {
        Some(e) => e,
        None => Ended::Running,
    };
    let waited = match (&ended, interruption.since) {
        (Ended::Running, Some(since)) => Some(at.duration_since(since)),
        _ => None,
    };
    Ok((
        Finish {
            ended,
            at,
            left,
            stops: if execs.as_ref().is_some_and(|x| x.hide || x.filtered) {
                super::filter::Stops::AtExec
            } else {
                super::filter::Stops::Never
            },
            waited,
            compat: super::i386::Seen {
                x32: engine.counted.x32,
                ..execs.as_ref().map(|x| x.compat.clone()).unwrap_or_default()
            },
        },
        Counted {
            stops: execs.map_or(0, |x| x.stopped),
            libaio: Some(in_kernel.map(InKernel::hold)),
            ..engine.counted
        },
    ))
}

/// The processes of the command still running at the end (but `ended`, its first one if
/// that ended), where ptrace was refused: those the events named, as /proc shows them.
fn left_untraced(ended: Option<i32>, tracked: &Tracked) -> Vec<super::sys::Left> {
    let processes: std::collections::BTreeSet<i32> = tracked
        .tgid
        .values()
        .copied()
        .filter(|&p| Some(p) != ended)
        .collect();
    processes
        .into_iter()
        .filter_map(|p| {
            let status = std::fs::read_to_string(format!("/proc/{p}/status")).ok()?;
            let state = status
                .lines()
                .find_map(|l| l.strip_prefix("State:"))?
                .trim();
            if state.starts_with('Z') || state.starts_with('X') {
                return None;
            }
            Some(super::sys::Left {
                pid: p,
                name: super::comm(p).unwrap_or_default(),
                stopped: state.starts_with('T'),
            })
        })
        .collect()
}

/// The status of `pid` once it has exited, leaving it to be reaped (its /proc entries
/// still readable for the last records' sake).
fn exited(pid: i32) -> Option<Ended> {
    // SAFETY: a zeroed siginfo_t the call fills.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above; the pid is our child.
    let rc = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: si_pid and si_status are valid for a WEXITED report.
    let (who, status) = unsafe { (info.si_pid(), info.si_status()) };
    if rc != 0 || who != pid {
        return None;
    }
    // A traced child's stops are reported whatever the flags: only an end counts.
    match info.si_code {
        libc::CLD_EXITED => Some(Ended::Code(status)),
        libc::CLD_KILLED | libc::CLD_DUMPED => Some(Ended::Signal(status)),
        _ => None,
    }
}

fn monotonic_ns() -> u64 {
    // SAFETY: a zeroed timespec the call fills.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The events on `pid`, one ring per CPU, enabled at its exec.
fn open_rings(points: &Points, pid: i32) -> Result<Vec<Ring>> {
    // SAFETY: sysconf has no preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) }.max(1) as i32;
    let filter = CString::new(filter()).expect("no NUL");
    let mut rings = Vec::new();
    for cpu in 0..cpus {
        let mut ring: Option<Ring> = None;
        for (i, point) in points.all().into_iter().enumerate() {
            let attr = Attr::tracepoint(point.id, true);
            let fd = match open_event(&attr, pid, cpu) {
                Ok(fd) => fd,
                // A CPU that is offline has no events.
                Err(e) if e.raw_os_error() == Some(libc::ENODEV) && i == 0 => break,
                Err(e) => {
                    return Err(anyhow::Error::new(e).context("perf_event_open of a tracepoint"));
                }
            };
            if i < 2 {
                // SAFETY: a NUL-terminated filter string for our own event.
                let rc = unsafe { libc::ioctl(fd, IOC_SET_FILTER, filter.as_ptr()) };
                if rc != 0 {
                    let e = std::io::Error::last_os_error();
                    // SAFETY: closing the descriptor we opened.
                    unsafe { libc::close(fd) };
                    return Err(anyhow::Error::new(e).context("the tracepoint filter"));
                }
            }
            match &mut ring {
                None => match Ring::map(fd, cpu) {
                    Ok(r) => ring = Some(r),
                    Err(e) => {
                        // SAFETY: closing the descriptor we opened.
                        unsafe { libc::close(fd) };
                        return Err(anyhow::Error::new(e).context("mapping a ring"));
                    }
                },
                Some(r) => {
                    r.fds.push(fd);
                    // SAFETY: both descriptors are our perf events on the same CPU.
                    if unsafe { libc::ioctl(fd, IOC_SET_OUTPUT, r.fds[0]) } != 0 {
                        let e = std::io::Error::last_os_error();
                        return Err(anyhow::Error::new(e).context("sharing a ring"));
                    }
                }
            }
        }
        // Armed: enable_on_exec turns them on at the command's exec.
        if let Some(r) = ring {
            rings.push(r);
        }
    }
    if rings.is_empty() {
        bail!("no CPU took the events");
    }
    Ok(rings)
}

/// The reading side: rings, their records merged by time, and the calls in flight.
struct Engine {
    points: Points,
    rings: Vec<Ring>,
    queues: Vec<VecDeque<Record>>,
    tracked: Tracked,
    /// Calls entered and not yet exited, per task.
    pending: HashMap<i32, Inside>,
    /// What ptrace took at the filter's stops, per task, in order.
    stops: HashMap<i32, VecDeque<AtStop>>,
    /// Memory each io_getevents filled, read at its exit stop, per task, in order.
    filled: HashMap<i32, VecDeque<Regions>>,
    /// Tasks inside an io_getevents whose exit stop has not been served yet: their exit
    /// records wait for it.
    awaiting: std::collections::HashSet<i32>,
    /// Wait statuses of the tasks that ended, as the tracer heard them.
    ended: HashMap<i32, i32>,
    /// Tasks that ended (their exit record handed on, or an exec from another thread took
    /// their id away), with the time it happened: their state is freed once no record of
    /// theirs can still come ([`Engine::retire`]), unless the id was given again meanwhile.
    gone: HashMap<i32, u64>,
    /// The same, in the order they ended.
    retiring: VecDeque<(u64, i32)>,
    /// Whether eBPF programs read libaio's memory at each call ([`InKernel`]).
    libaio_in_kernel: bool,
    /// What they read at each io_submit, per task, in order: (time, whether every request
    /// was read, regions).
    submits: HashMap<i32, VecDeque<(u64, bool, Regions)>>,
    /// What they read at each io_getevents' exit, per task, in order: (time, what it
    /// returned, regions).
    completions: HashMap<i32, VecDeque<(u64, i64, Regions)>>,
    counted: Counted,
    base: Instant,
    base_ns: u64,
    leader: i32,
}

impl Engine {
    /// What the tracer learnt since the last look.
    fn take(&mut self, x: &mut ExecStops) {
        self.tracked.hidden.extend(x.hidden.drain());
        for (tid, stops) in x.stops.drain() {
            self.stops.entry(tid).or_default().extend(stops);
        }
        for (tid, filled) in x.filled.drain() {
            self.filled.entry(tid).or_default().extend(filled);
        }
        self.awaiting = x.awaiting.keys().copied().collect();
        self.ended.extend(x.ended.drain());
    }

    /// The stop of the filter whose call a record of `tid` at `time` with number `nr` is,
    /// if any: the last the task was resumed from before it. Earlier stops still waiting
    /// are of calls that left no record (one the kernel's filter drops, or a record lost),
    /// and are dropped, so that one lost record does not shift every later call's name.
    fn stop_of(&mut self, tid: i32, time: u64, nr: u64) -> Option<AtStop> {
        let queue = self.stops.get_mut(&tid)?;
        let mut last = None;
        while queue.front().is_some_and(|f| f.time <= time) {
            last = queue.pop_front();
        }
        last.filter(|at| at.nr == nr)
    }

    /// Reads every ring and hands on, in time order, the records that no CPU can still
    /// precede (`all`: every one).
    fn read(&mut self, sink: &mut dyn FnMut(Event, Instant, &dyn Resolver), all: bool) {
        let now = monotonic_ns();
        let mut bytes = Vec::new();
        for (i, ring) in self.rings.iter_mut().enumerate() {
            bytes.clear();
            ring.drain(&mut bytes);
            let mut at = 0;
            while at + 8 <= bytes.len() {
                let len = u16::from_ne_bytes([bytes[at + 6], bytes[at + 7]]) as usize;
                if len < 8 || at + len > bytes.len() {
                    break;
                }
                let rec = &bytes[at..at + len];
                at += len;
                let kind = u32::from_ne_bytes(rec[0..4].try_into().expect("4 bytes"));
                if kind == RECORD_LOST {
                    self.counted.lost += u64_at(rec, 16);
                    continue;
                }
                if let Some(r) = self.points.decode(rec) {
                    self.counted.records += 1;
                    self.queues[i].push_back(r);
                }
            }
        }
        let bound = if all {
            u64::MAX
        } else {
            now.saturating_sub(SLACK_NS)
        };
        loop {
            let next = self
                .queues
                .iter()
                .enumerate()
                .filter_map(|(i, q)| q.front().map(|r| (r.time, i)))
                .min();
            let Some((time, i)) = next else { break };
            if time > bound {
                break;
            }
            // The exit of an io_getevents whose events the tracer has not read yet (any
            // other record of that task goes on: it may wait in the call for long).
            let front = self.queues[i].front().expect("a front");
            if !all
                && matches!(front.raw, Raw::Exit { .. })
                && self.awaiting.contains(&front.tid)
                && self
                    .pending
                    .get(&front.tid)
                    .is_some_and(|p| p.call == Call::IoGetevents && !p.compat)
                && self.filled.get(&front.tid).is_none_or(VecDeque::is_empty)
            {
                break;
            }
            let r = self.queues[i].pop_front().expect("a front");
            self.hand_on(r, sink);
        }
        self.retire(bound.saturating_sub(SLACK_NS));
    }

    /// Frees the state of the tasks that ended at or before `horizon`: a record of theirs
    /// is handed on within [`SLACK_NS`] of its time, so none can still come once the merge
    /// has gone that far past their end. An id the kernel gave to a new task meanwhile (a
    /// fork, an exec) is kept.
    fn retire(&mut self, horizon: u64) {
        while let Some(&(time, tid)) = self.retiring.front() {
            if time > horizon {
                break;
            }
            self.retiring.pop_front();
            if self.gone.get(&tid) != Some(&time) {
                continue;
            }
            self.gone.remove(&tid);
            self.pending.remove(&tid);
            self.filled.remove(&tid);
            self.submits.remove(&tid);
            self.completions.remove(&tid);
            self.ended.remove(&tid);
            // Stops taken after the end are a new task's of the same id.
            if let Some(q) = self.stops.get_mut(&tid) {
                q.retain(|at| at.time > time);
                if q.is_empty() {
                    self.stops.remove(&tid);
                }
            }
            self.tracked.retire(tid);
        }
    }

    /// Task `tid` ended at `time`: its state goes once its last records are in.
    fn ended_at(&mut self, tid: i32, time: u64) {
        self.gone.insert(tid, time);
        self.retiring.push_back((time, tid));
    }

    /// Task `tid` is new (a fork, or an exec gave it a leader's id): not to be freed as
    /// the task that had its id before.
    fn born(&mut self, tid: i32) {
        self.gone.remove(&tid);
    }

    fn at(&self, time: u64) -> Instant {
        if time >= self.base_ns {
            self.base + Duration::from_nanos(time - self.base_ns)
        } else {
            self.base
                .checked_sub(Duration::from_nanos(self.base_ns - time))
                .unwrap_or(self.base)
        }
    }

    /// The process of a task just forked, from the first record it wrote, if read yet.
    fn process_of_new(&self, child: i32) -> Option<i32> {
        self.queues
            .iter()
            .flat_map(|q| q.iter())
            .find(|r| r.tid == child)
            .map(|r| r.pid)
    }

    /// What the eBPF program read at the io_submit of task `tid` entered at `entered` and
    /// returning at `exit`: its record, written at the enter (a little before or after
    /// the enter's own record), so before the exit. Older ones are of calls whose records
    /// were lost, and are dropped. `None` where there is none; a record that did not read
    /// every request (more than the program reads) is given and counted as unread.
    fn submitted(&mut self, tid: i32, entered: u64, exit: u64) -> Option<Regions> {
        let queue = self.submits.get_mut(&tid)?;
        while queue
            .front()
            .is_some_and(|(t, ..)| t.saturating_add(BESIDE_NS) < entered)
        {
            queue.pop_front();
        }
        match queue.front() {
            Some((t, ..)) if *t <= exit => {
                let (_, whole, regions) = queue.pop_front()?;
                if !whole {
                    self.counted.libaio_unread += 1;
                }
                Some(regions)
            }
            _ => None,
        }
    }

    /// What the eBPF program read at the exit of task `tid`'s io_getevents that returned
    /// `ret` at `exit`: its record, written a little before or after the exit's own, so
    /// looked for ahead in the rings too; one that returned something else is another
    /// call's.
    fn completed(&mut self, tid: i32, exit: u64, ret: i64) -> Option<Regions> {
        let queue = self.completions.entry(tid).or_default();
        while queue
            .front()
            .is_some_and(|(t, ..)| t.saturating_add(BESIDE_NS) < exit)
        {
            queue.pop_front();
        }
        if queue.is_empty() {
            // The earliest of this task's records still to be handed on, if near enough: each
            // queue is in time order, so it is searched only that far.
            let limit = exit.saturating_add(BESIDE_NS);
            let ahead = self
                .queues
                .iter()
                .enumerate()
                .filter_map(|(i, q)| {
                    q.iter()
                        .take_while(|x| x.time <= limit)
                        .position(|x| {
                            x.tid == tid
                                && matches!(x.raw, Raw::Memory(super::bpf::Record::Events { .. }))
                        })
                        .map(|at| (q[at].time, i, at))
                })
                .min();
            if let Some((_, i, at)) = ahead {
                let x = self.queues[i].remove(at).expect("found");
                if let Raw::Memory(super::bpf::Record::Events { ret, regions, .. }) = x.raw {
                    queue.push_back((x.time, ret, regions));
                }
            }
        }
        match queue.front() {
            Some((_, r, _)) if *r == ret => queue.pop_front().map(|(.., regions)| regions),
            _ => None,
        }
    }

    fn hand_on(&mut self, r: Record, sink: &mut dyn FnMut(Event, Instant, &dyn Resolver)) {
        let when = self.at(r.time);
        if r.pid > 0 {
            self.tracked.join(r.tid, r.pid);
        }
        match r.raw {
            Raw::Enter { nr, args } => {
                let at = self.stop_of(r.tid, r.time, nr);
                if at.as_ref().is_none_or(|a| a.compat.is_none()) && super::i386::is_x32(nr) {
                    self.counted.x32 += 1;
                    return;
                }
                let (call, args, compat) = match at.as_ref().and_then(|a| a.compat) {
                    // A call of another ABI, counted as its 64-bit equivalent, or not.
                    Some(Some((call, args))) => (call, args, true),
                    Some(None) => return,
                    None => match Call::of(nr) {
                        Some(call) => (call, args, false),
                        None => return,
                    },
                };
                let (name, memory) = at.map(|a| (a.name, a.memory)).unwrap_or_default();
                self.pending.insert(
                    r.tid,
                    Inside {
                        call,
                        args,
                        time: r.time,
                        nr,
                        compat,
                        name,
                        memory,
                    },
                );
                sink(
                    Event::Enter {
                        tid: r.tid,
                        call,
                        args,
                    },
                    when,
                    &self.tracked,
                );
            }
            Raw::Exit { nr, ret } => {
                let Some(inside) = self.pending.remove(&r.tid) else {
                    return;
                };
                if nr != inside.nr {
                    return;
                }
                let failed = (-4095..0).contains(&ret);
                let ret = if inside.compat {
                    super::i386::ret(ret as u64, failed)
                } else {
                    ret
                };
                // openat2: i386's 437.
                let openat2 = if inside.compat {
                    nr == 437
                } else {
                    nr == libc::SYS_openat2 as u64
                };
                let Inside {
                    call,
                    args,
                    name,
                    mut memory,
                    time: entered,
                    compat,
                    ..
                } = inside;
                if !failed {
                    self.learn(r.tid, r.pid, (call, openat2), &args, ret, name.clone());
                }
                self.tracked.named = name.map(|n| (r.tid, n));
                if call == Call::IoGetevents {
                    memory.extend(
                        self.filled
                            .get_mut(&r.tid)
                            .and_then(VecDeque::pop_front)
                            .unwrap_or_default(),
                    );
                }
                if self.libaio_in_kernel && !compat {
                    let read = match call {
                        Call::IoSubmit => Some(self.submitted(r.tid, entered, r.time)),
                        Call::IoGetevents => Some(self.completed(r.tid, r.time, ret)),
                        _ => None,
                    };
                    match read {
                        Some(Some(regions)) => memory.extend(regions),
                        Some(None) => self.counted.libaio_unread += 1,
                        None => {}
                    }
                }
                self.tracked.memory = (!memory.is_empty()).then_some((r.tid, memory));
                let s = Syscall {
                    tid: r.tid,
                    call,
                    args,
                    ret,
                    failed,
                    nanos: r.time.saturating_sub(entered),
                };
                sink(Event::Exit(s), when, &self.tracked);
                self.tracked.named = None;
                self.tracked.memory = None;
                if !failed {
                    self.forget(r.pid, call, &args, ret);
                }
            }
            Raw::Fork {
                parent,
                child,
                comm,
            } => {
                self.born(child);
                self.tracked.comm.insert(child, OsString::from_vec(comm));
                if let Some(p) = self.tracked.program.get(&parent).cloned() {
                    self.tracked.program.insert(child, p);
                }
                if let Some(p) = self
                    .process_of_new(child)
                    .or_else(|| super::Proc.tgid(child))
                {
                    self.tracked.join(child, p);
                }
                // A new process starts with a copy of its parent's descriptors.
                let (from, to) = (self.tracked.process(parent), self.tracked.process(child));
                if from != to {
                    let copies: Vec<(i32, Opened)> = self
                        .tracked
                        .opened
                        .iter()
                        .filter(|((p, _), _)| *p == from)
                        .map(|((_, fd), o)| (*fd, o.clone()))
                        .collect();
                    self.tracked.opened.retain(|&(p, _), _| p != to);
                    for (fd, o) in copies {
                        self.tracked.opened.insert((to, fd), o);
                    }
                }
                sink(Event::Spawned { parent, child }, when, &self.tracked);
            }
            Raw::Exec { tid, old, filename } => {
                self.born(tid);
                if old != tid {
                    // A thread other than the leader executed: the kernel gave it the
                    // leader's id, and its own is gone without an exit of its own.
                    self.tracked.join(tid, tid);
                    self.pending.remove(&old);
                    self.ended_at(old, r.time);
                }
                // The kernel names the task after the file's last component, cut to 15
                // bytes (TASK_COMM_LEN).
                let program = OsString::from_vec(filename);
                let name = last_name(&program);
                let comm = name[..name.len().min(15)].to_vec();
                self.tracked.comm.insert(tid, OsString::from_vec(comm));
                self.tracked.program.insert(tid, program);
                // exec closes the close-on-exec descriptors.
                let process = self.tracked.process(tid);
                self.tracked
                    .opened
                    .retain(|&(p, _), o| p != process || !o.cloexec);
                sink(Event::Exec { tid }, when, &self.tracked);
                // Asked at the exec alone.
                self.tracked.hidden.remove(&tid);
            }
            Raw::Memory(super::bpf::Record::Submit { asked, regions, .. }) => {
                // Each request read, and the pointers: one region more than requests.
                let whole = (asked as i64) <= 0 || regions.len() as u64 > asked;
                self.submits
                    .entry(r.tid)
                    .or_default()
                    .push_back((r.time, whole, regions));
            }
            Raw::Memory(super::bpf::Record::Events { ret, regions, .. }) => {
                self.completions
                    .entry(r.tid)
                    .or_default()
                    .push_back((r.time, ret, regions));
            }
            Raw::Gone { tid } => {
                // The status as the tracer heard it; the first process's, which the tracer
                // leaves unreaped, from a look that does not reap it.
                let status = self.ended.remove(&tid).or_else(|| {
                    (tid == self.leader)
                        .then(|| exited(tid))
                        .flatten()
                        .map(|e| match e {
                            Ended::Code(c) => (c & 0xff) << 8,
                            Ended::Signal(s) => s & 0x7f,
                            Ended::Running => 0,
                        })
                });
                self.pending.remove(&tid);
                sink(Event::Exiting { tid, status }, when, &self.tracked);
                self.ended_at(tid, r.time);
            }
        }
    }

    /// What a successful open says of the descriptor it made: its path (the name it was
    /// given, made absolute, read from the task's memory now; else /proc's), its kind.
    fn learn(
        &mut self,
        tid: i32,
        pid: i32,
        (call, openat2): (Call, bool),
        args: &[u64; 6],
        ret: i64,
        name: Option<OsString>,
    ) {
        let (dirfd, addr, flags) = match call {
            // openat2(dirfd, path, struct open_how *how, size): how->flags first.
            Call::Openat if openat2 => {
                let flags = super::Proc
                    .memory(tid, args[2], 8)
                    .map_or(0, |b| u64_at(&b, 0));
                (args[0] as i32, args[1], flags)
            }
            Call::Openat => (args[0] as i32, args[1], args[2]),
            Call::Open => (libc::AT_FDCWD, args[0], args[1]),
            Call::Creat => (libc::AT_FDCWD, args[0], 0),
            _ => return,
        };
        let fd = ret as i32;
        let process = if pid > 0 {
            pid
        } else {
            self.tracked.process(tid)
        };
        // The name read at the open's stop, made absolute there; else read back now.
        if let Some(name) = name.filter(|n| n != UNREAD_NAME) {
            let path = std::fs::canonicalize(&name).map_or(name, |p| p.into_os_string());
            self.remember(process, fd, path, flags);
            return;
        }
        let from_proc = super::Proc.path(tid, fd);
        let given = super::Proc.string(tid, addr).map(|name| {
            super::tally::absolute(name, dirfd, |relative| {
                if relative == libc::AT_FDCWD {
                    super::Proc.cwd(tid)
                } else {
                    self.tracked.path(tid, relative)
                }
            })
        });
        // /proc's answer is the canonical one, when it is this open's file still (the same
        // last component as the name given; else the descriptor was reused meanwhile).
        // A name read back that the program has since overwritten is refused: it holds
        // control characters, or names nothing (the open succeeded, so its file was there).
        let given = given.and_then(|g| {
            let plausible = !g.as_bytes().iter().any(|&b| b < 0x20 || b == 0x7f);
            match std::fs::canonicalize(&g) {
                Ok(real) => Some(real.into_os_string()),
                Err(_) if plausible && !g.as_bytes().ends_with(b"/") => Some(g),
                Err(_) => None,
            }
        });
        let path = match (from_proc, given) {
            (Some(p), Some(g)) if last_name(&p) == last_name(&g) => p,
            (_, Some(g)) => g,
            (Some(p), None) => p,
            (None, None) => format!("fd {fd} (its path was not read in time)").into(),
        };
        self.remember(process, fd, path, flags);
    }

    /// Descriptor `fd` of `process`, just opened with `flags`, stands for `path`.
    fn remember(&mut self, process: i32, fd: i32, path: OsString, flags: u64) {
        self.tracked.opened.remove(&(process, fd));
        let append = flags & libc::O_APPEND as u64 != 0;
        let kind = std::fs::metadata(&path)
            .ok()
            .map(|m| FileKind::of(m.file_type()));
        let cloexec = flags & libc::O_CLOEXEC as u64 != 0;
        self.tracked.opened.insert(
            (process, fd),
            Opened {
                path,
                kind,
                cloexec,
                append,
            },
        );
    }

    /// Descriptors a call closed, replaced or duplicated, after the tally has seen it: a
    /// duplicate stands for its original's file (so a descriptor moved onto 0 before an
    /// exec is still known when its process is gone by the time its records are read).
    fn forget(&mut self, pid: i32, call: Call, args: &[u64; 6], ret: i64) {
        let process = pid;
        let opened = &mut self.tracked.opened;
        let mut copy = |from: u64, to: i64, cloexec: bool| {
            let (from, to) = (from as i32, to as i32);
            if from == to {
                return;
            }
            match opened.get(&(process, from)).cloned() {
                Some(o) => {
                    opened.insert((process, to), Opened { cloexec, ..o });
                }
                None => {
                    opened.remove(&(process, to));
                }
            }
        };
        match call {
            Call::Close => {
                self.tracked.opened.remove(&(process, args[0] as i32));
            }
            Call::Dup => copy(args[0], ret, false),
            Call::Dup2 => copy(args[0], args[1] as i64, false),
            Call::Dup3 => copy(
                args[0],
                args[1] as i64,
                args[2] & libc::O_CLOEXEC as u64 != 0,
            ),
            Call::Fcntl if args[1] == libc::F_DUPFD as u64 => copy(args[0], ret, false),
            Call::Fcntl if args[1] == libc::F_DUPFD_CLOEXEC as u64 => copy(args[0], ret, true),
            Call::CloseRange => {
                let (lo, hi) = (args[0] as i32, args[1].min(i32::MAX as u64) as i32);
                self.tracked
                    .opened
                    .retain(|&(p, fd), _| p != process || fd < lo || fd > hi);
            }
            _ => {}
        }
        let _ = ret;
    }
}

/// An absolute name that means a different file in each process (under /proc/self,
/// /proc/thread-self, /dev/fd, or /dev/stdin, /dev/stdout, /dev/stderr), resolved in task
/// `tid`'s own /proc entries while it waits at its open: read later, in ioscope's own
/// context, it would name ioscope's file. Other names are returned as they are.
fn own_name(tid: i32, name: OsString) -> OsString {
    let pid = super::sys::tgid(tid).unwrap_or(tid);
    let own: [(&[u8], String); 6] = [
        (b"/proc/self", format!("/proc/{pid}")),
        (b"/proc/thread-self", format!("/proc/{pid}/task/{tid}")),
        (b"/dev/fd", format!("/proc/{tid}/fd")),
        (b"/dev/stdin", format!("/proc/{tid}/fd/0")),
        (b"/dev/stdout", format!("/proc/{tid}/fd/1")),
        (b"/dev/stderr", format!("/proc/{tid}/fd/2")),
    ];
    let b = name.as_bytes();
    let Some(path) = own.iter().find_map(|(prefix, own)| {
        let rest = b.strip_prefix(*prefix)?;
        (rest.is_empty() || rest[0] == b'/').then(|| [own.as_bytes(), rest].concat())
    }) else {
        return name;
    };
    let path = OsString::from_vec(path);
    // A file's own name; a pipe's or socket's as the link says (`pipe:[N]`).
    std::fs::canonicalize(&path)
        .map(std::path::PathBuf::into_os_string)
        .or_else(|_| std::fs::read_link(&path).map(std::path::PathBuf::into_os_string))
        .unwrap_or(path)
}

fn last_name(p: &OsString) -> &[u8] {
    let b = p.as_bytes();
    match b.iter().rposition(|&c| c == b'/') {
        Some(i) => &b[i + 1..],
        None => b,
    }
}

/// Memory read from a task while it waited: (address, bytes) per region.
type Regions = Vec<(u64, Vec<u8>)>;

/// What ptrace took at a stop of the filter, for the record of the same call: the name an
/// open was given, the requests an io_submit passed, and how a call of another ABI (an
/// i386 `int 0x80`) is counted, which its record alone cannot tell.
#[derive(Default)]
struct AtStop {
    /// When the task was resumed (CLOCK_MONOTONIC, as the records): the call's own
    /// records are its first ones after this.
    time: u64,
    /// The call's number, in its own ABI (as the record carries it).
    nr: u64,
    /// For a call of another ABI: the 64-bit call it counts as, with its arguments in that
    /// call's layout (`None`: a call that is not counted).
    compat: Option<Option<(Call, [u64; 6])>>,
    /// An open's name, made absolute.
    name: Option<OsString>,
    /// Memory read at the stop: (address, bytes).
    memory: Regions,
}

/// The call a task is inside, from its enter record.
struct Inside {
    call: Call,
    args: [u64; 6],
    time: u64,
    /// The number the record carries (an i386 call's own).
    nr: u64,
    compat: bool,
    name: Option<OsString>,
    memory: Regions,
}

/// ptrace kept for what the kernel's events cannot do: read the name an open is given
/// while the program waits (a seccomp filter stops the opens alone), and hide each
/// program's vDSO at its exec (`trace::vdso`), so that its clock reads are system calls the
/// tracepoints record. The tasks stop only at an open, an exec, a fork or clone (to follow
/// it) and a signal (passed on at once); never at another call.
struct ExecStops {
    /// Tasks attached (the command's, and what they started), and whether each is stopped.
    tasks: HashMap<i32, super::sys::Task>,
    /// The last signal each process was seen to receive, and when.
    delivered: HashMap<i32, (i32, Instant)>,
    /// Whether to hide the vDSO at each exec.
    hide: bool,
    /// Whether the command's program runs under the filter (seen at its exec).
    filtered: bool,
    checked: bool,
    /// What became of each program's vDSO, by the task that executed it.
    hidden: HashMap<i32, super::vdso::Hidden>,
    /// What each stop of the filter took, per task, in order.
    stops: HashMap<i32, Vec<AtStop>>,
    /// Memory an io_getevents filled, read at its exit stop, per task, in order.
    filled: HashMap<i32, Vec<Regions>>,
    /// Tasks inside an io_getevents, to be stopped at its exit: where its events go.
    awaiting: HashMap<i32, u64>,
    /// Calls of another ABI, counted or not.
    compat: super::i386::Seen,
    /// Calls stopped at by the filter.
    stopped: u64,
    /// The wait status of each task that ended (the tracer hears of every one).
    ended: HashMap<i32, i32>,
}

impl ExecStops {
    /// Attaches to the command's first task (waiting to exec); `None` where ptrace is
    /// refused (the vDSO then stays, and open's names are read after the call).
    fn attach(pid: i32, hide: bool) -> Option<ExecStops> {
        let options = libc::PTRACE_O_TRACEEXEC
            | libc::PTRACE_O_TRACESYSGOOD
            | libc::PTRACE_O_TRACEFORK
            | libc::PTRACE_O_TRACEVFORK
            | libc::PTRACE_O_TRACECLONE
            | libc::PTRACE_O_TRACESECCOMP;
        if super::ptrace::ptrace(libc::PTRACE_SEIZE, pid, 0, options as usize) != 0 {
            return None;
        }
        Some(ExecStops {
            tasks: [(pid, super::sys::Task::default())].into_iter().collect(),
            delivered: HashMap::new(),
            hide,
            filtered: false,
            checked: false,
            hidden: HashMap::new(),
            stops: HashMap::new(),
            filled: HashMap::new(),
            awaiting: HashMap::new(),
            compat: super::i386::Seen::default(),
            stopped: 0,
            ended: HashMap::new(),
        })
    }

    /// What a task stopped at by the filter is taking: its call, read in its own ABI, the
    /// name it opens (made absolute against its directory), the requests it submits.
    fn at_stop(&mut self, tid: i32) -> AtStop {
        let mut at = AtStop::default();
        let Some(info) = super::sys::syscall_info(tid).filter(|i| i.op == super::sys::INFO_SECCOMP)
        else {
            return at;
        };
        at.nr = info.data[0];
        let mut raw = [0u64; 6];
        raw.copy_from_slice(&info.data[1..7]);
        let native = super::filter::ARCH;
        let (call, args) = if info.arch != native {
            let counted = super::i386::entered(info.arch, native, at.nr, raw, &mut self.compat);
            at.compat = Some(counted);
            match counted {
                Some(c) => c,
                None => return at,
            }
        } else {
            match Call::of(at.nr) {
                Some(c) => (c, raw),
                None => return at,
            }
        };
        match call {
            Call::Openat | Call::Open | Call::Creat => {
                // Pushed even when unread, so the names stay in step with the opens.
                at.name = Some(
                    Self::name_of(tid, call, &args).unwrap_or_else(|| OsString::from(UNREAD_NAME)),
                );
            }
            Call::IoSubmit if at.compat.is_none() => {
                at.memory = super::tally::aio::submitted(tid, args[1], args[2]);
            }
            Call::IoGetevents if at.compat.is_none() => {
                self.awaiting.insert(tid, args[3]);
            }
            _ => {}
        }
        at
    }

    /// The name an open is given, made absolute against its directory.
    fn name_of(tid: i32, call: Call, args: &[u64; 6]) -> Option<OsString> {
        let (dirfd, addr) = match call {
            Call::Openat => (args[0] as i32, args[1]),
            Call::Open | Call::Creat => (libc::AT_FDCWD, args[0]),
            _ => return None,
        };
        let name = super::Proc.string(tid, addr)?;
        if name.as_bytes().starts_with(b"/") {
            return Some(own_name(tid, name));
        }
        // Relative to a directory that cannot be read: not read at all.
        let dir = if dirfd == libc::AT_FDCWD {
            super::Proc.cwd(tid)
        } else {
            super::Proc.path(tid, dirfd)
        }?;
        Some(own_name(
            tid,
            super::tally::absolute(name, dirfd, |_| Some(dir)),
        ))
    }

    /// The events an io_getevents stopped at its exit wrote at `events`.
    fn events_filled(tid: i32, events: u64) -> Regions {
        let Some(info) = super::sys::syscall_info(tid).filter(|i| i.op == super::sys::INFO_EXIT)
        else {
            return Vec::new();
        };
        let n = info.data[0] as i64;
        if n <= 0 {
            return Vec::new();
        }
        let len = (n as usize).min(4096) * super::tally::aio::EVENT_SIZE;
        super::tally::aio::peek(tid, events, len)
            .map(|b| vec![(events, b)])
            .unwrap_or_default()
    }

    /// Handles every stop waiting now, and leaves the first process's exit unreaped.
    fn serve(&mut self, leader: i32) {
        loop {
            // SAFETY: a zeroed siginfo_t the call fills.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: as above.
            let rc = unsafe {
                libc::waitid(
                    libc::P_ALL,
                    0,
                    &mut info,
                    libc::WEXITED | libc::WSTOPPED | libc::WNOHANG | libc::WNOWAIT | libc::__WALL,
                )
            };
            // SAFETY: si_pid is valid for any report; 0 when none was waiting.
            let who = unsafe { info.si_pid() };
            if rc != 0 || who == 0 {
                return;
            }
            let exit = matches!(
                info.si_code,
                libc::CLD_EXITED | libc::CLD_KILLED | libc::CLD_DUMPED
            );
            if who == leader && exit {
                return;
            }
            let mut status = 0;
            // SAFETY: status is a live local; `who` has a report waiting.
            let got = unsafe { libc::waitpid(who, &mut status, libc::__WALL | libc::WNOHANG) };
            if got != who {
                return;
            }
            if !libc::WIFSTOPPED(status) {
                self.tasks.remove(&who);
                self.ended.insert(who, status);
                // Ended inside an io_getevents (killed there): its exit, if recorded,
                // filled nothing the tracer could read.
                if self.awaiting.remove(&who).is_some() {
                    self.filled.entry(who).or_default().push(Vec::new());
                }
                continue;
            }
            let event = status >> 16;
            if event == libc::PTRACE_EVENT_SECCOMP {
                self.stopped += 1;
                let mut at = self.at_stop(who);
                at.time = monotonic_ns();
                self.stops.entry(who).or_default().push(at);
                if self.awaiting.contains_key(&who) {
                    // On to the call's exit, where its events are read.
                    super::ptrace::ptrace(libc::PTRACE_SYSCALL, who, 0, 0);
                    continue;
                }
            }
            if libc::WSTOPSIG(status) == (libc::SIGTRAP | 0x80) {
                if let Some(events) = self.awaiting.remove(&who) {
                    self.filled
                        .entry(who)
                        .or_default()
                        .push(Self::events_filled(who, events));
                }
                super::ptrace::ptrace(libc::PTRACE_CONT, who, 0, 0);
                continue;
            }
            if event == libc::PTRACE_EVENT_EXEC {
                // A thread other than the leader may exec: the kernel reports it under the
                // leader's id, which goes on, and the thread's own id is gone without an
                // exit.
                if let Some(former) = super::sys::event_message(who)
                    && former != who
                {
                    self.tasks.remove(&former);
                    self.awaiting.remove(&former);
                }
                if self.hide {
                    self.hidden.insert(who, super::vdso::hide(who));
                }
                if who == leader && !self.checked {
                    self.checked = true;
                    self.filtered = super::filter::installed(who);
                }
            }
            if matches!(
                event,
                libc::PTRACE_EVENT_FORK | libc::PTRACE_EVENT_VFORK | libc::PTRACE_EVENT_CLONE
            ) {
                let mut child: libc::c_ulong = 0;
                super::ptrace::ptrace(
                    libc::PTRACE_GETEVENTMSG,
                    who,
                    0,
                    (&mut child as *mut libc::c_ulong) as usize,
                );
                self.tasks.entry(child as i32).or_default();
            }
            if event == 0
                && libc::WSTOPSIG(status) != libc::SIGTRAP
                && let Some(pid) = super::sys::tgid(who)
            {
                self.delivered
                    .insert(pid, (libc::WSTOPSIG(status), Instant::now()));
            }
            let task = self.tasks.entry(who).or_default();
            task.stopped = matches!(
                super::ptrace::pass(who, status),
                super::ptrace::Passed::Stopped(true)
            );
        }
    }
}

/// SIGCHLD blocked on this thread and waited for, so that a stopped task is served as soon
/// as it stops; the former mask is put back when dropped.
struct Chld {
    old: libc::sigset_t,
}

impl Chld {
    fn block() -> Chld {
        // SAFETY: sigset_t values filled by sigemptyset/sigaddset and pthread_sigmask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            Chld { old }
        }
    }

    /// Until a SIGCHLD comes or `most` has passed.
    fn wait(&self, most: Duration) {
        let ts = libc::timespec {
            tv_sec: most.as_secs() as libc::time_t,
            tv_nsec: most.subsec_nanos() as libc::c_long,
        };
        // SAFETY: as in `block`; the timespec lives for the call.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            libc::sigtimedwait(&set, std::ptr::null_mut(), &ts);
        }
    }
}

impl Drop for Chld {
    fn drop(&mut self) {
        // SAFETY: the mask saved in `block`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_format_file_gives_the_id_and_each_fields_offset() {
        let text = "name: sys_enter\nID: 443\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n";
        let f = Format::parse(text).unwrap();
        assert_eq!(f.id, 443);
        assert_eq!(f.at("id").unwrap(), 8);
        assert_eq!(f.at("args").unwrap(), 16);
        assert_eq!(f.at("common_pid").unwrap(), 4);
        assert!(f.at("ret").is_err());
    }

    #[test]
    fn a_task_name_is_read_whether_held_in_the_record_or_by_a_data_loc_word() {
        // Before 2025: `char child_comm[16]` in the record; since: a `__data_loc` word.
        let old = "ID: 7\nformat:\n\tfield:char child_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n";
        let new = "ID: 7\nformat:\n\tfield:__data_loc char[] child_comm;\toffset:8;\tsize:4;\tsigned:0;\n";
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(b"dd\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
        assert_eq!(Format::parse(old).unwrap().text(&raw, "child_comm"), b"dd");
        let mut raw = vec![0u8; 8];
        raw.extend_from_slice(&((3u32 << 16) | 12).to_ne_bytes());
        raw.extend_from_slice(b"cat\0");
        assert_eq!(Format::parse(new).unwrap().text(&raw, "child_comm"), b"cat");
        assert!(Format::parse(new).unwrap().text(&raw, "nothing").is_empty());
    }

    #[test]
    fn the_filter_keeps_the_counted_calls_and_not_the_watched_ones() {
        let f = filter();
        assert!(f.contains(&format!("id == {}", libc::SYS_read)));
        assert!(f.contains(&format!("id == {}", libc::SYS_openat)));
        assert!(!f.contains(&format!("id == {} ", libc::SYS_prctl)));
        assert!(!f.contains(&format!("id == {} ", libc::SYS_getppid)));
    }

    /// An engine with no rings, fed records by hand.
    fn engine() -> Engine {
        let point = |id| Format {
            id,
            fields: HashMap::new(),
            inline: HashMap::new(),
        };
        Engine {
            points: Points {
                enter: point(1),
                exit: point(2),
                fork: point(3),
                exec: point(4),
                gone: point(5),
            },
            rings: Vec::new(),
            queues: Vec::new(),
            tracked: Tracked::default(),
            pending: HashMap::new(),
            stops: HashMap::new(),
            filled: HashMap::new(),
            awaiting: Default::default(),
            ended: HashMap::new(),
            gone: HashMap::new(),
            retiring: VecDeque::new(),
            libaio_in_kernel: true,
            submits: HashMap::new(),
            completions: HashMap::new(),
            counted: Counted::default(),
            base: Instant::now(),
            base_ns: 0,
            leader: 0,
        }
    }

    /// Hands on `raw` and returns what the resolver gives of `len` bytes at `addr` when
    /// the call's exit is handed on.
    fn memory_at_exit(
        e: &mut Engine,
        time: u64,
        raw: Raw,
        addr: u64,
        len: usize,
    ) -> Option<Vec<u8>> {
        let mut seen = None;
        e.hand_on(
            Record {
                pid: PARENT,
                tid: PARENT,
                time,
                raw,
            },
            &mut |event, _, r| {
                if let Event::Exit(_) = event {
                    seen = r.memory(PARENT, addr, len);
                }
            },
        );
        seen
    }

    fn events_record(ret: i64, at: u64, fill: u8) -> Raw {
        let regions = if ret > 0 {
            vec![(
                at,
                vec![fill; ret as usize * super::super::tally::aio::EVENT_SIZE],
            )]
        } else {
            Vec::new()
        };
        Raw::Memory(super::super::bpf::Record::Events { at, ret, regions })
    }

    #[test]
    fn an_io_getevents_is_given_the_events_read_in_the_kernel_even_when_they_come_after_its_exit() {
        let mut e = engine();
        let nr = libc::SYS_io_getevents as u64;
        let at = 0x7000;
        hand(
            &mut e,
            PARENT,
            PARENT,
            100,
            Raw::Enter {
                nr,
                args: [1, 1, 2, at, 0, 0],
            },
        );
        // The program's record, written just after the exit's, still in a ring's queue.
        e.queues = vec![VecDeque::from([Record {
            pid: PARENT,
            tid: PARENT,
            time: 1_100,
            raw: events_record(2, at, 5),
        }])];
        let got = memory_at_exit(&mut e, 1_000, Raw::Exit { nr, ret: 2 }, at, 64);
        assert_eq!(got, Some(vec![5; 64]));
        assert!(
            e.queues[0].is_empty(),
            "taken out of the queue, not handed on twice"
        );
        assert_eq!(e.counted.libaio_unread, 0);
        // The next call's record returned something else: not this call's.
        hand(
            &mut e,
            PARENT,
            PARENT,
            2_000,
            Raw::Enter {
                nr,
                args: [1, 1, 2, at, 0, 0],
            },
        );
        hand(&mut e, PARENT, PARENT, 2_900, events_record(1, at, 6));
        let got = memory_at_exit(&mut e, 3_000, Raw::Exit { nr, ret: 2 }, at, 64);
        assert_eq!(got, None);
        assert_eq!(e.counted.libaio_unread, 1);
    }

    #[test]
    fn an_io_submit_is_given_only_a_record_written_at_its_own_call() {
        let mut e = engine();
        let nr = libc::SYS_io_submit as u64;
        let (array, iocb) = (0x1000u64, 0x2000u64);
        let record = |fill: u8| {
            Raw::Memory(super::super::bpf::Record::Submit {
                array,
                asked: 1,
                regions: vec![
                    (iocb, vec![fill; super::super::tally::aio::IOCB_SIZE]),
                    (array, iocb.to_ne_bytes().to_vec()),
                ],
            })
        };
        // A record whose call left no records (lost): far older than the next call.
        hand(&mut e, PARENT, PARENT, 10, record(1));
        let t = 10 + 2 * BESIDE_NS;
        hand(
            &mut e,
            PARENT,
            PARENT,
            t,
            Raw::Enter {
                nr,
                args: [1, 1, array, 0, 0, 0],
            },
        );
        let got = memory_at_exit(&mut e, t + 50, Raw::Exit { nr, ret: 1 }, iocb, 64);
        assert_eq!(got, None, "the lost call's requests are not this one's");
        assert_eq!(e.counted.libaio_unread, 1);
        // Written a little before the enter's own record (another probe ran first).
        hand(&mut e, PARENT, PARENT, t + 90, record(2));
        hand(
            &mut e,
            PARENT,
            PARENT,
            t + 100,
            Raw::Enter {
                nr,
                args: [1, 1, array, 0, 0, 0],
            },
        );
        let got = memory_at_exit(&mut e, t + 200, Raw::Exit { nr, ret: 1 }, iocb, 64);
        assert_eq!(got, Some(vec![2; 64]));
        assert_eq!(e.counted.libaio_unread, 1);
    }

    /// Entries held per task or process, all tables together.
    fn held(e: &Engine) -> usize {
        e.pending.len()
            + e.stops.len()
            + e.filled.len()
            + e.ended.len()
            + e.gone.len()
            + e.retiring.len()
            + e.tracked.tgid.len()
            + e.tracked.members.len()
            + e.tracked.opened.len()
            + e.tracked.comm.len()
            + e.tracked.program.len()
            + e.tracked.hidden.len()
    }

    fn hand(e: &mut Engine, pid: i32, tid: i32, time: u64, raw: Raw) {
        e.hand_on(
            Record {
                pid,
                tid,
                time,
                raw,
            },
            &mut |_, _, _| {},
        );
    }

    // Ids above any pid_max: /proc has nothing of them.
    const PARENT: i32 = 50_000_000;

    /// `task` of `process`, forked by PARENT at `t`: opens a file (left open), reads it.
    fn short_task(e: &mut Engine, process: i32, task: i32, t: u64) {
        let openat = libc::SYS_openat as u64;
        let read = libc::SYS_read as u64;
        hand(
            e,
            PARENT,
            PARENT,
            t,
            Raw::Fork {
                parent: PARENT,
                child: task,
                comm: b"child".to_vec(),
            },
        );
        let at = [libc::AT_FDCWD as u64, 0, 0, 0, 0, 0];
        hand(
            e,
            process,
            task,
            t + 1,
            Raw::Enter {
                nr: openat,
                args: at,
            },
        );
        hand(e, process, task, t + 2, Raw::Exit { nr: openat, ret: 3 });
        let args = [3, 0, 100, 0, 0, 0];
        hand(e, process, task, t + 3, Raw::Enter { nr: read, args });
        hand(e, process, task, t + 4, Raw::Exit { nr: read, ret: 100 });
    }

    #[test]
    fn the_state_of_thousands_of_short_tasks_is_freed_once_their_last_records_are_in() {
        let mut e = engine();
        hand(
            &mut e,
            PARENT,
            PARENT,
            1,
            Raw::Enter {
                nr: 0,
                args: [0; 6],
            },
        );
        let before = held(&e);
        let mut t = 10;
        for i in 0..3_000 {
            let child = PARENT + 1 + i;
            short_task(&mut e, child, child, t);
            hand(&mut e, child, child, t + 5, Raw::Gone { tid: child });
            t += 10;
        }
        assert!(
            held(&e) > 3_000 * 3,
            "each task's state is held until retired"
        );
        // Within the slack of the last exit: its task is kept, for records still to come.
        e.retire(t - 6);
        assert!(e.tracked.tgid.contains_key(&(PARENT + 3_000)));
        assert!(e.tracked.comm.contains_key(&(PARENT + 3_000)));
        e.retire(t);
        assert_eq!(held(&e), before, "{:?}", e.tracked.tgid.len());
    }

    #[test]
    fn a_process_keeps_its_descriptors_until_its_last_thread_is_retired() {
        let mut e = engine();
        let (process, thread) = (PARENT + 1, PARENT + 2);
        short_task(&mut e, process, process, 10);
        hand(
            &mut e,
            process,
            process,
            20,
            Raw::Fork {
                parent: process,
                child: thread,
                comm: b"thread".to_vec(),
            },
        );
        hand(
            &mut e,
            process,
            thread,
            21,
            Raw::Enter {
                nr: 0,
                args: [0; 6],
            },
        );
        hand(&mut e, process, process, 30, Raw::Gone { tid: process });
        e.retire(30);
        assert!(
            e.tracked.opened.contains_key(&(process, 3)),
            "a thread is left"
        );
        hand(&mut e, process, thread, 40, Raw::Gone { tid: thread });
        e.retire(40);
        assert!(
            e.tracked.opened.is_empty(),
            "{:?} {:?}",
            e.tracked.opened.keys().collect::<Vec<_>>(),
            e.tracked.members
        );
        assert!(!e.tracked.members.contains_key(&process));
    }

    #[test]
    fn an_id_given_again_before_its_former_task_is_retired_keeps_the_new_tasks_state() {
        let mut e = engine();
        let task = PARENT + 1;
        short_task(&mut e, task, task, 10);
        hand(&mut e, task, task, 20, Raw::Gone { tid: task });
        // The id reused by a fork before the merge passed the end.
        short_task(&mut e, task, task, 30);
        e.retire(100);
        assert_eq!(e.tracked.tgid.get(&task), Some(&task));
        assert!(e.tracked.opened.contains_key(&(task, 3)));
    }

    #[test]
    fn an_exec_from_a_thread_retires_the_threads_former_id_and_keeps_the_leaders() {
        let mut e = engine();
        let (leader, thread) = (PARENT + 1, PARENT + 2);
        short_task(&mut e, leader, leader, 10);
        hand(
            &mut e,
            leader,
            leader,
            20,
            Raw::Fork {
                parent: leader,
                child: thread,
                comm: b"thread".to_vec(),
            },
        );
        hand(
            &mut e,
            leader,
            thread,
            21,
            Raw::Enter {
                nr: 0,
                args: [0; 6],
            },
        );
        // de_thread: the leader ends, then the thread comes back from exec as the leader.
        hand(&mut e, leader, leader, 30, Raw::Gone { tid: leader });
        hand(
            &mut e,
            leader,
            leader,
            31,
            Raw::Exec {
                tid: leader,
                old: thread,
                filename: b"/bin/new".to_vec(),
            },
        );
        e.retire(100);
        assert!(
            !e.tracked.tgid.contains_key(&thread),
            "the former id is gone"
        );
        assert!(!e.tracked.comm.contains_key(&thread));
        assert_eq!(e.tracked.tgid.get(&leader), Some(&leader));
        assert_eq!(e.tracked.program.get(&leader), Some(&"/bin/new".into()));
        assert_eq!(e.tracked.members.get(&leader), Some(&1));
    }

    #[test]
    fn a_name_is_its_last_component() {
        assert_eq!(last_name(&"/a/b/c".into()), b"c");
        assert_eq!(last_name(&"c".into()), b"c");
    }
}
