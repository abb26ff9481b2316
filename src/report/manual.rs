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
/// (`ioscope-sweep(1)`).
pub fn man(subcommand: Option<&str>) -> Result<String> {
    let mut command = Cli::command();
    // Built, so subcommands carry their full names and the propagated version.
    command.build();
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
    let mut out = Vec::new();
    clap_mangen::Man::new(page).render(&mut out)?;
    Ok(ascii_roff(&String::from_utf8_lossy(&out)))
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
    fn characters_beyond_ascii_become_groff_escapes() {
        assert_eq!(ascii_roff("a × b"), "a \\[u00D7] b");
    }
}
