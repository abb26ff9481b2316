//! The study as a document: a summary of the few figures that matter, then one section per
//! part — what was measured and how, a table in human units, a chart, and sentences that
//! explain the curve from the measurements. HTML, the terminal text and the comparison of
//! several media are all rendered from these sections, so they always agree.

use super::exports::Exportable;
use super::svg::{Chart, Series};
use crate::cmd::compare::CompareReport;
use crate::cmd::study::{Outcome, Part, StudyReport};
use crate::cmd::sweep::{SweepPoint, SweepReport};
use crate::measure::cache::CacheState;
use crate::measure::env::Environment;
use crate::measure::stats::Summary;
use crate::units::{
    MIB, format_block_size, format_mib_per_s, format_seconds, format_size, group_thousands,
};
use crate::workload::Op;

/// A table with human units (the CSV files keep raw numbers).
#[derive(Debug, Clone, Default)]
pub struct Grid {
    /// Column headings, units included.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

/// One section of the report.
#[derive(Debug, Clone)]
pub struct Section {
    /// Which part.
    pub part: Part,
    /// How it ended, in words (`None`: measured in full).
    pub status: Option<String>,
    /// What was measured and how.
    pub how: String,
    /// The table.
    pub grid: Grid,
    /// The chart, if the part has one.
    pub chart: Option<Chart>,
    /// Sentences that explain what the table and chart show.
    pub why: Vec<String>,
    /// The part's own warnings (cause and fix), as text.
    pub warnings: Vec<String>,
}

/// One figure of the summary.
#[derive(Debug, Clone)]
pub struct Headline {
    /// What it is.
    pub label: String,
    /// The figure (the median, with unit).
    pub value: String,
    /// Its spread (min–max over the runs), or what it rests on.
    pub spread: String,
}

fn mib(bytes_per_second: f64) -> f64 {
    bytes_per_second / MIB as f64
}

/// `1234.5 MiB/s` with `1200–1250` beside it.
fn rate_spread(s: &Summary) -> (String, String) {
    (
        format!("{:.1} MiB/s", mib(s.median)),
        if s.n > 1 {
            format!("{:.1}–{:.1} (n={})", mib(s.min), mib(s.max), s.n)
        } else {
            "one run".to_string()
        },
    )
}

fn rate_cell(s: &Summary) -> String {
    if s.n > 1 {
        format!("{:.1} ({:.1}–{:.1})", mib(s.median), mib(s.min), mib(s.max))
    } else {
        format!("{:.1}", mib(s.median))
    }
}

fn pct(share: f64) -> String {
    format!("{:.1}%", 100.0 * share)
}

/// The points of a sweep in one cache state (`None`: writes).
fn points(r: &SweepReport, state: Option<CacheState>) -> Vec<&SweepPoint> {
    r.points.iter().filter(|p| p.cache == state).collect()
}

fn best(points: &[&SweepPoint]) -> Option<usize> {
    (0..points.len()).max_by(|&a, &b| points[a].rate.median.total_cmp(&points[b].rate.median))
}

/// The figures that matter, with their spread.
pub fn headlines(r: &StudyReport) -> Vec<Headline> {
    let mut out = Vec::new();
    if let Some(w) = r.write_read.iter().find(|w| w.op == Op::Write) {
        out.push(Headline {
            label: "write, fsync included".into(),
            value: format_mib_per_s(w.bytes_per_second),
            spread: format!(
                "one write of {} in 1 MiB calls; fsync {}",
                format_size(w.moved.bytes),
                w.fsync_seconds.map_or("-".into(), format_seconds)
            ),
        });
    }
    if let Some(s) = &r.read_sweep {
        for state in [CacheState::Cold, CacheState::Warm] {
            let pts = points(s, Some(state));
            if let Some(i) = best(&pts) {
                let (value, spread) = rate_spread(&pts[i].rate);
                out.push(Headline {
                    label: format!("read, {}, best block size", state.name()),
                    value,
                    spread: format!("{spread} in calls of {}", format_size(pts[i].block_size)),
                });
            }
        }
    }
    if let Some(s) = &r.write_sweep {
        let pts = points(s, None);
        if let Some(i) = best(&pts) {
            let (value, spread) = rate_spread(&pts[i].rate);
            out.push(Headline {
                label: "write, best block size (fsync included)".into(),
                value,
                spread: format!("{spread} in calls of {}", format_size(pts[i].block_size)),
            });
        }
    }
    if let Some(s) = &r.syscalls {
        for op in ["read 1 B", "getpid"] {
            if let Some(sum) = s.ns_summary(op) {
                out.push(Headline {
                    label: format!("{op} call"),
                    value: format!("{:.0} ns", sum.median),
                    spread: format!(
                        "{:.0}–{:.0} ns over {} sizes; {} calls/s",
                        sum.min,
                        sum.max,
                        sum.n,
                        group_thousands((1e9 / sum.median.max(1e-9)) as u64)
                    ),
                });
            }
        }
    }
    if let Some(c) = &r.compare {
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
                let spread = match second {
                    Some(next) if top.contender == fast.contender => format!(
                        "next: {} at {:.2}x; median of {} run(s)",
                        next.contender,
                        next.ratio_to_best,
                        fast.runs.len()
                    ),
                    _ => format!(
                        "ioscope fast at {:.2}x of it; median of {} run(s)",
                        fast.ratio_to_best,
                        fast.runs.len()
                    ),
                };
                out.push(Headline {
                    label: format!("fastest reader, {}", state.name()),
                    value: format!(
                        "{}: {}",
                        top.contender,
                        format_mib_per_s(top.median_bytes_per_second)
                    ),
                    spread,
                });
            }
        }
    }
    if let Some(c) = &r.calibrate {
        let ten = c.bytes_per_second * 10.0;
        out.push(Headline {
            label: format!("file size for a 10 s read ({})", c.cache.name()),
            value: format_size(ten as u64),
            spread: format!(
                "from a measured read of {} in {}",
                format_size(c.bytes),
                format_seconds(c.seconds)
            ),
        });
    }
    out.push(Headline {
        label: "checksum".into(),
        value: match (r.verified, r.read_back_verified()) {
            (true, Some(true)) => "every read verified".into(),
            (_, None) => "not read back (interrupted)".into(),
            _ => "MISMATCH".into(),
        },
        spread: "XOR of every 32-bit word, compared with the bytes written".into(),
    });
    out
}

/// Every section, in the order the parts ran (parts never reached are left out).
pub fn sections(r: &StudyReport, env: &Environment) -> Vec<Section> {
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
            let mut section = match step.part {
                Part::WriteRead => write_read(r),
                Part::ReadSweep => r.read_sweep.as_ref().map(|s| read_sweep(s, env)),
                Part::WriteSweep => r.write_sweep.as_ref().map(write_sweep),
                Part::Cache => r.cache.as_ref().map(cache),
                Part::Syscalls => r.syscalls.as_ref().map(|s| syscalls(s, r)),
                Part::Compare => r.compare.as_ref().map(compare),
                Part::Patterns => r.patterns.as_ref().map(patterns),
                Part::Transfer => r.transfer.as_ref().map(transfer),
                Part::Calibrate => r.calibrate.as_ref().map(calibrate),
            }
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
            // "Interrupted" is the page's banner and the section's status already.
            section.warnings = part_warnings(r, step.part)
                .iter()
                .filter(|w| !matches!(w, crate::cmd::warning::Warning::Partial))
                .map(super::text::warning)
                .collect();
            section
        })
        .collect()
}

/// The warnings a part's own result carries.
fn part_warnings(r: &StudyReport, part: Part) -> &[crate::cmd::warning::Warning] {
    fn of<T: Exportable>(x: &Option<T>) -> &[crate::cmd::warning::Warning] {
        x.as_ref().map_or(&[], |x| x.warnings())
    }
    match part {
        Part::WriteRead => &r.warnings,
        Part::ReadSweep => of(&r.read_sweep),
        Part::WriteSweep => of(&r.write_sweep),
        Part::Cache => of(&r.cache),
        Part::Syscalls => of(&r.syscalls),
        Part::Compare => of(&r.compare),
        Part::Patterns => of(&r.patterns),
        Part::Transfer => of(&r.transfer),
        Part::Calibrate => r.calibrate.as_ref().map_or(&[], |c| &c.warnings),
    }
}

fn grid(header: &[&str], rows: Vec<Vec<String>>) -> Grid {
    Grid {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn write_read(r: &StudyReport) -> Option<Section> {
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
            r.dir
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
        why.push(if read.verified {
            format!(
                "The read back returned XOR {}, the XOR of the bytes written: every byte verified.",
                read.xor_hex
            )
        } else {
            "The read back did NOT return the bytes written: the file system or the device lost data.".to_string()
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
        part: Part::WriteRead,
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

/// What the rise below the memory page says: the smallest block against the page-sized
/// one. The fixed cost of a call is named as the cause only where the rate at least doubles
/// up to the page ([`crate::measure::verdict::STEEP`]); `None` without a point below the page.
fn below_page(points: &[&SweepPoint], page: u64) -> Option<String> {
    let small = points.first().filter(|p| p.block_size < page)?;
    let at_page = points.iter().find(|p| p.block_size >= page)?;
    let rise = at_page.rate.median / small.rate.median.max(1e-9);
    let rates = format!(
        "{} in calls of {} against {} in calls of {}",
        format_mib_per_s(small.rate.median),
        format_size(small.block_size),
        format_mib_per_s(at_page.rate.median),
        format_size(at_page.block_size)
    );
    Some(if rise >= crate::measure::verdict::STEEP {
        format!(
            "Below the {} memory page each call moves part of a page, so the fixed cost of the call (entering the kernel, finding the page in the cache) is paid for a few bytes: that is the steep rise on the left ({rise:.0}x: {rates}).",
            format_size(page)
        )
    } else {
        format!(
            "Below the {} memory page the rate rises only {rise:.1}x ({rates}): the fixed cost of a call is not what limits these reads.",
            format_size(page)
        )
    })
}

/// The first block size after the peak where the rate falls below 85% of it, and the share.
fn fall_after_peak(points: &[&SweepPoint]) -> Option<(u64, u64, f64)> {
    let peak = best(points)?;
    let top = points[peak].rate.median;
    let fall = points[peak + 1..]
        .iter()
        .find(|p| p.rate.median < crate::measure::verdict::FALLEN * top)?;
    let last = points.last()?;
    Some((
        points[peak].block_size,
        fall.block_size,
        last.rate.median / top.max(1e-9),
    ))
}

/// Why a curve falls at large blocks: the buffer outgrows a CPU cache.
fn explain_fall(op: &str, points: &[&SweepPoint], env: &Environment) -> Option<String> {
    let (peak, fall, share) = fall_after_peak(points)?;
    // A read() copies from the page cache into the buffer: source and destination together
    // are twice the block.
    let cause = match (env.cache_bytes(2), env.cache_bytes(3)) {
        (_, Some(l3)) if 2 * fall >= l3 => format!(
            "each call copies {} out of the page cache into a {} buffer, and the two together ({}) fill the CPU's last-level cache (L3, {}): the copy then streams through main memory instead of the cache",
            format_size(fall),
            format_size(fall),
            format_size(2 * fall),
            format_size(l3)
        ),
        (Some(l2), l3) if fall > l2 => format!(
            "the {} buffer no longer fits the per-core L2 cache ({}{}), so the copy into it evicts the lines it just wrote and the next call must fetch them again from the larger, slower cache",
            format_size(fall),
            format_size(l2),
            l3.map_or(String::new(), |l3| format!("; L3 is {}", format_size(l3)))
        ),
        _ => format!(
            "at {} per call the kernel's work per byte grows (page-table and copy costs of a large buffer)",
            format_size(fall)
        ),
    };
    Some(format!(
        "The {op} curve peaks at {} per call and falls from {} per call up (the largest block reaches {:.0}% of the peak): {cause}.",
        format_size(peak),
        format_size(fall),
        100.0 * share
    ))
}

fn read_sweep(s: &SweepReport, env: &Environment) -> Section {
    let states: Vec<CacheState> = [CacheState::Cold, CacheState::Warm]
        .into_iter()
        .filter(|st| s.points.iter().any(|p| p.cache == Some(*st)))
        .collect();
    let mut header = vec!["block".to_string()];
    for st in &states {
        header.push(format!("{} MiB/s (min–max)", st.name()));
        header.push(format!("{} calls/s", st.name()));
        header.push(format!("{} resident before", st.name()));
        header.push(format!("{} device read", st.name()));
    }
    let blocks: Vec<u64> = {
        let mut b: Vec<u64> = s.points.iter().map(|p| p.block_size).collect();
        b.sort_unstable();
        b.dedup();
        b
    };
    let rows = blocks
        .iter()
        .map(|&bs| {
            let mut row = vec![format_block_size(bs)];
            for st in &states {
                match s
                    .points
                    .iter()
                    .find(|p| p.block_size == bs && p.cache == Some(*st))
                {
                    Some(p) => {
                        row.push(rate_cell(&p.rate));
                        row.push(group_thousands(p.calls_per_second as u64));
                        row.push(p.resident_share_before.map_or("-".into(), |sp| {
                            if (sp.max - sp.min).abs() < 0.0005 {
                                pct(sp.min)
                            } else {
                                format!("{}–{}", pct(sp.min), pct(sp.max))
                            }
                        }));
                        row.push(p.device_read_bytes.map_or("-".into(), format_size));
                    }
                    None => row.extend(std::iter::repeat_n(String::new(), 4)),
                }
            }
            row
        })
        .collect();
    let mut why = Vec::new();
    for a in &s.analyses {
        let label = a.cache.map_or("read", |c| c.name());
        why.push(format!(
            "{}: {}",
            capitalise(label),
            super::text::sweep_explanation(s, a)
        ));
    }
    let warm = points(s, Some(CacheState::Warm));
    let cold = points(s, Some(CacheState::Cold));
    let curve = if warm.is_empty() { &cold } else { &warm };
    if let Some(text) = below_page(curve, env.page_size.max(4096)) {
        why.push(text);
    }
    if let Some(text) = explain_fall("warm", &warm, env) {
        why.push(text);
    }
    if let (Some(c), Some(w)) = (best(&cold), best(&warm)) {
        let (c, w) = (cold[c], warm[w]);
        use crate::measure::verdict::{Figure, Relation, relate};
        let rates = format!(
            "{} against {}",
            format_mib_per_s(w.rate.median),
            format_mib_per_s(c.rate.median)
        );
        let compared = match relate(Figure::from(&w.rate), Figure::from(&c.rate)) {
            Relation::Above(x) => {
                format!("At its best the warm cache is {x:.1}x the cold one ({rates}).")
            }
            Relation::Same => format!(
                "At their best warm and cold reads are within 10% of each other ({rates}): the page cache bought little here."
            ),
            Relation::Below(x) => format!(
                "At their best cold reads are faster than warm ones (warm {x:.2}x cold: {rates}), which no cache explains: load or noise during the warm runs."
            ),
            Relation::Unclear(x) => format!(
                "At their best warm and cold reads differ ({x:.2}x: {rates}) by less than their runs scatter, so no direction is claimed."
            ),
        };
        let residency = format!(
            "esidency before the cold runs was {} and before the warm ones {}, measured with mincore()",
            c.resident_share_before.map_or("-".into(), |sp| pct(sp.max)),
            w.resident_share_before.map_or("-".into(), |sp| pct(sp.min)),
        );
        why.push(match c.device_read_bytes {
            Some(d) => format!(
                "{compared} A cold run read {} from the device (/proc/diskstats); r{residency}.",
                format_size(d)
            ),
            None => format!("{compared} R{residency}."),
        });
        if let (Some(first_cold), Some(first_warm)) = (cold.first(), warm.first())
            && first_cold.rate.median
                >= crate::measure::verdict::CLOSE_SHARE * first_warm.rate.median
        {
            why.push(format!(
                "In calls of {} cold reads run at {:.0}% of the warm rate: the kernel reads ahead{} in large requests whatever the block size, so small calls are limited by their own cost, not by the device.",
                format_size(first_cold.block_size),
                100.0 * first_cold.rate.median / first_warm.rate.median.max(1e-9),
                env.storage
                    .read_ahead_kb
                    .map_or(String::new(), |kb| format!(" (read_ahead_kb = {kb})"))
            ));
        }
    } else if cold.is_empty() && s.device.is_none() {
        why.push(format!(
            "No block device is behind {}: its pages live in memory and cannot be evicted, so only warm reads were measured; there is no device to be cold against.",
            s.file
        ));
    }
    Section {
        part: Part::ReadSweep,
        status: None,
        how: format!(
            "The scratch file ({}) is read sequentially with read() calls of each block size (the run stops after {} calls, so small blocks read a prefix); {} timed run(s) per point after {} warm-up; cold runs start after the file's pages are evicted (fdatasync + fadvise DONTNEED), warm runs after it was read once. Median and min–max over the runs.",
            format_size(s.file_bytes),
            group_thousands(
                s.points
                    .first()
                    .map_or(0, |p| p.bytes / p.block_size.max(1))
            ),
            s.repeat,
            s.warmup
        ),
        grid: Grid { header, rows },
        chart: s.chart(),
        why,
        warnings: Vec::new(),
    }
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    c.next().map_or(String::new(), |f| {
        f.to_uppercase().collect::<String>() + c.as_str()
    })
}

fn write_sweep(s: &SweepReport) -> Section {
    let pts = points(s, None);
    let rows = pts
        .iter()
        .map(|p| {
            let fsync: Vec<f64> = p.runs.iter().filter_map(|r| r.fsync_seconds).collect();
            let share: Vec<f64> = p
                .runs
                .iter()
                .filter_map(|r| r.fsync_seconds.map(|f| f / r.elapsed.seconds.max(1e-9)))
                .collect();
            vec![
                format_block_size(p.block_size),
                format_size(p.bytes),
                rate_cell(&p.rate),
                group_thousands(p.calls_per_second as u64),
                crate::measure::stats::summarize(&fsync)
                    .map_or("-".into(), |f| format_seconds(f.median)),
                crate::measure::stats::summarize(&share).map_or("-".into(), |f| pct(f.median)),
            ]
        })
        .collect();
    let mut why: Vec<String> = s
        .analyses
        .iter()
        .map(|a| super::text::sweep_explanation(s, a))
        .collect();
    let shares: Vec<f64> = pts
        .iter()
        .flat_map(|p| &p.runs)
        .filter_map(|r| r.fsync_seconds.map(|f| f / r.elapsed.seconds.max(1e-9)))
        .collect();
    if let Some(sh) = crate::measure::stats::summarize(&shares) {
        why.push(fsync_share_sentence(&sh, s.device.is_some()));
    }
    Section {
        part: Part::WriteSweep,
        status: None,
        how: format!(
            "A new file is written with write() calls of each block size ({} per run at most, fewer for small blocks), and every run ends with fsync(), whose time is included; {} timed run(s) per point. Median and min–max.",
            format_size(s.file_bytes),
            s.repeat
        ),
        grid: grid(
            &[
                "block",
                "bytes/run",
                "MiB/s incl. fsync (min–max)",
                "calls/s",
                "fsync",
                "fsync share",
            ],
            rows,
        ),
        chart: s.chart(),
        why,
        warnings: Vec::new(),
    }
}

/// The sentences of the patterns section, each chosen by the one rule of
/// [`crate::measure::verdict`]: the usual story (random slower than sequential, rewrite faster than
/// write, reread faster than read) only where the numbers show it; the same, the opposite
/// or "they scatter more than they differ" otherwise.
fn patterns_sentences(p: &crate::cmd::patterns::PatternsReport) -> Vec<String> {
    use crate::measure::verdict::{Figure, Relation, relate};
    let figure = |name: &str| {
        p.results
            .iter()
            .find(|r| r.test.name() == name)
            .map(|r| Figure::from(&r.bytes_per_second))
    };
    let mut why = Vec::new();
    let rates = |a: Figure, b: Figure| {
        format!(
            "{} against {}",
            format_mib_per_s(a.median),
            format_mib_per_s(b.median)
        )
    };
    let scatter = |what: &str, x: f64, a: Figure, b: Figure| {
        format!(
            "{what} differ ({x:.2}x: {}) by less than their runs scatter, so no direction is claimed.",
            rates(a, b)
        )
    };
    if let (Some(seq), Some(random)) = (figure("read"), figure("random read")) {
        let cold = p.cache == CacheState::Cold;
        why.push(match relate(random, seq) {
            Relation::Below(x) => format!(
                "Random reads of 64 KiB records reach {:.0}% of sequential reads ({}): out of order, read-ahead cannot predict the next record{}.",
                100.0 * x,
                rates(random, seq),
                if cold {
                    ", and every record waits for the device"
                } else {
                    ""
                }
            ),
            Relation::Same => format!(
                "Random reads of 64 KiB records run at the sequential rate (within 10%: {}): {}",
                rates(random, seq),
                if cold {
                    "read-ahead is not what limits these reads."
                } else {
                    "from the page cache the order of the records does not matter."
                }
            ),
            Relation::Above(x) => format!(
                "Random reads are faster than sequential ones ({x:.2}x: {}), against the usual story that read-ahead favours order; the two tests ran one after the other, so what changed between them (load, what the cache held) is the first suspect.",
                rates(random, seq)
            ),
            Relation::Unclear(x) => scatter("Random and sequential reads", x, random, seq),
        });
    }
    if let (Some(w), Some(rw)) = (figure("write"), figure("rewrite")) {
        why.push(match relate(rw, w) {
            Relation::Above(x) => format!(
                "Rewriting an existing file runs at {x:.2}x the first write ({}): the blocks are already allocated, so only data moves.",
                rates(rw, w)
            ),
            Relation::Same => format!(
                "Rewriting an existing file runs at the first write's rate (within 10%: {}): allocating its blocks is not what costs here.",
                rates(rw, w)
            ),
            Relation::Below(x) => format!(
                "Rewriting an existing file is slower than the first write ({x:.2}x: {}), although its blocks are already allocated: allocation is not what costs here, and what slowed the rewrite (both include their fsync) is not among what was measured.",
                rates(rw, w)
            ),
            Relation::Unclear(x) => scatter("Rewrite and write", x, rw, w),
        });
    }
    if let (Some(read), Some(reread)) = (figure("read"), figure("reread")) {
        why.push(match relate(reread, read) {
            Relation::Above(x) => format!(
                "The reread comes from the page cache the read filled: {x:.1}x the read ({}).",
                rates(reread, read)
            ),
            Relation::Same => format!(
                "The reread runs at the read's rate (within 10%: {}): the read was already served from memory, or the medium is as fast as the page cache.",
                rates(reread, read)
            ),
            Relation::Below(x) => format!(
                "The reread is slower than the read ({x:.2}x: {}) although the read filled the page cache: the cache did not keep the file, or load slowed the reread.",
                rates(reread, read)
            ),
            Relation::Unclear(x) => scatter("Reread and read", x, reread, read),
        });
    }
    why
}

/// Share of the fsync in each write run, below which it is "a small part", and above which
/// it is "where the time goes" (between the two, neither story is told).
const FSYNC_SMALL: f64 = 0.10;
const FSYNC_LARGE: f64 = 0.30;

/// What the fsync's share of the write runs says, chosen by the share and by whether a
/// block device is under the file system (on tmpfs the fsync has nothing to write).
fn fsync_share_sentence(sh: &crate::measure::stats::Summary, has_device: bool) -> String {
    let share = format!(
        "The final fsync takes {} of each run's time (median; {}–{})",
        pct(sh.median),
        pct(sh.min),
        pct(sh.max)
    );
    if !has_device {
        format!(
            "{share}: no block device is under this file system, so the fsync has nothing to write back and every figure is the page cache's rate."
        )
    } else if sh.median >= FSYNC_LARGE {
        format!(
            "{share}: write() only fills the page cache, and the device's own rate shows in the fsync. Tools that leave it out report the page cache's speed."
        )
    } else if sh.median < FSYNC_SMALL {
        format!(
            "{share}: little was left to write back when it was called (the kernel wrote the data during the run, or the device takes it as fast as memory), so leaving it out would change these figures little."
        )
    } else {
        format!(
            "{share}: part of the time is the device's write-back, part the copy into the page cache."
        )
    }
}

fn cache(c: &crate::cmd::coldwarm::CacheReport) -> Section {
    let rows = c
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![format_block_size(r.block_size)];
            for (_, s) in r.runs() {
                row.push(format!("{:.1}", mib(s.bytes_per_second())));
                row.push(
                    s.cache
                        .and_then(|p| p.residency_before)
                        .map_or("-".into(), |res| pct(res.fraction())),
                );
                row.push(s.device.map_or("-".into(), |d| format_size(d.read_bytes)));
            }
            row
        })
        .collect();
    let why = super::text::cache::explain(c);
    Section {
        part: Part::Cache,
        status: None,
        how: format!(
            "The whole file ({}) is read three times per block size: cold (its pages evicted first), warm (right after), and cold again; residency is measured with mincore() before each run, and the device's counters around it.",
            format_size(c.file_bytes)
        ),
        grid: grid(
            &[
                "block",
                "cold MiB/s",
                "cold resident",
                "cold device read",
                "warm MiB/s",
                "warm resident",
                "warm device read",
                "cold again MiB/s",
                "cold again resident",
                "cold again device read",
            ],
            rows,
        ),
        chart: c.chart(),
        why,
        warnings: Vec::new(),
    }
}

fn syscalls(s: &crate::cmd::syscalls::SyscallsReport, study: &StudyReport) -> Section {
    let rows = crate::cmd::syscalls::OPS
        .iter()
        .filter_map(|op| {
            let sum = s.ns_summary(op)?;
            Some(vec![
                op.to_string(),
                format!("{:.1}", sum.median),
                format!("{:.1}–{:.1}", sum.min, sum.max),
                group_thousands((1e9 / sum.median.max(1e-9)) as u64),
            ])
        })
        .collect();
    let mut why = vec![super::text::syscalls_explanation(s)];
    let read = s.ns_per_call("read 1 B");
    if let Some(model) = study
        .read_sweep
        .as_ref()
        .and_then(|r| {
            r.analyses
                .iter()
                .find(|a| a.cache == Some(CacheState::Warm))
        })
        .and_then(|a| a.model)
        && read > 0.0
    {
        why.push(format!(
            "The read sweep's fitted cost per call ({}) and this 1-byte read ({}) measure the same thing two ways.",
            format_seconds(model.seconds_per_call),
            format_seconds(read * 1e-9)
        ));
    }
    Section {
        part: Part::Syscalls,
        status: None,
        how: format!(
            "Each operation is timed over {} calls on the cached scratch file (a 1-byte read() walks it byte by byte); the spread is over the sizes measured.",
            s.sizes
                .iter()
                .map(|&n| group_thousands(n))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        grid: grid(
            &["operation", "ns per call", "min–max (ns)", "calls/s"],
            rows,
        ),
        chart: s.chart(),
        why,
        warnings: Vec::new(),
    }
}

/// `compare`'s rows as grouped bars: one group per contender, one bar per cache state.
pub fn compare_chart(c: &CompareReport) -> Chart {
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
    Chart {
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

fn compare(c: &CompareReport) -> Section {
    let rows = c
        .rows
        .iter()
        .map(|r| {
            let rates: Vec<f64> = r.runs.iter().map(|x| x.bytes_per_second).collect();
            let s = crate::measure::stats::summarize(&rates);
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
    let mut why = Vec::new();
    for state in [CacheState::Cold, CacheState::Warm] {
        let rows: Vec<_> = c.rows.iter().filter(|x| x.cache == state).collect();
        let top = rows.iter().max_by(|a, b| {
            a.median_bytes_per_second
                .total_cmp(&b.median_bytes_per_second)
        });
        let dd = rows
            .iter()
            .find(|x| x.contender.starts_with("dd ") && !x.contender.contains("direct"));
        if let (Some(top), Some(dd)) = (top, dd) {
            why.push(format!(
                "{}: the fastest reader is {} at {}, {:.2}x {} ({}).",
                capitalise(state.name()),
                top.contender,
                format_mib_per_s(top.median_bytes_per_second),
                top.median_bytes_per_second / dd.median_bytes_per_second.max(1e-9),
                dd.contender,
                format_mib_per_s(dd.median_bytes_per_second)
            ));
        }
    }
    why.extend(super::text::compare_notes(c));
    if !c.skipped.is_empty() {
        why.push(format!("Not run here: {}.", c.skipped.join("; ")));
    }
    Section {
        part: Part::Compare,
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
        chart: Some(compare_chart(c)),
        why,
        warnings: Vec::new(),
    }
}

fn patterns(p: &crate::cmd::patterns::PatternsReport) -> Section {
    let rows = p
        .results
        .iter()
        .map(|r| {
            vec![
                r.test.name().to_string(),
                format_block_size(r.record),
                rate_cell(&r.bytes_per_second),
                r.without_fsync
                    .map_or("-".into(), |s| format!("{:.1}", mib(s.median))),
                r.fsync_seconds.map_or("-".into(), format_seconds),
                group_thousands(r.calls_per_second as u64),
                match r.verified {
                    Some(true) => "yes",
                    Some(false) => "NO",
                    None => "-",
                }
                .to_string(),
            ]
        })
        .collect();
    let why = patterns_sentences(p);
    Section {
        part: Part::Patterns,
        status: None,
        how: format!(
            "iozone's tests on a {} file with 64 KiB records, {} run(s) each; reads start {} (reread follows read, warm); every write ends with fsync, shown and included; every read is checked against the bytes written.",
            format_size(p.sizes.first().copied().unwrap_or(0)),
            p.runs,
            p.cache.name()
        ),
        grid: grid(
            &[
                "test",
                "record",
                "MiB/s (min–max)",
                "MiB/s without fsync",
                "fsync",
                "calls/s",
                "verified",
            ],
            rows,
        ),
        chart: p.chart(),
        why,
        warnings: Vec::new(),
    }
}

/// Each method pair's rate as a share of its workload's best, one series per workload.
pub fn transfer_chart(t: &crate::cmd::transfer::TransferReport) -> Chart {
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

fn transfer(t: &crate::cmd::transfer::TransferReport) -> Section {
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
            super::text::transfer_why(w, t.synced)
                .into_iter()
                .map(move |line| format!("{}: {line}", w.name))
        })
        .collect();
    Section {
        part: Part::Transfer,
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
        chart: Some(transfer_chart(t)),
        why,
        warnings: Vec::new(),
    }
}

/// Each probe's read time against its size, between the window's two bounds.
fn calibrate_chart(c: &crate::cmd::calibrate::CalibrateReport) -> Chart {
    let xs: Vec<f64> = c.probes.iter().map(|p| p.bytes as f64).collect();
    let (lo, hi) = xs
        .iter()
        .fold((f64::MAX, 0.0f64), |(a, b), &x| (a.min(x), b.max(x)));
    let band = |name: &str, y: f64| Series {
        name: name.to_string(),
        points: if lo <= hi {
            vec![(lo, y), (hi, y)]
        } else {
            Vec::new()
        },
    };
    Chart {
        title: format!("calibration probes ({})", c.cache.name()),
        x_label: "bytes read (log2 scale)".into(),
        y_label: "read time (s)".into(),
        log2_x: true,
        series: vec![
            Series {
                name: "probe".into(),
                points: c
                    .probes
                    .iter()
                    .map(|p| (p.bytes as f64, p.seconds))
                    .collect(),
            },
            band("window, low", c.min_seconds),
            band("window, high", c.max_seconds),
        ],
        ..Chart::default()
    }
}

fn calibrate(c: &crate::cmd::calibrate::CalibrateReport) -> Section {
    let rows = c
        .probes
        .iter()
        .map(|p| {
            vec![
                format_size(p.bytes),
                format_seconds(p.seconds),
                format!("{:.1}", mib(p.bytes_per_second)),
                p.cache
                    .and_then(|x| x.residency_before)
                    .map_or("-".into(), |r| pct(r.fraction())),
            ]
        })
        .collect();
    let mut why = vec![format!(
        "A read of {} ({} calls of {}) took {}, inside the window {}–{}.",
        format_size(c.bytes),
        group_thousands(c.block_count),
        format_size(c.block_size),
        format_seconds(c.seconds),
        format_seconds(c.min_seconds),
        format_seconds(c.max_seconds)
    )];
    if (c.min_seconds, c.max_seconds) != (5.0, 15.0) {
        why.push(format!(
            "At this rate the classic 5–15 s read needs a file of about {} (10 s); the thorough level measures it instead of predicting it.",
            format_size((c.bytes_per_second * 10.0) as u64)
        ));
    }
    if let Some(from) = c.grown_from {
        why.push(format!(
            "The scratch file was grown from {} to {} to find it.",
            format_size(from),
            format_size(c.file_bytes)
        ));
    }
    Section {
        part: Part::Calibrate,
        status: None,
        how: format!(
            "Probes read growing prefixes {} with 1 MiB calls; each probe's rate predicts the size that lands in the middle of the window, so the search costs little more than one read of the answer.",
            c.cache.name()
        ),
        grid: grid(&["bytes", "time", "MiB/s", "resident before"], rows),
        chart: Some(calibrate_chart(c)),
        why,
        warnings: Vec::new(),
    }
}
