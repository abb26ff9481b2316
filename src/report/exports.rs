//! What the table-producing commands share: a text rendering, a CSV table and an SVG chart
//! built from the same report, so the three always agree.

use super::csv::Table;
use super::svg::{Chart, Series};
use crate::cmd::coldwarm::CacheReport;
use crate::cmd::harness::Sample;
use crate::cmd::sweep::SweepReport;
use crate::cmd::syscalls::{OPS, SyscallsReport};
use crate::units::MIB;
use serde::Serialize;

/// A result with text, CSV and SVG renderings.
pub trait Exportable: Serialize {
    /// The subcommand (for the JSON schema name).
    fn command(&self) -> &'static str;
    /// Human-readable text.
    fn text(&self) -> String;
    /// The same figures as a CSV table (raw numbers).
    fn table(&self) -> Table;
    /// The same figures as a chart.
    fn chart(&self) -> Chart;
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
    fn command(&self) -> &'static str {
        "sweep"
    }
    fn text(&self) -> String {
        super::text::sweep(self)
    }
    fn table(&self) -> Table {
        let header = [
            "op",
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
            "resident_before_min",
            "resident_before_max",
            "device_read_bytes",
            "checks_ok",
            "state_ok",
        ];
        let op = format!("{:?}", self.op).to_lowercase();
        let rows = self
            .points
            .iter()
            .map(|p| {
                cells([
                    op.clone(),
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
                    opt(p.resident_before.map(|r| r.0)),
                    opt(p.resident_before.map(|r| r.1)),
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
    fn chart(&self) -> Chart {
        let op = format!("{:?}", self.op).to_lowercase();
        let series = self
            .analyses
            .iter()
            .map(|a| Series {
                name: a
                    .cache
                    .map_or(op.clone(), |c| format!("{op}, {}", c.name())),
                points: self
                    .points
                    .iter()
                    .filter(|p| p.cache == a.cache)
                    .map(|p| (p.block_size as f64, mib(p.rate.median)))
                    .collect(),
            })
            .collect();
        Chart {
            title: format!("{op} throughput against block size: {}", self.file),
            x_label: "block size (bytes, log2 scale)".into(),
            y_label: "throughput (MiB/s, median)".into(),
            log2_x: true,
            series,
        }
    }
}

fn sample_cells(s: &Sample) -> [String; 4] {
    [
        s.bytes_per_second().to_string(),
        s.elapsed.seconds.to_string(),
        opt(s.residency_before.map(|r| r.fraction())),
        opt(s.device.map(|d| d.read_bytes)),
    ]
}

impl Exportable for CacheReport {
    fn command(&self) -> &'static str {
        "cache"
    }
    fn text(&self) -> String {
        super::text::cache(self)
    }
    fn table(&self) -> Table {
        let mut header = vec!["block_size".to_string(), "bytes".to_string()];
        for run in ["cold", "warm", "cold_again"] {
            for field in [
                "bytes_per_second",
                "seconds",
                "resident_before",
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
    fn chart(&self) -> Chart {
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
        Chart {
            title: format!("cold, warm, cold again: {}", self.file),
            x_label: "block size (bytes, log2 scale)".into(),
            y_label: "read throughput (MiB/s)".into(),
            log2_x: true,
            series,
        }
    }
}

impl Exportable for SyscallsReport {
    fn command(&self) -> &'static str {
        "syscalls"
    }
    fn text(&self) -> String {
        super::text::syscalls(self)
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
    fn chart(&self) -> Chart {
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
        Chart {
            title: format!("cost of a system call: {}", self.file),
            x_label: "calls per measurement (= bytes read, log2 scale)".into(),
            y_label: "time per call (ns)".into(),
            log2_x: true,
            series,
        }
    }
}
