//! `compare`: the same file read by ioscope (`run -r`, `fast`), dd (buffered and O_DIRECT),
//! cat and fio (when installed), in alternating order, cold and/or warm. Each tool's own
//! raw figures are used where it has them; every run's residency before it is recorded.

use crate::files::{self};
use crate::harness::{Harness, Target};
use crate::measure::cache::{self, CacheState};
use crate::measure::child::Stdout;
use crate::measure::converge::Repeats;
use crate::measure::external::{self, ToolClaim};
use crate::measure::meter::Claim;
use crate::measure::stats::Summary;
use crate::options::CompareOptions;
pub use crate::results::compare::{CompareReport, Contender, FigureSource, Row, Run};
use crate::units::per_second;
use crate::warning::Warning;
use crate::workload::Op;
use crate::workload::plan::Plan;
use anyhow::{Context, Result};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Command, Stdio};

fn tool_available(program: &str, version_arg: &str) -> bool {
    Command::new(program)
        .arg(version_arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Where a contender's argument holds the file's path: NUL, which neither a path nor an
/// argument can hold.
const PATH: &str = "\0";
/// Where it holds the path as fio's `--filename` takes it: each ':' (fio's separator of
/// several files) escaped as `\:`.
const FIO_PATH: &str = "\0\0";

/// `template` with the file's path put where [`PATH`] and [`FIO_PATH`] stand: as text to
/// show (`shown`), and as the bytes to run (`path`, which need not be UTF-8).
fn with_path(template: &[String], shown: &str, path: &Path) -> (Vec<String>, Vec<OsString>) {
    use std::os::unix::ffi::{OsStrExt, OsStringExt};
    let fio = |p: &[u8]| -> Vec<u8> {
        p.iter()
            .flat_map(|&b| {
                if b == b':' {
                    vec![b'\\', b':']
                } else {
                    vec![b]
                }
            })
            .collect()
    };
    let put = |arg: &str, path: &[u8]| -> Vec<u8> {
        let mut out = Vec::new();
        for (i, part) in arg.split(FIO_PATH).enumerate() {
            if i > 0 {
                out.extend(fio(path));
            }
            for (j, piece) in part.split(PATH).enumerate() {
                if j > 0 {
                    out.extend_from_slice(path);
                }
                out.extend_from_slice(piece.as_bytes());
            }
        }
        out
    };
    template
        .iter()
        .map(|arg| {
            let text = String::from_utf8_lossy(&put(arg, shown.as_bytes())).into_owned();
            let bytes = OsString::from_vec(put(arg, path.as_os_str().as_bytes()));
            (text, bytes)
        })
        .unzip()
}

fn contenders(
    options: &CompareOptions,
    path: &Path,
    skipped: &mut Vec<String>,
) -> Result<Vec<Contender>> {
    let shown = crate::text::lossless(options.path.as_os_str());
    let file = PATH;
    let me = std::env::current_exe()
        .context("find the ioscope executable")?
        .display()
        .to_string();
    // Names use the compact form; command lines use plain bytes, which every tool parses alike.
    let bs = &options.block_size_text;
    let raw = options.block_size.to_string();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    let mut list = vec![
        Contender {
            name: format!("ioscope run -r {bs}"),
            argv: s(&[&me, "run", file, "-r", &raw, "--json"]),
            figures: FigureSource::IoscopeJson,
            direct: false,
            run: Vec::new(),
        },
        Contender {
            name: "ioscope fast".into(),
            argv: s(&[&me, "fast", file, "--json"]),
            figures: FigureSource::IoscopeJson,
            direct: false,
            run: Vec::new(),
        },
    ];
    if tool_available("dd", "--version") {
        list.push(Contender {
            name: format!("dd bs={bs}"),
            argv: s(&[
                "dd",
                &format!("if={file}"),
                "of=/dev/null",
                &format!("bs={raw}"),
            ]),
            figures: FigureSource::DdSummary,
            direct: false,
            run: Vec::new(),
        });
        list.push(Contender {
            name: format!("dd bs={bs} iflag=direct"),
            argv: s(&[
                "dd",
                &format!("if={file}"),
                "of=/dev/null",
                &format!("bs={raw}"),
                "iflag=direct",
            ]),
            figures: FigureSource::DdSummary,
            direct: true,
            run: Vec::new(),
        });
    } else {
        skipped.push("dd: not installed".into());
    }
    if tool_available("cat", "--version") {
        list.push(Contender {
            name: "cat".into(),
            argv: s(&["cat", file]),
            figures: FigureSource::ProcessWall,
            direct: false,
            run: Vec::new(),
        });
    } else {
        skipped.push("cat: not installed".into());
    }
    if tool_available("fio", "--version") {
        let base = |engine: &str, direct: &str, depth: &str| {
            s(&[
                "fio",
                "--name=ioscope-compare",
                &format!("--filename={FIO_PATH}"),
                "--rw=read",
                &format!("--bs={raw}"),
                &format!("--ioengine={engine}"),
                &format!("--direct={direct}"),
                &format!("--iodepth={depth}"),
                "--invalidate=0",
                "--readonly",
                "--output-format=json",
            ])
        };
        list.push(Contender {
            name: format!("fio psync bs={bs}"),
            argv: base("psync", "0", "1"),
            figures: FigureSource::FioJson,
            direct: false,
            run: Vec::new(),
        });
        list.push(Contender {
            name: format!("fio io_uring direct bs={bs} qd32"),
            argv: base("io_uring", "1", "32"),
            figures: FigureSource::FioJson,
            direct: true,
            run: Vec::new(),
        });
    } else {
        skipped.push("fio: not installed (apt-get install fio to include it)".into());
    }
    // The user's readers: the file where `{}` stands, else last.
    for (name, argv) in &options.commands {
        if list.iter().any(|c| c.name == *name) {
            return Err(crate::error::input(format!(
                "compare {}: --cmd {name}=...: {name} is the name of a contender already; give yours another",
                crate::text::printable(&shown)
            )));
        }
        let mut argv: Vec<String> = argv
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i == 0 {
                    a.clone()
                } else {
                    a.replace("{}", PATH)
                }
            })
            .collect();
        if !argv.iter().skip(1).any(|a| a.contains(PATH)) {
            argv.push(PATH.to_string());
        }
        list.push(Contender {
            name: name.clone(),
            argv,
            figures: FigureSource::ProcessXor,
            direct: false,
            run: Vec::new(),
        });
    }
    for c in &mut list {
        (c.argv, c.run) = with_path(&c.argv, &shown, path);
    }
    Ok(list)
}

/// Puts the file in the cache state asked for; returns the resident share just after.
fn prepare(harness: &Harness, input: &files::Input, state: CacheState) -> Result<f64> {
    let target = Target {
        file: &input.file,
        name: &input.name,
        kind: input.kind,
        device: None,
    };
    harness.prepare(
        target,
        &Plan::sequential(0, input.len, 1 << 20),
        state,
        false,
    )?;
    Ok(cache::residency(&input.file, &input.name, input.len)?.fraction())
}

/// Runs the contender once: the bytes and seconds it reports (by its own figures, or the
/// file size over its wall time), and its wall time on the harness's clock.
/// What one run of a contender gave: its bytes and seconds as the tool reported them, the
/// process's wall seconds, and what the rest of the machine did meanwhile.
struct Ran {
    bytes: u64,
    seconds: f64,
    wall: f64,
    marks: Marks,
    /// What a reader of the user's printed, and whether it is the file's XOR.
    printed: Option<(Option<String>, bool)>,
}

/// How long a contender may take (a reader of the user's or a built-in one: a `dd` on a
/// dead NFS mount must not hang compare): a minute, and a second per 100 MiB of the file.
fn deadline(file_bytes: u64) -> std::time::Duration {
    std::time::Duration::from_secs(60)
        + std::time::Duration::from_secs_f64(
            file_bytes as f64 / crate::cmd::grade::DEADLINE_BYTES_PER_SECOND as f64,
        )
}

/// A contender, once: killed past `deadline`, failed unless it exits 0.
fn run_child(
    argv: &[OsString],
    name: &str,
    deadline: std::time::Duration,
    stdout: crate::measure::child::Stdout,
) -> Result<crate::measure::child::Ran> {
    use crate::measure::child::{self, End};
    let ran = child::run_with(argv, deadline, stdout)?;
    let last = ran
        .last_stderr_line()
        .map(|l| format!(": {l}"))
        .unwrap_or_default();
    match ran.end {
        End::Exited(0) => Ok(ran),
        End::Exited(code) => anyhow::bail!("{name} failed (exit status {code}){last}"),
        End::Signalled(n) => anyhow::bail!("{name} crashed ({}){last}", child::signal_name(n)),
        End::TimedOut => {
            anyhow::bail!(
                "{name} ran past {} and was killed",
                crate::units::format_seconds_as_typed(deadline.as_secs_f64())
            )
        }
    }
}

/// The interference around a child's run: the device's bytes beyond the file's (a cold
/// read may fetch the whole file; more is someone else's) and the machine's stalls.
#[derive(Debug, Clone, Copy, Default)]
struct Marks {
    other_io_bytes: Option<u64>,
    pressure: Option<crate::measure::pressure::Pressure>,
}

fn run_once(
    c: &Contender,
    file_bytes: u64,
    device: Option<&str>,
    harness: &Harness,
    reference: Option<u32>,
) -> Result<Ran> {
    // The child reads the file; none of its reads is counted as this process's.
    let work = Claim {
        op: Some(Op::Read),
        calls: 0,
        bytes: file_bytes,
        counted: false,
    };
    // The whole child inside a region of the meter: its wall time, and the device's and
    // the machine's counters around it (the child's own reads are not this process's).
    let region = harness.meter.start(device);
    // A contender made here has its arguments as run; one read back from a saved result
    // only as shown.
    let argv: Vec<OsString> = if c.run.is_empty() {
        c.argv.iter().map(OsString::from).collect()
    } else {
        c.run.clone()
    };
    let stdout = if c.figures == FigureSource::ProcessWall {
        Stdout::Discarded
    } else {
        Stdout::Kept
    };
    let out = run_child(&argv, &c.name, deadline(file_bytes), stdout);
    let measured = region.stop(&work);
    let wall = measured.elapsed.seconds;
    let marks = Marks {
        other_io_bytes: measured
            .device
            .and_then(|d| crate::measure::interference::beyond(d.read_bytes, file_bytes)),
        pressure: measured.pressure,
    };
    let out = out?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let claim: ToolClaim = match c.figures {
        FigureSource::IoscopeJson => external::ioscope(&stdout)?,
        FigureSource::DdSummary => external::dd(&stderr)?,
        // fio writes the file's name into its JSON raw: a tab or an ESC in it would make
        // the document invalid, so they are escaped first.
        FigureSource::FioJson => match crate::report::json::printable_strings(&stdout) {
            Some(escaped) => external::fio(&escaped)?,
            None => external::fio(&stdout)?,
        },
        FigureSource::ProcessWall => {
            return Ok(Ran {
                bytes: file_bytes,
                seconds: wall,
                wall,
                marks,
                printed: None,
            });
        }
        FigureSource::ProcessXor => {
            // The child's own clock: from before its fork to its exit, as `time` shows it.
            let wall = out.wall_seconds;
            let reference = reference.expect("the file's XOR is known when a --cmd reader runs");
            let found = crate::measure::printed::find(&stdout, reference);
            return Ok(Ran {
                bytes: file_bytes,
                seconds: wall,
                wall,
                marks,
                printed: Some((found.value.map(crate::checksum::hex), found.matches)),
            });
        }
    };
    if claim.seconds <= 0.0 {
        anyhow::bail!("{} reported a time of 0 s", c.name);
    }
    Ok(Ran {
        bytes: claim.bytes(),
        seconds: claim.seconds,
        wall,
        marks,
        printed: None,
    })
}

fn median(values: &[f64]) -> f64 {
    crate::measure::stats::summarize(values).map_or(0.0, |s| s.median)
}

/// Runs the comparison; `save` receives the report after each cache state.
pub fn execute(
    options: &CompareOptions,
    harness: &Harness,
    save: &mut dyn FnMut(&CompareReport) -> Result<()>,
) -> Result<CompareReport> {
    let src = files::open_measurable(&options.path, "compare")?;
    let file = crate::text::lossless(options.path.as_os_str());
    let mut skipped = Vec::new();
    let list = contenders(options, &options.path, &mut skipped)?;
    let device = crate::measure::diskstats::device_of(&options.path);
    // The XOR the user's readers must print, read here before any of them runs.
    // With it, the file's change time: a reader that writes the file is caught.
    let reference = if options.commands.is_empty() {
        None
    } else {
        use std::os::unix::fs::MetadataExt;
        let meta = src
            .file
            .metadata()
            .with_context(|| format!("stat {}", src.name))?;
        let changed = (meta.ctime(), meta.ctime_nsec());
        Some((file_xor(&src)?, changed))
    };
    let mut report = CompareReport {
        file,
        file_bytes: src.len,
        block_size: options.block_size,
        repeat: options.runs.min_runs,
        until_stable: options.runs.until_stable(),
        reference: reference.map(|r| crate::checksum::hex(r.0)),
        failed_readers: Vec::new(),
        contenders: list.clone(),
        skipped,
        rows: Vec::new(),
        complete: false,
        warnings: Vec::new(),
    };
    for &state in &options.states {
        match measure_state(
            options,
            harness,
            &src,
            &list,
            state,
            device.as_deref(),
            reference,
        ) {
            Ok((rows, skipped, failed)) => {
                report.rows.extend(rows);
                report.skipped.extend(skipped);
                for name in failed {
                    if !report.failed_readers.contains(&name) {
                        report.failed_readers.push(name);
                    }
                }
            }
            // Ctrl-C at any moment, before the first row too: the rows so far (maybe none)
            // are the result (exit 130).
            Err(e) if crate::error::exit_kind(&e) == crate::error::ExitKind::Interrupted => {
                report.warnings.push(Warning::Partial);
                break;
            }
            Err(e) => return Err(e),
        }
        report
            .contenders
            .retain(|c| report.rows.iter().any(|r| r.contender == c.name));
        save(&report)?;
    }
    report.complete = !report.warnings.contains(&Warning::Partial);
    let spreads: Vec<(String, Summary)> = report
        .rows
        .iter()
        .filter_map(|r| Some((format!("{}, {}", r.contender, r.cache.name()), r.rates()?)))
        .collect();
    let spread = match report.until_stable {
        Some(stop) => crate::warning::unsettled(
            report.rows.iter().map(|r| {
                (
                    format!("{}, {}", r.contender, r.cache.name()),
                    r.settled,
                    r.runs.len(),
                )
            }),
            stop.precision,
        ),
        None => crate::warning::scattered(spreads.iter().map(|(at, s)| (at.clone(), s))),
    };
    report.warnings.extend(spread);
    // Another process's I/O on the device, or stalls, during a contender's runs. A child's
    // I/O wait is its own when it read the file from the device (cold).
    report
        .warnings
        .extend(crate::warning::interference(report.rows.iter().flat_map(
            |r| {
                let at = format!("{}, {}", r.contender, r.cache.name());
                let own = own_device_bytes(r.cache, report.file_bytes);
                r.runs.iter().map(move |run| {
                    (
                        Some(at.clone()),
                        crate::warning::Marks {
                            other_io_bytes: run.other_io_bytes,
                            pressure: run.pressure,
                            own_device_bytes: own,
                        },
                    )
                })
            },
        )));
    save(&report)?;
    Ok(report)
}

/// The device bytes a contender's run counts as its own, for the interference rule: a cold
/// read fetched the file from the device, so its I/O wait is its own; a warm one none.
fn own_device_bytes(state: CacheState, file_bytes: u64) -> u64 {
    if state == CacheState::Cold {
        file_bytes
    } else {
        0
    }
}

/// The file's XOR, read once in 1 MiB calls.
fn file_xor(src: &files::Input) -> Result<u32> {
    use std::os::unix::fs::FileExt;
    let mut buf = vec![0u8; 1 << 20];
    let mut xor = 0u32;
    let mut done = 0u64;
    while done < src.len {
        crate::interrupt::check()?;
        let want = (src.len - done).min(buf.len() as u64) as usize;
        let n = src
            .file
            .read_at(&mut buf[..want], src.start + done)
            .with_context(|| format!("read {} at {}", src.name, src.start + done))?;
        if n == 0 {
            anyhow::bail!(
                "read {}: the file ended at {done} bytes, not {}",
                src.name,
                src.len
            );
        }
        xor ^= crate::checksum::xor_at(done, &buf[..n]);
        done += n as u64;
    }
    Ok(xor)
}

/// Stops the comparison unless the name still names the file first opened, at the size it
/// had: the tools open it by name before each run, so another file put there (a link, a
/// copy), or this one grown or shrunk, would be measured in its place, and a row would mix
/// runs of two files.
/// With `changed` (its inode change time when its XOR was read, for `--cmd`), a file
/// written in place (by a reader of the user's, say) stops it too: the XOR the readers are
/// checked against would be stale.
fn unchanged(src: &files::Input, path: &Path, changed: Option<(i64, i64)>) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let now = std::fs::metadata(path).ok();
    let same = now.is_some_and(|m| {
        Some((m.dev(), m.ino())) == files::file_id(&src.file)
            && (!m.file_type().is_file() || m.len() == src.start + src.len)
            && changed.is_none_or(|c| c == (m.ctime(), m.ctime_nsec()))
    });
    if same {
        return Ok(());
    }
    Err(crate::error::Failure::Check(format!(
        "compare {}: the file at this name changed during the comparison (replaced, moved, grown, shrunk or written); stopped: the tools read it by name",
        crate::text::printable(&src.name)
    ))
    .into())
}

/// Every contender in one cache state, in alternating order; the rows, the contenders that
/// failed (why, as `skipped` lines), and the user's readers among them.
fn measure_state(
    options: &CompareOptions,
    harness: &Harness,
    src: &files::Input,
    list: &[Contender],
    state: CacheState,
    device: Option<&str>,
    reference: Option<(u32, (i64, i64))>,
) -> Result<(Vec<Row>, Vec<String>, Vec<String>)> {
    let mut runs: Vec<Vec<Run>> = vec![Vec::new(); list.len()];
    let mut failed: Vec<Option<String>> = vec![None; list.len()];
    // Rounds of every contender until each one's median is stable (or a fixed count): a
    // contender already stable runs on while the others do, so the order keeps alternating.
    let stop = options.runs;
    let mut repeats = vec![Repeats::new(stop); list.len()];
    let unsettled = |repeats: &[Repeats], failed: &[Option<String>]| {
        repeats
            .iter()
            .zip(failed)
            .any(|(r, f)| f.is_none() && r.more())
    };
    let mut rep = 0;
    // Each round starts on the next CPU, every contender of it on the same one.
    let mut starts = crate::measure::cpus::Starts::new();
    while unsettled(&repeats, &failed) {
        starts.next();
        // Alternate the order: each repeat starts with the next contender.
        for k in 0..list.len() {
            let i = (k + rep) % list.len();
            if failed[i].is_some() || repeats[i].len() >= stop.max_runs {
                continue;
            }
            crate::interrupt::check()?;
            unchanged(src, &options.path, reference.map(|r| r.1))?;
            let resident_share_before = prepare(harness, src, state)?;
            match run_once(&list[i], src.len, device, harness, reference.map(|r| r.0)) {
                Ok(ran) => {
                    let bytes_per_second = per_second(ran.bytes, ran.seconds);
                    let own = own_device_bytes(state, src.len);
                    repeats[i].push_marked(
                        bytes_per_second,
                        ran.seconds,
                        crate::measure::interference::marked(
                            ran.marks.other_io_bytes,
                            ran.marks.pressure.as_ref(),
                            own,
                        ),
                    );
                    runs[i].push(Run {
                        bytes: ran.bytes,
                        seconds: ran.seconds,
                        bytes_per_second,
                        wall_seconds: ran.wall,
                        resident_share_before,
                        other_io_bytes: ran.marks.other_io_bytes,
                        pressure: ran.marks.pressure,
                        printed: ran.printed.as_ref().and_then(|(p, _)| p.clone()),
                        xor_ok: ran.printed.as_ref().map(|(_, ok)| *ok),
                    })
                }
                Err(e) => {
                    // A child killed by the user's Ctrl-C (the whole process group gets it)
                    // did not fail: the comparison was interrupted.
                    crate::interrupt::check()?;
                    failed[i] = Some(format!("{e:#}"));
                }
            }
        }
        rep += 1;
    }
    let mut skipped = Vec::new();
    let mut failed_readers = Vec::new();
    let mut rows: Vec<Row> = Vec::new();
    for (i, c) in list.iter().enumerate() {
        if let Some(why) = &failed[i] {
            skipped.push(format!("{} ({}): {why}", c.name, state.name()));
            if c.figures == FigureSource::ProcessXor {
                // A reader of the user's that failed fails the comparison: it is checked.
                failed_readers.push(c.name.clone());
            }
            continue;
        }
        let r = &runs[i];
        rows.push(Row {
            contender: c.name.clone(),
            cache: state,
            median_bytes_per_second: median(
                &r.iter().map(|x| x.bytes_per_second).collect::<Vec<_>>(),
            ),
            median_wall_bytes_per_second: median(
                &r.iter()
                    .map(|x| per_second(x.bytes, x.wall_seconds))
                    .collect::<Vec<_>>(),
            ),
            ratio_to_best: 0.0,
            state_ok: r
                .iter()
                .all(|x| cache::observe(x.resident_share_before).reaches(state)),
            settled: repeats[i].outcome(),
            runs: r.clone(),
        });
    }
    // A reader that printed a wrong XOR is never the best.
    let best = rows
        .iter()
        .filter(|r| r.xor_ok() != Some(false))
        .map(|r| r.median_bytes_per_second)
        .fold(0.0, f64::max);
    for row in &mut rows {
        row.ratio_to_best = if best > 0.0 {
            row.median_bytes_per_second / best
        } else {
            0.0
        };
    }
    Ok((rows, skipped, failed_readers))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contender_that_outlives_its_deadline_is_killed_and_said_to_have_timed_out() {
        // A `dd` stuck on a dead mount, as a shell that sleeps past the deadline.
        let argv: Vec<OsString> = ["sh", "-c", "sleep 30"].map(OsString::from).into();
        let started = std::time::Instant::now();
        let err = run_child(
            &argv,
            "dd",
            std::time::Duration::from_millis(200),
            Stdout::Discarded,
        )
        .expect_err("killed at its deadline");
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        assert_eq!(format!("{err:#}"), "dd ran past 0.2 s and was killed");
    }

    #[test]
    fn a_contender_that_fails_says_how_with_its_last_stderr_line() {
        let argv: Vec<OsString> = ["sh", "-c", "echo 'dd: cannot open' >&2; exit 1"]
            .map(OsString::from)
            .into();
        let err = run_child(&argv, "dd", deadline(0), Stdout::Kept).expect_err("exit 1");
        assert_eq!(
            format!("{err:#}"),
            "dd failed (exit status 1): dd: cannot open"
        );
    }
}
