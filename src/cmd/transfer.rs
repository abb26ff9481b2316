//! `send`, `receive`, and `transfer`: the experiment with both ends on this machine. For
//! every sender method × receiver method, the same files go over loopback TCP (or a Unix
//! socket) `repeat` times into a fresh directory; each side is timed from connection to the
//! final reply, every file is verified by the receiver against the sender's digest, and
//! the first copy of each pair is read back and compared with the sources. Without files,
//! the classic pair of workloads is made here: ten small files and one large one.

use crate::error::{Failure, input};
use crate::files::{self, Footprint};
use crate::measure::stats::{Summary, summarize};
use crate::options::{ReceiveOptions, SendOptions, TransferOptions};
pub use crate::results::transfer::{
    Cell, Listening, ReceiveObserver, SendReport, TransferReport, Workload,
};
use crate::transfer::methods::{RecvMethod, SendMethod};
use crate::transfer::proto::{Digest, Trailer};
use crate::transfer::{self, Endpoint, Listener, Outgoing, Receiving, Sending, Session};
use crate::units::MIB;
use crate::warning::Warning;
use crate::workload::data::{DataStream, fresh_seed};
use anyhow::{Context, Result};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long either end waits for a silent peer inside the experiment.
const TIMEOUT: Duration = Duration::from_secs(30);

/// A directory this run made, removed with everything in it on drop.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the experiment; `save` receives the report after every cell.
pub fn execute(
    options: &TransferOptions,
    save: &mut dyn FnMut(&TransferReport) -> Result<()>,
) -> Result<TransferReport> {
    let scratch = Scratch(
        options
            .to
            .join(format!(".ioscope-transfer-{}", std::process::id())),
    );
    std::fs::create_dir(&scratch.0).map_err(|e| {
        input(format!(
            "transfer: create {}: {}",
            crate::text::printable_path(&scratch.0),
            files::describe(&e)
        ))
    })?;
    let mut warnings = Vec::new();
    let workloads = if options.files.is_empty() {
        generate(options, &scratch.0)?
    } else {
        vec![(
            "the files given".to_string(),
            files_to_send(&options.files, &mut warnings).context("transfer")?,
        )]
    };
    let socket = if options.unix {
        Some(SocketPlace::new(&scratch.0)?)
    } else {
        None
    };
    let mut report = TransferReport {
        channel: if options.unix {
            "unix".into()
        } else {
            "tcp 127.0.0.1".into()
        },
        repeat: options.repeat,
        buffer: options.buffer as u64,
        synced: options.sync,
        workloads: Vec::new(),
        complete: false,
        warnings,
    };
    let block = files::space(&options.to)?.block;
    let copies_shown = format!("the copies in {}", crate::text::printable_path(&scratch.0));
    let mut run = || -> Result<()> {
        for (name, files) in &workloads {
            let sources = files
                .iter()
                .map(|f| digest_of(&f.path))
                .collect::<Result<Vec<_>>>()?;
            let bytes = sources.iter().map(|s| s.0).sum();
            // One copy at a time: each is removed before the next transfer.
            let copy = sources.iter().fold(Footprint::default(), |mut f, s| {
                f.add(s.0, block);
                f
            });
            transfer::ensure_room_in(&options.to, &copies_shown, copy, options.min_free)?;
            report.workloads.push(Workload {
                name: name.clone(),
                files: files.len(),
                bytes,
                cells: Vec::new(),
            });
            for &s in &options.senders {
                for &r in &options.receivers {
                    let cell = measure(
                        options,
                        &scratch.0,
                        socket.as_ref(),
                        files,
                        &sources,
                        bytes,
                        s,
                        r,
                    )?;
                    report
                        .workloads
                        .last_mut()
                        .expect("pushed above")
                        .cells
                        .push(cell);
                    save(&report)?;
                }
            }
        }
        Ok(())
    };
    match run() {
        Ok(()) => report.complete = true,
        Err(e)
            if matches!(e.downcast_ref::<Failure>(), Some(Failure::Interrupted))
                && !report.workloads.is_empty() => {}
        Err(e) => return Err(e),
    }
    report.warnings.extend(scattered(&report.workloads));
    save(&report)?;
    Ok(report)
}

/// A [`Warning::Scattered`] for the pairs whose transfers scatter beyond the one rule: each
/// pair's rate over its repeats, from the receiver's times (the headline's own clock).
fn scattered(workloads: &[Workload]) -> Option<Warning> {
    let rates: Vec<(String, Summary)> = workloads
        .iter()
        .flat_map(|w| {
            w.cells.iter().map(move |c| {
                (
                    format!("{} → {}, {}", c.sender.name(), c.receiver.name(), w.name),
                    c.rates(),
                )
            })
        })
        .collect();
    crate::warning::scattered(rates.iter().map(|(at, s)| (at.clone(), s)))
}

/// A private directory for the Unix socket, with a path short enough for one (a socket's
/// path holds at most 107 bytes): the scratch directory where it fits, else a new
/// directory (mkdtemp) in $XDG_RUNTIME_DIR or /tmp, removed on drop.
struct SocketPlace {
    socket: PathBuf,
    made: Option<PathBuf>,
}

impl SocketPlace {
    fn new(scratch: &Path) -> Result<Self> {
        let socket = scratch.join("socket");
        if socket.as_os_str().len() <= crate::transfer::UNIX_PATH_MAX {
            return Ok(Self { socket, made: None });
        }
        let base = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute() && d.as_os_str().len() < 64 && d.is_dir())
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let template = base.join("ioscope-XXXXXX");
        let mut bytes = template.into_os_string().into_vec();
        bytes.push(0);
        // SAFETY: a writable NUL-terminated template, which mkdtemp fills in place.
        let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if made.is_null() {
            return Err(std::io::Error::last_os_error()).with_context(|| {
                format!(
                    "transfer: {} is too long a path for a Unix socket, and a directory for one in {} could not be made",
                    crate::text::printable_path(scratch),
                    crate::text::printable_path(&base)
                )
            });
        }
        bytes.pop();
        let dir = PathBuf::from(std::ffi::OsString::from_vec(bytes));
        Ok(Self {
            socket: dir.join("socket"),
            made: Some(dir),
        })
    }
}

impl Drop for SocketPlace {
    fn drop(&mut self) {
        if let Some(dir) = &self.made {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The classic workloads: `small` files of `small_size` bytes, and one `large` file.
fn generate(options: &TransferOptions, scratch: &Path) -> Result<Vec<(String, Vec<Outgoing>)>> {
    // The sources and one copy of them, by blocks, inodes counted.
    let block = files::space(&options.to)?.block;
    let mut need = Footprint::default();
    for _ in 0..2 {
        for _ in 0..options.small {
            need.add(options.small_size, block);
        }
        if options.large > 0 {
            need.add(options.large, block);
        }
    }
    transfer::ensure_room_in(
        &options.to,
        &format!(
            "the files of transfer in {}",
            crate::text::printable_path(scratch)
        ),
        need,
        options.min_free,
    )?;
    let seed = fresh_seed();
    let make = |dir: &Path, name: &str, size: u64, at: u64| -> Result<Outgoing> {
        let path = dir.join(name);
        let mut data = DataStream::new(seed, at);
        let mut file = std::fs::File::create(&path)
            .with_context(|| format!("create {}", crate::text::printable_path(&path)))?;
        let mut buf = vec![0u8; (MIB as usize).min(size as usize)];
        let mut left = size;
        while left > 0 {
            let n = (left as usize).min(buf.len());
            data.fill(&mut buf[..n]);
            std::io::Write::write_all(&mut file, &buf[..n])
                .with_context(|| format!("write {}", crate::text::printable_path(&path)))?;
            left -= n as u64;
        }
        Ok(Outgoing {
            path,
            name: format!(
                "{}/{name}",
                dir.file_name().unwrap_or_default().to_string_lossy()
            )
            .into_bytes(),
        })
    };
    let small_dir = scratch.join("small");
    let large_dir = scratch.join("large");
    std::fs::create_dir(&small_dir).context("create the small files' directory")?;
    std::fs::create_dir(&large_dir).context("create the large file's directory")?;
    let mut workloads = Vec::new();
    let small = (0..options.small)
        .map(|i| {
            make(
                &small_dir,
                &format!("f{i:04}"),
                options.small_size,
                i as u64 * options.small_size,
            )
        })
        .collect::<Result<Vec<_>>>()?;
    if !small.is_empty() {
        workloads.push((
            format!(
                "{} small files of {}",
                options.small,
                crate::units::format_size(options.small_size)
            ),
            small,
        ));
    }
    if options.large > 0 {
        let large = vec![make(&large_dir, "large", options.large, 0)?];
        workloads.push((
            format!("one file of {}", crate::units::format_size(options.large)),
            large,
        ));
    }
    if workloads.is_empty() {
        return Err(input("transfer: nothing to send (--small 0 and --large 0)"));
    }
    Ok(workloads)
}

/// Size and digest of a file, read whole (which also warms it).
fn digest_of(path: &Path) -> Result<(u64, Trailer)> {
    let mut f = std::fs::File::open(path).map_err(|e| {
        input(format!(
            "read {}: {}",
            crate::text::printable_path(path),
            files::describe(&e)
        ))
    })?;
    let mut d = Digest::new();
    let mut buf = vec![0u8; MIB as usize];
    let mut n = 0u64;
    loop {
        let got = std::io::Read::read(&mut f, &mut buf)
            .with_context(|| format!("read {}", crate::text::printable_path(path)))?;
        if got == 0 {
            break;
        }
        d.update(&buf[..got]);
        n += got as u64;
    }
    Ok((n, d.trailer()))
}

/// `repeat` transfers of `files` with sender `s` and receiver `r`, each into a fresh
/// directory; the first copy is read back and compared with the sources.
#[allow(clippy::too_many_arguments)]
fn measure(
    options: &TransferOptions,
    scratch: &Path,
    socket: Option<&SocketPlace>,
    files: &[Outgoing],
    sources: &[(u64, Trailer)],
    bytes: u64,
    s: SendMethod,
    r: RecvMethod,
) -> Result<Cell> {
    let (mut sent, mut received) = (Vec::new(), Vec::new());
    let mut verified = true;
    for i in 0..options.repeat {
        crate::interrupt::check()?;
        let dest = scratch.join(format!("recv-{}-{}-{i}", s.name(), r.name()));
        std::fs::create_dir(&dest)
            .with_context(|| format!("create {}", crate::text::printable_path(&dest)))?;
        let (send_side, recv_side) = one(options, socket, &dest, files, s, r)?;
        sent.push(send_side.seconds);
        received.push(recv_side.seconds);
        if i == 0 {
            for (f, source) in files.iter().zip(sources) {
                let name = std::ffi::OsStr::from_bytes(&f.name);
                let copy = digest_of(&dest.join(name))?;
                verified &= copy == *source;
            }
        }
        std::fs::remove_dir_all(&dest)
            .with_context(|| format!("remove {}", crate::text::printable_path(&dest)))?;
    }
    let sender_seconds = summarize(&sent).expect("at least one run");
    let receiver_seconds = summarize(&received).expect("at least one run");
    Ok(Cell {
        sender: s,
        receiver: r,
        bytes_per_second: crate::units::per_second(bytes, receiver_seconds.median),
        seconds_per_file: receiver_seconds.median / files.len().max(1) as f64,
        sender_seconds,
        receiver_seconds,
        verified,
    })
}

/// One transfer: the receiver on a thread, the sender here.
fn one(
    options: &TransferOptions,
    socket: Option<&SocketPlace>,
    dest: &Path,
    files: &[Outgoing],
    s: SendMethod,
    r: RecvMethod,
) -> Result<(Session, Session)> {
    let at = match socket {
        Some(place) => Endpoint::Unix(place.socket.clone()),
        None => Endpoint::Tcp("127.0.0.1:0".into()),
    };
    let listener = Listener::bind(&at, false)?;
    let endpoint = listener.endpoint();
    let receive = Receiving {
        dir: dest.to_path_buf(),
        method: r,
        buffer: options.buffer,
        token: None,
        force: false,
        min_free: options.min_free,
        sync: options.sync,
        timeout: TIMEOUT,
        keep_mode: false,
        pending: Default::default(),
    };
    std::thread::scope(|scope| {
        let receiver = scope.spawn(|| -> Result<Session> {
            let mut conn = listener.accept(TIMEOUT)?;
            transfer::receive_one(&mut *conn, &receive)
        });
        let send = Sending {
            method: s,
            buffer: options.buffer,
            token: Vec::new(),
            to: endpoint.to_string(),
        };
        let sent = transfer::connect(&endpoint, TIMEOUT)
            .and_then(|mut c| transfer::send_all(&mut *c, files, &send));
        let received = receiver
            .join()
            .map_err(|_| anyhow::anyhow!("transfer: the receiver panicked"))?;
        Ok((sent?, received?))
    })
}

/// The files under `paths` ([`transfer::outgoing`]); what a directory held that cannot be
/// sent becomes a warning.
fn files_to_send(paths: &[PathBuf], warnings: &mut Vec<Warning>) -> Result<Vec<Outgoing>> {
    let (files, skipped) = transfer::outgoing(paths)?;
    if let Some(first) = skipped.first() {
        warnings.push(Warning::LeftOut {
            count: skipped.len(),
            first: crate::text::lossless(first.as_os_str()),
        });
    }
    Ok(files)
}

/// `send ADDR FILE...`: every file verified by the receiver and in place, or an error.
pub fn send(options: &SendOptions) -> Result<SendReport> {
    let mut warnings = Vec::new();
    let files = files_to_send(&options.files, &mut warnings)
        .with_context(|| format!("send to {}", options.to))?;
    let mut conn = transfer::connect(&options.to, options.timeout)?;
    let session = transfer::send_all(&mut *conn, &files, &options.sending)?;
    warnings.extend(
        session
            .grew
            .iter()
            .map(|file| Warning::Grew { file: file.clone() }),
    );
    Ok(SendReport {
        to: options.to.to_string(),
        method: options.sending.method,
        session,
        warnings,
    })
}

/// A token of 16 random bytes in hex, from the kernel's random source.
fn new_token() -> Result<String> {
    let mut bytes = [0u8; 16];
    // SAFETY: getrandom fills the 16-byte array.
    let n = unsafe { libc::getrandom(bytes.as_mut_ptr().cast(), bytes.len(), 0) };
    if n != bytes.len() as isize {
        return Err(std::io::Error::last_os_error()).context("getrandom for a token");
    }
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// `receive DIR`: serves connections until Ctrl-C (or one, with `--once`), up to
/// `--max-peers` at once, each on its own thread; `observer` is told where it listens, and
/// `each` gets every connection's outcome. A failed connection is reported and the others
/// still served.
pub fn receive(
    options: &ReceiveOptions,
    observer: &dyn ReceiveObserver,
    each: &mut dyn FnMut(Result<Session>) -> Result<()>,
) -> Result<()> {
    let mut receiving = options.receiving.clone();
    let token_made = if receiving.token.is_none() && options.allow_remote {
        let t = new_token()?;
        receiving.token = Some(t.clone().into_bytes());
        Some(t)
    } else {
        None
    };
    let listener = Listener::bind(&options.listen, options.allow_remote)?;
    observer.listening(&Listening {
        dir: receiving.dir.clone(),
        endpoint: listener.endpoint().to_string(),
        method: receiving.method,
        token_made,
    });
    transfer::serve(&listener, &receiving, options.serving, each)
}
