//! Human-readable results: short labelled lines, and tables where there are rows.

use crate::cmd::calibrate::CalibrateReport;
use crate::cmd::compare::CompareReport;
use crate::cmd::fast::FastReport;
use crate::cmd::run::RunReport;
use crate::cmd::study::StudyReport;
use crate::measure::checks::Check;
use crate::units::{
    format_block_size, format_calls_per_second, format_mib_per_s, format_seconds, format_size,
    group_thousands, per_second,
};
use comfy_table::{CellAlignment, Table, presets::UTF8_FULL_CONDENSED};
use std::fmt::Write;

fn line(out: &mut String, key: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{key:<9} {value}");
}

fn bytes_both(bytes: u64) -> String {
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else {
        format!("{} ({} bytes)", format_size(bytes), group_thousands(bytes))
    }
}

/// The kernel cross-check in one line: a tick when all agree, the figures when not.
fn checks_line(checks: &[Check]) -> String {
    if checks.is_empty() {
        return "not checked (/proc/self/io is not available)".to_string();
    }
    let parts: Vec<String> = checks
        .iter()
        .map(|c| {
            if c.ok {
                format!("{} {}", c.name.replace('_', " "), group_thousands(c.kernel))
            } else {
                format!(
                    "{} claimed {} but kernel saw {}",
                    c.name.replace('_', " "),
                    group_thousands(c.claimed),
                    group_thousands(c.kernel)
                )
            }
        })
        .collect();
    let mark = if checks.iter().all(|c| c.ok) {
        "ok"
    } else {
        "MISMATCH"
    };
    format!("{mark}: {} (/proc/self/io)", parts.join(", "))
}

/// Warnings for checks that failed, naming the cause.
pub fn check_warnings(checks: &[Check]) -> Vec<String> {
    checks
        .iter()
        .filter(|c| !c.ok)
        .map(|c| {
            if c.name == "device_read_bytes" {
                format!(
                    "expected about {} from the device for this cache state but the kernel ({}) counted {}: the run did not start in the state it claims (eviction refused, or memory pressure)",
                    format_size(c.claimed), c.source, format_size(c.kernel)
                )
            } else {
                format!(
                    "{}: ioscope counted {} but the kernel ({}) counted {}; something else did I/O in this process, or the count is wrong",
                    c.name, c.claimed, c.source, c.kernel
                )
            }
        })
        .collect()
}

/// Renders `run`.
pub fn run(r: &RunReport) -> String {
    let mut out = String::new();
    let call = if r.op == "read" { "read()" } else { "write()" };
    match r.seed {
        Some(seed) => line(&mut out, "xor", format!("{}   (seed {seed})", r.xor_hex)),
        None => line(&mut out, "xor", &r.xor_hex),
    }
    line(
        &mut out,
        r.op,
        format!(
            "{} {} {}",
            bytes_both(r.moved.bytes),
            if r.op == "read" { "from" } else { "to" },
            r.file
        ),
    );
    line(
        &mut out,
        "calls",
        format!(
            "{} {call} of {}",
            group_thousands(r.moved.calls),
            format_size(r.block_size)
        ),
    );
    match (r.write_seconds, r.fsync_seconds) {
        (Some(w), Some(f)) => {
            line(
                &mut out,
                "time",
                format!(
                    "{} = {} write() + {} fsync",
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
                    "{} including fsync ({} before fsync), {}",
                    format_mib_per_s(r.bytes_per_second),
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
                    "{}, {}",
                    format_mib_per_s(r.bytes_per_second),
                    format_calls_per_second(r.calls_per_second)
                ),
            );
        }
    }
    line(
        &mut out,
        "cpu",
        format!(
            "user {}, system {} ({:.0}% of one CPU)",
            format_seconds(r.cpu.user_seconds),
            format_seconds(r.cpu.system_seconds),
            r.cpu.cpu_percent()
        ),
    );
    if let Some(res) = r.residency_before {
        let device = r.kernel.map_or(String::new(), |k| {
            format!("; {} read from the device", format_size(k.read_bytes))
        });
        line(
            &mut out,
            "cache",
            format!("{} resident before the run{device}", res.percent()),
        );
    } else if let (Some(k), "write") = (r.kernel, r.op) {
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
    line(&mut out, "kernel", checks_line(&r.checks));
    out
}

/// Renders `calibrate`.
pub fn calibrate(r: &CalibrateReport) -> String {
    let mut out = String::new();
    let cache = match r.cache {
        crate::cli::CacheMode::Warm => "warm",
        crate::cli::CacheMode::Cold => "cold",
    };
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
    line(
        &mut out,
        "time",
        format!(
            "{} at {} ({cache} cache; window {} to {})",
            format_seconds(r.seconds),
            format_mib_per_s(r.bytes_per_second),
            format_seconds(r.min_seconds),
            format_seconds(r.max_seconds)
        ),
    );
    if let Some(last) = r.probes.last() {
        let res = last
            .residency_before
            .map_or("unknown".to_string(), |x| x.percent());
        let dev = last
            .device_read_bytes
            .map_or("unknown".to_string(), format_size);
        line(
            &mut out,
            "cache",
            format!("{res} resident before the timed read; {dev} read from the device"),
        );
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

/// Renders `study`.
pub fn study(r: &StudyReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "study of {}: scratch file of {}, seed {}",
        r.dir,
        format_size(r.file_bytes),
        r.seed
    );
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "op",
        "block",
        "bytes",
        "seconds",
        "MiB/s",
        "calls/s",
        "cache before",
        "xor",
        "verified",
    ]);
    for row in &r.rows {
        let seconds = match row.fsync_seconds {
            Some(f) => format!("{:.4} (fsync {:.4})", row.seconds, f),
            None => format!("{:.4}", row.seconds),
        };
        table.add_row(vec![
            row.op.to_string(),
            format_block_size(row.block_size),
            format_size(row.moved.bytes),
            seconds,
            format!("{:.1}", row.bytes_per_second / crate::units::MIB as f64),
            group_thousands(row.calls_per_second.round() as u64),
            row.residency_before
                .map_or("-".to_string(), |x| x.percent()),
            row.xor_hex.clone(),
            if row.verified { "yes" } else { "NO" }.to_string(),
        ]);
    }
    for col in 2..7 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let _ = writeln!(out, "{table}");
    let _ = writeln!(
        out,
        "{}",
        if r.verified {
            "every read returned exactly the bytes written (XOR checked against the generator)"
        } else {
            "VERIFICATION FAILED: some reads did not return the bytes written"
        }
    );
    if let Some(kept) = &r.kept_file {
        let _ = writeln!(out, "scratch file kept at {kept}");
    }
    out
}

/// Renders `fast`: the checksum line alone, so `$(ioscope fast f)` is the XOR.
pub fn fast(r: &FastReport) -> String {
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
    let depth = if r.engine == "uring" {
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
    line(&mut out, "", r.method);
    for f in &r.fallbacks {
        line(&mut out, "skipped", f);
    }
    line(
        &mut out,
        "read",
        format!(
            "{} in {} = {:.2} GiB/s ({})",
            bytes_both(r.moved.bytes),
            format_seconds(r.seconds),
            r.bytes_per_second / crate::units::GIB as f64,
            format_mib_per_s(r.bytes_per_second)
        ),
    );
    line(
        &mut out,
        "calls",
        format!(
            "{} ({})",
            group_thousands(r.moved.calls),
            format_calls_per_second(per_second(r.moved.calls, r.seconds))
        ),
    );
    line(
        &mut out,
        "cpu",
        format!(
            "user {}, system {} ({:.0}% of one CPU)",
            format_seconds(r.cpu.user_seconds),
            format_seconds(r.cpu.system_seconds),
            r.cpu.cpu_percent()
        ),
    );
    if let Some(res) = r.residency_before {
        line(
            &mut out,
            "cache",
            format!("{} resident before the run", res.percent()),
        );
    }
    out
}

/// Renders `compare`: one table per cache state, then the notes.
pub fn compare(r: &CompareReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "compare {} ({}), block size {}, median of {} run(s) each, alternating order",
        r.file,
        format_size(r.file_bytes),
        format_size(r.block_size),
        r.repeat
    );
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(vec![
        "cache",
        "contender",
        "MiB/s (own figures)",
        "MiB/s (process wall)",
        "vs best",
        "resident before",
    ]);
    for row in &r.rows {
        let resident: Vec<String> = row
            .runs
            .iter()
            .map(|x| format!("{:.0}%", 100.0 * x.resident_before))
            .collect();
        table.add_row(vec![
            row.cache.to_string(),
            row.contender.clone(),
            format!(
                "{:.0}",
                row.median_bytes_per_second / crate::units::MIB as f64
            ),
            format!(
                "{:.0}",
                row.median_wall_bytes_per_second / crate::units::MIB as f64
            ),
            format!("{:.2}x", row.ratio_to_best),
            format!(
                "{}{}",
                resident.join(" "),
                if row.state_ok { "" } else { " (!)" }
            ),
        ]);
    }
    for col in 2..5 {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let _ = writeln!(out, "{table}");
    for s in &r.skipped {
        let _ = writeln!(out, "skipped: {s}");
    }
    for n in &r.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

fn table_with(header: &[&str]) -> Table {
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    table.set_header(header.to_vec());
    table
}

fn right_align(table: &mut Table, cols: std::ops::Range<usize>) {
    for col in cols {
        if let Some(c) = table.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn pct(fraction: f64) -> String {
    format!("{:.1}%", 100.0 * fraction)
}

/// Renders `sweep`.
pub fn sweep(r: &crate::cmd::sweep::SweepReport) -> String {
    let mut out = String::new();
    let op = format!("{:?}", r.op).to_lowercase();
    let _ = writeln!(
        out,
        "sweep {op} {} ({}): {} timed run(s) per point after {} warm-up, median and spread",
        r.file,
        format_size(r.file_bytes),
        r.repeat,
        r.warmup
    );
    let mut table = table_with(&[
        "cache",
        "block",
        "bytes/run",
        "MiB/s",
        "spread",
        "calls/s",
        "CPU",
        "resident before",
        "device read",
        "checks",
    ]);
    for p in &r.points {
        let spread = format!(
            "{:.0}..{:.0} ±{:.1}%{}",
            p.rate.min / crate::units::MIB as f64,
            p.rate.max / crate::units::MIB as f64,
            100.0 * p.rate.relative_spread(),
            if p.rate.outliers > 0 {
                format!(" ({} outlier)", p.rate.outliers)
            } else {
                String::new()
            }
        );
        let resident = p.resident_before.map_or("-".to_string(), |(lo, hi)| {
            let text = if (hi - lo).abs() < 0.0005 {
                pct(lo)
            } else {
                format!("{}..{}", pct(lo), pct(hi))
            };
            if p.state_ok {
                text
            } else {
                format!("{text} (!)")
            }
        });
        table.add_row(vec![
            p.cache.map_or(op.clone(), |c| c.name().to_string()),
            format_block_size(p.block_size),
            format_size(p.bytes),
            format!("{:.1}", p.rate.median / crate::units::MIB as f64),
            spread,
            group_thousands(p.calls_per_second.round() as u64),
            format!("{:.0}%", p.cpu_percent),
            resident,
            p.device_read_bytes.map_or("-".to_string(), format_size),
            if p.checks_ok { "ok" } else { "MISMATCH" }.to_string(),
        ]);
    }
    right_align(&mut table, 2..7);
    let _ = writeln!(out, "{table}");
    for a in &r.analyses {
        let label = a.cache.map_or(op.clone(), |c| c.name().to_string());
        if let Some(m) = a.model {
            let _ = writeln!(
                out,
                "model ({label}): time = calls x {} + bytes / {}",
                format_seconds(m.seconds_per_call),
                format_mib_per_s(m.bytes_per_second)
            );
        }
        let _ = writeln!(out, "{label}: {}", a.explanation);
    }
    for p in r.points.iter().filter(|p| !p.checks_ok) {
        for w in p.runs.iter().flat_map(|run| check_warnings(&run.checks)) {
            let _ = writeln!(
                out,
                "warning ({} at {}): {w}",
                p.cache.map_or(op.as_str(), |c| c.name()),
                format_block_size(p.block_size)
            );
        }
    }
    if r.points.iter().any(|p| !p.state_ok) {
        let _ = writeln!(
            out,
            "(!) a run did not start in its cache state: see 'resident before'; eviction may not work on this file system"
        );
    }
    out
}

/// Renders `cache`.
pub fn cache(r: &crate::cmd::coldwarm::CacheReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "cache {} ({}); cold = {}",
        r.file,
        format_size(r.file_bytes),
        r.eviction
    );
    let mut table = table_with(&[
        "block",
        "cold MiB/s",
        "warm MiB/s",
        "cold again MiB/s",
        "resident before (cold / warm / again)",
        "device read (cold / warm / again)",
    ]);
    for row in &r.rows {
        let runs = [&row.cold, &row.warm, &row.cold_again];
        let rate = |s: &crate::cmd::harness::Sample| {
            format!("{:.1}", s.bytes_per_second() / crate::units::MIB as f64)
        };
        let res: Vec<String> = runs
            .iter()
            .map(|s| s.residency_before.map_or("-".into(), |x| x.percent()))
            .collect();
        let dev: Vec<String> = runs
            .iter()
            .map(|s| s.device.map_or("-".into(), |d| format_size(d.read_bytes)))
            .collect();
        table.add_row(vec![
            format_block_size(row.block_size),
            rate(&row.cold),
            rate(&row.warm),
            rate(&row.cold_again),
            res.join(" / "),
            dev.join(" / "),
        ]);
    }
    right_align(&mut table, 1..4);
    let _ = writeln!(out, "{table}");
    let _ = writeln!(
        out,
        "cold runs should start near 0% resident and read about the file's size from the device; warm runs 100% and about nothing"
    );
    out
}

/// Renders `syscalls`.
pub fn syscalls(r: &crate::cmd::syscalls::SyscallsReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "syscalls {} ({}), cached; one call per byte of each size",
        r.file,
        format_size(r.file_bytes)
    );
    let mut table = table_with(&[
        "op",
        "calls",
        "ns/call",
        "calls/s",
        "MiB/s",
        "kernel-counted reads",
    ]);
    for row in &r.rows {
        table.add_row(vec![
            row.op.clone(),
            group_thousands(row.calls),
            format!("{:.1}", row.ns_per_call),
            group_thousands(row.calls_per_second.round() as u64),
            row.bytes_per_second.map_or("-".into(), |b| {
                format!("{:.2}", b / crate::units::MIB as f64)
            }),
            row.kernel_calls.map_or("-".into(), group_thousands),
        ]);
    }
    right_align(&mut table, 1..6);
    let _ = writeln!(out, "{table}");
    for s in &r.skipped_sizes {
        let _ = writeln!(out, "skipped size {}: the file is smaller", format_size(*s));
    }
    let _ = writeln!(out, "{}", r.explanation);
    out
}
