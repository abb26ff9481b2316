//! `grade`: another program's reader (a student's `fast`) run on a battery of files made
//! for it, each several times with a deadline, its printed XOR checked against the
//! reference, and its failures read for the pattern that names the bug.
//!
//! The battery holds the sizes public solutions get wrong: empty, 1, 3, 4, 4095 and 4097
//! bytes, 1 MiB + 2, 4 MiB (a multiple of 4 KiB) and 10 MiB + 3; with `--big` also exactly
//! 2 GiB (one `read` is capped below it) and 4 GiB + 8 (32-bit sizes wrap). The big files
//! are sparse: islands of data at the start, around 2^31, around 2^32 and at the end, where
//! those bugs show, and holes between (zeros, which XOR to nothing), so they cost a few MiB
//! of disk and seconds to read. Every byte is from the seeded stream of `workload::data`,
//! and a file whose size is not a multiple of 4 ends in a partial word that is not zero, so
//! a reader that drops it is caught. Files are made one at a time in `--dir` and removed
//! after their runs (and on any error or signal).

use crate::checksum::{hex, xor_at};
use crate::files;
use crate::harness::ProgressSink;
use crate::measure::child::{self, End};
use crate::measure::printed;
use crate::options::grade::GradeOptions;
pub use crate::results::grade::{Diagnosis, GradeReport, GradeRun, SizeGrade, Verdict};
use crate::units::{GIB, MIB, format_size};
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Linux's most bytes one `read` returns (`MAX_RW_COUNT`: 2 GiB less a page).
pub const ONE_CALL_MOST: u64 = 0x7fff_f000;

/// Bytes a reader is given a second for, beyond the deadline's fixed part: 100 MiB/s.
pub const DEADLINE_BYTES_PER_SECOND: u64 = 100 * MIB;

/// A file of the battery: its size and where its data lies (the rest is holes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    /// Bytes.
    pub size: u64,
    /// Its name in the battery (`10 MiB + 3`).
    pub label: String,
    /// The byte ranges holding data, in order; the whole file unless sparse.
    pub islands: Vec<(u64, u64)>,
}

impl Planned {
    fn whole(size: u64) -> Self {
        Self {
            size,
            label: label(size),
            islands: if size == 0 {
                Vec::new()
            } else {
                vec![(0, size)]
            },
        }
    }

    fn sparse(size: u64, around: &[u64]) -> Self {
        let mut islands: Vec<(u64, u64)> = vec![(0, MIB)];
        for &at in around {
            islands.push((at.saturating_sub(MIB), (at + MIB).min(size)));
        }
        islands.push((size.saturating_sub(MIB), size));
        islands.sort_unstable();
        // Overlapping or touching islands become one.
        let mut merged: Vec<(u64, u64)> = Vec::new();
        for (a, b) in islands {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        Self {
            size,
            label: label(size),
            islands: merged,
        }
    }

    /// Whether the file has holes.
    pub fn is_sparse(&self) -> bool {
        self.islands.iter().map(|(a, b)| b - a).sum::<u64>() < self.size
    }

    /// Bytes of data written (what the file takes on disk, near enough).
    pub fn data_bytes(&self) -> u64 {
        self.islands.iter().map(|(a, b)| b - a).sum()
    }
}

/// A size as the battery names it: bytes below 64 KiB, otherwise a whole number of a unit
/// plus the bytes beyond it (`1 MiB + 2`, `4 GiB + 8`).
pub fn label(size: u64) -> String {
    if size < 64 << 10 {
        return format!("{size} B");
    }
    for unit in [GIB, MIB, 1 << 10] {
        let whole = size / unit * unit;
        let rest = size - whole;
        if size >= unit && rest < 1024 {
            let base = format_size(whole);
            return if rest == 0 {
                base
            } else {
                format!("{base} + {rest}")
            };
        }
    }
    format_size(size)
}

/// The battery: the standard sizes, and with `big` the two past 2^31 and 2^32.
pub fn battery(big: bool) -> Vec<Planned> {
    let mut sizes: Vec<Planned> = [0, 1, 3, 4, 4095, 4097, MIB + 2, 4 * MIB, 10 * MIB + 3]
        .into_iter()
        .map(Planned::whole)
        .collect();
    if big {
        sizes.push(Planned::sparse(2 * GIB, &[]));
        sizes.push(Planned::sparse(4 * GIB + 8, &[2 * GIB]));
    }
    sizes
}

/// The seed of a file of `size`: fixed, so a second grading reads the same bytes; moved on
/// until a partial last word is not zero.
fn seed_for(size: u64) -> u64 {
    let tail = size % 4;
    let mut seed = 0x6772_6164_6500_0000 ^ size;
    if tail == 0 {
        return seed;
    }
    loop {
        let mut last = vec![0u8; tail as usize];
        crate::workload::data::DataStream::new(seed, size - tail).fill(&mut last);
        if last.iter().any(|&b| b != 0) {
            return seed;
        }
        seed = seed.wrapping_add(1);
    }
}

/// XOR of the data in `[0, end)` of a planned file with `seed`.
fn xor_prefix(planned: &Planned, seed: u64, end: u64) -> u32 {
    let mut xor = 0u32;
    let mut buf = vec![0u8; MIB as usize];
    for &(a, b) in &planned.islands {
        let mut at = a;
        while at < b.min(end) {
            let n = (b.min(end) - at).min(MIB) as usize;
            crate::workload::data::DataStream::new(seed, at).fill(&mut buf[..n]);
            xor ^= xor_at(at, &buf[..n]);
            at += n as u64;
        }
    }
    xor
}

/// A battery file made on disk, with its reference and the answers each bug would give.
struct Made {
    out: files::OutputFile,
    reference: u32,
    hypotheses: Hypotheses,
}

/// What a reader with a known bug prints on a file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Hypotheses {
    /// The XOR of the whole words alone (the last `size % 4` bytes dropped).
    pub words_only: u32,
    /// The XOR of the first [`ONE_CALL_MOST`] bytes, for a file longer than that.
    pub one_call: Option<u32>,
    /// The XOR of the first `size mod 2^32` bytes, for a file of 4 GiB or more.
    pub size_32: Option<u32>,
}

fn make(dir: &Path, planned: &Planned, min_free: Option<u64>) -> Result<Made> {
    let seed = seed_for(planned.size);
    let out = files::create_scratch(
        dir,
        &format!("grade-{}", planned.size),
        planned.data_bytes(),
        min_free,
    )?;
    let name = out.name().to_string();
    out.file()
        .set_len(planned.size)
        .with_context(|| format!("set the length of {name}"))?;
    let mut buf = vec![0u8; MIB as usize];
    let mut reference = 0u32;
    for &(a, b) in &planned.islands {
        let mut at = a;
        while at < b {
            crate::interrupt::check()?;
            let n = (b - at).min(MIB) as usize;
            crate::workload::data::DataStream::new(seed, at).fill(&mut buf[..n]);
            reference ^= xor_at(at, &buf[..n]);
            out.file()
                .write_all_at(&buf[..n], at)
                .with_context(|| format!("write {name} at {at}"))?;
            at += n as u64;
        }
    }
    let size = planned.size;
    let hypotheses = Hypotheses {
        words_only: xor_prefix(planned, seed, size - size % 4),
        one_call: (size > ONE_CALL_MOST).then(|| xor_prefix(planned, seed, ONE_CALL_MOST)),
        size_32: (size >= 1 << 32).then(|| xor_prefix(planned, seed, size % (1 << 32))),
    };
    Ok(Made {
        out,
        reference,
        hypotheses,
    })
}

/// The command with the file put where `{}` stands, or last when no argument holds `{}`.
pub fn with_file(command: &[OsString], file: &Path) -> Vec<OsString> {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let path = file.as_os_str().as_bytes();
    let holds = |a: &OsString| a.as_bytes().windows(2).any(|w| w == b"{}");
    if !command.iter().skip(1).any(holds) {
        let mut argv = command.to_vec();
        argv.push(file.as_os_str().to_owned());
        return argv;
    }
    command
        .iter()
        .enumerate()
        .map(|(i, a)| {
            if i == 0 {
                return a.clone();
            }
            let bytes = a.as_bytes();
            let mut out = Vec::with_capacity(bytes.len());
            let mut k = 0;
            while k < bytes.len() {
                if bytes[k..].starts_with(b"{}") {
                    out.extend_from_slice(path);
                    k += 2;
                } else {
                    out.push(bytes[k]);
                    k += 1;
                }
            }
            OsString::from_vec(out)
        })
        .collect()
}

/// One run's verdict from how it ended and what it printed.
fn judge(ran: &child::Ran, reference: u32) -> GradeRun {
    let found = printed::find(&String::from_utf8_lossy(&ran.stdout), reference);
    let (verdict, exit_code, signal) = match ran.end {
        End::TimedOut => (Verdict::Timeout, None, Some("SIGKILL".to_string())),
        End::Signalled(n) => (Verdict::Crashed, None, Some(child::signal_name(n))),
        End::Exited(0) if found.matches => (Verdict::Correct, Some(0), None),
        End::Exited(0) => (Verdict::Wrong, Some(0), None),
        End::Exited(code) => (Verdict::Exit, Some(code), None),
    };
    let stderr = (ran.end != End::Exited(0))
        .then(|| ran.last_stderr_line())
        .flatten();
    GradeRun {
        verdict,
        exit_code,
        signal,
        printed: found.value.map(hex),
        token: found.token.map(|t| crate::text::printable(&t)),
        candidates: found.candidates,
        decimal: found.decimal,
        wall_seconds: ran.wall_seconds,
        user_seconds: ran.user_seconds,
        system_seconds: ran.system_seconds,
        stderr,
    }
}

/// A size's grade from its runs.
fn summarize(planned: &Planned, reference: u32, runs: Vec<GradeRun>) -> SizeGrade {
    let worst = runs
        .iter()
        .map(|r| r.verdict)
        .max_by_key(|v| v.severity())
        .unwrap_or(Verdict::Correct);
    let shown_run = runs.iter().position(|r| r.verdict == worst).unwrap_or(0);
    let mut distinct: Vec<String> = Vec::new();
    for r in runs.iter().filter(|r| r.exit_code == Some(0)) {
        if let Some(p) = &r.printed
            && !distinct.contains(p)
        {
            distinct.push(p.clone());
        }
    }
    let walls: Vec<f64> = runs
        .iter()
        .filter(|r| r.verdict != Verdict::Timeout)
        .map(|r| r.wall_seconds)
        .collect();
    SizeGrade {
        size: planned.size,
        label: planned.label.clone(),
        sparse: planned.is_sparse(),
        reference: hex(reference),
        verdict: worst,
        failed_runs: runs
            .iter()
            .filter(|r| r.verdict != Verdict::Correct)
            .count(),
        distinct,
        shown_run,
        wall: crate::measure::stats::summarize(&walls),
        runs,
    }
}

/// The deadline of one run on a file of `size`.
pub fn deadline(options: &GradeOptions, size: u64) -> std::time::Duration {
    options.timeout
        + std::time::Duration::from_secs_f64(size as f64 / DEADLINE_BYTES_PER_SECOND as f64)
}

/// Grades the command; `save` receives the report after each size, `progress` the bytes
/// of each run as it ends.
pub fn execute(
    options: &GradeOptions,
    progress: &dyn ProgressSink,
    save: &mut dyn FnMut(&GradeReport) -> Result<()>,
) -> Result<GradeReport> {
    let mut report = GradeReport {
        command: options.shown.clone(),
        runs: options.runs,
        timeout_seconds: options.timeout.as_secs_f64(),
        timeout_bytes_per_second: DEADLINE_BYTES_PER_SECOND,
        dir: crate::text::printable_path(&options.dir),
        sizes: Vec::new(),
        skipped: Vec::new(),
        diagnoses: Vec::new(),
        complete: false,
    };
    let mut hypotheses = Vec::new();
    let mut interrupted = false;
    for planned in battery(options.big) {
        progress.begin(
            &format!("grade: {}", planned.label),
            Some(planned.size * options.runs as u64),
        );
        let graded = grade_one(options, &planned, progress);
        progress.end();
        match graded {
            Ok((grade, h)) => {
                report.sizes.push(grade);
                hypotheses.push(h);
            }
            Err(e) if crate::error::exit_kind(&e) == crate::error::ExitKind::Interrupted => {
                interrupted = true;
                break;
            }
            Err(e)
                if (planned.is_sparse() || !report.sizes.is_empty())
                    && crate::error::exit_kind(&e) == crate::error::ExitKind::Usage =>
            {
                // Room for a file refused (or the program gone) after sizes were graded:
                // skipped, said why, and the sizes graded are kept. Before any, the error
                // is the answer (a program that cannot start, a directory not writable).
                report.skipped.push(format!("{}: {e:#}", planned.label));
            }
            Err(e) => return Err(e.context("grade")),
        }
        save(&report)?;
    }
    report.diagnoses = diagnose(&report.sizes, &hypotheses);
    report.complete = !interrupted;
    save(&report)?;
    Ok(report)
}

/// One size: its file made, the command run on it, the file removed.
fn grade_one(
    options: &GradeOptions,
    planned: &Planned,
    progress: &dyn ProgressSink,
) -> Result<(SizeGrade, Hypotheses)> {
    let made = make(&options.dir, planned, options.min_free)?;
    let argv = with_file(&options.command, made.out.path());
    let mut runs = Vec::new();
    for _ in 0..options.runs {
        crate::interrupt::check()?;
        let ran = child::run(&argv, deadline(options, planned.size))?;
        progress.advance(planned.size);
        let run = judge(&ran, made.reference);
        let timed_out = run.verdict == Verdict::Timeout;
        runs.push(run);
        // A run past its deadline is the verdict; more would only cost the deadline again.
        if timed_out {
            break;
        }
    }
    Ok((summarize(planned, made.reference, runs), made.hypotheses))
}

/// The sizes of `some` as a list (`1 B, 3 B and 4097 B`), or `every size` when they are
/// all of `all`.
fn among(some: &[&SizeGrade], all: &[SizeGrade]) -> String {
    if some.len() == all.len() && all.len() > 1 {
        "every size".to_string()
    } else {
        listed(some)
    }
}

/// `sizes` grouped by `value` (a signal, a status), in the order first seen.
fn by_value<'a>(
    sizes: &[&'a SizeGrade],
    value: impl Fn(&SizeGrade) -> String,
) -> Vec<(String, Vec<&'a SizeGrade>)> {
    let mut groups: Vec<(String, Vec<&SizeGrade>)> = Vec::new();
    for &s in sizes {
        let v = value(s);
        match groups.iter_mut().find(|(g, _)| *g == v) {
            Some((_, members)) => members.push(s),
            None => groups.push((v, vec![s])),
        }
    }
    groups
}

/// Groups as `with SIGSEGV on 1 B and 3 B; with SIGABRT on 4 MiB` (`every size` when one
/// group holds them all).
fn grouped(
    groups: &[(String, Vec<&SizeGrade>)],
    failing: &[&SizeGrade],
    all: &[SizeGrade],
    joint: &str,
) -> String {
    match groups {
        [(v, _)] => format!("{joint} {v} on {}", among(failing, all)),
        _ => groups
            .iter()
            .map(|(v, members)| format!("{joint} {v} on {}", listed(members)))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The sizes of `sizes` as a list (`1 B, 3 B and 4097 B`).
fn listed(sizes: &[&SizeGrade]) -> String {
    let names: Vec<&str> = sizes.iter().map(|s| s.label.as_str()).collect();
    match names.as_slice() {
        [] => String::new(),
        [one] => one.to_string(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What a size's shown run did, in a few words (`crashed with SIGSEGV`).
pub fn what_it_did(s: &SizeGrade) -> String {
    let r = s.shown();
    match r.verdict {
        Verdict::Correct => "printed the right XOR".to_string(),
        Verdict::Wrong => match &r.printed {
            Some(p) => format!("printed {p} instead of {}", s.reference),
            None => "printed no XOR".to_string(),
        },
        Verdict::Crashed => format!("crashed with {}", r.signal.as_deref().unwrap_or("a signal")),
        Verdict::Timeout => "ran past its deadline".to_string(),
        Verdict::Exit => format!("exited with status {}", r.exit_code.unwrap_or(-1)),
    }
}

/// The patterns in the failures, most telling first; every failing size is named by one.
pub fn diagnose(sizes: &[SizeGrade], hypotheses: &[Hypotheses]) -> Vec<Diagnosis> {
    let mut out = Vec::new();
    let mut explained: Vec<u64> = Vec::new();
    let fails = |s: &SizeGrade| s.verdict != Verdict::Correct;
    let say = |out: &mut Vec<Diagnosis>, kind: &str, sentence: String| {
        out.push(Diagnosis {
            kind: kind.to_string(),
            sentence,
        })
    };
    let hyp = |s: &SizeGrade| {
        sizes
            .iter()
            .position(|x| std::ptr::eq(x, s))
            .and_then(|i| hypotheses.get(i).copied())
            .unwrap_or_default()
    };

    // Different answers for one file: nothing else about its values can be trusted.
    let unstable: Vec<&SizeGrade> = sizes.iter().filter(|s| s.distinct.len() > 1).collect();
    if let Some(first) = unstable.first() {
        say(
            &mut out,
            "unstable",
            format!(
                "Not deterministic: it printed {} different XORs for the same file of {} ({}){}. A data race (threads XOR-ing into one shared word without a lock)?",
                first.distinct.len(),
                first.label,
                first.distinct.join(", "),
                if unstable.len() > 1 {
                    format!(
                        ", and differed from run to run on {} sizes in all",
                        unstable.len()
                    )
                } else {
                    String::new()
                }
            ),
        );
        explained.extend(unstable.iter().map(|s| s.size));
    }

    // The empty file.
    // (Unless the next smallest sizes, 1 to 4 bytes, fail the same way: then it is not
    // about being empty.)
    if let Some(empty) = sizes.iter().find(|s| s.size == 0 && fails(s))
        && !sizes
            .iter()
            .filter(|s| s.size > 0 && s.size <= 4)
            .all(|s| s.verdict == empty.verdict)
    {
        say(
            &mut out,
            "empty",
            format!("An empty file is not handled: it {}.", what_it_did(empty)),
        );
        explained.push(0);
    }

    // The last size % 4 bytes: below 2 GiB (every big size is a multiple of 4).
    let small: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| s.size > 0 && s.size < 2 * GIB)
        .collect();
    let partial: Vec<&SizeGrade> = small.iter().copied().filter(|s| s.size % 4 != 0).collect();
    let whole: Vec<&SizeGrade> = small.iter().copied().filter(|s| s.size % 4 == 0).collect();
    let whole_right = !whole.is_empty() && whole.iter().all(|s| !fails(s));
    if !partial.is_empty() && partial.iter().all(|s| fails(s)) && whole_right {
        let dropped = partial.iter().all(|s| {
            s.runs.iter().all(|r| {
                r.verdict == Verdict::Wrong
                    && r.printed.as_deref() == Some(hex(hyp(s).words_only).as_str())
            })
        });
        let (kind, sentence) = if dropped {
            (
                "drops_tail",
                format!(
                    "Drops the last size % 4 bytes: on every size not a multiple of 4 ({}) it printed the XOR of the whole words alone, and it is right on every multiple of 4. The last partial word counts, zero-padded.",
                    listed(&partial)
                ),
            )
        } else if partial.iter().all(|s| s.verdict == Verdict::Timeout) {
            (
                "tail",
                format!(
                    "Never finishes when the size is not a multiple of 4 ({}), and is right on every multiple of 4: does it wait at the end of the file for the bytes that would complete a word?",
                    listed(&partial)
                ),
            )
        } else {
            (
                "tail",
                format!(
                    "Fails exactly on the sizes not a multiple of 4 ({}: {}) and is right on every multiple of 4: the last size % 4 bytes are mishandled.",
                    listed(&partial),
                    what_it_did(partial[0])
                ),
            )
        };
        say(&mut out, kind, sentence);
        explained.extend(partial.iter().map(|s| s.size));
    }

    // 2 GiB exactly, right below it (but for what is explained already).
    let right_below = |limit: u64, explained: &[u64]| {
        sizes
            .iter()
            .filter(|s| s.size > 0 && s.size < limit)
            .all(|s| !fails(s) || explained.contains(&s.size))
            && whole_right
    };
    let two = sizes.iter().find(|s| s.size == 2 * GIB);
    let four = sizes.iter().find(|s| s.size == 4 * GIB + 8);
    if let Some(two) = two.filter(|s| fails(s))
        && right_below(two.size, &explained)
    {
        let capped = hyp(two).one_call.map(hex);
        let one_call = two.verdict == Verdict::Wrong
            && two
                .runs
                .iter()
                .all(|r| r.printed.is_some() && r.printed == capped);
        if one_call {
            say(
                &mut out,
                "one_call",
                format!(
                    "One read call for the whole file: Linux returns at most {} bytes (2 GiB less 4 KiB) from one call, and at exactly 2 GiB it printed the XOR of those first bytes alone. Call read again until it returns 0.",
                    crate::units::group_thousands(ONE_CALL_MOST)
                ),
            );
        } else {
            say(
                &mut out,
                "at_2gib",
                format!(
                    "Fails at exactly 2 GiB (it {}) and is right below it: a signed 32-bit size or count, or one call capped below 2 GiB?",
                    what_it_did(two)
                ),
            );
        }
        explained.push(two.size);
        if let Some(four) = four.filter(|s| fails(s))
            && one_call
            && four
                .runs
                .iter()
                .all(|r| r.printed.is_some() && r.printed == hyp(four).one_call.map(hex))
        {
            explained.push(four.size);
        }
    }

    // 4 GiB + 8, right at 2 GiB.
    if let Some(four) = four.filter(|s| fails(s) && !explained.contains(&s.size))
        && two.is_some_and(|s| !fails(s))
        && right_below(four.size, &explained)
    {
        let wrapped = hyp(four).size_32.map(hex);
        if four.verdict == Verdict::Wrong
            && four
                .runs
                .iter()
                .all(|r| r.printed.is_some() && r.printed == wrapped)
        {
            say(
                &mut out,
                "offsets_32",
                "32-bit sizes or offsets: at 4 GiB + 8 it printed the XOR of the first 8 bytes alone (the size modulo 2^32), and it is right at 2 GiB. Keep sizes and offsets in off_t or a 64-bit integer.".to_string(),
            );
        } else {
            say(
                &mut out,
                "offsets_32",
                format!(
                    "Fails from 4 GiB (it {}) and is right at 2 GiB: 32-bit sizes or offsets?",
                    what_it_did(four)
                ),
            );
        }
        explained.push(four.size);
    }

    // The words read big-endian.
    let swapped: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| {
            s.verdict == Verdict::Wrong
                && !explained.contains(&s.size)
                && u32::from_str_radix(&s.reference, 16).is_ok_and(|r| {
                    r != r.swap_bytes()
                        && s.shown().printed.as_deref() == Some(hex(r.swap_bytes()).as_str())
                })
        })
        .collect();
    if !swapped.is_empty() {
        say(
            &mut out,
            "byte_order",
            format!(
                "Reads the words big-endian: on {} it printed the right XOR with its bytes reversed. The XOR is of little-endian 32-bit words (byte i in bits 8 × (i % 4)).",
                listed(&swapped)
            ),
        );
        explained.extend(swapped.iter().map(|s| s.size));
    }

    // The right XOR written in base 10.
    let decimal: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| {
            s.verdict == Verdict::Wrong
                && !explained.contains(&s.size)
                && s.size > 0
                && s.runs.iter().all(|r| r.decimal)
        })
        .collect();
    if !decimal.is_empty() {
        say(
            &mut out,
            "decimal",
            format!(
                "Prints the XOR in decimal: on {} its answer is the right XOR written in base 10. Print it in hex (%08x).",
                among(&decimal, sizes)
            ),
        );
        explained.extend(decimal.iter().map(|s| s.size));
    }

    // Crashes on every size from one on.
    let crashed: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| s.size > 0 && s.verdict == Verdict::Crashed && !explained.contains(&s.size))
        .collect();
    if let Some(first) = crashed.first() {
        let from: Vec<&SizeGrade> = sizes.iter().filter(|s| s.size >= first.size).collect();
        let suffix = from
            .iter()
            .all(|s| s.verdict == Verdict::Crashed || explained.contains(&s.size));
        let below_right = sizes
            .iter()
            .filter(|s| s.size > 0 && s.size < first.size)
            .all(|s| !fails(s) || explained.contains(&s.size));
        let signals = by_value(&crashed, |s| s.shown().signal.clone().unwrap_or_default());
        if suffix && below_right && sizes.iter().any(|s| s.size > 0 && s.size < first.size) {
            say(
                &mut out,
                "crashes_from",
                format!(
                    "Crashes ({}) on every file from {} up and on none below: a buffer of fixed size, too small for the file?",
                    signals
                        .iter()
                        .map(|(v, _)| v.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                    first.label
                ),
            );
        } else {
            say(
                &mut out,
                "crashes",
                format!("Crashes {}.", grouped(&signals, &crashed, sizes, "with")),
            );
        }
        explained.extend(crashed.iter().map(|s| s.size));
    }

    // The right XOR, then a failing exit status.
    let status: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| s.verdict == Verdict::Exit && !explained.contains(&s.size))
        .collect();
    if !status.is_empty() {
        let right = status.iter().all(|s| {
            s.runs.iter().all(|r| {
                r.verdict == Verdict::Correct || r.printed.as_deref() == Some(s.reference.as_str())
            })
        });
        let codes = by_value(&status, |s| {
            format!("status {}", s.shown().exit_code.unwrap_or(-1))
        });
        let exits = grouped(&codes, &status, sizes, "with");
        say(
            &mut out,
            "exit_status",
            if right {
                format!(
                    "Exits {exits} although the XOR it printed is right: a script that checks the status reads it as a failure. Return 0 from main."
                )
            } else {
                format!("Exits {exits}.")
            },
        );
        explained.extend(status.iter().map(|s| s.size));
    }

    // Past the deadline, in no pattern above.
    let late: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| s.verdict == Verdict::Timeout && !explained.contains(&s.size))
        .collect();
    if !late.is_empty() {
        say(
            &mut out,
            "timeout",
            format!(
                "Runs past its deadline on {}: it hangs there, or --timeout is too short for it.",
                among(&late, sizes)
            ),
        );
        explained.extend(late.iter().map(|s| s.size));
    }

    // Nothing hex-looking printed.
    let silent: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| s.verdict == Verdict::Wrong && s.shown().candidates == 0)
        .filter(|s| !explained.contains(&s.size))
        .collect();
    if !silent.is_empty() {
        let all = silent.len() >= sizes.iter().filter(|s| s.size > 0).count();
        say(
            &mut out,
            "no_xor",
            format!(
                "Prints no XOR{}: nothing hex-looking in what it wrote on stdout. Print it as 8 hex digits.",
                if all {
                    String::new()
                } else {
                    format!(" on {}", listed(&silent))
                }
            ),
        );
        explained.extend(silent.iter().map(|s| s.size));
    }

    let rest: Vec<&SizeGrade> = sizes
        .iter()
        .filter(|s| fails(s) && !explained.contains(&s.size))
        .collect();
    if !rest.is_empty() {
        say(
            &mut out,
            "unexplained",
            format!(
                "Also fails on {} in no pattern found here: on {} it {}.",
                listed(&rest),
                rest[0].label,
                what_it_did(rest[0])
            ),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_named_by_a_whole_unit_and_the_bytes_beyond() {
        assert_eq!(label(0), "0 B");
        assert_eq!(label(4097), "4097 B");
        assert_eq!(label(MIB + 2), "1 MiB + 2");
        assert_eq!(label(4 * MIB), "4 MiB");
        assert_eq!(label(10 * MIB + 3), "10 MiB + 3");
        assert_eq!(label(2 * GIB), "2 GiB");
        assert_eq!(label(4 * GIB + 8), "4 GiB + 8");
    }

    #[test]
    fn the_big_files_hold_data_where_their_bugs_show() {
        let b = battery(true);
        let two = b.iter().find(|p| p.size == 2 * GIB).unwrap();
        // The last page before 2 GiB, which one capped read never returns, is data.
        assert!(
            two.islands
                .iter()
                .any(|&(a, e)| a <= ONE_CALL_MOST && e == 2 * GIB)
        );
        let four = b.iter().find(|p| p.size == 4 * GIB + 8).unwrap();
        assert!(four.is_sparse());
        assert!(
            four.islands
                .iter()
                .any(|&(a, e)| a < 2 * GIB && e > 2 * GIB)
        );
        assert!(
            four.islands
                .iter()
                .any(|&(a, e)| a < 1 << 32 && e == 4 * GIB + 8)
        );
        assert!(four.data_bytes() <= 4 * MIB + 8);
        assert!(battery(false).iter().all(|p| !p.is_sparse()));
    }

    #[test]
    fn a_partial_last_word_is_never_zero() {
        for size in [1, 3, 4097, MIB + 2, 10 * MIB + 3] {
            let seed = seed_for(size);
            let tail = (size % 4) as usize;
            let mut last = vec![0u8; tail];
            crate::workload::data::DataStream::new(seed, size - tail as u64).fill(&mut last);
            assert!(last.iter().any(|&b| b != 0), "{size}");
        }
    }

    #[test]
    fn the_file_goes_where_braces_stand_or_last() {
        let p = Path::new("/d/f");
        let argv = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(with_file(&argv(&["./fast"]), p), argv(&["./fast", "/d/f"]));
        assert_eq!(
            with_file(&argv(&["./fast", "--in={}", "-v"]), p),
            argv(&["./fast", "--in=/d/f", "-v"])
        );
        assert_eq!(
            with_file(&argv(&["python3", "x.py", "{}", "{}"]), p),
            argv(&["python3", "x.py", "/d/f", "/d/f"])
        );
    }

    fn grade(size: u64, reference: u32, runs: &[(Verdict, Option<u32>)]) -> SizeGrade {
        let runs = runs
            .iter()
            .map(|&(verdict, printed)| GradeRun {
                verdict,
                exit_code: match verdict {
                    Verdict::Crashed | Verdict::Timeout => None,
                    Verdict::Exit => Some(1),
                    _ => Some(0),
                },
                signal: (verdict == Verdict::Crashed).then(|| "SIGSEGV".to_string()),
                printed: printed.map(hex),
                token: printed.map(hex),
                candidates: usize::from(printed.is_some()),
                decimal: false,
                wall_seconds: 0.01,
                user_seconds: 0.0,
                system_seconds: 0.0,
                stderr: None,
            })
            .collect();
        summarize(&Planned::whole(size), reference, runs)
    }

    const SIZES: [u64; 9] = [0, 1, 3, 4, 4095, 4097, MIB + 2, 4 * MIB, 10 * MIB + 3];

    /// A battery where `reader` says what each size printed (or how it failed).
    fn graded(reader: impl Fn(u64, u32, Hypotheses) -> (Verdict, Option<u32>)) -> Vec<Diagnosis> {
        let mut sizes = Vec::new();
        let mut hyps = Vec::new();
        for (i, &size) in SIZES.iter().enumerate() {
            let reference = if size == 0 {
                0
            } else {
                0x1000_0001 * (i as u32 + 1)
            };
            let h = Hypotheses {
                words_only: reference ^ 0xff,
                ..Hypotheses::default()
            };
            let (v, p) = reader(size, reference, h);
            sizes.push(grade(size, reference, &[(v, p), (v, p)]));
            hyps.push(h);
        }
        diagnose(&sizes, &hyps)
    }

    fn kinds(d: &[Diagnosis]) -> Vec<&str> {
        d.iter().map(|x| x.kind.as_str()).collect()
    }

    #[test]
    fn a_correct_reader_has_no_diagnosis() {
        assert!(graded(|_, r, _| (Verdict::Correct, Some(r))).is_empty());
    }

    #[test]
    fn the_whole_words_alone_on_every_partial_size_is_a_dropped_tail() {
        let d = graded(|size, r, h| {
            if size % 4 == 0 {
                (Verdict::Correct, Some(r))
            } else {
                (Verdict::Wrong, Some(h.words_only))
            }
        });
        assert_eq!(kinds(&d), ["drops_tail"]);
        assert!(
            d[0].sentence
                .contains("1 B, 3 B, 4095 B, 4097 B, 1 MiB + 2 and 10 MiB + 3")
        );
    }

    #[test]
    fn another_wrong_answer_on_the_partial_sizes_is_only_mishandled() {
        let d = graded(|size, r, _| {
            if size % 4 == 0 {
                (Verdict::Correct, Some(r))
            } else {
                (Verdict::Wrong, Some(r ^ 0x1234))
            }
        });
        assert_eq!(kinds(&d), ["tail"]);
        assert!(d[0].sentence.contains("mishandled"), "{}", d[0].sentence);
    }

    #[test]
    fn failing_on_one_partial_size_but_not_the_others_is_no_tail_pattern() {
        let d = graded(|size, r, h| {
            if size == 3 {
                (Verdict::Wrong, Some(h.words_only))
            } else {
                (Verdict::Correct, Some(r))
            }
        });
        assert_eq!(kinds(&d), ["unexplained"]);
        assert!(d[0].sentence.contains("on 3 B"), "{}", d[0].sentence);
    }

    #[test]
    fn a_crash_on_the_empty_file_alone_is_named() {
        let d = graded(|size, r, _| {
            if size == 0 {
                (Verdict::Crashed, None)
            } else {
                (Verdict::Correct, Some(r))
            }
        });
        assert_eq!(kinds(&d), ["empty"]);
        assert!(d[0].sentence.contains("SIGSEGV"));
    }

    #[test]
    fn crashes_from_one_size_up_point_at_a_fixed_buffer() {
        let d = graded(|size, r, _| {
            if size > 4 * MIB {
                (Verdict::Crashed, None)
            } else {
                (Verdict::Correct, Some(r))
            }
        });
        assert_eq!(kinds(&d), ["crashes_from"]);
        assert!(
            d[0].sentence.contains("from 10 MiB + 3 up"),
            "{}",
            d[0].sentence
        );
    }

    #[test]
    fn a_crash_at_2_gib_after_crashes_below_it_is_not_about_2_gib() {
        let mut sizes: Vec<SizeGrade> = SIZES
            .iter()
            .map(|&s| {
                if s > 4 * MIB {
                    grade(s, 7, &[(Verdict::Crashed, None)])
                } else {
                    grade(s, 7, &[(Verdict::Correct, Some(7))])
                }
            })
            .collect();
        for big in [2 * GIB, 4 * GIB + 8] {
            sizes.push(grade(big, 7, &[(Verdict::Crashed, None)]));
        }
        let d = diagnose(&sizes, &[]);
        assert_eq!(kinds(&d), ["crashes_from"], "{d:?}");
    }

    #[test]
    fn a_deadline_the_smallest_files_all_miss_is_not_about_the_empty_file() {
        let d = graded(|size, r, _| {
            if size <= 4 {
                (Verdict::Timeout, None)
            } else {
                (Verdict::Correct, Some(r))
            }
        });
        assert_eq!(kinds(&d), ["timeout"], "{d:?}");
        assert!(
            d[0].sentence.contains("0 B, 1 B, 3 B and 4 B"),
            "{}",
            d[0].sentence
        );
    }

    #[test]
    fn crashes_here_and_there_are_only_listed() {
        let d = graded(|size, r, _| {
            if size == 3 || size == 4 * MIB {
                (Verdict::Crashed, None)
            } else {
                (Verdict::Correct, Some(r))
            }
        });
        assert_eq!(kinds(&d), ["crashes"]);
    }

    #[test]
    fn the_right_answer_byte_swapped_is_big_endian_words() {
        let d = graded(|size, r, _| {
            if size % 4 == 0 && size > 0 {
                (Verdict::Wrong, Some(r.swap_bytes()))
            } else {
                (Verdict::Correct, Some(r))
            }
        });
        assert!(kinds(&d).contains(&"byte_order"), "{d:?}");
    }

    #[test]
    fn different_answers_for_one_file_are_not_deterministic() {
        let mut sizes: Vec<SizeGrade> = SIZES
            .iter()
            .map(|&s| grade(s, 7, &[(Verdict::Correct, Some(7))]))
            .collect();
        sizes[7] = grade(
            4 * MIB,
            7,
            &[(Verdict::Wrong, Some(8)), (Verdict::Correct, Some(7))],
        );
        let d = diagnose(&sizes, &[]);
        assert_eq!(kinds(&d), ["unstable"]);
        assert!(
            d[0].sentence.contains("2 different XORs"),
            "{}",
            d[0].sentence
        );
    }

    #[test]
    fn the_right_xor_with_a_failing_status_is_named() {
        let d = graded(|_, r, _| (Verdict::Exit, Some(r)));
        assert_eq!(kinds(&d), ["exit_status"]);
        assert!(
            d[0].sentence
                .contains("although the XOR it printed is right")
        );
    }

    #[test]
    fn the_right_xor_in_base_10_is_named() {
        let mut sizes: Vec<SizeGrade> = Vec::new();
        for (i, &size) in SIZES.iter().enumerate() {
            if size == 0 {
                // 0 is 0 in any base: the empty file is right.
                sizes.push(grade(0, 0, &[(Verdict::Correct, Some(0))]));
                continue;
            }
            let reference = 0x1000_0001 * (i as u32 + 1);
            let mut g = grade(size, reference, &[(Verdict::Wrong, None)]);
            // A reader printing "%u": the right XOR in base 10 in its output.
            g.runs[0].decimal = true;
            sizes.push(g);
        }
        let d = diagnose(&sizes, &[]);
        assert_eq!(kinds(&d), ["decimal"], "{d:?}");
        assert!(
            d[0].sentence.contains("on 1 B, 3 B, 4 B"),
            "{}",
            d[0].sentence
        );
    }

    #[test]
    fn printing_nothing_hex_is_no_xor() {
        let d = graded(|size, r, _| {
            if size == 0 {
                (Verdict::Correct, Some(r))
            } else {
                (Verdict::Wrong, None)
            }
        });
        assert_eq!(kinds(&d), ["no_xor"]);
        assert!(
            d[0].sentence.starts_with("Prints no XOR:"),
            "{}",
            d[0].sentence
        );
    }

    #[test]
    fn a_worse_run_gives_the_size_its_verdict() {
        let g = grade(
            4,
            7,
            &[
                (Verdict::Correct, Some(7)),
                (Verdict::Crashed, None),
                (Verdict::Wrong, Some(8)),
            ],
        );
        assert_eq!(g.verdict, Verdict::Crashed);
        assert_eq!(g.failed_runs, 2);
        assert_eq!(g.shown_run, 1);
    }

    #[test]
    fn the_reference_and_the_hypotheses_follow_from_the_bytes_written() {
        let dir = tempfile::tempdir().unwrap();
        for planned in battery(false) {
            let made = make(dir.path(), &planned, Some(0)).unwrap();
            let bytes = std::fs::read(made.out.path()).unwrap();
            assert_eq!(bytes.len() as u64, planned.size);
            assert_eq!(made.reference, crate::checksum::xor_bytes(&bytes));
            let words = bytes.len() / 4 * 4;
            assert_eq!(
                made.hypotheses.words_only,
                crate::checksum::xor_bytes(&bytes[..words])
            );
            if planned.size % 4 != 0 {
                assert_ne!(made.reference, made.hypotheses.words_only);
            }
        }
    }
}
