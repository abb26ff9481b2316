//! The disk panel of several studies side by side: a measure per figure the panel gives
//! (MB/s, IOPS, latency at the median and at p99), a row per panel row and direction
//! (`SEQ1M Q8T1 read`), each cell carrying how its bytes moved; and the sentences only this
//! part needs, chosen by the rows' `path`: a row that went through the page cache beside one
//! that went to the device compares memory with a device, a medium without a block device is
//! memory even with O_DIRECT, and a row run one call at a time did not have the queue asked.
//! A mix row (`RND4K Q32T1 mix 70/30`, a profile's Mix) is a row of every measure, its reads'
//! p99 a measure of its own, and a sentence sets each medium's mix side by side.

use super::media_figures::{Lead, Measure, Medium, Rows, Shape, Unit, measure};
use crate::measure::verdict::Figure;
use crate::report::cells::us;
use crate::results::disk::DiskReport;
use crate::results::disk::{DiskRow, Path};
use crate::results::study::StudyReport;
use crate::units::group_thousands;
use crate::workload::study::Part;

/// A panel row's key on the media page: its name and direction, `RND4K Q32T1 read`.
pub fn key(row: &DiskRow) -> String {
    row.label()
}

/// The panel rows a study measured, keyed, in the order run: rows skipped (or that
/// completed no I/O) are not figures, so they are left out — shown as not measured, not 0.
fn measured(r: &StudyReport) -> Vec<(String, &DiskRow)> {
    super::part::kept::<DiskReport>(r, "disk")
        .into_iter()
        .flat_map(|d| &d.rows)
        .filter(|x| x.measured())
        .map(|x| (key(x), x))
        .collect()
}

/// One figure of a panel row, `None` where the row has none (a pure row's mix figures).
type Pick = fn(&DiskRow) -> Option<f64>;

/// The panel's measures, merged over the media: MB/s, IOPS, p50 and p99 latency, each a
/// group of bars per row, and the mixes' reads at p99 where a medium has a mix; each cell's
/// path beside its figure.
pub fn measures(media: &[Medium], part: Part) -> Vec<Measure> {
    let kinds: [(&str, &str, Unit, Lead, Pick); 5] = [
        (
            "disk_rate",
            "disk panel: MB/s per row",
            Unit::RateMb,
            Lead::Row(
                "SEQ1M Q8T1 read".into(),
                "sequential 1 MiB reads with 8 in flight (SEQ1M Q8T1)",
            ),
            |x| Some(x.bytes_per_second),
        ),
        (
            "disk_iops",
            "disk panel: IOPS per row",
            Unit::Iops,
            Lead::Row(
                "RND4K Q32T1 read".into(),
                "random 4 KiB reads with 32 in flight (RND4K Q32T1)",
            ),
            |x| Some(x.iops),
        ),
        (
            "disk_latency_p50",
            "disk panel: latency at the median (p50), lower is better",
            Unit::Micros,
            Lead::Row(
                "RND4K Q1T1 read".into(),
                "one random 4 KiB read at a time (RND4K Q1T1), its median latency",
            ),
            |x| Some(x.latency_us.p50),
        ),
        (
            "disk_latency_p99",
            "disk panel: latency at p99, lower is better",
            Unit::Micros,
            Lead::Row(
                "RND4K Q32T1 read".into(),
                "random 4 KiB reads with 32 in flight (RND4K Q32T1), their p99 latency",
            ),
            |x| Some(x.latency_us.p99),
        ),
        (
            "disk_mix_read_p99",
            "disk panel: a mix's reads at p99, lower is better (the pure read row's is in the p99 table)",
            Unit::Micros,
            Lead::Nothing,
            |x| x.mix.as_ref().map(|m| m.read.latency_us.p99),
        ),
    ];
    let per_medium: Vec<Vec<(String, &DiskRow)>> =
        media.iter().map(|m| measured(m.report)).collect();
    let mut out = Vec::new();
    for (id, title, unit, lead, pick) in kinds {
        let per: Vec<Rows> = per_medium
            .iter()
            .map(|rows| {
                rows.iter()
                    .filter_map(|(k, x)| Some((k.clone(), None, Figure::one(pick(x)?))))
                    .collect()
            })
            .collect();
        let Some(mut ms) = measure(part, id, title, "row", unit, Shape::Bars, lead, per) else {
            continue;
        };
        for row in &mut ms.rows {
            row.paths = per_medium
                .iter()
                .map(|rows| {
                    rows.iter()
                        .find(|(k, _)| *k == row.key)
                        .map(|(_, x)| x.path)
                })
                .collect();
        }
        out.push(ms);
    }
    // The open loop at half the peak: its response p99, one row per medium that ran it.
    let open: Vec<Rows> = media
        .iter()
        .map(|m| {
            super::part::kept::<DiskReport>(m.report, "disk")
                .and_then(|d| d.open_loop.as_ref())
                .and_then(|x| x.open.as_ref().map(|o| (x, o)))
                .map(|(x, o)| {
                    vec![(
                        format!("{} read, open loop", x.name),
                        None,
                        Figure::one(o.response_us.p99),
                    )]
                })
                .unwrap_or_default()
        })
        .collect();
    if let Some(ms) = measure(
        part,
        "disk_open_loop_p99",
        "disk: response p99 in an open loop at half the peak, lower is better",
        "row",
        Unit::Micros,
        Shape::Bars,
        Lead::Row(
            "RND4K Q32T1 read, open loop".into(),
            "random 4 KiB reads arriving at half of RND4K Q32T1's IOPS (Poisson), their response p99",
        ),
        open,
    ) {
        out.push(ms);
    }
    out
}

/// What a cell must say beside its figure when its row did not go to the device through
/// io_uring with O_DIRECT: the page cache, or one call at a time.
pub fn path_note(p: Path) -> Option<&'static str> {
    match p {
        Path::UringDirect => None,
        Path::UringBuffered | Path::SyncBuffered => Some("buffered: through the page cache"),
        Path::SyncDirect => Some("pread/pwrite: 1 in flight"),
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

/// Which of `rows` (keys) a list names: `every row`, or `2 of its 8 rows (A, B)`.
fn which(subset: &[&(String, &DiskRow)], all: usize) -> String {
    if subset.len() == all {
        "every row".to_string()
    } else {
        format!(
            "{} of its {all} rows ({})",
            subset.len(),
            subset
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The sentences under the part, each chosen by the rows' paths and the media's devices:
/// rows that went through the page cache (against the same rows that went to a device on
/// another medium, or on none), a medium with no block device under it, and rows that ran
/// one call at a time although they asked for a queue.
pub fn sentences(media: &[Medium]) -> Vec<String> {
    let with: Vec<(usize, Vec<(String, &DiskRow)>)> = media
        .iter()
        .enumerate()
        .map(|(i, m)| (i, measured(m.report)))
        .filter(|(_, rows)| !rows.is_empty())
        .collect();
    let label = |i: usize| media[i].label.clone();
    let mut out = Vec::new();
    for (i, rows) in &with {
        let buffered: Vec<&(String, &DiskRow)> =
            rows.iter().filter(|(_, x)| !x.path.direct()).collect();
        let Some((_, first)) = buffered.first() else {
            continue;
        };
        // The reason, without the path the sentence names anyway: `O_DIRECT refused (…)`.
        let why = first
            .fallback
            .as_deref()
            .and_then(|f| f.split("; ").next())
            .map_or(String::new(), |w| format!("{w}, so "));
        // The other media whose same rows bypassed the page cache: to a device, or on memory.
        let (mut to_device, mut on_memory) = (Vec::new(), Vec::new());
        for (j, other) in with.iter().filter(|(j, _)| j != i) {
            if other
                .iter()
                .any(|(k, x)| x.path.direct() && buffered.iter().any(|(b, _)| b == k))
            {
                if device(media[*j].report) {
                    to_device.push(label(*j));
                } else {
                    on_memory.push(label(*j));
                }
            }
        }
        let head = format!(
            "{}: {why}{} went through the page cache",
            label(*i),
            which(&buffered, rows.len())
        );
        out.push(if !to_device.is_empty() {
            format!(
                "{head}, while {}'s went to the device directly (O_DIRECT): beside each other these rows compare the page cache with a device, not two devices — a buffered read may be served from memory, and a buffered write lands in memory until the row's closing fdatasync.",
                and_list(&to_device)
            )
        } else if !on_memory.is_empty() {
            format!(
                "{head}, while {}'s bypassed it (O_DIRECT) on a file system with no block device: beside each other both are memory, one through the page cache and one around it, not two devices.",
                and_list(&on_memory)
            )
        } else if with.len() > 1 {
            format!(
                "{head}, and no other medium's same rows bypassed the page cache either: beside each other they compare page caches, not devices."
            )
        } else if device(media[*i].report) {
            format!("{head}: its figures are the page cache's as much as the device's.")
        } else {
            format!("{head}, with no block device under it: its figures are memory's.")
        });
    }
    let devices: Vec<usize> = with
        .iter()
        .filter(|(i, _)| device(media[*i].report))
        .map(|(i, _)| *i)
        .collect();
    for (i, rows) in &with {
        if device(media[*i].report) || !rows.iter().any(|(_, x)| x.path.direct()) {
            continue;
        }
        out.push(if devices.is_empty() {
            format!(
                "{} has no block device under it: even with O_DIRECT its rows copy to and from memory, so they measure memory and the CPU, not a device.",
                label(*i)
            )
        } else {
            format!(
                "{} has no block device under it: even with O_DIRECT its rows copy to and from memory, so beside {} the panel compares memory with a device, not two devices.",
                label(*i),
                and_list(&devices.iter().map(|&j| label(j)).collect::<Vec<_>>())
            )
        });
    }
    out.extend(mix_sentences(media, &with));
    for (i, rows) in &with {
        let shallow: Vec<&(String, &DiskRow)> = rows
            .iter()
            .filter(|(_, x)| !x.path.uring() && x.spec.depth > 1)
            .collect();
        if let Some((_, first)) = shallow.first() {
            out.push(format!(
                "{}: {} asked for a queue but ran one call at a time per thread ({}): their IOPS and latency are those of a queue of one, not of the depth in their name.",
                label(*i),
                which(&shallow, rows.len()),
                first
                    .fallback
                    .as_deref()
                    .and_then(|f| f.split("; ").find(|w| w.starts_with("io_uring")))
                    .unwrap_or("io_uring not used")
            ));
        }
    }
    out
}

/// One sentence per mix that two media or more measured: each medium's IOPS and its
/// reads' p99 beside its pure read row's, side by side (the tables hold the rest).
fn mix_sentences(media: &[Medium], with: &[(usize, Vec<(String, &DiskRow)>)]) -> Vec<String> {
    let mut keys: Vec<&str> = Vec::new();
    for (_, rows) in with {
        for (k, x) in rows {
            if x.mix.is_some() && !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    keys.into_iter()
        .filter_map(|key| {
            let each: Vec<String> = with
                .iter()
                .filter_map(|(i, rows)| {
                    let (_, x) = rows.iter().find(|(k, _)| k == key)?;
                    let m = x.mix.as_ref()?;
                    let alone = rows
                        .iter()
                        .find(|(_, r)| r.spec == x.spec.pure(crate::workload::Op::Read))
                        .map_or(String::new(), |(_, r)| {
                            format!(" against {} µs alone", us(r.latency_us.p99))
                        });
                    Some(format!(
                        "{} {} IOPS, its reads' p99 {} µs{alone}",
                        media[*i].label,
                        group_thousands(x.iops.round() as u64),
                        us(m.read.latency_us.p99)
                    ))
                })
                .collect();
            (each.len() >= 2).then(|| format!("{key} side by side: {}.", each.join("; ")))
        })
        .collect()
}

/// Whether the study's disk panel ran on a file with a block device behind it.
fn device(r: &StudyReport) -> bool {
    super::part::kept::<DiskReport>(r, "disk").is_some_and(|d| d.header.device_name.is_some())
}

#[cfg(test)]
mod tests {
    use super::super::media::{page, sentences as measure_sentences};
    use super::super::media_figures::{csv, json};
    use super::super::part::all_measures;
    use super::*;
    use crate::cmd::study::parts::disk::PART;
    use crate::measure::env::Environment;
    use crate::results::disk::DiskReport;
    use crate::results::study::{Outcome, Step};

    /// A saved study (no disk part in it), read back.
    fn study() -> StudyReport {
        serde_json::from_str(include_str!("../../../tests/fixtures/study-sentences.json"))
            .expect("the fixture is a study")
    }

    /// The study with `disk` as its disk part (and a step saying it ran).
    fn with(disk: DiskReport) -> StudyReport {
        let mut r = study();
        r.steps.push(Step {
            part: PART,
            seconds: 2.0,
            estimated_seconds: 2.0,
            outcome: Outcome::Done,
        });
        r.budget.disk_runtime = 0.25;
        r.results.put(PART, disk);
        r
    }

    /// The saved panel (ext4 on vda) with every rate and IOPS times `speed` and every
    /// latency divided by it: a medium `speed` times as fast.
    fn panel(speed: f64) -> DiskReport {
        let mut d: DiskReport =
            serde_json::from_str(include_str!("../../../tests/fixtures/disk.json"))
                .expect("the fixture is a panel");
        for x in &mut d.rows {
            x.bytes_per_second *= speed;
            x.iops *= speed;
            x.latency_us.p50 /= speed;
            x.latency_us.p99 /= speed;
        }
        d
    }

    /// The panel as tmpfs gives it: no block device behind the file.
    fn memory(mut d: DiskReport) -> DiskReport {
        d.header.device_name = None;
        for x in &mut d.rows {
            x.device = None;
        }
        d
    }

    /// Every row of `d` (or those named `only`) fallen back to the page cache, as tmpfs
    /// before Linux 6.6 makes them.
    fn buffered(mut d: DiskReport, only: Option<&str>) -> DiskReport {
        for x in &mut d.rows {
            if only.is_none_or(|n| x.name == n) {
                x.path = Path::UringBuffered;
                x.fallback = Some(
                    "O_DIRECT refused (invalid argument); buffered io_uring: reads may be served from the page cache".into(),
                );
            }
        }
        d
    }

    fn env(device: Option<&str>) -> Environment {
        let mut e = study().environment();
        e.storage.device = device.map(str::to_string);
        if device.is_none() {
            e.storage.filesystem = Some("tmpfs".into());
        }
        e
    }

    fn medium<'a>(label: &str, report: &'a StudyReport, env: &'a Environment) -> Medium<'a> {
        Medium {
            label: label.into(),
            report,
            env,
            provenance: None,
            source: format!("{label}/study.json"),
        }
    }

    fn labels(media: &[Medium]) -> Vec<String> {
        media.iter().map(|m| m.label.clone()).collect()
    }

    /// The sentences of the disk measure `id`.
    fn said(media: &[Medium], id: &str) -> Vec<String> {
        let all = all_measures(media);
        let ms = all.iter().find(|m| m.id == id).expect(id);
        measure_sentences(ms, &labels(media))
    }

    #[test]
    fn every_panel_row_is_a_row_of_four_measures_with_a_cell_and_a_path_per_medium() {
        let (a, b) = (with(panel(1.0)), with(memory(panel(2.0))));
        let (ea, eb) = (env(Some("vda")), env(None));
        let media = [medium("ext4 on vda", &a, &ea), medium("tmpfs", &b, &eb)];
        let ms = measures(&media, PART);
        let ids: Vec<&str> = ms.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "disk_rate",
                "disk_iops",
                "disk_latency_p50",
                "disk_latency_p99"
            ]
        );
        let units: Vec<Unit> = ms.iter().map(|m| m.unit).collect();
        assert_eq!(
            units,
            [Unit::RateMb, Unit::Iops, Unit::Micros, Unit::Micros]
        );
        let keys: Vec<&str> = ms[0].rows.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys[0], "SEQ1M Q8T1 read");
        assert_eq!(keys[1], "SEQ1M Q8T1 write");
        assert_eq!(keys[7], "RND4K Q1T1 write");
        for m in &ms {
            assert!(m.part == PART && m.shape == Shape::Bars);
            for r in &m.rows {
                assert!(r.cells.iter().all(Option::is_some), "{}", r.key);
                assert_eq!(r.paths, vec![Some(Path::UringDirect); 2]);
            }
        }
        // The raw figures: bytes per second, IOPS, microseconds.
        let iops = &ms[1].rows[4];
        assert_eq!(iops.key, "RND4K Q32T1 read");
        let (x, y) = (iops.cells[0].unwrap().median, iops.cells[1].unwrap().median);
        assert!((y / x - 2.0).abs() < 1e-9, "{x} {y}");
        assert!(!Unit::Micros.higher_is_better() && Unit::Iops.higher_is_better());
    }

    #[test]
    fn a_second_medium_twice_as_fast_is_at_2x_in_rates_and_at_half_in_latency() {
        let (a, b) = (with(panel(1.0)), with(panel(2.0)));
        let e = env(Some("vda"));
        let media = [
            medium("ext4 on vda", &a, &e),
            medium("xfs on nvme0n1", &b, &e),
        ];
        let rate = said(&media, "disk_rate").join(" ");
        assert!(
            rate.starts_with("Sequential 1 MiB reads with 8 in flight (SEQ1M Q8T1): against ext4 on vda (2,000 MB/s)"),
            "{rate}"
        );
        assert!(
            rate.contains("xfs on nvme0n1 is at 2.00× (4,000 MB/s; one run each)"),
            "{rate}"
        );
        let iops = said(&media, "disk_iops").join(" ");
        assert!(
            iops.contains("(76,311 IOPS), xfs on nvme0n1 is at 2.00× (152,621 IOPS"),
            "{iops}"
        );
        let p50 = said(&media, "disk_latency_p50").join(" ");
        assert!(
            p50.starts_with("One random 4 KiB read at a time (RND4K Q1T1), its median latency: against ext4 on vda (53.0 µs)"),
            "{p50}"
        );
        assert!(p50.contains("is at 0.50× (26.5 µs"), "{p50}");
    }

    #[test]
    fn a_memory_file_system_slower_than_a_disk_is_said_to_be_slower() {
        // Against the usual story (tmpfs is memory, so faster): here at 0.4x, waits 2.5x.
        let (a, b) = (with(panel(1.0)), with(memory(panel(0.4))));
        let (ea, eb) = (env(Some("vda")), env(None));
        let media = [medium("ext4 on vda", &a, &ea), medium("tmpfs", &b, &eb)];
        let iops = said(&media, "disk_iops").join(" ");
        assert!(iops.contains("tmpfs is at 0.40×"), "{iops}");
        let p99 = said(&media, "disk_latency_p99").join(" ");
        assert!(p99.contains("tmpfs is at 2.50×"), "{p99}");
        // Memory, though slower: the sentence says what it is, not who wins.
        let why = sentences(&media).join(" ");
        assert!(
            why.contains("tmpfs has no block device under it: even with O_DIRECT its rows copy to and from memory, so beside ext4 on vda the panel compares memory with a device"),
            "{why}"
        );
    }

    #[test]
    fn media_within_ten_percent_are_the_same_in_every_row() {
        let (a, b) = (with(panel(1.0)), with(panel(1.05)));
        let e = env(Some("vda"));
        let media = [medium("ext4 on vda", &a, &e), medium("ext4 on vdb", &b, &e)];
        for id in [
            "disk_rate",
            "disk_iops",
            "disk_latency_p50",
            "disk_latency_p99",
        ] {
            let s = said(&media, id).join(" ");
            assert!(
                s.contains("every medium within 10% of the others"),
                "{id}: {s}"
            );
            assert!(
                s.contains("in every row the media are within 10%"),
                "{id}: {s}"
            );
        }
        assert!(sentences(&media).is_empty(), "both direct, both devices");
    }

    #[test]
    fn a_medium_without_the_disk_part_is_not_measured_rather_than_zero() {
        let (a, old) = (with(panel(1.0)), study());
        let e = env(Some("vda"));
        let media = [
            medium("ext4 on vda", &a, &e),
            medium("older study", &old, &e),
        ];
        let ms = measures(&media, PART);
        assert_eq!(ms.len(), 4);
        for m in &ms {
            assert!(m.rows.iter().all(|r| r.cells[1].is_none()), "{}", m.id);
            assert!(!m.has(1));
        }
        // One medium with figures: nothing to compare, nothing claimed.
        assert!(said(&media, "disk_rate").is_empty());
        let html = page(&media, None, "ioscope report a b").unwrap();
        assert!(html.contains(
            "<b>older study</b>: not measured: the study was made by a version of ioscope without the disk part"
        ));
        let chart = &html[html.find("id=\"chart-disk_rate\"").unwrap()..];
        assert!(chart[..chart.find("</figure>").unwrap()].contains("older study (not measured)"));
        let table = &html[html.find("id=\"table-disk_iops\"").unwrap()..];
        assert!(table[..table.find("</table>").unwrap()].contains("<td>—</td>"));
        // Three media, the middle one without: the others still compared, it named.
        let c = with(panel(3.0));
        let media = [
            medium("ext4 on vda", &a, &e),
            medium("older study", &old, &e),
            medium("nvme", &c, &e),
        ];
        let s = said(&media, "disk_iops").join(" ");
        assert!(s.contains("nvme is at 3.00×"), "{s}");
        assert!(s.contains("(older study not measured there)"), "{s}");
        // No medium with the part: no measure, no section.
        let media = [medium("a", &old, &e), medium("b", &old, &e)];
        assert!(measures(&media, PART).is_empty());
        assert!(sentences(&media).is_empty());
        assert!(!page(&media, None, "x").unwrap().contains("id=\"disk\""));
    }

    #[test]
    fn a_buffered_row_beside_a_direct_one_is_marked_in_its_cell_and_said_to_compare_the_page_cache_with_a_device()
     {
        let (a, b) = (with(panel(1.0)), with(memory(buffered(panel(5.0), None))));
        let (ea, eb) = (env(Some("vda")), env(None));
        let media = [medium("ext4 on vda", &a, &ea), medium("tmpfs", &b, &eb)];
        let why = sentences(&media);
        assert_eq!(
            why.len(),
            1,
            "{why:?}: no O_DIRECT, so no memory-with-O_DIRECT line"
        );
        assert!(
            why[0].starts_with(
                "tmpfs: O_DIRECT refused (invalid argument), so every row went through the page cache, while"
            ),
            "{why:?}"
        );
        assert!(
            why[0].contains("while ext4 on vda's went to the device directly (O_DIRECT): beside each other these rows compare the page cache with a device, not two devices"),
            "{why:?}"
        );
        let html = page(&media, Some(("c.json", "c.csv")), "x").unwrap();
        let table = &html[html.find("id=\"table-disk_rate\"").unwrap()..];
        let table = &table[..table.find("</table>").unwrap()];
        assert_eq!(
            table
                .matches("<small class=\"fallback\">buffered: through the page cache</small>")
                .count(),
            8,
            "each of tmpfs's cells, none of ext4's"
        );
        let section = &html[html.find("id=\"disk\"").unwrap()..];
        assert!(section.contains("compare the page cache with a device"));
        // The figures beside the page carry the path of every cell.
        let ms = all_measures(&media);
        let doc: serde_json::Value = serde_json::from_str(&json(&media, &ms, &why)).unwrap();
        let rate = doc["measures"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["measure"] == "disk_rate")
            .unwrap();
        assert_eq!(rate["unit"], "bytes_per_second");
        assert_eq!(rate["rows"][0]["cells"][0]["path"], "uring_direct");
        assert_eq!(rate["rows"][0]["cells"][1]["path"], "uring_buffered");
        let table = csv(&media, &ms);
        let text = String::from_utf8(crate::report::csv::render(&table).unwrap()).unwrap();
        assert!(text.lines().next().unwrap().ends_with(",relation,path"));
        assert!(
            text.contains("disk,disk_iops,RND4K Q32T1 read,,tmpfs,iops,"),
            "{text}"
        );
        assert!(text.contains(",uring_buffered\n") && text.contains(",uring_direct\n"));
        assert!(text.contains("disk,disk_latency_p99,RND4K Q1T1 write,,ext4 on vda,latency_us,"));
    }

    #[test]
    fn one_buffered_row_is_named_and_buffered_rows_on_every_medium_compare_page_caches() {
        let (a, b) = (
            with(panel(1.0)),
            with(buffered(panel(1.0), Some("SEQ1M Q8T1"))),
        );
        let e = env(Some("vda"));
        let media = [medium("ext4 on vda", &a, &e), medium("xfs on vdb", &b, &e)];
        let why = sentences(&media).join(" ");
        assert!(
            why.contains("xfs on vdb: O_DIRECT refused (invalid argument), so 2 of its 8 rows (SEQ1M Q8T1 read, SEQ1M Q8T1 write) went through the page cache"),
            "{why}"
        );
        assert!(why.contains("while ext4 on vda's went to the device directly"));
        let (a, b) = (
            with(buffered(panel(1.0), None)),
            with(buffered(panel(1.0), None)),
        );
        let media = [medium("ext4 on vda", &a, &e), medium("xfs on vdb", &b, &e)];
        let why = sentences(&media);
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(
            why[0].contains("compare page caches, not devices"),
            "{why:?}"
        );
        assert!(!why.join(" ").contains("went to the device directly"));
    }

    #[test]
    fn a_buffered_medium_beside_memory_with_o_direct_is_said_to_be_memory_against_memory() {
        let (a, b) = (
            with(memory(panel(1.0))),
            with(memory(buffered(panel(1.0), None))),
        );
        let e = env(None);
        let media = [medium("tmpfs", &a, &e), medium("ramfs", &b, &e)];
        let why = sentences(&media);
        assert_eq!(why.len(), 2, "{why:?}");
        assert!(
            why[0].contains("while tmpfs's bypassed it (O_DIRECT) on a file system with no block device: beside each other both are memory"),
            "{why:?}"
        );
        assert!(!why[0].contains("to the device directly"), "{why:?}");
        assert!(
            why[1].starts_with("tmpfs has no block device under it")
                && why[1].ends_with("so they measure memory and the CPU, not a device."),
            "{why:?}"
        );
        // Alone: the page cache's figures, of a device or of memory.
        let one = [medium("ramfs", &b, &e)];
        assert!(
            sentences(&one)[0]
                .ends_with("with no block device under it: its figures are memory's.")
        );
        let c = with(buffered(panel(1.0), None));
        let one = [medium("ext4", &c, &e)];
        assert!(sentences(&one)[0].ends_with("the page cache's as much as the device's."));
    }

    #[test]
    fn rows_run_one_call_at_a_time_are_said_not_to_have_had_their_queue() {
        let mut d = panel(1.0);
        for x in &mut d.rows {
            x.path = Path::SyncDirect;
            x.fallback = Some("io_uring refused (function not implemented); pread/pwrite with O_DIRECT, 1 in flight per thread".into());
        }
        let (a, b) = (with(panel(1.0)), with(d));
        let e = env(Some("vda"));
        let media = [medium("ext4 on vda", &a, &e), medium("old kernel", &b, &e)];
        let why = sentences(&media);
        assert_eq!(why.len(), 1, "{why:?}: direct, so no page-cache line");
        assert!(
            why[0].starts_with("old kernel: 4 of its 8 rows (SEQ1M Q8T1 read, SEQ1M Q8T1 write, RND4K Q32T1 read, RND4K Q32T1 write) asked for a queue but ran one call at a time per thread (io_uring refused (function not implemented)): their IOPS"),
            "{why:?}"
        );
        assert_eq!(
            path_note(Path::SyncDirect),
            Some("pread/pwrite: 1 in flight")
        );
        assert_eq!(path_note(Path::UringDirect), None);
    }

    #[test]
    fn the_panel_rows_stand_on_linear_axes_and_each_medium_keeps_its_colour() {
        let (a, b) = (with(panel(1.0)), with(memory(panel(2.0))));
        let (ea, eb) = (env(Some("vda")), env(None));
        // Labels whose last word means a colour elsewhere (cold, warm) keep their medium's.
        let media = [medium("disk: cold", &a, &ea), medium("shm: warm", &b, &eb)];
        let html = page(&media, None, "x").unwrap();
        for (id, axis) in [
            ("disk_rate", "MB/s (median)"),
            ("disk_iops", "IOPS (median)"),
            ("disk_latency_p50", "µs (median)"),
            ("disk_latency_p99", "µs (median)"),
        ] {
            let chart = &html[html.find(&format!("id=\"chart-{id}\"")).expect(id)..];
            let chart = &chart[..chart.find("</figure>").unwrap()];
            // 66 to 2,581 MB/s and the like span > 30x, but bars stand on a linear axis.
            assert!(chart.contains(axis) && !chart.contains("log scale"), "{id}");
        }
        let chart = &html[html.find("id=\"chart-disk_rate\"").unwrap()..];
        let chart = &chart[..chart.find("</figure>").unwrap()];
        // By order: the first medium blue, the second orange, whatever their names mean.
        assert!(
            chart.contains("#1F77B4") || chart.contains("#1f77b4"),
            "first blue"
        );
        assert!(
            chart.contains("#FF7F0E") || chart.contains("#ff7f0e"),
            "second orange"
        );
        assert!(
            !chart.contains("#D62728") && !chart.contains("#d62728"),
            "no warm red"
        );
    }
}
