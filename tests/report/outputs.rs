//! Output files: reserved before measuring, never two outputs on one path, never over the
//! measured file, `--force` replacing a file only with complete content; `report` reads only
//! what can be a saved result.

use crate::common::*;
use std::os::unix::process::CommandExt;

#[test]
fn two_outputs_with_one_path_are_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "f", &pattern(1 << 16));
    let x = dir.path().join("x");
    let out = ioscope()
        .args(["sweep", src.to_str().unwrap(), "--block-sizes", "4k"])
        .args(["--csv", x.to_str().unwrap(), "--svg", x.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("same file"));
    assert!(!x.exists());
}

#[test]
fn the_measured_file_is_never_an_output_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(1 << 16);
    let src = file_with(dir.path(), "f", &data);
    let p = src.to_str().unwrap();
    let out = ioscope()
        .args(["sweep", p, "--block-sizes", "4k", "--csv", p, "--force"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("being measured"));
    assert_eq!(std::fs::read(&src).unwrap(), data);
}

#[test]
fn an_output_that_cannot_be_written_is_refused_before_measuring() {
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "f", &pattern(1 << 16));
    let out = ioscope()
        .args(["sweep", src.to_str().unwrap(), "--block-sizes", "4k"])
        .args(["--csv", "/proc/version", "--force", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing was measured");
    assert!(one_line_stderr(&out).contains("/proc/version"));
}

#[test]
fn a_reserved_output_is_removed_when_the_command_fails_before_writing_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "f", &pattern(1 << 16));
    let csv = dir.path().join("r.csv");
    let out = ioscope()
        .args([
            "sweep",
            src.to_str().unwrap(),
            "--engine",
            "direct",
            "--block-sizes",
            "1",
        ])
        .args(["--csv", csv.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!csv.exists(), "the placeholder went away with the failure");
}

#[test]
fn a_forced_write_that_fails_leaves_the_old_file_whole() {
    let dir = tempfile::tempdir().unwrap();
    let old = pattern(100_000);
    let path = file_with(dir.path(), "old", &old);
    let mut cmd = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
    cmd.args(["run", path.to_str().unwrap(), "-w", "64k", "64", "--force"]);
    // SAFETY: only async-signal-safe calls between fork and exec: a 256 KiB file-size
    // limit, and SIGXFSZ ignored so that a write past it fails with EFBIG.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 256 << 10,
                rlim_max: 256 << 10,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&path).unwrap(),
        old,
        "the old file is untouched"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "no partial file left beside it: {names:?}");
    let ok = ioscope()
        .args([
            "run",
            path.to_str().unwrap(),
            "-w",
            "4k",
            "2",
            "--force",
            "--seed",
            "1",
        ])
        .output()
        .unwrap();
    assert!(ok.status.success());
    assert_eq!(
        std::fs::metadata(&path).unwrap().len(),
        8192,
        "replaced when complete"
    );
}

#[test]
fn report_refuses_devices_and_reads_standard_input() {
    let out = ioscope().args(["report", "/dev/zero"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(one_line_stderr(&out).contains("not a file"));
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "f", &pattern(1 << 16));
    let doc = json_of(&["syscalls", src.to_str().unwrap(), "--sizes", "1000"]);
    let out = ioscope()
        .args(["report", "-"])
        .write_stdin(doc.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("lseek"));
}

/// What a symbolic link at `link` must still be after a refused write: the same link to
/// `target`, and `target` (when it is a file here) unchanged.
fn assert_link_untouched(link: &std::path::Path, target: &std::path::Path, content: Option<&[u8]>) {
    let meta = std::fs::symlink_metadata(link).expect("the link is still there");
    assert!(
        meta.file_type().is_symlink(),
        "{} was replaced",
        link.display()
    );
    assert_eq!(std::fs::read_link(link).unwrap(), target);
    if let Some(content) = content {
        assert_eq!(std::fs::read(target).unwrap(), content, "written through");
    }
}

fn refusal(link: &std::path::Path, target: &std::path::Path) -> String {
    format!(
        "{}: is a symbolic link to {}; refusing to write through it (remove it or name the target)",
        link.display(),
        target.display()
    )
}

#[test]
fn every_writer_refuses_a_symbolic_link_with_or_without_force_naming_its_target() {
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "src", &pattern(1 << 16));
    let target = file_with(dir.path(), "target", b"the user's file");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dangling_target = dir.path().join("nowhere");
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(&dangling_target, &dangling).unwrap();
    let s = src.to_str().unwrap();
    for (link, target, content) in [
        (&link, &target, Some(&b"the user's file"[..])),
        (&dangling, &dangling_target, None),
    ] {
        let l = link.to_str().unwrap();
        for force in [false, true] {
            let writers: [Vec<&str>; 5] = [
                vec!["run", l, "-w", "4k", "2"],
                vec![
                    "sweep",
                    l,
                    "--op",
                    "write",
                    "--size",
                    "64k",
                    "--block-sizes",
                    "4k",
                ],
                vec![
                    "patterns", l, "--size", "64k", "--tests", "write", "--runs", "1",
                ],
                vec!["sweep", s, "--block-sizes", "4k", "--csv", l],
                vec!["fast", s, "--markdown", l],
            ];
            for mut args in writers {
                if force {
                    args.push("--force");
                }
                let out = ioscope().args(&args).output().unwrap();
                assert_eq!(out.status.code(), Some(2), "{args:?}");
                let line = one_line_stderr(&out);
                assert!(line.ends_with(&refusal(link, target)), "{args:?}: {line}");
                assert!(out.stdout.is_empty(), "{args:?}: refused before measuring");
                assert_link_untouched(link, target, content);
                assert!(
                    !dangling_target.exists(),
                    "{args:?} created the link's target"
                );
            }
        }
    }
}

#[test]
fn a_link_into_dev_is_refused_as_an_output_even_with_force() {
    let dir = tempfile::tempdir().unwrap();
    let src = file_with(dir.path(), "src", &pattern(1 << 16));
    for target in ["/dev/null", "/dev/stdout"] {
        let target = std::path::Path::new(target);
        let link = dir.path().join("to-dev");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(target, &link).unwrap();
        let l = link.to_str().unwrap();
        for args in [
            vec![
                "sweep",
                src.to_str().unwrap(),
                "--block-sizes",
                "4k",
                "--csv",
                l,
                "--force",
            ],
            vec!["run", l, "-w", "4k", "1", "--force", "--allow-device"],
        ] {
            let out = ioscope().args(&args).output().unwrap();
            assert_eq!(out.status.code(), Some(2), "{args:?}");
            assert!(
                one_line_stderr(&out).ends_with(&refusal(&link, target)),
                "{args:?}"
            );
            assert_link_untouched(&link, target, None);
        }
    }
}

#[test]
fn a_study_refuses_an_out_directory_that_is_a_symbolic_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let old = file_with(&real, "study.json", b"an old report");
    let link = dir.path().join("out");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let out = ioscope()
        .arg("study")
        .arg(dir.path())
        .args([
            "--out",
            link.to_str().unwrap(),
            "--force",
            "--level",
            "quick",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.ends_with(&refusal(&link, &real)), "{line}");
    assert_eq!(std::fs::read(&old).unwrap(), b"an old report");
    assert_link_untouched(&link, &real, None);
}

/// Runs `sweep` with three outputs and, while they are still ioscope's empty placeholders,
/// lets `replace` put other files at their paths; returns the run's output, or `None`
/// (printed as `skipped:`) when the sweep wrote its outputs before they could be replaced.
fn replace_placeholders_during_a_sweep(
    dir: &std::path::Path,
    replace: impl FnOnce(&[std::path::PathBuf; 3]),
) -> Option<std::process::Output> {
    use std::time::{Duration, Instant};
    let src = file_with(dir, "data", &pattern(32 << 20));
    let outs = ["out.csv", "out.md", "out.svg"].map(|n| dir.join(n));
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["sweep", src.to_str().unwrap(), "--repeat", "2", "-q"])
        .args(["--block-sizes", "4k,1m"])
        .arg("--csv")
        .arg(&outs[0])
        .arg("--markdown")
        .arg(&outs[1])
        .arg("--svg")
        .arg(&outs[2])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !outs.iter().all(|p| p.exists()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the placeholders were never created"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let empty = outs
        .iter()
        .all(|p| std::fs::metadata(p).is_ok_and(|m| m.len() == 0));
    if empty {
        replace(&outs);
    }
    let out = child.wait_with_output().unwrap();
    if !empty {
        eprintln!("skipped: the sweep wrote its outputs before they could be replaced");
        return None;
    }
    Some(out)
}

#[test]
fn files_another_program_puts_in_place_of_the_placeholders_are_never_removed() {
    let dir = tempfile::tempdir().unwrap();
    let target = file_with(dir.path(), "target", b"theirs");
    // Every placeholder replaced: a file, a symbolic link, a file.
    let Some(out) = replace_placeholders_during_a_sweep(dir.path(), |outs| {
        for p in outs {
            std::fs::remove_file(p).unwrap();
        }
        std::fs::write(&outs[0], b"USER").unwrap();
        std::os::unix::fs::symlink(&target, &outs[1]).unwrap();
        std::fs::write(&outs[2], b"USER").unwrap();
    }) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2));
    assert!(
        one_line_stderr(&out).contains("another program wrote this file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let [csv, md, svg] = ["out.csv", "out.md", "out.svg"].map(|n| dir.path().join(n));
    assert_eq!(std::fs::read(&csv).unwrap(), b"USER");
    assert_eq!(std::fs::read_link(&md).unwrap(), target, "the link stays");
    assert_eq!(std::fs::read(&svg).unwrap(), b"USER");
    assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
}

#[test]
fn a_placeholder_replaced_after_the_first_write_is_kept_too() {
    let dir = tempfile::tempdir().unwrap();
    let target = file_with(dir.path(), "target", b"theirs");
    // The CSV placeholder left to ioscope; the others replaced: a file and a link.
    let Some(out) = replace_placeholders_during_a_sweep(dir.path(), |outs| {
        std::fs::remove_file(&outs[1]).unwrap();
        std::fs::write(&outs[1], b"USER").unwrap();
        std::fs::remove_file(&outs[2]).unwrap();
        std::os::unix::fs::symlink(&target, &outs[2]).unwrap();
    }) else {
        return;
    };
    assert_eq!(out.status.code(), Some(2));
    assert!(
        one_line_stderr(&out).contains("another program wrote this file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let [csv, md, svg] = ["out.csv", "out.md", "out.svg"].map(|n| dir.path().join(n));
    assert!(
        std::fs::metadata(&csv).unwrap().len() > 0,
        "ioscope's CSV is written"
    );
    assert_eq!(std::fs::read(&md).unwrap(), b"USER");
    assert_eq!(std::fs::read_link(&svg).unwrap(), target, "the link stays");
    assert_eq!(std::fs::read(&target).unwrap(), b"theirs");
}
