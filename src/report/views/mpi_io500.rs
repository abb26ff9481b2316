//! `mpi io500`: the IO500-like preset's phases (figure, amount, time, stonewall counts and
//! validity), its geometric means, and the notes that say what it is not (the official
//! IO500 score) and whose data each rank read. Text, CSV and Markdown from the same rows.

use crate::report::cells::{cells, opt, table};
use crate::report::csv::Table;
use crate::report::markdown::{escape, table as md_table};
use crate::report::text::{right_align, table_with};
use crate::report::view::Exportable;
use crate::results::mpi::io500::{Io500Phase, Io500Report, Kind};
use crate::text::printable;
use crate::units::{format_seconds, format_size, group_thousands};
use std::fmt::Write;

/// The line every rendering carries: what this is not.
pub const NOT_OFFICIAL: &str = "IO500-like preset, NOT the official IO500 score: no 300 s stonewall, no find phase, one small-file phase in place of mdtest-easy and mdtest-hard, reads evicted from the page cache first; compare its figures only with runs of this preset";

/// The phase's figure with its unit.
fn figure(p: &Io500Phase) -> String {
    match p.kind {
        Kind::Bandwidth => format!("{:.3} GiB/s", p.figure()),
        Kind::Metadata => format!("{:.3} kIOPS", p.figure()),
    }
}

/// What the phase moved or handled.
fn amount(p: &Io500Phase) -> String {
    match p.kind {
        Kind::Bandwidth => format!(
            "{} in {} transfers",
            format_size(p.total_bytes),
            group_thousands(p.total_ops)
        ),
        Kind::Metadata => format!("{} files", group_thousands(p.total_ops)),
    }
}

/// The stonewall counts: each rank's at the stonewall, and the count all completed to.
fn stonewall(p: &Io500Phase) -> String {
    let Some(s) = &p.stonewall else {
        return "-".to_string();
    };
    let each: Vec<String> = s
        .at_stonewall
        .iter()
        .zip(&s.stopped_by_time)
        .map(|(n, by_time)| {
            if *by_time {
                group_thousands(*n)
            } else {
                format!("{} (cap)", group_thousands(*n))
            }
        })
        .collect();
    format!(
        "{} -> all {}",
        each.join(", "),
        group_thousands(s.completed_to)
    )
}

/// `valid`, or `INVALID: why`.
fn validity(p: &Io500Phase) -> String {
    if p.valid() {
        "valid".to_string()
    } else {
        format!("INVALID: {}", p.invalid.join("; "))
    }
}

/// Renders `mpi io500`.
pub fn text(r: &Io500Report) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mpi io500 in {}: {} rank{} on {} host{}{}, stonewall {} per write phase",
        printable(&r.dir),
        r.ranks,
        if r.ranks == 1 { "" } else { "s" },
        r.hosts,
        if r.hosts == 1 { "" } else { "s" },
        if r.launched_by_mpirun {
            ""
        } else {
            " (not started by mpirun)"
        },
        format_seconds(r.stonewall_seconds)
    );
    let _ = writeln!(out, "{NOT_OFFICIAL}");
    let mut t = table_with(&[
        "phase",
        "figure",
        "moved",
        "seconds",
        "at stonewall per rank -> completed to",
        "validity",
    ]);
    for p in &r.phases {
        t.add_row(vec![
            p.name.clone(),
            figure(p),
            amount(p),
            format!("{:.3}", p.seconds),
            stonewall(p),
            validity(p),
        ]);
    }
    right_align(&mut t, 1..4);
    let _ = writeln!(out, "{t}");
    for line in summary(r) {
        let _ = writeln!(out, "{line}");
    }
    for line in notes(r) {
        let _ = writeln!(out, "{line}");
    }
    out
}

/// The geometric means and the overall validity.
fn summary(r: &Io500Report) -> Vec<String> {
    let s = &r.score;
    let count = |k| r.phases.iter().filter(|p| p.kind == k).count();
    let invalid: Vec<&str> = r
        .phases
        .iter()
        .filter(|p| !p.valid())
        .map(|p| p.name.as_str())
        .collect();
    vec![
        format!(
            "bandwidth: {:.3} GiB/s (geometric mean of {} ior phases)",
            s.bandwidth_gib_per_second,
            count(Kind::Bandwidth)
        ),
        format!(
            "metadata: {:.3} kIOPS (geometric mean of {} small-file phases)",
            s.metadata_kiops,
            count(Kind::Metadata)
        ),
        format!(
            "combined: {:.3} = sqrt(bandwidth x metadata), as IO500 combines them (not the official score)",
            s.combined
        ),
        if invalid.is_empty() {
            "every phase valid: each stonewall stopped at least one rank and each write phase lasted at least its stonewall; every read verified".to_string()
        } else {
            format!(
                "invalid phases: {} (reasons in the table)",
                invalid.join(", ")
            )
        },
    ]
}

/// How the figures were made.
fn notes(r: &Io500Report) -> Vec<String> {
    let reading = if r.ranks > 1 {
        format!(
            "each rank read, stat'ed and deleted the data of rank r+{} ({})",
            r.reorder.shift,
            if r.reorder.wrapped {
                "all ranks on one host: IOR's -C shift comes round to a rank's own data, so the next rank's"
            } else if r.reorder.packed {
                "ranks packed by host: a node's worth along, as IOR's -C"
            } else {
                "ranks round-robin across hosts: the next rank, on another host, as IOR's -C"
            }
        )
    } else {
        "one rank: it read its own data (nothing to reorder)".to_string()
    };
    vec![
        format!(
            "ior-easy: a file per rank, {} transfers, at most {} per rank; ior-hard: one shared file, {}-byte records interleaved across the ranks, at most {} per rank; small files: {} bytes each, a directory per rank, at most {} per rank",
            format_size(r.easy_transfer_bytes),
            format_size(r.easy_cap_bytes),
            group_thousands(r.hard_record_bytes),
            group_thousands(r.hard_cap_records),
            group_thousands(r.small_file_bytes),
            group_thousands(r.small_files_cap)
        ),
        "stonewall with wear-out: at the stonewall each rank stops issuing new work; the ranks agree (an MPI max) on the largest count any reached and every rank completes to it, so the reads, stats and deletes cover the same data on every rank; '(cap)' marks a rank that reached its cap before the stonewall".to_string(),
        "figure = all ranks' bytes (GiB/s) or files (kIOPS) / (latest end - earliest start) on one clock, IOR's aggregate; writes include their fsync".to_string(),
        format!("{reading}; ior reads evicted first and checked in place against the generator (every byte at its offset), small files read through the page cache and compared whole"),
    ]
}

impl Exportable for Io500Report {
    const COMMAND: &'static str = "mpi-io500";
    fn text(&self) -> String {
        text(self)
    }
    fn ok(&self) -> bool {
        Io500Report::ok(self)
    }
    /// A row per phase and rank, with the phase's figures beside it.
    fn table(&self) -> Table {
        let header = [
            "phase",
            "kind",
            "rank",
            "data_of",
            "count",
            "bytes",
            "start_seconds",
            "end_seconds",
            "at_stonewall",
            "completed_to",
            "phase_seconds",
            "phase_per_second",
            "valid",
        ];
        let mut rows = Vec::new();
        for p in &self.phases {
            for (i, r) in p.ranks.iter().enumerate() {
                rows.push(cells([
                    p.name.clone(),
                    match p.kind {
                        Kind::Bandwidth => "bandwidth".into(),
                        Kind::Metadata => "metadata".into(),
                    },
                    r.rank.to_string(),
                    r.data_of.to_string(),
                    r.count.to_string(),
                    r.bytes.to_string(),
                    r.times.start_seconds.to_string(),
                    r.times.end_seconds.to_string(),
                    opt(p.stonewall.as_ref().and_then(|s| s.at_stonewall.get(i))),
                    opt(p.stonewall.as_ref().map(|s| s.completed_to)),
                    p.seconds.to_string(),
                    p.per_second.to_string(),
                    p.valid().to_string(),
                ]));
            }
        }
        table(&header, rows)
    }
    fn markdown(&self) -> Vec<String> {
        let rows = self
            .phases
            .iter()
            .map(|p| {
                vec![
                    p.name.clone(),
                    figure(p),
                    amount(p),
                    format!("{:.3}", p.seconds),
                    stonewall(p),
                    validity(p),
                ]
            })
            .collect();
        let phases = Table {
            header: [
                "phase",
                "figure",
                "moved",
                "seconds",
                "at stonewall per rank -> completed to",
                "validity",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect(),
            rows,
        };
        let mut blocks = vec![
            format!("{}\n", escape(NOT_OFFICIAL)),
            md_table(
                &phases,
                Some(&format!(
                    "{} rank(s), stonewall {}",
                    self.ranks,
                    format_seconds(self.stonewall_seconds)
                )),
            ),
        ];
        let lines: Vec<String> = summary(self)
            .into_iter()
            .chain(notes(self))
            .map(|l| format!("- {}", escape(&l)))
            .collect();
        blocks.push(format!("{}\n", lines.join("\n")));
        blocks
    }
}
