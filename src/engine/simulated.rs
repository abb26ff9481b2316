//! A simulated device for the queue loop: `servers` servers, each taking exactly `service`
//! per request, first come first served, moving no bytes (the `null` engine with a service
//! time). Queueing theory knows its latencies exactly (M/D/1, M/D/c under Poisson
//! arrivals), so the open-loop harness can be checked against it; it is reached only through
//! a test hook ([`crate::hooks::simulated_device`]).

use super::buffer::AlignedBuffer;
use super::queue::{Completion, Queue, Request, Slot, free_buffer, release, slots, take};
use anyhow::Result;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How close to a completion's moment the device spins rather than sleeps: a wake-up's
/// p99 (its service time must be exact; its CPU is a test's).
const EXACT: Duration = Duration::from_micros(200);

/// The simulated device.
pub struct Simulated {
    slots: Vec<Slot>,
    /// When each server is next free.
    free_at: Vec<Instant>,
    service: Duration,
    /// Requests in flight with their completion times, in the order they complete (first
    /// come, first served with one service time: the order they were queued in).
    flight: VecDeque<(Instant, Request)>,
}

impl Simulated {
    /// A device of `servers` servers taking `service` each, one slot per buffer.
    pub fn new(buffers: Vec<AlignedBuffer>, servers: usize, service: Duration) -> Self {
        let now = Instant::now();
        Self {
            slots: slots(buffers),
            free_at: vec![now; servers.max(1)],
            service,
            flight: VecDeque::new(),
        }
    }

    /// Moves every request complete by now into `done`.
    fn collect(&mut self, done: &mut Vec<Completion>) {
        let now = Instant::now();
        while let Some(&(at, request)) = self.flight.front() {
            if at > now {
                break;
            }
            self.flight.pop_front();
            let request = release(&mut self.slots, request.id);
            done.push(Completion::made(request, Ok(request.len)));
        }
    }
}

impl Queue for Simulated {
    fn depth(&self) -> usize {
        self.slots.len()
    }

    fn buffer(&mut self, id: usize) -> &mut [u8] {
        free_buffer(&mut self.slots, id)
    }

    fn queue(&mut self, request: Request) -> Result<()> {
        take(&mut self.slots, &request)?.request = Some(request);
        let now = Instant::now();
        // The server free first takes it, when it is free (or now).
        let server = (0..self.free_at.len())
            .min_by_key(|&i| self.free_at[i])
            .expect("one server at least");
        let done_at = self.free_at[server].max(now) + self.service;
        self.free_at[server] = done_at;
        // With one service time, a request queued later never completes earlier.
        self.flight.push_back((done_at, request));
        Ok(())
    }

    fn submit(&mut self) -> Result<()> {
        Ok(())
    }

    fn reap(&mut self, done: &mut Vec<Completion>) -> Result<()> {
        if let Some(&(at, _)) = self.flight.front() {
            crate::measure::inflight::sleep_until(at, EXACT);
        }
        self.collect(done);
        Ok(())
    }

    fn reap_until(&mut self, done: &mut Vec<Completion>, deadline: Instant) -> Result<()> {
        if let Some(&(at, _)) = self.flight.front() {
            crate::measure::inflight::sleep_until(at.min(deadline), EXACT);
        }
        self.collect(done);
        Ok(())
    }

    fn pending(&self) -> usize {
        self.flight.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::Op;

    fn request(id: usize) -> Request {
        Request {
            id,
            op: Op::Read,
            offset: 0,
            len: 512,
        }
    }

    #[test]
    fn one_server_serves_in_turn_and_two_serve_together() {
        for (servers, least_ms) in [(1usize, 30u64), (2, 20)] {
            let buffers = (0..4).map(|_| AlignedBuffer::new(512)).collect();
            let mut q = Simulated::new(buffers, servers, Duration::from_millis(10));
            let start = Instant::now();
            for id in 0..3 {
                q.queue(request(id)).unwrap();
            }
            let mut done = Vec::new();
            while q.pending() > 0 {
                q.reap(&mut done).unwrap();
            }
            let took = start.elapsed();
            assert_eq!(done.len(), 3);
            let ids: Vec<usize> = done.iter().map(|c| c.request.id).collect();
            assert_eq!(ids, [0, 1, 2], "first come, first served");
            // Three requests of 10 ms: 30 ms on one server, 20 ms on two (never less).
            assert!(
                took >= Duration::from_millis(least_ms),
                "{servers} server(s): {took:?}"
            );
        }
    }

    #[test]
    fn a_wait_with_a_deadline_before_the_next_completion_comes_back_empty() {
        let buffers = vec![AlignedBuffer::new(512)];
        let mut q = Simulated::new(buffers, 1, Duration::from_secs(5));
        q.queue(request(0)).unwrap();
        let mut done = Vec::new();
        q.reap_until(&mut done, Instant::now() + Duration::from_millis(1))
            .unwrap();
        assert!(done.is_empty());
        assert_eq!(q.pending(), 1);
    }
}
