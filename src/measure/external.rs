//! Other tools' own figures, parsed from their raw output: dd's byte count and seconds,
//! fio's JSON bytes and runtime. Never their rounded human rates.

use anyhow::{Context, Result, bail};

/// Bytes and seconds as a tool reported them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    /// Bytes moved.
    pub bytes: u64,
    /// Seconds taken.
    pub seconds: f64,
}

/// Parses dd's summary line from its stderr: `N bytes (...) copied, S s, ...`.
pub fn parse_dd(stderr: &str) -> Result<Figures> {
    let line = stderr
        .lines()
        .rev()
        .find(|l| l.contains(" bytes") && l.contains("copied"))
        .context("dd printed no 'bytes ... copied' line")?;
    let bytes: u64 = line
        .split_whitespace()
        .next()
        .and_then(|w| w.parse().ok())
        .with_context(|| format!("dd's byte count in '{line}'"))?;
    let after = line
        .split("copied,")
        .nth(1)
        .with_context(|| format!("dd's time in '{line}'"))?;
    let seconds: f64 = after
        .split_whitespace()
        .next()
        .and_then(|w| w.replace(',', ".").parse().ok())
        .with_context(|| format!("dd's seconds in '{line}'"))?;
    Ok(Figures { bytes, seconds })
}

/// Parses fio's `--output-format=json` for the read bytes and runtime of all jobs
/// (group_reporting gives one job; otherwise bytes add up and the longest runtime counts).
pub fn parse_fio(json: &str) -> Result<Figures> {
    // fio may print notes before the JSON document.
    let start = json.find('{').context("fio printed no JSON")?;
    let v: serde_json::Value = serde_json::from_str(&json[start..]).context("fio's JSON output")?;
    let jobs = v["jobs"].as_array().context("fio JSON without jobs")?;
    let mut bytes = 0u64;
    let mut runtime_ms = 0f64;
    for job in jobs {
        bytes += job["read"]["io_bytes"]
            .as_u64()
            .context("fio job without read.io_bytes")?;
        runtime_ms = runtime_ms.max(
            job["read"]["runtime"]
                .as_f64()
                .context("fio job without read.runtime")?,
        );
    }
    if runtime_ms <= 0.0 {
        bail!("fio reported a runtime of 0 ms");
    }
    Ok(Figures {
        bytes,
        seconds: runtime_ms / 1000.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dd_summary_lines_parse_to_raw_figures() {
        let text = "2048+0 records in\n2048+0 records out\n2147483648 bytes (2.1 GB, 2.0 GiB) copied, 0.214587 s, 10.0 GB/s\n";
        assert_eq!(
            parse_dd(text).unwrap(),
            Figures {
                bytes: 2147483648,
                seconds: 0.214587
            }
        );
        let short = "0+0 records in\n0+0 records out\n0 bytes copied, 4.1e-05 s, 0.0 kB/s\n";
        assert_eq!(
            parse_dd(short).unwrap(),
            Figures {
                bytes: 0,
                seconds: 4.1e-05
            }
        );
        assert!(parse_dd("dd: failed to open 'x': No such file or directory").is_err());
    }

    #[test]
    fn fio_json_gives_bytes_and_runtime() {
        let text = r#"note: both iodepth >= 1 and synchronous I/O engine are selected
{"fio version":"fio-3.33","jobs":[{"jobname":"r","read":{"io_bytes":1073741824,"runtime":512,"bw_bytes":2097152000}}]}"#;
        let f = parse_fio(text).unwrap();
        assert_eq!(f.bytes, 1073741824);
        assert!((f.seconds - 0.512).abs() < 1e-12);
        assert!(parse_fio("{\"jobs\":[]}").is_err());
    }
}
