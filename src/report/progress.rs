//! The progress bar: on stderr, only when stderr is a terminal, and only once a piece of
//! work has lasted about a second (short work stays silent). With `NO_COLOR` set, no bar
//! (a bar is drawn with escape sequences): the study says each part in a plain line instead. Implements the harness's
//! progress sink; safe to advance from several engine threads.

use crate::harness::ProgressSink;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const DELAY: Duration = Duration::from_secs(1);

/// Whether `NO_COLOR` (https://no-color.org: set and not empty) asks for no escape
/// sequence on the terminal.
pub fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// Whether a bar may be drawn on stderr: a terminal, and no `NO_COLOR`.
fn bar_allowed() -> bool {
    std::io::stderr().is_terminal() && !no_color()
}

struct Work {
    label: String,
    total: Option<u64>,
    start: Instant,
    bar: Option<ProgressBar>,
}

/// A progress bar that appears late, or never.
pub struct Bar {
    /// Whether stderr is a terminal; asked on first use (an ioctl `fast` need not pay for).
    enabled: std::sync::OnceLock<bool>,
    done: AtomicU64,
    work: Mutex<Option<Work>>,
}

impl Default for Bar {
    fn default() -> Self {
        Self::new()
    }
}

impl Bar {
    /// A bar on stderr, shown only when stderr is a terminal.
    pub fn new() -> Self {
        Self {
            enabled: std::sync::OnceLock::new(),
            done: AtomicU64::new(0),
            work: Mutex::new(None),
        }
    }

    /// A bar that never shows (`--quiet`).
    pub fn hidden() -> Self {
        let bar = Self::new();
        let _ = bar.enabled.set(false);
        bar
    }

    fn enabled(&self) -> bool {
        *self.enabled.get_or_init(bar_allowed)
    }

    fn style(total: Option<u64>) -> ProgressBar {
        match total {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{wide_msg} [{bar:20}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{wide_msg} {spinner} {binary_bytes} {binary_bytes_per_sec}")
                    .expect("the template is valid"),
            ),
        }
    }
}

impl ProgressSink for Bar {
    fn begin(&self, label: &str, total: Option<u64>) {
        if !self.enabled() {
            return;
        }
        self.done.store(0, Ordering::Relaxed);
        let mut work = self.work.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(old) = work.take().and_then(|w| w.bar) {
            old.finish_and_clear();
        }
        *work = Some(Work {
            label: label.to_string(),
            total,
            start: Instant::now(),
            bar: None,
        });
    }

    fn advance(&self, bytes: u64) {
        if !self.enabled() {
            return;
        }
        let done = self.done.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let Ok(mut work) = self.work.try_lock() else {
            return; // another thread is updating the bar; the next call will catch up
        };
        let Some(w) = work.as_mut() else { return };
        if w.bar.is_none() && w.start.elapsed() >= DELAY {
            let bar = Self::style(w.total);
            bar.set_message(w.label.clone());
            w.bar = Some(bar);
        }
        if let Some(bar) = &w.bar {
            bar.set_position(done);
        }
    }

    fn end(&self) {
        if !self.enabled() {
            return;
        }
        let mut work = self.work.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(bar) = work.take().and_then(|w| w.bar) {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.end();
    }
}

/// The study's one bar: the whole study, its current part and step, and an ETA that the
/// parts already finished correct (their real time against the level's estimate).
pub struct StudyBar {
    /// `--quiet`: no bar and no opening line.
    silent: bool,
    /// A terminal with `NO_COLOR`: a plain line per part instead of the bar.
    plain: bool,
    shared: std::sync::Arc<Mutex<StudyState>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    ticker: Mutex<Option<std::thread::JoinHandle<()>>>,
}

struct StudyState {
    bar: Option<ProgressBar>,
    part: String,
    detail: String,
    index: usize,
    count: usize,
    started: Instant,
    estimate: f64,
    remaining: f64,
    done_estimate: f64,
    done_actual: f64,
}

impl StudyState {
    fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Seconds still to go: the estimates left, scaled by how the finished parts (and the
    /// current one, once past its estimate) compared with theirs.
    fn eta(&self) -> f64 {
        crate::workload::estimate::eta(
            self.done_estimate,
            self.done_actual,
            self.estimate,
            self.elapsed(),
            self.remaining,
        )
    }

    fn draw(&self) {
        let Some(bar) = &self.bar else { return };
        let total = self.done_estimate + self.estimate + self.remaining;
        let here = self.elapsed().min(0.95 * self.estimate);
        bar.set_length((total * 1000.0) as u64);
        bar.set_position(((self.done_estimate + here) * 1000.0) as u64);
        bar.set_message(format!(
            "study [{}/{}] {}{}{} · eta {:#}",
            self.index + 1,
            self.count,
            self.part,
            if self.detail.is_empty() { "" } else { ": " },
            self.detail,
            indicatif::HumanDuration(Duration::from_secs_f64(self.eta().round().max(0.0)))
        ));
    }
}

impl Default for StudyBar {
    fn default() -> Self {
        Self::new()
    }
}

impl StudyBar {
    /// A bar on stderr when it is a terminal; nothing otherwise.
    pub fn new() -> Self {
        Self::with(false)
    }

    /// Nothing on stderr at all (`--quiet`).
    pub fn hidden() -> Self {
        Self::with(true)
    }

    fn with(silent: bool) -> Self {
        let plain = !silent && std::io::stderr().is_terminal() && no_color();
        let bar = (!silent && bar_allowed()).then(|| {
            ProgressBar::new(1).with_style(
                ProgressStyle::with_template("{wide_msg} [{bar:20}] {percent:>3}%")
                    .expect("the template is valid")
                    .progress_chars("=> "),
            )
        });
        let shared = std::sync::Arc::new(Mutex::new(StudyState {
            bar,
            part: String::new(),
            detail: String::new(),
            index: 0,
            count: 1,
            started: Instant::now(),
            estimate: 0.0,
            remaining: 0.0,
            done_estimate: 0.0,
            done_actual: 0.0,
        }));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ticker = {
            let shared = shared.clone();
            let stop = stop.clone();
            let enabled = shared.lock().map(|s| s.bar.is_some()).unwrap_or(false);
            enabled.then(|| {
                std::thread::spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        if let Ok(state) = shared.lock() {
                            state.draw();
                        }
                        std::thread::sleep(Duration::from_millis(250));
                    }
                })
            })
        };
        Self {
            silent,
            plain,
            shared,
            stop,
            ticker: Mutex::new(ticker),
        }
    }
}

impl crate::workload::study::StudyObserver for StudyBar {
    fn begin(&self, level: crate::workload::study::Level, estimate: f64) {
        if self.silent {
            return;
        }
        let line = format!(
            "study at the {} level: {} (as measured on a 2-vCPU VM; a slower medium takes longer); Ctrl-C stops it and keeps what was measured\n",
            level.name(),
            crate::workload::estimate::about(estimate)
        );
        let s = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        match &s.bar {
            Some(bar) => bar.println(
                crate::report::terminal::fit(&line, crate::report::terminal::Stream::Stderr)
                    .trim_end(),
            ),
            None => crate::report::note(&line),
        }
    }

    fn part(
        &self,
        part: crate::workload::study::Part,
        index: usize,
        count: usize,
        estimate: f64,
        remaining: f64,
    ) {
        let mut s = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if index > 0 {
            s.done_estimate += s.estimate;
            s.done_actual += s.elapsed();
        }
        s.part = part.name().to_string();
        s.detail.clear();
        s.index = index;
        s.count = count;
        s.started = Instant::now();
        s.estimate = estimate;
        s.remaining = remaining;
        s.draw();
        if self.plain {
            crate::report::note(&format!(
                "study [{}/{}] {}\n",
                index + 1,
                count,
                part.name()
            ));
        }
    }
}

impl ProgressSink for StudyBar {
    fn begin(&self, label: &str, _total: Option<u64>) {
        if let Ok(mut s) = self.shared.try_lock() {
            s.detail = label.to_string();
        }
    }
    fn advance(&self, _bytes: u64) {}
    fn end(&self) {}
}

impl Drop for StudyBar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.ticker.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
        if let Some(bar) = &self.shared.lock().unwrap_or_else(|p| p.into_inner()).bar {
            bar.finish_and_clear();
        }
    }
}
