//! What other tools say they did, each read by one parser from its own raw output: dd's
//! summary on stderr, fio's JSON on stdout, and a child ioscope's own `--json`. Raw bytes,
//! calls and seconds, never their rounded human rates. `compare` and `trace` both read
//! tools through these parsers and hold the result as one [`ToolClaim`].

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

/// A tool's own account of its work, as it reported it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolClaim {
    /// The tool.
    pub tool: String,
    /// Bytes it says it read.
    pub bytes_read: u64,
    /// Bytes it says it wrote.
    pub bytes_written: u64,
    /// Seconds it says the work took.
    pub seconds: f64,
    /// Calls it reports, where it does (dd's whole records in and out).
    pub records_in: Option<u64>,
    /// As above, out.
    pub records_out: Option<u64>,
}

impl ToolClaim {
    /// The bytes it moved: the larger of those read and those written (dd counts the same
    /// bytes both ways).
    pub fn bytes(&self) -> u64 {
        self.bytes_read.max(self.bytes_written)
    }

    /// The throughput the tool reports (bytes moved over its seconds; 0 without seconds).
    pub fn bytes_per_second(&self) -> f64 {
        crate::units::per_second(self.bytes(), self.seconds)
    }
}

/// dd's summary on its stderr: `A+B records in`, `C+D records out`,
/// `N bytes (...) copied, S s, ...` (the last of each, so `status=progress` lines before it
/// do not count; a decimal comma is read as a point).
pub fn dd(stderr: &str) -> Result<ToolClaim> {
    let records = |what: &str| -> Option<u64> {
        let line = stderr.lines().rev().find(|l| l.ends_with(what))?;
        let (full, partial) = line.split_whitespace().next()?.split_once('+')?;
        full.parse::<u64>()
            .ok()?
            .checked_add(partial.parse::<u64>().ok()?)
    };
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.contains(" copied, "))
        .context("dd printed no 'bytes ... copied' line")?;
    let bytes: u64 = line
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .with_context(|| format!("dd's byte count in '{line}'"))?;
    let seconds: f64 = line
        .split(" copied, ")
        .nth(1)
        .and_then(|after| after.split_whitespace().next())
        .and_then(|w| w.replace(',', ".").parse().ok())
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)
        .with_context(|| format!("dd's seconds in '{line}'"))?;
    Ok(ToolClaim {
        tool: "dd".into(),
        bytes_read: bytes,
        bytes_written: bytes,
        seconds,
        records_in: records("records in"),
        records_out: records("records out"),
    })
}

/// The JSON document in `stdout`, which may hold other lines (fio's notes) before it.
fn document(stdout: &str, tool: &str) -> Result<serde_json::Value> {
    let start = stdout
        .find('{')
        .with_context(|| format!("{tool} printed no JSON"))?;
    serde_json::from_str(&stdout[start..]).with_context(|| format!("{tool}'s JSON output"))
}

/// fio's `--output-format=json` document: read and write bytes summed over its jobs (one
/// with group_reporting), and the longest runtime of any job in either direction.
pub fn fio(stdout: &str) -> Result<ToolClaim> {
    let doc = document(stdout, "fio")?;
    let jobs = doc["jobs"].as_array().context("fio JSON without jobs")?;
    let sum = |dir: &str| -> u64 {
        jobs.iter()
            .filter_map(|j| j[dir]["io_bytes"].as_u64())
            .sum()
    };
    let ms = jobs
        .iter()
        .flat_map(|j| ["read", "write"].map(|d| j[d]["runtime"].as_f64().unwrap_or(0.0)))
        .reduce(f64::max)
        .context("fio JSON with no job")?;
    Ok(ToolClaim {
        tool: "fio".into(),
        bytes_read: sum("read"),
        bytes_written: sum("write"),
        seconds: ms / 1000.0,
        records_in: None,
        records_out: None,
    })
}

/// ioscope's own `--json` document for a command that moves one amount of bytes (`run`,
/// `fast`): its `bytes`, `calls` and `seconds`, read or written as its `op` says.
pub fn ioscope(stdout: &str) -> Result<ToolClaim> {
    let doc = document(stdout, "ioscope")?;
    let schema = doc["schema"].as_str().unwrap_or_default();
    if !schema.starts_with("ioscope/") {
        bail!("ioscope's JSON has no ioscope schema");
    }
    let bytes = doc["bytes"]
        .as_u64()
        .with_context(|| format!("{schema} without bytes"))?;
    let seconds = doc["seconds"]
        .as_f64()
        .with_context(|| format!("{schema} without seconds"))?;
    let calls = doc["calls"].as_u64();
    let writes = doc["op"] == "write";
    Ok(ToolClaim {
        tool: "ioscope".into(),
        bytes_read: if writes { 0 } else { bytes },
        bytes_written: if writes { bytes } else { 0 },
        seconds,
        records_in: if writes { None } else { calls },
        records_out: if writes { calls } else { None },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dd_summary_lines_parse_to_raw_figures() {
        let text = "2048+0 records in\n2048+0 records out\n2147483648 bytes (2.1 GB, 2.0 GiB) copied, 0.214587 s, 10.0 GB/s\n";
        let c = dd(text).unwrap();
        assert_eq!((c.bytes_read, c.bytes_written), (2147483648, 2147483648));
        assert_eq!(c.seconds, 0.214587);
        assert_eq!((c.records_in, c.records_out), (Some(2048), Some(2048)));
        let short = "0+0 records in\n0+0 records out\n0 bytes copied, 4.1e-05 s, 0.0 kB/s\n";
        let c = dd(short).unwrap();
        assert_eq!((c.bytes(), c.seconds), (0, 4.1e-05));
        assert!(dd("dd: failed to open 'x': No such file or directory").is_err());
        assert!(dd("nothing here").is_err());
    }

    #[test]
    fn dd_summary_is_read_with_partial_records() {
        let err = "2048+1 records in\n2048+1 records out\n2147484000 bytes (2.1 GB, 2.0 GiB) copied, 0.51 s, 4.2 GB/s\n";
        let c = dd(err).unwrap();
        assert_eq!(c.records_in, Some(2049));
        assert_eq!(c.records_out, Some(2049));
        assert_eq!(c.bytes_read, 2_147_484_000);
        assert_eq!(c.seconds, 0.51);
    }

    #[test]
    fn dd_reads_one_byte_a_decimal_comma_and_the_summary_after_its_progress() {
        let one = "0+1 records in\n0+1 records out\n1 byte copied, 0,000123 s, 8,1 kB/s\n";
        let c = dd(one).unwrap();
        assert_eq!((c.bytes(), c.seconds), (1, 0.000123));
        let progress = "1048576 bytes (1.0 MB, 1.0 MiB) copied, 1 s, 1.0 MB/s\r2097152 bytes (2.1 MB, 2.0 MiB) copied, 2 s, 1.0 MB/s\n32+0 records in\n32+0 records out\n4194304 bytes (4.2 MB, 4.0 MiB) copied, 3.5 s, 1.2 MB/s\n";
        let c = dd(progress).unwrap();
        assert_eq!(
            (c.bytes(), c.seconds, c.records_in),
            (4194304, 3.5, Some(32))
        );
        assert!(dd("1 bytes copied, -1 s, 0 kB/s").is_err());
    }

    #[test]
    fn fio_json_gives_bytes_and_runtime() {
        let text = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{"fio version":"fio-3.33","jobs":[{"jobname":"r","read":{"io_bytes":1073741824,"runtime":512,"bw_bytes":2097152000}}]}"#;
        let c = fio(text).unwrap();
        assert_eq!((c.bytes_read, c.bytes_written), (1073741824, 0));
        assert!((c.seconds - 0.512).abs() < 1e-12);
        assert!(fio("{\"jobs\":[]}").is_err());
        assert!(fio("fio: no such option").is_err());
    }

    #[test]
    fn fio_json_is_summed_over_jobs() {
        let out = r#"note: something
{"jobs": [{"read": {"io_bytes": 100, "runtime": 2000}, "write": {"io_bytes": 0, "runtime": 0}},
          {"read": {"io_bytes": 50, "runtime": 1000}, "write": {"io_bytes": 7, "runtime": 500}}]}"#;
        let c = fio(out).unwrap();
        assert_eq!((c.bytes_read, c.bytes_written), (150, 7));
        assert_eq!(c.seconds, 2.0);
        assert_eq!(c.bytes_per_second(), 75.0);
    }

    #[test]
    fn ioscope_json_is_read_for_reads_and_writes() {
        let read = r#"{"schema": "ioscope/run/v2", "op": "read", "bytes": 4096, "calls": 4, "seconds": 0.5}"#;
        let c = ioscope(read).unwrap();
        assert_eq!(
            (c.bytes_read, c.bytes_written, c.records_in),
            (4096, 0, Some(4))
        );
        let write = read.replace("\"read\"", "\"write\"");
        let c = ioscope(&write).unwrap();
        assert_eq!(
            (c.bytes_read, c.bytes_written, c.records_out),
            (0, 4096, Some(4))
        );
        assert!(ioscope(r#"{"schema": "other", "bytes": 1, "seconds": 1.0}"#).is_err());
        assert!(ioscope(r#"{"schema": "ioscope/sweep/v1", "rows": []}"#).is_err());
    }
}
