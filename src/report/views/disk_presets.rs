//! `disk --list`: the named presets, what each runs on this machine (threads capped at its
//! cores, rows left out for want of them) and where each comes from.

use crate::report::text::table_with;
use crate::units::group_thousands;
use crate::workload::panel::{PRESETS, PanelNote, PresetKind, rows_of};

/// What a note on a preset's rows says.
pub fn note(n: &PanelNote) -> String {
    match n {
        PanelNote::Capped { asked, ran, cores } => format!(
            "{asked} asks for more threads than the {cores} core(s) here: run as {ran}, one thread per core"
        ),
        PanelNote::Oversubscribed {
            row,
            threads,
            cores,
        } => format!(
            "{row} runs {threads} threads on {cores} core(s), as asked: they take turns on the cores, so its latency and the queue the app kept include waits for a CPU (one thread per core measures the disk)"
        ),
        PanelNote::LeftOut { row, cores, needs } => format!(
            "{row} left out: {cores} core(s) here, and half of them is at most one thread, which the single-thread row already measures (it runs from {needs} cores)"
        ),
    }
}

/// The presets table for a machine of `cores` cores.
pub fn list(cores: usize) -> String {
    let mut t = table_with(&["preset", "rows (each read, then written; + a mix)", "about"]);
    let mut notes = Vec::new();
    for p in PRESETS {
        let rows = match p.kind {
            PresetKind::Panel(shapes) => {
                let (rows, n) = rows_of(shapes, cores);
                notes.extend(n.iter().map(|n| format!("{}: {}", p.name, note(n))));
                let mut names: Vec<String> = Vec::new();
                for r in &rows {
                    if r.mix.is_some()
                        && let Some(last) = names.last_mut()
                    {
                        last.push_str(&format!(" + {}", r.direction()));
                    } else if names.last() != Some(&r.name()) {
                        names.push(r.name());
                    }
                }
                names.join(", ")
            }
            PresetKind::Fsync { block } => format!(
                "{}-byte writes, each + fdatasync, Q1T1, buffered",
                group_thousands(block)
            ),
            PresetKind::SyncMethods { block } => format!(
                "{} writes, 1 and 2 per sync, by each of 7 sync methods, Q1T1",
                crate::units::format_size(block)
            ),
        };
        t.add_row(vec![p.name.to_string(), rows, p.about.to_string()]);
    }
    let mut out = format!("{t}\n");
    for n in notes {
        out.push_str(&format!("note: {n}\n"));
    }
    out.push_str(
        "--profile default|peak|real-world is --preset of the same name; --preset NAME runs one\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_names_every_preset_and_what_this_machine_changes() {
        let two = list(2);
        for p in PRESETS {
            assert!(two.contains(p.name), "{}", p.name);
        }
        assert!(two.contains("RND4K Q32T2"), "{two}");
        assert!(
            two.contains("RND4K Q32T<cores/2> left out: 2 core(s) here"),
            "{two}"
        );
        let many = list(32);
        assert!(many.contains("RND4K Q32T16"), "{many}");
        assert!(many.contains("RND4K Q32T16, RND4K Q1T1"), "{many}");
        assert!(
            many.contains("RND4K Q32T1 + mix 70/30, RND4K Q1T1"),
            "KDiskMark's Mix: {many}"
        );
        assert!(!many.contains("note:"), "{many}");
    }
}
