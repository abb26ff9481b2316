//! The table of the file-I/O system calls the tracer accounts for: [`Call::of`] maps a
//! call number to a call (libc's constants, per target), the one list the loop
//! ([`super::sys`]), the seccomp filter ([`super::filter`]) and the i386 calls
//! ([`super::i386`]) share.

/// The file-I/O system calls the tracer accounts for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Call {
    /// The `read` family.
    Read,
    /// The `write` family.
    Write,
    /// The `pread` family.
    Pread,
    /// The `pwrite` family.
    Pwrite,
    /// The `readv` family.
    Readv,
    /// The `writev` family.
    Writev,
    /// The `preadv` family.
    Preadv,
    /// The `pwritev` family.
    Pwritev,
    /// The `lseek` family.
    Lseek,
    /// The `fsync` family.
    Fsync,
    /// The `fdatasync` family.
    Fdatasync,
    /// The `syncfilerange` family.
    SyncFileRange,
    /// The `msync` family.
    Msync,
    /// The `mmap` family.
    Mmap,
    /// The `munmap` family.
    Munmap,
    /// The `open` family.
    Open,
    /// The `openat` family.
    Openat,
    /// The `close` family.
    Close,
    /// The `ftruncate` family.
    Ftruncate,
    /// The `fallocate` family.
    Fallocate,
    /// The `iouringenter` family.
    IoUringEnter,
    /// The `copyfilerange` family.
    CopyFileRange,
    /// The `sendfile` family.
    Sendfile,
    /// The `splice` family.
    Splice,
    /// The `dup` family.
    Dup,
    /// The `dup2` family.
    Dup2,
    /// The `dup3` family.
    Dup3,
    /// The `fcntl` family.
    Fcntl,
    /// `clock_gettime`: a clock read (seen when the vDSO is hidden, see `trace::vdso`).
    ClockGettime,
    /// `gettimeofday`: a clock read.
    Gettimeofday,
    /// `time`: a clock read.
    Time,
    /// `creat` (an open that creates or truncates).
    Creat,
    /// `sync`: every file system, no descriptor.
    Sync,
    /// `syncfs`: the file system of a descriptor.
    Syncfs,
    /// libaio's `io_submit` (its requests are read from memory: see `aio`).
    IoSubmit,
    /// libaio's `io_getevents` and `io_pgetevents` (completions).
    IoGetevents,
    /// `close_range`: closes (or marks close-on-exec) every descriptor in a range.
    CloseRange,
    /// `prctl`: watched, not counted, for `PR_SET_SECCOMP` (a program's own seccomp).
    Prctl,
    /// `seccomp`: watched, not counted (a program installing its own seccomp).
    Seccomp,
}

/// `io_pgetevents` (libc has no constant for it).
#[cfg(target_arch = "x86_64")]
const IO_PGETEVENTS: i64 = 333;
#[cfg(not(target_arch = "x86_64"))]
const IO_PGETEVENTS: i64 = 292;

impl Call {
    /// The call with system-call number `nr` on this architecture, if it is one we follow.
    // libc's SYS_* names are lower case; matching on them is the point.
    #[allow(non_upper_case_globals)]
    pub fn of(nr: u64) -> Option<Self> {
        let nr = i64::try_from(nr).ok()?;
        use libc::*;
        Some(match nr {
            SYS_read => Self::Read,
            SYS_write => Self::Write,
            SYS_pread64 => Self::Pread,
            SYS_pwrite64 => Self::Pwrite,
            SYS_readv => Self::Readv,
            SYS_writev => Self::Writev,
            SYS_preadv | SYS_preadv2 => Self::Preadv,
            SYS_pwritev | SYS_pwritev2 => Self::Pwritev,
            SYS_lseek => Self::Lseek,
            SYS_fsync => Self::Fsync,
            SYS_fdatasync => Self::Fdatasync,
            SYS_sync_file_range => Self::SyncFileRange,
            SYS_msync => Self::Msync,
            SYS_mmap => Self::Mmap,
            SYS_munmap => Self::Munmap,
            #[cfg(target_arch = "x86_64")]
            SYS_open => Self::Open,
            #[cfg(target_arch = "x86_64")]
            SYS_creat => Self::Creat,
            SYS_sync => Self::Sync,
            SYS_syncfs => Self::Syncfs,
            SYS_io_submit => Self::IoSubmit,
            SYS_io_getevents | IO_PGETEVENTS => Self::IoGetevents,
            SYS_openat | SYS_openat2 => Self::Openat,
            SYS_close => Self::Close,
            SYS_ftruncate => Self::Ftruncate,
            SYS_fallocate => Self::Fallocate,
            SYS_io_uring_enter => Self::IoUringEnter,
            SYS_copy_file_range => Self::CopyFileRange,
            SYS_sendfile => Self::Sendfile,
            SYS_splice => Self::Splice,
            SYS_dup => Self::Dup,
            #[cfg(target_arch = "x86_64")]
            SYS_dup2 => Self::Dup2,
            SYS_dup3 => Self::Dup3,
            SYS_fcntl => Self::Fcntl,
            SYS_close_range => Self::CloseRange,
            SYS_prctl => Self::Prctl,
            SYS_seccomp => Self::Seccomp,
            SYS_clock_gettime => Self::ClockGettime,
            SYS_gettimeofday => Self::Gettimeofday,
            #[cfg(target_arch = "x86_64")]
            SYS_time => Self::Time,
            _ => return None,
        })
    }

    /// The name shown in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::Pread => "pread64",
            Self::Pwrite => "pwrite64",
            Self::Readv => "readv",
            Self::Writev => "writev",
            Self::Preadv => "preadv",
            Self::Pwritev => "pwritev",
            Self::Lseek => "lseek",
            Self::Fsync => "fsync",
            Self::Fdatasync => "fdatasync",
            Self::SyncFileRange => "sync_file_range",
            Self::Msync => "msync",
            Self::Mmap => "mmap",
            Self::Munmap => "munmap",
            Self::Open => "open",
            Self::Openat => "openat",
            Self::Close => "close",
            Self::Ftruncate => "ftruncate",
            Self::Fallocate => "fallocate",
            Self::IoUringEnter => "io_uring_enter",
            Self::CopyFileRange => "copy_file_range",
            Self::Sendfile => "sendfile",
            Self::Splice => "splice",
            Self::Dup => "dup",
            Self::Dup2 => "dup2",
            Self::Dup3 => "dup3",
            Self::Fcntl => "fcntl",
            Self::ClockGettime => "clock_gettime",
            Self::Gettimeofday => "gettimeofday",
            Self::Time => "time",
            Self::Creat => "creat",
            Self::Sync => "sync",
            Self::Syncfs => "syncfs",
            Self::IoSubmit => "io_submit",
            Self::IoGetevents => "io_getevents",
            Self::CloseRange => "close_range",
            Self::Prctl => "prctl",
            Self::Seccomp => "seccomp",
        }
    }

    /// Calls the trace stops at only to watch what the program does with them (its own
    /// seccomp), counted nowhere.
    pub fn watched_only(self) -> bool {
        matches!(self, Self::Prctl | Self::Seccomp)
    }
}
