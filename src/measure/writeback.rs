//! Write-back cliffs: the kernel's dirty limits (`/proc/sys/vm/dirty_*`, ratios turned into
//! bytes against `MemAvailable`, as the kernel does against its "dirtyable" memory,
//! approximately) and the check that says why a write left its steady state, chosen by the
//! numbers at the interval where it did: Dirty+Writeback within [`NEAR_LIMIT`] of the dirty
//! limit, or past the point where the kernel starts to slow writers (half-way between the
//! background limit and the dirty limit, `dirty_freerun_ceiling` in mm/page-writeback.c), or
//! far from both while the device's own write rate fell too, or none of these ("cause not
//! seen"). The check is a small typed result (`name`, `verdict`, `evidence`).

use super::steady::{After, Steadiness, SteadyState};
use super::verdict;
use crate::units::{MIB, format_size};
use serde::{Deserialize, Serialize};

/// Dirty+Writeback "reached" the dirty limit when within this share under it: 10%.
pub const NEAR_LIMIT: f64 = 0.10;

/// The dirty limits in force when a write began.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirtyLimits {
    /// `vm.dirty_ratio`, percent of dirtyable memory (used when `dirty_bytes` is 0).
    pub dirty_ratio_percent: u64,
    /// `vm.dirty_background_ratio`, percent.
    pub dirty_background_ratio_percent: u64,
    /// `vm.dirty_bytes` (0: the ratio applies).
    pub dirty_bytes: u64,
    /// `vm.dirty_background_bytes` (0: the ratio applies).
    pub dirty_background_bytes: u64,
    /// `MemAvailable`, standing for the kernel's dirtyable memory.
    pub available_bytes: u64,
    /// The dirty limit in bytes: writers are held to the device's pace here.
    pub limit_bytes: u64,
    /// The background limit in bytes: flushing starts here.
    pub background_bytes: u64,
}

impl DirtyLimits {
    /// The limits from the settings, as `domain_dirty_limits` computes them: bytes when set,
    /// else the ratio of available memory; a background limit not under the limit is half
    /// of it.
    pub fn from_settings(
        ratio: u64,
        background_ratio: u64,
        bytes: u64,
        background_bytes: u64,
        available: u64,
    ) -> Self {
        let of = |r: u64| (available as u128 * r as u128 / 100) as u64;
        let limit = if bytes > 0 { bytes } else { of(ratio) };
        let mut background = if background_bytes > 0 {
            background_bytes
        } else {
            of(background_ratio)
        };
        if background >= limit {
            background = limit / 2;
        }
        Self {
            dirty_ratio_percent: ratio,
            dirty_background_ratio_percent: background_ratio,
            dirty_bytes: bytes,
            dirty_background_bytes: background_bytes,
            available_bytes: available,
            limit_bytes: limit,
            background_bytes: background,
        }
    }

    /// The limits of this machine now (`None` where `/proc/sys/vm` or `/proc/meminfo` cannot
    /// be read).
    pub fn read() -> Option<Self> {
        let vm = |name: &str| -> Option<u64> {
            std::fs::read_to_string(format!("/proc/sys/vm/{name}"))
                .ok()?
                .trim()
                .parse()
                .ok()
        };
        Some(Self::from_settings(
            vm("dirty_ratio")?,
            vm("dirty_background_ratio")?,
            vm("dirty_bytes")?,
            vm("dirty_background_bytes")?,
            super::env::meminfo_bytes("MemAvailable")?,
        ))
    }

    /// Where the kernel starts to slow writers down: half-way between the two limits.
    pub fn throttle_bytes(&self) -> u64 {
        (self.background_bytes + self.limit_bytes) / 2
    }

    /// How the limit was set: `20% of 23.1 GiB available` or `vm.dirty_bytes`.
    pub fn limit_source(&self) -> String {
        if self.dirty_bytes > 0 {
            "vm.dirty_bytes".to_string()
        } else {
            format!(
                "{}% of {} available memory",
                self.dirty_ratio_percent,
                format_size(self.available_bytes)
            )
        }
    }
}

/// What the write-back check found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CliffVerdict {
    /// The write never left a steady state downwards.
    NoCliff,
    /// No steady state to leave (too short, or never steady).
    NoSteadyState,
    /// Dirty+Writeback was at the dirty limit where it fell.
    DirtyLimit,
    /// Dirty+Writeback was past the point where the kernel slows writers, short of the limit.
    DirtyThrottle,
    /// Dirty was far from both, and the device's own write rate fell too.
    DeviceSlowed,
    /// None of the above was seen in the numbers.
    CauseNotSeen,
}

/// A check as data: what was checked, what it found, and the numbers that say so.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What was checked: `write_back_cliff`.
    pub name: String,
    /// What it found.
    pub verdict: CliffVerdict,
    /// The sentence the numbers support.
    pub evidence: String,
}

/// What the check reads of one interval.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Point {
    /// Bytes the program moved per second.
    pub bytes_per_second: f64,
    /// Bytes written before the interval began.
    pub bytes_before: u64,
    /// Seconds from the start to the interval's beginning.
    pub start_seconds: f64,
    /// Dirty + Writeback at the interval's end.
    pub dirty: Option<u64>,
    /// Bytes per second the device wrote (all processes).
    pub device_bytes_per_second: Option<f64>,
}

fn mib(bps: f64) -> String {
    format!("{:.1} MiB/s", bps / MIB as f64)
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// The device's write rates of `points` as repeats.
fn device_figure(points: &[Point]) -> Option<verdict::Figure> {
    let v: Vec<f64> = points
        .iter()
        .map(|p| p.device_bytes_per_second)
        .collect::<Option<_>>()?;
    if v.is_empty() {
        return None;
    }
    let mut s = v.clone();
    s.sort_by(f64::total_cmp);
    Some(verdict::Figure {
        median: s[s.len() / 2],
        min: s[0],
        max: s[s.len() - 1],
        n: s.len(),
    })
}

/// Why a write left its steady state (`steady`, found over `points`), as a check.
pub fn write_back(steady: &SteadyState, points: &[Point], limits: Option<&DirtyLimits>) -> Finding {
    let finding = |verdict, evidence: String| Finding {
        name: "write_back_cliff".to_string(),
        verdict,
        evidence,
    };
    let peak = points.iter().filter_map(|p| p.dirty).max();
    let peak_text = match (peak, limits) {
        (Some(d), Some(l)) => format!(
            " (Dirty+Writeback peaked at {}; the dirty limit is {}, {})",
            gib(d),
            gib(l.limit_bytes),
            l.limit_source()
        ),
        _ => String::new(),
    };
    match steady.verdict {
        Steadiness::TooShort | Steadiness::Never => {
            return finding(
                CliffVerdict::NoSteadyState,
                format!("no steady state to leave, so no cliff can be told{peak_text}"),
            );
        }
        Steadiness::Steady => {
            return finding(
                CliffVerdict::NoCliff,
                format!("no cliff: the write stayed steady to the end{peak_text}"),
            );
        }
        Steadiness::Left => {}
    }
    let (Some(at), Some(from)) = (steady.until_interval, steady.from_interval) else {
        return finding(CliffVerdict::NoCliff, "no cliff".to_string());
    };
    if steady.after != Some(After::Below) || at >= points.len() {
        return finding(
            CliffVerdict::NoCliff,
            format!(
                "no cliff: the write left its steady state at {:.0} s but did not stay below it{peak_text}",
                points.get(at).map_or(0.0, |p| p.start_seconds)
            ),
        );
    }
    let p = points[at];
    let when = format!(
        "at {:.0} s, after {} written, the write fell from {} to {}",
        p.start_seconds,
        gib(p.bytes_before),
        mib(steady.level.unwrap_or(0.0)),
        mib(steady.after_level.unwrap_or(0.0))
    );
    // Dirty+Writeback where it fell: the higher of the intervals either side of the edge.
    let dirty = [at.checked_sub(1), Some(at)]
        .into_iter()
        .flatten()
        .filter_map(|i| points[i].dirty)
        .max();
    let before = device_figure(&points[from..at]);
    let after = device_figure(&points[at..]);
    let device_fell = matches!(
        (before, after),
        (Some(b), Some(a)) if matches!(verdict::relate(a, b), verdict::Relation::Below(_))
    );
    let device_after = after.map(|a| a.median);
    let (Some(d), Some(l)) = (dirty, limits) else {
        return finding(
            CliffVerdict::CauseNotSeen,
            format!("{when}; cause not seen: Dirty or the dirty limits could not be read"),
        );
    };
    if d as f64 >= (1.0 - NEAR_LIMIT) * l.limit_bytes as f64 {
        let agree = match device_after {
            Some(dev) if verdict::same(dev, steady.after_level.unwrap_or(0.0)) => format!(
                " (the device wrote {} after it, the program {})",
                mib(dev),
                mib(steady.after_level.unwrap_or(0.0))
            ),
            _ => String::new(),
        };
        return finding(
            CliffVerdict::DirtyLimit,
            format!(
                "{when}: Dirty+Writeback reached {}, the dirty limit ({}, {}): from here writes run at the device's speed{agree}",
                gib(d),
                gib(l.limit_bytes),
                l.limit_source()
            ),
        );
    }
    if d >= l.throttle_bytes() {
        return finding(
            CliffVerdict::DirtyThrottle,
            format!(
                "{when}: Dirty+Writeback reached {}, past {} (half-way between the background limit {} and the dirty limit {}), where the kernel starts to slow writers to the device's pace",
                gib(d),
                gib(l.throttle_bytes()),
                gib(l.background_bytes),
                gib(l.limit_bytes)
            ),
        );
    }
    if device_fell {
        return finding(
            CliffVerdict::DeviceSlowed,
            format!(
                "{when}: Dirty+Writeback was {}, far from the dirty limit {}; the device's own write rate fell too (from {} to {}): the device itself slowed",
                gib(d),
                gib(l.limit_bytes),
                mib(before.map_or(0.0, |b| b.median)),
                mib(device_after.unwrap_or(0.0))
            ),
        );
    }
    finding(
        CliffVerdict::CauseNotSeen,
        format!(
            "{when}; cause not seen: Dirty+Writeback was {}, far from the dirty limit {} ({}), and the device's own write rate did not fall",
            gib(d),
            gib(l.limit_bytes),
            l.limit_source()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::steady::detect;

    const GIB: u64 = 1 << 30;

    /// 20% of 23 GiB: a limit of 4.6 GiB, background 2.3 GiB, throttling from 3.45 GiB.
    fn limits() -> DirtyLimits {
        DirtyLimits::from_settings(20, 10, 0, 0, 23 * GIB)
    }

    /// A write at `fast` MiB/s for `n` intervals, then `slow` for `m`; Dirty climbs by what
    /// the program wrote beyond what the device did, up to `dirty_top` at the edge.
    fn write(fast: f64, n: usize, slow: f64, m: usize, dirty_top: u64, device: f64) -> Vec<Point> {
        let mut points = Vec::new();
        let mut total = 0u64;
        for i in 0..n + m {
            let rate = if i < n { fast } else { slow } * MIB as f64;
            let dirty = if i < n {
                dirty_top / n as u64 * (i as u64 + 1)
            } else {
                dirty_top
            };
            points.push(Point {
                bytes_per_second: rate,
                bytes_before: total,
                start_seconds: i as f64,
                dirty: Some(dirty),
                device_bytes_per_second: Some(device * MIB as f64),
            });
            total += rate as u64;
        }
        points
    }

    fn check(points: &[Point], l: Option<&DirtyLimits>) -> Finding {
        let v: Vec<f64> = points.iter().map(|p| p.bytes_per_second).collect();
        write_back(&detect(&v), points, l)
    }

    #[test]
    fn ratios_become_bytes_of_available_memory_and_bytes_settings_win() {
        let l = limits();
        assert_eq!(l.limit_bytes, 23 * GIB / 5);
        assert_eq!(l.background_bytes, 23 * GIB / 10);
        let b = DirtyLimits::from_settings(0, 0, 2 * GIB, 3 * GIB, 23 * GIB);
        assert_eq!(b.limit_bytes, 2 * GIB);
        assert_eq!(
            b.background_bytes, GIB,
            "a background above the limit is half of it"
        );
        assert_eq!(b.limit_source(), "vm.dirty_bytes");
    }

    #[test]
    fn a_cliff_with_dirty_at_the_limit_blames_the_dirty_limit() {
        let l = limits();
        let points = write(1900.0, 10, 150.0, 8, l.limit_bytes - GIB / 10, 150.0);
        let f = check(&points, Some(&l));
        assert_eq!(f.verdict, CliffVerdict::DirtyLimit, "{}", f.evidence);
        assert!(f.evidence.contains("at 10 s"), "{}", f.evidence);
        assert!(f.evidence.contains("the dirty limit"), "{}", f.evidence);
        assert!(f.evidence.contains("20% of"), "{}", f.evidence);
        assert!(
            f.evidence.contains("the device wrote 150.0 MiB/s"),
            "{}",
            f.evidence
        );
    }

    #[test]
    fn a_cliff_with_dirty_far_from_the_limit_does_not_blame_it() {
        let l = limits();
        // Dirty stayed at 0.5 GiB: an SSD whose own cache filled, the device slowing too.
        let mut points = write(1900.0, 10, 150.0, 8, GIB / 2, 150.0);
        for p in &mut points[..10] {
            p.device_bytes_per_second = Some(1900.0 * MIB as f64);
        }
        let f = check(&points, Some(&l));
        assert_eq!(f.verdict, CliffVerdict::DeviceSlowed, "{}", f.evidence);
        assert!(
            !f.evidence.contains("from here writes run"),
            "{}",
            f.evidence
        );
        // And when the device's rate did not fall either, no cause is made up.
        let points = write(1900.0, 10, 150.0, 8, GIB / 2, 150.0);
        let f = check(&points, Some(&l));
        assert_eq!(f.verdict, CliffVerdict::CauseNotSeen, "{}", f.evidence);
        assert!(f.evidence.contains("cause not seen"), "{}", f.evidence);
    }

    #[test]
    fn a_cliff_past_the_throttling_point_but_short_of_the_limit_says_so() {
        let l = limits();
        let points = write(1900.0, 10, 150.0, 8, 4 * GIB, 150.0);
        let f = check(&points, Some(&l));
        assert_eq!(f.verdict, CliffVerdict::DirtyThrottle, "{}", f.evidence);
    }

    #[test]
    fn a_write_that_stays_steady_has_no_cliff_even_with_dirty_at_the_limit() {
        let l = limits();
        let points = write(150.0, 12, 150.0, 0, l.limit_bytes, 150.0);
        let f = check(&points, Some(&l));
        assert_eq!(f.verdict, CliffVerdict::NoCliff, "{}", f.evidence);
        assert!(f.evidence.starts_with("no cliff"), "{}", f.evidence);
    }

    #[test]
    fn a_short_write_has_no_steady_state_to_leave() {
        let points = write(150.0, 3, 150.0, 0, GIB, 150.0);
        let f = check(&points, Some(&limits()));
        assert_eq!(f.verdict, CliffVerdict::NoSteadyState);
    }

    #[test]
    fn unreadable_limits_leave_the_cause_unseen() {
        let points = write(1900.0, 10, 150.0, 8, GIB, 150.0);
        let f = check(&points, None);
        assert_eq!(f.verdict, CliffVerdict::CauseNotSeen);
    }
}
