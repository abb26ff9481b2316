//! Splitting one file among threads: workers claim fixed-size chunks in offset order from a
//! shared counter (so fast workers take more), XOR what they read with its offset, and the
//! partial checksums combine by XOR in any order. The first error stops every worker.

use anyhow::Result;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Runs `work(offset, len, state)` over `[0, total)` in `chunk`-sized pieces on `threads`
/// threads, each with its own state from `init`; returns the XOR of all results and the
/// sum of the calls each piece reports.
pub fn for_each_chunk<S, I, W>(
    total: u64,
    chunk: u64,
    threads: usize,
    init: I,
    work: W,
) -> Result<(u32, u64)>
where
    I: Fn() -> Result<S> + Sync,
    W: Fn(u64, u64, &mut S) -> Result<(u32, u64)> + Sync,
{
    let claims = Claims::new(total, chunk);
    let threads = threads.clamp(1, claims.pieces().max(1) as usize);
    on_threads(threads, &claims, |claims| {
        let mut state = init()?;
        let (mut xor, mut calls) = (0u32, 0u64);
        while let Some((offset, len)) = claims.claim() {
            let (x, c) = work(offset, len, &mut state)?;
            xor ^= x;
            calls += c;
        }
        Ok((xor, calls))
    })
}

/// A worker panicked: a bug, reported as an error so that no partial checksum is printed
/// as if it were the whole file's.
#[derive(Debug, thiserror::Error)]
#[error("a worker thread panicked: {0}")]
pub struct WorkerPanic(pub String);

impl WorkerPanic {
    /// The error for a panic's payload (its message when it has one).
    fn from_payload(payload: &(dyn std::any::Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_string());
        Self(message)
    }
}

/// Runs `body` on `threads` threads (inline when one) and combines their `(xor, calls)`;
/// the first error is returned and tells the others, through `claims`, to stop. A panic
/// in a worker is such an error ([`WorkerPanic`]), never a silently missing share.
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
    let worker = || -> (u32, u64) {
        // The body's state is dropped by the unwind; nothing it shared is left half-updated
        // (claims are atomic and the error slot recovers from poisoning).
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(claims)));
        match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(e)) => {
                fail(e);
                (0, 0)
            }
            Err(payload) => {
                fail(WorkerPanic::from_payload(payload.as_ref()).into());
                (0, 0)
            }
        }
    };
    let results: Vec<(u32, u64)> = if threads <= 1 {
        vec![worker()]
    } else {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..threads).map(|_| scope.spawn(worker)).collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|payload| {
                        fail(WorkerPanic::from_payload(payload.as_ref()).into());
                        (0, 0)
                    })
                })
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

/// The shared work list: `[0, total)` cut into `chunk`-sized pieces, handed out in order.
#[derive(Debug)]
pub struct Claims {
    total: u64,
    chunk: u64,
    next: AtomicU64,
    stopped: AtomicBool,
}

impl Claims {
    /// A work list over `total` bytes in pieces of `chunk` bytes.
    pub fn new(total: u64, chunk: u64) -> Self {
        Self {
            total,
            chunk: chunk.max(1),
            next: AtomicU64::new(0),
            stopped: AtomicBool::new(false),
        }
    }

    /// How many pieces there are.
    pub fn pieces(&self) -> u64 {
        self.total.div_ceil(self.chunk)
    }

    /// The next piece as `(offset, len)`, or `None` when all are taken or work stopped.
    pub fn claim(&self) -> Option<(u64, u64)> {
        if self.stopped.load(Ordering::Relaxed) {
            return None;
        }
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        let offset = index.checked_mul(self.chunk).filter(|&o| o < self.total)?;
        Some((offset, self.chunk.min(self.total - offset)))
    }

    /// Tells every worker to stop claiming.
    pub fn stop(&self) {
        self.stopped.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{xor_at, xor_bytes};

    #[test]
    fn chunks_cover_everything_once_and_combine_to_the_whole_xor() {
        let data: Vec<u8> = (0..100_003u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for threads in [1, 2, 7] {
            for chunk in [1, 3, 4096, 99_999, 1 << 20] {
                let (x, calls) = for_each_chunk(
                    data.len() as u64,
                    chunk,
                    threads,
                    || Ok(()),
                    |off, len, _| Ok((xor_at(off, &data[off as usize..(off + len) as usize]), 1)),
                )
                .unwrap();
                assert_eq!(x, xor_bytes(&data), "threads {threads} chunk {chunk}");
                assert_eq!(calls, (data.len() as u64).div_ceil(chunk));
            }
        }
    }

    #[test]
    fn an_error_in_one_chunk_is_returned() {
        let err = for_each_chunk(
            1000,
            10,
            3,
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
    fn a_panic_in_a_worker_is_an_error_not_a_missing_share() {
        for threads in [1, 3] {
            let err = for_each_chunk(
                1000,
                10,
                threads,
                || Ok(()),
                |off, _, _| {
                    if off == 500 {
                        panic!("boom at {off}")
                    }
                    Ok((1, 1))
                },
            )
            .expect_err("a panicking worker fails the whole job");
            assert!(err.is::<WorkerPanic>(), "threads {threads}: {err:#}");
            assert_eq!(
                err.to_string(),
                "a worker thread panicked: boom at 500",
                "threads {threads}"
            );
        }
    }

    #[test]
    fn nothing_to_do_is_zero() {
        assert_eq!(
            for_each_chunk(0, 10, 4, || Ok(()), |_, _, _| Ok((1, 1))).unwrap(),
            (0, 0)
        );
    }
}
