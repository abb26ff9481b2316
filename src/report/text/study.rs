//! `study`: one table of the write and the reads, and the verification verdict.

use super::{mib, right_align, table_with};
use crate::cmd::study::StudyReport;
use crate::units::{format_block_size, format_size, group_thousands};
use std::fmt::Write;

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
    let mut table = table_with(&[
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
            row.op.name().to_string(),
            format_block_size(row.block_size),
            format_size(row.moved.bytes),
            seconds,
            format!("{:.1}", mib(row.bytes_per_second)),
            group_thousands(row.calls_per_second.round() as u64),
            row.cache
                .and_then(|c| c.residency_before)
                .map_or("-".to_string(), |x| x.percent()),
            row.xor_hex.clone(),
            if row.verified { "yes" } else { "NO" }.to_string(),
        ]);
    }
    right_align(&mut table, 2..7);
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
