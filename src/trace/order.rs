//! In what order a file's data was accessed: each read or write (of at least one byte) is
//! compared with the one before it on the same file, and the counts decide the label —
//! sequential, descending, strided (a constant step, forward or backward), rising or
//! falling with gaps, random, or partly in order. A label names what most accesses did
//! (the step the most transitions took, not the last one repeated) and, when not all of
//! them did it, says "mostly" with their share. The rule, with its thresholds here and
//! nowhere else, is documented in GUIDE.md (`trace`).

use serde::{Deserialize, Serialize};

/// The share of transitions that must agree for a run to get a label.
pub const MOSTLY: f64 = 0.9;
/// At most this share going one way (forward or backward) is no order at all.
pub const NO_ORDER: f64 = 0.6;
/// Accesses needed before an order is named.
pub const AT_LEAST: u64 = 8;
/// More than this share of transitions is a majority: below [`MOSTLY`], a label is still
/// given ("mostly ...", with the share) when one kind of transition is a majority.
pub const MAJORITY: f64 = 0.5;
/// Distinct steps counted exactly at once (a step taken by more than 1/`STEPS` of the
/// transitions is always among them; see [`Steps`]).
pub const STEPS: usize = 16;

/// The steps between accesses and how many transitions took each, for the [`STEPS`] most
/// taken: the Space-Saving count (Metwally et al.), which keeps every step taken by more
/// than 1/[`STEPS`] of the transitions and overstates a step's count by at most its
/// `over` (the count of the step it replaced).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Steps {
    /// (step in bytes, transitions counted for it, of which at most this many are another
    /// step's).
    pub counts: Vec<(i64, u64, u64)>,
}

impl Steps {
    /// Whether nothing was counted.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }

    /// Counts one transition of `step`.
    pub fn add(&mut self, step: i64) {
        if let Some(e) = self.counts.iter_mut().find(|e| e.0 == step) {
            e.1 += 1;
        } else if self.counts.len() < STEPS {
            self.counts.push((step, 1, 0));
        } else if let Some(min) = self.counts.iter_mut().min_by_key(|e| e.1) {
            *min = (step, min.1 + 1, min.1);
        }
    }

    /// The step most transitions took, and how many surely took it.
    pub fn top(&self) -> Option<(i64, u64)> {
        self.counts
            .iter()
            .max_by_key(|e| (e.1 - e.2, std::cmp::Reverse(e.0.unsigned_abs())))
            .map(|e| (e.0, e.1 - e.2))
    }
}

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
    /// The step most transitions took (bytes; negative: backward); in reports from before
    /// `steps` was counted, the last distance seen repeated.
    pub step: i64,
    /// The steps most taken and their counts (absent in older reports).
    #[serde(default, skip_serializing_if = "Steps::is_empty")]
    pub steps: Steps,
    /// The previous access: start, end, and the step that led to it.
    #[serde(skip)]
    last: Option<(u64, u64, Option<i64>)>,
}

/// What the counts say: a kind, and the share of transitions that showed it (1.0: all).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Label {
    /// The kind.
    pub kind: Kind,
    /// The share of transitions that did what the kind says.
    pub share: f64,
}

/// The kinds of order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Each access starts where the one before ended.
    Sequential,
    /// Each access ends where the one before started.
    Descending,
    /// A constant step between starts (0: the same offset each time): the step the most
    /// transitions took.
    Strided(i64),
    /// Forward, with gaps of varying size.
    Rising,
    /// Backward, with gaps of varying size.
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
            }
            self.steps.add(d);
            if let Some((top, _)) = self.steps.top() {
                self.step = top;
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
        self.label().map(|l| l.kind)
    }

    /// The order the counts show and the share of transitions that showed it, or `None`
    /// with fewer than [`AT_LEAST`] accesses: sequential, descending or strided where at
    /// least [`MOSTLY`] of the transitions showed it (in that order), else the one of them
    /// more than [`MAJORITY`] showed (the most shown); else rising or falling with gaps
    /// where at least [`MOSTLY`] went that way; else random or partly.
    pub fn label(&self) -> Option<Label> {
        let n = self.transitions;
        if n + 1 < AT_LEAST {
            return None;
        }
        let share = |c: u64| c as f64 / n as f64;
        let (step, step_count) = match self.steps.top() {
            Some(top) => top,
            // Reports from before the steps were counted: the repeats of the last step,
            // over the transitions that had one before them.
            None => (
                self.step,
                (self.same_step as f64 * n as f64 / (n - 1).max(1) as f64) as u64,
            ),
        };
        let exact = [
            (Kind::Sequential, self.contiguous),
            (Kind::Descending, self.backward_contiguous),
            (Kind::Strided(step), step_count),
        ];
        let label = |(kind, c): (Kind, u64)| Label {
            kind,
            share: share(c).min(1.0),
        };
        if let Some(&all) = exact.iter().find(|(_, c)| share(*c) >= MOSTLY) {
            return Some(label(all));
        }
        // The exact kind a majority showed (the most shown) before the loose ones, which
        // hold it: 70% strided by 8 KiB and 30% by 3 KiB is mostly strided, not "rising".
        // (Of equal counts the first: a sequential run of equal sizes is also strided.)
        if let Some(&most) = exact
            .iter()
            .rev()
            .filter(|(_, c)| share(*c) > MAJORITY)
            .max_by_key(|(_, c)| *c)
        {
            return Some(label(most));
        }
        for loose in [(Kind::Rising, self.forward), (Kind::Falling, self.backward)] {
            if share(loose.1) >= MOSTLY {
                return Some(label(loose));
            }
        }
        Some(
            if share(self.forward).max(share(self.backward)) <= NO_ORDER {
                Label {
                    kind: Kind::Random,
                    share: 1.0,
                }
            } else {
                Label {
                    kind: Kind::Partly,
                    share: 1.0,
                }
            },
        )
    }
}

impl Label {
    /// The words the text report uses: the kind's, with "mostly" and the share of
    /// transitions that showed it when not all did.
    pub fn text(self) -> String {
        let words = self.kind.label();
        if self.share >= 1.0 || matches!(self.kind, Kind::Random | Kind::Partly) {
            return words;
        }
        // Never rounded up to 100% (nor down to 0%).
        let percent = ((self.share * 100.0).floor() as u64).clamp(1, 99);
        format!("mostly {words} ({percent}% of the transitions)")
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

    fn label(accesses: &[(u64, u64)]) -> Option<Label> {
        let mut o = Order::default();
        for &(at, len) in accesses {
            o.add(at, len);
        }
        o.label()
    }

    /// `n` one-byte accesses one after the other from `at`.
    fn run(at: u64, n: u64) -> Vec<(u64, u64)> {
        (0..n).map(|i| (at + i, 1)).collect()
    }

    #[test]
    fn a_mostly_sequential_file_whose_last_accesses_repeat_a_jump_is_mostly_sequential() {
        // The review's case: 80% one-byte sequential, then a backward pass by 3 bytes, then
        // a long jump repeated at the end (the old rule named that last repeated step).
        let mut v = run(0, 8000);
        v.extend((0..1300u64).rev().map(|i| (i * 3, 1)));
        v.extend((0..700u64).map(|i| (i * 7919 % 200_000, 1)));
        let l = label(&v).unwrap();
        assert_eq!(l.kind, Kind::Sequential, "{l:?}");
        assert!((l.share - 0.8).abs() < 0.01, "{l:?}");
        let text = l.text();
        assert!(
            text.starts_with("mostly in rising order (sequential)"),
            "{text}"
        );
        assert!(text.contains("(79% of the transitions)"), "{text}");
        assert!(!text.contains("7.7 KiB"), "{text}");
    }

    #[test]
    fn a_stride_taken_by_most_transitions_is_named_not_the_minority_step_repeated_last() {
        // 70% strided by 8 KiB, then 30% strided by 3 KiB at the end: the label is 8 KiB.
        let mut v: Vec<(u64, u64)> = (0..700u64).map(|i| (i * 8192, 4096)).collect();
        v.extend((0..300u64).map(|i| ((1 << 30) + i * 3072, 1024)));
        let l = label(&v).unwrap();
        assert_eq!(l.kind, Kind::Strided(8192), "{l:?}");
        let text = l.text();
        assert!(
            text.starts_with("mostly strided: each access 8 KiB forward"),
            "{text}"
        );
        assert!(text.contains("69% of the transitions"), "{text}");
        // And the other way round: the minority first, the majority last.
        let mut w: Vec<(u64, u64)> = (0..300u64).map(|i| ((1 << 30) + i * 3072, 1024)).collect();
        w.extend((0..700u64).map(|i| (i * 8192, 4096)));
        assert_eq!(label(&w).unwrap().kind, Kind::Strided(8192));
    }

    #[test]
    fn every_access_doing_the_same_is_named_without_mostly() {
        let v: Vec<(u64, u64)> = (0..100u64).map(|i| (i * 4096, 4096)).collect();
        let l = label(&v).unwrap();
        assert_eq!((l.kind, l.share), (Kind::Sequential, 1.0));
        assert_eq!(l.text(), "in rising order (sequential)");
        // 95%: named, with its share.
        let mut m: Vec<(u64, u64)> = (0..95u64).map(|i| (i * 4096, 4096)).collect();
        m.extend((0..5u64).map(|i| ((1 << 30) * (i + 1), 4096)));
        let t = label(&m).unwrap().text();
        assert!(
            t.starts_with("mostly in rising order (sequential) ("),
            "{t}"
        );
    }

    #[test]
    fn a_minority_in_order_is_not_named_and_a_share_is_never_rounded_to_all() {
        // 40% sequential, the rest shuffled: no majority, no order.
        let mut v = run(0, 400);
        let shuffle = [7u64, 2, 9, 0, 5, 11, 3, 8, 1, 10, 4, 6];
        v.extend((0..600).map(|i| (10_000 + shuffle[i % 12] * 4096 + (i as u64 / 12) * 65536, 1)));
        let l = label(&v).unwrap();
        assert!(
            !matches!(l.kind, Kind::Sequential | Kind::Strided(_)),
            "{l:?}"
        );
        let near = Label {
            kind: Kind::Descending,
            share: 0.9999,
        };
        assert!(near.text().contains("(99% of"), "{}", near.text());
    }

    #[test]
    fn the_step_count_keeps_a_majority_step_that_first_appears_after_many_others() {
        let mut s = Steps::default();
        for i in 0..(STEPS as i64 * 4) {
            s.add(1000 + i);
        }
        for _ in 0..200 {
            s.add(8);
        }
        assert_eq!(s.top().map(|t| t.0), Some(8));
        assert!(s.top().unwrap().1 >= 200);
    }
}
