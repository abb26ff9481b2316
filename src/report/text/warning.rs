//! The words of every warning: the cause and the fix.

use crate::measure::cache::CacheState;
use crate::units::format_size;
use crate::warning::Warning;

/// One warning as a sentence.
pub fn warning(w: &Warning) -> String {
    let at = |at: &Option<String>| at.as_ref().map_or(String::new(), |a| format!("({a}) "));
    match w {
        Warning::KernelMismatch { at: where_, check } => format!(
            "{}{}: ioscope counted {} but the kernel ({}) counted {}; something else did I/O in this process, or the count is wrong",
            at(where_),
            check.name,
            check.claimed,
            check.source,
            check.kernel
        ),
        Warning::CacheState {
            at: where_,
            proof,
            allowed,
        } => {
            let res = proof.residency_before.map_or(
                "its residency could not be read".to_string(),
                |r| format!("{} of the file was resident", r.percent()),
            );
            let dev = proof.device_read_bytes.map_or(
                "the device's reads could not be counted".to_string(),
                |d| format!("the device read {} of {}", format_size(d), format_size(proof.bytes)),
            );
            let fix = match proof.asked {
                CacheState::Cold => cold_cause(proof, *allowed),
                CacheState::Warm => "the file does not fit in the page cache, or other work evicted it; use a smaller file or a machine with more free memory".to_string(),
                CacheState::AsIs => String::new(),
            };
            format!(
                "{}the run was asked to start {} but {res} and {dev}: {fix}",
                at(where_),
                proof.asked.name(),
            )
        }
        Warning::NotCounted { engine } => format!(
            "the {engine} engine does not move its bytes through read()/write() calls, so /proc/self/io cannot confirm its counts; use --engine stream or pread for a kernel-checked figure"
        ),
        Warning::WarmLargerThanRam { size, ram } => format!(
            "the size found ({}) is larger than RAM ({}): the page cache cannot hold it, so these 'warm' reads partly came from the device",
            format_size(*size),
            format_size(*ram)
        ),
        Warning::ColdLargerThanRam { size, ram } => format!(
            "the size found ({}) is larger than RAM ({}): right for cold reads, but it can never be read fully warm",
            format_size(*size),
            format_size(*ram)
        ),
        Warning::CalibratedWarm => "this size was timed from the page cache; read cold (from the device) the same size may take longer, so a cold calibration may give a smaller size: use --cache cold to time the device".to_string(),
        Warning::ColdFitsInRam { size, ram } => format!(
            "the file fits in RAM ({} of {}): after one read it is cached and the next read is much faster, so evict it before every cold run (ioscope does with --cache cold)",
            format_size(*size),
            format_size(*ram)
        ),
        Warning::Partial => "interrupted: this result holds only what was measured before Ctrl-C".to_string(),
        Warning::ShortRead {
            file,
            read,
            block_size,
            block_count,
        } => {
            let whole = read / block_size.max(&1);
            let fix = if whole > 0 {
                format!(
                    "ask for {} blocks or fewer, or use a larger file",
                    crate::units::group_thousands(whole)
                )
            } else {
                "use a larger file".to_string()
            };
            format!(
                "{} is short: it ended after {}, not the {} of {} blocks of {} asked, so every figure is of the {} read; {fix}",
                crate::text::printable(file),
                crate::report::text::bytes_both(*read),
                format_size(block_size.saturating_mul(*block_count)),
                crate::units::group_thousands(*block_count),
                format_size(*block_size),
                format_size(*read),
            )
        }
        Warning::Scattered {
            at,
            min,
            median,
            max,
            runs,
            others,
        } => {
            use crate::report::cells::mib;
            format!(
                "({at}) its {runs} runs scatter from {:.1} to {:.1} MiB/s (median {:.1}), {} apart: differences between figures smaller than that are noise{}; repeat on a quieter machine or with more --repeat",
                mib(*min),
                mib(*max),
                mib(*median),
                apart(max / min.max(1e-12)),
                if *others > 0 {
                    format!(" ({others} other measurement{} scatter as well)", if *others == 1 { "" } else { "s" })
                } else {
                    String::new()
                }
            )
        }
        Warning::Unsettled {
            at,
            half_width,
            precision,
            runs,
            others,
        } => {
            let known = half_width.map_or("has no interval".to_string(), |w| {
                format!("is known to ±{:.0}%", w * 100.0)
            });
            format!(
                "({at}) after {runs} run{} its median {known}, not the ±{}% asked: the budget ran out first{}; its figure is that uncertain; give it more --max-runs or --max-time, or run on a quieter machine",
                if *runs == 1 { "" } else { "s" },
                super::share(*precision),
                if *others > 0 {
                    format!(" ({others} other point{} as well)", if *others == 1 { "" } else { "s" })
                } else {
                    String::new()
                }
            )
        }
        Warning::LeftOut { count, first } => {
            let one = *count == 1;
            let first = crate::text::printable(first);
            format!(
                "send: left out {count} entr{} that {} neither a regular file nor a directory (a symlink, FIFO, socket or device), {}",
                if one { "y" } else { "ies" },
                if one { "is" } else { "are" },
                if one { first } else { format!("the first {first}") }
            )
        }
        Warning::Grew { file } => format!(
            "send {}: it grew while it was sent; the receiver has the bytes it held when sending began, as announced",
            crate::text::printable(file)
        ),
        Warning::Holes { bytes, of, rows } => format!(
            "{} of the file's {} were holes or unwritten extents when the rows began: {} read zeros the file system made up, not the device's data (write the file whole first)",
            crate::units::format_size(*bytes),
            crate::units::format_size(*of),
            rows.join(", ")
        ),
        Warning::OtherIo {
            at,
            bytes,
            runs,
            of,
        } => format!(
            "other I/O on the device during {}: {} beyond the run's own{}; another process read or wrote it, so the figure was taken under interference: repeat when the device is quiet (iotop shows who uses it)",
            at.as_deref().unwrap_or("the run"),
            format_size(*bytes),
            also(*runs, *of)
        ),
        Warning::Contended {
            resource,
            at,
            share,
            runs,
            of,
        } => {
            use crate::measure::pressure::Resource;
            let what = match resource {
                Resource::Cpu => "the CPU was contended",
                Resource::Io => "the I/O was contended",
                Resource::Memory => "memory was short",
            };
            let who = match resource {
                Resource::Cpu => "other processes wanted it",
                Resource::Io => "other processes waited for the device while this run read from the cache",
                Resource::Memory => "processes waited for the kernel to reclaim memory",
            };
            let which: Vec<String> = at
                .iter()
                .cloned()
                .chain((*runs > 1).then(|| format!("{runs} of {of} runs")))
                .collect();
            let which = if which.is_empty() {
                String::new()
            } else {
                format!(" ({})", which.join("; "))
            };
            format!(
                "{what} for {:.0}% of the run{which}: {who}, so the figure was taken under interference (/proc/pressure); repeat on a quieter machine",
                100.0 * share,
            )
        }
    }
}

/// " (3 of 12 runs)" when more than the one named of several runs was marked.
fn also(runs: usize, of: usize) -> String {
    if runs > 1 {
        format!(" ({runs} of {of} runs)")
    } else {
        String::new()
    }
}

/// Why a cold run's device read fell short, chosen by the extent map: unwritten extents or
/// holes when they explain it; the file system (or memory pressure) only when every byte of
/// the file is written; both stories, conditionally, when the map could not be read.
fn cold_cause(proof: &crate::measure::cache::CacheProof, allowed: bool) -> String {
    const FS: &str = "this file system keeps pages after eviction (tmpfs, some overlays) or memory pressure refilled them; measure cold on a disk-backed file system, or with --drop-caches as root";
    match proof.unbacked_bytes {
        Some(unbacked) if unbacked > 0 => {
            let share = 100.0 * unbacked as f64 / proof.bytes.max(1) as f64;
            let rest = if proof.not_the_device() {
                "this is not a device measurement"
            } else {
                "they explain only part of what the device did not read: the written part stayed cached (memory pressure, or a file system that keeps pages)"
            };
            let fix = if allowed {
                "Kept, as --allow-unwritten asked, and labelled so"
            } else {
                "Write the file's data first (e.g. `ioscope run FILE -w 1m COUNT --force`, or copy real data into it), or pass --allow-unwritten to keep such a figure"
            };
            format!(
                "{share:.0}% of the bytes read ({}) are unwritten extents or holes, which the file system reads as zeros without the device; {rest}. {fix}",
                format_size(unbacked)
            )
        }
        Some(_) => {
            format!("every byte of the file is written, yet the device did not read it: {FS}")
        }
        None => format!(
            "the file's extent map could not be read, so unwritten extents or holes (zeros made up without the device) are not ruled out; if its data is written, {FS}"
        ),
    }
}

/// How far apart two figures `ratio` times each other are: a share below 2x ("35%"), a
/// factor from it ("88x"), which reads better than "8757%".
pub(crate) fn apart(ratio: f64) -> String {
    if ratio >= 2.0 {
        format!("{ratio:.0}x")
    } else {
        format!("{:.0}%", 100.0 * (ratio - 1.0))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn figures_far_apart_are_told_as_a_factor_not_thousands_of_percent() {
        assert_eq!(super::apart(88.57), "89x");
        assert_eq!(super::apart(2.0), "2x");
        assert_eq!(super::apart(1.63), "63%");
        assert_eq!(super::apart(1.0), "0%");
    }

    #[test]
    fn other_io_and_stalls_are_said_with_their_figures_and_the_runs_marked() {
        use crate::measure::pressure::Resource;
        use crate::warning::Warning;
        let other = super::warning(&Warning::OtherIo {
            at: Some("cold at 1 MiB".into()),
            bytes: 498 << 20,
            runs: 3,
            of: 12,
        });
        assert!(
            other.starts_with(
                "other I/O on the device during cold at 1 MiB: 498 MiB beyond the run's own (3 of 12 runs)"
            ),
            "{other}"
        );
        let alone = super::warning(&Warning::OtherIo {
            at: None,
            bytes: 5 << 20,
            runs: 1,
            of: 1,
        });
        assert!(
            alone
                .starts_with("other I/O on the device during the run: 5 MiB beyond the run's own;"),
            "{alone}"
        );
        let cpu = super::warning(&Warning::Contended {
            resource: Resource::Cpu,
            at: None,
            share: 0.35,
            runs: 1,
            of: 1,
        });
        assert!(
            cpu.starts_with("the CPU was contended for 35% of the run: other processes wanted it, so the figure was taken under interference"),
            "{cpu}"
        );
        let many = super::warning(&Warning::Contended {
            resource: Resource::Memory,
            at: Some("warm at 1 MiB".into()),
            share: 0.53,
            runs: 2,
            of: 3,
        });
        assert!(
            many.starts_with(
                "memory was short for 53% of the run (warm at 1 MiB; 2 of 3 runs): processes waited"
            ),
            "{many}"
        );
    }
}
