//! `transfer`: a matrix per workload (rows sender method, columns receiver method), each
//! cell the headline (MiB/s for a large workload, time per file for many small ones) and
//! both sides' median times with the spread; then what wins and why. `send` and `receive`:
//! one line per connection.

use crate::measure::verdict::{self, Figure, Relation};
use crate::report::cells::{cells, mib, table};
use crate::report::csv::Table;
use crate::report::page::{Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::text::{line, table_with};
use crate::report::view::Exportable;
use crate::results::transfer::{Cell, SendReport, TransferReport, Workload};
use crate::transfer::Session;
use crate::transfer::methods::{RecvMethod, SendMethod};
use crate::units::{MIB, format_seconds, format_size};
use crate::workload::study::Part;
use std::fmt::Write;

/// Renders the experiment.
pub fn text(r: &TransferReport) -> String {
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

/// What a sender method saves over read() → write(), if anything.
fn sender_saving(s: SendMethod) -> Option<&'static str> {
    match s {
        SendMethod::Read => None,
        SendMethod::Mmap => Some("writing from a mapping saves the read() copy"),
        SendMethod::Sendfile => Some(
            "sendfile() hands page-cache pages to the socket inside the kernel: no user-space copy",
        ),
    }
}

/// What a sender method pays that another may not, if anything.
fn sender_cost(s: SendMethod) -> Option<&'static str> {
    match s {
        SendMethod::Read => Some(
            "read() copies every byte from the page cache into a user buffer before write() copies it into the socket",
        ),
        SendMethod::Mmap => Some("writing from a mapping takes a page fault per page mapped"),
        SendMethod::Sendfile => None,
    }
}

/// What a receiver method saves over read() → write(), if anything.
fn receiver_saving(r: RecvMethod) -> Option<&'static str> {
    match r {
        RecvMethod::Write => None,
        RecvMethod::Mmap => Some("reading into a mapping saves the write() copy"),
        RecvMethod::Splice => {
            Some("splice() moves socket → pipe → file inside the kernel: no user-space copy")
        }
    }
}

/// What a receiver method pays that another may not, if anything.
fn receiver_cost(r: RecvMethod) -> Option<&'static str> {
    match r {
        RecvMethod::Write => Some(
            "read() copies from the socket into a buffer and write() copies it into the page cache",
        ),
        RecvMethod::Mmap => {
            Some("reading into a mapping takes a page fault per 4 KiB page it fills")
        }
        RecvMethod::Splice => None,
    }
}

/// A cell's rate as the rule sees it: the median, and the range its repeats give (the
/// receiver's times, as a share of their median).
fn rate_figure(c: &Cell) -> Figure {
    Figure::from(&c.rates())
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
            "first" => format!("first by the median is {text}."),
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
    // Pairs the one rule cannot tell from the fastest (medians within 10%, or repeats that
    // overlap): it is then first among equals.
    let tied = verdict::ties(
        rate_figure(best),
        w.cells
            .iter()
            .filter(|c| !std::ptr::eq(*c, best))
            .map(rate_figure),
    );
    let versus = match base {
        Some(b) if std::ptr::eq(b, best) => String::new(),
        Some(b) => format!(
            " ({:.2}x read → write)",
            best.bytes_per_second / b.bytes_per_second.max(1e-9)
        ),
        None => String::new(),
    } + &match tied {
        0 => String::new(),
        n => format!(
            "; {n} other pair{} within {:.0}% of it or with repeats overlapping its, so no single fastest",
            if n == 1 { "" } else { "s" },
            100.0 * (verdict::SAME_WITHIN - 1.0)
        ),
    };
    let pair = |c: &Cell| {
        format!(
            "{} → {}: {}",
            c.sender.name(),
            c.receiver.name(),
            headline(w, c)
        )
    };
    let fastest = format!("{}{versus}", pair(best));
    // With pairs the rule cannot tell from it, the best is first by the median, never
    // "fastest" in the sentence that says there is no single fastest.
    let lead = if tied == 0 { "fastest" } else { "first" };
    let spread = best.bytes_per_second / worst.bytes_per_second.max(1e-9);
    if small(w) {
        let size = format_size(w.bytes / w.files.max(1) as u64);
        let relation = verdict::relate(rate_figure(best), rate_figure(worst));
        let why = if relation == Relation::Same {
            format!(
                "each file of about {size} costs {} to {} whatever the method (within 10%): the header and the reply's round trip, creating, verifying, renaming (and fsyncing) the file outweigh moving its bytes, so the methods barely differ",
                format_seconds(best.seconds_per_file),
                format_seconds(worst.seconds_per_file)
            )
        } else if let Relation::Unclear(_) = relation {
            format!(
                "each file of about {size} costs {} with the fastest pair and {} with the slowest ({} → {}, {spread:.2}x by the medians), but their repeats overlap: no method is shown faster for files this small; more --repeat would tell",
                format_seconds(best.seconds_per_file),
                format_seconds(worst.seconds_per_file),
                worst.sender.name(),
                worst.receiver.name(),
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
        return vec![(lead, fastest), ("why", why)];
    }
    if synced && spread < crate::measure::verdict::ALIKE {
        let why = format!(
            "every pair is within {:.0}% of the best: each file is fsynced before it is renamed into place, so making it durable bounds them all and how the bytes are moved barely matters; --no-sync shows what the methods themselves cost",
            100.0 * (1.0 - 1.0 / spread)
        );
        return vec![(lead, fastest), ("why", why)];
    }
    match verdict::relate(rate_figure(best), rate_figure(worst)) {
        Relation::Same => {
            let why = format!(
                "every pair is within {:.0}% of the best: how the bytes are moved does not show in this workload",
                100.0 * (verdict::SAME_WITHIN - 1.0)
            );
            vec![(lead, fastest), ("why", why)]
        }
        Relation::Unclear(_) => {
            let why = format!(
                "the fastest and the slowest pair ({} → {}) are {spread:.2}x apart by their medians, but their repeats overlap: no method is shown faster here; more --repeat would tell",
                worst.sender.name(),
                worst.receiver.name()
            );
            vec![(lead, fastest), ("why", why)]
        }
        Relation::Above(_) | Relation::Below(_) => {
            vec![
                (lead, fastest),
                ("why", why_fastest(best, worst)),
                ("slowest", slowest_line(pair(worst), spread, best, worst)),
            ]
        }
    }
}

/// Why the fastest pair beat the slowest, from what its methods save that the slowest's do
/// not; when they save nothing the slowest does not, the copies are not the cause.
fn why_fastest(best: &Cell, worst: &Cell) -> String {
    let mut reasons = Vec::new();
    if best.sender != worst.sender
        && let Some(s) = sender_saving(best.sender)
        && sender_cost(worst.sender).is_some()
    {
        reasons.push(format!("sender: {s}"));
    }
    if best.receiver != worst.receiver
        && let Some(r) = receiver_saving(best.receiver)
        && receiver_cost(worst.receiver).is_some()
    {
        reasons.push(format!("receiver: {r}"));
    }
    if reasons.is_empty() {
        format!(
            "{} → {} saves no copy that {} → {} makes, yet it was faster: the copies are not what set the order here (the round trips, the receiver's file system and page faults weigh more)",
            best.sender.name(),
            best.receiver.name(),
            worst.sender.name(),
            worst.receiver.name()
        )
    } else {
        reasons.join("; ")
    }
}

/// The slowest pair and what it pays that the fastest does not (or that it pays nothing
/// more, so its cost is elsewhere).
fn slowest_line(pair: String, spread: f64, best: &Cell, worst: &Cell) -> String {
    let sender = (worst.sender != best.sender)
        .then(|| sender_cost(worst.sender))
        .flatten();
    let receiver = (worst.receiver != best.receiver)
        .then(|| receiver_cost(worst.receiver))
        .flatten();
    let cost = match (sender, receiver) {
        (Some(s), Some(r)) => format!("{s}; {r}"),
        (Some(c), None) | (None, Some(c)) => c.to_string(),
        (None, None) => "it makes no copy the fastest avoids, so its cost is elsewhere".to_string(),
    };
    format!("{pair} ({:.2}x the best): {cost}", 1.0 / spread)
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

/// Says on stderr that `receive` is serving: the token it made (senders need it), then
/// where it listens.
pub struct Announce;

impl crate::results::transfer::ReceiveObserver for Announce {
    fn listening(&self, l: &crate::results::transfer::Listening) {
        if let Some(t) = &l.token_made {
            crate::report::warn(&format!("token: {t} (senders pass it with --token)"));
        }
        crate::report::note(&format!(
            "receiving into {} on {} ({}); Ctrl-C stops\n",
            crate::text::printable_path(&l.dir),
            l.endpoint,
            l.method.name()
        ));
    }
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

impl Exportable for TransferReport {
    const COMMAND: &'static str = "transfer";
    const HAS_CHART: bool = true;
    fn chart(&self) -> Option<Chart> {
        Some(chart(self))
    }
    fn text(&self) -> String {
        text(self)
    }
    fn ok(&self) -> bool {
        TransferReport::ok(self)
    }
    fn warnings(&self) -> &[crate::warning::Warning] {
        &self.warnings
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn table(&self) -> Table {
        let header = [
            "workload",
            "files",
            "bytes",
            "sender",
            "receiver",
            "sender_seconds_median",
            "receiver_seconds_median",
            "receiver_seconds_min",
            "receiver_seconds_max",
            "runs",
            "bytes_per_second",
            "seconds_per_file",
            "verified",
        ];
        let rows = self
            .workloads
            .iter()
            .flat_map(|w| {
                w.cells.iter().map(move |c| {
                    cells([
                        w.name.clone(),
                        w.files.to_string(),
                        w.bytes.to_string(),
                        c.sender.name().to_string(),
                        c.receiver.name().to_string(),
                        c.sender_seconds.median.to_string(),
                        c.receiver_seconds.median.to_string(),
                        c.receiver_seconds.min.to_string(),
                        c.receiver_seconds.max.to_string(),
                        c.receiver_seconds.n.to_string(),
                        c.bytes_per_second.to_string(),
                        c.seconds_per_file.to_string(),
                        c.verified.to_string(),
                    ])
                })
            })
            .collect();
        table(&header, rows)
    }
}

/// Each method pair's rate as a share of its workload's best, one series per workload.
pub(crate) fn chart(t: &crate::results::transfer::TransferReport) -> Chart {
    let mut pairs: Vec<String> = Vec::new();
    for w in &t.workloads {
        for c in &w.cells {
            let name = format!("{}→{}", c.sender.name(), c.receiver.name());
            if !pairs.contains(&name) {
                pairs.push(name);
            }
        }
    }
    Chart {
        title: "transfer: each method pair against the best of its workload".into(),
        x_label: "sender → receiver".into(),
        y_label: "throughput (% of the workload's best pair)".into(),
        categories: pairs.clone(),
        series: t
            .workloads
            .iter()
            .map(|w| {
                let top = w
                    .cells
                    .iter()
                    .map(|c| c.bytes_per_second)
                    .fold(0.0f64, f64::max)
                    .max(1e-9);
                Series {
                    name: w.name.clone(),
                    points: w
                        .cells
                        .iter()
                        .filter_map(|c| {
                            let name = format!("{}→{}", c.sender.name(), c.receiver.name());
                            let i = pairs.iter().position(|p| *p == name)?;
                            Some((i as f64, 100.0 * c.bytes_per_second / top))
                        })
                        .collect(),
                }
            })
            .collect(),
        ..Chart::default()
    }
}

pub(crate) fn section(t: &crate::results::transfer::TransferReport, part: Part) -> Section {
    let rows = t
        .workloads
        .iter()
        .flat_map(|w| {
            w.cells.iter().map(move |c| {
                let s = &c.receiver_seconds;
                vec![
                    w.name.clone(),
                    format!("{} → {}", c.sender.name(), c.receiver.name()),
                    if s.n > 1 {
                        format!(
                            "{} ({}–{})",
                            format_seconds(s.median),
                            format_seconds(s.min),
                            format_seconds(s.max)
                        )
                    } else {
                        format_seconds(s.median)
                    },
                    format!("{:.1}", mib(c.bytes_per_second)),
                    format_seconds(c.seconds_per_file),
                    if c.verified { "yes" } else { "NO" }.to_string(),
                ]
            })
        })
        .collect();
    let why = t
        .workloads
        .iter()
        .flat_map(|w| {
            transfer_why(w, t.synced)
                .into_iter()
                .map(move |line| format!("{}: {line}", w.name))
        })
        .collect();
    Section {
        part,
        status: None,
        how: format!(
            "Both ends run here over {}: every sender method (read/write, mmap, sendfile) against every receiver method (write, mmap, splice), {} transfer(s) per pair; each file is verified (XOR and XXH3) before it is renamed into place{}.",
            t.channel,
            t.repeat,
            if t.synced { ", after an fsync" } else { "" }
        ),
        grid: grid(
            &[
                "workload",
                "sender → receiver",
                "receiver time (min–max)",
                "MiB/s",
                "per file",
                "verified",
            ],
            rows,
        ),
        chart: Some(chart(t)),
        why,
        warnings: Vec::new(),
    }
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
        // Not synced, pairs within 10% are the same by the one rule: no cause is told.
        let lines = transfer_lines(&w, false);
        assert_eq!(lines.len(), 2);
        assert!(
            lines[1].1.starts_with(
                "every pair is within 10% of the best: how the bytes are moved does not show"
            ),
            "{}",
            lines[1].1
        );
    }

    /// `w` with the receiver's times of each cell spread so its rates run from `lo` to
    /// `hi` times its median over three repeats.
    fn scattered(mut w: Workload, lo: f64, hi: f64) -> Workload {
        for c in &mut w.cells {
            let t = c.receiver_seconds.median;
            c.receiver_seconds = summarize(&[t / hi, t, t / lo]).unwrap();
        }
        w
    }

    #[test]
    fn a_first_pair_whose_repeats_overlap_anothers_is_not_called_fastest() {
        use RecvMethod as R;
        use SendMethod as S;
        let m = MIB as f64;
        let rates = [
            (S::Read, R::Write, 1000.0 * m),
            (S::Sendfile, R::Splice, 1500.0 * m),
        ];
        // 1.5x by the medians, runs 0.6x–1.6x each: 1500's reach down to 900, below 1000's
        // top of 1600.
        let lines = transfer_lines(&scattered(workload(&rates), 0.6, 1.6), false);
        assert_eq!(lines[0].0, "first", "{lines:?}");
        assert!(lines[0].1.contains("no single fastest"), "{}", lines[0].1);
        // Runs within 5% of their medians: apart, so the first is the fastest.
        let lines = transfer_lines(&scattered(workload(&rates), 0.95, 1.05), false);
        assert_eq!(lines[0].0, "fastest", "{lines:?}");
        assert!(!lines[0].1.contains("no single fastest"), "{}", lines[0].1);
    }
}
