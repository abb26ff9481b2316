//! `transfer`: a matrix per workload (rows sender method, columns receiver method), each
//! cell the headline (MiB/s for a large workload, time per file for many small ones) and
//! both sides' median times with the spread; then what wins and why. `send` and `receive`:
//! one line per connection.

use super::{line, table_with};
use crate::cmd::transfer::{Cell, SendReport, TransferReport, Workload};
use crate::transfer::Session;
use crate::transfer::methods::{RecvMethod, SendMethod};
use crate::units::{MIB, format_seconds, format_size};
use std::fmt::Write;

/// Renders the experiment.
pub fn transfer(r: &TransferReport) -> String {
    let mut out = String::new();
    for w in &r.workloads {
        line(
            &mut out,
            "transfer",
            format!(
                "{} ({} in {} file(s)) over {}, {} transfer(s) per pair, read/write buffers {}, {}",
                w.name,
                format_size(w.bytes),
                w.files,
                r.channel,
                r.repeat,
                format_size(r.buffer),
                if r.synced {
                    "each file fsynced before it is renamed into place"
                } else {
                    "files not fsynced (--no-sync)"
                }
            ),
        );
        matrix(&mut out, w);
        explain(&mut out, w, r.synced);
        out.push('\n');
    }
    if !r.ok() {
        line(
            &mut out,
            "verify",
            "FAILED: a copy read back differs from its source",
        );
    } else {
        line(
            &mut out,
            "verify",
            "every copy read back equals its source (XOR and XXH3 per file)",
        );
    }
    out
}

/// Many small files: the time per file says more than MiB/s.
fn small(w: &Workload) -> bool {
    w.files > 1 && w.bytes / (w.files as u64) < MIB
}

fn headline(w: &Workload, c: &Cell) -> String {
    if small(w) {
        format!("{} per file", format_seconds(c.seconds_per_file))
    } else {
        format!("{:.1} MiB/s", c.bytes_per_second / MIB as f64)
    }
}

fn matrix(out: &mut String, w: &Workload) {
    let mut receivers: Vec<RecvMethod> = Vec::new();
    let mut senders: Vec<SendMethod> = Vec::new();
    for c in &w.cells {
        if !receivers.contains(&c.receiver) {
            receivers.push(c.receiver);
        }
        if !senders.contains(&c.sender) {
            senders.push(c.sender);
        }
    }
    let mut header = vec!["sender \\ receiver".to_string()];
    header.extend(receivers.iter().map(|r| r.name().to_string()));
    let header: Vec<&str> = header.iter().map(String::as_str).collect();
    let mut table = table_with(&header);
    for s in &senders {
        let mut row = vec![s.name().to_string()];
        for r in &receivers {
            let cell = w.cells.iter().find(|c| c.sender == *s && c.receiver == *r);
            row.push(cell.map_or(String::new(), |c| {
                format!(
                    "{}{}\nsender {}, receiver {} ±{:.0}%",
                    headline(w, c),
                    if c.verified { "" } else { " NOT VERIFIED" },
                    format_seconds(c.sender_seconds.median),
                    format_seconds(c.receiver_seconds.median),
                    100.0 * c.receiver_seconds.relative_spread()
                )
            }));
        }
        table.add_row(row);
    }
    let _ = writeln!(out, "{table}");
}

fn why_sender(s: SendMethod) -> &'static str {
    match s {
        SendMethod::Read => {
            "read() copies every byte from the page cache into a user buffer before write() copies it into the socket"
        }
        SendMethod::Mmap => {
            "writing from a mapping saves the read() copy but takes a page fault per page mapped"
        }
        SendMethod::Sendfile => {
            "sendfile() hands page-cache pages to the socket inside the kernel: no user-space copy"
        }
    }
}

fn why_receiver(r: RecvMethod) -> &'static str {
    match r {
        RecvMethod::Write => {
            "read() copies from the socket into a buffer and write() copies it into the page cache"
        }
        RecvMethod::Mmap => {
            "reading into a mapping saves the write() copy but takes a page fault per 4 KiB page it fills"
        }
        RecvMethod::Splice => {
            "splice() moves socket → pipe → file inside the kernel: no user-space copy"
        }
    }
}

fn explain(out: &mut String, w: &Workload, synced: bool) {
    for (key, text) in transfer_lines(w, synced) {
        line(out, key, text);
    }
}

/// What wins a workload and why, as sentences (for the study report); `synced`: the
/// receivers fsynced every file.
pub fn transfer_why(w: &Workload, synced: bool) -> Vec<String> {
    transfer_lines(w, synced)
        .into_iter()
        .map(|(key, text)| match key {
            "fastest" => format!("fastest is {text}."),
            "slowest" => format!("slowest is {text}."),
            _ => format!("{text}."),
        })
        .collect()
}

fn transfer_lines(w: &Workload, synced: bool) -> Vec<(&'static str, String)> {
    let by_rate = |a: &&Cell, b: &&Cell| a.bytes_per_second.total_cmp(&b.bytes_per_second);
    let (Some(best), Some(worst)) = (
        w.cells.iter().max_by(by_rate),
        w.cells.iter().min_by(by_rate),
    ) else {
        return Vec::new();
    };
    let base = w
        .cells
        .iter()
        .find(|c| c.sender == SendMethod::Read && c.receiver == RecvMethod::Write);
    let versus = base.map_or(String::new(), |b| {
        format!(
            " ({:.2}x read → write)",
            best.bytes_per_second / b.bytes_per_second.max(1e-9)
        )
    });
    let pair = |c: &Cell| {
        format!(
            "{} → {}: {}",
            c.sender.name(),
            c.receiver.name(),
            headline(w, c)
        )
    };
    let fastest = format!("{}{versus}", pair(best));
    let spread = best.bytes_per_second / worst.bytes_per_second.max(1e-9);
    if small(w) {
        let size = format_size(w.bytes / w.files.max(1) as u64);
        let why = if crate::measure::verdict::same(best.bytes_per_second, worst.bytes_per_second) {
            format!(
                "each file of about {size} costs {} to {} whatever the method (within 10%): the header and the reply's round trip, creating, verifying, renaming (and fsyncing) the file outweigh moving its bytes, so the methods barely differ",
                format_seconds(best.seconds_per_file),
                format_seconds(worst.seconds_per_file)
            )
        } else {
            format!(
                "each file of about {size} costs {} with the fastest pair and {} with the slowest ({} → {}, {spread:.2}x): the methods differ even for files this small, so the costs every method shares per file (the round trip, creating, verifying, renaming) are not all that counts",
                format_seconds(best.seconds_per_file),
                format_seconds(worst.seconds_per_file),
                worst.sender.name(),
                worst.receiver.name(),
            )
        };
        return vec![("fastest", fastest), ("why", why)];
    }
    if synced && spread < crate::measure::verdict::ALIKE {
        let why = format!(
            "every pair is within {:.0}% of the best: each file is fsynced before it is renamed into place, so the device's write rate bounds them all and how the bytes are moved barely matters; --no-sync shows what the methods themselves cost",
            100.0 * (1.0 - 1.0 / spread)
        );
        return vec![("fastest", fastest), ("why", why)];
    }
    let why = format!(
        "sender: {}; receiver: {}",
        why_sender(best.sender),
        why_receiver(best.receiver)
    );
    let slowest = format!(
        "{} ({:.2}x the best): {}",
        pair(worst),
        1.0 / spread,
        if worst.receiver == best.receiver {
            why_sender(worst.sender)
        } else {
            why_receiver(worst.receiver)
        }
    );
    vec![("fastest", fastest), ("why", why), ("slowest", slowest)]
}

/// One line for a finished `send`.
pub fn sent(r: &SendReport) -> String {
    let s = &r.session;
    format!(
        "sent {} file(s), {} to {} in {} = {:.1} MiB/s ({}); each verified by the receiver and in place\n",
        s.files.len(),
        format_size(s.bytes),
        r.to,
        format_seconds(s.seconds),
        crate::units::per_second(s.bytes, s.seconds) / MIB as f64,
        r.method.name()
    )
}

/// One line per connection a receiver served (and one more when files were written by
/// `write` instead of the method asked).
pub fn received(s: &Session, synced: bool) -> String {
    let mut out = format!(
        "received {} file(s), {} in {} = {:.1} MiB/s; each verified (XOR and XXH3), {}renamed into place\n",
        s.files.len(),
        format_size(s.bytes),
        format_seconds(s.seconds),
        crate::units::per_second(s.bytes, s.seconds) / MIB as f64,
        if synced { "synced and " } else { "" }
    );
    if let Some(first) = s.by_write.first() {
        let _ = writeln!(
            out,
            "note: {} file(s) written by write() instead of through a mapping, {} the first: this file system cannot allocate a file's blocks up front (fallocate), and writing through a mapping of unallocated blocks would fail with SIGBUS on a full disk",
            s.by_write.len(),
            crate::text::printable(first)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stats::summarize;

    fn workload(rates: &[(SendMethod, RecvMethod, f64)]) -> Workload {
        let bytes = 64 * MIB;
        Workload {
            name: "one file of 64 MiB".into(),
            files: 1,
            bytes,
            cells: rates
                .iter()
                .map(|&(sender, receiver, rate)| {
                    let t = summarize(&[bytes as f64 / rate]).unwrap();
                    Cell {
                        sender,
                        receiver,
                        sender_seconds: t,
                        receiver_seconds: t,
                        bytes_per_second: rate,
                        seconds_per_file: t.median,
                        verified: true,
                    }
                })
                .collect(),
        }
    }

    #[test]
    fn the_slowest_pair_is_named_with_its_cause_and_a_device_bound_matrix_says_so() {
        use RecvMethod as R;
        use SendMethod as S;
        let m = MIB as f64;
        let w = workload(&[
            (S::Read, R::Write, 1000.0 * m),
            (S::Sendfile, R::Splice, 2000.0 * m),
            (S::Sendfile, R::Mmap, 800.0 * m),
        ]);
        let lines = transfer_lines(&w, false);
        assert_eq!(
            lines[0].1,
            "sendfile → splice: 2000.0 MiB/s (2.00x read → write)"
        );
        assert_eq!(lines[2].0, "slowest");
        assert!(
            lines[2].1.starts_with(
                "sendfile → mmap: 800.0 MiB/s (0.40x the best): reading into a mapping"
            ),
            "the receivers differ, so the receiver's cost is named: {}",
            lines[2].1
        );
        // Synced and within 25%: the device bounds every pair.
        let w = workload(&[
            (S::Read, R::Write, 480.0 * m),
            (S::Sendfile, R::Splice, 500.0 * m),
        ]);
        let lines = transfer_lines(&w, true);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1]
                .1
                .starts_with("every pair is within 4% of the best"),
            "{}",
            lines[1].1
        );
        // Not synced, the same figures are the methods' own.
        assert_eq!(transfer_lines(&w, false)[2].0, "slowest");
    }
}
