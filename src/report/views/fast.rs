//! `fast`: the checksum alone on stdout; the method and figures with `--verbose`.

use crate::engine::flag;
use crate::report::cells::{one_row, rate};
use crate::report::csv::Table;
use crate::report::markdown::{self, header, list};
use crate::report::text::{bytes_both, cpu_line, line};
use crate::report::view::Exportable;
use crate::results::fast::FastReport;
use crate::units::per_second;
use crate::units::{
    format_block_size, format_calls_per_second, format_mib_per_s, format_seconds, format_size,
    group_thousands,
};

/// Renders `fast`: the checksum line alone, so `$(ioscope fast f)` is the XOR.
pub fn text(r: &FastReport) -> String {
    format!("{}\n", r.xor_hex)
}

/// `fast --verbose` details, for stderr.
pub fn fast_details(r: &FastReport) -> String {
    let mut out = String::new();
    let threads = if r.threads == 1 {
        "1 thread".to_string()
    } else {
        format!("{} threads", r.threads)
    };
    let depth = if r.caps.has(flag::QUEUED) {
        format!(", depth {}", r.depth)
    } else {
        String::new()
    };
    line(
        &mut out,
        "method",
        format!(
            "{} ({threads}, blocks of {}{depth}): {}",
            r.engine,
            format_size(r.block_size),
            r.reason
        ),
    );
    line(&mut out, "", &r.method);
    for f in &r.fallbacks {
        line(&mut out, "skipped", f);
    }
    line(
        &mut out,
        "read",
        format!(
            "{} in {} = {}",
            bytes_both(r.moved.bytes),
            format_seconds(r.seconds),
            format_mib_per_s(r.bytes_per_second)
        ),
    );
    if let Some(runs) = crate::report::baseline::repeats_line(&r.repeats) {
        line(&mut out, "runs", runs);
    }
    if r.caps.has(flag::ZERO_COPY) {
        line(
            &mut out,
            "in place",
            format!(
                "{} of {} ({}) XOR-ed where they lay in the page cache, with no copy",
                format_size(r.moved.in_place),
                format_size(r.moved.bytes),
                percent(r.moved.in_place as f64, r.moved.bytes as f64)
            ),
        );
    }
    line(
        &mut out,
        "choice",
        format!(
            "{} before the run ({} of it)",
            format_seconds(r.choice_seconds),
            percent(r.choice_seconds, r.seconds)
        ),
    );
    if r.caps.has(flag::PER_CHUNK) {
        let t = r.moved.tests;
        line(
            &mut out,
            "tests",
            format!(
                "{} chunks tested for huge pages, {} found; {} of testing ({} of the threads' time)",
                crate::units::group_thousands(t.tested),
                crate::units::group_thousands(t.huge),
                format_seconds(t.nanos as f64 / 1e9),
                percent(t.nanos as f64 / 1e9, r.seconds * r.threads as f64)
            ),
        );
    }
    line(
        &mut out,
        "calls",
        format!(
            "{} ({})",
            crate::units::group_thousands(r.moved.calls),
            format_calls_per_second(per_second(r.moved.calls, r.seconds))
        ),
    );
    line(&mut out, "cpu", cpu_line(&r.elapsed, r.threads));
    if let Some(res) = r.residency_before {
        line(
            &mut out,
            "cache",
            format!("{} resident before the run", res.percent()),
        );
    }
    out.push_str(&crate::report::caveats::text(&r.caveats));
    out
}

/// `part` as a percentage of `whole`, one decimal ("-" when the whole is zero).
fn percent(part: f64, whole: f64) -> String {
    if whole > 0.0 {
        format!("{:.1}%", 100.0 * part / whole)
    } else {
        "-".to_string()
    }
}

impl Exportable for FastReport {
    const COMMAND: &'static str = "fast";
    const STDOUT_IS_THE_ANSWER: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    fn markdown(&self) -> Vec<String> {
        markdown(self)
    }
    fn table(&self) -> Table {
        let mut t = one_row(&[
            ("file", self.file.clone()),
            ("engine", self.engine.clone()),
            ("threads", self.threads.to_string()),
            ("block_size", self.block_size.to_string()),
            ("bytes", self.moved.bytes.to_string()),
            ("calls", self.moved.calls.to_string()),
            ("xor", self.xor_hex.clone()),
            ("seconds", self.seconds.to_string()),
            ("bytes_per_second", self.bytes_per_second.to_string()),
        ]);
        crate::report::baseline::repeats_columns(&mut t, &self.repeats);
        t
    }
    fn ok(&self) -> bool {
        true
    }
    fn caveats(&self) -> &[crate::measure::caveat::Caveat] {
        &self.caveats
    }
}

/// `fast`: the one run, as `--verbose` describes it.
pub fn markdown(r: &FastReport) -> Vec<String> {
    let caption = format!(
        "the XOR of {} by the {} engine: {}",
        r.file, r.engine, r.reason
    );
    let t = Table {
        header: header(&[
            "engine",
            "threads",
            "block size",
            "bytes",
            "time (ms)",
            "MiB/s",
            "calls",
            "resident before (%)",
            "XOR",
        ]),
        rows: vec![vec![
            r.engine.clone(),
            r.threads.to_string(),
            format_block_size(r.block_size),
            format_size(r.moved.bytes),
            format!("{:.3}", r.seconds * 1e3),
            rate(r.bytes_per_second),
            group_thousands(r.moved.calls),
            r.residency_before
                .map_or("-".into(), |x| markdown::percent(x.fraction())),
            r.xor_hex.clone(),
        ]],
    };
    let mut notes = vec![format!("method: {}", r.method)];
    notes.extend(r.fallbacks.iter().map(|f| format!("skipped: {f}")));
    vec![markdown::table(&t, Some(&caption)), list("Notes:", &notes)]
}
