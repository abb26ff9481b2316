//! `disk`: the panel as a table (MB/s, MiB/s, IOPS, latency percentiles, the queue the app
//! kept), the device's own view beside it (requests, size, await, aqu-sz, utilisation,
//! merges), and per row one sentence that sets the queue asked against the app's and the
//! device's, chosen by the numbers through [`crate::measure::verdict`].

use crate::measure::devstats::DeviceView;
use crate::measure::verdict::{Figure, Relation, relate, same};
use crate::report::cells::{opt, spread_mark, us};
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::svg::{Chart, Series};
use crate::report::text::{in_place_short, line};
use crate::report::view::Exportable;
use crate::results::disk::{DiskReport, DiskRow, VERIFY_EVERY};
use crate::units::{MIB, format_seconds, format_size, group_thousands};
use crate::warning::Warning;
use crate::workload::Op;

/// Megabytes (10^6) per second, as the panels print them.
pub(crate) const MB: f64 = 1e6;

/// The queue a row asked for: depth × threads.
fn asked(r: &DiskRow) -> f64 {
    (r.spec.depth * r.spec.threads.max(1)) as f64
}

/// The sentence that reconciles the queue asked, the app's and the device's for one row.
pub fn queue_sentence(r: &DiskRow) -> String {
    let asked = asked(r);
    let app = r.mean_in_flight;
    let threads = r.spec.threads.max(1);
    let kept = if same(app, asked) {
        format!("asked {asked:.0} in flight, the app kept {app:.1}")
    } else if let Some(cores) = r.cores.filter(|&c| threads > c) {
        format!(
            "asked {asked:.0} in flight, the app kept only {app:.1}: its {threads} threads took turns on the {cores} core(s), each waiting for a CPU between its I/Os"
        )
    } else {
        format!(
            "asked {asked:.0} in flight, the app kept only {app:.1}: it refilled its queue slower than I/Os completed"
        )
    };
    let Some(d) = &r.device else {
        return format!(
            "{kept}; no block device behind the file (tmpfs, overlay or a network file system): the device's side is unknown"
        );
    };
    if d.requests() == 0 {
        return format!(
            "{kept}; the device completed no request: the I/O never reached it (served from the page cache)"
        );
    }
    let split = d.request_bytes > 0.0
        && !same(d.request_bytes, r.spec.mean_block())
        && d.request_bytes < r.spec.mean_block();
    let size = format!(
        "requests of {} on average against {} asked",
        format_size(d.request_bytes.round() as u64),
        if r.spec.split.is_some() {
            format!(
                "a mean of {}",
                format_size(r.spec.mean_block().round() as u64)
            )
        } else {
            format_size(r.spec.block)
        }
    );
    let seen = match relate(Figure::one(d.queue), Figure::one(app)) {
        Relation::Same => format!("the device saw {:.1} in its queue: the same", d.queue),
        Relation::Below(_) | Relation::Unclear(_) if d.queue < app => format!(
            "the device saw only {:.1} in its queue: the rest waited above it (block layer, scheduler) or never reached it",
            d.queue
        ),
        _ if split => format!(
            "the device saw {:.1} in its queue, more than the app had in flight: its I/Os were split ({size})",
            d.queue
        ),
        _ => format!(
            "the device saw {:.1} in its queue, more than the app had in flight: others used it meanwhile (the counters are everybody's)",
            d.queue
        ),
    };
    format!("{kept}; {seen}")
}

/// How a row moved its bytes, in a few words.
fn how(r: &DiskRow) -> &'static str {
    use crate::results::disk::Path;
    match r.path {
        Path::UringDirect => "io_uring, O_DIRECT",
        Path::UringBuffered => "io_uring, buffered",
        Path::SyncDirect => "pread/pwrite, O_DIRECT",
        Path::SyncBuffered => "pread/pwrite, buffered",
    }
}

/// [`origin`] of a disk command's file: a scratch file kept (`--keep`) is the user's now,
/// where the file line says.
pub(crate) fn origin_of(
    header: &crate::results::disk::FileHeader,
    fill_seconds: Option<f64>,
    yours: &str,
) -> String {
    let origin = origin(header.scratch, header.seed, fill_seconds, yours);
    if header.kept {
        origin.replacen("scratch, ", "kept (--keep): ", 1)
    } else {
        origin
    }
}

/// Where a disk result's test file came from: the scratch file written whole with its seed,
/// or `yours` (the user's file).
pub(crate) fn origin(scratch: bool, seed: Option<u64>, fill: Option<f64>, yours: &str) -> String {
    match (scratch, seed, fill) {
        (true, Some(seed), Some(s)) => format!(
            "scratch, written whole first with seed {seed} in {}",
            format_seconds(s)
        ),
        _ => yours.to_string(),
    }
}

/// What a disk chart's title names: the user's file, or for a scratch file (whose name is
/// gone once the run ends) the device it was on.
pub(crate) fn chart_subject(scratch: bool, file: &str, device: Option<&str>) -> String {
    match (scratch, device) {
        (false, _) => crate::text::printable(file),
        (true, Some(d)) => format!("a scratch file on {d}"),
        (true, None) => "a scratch file with no block device under it".to_string(),
    }
}

/// Bars of MB/s, a group per row, read beside write (the study's chart and `disk --svg`'s).
pub(crate) fn chart(r: &DiskReport) -> Option<Chart> {
    let mut names: Vec<String> = Vec::new();
    for row in r.rows.iter().filter(|x| x.skipped.is_none()) {
        if !names.contains(&row.name) {
            names.push(row.name.clone());
        }
    }
    let series: Vec<Series> = [Op::Read, Op::Write]
        .into_iter()
        .filter_map(|op| {
            let points: Vec<(f64, f64)> = names
                .iter()
                .enumerate()
                .filter_map(|(i, n)| r.row(n, op).map(|x| (i as f64, x.bytes_per_second / MB)))
                .collect();
            (!points.is_empty()).then(|| Series {
                name: op.name().to_string(),
                points,
            })
        })
        .collect();
    if series.is_empty() {
        return None;
    }
    Some(Chart {
        title: format!(
            "The disk panel on {} ({} per row)",
            chart_subject(
                r.header.scratch && !r.header.kept,
                &r.header.file,
                r.header.device_name.as_deref()
            ),
            format_seconds(r.header.runtime_seconds)
        ),
        x_label: "row".into(),
        y_label: "MB/s".into(),
        categories: names,
        series,
        ..Chart::default()
    })
}

/// The `file` and `device` lines every disk result (panel, depth curve) opens with.
pub(crate) fn file_lines(
    out: &mut String,
    file: &str,
    bytes: u64,
    origin: &str,
    device: Option<&str>,
) {
    line(
        out,
        "file",
        format!(
            "{} ({}, {origin})",
            crate::text::printable(file),
            format_size(bytes)
        ),
    );
    line(
        out,
        "device",
        device.unwrap_or("none (no block device behind the file)"),
    );
}

/// What a `--best` panel's figures are, in the text's rows line.
const BEST_OF_RUNS: &str = "best of them (the fastest run, CrystalDiskMark's figure; the median is the one to compare) ±the farthest run from it";

/// The same, as the caption of a `--best` panel's Markdown table.
const BEST_OF: &str = "each figure is the best of its runs (the fastest run, CrystalDiskMark's figure; the median is the one to compare), ±the farthest run from it";

/// The open-loop row after the panel (the study's), in one sentence: its rate against the
/// peak it is a share of, whether it was held, and its response p99 against one read at a
/// time in a closed loop (RND4K Q1T1 read) — what a device loaded as a service is, against
/// what a benchmark's queue depth 1 says.
pub fn open_loop_sentence(r: &DiskReport) -> Option<String> {
    let row = r.open_loop.as_ref()?;
    let o = row.open.as_ref()?;
    let share = r.peak().map_or(String::new(), |p| {
        format!(
            " ({:.0}% of {} read's {})",
            100.0 * o.asked_iops / p.iops.max(1e-9),
            p.name,
            crate::units::format_rate_iops(p.iops)
        )
    });
    let held = if o.held() {
        String::new()
    } else {
        format!(
            ", not held: {} completed",
            crate::units::format_rate_iops(o.achieved_iops)
        )
    };
    let mut s = format!(
        "{} {} read arrivals a second{share}, Poisson{held}: response p99 {}",
        group_thousands(o.asked_iops.round() as u64),
        crate::workload::panel::short_size(row.spec.block),
        crate::report::cells::time(o.response_us.p99)
    );
    if let Some(one) = r
        .row("RND4K Q1T1", Op::Read)
        .filter(|_| row.spec.block == 4096)
    {
        let ratio = o.response_us.p99 / one.latency_us.p99.max(1e-9);
        s.push_str(&format!(
            " against {} for one read at a time (RND4K Q1T1, closed loop){}",
            crate::report::cells::time(one.latency_us.p99),
            if ratio >= 1.1 {
                format!(": {ratio:.1}× what queue depth 1 says")
            } else if ratio <= 0.9 {
                format!(": {:.1}× lower than queue depth 1 says", 1.0 / ratio)
            } else {
                ": what queue depth 1 says".to_string()
            }
        ));
    }
    Some(s)
}

/// Renders `disk`: where and how it ran, then its answer last, the 4×2 grid engineers know
/// from CrystalDiskMark (each row's read and write side by side: MB/s, IOPS, p99). With
/// `verbose` also the device's view and a sentence per row on its queue, and the full
/// table (MiB/s, every percentile, the queue kept) in place of the grid.
pub fn text(r: &DiskReport, verbose: bool) -> String {
    let mut out = String::new();
    let wrote = r
        .rows
        .iter()
        .any(|x| x.spec.op == Op::Write && x.measured());
    let yours = if wrote {
        "your file: its blocks overwritten by the write rows (--force-write)"
    } else {
        "your file, read as it is"
    };
    let origin = origin_of(&r.header, r.fill_seconds, yours);
    file_lines(
        &mut out,
        &r.header.file,
        r.header.file_bytes,
        &origin,
        r.header.device_name.as_deref(),
    );
    let more = if verbose {
        ""
    } else {
        "; --verbose: every percentile, the device's view, the queues"
    };
    let each = crate::report::text::runs_each(r.rows.iter().map(DiskRow::n), "runs");
    let runs = match each {
        Some(each) => {
            // `--best`: CrystalDiskMark's figure, said where the median would be.
            let figure = if r.rows.iter().any(|x| x.best_of) {
                BEST_OF_RUNS
            } else {
                "median ±its farthest run"
            };
            format!(
                "{} per run, {each}, {figure}{}",
                format_seconds(r.header.runtime_seconds),
                if verbose {
                    " (their range beside it)".to_string()
                } else {
                    widest_spread(&r.rows)
                }
            )
        }
        None => format!("{} each", format_seconds(r.header.runtime_seconds)),
    };
    let runs = if r.ramp_seconds > 0.0 {
        format!(
            "{runs}, after a ramp of {} run but not counted",
            format_seconds(r.ramp_seconds)
        )
    } else {
        runs
    };
    line(
        &mut out,
        "rows",
        format!(
            "{runs}; latency of every completed I/O, submitted to reaped (fio's lat), in µs; MB/s: 10^6 bytes/s{more}",
        ),
    );
    for n in &r.notes {
        line(&mut out, "note", super::disk_presets::note(n));
    }
    if verbose {
        if r.rows.iter().any(|row| row.device.is_some()) {
            let seen: Vec<&DiskRow> = r.rows.iter().filter(|x| x.device.is_some()).collect();
            out.push_str(&format!(
                "device's view (/proc/diskstats of {}, all processes):\n{}",
                r.header.device_name.as_deref().unwrap_or("?"),
                columns::for_terminal(&device_view(), &seen).text
            ));
        }
        for row in r.rows.iter().filter(|row| row.skipped.is_none()) {
            line(
                &mut out,
                "queue",
                format!("{}: {}", row.label(), queue_sentence(row)),
            );
        }
    }
    for row in &r.rows {
        let Some(o) = &row.over_time else { continue };
        for (key, value) in super::over_time::text_lines(o) {
            line(&mut out, key, format!("{}: {value}", row.label()));
        }
    }
    for row in &r.rows {
        if let Some(why) = &row.fallback {
            line(&mut out, "fallback", format!("{}: {why}", row.label()));
        }
        if let Some(why) = row.skipped.as_ref().filter(|_| !verbose) {
            line(&mut out, "skipped", format!("{}: {why}", row.label()));
        }
    }
    for row in r.rows.iter().filter(|x| x.measured() && x.cpu_bound()) {
        line(
            &mut out,
            "cpu",
            format!("{}: {}", row.label(), cpu_sentence(row)),
        );
    }
    for row in r.rows.iter().filter(|x| x.measured()) {
        if let Some(said) = skew_sentence(row) {
            line(&mut out, "skew", format!("{}: {said}", row.label()));
        }
        if let Some(said) = sizes_sentence(row) {
            line(&mut out, "sizes", format!("{}: {said}", row.label()));
        }
    }
    let mixes = super::disk_mix::mixes(&r.rows);
    for m in &mixes {
        line(&mut out, "mix", super::disk_mix::sentence(m));
    }
    if let Some(said) = open_loop_sentence(r) {
        line(&mut out, "open loop", said);
    }
    line(&mut out, "verify", verify_line(r));
    out.push_str(&crate::report::caveats::text(&r.caveats));
    if verbose {
        out.push_str(&columns::for_terminal(&panel(&r.rows), &r.rows).text);
    } else {
        let pairs = pairs(&r.rows);
        if !pairs.is_empty() {
            out.push_str(&columns::for_terminal(&grid(&pairs), &pairs).text);
        }
    }
    // The mixes last: what a `--rw randrw` run was for.
    if !mixes.is_empty() {
        out.push_str(&columns::for_terminal(&super::disk_mix::table(), &mixes).text);
    }
    out
}

/// A row of mixed sizes' sentence: the share of its I/Os each size had against the share
/// asked, and where its bytes went (`None` for a row of one size).
pub(crate) fn sizes_sentence(row: &DiskRow) -> Option<String> {
    let sizes = row.sizes.as_ref()?;
    let ios: u64 = sizes.iter().map(|s| s.ios).sum();
    let bytes: u64 = sizes.iter().map(|s| s.ios * s.bytes).sum();
    if ios == 0 {
        return None;
    }
    let each: Vec<String> = sizes
        .iter()
        .map(|s| {
            format!(
                "{} {:.1}% ({}% asked)",
                format_size(s.bytes),
                100.0 * s.ios as f64 / ios as f64,
                s.percent
            )
        })
        .collect();
    let heaviest = sizes
        .iter()
        .max_by_key(|s| s.ios * s.bytes)
        .expect("a split has a size");
    Some(format!(
        "{} of its I/Os; {} I/Os moved {:.0}% of its bytes",
        each.join(", "),
        format_size(heaviest.bytes),
        100.0 * (heaviest.ios * heaviest.bytes) as f64 / bytes.max(1) as f64
    ))
}

/// A skewed row's sentence: the share of its I/Os on the hottest 10% of its blocks beside
/// the distribution's, and why the measured one may read low (`None` for a uniform row).
pub(crate) fn skew_sentence(row: &DiskRow) -> Option<String> {
    let h = row.hot?;
    let dist = row.spec.dist?;
    let of = if h.blocks_per_bucket > 1 {
        format!(
            "the hottest 10% of its blocks, counted in buckets of {} neighbouring blocks",
            h.blocks_per_bucket
        )
    } else {
        "the hottest 10% of its blocks".to_string()
    };
    let points = 100.0 * (h.measured - h.theory);
    let agree = if points.abs() <= 2.0 {
        "as the distribution says".to_string()
    } else {
        format!(
            "{:.1} points {}",
            points.abs(),
            if points < 0.0 { "fewer" } else { "more" }
        )
    };
    let per_block = h.counted as f64 / h.blocks.max(1) as f64;
    let mut out = format!(
        "{:.1}% of its I/Os went to {of}; {dist} puts {:.1}% there: {agree}",
        100.0 * h.measured,
        100.0 * h.theory
    );
    if points < -2.0 && (per_block < 10.0 || h.blocks_per_bucket > 1) {
        out.push_str(&format!(
            " (expected low here: {}, and the hot set is chosen on half of the I/Os and measured on the other half)",
            if h.blocks_per_bucket > 1 {
                "hot blocks are scattered, so a bucket holds cold ones too".to_string()
            } else {
                format!("{per_block:.1} I/Os per block")
            }
        ));
    }
    Some(out)
}

/// A CPU-bound row's sentence: how busy its threads kept their cores, what an I/O cost
/// them, and that the figure is then the CPU's.
fn cpu_sentence(row: &DiskRow) -> String {
    let share = row.core_share().unwrap_or(0.0);
    let (user, system) = row.cpu_us_per_io().unwrap_or((0.0, 0.0));
    let threads = row.spec.threads.max(1);
    let cores = row.cores.unwrap_or(threads).min(threads);
    let whose = if threads == 1 {
        "its thread kept its core".to_string()
    } else if cores < threads {
        format!("its {threads} threads kept the {cores} cores they shared")
    } else {
        format!("its {threads} threads kept their cores")
    };
    format!(
        "{whose} {:.0}% busy ({user:.1} µs user + {system:.1} µs system per I/O): CPU-bound, so its rate is what the CPU could issue, a floor for the device's",
        100.0 * share.min(1.0)
    )
}

/// How far apart the runs of the most scattered row are, for the grid's `rows` line
/// (" (runs up to 34% apart: SEQ1M Q8T1 read, 1165.3–1568.1 MB/s)"); empty when no row
/// was repeated.
fn widest_spread(rows: &[DiskRow]) -> String {
    let widest = rows
        .iter()
        .filter(|r| r.measured() && r.n() > 1)
        .map(|r| (r, r.rate()))
        .filter(|(_, f)| f.min > 0.0)
        .max_by(|(_, a), (_, b)| (a.max / a.min).total_cmp(&(b.max / b.min)));
    match widest {
        Some((row, f)) => format!(
            " (runs up to {} apart: {}, {:.1}–{:.1} MB/s)",
            crate::report::text::apart(f.max / f.min),
            row.label(),
            f.min / MB,
            f.max / MB
        ),
        None => String::new(),
    }
}

/// One line of the grid: a row of the panel with its read and its write.
struct Pair<'a> {
    name: &'a str,
    read: Option<&'a DiskRow>,
    write: Option<&'a DiskRow>,
}

/// The panel's rows paired by name, in the order first run.
fn pairs(rows: &[DiskRow]) -> Vec<Pair<'_>> {
    let mut out: Vec<Pair<'_>> = Vec::new();
    // A mix has a table of its own (`disk_mix`), beside its pure rows.
    for row in rows.iter().filter(|r| r.spec.mix.is_none()) {
        let k = match out.iter().position(|p| p.name == row.name) {
            Some(k) => k,
            None => {
                out.push(Pair {
                    name: &row.name,
                    read: None,
                    write: None,
                });
                out.len() - 1
            }
        };
        match row.spec.op {
            Op::Read => out[k].read = Some(row),
            Op::Write => out[k].write = Some(row),
        }
    }
    out
}

/// The grid's columns: the row, then for each direction some row took its MB/s, IOPS and
/// p99 (a skipped row says so in its MB/s cell; its reason is a line above).
fn grid<'a>(pairs: &[Pair<'a>]) -> Vec<Column<'a, Pair<'a>>> {
    type Side<'a> = fn(&Pair<'a>) -> Option<&'a DiskRow>;
    fn cell<'a>(side: Side<'a>, p: &Pair<'a>, f: impl FnOnce(&DiskRow) -> String) -> String {
        match side(p) {
            None => String::new(),
            Some(r) if r.skipped.is_some() => String::new(),
            Some(r) => f(r),
        }
    }
    let repeated = pairs
        .iter()
        .flat_map(|p| [p.read, p.write])
        .flatten()
        .any(|r| r.n() > 1);
    let mut cols = vec![Column::new("row", "", 0, |p: &Pair<'a>| p.name.to_string()).left()];
    let sides: [(Side<'a>, [&'static str; 3]); 2] = [
        (|p| p.read, ["read MB/s", "read IOPS", "read p99"]),
        (|p| p.write, ["write MB/s", "write IOPS", "write p99"]),
    ];
    for (side, [rate, iops, p99]) in sides {
        if pairs.iter().all(|p| side(p).is_none()) {
            continue;
        }
        // With repeated rows, each rate carries how far its farthest run lies (`±7%`, the
        // IOPS' alike: the same runs of one block size) or `n=1`: the grid has no room for
        // a range column at 80 columns.
        cols.push(Column::new(rate, "", 0, move |p: &Pair<'a>| {
            match side(p) {
                Some(r) if r.skipped.is_some() => "skipped".to_string(),
                _ => cell(side, p, |r| {
                    let mark = spread_mark(r.rate(), repeated);
                    let sep = if mark.is_empty() { "" } else { " " };
                    format!("{:.1}{sep}{mark}", r.bytes_per_second / MB)
                }),
            }
        }));
        cols.push(Column::new(iops, "", 1, move |p: &Pair<'a>| {
            cell(side, p, |r| group_thousands(r.iops.round() as u64))
        }));
        cols.push(Column::new(p99, "µs", 2, move |p: &Pair<'a>| {
            cell(side, p, |r| us(r.latency_us.p99))
        }));
    }
    cols
}

/// What the reads' checks found, over all rows.
pub(crate) fn verify_line(r: &DiskReport) -> String {
    in_place_line(
        r.rows.iter().map(|row| row.verify),
        r.header.seed,
        &r.header.file,
        &VerifyWords {
            none_checked: "no read row ran",
            when: " as it completed (after its latency was taken)",
            tail: "; writes wrote the same bytes back",
        },
    )
}

/// How a result words its verify line where the disk results differ.
pub(crate) struct VerifyWords {
    /// Said when the file's content is ioscope's but no read was checked.
    pub none_checked: &'static str,
    /// Said after "at its offset": when each read was compared.
    pub when: &'static str,
    /// Said last, after the bytes and blocks checked.
    pub tail: &'static str,
}

/// What the reads' checks found: `checked` holds each row's `verify`, `seed` the seed of
/// `file`'s content (`None`: the user's file), `words` what differs between results.
pub(crate) fn in_place_line(
    checked: impl IntoIterator<Item = Option<crate::workload::verify::InPlace>>,
    seed: Option<u64>,
    file: &str,
    words: &VerifyWords,
) -> String {
    let checked: Vec<_> = checked.into_iter().flatten().collect();
    let Some(all) = crate::workload::verify::InPlace::merged(checked.iter()) else {
        return if seed.is_none() {
            "not checked: the file's content is yours, not ioscope's".to_string()
        } else {
            words.none_checked.to_string()
        };
    };
    match all.mismatch(&crate::text::printable(file)) {
        Some(m) => format!("NOT IN PLACE: {m}"),
        None => format!(
            "{}: 1 read in {VERIFY_EVERY} compared with the generator's bytes at its offset{}: {} in {} block(s){}",
            in_place_short(&all),
            words.when,
            format_size(all.bytes),
            group_thousands(all.blocks),
            words.tail
        ),
    }
}

impl Exportable for DiskReport {
    const COMMAND: &'static str = "disk";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self, false)
    }
    fn verbose_text(&self) -> String {
        text(self, true)
    }
    /// The table, then one sentence per row and the fallbacks.
    fn chart(&self) -> Option<crate::report::svg::Chart> {
        chart(self)
    }
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{list, table};
        // `--best`: the figures are the fastest runs', said where the table is.
        let best = self.rows.iter().any(|x| x.best_of).then_some(BEST_OF);
        let mut blocks = vec![table(
            &columns::markdown(&panel(&self.rows), &self.rows),
            best,
        )];
        let sentences: Vec<String> = self
            .rows
            .iter()
            .filter(|row| row.skipped.is_none())
            .map(|row| format!("{}: {}", row.label(), queue_sentence(row)))
            .collect();
        if !sentences.is_empty() {
            blocks.push(list("Queues, asked against kept and seen:", &sentences));
        }
        let sizes: Vec<String> = self
            .rows
            .iter()
            .filter(|row| row.measured())
            .flat_map(|row| {
                [skew_sentence(row), sizes_sentence(row)]
                    .into_iter()
                    .flatten()
                    .map(|s| format!("{}: {s}", row.label()))
            })
            .collect();
        if !sizes.is_empty() {
            blocks.push(list("Skew and sizes, asked against done:", &sizes));
        }
        let mixes = super::disk_mix::mixes(&self.rows);
        if !mixes.is_empty() {
            blocks.push(table(
                &columns::markdown(&super::disk_mix::table(), &mixes),
                Some("each mix against the pure read and write rows of its shape"),
            ));
            let said: Vec<String> = mixes.iter().map(super::disk_mix::sentence).collect();
            blocks.push(list("What mixing cost:", &said));
        }
        let over: Vec<String> = self
            .rows
            .iter()
            .filter_map(|row| {
                let o = row.over_time.as_ref()?;
                let prefix = format!("{}: ", row.label());
                Some(super::over_time::markdown_items(o, &prefix))
            })
            .flatten()
            .collect();
        if !over.is_empty() {
            blocks.push(list("Over time:", &over));
        }
        let notes: Vec<String> = self
            .rows
            .iter()
            .filter_map(|row| {
                row.fallback
                    .as_ref()
                    .map(|f| format!("{}: {f}", row.label()))
            })
            .chain(self.notes.iter().map(super::disk_presets::note))
            .chain([format!("Verify: {}", verify_line(self))])
            .collect();
        blocks.push(list("Notes:", &notes));
        blocks
    }
    fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
    fn ok(&self) -> bool {
        DiskReport::ok(self)
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
        columns::csv(&panel(&self.rows), &self.rows)
    }
}

/// A cell of a row that ran: empty for a skipped one.
fn ran(r: &DiskRow, cell: impl FnOnce(&DiskRow) -> String) -> String {
    if r.skipped.is_some() {
        String::new()
    } else {
        cell(r)
    }
}

/// A cell of a row that ran with a device behind it: `-` where none, empty when skipped.
fn seen(r: &DiskRow, cell: impl FnOnce(&DeviceView) -> String) -> String {
    ran(r, |r| {
        r.device.as_ref().map_or_else(|| "-".to_string(), cell)
    })
}

/// Whether any row's figures are of more than one run (`--repeat`).
fn repeated(rows: &[DiskRow]) -> bool {
    rows.iter().any(|r| r.n() > 1)
}

/// The columns of repeated rows: how many runs and the range of their MiB/s and IOPS.
fn runs_columns<'a>() -> Vec<Column<'a, DiskRow>> {
    let range = |f: Figure, scale: fn(f64) -> String| {
        if f.n > 1 {
            format!("{}–{}", scale(f.min), scale(f.max))
        } else {
            "-".to_string()
        }
    };
    vec![
        Column::new("runs", "", 2, |r: &DiskRow| ran(r, |r| r.n().to_string()))
            .csv("runs", |r: &DiskRow| r.n().to_string()),
        Column::new("MiB/s min–max", "", 1, move |r: &DiskRow| {
            ran(r, |r| range(r.rate(), |v| format!("{:.1}", v / MIB as f64)))
        })
        .text_only(),
        Column::new("MiB/s range", "", 1, move |r: &DiskRow| {
            ran(r, |r| range(r.rate(), |v| format!("{:.1}", v / MIB as f64)))
        })
        .markdown_only(),
        Column::raw("bytes_per_second_min", |r: &DiskRow| {
            r.rate().min.to_string()
        }),
        Column::raw("bytes_per_second_max", |r: &DiskRow| {
            r.rate().max.to_string()
        }),
        Column::new("IOPS min–max", "", 3, move |r: &DiskRow| {
            ran(r, |r| {
                range(r.iops_figure(), |v| group_thousands(v.round() as u64))
            })
        })
        .csv("iops_min", |r: &DiskRow| r.iops_figure().min.to_string()),
        Column::raw("iops_max", |r: &DiskRow| r.iops_figure().max.to_string()),
    ]
}

/// The panel's one table: the terminal's, Markdown's (and the study page's) and the CSV's
/// columns in one list; with repeated rows, their runs and ranges after the IOPS.
pub(crate) fn panel<'a>(rows: &[DiskRow]) -> Vec<Column<'a, DiskRow>> {
    let mut cols = head_columns();
    if repeated(rows) {
        cols.extend(runs_columns());
    }
    cols.extend(tail_columns());
    if rows.iter().any(|r| r.mix.is_some()) {
        cols.extend(super::disk_mix::csv_columns());
    }
    if rows.iter().any(|r| r.hot.is_some()) {
        cols.push(Column::raw("dist", |r: &DiskRow| opt(r.spec.dist)));
        cols.push(Column::raw("hot_share", |r: &DiskRow| {
            opt(r.hot.map(|h| h.measured))
        }));
        cols.push(Column::raw("hot_share_theory", |r: &DiskRow| {
            opt(r.hot.map(|h| h.theory))
        }));
    }
    if rows.iter().any(|r| r.sizes.is_some()) {
        // A row of mixed sizes: `4096:60:1834;65536:30:901` (bytes, percent asked, I/Os).
        cols.push(Column::raw("sizes", |r: &DiskRow| {
            r.sizes.as_ref().map_or(String::new(), |s| {
                s.iter()
                    .map(|c| format!("{}:{}:{}", c.bytes, c.percent, c.ios))
                    .collect::<Vec<_>>()
                    .join(";")
            })
        }));
    }
    cols
}

/// The panel's columns up to the IOPS.
fn head_columns<'a>() -> Vec<Column<'a, DiskRow>> {
    vec![
        Column::new("row", "", 0, |r: &DiskRow| r.name.clone())
            .left()
            .csv("row", |r: &DiskRow| r.name.clone()),
        Column::new("op", "", 0, |r: &DiskRow| r.spec.direction())
            .left()
            .csv("op", |r: &DiskRow| {
                r.spec.mix.map_or(r.spec.op.name(), |_| "mix").to_string()
            }),
        Column::raw("block_bytes", |r: &DiskRow| r.spec.block.to_string()),
        Column::raw("depth", |r: &DiskRow| r.spec.depth.to_string()),
        Column::raw("threads", |r: &DiskRow| r.spec.threads.to_string()),
        Column::new("how", "", 9, |r: &DiskRow| match &r.skipped {
            Some(why) => format!("skipped: {why}"),
            None => how(r).to_string(),
        })
        .words()
        .heading("path")
        .csv("path", |r: &DiskRow| r.path.saved_name()),
        Column::raw("ios", |r: &DiskRow| r.ios.to_string()),
        Column::raw("bytes", |r: &DiskRow| r.bytes.to_string()),
        Column::raw("seconds", |r: &DiskRow| r.seconds.to_string()),
        Column::new("MB/s", "", 6, |r: &DiskRow| {
            ran(r, |r| format!("{:.1}", r.bytes_per_second / MB))
        })
        .csv("bytes_per_second", |r: &DiskRow| {
            r.bytes_per_second.to_string()
        }),
        Column::new("MiB/s", "", 0, |r: &DiskRow| {
            ran(r, |r| format!("{:.1}", r.bytes_per_second / MIB as f64))
        }),
        Column::new("IOPS", "", 0, |r: &DiskRow| {
            ran(r, |r| group_thousands(r.iops.round() as u64))
        })
        .csv("iops", |r: &DiskRow| r.iops.to_string()),
    ]
}

/// The panel's columns after the IOPS.
fn tail_columns<'a>() -> Vec<Column<'a, DiskRow>> {
    vec![
        Column::new("p50", "µs", 3, |r: &DiskRow| {
            ran(r, |r| us(r.latency_us.p50))
        })
        .csv("p50_us", |r: &DiskRow| r.latency_us.p50.to_string()),
        Column::new("p90", "µs", 7, |r: &DiskRow| {
            ran(r, |r| us(r.latency_us.p90))
        })
        .text_only()
        .csv("p90_us", |r: &DiskRow| r.latency_us.p90.to_string()),
        Column::new("p99", "µs", 1, |r: &DiskRow| {
            ran(r, |r| us(r.latency_us.p99))
        })
        .csv("p99_us", |r: &DiskRow| r.latency_us.p99.to_string()),
        Column::new("p99.9", "µs", 5, |r: &DiskRow| {
            ran(r, |r| us(r.latency_us.p99_9))
        })
        .csv("p99_9_us", |r: &DiskRow| r.latency_us.p99_9.to_string()),
        Column::new("p99.99", "µs", 8, |r: &DiskRow| {
            ran(r, |r| us(r.latency_us.p99_99))
        })
        .text_only()
        .csv("p99_99_us", |r: &DiskRow| r.latency_us.p99_99.to_string()),
        Column::new("max", "µs", 4, |r: &DiskRow| {
            ran(r, |r| us(r.latency_us.max))
        })
        .csv("max_us", |r: &DiskRow| r.latency_us.max.to_string()),
        Column::new("in flight (asked)", "", 2, |r: &DiskRow| {
            ran(r, |r| {
                format!(
                    "{:.1} ({})",
                    r.mean_in_flight,
                    r.spec.depth * r.spec.threads
                )
            })
        })
        .csv("mean_in_flight", |r: &DiskRow| r.mean_in_flight.to_string()),
        // Its threads' CPU per I/O, user + system (fio's usr/sys, DiskSpd's CPU columns).
        Column::new("CPU/IO usr+sys", "µs", 6, |r: &DiskRow| {
            ran(r, |r| {
                // Empty for results saved before it was measured: the column is not drawn.
                r.cpu_us_per_io()
                    .map_or(String::new(), |(u, s)| format!("{u:.1}+{s:.1}"))
            })
        })
        // Not in the study page's grid: the panel fills a screen's width already.
        .text_only()
        .csv("cpu_user_us_per_io", |r: &DiskRow| {
            opt(r.cpu_us_per_io().map(|(u, _)| u))
        }),
        Column::raw("cpu_system_us_per_io", |r: &DiskRow| {
            opt(r.cpu_us_per_io().map(|(_, s)| s))
        }),
        Column::raw("cpu_core_share", |r: &DiskRow| opt(r.core_share())),
        Column::raw("device_requests", |r: &DiskRow| {
            opt(r.device.as_ref().map(|d| d.requests()))
        }),
        Column::raw("device_request_bytes", |r: &DiskRow| {
            opt(r.device.as_ref().map(|d| d.request_bytes))
        }),
        Column::raw("device_read_await_ms", |r: &DiskRow| {
            opt(r.device.as_ref().and_then(|d| d.read_await_ms))
        }),
        Column::raw("device_write_await_ms", |r: &DiskRow| {
            opt(r.device.as_ref().and_then(|d| d.write_await_ms))
        }),
        Column::new("device queue", "", 0, |r: &DiskRow| {
            seen(r, |d| format!("{:.1}", d.queue))
        })
        .markdown_only()
        .csv("device_queue", |r: &DiskRow| {
            opt(r.device.as_ref().map(|d| d.queue))
        }),
        Column::new("device busy", "", 0, |r: &DiskRow| {
            seen(r, |d| format!("{:.0}%", 100.0 * d.utilisation))
        })
        .markdown_only()
        .csv("device_utilisation", |r: &DiskRow| {
            opt(r.device.as_ref().map(|d| d.utilisation))
        }),
        Column::raw("device_merges", |r: &DiskRow| {
            opt(r.device.as_ref().map(|d| d.read_merges + d.write_merges))
        }),
        Column::new("checked", "", 0, |r: &DiskRow| {
            ran(r, |r| {
                r.verify
                    .map_or_else(|| "-".to_string(), |v| in_place_short(&v))
            })
        })
        .markdown_only()
        .csv("in_place", |r: &DiskRow| opt(r.verify.map(|v| v.ok()))),
        Column::raw("skipped", |r: &DiskRow| opt(r.skipped.clone())),
    ]
}

/// The device's own view of each row that had one (the terminal's second table).
fn device_view<'a>() -> Vec<Column<'a, &'a DiskRow>> {
    fn dev(r: &DiskRow) -> &DeviceView {
        r.device
            .as_ref()
            .expect("only rows with a device are shown")
    }
    vec![
        Column::new("row", "", 0, |r: &&DiskRow| r.name.clone()).left(),
        Column::new("op", "", 0, |r: &&DiskRow| r.spec.direction()).left(),
        Column::new("requests", "", 3, |r: &&DiskRow| {
            group_thousands(dev(r).requests())
        }),
        Column::new("req size", "", 2, |r: &&DiskRow| {
            format_size(dev(r).request_bytes.round() as u64)
        }),
        Column::new("r_await ms", "", 1, |r: &&DiskRow| {
            opt(dev(r).read_await_ms.map(|m| format!("{m:.2}")))
        }),
        Column::new("w_await ms", "", 1, |r: &&DiskRow| {
            opt(dev(r).write_await_ms.map(|m| format!("{m:.2}")))
        }),
        Column::new("aqu-sz", "", 0, |r: &&DiskRow| {
            format!("{:.1}", dev(r).queue)
        }),
        Column::new("util", "", 0, |r: &&DiskRow| {
            format!("{:.0}%", 100.0 * dev(r).utilisation)
        }),
        Column::new("merges", "", 4, |r: &&DiskRow| {
            group_thousands(dev(r).read_merges + dev(r).write_merges)
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    #[test]
    fn a_cpu_bound_row_says_so_and_a_device_bound_one_does_not() {
        let mut bound = DiskRow::made_up(Op::Read, 32, 100_000.0, 10.0, 50.0);
        bound.ios = 100_000;
        bound.seconds = 1.0;
        bound.cores = Some(2);
        bound.cpu = Some(crate::results::disk::CpuUse {
            user_seconds: 0.2,
            system_seconds: 0.77,
        });
        let sentence = cpu_sentence(&bound);
        assert!(
            sentence.starts_with(
                "its thread kept its core 97% busy (2.0 µs user + 7.7 µs system per I/O): CPU-bound"
            ),
            "{sentence}"
        );
        let idle = DiskRow {
            cpu: Some(crate::results::disk::CpuUse {
                user_seconds: 0.05,
                system_seconds: 0.2,
            }),
            ..bound.clone()
        };
        let report = |row: DiskRow| crate::results::disk::DiskReport {
            header: crate::results::disk::FileHeader {
                file: "f".into(),
                scratch: true,
                kept: false,
                file_bytes: 1 << 26,
                device_name: None,
                seed: Some(1),
                runtime_seconds: 1.0,
            },
            ramp_seconds: 0.0,
            fill_seconds: None,
            open_loop: None,
            rows: vec![row],
            notes: Vec::new(),
            complete: true,
            warnings: Vec::new(),
            caveats: Vec::new(),
        };
        assert!(text(&report(bound), false).contains("\ncpu       RND4K Q32T1 read: its thread"));
        assert!(!text(&report(idle), false).contains("\ncpu "));
    }

    #[test]
    fn a_skewed_rows_share_is_set_against_its_theory_and_a_low_one_explained() {
        use crate::results::disk::HotShare;
        let mut r = DiskRow::made_up(Op::Read, 16, 1000.0, 0.0, 0.0);
        r.spec.dist = Some("zipf:1.2".parse().unwrap());
        let hot = |measured, counted, per_bucket| HotShare {
            measured,
            theory: 0.90,
            counted,
            blocks: 1000,
            blocks_per_bucket: per_bucket,
        };
        r.hot = Some(hot(0.89, 100_000, 1));
        let s = skew_sentence(&r).unwrap();
        assert!(s.contains("89.0% of its I/Os went to the hottest 10% of its blocks; zipf:1.2 puts 90.0% there: as the distribution says"), "{s}");
        r.hot = Some(hot(0.80, 2_000, 1));
        let s = skew_sentence(&r).unwrap();
        assert!(
            s.contains("10.0 points fewer (expected low here: 2.0 I/Os per block"),
            "{s}"
        );
        // Far off with plenty of draws: said, not excused.
        r.hot = Some(hot(0.60, 100_000, 1));
        let s = skew_sentence(&r).unwrap();
        assert!(s.ends_with("30.0 points fewer"), "{s}");
        r.hot = Some(hot(0.80, 100_000, 32));
        let s = skew_sentence(&r).unwrap();
        assert!(
            s.contains("counted in buckets of 32") && s.contains("scattered"),
            "{s}"
        );
        r.spec.dist = None;
        assert!(skew_sentence(&r).is_none());
    }

    fn row(depth: usize, app: f64, device: Option<DeviceView>) -> DiskRow {
        DiskRow {
            name: "RND4K Q32T1".into(),
            mean_in_flight: app,
            device,
            ..DiskRow::made_up(Op::Read, depth, 1000.0, 0.0, 0.0)
        }
    }

    fn dev(queue: f64, requests: u64, request_bytes: f64) -> DeviceView {
        DeviceView {
            reads: requests,
            request_bytes,
            queue,
            ..DeviceView::default()
        }
    }

    /// A row whose runs moved `mb` MB/s each, their median the row's figure.
    fn repeated(name: &str, op: Op, mb: &[f64]) -> DiskRow {
        use crate::results::disk::RowRun;
        let mut sorted = mb.to_vec();
        sorted.sort_by(f64::total_cmp);
        DiskRow {
            name: name.into(),
            bytes_per_second: sorted[sorted.len() / 2] * MB,
            runs: mb
                .iter()
                .map(|&m| RowRun {
                    bytes_per_second: m * MB,
                    iops: m,
                    p99_us: 100.0,
                })
                .collect(),
            ..DiskRow::made_up(op, 8, 1000.0, 0.0, 0.0)
        }
    }

    #[test]
    fn the_rows_line_names_the_most_scattered_row_and_says_nothing_of_single_runs() {
        // The three writes of one row, 493, 1581 and 427 MB/s, beside a steady read.
        let rows = [
            repeated("SEQ1M Q8T1", Op::Read, &[1000.0, 1010.0, 990.0]),
            repeated("SEQ1M Q8T1", Op::Write, &[493.0, 1581.0, 427.0]),
        ];
        assert_eq!(
            widest_spread(&rows),
            " (runs up to 4x apart: SEQ1M Q8T1 write, 427.0–1581.0 MB/s)"
        );
        let steady = [repeated("SEQ1M Q8T1", Op::Read, &[1000.0, 1010.0, 990.0])];
        assert_eq!(
            widest_spread(&steady),
            " (runs up to 2% apart: SEQ1M Q8T1 read, 990.0–1010.0 MB/s)"
        );
        let once = [DiskRow::made_up(Op::Read, 8, 1000.0, 0.0, 0.0)];
        assert_eq!(widest_spread(&once), "");
    }

    #[test]
    fn the_grids_rates_carry_their_farthest_run_or_n_1_among_repeats() {
        // The writes (493 by the median, 427–1581: the farthest run 221% above),
        // beside a read measured once: the grid says so of each.
        let rows = [
            DiskRow {
                name: "SEQ1M Q8T1".into(),
                ..DiskRow::made_up(Op::Read, 8, 1000.0, 0.0, 0.0)
            },
            repeated("SEQ1M Q8T1", Op::Write, &[493.0, 1581.0, 427.0]),
        ];
        let pairs = pairs(&rows);
        let cols = grid(&pairs);
        let t = columns::markdown(&cols, &pairs);
        let at = |h: &str| t.header.iter().position(|x| x == h).unwrap();
        assert_eq!(t.rows[0][at("write MB/s")], "493.0 ±221%");
        assert!(
            t.rows[0][at("read MB/s")].ends_with(" n=1"),
            "{:?}",
            t.rows[0]
        );
        // Measured once everywhere: the figures alone, as before.
        let once = [DiskRow::made_up(Op::Read, 8, 1000.0, 0.0, 0.0)];
        let pairs = super::pairs(&once);
        let t = columns::markdown(&grid(&pairs), &pairs);
        assert!(!t.rows[0][1].contains('n') && !t.rows[0][1].contains('±'));
    }

    #[test]
    fn a_device_queue_below_the_apps_says_the_rest_waited_above_it() {
        let s = queue_sentence(&row(32, 31.6, Some(dev(7.8, 1000, 4096.0))));
        assert!(
            s.starts_with("asked 32 in flight, the app kept 31.6;"),
            "{s}"
        );
        assert!(s.contains("the device saw only 7.8"), "{s}");
    }

    #[test]
    fn an_app_that_kept_fewer_than_asked_says_so_before_the_device() {
        let s = queue_sentence(&row(32, 12.0, Some(dev(12.5, 1000, 4096.0))));
        assert!(s.contains("the app kept only 12.0"), "{s}");
        assert!(
            s.contains("the device saw 12.5 in its queue: the same"),
            "{s}"
        );
    }

    #[test]
    fn a_device_queue_above_the_apps_with_smaller_requests_is_told_as_splitting() {
        let s = queue_sentence(&row(8, 8.0, Some(dev(30.0, 4000, 1024.0))));
        assert!(s.contains("were split"), "{s}");
        let s = queue_sentence(&row(8, 8.0, Some(dev(30.0, 1000, 4096.0))));
        assert!(s.contains("others used it"), "{s}");
    }

    #[test]
    fn no_device_or_no_request_is_said_instead_of_a_queue() {
        assert!(queue_sentence(&row(1, 1.0, None)).contains("no block device"));
        assert!(queue_sentence(&row(1, 1.0, Some(dev(0.0, 0, 0.0)))).contains("never reached it"));
    }
}
