//! The figures of several studies merged, one *measure* at a time: a row per block size
//! (or reader, operation, test, method pair) and a cell per medium, each cell the median
//! with the range of its runs, compared with the same row of the measure's reference medium
//! (the first that has it) by the one rule of [`crate::measure::verdict`]. The media page
//! renders these as tables, overlaid curves and grouped bars; the same figures go beside it
//! as JSON and CSV.

use crate::measure::cache::CacheState;
use crate::measure::env::Environment;
use crate::measure::stats::Summary;
use crate::measure::verdict::{Figure, Relation, relate};
use crate::report::cells::mib;
use crate::results::disk::Path as DiskPath;
use crate::results::study::StudyReport;
use crate::units::{format_block_size, group_thousands};
use crate::workload::Op;
use crate::workload::study::Part;

/// One study among several, with its label.
pub struct Medium<'a> {
    /// Its name in columns and legends ("ext4 on vda", or the user's), printable.
    pub label: String,
    /// The study.
    pub report: &'a StudyReport,
    /// The environment it was measured in.
    pub env: &'a Environment,
    /// Who measured it, when and with what command, as saved in its document.
    pub provenance: Option<&'a crate::report::json::Provenance>,
    /// The document it was read from, as printed.
    pub source: String,
}

/// What a measure's figures are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bytes per second (shown in MiB/s); higher is faster.
    Rate,
    /// Nanoseconds per call; higher is costlier.
    Nanos,
    /// Bytes per second shown in MB/s (10^6 bytes), as the disk panels print them; higher
    /// is faster.
    RateMb,
    /// I/Os completed per second; higher is faster.
    Iops,
    /// Microseconds per I/O (a latency); higher is slower.
    Micros,
}

impl Unit {
    /// The raw unit, as JSON keys and CSV cells name it.
    pub fn key(self) -> &'static str {
        match self {
            Unit::Rate | Unit::RateMb => "bytes_per_second",
            Unit::Nanos => "ns_per_call",
            Unit::Iops => "iops",
            Unit::Micros => "latency_us",
        }
    }

    /// Whether a higher figure is the better one (a rate), else the lower (a cost, a wait).
    pub fn higher_is_better(self) -> bool {
        match self {
            Unit::Rate | Unit::RateMb | Unit::Iops => true,
            Unit::Nanos | Unit::Micros => false,
        }
    }

    /// A raw value in the unit the reader sees (MiB/s, MB/s; the others as they are).
    pub fn human(self, raw: f64) -> f64 {
        match self {
            Unit::Rate => mib(raw),
            Unit::RateMb => raw / 1e6,
            Unit::Nanos | Unit::Iops | Unit::Micros => raw,
        }
    }

    /// The unit as a reader sees it.
    pub fn heading(self) -> &'static str {
        match self {
            Unit::Rate => "MiB/s",
            Unit::Nanos => "ns per call",
            Unit::RateMb => "MB/s",
            Unit::Iops => "IOPS",
            Unit::Micros => "µs",
        }
    }

    /// A raw value in this unit's human form, thousands separated: `1,234`, `87.2`, `3.14`.
    pub fn show(self, raw: f64) -> String {
        let v = self.human(raw);
        if v >= 1000.0 {
            group_thousands(v.round() as u64)
        } else if v >= 100.0 {
            format!("{v:.0}")
        } else if v >= 10.0 {
            format!("{v:.1}")
        } else {
            format!("{v:.2}")
        }
    }

    /// A raw value with its unit: `1,234.5 MiB/s`.
    pub fn with_unit(self, raw: f64) -> String {
        format!("{} {}", self.show(raw), self.heading())
    }
}

/// How a measure is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Lines over block sizes (log₂ x), one per medium.
    Curve,
    /// Grouped bars, a group per row and a bar per medium.
    Bars,
}

/// Which row a measure's first sentence compares across media.
#[derive(Debug, Clone, PartialEq)]
pub enum Lead {
    /// Each medium's best row (the fastest block size, the fastest reader), and what that
    /// is in a sentence ("each medium at its best block size").
    Best(&'static str),
    /// The row with this key, and what it is in a sentence ("a 1-byte read()").
    Row(String, &'static str),
    /// None: only where the media differ most is said.
    Nothing,
}

/// One row: a block size (or reader, test…) and a figure per medium.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the row is, as shown (`4k`, `ioscope fast`, `read 1 B`).
    pub key: String,
    /// The block size in bytes, for rows over block sizes.
    pub block_size: Option<u64>,
    /// A figure per medium, in the media's order (`None`: not measured there).
    pub cells: Vec<Option<Figure>>,
    /// How each medium's bytes moved, for the disk panel's rows (O_DIRECT or the page
    /// cache, io_uring or one call at a time); empty for every other measure.
    pub paths: Vec<Option<DiskPath>>,
}

/// One measure of one part, merged over the media.
#[derive(Debug, Clone, PartialEq)]
pub struct Measure {
    /// The part it belongs to.
    pub part: Part,
    /// Its identifier in files and anchors (`read_cold`).
    pub id: String,
    /// Its name for the reader (`read, cold`).
    pub title: String,
    /// The heading of the row keys (`block`, `reader`).
    pub key_heading: String,
    /// What the figures are.
    pub unit: Unit,
    /// How it is drawn.
    pub shape: Shape,
    /// Which row the first sentence compares.
    pub lead: Lead,
    /// The rows.
    pub rows: Vec<Row>,
}

impl Measure {
    /// The medium the ratios are to: the first with a figure in this measure.
    pub fn reference(&self) -> Option<usize> {
        let n = self.rows.first().map_or(0, |r| r.cells.len());
        (0..n).find(|&m| self.rows.iter().any(|r| r.cells[m].is_some()))
    }

    /// Whether medium `m` has any figure here.
    pub fn has(&self, m: usize) -> bool {
        self.rows
            .iter()
            .any(|r| r.cells.get(m).is_some_and(Option::is_some))
    }
}

/// A cell's figure against the reference's in the same row: the ratio of medians and what
/// the one rule makes of it.
pub fn against(cell: Figure, reference: Figure) -> (f64, Relation) {
    (
        crate::measure::verdict::ratio(cell.median, reference.median),
        relate(cell, reference),
    )
}

/// The relation in one word, as tables, JSON and CSV give it.
pub fn relation_word(r: Relation) -> &'static str {
    match r {
        Relation::Same => "same",
        Relation::Above(_) => "higher",
        Relation::Below(_) => "lower",
        Relation::Unclear(_) => "overlap",
    }
}

fn figure(s: &Summary) -> Figure {
    Figure::from(s)
}

/// Rows from each medium's (key, block size, figure) list: keys in the order first met
/// (sorted by block size where every row has one).
fn merge(per: Vec<Rows>) -> Vec<Row> {
    let n = per.len();
    let mut rows: Vec<Row> = Vec::new();
    for (m, list) in per.into_iter().enumerate() {
        for (key, block_size, fig) in list {
            let i = match rows.iter().position(|r| r.key == key) {
                Some(i) => i,
                None => {
                    rows.push(Row {
                        key,
                        block_size,
                        cells: vec![None; n],
                        paths: Vec::new(),
                    });
                    rows.len() - 1
                }
            };
            rows[i].cells[m] = Some(fig);
        }
    }
    if rows.iter().all(|r| r.block_size.is_some()) {
        rows.sort_by_key(|r| r.block_size);
    }
    rows
}

/// Builds a measure from each medium's rows; `None` when no medium has any.
#[allow(clippy::too_many_arguments)]
pub(super) fn measure(
    part: Part,
    id: &str,
    title: &str,
    key_heading: &str,
    unit: Unit,
    shape: Shape,
    lead: Lead,
    per: Vec<Rows>,
) -> Option<Measure> {
    let rows = merge(per);
    (!rows.is_empty()).then(|| Measure {
        part,
        id: id.to_string(),
        title: title.to_string(),
        key_heading: key_heading.to_string(),
        unit,
        shape,
        lead,
        rows,
    })
}

/// The sweep's points in one cache state (`None`: writes), by block size.
fn sweep_rows(s: Option<&crate::results::sweep::SweepReport>, state: Option<CacheState>) -> Rows {
    s.map(|s| {
        s.points
            .iter()
            .filter(|p| p.cache == state)
            .map(|p| {
                (
                    format_block_size(p.block_size),
                    Some(p.block_size),
                    figure(&p.rate),
                )
            })
            .collect()
    })
    .unwrap_or_default()
}

/// A medium's rows of one measure: key, block size, figure.
pub(super) type Rows = Vec<(String, Option<u64>, Figure)>;

/// A medium's rows from each medium's study.
fn each(media: &[Medium], f: &dyn Fn(&StudyReport) -> Rows) -> Vec<Rows> {
    media.iter().map(|m| f(m.report)).collect()
}

/// The write and the read back.
pub(crate) fn write_read(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    out.extend(measure(
        part,
        "write_read",
        "the scratch file written, then read back",
        "step",
        Unit::Rate,
        Shape::Bars,
        Lead::Row(WRITE_FSYNC.into(), "the write with its fsync"),
        each(&|r| {
            let mut v = Vec::new();
            for w in &r.write_read {
                match (w.op, w.fsync_seconds) {
                    (Op::Write, Some(f)) => {
                        v.push((WRITE_FSYNC.into(), None, Figure::one(w.bytes_per_second)));
                        let before = w.moved.bytes as f64 / (w.seconds - f).max(1e-9);
                        v.push(("write() before the fsync".into(), None, Figure::one(before)));
                    }
                    (Op::Write, None) => {
                        v.push(("write".into(), None, Figure::one(w.bytes_per_second)))
                    }
                    (_, _) => v.push(("read back".into(), None, Figure::one(w.bytes_per_second))),
                }
            }
            v
        }),
    ));
    out
}

/// The read sweep, cold and warm.
pub(crate) fn read_sweep(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    for state in [CacheState::Cold, CacheState::Warm] {
        out.extend(measure(
            part,
            &format!("read_{}", state.name()),
            &format!("read, {}", state.name()),
            "block",
            Unit::Rate,
            Shape::Curve,
            Lead::Best("each medium at its best block size"),
            each(&|r| {
                sweep_rows(
                    r.result::<crate::results::sweep::SweepReport>(part),
                    Some(state),
                )
            }),
        ));
    }
    out
}

/// Cold, warm, cold again.
pub(crate) fn cache(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    out.extend(measure(
        part,
        "cache",
        "cold, warm, cold again",
        "block, cache",
        Unit::Rate,
        Shape::Bars,
        Lead::Row("1m, cold".into(), "the cold read in calls of 1 MiB"),
        each(&|r| {
            r.result::<crate::results::cache::CacheReport>(part)
                .iter()
                .flat_map(|c| &c.rows)
                .flat_map(|row| {
                    row.runs().map(|(state, s)| {
                        (
                            format!("{}, {state}", format_block_size(row.block_size)),
                            None,
                            Figure::one(s.bytes_per_second()),
                        )
                    })
                })
                .collect()
        }),
    ));
    out
}

/// The cost of a call.
pub(crate) fn syscalls(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    out.extend(measure(
        part,
        "syscalls",
        "the cost of a call",
        "operation",
        Unit::Nanos,
        Shape::Bars,
        Lead::Row("read 1 B".into(), "a 1-byte read()"),
        each(&|r| {
            r.result::<crate::results::syscalls::SyscallsReport>(part)
                .iter()
                .flat_map(|s| {
                    crate::results::syscalls::OPS.iter().filter_map(move |op| {
                        Some((op.to_string(), None, figure(&s.ns_summary(op)?)))
                    })
                })
                .collect()
        }),
    ));
    out
}

/// The readers, cold and warm.
pub(crate) fn compare(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    for state in [CacheState::Cold, CacheState::Warm] {
        out.extend(measure(
            part,
            &format!("readers_{}", state.name()),
            &format!("readers, {}", state.name()),
            "reader",
            Unit::Rate,
            Shape::Bars,
            Lead::Best("the fastest reader of each medium"),
            each(&|r| {
                r.result::<crate::results::compare::CompareReport>(part)
                    .iter()
                    .flat_map(|c| &c.rows)
                    .filter(|row| row.cache == state)
                    .map(|row| {
                        let fig = row
                            .rates()
                            .map_or(Figure::one(row.median_bytes_per_second), |s| figure(&s));
                        (row.contender.clone(), None, fig)
                    })
                    .collect()
            }),
        ));
    }
    out
}

/// The write sweep.
pub(crate) fn write_sweep(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    out.extend(measure(
        part,
        "write",
        "write, fsync included",
        "block",
        Unit::Rate,
        Shape::Curve,
        Lead::Best("each medium at its best block size"),
        each(&|r| sweep_rows(r.result::<crate::results::sweep::SweepReport>(part), None)),
    ));
    out
}

/// The iozone tests.
pub(crate) fn patterns(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    out.extend(measure(
        part,
        "patterns",
        "the iozone tests",
        "test",
        Unit::Rate,
        Shape::Bars,
        Lead::Nothing,
        each(&|r| {
            let Some(p) = r.result::<crate::results::patterns::PatternsReport>(part) else {
                return Vec::new();
            };
            let records = p.records.len() > 1;
            p.results
                .iter()
                .map(|x| {
                    let key = if records {
                        format!("{} {}", x.test.name(), format_block_size(x.record))
                    } else {
                        x.test.name().to_string()
                    };
                    (key, None, figure(&x.bytes_per_second))
                })
                .collect()
        }),
    ));
    out
}

/// One measure per workload of the transfer matrix.
pub(crate) fn transfer(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    // One measure per workload (small files, one large file): their rates differ by orders
    // of magnitude, so a row of one beside a row of the other would say nothing.
    let mut workloads: Vec<String> = Vec::new();
    for m in media {
        for w in m
            .report
            .result::<crate::results::transfer::TransferReport>(part)
            .iter()
            .flat_map(|t| &t.workloads)
        {
            if !workloads.contains(&w.name) {
                workloads.push(w.name.clone());
            }
        }
    }
    for (i, name) in workloads.iter().enumerate() {
        out.extend(measure(
            part,
            &format!("transfer_{}", i + 1),
            &format!("transfer: {name}"),
            "sender → receiver",
            Unit::Rate,
            Shape::Bars,
            Lead::Best("the fastest method pair of each medium"),
            each(&|r| {
                r.result::<crate::results::transfer::TransferReport>(part)
                    .iter()
                    .flat_map(|t| &t.workloads)
                    .filter(|w| &w.name == name)
                    .flat_map(|w| &w.cells)
                    .map(|c| {
                        (
                            format!("{} → {}", c.sender.name(), c.receiver.name()),
                            None,
                            Figure::one(c.bytes_per_second),
                        )
                    })
                    .collect()
            }),
        ));
    }
    out
}

/// The calibrated read: one row for every medium.
pub(crate) fn calibrate(media: &[Medium], part: Part) -> Vec<Measure> {
    let each = |f: &dyn Fn(&StudyReport) -> Rows| each(media, f);
    let mut out = Vec::new();
    out.extend(measure(
        part,
        "calibrate",
        "the calibrated read",
        "read",
        Unit::Rate,
        Shape::Bars,
        Lead::Nothing,
        each(&|r| {
            r.result::<crate::results::calibrate::CalibrateReport>(part)
                .iter()
                .map(|c| {
                    (
                        format!(
                            "{} ({})",
                            crate::units::format_size(c.bytes),
                            c.cache.name()
                        ),
                        None,
                        Figure::one(c.bytes_per_second),
                    )
                })
                .collect()
        }),
    ));
    // The calibrated sizes differ per medium: one row for all, named by what it is.
    for m in out.iter_mut().filter(|m| m.part == part) {
        let mut cells = vec![None; media.len()];
        for r in &m.rows {
            for (i, c) in r.cells.iter().enumerate() {
                if c.is_some() {
                    cells[i] = *c;
                }
            }
        }
        m.rows = vec![Row {
            key: "the read of the size found".into(),
            block_size: None,
            cells,
            paths: Vec::new(),
        }];
    }
    out
}

/// The row key of the write with its fsync.
pub const WRITE_FSYNC: &str = "write() + fsync";

/// The figures as JSON (`ioscope/media/v1`): the media, then each measure's rows with a
/// cell per medium (median, min, max in the measure's raw unit, runs, the ratio to the
/// reference medium and the rule's word for it; for the disk panel's rows, the `path` the
/// bytes took), then the sentences of the page.
pub fn json(media: &[Medium], measures: &[Measure], sentences: &[String]) -> String {
    use serde_json::{Map, Value, json};
    let media_json: Vec<Value> = media
        .iter()
        .map(|m| {
            json!({
                "label": m.label,
                "study": m.source,
                "dir": m.report.dir,
                "level": m.report.level.name(),
                "complete": m.report.complete,
                "environment": m.env,
            })
        })
        .collect();
    let measures_json: Vec<Value> = measures
        .iter()
        .map(|ms| {
            let reference = ms.reference();
            let unit = ms.unit.key();
            let rows: Vec<Value> = ms
                .rows
                .iter()
                .map(|r| {
                    let base = reference.and_then(|i| r.cells[i]);
                    let cells: Vec<Value> = r
                        .cells
                        .iter()
                        .zip(media)
                        .enumerate()
                        .map(|(i, (c, m))| {
                            let Some(c) = c else { return Value::Null };
                            let mut o = Map::new();
                            o.insert("medium".into(), json!(m.label));
                            if let Some(Some(p)) = r.paths.get(i) {
                                o.insert("path".into(), json!(p));
                            }
                            o.insert(format!("median_{unit}"), json!(c.median));
                            o.insert(format!("min_{unit}"), json!(c.min));
                            o.insert(format!("max_{unit}"), json!(c.max));
                            o.insert("runs".into(), json!(c.n));
                            if let Some(b) = base {
                                let (ratio, rel) = against(*c, b);
                                o.insert("ratio_to_reference".into(), json!(ratio));
                                o.insert("relation".into(), json!(relation_word(rel)));
                            }
                            Value::Object(o)
                        })
                        .collect();
                    let mut o = Map::new();
                    o.insert("key".into(), json!(r.key));
                    if let Some(b) = r.block_size {
                        o.insert("block_size_bytes".into(), json!(b));
                    }
                    o.insert("cells".into(), Value::Array(cells));
                    Value::Object(o)
                })
                .collect();
            json!({
                "part": ms.part.name(),
                "measure": ms.id,
                "title": ms.title,
                "unit": unit,
                "reference": reference.map(|i| media[i].label.clone()),
                "rows": rows,
            })
        })
        .collect();
    let doc = json!({
        "schema": "ioscope/media/v1",
        "version": env!("CARGO_PKG_VERSION"),
        "command_line": std::env::args_os()
            .map(|a| crate::text::lossless(&a))
            .collect::<Vec<_>>(),
        "media": media_json,
        "measures": measures_json,
        "sentences": sentences,
    });
    let mut text = serde_json::to_string_pretty(&doc).expect("plain JSON values serialise");
    text.push('\n');
    text
}

/// The figures as one CSV table: a line per measure, row and medium, raw numbers (`path`:
/// how a disk panel row's bytes moved, `uring_direct` …; empty for the other measures).
pub fn csv(media: &[Medium], measures: &[Measure]) -> crate::report::csv::Table {
    let mut rows = Vec::new();
    for ms in measures {
        let reference = ms.reference();
        for r in &ms.rows {
            let base = reference.and_then(|i| r.cells[i]);
            for (i, (c, m)) in r.cells.iter().zip(media).enumerate() {
                let Some(c) = c else { continue };
                let (ratio, rel) = base.map_or((String::new(), String::new()), |b| {
                    let (ratio, rel) = against(*c, b);
                    (ratio.to_string(), relation_word(rel).to_string())
                });
                rows.push(vec![
                    ms.part.name().to_string(),
                    ms.id.clone(),
                    r.key.clone(),
                    r.block_size.map_or(String::new(), |b| b.to_string()),
                    m.label.clone(),
                    ms.unit.key().to_string(),
                    c.median.to_string(),
                    c.min.to_string(),
                    c.max.to_string(),
                    c.n.to_string(),
                    ratio,
                    rel,
                    r.paths
                        .get(i)
                        .copied()
                        .flatten()
                        .map_or(String::new(), DiskPath::saved_name),
                ]);
            }
        }
    }
    crate::report::cells::table(
        &[
            "part",
            "measure",
            "key",
            "block_size_bytes",
            "medium",
            "unit",
            "median",
            "min",
            "max",
            "runs",
            "ratio_to_reference",
            "relation",
            "path",
        ],
        rows,
    )
}
