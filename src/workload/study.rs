//! The vocabulary of `study`: its levels (how much it measures) and what names a part (the
//! names used in flags, files and headings, and its time at each level), and what a progress
//! display is told as it runs. Plain data, below the command line and the command; what each
//! level measures is the command's (`cmd::study`).

use serde::{Deserialize, Serialize};

/// How much the study measures, and so how long it takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    /// Every part once, few points (its time and the value list: `workload::estimate`).
    Quick,
    /// The classic block sizes, repeated.
    Standard,
    /// The classic report's rigour: 50 runs per point, 5–15 s calibration; long.
    Thorough,
}

impl Level {
    /// `quick`, `standard` or `thorough`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Quick => "quick",
            Self::Standard => "standard",
            Self::Thorough => "thorough",
        }
    }
}

/// One part of the study: its names and its time at each level. What it runs and shows is
/// its own file under `cmd/study/parts/`; the list of parts, in the order they run, is the
/// registry there (`cmd::study::parts::PARTS`), which fills [`STUDY_PARTS`] for the layers
/// below it ([`all`]). Two parts are the same part when their names are.
#[derive(Debug, Clone, Copy)]
pub struct Part {
    name: &'static str,
    title: &'static str,
    about: &'static str,
    seconds: [f64; 3],
}

impl Part {
    /// A part called `name` (in files and flags: `read-sweep`), with the heading of its
    /// section, the line `--only` lists it with, and the seconds it takes at the quick,
    /// standard and thorough levels (`workload::estimate` says where they come from).
    pub const fn new(
        name: &'static str,
        title: &'static str,
        about: &'static str,
        seconds: [f64; 3],
    ) -> Self {
        Self {
            name,
            title,
            about,
            seconds,
        }
    }

    /// The name used in files and flags (`read-sweep`).
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The heading of its section.
    pub fn title(self) -> &'static str {
        self.title
    }

    /// What it measures, in one line (the help of `--only` and `--skip`).
    pub fn about(self) -> &'static str {
        self.about
    }

    /// Seconds it takes at `level` on the 2-vCPU development VM.
    pub fn seconds(self, level: Level) -> f64 {
        match level {
            Level::Quick => self.seconds[0],
            Level::Standard => self.seconds[1],
            Level::Thorough => self.seconds[2],
        }
    }
}

/// The names of the registered parts, in the order the study runs them: one list, filled
/// by the registry of `cmd/study/parts/` (a slice that the link gathers, so that this layer
/// names no command).
#[linkme::distributed_slice]
pub static STUDY_PARTS: [&'static [Part]];

/// Every part's names, in the order the study runs them.
pub fn all() -> impl Iterator<Item = Part> {
    STUDY_PARTS.iter().flat_map(|list| list.iter().copied())
}

impl PartialEq for Part {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for Part {}

impl std::hash::Hash for Part {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl Serialize for Part {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name)
    }
}

/// Told when the study and each part start, for a progress display.
pub trait StudyObserver {
    /// The study is about to start its parts (the directory and scratch file are ready).
    fn begin(&self, _level: Level, _estimate: f64) {}
    /// `part` starts; `estimate` is its share of the level's estimate, `remaining` the
    /// estimate of every part still to run after it.
    fn part(&self, part: Part, index: usize, count: usize, estimate: f64, remaining: f64);
}

/// No progress display.
pub struct Silent;

impl StudyObserver for Silent {
    fn part(&self, _: Part, _: usize, _: usize, _: f64, _: f64) {}
}
