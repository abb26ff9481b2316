//! The study's disk section: the panel run on the scratch file as one table (MB/s, IOPS,
//! latency percentiles, the queue the app kept and the one the device saw), a chart of the
//! rows grouped read beside write, and sentences each chosen by the numbers through
//! [`crate::measure::verdict`]: what a queue of 32 buys over a queue of 1, what it costs in
//! latency, reads against writes, where the queue asked went, and, where the panel has a mix
//! (a study saved with one), what mixing cost against the pure rows (the `disk` view's `mix`
//! line) with a summary line of its own.

use super::disk::{MB, queue_sentence, verify_line};
use crate::measure::verdict::{Figure, Relation, relate};
use crate::measure::writecache::WriteCache;
use crate::report::columns;
use crate::report::page::{Headline, Section};
use crate::results::disk::{DiskReport, DiskRow, Path};
use crate::units::{format_mib_per_s, format_seconds, format_size, group_thousands};
use crate::workload::Op;
use crate::workload::study::Part;

/// Microseconds as a reader sees them, three figures: `8.74 µs`, `87.2 µs`, `383 µs`,
/// `1.24 ms`, `12.4 ms`.
fn time_us(us: f64) -> String {
    let (v, unit) = if us >= 1000.0 {
        (us / 1000.0, "ms")
    } else {
        (us, "µs")
    };
    if v >= 100.0 {
        format!("{v:.0} {unit}")
    } else if v >= 10.0 {
        format!("{v:.1} {unit}")
    } else {
        format!("{v:.2} {unit}")
    }
}

fn iops(v: f64) -> String {
    group_thousands(v.round() as u64)
}

/// The section; `cache`: the device's write cache as the study read it. Its table is the
/// `disk` view's own ([`super::disk::panel`]), as its Markdown shows it.
pub(crate) fn section(r: &DiskReport, cache: Option<&WriteCache>, part: Part) -> Section {
    Section {
        part,
        status: None,
        how: how(r),
        grid: columns::grid(&super::disk::panel(&r.rows), &r.rows),
        chart: super::disk::chart(r),
        why: sentences(r, cache),
        warnings: Vec::new(),
    }
}

/// What was measured and how, from the report itself.
fn how(r: &DiskReport) -> String {
    let direct = r
        .rows
        .iter()
        .filter(|x| x.skipped.is_none())
        .all(|x| x.path == Path::UringDirect);
    format!(
        "The panel CrystalDiskMark and KDiskMark show (SEQ1M: sequential 1 MiB; RND4K: random 4 KiB; Q: I/Os kept in flight; T: threads), run on the {} scratch file, each row for {}{}; a write puts back the bytes the file already holds, so the parts after it still read what was written. Latency is every I/O's, from the call that submits it to its completion reaped (fio's lat); MB/s are 10^6 bytes per second, as the panels print them.",
        format_size(r.header.file_bytes),
        format_seconds(r.header.runtime_seconds),
        match (direct, r.header.device_name.is_some()) {
            (true, true) => " through io_uring with O_DIRECT (the page cache bypassed)",
            (true, false) => {
                " through io_uring with O_DIRECT, which with no block device under the file still reads and writes memory"
            }
            (false, _) => "",
        },
    )
}

/// The sentences, each chosen by the numbers.
pub(crate) fn sentences(r: &DiskReport, cache: Option<&WriteCache>) -> Vec<String> {
    let mut why = Vec::new();
    for op in [Op::Read, Op::Write] {
        if let (Some(deep), Some(one)) = (r.row("RND4K Q32T1", op), r.row("RND4K Q1T1", op)) {
            why.push(depth_sentence(deep, one));
        }
    }
    if let (Some(deep), Some(one)) = (r.row("SEQ1M Q8T1", Op::Read), r.row("SEQ1M Q1T1", Op::Read))
    {
        why.push(sequential_sentence(deep, one));
    }
    if let (Some(read), Some(write)) = (
        r.row("RND4K Q1T1", Op::Read),
        r.row("RND4K Q1T1", Op::Write),
    ) {
        why.push(read_write_sentence(read, write, cache));
    }
    if let Some(deep) = r.row("RND4K Q32T1", Op::Read) {
        let q = queue_sentence(deep);
        why.push(format!("RND4K Q32T1 read: {q}."));
    }
    if let Some(open) = super::disk::open_loop_sentence(r) {
        why.push(format!("Open loop: {open}."));
    }
    for m in super::disk_mix::mixes(&r.rows) {
        why.push(format!("{}.", super::disk_mix::sentence(&m)));
    }
    let fallbacks: Vec<String> = r
        .rows
        .iter()
        .filter_map(|x| x.fallback.as_ref().map(|f| format!("{}: {f}", x.label())))
        .collect();
    if let Some(first) = fallbacks.first() {
        why.push(format!(
            "Not every row went to the device directly ({} of {}; {first}): a buffered row measures the page cache as much as the device.",
            fallbacks.len(),
            r.rows.iter().filter(|x| x.skipped.is_none()).count()
        ));
    }
    why.push(format!("Verified: {}.", verify_line(r)));
    why
}

/// Said in place of a device's behaviour where no block device is under the file.
const NO_DEVICE: &str = "no block device is under the file, so every I/O was served from memory by the kernel's own path (tmpfs, or a network or overlay file system's cache)";

/// Whether a row ran with no block device under its file: its figures are memory's.
fn memory(row: &DiskRow) -> bool {
    row.device.is_none()
}

/// What a queue of 32 random 4 KiB I/Os gives over a queue of one, in IOPS and in latency.
pub(crate) fn depth_sentence(deep: &DiskRow, one: &DiskRow) -> String {
    let what = format!("Random 4 KiB {}s", deep.spec.direction());
    let figures = format!(
        "{} IOPS with 32 in flight against {} with one",
        iops(deep.iops),
        iops(one.iops)
    );
    let latency = format!(
        "each took {} at the median against {}",
        time_us(deep.latency_us.p50),
        time_us(one.latency_us.p50)
    );
    match relate(deep.iops_figure(), one.iops_figure()) {
        Relation::Same if memory(deep) => format!(
            "{what}: {figures} — the same: {NO_DEVICE}, and its path served one I/O at a time; {latency}."
        ),
        Relation::Same => format!(
            "{what}: {figures} — the same: a deeper queue bought nothing here, so the device (or the path above it) serves one request at a time; {latency}, the wait in the queue."
        ),
        Relation::Above(x) | Relation::Unclear(x) if x > 1.0 && memory(deep) => format!(
            "{what}: {figures} ({x:.1}x): {NO_DEVICE}, so what the deeper queue overlaps is that path's own work per I/O, not a device's parallelism; {latency}."
        ),
        Relation::Above(x) | Relation::Unclear(x) if x > 1.0 => {
            let share = 100.0 / x;
            format!(
                "{what}: {figures} ({x:.1}x): the device serves many requests at once, so a program that waits for each I/O before the next (one in flight, as {}() does) gets {share:.0}% of what it can deliver; {latency}.",
                deep.spec.direction()
            )
        }
        Relation::Above(x) | Relation::Below(x) | Relation::Unclear(x) => format!(
            "{what}: {figures} ({x:.2}x): a deeper queue made it slower here — the requests contend instead of overlapping; {latency}."
        ),
    }
}

/// What eight 1 MiB reads in flight give over one: a device that streams one large request
/// at full speed gains nothing.
pub(crate) fn sequential_sentence(deep: &DiskRow, one: &DiskRow) -> String {
    let figures = format!(
        "Sequential 1 MiB reads: {:.0} MB/s with 8 in flight against {:.0} MB/s with one",
        deep.bytes_per_second / MB,
        one.bytes_per_second / MB
    );
    match relate(deep.rate(), one.rate()) {
        Relation::Same if memory(deep) => format!(
            "{figures} — the same: {NO_DEVICE}, and one request at a time already ran it at its rate."
        ),
        Relation::Same => format!(
            "{figures} — the same: one large request at a time already keeps the device (or the path to it) at its rate, so a plain sequential read() of large blocks loses nothing here."
        ),
        Relation::Above(x) | Relation::Unclear(x) if x > 1.0 && memory(deep) => format!(
            "{figures} ({x:.1}x): {NO_DEVICE}, so the deeper queue overlaps that path's copies, not a device's transfers."
        ),
        // "Idle" only where the device's own queue did not say otherwise: read-ahead and
        // request splitting can keep several requests at the device with one in flight.
        Relation::Above(x) | Relation::Unclear(x)
            if x > 1.0
                && one
                    .device
                    .is_some_and(|d| d.queue >= crate::measure::verdict::QUEUED) =>
        {
            format!(
                "{figures} ({x:.1}x): with one request in flight the device's own queue still held {:.1} on average (the kernel's read-ahead and request splitting), so it was not idle; more in flight kept it busier still.",
                one.device.map_or(0.0, |d| d.queue)
            )
        }
        Relation::Above(x) | Relation::Unclear(x) if x > 1.0 => format!(
            "{figures} ({x:.1}x): one request at a time leaves the device idle between them, so a sequential reader needs several in flight (read-ahead, or a deeper queue) to reach its rate."
        ),
        Relation::Above(x) | Relation::Below(x) | Relation::Unclear(x) => format!(
            "{figures} ({x:.2}x): the deeper queue was slower here — the requests contend instead of overlapping."
        ),
    }
}

/// Reads against writes, one at a time: which completes sooner, by the one rule, and for
/// writes that complete sooner what the device says of its write cache (`cache`: sysfs, as
/// the study's write-cache check read it; `None` where it was not read).
pub(crate) fn read_write_sentence(
    read: &DiskRow,
    write: &DiskRow,
    cache: Option<&WriteCache>,
) -> String {
    let (r, w) = (read.latency_us.p50, write.latency_us.p50);
    let figures = crate::report::cells::capitalise(&format!(
        "one at a time, a random 4 KiB read took {} at the median and a write {}",
        time_us(r),
        time_us(w)
    ));
    match relate(Figure::one(w), Figure::one(r)) {
        Relation::Same => format!("{figures}: the same."),
        Relation::Below(x) | Relation::Unclear(x) if x < 1.0 && memory(write) => format!(
            "{figures}: writes complete in {:.0}% of a read's time — {NO_DEVICE}, so no write cache is involved: the difference is in that path.",
            100.0 * x
        ),
        Relation::Below(x) | Relation::Unclear(x) if x < 1.0 => {
            let why = match cache.and_then(WriteCache::write_back) {
                Some(true) => format!(
                    "{} reports a volatile write cache (write back): it acknowledges a write once the write is in that cache, while a read waits for the medium",
                    cache.and_then(|c| c.device.as_deref()).unwrap_or("the device")
                ),
                Some(false) => format!(
                    "{} reports no write cache (write through), so a layer below what Linux sees (a virtual disk's host, a controller) acknowledges writes before they reach the medium",
                    cache.and_then(|c| c.device.as_deref()).unwrap_or("the device")
                ),
                None => "something below the file system acknowledges a write before a read of the medium could finish (a write cache; the device's mode was not read)".to_string(),
            };
            format!(
                "{figures}: writes complete in {:.0}% of a read's time — {why}.",
                100.0 * x
            )
        }
        _ => format!(
            "{figures}: writes take {:.1}x a read's time here.",
            w / r.max(1e-9)
        ),
    }
}

/// The study summary's lines for the panel: sequential MB/s, random IOPS at depth 32 and
/// the latency of one random read at a time.
pub(crate) fn headlines(r: &DiskReport) -> Vec<Headline> {
    let mut out = Vec::new();
    // Each figure with its runs: `median of 3 runs, 1165–1568; ` where the panel repeated
    // its rows (`one run; ` for a row measured once among them), nothing where none was.
    let repeated = r.rows.iter().any(|x| x.n() > 1);
    let runs = |f: Figure, show: &dyn Fn(f64) -> String, unit: &str| match f.n {
        0 | 1 if repeated => "one run; ".to_string(),
        0 | 1 => String::new(),
        n => format!(
            "median of {n} runs, {}–{} {unit}; ",
            show(f.min),
            show(f.max)
        ),
    };
    let mb = |v: f64| format!("{:.0}", v / MB);
    for op in [Op::Read, Op::Write] {
        if let Some(x) = r.row("SEQ1M Q8T1", op) {
            out.push(Headline {
                label: format!("disk, sequential 1 MiB {}, 8 in flight", op.name()),
                value: format_mib_per_s(x.bytes_per_second),
                spread: format!(
                    "{}{:.0} MB/s as the panels print it; {} IOPS; p99 {}",
                    runs(x.rate(), &mb, "MB/s"),
                    x.bytes_per_second / MB,
                    iops(x.iops),
                    time_us(x.latency_us.p99)
                ),
            });
        }
    }
    for op in [Op::Read, Op::Write] {
        if let Some(x) = r.row("RND4K Q32T1", op) {
            out.push(Headline {
                label: format!("disk, random 4 KiB {}, 32 in flight", op.name()),
                value: format!("{} IOPS", iops(x.iops)),
                spread: format!(
                    "{}p50 {}, p99 {}; {}",
                    runs(x.iops_figure(), &iops, "IOPS"),
                    time_us(x.latency_us.p50),
                    time_us(x.latency_us.p99),
                    format_mib_per_s(x.bytes_per_second)
                ),
            });
        }
    }
    for m in super::disk_mix::mixes(&r.rows) {
        let x = m.row;
        let alone = m.read.map_or(String::new(), |p| {
            format!(" ({} alone)", time_us(p.latency_us.p99))
        });
        out.push(Headline {
            label: format!("disk, {}", x.label()),
            value: format!("{} IOPS", iops(x.iops)),
            spread: format!(
                "{}reads' p99 {}{alone}; {}",
                runs(x.iops_figure(), &iops, "IOPS"),
                time_us(m.mix.read.latency_us.p99),
                m.predicted().map_or_else(
                    || "no pure rows to predict it".to_string(),
                    |p| format!("{} IOPS predicted by the pure rows", iops(p.median))
                )
            ),
        });
    }
    if let Some(x) = r.row("RND4K Q1T1", Op::Read) {
        out.push(Headline {
            label: "disk, one random 4 KiB read".into(),
            value: format!("{} at the median", time_us(x.latency_us.p50)),
            spread: format!(
                "{}p99 {}, p99.9 {}; {} IOPS",
                runs(x.iops_figure(), &iops, "IOPS"),
                time_us(x.latency_us.p99),
                time_us(x.latency_us.p99_9),
                iops(x.iops)
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random 4 KiB row at `depth` with `iops` and a median latency of `p50` µs.
    fn row(op: Op, depth: usize, iops: f64, p50: f64) -> DiskRow {
        DiskRow {
            device: Some(crate::measure::devstats::DeviceView::default()),
            ..DiskRow::made_up(op, depth, iops, p50, 2.0 * p50)
        }
    }

    fn cache(mode: &str) -> WriteCache {
        WriteCache {
            device: Some("vdz".into()),
            mode: Some(mode.into()),
            ..WriteCache::default()
        }
    }

    #[test]
    fn the_summarys_disk_lines_say_how_many_runs_and_their_range() {
        let mut r: DiskReport =
            serde_json::from_str(include_str!("../../../tests/fixtures/disk-repeat.json"))
                .expect("the fixture reads");
        let h = headlines(&r);
        assert!(
            h[0].spread
                .starts_with("median of 3 runs, 1222–1644 MB/s; 1228 MB/s as the panels print it"),
            "{}",
            h[0].spread
        );
        // One row measured once among repeated ones says so; none repeated, nothing.
        r.rows[0].runs.clear();
        assert!(headlines(&r)[0].spread.starts_with("one run; "));
        for row in &mut r.rows {
            row.runs.clear();
        }
        assert!(
            headlines(&r)[0]
                .spread
                .starts_with("1228 MB/s as the panels")
        );
    }

    #[test]
    fn a_deeper_queue_that_multiplies_iops_is_said_to_be_served_in_parallel() {
        let s = depth_sentence(
            &row(Op::Read, 32, 90_000.0, 350.0),
            &row(Op::Read, 1, 20_000.0, 48.0),
        );
        assert!(
            s.contains("(4.5x)") && s.contains("serves many requests at once"),
            "{s}"
        );
        assert!(s.contains("22%"), "{s}");
    }

    #[test]
    fn a_deeper_queue_that_buys_nothing_is_said_to_be_served_one_at_a_time() {
        // A disk (or a throttled virtual one) that does one request at a time.
        let s = depth_sentence(
            &row(Op::Read, 32, 205.0, 150_000.0),
            &row(Op::Read, 1, 200.0, 5000.0),
        );
        assert!(
            s.contains("the same") && s.contains("one request at a time"),
            "{s}"
        );
        assert!(!s.contains("many requests"), "{s}");
    }

    #[test]
    fn a_deeper_queue_that_loses_iops_is_said_to_contend() {
        let s = depth_sentence(
            &row(Op::Write, 32, 500.0, 64_000.0),
            &row(Op::Write, 1, 900.0, 1100.0),
        );
        assert!(
            s.starts_with("Random 4 KiB writes") && s.contains("slower"),
            "{s}"
        );
        assert!(
            !s.contains("many requests") && !s.contains("the same"),
            "{s}"
        );
    }

    fn seq(depth: usize, mb: f64) -> DiskRow {
        let mut r = row(Op::Read, depth, mb, 1000.0);
        r.name = format!("SEQ1M Q{depth}T1");
        r.spec.block = 1 << 20;
        r.bytes_per_second = mb * MB;
        r
    }

    #[test]
    fn sequential_reads_say_whether_a_queue_was_needed_to_reach_the_rate() {
        let needed = sequential_sentence(&seq(8, 2000.0), &seq(1, 900.0));
        assert!(
            needed.contains("(2.2x)") && needed.contains("needs several in flight"),
            "{needed}"
        );
        let same = sequential_sentence(&seq(8, 950.0), &seq(1, 900.0));
        assert!(
            same.contains("the same") && same.contains("loses nothing"),
            "{same}"
        );
        let worse = sequential_sentence(&seq(8, 500.0), &seq(1, 900.0));
        assert!(
            worse.contains("(0.56x)") && worse.contains("slower"),
            "{worse}"
        );
    }

    #[test]
    fn a_device_queue_well_above_one_is_never_called_idle() {
        // One request in flight from the program, yet the device's queue held 8.8: the
        // kernel's read-ahead kept it busy, so "idle between them" is not what happened.
        let mut one = seq(1, 900.0);
        one.device = Some(crate::measure::devstats::DeviceView {
            queue: 8.8,
            ..Default::default()
        });
        let s = sequential_sentence(&seq(8, 2000.0), &one);
        assert!(!s.contains("idle between"), "{s}");
        assert!(
            s.contains("still held 8.8") && s.contains("not idle"),
            "{s}"
        );
    }

    #[test]
    fn with_no_device_under_the_file_no_sentence_credits_a_device() {
        let no = |mut r: DiskRow| {
            r.device = None;
            r
        };
        let deep = depth_sentence(
            &no(row(Op::Read, 32, 690_000.0, 44.6)),
            &no(row(Op::Read, 1, 23_000.0, 47.8)),
        );
        let flat = depth_sentence(
            &no(row(Op::Read, 32, 23_500.0, 1300.0)),
            &no(row(Op::Read, 1, 23_000.0, 47.8)),
        );
        let seq_more = sequential_sentence(&no(seq(8, 4369.0)), &no(seq(1, 3664.0)));
        let seq_same = sequential_sentence(&no(seq(8, 3700.0)), &no(seq(1, 3664.0)));
        let rw = read_write_sentence(
            &no(row(Op::Read, 1, 21_000.0, 47.8)),
            &no(row(Op::Write, 1, 28_000.0, 35.9)),
            None,
        );
        for s in [&deep, &flat, &seq_more, &seq_same, &rw] {
            assert!(s.contains("no block device is under the file"), "{s}");
            for claim in [
                "the device serves",
                "device idle",
                "write cache (",
                "acknowledges",
            ] {
                assert!(!s.contains(claim), "{claim}: {s}");
            }
        }
        assert!(
            deep.contains("(30.0x)") && deep.contains("not a device's parallelism"),
            "{deep}"
        );
        assert!(
            rw.contains("75%") && rw.contains("no write cache is involved"),
            "{rw}"
        );
    }

    #[test]
    fn times_keep_three_figures() {
        assert_eq!(time_us(8.744), "8.74 µs");
        assert_eq!(time_us(87.23), "87.2 µs");
        assert_eq!(time_us(382.72), "383 µs");
        assert_eq!(time_us(1240.0), "1.24 ms");
        assert_eq!(time_us(12_400.0), "12.4 ms");
    }

    #[test]
    fn writes_faster_than_reads_are_explained_by_what_the_device_says_of_its_cache() {
        let read = row(Op::Read, 1, 20_000.0, 50.0);
        let write = row(Op::Write, 1, 40_000.0, 25.0);
        let back = read_write_sentence(&read, &write, Some(&cache("write back")));
        assert!(
            back.contains("50%") && back.contains("vdz reports a volatile write cache"),
            "{back}"
        );
        let through = read_write_sentence(&read, &write, Some(&cache("write through")));
        assert!(
            through.contains("no write cache (write through)") && through.contains("a layer below"),
            "{through}"
        );
        let unknown = read_write_sentence(&read, &write, None);
        assert!(unknown.contains("was not read"), "{unknown}");
    }

    #[test]
    fn writes_slower_or_alike_claim_no_cache() {
        let read = row(Op::Read, 1, 20_000.0, 50.0);
        let slow = read_write_sentence(
            &read,
            &row(Op::Write, 1, 5_000.0, 200.0),
            Some(&cache("write back")),
        );
        assert!(
            slow.contains("writes take 4.0x") && !slow.contains("cache"),
            "{slow}"
        );
        let same = read_write_sentence(
            &read,
            &row(Op::Write, 1, 19_000.0, 52.0),
            Some(&cache("write back")),
        );
        assert!(
            same.ends_with("the same.") && !same.contains("cache"),
            "{same}"
        );
    }

    #[test]
    fn the_summary_names_each_panel_row_it_finds_and_skips_the_missing() {
        let r = DiskReport {
            header: crate::results::disk::FileHeader {
                file: "f".into(),
                scratch: false,
                kept: false,
                file_bytes: 1 << 26,
                device_name: None,
                seed: Some(1),
                runtime_seconds: 1.0,
            },
            ramp_seconds: 0.0,
            fill_seconds: None,
            open_loop: None,
            rows: vec![
                row(Op::Read, 32, 90_000.0, 350.0),
                row(Op::Read, 1, 20_000.0, 48.0),
            ],
            notes: Vec::new(),
            complete: true,
            warnings: Vec::new(),
            caveats: Vec::new(),
        };
        let h = headlines(&r);
        let labels: Vec<&str> = h.iter().map(|x| x.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "disk, random 4 KiB read, 32 in flight",
                "disk, one random 4 KiB read"
            ]
        );
        assert_eq!(h[0].value, "90,000 IOPS");
        let why = sentences(&r, None);
        assert!(why[0].contains("4.5x"), "{why:?}");
        assert!(
            section(&r, None, crate::cmd::study::parts::disk::PART)
                .chart
                .is_some()
        );
    }

    #[test]
    fn a_panel_with_a_mix_says_what_mixing_cost_in_its_sentences_and_summary() {
        use crate::results::disk::{Latency, MixFigures, MixSide};
        let mut mix = row(Op::Write, 32, 40_000.0, 400.0);
        mix.spec = mix.spec.mixed(70);
        let side = |iops: f64, p99: f64| MixSide {
            ios: iops as u64,
            bytes: iops as u64 * 4096,
            iops,
            bytes_per_second: iops * 4096.0,
            latency_us: Latency {
                p99,
                ..Latency::default()
            },
        };
        mix.mix = Some(MixFigures {
            read_percent: 70,
            read: side(28_000.0, 900.0),
            write: side(12_000.0, 1500.0),
            device_read_share: None,
        });
        let mut r: DiskReport =
            serde_json::from_str(include_str!("../../../tests/fixtures/disk.json"))
                .expect("the fixture reads");
        r.rows = vec![
            row(Op::Read, 32, 90_000.0, 100.0),
            row(Op::Write, 32, 30_000.0, 300.0),
            mix,
        ];
        let why = sentences(&r, None);
        let said = why
            .iter()
            .find(|s| s.starts_with("RND4K Q32T1 mix 70/30: 40,000 IOPS"))
            .unwrap_or_else(|| panic!("{why:?}"));
        assert!(said.contains("29% below the 56,250 IOPS"), "{said}");
        assert!(said.ends_with('.'), "{said}");
        let h = headlines(&r);
        let line = h
            .iter()
            .find(|x| x.label == "disk, RND4K Q32T1 mix 70/30")
            .unwrap_or_else(|| panic!("{h:?}"));
        assert_eq!(line.value, "40,000 IOPS");
        assert_eq!(
            line.spread,
            "reads' p99 900 µs (200 µs alone); 56,250 IOPS predicted by the pure rows"
        );
        // Without the mix: no such sentence or line.
        r.rows.pop();
        assert!(!sentences(&r, None).iter().any(|s| s.contains("mix")));
        assert!(!headlines(&r).iter().any(|x| x.label.contains("mix")));
    }
}
