//! The progress bar: on stderr, only when stderr is a terminal, and only once the work has
//! lasted about a second (short work stays silent).

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::time::{Duration, Instant};

const DELAY: Duration = Duration::from_secs(1);

/// A progress bar that appears late, or never.
pub struct Progress {
    label: String,
    total: Option<u64>,
    start: Instant,
    enabled: bool,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A bar for work on `total` bytes (unknown when `None`).
    pub fn new(label: String, total: Option<u64>) -> Self {
        Self {
            label,
            total,
            start: Instant::now(),
            enabled: std::io::stderr().is_terminal(),
            bar: None,
        }
    }

    /// Reports `bytes` done so far.
    pub fn set(&mut self, bytes: u64) {
        if !self.enabled {
            return;
        }
        if self.bar.is_none() && self.start.elapsed() >= DELAY {
            let bar = match self.total {
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
            };
            bar.set_message(self.label.clone());
            self.bar = Some(bar);
        }
        if let Some(bar) = &self.bar {
            bar.set_position(bytes);
        }
    }

    /// Removes the bar, if one was shown.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}
