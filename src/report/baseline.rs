//! Baselines on disk and on the page. One JSON file per command and name in the baseline
//! directory (`sweep-before.json`), written whole under a temporary name in the same
//! directory and linked into place only where nothing is (never replacing a baseline the user
//! did not remove, never through a symbolic link). Read back with every check done before
//! anything is measured: a missing, unreadable or crafted file is one line naming the file
//! and the operation (exit 2). Rendered as a section after the result: one line per figure
//! (old → new, change, interval, verdict) through the column model, what changed in the
//! environment, and last the answer.

use super::columns::{self, Column};
use super::json::Provenance;
use crate::error::input;
use crate::files::{describe, refuse_symlink};
use crate::measure::verdict::Movement;
use crate::options::BaselineOptions;
use crate::results::baseline::{Against, BASELINE_SCHEMA, Baseline, Compared};
use crate::results::figures::{BYTES_PER_SECOND, Figure, Figures, IOPS, SYNCS_PER_SECOND};
use crate::text::{printable, printable_path};
use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The largest baseline file read (a crafted one must not fill the memory).
pub const MAX_BYTES: u64 = 64 << 20;

/// The file of baseline `name` of `command` in `dir`.
pub fn path_of(dir: &Path, command: &str, name: &str) -> PathBuf {
    dir.join(format!("{command}-{name}.json"))
}

/// Refuses to go on when baseline `name` of `command` already exists (or a link is in its
/// place): checked before measuring, so a long run is not lost at the end.
pub fn check_free(dir: &Path, command: &str, name: &str) -> Result<PathBuf> {
    let path = path_of(dir, command, name);
    let at = format!("--save-baseline {name}: {}", printable_path(&path));
    refuse_symlink(&path, &at)?;
    if std::fs::symlink_metadata(&path).is_ok() {
        return Err(input(format!(
            "{at}: a baseline of that name exists; choose another name, or remove the file to replace it"
        )));
    }
    if dir.exists() && !dir.is_dir() {
        return Err(input(format!(
            "--baseline-dir {}: not a directory",
            printable_path(dir)
        )));
    }
    Ok(path)
}

/// Reads baseline `name` of `command` from `dir`, refusing a missing, unreadable, oversized,
/// malformed or crafted file in one line that names it.
pub fn load(dir: &Path, command: &str, name: &str) -> Result<(Baseline, PathBuf)> {
    load_for("--baseline", dir, command, name)
}

/// [`load`], its errors starting with `flag` (`--baseline`, `--add-to-baseline`).
fn load_for(flag: &str, dir: &Path, command: &str, name: &str) -> Result<(Baseline, PathBuf)> {
    use std::io::Read;
    let path = path_of(dir, command, name);
    let at = format!("{flag} {name}: read {}", printable_path(&path));
    let meta = std::fs::symlink_metadata(&path).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "; save one first with `ioscope {} --save-baseline {name}`",
                crate::results::baseline::invocation(command)
            )
        } else {
            String::new()
        };
        input(format!("{at}: {}{hint}", describe(&e)))
    })?;
    if !meta.is_file() {
        return Err(input(format!(
            "{at}: not a regular file (a link or a device is not read)"
        )));
    }
    if meta.len() > MAX_BYTES {
        return Err(input(format!(
            "{at}: {} bytes; a baseline is at most {MAX_BYTES}",
            meta.len()
        )));
    }
    let mut text = String::new();
    std::fs::File::open(&path)
        .and_then(|f| f.take(MAX_BYTES).read_to_string(&mut text))
        .map_err(|e| input(format!("{at}: {}", describe(&e))))?;
    let baseline: Baseline = serde_json::from_str(&text).map_err(|e| {
        input(format!(
            "{at}: not an ioscope baseline ({BASELINE_SCHEMA}): {e}"
        ))
    })?;
    if let Some(why) = baseline.refusal(command) {
        return Err(input(format!("{at}: {why}")));
    }
    Ok((baseline, path))
}

/// The date and time now, UTC: `YYYY-MM-DD HH:MM UTC`.
fn now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let day = secs % 86_400;
    format!(
        "{} {:02}:{:02} UTC",
        crate::units::format_date(secs),
        day / 3600,
        day % 3600 / 60
    )
}

/// The baseline of a result: its figures, the whole result as JSON, and who measured where.
pub fn make<T: serde::Serialize>(
    command: &str,
    name: &str,
    result: &T,
    figures: Vec<Figure>,
    provenance: &Provenance,
) -> Baseline {
    let env = &provenance.environment;
    Baseline {
        schema: BASELINE_SCHEMA.to_string(),
        command: command.to_string(),
        name: name.to_string(),
        version: provenance.version.clone(),
        commit: provenance.commit.clone(),
        date: Some(now()),
        added: Vec::new(),
        command_line: provenance.command_line.clone(),
        environment: env.clone(),
        host: crate::measure::host::Host::collect(
            env.storage.mount_point.as_deref(),
            env.storage.device.as_deref(),
        ),
        figures,
        result: serde_json::to_value(result).unwrap_or(serde_json::Value::Null),
    }
}

/// Writes `baseline` to `path` (in `dir`, made if missing): whole under a temporary name
/// in the same directory, synced, then linked to its name, which fails rather than replace
/// a file that appeared there meanwhile.
pub fn save(dir: &Path, path: &Path, baseline: &Baseline) -> Result<()> {
    write_baseline(dir, path, baseline, None)
}

/// Writes `baseline` in place of the file at `path` it was read from (`was`: that file's
/// device and inode), for `--add-to-baseline`: whole under a temporary name, synced, then
/// renamed over it, only while the name is still that regular file (never through a link,
/// never over a file that took its place meanwhile).
pub fn replace(dir: &Path, path: &Path, baseline: &Baseline, was: (u64, u64)) -> Result<()> {
    write_baseline(dir, path, baseline, Some(was))
}

/// The device and inode of the regular file at `path`, not following a link.
pub fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).ok()?;
    meta.is_file().then(|| (meta.dev(), meta.ino()))
}

/// [`save`] (`replacing` none: linked where nothing is) or [`replace`].
fn write_baseline(
    dir: &Path,
    path: &Path,
    baseline: &Baseline,
    replacing: Option<(u64, u64)>,
) -> Result<()> {
    let flag = if replacing.is_some() {
        "--add-to-baseline"
    } else {
        "--save-baseline"
    };
    let at = format!("{flag} {}: write {}", baseline.name, printable_path(path));
    std::fs::create_dir_all(dir).map_err(|e| {
        input(format!(
            "--baseline-dir {}: {}",
            printable_path(dir),
            describe(&e)
        ))
    })?;
    let text = serde_json::to_string_pretty(baseline).expect("a baseline serialises") + "\n";
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        std::process::id()
    ));
    let write = || -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()
    };
    let linked = write().and_then(|()| match replacing {
        None => std::fs::hard_link(&tmp, path),
        Some(was) if identity(path) == Some(was) => std::fs::rename(&tmp, path),
        Some(_) => Err(std::io::Error::other(
            "the baseline was removed or replaced while measuring; nothing was written",
        )),
    });
    let _ = std::fs::remove_file(&tmp);
    linked.map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            input(format!(
                "{at}: a baseline of that name appeared while measuring; choose another name, or remove the file to replace it"
            ))
        } else {
            input(format!("{at}: {}", describe(&e)))
        }
    })?;
    Ok(())
}

/// The line of a repeated `run` or `fast`: n, the median and the range of the rates, and
/// whether they scatter by the one rule; `None` for a single run.
pub fn repeats_line(rates: &[f64]) -> Option<String> {
    use crate::measure::verdict::{Figure as Spread, SCATTERED, scattered};
    use crate::units::format_mib_per_s;
    if rates.len() < 2 {
        return None;
    }
    let side = crate::results::baseline::Side::of(rates);
    let spread = Spread {
        median: side.median,
        min: side.min,
        max: side.max,
        n: side.n,
    };
    let how = if scattered(spread) {
        format!(
            "; they scatter beyond {:.0}%: treat the median with care",
            (SCATTERED - 1.0) * 100.0
        )
    } else {
        String::new()
    };
    Some(format!(
        "{} runs: median {}, min–max {}–{}{how}; the lines above are the median run's",
        side.n,
        format_mib_per_s(side.median),
        format_mib_per_s(side.min),
        format_mib_per_s(side.max),
    ))
}

/// The columns a repeated `run` or `fast` adds to its one-row table: n, min and max bytes
/// per second (nothing for a single run, so older tables stay as they were).
pub fn repeats_columns(t: &mut super::csv::Table, rates: &[f64]) {
    if rates.len() < 2 {
        return;
    }
    let side = crate::results::baseline::Side::of(rates);
    t.header
        .extend(["runs", "min_bytes_per_second", "max_bytes_per_second"].map(String::from));
    if let Some(row) = t.rows.first_mut() {
        row.extend([
            side.n.to_string(),
            side.min.to_string(),
            side.max.to_string(),
        ]);
    }
}

/// A value of `unit` as a reader reads it.
fn value(unit: &str, v: f64) -> String {
    use crate::units::group_thousands;
    match unit {
        BYTES_PER_SECOND => crate::units::format_mib_per_s(v),
        IOPS => format!("{} IOPS", group_thousands(v.round() as u64)),
        SYNCS_PER_SECOND => format!("{} syncs/s", group_thousands(v.round() as u64)),
        _ => crate::units::format_seconds(v),
    }
}

/// A signed percentage: `+12.3%`, `-4.0%`.
fn percent(x: f64) -> String {
    format!("{:+.1}%", x * 100.0)
}

/// Old → new in one cell, the unit said once: `2516 → 2152 MiB/s`.
fn old_new(c: &Compared) -> String {
    let (a, b) = (value(&c.unit, c.old.median), value(&c.unit, c.new.median));
    match (a.rsplit_once(' '), b.rsplit_once(' ')) {
        (Some((x, u)), Some((_, v))) if u == v => format!("{x} → {b}"),
        _ => format!("{a} → {b}"),
    }
}

/// The columns of the comparison, shared by the text and Markdown.
fn compared_columns<'a>() -> Vec<Column<'a, Compared>> {
    vec![
        Column::new("figure", "", 0, |c: &Compared| c.key.clone()).left(),
        Column::new("baseline → now", "", 1, old_new),
        Column::new("change", "", 0, |c: &Compared| percent(c.change.change)),
        Column::new("95% CI", "", 2, |c: &Compared| {
            format!(
                "{:+.1}..{:+.1}%",
                c.change.ci[0] * 100.0,
                c.change.ci[1] * 100.0
            )
        }),
        Column::new("noise", "", 3, |c: &Compared| {
            format!("±{:.1}%", c.change.floor * 100.0)
        }),
        Column::new("n", "", 4, |c: &Compared| {
            format!("{}/{}", c.old.n, c.new.n)
        }),
        Column::new("verdict", "", 0, |c: &Compared| {
            c.change.verdict.words().to_string()
        })
        .words(),
    ]
}

/// The heading of the section: "against baseline NAME (saved DATE, host, commit)".
fn heading(a: &Against) -> String {
    let mut facts: Vec<String> = Vec::new();
    if let Some(d) = &a.saved {
        facts.push(format!("saved {d}"));
    }
    if let Some(h) = &a.host {
        facts.push(printable(h));
    }
    if let Some(c) = &a.commit {
        facts.push(format!("commit {}", printable(c)));
    }
    if a.processes > 1 {
        facts.push(format!("now over {} processes", a.processes));
    }
    if facts.is_empty() {
        format!("against baseline {}", a.name)
    } else {
        format!("against baseline {} ({})", a.name, facts.join(", "))
    }
}

/// The section printed after the result: the figures, those of one side only, what changed
/// in the environment, then the answer (last).
pub fn text(a: &Against, width: Option<usize>) -> String {
    let mut out = format!("\n{}\n", heading(a));
    if !a.figures.is_empty() {
        out.push_str(&columns::text(&compared_columns(), &a.figures, width).text);
    }
    for note in a.notes() {
        out.push_str(&textwrap::fill(&note, width.unwrap_or(80).max(20)));
        out.push('\n');
    }
    if !a.only_baseline.is_empty() {
        out.push_str(&format!(
            "only in the baseline: {}\n",
            printable(&a.only_baseline.join(", "))
        ));
    }
    if !a.only_now.is_empty() {
        out.push_str(&format!(
            "only in this run: {}\n",
            printable(&a.only_now.join(", "))
        ));
    }
    if a.environment.is_empty() {
        out.push_str("environment: as when the baseline was saved\n");
    } else {
        out.push_str("changed since the baseline (the first thing to suspect):\n");
        for c in &a.environment {
            out.push_str(&format!(
                "  {}: {} → {}\n",
                c.what,
                printable(&c.then),
                printable(&c.now)
            ));
        }
    }
    out.push_str(&format!("{}\n", printable(&a.answer())));
    out
}

/// The section as Markdown: a heading, a table, the environment's changes, the answer.
pub fn markdown(a: &Against) -> Vec<String> {
    use super::markdown::{escape, list, table};
    let mut blocks = vec![format!("{}\n", escape(&heading(a)))];
    if !a.figures.is_empty() {
        blocks.push(table(
            &columns::markdown(&compared_columns(), &a.figures),
            None,
        ));
    }
    for note in a.notes() {
        blocks.push(format!("{}\n", escape(&note)));
    }
    for (what, keys) in [
        ("Only in the baseline", &a.only_baseline),
        ("Only in this run", &a.only_now),
    ] {
        if !keys.is_empty() {
            blocks.push(format!("{what}: {}\n", escape(&keys.join(", "))));
        }
    }
    let changes: Vec<String> = a
        .environment
        .iter()
        .map(|c| format!("{}: {} → {}", c.what, c.then, c.now))
        .collect();
    if !changes.is_empty() {
        blocks.push(list(
            "Changed since the baseline (the first thing to suspect):",
            &changes,
        ));
    }
    blocks.push(format!("{}\n", escape(&a.answer())));
    blocks
}

/// The section as HTML, through the crate's table helper: a heading, the table, the
/// figures of one side only, what changed in the environment, then the answer.
pub fn html(a: &Against) -> String {
    use super::html::{escape, table};
    use std::fmt::Write as _;
    let regressed = if a.regressed() { " bad" } else { "" };
    // A heading of the page, capitalised as the others are.
    let title = heading(a);
    let title = format!("A{}", title.strip_prefix('a').unwrap_or(&title));
    let mut out = format!(
        "<section class=\"part baseline\" id=\"baseline\">\n<h2>{}</h2>\n",
        escape(&title)
    );
    table(&mut out, &columns::grid(&compared_columns(), &a.figures));
    let mut facts: Vec<String> = a.notes();
    if !a.only_baseline.is_empty() {
        facts.push(format!(
            "only in the baseline: {}",
            printable(&a.only_baseline.join(", "))
        ));
    }
    if !a.only_now.is_empty() {
        facts.push(format!(
            "only in this run: {}",
            printable(&a.only_now.join(", "))
        ));
    }
    if a.environment.is_empty() {
        facts.push("environment: as when the baseline was saved".to_string());
    } else {
        facts.extend(a.environment.iter().map(|c| {
            format!(
                "changed since the baseline (the first thing to suspect): {}: {} → {}",
                c.what,
                printable(&c.then),
                printable(&c.now)
            )
        }));
    }
    out.push_str("<ul class=\"why\">\n");
    for f in &facts {
        let _ = writeln!(out, "<li>{}</li>", escape(f));
    }
    out.push_str("</ul>\n");
    let _ = writeln!(
        out,
        "<p class=\"banner{regressed}\">{}</p>\n</section>",
        escape(&printable(&a.answer()))
    );
    out
}

/// Whether a verdict is a regression (for callers that count).
pub fn is_regression(c: &Compared) -> bool {
    c.change.verdict == Movement::Regressed
}

/// What a command does with baselines, settled before it measures: the old one read and
/// checked, the new one's name checked free.
#[derive(Debug, Default)]
pub struct Pending {
    command: &'static str,
    old: Option<(Baseline, PathBuf)>,
    save: Option<(String, PathBuf)>,
    /// The baseline to add this moment to, and its file's identity when read.
    add: Option<(Baseline, PathBuf, (u64, u64))>,
    dir: PathBuf,
    /// How many processes measure (`--processes`), and whether this is one of another's.
    processes: usize,
    part: bool,
    /// The figures the other processes measured.
    others: std::cell::RefCell<Vec<Vec<Figure>>>,
}

impl Pending {
    /// Reads the baseline to compare with and checks the name to save under, for results of
    /// `command`, before anything is measured.
    pub fn before(command: &'static str, o: &BaselineOptions) -> Result<Self> {
        if o.part {
            return Ok(Self {
                command,
                part: true,
                processes: 1,
                ..Self::default()
            });
        }
        let old = o
            .compare
            .as_deref()
            .map(|name| load(&o.dir, command, name))
            .transpose()?;
        let save = o
            .save
            .as_deref()
            .map(|name| check_free(&o.dir, command, name).map(|p| (name.to_string(), p)))
            .transpose()?;
        let add = o
            .add
            .as_deref()
            .map(|name| -> Result<_> {
                let (b, path) = load_for("--add-to-baseline", &o.dir, command, name)?;
                let id = identity(&path).ok_or_else(|| {
                    input(format!(
                        "--add-to-baseline {name}: {}: not a regular file",
                        printable_path(&path)
                    ))
                })?;
                Ok((b, path, id))
            })
            .transpose()?;
        Ok(Self {
            command,
            old,
            save,
            add,
            dir: o.dir.clone(),
            processes: o.processes,
            part: false,
            others: Default::default(),
        })
    }

    /// Whether this process is one of another's `--processes`: it measures and prints its
    /// figures, and saves and compares nothing.
    pub fn is_part(&self) -> bool {
        self.part
    }

    /// Runs the other processes `--processes` asks for, one after another, each this
    /// command again with `--baseline-part`, and keeps their figures.
    pub fn measure_others(&self) -> Result<()> {
        if self.is_none() || self.processes < 2 {
            return Ok(());
        }
        let exe = std::env::current_exe().context("--processes: where is ioscope")?;
        let mut args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
        // Before any `--`, which would make it a file name.
        let at = args.iter().position(|a| a == "--").unwrap_or(args.len());
        args.insert(at, "--baseline-part".into());
        for i in 2..=self.processes {
            crate::interrupt::check()?;
            let out = std::process::Command::new(&exe)
                .args(&args)
                .stdin(std::process::Stdio::null())
                .output()
                .with_context(|| format!("--processes: start process {i}"))?;
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                let last = err
                    .lines()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("");
                anyhow::bail!(
                    "--processes: process {i} of {} failed ({}): {}",
                    self.processes,
                    out.status,
                    printable(last.trim())
                );
            }
            let figures: Vec<Figure> = serde_json::from_slice(&out.stdout)
                .with_context(|| format!("--processes: read process {i}'s figures"))?;
            self.others.borrow_mut().push(figures);
        }
        Ok(())
    }

    /// `result`'s figures, each with the runs of the same figure from the other processes.
    fn figures<T: Figures>(&self, result: &T) -> Vec<Figure> {
        let mut figures = result.figures();
        let others = self.others.borrow();
        if others.is_empty() {
            return figures;
        }
        for f in figures.iter_mut() {
            f.processes = vec![f.runs.len()];
            for other in others.iter() {
                if let Some(o) = other.iter().find(|o| o.key == f.key && o.unit == f.unit) {
                    f.runs.extend_from_slice(&o.runs);
                    f.processes.push(o.runs.len());
                }
            }
        }
        figures
    }

    /// Whether nothing is to be done.
    pub fn is_none(&self) -> bool {
        self.old.is_none() && self.save.is_none() && self.add.is_none()
    }

    /// `result` against the old baseline, if one was asked for.
    pub fn against<T: Figures>(&self, result: &T, provenance: &Provenance) -> Option<Against> {
        let (old, path) = self.old.as_ref()?;
        let env = &provenance.environment;
        let host = crate::measure::host::Host::collect(
            env.storage.mount_point.as_deref(),
            env.storage.device.as_deref(),
        );
        let mut against = crate::results::baseline::against(
            old,
            &crate::text::lossless(path.as_os_str()),
            &self.figures(result),
            env,
            &host,
        );
        against.processes = 1 + self.others.borrow().len();
        Some(against)
    }

    /// Saves `result` under the new name, if one was given; the line saying where.
    pub fn save<T: Figures + serde::Serialize>(
        &self,
        result: &T,
        provenance: &Provenance,
    ) -> Result<Option<String>> {
        if let Some((old, path, was)) = &self.add {
            let mut baseline = old.clone();
            let only_new = baseline
                .add_moment(&self.figures(result), now())
                .map_err(|why| {
                    input(format!(
                        "--add-to-baseline {}: {}: {why}",
                        old.name,
                        printable_path(path)
                    ))
                })?;
            replace(&self.dir, path, &baseline, *was)?;
            let left = if only_new.is_empty() {
                String::new()
            } else {
                format!(
                    "; not in it, so not added: {}",
                    printable(&only_new.join(", "))
                )
            };
            return Ok(Some(format!(
                "baseline {} now spans {} moments: {}{left}\n",
                old.name,
                baseline.moments(),
                printable_path(path)
            )));
        }
        let Some((name, path)) = &self.save else {
            return Ok(None);
        };
        let baseline = make(self.command, name, result, self.figures(result), provenance);
        save(&self.dir, path, &baseline)?;
        let n = baseline.figures.len();
        let processes = 1 + self.others.borrow().len();
        let over = if processes > 1 {
            format!(", each over {processes} processes")
        } else {
            String::new()
        };
        Ok(Some(format!(
            "baseline {name} saved: {} ({n} figure{}{over})\n",
            printable_path(path),
            if n == 1 { "" } else { "s" }
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provenance() -> Provenance {
        Provenance {
            version: "0.1.0".to_string(),
            command_line: vec!["ioscope".to_string(), "sweep".to_string()],
            ..Provenance::default()
        }
    }

    #[test]
    fn a_baseline_reads_back_as_it_was_saved() {
        let dir = tempfile::tempdir().unwrap();
        let figures = vec![Figure::rate("read warm 4 KiB", vec![1.0, 2.0, 3.0])];
        let b = make(
            "sweep",
            "a",
            &serde_json::json!({"x": 1}),
            figures,
            &provenance(),
        );
        let path = check_free(dir.path(), "sweep", "a").unwrap();
        save(dir.path(), &path, &b).unwrap();
        let (back, at) = load(dir.path(), "sweep", "a").unwrap();
        assert_eq!(at, path);
        assert_eq!(back.figures, b.figures);
        assert_eq!(back.result, serde_json::json!({"x": 1}));
        assert_eq!(back.command_line, b.command_line);
        // Now taken: neither checked free nor saved over.
        assert!(check_free(dir.path(), "sweep", "a").is_err());
        assert!(save(dir.path(), &path, &b).is_err());
        assert_eq!(load(dir.path(), "sweep", "a").unwrap().0.figures, b.figures);
        // Another command's file of the same name is another baseline.
        assert!(load(dir.path(), "disk", "a").is_err());
    }

    #[test]
    fn a_link_is_neither_read_nor_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        let figures = vec![Figure::rate("read", vec![1.0])];
        let b = make("fast", "a", &1, figures, &provenance());
        let real = dir.path().join("real");
        save(&real, &path_of(&real, "fast", "a"), &b).unwrap();
        std::fs::copy(path_of(&real, "fast", "a"), &target).unwrap();
        std::os::unix::fs::symlink(&target, path_of(dir.path(), "fast", "a")).unwrap();
        assert!(check_free(dir.path(), "fast", "a").is_err());
        let err = format!("{:#}", load(dir.path(), "fast", "a").unwrap_err());
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_crafted_file_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_of(dir.path(), "sweep", "x");
        let crafted = r#"{"schema":"ioscope/baseline/v1","command":"sweep","name":"x","version":"1","figures":[{"key":"a","unit":"bytes_per_second","higher_is_better":true,"runs":[0.0]}]}"#;
        std::fs::write(&path, crafted).unwrap();
        let err = format!("{:#}", load(dir.path(), "sweep", "x").unwrap_err());
        assert!(
            err.contains("sweep-x.json") && err.contains("positive"),
            "{err}"
        );
        std::fs::write(&path, "[]").unwrap();
        let err = format!("{:#}", load(dir.path(), "sweep", "x").unwrap_err());
        assert!(err.contains("not an ioscope baseline"), "{err}");
    }

    #[test]
    fn the_section_ends_with_the_answer_and_fits_80_columns() {
        let old = make(
            "sweep",
            "a",
            &1,
            vec![
                Figure::rate("read warm 4 KiB", vec![100e6, 101e6, 99e6]),
                Figure::rate("read warm 64 KiB", vec![100e6, 101e6, 99e6]),
            ],
            &provenance(),
        );
        let new = [
            Figure::rate("read warm 4 KiB", vec![50e6, 50.5e6, 49.5e6]),
            Figure::rate("read warm 64 KiB", vec![100e6, 100.5e6, 99.5e6]),
        ];
        let env = crate::measure::env::Environment::default();
        let a = crate::results::baseline::against(&old, "f", &new, &env, &Default::default());
        let text = text(&a, Some(80));
        assert!(
            text.lines().all(|l| textwrap::core::display_width(l) <= 80),
            "{text}"
        );
        assert_eq!(
            text.lines().last(),
            Some("1 of 2 figures regressed: read warm 4 KiB")
        );
        assert!(markdown(&a).join("\n").contains("read warm 4 KiB"));
        let page = html(&a);
        assert!(page.contains("<h2>Against baseline a"), "{page}");
        assert!(page.contains("<td>read warm 4&nbsp;KiB</td>"), "{page}");
        assert!(
            page.ends_with(
                "<p class=\"banner bad\">1 of 2 figures regressed: read warm 4 KiB</p>\n</section>\n"
            ),
            "{page}"
        );
    }
}
