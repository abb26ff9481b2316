//! Helpers shared by the integration tests: the binary, files of known content, the
//! checksum's definition written out byte by byte, the fixtures and their variants
//! (fixtures.rs), the corruptions of the in-place check (corrupt.rs). Every test binary
//! includes this module and uses a part of it, hence `dead_code` allowed.
#![allow(dead_code)]

mod corrupt;
mod fixtures;

#[allow(unused_imports)] // a binary that uses neither
pub use corrupt::*;
#[allow(unused_imports)]
pub use fixtures::*;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

/// The ioscope binary under test, with no `$COLUMNS` from the shell that ran the tests
/// (text is then never wrapped; a test that wants a width sets it).
pub fn ioscope() -> Command {
    let mut cmd = Command::cargo_bin("ioscope").expect("the binary is built");
    cmd.env_remove("COLUMNS");
    cmd
}

/// The checksum by its definition: byte `i` goes to bits `8 * (i % 4)`.
pub fn reference_xor(bytes: &[u8]) -> String {
    let x = bytes
        .iter()
        .enumerate()
        .fold(0u32, |x, (i, &b)| x ^ (u32::from(b) << (8 * (i % 4))));
    format!("{x:08x}")
}

/// Deterministic, non-repeating bytes.
pub fn pattern(len: usize) -> Vec<u8> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn file_with(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

/// Runs ioscope with `args`, expects success, and returns the JSON document it printed.
pub fn json_of(args: &[&str]) -> serde_json::Value {
    let out = ioscope()
        .args(args)
        .arg("--json")
        .output()
        .expect("run ioscope");
    assert!(
        out.status.success(),
        "ioscope {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

/// The first line of stderr, which must be the only line.
pub fn one_line_stderr(out: &std::process::Output) -> String {
    let text = String::from_utf8_lossy(&out.stderr).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line on stderr, got: {text}");
    lines[0].to_string()
}

/// Runs ioscope with `args`, expects a usage or input error (exit 2), and returns the one
/// line it printed on stderr.
pub fn usage_error(args: &[&str]) -> String {
    let out = ioscope().args(args).output().expect("run ioscope");
    assert_eq!(out.status.code(), Some(2), "ioscope {args:?}");
    one_line_stderr(&out)
}

/// True when this process runs as root (permission tests need another user then).
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The text `ioscope report` renders from a saved JSON document (no measuring).
pub fn report_text(doc: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("result.json");
    std::fs::write(&path, doc.to_string()).expect("save the document");
    let out = ioscope()
        .arg("report")
        .arg(&path)
        .output()
        .expect("run ioscope report");
    assert!(
        out.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 text")
}

/// The Markdown `ioscope report --markdown` writes from a saved JSON document (every
/// sentence of every section, the general notes the text leaves out).
pub fn report_markdown(doc: &serde_json::Value) -> String {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("result.json");
    std::fs::write(&path, doc.to_string()).expect("save the document");
    let md = dir.path().join("out.md");
    let out = ioscope()
        .arg("report")
        .arg(&path)
        .arg("--markdown")
        .arg(&md)
        .output()
        .expect("run ioscope report");
    assert!(
        out.status.success(),
        "report --markdown failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&md).expect("read the Markdown written")
}

/// Read calls process `pid` has made so far (`syscr` in /proc/PID/io), if readable here.
pub fn read_calls(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("syscr:"))?
        .trim()
        .parse()
        .ok()
}

/// Starts `ioscope syscalls FILE --sizes SIZE` and returns once it is inside its 1-byte
/// read loops (more than 100,000 read calls made), or `None` (the reason printed as
/// `skipped:`) when /proc/PID/io cannot be read here.
pub fn syscalls_in_its_loops(file: &Path, size: &str) -> Option<std::process::Child> {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .args(["syscalls", file.to_str().unwrap(), "--sizes", size])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start ioscope");
    let started = Instant::now();
    loop {
        match read_calls(child.id()) {
            Some(n) if n > 100_000 => return Some(child),
            Some(_) => {}
            None if child.try_wait().unwrap().is_none() => {
                eprintln!("skipped: /proc/{}/io is not readable here", child.id());
                child.kill().unwrap();
                child.wait().unwrap();
                return None;
            }
            None => panic!(
                "syscalls ended before its read loops: {:?}",
                child.wait_with_output()
            ),
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "syscalls never reached its read loops"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A deterministic meter for harness tests: 1 µs per call, 1 GB/s, everything resident.
pub const FIXED_METER: ioscope::measure::meter::FixedMeter = ioscope::measure::meter::FixedMeter {
    seconds_per_call: 1e-6,
    bytes_per_second: 1e9,
    fsync_seconds: 0.0,
    resident: Some(1.0),
};

/// The parsed command of `ioscope ARGS...`, as `main` would get it.
pub fn command_of(args: &[&str]) -> ioscope::cli::Command {
    use clap::Parser;
    let mut argv = vec!["ioscope"];
    argv.extend_from_slice(args);
    ioscope::cli::Cli::try_parse_from(argv)
        .expect("valid arguments")
        .command
}

/// The options of `ioscope sweep ARGS...`.
pub fn sweep_options(args: &[&str]) -> ioscope::options::SweepOptions {
    let mut argv = vec!["sweep"];
    argv.extend_from_slice(args);
    match command_of(&argv) {
        ioscope::cli::Command::Sweep(a) => {
            ioscope::options::SweepOptions::from_args(&a).expect("valid options")
        }
        _ => unreachable!("a sweep command line"),
    }
}

/// A command that runs `program ARGS...` with a fresh tmpfs of `size` (e.g. `"20m"`, and
/// optionally `nr_inodes=N`) mounted at `dir`, inside a private user and mount namespace
/// (`unshare -rm`): no root needed, nothing outside sees the mount. `None`, with the reason
/// printed as `skipped:`, where this machine cannot make one (no unshare, user namespaces
/// off). The mount is gone when the command ends; `dir` must exist and should be empty.
pub fn in_small_tmpfs(size: &str, dir: &Path, program: &Path) -> Option<std::process::Command> {
    use std::process::{Command, Stdio};
    let probe = Command::new("unshare")
        .args([
            "-rm",
            "sh",
            "-c",
            "mount -t tmpfs -o size=1m tmpfs \"$1\"",
            "sh",
        ])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    if !matches!(probe, Ok(s) if s.success()) {
        eprintln!("skipped: cannot mount a small tmpfs here (unshare -rm with mount failed)");
        return None;
    }
    let mut cmd = Command::new("unshare");
    cmd.args([
        "-rm",
        "sh",
        "-c",
        "mount -t tmpfs -o \"size=$1\" tmpfs \"$2\" && shift 2 && exec \"$@\"",
        "sh",
        size,
    ])
    .arg(dir)
    .arg(program);
    Some(cmd)
}

/// Longer than any `mpirun` run of the tests takes; a hang fails the test, not the CI job.
pub const MPI_DEADLINE: std::time::Duration = std::time::Duration::from_secs(120);

/// `mpirun --oversubscribe -np N ioscope mpi ARGS` (root allowed when we are root) with
/// extra environment, its stdout and stderr piped; `None` (and a printed reason) when
/// mpirun is missing.
pub fn mpirun_command(
    np: usize,
    args: &[&str],
    env: &[(&str, &str)],
) -> Option<std::process::Command> {
    if std::process::Command::new("mpirun")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)");
        return None;
    }
    let mut cmd = std::process::Command::new("mpirun");
    cmd.args(["--oversubscribe", "-np", &np.to_string()]);
    if is_root() {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    cmd.arg(assert_cmd::cargo::cargo_bin("ioscope"))
        .arg("mpi")
        .args(args)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    Some(cmd)
}

/// Runs `mpirun --oversubscribe -np N ioscope mpi ARGS` (root allowed when we are root)
/// with extra environment; `None` (and a printed reason) when mpirun is missing.
pub fn mpirun(np: usize, args: &[&str], env: &[(&str, &str)]) -> Option<std::process::Output> {
    let mut child = mpirun_command(np, args, env)?
        .spawn()
        .expect("start mpirun");
    let drained = Drained::of(&mut child);
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for mpirun") {
            break status;
        }
        if start.elapsed() > MPI_DEADLINE {
            let _ = child.kill();
            panic!("mpirun -np {np} ioscope mpi {args:?} hung for {MPI_DEADLINE:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    Some(drained.output(status))
}

/// A child's piped stdout and stderr, read to their end by two threads while it runs: a
/// child that writes more than a pipe holds (64 KiB; 4 mpi ranks' JSON is ~56 KiB) would
/// otherwise block on the full pipe while the test waits for it to exit, and read as a hang.
pub struct Drained {
    out: std::thread::JoinHandle<Vec<u8>>,
    err: std::thread::JoinHandle<Vec<u8>>,
}

impl Drained {
    /// Starts draining `child`'s piped outputs (an output not piped reads as empty).
    pub fn of(child: &mut std::process::Child) -> Self {
        fn read(
            r: Option<impl std::io::Read + Send + 'static>,
        ) -> std::thread::JoinHandle<Vec<u8>> {
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                if let Some(mut r) = r {
                    let _ = r.read_to_end(&mut buf);
                }
                buf
            })
        }
        Self {
            out: read(child.stdout.take()),
            err: read(child.stderr.take()),
        }
    }

    /// The output, once the child has ended with `status`.
    pub fn output(self, status: std::process::ExitStatus) -> std::process::Output {
        std::process::Output {
            status,
            stdout: self.out.join().expect("read the child's stdout"),
            stderr: self.err.join().expect("read the child's stderr"),
        }
    }
}

/// What `ioscope trace --json FLAGS -- ARGS` gave: its document, its standard error (where
/// `--json` sends the command's output) and its exit code.
pub struct TraceRun {
    pub doc: serde_json::Value,
    pub stderr: String,
    pub code: i32,
}

/// `ioscope trace --json FLAGS -- ARGS` with `env`; `None` (with the reason printed) where
/// this machine does not allow tracing. Panics when stdout is not one JSON document.
pub fn trace_run(flags: &[&str], args: &[&str], env: &[(&str, &str)]) -> Option<TraceRun> {
    let out = ioscope()
        .args(["trace", "--json"])
        .args(flags)
        .arg("--")
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if stderr.contains("ptrace refused") {
        eprintln!("skipped: ptrace is not allowed here: {stderr}");
        return None;
    }
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    Some(TraceRun {
        doc,
        stderr,
        code: out.status.code().unwrap_or(-1),
    })
}

/// Builds `source` (C, or assembly with `ext` "S") with `cc` and `flags` into `dir/name`,
/// or says why the test is skipped (no `cc`, or it cannot build this here).
pub fn build_c(dir: &Path, name: &str, ext: &str, source: &str, flags: &[&str]) -> Option<PathBuf> {
    let src = dir.join(format!("{name}.{ext}"));
    std::fs::write(&src, source).unwrap();
    let exe = dir.join(name);
    let out = std::process::Command::new("cc")
        .args(flags)
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output();
    match out {
        Ok(o) if o.status.success() => Some(exe),
        Ok(o) => {
            eprintln!(
                "skipped: cc{} cannot build the test program here: {}",
                flags.iter().map(|f| format!(" {f}")).collect::<String>(),
                String::from_utf8_lossy(&o.stderr)
                    .lines()
                    .next()
                    .unwrap_or("")
            );
            None
        }
        Err(e) => {
            eprintln!("skipped: no C compiler (cc): {e}");
            None
        }
    }
}

/// `ioscope trace --json -- ARGS`, which must exit 0, or `None` with a reason where tracing
/// is refused.
pub fn trace_doc(args: &[&str]) -> Option<serde_json::Value> {
    let t = trace_run(&[], args, &[])?;
    assert_eq!(t.code, 0, "{}", t.stderr);
    Some(t.doc)
}

/// Runs `ioscope ARGS` in `cwd` (so a default report directory lands there, not in the repo).
pub fn in_dir(cwd: &Path, args: &[&str]) -> std::process::Output {
    ioscope()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("run ioscope")
}

/// Asserts that a command succeeded, showing its exit code and stderr when not.
pub fn ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Files in `dir` whose name starts with `.ioscope-`: the scratch files a run leaves
/// behind when it does not clean up.
pub fn scratch_files(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".ioscope-"))
        .collect()
}

/// The text between `start` and the next `end` after it.
pub fn between<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let i = text.find(start).unwrap_or_else(|| panic!("no {start}"));
    let j = text[i..].find(end).map_or(text.len(), |j| i + j);
    &text[i..j]
}

/// Every control character but the line ends of the rendering itself.
pub fn controls(text: &str) -> Vec<char> {
    text.chars()
        .filter(|&c| c.is_control() && c != '\n')
        .collect()
}

/// A headless browser on `PATH` (chromium or Chrome), for the tests that render a page.
pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH")?
                .to_str()?
                .split(':')
                .map(|d| Path::new(d).join(name))
                .find(|p| p.is_file())
        })
}

/// [`FIXED_METER`] whose timed regions take `factors[i % len]` times as long, run after
/// run: repeats that scatter as the test wants, the same on every machine.
pub struct ScriptedMeter {
    /// Each run's time over [`FIXED_METER`]'s, in turn.
    pub factors: &'static [f64],
    /// Runs timed so far.
    pub next: std::sync::atomic::AtomicUsize,
}

impl ScriptedMeter {
    /// A meter whose runs take `factors` times as long in turn.
    pub const fn new(factors: &'static [f64]) -> Self {
        Self {
            factors,
            next: std::sync::atomic::AtomicUsize::new(0),
        }
    }
}

struct ScriptedRegion {
    inner: Box<dyn ioscope::measure::meter::Region>,
    factor: f64,
}

impl ioscope::measure::meter::Region for ScriptedRegion {
    fn lap(&mut self, claim: &ioscope::measure::meter::Claim) {
        self.inner.lap(claim);
    }

    fn stop(
        self: Box<Self>,
        claim: &ioscope::measure::meter::Claim,
    ) -> ioscope::measure::meter::Measured {
        let mut m = self.inner.stop(claim);
        m.elapsed.seconds *= self.factor;
        m.elapsed.user_seconds *= self.factor;
        m.elapsed.system_seconds *= self.factor;
        m.lap_seconds = m.lap_seconds.map(|s| s * self.factor);
        m
    }
}

impl ioscope::measure::meter::Meter for ScriptedMeter {
    fn start(&self, device: Option<&str>) -> Box<dyn ioscope::measure::meter::Region> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Box::new(ScriptedRegion {
            inner: FIXED_METER.start(device),
            factor: self.factors[i % self.factors.len()],
        })
    }

    fn residency(
        &self,
        file: &std::fs::File,
        name: &str,
        start: u64,
        len: u64,
    ) -> Option<ioscope::measure::cache::Residency> {
        FIXED_METER.residency(file, name, start, len)
    }
}

/// [`FIXED_METER`] that calls `meddle` once, as its `at`-th timed region starts (from 0):
/// another program changing the measured file between one run and the next.
pub struct MeddlingMeter {
    /// The timed region before which `meddle` runs.
    pub at: usize,
    next: std::sync::atomic::AtomicUsize,
    meddle: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl MeddlingMeter {
    /// A meter that runs `meddle` as its `at`-th timed region starts.
    pub fn new(at: usize, meddle: impl FnOnce() + Send + 'static) -> Self {
        Self {
            at,
            next: std::sync::atomic::AtomicUsize::new(0),
            meddle: std::sync::Mutex::new(Some(Box::new(meddle))),
        }
    }

    /// Whether `meddle` has run.
    pub fn meddled(&self) -> bool {
        self.meddle.lock().unwrap().is_none()
    }
}

impl ioscope::measure::meter::Meter for MeddlingMeter {
    fn start(&self, device: Option<&str>) -> Box<dyn ioscope::measure::meter::Region> {
        let i = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if i == self.at
            && let Some(meddle) = self.meddle.lock().unwrap().take()
        {
            meddle();
        }
        FIXED_METER.start(device)
    }

    fn residency(
        &self,
        file: &std::fs::File,
        name: &str,
        start: u64,
        len: u64,
    ) -> Option<ioscope::measure::cache::Residency> {
        FIXED_METER.residency(file, name, start, len)
    }
}
