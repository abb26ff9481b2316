//! The results of `transfer`, `send` and `receive`: each method pair's rate, what was sent,
//! where a receiver listens.

use crate::measure::stats::Summary;
use crate::transfer::Session;
use crate::transfer::methods::{RecvMethod, SendMethod};
use crate::warning::Warning;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One sender × receiver pair over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Cell {
    /// Sender method.
    pub sender: SendMethod,
    /// Receiver method.
    pub receiver: RecvMethod,
    /// Seconds of the sending side, connection to final reply.
    pub sender_seconds: Summary,
    /// Seconds of the receiving side, accept to final reply.
    pub receiver_seconds: Summary,
    /// Bytes over the median receiver time.
    pub bytes_per_second: f64,
    /// Median receiver seconds per file.
    pub seconds_per_file: f64,
    /// Whether the copies read back equal the sources.
    pub verified: bool,
}

impl Cell {
    /// Its rate over the repeats: the median rate, and the range the receiver's times give
    /// (each as a share of their median), for the one rule and the Scattered warning.
    pub fn rates(&self) -> Summary {
        let t = &self.receiver_seconds;
        let at = |seconds: f64| self.bytes_per_second * t.median / seconds.max(1e-12);
        Summary {
            min: at(t.max),
            max: at(t.min),
            median: self.bytes_per_second,
            mean: at(t.mean),
            ..*t
        }
    }
}

/// The files of one workload and its matrix.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Workload {
    /// What it is.
    pub name: String,
    /// Files.
    pub files: usize,
    /// Bytes in all.
    pub bytes: u64,
    /// One cell per pair, sender-major.
    pub cells: Vec<Cell>,
}

/// The result of `transfer`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TransferReport {
    /// `tcp 127.0.0.1` or `unix`.
    pub channel: String,
    /// Transfers per pair.
    pub repeat: usize,
    /// Buffer of read and write.
    pub buffer: u64,
    /// Whether the receiver fsynced each file.
    pub synced: bool,
    /// The workloads.
    pub workloads: Vec<Workload>,
    /// Whether everything ran.
    pub complete: bool,
    /// What the reader should know (entries of the directories given that were left out).
    #[serde(default)]
    pub warnings: Vec<Warning>,
}

impl TransferReport {
    /// Whether every copy was verified.
    pub fn ok(&self) -> bool {
        self.workloads
            .iter()
            .flat_map(|w| &w.cells)
            .all(|c| c.verified)
    }
}
/// What `send` did, for text and JSON.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SendReport {
    /// The receiver.
    pub to: String,
    /// How the bytes were moved.
    pub method: SendMethod,
    /// The connection.
    #[serde(flatten)]
    pub session: Session,
    /// What the reader should know (entries left out, files that grew while sent).
    #[serde(default)]
    pub warnings: Vec<Warning>,
}
/// What `receive` says once it is bound, before any connection.
#[derive(Debug, Clone)]
pub struct Listening {
    /// Where files go.
    pub dir: PathBuf,
    /// The address it listens on (the port the system chose, for port 0).
    pub endpoint: String,
    /// How it moves the bytes.
    pub method: RecvMethod,
    /// The token it made (`--allow-remote` without `--token`): senders must pass it.
    pub token_made: Option<String>,
}

/// Told what must be seen while `receive` runs (it serves until Ctrl-C): where it listens,
/// and the token it made.
pub trait ReceiveObserver {
    /// The receiver is bound and about to serve.
    fn listening(&self, listening: &Listening);
}
