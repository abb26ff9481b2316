//! What known tools say they did, parsed from their own output: dd's summary on stderr,
//! fio's JSON on stdout, and ioscope's own `--json` (run, fast: bytes, calls, seconds).

use serde::{Deserialize, Serialize};

/// A tool's own account of its work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Claim {
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

impl Claim {
    /// The throughput the tool reports (bytes moved over its seconds).
    pub fn bytes_per_second(&self) -> f64 {
        let bytes = self.bytes_read.max(self.bytes_written) as f64;
        if self.seconds > 0.0 {
            bytes / self.seconds
        } else {
            0.0
        }
    }
}

/// dd's summary: `A+B records in`, `C+D records out`, `N bytes (...) copied, S s, ...`.
pub fn dd(stderr: &str) -> Option<Claim> {
    let records = |what: &str| -> Option<u64> {
        let line = stderr.lines().find(|l| l.ends_with(what))?;
        let (full, partial) = line.split_whitespace().next()?.split_once('+')?;
        full.parse::<u64>()
            .ok()?
            .checked_add(partial.parse::<u64>().ok()?)
    };
    let summary = stderr.lines().find(|l| l.contains(" copied, "))?;
    let bytes: u64 = summary.split_whitespace().next()?.parse().ok()?;
    let seconds: f64 = summary
        .split(" copied, ")
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && *s >= 0.0)?;
    Some(Claim {
        tool: "dd".into(),
        bytes_read: bytes,
        bytes_written: bytes,
        seconds,
        records_in: records("records in"),
        records_out: records("records out"),
    })
}

/// fio's `--output-format=json` document (stdout may hold other lines before it).
pub fn fio(stdout: &str) -> Option<Claim> {
    let start = stdout.find('{')?;
    let doc: serde_json::Value = serde_json::from_str(&stdout[start..]).ok()?;
    let jobs = doc["jobs"].as_array()?;
    let sum = |dir: &str| -> u64 {
        jobs.iter()
            .filter_map(|j| j[dir]["io_bytes"].as_u64())
            .sum()
    };
    let ms = jobs
        .iter()
        .flat_map(|j| ["read", "write"].map(|d| j[d]["runtime"].as_u64().unwrap_or(0)))
        .max()?;
    Some(Claim {
        tool: "fio".into(),
        bytes_read: sum("read"),
        bytes_written: sum("write"),
        seconds: ms as f64 / 1000.0,
        records_in: None,
        records_out: None,
    })
}

/// ioscope's own `--json` document for a command that moves one amount of bytes (`run`,
/// `fast`): its `bytes`, `calls` and `seconds`.
pub fn ioscope(stdout: &str) -> Option<Claim> {
    let start = stdout.find('{')?;
    let doc: serde_json::Value = serde_json::from_str(&stdout[start..]).ok()?;
    if !doc["schema"].as_str()?.starts_with("ioscope/") {
        return None;
    }
    let bytes = doc["bytes"].as_u64()?;
    let seconds = doc["seconds"].as_f64()?;
    let calls = doc["calls"].as_u64();
    let writes = doc["op"] == "write";
    Some(Claim {
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
    fn dd_summary_is_read_with_partial_records() {
        let err = "2048+1 records in\n2048+1 records out\n2147484000 bytes (2.1 GB, 2.0 GiB) copied, 0.51 s, 4.2 GB/s\n";
        let c = dd(err).unwrap();
        assert_eq!(c.records_in, Some(2049));
        assert_eq!(c.records_out, Some(2049));
        assert_eq!(c.bytes_read, 2_147_484_000);
        assert_eq!(c.seconds, 0.51);
        assert!(dd("nothing here").is_none());
    }

    #[test]
    fn fio_json_is_summed_over_jobs() {
        let out = r#"note: something
{"jobs": [{"read": {"io_bytes": 100, "runtime": 2000}, "write": {"io_bytes": 0, "runtime": 0}},
          {"read": {"io_bytes": 50, "runtime": 1000}, "write": {"io_bytes": 7, "runtime": 500}}]}"#;
        let c = fio(out).unwrap();
        assert_eq!((c.bytes_read, c.bytes_written), (150, 7));
        assert_eq!(c.seconds, 2.0);
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
        assert!(ioscope(r#"{"schema": "other", "bytes": 1, "seconds": 1.0}"#).is_none());
        assert!(ioscope(r#"{"schema": "ioscope/sweep/v1", "rows": []}"#).is_none());
    }
}
