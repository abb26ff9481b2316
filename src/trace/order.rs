//! In what order a file's data was accessed: each read or write (of at least one byte) is
//! compared with the one before it on the same file, and the counts decide the label —
//! sequential, descending, strided (a constant step, forward or backward), rising or
//! falling with gaps, random, or partly in order. The rule, with its thresholds here and
//! nowhere else, is documented in GUIDE.md (`trace`).

use serde::{Deserialize, Serialize};

/// The share of transitions that must agree for a run to get a label.
pub const MOSTLY: f64 = 0.9;
/// At most this share going one way (forward or backward) is no order at all.
pub const NO_ORDER: f64 = 0.6;
/// Accesses needed before an order is named.
pub const AT_LEAST: u64 = 8;

/// Counts over the transitions from one access of a file to the next.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Order {
    /// Transitions counted (accesses after the first).
    pub transitions: u64,
    /// Accesses that started where the one before ended (sequential).
    pub contiguous: u64,
    /// Accesses that ended where the one before started (backward, without gaps).
    pub backward_contiguous: u64,
    /// Accesses whose start moved by the same distance as the transition before.
    pub same_step: u64,
    /// Accesses that started above the one before.
    pub forward: u64,
    /// Accesses that started below the one before.
    pub backward: u64,
    /// The last distance seen repeated (bytes; negative: backward).
    pub step: i64,
    /// The previous access: start, end, and the step that led to it.
    #[serde(skip)]
    last: Option<(u64, u64, Option<i64>)>,
}

/// What the counts say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Each access starts where the one before ended.
    Sequential,
    /// Each access ends where the one before started.
    Descending,
    /// A constant step between starts (0: the same offset each time).
    Strided(i64),
    /// Mostly forward, with gaps of varying size.
    Rising,
    /// Mostly backward, with gaps of varying size.
    Falling,
    /// Neither way dominates.
    Random,
    /// Between random and ordered.
    Partly,
}

impl Order {
    /// Counts an access of `len` bytes at `offset`.
    pub fn add(&mut self, offset: u64, len: u64) {
        let end = offset.saturating_add(len);
        let mut step = None;
        if let Some((start, last_end, last_step)) = self.last {
            let d = offset.wrapping_sub(start) as i64;
            step = Some(d);
            self.transitions += 1;
            self.contiguous += u64::from(offset == last_end);
            self.backward_contiguous += u64::from(end == start && len > 0);
            self.forward += u64::from(offset > start);
            self.backward += u64::from(offset < start);
            if last_step == Some(d) {
                self.same_step += 1;
                self.step = d;
            }
        }
        self.last = Some((offset, end, step));
    }

    /// Whether nothing was counted (the field is then left out of JSON).
    pub fn is_empty(&self) -> bool {
        self.transitions == 0
    }

    /// The order the counts show, or `None` with fewer than [`AT_LEAST`] accesses.
    pub fn kind(&self) -> Option<Kind> {
        let n = self.transitions;
        if n + 1 < AT_LEAST {
            return None;
        }
        let share = |c: u64| c as f64 / n as f64;
        // The first transition has no step before it to repeat.
        let steps = share(self.same_step) * n as f64 / (n - 1).max(1) as f64;
        Some(if share(self.contiguous) >= MOSTLY {
            Kind::Sequential
        } else if share(self.backward_contiguous) >= MOSTLY {
            Kind::Descending
        } else if steps >= MOSTLY {
            Kind::Strided(self.step)
        } else if share(self.forward) >= MOSTLY {
            Kind::Rising
        } else if share(self.backward) >= MOSTLY {
            Kind::Falling
        } else if share(self.forward).max(share(self.backward)) <= NO_ORDER {
            Kind::Random
        } else {
            Kind::Partly
        })
    }
}

impl Kind {
    /// The words the text report uses.
    pub fn label(self) -> String {
        match self {
            Self::Sequential => "in rising order (sequential)".into(),
            Self::Descending => {
                "in falling order (descending: each access ends where the one before began)".into()
            }
            Self::Strided(0) => "at the same offset each time (strided, step 0)".into(),
            Self::Strided(s) => format!(
                "strided: each access {} {} from the one before",
                crate::units::format_size(s.unsigned_abs()),
                if s > 0 { "forward" } else { "backward" }
            ),
            Self::Rising => "in rising order, with gaps of varying size".into(),
            Self::Falling => "in falling order, with gaps of varying size".into(),
            Self::Random => "in no order (random)".into(),
            Self::Partly => "partly in order".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(accesses: &[(u64, u64)]) -> Option<Kind> {
        let mut o = Order::default();
        for &(at, len) in accesses {
            o.add(at, len);
        }
        o.kind()
    }

    #[test]
    fn a_forward_run_without_gaps_is_sequential_even_with_varying_sizes() {
        let mut at = 0;
        let v: Vec<(u64, u64)> = (0..20u64)
            .map(|i| {
                let len = 100 + i * 7;
                let a = (at, len);
                at += len;
                a
            })
            .collect();
        assert_eq!(order(&v), Some(Kind::Sequential));
    }

    #[test]
    fn a_strictly_backward_read_is_descending_not_random() {
        let v: Vec<(u64, u64)> = (0..16u64).rev().map(|i| (i * 4096, 4096)).collect();
        assert_eq!(order(&v), Some(Kind::Descending));
    }

    #[test]
    fn a_constant_step_is_strided_forward_or_backward_and_zero_is_one_offset() {
        let fwd: Vec<(u64, u64)> = (0..16u64).map(|i| (i * 3 * 4096, 4096)).collect();
        assert_eq!(order(&fwd), Some(Kind::Strided(3 * 4096)));
        let back: Vec<(u64, u64)> = (0..16u64).rev().map(|i| (i * 8192, 4096)).collect();
        assert_eq!(order(&back), Some(Kind::Strided(-8192)));
        let same: Vec<(u64, u64)> = (0..16u64).map(|_| (4096, 4096)).collect();
        assert_eq!(order(&same), Some(Kind::Strided(0)));
    }

    #[test]
    fn varying_gaps_one_way_are_rising_or_falling_and_a_shuffle_is_random() {
        let gaps = [1u64, 3, 2, 5, 1, 4, 2, 6, 3, 1, 2, 7];
        let mut at = 0;
        let rising: Vec<(u64, u64)> = gaps
            .iter()
            .map(|g| {
                at += g * 4096;
                (at, 4096)
            })
            .collect();
        assert_eq!(order(&rising), Some(Kind::Rising));
        let falling: Vec<(u64, u64)> = rising.iter().rev().copied().collect();
        assert_eq!(order(&falling), Some(Kind::Falling));
        let shuffle = [7u64, 2, 9, 0, 5, 11, 3, 8, 1, 10, 4, 6];
        let random: Vec<(u64, u64)> = shuffle.iter().map(|&i| (i * 4096, 4096)).collect();
        assert_eq!(order(&random), Some(Kind::Random));
        assert_eq!(order(&random[..5]), None, "too few to say");
    }
}
