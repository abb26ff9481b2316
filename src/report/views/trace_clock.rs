//! `trace`'s clock section: whether the vDSO was hidden and what each clock read cost, and
//! the regions the program timed — which calls fell inside each and which (fsync, close)
//! after it, so a figure computed over the region is read for what it covers. Every
//! sentence is chosen by the counts and, where two rates are compared, by the one rule
//! (`measure::verdict`).

use crate::measure::verdict::{self, Figure, Relation};
use crate::report::svg::Series;
use crate::report::text::line;
use crate::trace::clock::{ClockReport, Kin, Region, SYNCS, Unattributed, Vdso};
use crate::units::{format_mib_per_s, format_seconds, format_size, group_thousands};

/// Regions shown in the text (all kept ones are in --json).
const SHOWN: usize = 8;

/// A region moving less than this share of the largest one's bytes is not shown in the
/// text (a result printed between two timed tests, a configuration file read).
const SMALL: f64 = 0.01;

/// The clock line and one line per region shown.
pub fn text(out: &mut String, c: &ClockReport, run_seconds: f64) {
    line(out, "clock", clock_sentence(c, run_seconds));
    for why in &c.not_hidden {
        line(
            out,
            "",
            format!("vDSO not hidden in a program ({why}): its clock reads are not seen"),
        );
    }
    if let Some(u) = &c.unattributed_first {
        line(out, "", unattributed_sentence(c.unattributed, u));
    }
    if c.regions_found == 0 {
        return;
    }
    let shown = shown(c);
    line(
        out,
        "regions",
        if shown.len() as u64 == c.regions_found {
            format!(
                "{} timed region(s): intervals between two consecutive clock reads of one thread in which it moved data",
                c.regions_found
            )
        } else {
            format!(
                "{} timed region(s) (intervals between two consecutive clock reads of one thread in which it moved data); the {} moving the most bytes, in time order (those under 1% of the largest's bytes, and all kept, in --json):",
                group_thousands(c.regions_found),
                shown.len()
            )
        },
    );
    if c.regions_across > 0 {
        line(
            out,
            "",
            format!(
                "{} of them timed around other tasks' I/O: a thread that moved no data between its two clock reads while other threads of its process, or processes it started, did",
                group_thousands(c.regions_across)
            ),
        );
    }
    for (i, r) in shown {
        line(out, &format!("region {}", i + 1), region_sentence(r));
    }
}

/// The intervals timed around I/O that could not be attributed: how many, and the first.
pub fn unattributed_sentence(count: u64, u: &Unattributed) -> String {
    let pids: Vec<String> = u.io_pids.iter().map(|p| p.to_string()).collect();
    format!(
        "{} interval(s) timed by a thread that moved no data while only traced processes outside its process and its descendants did: not attributed (the first: thread {} of process {}, {} .. {} into the run, I/O of process {})",
        group_thousands(count),
        u.tid,
        u.pid,
        format_seconds(u.start_seconds),
        format_seconds(u.end_seconds),
        join_and(&pids)
    )
}

/// "thread 12", "child process 40 (dd)" and so on, for a region timed around other tasks'
/// I/O; with the count of those not named.
fn doers(r: &Region) -> String {
    let mut words: Vec<String> = r
        .io_of
        .iter()
        .map(|d| {
            let id = if d.relation == Kin::Thread {
                d.tid
            } else {
                d.pid
            };
            match &d.program {
                Some(p) => format!(
                    "{} {id} ({})",
                    d.relation.words(),
                    crate::text::printable(p)
                ),
                None => format!("{} {id}", d.relation.words()),
            }
        })
        .collect();
    let more = r.io_tasks.saturating_sub(r.io_of.len() as u64);
    if more > 0 {
        words.push(format!("{} more task(s)", group_thousands(more)));
    }
    join_and(&words)
}

/// The regions the text shows, with their index among the kept ones: the [`SHOWN`] moving
/// the most bytes, none under [`SMALL`] of the largest, in time order.
pub fn shown(c: &ClockReport) -> Vec<(usize, &Region)> {
    let largest = c.regions.iter().map(Region::bytes).max().unwrap_or(0);
    let mut v: Vec<(usize, &Region)> = c
        .regions
        .iter()
        .enumerate()
        .filter(|(_, r)| r.bytes() as f64 >= SMALL * largest as f64)
        .collect();
    v.sort_by_key(|(i, r)| (std::cmp::Reverse(r.bytes()), *i));
    v.truncate(SHOWN);
    v.sort_by_key(|(i, _)| *i);
    v
}

/// Which way the vDSO ran, the reads seen, and what they cost: the added time set against
/// the run by the one rule.
pub fn clock_sentence(c: &ClockReport, run_seconds: f64) -> String {
    let reads = if c.reads.is_empty() {
        "no clock reads seen".to_string()
    } else {
        let by: Vec<String> = c
            .reads
            .iter()
            .map(|(n, k)| format!("{n} {}", group_thousands(*k)))
            .collect();
        format!(
            "{} clock read(s) ({})",
            group_thousands(c.total_reads()),
            by.join(", ")
        )
    };
    match c.vdso {
        Vdso::Keep if c.total_reads() == 0 => format!(
            "vDSO kept (--vdso keep): clock reads through it are not seen, so the regions the program timed are not found; {reads}"
        ),
        Vdso::Keep => format!(
            "vDSO kept (--vdso keep): clock reads through it are not seen; {reads} made as system calls were seen, and {}",
            match c.regions_found {
                0 => "they bound no interval that moved data".to_string(),
                n => format!(
                    "the {} timed region(s) below come from those alone",
                    group_thousands(n)
                ),
            }
        ),
        Vdso::Hide => {
            let mut s = format!("vDSO hidden (the default; --vdso keep leaves it): {reads}");
            let cost = match (c.read_seconds_traced, c.read_seconds_vdso) {
                (Some(traced), Some(vdso)) => format!(
                    "about {} through the kernel under trace instead of {} through the vDSO",
                    format_seconds(traced),
                    format_seconds(vdso)
                ),
                _ => String::new(),
            };
            if c.total_reads() == 0 {
                s.push_str(
                    " (a program that does not time, or reads the CPU's counter directly, shows none)",
                );
                if !cost.is_empty() {
                    s.push_str(&format!("; each would cost {cost}"));
                }
            } else if let Some(added) = c.added_seconds()
                && !cost.is_empty()
            {
                let share = if verdict::same(run_seconds, (run_seconds - added).max(0.0)) {
                    format!("within 10% of the run's {}", format_seconds(run_seconds))
                } else {
                    format!(
                        "more than 10% of the run's {}: --vdso keep runs its clock at full speed (and finds no regions)",
                        format_seconds(run_seconds)
                    )
                };
                s.push_str(&format!(
                    ", each {cost}: about {} added, {share}",
                    format_seconds(added)
                ));
            }
            s.push_str(
                "; a program that looks for its vDSO itself (getauxval(AT_SYSINFO_EHDR)) finds none and may behave otherwise than untraced",
            );
            s
        }
    }
}

/// The order calls after a region are told in: syncs before the close.
const AFTER_ORDER: &[&str] = &["fsync", "fdatasync", "sync_file_range", "msync", "close"];

/// `n name()` for each call, most calls first (or, `after`, syncs before the close):
/// "1,024 write() (64 MiB) and fsync()".
fn calls(list: &[(String, u64, u64)], after: bool) -> String {
    let mut v = list.to_vec();
    if after {
        v.sort_by_key(|(n, _, _)| AFTER_ORDER.iter().position(|a| a == n));
    } else {
        v.sort_by_key(|(n, k, _)| (std::cmp::Reverse(*k), n.clone()));
    }
    let words: Vec<String> = v
        .iter()
        .map(|(n, k, b)| {
            let count = if *k == 1 {
                String::new()
            } else {
                format!("{} ", group_thousands(*k))
            };
            if *b > 0 {
                format!("{count}{n}() ({})", format_size(*b))
            } else {
                format!("{count}{n}()")
            }
        })
        .collect();
    join_and(&words)
}

/// "a", "a and b", "a, b and c".
fn join_and(words: &[String]) -> String {
    match words {
        [] => String::new(),
        [one] => one.clone(),
        [head @ .., last] => format!("{} and {last}", head.join(", ")),
    }
}

/// One region: its time, what was inside, the rate over it, and whether fsync and close
/// were inside or after it.
pub fn region_sentence(r: &Region) -> String {
    let inside: Vec<(String, u64, u64)> = r
        .inside
        .iter()
        .map(|(n, m)| (n.clone(), m.calls, m.bytes))
        .collect();
    let after: Vec<(String, u64, u64)> = r.after.iter().map(|(n, k)| (n.clone(), *k, 0)).collect();
    let who = match (r.across(), r.pid) {
        (true, Some(pid)) => format!("thread {} of process {pid}", r.tid),
        _ => format!("thread {}", r.tid),
    };
    let around = if r.across() {
        format!(
            ", timed around the I/O of its {}, moving no data itself",
            doers(r)
        )
    } else {
        String::new()
    };
    let mut s = format!(
        "{who}, {} .. {} into the run ({} by {}){around}: {} inside = {} over the region",
        format_seconds(r.start_seconds),
        format_seconds(r.end_seconds),
        format_seconds(r.seconds()),
        r.clock,
        calls(&inside, false),
        format_mib_per_s(r.bytes_per_second_over_region)
    );
    let syncs_inside: Vec<String> = SYNCS
        .iter()
        .filter(|n| r.closing_inside.contains_key(**n))
        .map(|n| format!("{n}()"))
        .collect();
    if !syncs_inside.is_empty() {
        s.push_str(&format!(
            "; {} inside: a figure over this region includes it",
            join_and(&syncs_inside)
        ));
        if !after.is_empty() {
            s.push_str(&format!("; then {} after it", calls(&after, true)));
        }
    } else if !after.is_empty() {
        s.push_str(&format!(
            "; {} after it: a figure over this region leaves {} out",
            calls(&after, true),
            if after.iter().map(|a| a.1).sum::<u64>() == 1 {
                "it"
            } else {
                "them"
            }
        ));
        if let Some(with) = r.bytes_per_second_with_after {
            s.push_str(&with_after(r.bytes_per_second_over_region, with));
        }
    } else if r.bytes_written > 0 && r.across() {
        s.push_str(
            "; no fsync inside it (calls after a region timed around other tasks' I/O are not followed): what they wrote may still be only in the page cache",
        );
    } else if r.bytes_written > 0 {
        s.push_str(
            "; no fsync inside or after it: what it wrote may still be only in the page cache",
        );
    }
    s
}

/// The rate over the region set against the rate up to the end of the calls after it.
fn with_after(over: f64, with: f64) -> String {
    match verdict::relate(Figure::one(over), Figure::one(with)) {
        Relation::Same => format!(
            " (counted up to the last of them, {}: the same within 10%, so leaving them out changes little here)",
            format_mib_per_s(with)
        ),
        Relation::Above(r) => format!(
            " (counted up to the last of them, {}: the region's figure is {r:.2}x that)",
            format_mib_per_s(with)
        ),
        Relation::Below(_) | Relation::Unclear(_) => {
            format!(
                " (counted up to the last of them, {})",
                format_mib_per_s(with)
            )
        }
    }
}

/// Marks for the offsets chart: per region shown, a row of points at offset 0 along the
/// accesses it covered in its busiest charted file (`charted`: the files drawn).
pub fn chart_marks(c: &ClockReport, charted: &[String]) -> Vec<Series> {
    const POINTS: u64 = 16;
    shown(c)
        .into_iter()
        .filter_map(|(i, r)| {
            let f = r
                .files
                .iter()
                .filter(|f| charted.contains(&f.path))
                .max_by_key(|f| f.last_access - f.first_access)?;
            let span = f.last_access - f.first_access;
            let points = (0..=POINTS)
                .map(|k| ((f.first_access + span * k / POINTS) as f64, 0.0))
                .collect();
            Some(Series {
                name: format!(
                    "timed region {} on {}: accesses {}..{}{}",
                    i + 1,
                    crate::text::printable(&f.path),
                    f.first_access,
                    f.last_access,
                    if r.syncs_inside() > 0 {
                        ", fsync inside"
                    } else if r.syncs_after() > 0 {
                        ", fsync after"
                    } else {
                        ""
                    }
                ),
                points,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::clock::{Moved, RegionFile};
    use std::collections::BTreeMap;

    fn region(inside: &[(&str, u64, u64)], after: &[(&str, u64)], with: Option<f64>) -> Region {
        Region {
            tid: 7,
            clock: "gettimeofday".into(),
            pid: None,
            io_of: Vec::new(),
            io_tasks: 0,
            start_seconds: 1.0,
            end_seconds: 1.1,
            inside: inside
                .iter()
                .map(|&(n, calls, bytes)| (n.to_string(), Moved { calls, bytes }))
                .collect(),
            closing_inside: inside
                .iter()
                .filter(|i| i.0 == "fsync" || i.0 == "close")
                .map(|&(n, calls, _)| (n.to_string(), calls))
                .collect(),
            bytes_read: 0,
            bytes_written: inside.iter().map(|i| i.2).sum(),
            after: after.iter().map(|&(n, k)| (n.to_string(), k)).collect(),
            after_end_seconds: with.map(|_| 1.5),
            bytes_per_second_over_region: 640.0 * 1048576.0,
            bytes_per_second_with_after: with,
            files: vec![RegionFile {
                path: "F".into(),
                first_access: 0,
                last_access: 1023,
            }],
        }
    }

    #[test]
    fn an_fsync_after_the_region_is_said_to_be_left_out_with_the_rate_that_counts_it() {
        let r = region(
            &[("write", 1024, 64 << 20)],
            &[("fsync", 1), ("close", 1)],
            Some(128.0 * 1048576.0),
        );
        let s = region_sentence(&r);
        assert!(s.contains("1,024 write() (64 MiB) inside"), "{s}");
        assert!(
            s.contains("fsync() and close() after it: a figure over this region leaves them out"),
            "{s}"
        );
        assert!(
            s.contains("128 MiB/s: the region's figure is 5.00x that"),
            "{s}"
        );
    }

    #[test]
    fn an_fsync_after_that_costs_nothing_is_said_to_change_little() {
        // The usual story (fsync makes the figure look better) contradicted: the rate up
        // to the fsync's end is within 10% of the region's.
        let r = region(
            &[("write", 1024, 64 << 20)],
            &[("fsync", 1)],
            Some(600.0 * 1048576.0),
        );
        let s = region_sentence(&r);
        assert!(s.contains("leaves it out"), "{s}");
        assert!(
            s.contains("the same within 10%, so leaving them out changes little"),
            "{s}"
        );
        assert!(!s.contains("x that"), "{s}");
    }

    #[test]
    fn an_fsync_inside_is_said_to_be_included_and_a_later_one_after() {
        let r = region(
            &[("write", 1024, 64 << 20), ("fsync", 1, 0)],
            &[("fsync", 1)],
            Some(100.0),
        );
        let s = region_sentence(&r);
        assert!(
            s.contains("fsync() inside: a figure over this region includes it"),
            "{s}"
        );
        assert!(s.contains("then fsync() after it"), "{s}");
        assert!(!s.contains("leaves"), "{s}");
    }

    #[test]
    fn writes_with_no_fsync_anywhere_are_said_to_be_maybe_only_cached() {
        let s = region_sentence(&region(&[("write", 3, 300)], &[], None));
        assert!(s.contains("3 write() (300 B) inside"), "{s}");
        assert!(s.contains("no fsync inside or after it"), "{s}");
    }

    fn report(reads: u64, traced: f64) -> ClockReport {
        ClockReport {
            vdso: Vdso::Hide,
            programs_hidden: 1,
            programs_without_vdso: 0,
            not_hidden: Vec::new(),
            reads: BTreeMap::from([("clock_gettime".to_string(), reads)]),
            read_seconds_traced: Some(traced),
            read_seconds_vdso: Some(20e-9),
            regions_found: 0,
            regions: Vec::new(),
            regions_across: 0,
            unattributed: 0,
            unattributed_first: None,
        }
    }

    #[test]
    fn the_clock_cost_is_within_the_run_or_named_as_a_reason_to_keep_the_vdso() {
        let few = clock_sentence(&report(4, 15e-6), 1.0);
        assert!(few.contains("vDSO hidden (the default"), "{few}");
        assert!(
            few.contains("each about 15.00 µs through the kernel under trace instead of 20 ns"),
            "{few}"
        );
        assert!(few.contains("within 10% of the run"), "{few}");
        // A program that reads its clock per call: a million reads at 15 µs in a 20 s run.
        let many = clock_sentence(&report(1_000_000, 15e-6), 20.0);
        assert!(
            many.contains("more than 10% of the run's 20.000 s: --vdso keep"),
            "{many}"
        );
        let mut kept = report(2, 15e-6);
        kept.vdso = Vdso::Keep;
        let k = clock_sentence(&kept, 1.0);
        assert!(k.starts_with("vDSO kept (--vdso keep)"), "{k}");
        assert!(!k.contains("added"), "{k}");
        assert!(!k.contains("getauxval"), "{k}");
    }

    #[test]
    fn a_hidden_vdso_is_said_with_the_cost_of_a_read_even_when_none_was_seen() {
        let mut empty = report(0, 15e-6);
        empty.reads.clear();
        let none = clock_sentence(&empty, 1.0);
        assert!(none.contains("no clock reads seen"), "{none}");
        assert!(
            none.contains(
                "each would cost about 15.00 µs through the kernel under trace instead of 20 ns"
            ),
            "{none}"
        );
        assert!(
            none.contains("getauxval(AT_SYSINFO_EHDR)) finds none"),
            "{none}"
        );
        let some = clock_sentence(&report(4, 15e-6), 1.0);
        assert!(
            some.contains("getauxval(AT_SYSINFO_EHDR)) finds none"),
            "{some}"
        );
    }
}
