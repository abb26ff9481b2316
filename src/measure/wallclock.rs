//! The wall clock that ranks on different hosts can compare: CLOCK_REALTIME, in seconds
//! since the epoch. Durations stay on the monotonic clock ([`super::timer`]); this one only
//! places the starts and ends of `mpi`'s phases on one time line, as IOR does.

/// Seconds since the Unix epoch on this host's real-time clock (CLOCK_REALTIME).
pub fn now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the struct we own; CLOCK_REALTIME
    // exists on every Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_real_time_clock_reads_a_date_after_2020_and_does_not_go_back_in_a_moment() {
        let a = super::now();
        let b = super::now();
        assert!(a > 1.577e9, "{a}");
        assert!(b >= a - 1.0, "{a} {b}");
    }
}
