//! Baselines: the document `--save-baseline` keeps (the whole result, every run of every
//! figure, the environment, who measured when) and what `--baseline` finds against one: per
//! figure the change, its confidence interval and the verdict by the one rule
//! ([`crate::measure::baseline::compare`]), the figures only one side has, and what changed
//! in the environment since (the first thing to suspect). Pure: the files are
//! `report::baseline`'s.

use super::figures::Figure;
use crate::measure::baseline::{Change, Runs, compare, groups, median};
use crate::measure::env::Environment;
use crate::measure::host::Host;
use crate::measure::verdict::{LEVEL_FROM_PROCESSES, LOAD_MOVED, Movement, same};
use crate::units::format_size;
use serde::{Deserialize, Serialize};

/// The schema of a baseline document.
pub const BASELINE_SCHEMA: &str = "ioscope/baseline/v1";

/// The most figures, and runs of one figure, a baseline may hold (a crafted file must not
/// make the comparison take an hour).
pub const MAX_FIGURES: usize = 10_000;
/// See [`MAX_FIGURES`].
pub const MAX_RUNS: usize = 10_000;

/// A saved baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    /// [`BASELINE_SCHEMA`].
    pub schema: String,
    /// The command that measured it (`sweep`, `disk`, `study`).
    pub command: String,
    /// Its name (`--save-baseline NAME`).
    pub name: String,
    /// The ioscope version that saved it.
    pub version: String,
    /// The commit ioscope was built from, when known.
    #[serde(default)]
    pub commit: Option<String>,
    /// The UTC date and time it was measured (`YYYY-MM-DD HH:MM`).
    #[serde(default)]
    pub date: Option<String>,
    /// The dates of the moments measured since and added to it (`--add-to-baseline`), in
    /// order: a baseline over several moments carries the machine's drift between them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<String>,
    /// The command line that measured it.
    #[serde(default)]
    pub command_line: Vec<String>,
    /// Kernel, CPU, memory, file system, device, scheduler, read-ahead.
    #[serde(default)]
    pub environment: Environment,
    /// Host name, governor, free memory, mount options, device model.
    #[serde(default)]
    pub host: Host,
    /// Every figure with every run.
    pub figures: Vec<Figure>,
    /// The whole result, as its JSON document has it (latency summaries included).
    #[serde(default)]
    pub result: serde_json::Value,
}

impl Baseline {
    /// Why this document cannot be compared with a result of `command`, if it cannot: the
    /// wrong schema or command, or figures no measurement gives (no runs, a value that is
    /// not a positive finite number, a key twice, too many).
    pub fn refusal(&self, command: &str) -> Option<String> {
        if self.schema != BASELINE_SCHEMA {
            return Some(format!(
                "its schema is '{}', not {BASELINE_SCHEMA}",
                crate::text::printable(&self.schema)
            ));
        }
        if self.command != command {
            return Some(format!(
                "it is a baseline of `{}`, not of `{}`; compare it with `ioscope {}`",
                invocation(&crate::text::printable(&self.command)),
                invocation(command),
                invocation(&crate::text::printable(&self.command)),
            ));
        }
        if self.figures.len() > MAX_FIGURES {
            return Some(format!("it holds more than {MAX_FIGURES} figures"));
        }
        let mut keys = std::collections::HashSet::new();
        for f in &self.figures {
            let key = crate::text::printable(&f.key);
            if f.runs.is_empty() || f.runs.len() > MAX_RUNS {
                return Some(format!(
                    "figure '{key}' has {} runs (1 to {MAX_RUNS})",
                    f.runs.len()
                ));
            }
            if let Some(v) = f.runs.iter().find(|v| !v.is_finite() || **v <= 0.0) {
                return Some(format!(
                    "figure '{key}' has a run of {v}, not a positive number"
                ));
            }
            for (whose, counts) in [("processes'", &f.processes), ("moments'", &f.moments)] {
                if !counts.is_empty() && groups(&f.runs, counts, 1).is_none() {
                    return Some(format!(
                        "figure '{key}' has {} runs but its {whose} counts add up to {}",
                        f.runs.len(),
                        counts.iter().sum::<usize>()
                    ));
                }
            }
            if !keys.insert(f.key.as_str()) {
                return Some(format!("figure '{key}' appears twice"));
            }
        }
        None
    }

    /// Adds a moment measured now (`new`, dated `date`) to this baseline: each figure both
    /// have gains the new runs as one more moment (and their processes, where either side
    /// had several). A figure only the baseline has keeps its moments; figures only `new`
    /// has are not added (a baseline's figures are those it was saved with) and are
    /// returned by key. Refused when the result would hold more runs than a baseline may.
    pub fn add_moment(&mut self, new: &[Figure], date: String) -> Result<Vec<String>, String> {
        let mut only_new = Vec::new();
        // Checked whole first: a refused moment leaves the baseline as it was.
        for n in new {
            if let Some(o) = self
                .figures
                .iter()
                .find(|o| o.key == n.key && o.unit == n.unit)
                && o.runs.len() + n.runs.len() > MAX_RUNS
            {
                return Err(format!(
                    "figure '{}' would hold more than {MAX_RUNS} runs",
                    crate::text::printable(&o.key)
                ));
            }
        }
        for n in new {
            let Some(o) = self
                .figures
                .iter_mut()
                .find(|o| o.key == n.key && o.unit == n.unit)
            else {
                only_new.push(n.key.clone());
                continue;
            };
            if o.moments.is_empty() {
                o.moments.push(o.runs.len());
            }
            o.moments.push(n.runs.len());
            if !o.processes.is_empty() || !n.processes.is_empty() {
                if o.processes.is_empty() {
                    o.processes.push(o.runs.len());
                }
                if n.processes.is_empty() {
                    o.processes.push(n.runs.len());
                } else {
                    o.processes.extend_from_slice(&n.processes);
                }
            }
            o.runs.extend_from_slice(&n.runs);
        }
        if only_new.len() == new.len() {
            return Err(format!(
                "this run has no figure in common with it (it holds {}); add to it with the command that saved it",
                self.figures
                    .iter()
                    .take(3)
                    .map(|f| crate::text::printable(&f.key))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        self.added.push(date);
        Ok(only_new)
    }

    /// How many moments it spans: 1, and one more for each added.
    pub fn moments(&self) -> usize {
        1 + self.added.len()
    }
}

/// How the command whose baselines are named `command` is run: `disk … --depth-curve` for
/// `disk-curve`, `disk … --preset fsync` for `disk-fsync`, `sweep …` for `sweep`.
pub fn invocation(command: &str) -> String {
    match command {
        "disk-curve" => "disk … --depth-curve".to_string(),
        "disk-fsync" => "disk … --preset fsync".to_string(),
        "disk-sync-methods" => "disk … --preset sync-methods".to_string(),
        other => format!("{other} …"),
    }
}

/// One side of a compared figure: its median, range and runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Side {
    /// The median of the runs.
    pub median: f64,
    /// The smallest run.
    pub min: f64,
    /// The largest run.
    pub max: f64,
    /// How many runs.
    pub n: usize,
}

impl Side {
    /// The side of `runs`.
    pub fn of(runs: &[f64]) -> Self {
        Self {
            median: median(runs),
            min: runs.iter().copied().fold(f64::INFINITY, f64::min),
            max: runs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n: runs.len(),
        }
    }
}

/// One figure against its baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    /// The figure's key.
    pub key: String,
    /// Its unit.
    pub unit: String,
    /// Whether higher is better.
    pub higher_is_better: bool,
    /// The baseline's runs.
    pub old: Side,
    /// This run's.
    pub new: Side,
    /// The change, its interval, the noise floor and the verdict.
    #[serde(flatten)]
    pub change: Change,
}

/// A fact of the environment that differs from the baseline's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvChange {
    /// What (`kernel`, `scheduler`, `read-ahead`).
    pub what: String,
    /// Its value when the baseline was saved.
    pub then: String,
    /// Its value now.
    pub now: String,
}

/// A result against a baseline: the `baseline` object of its JSON document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Against {
    /// The baseline's name.
    pub name: String,
    /// The file it was read from.
    pub file: String,
    /// When it was saved.
    pub saved: Option<String>,
    /// On which host.
    pub host: Option<String>,
    /// By which commit of ioscope.
    pub commit: Option<String>,
    /// Every figure both sides have, in this result's order.
    pub figures: Vec<Compared>,
    /// Figures only the baseline has.
    pub only_baseline: Vec<String>,
    /// Figures only this result has.
    pub only_now: Vec<String>,
    /// What changed in the environment since.
    pub environment: Vec<EnvChange>,
    /// How many processes measured this result's figures (`--processes`), their runs pooled.
    #[serde(default = "one")]
    pub processes: usize,
    /// Over how many moments the baseline was saved (`--add-to-baseline`).
    #[serde(default = "one")]
    pub moments: usize,
}

fn one() -> usize {
    1
}

impl Against {
    /// The figures that did `what`.
    pub fn that(&self, what: Movement) -> Vec<&Compared> {
        self.figures
            .iter()
            .filter(|c| c.change.verdict == what)
            .collect()
    }

    /// Whether any figure regressed (the exit code is then 1).
    pub fn regressed(&self) -> bool {
        !self.that(Movement::Regressed).is_empty()
    }

    /// How the intervals and noise floors were drawn, where several processes measured:
    /// over processes (the fewest of any side), or over runs and why not over processes.
    pub fn unit_note(&self) -> Option<String> {
        if self.figures.is_empty() {
            return None;
        }
        let over = self
            .figures
            .iter()
            .map(|c| c.change.processes)
            .filter(|&p| p > 1)
            .min();
        match over {
            Some(p) => Some(format!(
                "intervals and noise over processes, {p} a side at least: one process's runs move together, so each process's median counts once"
            )),
            None if self.processes > 1 && self.processes < LEVEL_FROM_PROCESSES => Some(format!(
                "intervals and noise over runs, as if each were independent: {} processes are too few to draw them over processes ({LEVEL_FROM_PROCESSES} a side or more)",
                self.processes
            )),
            None if self.processes > 1 => Some(format!(
                "intervals and noise over runs, as if each were independent: the baseline was measured by fewer than {LEVEL_FROM_PROCESSES} processes; save it with --processes {} too",
                self.processes
            )),
            None => None,
        }
    }

    /// The notes under the table: how the intervals were drawn, and what the baseline's
    /// moments mean.
    pub fn notes(&self) -> Vec<String> {
        self.unit_note()
            .into_iter()
            .chain(self.moment_note())
            .collect()
    }

    /// What a baseline over several moments means for the verdicts: how far its level moved
    /// between the moments (the figure that moved most), and the floor that makes; with
    /// two or three moments, that a few more would narrow it. `None` for one moment.
    pub fn moment_note(&self) -> Option<String> {
        if self.moments < 2 {
            return None;
        }
        let most = self
            .figures
            .iter()
            .filter_map(|c| Some((c, c.change.drift?)))
            .max_by(|a, b| a.1.total_cmp(&b.1));
        let Some((c, drift)) = most else {
            return Some(format!(
                "the baseline spans {} moments; no figure here was measured at more than one of them",
                self.moments
            ));
        };
        let few = if c.change.moments <= 3 {
            format!(
                "; with {} moments that floor is wide: adding a few more narrows it",
                c.change.moments
            )
        } else {
            String::new()
        };
        Some(format!(
            "the baseline spans {} moments: between them its level moved by {:.1}% (standard deviation, {}), so a check made in another minute must move more than {:.1}% to be told from the machine's own drift{few}",
            self.moments,
            100.0 * drift,
            crate::text::printable(&c.key),
            100.0 * c.change.floor
        ))
    }

    /// The answer, one sentence chosen by the verdicts: how many regressed (named), how
    /// many improved, or that none moved beyond the noise, or that none could be told.
    pub fn answer(&self) -> String {
        let total = self.figures.len();
        let regressed = self.that(Movement::Regressed);
        let improved = self.that(Movement::Improved);
        let unknown = self.that(Movement::CannotTell).len();
        let names = |v: &[&Compared]| {
            let mut s: Vec<String> = v.iter().take(3).map(|c| c.key.clone()).collect();
            if v.len() > 3 {
                s.push(format!("{} more", v.len() - 3));
            }
            s.join(", ")
        };
        let of = |n: usize| format!("{n} of {total} figure{}", if total == 1 { "" } else { "s" });
        if total == 0 {
            return format!(
                "no figure of this result is in baseline {}: nothing to compare",
                self.name
            );
        }
        let mut parts = Vec::new();
        if !regressed.is_empty() {
            parts.push(format!(
                "{} regressed: {}",
                of(regressed.len()),
                names(&regressed)
            ));
        }
        if !improved.is_empty() {
            parts.push(format!(
                "{} improved: {}",
                of(improved.len()),
                names(&improved)
            ));
        }
        if parts.is_empty() {
            return if unknown == total {
                format!(
                    "no figure can be told apart from baseline {}: one side has a single run of each, which has no spread to judge a change by (give --repeat N; the fsync preset runs once)",
                    self.name
                )
            } else {
                format!(
                    "no figure moved beyond the noise against baseline {}",
                    self.name
                )
            };
        }
        parts.join("; ")
    }
}

/// `new` figures against the baseline `old` (read from `file`), in an environment that is
/// now `env` and `host`.
pub fn against(
    old: &Baseline,
    file: &str,
    new: &[Figure],
    env: &Environment,
    host: &Host,
) -> Against {
    let figures = new
        .iter()
        .filter_map(|n| {
            let o = old.figures.iter().find(|o| o.key == n.key)?;
            Some(Compared {
                key: n.key.clone(),
                unit: n.unit.clone(),
                higher_is_better: n.higher_is_better,
                old: Side::of(&o.runs),
                new: Side::of(&n.runs),
                change: compare(
                    Runs::of(&o.runs, &o.processes).at_moments(&o.moments),
                    Runs::of(&n.runs, &n.processes),
                    n.higher_is_better,
                ),
            })
        })
        .collect();
    Against {
        name: old.name.clone(),
        file: file.to_string(),
        saved: old.date.clone(),
        host: old.host.hostname.clone(),
        commit: old.commit.clone(),
        figures,
        only_baseline: old
            .figures
            .iter()
            .filter(|o| !new.iter().any(|n| n.key == o.key))
            .map(|o| o.key.clone())
            .collect(),
        only_now: new
            .iter()
            .filter(|n| !old.figures.iter().any(|o| o.key == n.key))
            .map(|n| n.key.clone())
            .collect(),
        environment: changes(&old.environment, &old.host, env, host),
        processes: 1,
        moments: old.moments(),
    }
}

/// The facts a baseline compares, as words.
fn facts(env: &Environment, host: &Host) -> Vec<(&'static str, Option<String>)> {
    let s = &env.storage;
    vec![
        ("kernel", Some(env.kernel.clone()).filter(|k| !k.is_empty())),
        ("CPU", Some(env.cpu_model.clone()).filter(|k| !k.is_empty())),
        ("CPUs usable", Some(env.cpus.to_string())),
        ("memory", Some(format_size(env.memory_bytes))),
        ("file system", s.filesystem.clone()),
        ("device", s.device.clone()),
        ("device model", host.device_model.clone()),
        (
            "rotational",
            s.rotational
                .map(|r| if r { "yes" } else { "no" }.to_string()),
        ),
        ("read-ahead", s.read_ahead_kb.map(|k| format!("{k} KiB"))),
        ("scheduler", s.scheduler.clone()),
        ("mount options", host.mount_options.clone()),
        ("CPU governor", host.governor.clone()),
    ]
}

/// What differs between the environment then and now: every fact that reads differently,
/// and the free memory when it moved beyond the rule's "same".
pub fn changes(
    then: &Environment,
    then_host: &Host,
    now: &Environment,
    now_host: &Host,
) -> Vec<EnvChange> {
    let unknown = || "unknown".to_string();
    let mut out: Vec<EnvChange> = facts(then, then_host)
        .into_iter()
        .zip(facts(now, now_host))
        .filter(|((_, a), (_, b))| a != b)
        .map(|((what, a), (_, b))| EnvChange {
            what: what.to_string(),
            then: a.unwrap_or_else(unknown),
            now: b.unwrap_or_else(unknown),
        })
        .collect();
    if let (Some(a), Some(b)) = (
        then_host.memory_available_bytes,
        now_host.memory_available_bytes,
    ) && !same(a as f64, b as f64)
    {
        out.push(EnvChange {
            what: "free memory".to_string(),
            then: format_size(a),
            now: format_size(b),
        });
    }
    if let (Some(a), Some(b)) = (then.load_1m, now.load_1m)
        && !same(a, b)
        && (a - b).abs() >= LOAD_MOVED
    {
        out.push(EnvChange {
            what: "load (1 min)".to_string(),
            then: format!("{a:.1}"),
            now: format!("{b:.1}"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline(figures: Vec<Figure>) -> Baseline {
        Baseline {
            schema: BASELINE_SCHEMA.to_string(),
            command: "sweep".to_string(),
            name: "before".to_string(),
            version: "0.1.0".to_string(),
            commit: None,
            date: None,
            added: Vec::new(),
            command_line: Vec::new(),
            environment: Environment::default(),
            host: Host::default(),
            figures,
            result: serde_json::Value::Null,
        }
    }

    #[test]
    fn an_added_moment_joins_the_figures_both_have_and_leaves_the_rest() {
        let mut b = baseline(vec![
            Figure::rate("read warm 4 KiB", vec![100.0, 101.0, 99.0]),
            Figure::rate("read warm 8 KiB", vec![200.0, 201.0]),
        ]);
        let mut pooled = Figure::rate("read warm 4 KiB", vec![90.0, 91.0, 92.0, 93.0]);
        pooled.processes = vec![2, 2];
        let now = [pooled, Figure::rate("read warm 16 KiB", vec![300.0, 301.0])];
        let only = b.add_moment(&now, "then".to_string()).unwrap();
        assert_eq!(only, ["read warm 16 KiB"]);
        assert_eq!(b.added, ["then"]);
        assert_eq!(b.moments(), 2);
        let f = &b.figures[0];
        assert_eq!(f.runs, [100.0, 101.0, 99.0, 90.0, 91.0, 92.0, 93.0]);
        assert_eq!(f.moments, [3, 4]);
        // The first moment was one process; the new one's two are kept.
        assert_eq!(f.processes, [3, 2, 2]);
        // A figure this run lacks keeps its one moment.
        assert!(b.figures[1].moments.is_empty());
        assert_eq!(b.refusal("sweep"), None);
        // Another moment, no processes: one more moment, no process counts.
        let mut b = baseline(vec![Figure::rate("read warm 4 KiB", vec![1.0, 2.0])]);
        b.add_moment(&[Figure::rate("read warm 4 KiB", vec![3.0])], "a".into())
            .unwrap();
        b.add_moment(
            &[Figure::rate("read warm 4 KiB", vec![4.0, 5.0])],
            "b".into(),
        )
        .unwrap();
        assert_eq!(b.figures[0].moments, [2, 1, 2]);
        assert!(b.figures[0].processes.is_empty());
    }

    #[test]
    fn a_moment_with_nothing_in_common_or_too_many_runs_is_refused() {
        let mut b = baseline(vec![Figure::rate("read warm 4 KiB", vec![1.0, 2.0])]);
        let why = b
            .add_moment(&[Figure::rate("read warm 8 KiB", vec![1.0])], "x".into())
            .unwrap_err();
        assert!(why.contains("no figure in common"), "{why}");
        let many = Figure::rate("read warm 4 KiB", vec![1.0; MAX_RUNS]);
        let why = b.add_moment(&[many], "x".into()).unwrap_err();
        assert!(why.contains("more than"), "{why}");
        assert!(b.added.is_empty() && b.figures[0].moments.is_empty());
        // Counts that do not add up are a crafted document.
        b.figures[0].moments = vec![1, 2];
        assert!(b.refusal("sweep").unwrap().contains("moments' counts"));
    }

    #[test]
    fn figures_on_one_side_only_are_listed_as_such() {
        let old = baseline(vec![
            Figure::rate("read warm 4 KiB", vec![100.0, 101.0]),
            Figure::rate("read warm 8 KiB", vec![200.0, 201.0]),
        ]);
        let new = [
            Figure::rate("read warm 4 KiB", vec![100.0, 100.5]),
            Figure::rate("read warm 16 KiB", vec![300.0, 301.0]),
        ];
        let a = against(&old, "f", &new, &Environment::default(), &Host::default());
        assert_eq!(a.figures.len(), 1);
        assert_eq!(a.only_baseline, ["read warm 8 KiB"]);
        assert_eq!(a.only_now, ["read warm 16 KiB"]);
        assert!(!a.regressed());
        assert!(a.answer().starts_with("no figure moved"), "{}", a.answer());
    }

    #[test]
    fn the_note_says_what_the_interval_was_drawn_over_and_why() {
        let by = |levels: &[f64]| {
            let mut f = Figure::rate("a", levels.iter().flat_map(|&l| [l, l + 1.0]).collect());
            f.processes = vec![2; levels.len()];
            f
        };
        let four = by(&[100.0, 101.0, 99.0, 100.0]);
        let note = |old: Figure, new: Figure, processes: usize| {
            let mut a = against(
                &baseline(vec![old]),
                "f",
                &[new],
                &Environment::default(),
                &Host::default(),
            );
            a.processes = processes;
            a.unit_note().unwrap_or_default()
        };
        assert!(note(four.clone(), four.clone(), 4).contains("over processes, 4 a side"));
        let one = Figure::rate("a", vec![100.0, 101.0, 99.0]);
        let n = note(one.clone(), four.clone(), 4);
        assert!(
            n.contains("the baseline was measured by fewer than 4"),
            "{n}"
        );
        let two = by(&[100.0, 101.0]);
        let n = note(two.clone(), two, 2);
        assert!(n.contains("2 processes are too few"), "{n}");
        assert_eq!(note(one.clone(), one, 1), "");
    }

    #[test]
    fn the_answer_names_the_regressed_figures() {
        let old = baseline(vec![
            Figure::rate("a", vec![100.0, 101.0, 99.0]),
            Figure::rate("b", vec![100.0, 101.0, 99.0]),
        ]);
        let new = [
            Figure::rate("a", vec![50.0, 50.5, 49.5]),
            Figure::rate("b", vec![100.0, 100.5, 99.5]),
        ];
        let a = against(&old, "f", &new, &Environment::default(), &Host::default());
        assert!(a.regressed());
        assert_eq!(a.answer(), "1 of 2 figures regressed: a");
    }

    #[test]
    fn crafted_figures_are_refused() {
        assert!(
            baseline(vec![Figure::rate("a", vec![1.0])])
                .refusal("sweep")
                .is_none()
        );
        assert!(
            baseline(vec![Figure::rate("a", vec![1.0])])
                .refusal("disk")
                .is_some()
        );
        assert!(
            baseline(vec![Figure::rate("a", vec![])])
                .refusal("sweep")
                .is_some()
        );
        assert!(
            baseline(vec![Figure::rate("a", vec![f64::NAN])])
                .refusal("sweep")
                .is_some()
        );
        assert!(
            baseline(vec![Figure::rate("a", vec![-1.0])])
                .refusal("sweep")
                .is_some()
        );
        let twice = vec![Figure::rate("a", vec![1.0]), Figure::rate("a", vec![2.0])];
        assert!(baseline(twice).refusal("sweep").is_some());
    }

    #[test]
    fn a_changed_scheduler_and_much_less_free_memory_are_named() {
        let mut then = Environment::default();
        then.storage.scheduler = Some("mq-deadline".to_string());
        let mut now = then.clone();
        now.storage.scheduler = Some("none".to_string());
        let then_host = Host {
            memory_available_bytes: Some(8 << 30),
            ..Host::default()
        };
        let mut now_host = then_host.clone();
        assert_eq!(changes(&then, &then_host, &now, &now_host).len(), 1);
        now_host.memory_available_bytes = Some(2 << 30);
        let c = changes(&then, &then_host, &now, &now_host);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].what, "scheduler");
        assert_eq!(c[1].what, "free memory");
        assert!(changes(&then, &then_host, &then, &then_host).is_empty());
    }

    #[test]
    fn the_load_is_named_when_it_moved_by_a_task_and_beyond_the_same() {
        let at = |load: f64| Environment {
            load_1m: Some(load),
            ..Environment::default()
        };
        let h = Host::default();
        assert!(
            changes(&at(0.2), &h, &at(0.9), &h).is_empty(),
            "under one task"
        );
        assert!(
            changes(&at(20.0), &h, &at(21.5), &h).is_empty(),
            "within 10%"
        );
        let c = changes(&at(3.0), &h, &at(7.0), &h);
        assert_eq!(c.len(), 1);
        assert_eq!((c[0].then.as_str(), c[0].now.as_str()), ("3.0", "7.0"));
    }
}
