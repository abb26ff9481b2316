//! Opening what the user named, safely: inputs are checked for type before they are read,
//! outputs are never created over an existing file without `--force`, never written past
//! the free-space margin, and removed again when the work fails or is interrupted.

use crate::error::input;
use crate::units::{GIB, format_size};
use anyhow::{Context, Result};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, FromRawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

mod owner;
use owner::Owner;

/// What kind of thing an input is; it decides which ways of reading apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// A regular file (its size may still read as 0, as in /proc).
    Regular,
    /// A pipe, FIFO, socket or standard input: read to its end, no seeking.
    Stream,
    /// A character device such as /dev/zero (only with `--allow-device`).
    CharDevice,
    /// A block device such as /dev/sda (only with `--allow-device`).
    BlockDevice,
}

/// An opened input and what was learnt about it.
#[derive(Debug)]
pub struct Input {
    /// The open file (a duplicate of fd 0 for stdin).
    pub file: File,
    /// The name to show: the path, or `stdin`.
    pub name: String,
    /// What kind of thing it is.
    pub kind: InputKind,
    /// Bytes from `start` to the size stat reports (0 for pipes and for /proc files).
    pub len: u64,
    /// Offset of the first byte to read: 0, or where a regular file given as stdin already
    /// stood (the rest is read from there, as `cat` does).
    pub start: u64,
    /// The pseudo file system it is on (proc, sysfs, ...), where stat's size is not the
    /// content's.
    pub pseudo: Option<&'static str>,
    /// Opened from `-`.
    pub from_stdin: bool,
}

impl Input {
    /// After `bytes` were read from `start` by offset (not through the file position):
    /// leaves a regular stdin's position after them, as `cat` would, for whoever reads next.
    pub fn finish(&self, bytes: u64) -> Result<()> {
        if self.from_stdin && self.kind == InputKind::Regular {
            use std::io::Seek;
            (&self.file)
                .seek(io::SeekFrom::Start(self.start + bytes))
                .context("seek stdin past the bytes read")?;
        }
        Ok(())
    }
}

/// The pseudo file system `file` lives on, if any: there the size stat reports is not the
/// size of the content (proc, sysfs, debugfs, tracefs, securityfs, cgroup, configfs).
pub fn pseudo_fs(file: &File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    const MAGICS: [(i64, &str); 9] = [
        (0x9fa0, "proc"),
        (0x6265_6572, "sysfs"),
        (0x6462_6720, "debugfs"),
        (0x7472_6163, "tracefs"),
        (0x7363_6673, "securityfs"),
        (0x0027_e0eb, "cgroup"),
        (0x6367_7270, "cgroup2"),
        (0x6265_6570, "configfs"),
        (0xde5e_81e4, "efivarfs"),
    ];
    // SAFETY: fstatfs fills the zeroed struct we pass for a descriptor we hold.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    MAGICS
        .iter()
        .find(|(magic, _)| *magic == st.f_type as i64)
        .map(|(_, name)| *name)
}

/// The user's name for a path in messages; `-` is standard input.
pub fn display_name(path: &Path) -> String {
    if path == Path::new("-") {
        "stdin".to_string()
    } else {
        crate::text::lossless(path.as_os_str())
    }
}

/// Opens `path` (or stdin for `-`) for reading after checking what it is.
pub fn open_input(path: &Path, allow_device: bool) -> Result<Input> {
    let name = display_name(path);
    if path == Path::new("-") {
        let fd = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .context("duplicate stdin for reading")?;
        let file = File::from(fd);
        let meta = file.metadata().context("stat stdin")?;
        let kind = if meta.file_type().is_file() {
            InputKind::Regular
        } else {
            InputKind::Stream
        };
        let start = if kind == InputKind::Regular {
            use std::io::Seek;
            (&file)
                .stream_position()
                .context("find the position of stdin")?
        } else {
            0
        };
        let pseudo = pseudo_fs(&file).filter(|_| kind == InputKind::Regular);
        return Ok(Input {
            len: meta.len().saturating_sub(start),
            start,
            pseudo,
            from_stdin: true,
            file,
            name,
            kind,
        });
    }
    let meta = std::fs::metadata(path)
        .map_err(|e| input(format!("open {name} for reading: {}", describe(&e))))?;
    let kind = classify(&meta.file_type(), &name, "read", allow_device)?;
    let file = open_interruptible(path, libc::O_RDONLY, 0)?
        .map_err(|e| input(format!("open {name} for reading: {}", describe(&e))))?;
    let pseudo = pseudo_fs(&file).filter(|_| kind == InputKind::Regular);
    Ok(Input {
        file,
        name,
        kind,
        len: meta.len(),
        start: 0,
        pseudo,
        from_stdin: false,
    })
}

/// Opens an input that must be a regular file (`sweep`, `cache`, `calibrate`, `syscalls`,
/// `compare`). A FIFO or socket is refused from its metadata, before open() would wait for
/// a writer; `command` starts the message. Other kinds are left to the caller's own check.
pub fn open_regular(path: &Path, command: &str) -> Result<Input> {
    if path != Path::new("-") {
        if let Ok(meta) = std::fs::metadata(path) {
            let file_type = meta.file_type();
            let what = if file_type.is_fifo() {
                Some("a FIFO")
            } else if file_type.is_socket() {
                Some("a socket")
            } else {
                None
            };
            if let Some(what) = what {
                let name = display_name(path);
                return Err(input(format!(
                    "{command} {name}: needs a regular file; {name} is {what}"
                )));
            }
        }
    }
    let opened = open_input(path, false)?;
    if opened.kind != InputKind::Regular || opened.pseudo.is_some() {
        return Err(input(format!(
            "{command} {}: needs a regular file it can re-read",
            opened.name
        )));
    }
    Ok(opened)
}

/// [`open_regular`], and not empty: for commands that measure reads of the file.
pub fn open_measurable(path: &Path, command: &str) -> Result<Input> {
    let opened = open_regular(path, command)?;
    if opened.len == 0 {
        return Err(input(format!(
            "{command} {}: needs a non-empty regular file",
            opened.name
        )));
    }
    Ok(opened)
}

/// Reads a whole file, FIFO or pipe as UTF-8 text (`report`'s saved JSON), so that Ctrl-C
/// stops a wait for a writer. Errors read `{what}: read: <reason>` and are input errors.
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String> {
    let failed = |e: &io::Error| input(format!("{what}: read: {}", describe(e)));
    let file = if path == Path::new("-") {
        let fd = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .context("duplicate stdin for reading")?;
        File::from(fd)
    } else {
        // Devices are refused (`/dev/zero` never ends); FIFOs and pipes are read to their end.
        if let Ok(meta) = std::fs::metadata(path) {
            let t = meta.file_type();
            if t.is_dir() || t.is_block_device() || t.is_char_device() {
                return Err(input(format!(
                    "{what}: not a file (a directory or a device), so not a saved ioscope result"
                )));
            }
        }
        open_interruptible(path, libc::O_RDONLY, 0)?.map_err(|e| failed(&e))?
    };
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    let mut reader = &file;
    loop {
        match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => bytes.extend_from_slice(&chunk[..n]),
            Err(e) if crate::interrupt::retry_after(&e)? => {}
            Err(e) => return Err(failed(&e)),
        }
        if bytes.len() as u64 > limit {
            return Err(input(format!(
                "{what}: read: more than {} — not a saved ioscope result",
                format_size(limit)
            )));
        }
    }
    String::from_utf8(bytes)
        .map_err(|_| input(format!("{what}: read: stream did not contain valid UTF-8")))
}

/// Opens `path` with open(2) itself (close-on-exec added). `std::fs` retries an open() that
/// fails with EINTR, so a Ctrl-C while open() waits (a FIFO with no writer or no reader)
/// would be lost; here it is [`crate::error::Failure::Interrupted`], the outer error. The
/// inner error is the system's refusal, for the caller to word.
fn open_interruptible(
    path: &Path,
    flags: libc::c_int,
    mode: libc::c_uint,
) -> Result<io::Result<File>> {
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return Ok(Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path contains a NUL byte",
        )));
    };
    loop {
        crate::interrupt::check()?;
        // SAFETY: a NUL-terminated path that outlives the call; open has no other inputs.
        let fd = unsafe { libc::open(c_path.as_ptr(), flags | libc::O_CLOEXEC, mode) };
        if fd >= 0 {
            // SAFETY: open just returned this descriptor; the File is its only owner.
            return Ok(Ok(unsafe { File::from_raw_fd(fd) }));
        }
        let err = io::Error::last_os_error();
        if !crate::interrupt::retry_after(&err)? {
            return Ok(Err(err));
        }
    }
}

/// Makes sure descriptors 0, 1 and 2 are open before anything else is, so that no file
/// ioscope opens takes one of their numbers (and gets a report written into it). Rust's
/// runtime does this, but `main` skips that set-up (see main.rs). A closed one gets
/// /dev/null opened the other way round (stdin write-only, stdout and stderr read-only), so
/// using it still fails with EBADF as a closed descriptor would: `ioscope fast f >&-` is an
/// error, as it is for cat. One poll() call when all three are open.
pub fn reserve_standard_fds() {
    let mut fds = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    // SAFETY: poll only reads and writes the array we pass, of the length we pass.
    let polled = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) } >= 0;
    for pollfd in fds {
        let closed = if polled {
            pollfd.revents & libc::POLLNVAL != 0
        } else {
            // SAFETY: F_GETFD only asks whether the descriptor is open.
            let flags = unsafe { libc::fcntl(pollfd.fd, libc::F_GETFD) };
            flags == -1 && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
        };
        if closed {
            let flags = if pollfd.fd == 0 {
                libc::O_WRONLY
            } else {
                libc::O_RDONLY
            };
            // open() takes the lowest free number, which is this one: lower ones are open.
            // If /dev/null is missing, the number stays free; nothing better can be done.
            // SAFETY: a static NUL-terminated path; the descriptor is kept for the process.
            unsafe { libc::open(c"/dev/null".as_ptr(), flags | libc::O_CLOEXEC) };
        }
    }
}

fn classify(
    file_type: &std::fs::FileType,
    name: &str,
    op: &str,
    allow_device: bool,
) -> Result<InputKind> {
    if file_type.is_dir() {
        return Err(input(format!(
            "{op} {name}: is a directory; give a file instead"
        )));
    }
    let kind = if file_type.is_file() {
        InputKind::Regular
    } else if file_type.is_block_device() {
        InputKind::BlockDevice
    } else if file_type.is_char_device() {
        InputKind::CharDevice
    } else {
        InputKind::Stream
    };
    if matches!(kind, InputKind::BlockDevice | InputKind::CharDevice) && !allow_device {
        let what = if kind == InputKind::BlockDevice {
            "a block device"
        } else {
            "a character device"
        };
        return Err(input(format!(
            "{op} {name}: is {what}; refusing without --allow-device"
        )));
    }
    Ok(kind)
}

/// The operating system's words for an I/O error, without the `(os error N)` suffix.
pub fn describe(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_string(),
        None => text,
    }
}

/// Space on the file system that holds a directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Size of the file system in bytes.
    pub total: u64,
    /// Bytes an unprivileged writer may still use.
    pub available: u64,
    /// The unit space is handed out in (statvfs `f_frsize`): a file of one byte takes one.
    pub block: u64,
    /// Inodes an unprivileged writer may still create (`u64::MAX` where the file system
    /// does not count them, as btrfs reports 0 of 0).
    pub inodes_available: u64,
}

/// Reads the size and free space of the file system holding `dir`.
pub fn space(dir: &Path) -> Result<Space> {
    let c_path = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).with_context(|| {
        format!(
            "statvfs {}: path contains a NUL byte",
            crate::text::printable_path(dir)
        )
    })?;
    // SAFETY: statvfs only writes into the zeroed struct we pass; the path is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above; both pointers are valid for the duration of the call.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error())
            .with_context(|| format!("statvfs {}", crate::text::printable_path(dir)));
    }
    Ok(Space::of(&st))
}

impl Space {
    /// What a statvfs(2) result says: sizes in its allocation unit (`f_frsize`), inodes
    /// uncounted (`u64::MAX`) where the file system reports none at all.
    // The fields are u64 on 64-bit Linux but narrower elsewhere: the casts stay.
    #[allow(clippy::unnecessary_cast)]
    pub fn of(st: &libc::statvfs) -> Self {
        let unit = (st.f_frsize as u64).max(1);
        Space {
            total: st.f_blocks as u64 * unit,
            available: st.f_bavail as u64 * unit,
            block: unit,
            inodes_available: if st.f_files == 0 {
                u64::MAX
            } else {
                st.f_favail as u64
            },
        }
    }
}

/// The free space to keep by default: 10% of the file system or 1 GiB, whichever is larger.
pub fn default_margin(space: Space) -> u64 {
    (space.total / 10).max(GIB)
}

/// What files take on a file system whose allocation unit is `block` bytes: each file's
/// bytes rounded up to whole blocks, one block more per file for what is not data (its
/// inode where inodes are allocated, its directory entry, extent or indirect blocks), and
/// one block per 1,024 data blocks for the mapping of large files. So 8,000 files of one
/// byte count 8,000 × 2 blocks, not 8,000 bytes: the margin is kept by blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// Files (each needs an inode).
    pub files: u64,
    /// Bytes of data in them.
    pub data: u64,
    /// Bytes of space they take, in whole blocks.
    pub bytes: u64,
}

impl Footprint {
    /// One file of `len` bytes on a file system with `block`-byte blocks.
    pub fn of_file(len: u64, block: u64) -> Self {
        let block = block.max(1);
        let data = len.div_ceil(block);
        Self {
            files: 1,
            data: len,
            bytes: (data + 1 + data / 1024).saturating_mul(block),
        }
    }

    /// Adds another file of `len` bytes.
    pub fn add(&mut self, len: u64, block: u64) {
        let one = Self::of_file(len, block);
        self.files += one.files;
        self.data = self.data.saturating_add(one.data);
        self.bytes = self.bytes.saturating_add(one.bytes);
    }
}

/// Refuses, with the numbers, to write `bytes` into `dir` as one file when that would leave
/// less than the margin free. `reclaimable` is space the write frees first (a file it
/// replaces).
pub fn ensure_room(
    dir: &Path,
    name: &str,
    bytes: u64,
    reclaimable: u64,
    min_free: Option<u64>,
) -> Result<()> {
    let space = space(dir)?;
    let need = Footprint::of_file(bytes, space.block);
    ensure_room_for(space, name, need, reclaimable, min_free)
}

/// [`ensure_room`] for any number of files, on space already read: refuses when their
/// footprint (whole blocks, per-file metadata) would leave less than the margin free, or
/// when there are not enough inodes left.
pub fn ensure_room_for(
    space: Space,
    name: &str,
    need: Footprint,
    reclaimable: u64,
    min_free: Option<u64>,
) -> Result<()> {
    let margin = min_free.unwrap_or_else(|| default_margin(space));
    let usable = (space.available.saturating_add(reclaimable)).saturating_sub(margin);
    if need.bytes > usable {
        let files = if need.files > 1 {
            format!(" in {} files", need.files)
        } else {
            String::new()
        };
        return Err(input(format!(
            "write {name}: not enough free space: {} needed{files} ({} in {} blocks with metadata), {} free of {}, and {} must stay free (set with --min-free)",
            format_size(need.data),
            format_size(need.bytes),
            format_size(space.block),
            format_size(space.available),
            format_size(space.total),
            format_size(margin),
        )));
    }
    if need.files > space.inodes_available {
        return Err(input(format!(
            "write {name}: not enough free inodes: {} files needed, {} can still be created",
            need.files, space.inodes_available
        )));
    }
    Ok(())
}

/// Bytes of file data that may still be written into `dir` as one file while keeping the
/// margin (its blocks and metadata counted).
pub fn room(dir: &Path, min_free: Option<u64>) -> Result<u64> {
    Ok(room_in(space(dir)?, min_free))
}

/// [`room`] on space already read.
pub fn room_in(space: Space, min_free: Option<u64>) -> u64 {
    let margin = min_free.unwrap_or_else(|| default_margin(space));
    let usable = space.available.saturating_sub(margin);
    // The largest size whose footprint fits: data blocks d with (d + 1 + d/1024) blocks.
    let blocks = usable / space.block;
    let Some(limit) = blocks.checked_sub(1) else {
        return 0;
    };
    let taken = |d: u64| d + d / 1024;
    let mut data = limit * 1024 / 1025;
    while taken(data + 1) <= limit {
        data += 1;
    }
    data * space.block
}

/// The directory that holds `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A file being written: removed on drop unless [`OutputFile::finish`] was called.
#[derive(Debug)]
pub struct OutputFile {
    file: File,
    /// Where the bytes go while they are written (a temporary name with `--force`).
    path: PathBuf,
    /// The existing file the finished output replaces (`--force` on a regular file).
    replaces: Option<PathBuf>,
    name: String,
    kind: InputKind,
    remove_on_drop: bool,
    /// The device and inode created at `path`: only that file is removed on drop.
    id: Option<FileId>,
    /// Names `path` to the exit-at-once path of a second Ctrl-C while it is unfinished.
    registration: crate::interrupt::Registration,
    /// The free space it claimed (none for a FIFO or device); given up when it is done.
    claim: Option<Claim>,
}

/// What the user allowed when creating an output.
#[derive(Debug, Clone, Copy, Default)]
pub struct CreatePolicy {
    /// Replace an existing file.
    pub force: bool,
    /// Write to a device node (also needs `force`).
    pub allow_device: bool,
    /// Free space to keep; `None` means the default margin.
    pub min_free: Option<u64>,
}

/// The refusal to write through a symbolic link (dangling or not) at `path`; `what` starts
/// the message (`write LINK`, `sweep f: --csv LINK`).
pub fn symlink_refusal(path: &Path, what: &str) -> anyhow::Error {
    let target = std::fs::read_link(path).map_or_else(
        |_| "a target that cannot be read".to_string(),
        |t| crate::text::printable_path(&t),
    );
    input(format!(
        "{what}: is a symbolic link to {target}; refusing to write through it (remove it or name the target)"
    ))
}

/// Refuses `path` when it is a symbolic link, dangling or not: no output is written
/// through one, with or without `--force` (it could lead anywhere: `/dev/stdout`, another
/// user's file). Outputs are then opened with O_NOFOLLOW or O_EXCL, so a link swapped in
/// after this check is refused by open() too.
pub fn refuse_symlink(path: &Path, what: &str) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(symlink_refusal(path, what)),
        _ => Ok(()),
    }
}

/// A file's device and inode: who it is, whatever its name.
pub type FileId = (u64, u64);

/// The device and inode of an open file (`None` where fstat fails).
pub fn file_id(file: &File) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

/// Removes `path` only if it still names the file `id` (lstat, so a symbolic link put there
/// is not ours either): what ioscope created and is giving up, never a file another program
/// put in its place meanwhile. Best effort; a failure is ignored (a guard's drop calls it).
/// Holding the file open until this returns keeps its inode from being reused.
pub fn remove_if_same(path: &Path, id: Option<FileId>) {
    use std::os::unix::fs::MetadataExt;
    let Some(id) = id else {
        return;
    };
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if (meta.dev(), meta.ino()) == id {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What every output's free-space claim is named: `.ioscope-reserve-PID-N.START`, beside it
/// (`START` the process's start time, see [`Owner`]).
const CLAIM_PREFIX: &str = ".ioscope-reserve-";

/// A claim on free space for one output, so that two writers at once cannot both pass the
/// free-space check and then both fill the disk. It is a file beside the output,
/// `.ioscope-reserve-PID-N.START`, whose size is the bytes claimed:
/// 1. created and given those bytes with fallocate(2) (blocks taken for real, so every
///    writer, ioscope or not, sees them gone; a full disk refuses here, cleanly);
/// 2. the margin is checked again, with the claims of other ioscope writers on the file
///    system counted (registered per device, see [`RegistryEntry`], and beside it): of two writers that got here at once, the later one (or both) is
///    refused up front, with the numbers;
/// 3. its blocks are given back (the file is emptied and made sparse again at the same
///    size) before anything is measured, so the output's own writes allocate their blocks
///    inside the timing as before: a write benchmark measures what it did. The size left
///    is the claim, which later ioscope writers count (over-counting, while this one
///    writes, what it already wrote: they refuse rather than fill the disk).
///
/// Removed with the output's guard, and by the exit-at-once path of a second Ctrl-C.
#[derive(Debug)]
struct Claim {
    path: PathBuf,
    /// Held open until the claim is removed, so its inode cannot be another file's.
    file: File,
    _registration: crate::interrupt::Registration,
    /// Its entry in the registry of its file system (dropped with it).
    _entry: Option<RegistryEntry>,
    /// Its device and inode, under which [`OWN_CLAIMS`] knows its output.
    id: Option<FileId>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            own_claims().retain(|(claim, _)| *claim != id);
        }
        remove_if_same(&self.path, self.id);
    }
}

/// This process's live claims (the claim file's device and inode) with their outputs (a
/// duplicate descriptor): a claim of its own is counted for what its output has not
/// written yet, never as another writer's (a study's scratch file, written in full, does
/// not count against the study's next file).
static OWN_CLAIMS: std::sync::Mutex<Vec<(FileId, File)>> = std::sync::Mutex::new(Vec::new());

fn own_claims() -> std::sync::MutexGuard<'static, Vec<(FileId, File)>> {
    OWN_CLAIMS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What this process's claim `id` of `bytes` (holding `held` of them as blocks) still
/// takes: the bytes its output does not hold yet. `None` where `id` is no claim of ours.
fn own_outstanding(id: FileId, bytes: u64, held: u64) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let own = own_claims();
    let (_, output) = own.iter().find(|(claim, _)| *claim == id)?;
    let written = output.metadata().map_or(0, |m| m.blocks() * 512);
    Some(bytes.saturating_sub(held).saturating_sub(written))
}

/// Whether `path` is the claim file of `owner` (its name says so, it is a regular file, on
/// device `dev` where given): what may be removed once that owner is gone.
fn is_claim_of(path: &Path, owner: Owner, dev: Option<u64>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let named = path
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(CLAIM_PREFIX))
        .and_then(Owner::parse)
        .is_some_and(|(o, rest)| o == owner && rest.is_empty());
    named
        && std::fs::symlink_metadata(path)
            .is_ok_and(|m| m.is_file() && dev.is_none_or(|dev| m.dev() == dev))
}

/// The directories that hold this user's registries of claims, one per file system:
/// `$XDG_RUNTIME_DIR/ioscope-claims` where that is set, and `/tmp/.ioscope-claims-UID`.
/// Claims are registered in the first that can be used and counted from all, so writers
/// started with and without `XDG_RUNTIME_DIR` still see each other.
fn registry_bases() -> Vec<PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let mut bases = Vec::new();
    if let Some(runtime) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
        if runtime.is_absolute() {
            bases.push(runtime.join("ioscope-claims"));
        }
    }
    bases.push(PathBuf::from(format!("/tmp/.ioscope-claims-{uid}")));
    bases
}

/// Whether `dir` is a directory (not a symbolic link) owned by this user that no one else
/// may write into: a registry that can be trusted.
fn is_own_private_dir(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    std::fs::symlink_metadata(dir)
        .is_ok_and(|m| m.is_dir() && m.uid() == uid && m.mode() & 0o022 == 0)
}

/// The registry of claims on the file system `dev` under `base` (`base/DEV-HEX`), created
/// (mode 0700) when `create`; `None` where it cannot be made or is not this user's own.
fn registry_dir(base: &Path, dev: u64, create: bool) -> Option<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = base.join(format!("{dev:x}"));
    if create {
        for d in [base, dir.as_path()] {
            if let Err(e) = std::fs::DirBuilder::new().mode(0o700).create(d) {
                if e.kind() != io::ErrorKind::AlreadyExists {
                    return None;
                }
            }
        }
    }
    (is_own_private_dir(base) && is_own_private_dir(&dir)).then_some(dir)
}

/// A claim's entry in the registry of its file system: a symbolic link named
/// `PID-SEQ.START-BYTES` to the claim file (`START` the start time of process `PID`: an
/// entry whose process is gone, PID reused or not, is removed with its claim file), so that
/// writers in other directories of the same file system count the claim too (and what it
/// holds as blocks is found through it).
#[derive(Debug)]
struct RegistryEntry {
    path: PathBuf,
    id: Option<FileId>,
    _registration: crate::interrupt::Registration,
}

impl RegistryEntry {
    /// Registers the claim file `claim` (on device `dev`) of `bytes` bytes; `None` where no
    /// registry can be used here (then only claims in the same directory are seen).
    fn new(dev: u64, claim: &Path, seq: u64, bytes: u64) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let target = std::path::absolute(claim).ok()?;
        let owner = Owner::this();
        let name = format!("{}-{}-{bytes}", owner.pid, owner.tag(seq));
        for base in registry_bases() {
            let Some(dir) = registry_dir(&base, dev, true) else {
                continue;
            };
            let path = dir.join(&name);
            if std::os::unix::fs::symlink(&target, &path).is_ok() {
                let id = std::fs::symlink_metadata(&path)
                    .ok()
                    .map(|m| (m.dev(), m.ino()));
                return Some(Self {
                    _registration: crate::interrupt::Registration::new(&path),
                    path,
                    id,
                });
            }
        }
        None
    }
}

impl Drop for RegistryEntry {
    fn drop(&mut self) {
        remove_if_same(&self.path, self.id);
    }
}

/// What live claims take of the free space of a file system, less what they already hold
/// as blocks (counted as used by the file system already).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Claimed {
    /// Bytes claimed by other ioscope processes.
    others: u64,
    /// Those processes (PIDs).
    writers: Vec<libc::pid_t>,
    /// Bytes this process's other outputs claimed and have not written yet.
    own: u64,
}

impl Claimed {
    fn total(&self) -> u64 {
        self.others.saturating_add(self.own)
    }

    fn add(&mut self, owner: Owner, bytes: u64) {
        if owner == Owner::this() {
            self.own = self.own.saturating_add(bytes);
        } else {
            self.others = self.others.saturating_add(bytes);
            if bytes > 0 && !self.writers.contains(&owner.pid) {
                self.writers.push(owner.pid);
            }
        }
    }

    /// Says who claimed the space taken off what is free, where anyone did: `None` else.
    fn explain(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.others > 0 {
            let n = self.writers.len();
            parts.push(format!(
                "{} claimed by {n} other ioscope writer{} running now",
                format_size(self.others),
                if n == 1 { "" } else { "s" }
            ));
        }
        if self.own > 0 {
            parts.push(format!(
                "{} claimed by this command's other outputs, not yet written",
                format_size(self.own)
            ));
        }
        (!parts.is_empty()).then(|| parts.join(" and "))
    }
}

/// The claims on the file system of `dir` of live ioscope writers, other than `own`: those
/// registered for the file system (any directory on it), and those beside `dir` (another
/// user's, or where no registry could be used). A claim whose process is gone (its PID and
/// start time, see [`Owner`]) is removed, with its entry, where it is this user's to remove.
fn claimed(dir: &Path, own: Option<&Path>) -> Claimed {
    use std::os::unix::fs::MetadataExt;
    let own_id = own
        .and_then(|p| std::fs::symlink_metadata(p).ok())
        .map(|m| (m.dev(), m.ino()));
    // Claim files already counted through the registry.
    let mut counted: Vec<FileId> = Vec::new();
    let mut total = Claimed::default();
    if let Ok(dev) = std::fs::metadata(dir).map(|m| m.dev()) {
        for base in registry_bases() {
            let Some(registry) = registry_dir(&base, dev, false) else {
                continue;
            };
            let Ok(entries) = std::fs::read_dir(&registry) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let Some((owner, rest)) = name.to_str().and_then(Owner::parse) else {
                    continue;
                };
                let Some(bytes) = rest.strip_prefix('-').and_then(|b| b.parse::<u64>().ok()) else {
                    continue;
                };
                let target = std::fs::read_link(entry.path());
                if !owner.alive() {
                    // Left by a writer that was killed: not a claim any more, whoever has
                    // its PID now. Its claim file goes too, where it is one.
                    if let Ok(target) = &target {
                        if is_claim_of(target, owner, Some(dev)) {
                            let _ = std::fs::remove_file(target);
                        }
                    }
                    if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                        let _ = std::fs::remove_file(entry.path());
                    }
                    continue;
                }
                let (held, id) = match target.and_then(std::fs::symlink_metadata) {
                    Ok(meta) if meta.is_file() && meta.dev() == dev => {
                        let id = (meta.dev(), meta.ino());
                        if Some(id) == own_id {
                            continue;
                        }
                        counted.push(id);
                        (meta.blocks() * 512, Some(id))
                    }
                    _ => (0, None),
                };
                let outstanding = id
                    .filter(|_| owner == Owner::this())
                    .and_then(|id| own_outstanding(id, bytes, held))
                    .unwrap_or_else(|| bytes.saturating_sub(held));
                total.add(owner, outstanding);
            }
        }
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return total;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some((owner, "")) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(CLAIM_PREFIX))
            .and_then(Owner::parse)
        else {
            continue;
        };
        if own.is_some_and(|own| own.file_name() == Some(file_name.as_os_str())) {
            continue;
        }
        if !owner.alive() {
            // Left by a writer that was killed: not a claim any more (removed where only
            // this machine writes: elsewhere it may be another host's live claim).
            if owner::local_only(dir) && is_claim_of(&entry.path(), owner, None) {
                let _ = std::fs::remove_file(entry.path());
            }
            continue;
        }
        if let Ok(meta) = std::fs::symlink_metadata(entry.path()) {
            let id = (meta.dev(), meta.ino());
            if meta.is_file() && !counted.contains(&id) {
                let held = meta.blocks() * 512;
                let outstanding = Some(id)
                    .filter(|_| owner == Owner::this())
                    .and_then(|id| own_outstanding(id, meta.len(), held))
                    .unwrap_or_else(|| meta.len().saturating_sub(held));
                total.add(owner, outstanding);
            }
        }
    }
    total
}

/// Space in `dir` with the claims of other ioscope writers taken off what is available.
fn space_less_claims(dir: &Path, own: Option<&Path>) -> Result<Space> {
    let mut space = space(dir)?;
    space.available = space.available.saturating_sub(claimed(dir, own).total());
    Ok(space)
}

fn is_no_space(err: &io::Error) -> bool {
    matches!(err.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
}

/// fallocate(2) of `len` bytes from 0 on `file`: `Ok(false)` where it cannot for another
/// reason than space (then the claim is its size alone, and the check made before is all
/// there is); an error with `refused`'s message where the space is not there.
fn allocate(file: &File, len: libc::off_t, refused: impl Fn() -> anyhow::Error) -> Result<bool> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: fallocate only changes the blocks of a descriptor we hold open.
        if unsafe { libc::fallocate(file.as_raw_fd(), 0, 0, len) } == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            _ if crate::interrupt::retry_after(&err)? => {}
            _ if is_no_space(&err) => return Err(refused()),
            // EOPNOTSUPP, or a limit on this process (EFBIG under RLIMIT_FSIZE) that the
            // output's own writes will meet and report at the byte where they fail.
            _ => return Ok(false),
        }
    }
}

/// Takes `bytes` in `dir` for the output `name` (see [`Claim`]): fallocate, the margin
/// checked again with every other claim counted, then the blocks given back.
/// `output` is the output's own descriptor: what it has written is taken off this claim
/// when this process claims again (see [`OWN_CLAIMS`]).
fn claim(
    dir: &Path,
    name: &str,
    bytes: u64,
    min_free: Option<u64>,
    output: &File,
) -> Result<Claim> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let owner = Owner::this();
    let path = dir.join(format!("{CLAIM_PREFIX}{}-{}", owner.pid, owner.tag(seq)));
    let refused = |when: &str| -> anyhow::Error {
        let claims = claimed(dir, Some(&path));
        match space(dir) {
            Ok(mut space) => {
                space.available = space.available.saturating_sub(claims.total());
                let margin = min_free.unwrap_or_else(|| default_margin(space));
                let less = claims
                    .explain()
                    .map_or_else(String::new, |who| format!(" (less {who})"));
                let (needed, free) = crate::units::format_size_pair(bytes, space.available);
                input(format!(
                    "write {name}: not enough free space {when}: {needed} needed, {free} free of {}{less}, and {} must stay free (set with --min-free)",
                    format_size(space.total),
                    format_size(margin),
                ))
            }
            Err(e) => e,
        }
    };
    let file = open_interruptible(
        &path,
        libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
        0o600,
    )?
    .map_err(|e| {
        if is_no_space(&e) {
            refused("for its claim (no inode left)")
        } else {
            input(format!(
                "write {name}: create its space claim {}: {}",
                crate::text::printable_path(&path),
                describe(&e)
            ))
        }
    })?;
    let mut claim = Claim {
        _registration: crate::interrupt::Registration::new(&path),
        id: file_id(&file),
        path: path.clone(),
        file,
        _entry: None,
    };
    if let (Some(id), Ok(output)) = (claim.id, output.try_clone()) {
        own_claims().push((id, output));
    }
    let Ok(len) = libc::off_t::try_from(bytes) else {
        return Err(refused("to reserve"));
    };
    // The claim is visible (its size) before any block is taken, and the margin is checked
    // with every other live claim counted before allocating: a writer already writing is
    // never starved by another's reservation, which happens only where the space is there
    // even with the other's whole claim counted.
    claim
        .file
        .set_len(bytes)
        .with_context(|| format!("write {name}: size its space claim"))?;
    // Registered for the whole file system, so writers in other directories count it too.
    use std::os::unix::fs::MetadataExt;
    let dev = claim
        .file
        .metadata()
        .with_context(|| format!("write {name}: stat its space claim"))?
        .dev();
    claim._entry = RegistryEntry::new(dev, &claim.path, seq, bytes);
    let file = &claim.file;
    let before = space_less_claims(dir, Some(&claim.path))?;
    let margin = min_free.unwrap_or_else(|| default_margin(before));
    if Footprint::of_file(bytes, before.block).bytes > before.available.saturating_sub(margin) {
        return Err(refused("with what is claimed"));
    }
    let allocated = len > 0 && allocate(file, len, || refused("to reserve"))?;
    if allocated {
        let space = space_less_claims(dir, Some(&claim.path))?;
        let margin = min_free.unwrap_or_else(|| default_margin(space));
        if space.available < margin {
            return Err(refused(
                "once reserved (another writer took space at the same time)",
            ));
        }
    }
    // The blocks go back; the size stays as the claim (a sparse file takes no blocks).
    // Synced, so the journal commit of these block changes is not left to the output's
    // first timed fsync.
    let released = file
        .set_len(0)
        .and_then(|()| file.set_len(bytes))
        .and_then(|()| file.sync_all());
    released.with_context(|| format!("write {name}: release its space claim"))?;
    Ok(claim)
}

/// Creates `path` to hold `bytes` bytes, after every safety check: an existing file needs
/// `force` (and is replaced only when the new one is finished), a symbolic link is refused,
/// and the free space is claimed at once (see [`Claim`]), so two writers at once cannot
/// both pass the check and then both fill the disk: the later one is refused up front.
pub fn create_output(path: &Path, bytes: u64, policy: CreatePolicy) -> Result<OutputFile> {
    let name = display_name(path);
    // O_NOFOLLOW: a symbolic link put in place after the check below fails the open.
    let mut flags = libc::O_WRONLY | libc::O_NOFOLLOW;
    // A FIFO or device given with --force is the user's: never removed.
    let mut is_special = false;
    let mut out_kind = InputKind::Regular;
    let mut replaces = None;
    let mut mode = 0o644;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(symlink_refusal(path, &format!("write {name}")));
        }
        Ok(meta) => {
            let kind = classify(&meta.file_type(), &name, "write", policy.allow_device)?;
            out_kind = kind;
            if !policy.force {
                return Err(input(format!(
                    "write {name}: file exists ({}); refusing to overwrite it without --force",
                    format_size(meta.len())
                )));
            }
            match kind {
                InputKind::Regular => {
                    // Written under a new name and renamed over the old file only once
                    // complete: an interrupted or failed write leaves the old one whole.
                    // The new file gets the old one's permission bits.
                    use std::os::unix::fs::PermissionsExt;
                    replaces = Some(path.to_path_buf());
                    mode = meta.permissions().mode() & 0o7777;
                    flags |= libc::O_CREAT | libc::O_EXCL;
                }
                InputKind::Stream => is_special = true,
                InputKind::BlockDevice | InputKind::CharDevice => is_special = true,
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            flags |= libc::O_CREAT | libc::O_EXCL;
        }
        Err(e) => return Err(input(format!("write {name}: {}", describe(&e)))),
    }
    let parent = parent_dir(path);
    if !is_special {
        if !parent.is_dir() {
            return Err(input(format!(
                "write {name}: directory {} does not exist",
                crate::text::printable_path(&parent)
            )));
        }
        // A replaced file stays until its successor is complete: its space is not free.
        let claims = claimed(&parent, None);
        let mut space = space(&parent)?;
        space.available = space.available.saturating_sub(claims.total());
        let need = Footprint::of_file(bytes, space.block);
        ensure_room_for(space, &name, need, 0, policy.min_free).map_err(|e| {
            match claims.explain() {
                Some(who) => input(format!("{e}; of what is free, {who} counts as taken")),
                None => e,
            }
        })?;
        // The claim beside it takes an inode too.
        if space.inodes_available < 2 {
            return Err(input(format!(
                "write {name}: not enough free inodes: 2 files needed (it and its space claim), {} can still be created",
                space.inodes_available
            )));
        }
    }
    let write_path = match &replaces {
        Some(old) => {
            let base = old
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            parent_dir(old).join(format!(".{base}.ioscope-new-{}", std::process::id()))
        }
        None => path.to_path_buf(),
    };
    let file = match open_interruptible(&write_path, flags, mode)? {
        Ok(file) => file,
        // EEXIST (O_EXCL) or ELOOP (O_NOFOLLOW): something appeared since the check.
        Err(_) if write_path == path && refuse_symlink(path, &format!("write {name}")).is_err() => {
            return Err(symlink_refusal(path, &format!("write {name}")));
        }
        Err(e) => {
            return Err(input(format!(
                "create {name} for writing: {}",
                describe(&e)
            )));
        }
    };
    let registration = if is_special {
        crate::interrupt::Registration::none()
    } else {
        crate::interrupt::Registration::new(&write_path)
    };
    let mut output = OutputFile {
        id: file_id(&file),
        file,
        path: write_path,
        replaces,
        name,
        kind: out_kind,
        remove_on_drop: !is_special,
        registration,
        claim: None,
    };
    if !is_special {
        // On a refusal the output is dropped, and so removed.
        output.claim = Some(claim(
            &parent,
            &output.name,
            bytes,
            policy.min_free,
            &output.file,
        )?);
    }
    Ok(output)
}

/// The most bytes this process may write to one file (`RLIMIT_FSIZE`), if limited.
pub fn file_size_limit() -> Option<u64> {
    // SAFETY: getrlimit only writes the struct we pass.
    let mut limit: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_FSIZE, &mut limit) } != 0 {
        return None;
    }
    (limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

/// Creates a scratch file `.ioscope-TAG-PID` in `dir` (removed on drop unless kept).
pub fn create_scratch(
    dir: &Path,
    tag: &str,
    bytes: u64,
    min_free: Option<u64>,
) -> Result<OutputFile> {
    let path = dir.join(format!(".ioscope-{tag}-{}", std::process::id()));
    if let Some(limit) = file_size_limit()
        && bytes > limit
    {
        // The kernel would end the process with SIGXFSZ at the first byte past it (in the
        // space claim's ftruncate even), leaving the scratch file and its claim behind.
        return Err(input(format!(
            "write {}: {} is more than this process may write to one file ({}, ulimit -f)",
            display_name(&path),
            format_size(bytes),
            format_size(limit)
        )));
    }
    create_output(
        &path,
        bytes,
        CreatePolicy {
            min_free,
            ..CreatePolicy::default()
        },
    )
}

impl OutputFile {
    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The path it was created at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The name to show in messages.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What it is: a regular file, or a FIFO or device written in place.
    pub fn kind(&self) -> InputKind {
        self.kind
    }

    /// Keeps the file: it is complete and belongs to the user now (with `--force`, it takes
    /// the old file's place only now, unless a symbolic link was put there meanwhile).
    pub fn finish(mut self) -> Result<()> {
        if let Some(old) = &self.replaces {
            refuse_symlink(old, &format!("write {}", self.name))?;
            std::fs::rename(&self.path, old)
                .with_context(|| format!("rename the new {} over the old one", self.name))?;
        }
        self.registration.keep();
        self.remove_on_drop = false;
        self.claim = None;
        Ok(())
    }

    /// Gives up the free-space claim now that the writer was admitted and its file made:
    /// for a writer that may be killed without unwinding (an MPI rank blocked in a
    /// collective, then SIGKILLed), so that no claim file outlives it.
    pub fn release_claim(&mut self) {
        self.claim = None;
    }

    /// Keeps the file on drop when `keep` is true (for `--keep`).
    pub fn keep_on_drop(&mut self, keep: bool) {
        if keep {
            self.registration.keep();
            self.remove_on_drop = false;
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if self.remove_on_drop {
            // The file is still open here, so its inode is still ours.
            remove_if_same(&self.path, self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_byte_file_takes_a_whole_block_and_its_metadata() {
        assert_eq!(Footprint::of_file(1, 4096).bytes, 2 * 4096);
        assert_eq!(Footprint::of_file(0, 4096).bytes, 4096);
        assert_eq!(Footprint::of_file(4097, 4096).bytes, 3 * 4096);
        let mut many = Footprint::default();
        for _ in 0..8000 {
            many.add(1, 4096);
        }
        assert_eq!(many.files, 8000);
        assert_eq!(many.bytes, 8000 * 2 * 4096);
    }

    #[test]
    fn the_margin_refuses_tiny_files_by_blocks_and_by_inodes() {
        let space = Space {
            total: 40 << 20,
            available: 30 << 20,
            block: 4096,
            inodes_available: 10_000,
        };
        let mut tiny = Footprint::default();
        for _ in 0..8000 {
            tiny.add(1, 4096);
        }
        // 8,000 bytes of data, but 62.5 MiB of blocks: refused with 10 MiB to keep.
        let err = ensure_room_for(space, "x", tiny, 0, Some(10 << 20)).unwrap_err();
        assert!(format!("{err}").contains("8000 files"), "{err}");
        let few = Footprint {
            files: 20_000,
            data: 0,
            bytes: 4096,
        };
        let err = ensure_room_for(space, "x", few, 0, Some(0)).unwrap_err();
        assert!(format!("{err}").contains("inodes"), "{err}");
    }

    #[test]
    fn room_is_the_largest_file_whose_footprint_fits() {
        for (available, block) in [(64 << 20, 4096), (1 << 40, 65536), (3 * 4096, 4096)] {
            let space = Space {
                total: 2 * available,
                available,
                block,
                inodes_available: 1,
            };
            let room = room_in(space, Some(0));
            let fits = Footprint::of_file(room, block).bytes;
            assert!(fits <= available, "{room} for {available}");
            let over = Footprint::of_file(room + block, block).bytes;
            assert!(
                over > available,
                "{room} for {available}: one more block still fits"
            );
        }
    }
}
