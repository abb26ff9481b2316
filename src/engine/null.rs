//! The `null` engine: moves no bytes, as fio's. It walks the plan and tells the observer of
//! every piece, so the harness, statistics, exports and interruption can be tested without
//! real I/O, and the harness's own overhead measured.

use super::{Caps, Defaults, Engine, Job, Moved, Threads};
use anyhow::Result;

/// Moves nothing.
pub struct Null;

impl Engine for Null {
    fn name(&self) -> &'static str {
        "null"
    }
    fn describe(&self) -> &'static str {
        "moves no bytes (tests the harness and measures its own overhead)"
    }
    fn caps(&self) -> Caps {
        Caps {
            read: true,
            write: true,
            sized: false,
            any_order: true,
            direct: false,
            parallel: false,
            queued: false,
            zero_copy: false,
            counted: false,
            moves_bytes: false,
        }
    }
    fn defaults(&self, _: u64) -> Defaults {
        Defaults {
            threads: Threads::One,
            block_size: 1 << 20,
            depth: 1,
        }
    }
    fn check(&self, job: &super::Job) -> Result<(), String> {
        if !job.plan.is_sequential() && job.kind != crate::files::InputKind::Regular {
            return Err("null: offsets need a regular file".into());
        }
        Ok(())
    }
    fn run(&self, job: &Job) -> Result<Moved> {
        let mut calls = 0;
        for (_, len) in job.plan.iter() {
            calls += 1;
            job.observer.moved(len)?;
        }
        Ok(Moved {
            bytes: job.plan.len,
            calls,
            xor: 0,
        })
    }
}
