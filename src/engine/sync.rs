//! The ways a program makes a write durable, as pg_test_fsync compares them for PostgreSQL's
//! `wal_sync_method`: a buffered write then `fdatasync` or `fsync`; a write to a file opened
//! `O_DSYNC`, `O_SYNC` or `O_DIRECT|O_DSYNC`; `pwritev2` with `RWF_DSYNC`; and an io_uring
//! write linked (`IOSQE_IO_LINK`) to an fsync with the datasync flag. One [`SyncWriter`]
//! makes one operation: `n` writes at the offsets given, and whatever makes them durable.
//! For the methods that sync apart from the write (fdatasync, fsync, io_uring) the writes go
//! first and one sync follows; for the synchronous writes (`O_*SYNC`, `RWF_DSYNC`) each
//! write is durable on its own. A method this kernel or file system refuses (O_DIRECT,
//! io_uring in a sandbox, pwritev2 on an old kernel) is a reason, never a failure. Like
//! every engine, this moves bytes and reads no clock.

use super::buffer::AlignedBuffer;
use anyhow::{Context, Result};
use io_uring::{IoUring, opcode, types};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// A way to make writes durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMethod {
    /// Buffered write(s), then `fdatasync` (PostgreSQL's `fdatasync`).
    Fdatasync,
    /// Buffered write(s), then `fsync` (PostgreSQL's `fsync`).
    Fsync,
    /// Writes to a file opened `O_DSYNC` (PostgreSQL's `open_datasync`).
    ODsync,
    /// Writes to a file opened `O_SYNC` (PostgreSQL's `open_sync`).
    OSync,
    /// Writes to a file opened `O_DIRECT | O_DSYNC` (`open_datasync` with direct I/O).
    ODirectDsync,
    /// `pwritev2` with `RWF_DSYNC`: one call durable on its own, the file opened plainly.
    Pwritev2Dsync,
    /// io_uring: the write(s) linked (`IOSQE_IO_LINK`) to an fsync with the datasync flag,
    /// submitted together, one wait.
    UringFdatasync,
}

impl SyncMethod {
    /// Every method, in the order rows are run and shown.
    pub const ALL: [SyncMethod; 7] = [
        SyncMethod::Fdatasync,
        SyncMethod::Fsync,
        SyncMethod::ODsync,
        SyncMethod::OSync,
        SyncMethod::ODirectDsync,
        SyncMethod::Pwritev2Dsync,
        SyncMethod::UringFdatasync,
    ];

    /// The method's name as tables print it (16 characters at most).
    pub fn name(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
            SyncMethod::ODsync => "O_DSYNC",
            SyncMethod::OSync => "O_SYNC",
            SyncMethod::ODirectDsync => "O_DIRECT|O_DSYNC",
            SyncMethod::Pwritev2Dsync => "RWF_DSYNC",
            SyncMethod::UringFdatasync => "io_uring+fdsync",
        }
    }

    /// What it does, in words.
    pub fn about(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "write(s), then fdatasync",
            SyncMethod::Fsync => "write(s), then fsync",
            SyncMethod::ODsync => "each write to a file opened O_DSYNC",
            SyncMethod::OSync => "each write to a file opened O_SYNC",
            SyncMethod::ODirectDsync => "each write to a file opened O_DIRECT|O_DSYNC",
            SyncMethod::Pwritev2Dsync => "each write by pwritev2 with RWF_DSYNC",
            SyncMethod::UringFdatasync => "io_uring write(s) linked to an fsync (datasync)",
        }
    }

    /// A short name for the scratch file (`.ioscope-sync-odsync-PID`).
    pub fn slug(self) -> &'static str {
        match self {
            SyncMethod::Fdatasync => "fdatasync",
            SyncMethod::Fsync => "fsync",
            SyncMethod::ODsync => "odsync",
            SyncMethod::OSync => "osync",
            SyncMethod::ODirectDsync => "odirect",
            SyncMethod::Pwritev2Dsync => "rwfdsync",
            SyncMethod::UringFdatasync => "uring",
        }
    }

    /// Whether several writes share one sync (else each write is durable on its own).
    pub fn syncs_apart(self) -> bool {
        matches!(
            self,
            SyncMethod::Fdatasync | SyncMethod::Fsync | SyncMethod::UringFdatasync
        )
    }

    /// The flags the file is opened with, beyond read and write.
    fn open_flags(self) -> libc::c_int {
        match self {
            SyncMethod::ODsync => libc::O_DSYNC,
            SyncMethod::OSync => libc::O_SYNC,
            SyncMethod::ODirectDsync => libc::O_DIRECT | libc::O_DSYNC,
            _ => 0,
        }
    }
}

/// The file opened for one method, its buffer and, for io_uring, its ring.
pub struct SyncWriter {
    method: SyncMethod,
    file: File,
    name: String,
    buf: AlignedBuffer,
    ring: Option<IoUring>,
}

/// Whether an error says the kernel or file system does not offer what was asked (as
/// opposed to a failed write): `EINVAL`, `EOPNOTSUPP`, `ENOSYS`, `EPERM`.
fn refused(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::EOPNOTSUPP | libc::ENOSYS | libc::EPERM)
    )
}

impl SyncWriter {
    /// Opens the existing file `path` (shown as `name`) for `method`, with a page-aligned
    /// buffer of `block` bytes holding `fill`'s bytes. `Ok(Err(reason))` when this kernel
    /// or file system does not offer the method.
    pub fn open(
        path: &Path,
        name: &str,
        method: SyncMethod,
        block: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> Result<std::result::Result<Self, String>> {
        let file = match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(method.open_flags())
            .open(path)
        {
            Ok(f) => f,
            Err(e) if method == SyncMethod::ODirectDsync && refused(&e) => {
                return Ok(Err(format!("the file system refuses O_DIRECT ({e})")));
            }
            Err(e) => {
                return Err(e).with_context(|| format!("open {name} for {}", method.name()));
            }
        };
        let ring = if method == SyncMethod::UringFdatasync {
            match IoUring::new(4) {
                Ok(r) => Some(r),
                Err(e) => return Ok(Err(format!("io_uring is not available here ({e})"))),
            }
        } else {
            None
        };
        let mut buf = AlignedBuffer::new(block);
        fill(buf.as_mut_slice());
        Ok(Ok(Self {
            method,
            file,
            name: name.to_string(),
            buf,
            ring,
        }))
    }

    /// One operation: a write at each of `offsets`, made durable as the method does.
    pub fn op(&mut self, offsets: &[u64]) -> std::io::Result<()> {
        match self.method {
            SyncMethod::Fdatasync | SyncMethod::Fsync => {
                for &o in offsets {
                    self.file.write_all_at(self.buf.as_slice(), o)?;
                }
                if self.method == SyncMethod::Fsync {
                    self.file.sync_all()
                } else {
                    self.file.sync_data()
                }
            }
            SyncMethod::ODsync | SyncMethod::OSync | SyncMethod::ODirectDsync => {
                for &o in offsets {
                    self.file.write_all_at(self.buf.as_slice(), o)?;
                }
                Ok(())
            }
            SyncMethod::Pwritev2Dsync => {
                for &o in offsets {
                    self.pwritev2_dsync(o)?;
                }
                Ok(())
            }
            SyncMethod::UringFdatasync => self.uring_linked(offsets),
        }
    }

    /// One `pwritev2(RWF_DSYNC)` of the whole buffer at `offset`.
    fn pwritev2_dsync(&self, offset: u64) -> std::io::Result<()> {
        let data = self.buf.as_slice();
        let iov = libc::iovec {
            iov_base: data.as_ptr() as *mut libc::c_void,
            iov_len: data.len(),
        };
        // SAFETY: the iovec points into our buffer, alive and unchanged for the call; the
        // kernel only reads from it.
        let n = unsafe {
            libc::pwritev2(
                self.file.as_raw_fd(),
                &iov,
                1,
                offset as libc::off_t,
                libc::RWF_DSYNC,
            )
        };
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if n as usize != data.len() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::WriteZero,
                format!("pwritev2 wrote {n} of {} bytes", data.len()),
            ));
        }
        Ok(())
    }

    /// The writes and an fsync (datasync) linked in one submission, reaped together.
    fn uring_linked(&mut self, offsets: &[u64]) -> std::io::Result<()> {
        let fd = types::Fd(self.file.as_raw_fd());
        let data = self.buf.as_slice();
        let ring = self
            .ring
            .as_mut()
            .expect("the io_uring method opens its ring in open()");
        for (i, &o) in offsets.iter().enumerate() {
            let write = opcode::Write::new(fd, data.as_ptr(), data.len() as u32)
                .offset(o)
                .build()
                .flags(io_uring::squeue::Flags::IO_LINK)
                .user_data(i as u64);
            // SAFETY: the buffer outlives the request: we wait for every completion below
            // before returning, and nothing writes to the buffer meanwhile.
            unsafe { ring.submission().push(&write) }
                .map_err(|_| std::io::Error::other("io_uring submission queue full"))?;
        }
        let sync = opcode::Fsync::new(fd)
            .flags(types::FsyncFlags::DATASYNC)
            .build()
            .user_data(u64::MAX);
        // SAFETY: an fsync request references no memory of ours.
        unsafe { ring.submission().push(&sync) }
            .map_err(|_| std::io::Error::other("io_uring submission queue full"))?;
        let want = offsets.len() + 1;
        let mut reaped = 0;
        let mut first_error = None;
        while reaped < want {
            ring.submit_and_wait(want - reaped)?;
            for cqe in ring.completion() {
                reaped += 1;
                let res = cqe.result();
                let short = cqe.user_data() != u64::MAX && res >= 0 && res as usize != data.len();
                if first_error.is_none() {
                    if res < 0 {
                        first_error = Some(std::io::Error::from_raw_os_error(-res));
                    } else if short {
                        first_error = Some(std::io::Error::new(
                            std::io::ErrorKind::WriteZero,
                            format!("io_uring wrote {res} of {} bytes", data.len()),
                        ));
                    }
                }
            }
        }
        first_error.map_or(Ok(()), Err)
    }

    /// The first operation, untimed: `Ok(Err(reason))` where this kernel or file system
    /// refuses the method only now (O_DIRECT at this size, `RWF_DSYNC`, io_uring's
    /// opcodes), an error for a write that failed.
    pub fn probe(&mut self, offsets: &[u64]) -> Result<std::result::Result<(), String>> {
        match self.op(offsets) {
            Ok(()) => Ok(Ok(())),
            Err(e)
                if refused(&e)
                    && matches!(
                        self.method,
                        SyncMethod::ODirectDsync
                            | SyncMethod::Pwritev2Dsync
                            | SyncMethod::UringFdatasync
                    ) =>
            {
                Ok(Err(match self.method {
                    SyncMethod::ODirectDsync => format!(
                        "O_DIRECT refused a {}-byte write ({e}): the block size must be a multiple of the device's logical block size",
                        self.buf.as_slice().len()
                    ),
                    SyncMethod::Pwritev2Dsync => {
                        format!("this kernel refuses pwritev2 with RWF_DSYNC ({e})")
                    }
                    _ => format!("this kernel refuses io_uring's write or fsync ({e})"),
                }))
            }
            Err(e) => Err(e).with_context(|| {
                format!(
                    "{} {} at byte {}",
                    self.method.about(),
                    self.name,
                    offsets.first().copied().unwrap_or(0)
                )
            }),
        }
    }
}
