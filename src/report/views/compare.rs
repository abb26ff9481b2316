//! `compare`: one table per cache state, then why the numbers differ.

use crate::measure::cache::CacheState;
use crate::measure::verdict::{self, Figure, Relation};
use crate::report::cells::{capitalise, mib, opt, rate, rate_cell, spread_mark};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::markdown::{self, flagged, list, rate_spread};
use crate::report::page::{Headline, Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::view::Exportable;
use crate::results::compare::{CompareReport, Row};
use crate::units::{MIB, format_mib_per_s, format_size};
use crate::warning::Warning;
use crate::workload::study::Part;
use std::fmt::Write;

/// Renders `compare`.
pub fn text(r: &CompareReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compare {} ({}), block size {}, median of {} each, alternating order",
        crate::text::printable(&r.file),
        format_size(r.file_bytes),
        format_size(r.block_size),
        crate::report::text::runs_asked(r.repeat, r.until_stable)
    );
    out.push_str(&columns::for_terminal(&compare_columns(), &r.rows).text);
    for s in &r.skipped {
        // A tool's own message may echo the file's name raw.
        let _ = writeln!(out, "skipped: {}", crate::text::printable(s));
    }
    for n in data_notes(r) {
        let _ = writeln!(out, "note: {n}");
    }
    // The answer last: the ranking per cache state. How the readers work (the general
    // notes) is in the Markdown and the report, and in GUIDE.md, not on every run.
    let verdict = ranking(r);
    if !verdict.is_empty() {
        let _ = writeln!(out);
        for v in verdict {
            let _ = writeln!(out, "{v}");
        }
    }
    out
}

/// Why the numbers differ, from what ran: the ranking, how the readers work, and what
/// these runs' own numbers show.
pub fn compare_notes(r: &CompareReport) -> Vec<String> {
    let mut out = ranking(r);
    out.extend(general_notes(r));
    out.extend(data_notes(r));
    out
}

/// What these runs' own numbers show beside the ranking: a state not held, a reader far
/// behind its peer for a known reason, a file too small for rates.
fn data_notes(r: &CompareReport) -> Vec<String> {
    let mut out = Vec::new();
    for row in r.rows.iter().filter(|row| !row.state_ok) {
        out.push(format!(
            "{} ({}) did not always start in that state: resident before its runs: {}",
            row.contender,
            row.cache.name(),
            row.runs
                .iter()
                .map(|x| format!("{:.0}%", 100.0 * x.resident_share_before))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(note) = unaligned_fio(r) {
        out.push(note);
    }
    if r.file_bytes < 256 * MIB {
        out.push("the file is small: process start-up and timer resolution weigh on every figure; use a file of a few GiB for rates".into());
    }
    out
}

/// fio's buffered reader clearly slower than dd's warm (by the one rule): fio's I/O buffer
/// is not page-aligned by default, so every copy out of the page cache is unaligned.
fn unaligned_fio(r: &CompareReport) -> Option<String> {
    let warm = |p: &str| {
        r.rows.iter().find(|x| {
            x.cache == CacheState::Warm
                && x.contender.starts_with(p)
                && !x.contender.contains("direct")
        })
    };
    let (fio, dd) = (warm("fio psync")?, warm("dd")?);
    matches!(verdict::relate(figure(fio), figure(dd)), Relation::Below(_)).then(|| {
        format!(
            "warm, {} reads at {:.2}x dd's rate: fio's I/O buffer is not aligned to the memory page unless asked, and dd's is, so fio's copies out of the page cache are unaligned; rerun fio with --iomem_align=4096 to see how much of the gap that is",
            fio.contender,
            verdict::ratio(fio.median_bytes_per_second, dd.median_bytes_per_second)
        )
    })
}

/// How the readers work: true of every run, so in the documents, not on the terminal.
fn general_notes(r: &CompareReport) -> Vec<String> {
    let mut out = Vec::new();
    let has = |p: &str| r.contenders.iter().any(|c| c.name.starts_with(p));
    let measured = |s: CacheState| r.rows.iter().any(|row| row.cache == s);
    if has("dd") {
        out.push("dd prints decimal units (1 MB = 10^6 bytes, so its '2.1 GB/s' is 2.0 GiB/s); this table uses dd's raw bytes and seconds, in MiB/s".into());
    }
    if has("cat") {
        out.push("cat reports nothing itself: its rate is the file size over the whole process's wall time, start-up included".into());
    }
    if measured(CacheState::Warm) {
        out.push("warm: `fast` XORs the page cache in place where it holds the file in huge pages and copies it in cache-sized pieces elsewhere; run -r, dd and cat copy every byte into user memory first, and smaller blocks add a system call per block".into());
        if has("dd") || has("fio") {
            out.push("O_DIRECT readers (iflag=direct, fio direct=1) bypass the cache even when the file is warm: their warm figure is a device figure".into());
        }
    }
    if measured(CacheState::Cold) {
        out.push("cold: buffered readers go through the page cache (readahead, page allocation, a copy); O_DIRECT readers — and `fast`, which switches to O_DIRECT into huge-page buffers when the file is not cached — read straight from the device".into());
    }
    out
}

/// The repeats of one row as the rule sees them.
fn figure(row: &crate::results::compare::Row) -> Figure {
    row.rates()
        .map_or(Figure::one(row.median_bytes_per_second), |s| {
            Figure::from(&s)
        })
}

/// Per cache state, who was fastest and what each other contender is to it by the one rule
/// of [`verdict`]: the same, clearly slower, or overlapping repeats (no order claimed).
fn ranking(r: &CompareReport) -> Vec<String> {
    let mut out = Vec::new();
    let mut states: Vec<CacheState> = Vec::new();
    for row in &r.rows {
        if !states.contains(&row.cache) {
            states.push(row.cache);
        }
    }
    for state in states {
        // A reader that printed a wrong XOR is named apart and never ranked.
        let wrong: Vec<String> = r
            .rows
            .iter()
            .filter(|x| x.cache == state && x.xor_ok() == Some(false))
            .map(|x| {
                format!(
                    "{} (printed {})",
                    x.contender,
                    x.wrong_xor().unwrap_or_default()
                )
            })
            .collect();
        if !wrong.is_empty() {
            out.push(format!(
                "{}: not ranked, a wrong XOR (the file's is {}): {}",
                state.name(),
                r.reference.as_deref().unwrap_or("unknown"),
                wrong.join(", ")
            ));
        }
        let rows: Vec<_> = r
            .rows
            .iter()
            .filter(|x| x.cache == state && x.xor_ok() != Some(false))
            .collect();
        let Some(best) = rows.iter().max_by(|a, b| {
            a.median_bytes_per_second
                .total_cmp(&b.median_bytes_per_second)
        }) else {
            continue;
        };
        if rows.len() < 2 {
            continue;
        }
        let (mut same, mut slower, mut unclear) = (Vec::new(), Vec::new(), Vec::new());
        for row in rows.iter().filter(|x| x.contender != best.contender) {
            let share = verdict::ratio(row.median_bytes_per_second, best.median_bytes_per_second);
            let named = format!("{} ({:.2}x)", row.contender, share);
            match verdict::relate(figure(row), figure(best)) {
                Relation::Same => same.push(named),
                Relation::Below(_) | Relation::Above(_) => slower.push(named),
                Relation::Unclear(_) => unclear.push(named),
            }
        }
        // "Fastest" only where every other contender is clearly slower by the one rule;
        // otherwise the first is first by the median and no more.
        let (lead, whose) = if same.is_empty() && unclear.is_empty() {
            ("fastest", "fastest's")
        } else {
            ("first by the median", "first's")
        };
        let mut parts = vec![format!(
            "{}: {lead} {} ({:.0} MiB/s)",
            state.name(),
            best.contender,
            mib(best.median_bytes_per_second)
        )];
        if !same.is_empty() {
            parts.push(format!(
                "the same within {:.0}%: {}",
                100.0 * (verdict::SAME_WITHIN - 1.0),
                same.join(", ")
            ));
        }
        if !slower.is_empty() {
            parts.push(format!(
                "slower, their runs apart from the {whose}: {}",
                slower.join(", ")
            ));
        }
        if !unclear.is_empty() {
            parts.push(format!(
                "slower by the median, but their runs overlap the {whose} (no order shown; {}): {}",
                verdict::WHAT_WOULD_TELL,
                unclear.join(", ")
            ));
        }
        out.push(parts.join("; "));
    }
    out
}

impl Exportable for CompareReport {
    const COMMAND: &'static str = "compare";
    const HAS_CHART: bool = true;
    fn chart(&self) -> Option<Chart> {
        Some(chart(self))
    }
    fn text(&self) -> String {
        text(self)
    }
    fn markdown(&self) -> Vec<String> {
        markdown(self)
    }
    fn table(&self) -> Table {
        columns::csv(&compare_columns(), &self.rows)
    }
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    fn ok(&self) -> bool {
        CompareReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

/// `compare`: one row per contender and cache state.
pub fn markdown(r: &CompareReport) -> Vec<String> {
    let caption = format!(
        "{} ({}) read by each contender, block size {}, {} each in alternating order; rates are the median (min–max) of the runs",
        crate::text::printable(&r.file),
        format_size(r.file_bytes),
        format_size(r.block_size),
        crate::report::text::runs_asked(r.repeat, r.until_stable)
    );
    let t = columns::markdown(&compare_columns(), &r.rows);
    let mut notes: Vec<String> = r.skipped.iter().map(|s| format!("skipped: {s}")).collect();
    notes.extend(compare_notes(r));
    vec![markdown::table(&t, Some(&caption)), list("Notes:", &notes)]
}

/// The share of the file resident before each run of a row, as `show` writes it, one
/// after another, flagged `(!)` where a run did not start in its state.
fn resident(row: &Row, show: fn(f64) -> String) -> String {
    let shares: Vec<String> = row
        .runs
        .iter()
        .map(|x| show(x.resident_share_before))
        .collect();
    flagged(shares.join(" "), row.state_ok)
}

/// The one table of `compare`: a row per contender and cache state, for the text, Markdown
/// and the CSV. Its own figure and the ratio to the best are the answer; the rate by
/// process wall time goes first, then the residency, when the text does not fit.
fn compare_columns<'a>() -> Vec<Column<'a, Row>> {
    vec![
        Column::new("cache", "", 0, |row: &Row| row.cache.name().to_string())
            .left()
            .csv("cache", |row: &Row| row.cache.name().to_string()),
        Column::new("contender", "", 0, |row: &Row| row.contender.clone())
            .left()
            .csv("contender", |row: &Row| row.contender.clone()),
        // A reader of the user's: whether it printed the file's XOR (empty for the others,
        // so the column is drawn only with --cmd).
        Column::new("XOR", "", 0, |row: &Row| match row.xor_ok() {
            Some(true) => "✓".to_string(),
            Some(false) => format!("✗ {}", row.wrong_xor().unwrap_or_default()),
            None => String::new(),
        })
        .left()
        .csv("xor_ok", |row: &Row| opt(row.xor_ok())),
        // The median with how far its farthest run lies (`±7%`) where it had repeats.
        Column::new("MiB/s (own figures)", "", 0, |row: &Row| {
            let mark = spread_mark(figure(row), false);
            let sep = if mark.is_empty() { "" } else { " " };
            format!("{:.0}{sep}{mark}", mib(row.median_bytes_per_second))
        })
        .heading("MiB/s by its own figures, median (min–max)")
        .markdown_cell(|row: &Row| {
            let own = row.runs.iter().map(|x| x.bytes_per_second);
            let (min, max) = (
                own.clone().fold(f64::INFINITY, f64::min),
                own.fold(0.0, f64::max),
            );
            if row.runs.is_empty() {
                rate(row.median_bytes_per_second)
            } else {
                rate_spread(row.median_bytes_per_second, min, max)
            }
        })
        .csv("median_bytes_per_second", |row: &Row| {
            row.median_bytes_per_second.to_string()
        }),
        Column::new("MiB/s (process wall)", "", 3, |row: &Row| {
            format!("{:.0}", mib(row.median_wall_bytes_per_second))
        })
        .heading("MiB/s by process wall time, median")
        .markdown_cell(|row: &Row| rate(row.median_wall_bytes_per_second))
        .csv("median_wall_bytes_per_second", |row: &Row| {
            row.median_wall_bytes_per_second.to_string()
        }),
        Column::new("vs best", "", 1, |row: &Row| {
            format!("{:.2}x", row.ratio_to_best)
        })
        .heading("vs best (×)")
        .markdown_cell(|row: &Row| format!("{:.2}", row.ratio_to_best))
        .csv("ratio_to_best", |row: &Row| row.ratio_to_best.to_string()),
        Column::raw("runs", |row: &Row| row.runs.len().to_string()),
        Column::raw("bytes_per_second_min", |row: &Row| {
            opt(row.rates().map(|s| s.min))
        }),
        Column::raw("bytes_per_second_max", |row: &Row| {
            opt(row.rates().map(|s| s.max))
        }),
        Column::new("resident before", "", 2, |row: &Row| {
            resident(row, |x| format!("{:.0}%", 100.0 * x))
        })
        .left()
        .heading("resident before each run (%)")
        .markdown_cell(|row: &Row| resident(row, |x| format!("{:.0}", 100.0 * x))),
        Column::raw("state_ok", |row: &Row| row.state_ok.to_string()),
    ]
}

/// `compare`'s rows as grouped bars: one group per contender, one bar per cache state.
pub(crate) fn chart(c: &CompareReport) -> Chart {
    let mut names: Vec<String> = Vec::new();
    for r in &c.rows {
        if !names.contains(&r.contender) {
            names.push(r.contender.clone());
        }
    }
    let states: Vec<CacheState> = [CacheState::Cold, CacheState::Warm]
        .into_iter()
        .filter(|s| c.rows.iter().any(|r| r.cache == *s))
        .collect();
    let spreads = states
        .iter()
        .map(|st| crate::report::svg::Spread {
            series: st.name().to_string(),
            points: names
                .iter()
                .enumerate()
                .filter_map(|(i, n)| {
                    let r = c
                        .rows
                        .iter()
                        .find(|r| r.cache == *st && &r.contender == n)?;
                    (r.runs.len() > 1).then(|| {
                        let rates = r.runs.iter().map(|x| mib(x.bytes_per_second));
                        let lo = rates.clone().fold(f64::MAX, f64::min);
                        (i as f64, lo, rates.fold(0.0, f64::max))
                    })
                })
                .collect(),
        })
        .collect();
    Chart {
        spreads,
        title: format!("readers side by side: {}", c.file),
        x_label: "reader".into(),
        y_label: "read throughput (MiB/s, median)".into(),
        categories: names.clone(),
        series: states
            .iter()
            .map(|st| Series {
                name: st.name().to_string(),
                points: names
                    .iter()
                    .enumerate()
                    .filter_map(|(i, n)| {
                        c.rows
                            .iter()
                            .find(|r| r.cache == *st && &r.contender == n)
                            .map(|r| (i as f64, mib(r.median_bytes_per_second)))
                    })
                    .collect(),
            })
            .collect(),
        ..Chart::default()
    }
}

pub(crate) fn section(c: &CompareReport, part: Part) -> Section {
    let rows = c
        .rows
        .iter()
        .map(|r| {
            let s = r.rates();
            vec![
                r.contender.clone(),
                r.cache.name().to_string(),
                s.map_or("-".into(), |s| rate_cell(&s)),
                format!("{:.1}", mib(r.median_wall_bytes_per_second)),
                format!("{:.2}", r.ratio_to_best),
                if r.state_ok { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    // The ranking per cache state (the one rule) opens the notes; as sentences here.
    let mut why: Vec<String> = compare_notes(c)
        .iter()
        .map(|n| format!("{}.", capitalise(n)))
        .collect();
    if !c.skipped.is_empty() {
        why.push(format!("Not run here: {}.", c.skipped.join("; ")));
    }
    Section {
        part,
        status: None,
        how: format!(
            "The same file ({}) is read by ioscope and by the everyday tools, each as its own process, {} time(s) per cache state; each tool's own figure (bytes and seconds it reports) and the rate by process wall time, start-up included.",
            format_size(c.file_bytes),
            c.repeat
        ),
        grid: grid(
            &[
                "reader",
                "cache",
                "MiB/s own figure (min–max)",
                "MiB/s by wall time",
                "ratio to best",
                "cache state held",
            ],
            rows,
        ),
        chart: Some(chart(c)),
        why,
        warnings: Vec::new(),
    }
}

/// How many runs a row's figure is the median of, with their range: `median of 3 runs,
/// 5982–6376 MiB/s`, or `one run`.
fn runs_of(row: &Row) -> String {
    match row.rates() {
        Some(s) if s.n > 1 => format!(
            "median of {} runs, {:.0}–{:.0} MiB/s",
            s.n,
            mib(s.min),
            mib(s.max)
        ),
        _ => "one run".to_string(),
    }
}

/// Its lines in the study's summary: the fastest reader, cold and warm.
pub(crate) fn headlines(c: &CompareReport) -> Vec<Headline> {
    let mut out = Vec::new();
    for state in [CacheState::Cold, CacheState::Warm] {
        let rows: Vec<_> = c.rows.iter().filter(|x| x.cache == state).collect();
        let fastest = rows.iter().max_by(|a, b| {
            a.median_bytes_per_second
                .total_cmp(&b.median_bytes_per_second)
        });
        let fast = rows.iter().find(|x| x.contender == "ioscope fast");
        let second = rows
            .iter()
            .filter(|x| fastest.is_some_and(|t| t.contender != x.contender))
            .max_by(|a, b| {
                a.median_bytes_per_second
                    .total_cmp(&b.median_bytes_per_second)
            });
        if let (Some(top), Some(fast)) = (fastest, fast) {
            // The summary's order is the section's: "next" only where the runs of the
            // two are apart by the one rule.
            let spread = match second {
                Some(next) if top.contender == fast.contender => {
                    match verdict::relate(figure(next), figure(top)) {
                        Relation::Below(_) => format!(
                            "next: {} at {:.2}x; {}",
                            next.contender,
                            next.ratio_to_best,
                            runs_of(fast)
                        ),
                        Relation::Same => format!(
                            "{} the same within {:.0}% ({:.2}x); {}",
                            next.contender,
                            100.0 * (verdict::SAME_WITHIN - 1.0),
                            next.ratio_to_best,
                            runs_of(fast)
                        ),
                        _ => format!(
                            "{} at {:.2}x by the median, but their runs overlap: no order shown; {}",
                            next.contender,
                            next.ratio_to_best,
                            runs_of(fast)
                        ),
                    }
                }
                _ => format!(
                    "ioscope fast at {:.2}x of it; {}",
                    fast.ratio_to_best,
                    runs_of(top)
                ),
            };
            // "Fastest" only where every other reader is clearly slower by the one rule.
            let others = rows
                .iter()
                .filter(|x| x.contender != top.contender)
                .map(|x| figure(x));
            let lead = match verdict::ties(figure(top), others) {
                0 => "fastest reader",
                _ => "first reader by the median",
            };
            out.push(Headline {
                label: format!("{lead}, {}", state.name()),
                value: format!(
                    "{}: {}",
                    top.contender,
                    format_mib_per_s(top.median_bytes_per_second)
                ),
                spread,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::compare::Run;

    fn row(name: &str, mib_per_s: f64, xor_ok: Option<bool>) -> Row {
        let runs = [0.98, 1.0, 1.02]
            .iter()
            .map(|k| Run {
                bytes: MIB,
                seconds: 1.0 / (mib_per_s * k),
                bytes_per_second: mib_per_s * k * MIB as f64,
                wall_seconds: 1.0 / (mib_per_s * k),
                resident_share_before: 1.0,
                other_io_bytes: None,
                pressure: None,
                printed: xor_ok.map(|ok| if ok { "0000abcd" } else { "0000abce" }.to_string()),
                xor_ok,
            })
            .collect();
        Row {
            contender: name.to_string(),
            cache: CacheState::Warm,
            median_bytes_per_second: mib_per_s * MIB as f64,
            median_wall_bytes_per_second: mib_per_s * MIB as f64,
            ratio_to_best: 0.0,
            state_ok: true,
            settled: None,
            runs,
        }
    }

    #[test]
    fn a_reader_with_a_wrong_xor_is_never_ranked_however_fast() {
        let r = CompareReport {
            file: "f".into(),
            file_bytes: MIB,
            block_size: MIB,
            repeat: 3,
            until_stable: None,
            reference: Some("0000abcd".into()),
            failed_readers: Vec::new(),
            contenders: Vec::new(),
            skipped: Vec::new(),
            rows: vec![
                row("liar", 9000.0, Some(false)),
                row("mine", 3000.0, Some(true)),
                row("cat", 1000.0, None),
            ],
            complete: true,
            warnings: Vec::new(),
        };
        let lines = ranking(&r);
        assert_eq!(
            lines[0],
            "warm: not ranked, a wrong XOR (the file's is 0000abcd): liar (printed 0000abce)"
        );
        assert!(lines[1].starts_with("warm: fastest mine"), "{lines:?}");
        assert!(!lines[1].contains("liar"), "{lines:?}");
        assert!(!r.ok(), "a wrong XOR fails the comparison");
        let text = text(&r);
        assert!(text.contains("✗ 0000abce"), "{text}");
    }
}
