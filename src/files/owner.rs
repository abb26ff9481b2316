//! Who holds a free-space claim: a process, named by its PID *and* its start time (field 22
//! of `/proc/PID/stat`), so that a claim left by a writer that was killed is never taken
//! for a live one once its PID is reused by another process.

use std::io;

/// The process that made a claim, as its name records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Owner {
    pub pid: libc::pid_t,
    /// Its start time in clock ticks after boot; `None` in the names an older ioscope wrote.
    pub start: Option<u64>,
}

impl Owner {
    /// This process.
    pub fn this() -> Self {
        // Cached with its PID: a process forked since (trace's tracer) reads its own.
        static THIS: std::sync::Mutex<Option<Owner>> = std::sync::Mutex::new(None);
        let pid = libc::pid_t::try_from(std::process::id()).expect("a PID fits pid_t");
        let mut this = THIS.lock().unwrap_or_else(|e| e.into_inner());
        match *this {
            Some(owner) if owner.pid == pid => owner,
            _ => {
                let start = match std::fs::read_to_string("/proc/self/stat") {
                    Ok(stat) => start_time(&stat),
                    Err(_) => None,
                };
                let owner = Self { pid, start };
                *this = Some(owner);
                owner
            }
        }
    }

    /// How the claim's names carry it after the sequence number: `SEQ.START` (`SEQ` alone
    /// where the start time cannot be read).
    pub fn tag(self, seq: u64) -> String {
        match self.start {
            Some(start) => format!("{seq}.{start}"),
            None => seq.to_string(),
        }
    }

    /// The owner of `PID-SEQ.START` or (older) `PID-SEQ`, with what follows (`-BYTES` in a
    /// registry entry's name); `None` where it is not such a name.
    pub fn parse(text: &str) -> Option<(Self, &str)> {
        let (pid, rest) = text.split_once('-').unwrap_or((text, ""));
        let (tag, rest) = match rest.find('-') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        };
        let (seq, start) = match tag.split_once('.') {
            Some((seq, start)) => (seq, Some(digits(start)?)),
            None => (tag, None),
        };
        digits(seq)?;
        let pid = libc::pid_t::try_from(digits(pid)?)
            .ok()
            .filter(|&p| p > 0)?;
        Some((Self { pid, start }, rest))
    }

    /// Whether the process that made the claim still runs: a process with its PID and its
    /// start time (a zombie is gone). A name without a start time (an older ioscope's)
    /// counts while its PID is an ioscope. Where `/proc` cannot tell, whether the PID exists.
    pub fn alive(self) -> bool {
        match std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) {
            Ok(stat) => {
                if matches!(state(&stat), Some('Z' | 'X')) {
                    return false;
                }
                match (self.start, start_time(&stat)) {
                    (Some(start), Some(now)) => start == now,
                    (Some(_), None) => true,
                    (None, _) => is_ioscope(self.pid, &stat),
                }
            }
            // Not found: gone, or hidden (`hidepid=2` hides other users' processes, whose
            // claims still count): kill(pid, 0) tells them apart (EPERM: it runs).
            Err(_) => pid_exists(self.pid),
        }
    }
}

/// Only ASCII digits, as a number.
fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The fields of a `/proc/PID/stat` line after the command name (which may itself hold
/// spaces and parentheses: the name ends at the last `)`), from field 3 (the state) on.
fn fields_after_name(stat: &str) -> Option<std::str::SplitWhitespace<'_>> {
    Some(stat[stat.rfind(')')? + 1..].split_whitespace())
}

/// Field 22 of `/proc/PID/stat`: the start time in clock ticks after boot.
pub(super) fn start_time(stat: &str) -> Option<u64> {
    fields_after_name(stat)?.nth(22 - 3)?.parse().ok()
}

/// Field 3: the state (`R`, `S`, `Z` …).
fn state(stat: &str) -> Option<char> {
    fields_after_name(stat)?.next()?.chars().next()
}

/// Whether process `pid` runs an ioscope: its command name, or its executable's name.
fn is_ioscope(pid: libc::pid_t, stat: &str) -> bool {
    let comm = stat
        .find('(')
        .zip(stat.rfind(')'))
        .and_then(|(a, b)| stat.get(a + 1..b))
        .unwrap_or("");
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
    let exe_name = exe
        .as_deref()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .unwrap_or("");
    comm.starts_with("ioscope") || exe_name.starts_with("ioscope")
}

/// Whether `dir` is on a file system only this machine writes (ext2/3/4, XFS, Btrfs, F2FS,
/// tmpfs, ramfs, overlay, ZFS, bcachefs, exFAT, FAT, NTFS): there a claim whose process is
/// gone here is gone. On NFS, Lustre, CephFS, GPFS, FUSE and any other file system, a claim
/// beside an output may be a live writer's on another host (an MPI rank), whose PID means
/// nothing here: it is passed over, never removed.
pub(super) fn local_only(dir: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: statfs fills the zeroed struct we pass; the path is NUL-terminated and both
    // outlive the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return false;
    }
    const LOCAL: [i64; 13] = [
        0xEF53,      // ext2/3/4
        0x5846_5342, // xfs
        0x9123_683E, // btrfs
        0xF2F5_2010, // f2fs
        0x0102_1994, // tmpfs
        0x8584_58F6, // ramfs
        0x794C_7630, // overlay
        0x2FC1_2FC1, // zfs
        0xCA45_1A4E, // bcachefs
        0x2011_BAB0, // exfat
        0x4D44,      // vfat
        0x5346_544E, // ntfs
        0x7366_746E, // ntfs3
    ];
    LOCAL.contains(&(st.f_type as i64))
}

fn pid_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    let failed = unsafe { libc::kill(pid, 0) } != 0;
    !(failed && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_claim_is_removed_only_where_this_machine_alone_writes() {
        let dir = tempfile::tempdir().unwrap();
        // The tests' own temporary directory is on a local disk or tmpfs here; /proc is
        // neither, and stands for every file system not known to be local (NFS, Lustre…).
        let fs = std::process::Command::new("stat")
            .args(["-f", "-c", "%T"])
            .arg(dir.path())
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        if ["ext2/ext3", "xfs", "btrfs", "tmpfs", "overlayfs"].contains(&fs.as_str()) {
            assert!(local_only(dir.path()), "{fs}");
        } else {
            eprintln!("skipped: the temporary directory is on {fs:?}");
        }
        assert!(!local_only(std::path::Path::new("/proc")));
        assert!(!local_only(std::path::Path::new("/no/such/dir")));
    }

    #[test]
    fn this_process_is_known_by_its_pid_and_its_start_time() {
        let this = Owner::this();
        assert_eq!(Owner::this(), this, "cached for this process");
        assert!(this.alive(), "this process runs");
        let gone = Owner {
            pid: this.pid,
            start: this.start.map(|s| s + 1),
        };
        assert!(!gone.alive(), "another start time is another process");
    }

    #[test]
    fn the_start_time_is_field_22_counted_after_the_last_parenthesis() {
        let stat =
            "4242 (a) b) (c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10";
        assert_eq!(start_time(stat), Some(987_654));
        assert_eq!(state(stat), Some('S'));
        assert_eq!(start_time("1 (x) S 1 2"), None);
    }

    #[test]
    fn a_claim_name_gives_its_owner_with_or_without_a_start_time() {
        let new = Owner::parse("12-3.456-789").unwrap();
        assert_eq!(
            new,
            (
                Owner {
                    pid: 12,
                    start: Some(456)
                },
                "-789"
            )
        );
        let old = Owner::parse("12-3-789").unwrap();
        assert_eq!(
            old,
            (
                Owner {
                    pid: 12,
                    start: None
                },
                "-789"
            )
        );
        assert_eq!(Owner::parse("12-3.456").unwrap().1, "");
        for bad in [
            "", "x-1", "0-1", "12-", "12-a", "12-3.", "12-3.x-7", "-3-4", "+1-2",
        ] {
            assert_eq!(Owner::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn this_process_is_alive_and_the_same_pid_with_another_start_time_is_not() {
        let me = Owner::this();
        assert!(me.alive());
        let start = me.start.expect("/proc is mounted where the tests run");
        assert!(
            !Owner {
                start: Some(start + 1),
                ..me
            }
            .alive()
        );
        // An older ioscope's name for a PID that is no ioscope (this test binary is
        // ioscope-HASH, so take the parent: cargo or a shell).
        // SAFETY: getppid has no preconditions.
        let parent = unsafe { libc::getppid() };
        let stat = std::fs::read_to_string(format!("/proc/{parent}/stat")).unwrap();
        if !is_ioscope(parent, &stat) {
            assert!(
                !Owner {
                    pid: parent,
                    start: None
                }
                .alive()
            );
        }
        assert!(Owner::parse(&format!("{}-0", me.pid)).unwrap().0.alive());
    }
}
