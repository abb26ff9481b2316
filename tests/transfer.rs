//! `send`, `receive` and `transfer`: every method pair gives byte-identical copies of files
//! of awkward sizes and nested names, over TCP and a Unix socket; a receiver refuses
//! existing files, and a hostile sender (names leaving the directory, a huge size, a cut
//! stream, a wrong token, a wrong checksum, garbage) is refused with nothing written outside
//! the directory and nothing partial left, while the next connection still works; a source
//! that shrinks while it is sent is named, and a silent peer is given up on. A slow peer
//! holds only its own connection; the free-space margin holds by blocks and inodes on a
//! small tmpfs, with no SIGBUS from the mmap receiver; modes follow the receiver's umask.

mod common;
use common::*;
use ioscope::transfer::proto::{self, Digest, Header};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                out.push(p.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for (i, len) in [0usize, 1, 3, 4097, (1 << 20) + 3].into_iter().enumerate() {
        paths.push(file_with(dir, &format!("s{i}"), &pattern(len)));
    }
    let nested = dir.join("tree");
    std::fs::create_dir_all(nested.join("deep/er")).unwrap();
    for i in 0..40 {
        let sub = if i % 2 == 0 { "deep" } else { "deep/er" };
        std::fs::write(nested.join(sub).join(format!("f{i}")), pattern(100 + i)).unwrap();
    }
    paths.push(nested);
    paths
}

#[test]
fn every_method_pair_copies_every_byte_over_tcp_and_unix() {
    let src = tempfile::tempdir().unwrap();
    let to = tempfile::tempdir().unwrap();
    let paths = sources(src.path());
    for unix in [false, true] {
        let mut cmd = ioscope();
        cmd.arg("transfer").args(&paths).arg("--to").arg(to.path());
        cmd.args(["--repeat", "1", "--json", "--no-sync"]);
        if unix {
            cmd.args([
                "--senders",
                "sendfile",
                "--receivers",
                "splice,mmap",
                "--unix",
            ]);
        }
        let out = cmd.output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let w = &doc["workloads"][0];
        assert_eq!(w["files"], 5 + 40);
        let cells = w["cells"].as_array().unwrap();
        assert_eq!(cells.len(), if unix { 2 } else { 9 });
        for c in cells {
            assert_eq!(c["verified"], true, "{c}");
        }
        assert_eq!(
            std::fs::read_dir(to.path()).unwrap().count(),
            0,
            "scratch removed"
        );
    }
}

/// A receiver on a Unix socket in `dir`, serving until killed.
struct Receiver {
    child: Option<Child>,
    addr: String,
}

/// A receiver left running by a failed test is killed, not left behind.
impl Drop for Receiver {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Receiver {
    fn start(dir: &Path, socket: &Path, extra: &[&str]) -> Self {
        Self::start_with(dir, socket, extra, |_| {})
    }

    /// [`Receiver::start`] with the command adjusted by `configure` first (limits).
    fn start_with(
        dir: &Path,
        socket: &Path,
        extra: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> Self {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("ioscope"));
        cmd.arg("receive")
            .arg(dir)
            .arg("--listen")
            .arg(format!("unix:{}", socket.display()))
            .args(["--min-free", "0"])
            .args(if extra.contains(&"--timeout") {
                &[][..]
            } else {
                &["--timeout", "3s"][..]
            })
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        configure(&mut cmd);
        let child = cmd.spawn().unwrap();
        let started = Instant::now();
        while !socket.exists() {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the receiver never listened"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Receiver {
            child: Some(child),
            addr: format!("unix:{}", socket.display()),
        }
    }

    /// `ioscope send` of `paths` to it, with `extra` flags.
    fn send(&self, paths: &[&Path], extra: &[&str]) -> std::process::Output {
        ioscope()
            .args(["send", &self.addr])
            .args(paths)
            .args(extra)
            .output()
            .unwrap()
    }

    /// The same, which must succeed.
    fn send_ok(&self, paths: &[&Path], extra: &[&str]) -> std::process::Output {
        let out = self.send(paths, extra);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    /// Stops it (Ctrl-C) and returns its exit code, stdout and stderr.
    fn stop(mut self) -> (Option<i32>, String, String) {
        let child = self.child.take().expect("stopped once");
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let out = child.wait_with_output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

#[test]
fn send_and_receive_verify_refuse_existing_files_and_keep_serving() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let paths = sources(src.path());
    let r = Receiver::start(dest.path(), &socket, &["--method", "mmap"]);
    let all: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
    let out = r.send_ok(&all, &["--method", "sendfile"]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("sent 45 file(s)"));
    for p in &paths[..5] {
        let copy = dest.path().join(p.file_name().unwrap());
        assert_eq!(std::fs::read(p).unwrap(), std::fs::read(copy).unwrap());
    }
    assert_eq!(
        tree(&dest.path().join("tree")),
        tree(&src.path().join("tree"))
    );
    // Again: the first file exists now, so the receiver refuses it and keeps nothing new.
    let out = r.send(&[&paths[4]], &[]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(line.contains("s4") && line.contains("--force"), "{line}");
    // The receiver still serves: a new name arrives.
    let extra = file_with(src.path(), "late", &pattern(777));
    r.send_ok(&[&extra], &[]);
    let (code, stdout, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(stdout.matches("received").count(), 2, "{stdout}");
    assert!(stderr.contains("s4"), "{stderr}");
    assert_no_leftovers(dest.path());
}

/// Speaks the protocol by hand: greeting, then `frames`; returns the receiver's replies.
fn hostile(socket: &Path, token: &[u8], frames: &[u8]) -> Vec<Result<(), String>> {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    proto::write_hello(&mut s, token).unwrap();
    let _ = s.write_all(frames);
    let _ = s.shutdown(std::net::Shutdown::Write);
    let mut replies = Vec::new();
    while let Ok(reply) = proto::read_reply(&mut s) {
        replies.push(reply);
    }
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    replies
}

fn frame(name: &[u8], body: &[u8], size: u64, good_trailer: bool) -> Vec<u8> {
    let mut out = Vec::new();
    proto::write_header(
        &mut out,
        &Header {
            name: name.to_vec(),
            size,
            mode: 0o644,
        },
    )
    .unwrap();
    out.extend_from_slice(body);
    let mut d = Digest::new();
    d.update(body);
    let mut t = d.trailer();
    if !good_trailer {
        t.hash ^= 1;
    }
    if body.len() as u64 == size {
        proto::write_trailer(&mut out, t).unwrap();
    }
    out
}

#[test]
fn a_hostile_sender_is_refused_and_nothing_escapes_or_stays_partial() {
    let root = tempfile::tempdir().unwrap();
    let dest = root.path().join("in");
    std::fs::create_dir(&dest).unwrap();
    std::os::unix::fs::symlink(root.path(), dest.join("link")).unwrap();
    let socket = root.path().join("s");
    let r = Receiver::start(&dest, &socket, &["--token", "sesame"]);
    let ok = |replies: &[Result<(), String>]| replies.first() == Some(&Ok(()));
    // A wrong token: refused before any file.
    let replies = hostile(&socket, b"wrong", &frame(b"a", b"abc", 3, true));
    assert_eq!(
        replies.first().cloned(),
        Some(Err("wrong token".to_string()))
    );
    // Files of 1 MiB and more are preallocated before their bytes arrive: cut short or
    // corrupted, they must go as completely as the small ones.
    let big = vec![7u8; 3 << 19];
    for (name, body, size, good, why) in [
        (&b"../escape"[..], &b"x"[..], 1, true, "leaves"),
        (
            b"bigcut",
            &big[..1 << 20],
            2 << 20,
            true,
            "ended after 1048576",
        ),
        (b"bigbadsum", &big[..], 3 << 19, false, "checksum mismatch"),
        (b"/tmp/abs", b"x", 1, true, "absolute"),
        (b"link/through", b"x", 1, true, "not a directory"),
        (b"a\0b", b"x", 1, true, "NUL"),
        (b"huge", b"", 1 << 62, true, "not enough free space"),
        (b"cut", b"only part", 1000, true, "ended after"),
        (b"badsum", b"payload", 7, false, "checksum mismatch"),
    ] {
        let replies = hostile(&socket, b"sesame", &frame(name, body, size, good));
        assert!(ok(&replies), "the token is right: {replies:?}");
        let refusal = replies.get(1).cloned();
        assert!(
            matches!(&refusal, Some(Err(m)) if m.contains(why)),
            "{}: {refusal:?}",
            String::from_utf8_lossy(name)
        );
    }
    // Garbage instead of a greeting.
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    drop(s);
    // The receiver still works: a good file arrives.
    let replies = hostile(
        &socket,
        b"sesame",
        &[frame(b"good", b"fine", 4, true), vec![0]].concat(),
    );
    assert_eq!(replies, vec![Ok(()), Ok(()), Ok(())]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read(dest.join("good")).unwrap(), b"fine");
    // Nothing else in DIR (the link is the test's own), nothing next to it.
    let mut names: Vec<_> = std::fs::read_dir(&dest)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["good", "link"]);
    let mut outside: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    outside.sort();
    assert_eq!(outside, ["in"], "the socket is gone and nothing escaped");
    assert!(!Path::new("/tmp/abs").exists());
}

#[test]
fn bad_addresses_and_remote_listening_without_permission_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, needle) in [
        (
            vec!["receive", d, "--listen", "0.0.0.0:0"],
            "--allow-remote",
        ),
        (vec!["receive", d, "--listen", "nonsense"], "HOST:PORT"),
        (vec!["receive", "/nonexistent/dir"], "/nonexistent/dir"),
        (
            vec!["send", "127.0.0.1:1", "/nonexistent/file"],
            "/nonexistent/file",
        ),
        (vec!["send", "unix:/nonexistent/sock", d], "connect"),
    ] {
        let out = ioscope().args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let line = one_line_stderr(&out);
        assert!(line.contains(needle), "{args:?}: {line}");
    }
}

/// A file whose name is not UTF-8 arrives under the same bytes; `transfer`'s bad numbers
/// are usage errors.
#[test]
fn a_non_utf8_name_arrives_whole_and_bad_transfer_flags_are_refused() {
    use std::os::unix::ffi::OsStrExt;
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9-\xff");
    let path = src.path().join(name);
    std::fs::write(&path, pattern(5000)).unwrap();
    let r = Receiver::start(dest.path(), &socket, &[]);
    r.send_ok(&[&path], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        std::fs::read(dest.path().join(name)).unwrap(),
        pattern(5000)
    );
    for args in [["--repeat", "0"], ["--large", "1x"], ["--buffer", "0"]] {
        let out = ioscope().arg("transfer").args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        one_line_stderr(&out);
    }
    // --to must be an existing directory, and the error says which way it is not.
    let missing = src.path().join("missing");
    for (to, why) in [
        (&missing, "No such file or directory"),
        (&path, "not a directory"),
    ] {
        let out = ioscope()
            .arg("transfer")
            .arg("--to")
            .arg(to)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let line = one_line_stderr(&out);
        assert!(
            line.contains("transfer: --to") && line.contains(why),
            "{line}"
        );
    }
    assert!(!missing.exists(), "nothing made");
}

/// No file in `dir`'s tree is a temporary `.ioscope-*` one.
fn assert_no_leftovers(dir: &Path) {
    let leftovers: Vec<_> = tree(dir)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".ioscope-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The sender's units, given a file shorter than the size announced for it (what a file
/// that shrank after its header went out looks like), stop with an error that names the
/// file and asks whether it shrank. (mmap would fault: its SIGBUS handler is another test.)
#[test]
fn a_source_shorter_than_announced_is_named_by_every_reading_method() {
    use ioscope::transfer::methods::{self, SendMethod};
    let dir = tempfile::tempdir().unwrap();
    let path = file_with(dir.path(), "shrinking", &pattern(10_000));
    for method in [SendMethod::Read, SendMethod::Sendfile] {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        let drain = std::thread::spawn(move || {
            let mut all = Vec::new();
            b.read_to_end(&mut all).unwrap();
            all.len()
        });
        let file = std::fs::File::open(&path).unwrap();
        let Err(err) = methods::send(method, &file, "shrinking", 50_000, &mut a, 4096) else {
            panic!("{method:?}: 10,000 bytes sent as 50,000");
        };
        drop(a);
        let msg = format!("{err:#}");
        assert!(
            msg.contains("shrinking") && msg.contains("did it shrink"),
            "{method:?}: {msg}"
        );
        assert_eq!(drain.join().unwrap(), 10_000, "{method:?}");
    }
    let mut out = Vec::new();
    let file = std::fs::File::open(&path).unwrap();
    let Err(err) = methods::gather(&file, "shrinking", 20_000, &mut out) else {
        panic!("10,000 bytes gathered as 20,000");
    };
    assert!(format!("{err:#}").contains("did it shrink"), "{err:#}");
    assert!(out.is_empty(), "nothing half-gathered stays in the frames");
}

/// A file cut short by another thread while `send` reads it: either it went out whole
/// before the cut (and arrived equal to what was announced), or the sender names it and
/// asks whether it shrank; the receiver keeps nothing partial and goes on serving.
#[test]
fn a_file_that_shrinks_while_it_is_sent_is_named_and_nothing_partial_stays() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &["--no-sync"]);
    let big = src.path().join("big");
    let len = 64u64 << 20;
    for method in ["read", "sendfile"] {
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(len).unwrap();
        let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
            .args(["send", &r.addr])
            .arg(&big)
            .args(["--method", method, "--buffer", "64k"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(30));
        f.set_len(4096).unwrap();
        let out = child.wait_with_output().unwrap();
        let copy = dest.path().join("big");
        if out.status.success() {
            assert_eq!(std::fs::metadata(&copy).unwrap().len(), len, "{method}");
            std::fs::remove_file(&copy).unwrap();
        } else {
            let line = one_line_stderr(&out);
            // sendfile digests through a mapping: a cut under it is a SIGBUS, named too.
            assert!(
                line.contains("big")
                    && (line.contains("did it shrink") || line.contains("file shrank")),
                "{method}: {line}"
            );
            assert!(!copy.exists(), "{method}: a partial copy stayed");
        }
    }
    assert_no_leftovers(dest.path());
    let extra = file_with(src.path(), "after", &pattern(5000));
    r.send_ok(&[&extra], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        std::fs::read(dest.path().join("after")).unwrap(),
        pattern(5000)
    );
}

/// A peer that sends the magic and then nothing: the receiver gives up after its
/// `--timeout`, closes the connection, says so, and serves the next sender.
#[test]
fn a_silent_sender_times_out_and_the_next_connection_is_served() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &["--timeout", "1s"]);
    let mut silent = UnixStream::connect(&socket).unwrap();
    silent.write_all(proto::MAGIC).unwrap();
    // Bounded so a receiver that never gives up fails the test instead of hanging it.
    silent
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut rest = Vec::new();
    let closed = silent.read_to_end(&mut rest);
    assert!(
        closed.is_ok(),
        "the receiver never closed the silent connection: {closed:?}"
    );
    let file = file_with(src.path(), "next", &pattern(3000));
    r.send_ok(&[&file], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("greeting") && stderr.contains("timed out"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dest.path().join("next")).unwrap(),
        pattern(3000)
    );
    assert_no_leftovers(dest.path());
}

/// A peer that trickles its greeting a byte at a time, each byte well within the socket's
/// timeout, is dropped once the whole greeting has taken longer than the timeout: one
/// such peer cannot hold the receiver (it serves one connection at a time).
#[test]
fn a_peer_trickling_its_greeting_is_dropped_and_the_next_connection_is_served() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &["--timeout", "1s"]);
    let mut slow = UnixStream::connect(&socket).unwrap();
    let started = std::time::Instant::now();
    let mut dropped = false;
    // The greeting is 16 bytes; 400 ms a byte would take 6 s.
    for &b in proto::MAGIC.iter().cycle().take(16) {
        if slow.write_all(&[b]).is_err() {
            dropped = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(400));
        if started.elapsed() > Duration::from_secs(30) {
            break;
        }
    }
    if !dropped {
        // Nothing more to write: the receiver must close within its deadline.
        slow.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut rest = Vec::new();
        assert!(slow.read_to_end(&mut rest).is_ok(), "never closed");
    }
    let file = file_with(src.path(), "after", &pattern(100));
    r.send_ok(&[&file], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(
        stderr.contains("did not complete its greeting within 1.000 s"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(dest.path().join("after")).unwrap(),
        pattern(100)
    );
}

/// A small file whose name exists is refused once its bytes arrived (publishing never
/// replaces), in the same words as a large one; `--force` replaces it (temporary name,
/// rename). Under a umask of 0, modes arrive exactly (either way of creating the file).
#[test]
fn an_existing_small_name_is_refused_force_replaces_it_and_modes_arrive_under_a_zero_umask() {
    use std::os::unix::fs::PermissionsExt;
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let mode_of = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let set_mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    std::fs::write(dest.path().join("small"), b"old").unwrap();
    let small = file_with(src.path(), "small", &pattern(5000));
    set_mode(&small, 0o666);
    let fresh = file_with(src.path(), "fresh", &pattern(10));
    set_mode(&fresh, 0o607);
    let socket = sock_dir.path().join("a");
    let r = Receiver::start_with(dest.path(), &socket, &[], |cmd| umask(cmd, 0));
    r.send_ok(&[&fresh], &[]);
    let out = r.send(&[&small], &[]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("small") && line.contains("exists (3 B") && line.contains("--force"),
        "{line}"
    );
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read(dest.path().join("small")).unwrap(), b"old");
    assert_eq!(mode_of(&dest.path().join("fresh")), 0o607);
    let socket = sock_dir.path().join("b");
    let r = Receiver::start_with(dest.path(), &socket, &["--force"], |cmd| umask(cmd, 0));
    r.send_ok(&[&small], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        std::fs::read(dest.path().join("small")).unwrap(),
        pattern(5000)
    );
    assert_eq!(mode_of(&dest.path().join("small")), 0o666);
    assert_no_leftovers(dest.path());
}

/// Runs `cmd` under the umask `mask`.
fn umask(cmd: &mut Command, mask: libc::mode_t) {
    use std::os::unix::process::CommandExt;
    // SAFETY: umask is async-signal-safe and changes only the child's own mask.
    unsafe {
        cmd.pre_exec(move || {
            libc::umask(mask);
            Ok(())
        });
    }
}

/// The receiver's first line on stderr (where it listens) ends with its newline: a warning
/// that follows starts a line of its own.
#[test]
fn the_receivers_startup_line_is_a_line_of_its_own() {
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &[]);
    let mut s = UnixStream::connect(&socket).unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    drop(s);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert!(lines[0].ends_with("Ctrl-C stops"), "{stderr}");
    // The next line is its own: the failed session's one `error:` line, or the
    // interruption's warning where Ctrl-C came before the session was read.
    assert!(
        lines[1].starts_with("error: ") || lines[1].starts_with("warning: interrupted"),
        "{stderr}"
    );
    assert!(!stderr.contains("warning: error:"), "{stderr}");
}

/// `--timeout 0` would set no timeout at all (a silent peer waited for forever): refused.
#[test]
fn a_zero_timeout_is_refused_by_both_ends() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let file = file_with(dir.path(), "f", b"x");
    let f = file.to_str().unwrap();
    for args in [
        // (An address that cannot be bound: a receiver that took the 0 stops there.)
        vec![
            "receive",
            d,
            "--listen",
            "unix:/nonexistent/s",
            "--timeout",
            "0",
        ],
        vec!["send", "127.0.0.1:1", f, "--timeout", "0s"],
    ] {
        let line = usage_error(&args);
        assert!(line.contains("--timeout"), "{args:?}: {line}");
    }
}

/// DIR may be a symlink to a directory (links are refused only inside it); a DIR that is
/// gone when a sender connects is a refusal the sender reads, naming DIR, and the receiver
/// goes on serving.
#[test]
fn a_receiver_dir_that_is_a_symlink_works_and_one_removed_is_refused_in_words() {
    let root = tempfile::tempdir().unwrap();
    let real = root.path().join("real");
    std::fs::create_dir(&real).unwrap();
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let file = file_with(root.path(), "f", &pattern(100));
    let r = Receiver::start(&link, &root.path().join("s1"), &[]);
    r.send_ok(&[&file], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read(real.join("f")).unwrap(), pattern(100));
    let gone = root.path().join("gone");
    std::fs::create_dir(&gone).unwrap();
    let r = Receiver::start(&gone, &root.path().join("s2"), &[]);
    std::fs::remove_dir(&gone).unwrap();
    let out = r.send(&[&file], &[]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("gone") && line.contains("No such file"),
        "{line}"
    );
    std::fs::create_dir(&gone).unwrap();
    r.send_ok(&[&file], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read(gone.join("f")).unwrap(), pattern(100));
}

/// Two paths that would arrive under one name (the same file twice, or two files of one
/// name in different directories) are refused before anything is sent: the receiver would
/// keep the first and refuse the second half way.
#[test]
fn two_files_under_one_name_are_refused_before_anything_is_sent() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    for d in ["one", "two"] {
        std::fs::create_dir(src.path().join(d)).unwrap();
        file_with(&src.path().join(d), "f", d.as_bytes());
    }
    let (one, two) = (src.path().join("one/f"), src.path().join("two/f"));
    let r = Receiver::start(dest.path(), &src.path().join("s"), &[]);
    for pair in [[&one, &one], [&one, &two]] {
        let out = r.send(&[pair[0].as_path(), pair[1].as_path()], &[]);
        assert_eq!(out.status.code(), Some(2));
        let line = one_line_stderr(&out);
        assert!(
            line.contains(&*pair[1].to_string_lossy()) && line.contains("\"f\""),
            "{line}"
        );
    }
    let out = ioscope()
        .arg("transfer")
        .args([&one, &two])
        .arg("--to")
        .arg(dest.path())
        .args(["--repeat", "1", "--no-sync"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    one_line_stderr(&out);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

/// A file that reports size 0 but has content (/proc) arrives with its content, not empty.
#[test]
fn a_proc_file_that_reports_no_size_arrives_with_its_content() {
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let r = Receiver::start(dest.path(), &sock_dir.path().join("s"), &[]);
    for method in ["read", "mmap", "sendfile"] {
        r.send_ok(&[Path::new("/proc/self/status")], &["--method", method]);
        let copy = dest.path().join("status");
        let text = std::fs::read_to_string(&copy).unwrap();
        assert!(text.starts_with("Name:"), "{method}: {text:?}");
        std::fs::remove_file(&copy).unwrap();
    }
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
}

/// A sender that goes silent inside a file: the refusal names the file and how many of its
/// bytes arrived, for every receiving method; nothing partial stays.
#[test]
fn a_sender_silent_inside_a_file_is_named_with_the_bytes_that_arrived() {
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    for method in ["write", "mmap", "splice"] {
        let socket = sock_dir.path().join(method);
        let r = Receiver::start(
            dest.path(),
            &socket,
            &["--timeout", "1s", "--method", method],
        );
        let mut s = UnixStream::connect(&socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        proto::write_hello(&mut s, b"").unwrap();
        let mut wire = Vec::new();
        proto::put_header(
            &mut wire,
            &Header {
                name: b"stalled".to_vec(),
                size: 2 << 20,
                mode: 0o644,
            },
        );
        wire.extend_from_slice(&[5u8; 1000]);
        s.write_all(&wire).unwrap();
        assert_eq!(proto::read_reply(&mut s).unwrap(), Ok(()));
        let refusal = proto::read_reply(&mut s).unwrap();
        assert!(
            matches!(&refusal, Err(m) if m.contains("stalled")
                && m.contains("1000 of 2097152 bytes") && m.contains("timed out")),
            "{method}: {refusal:?}"
        );
        let (code, _, stderr) = r.stop();
        assert_eq!(code, Some(130), "{stderr}");
        assert!(stderr.contains("stalled"), "{method}: {stderr}");
        assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
    }
}

/// Ctrl-C stops a sender blocked on a receiver that stopped reading, inside a file, for
/// every method (exit 130), instead of waiting for the socket's timeout.
#[test]
fn ctrl_c_stops_a_sender_blocked_inside_a_file() {
    use std::os::unix::net::UnixListener;
    let src = tempfile::tempdir().unwrap();
    let big = src.path().join("big");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(32 << 20)
        .unwrap();
    for method in ["read", "mmap", "sendfile"] {
        let socket = src.path().join(format!("s-{method}"));
        let listener = UnixListener::bind(&socket).unwrap();
        let (began, sending) = std::sync::mpsc::channel();
        let (done, finished) = std::sync::mpsc::channel::<()>();
        // A receiver that says yes to the greeting, takes the first bytes, then stops reading.
        let holder = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut hello = [0u8; 16];
            c.read_exact(&mut hello).unwrap();
            proto::write_reply(&mut c, &Ok(())).unwrap();
            let mut first = vec![0u8; 64 << 10];
            c.read_exact(&mut first).unwrap();
            began.send(()).unwrap();
            let _ = finished.recv_timeout(Duration::from_secs(30));
        });
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
            .args(["send", &format!("unix:{}", socket.display())])
            .arg(&big)
            .args(["--method", method, "--timeout", "60s"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        sending.recv_timeout(Duration::from_secs(20)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break Some(s);
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                child.wait().unwrap();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        done.send(()).unwrap();
        holder.join().unwrap();
        assert_eq!(
            status.and_then(|s| s.code()),
            Some(130),
            "{method}: Ctrl-C did not stop the sender"
        );
    }
}

/// The receiver removes its Unix socket when it stops, and only its own: a file put at
/// that path meanwhile (the socket removed by someone else) is left alone.
#[test]
fn a_stopping_receiver_removes_only_its_own_socket() {
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let own = sock_dir.path().join("own");
    let r = Receiver::start(dest.path(), &own, &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(!own.exists(), "its socket is gone");
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &[]);
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, b"precious").unwrap();
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read(&socket).unwrap(), b"precious");
}

/// Names and messages from the peer are printed with their control characters escaped:
/// a hostile sender cannot forge lines or send terminal escapes into the receiver's log,
/// nor a hostile receiver into the sender's error.
#[test]
fn control_characters_from_the_peer_are_never_printed_raw() {
    use std::os::unix::net::UnixListener;
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &[]);
    let replies = hostile(
        &socket,
        b"",
        &frame(b"evil\x1b[2J\nwarning: forged", b"abc", 3, false),
    );
    assert!(matches!(replies.get(1), Some(Err(_))), "{replies:?}");
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
    assert_eq!(stderr.matches("forged").count(), 1, "{stderr}");
    assert!(!stderr.contains("\nwarning: forged"), "{stderr}");
    // A receiver that refuses with escapes in its message.
    let fake = sock_dir.path().join("fake");
    let listener = UnixListener::bind(&fake).unwrap();
    let holder = std::thread::spawn(move || {
        let (mut c, _) = listener.accept().unwrap();
        let mut hello = [0u8; 16];
        c.read_exact(&mut hello).unwrap();
        proto::write_reply(&mut c, &Err("no\x1b]0;owned\x07\nerror: forged".into())).unwrap();
    });
    let file = file_with(sock_dir.path(), "f", b"x");
    let out = ioscope()
        .args(["send", &format!("unix:{}", fake.display())])
        .arg(&file)
        .output()
        .unwrap();
    holder.join().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(!line.contains('\x1b') && !line.contains('\x07'), "{line:?}");
}

/// Directories made for a file that is then refused are removed with it (those that hold
/// nothing else): a refused sender leaves no tree of empty directories behind.
#[test]
fn directories_made_for_a_refused_file_are_removed_with_it() {
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    std::fs::create_dir(dest.path().join("mine")).unwrap();
    let r = Receiver::start(dest.path(), &socket, &[]);
    let frames = [
        frame(b"keep/f", b"kept", 4, true),
        frame(b"keep/new1/new2/g", b"bad", 3, false),
    ]
    .concat();
    let replies = hostile(&socket, b"", &frames);
    assert_eq!(replies.get(1), Some(&Ok(())), "{replies:?}");
    assert!(matches!(replies.get(2), Some(Err(_))), "{replies:?}");
    for (name, why) in [
        (&b"a/b/c/d"[..], "checksum mismatch"),
        (b"mine/x/y", "checksum mismatch"),
    ] {
        let replies = hostile(&socket, b"", &frame(name, b"bad", 3, false));
        assert!(
            matches!(replies.get(1), Some(Err(m)) if m.contains(why)),
            "{replies:?}"
        );
    }
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    let mut dirs: Vec<_> = walkdirs(dest.path());
    dirs.sort();
    assert_eq!(dirs, ["keep", "mine"]);
    assert_eq!(std::fs::read(dest.path().join("keep/f")).unwrap(), b"kept");
}

/// Every directory under `dir`, relative.
fn walkdirs(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
                todo.push(p);
            }
        }
    }
    out
}

/// A file that grows while it is sent arrives with the bytes it held when sending began
/// (what its header announced, verified), and the sender says it grew. The receiver here
/// is the test: it stops reading mid-file, so the sender is blocked inside the file when
/// the file grows, whatever the method.
#[test]
fn a_file_that_grows_while_it_is_sent_arrives_as_announced_and_the_sender_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("grows");
    let len = 16usize << 20;
    for method in ["read", "mmap", "sendfile"] {
        std::fs::write(&big, pattern(len)).unwrap();
        let socket = dir.path().join(format!("s-{method}"));
        let listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        let child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
            .args(["send", &format!("unix:{}", socket.display())])
            .arg(&big)
            .args(["--method", method, "--buffer", "64k"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        proto::read_hello(&mut s).unwrap();
        proto::write_reply(&mut s, &Ok(())).unwrap();
        let header = proto::read_header(&mut s).unwrap().unwrap();
        assert_eq!(header.size, len as u64);
        let mut body = vec![0u8; len];
        s.read_exact(&mut body[..1 << 20]).unwrap();
        // The sender is blocked on the full socket inside the file: it grows now.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&big)
            .unwrap()
            .write_all(&[7u8; 4096])
            .unwrap();
        s.read_exact(&mut body[1 << 20..]).unwrap();
        let trailer = proto::read_trailer(&mut s).unwrap();
        let mut d = Digest::new();
        d.update(&body);
        assert_eq!(
            trailer,
            d.trailer(),
            "{method}: the trailer covers what was sent"
        );
        assert_eq!(body, pattern(len), "{method}");
        proto::write_reply(&mut s, &Ok(())).unwrap();
        assert!(proto::read_header(&mut s).unwrap().is_none());
        proto::write_reply(&mut s, &Ok(())).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{method}: {stderr}");
        assert!(
            stderr.contains("send grows: it grew while it was sent"),
            "{method}: {stderr}"
        );
    }
}

/// What a sent directory holds that is neither a file nor a directory is left out, and the
/// sender says so (it used to be skipped without a word).
#[test]
fn special_files_in_a_sent_directory_are_left_out_with_a_warning() {
    let src = tempfile::tempdir().unwrap();
    let to = tempfile::tempdir().unwrap();
    let tree = src.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("plain"), b"data").unwrap();
    std::os::unix::fs::symlink("plain", tree.join("link")).unwrap();
    let fifo = std::ffi::CString::new(tree.join("pipe").to_str().unwrap()).unwrap();
    // SAFETY: a valid path string.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let out = ioscope()
        .arg("transfer")
        .arg(&tree)
        .arg("--to")
        .arg(to.path())
        .args(["--repeat", "1", "--no-sync", "--json"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // With --json the warning is in the document, as every result's warnings are.
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let left_out = doc["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "left_out")
        .unwrap_or_else(|| panic!("a left_out warning: {doc}"));
    assert_eq!(left_out["count"], 2);
    assert!(
        left_out["first"].as_str().unwrap().ends_with("tree/link"),
        "the first, by name: {left_out}"
    );
    // Without it, on stderr in words.
    let out = ioscope()
        .arg("transfer")
        .arg(&tree)
        .arg("--to")
        .arg(to.path())
        .args(["--repeat", "1", "--no-sync"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("left out 2 entries that are neither a regular file nor a directory"),
        "{stderr}"
    );
    assert!(stderr.contains("tree/link"), "the first, by name: {stderr}");
}

/// Preallocating a large file can fail (no room, a file size limit): the file is refused
/// with the reason, nothing stays, and a smaller file on the next connection arrives. The
/// receiver runs under RLIMIT_FSIZE of 1 MiB, SIGXFSZ as its caller left it (ioscope
/// itself makes the call fail with EFBIG instead of being killed). Its log says the failed
/// session in one `error:` line (never "warning: error:").
#[test]
fn a_file_that_cannot_be_preallocated_is_refused_and_the_receiver_goes_on() {
    use std::os::unix::process::CommandExt;
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let socket = src.path().join("s");
    let r = Receiver::start_with(dest.path(), &socket, &["--method", "splice"], |cmd| {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                let limit = libc::rlimit {
                    rlim_cur: 1 << 20,
                    rlim_max: 1 << 20,
                };
                libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
                Ok(())
            });
        }
    });
    let big = file_with(src.path(), "big", &pattern(3 << 20));
    let out = r.send(&[&big], &[]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(line.contains("big") && line.contains("fallocate"), "{line}");
    let small = file_with(src.path(), "small", &pattern(5000));
    r.send_ok(&[&small], &[]);
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(
        std::fs::read(dest.path().join("small")).unwrap(),
        pattern(5000)
    );
    assert!(!dest.path().join("big").exists());
    assert_no_leftovers(dest.path());
    assert!(!stderr.contains("warning: error:"), "{stderr}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("error: ") && l.contains("big") && l.contains("fallocate")),
        "{stderr}"
    );
}

/// Connects to `socket`, trying again while it is bound but not yet listening.
fn connect(socket: &Path) -> UnixStream {
    let started = Instant::now();
    loop {
        match UnixStream::connect(socket) {
            Ok(s) => return s,
            Err(e) if started.elapsed() > Duration::from_secs(20) => panic!("connect: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Files sent with every mode bit set arrive with the receiver's umask applied and never
/// setuid, setgid or sticky; the directories made for them honour the umask too. With
/// `--keep-mode` the sender's bits arrive whole.
#[test]
fn received_files_take_the_receivers_umask_and_no_special_bits_unless_keep_mode() {
    use std::os::unix::fs::PermissionsExt;
    let src = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let mode_of = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    let set_mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    };
    let open = file_with(src.path(), "open", &pattern(10));
    set_mode(&open, 0o777);
    let special = file_with(src.path(), "special", &pattern(10));
    set_mode(&special, 0o6755);
    let tree = src.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let inner = file_with(&tree, "inner", &pattern(10));
    set_mode(&inner, 0o666);
    set_mode(&tree, 0o777);
    if mode_of(&special) != 0o6755 {
        eprintln!("skipped: this file system does not keep setuid and setgid bits");
        return;
    }
    for (name, extra, want) in [
        ("umask", &[][..], [0o700, 0o700, 0o600, 0o700]),
        ("keep", &["--keep-mode"][..], [0o777, 0o6755, 0o666, 0o700]),
    ] {
        let dest = tempfile::tempdir().unwrap();
        let socket = sock_dir.path().join(name);
        let r = Receiver::start_with(dest.path(), &socket, extra, |cmd| umask(cmd, 0o077));
        r.send_ok(&[&open, &special, &tree], &[]);
        let (code, _, stderr) = r.stop();
        assert_eq!(code, Some(130), "{stderr}");
        let got = [
            mode_of(&dest.path().join("open")),
            mode_of(&dest.path().join("special")),
            mode_of(&dest.path().join("tree/inner")),
            mode_of(&dest.path().join("tree")),
        ];
        let octal = |m: [u32; 4]| m.map(|m| format!("{m:o}"));
        assert_eq!(
            octal(got),
            octal(want),
            "{name}: open, special, tree/inner, tree"
        );
    }
}

/// A peer that completes its greeting and then trickles a byte just inside the receiver's
/// timeout (two such peers, even) does not keep a real sender from being served, and is
/// dropped once it has moved too little for the time waited for it, with a refusal that
/// says why.
#[test]
fn trickling_peers_do_not_hold_the_receiver_and_are_dropped_as_too_slow() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &["--timeout", "2s"]);
    let trickle = |socket: PathBuf| {
        std::thread::spawn(move || -> Option<String> {
            let mut s = connect(&socket);
            s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
            proto::write_hello(&mut s, b"").unwrap();
            assert_eq!(proto::read_reply(&mut s).unwrap(), Ok(()));
            let done = Arc::new(AtomicBool::new(false));
            let mut writer = s.try_clone().unwrap();
            let stop = Arc::clone(&done);
            let bytes = std::thread::spawn(move || {
                // A header, one byte every 1.5 s (the timeout is 2 s), for at most 60 s.
                let started = Instant::now();
                while !stop.load(Ordering::SeqCst) && started.elapsed() < Duration::from_secs(60) {
                    if writer.write_all(&[1]).is_err() {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(1500));
                }
            });
            let refusal = proto::read_reply(&mut s).ok().and_then(Result::err);
            done.store(true, Ordering::SeqCst);
            bytes.join().unwrap();
            refusal
        })
    };
    let slow = [trickle(socket.clone()), trickle(socket.clone())];
    std::thread::sleep(Duration::from_millis(500));
    let file = file_with(src.path(), "real", &pattern(100_000));
    let started = Instant::now();
    let out = r.send(&[&file], &["--timeout", "10s"]);
    assert!(
        out.status.success(),
        "a real sender was not served beside the slow peers: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "finished within 30 s"
    );
    for t in slow {
        let refusal = t.join().unwrap();
        assert!(
            refusal.as_deref().is_some_and(|m| m.contains("too slow")),
            "{refusal:?}"
        );
    }
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("too slow"), "{stderr}");
    assert_eq!(
        std::fs::read(dest.path().join("real")).unwrap(),
        pattern(100_000)
    );
}

/// One sender more than `--max-peers` is told the receiver is busy (and the sender says
/// so, naming the address) instead of waiting unseen; once a connection is free, it is
/// served.
#[test]
fn one_sender_more_than_max_peers_is_told_the_receiver_is_busy() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    let r = Receiver::start(
        dest.path(),
        &socket,
        &["--max-peers", "1", "--timeout", "2s"],
    );
    // A silent peer holds the one connection until it times out.
    let mut silent = connect(&socket);
    proto::write_hello(&mut silent, b"").unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    assert_eq!(proto::read_reply(&mut silent).unwrap(), Ok(()));
    let file = file_with(src.path(), "f", &pattern(1000));
    let out = r.send(&[&file], &[]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(line.contains("busy") && line.contains(&r.addr), "{line}");
    let mut rest = Vec::new();
    assert!(silent.read_to_end(&mut rest).is_ok(), "never dropped");
    // Its thread may still be finishing: try again for a while.
    let started = Instant::now();
    loop {
        let out = r.send(&[&file], &[]);
        if out.status.success() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read(dest.path().join("f")).unwrap(), pattern(1000));
}

/// A token or a name longer than the protocol allows gets a refusal that says so (it used
/// to be dropped without a word), and `send` prints it.
#[test]
fn an_over_long_token_or_name_is_refused_in_words() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let socket = src.path().join("s");
    let r = Receiver::start(dest.path(), &socket, &[]);
    let replies = hostile(&socket, &[b'x'; 300], &[]);
    assert!(
        matches!(replies.first(), Some(Err(m)) if m.contains("longer than 256")),
        "{replies:?}"
    );
    let long = vec![b'n'; 5000];
    let replies = hostile(&socket, b"", &frame(&long, b"x", 1, true));
    assert_eq!(replies.first(), Some(&Ok(())), "{replies:?}");
    assert!(
        matches!(replies.get(1), Some(Err(m)) if m.contains("longer than 4096")),
        "{replies:?}"
    );
    let file = file_with(src.path(), "f", b"x");
    let out = r.send(&[&file], &["--token", &"t".repeat(300)]);
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(
        line.contains("longer than 256") && line.contains(&r.addr),
        "{line}"
    );
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    assert_eq!(std::fs::read_dir(dest.path()).unwrap().count(), 0);
}

/// Every error of `send` names the receiver's address: a refused file, a missing file, a
/// wrong token, a receiver that never replies.
#[test]
fn every_sender_error_names_the_receivers_address() {
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let socket = src.path().join("s");
    let file = file_with(src.path(), "f", b"x");
    std::fs::write(dest.path().join("f"), b"old").unwrap();
    let r = Receiver::start(dest.path(), &socket, &["--token", "sesame"]);
    for (args, needle) in [
        (vec![file.to_str().unwrap(), "--token", "sesame"], "--force"),
        (
            vec!["/nonexistent/file", "--token", "sesame"],
            "/nonexistent/file",
        ),
        (
            vec![file.to_str().unwrap(), "--token", "wrong"],
            "wrong token",
        ),
    ] {
        let out = r.send(&[], &args);
        assert_ne!(out.status.code(), Some(0), "{args:?}");
        let line = one_line_stderr(&out);
        assert!(line.contains(needle) && line.contains(&r.addr), "{line}");
    }
    let (code, _, stderr) = r.stop();
    assert_eq!(code, Some(130), "{stderr}");
    // A receiver that accepts and never replies.
    let mute = src.path().join("mute");
    let listener = std::os::unix::net::UnixListener::bind(&mute).unwrap();
    let held = std::thread::spawn(move || listener.accept().map(|(s, _)| s));
    let addr = format!("unix:{}", mute.display());
    let out = ioscope()
        .args(["send", &addr])
        .arg(&file)
        .args(["--timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let line = one_line_stderr(&out);
    assert!(line.contains("timed out") && line.contains(&addr), "{line}");
    drop(held.join().unwrap());
}

/// A file cut short while `send --method mmap` is blocked writing it from its mapping is
/// named, with where it ends now (it used to say only "Bad address").
#[test]
fn a_source_that_shrinks_under_the_mmap_sender_is_named_with_where_it_ends() {
    use ioscope::transfer::methods::{self, SendMethod};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("shrinking");
    let len = 8u64 << 20;
    std::fs::File::create(&path).unwrap().set_len(len).unwrap();
    let (mut a, mut b) = UnixStream::pair().unwrap();
    let cut = path.clone();
    let peer = std::thread::spawn(move || {
        // The sender fills the socket and blocks inside its first write; then the cut.
        std::thread::sleep(Duration::from_millis(300));
        std::fs::OpenOptions::new()
            .write(true)
            .open(&cut)
            .unwrap()
            .set_len(4096)
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let mut all = Vec::new();
        let _ = b.read_to_end(&mut all);
    });
    let file = std::fs::File::open(&path).unwrap();
    let Err(err) = methods::send(SendMethod::Mmap, &file, "shrinking", len, &mut a, 4096) else {
        panic!("8 MiB sent from a file cut to 4 KiB");
    };
    drop(a);
    peer.join().unwrap();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("shrinking") && msg.contains("did it shrink") && msg.contains("byte 4096"),
        "{msg}"
    );
}

/// `::ffff:127.0.0.1` is loopback written as IPv6: a receiver listens there without
/// `--allow-remote`, and a sender reaches it.
#[test]
fn an_ipv4_mapped_loopback_address_is_loopback() {
    use std::io::BufRead;
    let src = tempfile::tempdir().unwrap();
    let dest = tempfile::tempdir().unwrap();
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("ioscope"))
        .arg("receive")
        .arg(dest.path())
        .args([
            "--listen",
            "[::ffff:127.0.0.1]:0",
            "--once",
            "--min-free",
            "0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    if first.contains("Address family not supported") || first.contains("Cannot assign") {
        eprintln!("skipped: no IPv6 here ({})", first.trim());
        let _ = child.wait();
        return;
    }
    assert!(first.starts_with("receiving into"), "{first}");
    let addr = first
        .split(" on ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .unwrap()
        .to_string();
    let file = file_with(src.path(), "f", &pattern(100));
    let out = ioscope().args(["send", &addr]).arg(&file).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(child.wait().unwrap().success());
    assert_eq!(std::fs::read(dest.path().join("f")).unwrap(), pattern(100));
}

/// `transfer --unix` into a directory whose path is too long for a socket puts the socket
/// in a short private directory instead, and removes it.
#[test]
fn transfer_over_unix_works_from_a_directory_too_deep_for_a_socket_path() {
    let root = tempfile::tempdir().unwrap();
    let to = root.path().join("a".repeat(60)).join("b".repeat(60));
    std::fs::create_dir_all(&to).unwrap();
    let out = ioscope()
        .arg("transfer")
        .arg("--to")
        .arg(&to)
        .args([
            "--unix",
            "--small",
            "3",
            "--small-size",
            "1k",
            "--large",
            "0",
        ])
        .args([
            "--repeat",
            "1",
            "--senders",
            "read",
            "--receivers",
            "write,mmap",
        ])
        .args(["--no-sync", "--min-free", "0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_dir(&to).unwrap().count(),
        0,
        "scratch removed"
    );
}

/// A shell script run inside a private mount namespace with a small tmpfs at `mnt` (the
/// arguments after it are `$1`...), or `None` (skipped) where that cannot be made.
fn in_tmpfs(size: &str, mnt: &Path, script: &str, args: &[&std::ffi::OsStr]) -> Option<String> {
    let mut cmd = in_small_tmpfs(size, mnt, Path::new("sh"))?;
    cmd.args(["-c", script, "sh"]).args(args);
    let out = cmd.output().unwrap();
    Some(format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ))
}

/// The value after `key=` on a line of `text`.
fn value_of(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}=")))
        .unwrap_or_else(|| panic!("no {key}= in {text}"))
        .trim()
        .parse()
        .unwrap()
}

/// Starts a receiver (`$1`: the binary, `$2`: the socket, then its flags) into `$MNT/in`,
/// runs `ioscope send` of `$3`, prints the sender's exit code, the space and inodes left,
/// then stops the receiver and prints its exit code and what stayed in `$MNT/in`.
const FILL_SCRIPT: &str = r#"
bin=$1; sock=$2; src=$3; mnt=$4; shift 4
mkdir "$mnt/in"
"$bin" receive "$mnt/in" --listen "unix:$sock" --timeout 10s "$@" 2>"$mnt/../receiver.err" &
pid=$!
while [ ! -S "$sock" ]; do sleep 0.05; done
"$bin" send "unix:$sock" "$src" >/dev/null 2>"$mnt/../sender.err"
echo "sender=$?"
echo "avail=$(( $(stat -f -c '%a' "$mnt") * $(stat -f -c '%S' "$mnt") ))"
echo "ifree=$(stat -f -c '%d' "$mnt")"
echo "inodes=$(stat -f -c '%c' "$mnt")"
kill -INT $pid; wait $pid
echo "receiver=$?"
echo "partial=$(ls -A "$mnt/in" | grep -c '^\.ioscope')"
cat "$mnt/../sender.err"
"#;

/// Thousands of one-byte files stop at the free-space margin counted by blocks (each takes
/// a block and its metadata, not a byte) and at the margin's share of the inodes, with a
/// refusal; the `mmap` receiver then ends cleanly (it used to fill the file system and die
/// of SIGBUS, exit 135).
#[test]
fn many_tiny_files_stop_at_the_margin_by_blocks_and_by_inodes() {
    let src = tempfile::tempdir().unwrap();
    let tiny = src.path().join("tiny");
    std::fs::create_dir(&tiny).unwrap();
    for i in 0..2500 {
        std::fs::write(tiny.join(format!("f{i}")), b"x").unwrap();
    }
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    // 8 MiB keeping 4: room for about 500 files of two blocks, not 2,500; 64 MiB keeping
    // 4 with 1,000 inodes: a sixteenth of them must stay free.
    for (size, min_free) in [("8m", 4u64 << 20), ("64m,nr_inodes=1000", 4 << 20)] {
        let work = tempfile::tempdir().unwrap();
        let mnt = work.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        let sock = work.path().join("s");
        let args: Vec<&std::ffi::OsStr> = vec![
            bin.as_os_str(),
            sock.as_os_str(),
            tiny.as_os_str(),
            mnt.as_os_str(),
            "--method".as_ref(),
            "mmap".as_ref(),
            "--min-free".as_ref(),
            "4m".as_ref(),
            "--no-sync".as_ref(),
        ];
        let Some(out) = in_tmpfs(size, &mnt, FILL_SCRIPT, &args) else {
            return;
        };
        assert_eq!(value_of(&out, "receiver"), 130, "{size}: {out}");
        assert_eq!(value_of(&out, "sender"), 1, "{size}: {out}");
        assert_eq!(value_of(&out, "partial"), 0, "{size}: {out}");
        assert!(
            out.contains("not enough free"),
            "{size}: the sender says why: {out}"
        );
        let avail = value_of(&out, "avail");
        assert!(avail >= min_free, "{size}: {avail} bytes left: {out}");
        let (ifree, inodes) = (value_of(&out, "ifree"), value_of(&out, "inodes"));
        if size.contains("nr_inodes") {
            // 4 MiB of 64 MiB: a sixteenth of the inodes stays free.
            assert!(
                ifree >= inodes / 16,
                "{size}: {ifree} of {inodes} inodes left: {out}"
            );
        }
    }
}

/// A file system filled by another writer in the middle of a connection: the next file is
/// refused in words (the free space is read again for every file), and the `mmap`
/// receiver never meets the full disk through its mapping (it used to die of SIGBUS).
#[test]
fn a_file_system_filled_by_another_writer_mid_connection_is_a_refusal_not_a_crash() {
    let work = tempfile::tempdir().unwrap();
    let mnt = work.path().join("mnt");
    let ctl = work.path().join("ctl");
    std::fs::create_dir(&mnt).unwrap();
    std::fs::create_dir(&ctl).unwrap();
    let sock = work.path().join("s");
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let script = r#"
bin=$1; sock=$2; mnt=$3; ctl=$4
mkdir "$mnt/in"
"$bin" receive "$mnt/in" --listen "unix:$sock" --method mmap --min-free 0 --timeout 20s \
    --no-sync 2>"$ctl/receiver.err" &
pid=$!
i=0
while [ ! -e "$ctl/fill" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
head -c 100000000 /dev/zero > "$mnt/filler" 2>/dev/null
touch "$ctl/filled"
i=0
while [ ! -e "$ctl/stop" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
kill -INT $pid; wait $pid
echo "receiver=$?"
echo "left=$(ls -A "$mnt/in" | tr '\n' ' ')"
"#;
    let mut cmd = match in_small_tmpfs("8m", &mnt, Path::new("sh")) {
        Some(cmd) => cmd,
        None => return,
    };
    let child = cmd
        .args(["-c", script, "sh"])
        .args([&bin, &sock, &mnt, &ctl])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !sock.exists() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "never listened"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut s = connect(&sock);
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    proto::write_hello(&mut s, b"").unwrap();
    assert_eq!(proto::read_reply(&mut s).unwrap(), Ok(()));
    s.write_all(&frame(b"first", b"0123456789", 10, true))
        .unwrap();
    assert_eq!(proto::read_reply(&mut s).unwrap(), Ok(()));
    std::fs::write(ctl.join("fill"), b"").unwrap();
    while !ctl.join("filled").exists() {
        assert!(started.elapsed() < Duration::from_secs(40), "never filled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let body = pattern(5000);
    let _ = s.write_all(&frame(b"second", &body, 5000, true));
    let reply = proto::read_reply(&mut s);
    std::fs::write(ctl.join("stop"), b"").unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let err = std::fs::read_to_string(ctl.join("receiver.err")).unwrap_or_default();
    assert_eq!(value_of(&text, "receiver"), 130, "{text}{err}");
    assert!(
        matches!(&reply, Ok(Err(m)) if m.contains("second") && m.contains("not enough free space")),
        "{reply:?} {err}"
    );
    assert!(text.contains("left=first \n"), "{text}");
}

/// `transfer` counts its generated files by blocks: thousands of one-byte files that would
/// not fit twice (sources and copies) on a small file system are refused before anything
/// is written, and nothing is left behind (it used to fill the disk and die of SIGBUS).
#[test]
fn transfer_refuses_tiny_files_that_would_not_fit_by_blocks_and_leaves_nothing() {
    let work = tempfile::tempdir().unwrap();
    let mnt = work.path().join("mnt");
    std::fs::create_dir(&mnt).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let script = r#"
bin=$1; mnt=$2
"$bin" transfer --to "$mnt" --senders read --receivers mmap --small 3000 --small-size 1 \
    --large 0 --repeat 1 --no-sync --min-free 1m 2>"$mnt/../transfer.err" >/dev/null
echo "transfer=$?"
echo "left=$(ls -A "$mnt" | wc -l)"
cat "$mnt/../transfer.err"
"#;
    let Some(out) = in_tmpfs("20m", &mnt, script, &[bin.as_os_str(), mnt.as_os_str()]) else {
        return;
    };
    let code = value_of(&out, "transfer");
    assert!(code == 1 || code == 2, "{out}");
    assert_eq!(value_of(&out, "left"), 0, "{out}");
    assert!(out.contains("not enough free space"), "{out}");
}

#[test]
fn with_force_no_file_being_received_has_a_name_another_process_could_truncate() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = tempfile::tempdir().unwrap();
    let into = dir.path().join("in");
    std::fs::create_dir(&into).unwrap();
    let socket = dir.path().join("s");
    let src = dir.path().join("big");
    std::fs::write(&src, common::pattern(48 << 20)).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("ioscope");
    let mut receiver = Command::new(&bin)
        .arg("receive")
        .arg(&into)
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .args(["--force", "--method", "mmap", "--no-sync"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while !socket.exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // A hostile local process truncates whatever the receiver names in DIR while it works.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let seen = {
        let (into, stop) = (into.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                for e in std::fs::read_dir(&into).unwrap().flatten() {
                    if e.file_name()
                        .to_string_lossy()
                        .starts_with(".ioscope-recv-")
                    {
                        let _ = std::fs::OpenOptions::new()
                            .write(true)
                            .open(e.path())
                            .and_then(|f| f.set_len(0));
                    }
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        })
    };
    for _ in 0..3 {
        let out = Command::new(&bin)
            .arg("send")
            .arg(format!("unix:{}", socket.display()))
            .arg(&src)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    seen.join().unwrap();
    assert!(
        receiver.try_wait().unwrap().is_none(),
        "the receiver is still serving (it died of SIGBUS before)"
    );
    // SAFETY: kill only signals the receiver we started.
    unsafe { libc::kill(receiver.id() as i32, libc::SIGINT) };
    let status = receiver.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    // (Not its length: the name exists for an instant between linkat and the rename.)
    assert!(into.join("big").exists(), "the file was received");
}

/// `receive --listen unix:PATH` where a file already is: refused in one line naming the
/// path, the file left as it was, and no temporary socket left beside it (the socket is
/// bound under a temporary name and renamed into place only once it listens, without
/// replacing anything).
#[test]
fn a_socket_path_that_is_taken_is_refused_and_left_alone() {
    let dest = tempfile::tempdir().unwrap();
    let sock_dir = tempfile::tempdir().unwrap();
    let socket = sock_dir.path().join("s");
    std::fs::write(&socket, b"precious").unwrap();
    let out = ioscope()
        .arg("receive")
        .arg(dest.path())
        .arg("--listen")
        .arg(format!("unix:{}", socket.display()))
        .args(["--timeout", "1s"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_stderr(&out);
    assert!(line.contains(&socket.display().to_string()), "{line}");
    assert!(line.contains("in use"), "{line}");
    assert_eq!(std::fs::read(&socket).unwrap(), b"precious");
    let names: Vec<_> = std::fs::read_dir(sock_dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("s")], "{names:?}");
}
