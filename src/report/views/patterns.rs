//! `patterns`: one row per test with the headline (fsync included for writes), its spread,
//! the time without fsync, the fsync and close times and what iozone's default would have
//! said; where each random test's records fell; and in auto mode a table per test of
//! record size × file size, as iozone's `-a` prints. Two lines set the figures beside
//! iozone's: what the clock timed (the data was laid out before it), and how the read tests'
//! cache state compares with iozone's warm reads, chosen by the cache proof and the numbers.

use crate::measure::cache::CacheState;
use crate::measure::cache::Verdict;
use crate::report::cells::{mib, opt, pct, rate, rate_cell};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::latency;
use crate::report::page::{Section, grid};
use crate::report::svg::{Chart, Heat, Series};
use crate::report::text::{in_place, in_place_short, line};
use crate::report::view::Exportable;
use crate::results::patterns::{PatternResult, PatternsReport, Test};
use crate::units::{
    MIB, format_block_size, format_mib_per_s, format_seconds, format_size, group_thousands,
};
use crate::warning::Warning;
use crate::workload::plan::Coverage;
use crate::workload::study::Part;
use crate::workload::verify::InPlace;
use std::fmt::Write;

/// Renders a patterns result.
pub fn text(r: &PatternsReport) -> String {
    let mut out = String::new();
    let cache = match r.cache {
        CacheState::Cold => "read tests start cold (evicted before every run)",
        CacheState::Warm => "read tests start warm",
        CacheState::AsIs => "read tests start as the cache is",
    };
    let random = if r.draws {
        "random tests draw records with repeats".to_string()
    } else {
        "random tests touch every record once".to_string()
    };
    line(&mut out, "patterns", crate::text::printable(&r.path));
    line(
        &mut out,
        "setup",
        format!(
            "{} per test; {cache}; {random}; stride {} records; mixed reads {}%; seed {:#x}",
            crate::report::text::runs_asked(r.runs, r.until_stable),
            r.stride,
            r.read_percent,
            r.seed
        ),
    );
    line(&mut out, "timed", timed(r));
    if r.results.iter().any(|x| x.test == Test::Write) {
        line(
            &mut out,
            "repeats",
            "every write run starts from the file emptied (truncated to zero), so its blocks are allocated anew; rewrite runs overwrite the written file in place",
        );
    }
    if r.auto {
        auto(&mut out, r);
    } else {
        single(&mut out, r);
    }
    if let Some(sentence) = iozone_reads(r) {
        line(&mut out, "iozone", sentence);
    }
    fsync_line(&mut out, r);
    in_place_line(&mut out, r);
    out.push_str(&crate::report::caveats::text(&r.caveats));
    out
}

/// What the clock timed: the calls, with the written data laid out before it (or, for
/// results of versions that made it inside the timed calls, that).
fn timed(r: &PatternsReport) -> String {
    match r.data {
        Some(d) => format!(
            "write-type runs time their write()/pwrite() calls and the final fsync only: the data (a {} seeded block repeated, each {} stamped with a key of its offset) was laid out before the clock started ({} in {}) and each record's XOR follows from it, as iozone rewrites one buffer; reads time their calls and the XOR of what they read",
            format_size(d.block_bytes),
            format_size(d.stamp_every),
            format_size(d.bytes),
            format_seconds(d.seconds)
        ),
        None => "write-type runs made each block's data and its XOR between their calls, inside the timed region (this result predates data laid out before the clock), so their time includes what iozone's rewritten buffer does not; reads time their calls and the XOR of what they read".to_string(),
    }
}

/// How the read tests' cache state compares with iozone's, whose read tests read the file
/// it has just written from the page cache: told from the cache asked, the first cold
/// proof, and — when cold — the read against the warm reread by the one rule.
pub(crate) fn iozone_reads(r: &PatternsReport) -> Option<String> {
    use crate::measure::verdict::{Figure, Relation, relate};
    let reads: Vec<&PatternResult> = r.results.iter().filter(|x| !x.test.writes()).collect();
    if reads.is_empty() {
        return None;
    }
    const IOZONE: &str =
        "iozone's read tests read the file it has just written, from the page cache (warm)";
    Some(match r.cache {
        CacheState::Warm => format!("{IOZONE}; these started warm too."),
        CacheState::AsIs => format!(
            "{IOZONE}; these started as the cache was: --cache warm is the comparison with iozone."
        ),
        CacheState::Cold => {
            let proof = reads
                .iter()
                .filter_map(|x| x.cache())
                .find(|p| p.asked == CacheState::Cold);
            if proof.is_some_and(|p| p.verdict == Verdict::Contradicted) {
                return Some(format!(
                    "{IOZONE}; these were asked to start cold, but the file system kept the pages cached, so they ran warm as iozone's do."
                ));
            }
            let figure = |t: Test| {
                reads
                    .iter()
                    .find(|x| x.test == t)
                    .map(|x| Figure::from(&x.bytes_per_second))
            };
            let then = match (figure(Test::Read), figure(Test::Reread)) {
                (Some(read), Some(reread)) => {
                    // The read first: every sentence sets it against the reread.
                    let rates = format!(
                        "read {} against {}",
                        format_mib_per_s(read.median),
                        format_mib_per_s(reread.median)
                    );
                    match relate(read, reread) {
                        Relation::Below(x) => format!(
                            " Here the cold start costs: the warm reread ran at {:.1}x the read ({rates}).",
                            1.0 / x
                        ),
                        Relation::Same => format!(
                            " Here the cold start changed little: the read ran at the warm reread's rate (within 10%: {rates})."
                        ),
                        Relation::Above(x) => format!(
                            " The cold read was faster than the warm reread ({x:.2}x: {rates}), so the cold start is not what sets these figures apart from iozone's."
                        ),
                        Relation::Unclear(x) => format!(
                            " The cold read and the warm reread differ ({x:.2}x: {rates}) by less than their runs scatter, so what the cold start costs is not told."
                        ),
                    }
                }
                _ => String::new(),
            };
            format!(
                "{IOZONE}; these started cold (evicted before every run), so --cache warm is the comparison with iozone.{then}"
            )
        }
    })
}

/// The cache cell: what the first run's proof says.
fn cache_cell(result: &PatternResult) -> String {
    match result.cache() {
        None => "-".into(),
        Some(p) => {
            let resident = p
                .residency_before
                .map_or("?".to_string(), |r| format!("{:.0}%", 100.0 * r.fraction()));
            let verdict = match p.verdict {
                Verdict::Proven => "proven",
                Verdict::Unproven => "unproven",
                Verdict::Contradicted => "CONTRADICTED",
                Verdict::NotAsked => "as is",
                Verdict::Bypassed => "bypassed",
            };
            format!("{} {verdict} ({resident} cached)", p.asked.name())
        }
    }
}

fn check_cell(result: &PatternResult) -> &'static str {
    match (result.checks_ok, result.verified, result.in_place) {
        (false, _, _) => "MISMATCH",
        (true, _, Some(v)) if !v.ok() => "NOT IN PLACE",
        (true, Some(false), _) => "XOR WRONG",
        (true, _, Some(_)) => "ok, every byte in place",
        (true, Some(true), None) => "ok, XOR verified",
        (true, None, None) => "ok",
    }
}

/// The checks in place over every read-type run: what they found and cost beside the
/// time the runs measured.
fn in_place_line(out: &mut String, r: &PatternsReport) {
    let checked: Vec<_> = r.results.iter().filter_map(|x| x.in_place).collect();
    let Some(all) = InPlace::merged(&checked) else {
        return;
    };
    let measured: f64 = r
        .results
        .iter()
        .filter(|x| x.in_place.is_some())
        .flat_map(|x| &x.runs)
        .map(|run| run.sample.elapsed.seconds)
        .sum();
    let path = crate::text::printable(&r.path);
    line(out, "verify", in_place(&all, &path, measured));
}

fn single(out: &mut String, r: &PatternsReport) {
    let Some(first) = r.results.first() else {
        return;
    };
    line(
        out,
        "file",
        format!(
            "{} file in {} records of {} each",
            format_size(first.file_bytes),
            group_thousands(first.file_bytes.div_ceil(first.record.max(1))),
            format_size(first.record)
        ),
    );
    out.push_str(&columns::for_terminal(&patterns_columns(r), &r.results).text);
    let _ = writeln!(
        out,
        "MiB/s is the median over the runs; for write-type tests it includes the final fsync (the time column), as \"without fsync\" and iozone's default figure do not.\n"
    );
    for res in &r.results {
        if let Some(c) = &res.coverage {
            coverage(out, res.test, c);
        }
        if let Some(l) = &res.latency {
            let call = if res.runs.iter().any(|run| run.split.is_some()) {
                "read and write"
            } else if res.test.writes() {
                "write"
            } else {
                "read"
            };
            line(
                out,
                "latency",
                format!("{}: {}", res.test.name(), latency::line(l, call)),
            );
        }
        if let Some(split) = res.runs.last().and_then(|run| run.split) {
            let total = (split.reads + split.writes).max(1);
            let _ = writeln!(
                out,
                "{:<15} {} pread() and {} pwrite() calls in the last run: {:.0}% reads",
                "",
                group_thousands(split.reads),
                group_thousands(split.writes),
                100.0 * split.reads as f64 / total as f64
            );
        }
    }
}

/// Where a test's records fell: counts per bucket as a row of marks, and whether every
/// record came exactly once.
fn coverage(out: &mut String, test: Test, c: &Coverage) {
    const MARKS: &[u8] = b" .:-=+*#";
    let max = c.buckets.iter().copied().max().unwrap_or(0).max(1);
    let min = c.buckets.iter().copied().min().unwrap_or(0);
    let marks: String = c
        .buckets
        .iter()
        .map(|&n| {
            let i = if n == 0 {
                0
            } else {
                1 + ((n * (MARKS.len() as u64 - 2)) / max) as usize
            };
            MARKS[i.min(MARKS.len() - 1)] as char
        })
        .collect();
    let once = if c.every_once() {
        "every record exactly once".to_string()
    } else {
        format!(
            "{} of {} records touched",
            group_thousands(c.distinct),
            group_thousands(c.pieces)
        )
    };
    let _ = writeln!(
        out,
        "{:<15} offsets [{marks}] {} buckets of {}: {}..{} calls each; {once}",
        test.name(),
        c.buckets.len(),
        format_size(c.bucket_bytes),
        min,
        max,
    );
}

/// Auto mode: per test, MiB/s by file size (rows) and record size (columns).
fn auto(out: &mut String, r: &PatternsReport) {
    let mut tests: Vec<Test> = Vec::new();
    for res in &r.results {
        if !tests.contains(&res.test) {
            tests.push(res.test);
        }
    }
    for test in tests {
        let _ = writeln!(
            out,
            "\n{}{} — MiB/s, file size down, record size across",
            test.name(),
            if test.writes() {
                " (fsync included)"
            } else {
                ""
            }
        );
        out.push_str(&columns::for_terminal(&pivot_columns(r, test), &r.sizes).text);
    }
}

/// Auto mode's table of one test: a row per file size, a column per record size, each
/// cell the median MiB/s (empty where the pair was not run). The file size names the row;
/// the largest records go first when the text does not fit.
fn pivot_columns(r: &PatternsReport, test: Test) -> Vec<Column<'_, u64>> {
    let mut columns = vec![Column::new("file", "", 0, |size: &u64| format_size(*size))];
    columns.extend(r.records.iter().enumerate().map(|(i, &record)| {
        // The smallest records first; of the rest, those further right go sooner.
        let priority = u8::try_from(i.min(usize::from(u8::MAX))).unwrap_or(u8::MAX);
        Column::new(
            format_block_size(record),
            "",
            priority,
            move |&size: &u64| {
                r.results
                    .iter()
                    .find(|x| x.test == test && x.file_bytes == size && x.record == record)
                    .map_or(String::new(), |x| {
                        format!("{:.0}", x.bytes_per_second.median / MIB as f64)
                    })
            },
        )
    }));
    columns
}

/// The one table of `patterns`: a row per test, for the text and the CSV (and so Markdown,
/// which humanizes the CSV: see [`PatternsReport::markdown`]). The median MiB/s and the
/// checks are the answer; the times, iozone's figure and the cache proof go first, lowest
/// priority first, when the text does not fit.
fn patterns_columns(r: &PatternsReport) -> Vec<Column<'_, PatternResult>> {
    let median_seconds =
        |x: &PatternResult| x.file_bytes as f64 / x.bytes_per_second.median.max(1e-9);
    let mut columns = vec![
        Column::new("test", "", 0, |x: &PatternResult| x.test.name().to_string())
            .left()
            .csv("test", |x: &PatternResult| x.test.name().to_string()),
        Column::raw("file_bytes", |x: &PatternResult| x.file_bytes.to_string()),
        Column::raw("record", |x: &PatternResult| x.record.to_string()),
        Column::raw("runs", |x: &PatternResult| x.runs.len().to_string()),
        Column::new("MiB/s", "", 0, |x: &PatternResult| {
            rate(x.bytes_per_second.median)
        })
        .csv("bytes_per_second_median", |x: &PatternResult| {
            x.bytes_per_second.median.to_string()
        }),
        // A test run once has no range: it says so rather than `x..x`.
        Column::new("min..max", "", 2, |x: &PatternResult| {
            if x.bytes_per_second.n <= 1 {
                return "n=1".to_string();
            }
            format!(
                "{}..{}",
                rate(x.bytes_per_second.min),
                rate(x.bytes_per_second.max)
            )
        })
        .csv("bytes_per_second_min", |x: &PatternResult| {
            x.bytes_per_second.min.to_string()
        }),
        Column::raw("bytes_per_second_max", |x: &PatternResult| {
            x.bytes_per_second.max.to_string()
        }),
        Column::new("time", "", 5, move |x: &PatternResult| {
            format_seconds(median_seconds(x))
        }),
        Column::new("without fsync", "", 6, |x: &PatternResult| {
            x.without_fsync.map_or("-".into(), |w| {
                format_seconds(x.file_bytes as f64 / w.median.max(1e-9))
            })
        }),
        Column::new("iozone says", "", 4, |x: &PatternResult| {
            x.without_fsync
                .map_or("-".into(), |s| format!("{} MiB/s", rate(s.median)))
        })
        .csv("without_fsync_bytes_per_second", |x: &PatternResult| {
            opt(x.without_fsync.map(|s| s.median))
        }),
        Column::new("fsync", "", 5, |x: &PatternResult| {
            x.fsync_seconds.map_or("-".into(), format_seconds)
        })
        .csv("fsync_seconds", |x: &PatternResult| opt(x.fsync_seconds)),
        Column::new("close", "", 7, |x: &PatternResult| {
            x.close_seconds.map_or("-".into(), format_seconds)
        })
        .csv("close_seconds", |x: &PatternResult| opt(x.close_seconds)),
        Column::new("calls/s", "", 6, |x: &PatternResult| {
            format!("{:.0}", x.calls_per_second)
        })
        .csv("calls_per_second", |x: &PatternResult| {
            x.calls_per_second.to_string()
        }),
        Column::new("cache", "", 3, cache_cell)
            .words()
            .csv("cache", |x: &PatternResult| {
                opt(x.cache().map(|p| p.asked.name()))
            }),
        Column::raw("cache_verdict", |x: &PatternResult| {
            opt(x.cache().map(|p| format!("{:?}", p.verdict).to_lowercase()))
        }),
        Column::raw("records_touched", |x: &PatternResult| {
            opt(x.coverage.as_ref().map(|c| c.distinct))
        }),
        Column::raw("records", |x: &PatternResult| {
            opt(x.coverage.as_ref().map(|c| c.pieces))
        }),
        Column::raw("verified", |x: &PatternResult| opt(x.verified)),
        Column::raw("in_place", |x: &PatternResult| {
            x.in_place.map(|v| in_place_short(&v)).unwrap_or_default()
        }),
        Column::raw("verify_seconds", |x: &PatternResult| {
            opt(x.in_place.map(|v| v.seconds))
        }),
        Column::new("checks", "", 1, |x: &PatternResult| {
            check_cell(x).to_string()
        })
        .words()
        .csv("checks_ok", |x: &PatternResult| x.checks_ok.to_string()),
    ];
    // Latency columns only where a result has one, so older results keep their table.
    if r.results.iter().any(|x| x.latency.is_some()) {
        for (i, key) in latency::COLUMNS.into_iter().enumerate() {
            columns.push(Column::raw(key, move |x: &PatternResult| {
                latency::cells(x.latency.as_ref())[i].clone()
            }));
        }
    }
    columns
}

/// The write-type result where leaving fsync out flatters most.
fn fsync_line(out: &mut String, r: &PatternsReport) {
    let worst = r
        .results
        .iter()
        .filter_map(|x| {
            x.without_fsync
                .map(|w| (x, w.median / x.bytes_per_second.median))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    if let Some((x, ratio)) = worst {
        line(
            out,
            "fsync",
            format!(
                "leaving fsync out, as iozone does by default, would report {} with records of {} on {} as {} MiB/s instead of {} ({:.2}x)",
                x.test.name(),
                format_size(x.record),
                format_size(x.file_bytes),
                rate(x.bytes_per_second.median * ratio),
                rate(x.bytes_per_second.median),
                ratio
            ),
        );
    }
    let bad: Vec<String> = r
        .results
        .iter()
        .filter(|x| {
            !x.checks_ok || x.verified == Some(false) || x.in_place.is_some_and(|v| !v.ok())
        })
        .map(|x| {
            format!(
                "{} with records of {}",
                x.test.name(),
                format_size(x.record)
            )
        })
        .collect();
    if !bad.is_empty() {
        line(out, "checks", format!("FAILED: {}", bad.join(", ")));
    }
}

impl Exportable for PatternsReport {
    const COMMAND: &'static str = "patterns";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    /// The table, then what was timed and how the reads stand to iozone's.
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{escape, humanize, table};
        let mut blocks = vec![table(&humanize(&self.table()), None)];
        blocks.push(format!("{}\n", escape(&format!("Timed: {}.", timed(self)))));
        if let Some(sentence) = iozone_reads(self) {
            blocks.push(format!("{}\n", escape(&sentence)));
        }
        blocks
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
    fn caveats(&self) -> &[crate::measure::caveat::Caveat] {
        &self.caveats
    }
    fn table(&self) -> Table {
        columns::csv(&patterns_columns(self), &self.results)
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
                name: "without fsync (iozone's default)".into(),
                points: without,
            });
        }
        let spreads = vec![crate::report::svg::Spread {
            series: "headline (writes: fsync included)".into(),
            points: self
                .results
                .iter()
                .enumerate()
                .filter(|(_, r)| r.bytes_per_second.n > 1)
                .map(|(i, r)| {
                    (
                        i as f64,
                        mib(r.bytes_per_second.min),
                        mib(r.bytes_per_second.max),
                    )
                })
                .collect(),
        }];
        let first = self.results.first();
        Some(Chart {
            spreads,
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

/// The sentences of the patterns section, each chosen by the one rule of
/// [`crate::measure::verdict`]: the usual story (random slower than sequential, rewrite faster than
/// write, reread faster than read) only where the numbers show it; the same, the opposite
/// or "they scatter more than they differ" otherwise.
fn patterns_sentences(
    p: &crate::results::patterns::PatternsReport,
    has_device: bool,
) -> Vec<String> {
    use crate::measure::verdict::{Figure, Relation, relate};
    let figure = |name: &str| {
        p.results
            .iter()
            .find(|r| r.test.name() == name)
            .map(|r| Figure::from(&r.bytes_per_second))
    };
    let mut why = Vec::new();
    let rates = |a: Figure, b: Figure| {
        format!(
            "{} against {}",
            format_mib_per_s(a.median),
            format_mib_per_s(b.median)
        )
    };
    let scatter = |what: &str, x: f64, a: Figure, b: Figure| {
        format!(
            "{what} differ ({x:.2}x: {}) by less than their runs scatter, so no direction is claimed.",
            rates(a, b)
        )
    };
    if let (Some(seq), Some(random)) = (figure("read"), figure("random read")) {
        let cold = p.cache == CacheState::Cold;
        why.push(match relate(random, seq) {
            Relation::Below(x) => format!(
                "Random reads of 64 KiB records reach {:.0}% of sequential reads ({}): out of order, read-ahead cannot predict the next record{}.",
                100.0 * x,
                rates(random, seq),
                if cold && has_device {
                    ", and every record waits for the device"
                } else {
                    ""
                }
            ),
            Relation::Same => format!(
                "Random reads of 64 KiB records run at the sequential rate (within 10%: {}): {}",
                rates(random, seq),
                if cold {
                    "read-ahead is not what limits these reads."
                } else {
                    "from the page cache the order of the records does not matter."
                }
            ),
            Relation::Above(x) => format!(
                "Random reads are faster than sequential ones ({x:.2}x: {}), against the usual story that read-ahead favours order; the two tests ran one after the other, so what changed between them (load, what the cache held) is the first suspect.",
                rates(random, seq)
            ),
            Relation::Unclear(x) => scatter("Random and sequential reads", x, random, seq),
        });
    }
    if let (Some(w), Some(rw)) = (figure("write"), figure("rewrite")) {
        why.push(match relate(rw, w) {
            Relation::Above(x) => format!(
                "Rewriting an existing file runs at {x:.2}x the first write ({}): the blocks are already allocated, so only data moves.",
                rates(rw, w)
            ),
            Relation::Same => format!(
                "Rewriting an existing file runs at the first write's rate (within 10%: {}): allocating its blocks is not what costs here.",
                rates(rw, w)
            ),
            Relation::Below(x) => format!(
                "Rewriting an existing file is slower than the first write ({x:.2}x: {}), although its blocks are already allocated: allocation is not what costs here, and what slowed the rewrite (both include their fsync) is not among what was measured.",
                rates(rw, w)
            ),
            Relation::Unclear(x) => scatter("Rewrite and write", x, rw, w),
        });
    }
    if let (Some(read), Some(reread)) = (figure("read"), figure("reread")) {
        why.push(match relate(reread, read) {
            Relation::Above(x) => format!(
                "The reread comes from the page cache the read filled: {x:.1}x the read ({}).",
                rates(reread, read)
            ),
            Relation::Same => format!(
                "The reread runs at the read's rate (within 10%: {}): the read was already served from memory, or the medium is as fast as the page cache.",
                rates(reread, read)
            ),
            Relation::Below(x) => format!(
                "The reread is slower than the read ({x:.2}x: {}) although the read filled the page cache: the cache did not keep the file, or load slowed the reread.",
                rates(reread, read)
            ),
            Relation::Unclear(x) => scatter("Reread and read", x, reread, read),
        });
    }
    why
}

/// Share of the fsync in each write run, below which it is "a small part", and above which
/// it is "where the time goes" (between the two, neither story is told).
const FSYNC_SMALL: f64 = 0.10;
const FSYNC_LARGE: f64 = 0.30;

/// What the fsync's share of the write runs says, chosen by the share and by whether a
/// block device is under the file system (on tmpfs the fsync has nothing to write).
pub(crate) fn fsync_share_sentence(
    sh: &crate::measure::stats::Summary,
    has_device: bool,
) -> String {
    let share = format!(
        "The final fsync takes {} of each run's time (median; {}–{})",
        pct(sh.median),
        pct(sh.min),
        pct(sh.max)
    );
    if !has_device {
        format!(
            "{share}: no block device is under this file system, so the fsync has nothing to write back and every figure is the page cache's rate."
        )
    } else if sh.median >= FSYNC_LARGE {
        format!(
            "{share}: write() only fills the page cache, and the device's own rate shows in the fsync. Tools that leave it out report the page cache's speed."
        )
    } else if sh.median < FSYNC_SMALL {
        format!(
            "{share}: little was left to write back when it was called (the kernel wrote the data during the run, or the device takes it as fast as memory), so leaving it out would change these figures little."
        )
    } else {
        format!(
            "{share}: part of the time is the device's write-back, part the copy into the page cache."
        )
    }
}

/// The study's patterns section; `has_device`: a block device is under the file system.
pub(crate) fn section(
    p: &crate::results::patterns::PatternsReport,
    has_device: bool,
    part: Part,
) -> Section {
    let rows = p
        .results
        .iter()
        .map(|r| {
            vec![
                r.test.name().to_string(),
                format_block_size(r.record),
                rate_cell(&r.bytes_per_second),
                r.without_fsync
                    .map_or("-".into(), |s| format!("{:.1}", mib(s.median))),
                r.fsync_seconds.map_or("-".into(), format_seconds),
                group_thousands(r.calls_per_second as u64),
                match (r.in_place, r.verified) {
                    (Some(v), _) if !v.ok() => "NOT IN PLACE",
                    (Some(_), Some(false)) => "XOR NO",
                    (Some(_), _) => "in place",
                    (None, Some(true)) => "XOR",
                    (None, Some(false)) => "XOR NO",
                    (None, None) => "-",
                }
                .to_string(),
            ]
        })
        .collect();
    let mut why = patterns_sentences(p, has_device);
    // The same sentence `patterns` prints: iozone's reads are warm, these as the cache was.
    why.extend(iozone_reads(p));
    Section {
        part,
        status: None,
        how: format!(
            "iozone's tests on a {} file with 64 KiB records, {} run(s) each; reads start {} (reread follows read, warm); every write ends with fsync, shown and included; {}",
            format_size(p.sizes.first().copied().unwrap_or(0)),
            p.runs,
            p.cache.name(),
            if p.results.iter().any(|r| r.in_place.is_some()) {
                "after each read's timing, every byte of the range it read is compared with the byte written at its offset (verified in place)."
            } else {
                "each read that covers the file once has its XOR compared with that of the bytes written (this result predates the check in place)."
            }
        ),
        grid: grid(
            &[
                "test",
                "record",
                "MiB/s (min–max)",
                "MiB/s without fsync",
                "fsync",
                "calls/s",
                "verified",
            ],
            rows,
        ),
        chart: p.chart(),
        why,
        warnings: Vec::new(),
    }
}
