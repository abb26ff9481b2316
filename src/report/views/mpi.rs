//! `mpi`: the aggregate of every phase over the repeats, then every rank's own figures.
//! Names (the directory, hosts) are printed through [`printable`].

use crate::report::cells::{cells, mib, opt, sample_cells, table};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::view::Exportable;
use crate::results::mpi::MpiReport;
use crate::text::printable;
use crate::units::{format_seconds, format_size};
use crate::warning::Warning;
use crate::workload::layout::Phases;
use std::fmt::Write;

mod ior_view;

/// Renders `mpi`.
pub fn text(r: &MpiReport) -> String {
    let mut out = String::new();
    header(&mut out, r);
    phases(&mut out, r);
    without_xor(&mut out, r);
    ranks(&mut out, r);
    let _ = writeln!(
        out,
        "aggregate = all ranks' bytes / the slowest rank's own transfer time (every rank starts at a barrier); writes include their fsync; first and last done: each rank's own transfer time"
    );
    if r.results.iter().any(|p| p.ior_bytes_per_second.is_some()) {
        let _ = writeln!(
            out,
            "IOR formula = all ranks' bytes / (latest close end - earliest open start), open, transfer and close of every rank on one clock ({})",
            clock(r)
        );
    }
    ior_view::notes(&mut out, r);
    out
}

/// How the ranks' clocks were put on one time line.
fn clock(r: &MpiReport) -> String {
    let Some(c) = &r.clock else {
        return "clock not recorded".to_string();
    };
    let apart = c.offsets.iter().filter(|o| o.applied).count();
    let skew = format_seconds(c.uncertainty_seconds());
    if apart == 0 {
        format!(
            "rank 0's host: one clock; the barrier let ranks go within ±{skew} over {} rounds",
            c.rounds
        )
    } else {
        format!(
            "{apart} rank(s) on other hosts placed by their offset to rank 0's clock, measured after {} barriers, ±{skew}",
            c.rounds
        )
    }
}

/// The read figure without the XOR, beside the read's own, where the XOR was timed.
fn without_xor(out: &mut String, r: &MpiReport) {
    for phase in &r.results {
        let Some(without) = &phase.without_xor_bytes_per_second else {
            continue;
        };
        let _ = writeln!(
            out,
            "{} without the XOR: {:.1} MiB/s (median over {}), beside {:.1} MiB/s with it: ioscope's read XORs every byte it reads inside the timed read; here that XOR was timed alone on a block-sized buffer of the same data and taken off each rank's time",
            phase.op.name(),
            mib(without.median),
            without.n,
            mib(phase.bytes_per_second.median)
        );
    }
}

/// What ran: the phases, where, how many ranks, and what each moved.
fn header(out: &mut String, r: &MpiReport) {
    let launched = if r.launched_by_mpirun {
        ""
    } else {
        " (not started by mpirun)"
    };
    let reads = if r.phases_timed == Phases::Write {
        String::new()
    } else if r.ranks > 1 {
        let shift = r.reorder.as_ref().map_or(1, |o| o.shift);
        format!(
            ", {} reads by another rank (rank r reads what rank r+{shift} wrote)",
            r.cache.name()
        )
    } else {
        format!(
            ", {} reads by the writer itself (one rank: nothing to reorder)",
            r.cache.name()
        )
    };
    let repeats = r.results.iter().map(|p| p.repeats.len()).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "mpi {} in {}: {} rank{} on {} host{}{launched}, {}: {} per rank ({} in all) in calls of {}{reads}; {} of each phase",
        r.phases_timed.name(),
        printable(&r.dir),
        r.ranks,
        if r.ranks == 1 { "" } else { "s" },
        r.hosts,
        if r.hosts == 1 { "" } else { "s" },
        r.layout.name(),
        format_size(r.bytes_per_rank),
        format_size(r.bytes_per_rank * r.ranks as u64),
        format_size(r.block_size),
        crate::report::text::runs_asked(repeats, r.until_stable),
    );
}

/// One row per phase: the aggregate over the repeats, and the repeat nearest the median.
fn phases(out: &mut String, r: &MpiReport) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for phase in &r.results {
        // The repeat whose aggregate is nearest the median stands for the phase.
        let Some(typical) = phase.repeats.iter().min_by(|a, b| {
            let d = |x: f64| (x - phase.bytes_per_second.median).abs();
            d(a.aggregate.bytes_per_second).total_cmp(&d(b.aggregate.bytes_per_second))
        }) else {
            continue;
        };
        let a = &typical.aggregate;
        rows.push(vec![
            phase.op.name().to_string(),
            format!("{:.1}", mib(phase.bytes_per_second.median)),
            format!(
                "{:.1}–{:.1} ({})",
                mib(phase.bytes_per_second.min),
                mib(phase.bytes_per_second.max),
                phase.bytes_per_second.n
            ),
            phase
                .ior_bytes_per_second
                .map_or("-".into(), |s| format!("{:.1}", mib(s.median))),
            format_size(a.total_bytes),
            format!(
                "rank {} ({}) {}",
                a.first_done.rank,
                printable(&a.first_done.host),
                format_seconds(a.first_done.seconds)
            ),
            format!(
                "rank {} ({}) {}",
                a.last_done.rank,
                printable(&a.last_done.host),
                format_seconds(a.last_done.seconds)
            ),
            format!("{:.1}–{:.1}", mib(a.rank_rates.min), mib(a.rank_rates.max)),
            a.fsync_seconds_max.map_or("-".into(), format_seconds),
        ]);
    }
    out.push_str(&fitted(
        &[
            ("phase", 0, Align::Left),
            ("aggregate MiB/s", 0, Align::Right),
            ("min–max (n)", 1, Align::Right),
            ("IOR formula MiB/s", 2, Align::Right),
            ("total", 4, Align::Right),
            ("first done", 5, Align::Words),
            ("last done", 3, Align::Words),
            ("rank MiB/s min–max", 3, Align::Left),
            ("fsync max", 4, Align::Right),
        ],
        &rows,
    ));
}

/// How a column's cells sit.
#[derive(Clone, Copy)]
enum Align {
    Left,
    Right,
    /// Words, which may wrap between them.
    Words,
}

/// `rows` of cells under `headings` (each with its priority: 0 never hidden, the higher
/// the sooner), fitted to the terminal's width by the one column model.
fn fitted(headings: &[(&'static str, u8, Align)], rows: &[Vec<String>]) -> String {
    let columns: Vec<Column<'_, Vec<String>>> = headings
        .iter()
        .enumerate()
        .map(|(i, &(name, priority, align))| {
            let column = Column::new(name, "", priority, move |row: &Vec<String>| {
                row.get(i).cloned().unwrap_or_default()
            });
            match align {
                Align::Right => column,
                Align::Left => column.left(),
                Align::Words => column.words(),
            }
        })
        .collect();
    columns::for_terminal(&columns, rows).text
}

/// One row per phase and rank: its rate, fsync, residency and checksum.
fn ranks(out: &mut String, r: &MpiReport) {
    let mut rows: Vec<Vec<String>> = Vec::new();
    for phase in &r.results {
        for rank in 0..r.ranks {
            let runs: Vec<_> = phase
                .repeats
                .iter()
                .filter_map(|rep| rep.ranks.iter().find(|x| x.rank == rank))
                .collect();
            let Some(first) = runs.first() else { continue };
            let rates: Vec<f64> = runs.iter().map(|x| x.bytes_per_second).collect();
            let median = crate::measure::stats::summarize(&rates).map_or(0.0, |s| s.median);
            let fsyncs: Vec<f64> = runs.iter().filter_map(|x| x.sample.fsync_seconds).collect();
            let resident: Vec<crate::measure::cache::Residency> = runs
                .iter()
                .filter_map(|x| x.sample.cache.and_then(|c| c.residency_before))
                .collect();
            let verified = runs
                .iter()
                .all(|x| x.expected_xor_hex.as_ref() == Some(&x.xor_hex));
            let in_place = crate::workload::verify::InPlace::merged(
                runs.iter().filter_map(|x| x.in_place.as_ref()),
            );
            let checksum = match (&first.expected_xor_hex, verified, in_place) {
                (None, _, _) => format!("{} written", printable(&first.xor_hex)),
                (Some(_), _, Some(v)) if !v.ok() => format!(
                    "{} {}",
                    printable(&first.xor_hex),
                    crate::report::text::in_place_short(&v)
                ),
                (Some(_), true, Some(v)) => format!(
                    "{}, every byte verified in place ({})",
                    printable(&first.xor_hex),
                    format_seconds(v.seconds)
                ),
                (Some(_), true, None) => format!("{} XOR verified", printable(&first.xor_hex)),
                (Some(e), false, _) => {
                    format!("{} (expected {})", printable(&first.xor_hex), printable(e))
                }
            };
            rows.push(vec![
                phase.op.name().to_string(),
                rank.to_string(),
                printable(&first.host),
                format!("rank {} at byte {}", first.segment_of, first.offset),
                format!("{:.1}", mib(median)),
                crate::measure::stats::summarize(&fsyncs)
                    .map_or("-".into(), |s| format_seconds(s.median)),
                resident_cell(&resident),
                // The last repeat's calls (each repeat keeps its own distribution).
                runs.iter()
                    .rev()
                    .find_map(|x| x.sample.latency.as_ref())
                    .map_or("-".into(), crate::report::latency::cell),
                checksum,
            ]);
        }
    }
    out.push_str(&fitted(
        &[
            ("phase", 0, Align::Left),
            ("rank", 0, Align::Left),
            ("host", 3, Align::Left),
            ("segment of", 4, Align::Words),
            ("MiB/s (median)", 0, Align::Right),
            ("fsync (median)", 2, Align::Right),
            ("resident before", 2, Align::Words),
            (
                "calls p50 / p99 / p99.9 / max (last repeat)",
                5,
                Align::Words,
            ),
            ("checksum", 1, Align::Words),
        ],
        &rows,
    ));
    let reads = r
        .results
        .iter()
        .flat_map(|p| &p.repeats)
        .flat_map(|rep| &rep.ranks)
        .filter(|x| x.in_place.is_some());
    let measured: f64 = reads.clone().map(|x| x.sample.elapsed.seconds).sum();
    if let Some(all) =
        crate::workload::verify::InPlace::merged(reads.filter_map(|x| x.in_place.as_ref()))
    {
        let _ = writeln!(
            out,
            "verify: every rank's read, {}",
            crate::report::text::in_place(&all, "the segments", measured)
        );
    }
}

impl Exportable for MpiReport {
    const COMMAND: &'static str = "mpi";
    fn text(&self) -> String {
        text(self)
    }
    fn ok(&self) -> bool {
        MpiReport::ok(self)
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    /// A row per rank, repeat and phase, with the repeat's aggregate beside it.
    fn table(&self) -> Table {
        let header = [
            "op",
            "repeat",
            "rank",
            "host",
            "segment_of",
            "bytes",
            "fsync_seconds",
            "xor",
            "expected_xor",
            "aggregate_bytes",
            "aggregate_seconds",
            "aggregate_bytes_per_second",
            "ior_seconds",
            "ior_bytes_per_second",
            "open_seconds",
            "transfer_seconds",
            "close_seconds",
            "start_seconds",
            "end_seconds",
            "xor_seconds",
            "bytes_per_second",
            "seconds",
            "resident_share_before",
            "device_read_bytes",
        ];
        let mut rows = Vec::new();
        for phase in &self.results {
            for (i, repeat) in phase.repeats.iter().enumerate() {
                let a = &repeat.aggregate;
                for run in &repeat.ranks {
                    let mut row = cells([
                        phase.op.name().to_string(),
                        (i + 1).to_string(),
                        run.rank.to_string(),
                        run.host.clone(),
                        run.segment_of.to_string(),
                        run.sample.moved.bytes.to_string(),
                        opt(run.sample.fsync_seconds),
                        run.xor_hex.clone(),
                        opt(run.expected_xor_hex.clone()),
                        a.total_bytes.to_string(),
                        a.slowest_seconds.to_string(),
                        a.bytes_per_second.to_string(),
                        opt(a.ior_seconds),
                        opt(a.ior_bytes_per_second),
                        opt(run.times.map(|t| t.open_seconds)),
                        opt(run.times.map(|t| t.transfer_seconds)),
                        opt(run.times.map(|t| t.close_seconds)),
                        opt(run.times.map(|t| t.start_seconds)),
                        opt(run.times.map(|t| t.end_seconds)),
                        opt(run.xor_seconds),
                    ]);
                    row.extend(sample_cells(&run.sample));
                    rows.push(row);
                }
            }
        }
        table(&header, rows)
    }
}

/// The share resident before each repeat's read: each one for up to three repeats, else
/// the one share all had ("0.0% in all 10") or the lowest and highest.
fn resident_cell(shares: &[crate::measure::cache::Residency]) -> String {
    let by_share = |a: &&crate::measure::cache::Residency,
                    b: &&crate::measure::cache::Residency| {
        a.fraction().total_cmp(&b.fraction())
    };
    let (Some(low), Some(high)) = (
        shares.iter().min_by(by_share),
        shares.iter().max_by(by_share),
    ) else {
        return "-".to_string();
    };
    let n = shares.len();
    if n <= 3 {
        shares
            .iter()
            .map(|s| s.percent())
            .collect::<Vec<_>>()
            .join(" / ")
    } else if low.percent() == high.percent() {
        format!("{} in all {n}", low.percent())
    } else {
        format!("{}–{} over {n}", low.percent(), high.percent())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::cache::Residency;

    fn pages(resident: u64) -> Residency {
        Residency {
            resident_pages: resident,
            total_pages: 1000,
        }
    }

    #[test]
    fn many_repeats_residency_is_one_share_or_its_range_not_a_list() {
        assert_eq!(resident_cell(&[]), "-");
        assert_eq!(resident_cell(&[pages(0), pages(5)]), "0.0% / 0.5%");
        assert_eq!(resident_cell(&[pages(0); 10]), "0.0% in all 10");
        let mixed = [pages(0), pages(0), pages(250), pages(0), pages(5)];
        assert_eq!(resident_cell(&mixed), "0.0%–25.0% over 5");
    }
}
