//! The core of queued I/O (fio's `td_io_queue` and `account_io_completion` around an
//! engine that only queues and reaps): a queue from [`crate::engine::queue`] is kept full
//! until the window closes, each slot refilled as its request completes and each refill
//! submitted at once; every request is stamped as it goes to the kernel and as it is reaped
//! ([`crate::measure::inflight`]). The caller's [`Feed`] chooses each request (direction,
//! offset, length, a write's bytes) and sees each completion; it reads no clock. What
//! completes during the window's ramp is run but not counted.

use crate::engine::queue::{Completion, Queue, Request};
use crate::measure::inflight::{InFlight, Stamp, Window};
use anyhow::Result;

/// What the caller of [`run`] decides.
pub trait Feed {
    /// The next request for the free slot `id`, whose buffer is `buf` (a write's bytes go
    /// there); `None`: nothing more to queue.
    fn next(&mut self, id: usize, buf: &mut [u8]) -> Option<Request>;
    /// The bytes a reaped request moved, or the error that ends the run (a failed or short
    /// transfer).
    fn moved(&self, c: &Completion) -> Result<usize>;
    /// A reaped request once its latency is taken, with its slot's buffer (a read's bytes)
    /// and its latency in nanoseconds (`None` during the window's ramp: not counted).
    fn done(&mut self, c: &Completion, buf: &[u8], latency_ns: Option<u64>);
    /// The ramp is over: what completes from now on is counted (called once, before the
    /// first counted completion; at once without a ramp).
    fn counting(&mut self) {}
    /// Whether to stop refilling now (a sibling failed, Ctrl-C); the window's end is the
    /// loop's own.
    fn halted(&self) -> bool;
}

/// Keeps `queue` full with `feed`'s requests until `window` closes (the first batch always
/// goes in whole: a run never measures nothing), then reaps what is in flight; every
/// request reaped is accounted in `times`. An error ends the run at once (the queue waits
/// for what is still in flight before its buffers go).
pub fn run(
    queue: &mut dyn Queue,
    feed: &mut dyn Feed,
    window: &Window,
    times: &mut InFlight,
) -> Result<()> {
    for id in 0..queue.depth() {
        let Some(request) = feed.next(id, queue.buffer(id)) else {
            break;
        };
        queue.queue(request)?;
    }
    // The first wait submits the whole queue: each request's clock starts there (as fio's
    // lat does; its clat starts once that call has returned). Refills are submitted one by
    // one.
    let entering = Stamp::now();
    for id in 0..queue.depth() {
        times.issue(id, entering);
    }
    let mut counting = window.counts_at(entering);
    if counting {
        feed.counting();
    }
    let mut stop = false;
    // Reaped completions, gathered before their slots are refilled; made once, not per wait.
    let mut done: Vec<Completion> = Vec::with_capacity(queue.depth());
    while queue.pending() > 0 {
        done.clear();
        queue.reap(&mut done)?;
        let now = Stamp::now();
        stop = stop || window.over_at(now) || feed.halted();
        if !counting && window.counts_at(now) {
            counting = true;
            feed.counting();
        }
        for c in done.drain(..) {
            let id = c.request.id;
            let bytes = feed.moved(&c)?;
            // In the ramp a request is run and checked, not counted (fio's ramp_time).
            let latency = counting.then(|| times.complete(id, bytes as u64, now));
            feed.done(&c, queue.buffer(id), latency);
            if stop {
                continue;
            }
            if let Some(request) = feed.next(id, queue.buffer(id)) {
                queue.queue(request)?;
                // Submitted at once, not with the next wait: the device's queue stays full
                // instead of draining while a batch of completions is handled (fio submits
                // the same way). RND4K Q32T1 read on this VM, alternating with fio: 76k,
                // 71k, 72k IOPS when a batch went in with the next wait, 90k, 88k, 87k so
                // (fio 89k, 90k, 87k), for one io_uring_enter per I/O instead of ~1 per 11.
                times.issue(id, Stamp::now());
                queue.submit()?;
            }
        }
    }
    Ok(())
}
