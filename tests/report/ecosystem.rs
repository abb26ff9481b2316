//! Fitting the ecosystem: Markdown tables whose figures are the JSON's, shell completions
//! and a manual page generated from the clap definitions, NO_COLOR and pipes free of escape
//! sequences, `-q/--quiet`, `--version` with the commit, and examples in every `--help`.

use crate::common::*;
use clap::{CommandFactory, Parser};
use ioscope::units::{MIB, format_block_size, format_size, group_thousands};
use std::path::Path;
use std::process::Command as Process;

/// The cells of one table line, split on the `|` that are not escaped.
fn cells(line: &str) -> Vec<String> {
    let inner = line
        .trim()
        .strip_prefix('|')
        .and_then(|l| l.strip_suffix('|'))
        .unwrap_or_else(|| panic!("a table line starts and ends with |: {line}"));
    let mut out = vec![String::new()];
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.last_mut().unwrap().push(c);
                out.last_mut().unwrap().extend(chars.next());
            }
            '|' => out.push(String::new()),
            c => out.last_mut().unwrap().push(c),
        }
    }
    out.iter().map(|c| c.trim().to_string()).collect()
}

/// Every table of a Markdown document, checked line by line: a header row, a separator of
/// `---` cells (`:` allowed at either end) with as many columns, and body rows with as many.
/// Returns each table as its header and its rows.
fn tables(markdown: &str) -> Vec<(Vec<String>, Vec<Vec<String>>)> {
    let lines: Vec<&str> = markdown.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !lines[i].starts_with('|') {
            i += 1;
            continue;
        }
        assert!(
            i == 0 || lines[i - 1].is_empty(),
            "a blank line before a table: {:?}",
            lines[i - 1]
        );
        let header = cells(lines[i]);
        let separator = cells(lines.get(i + 1).expect("a separator row"));
        assert_eq!(separator.len(), header.len(), "separator: {}", lines[i + 1]);
        for s in &separator {
            let dashes = s.trim_start_matches(':').trim_end_matches(':');
            assert!(
                dashes.len() >= 3 && dashes.chars().all(|c| c == '-'),
                "separator cell {s:?}"
            );
        }
        let mut rows = Vec::new();
        i += 2;
        while i < lines.len() && lines[i].starts_with('|') {
            let row = cells(lines[i]);
            assert_eq!(row.len(), header.len(), "row: {}", lines[i]);
            rows.push(row);
            i += 1;
        }
        out.push((header, rows));
    }
    assert!(!out.is_empty(), "no table in:\n{markdown}");
    out
}

/// Runs `ioscope ARGS --json --markdown F` once: the JSON document and the Markdown.
fn json_and_markdown(args: &[&str]) -> (serde_json::Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("r.md");
    let out = ioscope()
        .args(args)
        .args(["--json", "--markdown", md.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ioscope {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = serde_json::from_slice(&out.stdout).expect("one JSON document");
    (
        json,
        std::fs::read_to_string(&md).expect("the Markdown file"),
    )
}

fn mib(v: &serde_json::Value) -> String {
    format!("{:.1}", v.as_f64().expect("a number") / MIB as f64)
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().expect("an integer")
}

/// The column of `header` whose name starts with `name`.
fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h.starts_with(name))
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

#[test]
fn sweep_markdown_is_a_table_whose_figures_are_the_json_figures() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let (json, md) = json_and_markdown(&["sweep", f.to_str().unwrap(), "--block-sizes", "4k,64k"]);
    let (header, rows) = &tables(&md)[0];
    let points = json["points"].as_array().unwrap();
    assert_eq!(rows.len(), points.len());
    let (block, rate, calls) = (
        column(header, "block size"),
        column(header, "MiB/s, median (min–max)"),
        column(header, "calls/s"),
    );
    for (row, p) in rows.iter().zip(points) {
        assert_eq!(row[block], format_block_size(u(&p["block_size"])));
        let r = &p["rate"];
        let expected = format!(
            "{} ({}–{})",
            mib(&r["median"]),
            mib(&r["min"]),
            mib(&r["max"])
        );
        assert_eq!(row[rate], expected);
        let cps = p["calls_per_second"].as_f64().unwrap().round() as u64;
        assert_eq!(row[calls], group_thousands(cps));
    }
    assert!(
        md.starts_with("# ioscope sweep\n\nMeasured by ioscope "),
        "{md}"
    );
    assert!(md.contains(&format!(
        "Linux {}",
        json["environment"]["kernel"].as_str().unwrap()
    )));
}

#[test]
fn cache_markdown_shows_the_json_rates_of_each_run() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let (json, md) = json_and_markdown(&["cache", f.to_str().unwrap(), "--block-size", "4k,1m"]);
    let (header, rows) = &tables(&md)[0];
    let report: ioscope::cmd::coldwarm::CacheReport =
        serde_json::from_value(json).expect("a cache document");
    assert_eq!(rows.len(), report.rows.len());
    for (row, r) in rows.iter().zip(&report.rows) {
        assert_eq!(row[0], format_block_size(r.block_size));
        use ioscope::results::cache::Read;
        for (heading, read) in [
            ("cold (", Read::Cold),
            ("warm", Read::Warm),
            ("cold again", Read::ColdAgain),
        ] {
            // Each read's median over the cycles, with their range and n when repeated.
            let f = r.rate(read);
            let mib = |x: f64| format!("{:.1}", x / MIB as f64);
            let expected = if f.n > 1 {
                format!(
                    "{} ({}–{}, n={})",
                    mib(f.median),
                    mib(f.min),
                    mib(f.max),
                    f.n
                )
            } else {
                mib(f.median)
            };
            assert_eq!(row[column(header, heading)], expected, "{read}");
        }
    }
}

#[test]
fn syscalls_markdown_shows_the_json_cost_per_call() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 16));
    let (json, md) = json_and_markdown(&["syscalls", f.to_str().unwrap(), "--sizes", "16k"]);
    let (header, rows) = &tables(&md)[0];
    let json_rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), json_rows.len());
    for (row, r) in rows.iter().zip(json_rows) {
        assert_eq!(row[0], r["op"].as_str().unwrap());
        assert_eq!(
            row[column(header, "calls")],
            group_thousands(u(&r["calls"]))
        );
        let ns = format!("{:.1}", r["ns_per_call"].as_f64().unwrap());
        assert_eq!(row[column(header, "time per call (ns)")], ns);
    }
}

#[test]
fn compare_markdown_shows_the_json_medians_and_their_spread() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let (json, md) = json_and_markdown(&[
        "compare",
        f.to_str().unwrap(),
        "--cache",
        "warm",
        "--repeat",
        "2",
    ]);
    let (header, rows) = &tables(&md)[0];
    let json_rows = json["rows"].as_array().unwrap();
    assert_eq!(rows.len(), json_rows.len());
    let rate = column(header, "MiB/s by its own figures, median (min–max)");
    for (row, r) in rows.iter().zip(json_rows) {
        // Contender names may hold Markdown characters (`io_uring`), escaped in the cell.
        assert_eq!(row[1].replace('\\', ""), r["contender"].as_str().unwrap());
        let runs: Vec<f64> = r["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["bytes_per_second"].as_f64().unwrap())
            .collect();
        let lo = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = runs.iter().copied().fold(0.0, f64::max);
        let expected = format!(
            "{} ({:.1}–{:.1})",
            mib(&r["median_bytes_per_second"]),
            lo / MIB as f64,
            hi / MIB as f64
        );
        assert_eq!(row[rate], expected);
    }
}

#[test]
fn fast_verbose_markdown_shows_the_json_figures() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern((1 << 20) + 3);
    let f = file_with(dir.path(), "f", &data);
    let (json, md) = json_and_markdown(&["fast", f.to_str().unwrap(), "--verbose"]);
    let (header, rows) = &tables(&md)[0];
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row[column(header, "XOR")], reference_xor(&data));
    assert_eq!(
        row[column(header, "XOR")],
        json["xor_hex"].as_str().unwrap()
    );
    assert_eq!(row[column(header, "MiB/s")], mib(&json["bytes_per_second"]));
    assert_eq!(row[column(header, "bytes")], format_size(data.len() as u64));
    assert_eq!(
        row[column(header, "engine")],
        json["engine"].as_str().unwrap()
    );
}

#[test]
fn a_saved_sweep_renders_to_the_fixture_markdown_exactly() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("sweep.md");
    ioscope()
        .arg("report")
        .arg(fixtures.join("sweep.json"))
        .arg("--markdown")
        .arg(&md)
        .assert()
        .success();
    let expected = std::fs::read_to_string(fixtures.join("sweep.md")).unwrap();
    assert_eq!(std::fs::read_to_string(&md).unwrap(), expected);
    tables(&expected);
}

#[test]
fn every_command_with_a_csv_table_writes_markdown_tables() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let p = f.to_str().unwrap();
    let to = dir.path().join("received");
    std::fs::create_dir(&to).unwrap();
    let runs: [&[&str]; 2] = [
        &[
            "patterns", p, "--force", "--size", "256k", "--record", "64k", "--runs", "1",
        ],
        &[
            "transfer",
            "--to",
            to.to_str().unwrap(),
            "--large",
            "256k",
            "--small",
            "2",
            "--repeat",
            "1",
        ],
    ];
    for args in runs {
        let (_, md) = json_and_markdown(args);
        let (header, rows) = &tables(&md)[0];
        assert!(!rows.is_empty(), "{args:?}:\n{md}");
        assert!(
            header.iter().any(|h| h.contains("MiB/s")),
            "units in the headers: {header:?}"
        );
        assert!(!header.iter().any(|h| h.contains('_')), "{header:?}");
    }
    // The study writes its own report directory (report.md among its files): it has no
    // --markdown flag, and clap says so.
    let d = dir.path().to_str().unwrap();
    let out = ioscope()
        .args(["study", d, "--markdown", "s.md"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--markdown"));
}

#[test]
fn markdown_follows_the_rules_of_the_other_output_files() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 16));
    let p = f.to_str().unwrap();
    let md = file_with(dir.path(), "old.md", b"mine");
    let m = md.to_str().unwrap();
    let sweep = ["sweep", p, "--block-sizes", "4k", "--markdown"];
    assert!(usage_error(&[&sweep[..], &[m]].concat()).contains("--force"));
    assert_eq!(std::fs::read(&md).unwrap(), b"mine");
    for args in [
        [&sweep[..], &[p, "--force"]].concat(),
        vec!["fast", p, "--markdown", p, "--force"],
    ] {
        assert!(usage_error(&args).contains("being measured"), "{args:?}");
    }
    let out = ioscope().args(sweep).args([m, "--force"]).output().unwrap();
    assert!(out.status.success());
    assert!(
        std::fs::read_to_string(&md)
            .unwrap()
            .starts_with("# ioscope sweep")
    );
}

/// Bash, or `None` with the reason printed.
fn bash() -> Option<()> {
    let found = Process::new("bash").arg("-c").arg("true").status().is_ok();
    if !found {
        eprintln!("skipped: bash is not installed");
    }
    found.then_some(())
}

/// What bash completes for the words typed so far (the last one being completed).
fn complete(words: &[&str]) -> Vec<String> {
    let script = r#"
        source <("$IOSCOPE" completions bash)
        read -ra COMP_WORDS <<< "$WORDS"
        [[ "$WORDS" == *" " ]] && COMP_WORDS+=("")
        COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
        COMP_LINE="$WORDS"
        COMP_POINT=${#COMP_LINE}
        prev=""
        (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
        _ioscope ioscope "${COMP_WORDS[COMP_CWORD]}" "$prev"
        printf '%s\n' "${COMPREPLY[@]}"
    "#;
    let out = Process::new("bash")
        .args(["-c", script])
        .env("IOSCOPE", assert_cmd::cargo::cargo_bin("ioscope"))
        .env("WORDS", words.join(" "))
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn the_bash_completion_script_completes_subcommands_and_flags() {
    if bash().is_none() {
        return;
    }
    let subcommands = complete(&["ioscope", "sw"]);
    assert!(
        subcommands.contains(&"sweep".to_string()),
        "{subcommands:?}"
    );
    let all = complete(&["ioscope", ""]);
    assert!(all.contains(&"completions".to_string()), "{all:?}");
    assert!(!all.iter().any(|w| w.contains("syscall-loop")), "{all:?}");
    let flags = complete(&["ioscope", "sweep", "--bl"]);
    assert!(flags.contains(&"--block-sizes".to_string()), "{flags:?}");
    let flags = complete(&["ioscope", "fast", "--"]);
    assert!(flags.contains(&"--markdown".to_string()), "{flags:?}");
}

#[test]
fn completions_for_zsh_and_fish_are_printed_too() {
    for (shell, marker) in [("zsh", "#compdef ioscope"), ("fish", "complete -c ioscope")] {
        let out = ioscope().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}");
        assert!(
            text.contains("sweep") && !text.contains("syscall-loop"),
            "{shell}"
        );
    }
}

#[test]
fn the_manual_pages_render_without_warnings() {
    let groff = Process::new("groff").arg("--version").output();
    if groff.is_err() {
        eprintln!("skipped: groff is not installed (apt-get install groff-base)");
        return;
    }
    let pages = std::iter::once(None).chain(
        ioscope::cli::Cli::command()
            .get_subcommands()
            .map(|c| Some(c.get_name().to_string()))
            .collect::<Vec<_>>(),
    );
    for page in pages {
        let mut man = ioscope();
        man.arg("man").args(page.as_slice());
        let roff = man.output().unwrap();
        assert!(roff.status.success(), "man {page:?}");
        assert!(
            roff.stdout.is_ascii(),
            "man {page:?}: non-ASCII written as escapes"
        );
        let mut render = Process::new("groff")
            .args(["-man", "-Tutf8", "-ww"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        render
            .stdin
            .take()
            .unwrap()
            .write_all(&roff.stdout)
            .unwrap();
        let shown = render.wait_with_output().unwrap();
        assert!(shown.status.success());
        let warnings = String::from_utf8_lossy(&shown.stderr);
        assert!(warnings.is_empty(), "man {page:?}: {warnings}");
        // Bold is overstruck on a pipe (`S\bS`): keep the second of each pair.
        let text = String::from_utf8_lossy(&shown.stdout).into_owned();
        let mut plain = String::new();
        for c in text.chars() {
            if c == '\u{8}' {
                plain.pop();
            } else {
                plain.push(c);
            }
        }
        assert!(plain.contains("SYNOPSIS"), "man {page:?}: {plain}");
        if page.is_none() {
            assert!(plain.contains("sweep(1)"), "subcommands listed: {plain}");
        }
    }
    assert!(usage_error(&["man", "nonesuch"]).contains("no such subcommand"));
}

fn has_escape(bytes: &[u8]) -> bool {
    bytes.contains(&0x1b)
}

#[test]
fn no_color_and_pipes_get_no_escape_sequences() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let p = f.to_str().unwrap();
    let runs: [&[&str]; 8] = [
        &["--help"],
        &["sweep", "--help"],
        &["sweep", "--bogus"],
        &["sweep", p, "--block-sizes", "4k,64k"],
        &["cache", p],
        &["syscalls", p, "--sizes", "16k"],
        &["fast", p, "--verbose"],
        &["run", p, "-r", "4k"],
    ];
    for args in runs {
        for no_color in [true, false] {
            let mut cmd = ioscope();
            cmd.args(args);
            if no_color {
                cmd.env("NO_COLOR", "1");
            } else {
                cmd.env_remove("NO_COLOR");
            }
            let out = cmd.output().unwrap();
            assert!(!has_escape(&out.stdout), "{args:?} stdout");
            assert!(!has_escape(&out.stderr), "{args:?} stderr");
        }
    }
}

#[test]
fn no_color_keeps_escape_sequences_off_a_terminal_too() {
    // `script` gives the command a pseudo-terminal, where clap would colour its errors.
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let on_tty = |env: &str| {
        Process::new("script")
            .args([
                "-qec",
                &format!("{env} {} sweep --bogus", bin.display()),
                "/dev/null",
            ])
            .output()
            .ok()
            .filter(|o| !o.stdout.is_empty())
    };
    let Some(coloured) = on_tty("env -u NO_COLOR") else {
        eprintln!("skipped: no `script` (util-linux) to give a pseudo-terminal");
        return;
    };
    assert!(has_escape(&coloured.stdout), "the check can see colour");
    let plain = on_tty("env NO_COLOR=1").expect("script ran before");
    assert!(
        !has_escape(&plain.stdout),
        "{}",
        String::from_utf8_lossy(&plain.stdout)
    );
    assert!(String::from_utf8_lossy(&plain.stdout).contains("--bogus"));
}

#[test]
fn quiet_prints_the_result_and_no_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let f = file_with(dir.path(), "f", &pattern(1 << 20));
    let p = f.to_str().unwrap();
    // The mmap engine's counts cannot be checked by the kernel: a warning says so.
    let args = ["sweep", p, "--block-sizes", "64k", "--engine", "mmap"];
    let loud = ioscope().args(args).output().unwrap();
    assert!(loud.status.success());
    assert!(String::from_utf8_lossy(&loud.stderr).contains("warning:"));
    for q in ["-q", "--quiet"] {
        let quiet = ioscope().args(args).arg(q).output().unwrap();
        assert!(quiet.status.success());
        assert!(
            quiet.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&quiet.stderr)
        );
        assert!(String::from_utf8_lossy(&quiet.stdout).contains("MiB/s"));
    }
    let error = usage_error(&["sweep", "/nonexistent", "-q"]);
    assert!(error.starts_with("error:"), "errors still print");
}

#[test]
fn version_names_the_commit_when_built_from_a_checkout() {
    let out = ioscope().arg("--version").output().unwrap();
    let version = String::from_utf8(out.stdout).unwrap();
    assert!(version.starts_with(&format!("ioscope {}", env!("CARGO_PKG_VERSION"))));
    let head = Process::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(h) if h.status.success() => {
            let commit = String::from_utf8(h.stdout).unwrap();
            // Built from this checkout, perhaps a commit or more ago: a hash is named.
            assert!(version.contains("(commit "), "{version}");
            assert!(commit.trim().len() >= 7);
        }
        _ => eprintln!("skipped: not a git checkout, so no commit to name"),
    }
}

#[test]
fn every_help_ends_with_examples_that_parse() {
    let top = ioscope::cli::Cli::command();
    let mut helps = vec![(String::new(), top.clone())];
    helps.extend(
        top.get_subcommands()
            .map(|c| (c.get_name().to_string(), c.clone())),
    );
    for (name, _) in helps.iter().filter(|(n, _)| n != "help") {
        let mut cmd = ioscope();
        if !name.is_empty() {
            cmd.arg(name);
        }
        let out = cmd.arg("--help").output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        let (_, examples) = text
            .split_once("\nExamples:\n")
            .unwrap_or_else(|| panic!("{name} --help has no examples:\n{text}"));
        let lines: Vec<&str> = examples.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(lines.len() >= 2, "{name}: {lines:?}");
        for line in lines.iter().filter(|l| l.starts_with("  ioscope ")) {
            let shell_only = ["'", "|", ">", "$(", "<("].iter().any(|s| line.contains(s));
            if shell_only {
                continue;
            }
            let argv: Vec<&str> = line.split_whitespace().collect();
            ioscope::cli::Cli::try_parse_from(&argv)
                .unwrap_or_else(|e| panic!("{name} example {line:?} does not parse: {e}"));
        }
    }
}
