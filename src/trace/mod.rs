//! `trace`: run a command under ptrace and account for every file-I/O system call it makes
//! (see `sys` for the loop, `tally` for the bookkeeping, `claims` for what known tools say
//! they did).

pub mod claims;
pub mod sys;
pub mod tally;

use std::path::Path;
use tally::Resolver;

/// The real resolver: /proc of the traced tasks.
pub struct Proc;

impl Resolver for Proc {
    fn path(&self, tid: i32, fd: i32) -> Option<String> {
        let link = std::fs::read_link(format!("/proc/{tid}/fd/{fd}")).ok()?;
        Some(link.to_string_lossy().into_owned())
    }
    fn position(&self, tid: i32, fd: i32) -> Option<u64> {
        let text = std::fs::read_to_string(format!("/proc/{tid}/fdinfo/{fd}")).ok()?;
        field(&text, "pos:")
    }
    fn tgid(&self, tid: i32) -> Option<i32> {
        let text = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
        field(&text, "Tgid:").and_then(|v| i32::try_from(v).ok())
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
