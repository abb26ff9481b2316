//! The progress bar: on stderr, only when stderr is a terminal, and only once a piece of
//! work has lasted about a second (short work stays silent). Implements the harness's
//! progress sink; safe to advance from several engine threads.

use crate::cmd::harness::ProgressSink;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const DELAY: Duration = Duration::from_secs(1);

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
        *self.enabled.get_or_init(|| std::io::stderr().is_terminal())
    }

    fn style(total: Option<u64>) -> ProgressBar {
        match total {
            Some(total) => ProgressBar::new(total).with_style(
                ProgressStyle::with_template(
                    "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} eta {eta}",
                )
                .expect("the template is valid")
                .progress_chars("=> "),
            ),
            None => ProgressBar::new_spinner().with_style(
                ProgressStyle::with_template("{msg} {spinner} {binary_bytes} {binary_bytes_per_sec}")
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
