//! Splitting a plan among threads: workers claim the plan's pieces in its order from a
//! shared counter (so fast workers take more), XOR what they move with its offset, and the
//! partial checksums combine by XOR in any order. The first error, or a panic, stops every
//! worker and is returned.

use super::{Job, Moved, Observer};
use crate::workload::plan::Plan;
use anyhow::Result;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Runs `work(offset, len, state)` over every piece of `plan` on `threads` threads, each
/// with its own state from `init`, and returns what moved: the bytes of the pieces visited
/// (the plan's length, or more where a plan repeats pieces), the XOR of all results and the
/// sum of the calls each piece reports. The observer hears of every piece.
pub fn for_each_piece<S, I, W>(
    plan: &Plan,
    threads: usize,
    observer: &dyn Observer,
    init: I,
    work: W,
) -> Result<Moved>
where
    I: Fn() -> Result<S> + Sync,
    W: Fn(u64, u64, &mut S) -> Result<(u32, u64)> + Sync,
{
    let claims = Claims::new(*plan);
    let threads = threads.clamp(1, claims.pieces().max(1) as usize);
    let bytes = AtomicU64::new(0);
    let (xor, calls) = on_threads(threads, &claims, |claims| {
        let mut state = init()?;
        let (mut xor, mut calls, mut moved) = (0u32, 0u64, 0u64);
        while let Some((offset, len)) = claims.claim() {
            let (x, c) = work(offset, len, &mut state)?;
            xor ^= x;
            calls += c;
            moved += len;
            observer.moved(len)?;
        }
        bytes.fetch_add(moved, Ordering::Relaxed);
        Ok((xor, calls))
    })?;
    Ok(Moved {
        bytes: bytes.into_inner(),
        calls,
        xor,
        in_place: 0,
        tests: Default::default(),
    })
}

/// Runs `body` on `threads` threads (inline when one) and combines their `(xor, calls)`;
/// the first error is returned and tells the others, through `claims`, to stop. A thread
/// that panics is an error too, never a silent zero.
pub fn on_threads<B>(threads: usize, claims: &Claims, body: B) -> Result<(u32, u64)>
where
    B: Fn(&Claims) -> Result<(u32, u64)> + Sync,
{
    let first_error: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let fail = |e: anyhow::Error| {
        claims.stop();
        let mut slot = first_error.lock().unwrap_or_else(|p| p.into_inner());
        slot.get_or_insert(e);
    };
    // Threads started here time their calls (and their series) where the starting thread does.
    let calls = crate::measure::latency::current();
    let series = crate::measure::series::current();
    let worker = || -> (u32, u64) {
        let _recording = calls.as_ref().map(|c| c.enter());
        let _series = series.as_ref().map(|s| s.enter());
        body(claims).unwrap_or_else(|e| {
            fail(e);
            (0, 0)
        })
    };
    let panicked = |panic: Box<dyn std::any::Any + Send>| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        fail(anyhow::anyhow!("a worker thread panicked: {why}"));
        (0, 0)
    };
    let results: Vec<(u32, u64)> = if threads <= 1 {
        let inline = std::panic::catch_unwind(std::panic::AssertUnwindSafe(worker));
        vec![inline.unwrap_or_else(panicked)]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(panicked))
                .collect()
        })
    };
    if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    Ok(results
        .iter()
        .fold((0, 0), |(x, c), (x2, c2)| (x ^ x2, c + c2)))
}

/// The shared work list: the pieces of a plan, handed out in the plan's order.
#[derive(Debug)]
pub struct Claims {
    plan: Plan,
    next: AtomicU64,
    stopped: AtomicBool,
}

impl Claims {
    /// A work list over the pieces of `plan`.
    pub fn new(plan: Plan) -> Self {
        Self {
            plan,
            next: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// How many pieces there are.
    pub fn pieces(&self) -> u64 {
        self.plan.pieces()
    }

    /// The next piece as `(offset, len)`, or `None` when all are taken or work stopped.
    pub fn claim(&self) -> Option<(u64, u64)> {
        if self.stopped.load(Ordering::Relaxed) {
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        (index < self.plan.pieces()).then(|| self.plan.piece(index))
    }

    /// Tells every worker to stop claiming.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }
}

/// The threads a job will really use: never more than its pieces.
pub fn workers(job: &Job) -> usize {
    job.threads.clamp(
        1,
        usize::try_from(job.plan.pieces().max(1)).unwrap_or(usize::MAX),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{xor_at, xor_bytes};
    use crate::engine::Interruptible;
    use crate::workload::plan::Order;

    #[test]
    fn pieces_cover_everything_once_and_combine_to_the_whole_xor() {
        let data: Vec<u8> = (0..100_003u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for threads in [1, 2, 7] {
            for chunk in [1, 3, 4096, 99_999, 1 << 20] {
                for order in [Order::Sequential, Order::Random { seed: 4 }] {
                    let plan = Plan::new(0, data.len() as u64, chunk, order);
                    let moved = for_each_piece(
                        &plan,
                        threads,
                        &Interruptible,
                        || Ok(()),
                        |off, len, _| {
                            Ok((xor_at(off, &data[off as usize..(off + len) as usize]), 1))
                        },
                    )
                    .unwrap();
                    assert_eq!(
                        moved.xor,
                        xor_bytes(&data),
                        "threads {threads} chunk {chunk}"
                    );
                    assert_eq!(moved.calls, (data.len() as u64).div_ceil(chunk));
                }
            }
        }
    }

    #[test]
    fn an_error_in_one_piece_is_returned() {
        let err = for_each_piece(
            &Plan::sequential(0, 1000, 10),
            3,
            &Interruptible,
            || Ok(()),
            |off, _, _| {
                if off == 500 {
                    anyhow::bail!("bad chunk at {off}")
                } else {
                    Ok((0, 1))
                }
            },
        )
        .unwrap_err();
        assert_eq!(err.to_string(), "bad chunk at 500");
    }

    #[test]
    fn a_panic_in_a_worker_is_an_error_not_a_zero() {
        for threads in [1, 3] {
            a_panic_on(threads);
        }
    }

    fn a_panic_on(threads: usize) {
        let err = for_each_piece(
            &Plan::sequential(0, 1000, 10),
            threads,
            &Interruptible,
            || Ok(()),
            |off, _, _| {
                if off == 500 {
                    panic!("worker blew up at {off}");
                }
                Ok((1, 1))
            },
        )
        .unwrap_err();
        assert!(err.to_string().contains("worker blew up at 500"), "{err}");
    }

    #[test]
    fn nothing_to_do_is_zero() {
        assert_eq!(
            for_each_piece(
                &Plan::sequential(0, 0, 10),
                4,
                &Interruptible,
                || Ok(()),
                |_, _, _| Ok((1, 1))
            )
            .unwrap(),
            Moved::default()
        );
    }
}
