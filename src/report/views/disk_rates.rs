//! `disk --rate`: an open loop at each rate asked, as one table (asked and achieved rate,
//! response and service percentiles, what was in flight, the backlog's growth), a chart
//! (response latency against offered load, service latency beside it) and the sentences the
//! data chooses: whether each rate was held, the knee, response against service, the
//! generator's own lag, and the highest rate under a latency target.

use crate::report::cells::opt;
use crate::report::columns::{self, Column};
use crate::report::csv::Table;
use crate::report::svg::{Chart, Series};
use crate::report::text::line;
use crate::report::view::Exportable;
use crate::report::views::disk_curve::time;
use crate::results::disk::{DiskRow, HELD_SHARE, OpenFigures};
use crate::results::disk_curve::pick;
use crate::results::disk_rates::{KNEE_RISE, RateSearch, RateStep, RatesReport};
use crate::units::{format_rate_iops, format_seconds, group_thousands};
use crate::warning::Warning;

/// A lag p99 of the generator above this (µs) is said: the response times carry it.
pub const LAG_SAID_US: f64 = 50.0;

fn iops(v: f64) -> String {
    group_thousands(v.round().max(0.0) as u64)
}

/// What was run, in a few words: `4K random read, 1 thread, at most 128 in flight each`.
fn what(r: &RatesReport) -> String {
    let s = &r.spec;
    format!(
        "{} {} {}, {} thread{}, at most {} in flight each, {} arrivals",
        s.split
            .map_or_else(|| crate::workload::panel::short_size(s.block), |x| x.name()),
        if s.random { "random" } else { "sequential" },
        s.direction(),
        s.threads,
        if s.threads == 1 { "" } else { "s" },
        s.depth,
        r.arrivals.name()
    )
}

/// `61,000 IOPS (78% of the peak)`, the share when the peak is known.
fn rate_of(r: &RatesReport, v: f64) -> String {
    match r.peak_iops().filter(|&p| p > 0.0) {
        Some(p) => format!(
            "{} ({:.0}% of the peak)",
            format_rate_iops(v),
            100.0 * v / p
        ),
        None => format_rate_iops(v),
    }
}

/// The closed-loop peak, one line.
pub fn peak_sentence(peak: &DiskRow) -> String {
    format!(
        "{} closed-loop at Q{}T{} ({} in flight always), p99 {}: the percents are of it",
        format_rate_iops(peak.iops),
        peak.spec.depth,
        peak.spec.threads,
        peak.spec.depth * peak.spec.threads.max(1),
        time(peak.latency_us.p99)
    )
}

/// Whether every rate was held, or which were not and what that did.
pub fn held_sentence(r: &RatesReport) -> String {
    let all = r.all_steps();
    let open: Vec<&OpenFigures> = all.iter().filter_map(|s| s.open()).collect();
    if open.is_empty() {
        return "no rate ran".to_string();
    }
    let missed: Vec<&&OpenFigures> = open.iter().filter(|o| !o.held()).collect();
    let share = |o: &OpenFigures| 100.0 * o.achieved_iops / o.asked_iops.max(1e-9);
    let cut = if r.complete {
        ""
    } else {
        " (the run was interrupted: the rates after the last row shown did not run)"
    };
    let Some(first) = missed.first() else {
        let (lo, hi) = open.iter().fold((f64::MAX, 0.0f64), |(lo, hi), o| {
            (lo.min(share(o)), hi.max(share(o)))
        });
        let range = if format!("{lo:.1}") == format!("{hi:.1}") {
            format!("{lo:.1}%")
        } else {
            format!("{lo:.1}–{hi:.1}%")
        };
        return format!(
            "every rate {} was held: each achieved {range} of its rate (within {:.0}% counts as held){cut}",
            if r.complete { "asked" } else { "that ran" },
            100.0 * (1.0 - HELD_SHARE)
        );
    };
    let mut s = format!(
        "not held from {} asked: {} completed ({:.0}%)",
        rate_of(r, first.asked_iops),
        format_rate_iops(first.achieved_iops),
        share(first)
    );
    if first.backlog_change_per_second > 0.0 {
        s.push_str(&format!(
            "; the backlog grew {} I/Os per second",
            iops(first.backlog_change_per_second)
        ));
    }
    if first.unissued > 0 {
        s.push_str(&format!(
            " and {} arrivals were never issued (in the response times at the wait they had, a lower bound)",
            group_thousands(first.unissued)
        ));
    }
    if first.capped_seconds > 0.0 {
        s.push_str(&format!(
            "; all {} slots were busy with arrivals waiting for {}: the cap held them back too (a larger --depth tells the device's limit from the cap's)",
            first.cap,
            format_seconds(first.capped_seconds)
        ));
    }
    match missed.len() {
        1 => {}
        2 => s.push_str("; 1 higher rate was not held either"),
        n => s.push_str(&format!("; {} higher rates were not held either", n - 1)),
    }
    s.push_str(cut);
    s
}

/// Where the response p99 leaves its light-load value, or that it does not.
pub fn knee_sentence(r: &RatesReport) -> String {
    let all = r.all_steps();
    let Some(light) = all.first().and_then(|s| s.open()) else {
        return "no rate ran".to_string();
    };
    if all.len() < 2 {
        return "one rate: give several (--rate 10%..100%) for a knee".to_string();
    }
    if !light.held() {
        return format!(
            "no knee to find: even the lightest rate, {}, was not held ({} completed, p99 {})",
            format_rate_iops(light.asked_iops),
            format_rate_iops(light.achieved_iops),
            time(light.response_us.p99)
        );
    }
    match r.knee() {
        Some((before, after)) => {
            let (b, a) = (
                before.open().expect("steps are open"),
                after.open().expect("steps are open"),
            );
            let why = if a.held() {
                format!(
                    "p99 is {} ({:.1}× the lightest rate's)",
                    time(a.response_us.p99),
                    a.response_us.p99 / light.response_us.p99.max(1e-9)
                )
            } else {
                format!(
                    "the rate is not held and p99 is {}",
                    time(a.response_us.p99)
                )
            };
            let there = if b.asked_iops == light.asked_iops {
                String::new()
            } else {
                format!(", where it is {}", time(b.response_us.p99))
            };
            format!(
                "response p99 stays within {KNEE_RISE:.0}× of its light-load {} up to {}{there}; at {} {why}",
                time(light.response_us.p99),
                rate_of(r, b.asked_iops),
                format_rate_iops(a.asked_iops),
            )
        }
        None => {
            let top = all.last().and_then(|s| s.open()).expect("two steps");
            format!(
                "no knee: response p99 at {} is {}, within {KNEE_RISE:.0}× of the {} at {}",
                rate_of(r, top.asked_iops),
                time(top.response_us.p99),
                time(light.response_us.p99),
                format_rate_iops(light.asked_iops)
            )
        }
    }
}

/// Response against service at the highest rate held, and the generator's own lag.
pub fn response_sentence(r: &RatesReport) -> Option<String> {
    let all = r.all_steps();
    let step = all
        .iter()
        .rev()
        .find(|s| s.open().is_some_and(OpenFigures::held))
        .or(all.last())?;
    let o = step.open()?;
    let service = &step.row.latency_us;
    let mut s = format!(
        "at {}: response p99 {} (intended start to completion) against service p99 {} (submission to completion)",
        format_rate_iops(o.asked_iops),
        time(o.response_us.p99),
        time(service.p99)
    );
    if o.response_us.p99 > 1.5 * service.p99 && o.capped_seconds > 0.0 {
        s.push_str(": I/Os waited for a free slot before the device saw them");
    } else if o.response_us.p99 > 1.5 * service.p99 || o.lag_us.p99 > LAG_SAID_US {
        s.push_str(&format!(
            ": part of the wait was before the device saw them (issued late: lag p99 {})",
            time(o.lag_us.p99)
        ));
    } else {
        s.push_str(": the wait was the device's");
    }
    Some(s)
}

/// The generator's lag, when it is large enough to matter: of the rates held whose arrivals
/// never waited for a slot (a wait for a slot is the device's, said by the response
/// sentence).
pub fn lag_sentence(r: &RatesReport) -> Option<String> {
    let worst = r
        .all_steps()
        .into_iter()
        .filter_map(|s| s.open())
        .filter(|o| o.held() && o.capped_seconds == 0.0)
        .max_by(|a, b| a.lag_us.p99.total_cmp(&b.lag_us.p99))?;
    (worst.lag_us.p99 > LAG_SAID_US).then(|| {
        format!(
            "I/Os were issued late (at {}: lag p99 {}, max {}): this machine's timer and CPU, not the device; the response times include it",
            format_rate_iops(worst.asked_iops),
            time(worst.lag_us.p99),
            time(worst.lag_us.max)
        )
    })
}

/// The answer of the search under the target.
pub fn target_sentence(r: &RatesReport, s: &RateSearch) -> String {
    let goal = format!(
        "{} < {}",
        s.target.percentile.name(),
        time(s.target.limit_us)
    );
    let tried = r.all_steps();
    let at = |v: f64| tried.iter().find(|st| st.asked_iops() == v).copied();
    // A value the unit would round onto the limit is given in µs: 3.0 ms over 3.0 ms reads
    // as a pass.
    let value = |v: f64| {
        if v > s.target.limit_us && time(v) == time(s.target.limit_us) {
            format!("{} µs", group_thousands(v.round() as u64))
        } else {
            time(v)
        }
    };
    match (s.holds_up_to, s.fails_at) {
        (Some(lo), Some(hi)) => {
            let beyond = at(hi).and_then(RateStep::open).map_or(String::new(), |o| {
                let mut b = format!(
                    "; beyond it (at {}) {} is {}",
                    format_rate_iops(hi),
                    s.target.percentile.name(),
                    value(pick(&o.response_us, s.target.percentile))
                );
                if !o.held() && o.backlog_change_per_second >= 1.0 {
                    b.push_str(&format!(
                        " and the backlog grows {} I/Os per second",
                        iops(o.backlog_change_per_second)
                    ));
                }
                b
            });
            // Rates below the answer that missed the target: the bisection assumes the
            // latency rises with the rate, and these say it did not here.
            let below: Vec<String> = tried
                .iter()
                .filter(|st| st.asked_iops() < lo && !st.holds(s.target))
                .filter_map(|st| st.open())
                .map(|o| {
                    format!(
                        "{} ({})",
                        format_rate_iops(o.asked_iops),
                        value(pick(&o.response_us, s.target.percentile))
                    )
                })
                .collect();
            let uncertain = if below.is_empty() {
                String::new()
            } else {
                format!(
                    "; but lower rates missed it too: {}, so the answer is uncertain (run again, or longer)",
                    below.join(", ")
                )
            };
            format!(
                "{goal} holds up to {}{beyond} ({} run{}){uncertain}",
                rate_of(r, lo),
                tried.len(),
                if tried.len() == 1 { "" } else { "s" }
            )
        }
        (Some(lo), None) => format!(
            "{goal} holds at every rate tried, up to {}: try higher rates for its limit",
            rate_of(r, lo)
        ),
        (None, _) => {
            let low = tried.first().and_then(|st| st.open());
            match low {
                Some(o) => format!(
                    "{goal} is not held even at the lowest rate tried ({}: {} {}{})",
                    format_rate_iops(o.asked_iops),
                    s.target.percentile.name(),
                    time(pick(&o.response_us, s.target.percentile)),
                    if o.held() { "" } else { ", the rate not held" }
                ),
                None => format!("{goal}: no rate ran"),
            }
        }
    }
}

/// What the reads' checks found, over every run.
fn verify_line(r: &RatesReport) -> String {
    super::disk::in_place_line(
        r.peak
            .iter()
            .chain(r.all_steps().into_iter().map(|s| &s.row))
            .map(|row| row.verify),
        r.header.seed,
        &r.header.file,
        &super::disk::VerifyWords {
            none_checked: "no read was checked",
            when: "",
            tail: "",
        },
    )
}

/// The findings, in the order the text prints them (label, sentence).
fn findings(r: &RatesReport) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if r.all_steps().is_empty() {
        return out;
    }
    out.push(("held", held_sentence(r)));
    out.push(("knee", knee_sentence(r)));
    if let Some(s) = response_sentence(r) {
        out.push(("response", s));
    }
    if let Some(s) = lag_sentence(r) {
        out.push(("lag", s));
    }
    if let Some(s) = &r.search {
        out.push(("target", target_sentence(r, s)));
    }
    out
}

/// Renders the open loop: what ran, the peak, the table, then the findings, the answer last.
pub fn text(r: &RatesReport) -> String {
    let mut out = String::new();
    let origin = super::disk::origin_of(&r.header, r.fill_seconds, "your file");
    super::disk::file_lines(
        &mut out,
        &r.header.file,
        r.header.file_bytes,
        &origin,
        r.header.device_name.as_deref(),
    );
    line(
        &mut out,
        "rates",
        format!(
            "open loop, {}, {} per rate{}; response = completion − intended start, service = completion − submission",
            what(r),
            format_seconds(r.header.runtime_seconds),
            if r.ramp_seconds > 0.0 {
                format!(" after a ramp of {}", format_seconds(r.ramp_seconds))
            } else {
                String::new()
            }
        ),
    );
    if let Some(p) = &r.peak {
        line(&mut out, "peak", peak_sentence(p));
    }
    let runs = r.all_steps();
    if !runs.is_empty() {
        out.push_str(&columns::for_terminal(&rate_columns(r), &runs).text);
    }
    line(&mut out, "verify", verify_line(r));
    for (label, sentence) in findings(r) {
        line(&mut out, label, sentence);
    }
    out
}

impl Exportable for RatesReport {
    const COMMAND: &'static str = "disk-rates";
    const HAS_CHART: bool = true;
    fn text(&self) -> String {
        text(self)
    }
    fn markdown(&self) -> Vec<String> {
        use crate::report::markdown::{list, table as md_table};
        let mut blocks = Vec::new();
        if let Some(p) = &self.peak {
            blocks.push(format!(
                "Peak: {}.\n",
                crate::report::markdown::escape(&peak_sentence(p))
            ));
        }
        let runs = self.all_steps();
        if !runs.is_empty() {
            blocks.push(md_table(
                &columns::markdown(&rate_columns(self), &runs),
                None,
            ));
        }
        let findings: Vec<String> = findings(self)
            .into_iter()
            .map(|(label, s)| format!("{}: {s}", crate::report::cells::capitalise(label)))
            .collect();
        if !findings.is_empty() {
            blocks.push(list("Findings:", &findings));
        }
        blocks.push(list("Notes:", &[format!("Verify: {}", verify_line(self))]));
        blocks
    }
    fn is_empty(&self) -> bool {
        self.steps.is_empty() && self.peak.is_none()
    }
    fn ok(&self) -> bool {
        RatesReport::ok(self)
    }
    fn complete(&self) -> bool {
        self.complete
    }
    fn warnings(&self) -> &[Warning] {
        &self.warnings
    }
    fn table(&self) -> Table {
        columns::csv(&rate_columns(self), &self.all_steps())
    }
    fn chart(&self) -> Option<Chart> {
        let runs = self.all_steps();
        if runs.is_empty() {
            return None;
        }
        let curve = |name: &str, f: &dyn Fn(&RateStep) -> f64| Series {
            name: name.into(),
            points: runs.iter().map(|s| (s.asked_iops(), f(s))).collect(),
        };
        let response = |s: &RateStep| s.open().map_or(0.0, |o| o.response_us.p99);
        let mut series = vec![
            curve("response p99", &response),
            curve("response p50", &|s| {
                s.open().map_or(0.0, |o| o.response_us.p50)
            }),
            curve("service p99", &|s| s.row.latency_us.p99),
        ];
        if let Some(s) = &self.search {
            let (x0, x1) = (
                runs.first().map_or(0.0, |s| s.asked_iops()),
                runs.last().map_or(0.0, |s| s.asked_iops()),
            );
            series.push(Series {
                name: format!(
                    "target: {} {}",
                    s.target.percentile.name(),
                    time(s.target.limit_us)
                ),
                points: vec![(x0, s.target.limit_us), (x1, s.target.limit_us)],
            });
        }
        Some(Chart {
            title: format!(
                "Response and service latency against offered load ({}): {}",
                what(self),
                super::disk::chart_subject(
                    self.header.scratch,
                    &self.header.file,
                    self.header.device_name.as_deref()
                )
            ),
            x_label: "offered load (I/Os per second asked)".into(),
            y_label: "latency (µs)".into(),
            series,
            ..Chart::default()
        })
    }
}

/// The table: one row per rate run, the terminal's, Markdown's and the CSV's columns in one
/// list.
fn rate_columns<'a>(r: &'a RatesReport) -> Vec<Column<'a, &'a RateStep>> {
    let peak = r.peak_iops();
    let search = r.search.as_ref();
    let open = |s: &RateStep| s.open().cloned();
    vec![
        Column::raw("run", move |s: &&RateStep| {
            if search.is_some_and(|x| x.steps.iter().any(|t| std::ptr::eq(t, *s))) {
                "search".to_string()
            } else {
                "step".to_string()
            }
        }),
        Column::new("asked", "IOPS", 0, |s: &&RateStep| iops(s.asked_iops()))
            .csv("asked_iops", |s: &&RateStep| s.asked_iops().to_string()),
        Column::new("of peak", "%", 3, move |s: &&RateStep| match peak {
            Some(p) if p > 0.0 => format!("{:.0}", 100.0 * s.asked_iops() / p),
            _ => "-".to_string(),
        })
        .csv("percent_of_peak", move |s: &&RateStep| {
            opt(peak
                .filter(|&p| p > 0.0)
                .map(|p| 100.0 * s.asked_iops() / p))
        }),
        Column::new("achieved", "IOPS", 0, move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| {
                format!(
                    "{}{}",
                    iops(o.achieved_iops),
                    if o.held() { "" } else { " ✗" }
                )
            })
        })
        .markdown_cell(move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| {
                format!(
                    "{}{}",
                    iops(o.achieved_iops),
                    if o.held() { "" } else { " (not held)" }
                )
            })
        })
        .csv("achieved_iops", move |s: &&RateStep| {
            opt(open(s).map(|o| o.achieved_iops))
        }),
        Column::raw("held", move |s: &&RateStep| opt(open(s).map(|o| o.held()))),
        Column::new("resp p50", "", 4, move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| time(o.response_us.p50))
        })
        .csv("response_p50_us", move |s: &&RateStep| {
            opt(open(s).map(|o| o.response_us.p50))
        }),
        Column::new("resp p99", "", 0, move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| time(o.response_us.p99))
        })
        .csv("response_p99_us", move |s: &&RateStep| {
            opt(open(s).map(|o| o.response_us.p99))
        }),
        Column::new("resp p99.9", "", 2, move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| time(o.response_us.p99_9))
        })
        .csv("response_p99_9_us", move |s: &&RateStep| {
            opt(open(s).map(|o| o.response_us.p99_9))
        }),
        Column::raw("response_max_us", move |s: &&RateStep| {
            opt(open(s).map(|o| o.response_us.max))
        }),
        Column::raw("service_p50_us", |s: &&RateStep| {
            s.row.latency_us.p50.to_string()
        }),
        Column::new("serv p99", "", 1, |s: &&RateStep| {
            time(s.row.latency_us.p99)
        })
        .csv("service_p99_us", |s: &&RateStep| {
            s.row.latency_us.p99.to_string()
        }),
        Column::raw("lag_p99_us", move |s: &&RateStep| {
            opt(open(s).map(|o| o.lag_us.p99))
        }),
        Column::new("in flight", "", 5, move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| format!("{}/{}", o.most_in_flight, o.cap))
        })
        .heading("most in flight / cap")
        .csv("most_in_flight", move |s: &&RateStep| {
            opt(open(s).map(|o| o.most_in_flight))
        }),
        Column::raw("cap", move |s: &&RateStep| opt(open(s).map(|o| o.cap))),
        Column::new("backlog", "/s", 6, move |s: &&RateStep| {
            open(s).map_or("-".into(), |o| {
                let g = o.backlog_change_per_second;
                if g.abs() < 1.0 {
                    "0".to_string()
                } else {
                    format!("{}{}", if g > 0.0 { "+" } else { "-" }, iops(g.abs()))
                }
            })
        })
        .heading("backlog growth")
        .csv("backlog_change_per_second", move |s: &&RateStep| {
            opt(open(s).map(|o| o.backlog_change_per_second))
        }),
        Column::raw("unissued", move |s: &&RateStep| {
            opt(open(s).map(|o| o.unissued))
        }),
        Column::raw("capped_seconds", move |s: &&RateStep| {
            opt(open(s).map(|o| o.capped_seconds))
        }),
        Column::raw("path", |s: &&RateStep| s.row.path.saved_name()),
        Column::raw("ios", |s: &&RateStep| s.row.ios.to_string()),
        Column::raw("seconds", |s: &&RateStep| s.row.seconds.to_string()),
    ]
}
