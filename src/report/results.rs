//! The study's result directory: `study.json` (every raw run, the environment, the method),
//! a CSV file per table, an SVG file per chart, and `report.html`. Rewritten whole after
//! every part (each file replaced atomically), so an interruption leaves a valid report of
//! what was measured.

use super::view::Exportable;
use super::views::study::sections;
use crate::error::input;
use crate::files;
use crate::report::json::Provenance;
use crate::results::baseline::Against;
use crate::results::study::StudyReport;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// A result directory this run owns.
pub struct ResultDir {
    dir: PathBuf,
    created: bool,
    /// `.ioscope-writing`: claims the directory for this run (removed at the end).
    lock: PathBuf,
    provenance: OnceLock<Provenance>,
}

const LOCK: &str = ".ioscope-writing";

/// The names a study writes into its report directory.
fn own_files() -> Vec<String> {
    let mut names = vec![
        "study.json".to_string(),
        "report.html".to_string(),
        "report.md".to_string(),
        "write-read.csv".to_string(),
    ];
    for part in crate::workload::study::all() {
        names.push(format!("{}.csv", part.name()));
        names.push(format!("{}.svg", part.name()));
    }
    names
}

impl Drop for ResultDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.lock);
    }
}

/// `ioscope-report-YYYYMMDD-HHMMSS` (UTC) for now.
fn default_name() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let rest = secs % 86_400;
    format!(
        "ioscope-report-{}-{:02}{:02}{:02}",
        crate::units::format_date(secs).replace('-', ""),
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

impl ResultDir {
    /// Creates the directory: `given`, which must not exist or be empty (any directory with
    /// `--force`), or a new `./ioscope-report-DATE-TIME`.
    pub fn create(given: Option<&Path>, force: bool) -> Result<Self> {
        let mut created = true;
        let dir = match given {
            Some(dir) => {
                // Its files would be written (and with --force, old ones removed) wherever
                // the link leads.
                files::refuse_symlink(
                    dir,
                    &format!("study: --out {}", crate::text::printable_path(dir)),
                )?;
                match std::fs::read_dir(dir) {
                    Ok(mut entries) => {
                        if entries.next().is_some() && !force {
                            return Err(input(format!(
                                "study: --out {}: the directory is not empty; choose a new one or pass --force to write into it",
                                crate::text::printable_path(dir)
                            )));
                        }
                        created = false;
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        std::fs::create_dir(dir).map_err(|e| {
                            input(format!(
                                "study: create {}: {}",
                                crate::text::printable_path(dir),
                                files::describe(&e)
                            ))
                        })?;
                    }
                    Err(e) => {
                        return Err(input(format!(
                            "study: --out {}: {}",
                            crate::text::printable_path(dir),
                            files::describe(&e)
                        )));
                    }
                }
                dir.to_path_buf()
            }
            None => {
                let base = default_name();
                let mut n = 1;
                loop {
                    let name = if n == 1 {
                        base.clone()
                    } else {
                        format!("{base}-{n}")
                    };
                    match std::fs::create_dir(&name) {
                        Ok(()) => break PathBuf::from(name),
                        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => {
                            n += 1
                        }
                        Err(e) => {
                            return Err(input(format!(
                                "study: create {name}: {}",
                                files::describe(&e)
                            )));
                        }
                    }
                }
            }
        };
        // Claim the directory: a second study given the same --out would otherwise mix its
        // files with this one's.
        let lock = dir.join(LOCK);
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&lock)
            .map_err(|e| {
                input(if e.kind() == std::io::ErrorKind::AlreadyExists {
                    format!(
                        "study: --out {}: another study is writing there now (or one was killed: remove {} if none runs)",
                        crate::text::printable_path(&dir),
                        crate::text::printable_path(&lock)
                    )
                } else {
                    format!("study: create {}: {}", crate::text::printable_path(&lock), files::describe(&e))
                })
            })?;
        if !created {
            // --force into an old report: its files would sit beside the new ones and
            // disagree with them.
            for name in own_files() {
                let _ = std::fs::remove_file(dir.join(name));
            }
        }
        Ok(Self {
            dir,
            created,
            lock,
            provenance: OnceLock::new(),
        })
    }

    /// Removes the directory again when this run made it and wrote nothing (the study
    /// failed before its first part ended).
    pub fn discard(&self) {
        let _ = std::fs::remove_file(&self.lock);
        if self.created {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// The page.
    pub fn html(&self) -> PathBuf {
        self.dir.join("report.html")
    }

    /// Writes `name` in the directory atomically (a temporary name, then rename). The
    /// temporary name is created new (O_EXCL: never through a link left there), and named
    /// to the exit-at-once path of a second Ctrl-C until it is renamed.
    fn put(&self, name: &str, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        let tmp = self.dir.join(format!(".{name}.tmp"));
        let path = self.dir.join(name);
        // One left by a study that was killed (a link too: removing it follows nothing).
        let _ = std::fs::remove_file(&tmp);
        let failed = |e: std::io::Error| {
            input(format!(
                "write {}: {}",
                crate::text::printable_path(&tmp),
                files::describe(&e)
            ))
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
            .map_err(failed)?;
        let registration = crate::interrupt::Registration::new(&tmp);
        if let Err(e) = file.write_all(bytes) {
            let _ = std::fs::remove_file(&tmp);
            return Err(failed(e));
        }
        drop(file);
        let renamed = std::fs::rename(&tmp, &path)
            .with_context(|| format!("rename {}", crate::text::printable_path(&path)));
        drop(registration);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        renamed
    }

    /// Writes every file of the report so far.
    pub fn save(&self, r: &StudyReport) -> Result<()> {
        self.save_against(r, None)
    }

    /// Writes every file of the report, with the comparison with a baseline in the page,
    /// the Markdown and `study.json` (as `--json` prints it) where there is one.
    pub fn save_against(&self, r: &StudyReport, baseline: Option<&Against>) -> Result<()> {
        #[derive(serde::Serialize)]
        struct WithBaseline<'a> {
            #[serde(flatten)]
            result: &'a StudyReport,
            baseline: &'a Against,
        }
        let provenance = self
            .provenance
            .get_or_init(|| Provenance::here(Path::new(&r.dir)));
        let env = &provenance.environment;
        let json = match baseline {
            Some(baseline) => super::json::document(
                "study",
                &WithBaseline {
                    result: r,
                    baseline,
                },
                provenance,
            ),
            None => super::json::document("study", r, provenance),
        };
        self.put("study.json", json.as_bytes())?;
        let csv = |t: &super::csv::Table| super::csv::render(t);
        self.put("write-read.csv", &csv(&r.table())?)?;
        for p in super::views::part::all() {
            if let Some(table) = p.table(r) {
                self.put(&format!("{}.csv", p.part().name()), &csv(&table)?)?;
            }
        }
        for s in sections(r, env) {
            if let Some(chart) = &s.chart {
                let svg = super::svg::render(chart)?;
                self.put(&format!("{}.svg", s.part.name()), svg.as_bytes())?;
            }
        }
        let command_line = std::env::args_os()
            .map(|a| crate::text::printable(&crate::text::lossless(&a)))
            .collect::<Vec<_>>()
            .join(" ");
        let page = super::views::study::page(r, env, provenance, &command_line, None, baseline)?;
        self.put("report.html", page.as_bytes())?;
        self.put(
            "report.md",
            super::views::study::report_markdown(r, provenance, baseline).as_bytes(),
        )
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_default_name_is_a_date_and_a_time() {
        let name = super::default_name();
        assert!(name.starts_with("ioscope-report-20"), "{name}");
        let tail = &name["ioscope-report-".len()..];
        assert_eq!(tail.len(), 15, "{name}");
        assert!(tail[..8].chars().all(|c| c.is_ascii_digit()));
        assert_eq!(&tail[8..9], "-");
    }
}
