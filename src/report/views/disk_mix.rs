//! `disk`'s mixes (`--rw randrw`, a panel's Mix rows): each mix set against the pure read
//! and write rows of its shape. Its table (the mix's MB/s and IOPS, what the pure rows
//! predict for it, the share that read as the app and the device counted it, each
//! direction's p99 beside the pure row's) and one sentence per mix on what mixing cost,
//! chosen by the numbers through [`crate::measure::verdict`].

use crate::measure::verdict::{Figure, Relation, relate};
use crate::report::cells::{opt, us};
use crate::report::columns::Column;
use crate::results::disk::{DiskRow, MixFigures, predicted_mix_iops};
use crate::units::{MB, group_thousands};
use crate::workload::Op;

/// A mix with the pure rows of its shape, if they ran.
pub(crate) struct Mixed<'a> {
    /// The mix row.
    pub row: &'a DiskRow,
    /// Its reads and writes apart.
    pub mix: &'a MixFigures,
    /// The pure read row of the same shape.
    pub read: Option<&'a DiskRow>,
    /// The pure write row of the same shape.
    pub write: Option<&'a DiskRow>,
}

/// The measured mixes of `rows`, each with its pure rows.
pub(crate) fn mixes(rows: &[DiskRow]) -> Vec<Mixed<'_>> {
    let pure = |of: &DiskRow, op: Op| {
        rows.iter()
            .find(|x| x.spec == of.spec.pure(op) && x.measured() && x.spec.mix.is_none())
    };
    rows.iter()
        .filter(|r| r.measured())
        .filter_map(|r| {
            Some(Mixed {
                row: r,
                mix: r.mix.as_ref()?,
                read: pure(r, Op::Read),
                write: pure(r, Op::Write),
            })
        })
        .collect()
}

impl Mixed<'_> {
    /// The IOPS the pure rows predict for the mix's achieved read share (the harmonic
    /// mean), with the range their runs allow.
    pub fn predicted(&self) -> Option<Figure> {
        let (read, write) = (self.read?.iops_figure(), self.write?.iops_figure());
        let share = self.mix.read_share();
        Some(Figure {
            median: predicted_mix_iops(share, read.median, write.median)?,
            min: predicted_mix_iops(share, read.min, write.min)?,
            max: predicted_mix_iops(share, read.max, write.max)?,
            n: read.n.min(write.n),
        })
    }
}

/// The sentence of one mix: its rate by direction, what mixing cost against the pure rows,
/// its reads' p99 against the pure read row's, and the share that read, the app's beside
/// the device's.
pub(crate) fn sentence(m: &Mixed) -> String {
    let (r, x) = (m.row, m.mix);
    let mut out = format!(
        "{}: {} IOPS ({} reads and {} writes per second)",
        r.label(),
        group_thousands(r.iops.round() as u64),
        group_thousands(x.read.iops.round() as u64),
        group_thousands(x.write.iops.round() as u64),
    );
    let share = x.read_share();
    match (m.predicted(), m.read, m.write) {
        (Some(p), Some(read), Some(write)) => {
            let how = format!(
                "the {} IOPS the pure rows predict for this mix ({:.0}% of I/Os at their {} read IOPS, the rest at their {} write IOPS: the time per I/O adds up)",
                group_thousands(p.median.round() as u64),
                100.0 * share,
                group_thousands(read.iops.round() as u64),
                group_thousands(write.iops.round() as u64)
            );
            out.push_str(&match relate(r.iops_figure(), p) {
                Relation::Same => format!("; as {how}"),
                Relation::Below(k) => format!(
                    "; {:.0}% below {how}: mixing itself cost that much",
                    100.0 * (1.0 - k)
                ),
                Relation::Above(k) => format!(
                    "; {k:.2}x {how}: the device served reads and writes side by side better than either alone"
                ),
                Relation::Unclear(k) => format!(
                    "; {k:.2}x {how}, within the spread of the runs: no cost claimed"
                ),
            });
        }
        _ => out.push_str("; the pure read and write rows did not both run: no cost measured"),
    }
    if let Some(read) = m.read.filter(|_| x.read.ios > 0) {
        out.push_str(&format!(
            "; its reads' p99 {} µs against {} µs in the pure read row",
            us(x.read.latency_us.p99),
            us(read.latency_us.p99)
        ));
        let k = x.read.latency_us.p99 / read.latency_us.p99.max(1e-9);
        if k >= 1.5 {
            out.push_str(&format!(" ({k:.1}x: reads waited behind writes)"));
        }
    }
    out.push_str(&format!(
        "; {:.1}% of its I/Os read ({}% asked)",
        100.0 * share,
        x.read_percent
    ));
    out.push_str(&match x.device_read_share {
        None => "; the device's share is unknown (no block device or no request reached it)"
            .to_string(),
        Some(d) if x.shares_disagree() => format!(
            "; the device's requests were {:.1}% reads, {:.1} points off: requests merged or split on the way down, or other processes' I/O (the counters are everybody's)",
            100.0 * d,
            (100.0 * (d - share)).abs()
        ),
        Some(d) => format!(
            ", {:.1}% of the device's requests: the mix reached it as asked",
            100.0 * d
        ),
    });
    out
}

/// The mixes' table (the terminal's and Markdown's): each mix against its pure rows.
pub(crate) fn table<'a>() -> Vec<Column<'a, Mixed<'a>>> {
    vec![
        Column::new("mix", "", 0, |m: &Mixed| m.row.name.clone()).left(),
        Column::new("r/w", "", 2, |m: &Mixed| {
            format!("{}/{}", m.mix.read_percent, 100 - m.mix.read_percent)
        }),
        Column::new("MB/s", "", 1, |m: &Mixed| {
            format!("{:.1}", m.row.bytes_per_second / MB)
        }),
        Column::new("IOPS", "", 0, |m: &Mixed| {
            group_thousands(m.row.iops.round() as u64)
        }),
        Column::new("predicted", "IOPS", 0, |m: &Mixed| {
            opt(m
                .predicted()
                .map(|p| group_thousands(p.median.round() as u64)))
        }),
        Column::new("reads", "", 3, |m: &Mixed| {
            format!("{:.1}%", 100.0 * m.mix.read_share())
        }),
        Column::new("device", "reads", 4, |m: &Mixed| {
            opt(m
                .mix
                .device_read_share
                .map(|d| format!("{:.1}%", 100.0 * d)))
        }),
        Column::new("read p99", "µs", 1, |m: &Mixed| {
            us(m.mix.read.latency_us.p99)
        }),
        Column::new("p99 alone", "µs", 2, |m: &Mixed| {
            opt(m.read.map(|r| us(r.latency_us.p99)))
        }),
        Column::new("write p99", "µs", 3, |m: &Mixed| {
            us(m.mix.write.latency_us.p99)
        }),
    ]
}

/// The CSV's and JSON-less readers' columns of a mix on the panel's table: empty on a row
/// that is not one.
pub(crate) fn csv_columns<'a>() -> Vec<Column<'a, DiskRow>> {
    fn mix(r: &DiskRow) -> Option<&MixFigures> {
        r.mix.as_ref()
    }
    vec![
        Column::raw("mix_read_percent", |r: &DiskRow| opt(r.spec.mix)),
        Column::raw("mix_read_share", |r: &DiskRow| {
            opt(mix(r).map(MixFigures::read_share))
        }),
        Column::raw("mix_device_read_share", |r: &DiskRow| {
            opt(mix(r).and_then(|m| m.device_read_share))
        }),
        Column::raw("mix_read_iops", |r: &DiskRow| {
            opt(mix(r).map(|m| m.read.iops))
        }),
        Column::raw("mix_write_iops", |r: &DiskRow| {
            opt(mix(r).map(|m| m.write.iops))
        }),
        Column::raw("mix_read_p99_us", |r: &DiskRow| {
            opt(mix(r).map(|m| m.read.latency_us.p99))
        }),
        Column::raw("mix_write_p99_us", |r: &DiskRow| {
            opt(mix(r).map(|m| m.write.latency_us.p99))
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::devstats::DeviceView;
    use crate::results::disk::{Latency, MixSide};

    /// A pure read row of 90k IOPS (p99 200 µs), a pure write row of 30k, and a 70/30 mix
    /// of `iops` whose reads' p99 is `read_p99` and whose device saw `device_reads` of
    /// every 1000 requests as reads.
    fn panel(iops: f64, read_p99: f64, device_reads: Option<u64>) -> Vec<DiskRow> {
        let read = DiskRow::made_up(Op::Read, 32, 90_000.0, 100.0, 200.0);
        let write = DiskRow::made_up(Op::Write, 32, 30_000.0, 300.0, 900.0);
        let mut mix = DiskRow::made_up(Op::Write, 32, iops, 150.0, 700.0);
        mix.spec = mix.spec.mixed(70);
        let side = |ios: f64, p99: f64| MixSide {
            ios: ios as u64,
            bytes: ios as u64 * 4096,
            iops: ios,
            bytes_per_second: ios * 4096.0,
            latency_us: Latency {
                p99,
                ..Latency::default()
            },
        };
        mix.mix = Some(MixFigures {
            read_percent: 70,
            read: side(0.7 * iops, read_p99),
            write: side(0.3 * iops, 800.0),
            device_read_share: device_reads.map(|r| r as f64 / 1000.0),
        });
        mix.device = device_reads.map(|r| DeviceView {
            reads: r,
            writes: 1000 - r,
            ..DeviceView::default()
        });
        vec![read, write, mix]
    }

    fn said(rows: &[DiskRow]) -> String {
        let m = mixes(rows);
        assert_eq!(m.len(), 1);
        sentence(&m[0])
    }

    #[test]
    fn the_pure_rows_predict_the_harmonic_mean_of_their_rates() {
        // 70% at 90k and 30% at 30k: 0.7/90k + 0.3/30k = 17.78 µs per I/O, 56,250 IOPS.
        let rows = panel(56_000.0, 220.0, Some(700));
        let p = mixes(&rows)[0].predicted().unwrap();
        assert!((p.median - 56_250.0).abs() < 1.0, "{p:?}");
        let s = said(&rows);
        assert!(
            s.contains("; as the 56,250 IOPS the pure rows predict"),
            "{s}"
        );
        assert!(
            s.contains("70.0% of the device's requests: the mix reached it as asked"),
            "{s}"
        );
        assert!(!s.contains("waited behind writes"), "{s}");
    }

    #[test]
    fn a_mix_slower_than_its_parts_says_what_mixing_cost_and_whose_reads_waited() {
        let s = said(&panel(40_000.0, 900.0, Some(700)));
        assert!(s.contains("29% below the 56,250 IOPS"), "{s}");
        assert!(s.contains("mixing itself cost that much"), "{s}");
        assert!(s.contains("its reads' p99 900 µs against 200 µs in the pure read row (4.5x: reads waited behind writes)"), "{s}");
    }

    #[test]
    fn a_mix_faster_than_its_parts_is_said_so_not_called_a_cost() {
        // Devices with separate read and write paths can beat the harmonic mean.
        let s = said(&panel(80_000.0, 150.0, Some(700)));
        assert!(s.contains("1.42x the 56,250 IOPS"), "{s}");
        assert!(s.contains("side by side better than either alone"), "{s}");
        assert!(!s.contains("cost"), "{s}");
    }

    #[test]
    fn the_devices_share_far_from_the_apps_is_said_and_none_is_unknown() {
        let s = said(&panel(56_000.0, 220.0, Some(650)));
        assert!(
            s.contains("the device's requests were 65.0% reads, 5.0 points off"),
            "{s}"
        );
        let s = said(&panel(56_000.0, 220.0, None));
        assert!(s.contains("the device's share is unknown"), "{s}");
        // Within half a point: as asked.
        let s = said(&panel(56_000.0, 220.0, Some(704)));
        assert!(s.contains("the mix reached it as asked"), "{s}");
    }

    #[test]
    fn a_mix_without_its_pure_rows_claims_no_cost() {
        let rows = panel(56_000.0, 220.0, Some(700));
        let s = said(&rows[2..]);
        assert!(s.contains("did not both run: no cost measured"), "{s}");
        assert!(!s.contains("p99"), "{s}");
    }
}
