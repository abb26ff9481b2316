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
        static START: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
        let pid = libc::pid_t::try_from(std::process::id()).expect("a PID fits pid_t");
        let start = *START.get_or_init(|| match std::fs::read_to_string("/proc/self/stat") {
            Ok(stat) => start_time(&stat),
            Err(_) => None,
        });
        Self { pid, start }
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
            Err(e) if e.kind() == io::ErrorKind::NotFound && proc_mounted() => false,
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

fn proc_mounted() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
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
