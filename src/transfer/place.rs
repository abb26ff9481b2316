//! Where a received file goes, inside the receiver's directory and nowhere else. Parent
//! directories are opened one component at a time without following links (`O_NOFOLLOW`)
//! and kept open for the connection, so the files after the first in a directory cost no
//! path walk and no `lstat`. A file is written unnamed (`O_TMPFILE`) and given its name by
//! `linkat` only once it is verified: `linkat` never replaces a name, so an existing file is
//! never overwritten, and an unnamed file that is never published vanishes with its
//! descriptor. With `--force` (which must replace) the verified unnamed file is linked to a
//! temporary `.ioscope-recv-*` name and at once renamed over the old one: no other process
//! can reach it by name (and truncate it under a mapping) while it is received. Where the
//! file system has no `O_TMPFILE` (found out once per directory), the file is written under
//! such a temporary name, removed on drop unless renamed into place.

use anyhow::{Context, Result, anyhow};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::{AtomicU8, Ordering};

/// Directories opened this connection, at most this many (then they are closed and
/// opened again as needed): bounded descriptors whatever the sender's names.
const MAX_OPEN: usize = 256;

/// Files over this size are refused before their bytes arrive when their name exists;
/// smaller ones when they are published (one lookup less per small file).
pub const CHECK_FIRST: u64 = 64 << 10;

/// Refuses a name that exists and is not a regular file, or exists at all without
/// `replace`.
fn existing(dir: RawFd, name: &CStr, replace: bool) -> std::result::Result<(), String> {
    // SAFETY: stat is plain data the call fills.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: an open directory, a live C string and the stat above.
    let r = unsafe { libc::fstatat(dir, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r != 0 {
        return Ok(());
    }
    if st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Err("exists and is not a regular file; refused".into());
    }
    if !replace {
        return Err(format!(
            "exists ({}); refusing to overwrite it without --force",
            crate::units::format_size(st.st_size as u64)
        ));
    }
    Ok(())
}

/// An open directory under the receiver's, and what was learnt about it.
struct Dir {
    fd: Rc<OwnedFd>,
    path: PathBuf,
    /// Whether `O_TMPFILE` works here (`None`: not tried yet).
    tmpfile: Option<bool>,
}

/// The receiver's directory and the directories under it opened so far.
pub struct Dirs {
    root: Dir,
    open: HashMap<Vec<u8>, Dir>,
    /// Whether a file keeps the sender's mode whole (`--keep-mode`): set by chmod before
    /// it is published. Otherwise open gives it the sender's `rwx` bits less the umask (or
    /// as a default ACL decides), as for any file the receiver's user makes.
    keep_mode: bool,
    /// Directories made for the file being created (its parent, name and key), removed
    /// again by [`Dirs::unmake`] when that file is refused.
    made: Vec<(Rc<OwnedFd>, CString, Vec<u8>)>,
    /// Whether `/proc/self/fd` can name an unnamed file for `linkat`.
    proc_fd: bool,
    pid: u32,
}

/// The number in the next temporary name: one count for the whole process, as several
/// connections may write into one directory at once.
static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn cstr(bytes: &[u8]) -> Result<CString> {
    CString::new(bytes).map_err(|_| anyhow!("a NUL in a name"))
}

fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// `openat(at, name, O_DIRECTORY | O_NOFOLLOW)`: a link is refused.
fn open_dir(at: RawFd, name: &CStr) -> std::io::Result<OwnedFd> {
    open_dir_with(at, name, libc::O_NOFOLLOW)
}

/// `openat(at, name, O_DIRECTORY | flags)`.
fn open_dir_with(at: RawFd, name: &CStr, flags: libc::c_int) -> std::io::Result<OwnedFd> {
    // SAFETY: `at` is an open directory (or AT_FDCWD) and `name` a live C string.
    let fd = unsafe {
        libc::openat(
            at,
            name.as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | flags,
        )
    };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: a new descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl Dir {
    fn new(fd: OwnedFd, path: PathBuf) -> Self {
        Dir {
            fd: Rc::new(fd),
            path,
            tmpfile: None,
        }
    }
}

impl Dirs {
    /// Opens the receiver's directory for one connection; files keep the sender's mode
    /// whole with `keep_mode`. The directory itself may be a link (the user named it);
    /// links are refused only inside it.
    pub fn open(root: &Path, keep_mode: bool) -> Result<Self> {
        let c = cstr(root.as_os_str().as_bytes())?;
        let fd = open_dir_with(libc::AT_FDCWD, &c, 0).map_err(|e| {
            anyhow!(
                "open {}: {}",
                crate::text::printable_path(root),
                crate::files::describe(&e)
            )
        })?;
        Ok(Dirs {
            root: Dir::new(fd, root.to_path_buf()),
            open: HashMap::new(),
            made: Vec::new(),
            keep_mode,
            proc_fd: Path::new("/proc/self/fd").is_dir(),
            pid: std::process::id(),
        })
    }

    /// The space on the file system of the receiver's directory (fstatvfs on the open
    /// directory: no path walk per file) and its number of inodes (0 where not counted).
    pub fn space(&self) -> Result<(crate::files::Space, u64)> {
        // SAFETY: statvfs is plain data the call fills.
        let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
        // SAFETY: an open directory and the struct above.
        if unsafe { libc::fstatvfs(self.root.fd.as_raw_fd(), &mut st) } != 0 {
            return Err(errno()).with_context(|| {
                format!("statvfs {}", crate::text::printable_path(&self.root.path))
            });
        }
        Ok((crate::files::Space::of(&st), st.f_files as u64))
    }

    /// The directory that holds the last of `parts`, its parents opened (and created)
    /// inside the receiver's directory, links refused.
    fn parent(&mut self, parts: &[&[u8]]) -> std::result::Result<&mut Dir, String> {
        let parents = &parts[..parts.len() - 1];
        if parents.is_empty() {
            return Ok(&mut self.root);
        }
        let key = parents.join(&b'/');
        if !self.open.contains_key(&key) {
            let mut at = Rc::clone(&self.root.fd);
            let mut path = self.root.path.clone();
            let mut prefix = Vec::new();
            for (i, part) in parents.iter().enumerate() {
                if i > 0 {
                    prefix.push(b'/');
                }
                prefix.extend_from_slice(part);
                path.push(std::ffi::OsStr::from_bytes(part));
                if let Some(d) = self.open.get(&prefix) {
                    at = Rc::clone(&d.fd);
                    continue;
                }
                let name = cstr(part).map_err(|e| format!("{e:#}"))?;
                let fd = match open_dir(at.as_raw_fd(), &name) {
                    Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                        // SAFETY: an open directory and a live C string.
                        if unsafe { libc::mkdirat(at.as_raw_fd(), name.as_ptr(), 0o777) } != 0 {
                            let e = errno();
                            if e.raw_os_error() != Some(libc::EEXIST) {
                                return Err(format!(
                                    "create {}: {}",
                                    crate::text::printable_path(&path),
                                    crate::files::describe(&e)
                                ));
                            }
                        } else {
                            self.made
                                .push((Rc::clone(&at), name.clone(), prefix.clone()));
                        }
                        open_dir(at.as_raw_fd(), &name)
                    }
                    other => other,
                };
                let fd = fd.map_err(|e| match e.raw_os_error() {
                    Some(libc::ENOTDIR) | Some(libc::ELOOP) => format!(
                        "{} is not a directory (links are not followed)",
                        crate::text::printable_path(&path)
                    ),
                    _ => format!(
                        "open {}: {}",
                        crate::text::printable_path(&path),
                        crate::files::describe(&e)
                    ),
                })?;
                let dir = Dir::new(fd, path.clone());
                at = Rc::clone(&dir.fd);
                // Checked at every component: one deep name could hold thousands open.
                // The directory being walked stays open through `at`.
                if self.open.len() >= MAX_OPEN {
                    self.open.clear();
                }
                self.open.insert(prefix.clone(), dir);
            }
        }
        Ok(self.open.get_mut(&key).expect("opened just above"))
    }

    /// Creates the file that will become `parts` (checked by
    /// [`super::proto::confined`]), of `size` bytes, with the sender's permission bits
    /// `mode` (less the umask, without setuid, setgid and sticky, unless `keep_mode`): refused
    /// when the name exists and is not a regular file, or exists at all without `replace`.
    /// Without `replace`, a name is only looked up first for a file over
    /// [`CHECK_FIRST`] bytes (so no bytes are received in vain); publishing refuses an
    /// existing name anyway, with the same words.
    pub fn create(
        &mut self,
        parts: &[&[u8]],
        size: u64,
        mode: u32,
        replace: bool,
    ) -> std::result::Result<Incoming, String> {
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed) + 1;
        // Directories made for the files before this one stay: those files arrived.
        self.made.clear();
        let (keep_mode, proc_fd, pid) = (self.keep_mode, self.proc_fd, self.pid);
        let dir = self.parent(parts)?;
        let name = cstr(parts[parts.len() - 1]).map_err(|e| format!("{e:#}"))?;
        let shown = dir
            .path
            .join(std::ffi::OsStr::from_bytes(parts[parts.len() - 1]));
        if replace || size > CHECK_FIRST {
            existing(dir.fd.as_raw_fd(), &name, replace)?;
        }
        let whole = mode & 0o7777;
        let mode = mode & 0o777;
        let fd = dir.fd.as_raw_fd();
        let flags = libc::O_RDWR | libc::O_CLOEXEC;
        let mut temp = None;
        let mut file = None;
        if proc_fd && dir.tmpfile != Some(false) {
            // SAFETY: an open directory and a static C string.
            let f = unsafe { libc::openat(fd, c".".as_ptr(), flags | libc::O_TMPFILE, mode) };
            if f >= 0 {
                dir.tmpfile = Some(true);
                // SAFETY: a new descriptor owned by nobody else.
                file = Some(unsafe { File::from_raw_fd(f) });
            } else {
                let e = errno();
                match e.raw_os_error() {
                    Some(libc::EOPNOTSUPP) | Some(libc::EISDIR) | Some(libc::EINVAL) => {
                        dir.tmpfile = Some(false);
                    }
                    _ => {
                        return Err(format!(
                            "create a file in {}: {}",
                            crate::text::printable_path(&dir.path),
                            crate::files::describe(&e)
                        ));
                    }
                }
            }
        }
        let file = match file {
            Some(f) => f,
            None => {
                let t = format!(".ioscope-recv-{pid}-{serial}");
                let c = cstr(t.as_bytes()).map_err(|e| format!("{e:#}"))?;
                // SAFETY: an open directory and a live C string.
                let f = unsafe {
                    libc::openat(
                        fd,
                        c.as_ptr(),
                        flags | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW,
                        mode,
                    )
                };
                if f < 0 {
                    return Err(format!(
                        "create {}: {}",
                        crate::text::printable_path(&dir.path.join(&t)),
                        crate::files::describe(&errno())
                    ));
                }
                temp = Some(c);
                // SAFETY: a new descriptor owned by nobody else.
                unsafe { File::from_raw_fd(f) }
            }
        };
        Ok(Incoming {
            file,
            dir: Rc::clone(&dir.fd),
            name,
            shown,
            // With --force an unnamed file still needs a name of its own to be renamed over
            // the old one: given only at publication, once every byte is verified, so no
            // one can truncate it under a mapping while it is received.
            link_temp: (replace && temp.is_none()).then(|| {
                cstr(format!(".ioscope-recv-{pid}-{serial}").as_bytes())
                    .expect("a name of ASCII digits has no NUL")
            }),
            temp,
            mode: keep_mode.then_some(whole),
            published: false,
        })
    }

    /// Removes the directories made for the last file created (it was refused), deepest
    /// first; one that holds something else by now stays.
    pub fn unmake(&mut self) {
        while let Some((at, name, key)) = self.made.pop() {
            self.open.remove(&key);
            // SAFETY: an open directory and a live C string.
            unsafe { libc::unlinkat(at.as_raw_fd(), name.as_ptr(), libc::AT_REMOVEDIR) };
        }
    }
}

/// A file being received: unnamed, or under a temporary name removed on drop unless
/// published.
pub struct Incoming {
    /// The open file, new and empty.
    pub file: File,
    dir: Rc<OwnedFd>,
    name: CString,
    shown: PathBuf,
    /// With `--force` and an unnamed file: the temporary name it is linked to at
    /// publication, just before it is renamed over the old file.
    link_temp: Option<CString>,
    temp: Option<CString>,
    /// The mode to set before publishing (`None`: open gave it already).
    mode: Option<u32>,
    published: bool,
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if let (Some(t), false) = (&self.temp, self.published) {
            // SAFETY: an open directory and a live C string.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), t.as_ptr(), 0) };
        }
    }
}

impl Incoming {
    /// Sets the mode, fsyncs when `sync`, and gives the file its name; without `replace`
    /// an existing name (one that appeared meanwhile) is refused, never replaced.
    pub fn publish(mut self, sync: bool, replace: bool) -> Result<()> {
        let shown = crate::text::lossless(self.shown.as_os_str());
        if let Some(mode) = self.mode {
            use std::os::unix::fs::PermissionsExt;
            self.file
                .set_permissions(std::fs::Permissions::from_mode(mode))
                .with_context(|| format!("chmod {shown}"))?;
        }
        if sync {
            self.file
                .sync_all()
                .with_context(|| format!("fsync {shown}"))?;
        }
        let dir = self.dir.as_raw_fd();
        // The name exists: said as `create` would have said it (it may also have appeared
        // while the file was received).
        let appeared = || match existing(dir, &self.name, false) {
            Err(why) => anyhow!("{why}"),
            Ok(()) => anyhow!(
                "{shown} appeared while it was received; refusing to overwrite it without --force"
            ),
        };
        if let (None, Some(link_temp)) = (&self.temp, &self.link_temp) {
            link_unnamed(&self.file, dir, link_temp)
                .with_context(|| format!("link {shown} into place"))?;
            // SAFETY: an open directory and live C strings.
            if unsafe { libc::renameat2(dir, link_temp.as_ptr(), dir, self.name.as_ptr(), 0) } != 0
            {
                let e = errno();
                // SAFETY: as above; the temporary name is ours, just made.
                unsafe { libc::unlinkat(dir, link_temp.as_ptr(), 0) };
                return Err(e).with_context(|| format!("rename into {shown}"));
            }
            self.published = true;
            return Ok(());
        }
        let Some(temp) = &self.temp else {
            if let Err(e) = link_unnamed(&self.file, dir, &self.name) {
                if e.raw_os_error() == Some(libc::EEXIST) {
                    return Err(appeared());
                }
                return Err(e).with_context(|| format!("link {shown} into place"));
            }
            self.published = true;
            return Ok(());
        };
        let flags = if replace { 0 } else { libc::RENAME_NOREPLACE };
        // SAFETY: an open directory and live C strings.
        let r = unsafe { libc::renameat2(dir, temp.as_ptr(), dir, self.name.as_ptr(), flags) };
        if r == 0 {
            self.published = true;
            return Ok(());
        }
        let e = errno();
        match e.raw_os_error() {
            Some(libc::EEXIST) => Err(appeared()),
            Some(libc::EINVAL) | Some(libc::ENOSYS) if !replace => {
                // A file system without RENAME_NOREPLACE: link then unlink never replaces.
                // SAFETY: an open directory and live C strings.
                if unsafe { libc::linkat(dir, temp.as_ptr(), dir, self.name.as_ptr(), 0) } != 0 {
                    let e = errno();
                    if e.raw_os_error() == Some(libc::EEXIST) {
                        return Err(appeared());
                    }
                    return Err(e).with_context(|| format!("link {shown} into place"));
                }
                Ok(()) // Drop unlinks the temporary name.
            }
            _ => Err(e).with_context(|| format!("rename into {shown}")),
        }
    }
}

/// Whether `linkat(fd, "", …, AT_EMPTY_PATH)` works for this process: 0 not tried, 1 yes,
/// 2 no (before Linux 6.10 it needs CAP_DAC_READ_SEARCH; then /proc/self/fd names the file).
static EMPTY_PATH: AtomicU8 = AtomicU8::new(0);

/// Gives the unnamed `file` the name `name` in `dir`; fails with EEXIST when it exists.
/// `AT_EMPTY_PATH` where the kernel allows it (one path lookup less: 4.7 against 7.8 µs a
/// call on this VM), else through `/proc/self/fd/N`.
fn link_unnamed(file: &File, dir: RawFd, name: &CStr) -> std::io::Result<()> {
    if EMPTY_PATH.load(Ordering::Relaxed) != 2 {
        // SAFETY: an open file, an open directory and live C strings.
        let r = unsafe {
            libc::linkat(
                file.as_raw_fd(),
                c"".as_ptr(),
                dir,
                name.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        if r == 0 {
            EMPTY_PATH.store(1, Ordering::Relaxed);
            return Ok(());
        }
        let e = errno();
        let refused = matches!(e.raw_os_error(), Some(libc::ENOENT) | Some(libc::EPERM));
        if !refused || EMPTY_PATH.load(Ordering::Relaxed) == 1 {
            return Err(e);
        }
        EMPTY_PATH.store(2, Ordering::Relaxed);
    }
    let from =
        CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).expect("no NUL in a number");
    // SAFETY: live C strings; the descriptor is open, so /proc names it.
    let r = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            dir,
            name.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if r == 0 { Ok(()) } else { Err(errno()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deep_name_keeps_at_most_max_open_directories_open() {
        let root = tempfile::tempdir().expect("a temporary directory");
        let mut dirs = Dirs::open(root.path(), false).expect("open it");
        let mut parts = vec![&b"d"[..]; 2 * MAX_OPEN];
        parts.push(b"f");
        let incoming = dirs.create(&parts, 1, 0o644, false).expect("create");
        assert!(dirs.open.len() <= MAX_OPEN, "{} open", dirs.open.len());
        drop(incoming);
        let mut sibling = parts.clone();
        *sibling.last_mut().expect("a name") = b"g";
        dirs.create(&sibling, 1, 0o644, false)
            .expect("create beside it");
        assert!(dirs.open.len() <= MAX_OPEN, "{} open", dirs.open.len());
    }
}
