//! The core of queued I/O (fio's `td_io_queue` and `account_io_completion` around an
//! engine that only queues and reaps): a queue from [`crate::engine::queue`] is kept full
//! until the window closes, each slot refilled as its request completes and each refill
//! submitted at once; every request is stamped as it goes to the kernel and as it is reaped
//! ([`crate::measure::inflight`]). The caller's [`Feed`] chooses each request (direction,
//! offset, length, a write's bytes) and sees each completion; it reads no clock. What
//! completes during the window's ramp is run but not counted.

use crate::engine::queue::{Completion, Queue, Request};
use crate::measure::inflight::{InFlight, Stamp, Window};
use crate::workload::arrivals::Schedule;
use anyhow::Result;
use hdrhistogram::Histogram;
use std::time::{Duration, Instant};

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

/// What an open-loop run measured beyond each request's service time (which goes into the
/// [`InFlight`] account as a closed-loop run's does). Every figure is of the I/Os whose
/// intended start fell in the counted window (after the ramp, before the deadline).
#[derive(Debug)]
pub struct Paced {
    /// Response time of each counted I/O, nanoseconds: completion − intended start (the
    /// service time plus the time it waited to be issued).
    pub response: Histogram<u64>,
    /// How late each counted I/O was issued, nanoseconds: issue − intended start.
    pub lag: Histogram<u64>,
    /// Counted I/Os issued.
    pub issued: u64,
    /// Counted I/Os completed by the deadline: the rate achieved is theirs (those still in
    /// flight at the deadline complete after it, and would credit the window with more than
    /// the device did in it).
    pub completed: u64,
    /// Counted I/Os never issued before the window closed (the device could not keep up):
    /// each is in `response` at the time it had waited when the run ended, a lower bound.
    pub unissued: u64,
    /// Nanoseconds (counted) during which an I/O was due and every slot was in flight: the
    /// cap on what is in flight was what held it back.
    pub capped_ns: u64,
    /// The most requests in flight at once.
    pub most_in_flight: usize,
    /// The backlog (I/Os due and not complete: in flight, and due but not issued) every
    /// `every` from the start of counting.
    pub backlog: Vec<u64>,
    /// Seconds of arrivals counted: from the later of the schedule's origin (the thread's
    /// start) and the ramp's end, to the deadline.
    pub seconds: f64,
}

impl Paced {
    fn new() -> Self {
        Self {
            response: crate::measure::latency::histogram(),
            lag: crate::measure::latency::histogram(),
            issued: 0,
            completed: 0,
            unissued: 0,
            capped_ns: 0,
            most_in_flight: 0,
            backlog: Vec::new(),
            seconds: 0.0,
        }
    }

    /// Adds another thread's account (their backlogs sampled at the same moments).
    pub fn merge(mut self, other: Self) -> Result<Self> {
        self.response
            .add(&other.response)
            .map_err(|e| anyhow::anyhow!("merge response times: {e}"))?;
        self.lag
            .add(&other.lag)
            .map_err(|e| anyhow::anyhow!("merge issue lags: {e}"))?;
        self.issued += other.issued;
        self.completed += other.completed;
        self.unissued += other.unissued;
        self.capped_ns = self.capped_ns.max(other.capped_ns);
        self.most_in_flight += other.most_in_flight;
        self.seconds = self.seconds.max(other.seconds);
        if self.backlog.len() < other.backlog.len() {
            self.backlog.resize(other.backlog.len(), 0);
        }
        for (a, b) in self.backlog.iter_mut().zip(other.backlog) {
            *a += b;
        }
        Ok(self)
    }
}

/// Issues `feed`'s requests at the intended starts `schedule` draws (an open loop: the
/// next arrival never waits for a completion), as many in flight as arrive, up to the
/// queue's depth; an arrival that finds every slot busy waits for one, still timed from
/// its intended start. Runs until `window` closes, then reaps what is in flight; the
/// arrivals never issued are counted. `every`: how often the backlog is sampled.
pub fn run_paced(
    queue: &mut dyn Queue,
    feed: &mut dyn Feed,
    window: &Window,
    times: &mut InFlight,
    schedule: &mut Schedule,
    every: Duration,
) -> Result<Paced> {
    let origin = Instant::now();
    let at = |ns: u64| origin + Duration::from_nanos(ns);
    let (from, deadline) = (window.counting_from(), window.deadline());
    let mut paced = Paced::new();
    paced.seconds = deadline
        .saturating_duration_since(origin.max(from))
        .as_secs_f64();
    let mut free: Vec<usize> = (0..queue.depth()).rev().collect();
    let mut intended = vec![origin; queue.depth()];
    let mut next = at(schedule.next_start());
    let mut counting = false;
    let mut capped_since: Option<Instant> = None;
    let mut next_sample = from;
    let mut halted = false;
    let mut done: Vec<Completion> = Vec::with_capacity(queue.depth());
    // Accounts one reaped request: its service time (by `times`), its response time.
    let reaped = |c: Completion,
                  queue: &mut dyn Queue,
                  feed: &mut dyn Feed,
                  paced: &mut Paced,
                  times: &mut InFlight,
                  intended: &[Instant],
                  now: Instant|
     -> Result<usize> {
        let id = c.request.id;
        let bytes = feed.moved(&c)?;
        let counted = intended[id] >= from;
        let service = counted.then(|| times.complete(id, bytes as u64, Stamp::from(now)));
        if counted {
            let ns = now.saturating_duration_since(intended[id]).as_nanos() as u64;
            paced.response.saturating_record(ns.max(1));
            if now <= deadline {
                paced.completed += 1;
            }
        }
        feed.done(&c, queue.buffer(id), service);
        Ok(id)
    };
    loop {
        let now = Instant::now();
        if !counting && now >= from {
            counting = true;
            feed.counting();
        }
        if now >= deadline || halted {
            break;
        }
        let mut issued = false;
        while next <= now && !halted {
            let Some(id) = free.pop() else { break };
            let Some(request) = feed.next(id, queue.buffer(id)) else {
                free.push(id);
                halted = true;
                break;
            };
            queue.queue(request)?;
            let stamp = Stamp::now();
            times.issue(id, stamp);
            intended[id] = next;
            if next >= from {
                paced.issued += 1;
                let lag = Instant::from(stamp).saturating_duration_since(next);
                paced.lag.saturating_record(lag.as_nanos() as u64);
            }
            next = at(schedule.next_start());
            issued = true;
        }
        if issued {
            queue.submit()?;
        }
        let in_flight = queue.pending();
        paced.most_in_flight = paced.most_in_flight.max(in_flight);
        // The cap held an arrival back: timed while it lasts (counted part only).
        let capped = next <= now && free.is_empty();
        match (capped, capped_since) {
            (true, None) => capped_since = Some(now.max(from)),
            (false, Some(since)) => {
                paced.capped_ns += now.saturating_duration_since(since).as_nanos() as u64;
                capped_since = None;
            }
            _ => {}
        }
        while now >= next_sample && next_sample < deadline {
            // Arrivals due and not issued: exact for uniform arrivals, the expectation for
            // Poisson ones.
            let waiting = if next <= now {
                (now - next).as_nanos() as f64 / schedule.gap_ns() + 1.0
            } else {
                0.0
            };
            paced.backlog.push(in_flight as u64 + waiting as u64);
            next_sample += every;
        }
        // Woken at least every WAKE_EVERY, so a Ctrl-C (or a sibling's failure) stops a slow
        // rate at once: a sleep does not end on a signal.
        let wake = if free.is_empty() {
            deadline
        } else {
            next.min(deadline)
        }
        .min(now + WAKE_EVERY);
        done.clear();
        if in_flight > 0 {
            queue.reap_until(&mut done, wake)?;
        } else {
            crate::measure::inflight::sleep_until(wake, crate::measure::inflight::SPIN);
        }
        let now = Instant::now();
        for c in done.drain(..) {
            let id = reaped(c, queue, feed, &mut paced, times, &intended, now)?;
            free.push(id);
        }
        halted = halted || feed.halted();
    }
    if let Some(since) = capped_since {
        paced.capped_ns += deadline.saturating_duration_since(since).as_nanos() as u64;
    }
    while queue.pending() > 0 {
        done.clear();
        queue.reap(&mut done)?;
        let now = Instant::now();
        for c in done.drain(..) {
            reaped(c, queue, feed, &mut paced, times, &intended, now)?;
        }
    }
    // The arrivals of the window never issued: each waited at least until now. Counted
    // without walking the schedule (a rate of millions a second far beyond the device would
    // leave millions): the arrivals of [start, deadline) are their span over the mean gap
    // (exact for uniform arrivals, the expectation for Poisson ones), spread evenly over it,
    // and their waits recorded in UNISSUED_STEPS groups.
    if !halted && next < deadline {
        let now = Instant::now();
        let start = next.max(from);
        let span = deadline.saturating_duration_since(start).as_nanos() as f64;
        let count = (span / schedule.gap_ns()).ceil().max(1.0) as u64;
        paced.unissued = count;
        let groups = count.min(UNISSUED_STEPS);
        for g in 0..groups {
            // The middle arrival of group g, and the arrivals the group holds.
            let (lo, hi) = (count * g / groups, count * (g + 1) / groups);
            let mid = (lo + hi) as f64 / 2.0 * schedule.gap_ns();
            let arrived = start + Duration::from_nanos(mid as u64);
            let ns = now.saturating_duration_since(arrived).as_nanos() as u64;
            paced.response.saturating_record_n(ns.max(1), hi - lo);
        }
    }
    Ok(paced)
}

/// How often the paced loop wakes at least, to see a Ctrl-C or a sibling's failure.
const WAKE_EVERY: Duration = Duration::from_millis(50);

/// The groups the waits of the arrivals never issued are recorded in (see [`run_paced`]).
const UNISSUED_STEPS: u64 = 1024;
