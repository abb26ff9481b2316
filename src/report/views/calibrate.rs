//! `calibrate`: the size found, the timed read, and the probes that led to it.

use crate::report::cells::{cells, mib, opt, pct, table};
use crate::report::csv::Table;
use crate::report::page::{Headline, Section, grid};
use crate::report::svg::{Chart, Series};
use crate::report::text::{bytes_both, cache_line, line};
use crate::report::view::Exportable;
use crate::results::calibrate::CalibrateReport;
use crate::units::{format_mib_per_s, format_seconds, format_size, group_thousands};
use crate::warning::Warning;
use crate::workload::study::Part;

/// Renders `calibrate`.
pub fn text(r: &CalibrateReport) -> String {
    let mut out = String::new();
    line(
        &mut out,
        "size",
        format!(
            "{} = {} blocks of {}",
            bytes_both(r.bytes),
            group_thousands(r.block_count),
            format_size(r.block_size)
        ),
    );
    line(&mut out, "count", r.block_count);
    // Kept since the XOR was printed (the classic run2 prints it); calibrate refuses an
    // engine that moves no bytes.
    if let Some(xor) = &r.xor_hex {
        line(
            &mut out,
            "xor",
            format!("{xor} (of the {} read)", format_size(r.bytes)),
        );
    }
    line(
        &mut out,
        "time",
        format!(
            "{} at {} ({} cache; window {} to {})",
            format_seconds(r.seconds),
            format_mib_per_s(r.bytes_per_second),
            r.cache.name(),
            format_seconds(r.min_seconds),
            format_seconds(r.max_seconds)
        ),
    );
    if let Some(proof) = r.probes.last().and_then(|p| p.cache.as_ref()) {
        line(&mut out, "cache", cache_line(proof));
    }
    let probes: Vec<String> = r
        .probes
        .iter()
        .map(|p| format!("{} in {}", format_size(p.bytes), format_seconds(p.seconds)))
        .collect();
    line(
        &mut out,
        "probes",
        format!(
            "{} ({} reading in all): {}",
            r.probes.len(),
            format_seconds(r.total_read_seconds),
            probes.join(", ")
        ),
    );
    if let Some(from) = r.grown_from {
        line(
            &mut out,
            "grew",
            format!(
                "{} from {} to {}",
                r.file,
                format_size(from),
                format_size(r.file_bytes)
            ),
        );
    }
    out
}

impl Exportable for CalibrateReport {
    const COMMAND: &'static str = "calibrate";
    fn text(&self) -> String {
        text(self)
    }
    fn table(&self) -> Table {
        let rows = self
            .probes
            .iter()
            .map(|p| {
                cells([
                    p.bytes.to_string(),
                    p.seconds.to_string(),
                    p.bytes_per_second.to_string(),
                    opt(p
                        .cache
                        .and_then(|c| c.residency_before)
                        .map(|r| r.fraction())),
                    opt(p.cache.and_then(|c| c.device_read_bytes)),
                ])
            })
            .collect();
        table(
            &[
                "bytes",
                "seconds",
                "bytes_per_second",
                "resident_share_before",
                "device_read_bytes",
            ],
            rows,
        )
    }
    fn markdown(&self) -> Vec<String> {
        vec![
            crate::report::markdown::table(&crate::report::markdown::humanize(&self.table()), None),
            crate::report::markdown::list("Notes:", &why(self)),
        ]
    }
    fn ok(&self) -> bool {
        CalibrateReport::ok(self)
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

/// Each probe's read time against its size, between the window's two bounds.
pub(crate) fn chart(c: &crate::results::calibrate::CalibrateReport) -> Chart {
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
        scatter: vec!["probe".into()],
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

/// What the size found says: where its read fell against the window, the size a 10 s
/// read needs (with the range the probes give), whether every probe started evicted, and
/// whether the file was grown.
fn why(c: &CalibrateReport) -> Vec<String> {
    let place = if c.seconds < c.min_seconds {
        "below"
    } else if c.seconds > c.max_seconds {
        "above"
    } else {
        "inside"
    };
    let mut why = vec![format!(
        "A read of {} ({} calls of {}) took {}, {place} the window {}–{}.",
        format_size(c.bytes),
        group_thousands(c.block_count),
        format_size(c.block_size),
        format_seconds(c.seconds),
        format_seconds(c.min_seconds),
        format_seconds(c.max_seconds)
    )];
    if (c.min_seconds, c.max_seconds) != (5.0, 15.0) {
        why.push(format!(
            "At this rate the classic 5–15 s read needs a file of about {} (10 s){}; a calibration with the 5–15 s window (the study's thorough level) measures it instead of predicting it.",
            format_size((c.bytes_per_second * 10.0) as u64),
            ten_second_range(c).map_or(String::new(), |(lo, hi, slow, fast)| format!(
                ", though the probes' rates ({:.0}–{:.0} MiB/s) put it anywhere from {} to {}",
                mib(slow),
                mib(fast),
                format_size(lo),
                format_size(hi)
            ))
        ));
    }
    if c.cache == crate::measure::cache::CacheState::Cold
        && c.memory_bytes > 0
        && c.bytes <= c.memory_bytes
        && c.probes_started_evicted()
    {
        why.push(format!(
            "Every probe started with its range evicted (under 1% in the page cache before it). The size found fits in RAM ({} of {}), so a program that reads it twice reads the second time from the cache: evict it before each cold run of your own (ioscope's --cache cold does).",
            format_size(c.bytes),
            format_size(c.memory_bytes)
        ));
    }
    if let Some(from) = c.grown_from {
        why.push(format!(
            "The scratch file was grown from {} to {} to find it.",
            format_size(from),
            format_size(c.file_bytes)
        ));
    }
    why
}

pub(crate) fn section(c: &crate::results::calibrate::CalibrateReport, part: Part) -> Section {
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
    let why = why(c);
    Section {
        part,
        status: None,
        how: format!(
            "Probes read growing prefixes {} with 1 MiB calls; each probe's rate predicts the size that lands in the middle of the window, so the search costs little more than one read of the answer.",
            c.cache.name()
        ),
        grid: grid(&["bytes", "time", "MiB/s", "resident before"], rows),
        chart: Some(chart(c)),
        why,
        warnings: Vec::new(),
    }
}

/// The 10 s sizes the probes' slowest and fastest rates predict, with those rates, where
/// there are two probes or more and they differ by more than 10%.
fn ten_second_range(
    c: &crate::results::calibrate::CalibrateReport,
) -> Option<(u64, u64, f64, f64)> {
    let rates: Vec<f64> = c
        .probes
        .iter()
        .map(|p| p.bytes_per_second)
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    let slow = rates.iter().copied().reduce(f64::min)?;
    let fast = rates.iter().copied().reduce(f64::max)?;
    (rates.len() >= 2 && fast > 1.1 * slow).then_some((
        (slow * 10.0) as u64,
        (fast * 10.0) as u64,
        slow,
        fast,
    ))
}

/// Its line in the study's summary: the file size for a 10 s read.
pub(crate) fn headline(c: &crate::results::calibrate::CalibrateReport) -> Headline {
    let ten = c.bytes_per_second * 10.0;
    Headline {
        label: format!("file size for a 10 s read ({})", c.cache.name()),
        value: format_size(ten as u64),
        spread: format!(
            "from a measured read of {} in {}{}",
            format_size(c.bytes),
            format_seconds(c.seconds),
            ten_second_range(c).map_or(String::new(), |(lo, hi, _, _)| format!(
                "; the probes' rates give {}–{}",
                format_size(lo),
                format_size(hi)
            ))
        ),
    }
}
