//! Pressure stall information, from `/proc/pressure/{cpu,io,memory}`: how long some task on
//! the machine waited for the CPU, for I/O or for memory during a run. The `some` line's
//! `total` (microseconds, cumulative) read before and after gives the exact stall over the
//! run; `avg10` is the kernel's own 10-second average at the end. Where the files do not
//! exist (containers without them, kernels before 4.20 or built without PSI) there is
//! nothing to read and nothing is said.

use serde::{Deserialize, Serialize};

/// A resource the kernel tracks stalls on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// Runnable tasks waited for a CPU.
    Cpu,
    /// Tasks waited for I/O to complete.
    Io,
    /// Tasks waited for memory (reclaim, refaults, swap).
    Memory,
}

impl Resource {
    /// Every resource, in the order of [`Pressure`]'s fields.
    pub const ALL: [Resource; 3] = [Resource::Cpu, Resource::Io, Resource::Memory];

    /// The file that holds its figures.
    pub fn path(self) -> &'static str {
        match self {
            Resource::Cpu => "/proc/pressure/cpu",
            Resource::Io => "/proc/pressure/io",
            Resource::Memory => "/proc/pressure/memory",
        }
    }
}

/// The `some` line of a pressure file: at least one task stalled on the resource.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Some10 {
    /// Percent of the last 10 seconds with a stall.
    pub avg10: f64,
    /// Microseconds with a stall since boot.
    pub total_us: u64,
}

/// Parses the `some` line of a pressure file's text
/// (`some avg10=0.00 avg60=0.00 avg300=0.00 total=123`).
pub fn parse_some(text: &str) -> Option<Some10> {
    let line = text.lines().find(|l| l.starts_with("some "))?;
    let field = |name: &str| {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
    };
    Some(Some10 {
        avg10: field("avg10")?.parse().ok()?,
        total_us: field("total")?.parse().ok()?,
    })
}

/// The stall on one resource over one run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Stall {
    /// Microseconds in which at least one task on the machine waited for the resource.
    pub stalled_us: u64,
    /// That time as a share of the run's wall time (0 to 1).
    pub share: f64,
    /// The kernel's `some avg10` at the end of the run, in percent.
    pub avg10: f64,
}

/// The stalls on each resource over one run; a resource whose file is missing is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct Pressure {
    /// Waiting for a CPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Stall>,
    /// Waiting for I/O.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io: Option<Stall>,
    /// Waiting for memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<Stall>,
}

impl Pressure {
    /// The stall on `resource`, if it was read.
    pub fn get(&self, resource: Resource) -> Option<Stall> {
        match resource {
            Resource::Cpu => self.cpu,
            Resource::Io => self.io,
            Resource::Memory => self.memory,
        }
    }

    /// The stall between two readings `before` and `after` of each resource over
    /// `seconds` of wall time.
    pub fn between(before: [Option<Some10>; 3], after: [Option<Some10>; 3], seconds: f64) -> Self {
        let stall = |i: usize| {
            let (b, a) = (before[i]?, after[i]?);
            let stalled_us = a.total_us.saturating_sub(b.total_us);
            let share = if seconds > 0.0 {
                (stalled_us as f64 / 1e6 / seconds).clamp(0.0, 1.0)
            } else {
                0.0
            };
            Some(Stall {
                stalled_us,
                share,
                avg10: a.avg10,
            })
        };
        Self {
            cpu: stall(0),
            io: stall(1),
            memory: stall(2),
        }
    }
}

/// A reading of every pressure file, taken before a run.
#[derive(Debug, Clone, Copy)]
pub struct PressureProbe {
    before: [Option<Some10>; 3],
}

fn read_all() -> [Option<Some10>; 3] {
    Resource::ALL.map(|r| {
        std::fs::read_to_string(r.path())
            .ok()
            .and_then(|t| parse_some(&t))
    })
}

impl PressureProbe {
    /// Reads the files; `None` when none of them can be read.
    pub fn start() -> Option<Self> {
        let before = read_all();
        before
            .iter()
            .any(Option::is_some)
            .then_some(Self { before })
    }

    /// The stalls since [`PressureProbe::start`], over `seconds` of wall time.
    pub fn finish(&self, seconds: f64) -> Pressure {
        Pressure::between(self.before, read_all(), seconds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CPU: &str = "some avg10=35.20 avg60=12.00 avg300=3.10 total=123456789\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";

    #[test]
    fn the_some_line_gives_its_ten_second_average_and_total() {
        assert_eq!(
            parse_some(CPU),
            Some(Some10 {
                avg10: 35.2,
                total_us: 123_456_789
            })
        );
        assert_eq!(
            parse_some("some avg10=0.00 avg60=0.00 avg300=0.00 total=123"),
            Some(Some10 {
                avg10: 0.0,
                total_us: 123
            })
        );
    }

    #[test]
    fn a_file_without_a_some_line_or_with_garbage_gives_nothing() {
        assert_eq!(
            parse_some("full avg10=0.00 avg60=0.00 avg300=0.00 total=9"),
            None
        );
        assert_eq!(
            parse_some("some avg10=x avg60=0.00 avg300=0.00 total=9"),
            None
        );
        assert_eq!(parse_some(""), None);
    }

    #[test]
    fn the_stall_is_the_difference_of_totals_over_the_wall_time() {
        let at = |total_us| {
            Some(Some10 {
                avg10: 1.5,
                total_us,
            })
        };
        let p = Pressure::between(
            [at(1_000_000), None, at(0)],
            [at(1_350_000), None, at(0)],
            1.0,
        );
        let cpu = p.cpu.expect("both readings present");
        assert_eq!(cpu.stalled_us, 350_000);
        assert!((cpu.share - 0.35).abs() < 1e-12);
        assert_eq!(p.io, None, "a missing file stays missing");
        assert_eq!(p.memory.map(|m| m.share), Some(0.0));
        // A counter that seems to go back (never, but) and a zero wall time give no share.
        let back = Pressure::between([at(9), None, None], [at(5), None, None], 0.0);
        assert_eq!(back.cpu.map(|c| (c.stalled_us, c.share)), Some((0, 0.0)));
    }

    #[test]
    fn this_machine_has_pressure_files_or_says_it_has_none() {
        match PressureProbe::start() {
            Some(p) => {
                let after = p.finish(0.001);
                assert!(Resource::ALL.iter().any(|r| after.get(*r).is_some()));
            }
            None => eprintln!("skipped: no /proc/pressure on this machine"),
        }
    }
}
