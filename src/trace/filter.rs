//! Stopping only where it counts: a seccomp-bpf program, installed in the traced child just
//! before it executes the command, that asks the kernel to stop the task for the tracer
//! (SECCOMP_RET_TRACE) only at the system calls trace accounts for — the list is
//! [`Call::of`](super::call::Call::of), the one table, which also holds `prctl` and `seccomp`,
//! watched for the program's own seccomp (strict mode is refused with EINVAL under this
//! filter: `trace::changed` says so) — and lets every other call run at full
//! speed (SECCOMP_RET_ALLOW), as `strace --seccomp-bpf` does. The filter is inherited
//! across fork, clone and exec, so the command's whole tree is filtered — and it cannot be
//! removed: a process left running when the trace ends would fail the selected calls with
//! ENOSYS once no tracer is attached, so the tracer stays behind as its keeper
//! ([`super::keeper`]). The filter is the default; `trace --every-call`, a machine without
//! seccomp, or a test hook ([`crate::hooks::trace_every_call`]) make the trace stop at
//! every call instead.

use super::call::Call;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the filter may be used (`--every-call` says no; set once, before the trace).
static ASKED: AtomicBool = AtomicBool::new(true);

/// Allows the filter (the default) or not (`trace --every-call`).
pub fn ask(filter: bool) {
    ASKED.store(filter, Ordering::Relaxed);
}

/// Why this trace cannot use the filter, if it cannot, leaving the keeper aside: asked not
/// to, the test hook, no filter for this architecture, no seccomp.
pub fn refusal() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if !ASKED.load(Ordering::Relaxed) {
        Some("--every-call".to_string())
    } else if let Some(why) = crate::hooks::trace_every_call() {
        Some(why)
    } else if ARCH == 0 {
        Some("no seccomp filter for this architecture".to_string())
    } else if !status.lines().any(|l| l.starts_with("Seccomp:")) {
        Some("the kernel has no seccomp".to_string())
    } else {
        None
    }
}

/// Highest system-call number looked at when building the list.
const MAX_NR: u64 = 1024;

/// The audit architecture of this target's native system calls (calls of another, such as
/// i386's `int 0x80`, always stop: their numbers are not those of the list).
#[cfg(target_arch = "x86_64")]
pub const ARCH: u32 = 0xc000_003e;
#[cfg(target_arch = "aarch64")]
pub const ARCH: u32 = 0xc000_00b7;
#[cfg(target_arch = "riscv64")]
pub const ARCH: u32 = 0xc000_00f3;
#[cfg(not(any(
    target_arch = "x86_64",
    target_arch = "aarch64",
    target_arch = "riscv64"
)))]
pub const ARCH: u32 = 0;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`: the call number, then the architecture.
const NR_AT: u32 = 0;
const ARCH_AT: u32 = 4;

/// Whether ioscope set no_new_privs on the command itself (needed to install a filter
/// without CAP_SYS_ADMIN): a set-user-ID program it runs is then ignored because of us.
static NO_NEW_PRIVS_OURS: AtomicBool = AtomicBool::new(false);

/// Whether no_new_privs on a traced task may be ioscope's doing rather than the caller's.
pub fn no_new_privs_ours() -> bool {
    NO_NEW_PRIVS_OURS.load(Ordering::Relaxed)
}

/// The system-call numbers trace stops at: every number [`Call::of`] knows.
pub fn traced_numbers() -> Vec<u32> {
    (0..MAX_NR)
        .filter(|&nr| Call::of(nr).is_some())
        .map(|nr| nr as u32)
        .collect()
}

/// The calls the kernel engine stops at, to read what the program could change before the
/// call's record is read: the name an open is given (open, openat, openat2, creat), and
/// unless eBPF programs read them in the kernel (`libaio_in_kernel`), the requests
/// io_submit passes and the events io_getevents fills (libaio).
pub fn stop_numbers(libaio_in_kernel: bool) -> Vec<u32> {
    (0..MAX_NR)
        .filter(|&nr| match Call::of(nr) {
            Some(Call::Open | Call::Openat | Call::Creat) => true,
            Some(Call::IoSubmit | Call::IoGetevents) => !libaio_in_kernel,
            _ => false,
        })
        .map(|nr| nr as u32)
        .collect()
}

/// The BPF program: not this architecture → trace (an i386 call's number means another
/// call: the tracer reads it in its own ABI, counts it or names it as not counted); an
/// x32 call (its number with [`super::i386::X32_BIT`]) → trace (counted as not decoded);
/// a traced number → trace; else allow.
pub fn program(numbers: &[u32]) -> Vec<libc::sock_filter> {
    let n = numbers.len();
    assert!(n < 250, "a BPF jump reaches at most 255 instructions");
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let mut p = vec![
        op(BPF_LD_W_ABS, 0, 0, ARCH_AT),
        // Not ours: jump past the load, the x32 test, the list and `allow`, to `trace`.
        op(BPF_JEQ_K, 0, (n + 3) as u8, ARCH),
        op(BPF_LD_W_ABS, 0, 0, NR_AT),
        // x32: past the list and `allow`, to `trace`.
        op(BPF_JSET_K, (n + 1) as u8, 0, super::i386::X32_BIT as u32),
    ];
    for (i, &nr) in numbers.iter().enumerate() {
        // A match jumps over the rest of the list and `allow`, to `trace`.
        p.push(op(BPF_JEQ_K, (n - i) as u8, 0, nr));
    }
    p.push(op(BPF_RET_K, 0, 0, libc::SECCOMP_RET_ALLOW));
    p.push(op(BPF_RET_K, 0, 0, libc::SECCOMP_RET_TRACE));
    p
}

/// What the child is to do before exec, decided in the parent before fork.
pub struct Plan {
    /// The filter to install, or why there is none.
    pub program: Result<Vec<libc::sock_filter>, String>,
    /// Whether the child must set no_new_privs first (no CAP_SYS_ADMIN).
    pub set_no_new_privs: bool,
}

impl Plan {
    /// Decides from the environment and this process's status.
    pub fn decide() -> Self {
        Self::decide_for(&traced_numbers())
    }

    /// As [`Plan::decide`], for a filter that stops at `numbers` only.
    pub fn decide_for(numbers: &[u32]) -> Self {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let program = match refusal() {
            Some(why) => Err(why),
            None if !super::keeper::available() => Err(
                "no keeper process: a filter would outlive the trace in what the command leaves running".to_string(),
            ),
            None => Ok(program(numbers)),
        };
        let caps = status
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .unwrap_or(0);
        const CAP_SYS_ADMIN: u32 = 21;
        let set_no_new_privs = program.is_ok()
            && caps & (1 << CAP_SYS_ADMIN) == 0
            && super::field(&status, "NoNewPrivs:") != Some(1);
        if set_no_new_privs {
            NO_NEW_PRIVS_OURS.store(true, Ordering::Relaxed);
        }
        Self {
            program,
            set_no_new_privs,
        }
    }

    /// In the child, after the tracer attached and before exec: installs the filter.
    /// Async-signal-safe (two prctl calls); a refusal leaves the child unfiltered, which
    /// the tracer sees at the exec stop ([`installed`]).
    pub fn install(&self) {
        let Ok(program) = &self.program else {
            return;
        };
        let prog = libc::sock_fprog {
            len: program.len() as u16,
            filter: program.as_ptr() as *mut libc::sock_filter,
        };
        // SAFETY: prctl with integer arguments, and a pointer to a sock_fprog whose filter
        // array lives (in `self`) for the call.
        unsafe {
            if self.set_no_new_privs {
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
            }
            libc::prctl(
                libc::PR_SET_SECCOMP,
                libc::SECCOMP_MODE_FILTER,
                &prog as *const libc::sock_fprog,
            );
        }
    }
}

/// Whether task `pid` runs under one more seccomp filter than this process: ours, installed.
pub fn installed(pid: i32) -> bool {
    let theirs = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let ours = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    match (
        super::field(&theirs, "Seccomp_filters:"),
        super::field(&ours, "Seccomp_filters:"),
    ) {
        (Some(t), Some(o)) => t > o,
        // Before Linux 5.9 there is no count: a filter where we have none.
        _ => {
            super::field(&theirs, "Seccomp:") == Some(2)
                && super::field(&ours, "Seccomp:") == Some(0)
        }
    }
}

/// How a trace stopped the command's tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stops {
    /// Only at the traced calls: the seccomp filter was in place.
    Filtered,
    /// At every system call, and why.
    EveryCall(String),
    /// Never: the kernel engine (`trace::kernel`) records the calls without stopping.
    Never,
    /// Only at each exec (to hide the vDSO), fork and signal: the kernel engine with the
    /// vDSO hidden.
    AtExec,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_comes_from_the_call_table_and_holds_the_counted_calls_only() {
        let list = traced_numbers();
        assert!(list.contains(&(libc::SYS_read as u32)));
        assert!(list.contains(&(libc::SYS_openat as u32)));
        assert!(list.contains(&(libc::SYS_sync as u32)));
        assert!(list.contains(&(libc::SYS_io_submit as u32)));
        assert!(!list.contains(&(libc::SYS_getpid as u32)));
        assert!(!list.contains(&(libc::SYS_execve as u32)));
        assert!(!list.contains(&(libc::SYS_clone as u32)));
    }

    /// Runs the program as the kernel would on (arch, nr): the value it returns.
    fn run(p: &[libc::sock_filter], arch: u32, nr: u32) -> u32 {
        let mut acc = 0;
        let mut pc = 0;
        loop {
            let i = p[pc];
            match i.code {
                BPF_LD_W_ABS => acc = if i.k == ARCH_AT { arch } else { nr },
                BPF_JEQ_K => {
                    pc += usize::from(if acc == i.k { i.jt } else { i.jf });
                }
                BPF_JSET_K => {
                    pc += usize::from(if acc & i.k != 0 { i.jt } else { i.jf });
                }
                BPF_RET_K => return i.k,
                c => panic!("unexpected instruction {c:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    fn the_program_traces_listed_numbers_and_other_architectures_and_allows_the_rest() {
        let list = traced_numbers();
        let p = program(&list);
        for &nr in &list {
            assert_eq!(run(&p, ARCH, nr), libc::SECCOMP_RET_TRACE, "{nr}");
            assert_eq!(run(&p, ARCH ^ 1, nr), libc::SECCOMP_RET_TRACE, "{nr}");
        }
        assert_eq!(
            run(&p, ARCH, libc::SYS_getpid as u32),
            libc::SECCOMP_RET_ALLOW
        );
        assert_eq!(run(&p, ARCH, 100_000), libc::SECCOMP_RET_ALLOW);
        // x32 calls (read, getpid) stop: they are counted as not decoded.
        assert_eq!(run(&p, ARCH, 0x4000_0000), libc::SECCOMP_RET_TRACE);
        assert_eq!(run(&p, ARCH, 0x4000_0027), libc::SECCOMP_RET_TRACE);
        // Another architecture's calls (i386's int 0x80) all stop, counted or not.
        assert_eq!(
            run(&p, 0x4000_0003, libc::SYS_getpid as u32),
            libc::SECCOMP_RET_TRACE
        );
    }
}
