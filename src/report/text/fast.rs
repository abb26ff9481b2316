//! `fast`: the checksum alone on stdout; the method and figures with `--verbose`.

use super::{bytes_both, cpu_line, line};
use crate::cmd::fast::FastReport;
use crate::units::{
    format_calls_per_second, format_mib_per_s, format_seconds, format_size, per_second,
};

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
    let depth = if r.caps.queued {
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
            "{} in {} = {:.2} GiB/s ({})",
            bytes_both(r.moved.bytes),
            format_seconds(r.seconds),
            r.bytes_per_second / crate::units::GIB as f64,
            format_mib_per_s(r.bytes_per_second)
        ),
    );
    if r.caps.zero_copy {
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
    if r.caps.per_chunk {
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
