//! The command line's own documentation, generated from its clap definitions so it never
//! drifts from them: shell completion scripts (clap_complete) and manual pages in roff
//! (clap_mangen). Hidden subcommands stay out of both.

use crate::cli::Cli;
use crate::error::input;
use anyhow::Result;
use clap::CommandFactory;

/// The completion script of `shell` for `ioscope`.
pub fn completions(shell: clap_complete::Shell) -> String {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "ioscope", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// The manual page of ioscope (section 1, its subcommands listed), or of one subcommand
/// (`ioscope-sweep(1)`): clap_mangen's NAME, SYNOPSIS, OPTIONS and SUBCOMMANDS, with a
/// DESCRIPTION that says more than the NAME line (left out where there is nothing more),
/// the `--help` examples under EXAMPLES, and EXIT STATUS and ENVIRONMENT sections.
pub fn man(subcommand: Option<&str>) -> Result<String> {
    let mut command = Cli::command();
    // Built, so subcommands carry their full names and the propagated version.
    command.build();
    let top = subcommand.is_none();
    let page = match subcommand {
        None => command,
        Some(name) => command
            .get_subcommands()
            .find(|c| c.get_name() == name && !c.is_hide_set())
            .cloned()
            .ok_or_else(|| {
                input(format!(
                    "man {name}: no such subcommand; `ioscope --help` lists them"
                ))
            })?,
    };
    let man = clap_mangen::Man::new(page.clone());
    let mut out = Vec::new();
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    let mut roff = String::new();
    let about = page.get_about().map(|a| a.to_string()).unwrap_or_default();
    let description = if top {
        Some(DESCRIPTION.to_string())
    } else {
        page.get_long_about()
            .map(|a| a.to_string())
            .filter(|long| long.trim() != about.trim())
    };
    if let Some(text) = description {
        roff.push_str(".SH DESCRIPTION\n");
        for paragraph in text.split("\n\n") {
            roff.push_str(&format!(".PP\n{}\n", escape(&paragraph.replace('\n', " "))));
        }
    }
    out.extend_from_slice(roff.as_bytes());
    if page.get_arguments().any(|a| !a.is_hide_set()) {
        man.render_options_section(&mut out)?;
    }
    if page.get_subcommands().any(|c| !c.is_hide_set()) {
        man.render_subcommands_section(&mut out)?;
    }
    let mut tail = String::new();
    if let Some(help) = page.get_after_long_help().or_else(|| page.get_after_help()) {
        tail.push_str(&examples(&help.to_string()));
    }
    tail.push_str(EXIT_STATUS);
    tail.push_str(&environment());
    out.extend_from_slice(tail.as_bytes());
    if page.get_version().is_some() {
        man.render_version_section(&mut out)?;
    }
    Ok(ascii_roff(&String::from_utf8_lossy(&out)))
}

/// The main page's DESCRIPTION (the NAME line is the one-line summary).
const DESCRIPTION: &str = "ioscope reads and writes files with a chosen block size and prints the XOR checksum of every byte, so each result proves it moved the right data. Beside every figure it shows what the kernel counted (/proc/self/io, /proc/diskstats) and how much of the file was in the page cache (mincore), and it says in sentences chosen by the numbers what a curve shows.

ioscope study runs the whole classic project on one directory \u{2014} write and read verified, throughput against block size cold and warm, the page cache, system-call cost, the fastest reader against dd, cat and fio, iozone's patterns, files over a socket \u{2014} and writes one report directory (report.html, report.md, study.json, a CSV file per table and an SVG file per chart). ioscope report puts several studies side by side.

Throughput is printed in MiB/s (2^20 bytes per second); sizes take 4k, 1m, 2g and the like, every suffix a power of 1024. Every measuring command takes --json for one JSON document on stdout.";

/// The EXIT STATUS section: the same codes on every page.
const EXIT_STATUS: &str = ".SH \"EXIT STATUS\"
.TP
.B 0
Success.
.TP
.B 1
The work ran but a check failed (a checksum or verification mismatch, a kernel counter that disagrees, a failed study part).
.TP
.B 2
A usage or input error (a bad flag or size, a missing file, a file that would be overwritten without \\-\\-force).
.TP
.B 130
Interrupted (Ctrl\\-C, SIGTERM, SIGHUP, SIGQUIT); what was measured before it is printed and saved, marked partial.
.TP
.B 128+N
Ended by signal N after the same clean\\-up: SIGUSR1 (138), SIGUSR2 (140), SIGALRM (142), SIGXCPU at a \\fBulimit \\-t\\fR (152), SIGVTALRM (154), SIGPROF (155), SIGPWR (158).
";

/// Environment variables ioscope reads while it runs, with what each does. The test hooks
/// (`crate::hooks`) are not here: a shipped build reads none of them.
pub const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "COLUMNS",
        "The width text is fitted to when the output is not a terminal (a terminal's own width comes first; with neither, lines are not wrapped).",
    ),
    (
        "IOSCOPE_TRACE_ENGINE",
        "The engine trace uses when --engine is not given: kernel or ptrace (trace falls back to ptrace, saying why, where the kernel engine cannot run).",
    ),
    (
        "NO_COLOR",
        "When set, nothing prints an escape sequence (neither does output that is not a terminal).",
    ),
    (
        "XDG_RUNTIME_DIR",
        "Where transfer puts its Unix socket when the scratch directory's path is too long for one (else /tmp).",
    ),
];

fn environment() -> String {
    let mut out = String::from(".SH ENVIRONMENT\n");
    for (name, what) in ENVIRONMENT {
        out.push_str(&format!(".TP\n.B {name}\n{}\n", escape(what)));
    }
    out
}

/// The `--help` examples (`Examples:`, then a command line indented by two and its
/// explanation by six) as an EXAMPLES section.
fn examples(help: &str) -> String {
    let mut out = String::new();
    for line in help.lines() {
        let text = line.trim();
        if text.is_empty() || text == "Examples:" {
            continue;
        }
        if out.is_empty() {
            out.push_str(".SH EXAMPLES\n");
        }
        if line.starts_with("      ") {
            out.push_str(&format!("{}\n", escape(text)));
        } else {
            out.push_str(&format!(".TP\n\\fB{}\\fR\n", escape(text)));
        }
    }
    out
}

/// Text made safe for roff: backslashes and hyphens escaped, no line starting with a
/// control character.
fn escape(text: &str) -> String {
    let text = text.replace('\\', "\\e").replace('-', "\\-");
    if text.starts_with(['.', '\'']) {
        format!("\\&{text}")
    } else {
        text
    }
}

/// Roff with every character beyond ASCII written as a `\[uXXXX]` escape: groff reads
/// its input as Latin-1 unless told otherwise, so a raw `×` would print as two wrong
/// characters (and warn).
fn ascii_roff(roff: &str) -> String {
    let mut out = String::with_capacity(roff.len());
    for c in roff.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_are_an_examples_section_with_each_command_in_bold() {
        let roff = examples("Examples:\n  ioscope study --level quick\n      a quick study\n");
        assert_eq!(
            roff,
            ".SH EXAMPLES\n.TP\n\\fBioscope study \\-\\-level quick\\fR\na quick study\n"
        );
    }

    #[test]
    fn every_page_has_examples_exit_status_and_environment_and_no_extra() {
        for page in [None, Some("study"), Some("mpi")] {
            let roff = man(page).unwrap();
            for section in [".SH EXAMPLES", ".SH \"EXIT STATUS\"", ".SH ENVIRONMENT"] {
                assert!(roff.contains(section), "{page:?}: {section}");
            }
            assert!(!roff.contains("EXTRA"), "{page:?}");
        }
    }

    #[test]
    fn the_main_description_says_more_than_the_name_line() {
        let roff = man(None).unwrap();
        let name = roff.split(".SH NAME").nth(1).unwrap();
        let name = name.split(".SH").next().unwrap();
        let description = roff.split(".SH DESCRIPTION").nth(1).unwrap();
        let description = description.split(".SH").next().unwrap();
        assert!(description.len() > 4 * name.len());
        assert!(description.contains("report.md"));
    }

    #[test]
    fn characters_beyond_ascii_become_groff_escapes() {
        assert_eq!(ascii_roff("a × b"), "a \\[u00D7] b");
    }
}
