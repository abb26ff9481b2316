//! What each traced file was to the program: its data, or what it opened only to load
//! itself and talk to its surroundings (the dynamic loader's cache and the shared libraries
//! it maps, locale files, /proc and /sys, `/dev/null`-style character devices, pipes and
//! sockets). Judged by what the file is (its type as `stat` saw it, where it lives, whether
//! it was mapped) and by the bytes it moved, not by a list of names: a file of the second
//! kind that carried most of the bytes (`dd if=/dev/zero of=/dev/null`, `cat libc.so.6`) is
//! the program's data after all.

use crate::trace::claims::DATA_SHARE;
use crate::trace::tally::{FileKind, FileStats, NO_FILE};

/// What a file was to the program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Its data: what a reader of the trace came for.
    Data,
    /// Opened to load itself or its locale, or to talk (a pipe, a terminal, /proc).
    Loading,
}

/// Directories whose files a program reads to start rather than as its data, when it maps
/// them or moves no bytes in them (a failed open while the loader searches, a probe).
const SYSTEM_DIRS: &[&str] = &["/etc/", "/usr/", "/lib/", "/lib32/", "/lib64/", "/libx32/"];

/// Whether the file can hold data a program stores: a regular file or a block device (not
/// a pipe, socket, character device, directory, or a /proc or /sys file). Where the trace
/// could not see its type (an older report), an absolute path outside /dev, /proc and /sys.
pub fn stores_data(f: &FileStats) -> bool {
    let virtual_fs = ["/proc/", "/sys/"].iter().any(|p| f.path.starts_with(p));
    match f.kind {
        Some(FileKind::Regular | FileKind::BlockDevice) => !virtual_fs,
        Some(_) => false,
        None => f.path.starts_with('/') && !virtual_fs && !f.path.starts_with("/dev/"),
    }
}

/// Whether a path names a shared library (`libc.so.6`, `x.so`), the loader's cache or
/// preload list, or a locale, character-set or time-zone file: what the loader and the C
/// library open before `main`, or to print a number or a date.
fn loader_or_locale_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let shared_object = name.ends_with(".so")
        || name
            .split(".so.")
            .nth(1)
            .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    shared_object || name.starts_with("ld.so.") || locale_path(path)
}

/// Whether a path names a locale, character-set or time-zone file.
fn locale_path(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name == "localtime"
        || path.split('/').any(|c| {
            ["locale", "gconv", "zoneinfo", "i18n"].contains(&c) || c.starts_with("locale.")
        })
}

/// Whether the file is of the kind a program opens to load itself or to talk, whatever its
/// bytes: see the module's note.
pub fn loading_kind(f: &FileStats) -> bool {
    if f.path == NO_FILE {
        return true;
    }
    if ["/proc/", "/sys/"].iter().any(|p| f.path.starts_with(p)) {
        return true;
    }
    let plumbing = match f.kind {
        Some(k) => !matches!(k, FileKind::Regular | FileKind::BlockDevice),
        None => {
            ["pipe:[", "socket:[", "anon_inode:"]
                .iter()
                .any(|p| f.path.starts_with(p))
                || f.path.starts_with("/dev/")
        }
    };
    if plumbing {
        return true;
    }
    if f.bytes_written > 0 {
        return false;
    }
    let mapped = f.calls.get("mmap").is_some_and(|s| s.calls > s.errors);
    let moved_nothing = f.bytes_read == 0;
    let in_system_dir = SYSTEM_DIRS.iter().any(|d| f.path.starts_with(d));
    loader_or_locale_path(&f.path) || (in_system_dir && (mapped || moved_nothing))
}

/// The words [`kind_words`] gives, in the order a summary names them.
pub const KIND_ORDER: &[&str] = &[
    "libraries",
    "locale files",
    "other system files",
    "/proc and /sys",
    "devices",
    "pipes",
    "sockets",
    "other",
    "calls on no file",
];

/// What kind of loading file `f` is, in a summary's words (one of [`KIND_ORDER`]).
pub fn kind_words(f: &FileStats) -> &'static str {
    if f.path == NO_FILE {
        return "calls on no file";
    }
    if ["/proc/", "/sys/"].iter().any(|p| f.path.starts_with(p)) {
        return "/proc and /sys";
    }
    match f.kind {
        Some(FileKind::CharDevice) => return "devices",
        Some(FileKind::Pipe) => return "pipes",
        Some(FileKind::Socket) => return "sockets",
        Some(FileKind::Directory | FileKind::Other) => return "other",
        _ => {}
    }
    if f.kind.is_none() {
        if f.path.starts_with("pipe:[") {
            return "pipes";
        }
        if f.path.starts_with("socket:[") {
            return "sockets";
        }
        if f.path.starts_with("/dev/") {
            return "devices";
        }
        if f.path.starts_with("anon_inode:") {
            return "other";
        }
    }
    if locale_path(&f.path) {
        return "locale files";
    }
    if loader_or_locale_path(&f.path) {
        return "libraries";
    }
    if f.calls.get("mmap").is_some_and(|s| s.calls > s.errors) {
        return "libraries";
    }
    "other system files"
}

/// Each file's role, in the order of `files`: a file of the loading kind is the program's
/// data only where it carried most of the bytes: more than the other files together, and
/// at least [`DATA_SHARE`] of all the bytes moved (`dd if=/dev/zero of=/dev/null`: the two
/// devices, not the few bytes the loader read).
pub fn roles(files: &[FileStats]) -> Vec<Role> {
    let moved = |f: &FileStats| f.bytes_read + f.bytes_written;
    let kinds: Vec<bool> = files.iter().map(loading_kind).collect();
    let data_bytes: u64 = files
        .iter()
        .zip(&kinds)
        .filter(|(_, k)| !**k)
        .map(|(f, _)| moved(f))
        .sum();
    let all: u64 = files.iter().map(moved).sum();
    files
        .iter()
        .zip(&kinds)
        .map(|(f, &loading)| {
            let most = moved(f) > data_bytes && moved(f) as f64 >= DATA_SHARE * all as f64;
            if loading && !most {
                Role::Loading
            } else {
                Role::Data
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::tally::CallStats;

    fn file(path: &str, kind: Option<FileKind>, read: u64, written: u64, mmap: u64) -> FileStats {
        let mut f: FileStats = serde_json::from_value(serde_json::json!({
            "path": path, "calls": {}, "bytes_read": read, "bytes_written": written,
            "syncs": 0, "sync_nanos": 0, "seeks": 0,
            "offsets": {"width": 4096, "counts": vec![0; 32]},
            "timeline": {"stride": 0, "offsets": [], "seen": 0}
        }))
        .expect("a file's JSON");
        f.kind = kind;
        if mmap > 0 {
            f.calls.insert(
                "mmap".into(),
                CallStats {
                    calls: mmap,
                    ..CallStats::default()
                },
            );
        }
        f
    }

    const REG: Option<FileKind> = Some(FileKind::Regular);
    const CHR: Option<FileKind> = Some(FileKind::CharDevice);

    #[test]
    fn dd_from_dev_zero_keeps_only_its_output_file_as_data() {
        let files = [
            file("/dev/zero", CHR, 64 << 20, 0, 0),
            file("/tmp/x", REG, 0, 64 << 20, 0),
            file("/usr/lib/x86_64-linux-gnu/libc.so.6", REG, 2368, 0, 4),
            file("/etc/ld.so.cache", REG, 0, 0, 1),
            file("/etc/locale.alias", REG, 2998, 0, 0),
            file("/usr/lib/locale/C.UTF-8/LC_CTYPE", None, 0, 0, 0),
            file("pipe:[950781]", Some(FileKind::Pipe), 0, 94, 0),
        ];
        let roles = roles(&files);
        let data: Vec<&str> = files
            .iter()
            .zip(&roles)
            .filter(|(_, r)| **r == Role::Data)
            .map(|(f, _)| f.path.as_str())
            .collect();
        assert_eq!(data, vec!["/tmp/x"]);
    }

    #[test]
    fn devices_that_carry_most_of_the_bytes_are_the_data() {
        // dd if=/dev/zero of=/dev/null: nothing else moved a byte.
        let files = [
            file("/dev/zero", CHR, 1 << 20, 0, 0),
            file("/dev/null", CHR, 0, 1 << 20, 0),
            file("/usr/lib/libc.so.6", REG, 832, 0, 4),
        ];
        assert_eq!(roles(&files), vec![Role::Data, Role::Data, Role::Loading]);
        // cat of a library: it read the whole of it, more than anything else moved.
        let files = [
            file("/usr/lib/libc.so.6", REG, 2 << 20, 0, 4),
            file("/tmp/copy", REG, 0, 1 << 10, 0),
        ];
        assert_eq!(roles(&files), vec![Role::Data, Role::Data]);
    }

    #[test]
    fn a_configuration_file_a_program_reads_as_its_input_is_data() {
        // cat /etc/hosts > /tmp/out: /etc/hosts is read, not mapped, not a locale.
        let files = [
            file("/etc/hosts", REG, 200, 0, 0),
            file("/tmp/out", REG, 0, 200, 0),
            file("/etc/nsswitch.conf", REG, 0, 0, 0),
        ];
        assert_eq!(roles(&files), vec![Role::Data, Role::Data, Role::Loading]);
    }

    #[test]
    fn the_kind_decides_where_the_path_would_not() {
        // A regular file named like a device path is data; a pipe with any name is not.
        assert!(!loading_kind(&file("/dev/shm/data", REG, 1, 0, 0)));
        assert!(loading_kind(&file(
            "/home/u/fifo",
            Some(FileKind::Pipe),
            1,
            0,
            0
        )));
        assert!(loading_kind(&file("/proc/1/status", REG, 1, 0, 0)));
        // A mapped data file outside the system directories is data (an mmap reader).
        assert!(!loading_kind(&file("/home/u/big", REG, 0, 0, 1)));
        // A block device is a data file.
        assert!(!loading_kind(&file(
            "/dev/sda",
            Some(FileKind::BlockDevice),
            1,
            0,
            0
        )));
        assert!(stores_data(&file(
            "/dev/sda",
            Some(FileKind::BlockDevice),
            1,
            0,
            0
        )));
        assert!(!stores_data(&file("/dev/null", CHR, 0, 1, 0)));
        assert!(!stores_data(&file("pipe:[1]", None, 0, 1, 0)));
    }

    #[test]
    fn library_and_locale_paths_are_told_by_their_shape() {
        for p in [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libboost_thread.so.1.74.0",
            "/opt/x/plugin.so",
            "/etc/ld.so.cache",
            "/usr/lib/locale/locale-archive",
            "/usr/share/locale/locale.alias",
            "/usr/lib/x86_64-linux-gnu/gconv/gconv-modules.cache",
            "/usr/share/zoneinfo/UTC",
            "/etc/localtime",
        ] {
            assert!(loader_or_locale_path(p), "{p}");
        }
        for p in [
            "/tmp/x",
            "/data/results.solution",
            "/home/u/a.so.txt",
            "/etc/hosts",
        ] {
            assert!(!loader_or_locale_path(p), "{p}");
        }
    }
}
