//! `study`: the summary (the figures that matter, with their spread), one line per part with
//! how it ended and its first explanation, and the verification verdict. The tables, charts
//! and every explanation are in the report directory.

use crate::measure::cache::CacheState;
use crate::measure::env::Environment;
use crate::measure::pressure::Resource;
use crate::report::cells::{cells, mib, opt, pct, table};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::html::{self, environment_sentence, escape, footer, head};
use crate::report::page::{Grid, Headline, Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::view::Exportable;
use crate::results::study::answers::{Answer, Disagreement, Measured, answer};
use crate::results::study::{Outcome, StudyReport};
use crate::results::sweep::SweepReport;
use crate::units::{format_block_size, format_mib_per_s, format_seconds, format_size};
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::study::Part;
use anyhow::Result;
use std::fmt::Write;

/// The one line on what the read back proved: every byte in place, the XOR alone (results
/// of versions without the check in place), or where it failed.
fn verification(r: &StudyReport) -> String {
    let read = r.read_back();
    match (r.verified, read.map(|x| x.verified), read.and_then(|x| x.in_place)) {
        (_, None, _) => "the file was not read back (interrupted): nothing verified".into(),
        (_, Some(_), Some(v)) if !v.ok() => format!(
            "VERIFICATION FAILED: {}",
            v.mismatch(&crate::text::printable(&r.dir)).unwrap_or_default()
        ),
        (true, Some(true), Some(v)) => format!(
            "every byte verified in place: each byte read back compared with the byte written at its offset, after the timing ({})",
            format_seconds(v.seconds)
        ),
        (true, Some(true), None) => {
            "every read's XOR equals the generator's (XOR only: this result predates the check in place)".into()
        }
        _ => "VERIFICATION FAILED: some reads did not return the bytes written".into(),
    }
}

/// The summary's one table: the terminal's (fitted to its width: the spread goes first,
/// cells wrap between words and never part a number from its unit), the page's and
/// Markdown's.
pub(crate) fn summary_columns<'a>() -> Vec<Column<'a, Headline>> {
    vec![
        Column::new("figure", "", 0, |h: &Headline| h.label.clone()).words(),
        Column::new("median", "", 0, |h: &Headline| h.value.clone()).words(),
        Column::new("spread / basis", "", 1, |h: &Headline| h.spread.clone()).words(),
    ]
}

/// Renders `study`: what each part did and its first explanation, then the answer — the
/// summary's figures and the verification verdict — last, on the terminal's last screen.
pub fn text(r: &StudyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "study of {} ({} level): scratch file of {}, {} in all{}",
        crate::text::printable(&r.dir),
        r.level.name(),
        format_size(r.file_bytes),
        format_seconds(r.seconds),
        if r.complete {
            ""
        } else {
            " — PARTIAL, interrupted"
        }
    );
    // The environment only matters to the explanations' cache sizes: a saved study's own,
    // else (a study just run) this machine's, as its JSON document carries.
    let env = r.environment();
    for (step, section) in r.steps.iter().zip(sections(r, &env)) {
        let state = match &step.outcome {
            Outcome::Done
                if crate::measure::verdict::overran(step.seconds, step.estimated_seconds) =>
            {
                format!(
                    "done in {}, estimated {}",
                    format_seconds(step.seconds),
                    format_seconds(step.estimated_seconds)
                )
            }
            Outcome::Done => format!("done in {}", format_seconds(step.seconds)),
            Outcome::Partial => "interrupted (partial)".to_string(),
            Outcome::Skipped { reason } => format!("skipped: {reason}"),
            Outcome::Failed { error } => format!("FAILED: {error}"),
        };
        let _ = writeln!(out, "{:<12} {state}", step.part.name());
        if let Some(first) = section.why.first() {
            let _ = writeln!(out, "{:<12} {first}", "");
        }
    }
    if let Some(line) = overrun_sentence(r, &env) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(&crate::report::caveats::text(&r.all_caveats()));
    if let Some(kept) = &r.kept_file {
        let kept = crate::text::printable(kept);
        let _ = match r.kept_bytes {
            Some(now) if now != r.file_bytes => writeln!(
                out,
                "scratch file kept at {kept} ({}: the calibration grew it from {})",
                format_size(now),
                format_size(r.file_bytes)
            ),
            Some(now) => writeln!(out, "scratch file kept at {kept} ({})", format_size(now)),
            None => writeln!(out, "scratch file kept at {kept}"),
        };
    }
    // Where the parts disagree, said before the summary, so that its table and the
    // verdict end the output (the answer last).
    for line in answer_sentences(r) {
        let _ = writeln!(out, "{line}");
    }
    out.push_str(&columns::for_terminal(&summary_columns(), &headlines(r)).text);
    let _ = writeln!(out, "{}", verification(r));
    out
}

impl Exportable for StudyReport {
    const COMMAND: &'static str = "study";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    fn table(&self) -> Table {
        let rows = self
            .write_read
            .iter()
            .map(|r| {
                cells([
                    r.op.name().to_string(),
                    r.block_size.to_string(),
                    r.moved.bytes.to_string(),
                    r.moved.calls.to_string(),
                    r.seconds.to_string(),
                    r.bytes_per_second.to_string(),
                    r.calls_per_second.to_string(),
                    opt(r.fsync_seconds),
                    r.xor_hex.clone(),
                    r.verified.to_string(),
                ])
            })
            .collect();
        table(
            &[
                "op",
                "block_size",
                "bytes",
                "calls",
                "seconds",
                "bytes_per_second",
                "calls_per_second",
                "fsync_seconds",
                "xor",
                "verified",
            ],
            rows,
        )
    }
    /// The whole study as report.md has it, without the chart links (the SVGs are in the
    /// report directory, not beside this file).
    fn markdown(&self) -> Vec<String> {
        markdown_blocks(self, &self.environment(), false, None)
    }
    fn chart(&self) -> Option<Chart> {
        super::part::kept::<SweepReport>(self, "read-sweep").and_then(|s| s.chart())
    }
    fn ok(&self) -> bool {
        StudyReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

/// The write's line in the summary, once it ran.
pub(crate) fn write_headline(r: &StudyReport) -> Option<Headline> {
    let w = r.write_read.iter().find(|w| w.op == Op::Write)?;
    Some(Headline {
        label: "write, fsync included".into(),
        value: format_mib_per_s(w.bytes_per_second),
        spread: format!(
            "one write of {} in 1 MiB calls; fsync {}",
            format_size(w.moved.bytes),
            w.fsync_seconds.map_or("-".into(), format_seconds)
        ),
    })
}

/// The rank of the answers' lines in the summary: after the write, before the parts' own.
const ANSWERS_RANK: u8 = 20;

/// The study's answers: the cold and the warm read of the scratch file, each pooled over
/// every part that measured it (`results::study::answers`, where the rule is).
pub fn answers(r: &StudyReport) -> Vec<Answer> {
    let measured: Vec<Measured> = super::part::all().flat_map(|p| p.reads(r)).collect();
    [CacheState::Cold, CacheState::Warm]
        .into_iter()
        .filter_map(|state| answer(state, measured.clone()))
        .collect()
}

/// A measurement's figure as a reader sees it: `906.0 MiB/s (880.0–930.0, n=3)`,
/// `163.0 MiB/s (one run)`.
fn measured_figure(m: &Measured) -> String {
    m.figure().map_or("-".into(), |f| {
        if f.n > 1 {
            format!(
                "{:.1} MiB/s ({:.1}–{:.1}, n={})",
                mib(f.median),
                mib(f.min),
                mib(f.max),
                f.n
            )
        } else {
            format!("{:.1} MiB/s (one run)", mib(f.median))
        }
    })
}

/// A ratio as the sentences give it: `1.13x`, `14.4x`.
fn times(ratio: f64) -> String {
    if ratio < 10.0 {
        format!("{ratio:.2}x")
    } else {
        format!("{ratio:.1}x")
    }
}

/// A measurement's median, MiB/s.
fn median_mib(m: &Measured) -> f64 {
    m.figure().map_or(0.0, |f| mib(f.median))
}

/// An answer's line in the summary: the pooled median with its spread and the parts it
/// pools, or — the parts disagreeing — the range of their medians, never one part's alone.
fn answer_headline(a: &Answer) -> Option<Headline> {
    let pooled = a.pooled.as_ref()?;
    let label = format!("read, {}", a.state.name());
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for m in &a.parts {
        match counts.iter_mut().find(|(name, _)| *name == m.part.name()) {
            Some((_, n)) => *n += m.runs.len(),
            None => counts.push((m.part.name(), m.runs.len())),
        }
    }
    let part_count = counts.len();
    let counts: Vec<String> = counts.iter().map(|(p, n)| format!("{p} {n}")).collect();
    if let Some(d) = &a.disagreement {
        let (lo, hi) = (&a.parts[d.low], &a.parts[d.high]);
        return Some(Headline {
            label,
            value: format!("{:.1}–{:.1} MiB/s", median_mib(lo), median_mib(hi)),
            spread: format!(
                "the parts disagree ({} apart): lowest {}, highest {}; no one figure stands",
                times(d.ratio),
                lo.label(),
                hi.label()
            ),
        });
    }
    let (value, spread) = super::sweep::summary_spread(pooled);
    Some(Headline {
        label,
        value,
        spread: if a.is_pooled() {
            format!(
                "{spread}, pooled over the runs of {} ({}) in calls of {}",
                if part_count == 1 {
                    "one part".to_string()
                } else {
                    format!("{part_count} parts")
                },
                counts.join(", "),
                blocks(a)
            )
        } else {
            format!("{spread}, from {} alone", a.parts[0].label())
        },
    })
}

/// The block sizes an answer pools: `1 MiB`, or `1 MiB and 2 MiB`.
fn blocks(a: &Answer) -> String {
    let mut sizes: Vec<u64> = a.parts.iter().map(|m| m.block_size).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .iter()
        .map(|&b| format_size(b))
        .collect::<Vec<_>>()
        .join(" and ")
}

/// What the summary says beside the answers' lines: where the parts disagree, the range,
/// which part gave which and what their runs show; which parts were left out and why.
pub fn answer_sentences(r: &StudyReport) -> Vec<String> {
    let mut out = Vec::new();
    for a in answers(r) {
        let state = a.state.name();
        let mut upper = state.to_string();
        upper[..1].make_ascii_uppercase();
        if let Some(d) = &a.disagreement {
            let (lo, hi) = (&a.parts[d.low], &a.parts[d.high]);
            let each: Vec<String> = a
                .parts
                .iter()
                .map(|m| format!("{} {}", m.label(), measured_figure(m)))
                .collect();
            out.push(format!(
                "{upper} read: the parts disagree beyond their spreads, {:.1} to {:.1} MiB/s ({}), so no one figure stands for the medium: {}.",
                median_mib(lo),
                median_mib(hi),
                times(d.ratio),
                each.join("; ")
            ));
            out.push(causes(&a, d));
        }
        if !a.left_out.is_empty() {
            let each: Vec<String> = a
                .left_out
                .iter()
                .map(|m| {
                    format!(
                        "{} {}: {}",
                        m.label(),
                        measured_figure(m),
                        m.left_out.as_deref().unwrap_or_default()
                    )
                })
                .collect();
            out.push(format!(
                "Left out of the {state} read: {}.",
                each.join("; ")
            ));
        }
    }
    out
}

/// What the runs of disagreeing parts show, in one sentence; that they show nothing when
/// they carry no mark.
fn causes(a: &Answer, d: &Disagreement) -> String {
    use crate::results::study::answers::Cause;
    let name = |i: usize| a.parts[i].label();
    let shown: Vec<String> = d
        .causes
        .iter()
        .map(|c| match c {
            Cause::OtherIo { who, bytes, runs } => format!(
                "another process used the device during {}: {} beyond its own in {runs} of {} run(s)",
                name(*who),
                format_size(*bytes),
                a.parts[*who].runs.len()
            ),
            Cause::Contended {
                who,
                resource,
                share,
                runs,
            } => format!(
                "tasks on the machine waited for {} during {}: {} of a run's time in {runs} of {} run(s)",
                match resource {
                    Resource::Cpu => "a CPU",
                    Resource::Io => "I/O",
                    Resource::Memory => "memory",
                },
                name(*who),
                pct(*share),
                a.parts[*who].runs.len()
            ),
            Cause::FirstAfterEviction { who, later } => format!(
                "{} is the first read after the file's pages were evicted, and its {} ({:.1} MiB/s) differs from it",
                name(*who),
                a.parts[*later].what,
                median_mib(&a.parts[*later])
            ),
            Cause::BlockSize { low, high } => format!(
                "the lowest read in calls of {}, the highest in calls of {}",
                format_size(a.parts[*low].block_size),
                format_size(a.parts[*high].block_size)
            ),
            Cause::Engine { low, high } => format!(
                "the lowest read through the {} engine, the highest through {}",
                a.parts[*low].engine, a.parts[*high].engine
            ),
        })
        .collect();
    let unrecorded: Vec<String> = a
        .parts
        .iter()
        .filter(|m| !m.recorded())
        .map(Measured::label)
        .collect();
    let unrecorded = if unrecorded.is_empty() {
        String::new()
    } else {
        format!(" ({} recorded no interference)", unrecorded.join(" and "))
    };
    if shown.is_empty() {
        format!(
            "Their runs carry no mark of other I/O or of pressure{unrecorded}, and the lowest and the highest read through the same engine in calls of the same size: the data does not show why they differ."
        )
    } else {
        format!("What their runs show: {}{unrecorded}.", shown.join("; "))
    }
}

/// The sentence on the study's time when it ran clearly longer than estimated: by how much,
/// the parts that did, and what the machine was doing that the study recorded (the load in
/// `env`, the parts' other I/O and pressure marks) — or that it recorded nothing. `None`
/// for a study that kept to its estimate.
pub fn overrun_sentence(r: &StudyReport, env: &Environment) -> Option<String> {
    use crate::warning::Warning;
    let o = r.overrun()?;
    let parts: Vec<String> = o
        .parts
        .iter()
        .take(4)
        .map(|(p, actual, estimated)| {
            format!(
                "{} {} against {}",
                p.name(),
                format_seconds(*actual),
                format_seconds(*estimated)
            )
        })
        .collect();
    let mut doing = Vec::new();
    if let Some(load) = env.load_1m {
        let cores = env
            .cores_online
            .map_or(String::new(), |c| format!(" on {c} cores"));
        doing.push(format!("the load was {load:.1}{cores} at the end"));
    }
    let with = |pick: &dyn Fn(&Warning) -> bool| -> Vec<&'static str> {
        super::part::all()
            .filter(|p| p.warnings(r).iter().any(pick))
            .map(|p| p.part().name())
            .collect()
    };
    let other = with(&|w| matches!(w, Warning::OtherIo { .. }));
    if !other.is_empty() {
        doing.push(format!(
            "another process used the device during runs of {}",
            other.join(", ")
        ));
    }
    for (resource, what) in [
        (Resource::Cpu, "a CPU"),
        (Resource::Io, "I/O"),
        (Resource::Memory, "memory"),
    ] {
        let stalled =
            with(&|w| matches!(w, Warning::Contended { resource: x, .. } if *x == resource));
        if !stalled.is_empty() {
            doing.push(format!(
                "tasks on the machine waited for {what} during runs of {}",
                stalled.join(", ")
            ));
        }
    }
    let machine = if doing.is_empty() {
        "it recorded no load, other I/O or pressure that would explain it: the medium may be slower than the VM's".to_string()
    } else {
        format!("while it ran, {}", doing.join("; "))
    };
    Some(format!(
        "The study took {}, {:.1}x the {} estimated (on an idle 2-vCPU VM){}{}; {machine}.",
        format_seconds(o.seconds),
        o.seconds / o.estimated.max(1e-9),
        format_seconds(o.estimated),
        if parts.is_empty() { "" } else { ": " },
        parts.join(", ")
    ))
}

/// The figures that matter, with their spread: each part's lines (in the order of their
/// rank, then the order they run) with the answers' lines at their rank, then the
/// checksum's.
pub fn headlines(r: &StudyReport) -> Vec<Headline> {
    let mut parts: Vec<_> = super::part::all().collect();
    parts.sort_by_key(|p| p.summary_rank());
    let (before, after): (Vec<&dyn super::part::PartView>, Vec<_>) = parts
        .iter()
        .copied()
        .partition(|p| p.summary_rank() < ANSWERS_RANK);
    let mut out: Vec<Headline> = before.iter().flat_map(|p| p.headlines(r)).collect();
    out.extend(answers(r).iter().filter_map(answer_headline));
    out.extend(after.iter().flat_map(|p| p.headlines(r)));
    let in_place = r.read_back().and_then(|x| x.in_place);
    out.push(Headline {
        label: "checksum".into(),
        value: match (r.verified, r.read_back_verified(), in_place) {
            (_, Some(_), Some(v)) if !v.ok() => "NOT IN PLACE".into(),
            (true, Some(true), Some(_)) => "every byte verified in place".into(),
            (true, Some(true), None) => "XOR verified".into(),
            (_, None, _) => "not read back (interrupted)".into(),
            _ => "MISMATCH".into(),
        },
        spread: if in_place.is_some() {
            "each byte read compared with the byte written at its offset; XOR of every 32-bit word printed".into()
        } else {
            "XOR of every 32-bit word, compared with the bytes written".into()
        },
    });
    out
}

/// Every section, in the order the parts ran (parts never reached are left out).
pub fn sections(r: &StudyReport, env: &Environment) -> Vec<Section> {
    let medium = html::medium_name(env);
    r.steps
        .iter()
        .map(|step| {
            let status = match &step.outcome {
                Outcome::Done => None,
                Outcome::Partial => {
                    Some("interrupted: what is shown was measured before Ctrl-C".to_string())
                }
                Outcome::Skipped { reason } => Some(format!("skipped: {reason}")),
                Outcome::Failed { error } => Some(format!("failed: {error}")),
            };
            let part = super::part::of(step.part);
            let mut section = part
                .and_then(|p| p.section(r, env))
                .unwrap_or_else(|| Section {
                    part: step.part,
                    status: None,
                    how: String::new(),
                    grid: Grid::default(),
                    chart: None,
                    why: Vec::new(),
                    warnings: Vec::new(),
                });
            section.status = status;
            if let Some(chart) = &mut section.chart {
                chart.title = name_the_medium(&chart.title, &medium);
            }
            // "Interrupted" is the page's banner and the section's status already.
            section.warnings = part
                .map_or(&[][..], |p| p.warnings(r))
                .iter()
                .filter(|w| !matches!(w, crate::warning::Warning::Partial))
                .map(crate::report::text::warning)
                .collect();
            section
        })
        .collect()
}

/// A chart title with the study's scratch files (`dir/.ioscope-study-16633`) named by the
/// medium they are on (`ext4 on vda`): the reader compares media, not scratch names.
pub fn name_the_medium(title: &str, medium: &str) -> String {
    let mut out = String::new();
    let mut rest = title;
    while let Some(at) = rest.find(".ioscope-") {
        let start = rest[..at].rfind([' ', '(']).map_or(0, |i| i + 1);
        let end = rest[at..]
            .find([' ', ')', ','])
            .map_or(rest.len(), |i| at + i);
        out.push_str(&rest[..start]);
        out.push_str(medium);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The device's write cache as the study's check read it, when it did.
pub(crate) fn write_cache(r: &StudyReport) -> Option<&crate::measure::writecache::WriteCache> {
    r.caveats.iter().find_map(|c| match &c.evidence {
        crate::measure::caveat::Evidence::WriteCache(e) => Some(&e.cache),
        _ => None,
    })
}

/// The write and the read back: the write-read part's section.
pub(crate) fn write_read(r: &StudyReport, part: Part) -> Option<Section> {
    let rows = r
        .write_read
        .iter()
        .map(|w| {
            vec![
                w.op.name().to_string(),
                format_block_size(w.block_size),
                format_size(w.moved.bytes),
                format_seconds(w.seconds),
                format!("{:.1}", mib(w.bytes_per_second)),
                w.fsync_seconds.map_or("-".into(), format_seconds),
                w.cache
                    .and_then(|c| c.residency_before)
                    .map_or("-".into(), |res| pct(res.fraction())),
                w.xor_hex.clone(),
                if w.verified { "yes" } else { "NO" }.to_string(),
            ]
        })
        .collect();
    let mut why = Vec::new();
    if let Some(w) = r.write_read.iter().find(|w| w.op == Op::Write)
        && let Some(f) = w.fsync_seconds
        && r.device.is_none()
    {
        why.push(format!(
            "The fsync took {}: no block device is under {}, so it had nothing to write; the write's rate is the page cache's.",
            format_seconds(f),
            crate::text::printable(&r.dir)
        ));
    } else if let Some(w) = r.write_read.iter().find(|w| w.op == Op::Write)
        && let Some(f) = w.fsync_seconds
    {
        let before = w.moved.bytes as f64 / (w.seconds - f).max(1e-9);
        why.push(format!(
            "The write's time includes its fsync ({} of {}): before it the bytes had only reached the page cache, at {}; the fsync is what the device took.",
            format_seconds(f),
            format_seconds(w.seconds),
            format_mib_per_s(before)
        ));
    }
    if let Some(read) = r.write_read.iter().find(|w| w.op == Op::Read) {
        why.push(match (read.verified, read.in_place) {
            (_, Some(v)) if !v.ok() => format!(
                "The read back did NOT return the bytes written where they were written: {}.",
                v.mismatch(&crate::text::printable(&r.dir)).unwrap_or_default()
            ),
            (true, Some(v)) => format!(
                "The read back returned XOR {}, the XOR of the bytes written, and every byte compared after the timing was the byte written at its offset ({} blocks of {} in {}): every byte verified in place.",
                read.xor_hex,
                crate::units::group_thousands(v.blocks),
                v.blocks_of(),
                format_seconds(v.seconds)
            ),
            (true, None) => format!(
                "The read back returned XOR {}, the XOR of the bytes written (an XOR alone does not see blocks that traded places).",
                read.xor_hex
            ),
            (false, _) => "The read back did NOT return the bytes written: the file system or the device lost data.".to_string(),
        });
    }
    let mut bars = Vec::new();
    let mut names = Vec::new();
    for w in &r.write_read {
        if let (Op::Write, Some(f)) = (w.op, w.fsync_seconds) {
            names.push("write() into the page cache".to_string());
            bars.push(w.moved.bytes as f64 / (w.seconds - f).max(1e-9));
            names.push("write() + fsync".to_string());
        } else {
            names.push(format!("{} back", w.op.name()));
        }
        bars.push(w.bytes_per_second);
    }
    let chart = (!bars.is_empty()).then(|| Chart {
        title: "the scratch file: written, then read back".into(),
        x_label: "step".into(),
        y_label: "throughput (MiB/s)".into(),
        categories: names,
        series: vec![Series {
            name: format!("{} in 1 MiB calls", format_size(r.file_bytes)),
            points: bars
                .iter()
                .enumerate()
                .map(|(i, &b)| (i as f64, mib(b)))
                .collect(),
        }],
        ..Chart::default()
    });
    Some(Section {
        part,
        status: None,
        how: format!(
            "A scratch file of {} is written with 1 MiB write() calls from a seeded generator and fsynced, then read back whole with 1 MiB read() calls as it is in the cache; the XOR checksum of the read must equal that of the bytes written.",
            format_size(r.file_bytes)
        ),
        grid: grid(
            &[
                "op",
                "block",
                "bytes",
                "time",
                "MiB/s",
                "fsync",
                "resident before",
                "XOR",
                "verified",
            ],
            rows,
        ),
        chart,
        why,
        warnings: Vec::new(),
    })
}

/// The page of one study.
/// `raw`: where the raw figures are when not beside the page (the study document read).
pub fn page(
    r: &StudyReport,
    env: &Environment,
    provenance: &crate::report::json::Provenance,
    command_line: &str,
    raw: Option<&str>,
    baseline: Option<&crate::results::baseline::Against>,
) -> Result<String> {
    let mut out = String::new();
    let medium = html::medium_name(env);
    head(
        &mut out,
        &format!(
            "ioscope study of {medium} ({})",
            crate::text::printable(&r.dir)
        ),
    );
    let _ = writeln!(
        out,
        "<h1>ioscope study of {} <small>({})</small></h1>\n<p class=\"env\">{}</p>",
        escape(&medium),
        escape(&crate::text::printable(&r.dir)),
        escape(&environment_sentence(env))
    );
    out.push_str(&html::provenance(provenance));
    if !r.complete {
        let _ = writeln!(
            out,
            "<p class=\"banner bad\">PARTIAL REPORT: the study was interrupted after {} of its parts; every figure below was measured before that, and the parts not reached are missing.</p>",
            r.steps.len()
        );
    }
    if !r.ok() {
        out.push_str("<p class=\"banner bad\">A check failed: see the sections marked NO, MISMATCH or failed.</p>\n");
    }
    let _ = writeln!(
        out,
        "<h2>Summary</h2>\n<p class=\"how\">The {} level ({} scratch file, {} timed run(s) per sweep point) took {} (estimated {}). Medians, with their spread.</p>",
        r.level.name(),
        format_size(r.file_bytes),
        r.budget.repeat,
        format_seconds(r.seconds),
        format_seconds(r.estimated_seconds)
    );
    if let Some(line) = overrun_sentence(r, env) {
        let _ = writeln!(out, "<p class=\"how\">{}</p>", escape(&line));
    }
    html::table(&mut out, &columns::grid(&summary_columns(), &headlines(r)));
    let said = answer_sentences(r);
    if !said.is_empty() {
        out.push_str("<ul class=\"why\">\n");
        for line in &said {
            let _ = writeln!(out, "<li>{}</li>", escape(line));
        }
        out.push_str("</ul>\n");
    }
    out.push_str(&crate::report::caveats::html(&r.all_caveats()));
    if let Some(a) = baseline {
        out.push_str(&crate::report::baseline::html(a));
    }
    let all = sections(r, env);
    out.push_str("<nav><p>");
    let links: Vec<String> = baseline
        .map(|_| "<a href=\"#baseline\">Against the baseline</a>".to_string())
        .into_iter()
        .chain(all.iter().map(|s| {
            format!(
                "<a href=\"#{}\">{}</a>",
                s.part.name(),
                crate::report::html::prose(s.part.title())
            )
        }))
        .collect();
    out.push_str(&links.join(" · "));
    out.push_str("</p></nav>\n");
    for s in &all {
        html::section(&mut out, s)?;
    }
    footer(&mut out, command_line, raw);
    Ok(out)
}

/// The blocks of a study in Markdown (summary, then every part), explained with the caches
/// of `env`; `charts`: link each part's chart to the SVG of that name beside the file (the
/// report directory has them; a `--markdown FILE` elsewhere does not).
pub fn markdown_blocks(
    r: &StudyReport,
    env: &crate::measure::env::Environment,
    charts: bool,
    baseline: Option<&crate::results::baseline::Against>,
) -> Vec<String> {
    use crate::report::markdown::{escape, list, table};
    let grid = |g: &crate::report::page::Grid| crate::report::csv::Table {
        header: g.header.clone(),
        rows: g.rows.clone(),
    };
    let mut blocks = Vec::new();
    if !r.complete {
        blocks.push(
            "**Partial report:** the study was interrupted; the parts not reached are missing.\n"
                .to_string(),
        );
    }
    blocks.push(table(
        &columns::markdown(&summary_columns(), &headlines(r)),
        Some("Summary"),
    ));
    if let Some(line) = overrun_sentence(r, env) {
        blocks.push(format!("{}\n", escape(&line)));
    }
    let said = answer_sentences(r);
    if !said.is_empty() {
        blocks.push(list("One answer per question:", &said));
    }
    blocks.extend(crate::report::caveats::markdown(&r.all_caveats()));
    if let Some(a) = baseline {
        blocks.extend(crate::report::baseline::markdown(a));
    }
    for s in sections(r, env) {
        let mut block = format!("## {}\n\n", escape(s.part.title()));
        if let Some(status) = &s.status {
            block.push_str(&format!("*{}*\n\n", escape(status)));
        }
        if !s.how.is_empty() {
            block.push_str(&format!("{}\n\n", escape(&s.how)));
        }
        if charts && s.chart.is_some() {
            let name = s.part.name();
            block.push_str(&format!("![{}]({name}.svg)\n\n", escape(s.part.title())));
        }
        blocks.push(block);
        if !s.grid.rows.is_empty() {
            blocks.push(table(&grid(&s.grid), None));
        }
        if !s.why.is_empty() {
            blocks.push(list("Why:", &s.why));
        }
        if !s.warnings.is_empty() {
            blocks.push(list("Warnings:", &s.warnings));
        }
    }
    blocks
}

/// `report.md`: the page as GitHub-flavoured Markdown — the summary, then per part how it
/// was measured, its chart as a link to the SVG beside it, its table and its sentences — to
/// paste into a course report or commit beside the code.
pub fn report_markdown(
    r: &StudyReport,
    provenance: &crate::report::json::Provenance,
    baseline: Option<&crate::results::baseline::Against>,
) -> String {
    crate::report::markdown::document(
        &format!(
            "ioscope study of {} ({}, {} level)",
            html::medium_name(&provenance.environment),
            crate::text::printable(&r.dir),
            r.level.name()
        ),
        provenance,
        &markdown_blocks(r, &provenance.environment, true, baseline),
    )
}

#[cfg(test)]
mod medium_tests {
    use super::name_the_medium;

    #[test]
    fn scratch_file_names_in_chart_titles_become_the_medium() {
        assert_eq!(
            name_the_medium(
                "read throughput against block size: ioscope-study/.ioscope-study-16633",
                "ext4 on vda"
            ),
            "read throughput against block size: ext4 on vda"
        );
        assert_eq!(
            name_the_medium(
                "iozone's tests on /tmp/x/.ioscope-patterns-12 (16 MiB file, records of 64 KiB)",
                "tmpfs (no block device)"
            ),
            "iozone's tests on tmpfs (no block device) (16 MiB file, records of 64 KiB)"
        );
        assert_eq!(name_the_medium("transfer: pairs", "x"), "transfer: pairs");
    }
}
