//! `calibrate`: the size found, the timed read, and the probes that led to it.

use super::{bytes_both, cache_line, line};
use crate::cmd::calibrate::CalibrateReport;
use crate::units::{format_mib_per_s, format_seconds, format_size, group_thousands};

/// Renders `calibrate`.
pub fn calibrate(r: &CalibrateReport) -> String {
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
