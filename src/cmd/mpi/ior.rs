//! The clock that puts every rank's readings on one time line, measured at barriers; the
//! rest of what makes `mpi` comparable with IOR (its plain data and pure functions) is
//! `results::mpi::ior`.

use super::{Comm, gather_all};
pub use crate::results::mpi::ior::{
    Clock, ClockOffset, FailedPhase, Kept, PhaseTimes, Reorder, RepeatFiles, ior_aggregate,
};
use anyhow::Result;

/// Barrier rounds that measure the clock offsets.
const ROUNDS: usize = 7;

/// Every rank reads its real-time clock right after each of a few barriers; rank 0 gets
/// the clock (the others `None`).
pub fn measure_clock(comm: &dyn Comm, hosts: &[String]) -> Result<Option<Clock>> {
    let mut mine = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        comm.barrier();
        mine.push(crate::measure::wallclock::now());
    }
    let all: Vec<Vec<f64>> = gather_all(comm, &mine)?;
    if all.is_empty() {
        return Ok(None);
    }
    let rounds: Vec<Vec<f64>> = (0..ROUNDS)
        .map(|i| all.iter().map(|rank| rank[i]).collect())
        .collect();
    Ok(Some(Clock::from_rounds(&rounds, hosts)))
}
