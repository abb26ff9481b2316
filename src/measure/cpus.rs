//! Each run of a repeated figure starts on the next CPU the process may use.
//!
//! Measured on this machine (bench/RESULTS.md): a warm 1 MiB sweep pinned to one vCPU ran
//! 6% faster than on the other, five sweeps each, interleaved; unpinned, a process tends to
//! stay where it started, so two processes measuring the same thing could disagree by the
//! gap between their CPUs, and a baseline saved on one CPU "regressed" when checked on the
//! other. Starting each run on the next CPU in turn puts that gap inside every figure's
//! spread, where the noise floor sees it, instead of between processes, where nothing can.
//!
//! The thread is moved, not held: its mask is set to the one CPU (the kernel migrates it
//! there at once) and put back, so the scheduler stays free to move it off a busy CPU and
//! threads a run starts inherit the whole mask.

/// The CPUs a repeated figure's runs rotate over, and the mask to put back.
pub struct Rotation {
    original: libc::cpu_set_t,
    cpus: Vec<usize>,
    next: usize,
}

impl Rotation {
    /// The calling thread's allowed CPUs; `None` where there is only one, or the mask
    /// cannot be read (then runs start wherever the scheduler puts them).
    pub fn new() -> Option<Rotation> {
        // SAFETY: cpu_set_t is plain data; an all-zero set is valid.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: the pointer and size describe `set`, which outlives the call.
        let rc =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if rc != 0 {
            return None;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `cpu` is below CPU_SETSIZE.
            .filter(|&cpu| unsafe { libc::CPU_ISSET(cpu, &set) })
            .collect();
        (cpus.len() > 1).then_some(Rotation {
            original: set,
            cpus,
            next: 0,
        })
    }

    /// Moves the calling thread to the next CPU in turn, leaving it free to move again.
    /// Returns the CPU it was sent to.
    pub fn start_run(&mut self) -> usize {
        let cpu = self.cpus[self.next % self.cpus.len()];
        self.next += 1;
        // SAFETY: as in `new`.
        let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `cpu` came from the allowed set, below CPU_SETSIZE.
        unsafe { libc::CPU_SET(cpu, &mut one) };
        set_mask(&one);
        set_mask(&self.original);
        cpu
    }
}

impl Drop for Rotation {
    fn drop(&mut self) {
        set_mask(&self.original);
    }
}

/// Best effort: a mask that cannot be set leaves the thread where it is.
fn set_mask(set: &libc::cpu_set_t) {
    // SAFETY: the pointer and size describe `set`, borrowed for the call.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), set) };
}

/// Where a repeated figure's runs start: on each allowed CPU in turn, or wherever the
/// scheduler puts them on a single-CPU process.
pub struct Starts(Option<Rotation>);

impl Starts {
    /// The rotation over the allowed CPUs.
    pub fn new() -> Starts {
        Starts(Rotation::new())
    }

    /// Called before each timed run.
    pub fn next(&mut self) {
        if let Some(r) = &mut self.0 {
            r.start_run();
        }
    }
}

impl Default for Starts {
    fn default() -> Self {
        Starts::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_start_on_each_allowed_cpu_in_turn_and_the_mask_is_put_back() {
        let Some(mut r) = Rotation::new() else {
            eprintln!("skipped: this process may use only one CPU");
            return;
        };
        let allowed = r.cpus.clone();
        for k in 0..2 * allowed.len() {
            let sent = r.start_run();
            assert_eq!(sent, allowed[k % allowed.len()]);
        }
        drop(r);
        let again = Rotation::new().expect("the mask was put back");
        assert_eq!(again.cpus, allowed);
    }
}
