//! `trace`: run a command under ptrace and account for every file-I/O system call it makes
//! (see `sys` for the loop, `call` for the table of the calls it accounts for, `tally` for
//! the bookkeeping, `tee` for the copy of a known tool's output from which
//! `measure::external` reads what it says it did; `vdso` and `clock` for the program's clock
//! reads and the regions it timed).

pub mod bpf;
pub mod call;
pub mod changed;
pub mod claims;
pub mod clock;
pub mod durable;
pub mod errno;
pub mod filter;
pub mod i386;
pub mod keeper;
pub mod kernel;
pub mod order;
pub mod phases;
pub mod ptrace;
pub mod role;
pub mod sizes;
pub mod sys;
pub mod tally;
pub mod tee;
pub mod tools;
pub mod vdso;

use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::Path;
use std::time::Instant;
use tally::Resolver;

/// What records the traced command's calls (`--engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    /// The kernel's tracepoints (`trace::kernel`): the program is never stopped. Needs
    /// root or CAP_PERFMON.
    Kernel,
    /// ptrace (`trace::sys`): the program stops at each counted call.
    Ptrace,
}

impl Engine {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Kernel => "kernel",
            Self::Ptrace => "ptrace",
        }
    }
}

/// The engine a trace used and why that one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chosen {
    /// The engine.
    pub engine: Engine,
    /// Why: asked for, or what ruled the other out.
    pub why: String,
}

/// The variable that sets the engine `trace` prefers when `--engine` is not given (as
/// `--engine` does, but for every trace of a session or a script, or a test suite run
/// once under each engine).
pub const ENGINE_VARIABLE: &str = "IOSCOPE_TRACE_ENGINE";

/// The engine to trace with: the one asked for with `--engine` (an error where it cannot
/// run, or takes a flag only ptrace has); else the one `preferred` names (the value of
/// [`ENGINE_VARIABLE`], if set); else the kernel's where it runs. A flag only ptrace has
/// (`ptrace_only`) and a kernel engine that cannot run here choose ptrace, saying why.
pub fn choose(
    asked: Option<Engine>,
    preferred: Option<&std::ffi::OsStr>,
    ptrace_only: Option<&str>,
) -> anyhow::Result<Chosen> {
    let ptrace = |why: String| Chosen {
        engine: Engine::Ptrace,
        why,
    };
    match asked {
        Some(Engine::Ptrace) => return Ok(ptrace("asked for (--engine ptrace)".into())),
        Some(Engine::Kernel) => {
            if let Some(flag) = ptrace_only {
                return Err(crate::error::input(format!(
                    "trace: --engine kernel cannot take {flag}: it is ptrace's"
                )));
            }
            kernel::available().map_err(|why| {
                crate::error::input(format!("trace: --engine kernel: cannot run here: {why}"))
            })?;
            return Ok(Chosen {
                engine: Engine::Kernel,
                why: "asked for (--engine kernel)".into(),
            });
        }
        None => {}
    }
    let preferred = match preferred.map(|v| v.to_str()) {
        None => None,
        Some(Some("kernel")) => Some(Engine::Kernel),
        Some(Some("ptrace")) => Some(Engine::Ptrace),
        Some(other) => {
            let shown = other.map_or_else(
                || "a value that is not UTF-8".to_string(),
                |v| format!("`{}`", crate::text::printable(v)),
            );
            return Err(crate::error::input(format!(
                "trace: {ENGINE_VARIABLE} is {shown}: it takes kernel or ptrace"
            )));
        }
    };
    if let Some(flag) = ptrace_only {
        return Ok(ptrace(format!("{flag} is ptrace's")));
    }
    Ok(match (preferred, kernel::available()) {
        (Some(Engine::Ptrace), _) => ptrace(format!("asked for ({ENGINE_VARIABLE}=ptrace)")),
        (Some(Engine::Kernel), Ok(())) => Chosen {
            engine: Engine::Kernel,
            why: format!("asked for ({ENGINE_VARIABLE}=kernel)"),
        },
        (Some(Engine::Kernel), Err(why)) => ptrace(format!(
            "{ENGINE_VARIABLE}=kernel, but the kernel engine cannot run here: {why}"
        )),
        (None, Ok(())) => Chosen {
            engine: Engine::Kernel,
            why: "the kernel's tracepoints run here (root or CAP_PERFMON): the program runs on at its calls, stopped only where the stops line says".into(),
        },
        (None, Err(why)) => ptrace(format!(
            "the default where the kernel engine cannot run: {why}"
        )),
    })
}

/// Runs `command` under `engine`, each event handed to `sink` with when it happened and
/// the resolver to ask about it; returns how it ended and, under the kernel engine, the
/// records it lost.
pub fn run(
    engine: Engine,
    hide_vdso: bool,
    command: &[OsString],
    on_signal: sys::OnSignal,
    prepare: &dyn Fn(),
    started: &mut dyn FnMut(i32),
    sink: &mut dyn FnMut(sys::Event, Instant, &dyn Resolver),
) -> anyhow::Result<(sys::Finish, Option<kernel::Counted>)> {
    match engine {
        Engine::Ptrace => {
            let finish = sys::trace(
                command,
                on_signal,
                prepare,
                started,
                &read_before_going_on,
                &mut |event, at, regions| match regions {
                    Some(regions) => {
                        let tid = match &event {
                            sys::Event::Exit(s) => s.tid,
                            _ => 0,
                        };
                        sink(event, at, &Captured { tid, regions })
                    }
                    None => sink(event, at, &Proc),
                },
            )?;
            Ok((finish, None))
        }
        Engine::Kernel => {
            let (finish, counted) =
                kernel::trace(command, hide_vdso, on_signal, prepare, started, sink)?;
            Ok((finish, Some(counted)))
        }
    }
}

/// Task `tid`'s name as the kernel keeps it (/proc/TID/comm), without losing bytes that
/// are not UTF-8 (see [`crate::text::lossless`]); empty where it cannot be read. Not yet
/// printable: see [`crate::text::printable`].
pub fn comm(tid: i32) -> Option<String> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::fs::read(format!("/proc/{tid}/comm")).ok()?;
    let name = name.strip_suffix(b"\n").unwrap_or(&name);
    Some(crate::text::lossless(std::ffi::OsStr::from_bytes(name)))
}

/// What the accounting of call `s` needs read of its task while it is stopped at the
/// call's exit, where the rest of it can wait until the task goes on (a stop lasts as
/// long as the tracer takes over it): nothing for the calls that move data on a
/// descriptor resolved at their entry and the clock reads, the requests of an io_submit
/// and the events of an io_getevents. `None`: the accounting reads more of the task (a
/// new descriptor's file, a failed open's path), and is done at the stop.
fn read_before_going_on(s: &sys::Syscall) -> Option<sys::Regions> {
    use call::Call::*;
    use tally::aio;
    match s.call {
        Read | Write | Pread | Pwrite | Readv | Writev | Preadv | Pwritev | Lseek | Fsync
        | Fdatasync | ClockGettime | Gettimeofday => Some(Vec::new()),
        IoSubmit if !s.failed => Some(aio::submitted(s.tid, s.ret.max(0) as u64, s.args[2])),
        IoGetevents if !s.failed => {
            let (at, len) = (s.args[3], s.ret.max(0) as usize * aio::EVENT_SIZE);
            Some(
                aio::peek(s.tid, at, len)
                    .map(|b| vec![(at, b)])
                    .unwrap_or_default(),
            )
        }
        IoSubmit | IoGetevents => Some(Vec::new()),
        _ => None,
    }
}

/// The resolver of an exit accounted after its task went on: its memory as read at the
/// stop (nothing else of it is read: what was not is unread), the rest from /proc.
struct Captured {
    tid: i32,
    regions: sys::Regions,
}

impl Resolver for Captured {
    fn path(&self, tid: i32, fd: i32) -> Option<std::ffi::OsString> {
        Proc.path(tid, fd)
    }
    fn position(&self, tid: i32, fd: i32) -> Option<u64> {
        Proc.position(tid, fd)
    }
    fn tgid(&self, tid: i32) -> Option<i32> {
        Proc.tgid(tid)
    }
    fn memory(&self, tid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
        (tid == self.tid)
            .then(|| tally::aio::within(&self.regions, addr, len))
            .flatten()
    }
    fn cwd(&self, tid: i32) -> Option<std::ffi::OsString> {
        Proc.cwd(tid)
    }
    fn kind(&self, tid: i32, fd: i32) -> Option<tally::FileKind> {
        Proc.kind(tid, fd)
    }
}

/// The real resolver: /proc of the traced tasks.
pub struct Proc;

impl Resolver for Proc {
    fn path(&self, tid: i32, fd: i32) -> Option<std::ffi::OsString> {
        let link = std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()?;
        Some(link.into_os_string())
    }
    fn position(&self, tid: i32, fd: i32) -> Option<u64> {
        let text = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()?;
        field(&text, "pos:")
    }
    fn tgid(&self, tid: i32) -> Option<i32> {
        let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        field(&text, "Tgid:").and_then(|v| i32::try_from(v).ok())
    }
    fn memory(&self, tid: i32, addr: u64, len: usize) -> Option<Vec<u8>> {
        tally::aio::peek(tid, addr, len)
    }
    fn string(&self, tid: i32, addr: u64) -> Option<std::ffi::OsString> {
        use std::os::unix::ffi::OsStringExt;
        tally::aio::peek_string(tid, addr).map(std::ffi::OsString::from_vec)
    }
    fn kind(&self, tid: i32, fd: i32) -> Option<tally::FileKind> {
        let meta = std::fs::metadata(format!("/proc/{tid}/fd/{fd}")).ok()?;
        Some(tally::FileKind::of(meta.file_type()))
    }
    fn cwd(&self, tid: i32) -> Option<std::ffi::OsString> {
        Some(
            std::fs::read_link(format!("/proc/{tid}/cwd"))
                .ok()?
                .into_os_string(),
        )
    }
}

/// The number after `name` on its line of a /proc text file.
pub fn field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.trim().parse().ok())
}

/// The base name of a command, for recognising known tools.
pub fn tool_name(program: &std::ffi::OsStr) -> String {
    Path::new(program)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// What the kernel ignored when task `pid` executed its program under ptrace, if anything:
/// a set-user-ID or set-group-ID bit, or file capabilities, that would have given it other
/// credentials than the ones it now runs with. Read at the exec stop, from /proc/<pid>/exe
/// and /proc/<pid>/status. The result names the program and says what that means.
///
/// Nothing is said where the kernel ignores them untraced too: the task has no_new_privs
/// set (`setpriv --no-new-privs`, a container's default), or the program's file system is
/// mounted `nosuid` (which also voids file capabilities).
pub fn privilege_ignored(pid: i32) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let link = format!("/proc/{pid}/exe");
    let exe = std::fs::read_link(&link).ok()?;
    // The file itself, through the link (its path may be gone or shadowed meanwhile).
    let meta = std::fs::metadata(&link).ok()?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    // no_new_privs that ioscope set for its seccomp filter is not the caller's: the
    // program would have had its privileges untraced.
    let no_new_privs = field(&status, "NoNewPrivs:") == Some(1) && !filter::no_new_privs_ours();
    if no_new_privs || mounted_nosuid(&link) {
        return None;
    }
    // "Uid:" real, effective, saved, file system.
    let effective = |name: &str| -> Option<u32> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    let mode = meta.mode();
    let mut ignored = Vec::new();
    if mode & libc::S_ISUID != 0 && effective("Uid:")? != meta.uid() {
        ignored.push(format!("set-user-ID uid {}", meta.uid()));
    }
    // Set-group-ID without group execute marks mandatory locking, not a privilege.
    if mode & libc::S_ISGID != 0 && mode & libc::S_IXGRP != 0 && effective("Gid:")? != meta.gid() {
        ignored.push(format!("set-group-ID gid {}", meta.gid()));
    }
    if let Some(wanted) = file_capabilities(Path::new(&link)) {
        let held = status
            .lines()
            .find_map(|l| l.strip_prefix("CapPrm:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        if wanted & !held != 0 {
            ignored.push(format!("file capabilities {wanted:#x}"));
        }
    }
    if ignored.is_empty() {
        return None;
    }
    Some(format!(
        "privileges: {} would run with its file's privileges ({}), but the kernel ignores them under ptrace: it ran with the caller's and may behave differently (fail, or take another path) than untraced; trace it as root to see it as it runs",
        crate::text::lossless(exe.as_os_str()),
        ignored.join(" and ")
    ))
}

/// Whether the file at `path` is on a file system mounted `nosuid`.
fn mounted_nosuid(path: &str) -> bool {
    let Ok(name) = std::ffi::CString::new(path) else {
        return false;
    };
    // SAFETY: a NUL-terminated path and a zeroed struct statvfs that the call fills.
    let mut fs: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; both live for the call.
    let ok = unsafe { libc::statvfs(name.as_ptr(), &mut fs) } == 0;
    ok && fs.f_flag & libc::ST_NOSUID != 0
}

/// The permitted set a program file's `security.capability` attribute grants, if it has one.
fn file_capabilities(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let name = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut data = [0u8; 24];
    // SAFETY: both strings are NUL-terminated and live; the buffer's length is passed.
    let n = unsafe {
        libc::getxattr(
            name.as_ptr(),
            c"security.capability".as_ptr(),
            data.as_mut_ptr().cast(),
            data.len(),
        )
    };
    // struct vfs_cap_data: magic_etc, then {permitted, inheritable} for bits 0-31 and
    // (revisions 2 and 3) 32-63, little-endian.
    if n < 12 {
        return None;
    }
    let word = |at: usize| {
        u64::from(u32::from_le_bytes([
            data[at],
            data[at + 1],
            data[at + 2],
            data[at + 3],
        ]))
    };
    let high = if n >= 20 { word(12) } else { 0 };
    Some(word(4) | high << 32)
}
