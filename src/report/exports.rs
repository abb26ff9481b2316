//! One exporter for every result: a text rendering, a CSV table, Markdown and an SVG chart
//! built from the same typed result (so they always agree), the JSON schema it is saved
//! under, its warnings and whether its checks held. `ioscope report` re-renders any of them.

use super::csv::Table;
use super::svg::{Chart, Heat, Series};
use crate::cmd::calibrate::CalibrateReport;
use crate::cmd::coldwarm::CacheReport;
use crate::cmd::compare::CompareReport;
use crate::cmd::fast::FastReport;
use crate::cmd::harness::Sample;
use crate::cmd::mpi::MpiReport;
use crate::cmd::patterns::PatternsReport;
use crate::cmd::run::RunReport;
use crate::cmd::study::StudyReport;
use crate::cmd::sweep::SweepReport;
use crate::cmd::syscalls::{OPS, SyscallsReport};
use crate::cmd::trace::TraceReport;
use crate::cmd::transfer::TransferReport;
use crate::cmd::warning::Warning;
use crate::units::MIB;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// The version of every result schema (`ioscope/<command>/v2`).
pub const SCHEMA_VERSION: u32 = 2;

/// A result with text, CSV and SVG renderings.
pub trait Exportable: Serialize + DeserializeOwned {
    /// The subcommand (for the JSON schema name).
    const COMMAND: &'static str;
    /// Whether [`Exportable::chart`] draws one (`--svg` is refused up front otherwise).
    const HAS_CHART: bool = false;
    /// Human-readable text.
    fn text(&self) -> String;
    /// The same figures as a CSV table (raw numbers).
    fn table(&self) -> Table;
    /// The same figures as Markdown blocks (tables with units in their headers, notes); by
    /// default the CSV table made readable (`markdown::humanize`).
    fn markdown(&self) -> Vec<String> {
        vec![super::markdown::table(
            &super::markdown::humanize(&self.table()),
            None,
        )]
    }
    /// The same figures as a chart, for results that have one.
    fn chart(&self) -> Option<Chart> {
        None
    }
    /// Whether every check held (the exit code is 1 when not).
    fn ok(&self) -> bool;
    /// Whether every planned measurement ran (false after an interruption).
    fn complete(&self) -> bool {
        true
    }
    /// Whether nothing at all was measured (interrupted before the first point): then no
    /// output file is written, and only `--json` prints the (empty) result.
    fn is_empty(&self) -> bool {
        false
    }
    /// What the reader should know.
    fn warnings(&self) -> &[Warning] {
        &[]
    }
}

/// The version of `study` documents: v3 holds every part's own result (v2 held one table).
pub const STUDY_SCHEMA_VERSION: u32 = 3;

/// The schema name of results of `command`.
pub fn schema(command: &str) -> String {
    let version = if command == "study" {
        STUDY_SCHEMA_VERSION
    } else {
        SCHEMA_VERSION
    };
    format!("ioscope/{command}/v{version}")
}

fn table(header: &[&str], rows: Vec<Vec<String>>) -> Table {
    Table {
        header: header.iter().map(|h| h.to_string()).collect(),
        rows,
    }
}

fn cells<const N: usize>(values: [String; N]) -> Vec<String> {
    values.to_vec()
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or(String::new(), |x| x.to_string())
}

fn mib(bytes_per_second: f64) -> f64 {
    bytes_per_second / MIB as f64
}

impl Exportable for SweepReport {
    const COMMAND: &'static str = "sweep";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        super::text::sweep(self)
    }
    fn markdown(&self) -> Vec<String> {
        super::markdown::sweep(self)
    }
    fn is_empty(&self) -> bool {
        self.points.is_empty()
    }
    fn ok(&self) -> bool {
        SweepReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        let header = [
            "op",
            "engine",
            "cache",
            "block_size",
            "bytes",
            "runs",
            "bytes_per_second_median",
            "bytes_per_second_min",
            "bytes_per_second_max",
            "bytes_per_second_stddev",
            "outliers",
            "calls_per_second",
            "cpu_percent",
            "resident_share_before_min",
            "resident_share_before_max",
            "device_read_bytes",
            "checks_ok",
            "state_ok",
        ];
        let op = self.op.name();
        let rows = self
            .points
            .iter()
            .map(|p| {
                cells([
                    op.to_string(),
                    self.engine.clone(),
                    p.cache.map_or(String::new(), |c| c.name().to_string()),
                    p.block_size.to_string(),
                    p.bytes.to_string(),
                    p.rate.n.to_string(),
                    p.rate.median.to_string(),
                    p.rate.min.to_string(),
                    p.rate.max.to_string(),
                    p.rate.stddev.to_string(),
                    p.rate.outliers.to_string(),
                    p.calls_per_second.to_string(),
                    p.cpu_percent.to_string(),
                    opt(p.resident_share_before.map(|r| r.min)),
                    opt(p.resident_share_before.map(|r| r.max)),
                    opt(p.device_read_bytes),
                    p.checks_ok.to_string(),
                    p.state_ok.to_string(),
                ])
            })
            .collect();
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }
    fn chart(&self) -> Option<Chart> {
        let op = self.op.name();
        let series = self
            .analyses
            .iter()
            .map(|a| Series {
                name: a
                    .cache
                    .map_or(op.to_string(), |c| format!("{op}, {}", c.name())),
                points: self
                    .points
                    .iter()
                    .filter(|p| p.cache == a.cache)
                    .map(|p| (p.block_size as f64, mib(p.rate.median)))
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!("{op} throughput against block size: {}", self.file),
            x_label: "block size (bytes, log2 scale)".into(),
            y_label: "throughput (MiB/s, median)".into(),
            log2_x: true,
            series,
            ..Chart::default()
        })
    }
}

fn sample_cells(s: &Sample) -> [String; 4] {
    [
        s.bytes_per_second().to_string(),
        s.elapsed.seconds.to_string(),
        opt(s
            .cache
            .and_then(|c| c.residency_before)
            .map(|r| r.fraction())),
        opt(s.device.map(|d| d.read_bytes)),
    ]
}

impl Exportable for MpiReport {
    const COMMAND: &'static str = "mpi";
    fn text(&self) -> String {
        super::text::mpi(self)
    }
    fn ok(&self) -> bool {
        MpiReport::ok(self)
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    /// A row per rank, repeat and phase, with the repeat's aggregate beside it.
    fn table(&self) -> Table {
        let header = [
            "op",
            "repeat",
            "rank",
            "host",
            "segment_of",
            "bytes",
            "fsync_seconds",
            "xor",
            "expected_xor",
            "aggregate_bytes",
            "aggregate_seconds",
            "aggregate_bytes_per_second",
            "bytes_per_second",
            "seconds",
            "resident_share_before",
            "device_read_bytes",
        ];
        let mut rows = Vec::new();
        for phase in &self.results {
            for (i, repeat) in phase.repeats.iter().enumerate() {
                let a = &repeat.aggregate;
                for run in &repeat.ranks {
                    let mut row = cells([
                        phase.op.name().to_string(),
                        (i + 1).to_string(),
                        run.rank.to_string(),
                        run.host.clone(),
                        run.segment_of.to_string(),
                        run.sample.moved.bytes.to_string(),
                        opt(run.sample.fsync_seconds),
                        run.xor_hex.clone(),
                        opt(run.expected_xor_hex.clone()),
                        a.total_bytes.to_string(),
                        a.slowest_seconds.to_string(),
                        a.bytes_per_second.to_string(),
                    ]);
                    row.extend(sample_cells(&run.sample));
                    rows.push(row);
                }
            }
        }
        table(&header, rows)
    }
}

impl Exportable for CacheReport {
    const COMMAND: &'static str = "cache";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        super::text::cache(self)
    }
    fn markdown(&self) -> Vec<String> {
        super::markdown::cache(self)
    }
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    fn ok(&self) -> bool {
        CacheReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        let mut header = vec!["block_size".to_string(), "bytes".to_string()];
        for run in ["cold", "warm", "cold_again"] {
            for field in [
                "bytes_per_second",
                "seconds",
                "resident_share_before",
                "device_read_bytes",
            ] {
                header.push(format!("{run}_{field}"));
            }
        }
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let mut row = vec![r.block_size.to_string(), self.file_bytes.to_string()];
                for s in [&r.cold, &r.warm, &r.cold_again] {
                    row.extend(sample_cells(s));
                }
                row
            })
            .collect();
        Table { header, rows }
    }
    fn chart(&self) -> Option<Chart> {
        let series = [("cold", 0), ("warm", 1), ("cold again", 2)]
            .into_iter()
            .map(|(name, i)| Series {
                name: name.to_string(),
                points: self
                    .rows
                    .iter()
                    .map(|r| {
                        let s = [&r.cold, &r.warm, &r.cold_again][i];
                        (r.block_size as f64, mib(s.bytes_per_second()))
                    })
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!("cold, warm, cold again: {}", self.file),
            x_label: "block size (bytes, log2 scale)".into(),
            y_label: "read throughput (MiB/s)".into(),
            log2_x: true,
            series,
            ..Chart::default()
        })
    }
}

impl Exportable for SyscallsReport {
    const COMMAND: &'static str = "syscalls";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        super::text::syscalls(self)
    }
    fn markdown(&self) -> Vec<String> {
        super::markdown::syscalls(self)
    }
    fn ok(&self) -> bool {
        SyscallsReport::ok(self)
    }
    fn table(&self) -> Table {
        let header = [
            "op",
            "size",
            "calls",
            "seconds",
            "ns_per_call",
            "calls_per_second",
            "bytes_per_second",
            "kernel_calls",
        ];
        let rows = self
            .rows
            .iter()
            .map(|r| {
                cells([
                    r.op.clone(),
                    r.size.to_string(),
                    r.calls.to_string(),
                    r.seconds.to_string(),
                    r.ns_per_call.to_string(),
                    r.calls_per_second.to_string(),
                    opt(r.bytes_per_second),
                    opt(r.kernel_calls),
                ])
            })
            .collect();
        Table {
            header: header.iter().map(|h| h.to_string()).collect(),
            rows,
        }
    }
    fn chart(&self) -> Option<Chart> {
        let series = OPS
            .iter()
            .map(|op| Series {
                name: op.to_string(),
                points: self
                    .rows
                    .iter()
                    .filter(|r| r.op == *op)
                    .map(|r| (r.size as f64, r.ns_per_call))
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!("cost of a system call: {}", self.file),
            x_label: "calls per measurement (= bytes read, log2 scale)".into(),
            y_label: "time per call (ns)".into(),
            log2_x: true,
            series,
            ..Chart::default()
        })
    }
}

/// The one-row table of a single measurement: every named figure as a column.
fn one_row(pairs: &[(&str, String)]) -> Table {
    table(
        &pairs.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        vec![pairs.iter().map(|(_, v)| v.clone()).collect()],
    )
}

impl Exportable for RunReport {
    const COMMAND: &'static str = "run";
    fn text(&self) -> String {
        super::text::run(self)
    }
    fn table(&self) -> Table {
        one_row(&[
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
        ])
    }
    fn ok(&self) -> bool {
        RunReport::ok(self)
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

impl Exportable for CalibrateReport {
    const COMMAND: &'static str = "calibrate";
    fn text(&self) -> String {
        super::text::calibrate(self)
    }
    fn table(&self) -> Table {
        let rows = self
            .probes
            .iter()
            .map(|p| {
                cells([
                    p.bytes.to_string(),
                    p.seconds.to_string(),
                    p.bytes_per_second.to_string(),
                    opt(p
                        .cache
                        .and_then(|c| c.residency_before)
                        .map(|r| r.fraction())),
                    opt(p.cache.and_then(|c| c.device_read_bytes)),
                ])
            })
            .collect();
        table(
            &[
                "bytes",
                "seconds",
                "bytes_per_second",
                "resident_share_before",
                "device_read_bytes",
            ],
            rows,
        )
    }
    fn ok(&self) -> bool {
        CalibrateReport::ok(self)
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

impl Exportable for FastReport {
    const COMMAND: &'static str = "fast";
    fn text(&self) -> String {
        super::text::fast(self)
    }
    fn markdown(&self) -> Vec<String> {
        super::markdown::fast(self)
    }
    fn table(&self) -> Table {
        one_row(&[
            ("file", self.file.clone()),
            ("engine", self.engine.clone()),
            ("threads", self.threads.to_string()),
            ("block_size", self.block_size.to_string()),
            ("bytes", self.moved.bytes.to_string()),
            ("calls", self.moved.calls.to_string()),
            ("xor", self.xor_hex.clone()),
            ("seconds", self.seconds.to_string()),
            ("bytes_per_second", self.bytes_per_second.to_string()),
        ])
    }
    fn ok(&self) -> bool {
        true
    }
}

impl Exportable for StudyReport {
    const COMMAND: &'static str = "study";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        super::text::study(self)
    }
    fn table(&self) -> Table {
        let rows = self
            .write_read
            .iter()
            .map(|r| {
                cells([
                    r.op.name().to_string(),
                    r.block_size.to_string(),
                    r.moved.bytes.to_string(),
                    r.moved.calls.to_string(),
                    r.seconds.to_string(),
                    r.bytes_per_second.to_string(),
                    r.calls_per_second.to_string(),
                    opt(r.fsync_seconds),
                    r.xor_hex.clone(),
                    r.verified.to_string(),
                ])
            })
            .collect();
        table(
            &[
                "op",
                "block_size",
                "bytes",
                "calls",
                "seconds",
                "bytes_per_second",
                "calls_per_second",
                "fsync_seconds",
                "xor",
                "verified",
            ],
            rows,
        )
    }
    /// The whole study as report.md has it, without the chart links (the SVGs are in the
    /// report directory, not beside this file).
    fn markdown(&self) -> Vec<String> {
        super::results::markdown_blocks(self, &self.environment(), false)
    }
    fn chart(&self) -> Option<Chart> {
        self.read_sweep.as_ref().and_then(|s| s.chart())
    }
    fn ok(&self) -> bool {
        StudyReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

impl Exportable for CompareReport {
    const COMMAND: &'static str = "compare";
    const HAS_CHART: bool = true;
    fn chart(&self) -> Option<Chart> {
        Some(super::study::compare_chart(self))
    }
    fn text(&self) -> String {
        super::text::compare(self)
    }
    fn markdown(&self) -> Vec<String> {
        super::markdown::compare(self)
    }
    fn table(&self) -> Table {
        let rows = self
            .rows
            .iter()
            .map(|r| {
                cells([
                    r.cache.name().to_string(),
                    r.contender.clone(),
                    r.median_bytes_per_second.to_string(),
                    r.median_wall_bytes_per_second.to_string(),
                    r.ratio_to_best.to_string(),
                    r.runs.len().to_string(),
                    r.state_ok.to_string(),
                ])
            })
            .collect();
        table(
            &[
                "cache",
                "contender",
                "median_bytes_per_second",
                "median_wall_bytes_per_second",
                "ratio_to_best",
                "runs",
                "state_ok",
            ],
            rows,
        )
    }
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    fn ok(&self) -> bool {
        CompareReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
}

impl Exportable for TraceReport {
    const COMMAND: &'static str = "trace";
    const HAS_CHART: bool = true;
    /// Where each busy file was accessed, in order: a ramp for sequential, a cloud for
    /// random (the plot the iozone audit drew).
    fn chart(&self) -> Option<Chart> {
        let series = self
            .files
            .iter()
            .filter(|f| f.busy())
            .take(6)
            .map(|f| Series {
                name: crate::text::printable(&f.path),
                points: f
                    .timeline
                    .offsets
                    .iter()
                    .enumerate()
                    .map(|(i, &o)| {
                        (
                            (i as u64 * f.timeline.stride) as f64,
                            o as f64 / (1u64 << 20) as f64,
                        )
                    })
                    .collect(),
            })
            .collect();
        Some(Chart {
            title: format!(
                "where the calls went: {}",
                crate::text::printable(&self.command.join(" "))
            ),
            x_label: "access number (read, write or lseek, in order)".into(),
            y_label: "offset (MiB)".into(),
            series,
            points_only: true,
            ..Chart::default()
        })
    }
    fn text(&self) -> String {
        super::text::trace(self)
    }
    /// The CSV table made readable, its paths made printable (control characters escaped);
    /// then what was left running and what tracing cannot see.
    fn markdown(&self) -> Vec<String> {
        let mut table = self.table();
        for row in &mut table.rows {
            row[0] = crate::text::printable(&row[0]);
        }
        let mut blocks = vec![super::markdown::table(
            &super::markdown::humanize(&table),
            None,
        )];
        let mut notes: Vec<String> = self
            .still_running
            .iter()
            .map(|l| {
                format!(
                    "still running when the command ended, not traced after: {} {}{}",
                    l.pid,
                    crate::text::printable(&l.name),
                    if l.stopped { " (stopped)" } else { "" }
                )
            })
            .collect();
        notes.extend(self.unseen.iter().map(|u| crate::text::printable(u)));
        if !notes.is_empty() {
            blocks.push(super::markdown::list("Not seen:", &notes));
        }
        blocks
    }
    fn ok(&self) -> bool {
        self.kernel_agrees() != Some(false)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn table(&self) -> Table {
        let header = [
            "file",
            "call",
            "calls",
            "errors",
            "bytes_requested",
            "bytes_returned",
            "seconds_inside",
        ];
        let rows = self
            .files
            .iter()
            .flat_map(|f| {
                f.calls.iter().map(|(name, s)| {
                    cells([
                        f.path.clone(),
                        name.clone(),
                        s.calls.to_string(),
                        s.errors.to_string(),
                        s.bytes_requested.to_string(),
                        s.bytes_returned.to_string(),
                        (s.nanos as f64 / 1e9).to_string(),
                    ])
                })
            })
            .collect();
        table(&header, rows)
    }
}

impl Exportable for PatternsReport {
    const COMMAND: &'static str = "patterns";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        super::text::patterns(self)
    }
    fn is_empty(&self) -> bool {
        self.results.is_empty()
    }
    fn ok(&self) -> bool {
        PatternsReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        let header = [
            "test",
            "file_bytes",
            "record",
            "runs",
            "bytes_per_second_median",
            "bytes_per_second_min",
            "bytes_per_second_max",
            "without_fsync_bytes_per_second",
            "fsync_seconds",
            "close_seconds",
            "calls_per_second",
            "cache",
            "cache_verdict",
            "records_touched",
            "records",
            "verified",
            "checks_ok",
        ];
        let rows = self
            .results
            .iter()
            .map(|r| {
                let proof = r.cache();
                cells([
                    r.test.name().to_string(),
                    r.file_bytes.to_string(),
                    r.record.to_string(),
                    r.runs.len().to_string(),
                    r.bytes_per_second.median.to_string(),
                    r.bytes_per_second.min.to_string(),
                    r.bytes_per_second.max.to_string(),
                    opt(r.without_fsync.map(|s| s.median)),
                    opt(r.fsync_seconds),
                    opt(r.close_seconds),
                    r.calls_per_second.to_string(),
                    opt(proof.map(|p| p.asked.name())),
                    opt(proof.map(|p| format!("{:?}", p.verdict).to_lowercase())),
                    opt(r.coverage.as_ref().map(|c| c.distinct)),
                    opt(r.coverage.as_ref().map(|c| c.pieces)),
                    opt(r.verified),
                    r.checks_ok.to_string(),
                ])
            })
            .collect();
        table(&header, rows)
    }
    /// One result per test: grouped bars, with fsync and (writes) without. Auto mode: a
    /// heat map per test, file size by record size.
    fn chart(&self) -> Option<Chart> {
        let mut tests = Vec::new();
        for r in &self.results {
            if !tests.contains(&r.test) {
                tests.push(r.test);
            }
        }
        if self.auto {
            let heat = tests
                .iter()
                .map(|&t| Heat {
                    title: t.name().to_string(),
                    columns: self
                        .records
                        .iter()
                        .map(|&r| crate::units::format_block_size(r))
                        .collect(),
                    rows: self
                        .sizes
                        .iter()
                        .map(|&s| crate::units::format_size(s))
                        .collect(),
                    values: self
                        .sizes
                        .iter()
                        .map(|&size| {
                            self.records
                                .iter()
                                .map(|&record| {
                                    self.results
                                        .iter()
                                        .find(|x| {
                                            x.test == t
                                                && x.file_bytes == size
                                                && x.record == record
                                        })
                                        .map(|x| mib(x.bytes_per_second.median))
                                })
                                .collect()
                        })
                        .collect(),
                })
                .collect();
            return Some(Chart {
                title: format!(
                    "MiB/s by record size and file size (writes include fsync): {}",
                    self.path
                ),
                x_label: "record size".into(),
                y_label: "file size".into(),
                heat,
                ..Chart::default()
            });
        }
        let with: Vec<(f64, f64)> = self
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| (i as f64, mib(r.bytes_per_second.median)))
            .collect();
        let without: Vec<(f64, f64)> = self
            .results
            .iter()
            .enumerate()
            .filter_map(|(i, r)| r.without_fsync.map(|w| (i as f64, mib(w.median))))
            .collect();
        let mut series = vec![Series {
            name: "headline (writes: fsync included)".into(),
            points: with,
        }];
        if !without.is_empty() {
            series.push(Series {
                name: "without fsync (what iozone reports by default)".into(),
                points: without,
            });
        }
        let first = self.results.first();
        Some(Chart {
            title: format!(
                "iozone's tests on {} ({} file, records of {})",
                self.path,
                first.map_or(String::new(), |r| crate::units::format_size(r.file_bytes)),
                first.map_or(String::new(), |r| crate::units::format_size(r.record)),
            ),
            x_label: "test".into(),
            y_label: "throughput (MiB/s, median)".into(),
            categories: self
                .results
                .iter()
                .map(|r| r.test.name().to_string())
                .collect(),
            series,
            ..Chart::default()
        })
    }
}

impl Exportable for TransferReport {
    const COMMAND: &'static str = "transfer";
    const HAS_CHART: bool = true;
    fn chart(&self) -> Option<Chart> {
        Some(super::study::transfer_chart(self))
    }
    fn text(&self) -> String {
        super::text::transfer(self)
    }
    fn ok(&self) -> bool {
        TransferReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn table(&self) -> Table {
        let header = [
            "workload",
            "files",
            "bytes",
            "sender",
            "receiver",
            "sender_seconds_median",
            "receiver_seconds_median",
            "receiver_seconds_min",
            "receiver_seconds_max",
            "bytes_per_second",
            "seconds_per_file",
            "verified",
        ];
        let rows = self
            .workloads
            .iter()
            .flat_map(|w| {
                w.cells.iter().map(move |c| {
                    cells([
                        w.name.clone(),
                        w.files.to_string(),
                        w.bytes.to_string(),
                        c.sender.name().to_string(),
                        c.receiver.name().to_string(),
                        c.sender_seconds.median.to_string(),
                        c.receiver_seconds.median.to_string(),
                        c.receiver_seconds.min.to_string(),
                        c.receiver_seconds.max.to_string(),
                        c.bytes_per_second.to_string(),
                        c.seconds_per_file.to_string(),
                        c.verified.to_string(),
                    ])
                })
            })
            .collect();
        table(&header, rows)
    }
}
