//! What every rank of an `mpi` job must be given alike, and the check that they were, made
//! before any work: each rank turns its validated options into [`MustMatch`] (the terms
//! that change what the ranks do together), rank 0 gathers them all, compares them term by
//! term and says whether the job may start. A rank given `--repeat 3` beside ranks given
//! `--repeat 2` would wait in a collective for ever; a rank given another `--block-size`
//! would run it while rank 0 reports its own. Instead: one line naming the option, rank 0's
//! value and the ranks that differ, and every rank exits 2.
//!
//! The terms are made by destructuring the options whole ([`MustMatch::of_ior`],
//! [`MustMatch::of_io500`]): a field added to the options does not compile until it is
//! either a term or set aside with the reason.

use super::{Comm, RanksFailed};
use crate::error::ExitKind;
use crate::measure::converge::Stopping;
use crate::options::{Io500Options, MpiOptions};
use crate::workload::layout::Layout;
use anyhow::Result;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One option as a rank was given it: its name as typed and its value, spelled exactly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    /// `--repeat`, `DIR`, `the command`, ...
    pub option: String,
    /// The value, exact (sizes in whole units or bytes).
    pub value: String,
}

/// Everything one rank must share with the others, in the order it is compared: the
/// binary first (another version may mean other rules), then the command, then options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MustMatch {
    /// The terms, in order.
    pub terms: Vec<Term>,
}

/// What a rank brings to the check: its terms, or why its own arguments were refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Offer {
    /// Its options were valid: these are the terms.
    Terms(MustMatch),
    /// Its options were refused: the one-line error.
    Refused(String),
}

/// The terms that, when they differ, make every later difference noise: report them alone.
const DECISIVE: [&str; 2] = ["ioscope version", "the command"];

fn term(option: &str, value: impl Into<String>) -> Term {
    Term {
        option: option.to_string(),
        value: value.into(),
    }
}

/// A size, exactly: whole GiB, MiB or KiB when it is one, else bytes.
fn size(bytes: u64) -> String {
    const KIB: u64 = 1 << 10;
    for (unit, name) in [(1u64 << 30, "GiB"), (1 << 20, "MiB"), (KIB, "KiB")] {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{} {name}", bytes / unit);
        }
    }
    format!("{bytes} bytes")
}

fn given(flag: bool) -> &'static str {
    if flag { "given" } else { "not given" }
}

fn seed(seed: Option<u64>) -> String {
    seed.map_or_else(|| "none (rank 0 picks one)".to_string(), |s| s.to_string())
}

fn min_free(min_free: Option<u64>) -> String {
    min_free.map_or_else(|| "the default".to_string(), size)
}

/// DIR as an absolute path (relative ones against this rank's working directory).
fn dir(dir: &Path) -> String {
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute.to_string_lossy().into_owned()
}

/// The runs asked: a fixed count, or the budget until stable (rank 0 decides how many, but
/// a rank given another budget was given another job).
fn runs_term(runs: &Stopping) -> String {
    if runs.is_fixed() {
        runs.min_runs.to_string()
    } else {
        format!(
            "until stable within {}%: {} to {} runs, {} s",
            crate::report::text::share(runs.precision),
            runs.min_runs,
            runs.max_runs,
            runs.max_seconds
        )
    }
}

fn version() -> Term {
    term("ioscope version", env!("IOSCOPE_VERSION"))
}

impl MustMatch {
    /// The terms of `mpi write|read|both`.
    pub fn of_ior(options: &MpiOptions) -> Self {
        let MpiOptions {
            dir: directory,
            phases,
            layout,
            size: bytes,
            block_size,
            runs,
            cache,
            seed: data_seed,
            keep,
            reuse_files,
            existing,
            min_free: free,
            // Rank 0 alone prints: how it prints is its own affair.
            json: _,
        } = options;
        let mut terms = vec![
            version(),
            term("the command", format!("mpi {}", phases.name())),
            term("--layout", layout.name()),
        ];
        // Each rank finds the others' files under its own DIR: when it reads them, or
        // shares one file, DIR must be the same; a file per rank only written may differ.
        if layout.shared() || *phases != crate::workload::layout::Phases::Write {
            terms.push(term("DIR", dir(directory)));
        }
        terms.extend([
            term("--size", size(*bytes)),
            term("--block-size", size(*block_size)),
            term("--repeat", runs_term(runs)),
            term("--cache", cache.name()),
            term("--seed", seed(*data_seed)),
            term("--keep", given(*keep)),
            term("--reuse-files", given(*reuse_files)),
            term(
                "--existing",
                existing.clone().unwrap_or_else(|| "not given".into()),
            ),
            term("--min-free", min_free(*free)),
        ]);
        Self { terms }
    }

    /// The terms of `mpi io500`.
    pub fn of_io500(options: &Io500Options) -> Self {
        let Io500Options {
            dir: directory,
            stonewall,
            transfer,
            easy_cap_bytes,
            files,
            seed: data_seed,
            keep,
            min_free: free,
            // Rank 0 alone prints.
            json: _,
        } = options;
        let terms = vec![
            version(),
            term("the command", "mpi io500"),
            // ior-hard shares one file, and every rank reads another's: one DIR.
            term("DIR", dir(directory)),
            term("--layout", Layout::FilePerRank.name()),
            term("--stonewall", format!("{} s", stonewall.as_secs_f64())),
            term("--block-size", size(*transfer)),
            term("--size", size(*easy_cap_bytes)),
            term("--files", files.to_string()),
            term("--seed", seed(*data_seed)),
            term("--keep", given(*keep)),
            term("--min-free", min_free(*free)),
        ];
        Self { terms }
    }

    fn value(&self, option: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| t.option == option)
            .map(|t| t.value.as_str())
    }
}

/// `rank 3`, `ranks 1-4, 7`: ranks in order, runs written as ranges.
fn ranks_named(ranks: &[usize]) -> String {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &r in ranks {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == r => *end = r,
            _ => runs.push((r, r)),
        }
    }
    // A job of thousands of ranks differs in a bounded line: the first runs, then a count.
    const SHOWN: usize = 8;
    let mut parts: Vec<String> = runs
        .iter()
        .take(SHOWN)
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect();
    if runs.len() > SHOWN {
        let more: usize = runs[SHOWN..].iter().map(|(a, b)| b - a + 1).sum();
        parts.push(format!("and {more} more"));
    }
    let noun = if ranks.len() == 1 { "rank" } else { "ranks" };
    format!("{noun} {}", parts.join(", "))
}

/// Values and the ranks that hold each, rank 0's first: `2 on rank 0, 3 on ranks 1-3`.
fn holders(values: &[(usize, String)]) -> String {
    let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
    for (rank, value) in values {
        match groups.iter_mut().find(|(v, _)| v == value) {
            Some((_, ranks)) => ranks.push(*rank),
            None => groups.push((value.as_str(), vec![*rank])),
        }
    }
    groups
        .iter()
        .map(|(value, ranks)| format!("{value} on {}", ranks_named(ranks)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Rank 0's verdict over every rank's offer (in rank order): `None` when the job may
/// start, else the one line that says why not.
pub fn verdict(offers: &[Offer]) -> Option<String> {
    // Ranks whose own arguments were refused: their errors, grouped.
    let refused: Vec<(usize, String)> = offers
        .iter()
        .enumerate()
        .filter_map(|(rank, o)| match o {
            Offer::Refused(why) => Some((rank, why.clone())),
            Offer::Terms(_) => None,
        })
        .collect();
    if let Some((0, why)) = refused.first() {
        // Rank 0's own error, as a run of one rank would print it.
        return Some(why.clone());
    }
    if !refused.is_empty() {
        let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
        for (rank, why) in refused {
            match groups.iter_mut().find(|(w, _)| *w == why) {
                Some((_, ranks)) => ranks.push(rank),
                None => groups.push((why, vec![rank])),
            }
        }
        let parts: Vec<String> = groups
            .iter()
            .map(|(why, ranks)| format!("{}: {why}", ranks_named(ranks)))
            .collect();
        return Some(format!(
            "mpi: rank 0's options were accepted but not every rank's: {}",
            parts.join("; ")
        ));
    }
    let terms: Vec<&MustMatch> = offers
        .iter()
        .filter_map(|o| match o {
            Offer::Terms(t) => Some(t),
            Offer::Refused(_) => None,
        })
        .collect();
    let first = terms.first()?;
    // Every option any rank has, rank 0's order first.
    let mut options: Vec<&str> = first.terms.iter().map(|t| t.option.as_str()).collect();
    for t in &terms[1..] {
        for term in &t.terms {
            if !options.contains(&term.option.as_str()) {
                options.push(&term.option);
            }
        }
    }
    let mut differ = Vec::new();
    for option in options {
        let values: Vec<(usize, String)> = terms
            .iter()
            .enumerate()
            .map(|(rank, t)| {
                (
                    rank,
                    t.value(option)
                        .map_or_else(|| "(no such option)".to_string(), str::to_string),
                )
            })
            .collect();
        if values.iter().all(|(_, v)| *v == values[0].1) {
            continue;
        }
        let line = format!("{option}: {}", holders(&values));
        if DECISIVE.contains(&option) {
            differ = vec![line];
            break;
        }
        differ.push(line);
    }
    (!differ.is_empty()).then(|| {
        format!(
            "mpi: the ranks were not started alike (every rank must be given the same command and options): {}",
            differ.join("; ")
        )
    })
}

/// Before any work: every rank's offer goes to rank 0, which compares them and tells every
/// rank whether to start. `Ok` on every rank when they agree; otherwise every rank returns
/// [`RanksFailed`] (exit 2), rank 0 holding the one line.
pub fn settle(comm: &dyn Comm, mine: &Offer) -> Result<()> {
    let bytes = serde_json::to_vec(mine).expect("an offer is plain strings");
    let gathered = comm.gather(&bytes);
    let line = if comm.rank() == 0 {
        let offers: Vec<Offer> = gathered
            .iter()
            .enumerate()
            .map(|(rank, b)| {
                serde_json::from_slice(b).unwrap_or_else(|_| {
                    Offer::Refused(format!(
                        "rank {rank} sent options this ioscope ({}) cannot read: is it another version?",
                        env!("IOSCOPE_VERSION")
                    ))
                })
            })
            .collect();
        verdict(&offers)
    } else {
        None
    };
    if comm.broadcast(u64::from(line.is_some())) == 0 {
        return Ok(());
    }
    Err(RanksFailed {
        lines: line.into_iter().collect(),
        kind: ExitKind::Usage,
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::cache::CacheState;
    use crate::workload::layout::Phases;
    use std::path::PathBuf;
    use std::time::Duration;

    fn ior() -> MpiOptions {
        MpiOptions {
            dir: PathBuf::from("/scratch/d"),
            phases: Phases::Both,
            layout: Layout::FilePerRank,
            size: 64 << 20,
            block_size: 1 << 20,
            runs: Stopping::fixed(3),
            cache: CacheState::Cold,
            seed: None,
            keep: false,
            reuse_files: false,
            existing: None,
            min_free: None,
            json: false,
        }
    }

    fn io500() -> Io500Options {
        Io500Options {
            dir: PathBuf::from("/scratch/d"),
            stonewall: Duration::from_secs(5),
            transfer: 1 << 20,
            easy_cap_bytes: 1 << 30,
            files: 100_000,
            seed: None,
            keep: false,
            min_free: None,
            json: false,
        }
    }

    fn offers(terms: &[MustMatch]) -> Vec<Offer> {
        terms.iter().cloned().map(Offer::Terms).collect()
    }

    #[test]
    fn every_option_of_mpi_but_json_is_compared_and_named_with_both_values() {
        type Change = fn(&mut MpiOptions);
        let changes: [(&str, Change); 12] = [
            ("the command", |o| o.phases = Phases::Read),
            ("--layout", |o| o.layout = Layout::SharedStrided),
            ("DIR", |o| o.dir = PathBuf::from("/scratch/e")),
            ("--size", |o| o.size = 32 << 20),
            ("--block-size", |o| o.block_size = 4096),
            ("--repeat", |o| o.runs = Stopping::fixed(2)),
            ("--cache", |o| o.cache = CacheState::Warm),
            ("--seed", |o| o.seed = Some(7)),
            ("--keep", |o| o.keep = true),
            ("--reuse-files", |o| o.reuse_files = true),
            ("--existing", |o| o.existing = Some("k".into())),
            ("--min-free", |o| o.min_free = Some(0)),
        ];
        let base = ior();
        for (option, change) in changes {
            let mut other = base.clone();
            change(&mut other);
            let line = verdict(&offers(&[
                MustMatch::of_ior(&base),
                MustMatch::of_ior(&other),
            ]))
            .unwrap_or_else(|| panic!("{option}: a difference found"));
            assert!(line.contains(&format!(": {option}: ")), "{line}");
            assert!(line.contains(" on rank 0, "), "{line}");
            assert!(line.ends_with(" on rank 1"), "{line}");
            assert_eq!(line.lines().count(), 1);
        }
        let mut quiet = base.clone();
        quiet.json = true;
        assert_eq!(
            verdict(&offers(&[
                MustMatch::of_ior(&base),
                MustMatch::of_ior(&quiet)
            ])),
            None,
            "--json is rank 0's alone"
        );
    }

    #[test]
    fn every_option_of_io500_but_json_is_compared() {
        type Change = fn(&mut Io500Options);
        let changes: [(&str, Change); 8] = [
            ("DIR", |o| o.dir = PathBuf::from("other")),
            ("--stonewall", |o| o.stonewall = Duration::from_millis(5500)),
            ("--block-size", |o| o.transfer = 1 << 16),
            ("--size", |o| o.easy_cap_bytes = 1 << 29),
            ("--files", |o| o.files = 10),
            ("--seed", |o| o.seed = Some(1)),
            ("--keep", |o| o.keep = true),
            ("--min-free", |o| o.min_free = Some(1 << 30)),
        ];
        let base = io500();
        for (option, change) in changes {
            let mut other = base.clone();
            change(&mut other);
            let line = verdict(&offers(&[
                MustMatch::of_io500(&base),
                MustMatch::of_io500(&other),
            ]))
            .unwrap_or_else(|| panic!("{option}: a difference found"));
            assert!(line.contains(&format!(": {option}: ")), "{line}");
            assert!(line.ends_with(" on rank 1"), "{line}");
        }
    }

    #[test]
    fn a_file_per_rank_only_written_may_have_its_own_dir_a_shared_file_may_not() {
        let mut a = ior();
        a.phases = Phases::Write;
        let mut b = a.clone();
        b.dir = PathBuf::from("/local/other");
        let pair = |a: &MpiOptions, b: &MpiOptions| {
            verdict(&offers(&[MustMatch::of_ior(a), MustMatch::of_ior(b)]))
        };
        assert_eq!(pair(&a, &b), None);
        a.layout = Layout::SharedContiguous;
        b.layout = Layout::SharedContiguous;
        let line = pair(&a, &b).expect("a shared file in two places");
        assert!(
            line.contains("DIR: /scratch/d on rank 0, /local/other on rank 1"),
            "{line}"
        );
    }

    #[test]
    fn another_command_is_said_alone_and_values_are_grouped_by_rank() {
        let write = {
            let mut o = ior();
            o.phases = Phases::Write;
            o
        };
        let line = verdict(&offers(&[
            MustMatch::of_ior(&write),
            MustMatch::of_io500(&io500()),
        ]))
        .expect("io500 beside write");
        assert!(
            line.ends_with("the command: mpi write on rank 0, mpi io500 on rank 1"),
            "{line}"
        );
        let mut two = ior();
        two.runs = Stopping::fixed(2);
        let mut others = vec![MustMatch::of_ior(&ior()); 20];
        for r in [3, 4, 5, 9, 19] {
            others[r] = MustMatch::of_ior(&two);
        }
        let line = verdict(&offers(&others)).expect("five ranks differ");
        assert!(
            line.ends_with("--repeat: 3 on ranks 0-2, 6-8, 10-18, 2 on ranks 3-5, 9, 19"),
            "{line}"
        );
    }

    #[test]
    fn several_options_that_differ_are_all_named_on_one_line() {
        let mut other = ior();
        other.block_size = 4096;
        other.seed = Some(9);
        let line = verdict(&offers(&[
            MustMatch::of_ior(&ior()),
            MustMatch::of_ior(&other),
        ]))
        .expect("differs");
        assert!(
            line.contains("--block-size: 1 MiB on rank 0, 4 KiB on rank 1; --seed: none (rank 0 picks one) on rank 0, 9 on rank 1"),
            "{line}"
        );
    }

    #[test]
    fn a_rank_whose_own_arguments_were_refused_is_named_with_its_error() {
        let ok = Offer::Terms(MustMatch::of_ior(&ior()));
        let bad = Offer::Refused("mpi d: --repeat must be 1 to 1000".into());
        let line = verdict(&[ok.clone(), bad.clone(), bad.clone()]).expect("refused");
        assert!(
            line.ends_with("ranks 1-2: mpi d: --repeat must be 1 to 1000"),
            "{line}"
        );
        assert_eq!(
            verdict(&[bad, ok]).as_deref(),
            Some("mpi d: --repeat must be 1 to 1000"),
            "rank 0's own error, as it is"
        );
    }

    #[test]
    fn one_rank_alone_always_agrees_with_itself() {
        let mine = Offer::Terms(MustMatch::of_ior(&ior()));
        assert!(settle(&super::super::Solo, &mine).is_ok());
        let refused = Offer::Refused("bad".into());
        let err = settle(&super::super::Solo, &refused).expect_err("refused");
        let failed = err.downcast_ref::<RanksFailed>().expect("collective");
        assert_eq!(failed.kind, ExitKind::Usage);
        assert_eq!(failed.lines, ["bad"]);
    }
}
