//! `run`: the labelled lines of one read or write.

use crate::engine::Engine;
use crate::engine::flag;
use crate::report::cells::{one_row, opt};
use crate::report::csv::Table;
use crate::report::latency;
use crate::report::text::{
    bytes_both, cache_line, checks_line, cpu_line, in_place, in_place_short, line,
};
use crate::report::view::Exportable;
use crate::results::run::RunReport;
use crate::units::{
    format_bytes_per_second, format_calls_per_second, format_mib_per_s, format_seconds, format_size,
};
use crate::warning::Warning;
use crate::workload::Op;

/// Renders `run`.
pub fn text(r: &RunReport) -> String {
    let mut out = String::new();
    let op = r.op.name();
    let call = format!("{op}()");
    let xor = if r.moves_bytes {
        r.xor_hex.clone()
    } else {
        format!("-          (the {} engine moves no bytes)", r.engine)
    };
    match r.seed {
        Some(seed) => line(&mut out, "xor", format!("{xor}   (seed {seed})")),
        None => line(&mut out, "xor", xor),
    }
    // A read of BLOCK_COUNT blocks that found the end first says so where the bytes are.
    let asked = r.block_count.map(|c| c.saturating_mul(r.block_size));
    let short = match asked {
        Some(asked) if r.op == Op::Read && r.moved.bytes < asked => {
            format!(", short of the {} asked", format_size(asked))
        }
        _ => String::new(),
    };
    line(
        &mut out,
        op,
        format!(
            "{} {} {}{short}",
            bytes_both(r.moved.bytes),
            if r.op == Op::Read { "from" } else { "to" },
            r.file
        ),
    );
    let through = if r.engine == crate::engine::stream::Stream.name() {
        String::new()
    } else {
        format!(" through the {} engine", r.engine)
    };
    let calls = if r.moves_bytes {
        format!(
            "{} {call} of {}{through}",
            crate::units::group_thousands(r.moved.calls),
            format_size(r.block_size)
        )
    } else {
        format!(
            "{} requests of {} walked{through}; no system call made, no byte moved",
            crate::units::group_thousands(r.moved.calls),
            format_size(r.block_size)
        )
    };
    line(&mut out, "calls", calls);
    match (r.write_seconds, r.fsync_seconds) {
        (Some(w), Some(f)) => {
            line(
                &mut out,
                "time",
                format!(
                    "{} = {} {call} + {} fsync",
                    format_seconds(r.seconds),
                    format_seconds(w),
                    format_seconds(f)
                ),
            );
            let before = r.bytes_per_second_before_fsync().unwrap_or(0.0);
            line(
                &mut out,
                "rate",
                format!(
                    "{} ({}) including fsync ({} before fsync), {}",
                    format_mib_per_s(r.bytes_per_second),
                    format_bytes_per_second(r.bytes_per_second),
                    format_mib_per_s(before),
                    format_calls_per_second(r.calls_per_second)
                ),
            );
        }
        _ => {
            line(&mut out, "time", format_seconds(r.seconds));
            line(
                &mut out,
                "rate",
                format!(
                    "{} ({}), {}",
                    format_mib_per_s(r.bytes_per_second),
                    format_bytes_per_second(r.bytes_per_second),
                    format_calls_per_second(r.calls_per_second)
                ),
            );
        }
    }
    if let Some(runs) = crate::report::baseline::repeats_line(&r.repeats) {
        line(&mut out, "runs", runs);
    }
    match (&r.latency, crate::engine::by_name(&r.engine)) {
        (Some(l), _) => line(&mut out, "latency", latency::line(l, &call)),
        (None, Some(e)) => {
            if let Some(why) = e.caps().latency_absent(e.name()) {
                line(&mut out, "latency", format!("- ({why})"));
            }
        }
        (None, None) => {}
    }
    line(&mut out, "cpu", cpu_line(&r.elapsed, 1));
    if let Some(proof) = &r.cache {
        line(&mut out, "cache", cache_line(proof));
    } else if let (Some(k), Op::Write) = (r.kernel, r.op) {
        line(
            &mut out,
            "device",
            format!("{} sent to storage", format_size(k.write_bytes)),
        );
    }
    if let Some(d) = r.device {
        line(
            &mut out,
            "disk",
            format!(
                "{} read, {} written by the device meanwhile (/proc/diskstats, all processes)",
                format_size(d.read_bytes),
                format_size(d.write_bytes)
            ),
        );
    }
    let counted = crate::engine::by_name(&r.engine).is_none_or(|e| e.caps().has(flag::COUNTED));
    line(&mut out, "kernel", checks_line(&r.checks, counted));
    if let Some(o) = &r.over_time {
        // The write-back check is one of the run's caveats, shown in their block.
        for (key, value) in super::over_time::text_lines(o) {
            if key != "writeback" {
                line(&mut out, key, value);
            }
        }
    }
    if let Some(v) = &r.in_place {
        line(&mut out, "verify", in_place(v, &r.file, r.seconds));
    }
    out.push_str(&crate::report::caveats::text(&r.caveats));
    out
}

impl Exportable for RunReport {
    const COMMAND: &'static str = "run";
    fn text(&self) -> String {
        text(self)
    }
    fn answer(&self) -> Option<String> {
        self.moves_bytes.then(|| self.xor_hex.clone())
    }
    fn table(&self) -> Table {
        let mut t = one_row(&[
            ("file", self.file.clone()),
            ("op", self.op.name().to_string()),
            ("engine", self.engine.clone()),
            ("block_size", self.block_size.to_string()),
            ("bytes", self.moved.bytes.to_string()),
            ("calls", self.moved.calls.to_string()),
            ("xor", self.xor_hex.clone()),
            ("seconds", self.seconds.to_string()),
            ("bytes_per_second", self.bytes_per_second.to_string()),
            ("calls_per_second", self.calls_per_second.to_string()),
            ("fsync_seconds", opt(self.fsync_seconds)),
            (
                "resident_share_before",
                opt(self
                    .cache
                    .and_then(|c| c.residency_before)
                    .map(|r| r.fraction())),
            ),
            ("checks_ok", self.ok().to_string()),
            (
                "in_place",
                self.in_place
                    .map(|v| in_place_short(&v))
                    .unwrap_or_default(),
            ),
            ("verify_seconds", opt(self.in_place.map(|v| v.seconds))),
        ]);
        // Latency columns only where there is one, so older results keep their table.
        if let Some(l) = &self.latency {
            t.header.extend(latency::COLUMNS.map(String::from));
            t.rows[0].extend(latency::cells(Some(l)));
        }
        crate::report::baseline::repeats_columns(&mut t, &self.repeats);
        t
    }
    /// The table, then the run over time when one was recorded.
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{humanize, list, table};
        let mut blocks = vec![table(&humanize(&self.table()), None)];
        if let Some(o) = &self.over_time {
            let items: Vec<String> = super::over_time::markdown_items(o, "")
                .into_iter()
                .filter(|i| !i.starts_with("Write-back"))
                .collect();
            blocks.push(list("Over time:", &items));
        }
        blocks
    }
    fn ok(&self) -> bool {
        RunReport::ok(self)
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn caveats(&self) -> &[crate::measure::caveat::Caveat] {
        &self.caveats
    }
}
