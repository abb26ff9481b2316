//! What other tools say they did, each read by one parser from its own raw output: dd's
//! summary on stderr, fio's JSON or its normal report on stdout, iozone's result table,
//! bonnie++'s CSV line or its table, and a child ioscope's own `--json`. Raw bytes, calls
//! and seconds where the tool prints them; otherwise the figure exactly as it printed it
//! beside the bytes and seconds it stands for. `compare` and `trace` both read tools through
//! these parsers and hold the result as one [`ToolClaim`], which may hold several labelled
//! figures (iozone and bonnie++ report one per test).

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
    /// Each figure it printed, labelled (one per test and record size for iozone, per test
    /// for bonnie++, per direction for fio, one for dd and ioscope).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<ClaimedFigure>,
}

/// Which way the bytes of a claimed figure moved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Moves {
    /// Read from files.
    Read,
    /// Written to files.
    Write,
    /// The same bytes read and written in the time of the figure (dd's copy, bonnie++'s
    /// rewrite): its rate is bytes through both.
    Both,
    /// No bytes: a count of operations (bonnie++'s seeks/s), shown but not compared.
    Neither,
}

/// One figure a tool printed: what it names, the bytes it stands for and its rate, and the
/// text it printed it as.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimedFigure {
    /// The tool's name for it: iozone's column (`write`, `random read`), bonnie++'s test
    /// (`sequential output per char`), fio's group line (`WRITE, group 0`).
    pub label: String,
    /// Which way its bytes moved.
    pub moves: Moves,
    /// The bytes it stands for, as the tool counts them (iozone and bonnie++: the file
    /// size of the test; fio: `io=`; dd: bytes copied).
    pub bytes: u64,
    /// The record (block) size of the test, where the tool says it.
    #[serde(default)]
    pub record_size: Option<u64>,
    /// Its time: as the tool printed it (dd, fio JSON), or its bytes over the rate it
    /// printed (iozone's kB/s, bonnie++'s K/sec, fio's bw=). `None`: it printed no figure
    /// (bonnie++'s `+++++`: the test ran too quickly to time) or counts no bytes.
    pub seconds: Option<f64>,
    /// The figure exactly as the tool printed it, with its unit.
    pub said: String,
}

impl ClaimedFigure {
    /// Its rate in bytes per second (`None` without a time).
    pub fn bytes_per_second(&self) -> Option<f64> {
        self.seconds
            .filter(|s| *s > 0.0)
            .map(|s| self.bytes as f64 / s)
    }

    /// A figure given as a rate: `bytes` at `bytes_per_second`.
    fn at_rate(
        label: &str,
        moves: Moves,
        bytes: u64,
        record_size: Option<u64>,
        bytes_per_second: f64,
        said: String,
    ) -> Self {
        Self {
            label: label.to_string(),
            moves,
            bytes,
            record_size,
            seconds: (bytes_per_second > 0.0).then(|| bytes as f64 / bytes_per_second),
            said,
        }
    }
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

/// dd's summaries on a stderr that one or more dd runs wrote (a shell running dd twice):
/// one summary each (see [`dd_one`]), a summary ending at the `copied` line after its
/// `records out`. With more than one, each run's figure is labelled `copy (run N)` and the
/// claim's bytes and seconds are summed over the runs.
pub fn dd(stderr: &str) -> Result<ToolClaim> {
    let mut chunks = Vec::new();
    let mut start = 0;
    let mut records_out = false;
    let mut at = 0;
    for line in stderr.split_inclusive('\n') {
        at += line.len();
        let l = line.trim_end();
        if l.ends_with("records out") {
            records_out = true;
        } else if records_out && l.contains(" copied, ") {
            chunks.push(&stderr[start..at]);
            start = at;
            records_out = false;
        }
    }
    if chunks.len() < 2 {
        return dd_one(stderr);
    }
    let runs: Vec<ToolClaim> = chunks.iter().map(|c| dd_one(c)).collect::<Result<_>>()?;
    let mut figures = Vec::new();
    for (i, run) in runs.iter().enumerate() {
        for f in &run.figures {
            let mut f = f.clone();
            f.label = format!("{} (run {})", f.label, i + 1);
            figures.push(f);
        }
    }
    let sum = |get: fn(&ToolClaim) -> Option<u64>| -> Option<u64> {
        runs.iter().map(get).sum::<Option<u64>>()
    };
    Ok(ToolClaim {
        tool: "dd".into(),
        bytes_read: runs.iter().map(|r| r.bytes_read).sum(),
        bytes_written: runs.iter().map(|r| r.bytes_written).sum(),
        seconds: runs.iter().map(|r| r.seconds).sum(),
        records_in: sum(|r| r.records_in),
        records_out: sum(|r| r.records_out),
        figures,
    })
}

/// One dd summary: `A+B records in`, `C+D records out`, `N bytes (...) copied, S s, ...`
/// (the last of each, so `status=progress` lines before it do not count; a decimal comma
/// is read as a point).
pub fn dd_one(stderr: &str) -> Result<ToolClaim> {
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
        figures: vec![ClaimedFigure {
            label: "copy".into(),
            moves: Moves::Both,
            bytes,
            record_size: None,
            seconds: Some(seconds),
            said: format!("{bytes} bytes copied, {seconds} s"),
        }],
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
    let longest = |dir: &str| -> f64 {
        jobs.iter()
            .filter_map(|j| j[dir]["runtime"].as_f64())
            .fold(0.0, f64::max)
            / 1000.0
    };
    let figures = [("read", Moves::Read), ("write", Moves::Write)]
        .into_iter()
        .filter(|(dir, _)| sum(dir) > 0)
        .map(|(dir, moves)| ClaimedFigure {
            label: dir.to_string(),
            moves,
            bytes: sum(dir),
            record_size: None,
            seconds: Some(longest(dir)),
            said: format!(
                "io_bytes {}, runtime {} ms",
                sum(dir),
                longest(dir) * 1000.0
            ),
        })
        .collect();
    Ok(ToolClaim {
        tool: "fio".into(),
        bytes_read: sum("read"),
        bytes_written: sum("write"),
        seconds: ms / 1000.0,
        records_in: None,
        records_out: None,
        figures,
    })
}

/// fio's output, whichever form it took: its JSON document, or its normal report.
pub fn fio_any(stdout: &str) -> Result<ToolClaim> {
    fio(stdout).or_else(|_| fio_text(stdout))
}

/// A size or rate as fio and bonnie++ print it: `64.0MiB`, `7968KiB`, `8000MiB/s`,
/// `16.4MB`, `1802k`, `120m` (binary units where the unit has an `i`, or is one letter as
/// bonnie++ prints it; decimal for `kB`, `MB`, `GB`). `None` for anything else.
fn printed_size(text: &str) -> Option<f64> {
    let text = text.trim().trim_end_matches("/s").trim_end_matches("/sec");
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let number: f64 = text[..end].parse().ok()?;
    let scale = match &text[end..] {
        "" | "B" => 1.0,
        "k" | "K" | "KiB" => 1024.0,
        "m" | "M" | "MiB" => 1024.0 * 1024.0,
        "g" | "G" | "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024.0f64.powi(4),
        "kB" | "KB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        _ => return None,
    };
    Some(number * scale).filter(|v| v.is_finite())
}

/// fio's normal report: the group lines under `Run status group N (all jobs):`, one figure
/// each (`WRITE: bw=8000MiB/s (8389MB/s), 8000MiB/s-8000MiB/s (...), io=64.0MiB (67.1MB),
/// run=8-8msec`): bytes from `io=`, the rate from `bw=` (so the seconds are bytes over the
/// rate it printed, finer than its whole milliseconds), the record size from the job
/// header's `bs=` when every job printed the same one.
pub fn fio_text(stdout: &str) -> Result<ToolClaim> {
    let mut group = String::new();
    let mut figures = Vec::new();
    let mut longest: f64 = 0.0;
    let block_sizes: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once(" bs=(R) ").map(|(_, rest)| rest))
        .filter_map(|rest| rest.split(['-', ',']).next())
        .collect();
    let record_size = block_sizes
        .first()
        .filter(|first| block_sizes.iter().all(|b| b == *first))
        .and_then(|b| printed_size(b))
        .map(|b| b as u64);
    for line in stdout.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Run status group ") {
            group = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            continue;
        }
        let Some((dir, rest)) = t.split_once(": bw=") else {
            continue;
        };
        let moves = match dir {
            "READ" => Moves::Read,
            "WRITE" => Moves::Write,
            _ => continue,
        };
        let field = |name: &str| -> Option<&str> {
            rest.split(", ")
                .find_map(|f| f.strip_prefix(name))
                .and_then(|v| v.split_whitespace().next())
        };
        let bw = rest.split_whitespace().next().and_then(printed_size);
        let io = field("io=").and_then(printed_size);
        let (Some(bw), Some(io)) = (bw, io) else {
            bail!("fio's group line '{t}' without bw= or io=");
        };
        if let Some(ms) = field("run=")
            .and_then(|r| r.trim_end_matches("msec").rsplit('-').next())
            .and_then(|ms| ms.parse::<f64>().ok())
        {
            longest = longest.max(ms / 1000.0);
        }
        let said = rest.split(", ").next().unwrap_or_default();
        figures.push(ClaimedFigure::at_rate(
            &format!("{dir}, group {group}"),
            moves,
            io.round() as u64,
            record_size,
            bw,
            format!("bw={said}"),
        ));
    }
    if figures.is_empty() {
        bail!("fio printed no 'READ: bw=' or 'WRITE: bw=' group line");
    }
    let sum = |m: Moves| -> u64 {
        figures
            .iter()
            .filter(|f| f.moves == m)
            .map(|f| f.bytes)
            .sum()
    };
    Ok(ToolClaim {
        tool: "fio".into(),
        bytes_read: sum(Moves::Read),
        bytes_written: sum(Moves::Write),
        seconds: longest,
        records_in: None,
        records_out: None,
        figures,
    })
}

/// Which way each of iozone's tests moves its bytes, by its column's name.
fn iozone_moves(label: &str) -> Moves {
    match label {
        "write" | "rewrite" | "random write" | "record rewrite" | "fwrite" | "frewrite" => {
            Moves::Write
        }
        _ => Moves::Read,
    }
}

/// The widths iozone prints its result row in (`%16ld%8ld`, then `%9ld` per test but
/// ` %9ld` for record rewrite and stride read): a figure that fills its width touches the
/// one before it, so the row is cut by these widths, not by spaces.
const IOZONE_WIDTHS: [usize; 15] = [16, 8, 9, 9, 9, 9, 9, 9, 9, 10, 10, 9, 9, 9, 9];

/// iozone's result table: the header (`kB  reclen    write  rewrite    read ...`, with
/// `random`, `bkwd`, `record`, `stride` above the words they qualify), then a row per file
/// and record size with a figure per test run, in fixed widths (a test not run leaves its
/// width blank). Each figure is kB/s (1024 bytes), or operations per second under `-O`
/// ("Output is in operations per second"), over the file size of its row. The `-R` Excel
/// report repeats the same figures and is not needed. Throughput mode (`-t`) prints no
/// such table: its `Children see throughput` lines are read instead ([`iozone_throughput`]).
pub fn iozone(stdout: &str) -> Result<ToolClaim> {
    if stdout.contains("Children see throughput for") && !stdout.contains("reclen") {
        return iozone_throughput(stdout);
    }
    let lines: Vec<&str> = stdout.lines().collect();
    let header = lines
        .iter()
        .position(|l| {
            let mut w = l.split_whitespace();
            w.next() == Some("kB") && w.next() == Some("reclen")
        })
        .context("iozone printed no result table ('kB  reclen ...')")?;
    let ops = stdout.contains("Output is in operations per second");
    // Each word of a line and where it ends.
    let ends = |l: &str| -> Vec<(usize, String)> {
        let mut out = Vec::new();
        let mut start = None;
        for (i, c) in l.char_indices().chain(std::iter::once((l.len(), ' '))) {
            match (c.is_whitespace(), start) {
                (false, None) => start = Some(i),
                (true, Some(s)) => {
                    out.push((i, l[s..i].to_string()));
                    start = None;
                }
                _ => {}
            }
        }
        out
    };
    let above = if header > 0 {
        ends(lines[header - 1])
    } else {
        Vec::new()
    };
    let labels: Vec<String> = ends(lines[header])
        .into_iter()
        .map(|(end, name)| match above.iter().find(|(e, _)| *e == end) {
            Some((_, word)) => format!("{word} {name}"),
            None => name,
        })
        .collect();
    if labels.len() != IOZONE_WIDTHS.len() {
        bail!(
            "iozone's table header has {} columns, not the {} of iozone 3: '{}'",
            labels.len(),
            IOZONE_WIDTHS.len(),
            lines[header].trim()
        );
    }
    let mut figures = Vec::new();
    for row in lines[header + 1..].iter() {
        if row.trim().is_empty() || !row.is_ascii() {
            break;
        }
        let mut at = 0;
        let mut cells = Vec::new();
        for width in IOZONE_WIDTHS {
            let cell = row
                .get(at..(at + width).min(row.len()))
                .unwrap_or("")
                .trim();
            at += width;
            cells.push(cell);
        }
        let number = |c: &str| c.parse::<u64>().ok();
        let (Some(kb), Some(reclen)) = (number(cells[0]), number(cells[1])) else {
            break;
        };
        if row.len() > at && !row[at..].trim().is_empty() {
            bail!("iozone's row '{row}' is wider than its table (a figure too wide to read)");
        }
        for (cell, label) in cells.iter().zip(&labels).skip(2) {
            if cell.is_empty() {
                continue;
            }
            let value = number(cell)
                .with_context(|| format!("iozone's figure '{cell}' under {label} in '{row}'"))?;
            let bytes = kb.saturating_mul(1024);
            let rate = if ops {
                value as f64 * (reclen * 1024) as f64
            } else {
                value as f64 * 1024.0
            };
            let unit = if ops { "ops/s" } else { "kB/s" };
            figures.push(ClaimedFigure::at_rate(
                label,
                iozone_moves(label),
                bytes,
                Some(reclen * 1024),
                rate,
                format!("{value} {unit}"),
            ));
        }
    }
    if figures.is_empty() {
        bail!("iozone's result table has no row of figures");
    }
    Ok(summed("iozone", figures))
}

/// iozone's throughput mode (`-t N`): per test, `Children see throughput for N initial
/// writers = R kB/sec` (the sum of each child's own rate) and `Parent sees throughput ...`
/// (all bytes over the parent's elapsed time). Each test is one figure: N times the file
/// size of `Each process writes a S kByte file in R kByte records`, at the children's rate
/// (iozone's headline; the parent's rate is kept in what it said). Under `-O` the rates are
/// operations per second, of one record each. Writers and rewriters write; the mixed
/// workload counts both ways and is not compared.
pub fn iozone_throughput(stdout: &str) -> Result<ToolClaim> {
    let number = |text: &str| -> Option<f64> {
        text.split_whitespace()
            .next()
            .and_then(|w| w.parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    let each = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("Each process writes a "))
        .context("iozone's throughput mode without 'Each process writes a ... file'")?;
    let words: Vec<&str> = each.split_whitespace().collect();
    let file_kb = words.first().and_then(|w| w.parse::<u64>().ok());
    let record_kb = words
        .iter()
        .position(|w| *w == "in")
        .and_then(|i| words.get(i + 1))
        .and_then(|w| w.parse::<u64>().ok());
    let (Some(file_kb), Some(record_kb)) = (file_kb, record_kb) else {
        bail!("iozone's '{}' gives no file or record size", each.trim());
    };
    let mut figures = Vec::new();
    let lines: Vec<&str> = stdout.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.trim().strip_prefix("Children see throughput for") else {
            continue;
        };
        let Some((what, value)) = rest.split_once('=') else {
            bail!("iozone's line '{}' without '='", line.trim());
        };
        let mut what = what.split_whitespace();
        let children: u64 = what
            .next()
            .and_then(|n| n.parse().ok())
            .with_context(|| format!("iozone's process count in '{}'", line.trim()))?;
        let test = what.collect::<Vec<_>>().join(" ");
        let rate =
            number(value).with_context(|| format!("iozone's figure in '{}'", line.trim()))?;
        let ops = value.contains("ops/sec");
        let unit = if ops { "ops/sec" } else { "kB/sec" };
        let per_unit = if ops { record_kb * 1024 } else { 1024 } as f64;
        let parent = lines
            .get(i + 1)
            .and_then(|l| l.trim().strip_prefix("Parent sees throughput for"))
            .and_then(|l| l.split_once('='))
            .and_then(|(_, v)| number(v));
        let moves = if test.contains("mixed") {
            Moves::Neither
        } else if test.contains("writ") {
            Moves::Write
        } else {
            Moves::Read
        };
        let bytes = file_kb.saturating_mul(1024).saturating_mul(children);
        let said = match parent {
            Some(p) => format!("children see {rate} {unit} (parent sees {p} {unit})"),
            None => format!("children see {rate} {unit}"),
        };
        let mut figure = ClaimedFigure::at_rate(
            &format!("{test} ({children} processes)"),
            moves,
            bytes,
            Some(record_kb * 1024),
            rate * per_unit,
            said,
        );
        if moves == Moves::Neither {
            figure.bytes = 0;
            figure.seconds = None;
        }
        figures.push(figure);
    }
    if figures.is_empty() {
        bail!("iozone's throughput mode printed no 'Children see throughput' line");
    }
    Ok(summed("iozone", figures))
}

/// A claim made of figures: bytes read and written summed over them, seconds the sum of
/// their times (the tests ran one after another).
fn summed(tool: &str, figures: Vec<ClaimedFigure>) -> ToolClaim {
    let sum = |want: &[Moves]| -> u64 {
        figures
            .iter()
            .filter(|f| want.contains(&f.moves))
            .map(|f| f.bytes)
            .sum()
    };
    ToolClaim {
        tool: tool.into(),
        bytes_read: sum(&[Moves::Read, Moves::Both]),
        bytes_written: sum(&[Moves::Write, Moves::Both]),
        seconds: figures.iter().filter_map(|f| f.seconds).sum(),
        records_in: None,
        records_out: None,
        figures,
    }
}

/// bonnie++'s tests in the order of its CSV fields 9..20 and its table's columns: name,
/// which way it moves bytes.
const BONNIE_TESTS: [(&str, Moves); 6] = [
    ("sequential output per char", Moves::Write),
    ("sequential output block", Moves::Write),
    ("rewrite", Moves::Both),
    ("sequential input per char", Moves::Read),
    ("sequential input block", Moves::Read),
    ("random seeks", Moves::Neither),
];

/// Bytes bonnie++ 2.00 moves in each per-char test, whatever the file size: 3,145,728
/// one-byte write() (and read()) calls, counted under strace with `-s 8`, `-s 64`, `-s 200`,
/// `-s 256m` and `-s 1g` (bonnie++ 2.00a, Debian). Older versions (1.x) move the whole file
/// a byte at a time.
const BONNIE2_CHAR_BYTES: u64 = 3 << 20;

/// The bytes a bonnie++ test moves: per-char tests of bonnie++ 2.x move
/// [`BONNIE2_CHAR_BYTES`], every other test the file size.
fn bonnie_bytes(label: &str, size: u64, version: &str) -> u64 {
    if label.ends_with("per char") && version.starts_with("2.") {
        BONNIE2_CHAR_BYTES.min(size)
    } else {
        size
    }
}

/// One bonnie++ figure: `value` as printed (K/sec, or seeks/s for the seek test; `+++++`
/// or empty when it printed none) over a file of `size` bytes.
fn bonnie_figure(
    (label, moves): (&str, Moves),
    value: &str,
    size: u64,
    chunk: Option<u64>,
    kib_default: bool,
) -> ClaimedFigure {
    let size = size.max(1);
    let unit = if moves == Moves::Neither {
        "seeks/s"
    } else {
        "K/sec"
    };
    let rate = if moves == Moves::Neither {
        None
    } else if kib_default {
        value.parse::<f64>().ok().map(|k| k * 1024.0)
    } else {
        printed_size(value)
    };
    // The per-char tests move one byte per call, whatever the chunk size.
    let per_char = label.ends_with("per char");
    ClaimedFigure {
        label: label.to_string(),
        moves,
        bytes: if moves == Moves::Neither { 0 } else { size },
        record_size: if per_char { Some(1) } else { chunk },
        seconds: rate.filter(|r| *r > 0.0).map(|r| size as f64 / r),
        said: if value.is_empty() && per_char {
            "none: bonnie++ ran no per-char test (-f)".to_string()
        } else if value.is_empty() {
            "none: bonnie++ did not run this test".to_string()
        } else if kib_default && !value.starts_with('+') {
            format!("{value} {unit}")
        } else {
            value.to_string()
        },
    }
}

/// bonnie++'s CSV line (`1.98,2.00a,NAME,CONCURRENCY,SEED,SIZE,CHUNK,SEEKS,PROCS,putc,cpu,
/// put_block,cpu,rewrite,cpu,getc,cpu,get_block,cpu,seeks,cpu,...`, fields as `bon_csv2html`
/// documents format 1.98), or else its table (`NAME SIZE 1802k 89 +++++ +++ ...`). Figures
/// are K/sec over the file size (`SIZE`, with a unit, as `256M`); `+++++` (a test too quick
/// to time) gives a figure with no time. Each run of `-x N` is one line and its figures are
/// labelled with the run.
pub fn bonnie(stdout: &str) -> Result<ToolClaim> {
    let csv: Vec<Vec<&str>> = stdout
        .lines()
        .map(|l| l.trim().split(',').collect::<Vec<&str>>())
        .filter(|f| f.len() >= 21 && f[0].starts_with("1.9") && f[0].contains('.'))
        .collect();
    let mut figures = Vec::new();
    let runs = csv.len();
    for (run, f) in csv.iter().enumerate() {
        let size =
            printed_size(f[5]).with_context(|| format!("bonnie++'s file size '{}'", f[5]))? as u64;
        // The chunk size: empty in the CSV when it is the default (8 KiB).
        let chunk = printed_size(f[6]).map(|c| c as u64).or(Some(8192));
        for (i, test) in BONNIE_TESTS.iter().enumerate() {
            let bytes = bonnie_bytes(test.0, size, f[1]);
            let mut figure = bonnie_figure(*test, f[9 + 2 * i], bytes, chunk, true);
            if runs > 1 {
                figure.label = format!("{} (run {})", figure.label, run + 1);
            }
            figures.push(figure);
        }
    }
    if figures.is_empty() {
        figures = bonnie_table(stdout)?;
    }
    Ok(summed("bonnie++", figures))
}

/// bonnie++'s human table: the line after `Name:Size etc` holds the machine name, the size
/// (`256M`, or `256M:4k` with a chunk size), then figure and %CP per test.
fn bonnie_table(stdout: &str) -> Result<Vec<ClaimedFigure>> {
    let version = stdout
        .lines()
        .find_map(|l| l.strip_prefix("Version "))
        .and_then(|v| v.split_whitespace().next())
        .unwrap_or_default();
    let mut lines = stdout.lines();
    lines
        .find(|l| l.starts_with("Name:Size"))
        .context("bonnie++ printed neither its CSV line nor its table")?;
    let row = lines.next().context("bonnie++'s table has no row")?;
    let words: Vec<&str> = row.split_whitespace().collect();
    // The size is the first word that reads as one; the name before it may hold spaces.
    let at = words
        .iter()
        .position(|w| printed_size(w.split(':').next().unwrap_or(w)).is_some())
        .with_context(|| format!("bonnie++'s table row '{row}' has no size"))?;
    let (size, chunk) = match words[at].split_once(':') {
        Some((s, c)) => (s, printed_size(c)),
        None => (words[at], None),
    };
    let size = printed_size(size).context("bonnie++'s size")? as u64;
    let cells = &words[at + 1..];
    Ok(BONNIE_TESTS
        .iter()
        .enumerate()
        .filter_map(|(i, test)| {
            let value = cells.get(2 * i)?;
            Some(bonnie_figure(
                *test,
                value,
                bonnie_bytes(test.0, size, version),
                chunk.map(|c| c as u64).or(Some(8192)),
                false,
            ))
        })
        .collect())
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
        figures: vec![ClaimedFigure {
            label: if writes { "write" } else { "read" }.into(),
            moves: if writes { Moves::Write } else { Moves::Read },
            bytes,
            record_size: None,
            seconds: Some(seconds),
            said: format!("{bytes} bytes in {seconds} s"),
        }],
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
    fn two_dd_runs_on_one_stderr_give_one_figure_each_in_order() {
        let two = "2+0 records in\n2+0 records out\n131072 bytes (131 kB, 128 KiB) copied, 0.5 s, 262 kB/s\n\
                   1048576 bytes (1.0 MB, 1.0 MiB) copied, 1 s, 1.0 MB/s\r\n\
                   4+0 records in\n4+0 records out\n4194304 bytes (4.2 MB, 4.0 MiB) copied, 2 s, 2.1 MB/s\n";
        let c = dd(two).unwrap();
        let labels: Vec<&str> = c.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["copy (run 1)", "copy (run 2)"]);
        assert_eq!(c.figures[0].bytes, 131072);
        assert_eq!(c.figures[1].bytes, 4194304);
        assert_eq!(c.figures[1].seconds, Some(2.0));
        assert_eq!((c.records_in, c.seconds), (Some(6), 2.5));
        // One run stays as it was.
        assert_eq!(
            dd("1+0 records in\n1+0 records out\n1 byte copied, 1 s, 1 B/s\n")
                .unwrap()
                .figures[0]
                .label,
            "copy"
        );
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

    /// A real output kept in tests/data.
    fn data(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data")
            .join(name);
        std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", crate::text::printable_path(&path)))
    }

    fn figure<'a>(c: &'a ToolClaim, label: &str) -> &'a ClaimedFigure {
        c.figures
            .iter()
            .find(|f| f.label == label)
            .unwrap_or_else(|| panic!("no figure {label} in {:?}", c.figures))
    }

    #[test]
    fn iozone_table_gives_a_figure_per_test_with_its_file_and_record_size() {
        // iozone 3.471 -i 0 -i 1 -s 64m -r 64k: write rewrite read reread.
        let c = iozone(&data("iozone-write-read.txt")).unwrap();
        let labels: Vec<&str> = c.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["write", "rewrite", "read", "reread"]);
        let w = figure(&c, "write");
        assert_eq!(
            (w.moves, w.bytes, w.record_size),
            (Moves::Write, 64 << 20, Some(65536))
        );
        let said: f64 = w.said.trim_end_matches(" kB/s").parse().unwrap();
        let rate = w.bytes_per_second().unwrap();
        assert!((rate - said * 1024.0).abs() < 1e-6 * rate, "{rate} {said}");
        assert_eq!(figure(&c, "reread").moves, Moves::Read);
        assert_eq!((c.bytes_written, c.bytes_read), (128 << 20, 128 << 20));
    }

    #[test]
    fn iozone_blank_columns_put_random_figures_under_random_read_and_write() {
        // -i 0 -i 2: read and reread are blank; the random figures end one column past the
        // header's "read" (iozone's widths differ by one).
        let c = iozone(&data("iozone-write-random.txt")).unwrap();
        let labels: Vec<&str> = c.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, ["write", "rewrite", "random read", "random write"]);
        assert_eq!(figure(&c, "random write").moves, Moves::Write);
        assert_eq!(figure(&c, "random read").moves, Moves::Read);
        let all = iozone(&data("iozone-all-tests.txt")).unwrap();
        let labels: Vec<&str> = all.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "write",
                "rewrite",
                "read",
                "reread",
                "random read",
                "random write",
                "bkwd read",
                "record rewrite",
                "stride read",
                "fwrite",
                "frewrite",
                "fread",
                "freread"
            ]
        );
        assert_eq!(figure(&all, "record rewrite").moves, Moves::Write);
    }

    #[test]
    fn iozone_automatic_mode_gives_every_row_and_ops_mode_counts_records() {
        let c = iozone(&data("iozone-auto-excel.txt")).unwrap();
        // 64k: 5 record sizes, 128k: 6, 256k: 7; four tests each.
        assert_eq!(c.figures.len(), (5 + 6 + 7) * 4);
        let last = c.figures.last().unwrap();
        assert_eq!((last.bytes, last.record_size), (256 << 10, Some(256 << 10)));
        let ops = iozone(&data("iozone-ops.txt")).unwrap();
        let w = figure(&ops, "write");
        assert!(w.said.ends_with(" ops/s"));
        let said: f64 = w.said.trim_end_matches(" ops/s").parse().unwrap();
        let rate = w.bytes_per_second().unwrap();
        assert!((rate - said * 16384.0).abs() < 1e-6 * rate);
        assert!(iozone("iozone: no table here").is_err());
    }

    #[test]
    fn iozone_throughput_mode_gives_a_figure_per_test_at_the_children_s_rate() {
        // iozone 3.471 -i 0 -i 1 -i 2 -t 2 -s 16m -r 64k -F t1 t2.
        let c = iozone(&data("iozone-throughput-2.txt")).unwrap();
        let labels: Vec<&str> = c.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "initial writers (2 processes)",
                "rewriters (2 processes)",
                "readers (2 processes)",
                "re-readers (2 processes)",
                "random readers (2 processes)",
                "random writers (2 processes)"
            ]
        );
        let w = &c.figures[0];
        assert_eq!(
            (w.moves, w.bytes, w.record_size),
            (Moves::Write, 2 * (16 << 20), Some(65536))
        );
        assert!((w.bytes_per_second().unwrap() - 5851381.75 * 1024.0).abs() < 1.0);
        assert_eq!(
            w.said,
            "children see 5851381.75 kB/sec (parent sees 898698.55 kB/sec)"
        );
        assert_eq!(c.figures[2].moves, Moves::Read);
        assert_eq!(c.figures[5].moves, Moves::Write);
        assert!(iozone("Children see throughput for 2 initial writers = 1 kB/sec").is_err());
    }

    #[test]
    fn fio_normal_output_gives_its_group_lines() {
        let c = fio_any(&data("fio-write.txt")).unwrap();
        assert_eq!(c.figures.len(), 1);
        let w = &c.figures[0];
        assert_eq!(
            (w.label.as_str(), w.moves),
            ("WRITE, group 0", Moves::Write)
        );
        assert_eq!((w.bytes, w.record_size), (64 << 20, Some(65536)));
        // WRITE: bw=211MiB/s (221MB/s), ..., io=64.0MiB (67.1MB), run=303-303msec
        assert_eq!(w.said, "bw=211MiB/s (221MB/s)");
        let rate = w.bytes_per_second().unwrap();
        assert!((rate - 211.0 * 1048576.0).abs() < 1.0);
        assert_eq!(c.bytes_written, 64 << 20);
        assert!((c.seconds - 0.303).abs() < 1e-12);
        let mixed = fio_text(&data("fio-randrw-2jobs.txt")).unwrap();
        let (r, w) = (&mixed.figures[0], &mixed.figures[1]);
        assert_eq!((r.moves, w.moves), (Moves::Read, Moves::Write));
        assert_eq!(r.bytes, (15.6 * 1048576.0f64).round() as u64);
        assert_eq!(r.record_size, Some(4096));
        assert!((mixed.seconds - 0.297).abs() < 1e-12);
        assert!(fio_text("fio: no such option").is_err());
    }

    #[test]
    fn bonnie_csv_line_gives_its_tests_and_plus_signs_give_no_time() {
        let c = bonnie(&data("bonnie-1g-quiet.txt")).unwrap();
        let labels: Vec<&str> = c.figures.iter().map(|f| f.label.as_str()).collect();
        assert_eq!(labels, BONNIE_TESTS.map(|(l, _)| l));
        let putc = figure(&c, "sequential output per char");
        // bonnie++ 2.00a writes 3 MiB a byte at a time, whatever -s says.
        assert_eq!((putc.bytes, putc.record_size), (3 << 20, Some(1)));
        assert_eq!(figure(&c, "sequential output block").bytes, 1 << 30);
        assert_eq!(putc.said, "1821 K/sec");
        assert!((putc.bytes_per_second().unwrap() - 1821.0 * 1024.0).abs() < 1e-6);
        let old =
            "1.97,1.97,vm,1,1,1G,,8192,5,1821,92,801284,77,1971759,69,2710,87,+++++,+++,+++++,+++";
        let c = bonnie(old).unwrap();
        assert_eq!(figure(&c, "sequential output per char").bytes, 1 << 30);
        let rewrite = figure(&c, "rewrite");
        assert_eq!(rewrite.moves, Moves::Both);
        assert!((rewrite.bytes_per_second().unwrap() - 1971759.0 * 1024.0).abs() < 1e-3);
        let block_in = figure(&c, "sequential input block");
        assert_eq!((block_in.seconds, block_in.said.as_str()), (None, "+++++"));
        let seeks = figure(&c, "random seeks");
        assert_eq!(
            (seeks.moves, seeks.bytes, seeks.seconds),
            (Moves::Neither, 0, None)
        );
    }

    #[test]
    fn bonnie_table_is_read_when_there_is_no_csv_line() {
        let text = data("bonnie-1g-quiet.txt");
        let table: String = text
            .lines()
            .filter(|l| !l.starts_with("1.98,"))
            .map(|l| format!("{l}\n"))
            .collect();
        let c = bonnie(&table).unwrap();
        let block = figure(&c, "sequential output block");
        assert_eq!((block.bytes, block.said.as_str()), (1 << 30, "783m"));
        assert!((block.bytes_per_second().unwrap() - 783.0 * 1048576.0).abs() < 1e-3);
        assert!(
            (figure(&c, "rewrite").bytes_per_second().unwrap() - 1.9 * 1073741824.0).abs() < 1.0
        );
        // The same run as its CSV line says, within the table's rounding.
        let csv = bonnie(&text).unwrap();
        let (a, b) = (
            figure(&c, "sequential output per char")
                .bytes_per_second()
                .unwrap(),
            figure(&csv, "sequential output per char")
                .bytes_per_second()
                .unwrap(),
        );
        assert!((a - b).abs() < 1e-6 * b);
        assert!(figure(&c, "random seeks").seconds.is_none());
        assert!(bonnie("Using uid:0, gid:0.").is_err());
    }

    #[test]
    fn bonnie_small_run_is_read_from_its_csv_line_after_the_table() {
        let c = bonnie(&data("bonnie-256m.txt")).unwrap();
        assert_eq!(figure(&c, "sequential output per char").bytes, 3 << 20);
        assert_eq!(figure(&c, "rewrite").bytes, 256 << 20);
        assert_eq!(figure(&c, "sequential input per char").said, "2750 K/sec");
        assert_eq!(
            c.figures.iter().filter(|f| f.seconds.is_none()).count(),
            4,
            "block out, rewrite, block in and seeks printed +++++"
        );
    }
}
