//! The `null` engine: moves no bytes, as fio's. It walks the plan and tells the observer of
//! every piece, so the harness, statistics, exports and interruption can be tested without
//! real I/O, and the harness's own overhead measured.

use super::flag::*;
use super::{Caps, Defaults, Engine, Job, Moved, Spec, Threads};
use anyhow::Result;

/// Moves nothing.
pub struct Null;

/// What the `null` engine is and can do.
pub const SPEC: Spec = Spec {
    name: "null",
    describe: "moves no bytes (tests the harness and measures its own overhead)",
    caps: Caps::of(READ | WRITE | ANY_ORDER),
    defaults: Defaults {
        threads: Threads::One,
        block_size: 1 << 20,
        depth: 1,
    },
};

impl Engine for Null {
    fn spec(&self) -> &'static Spec {
        &SPEC
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
            in_place: 0,
            tests: Default::default(),
        })
    }
}
