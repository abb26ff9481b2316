//! The cost model of a block-size sweep: `time = calls × c_call + bytes / bandwidth`,
//! fitted by least squares on relative error (each point weighted by 1/time, so a 1-second
//! point and a 1-millisecond point count alike).

use serde::{Deserialize, Serialize};

/// The fitted model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CostModel {
    /// Seconds per system call (fixed cost, whatever its size).
    pub seconds_per_call: f64,
    /// Streaming bandwidth in bytes per second (the cost of each byte).
    pub bytes_per_second: f64,
}

/// One measured point: calls made, bytes moved, seconds taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// System calls.
    pub calls: f64,
    /// Bytes.
    pub bytes: f64,
    /// Seconds.
    pub seconds: f64,
}

/// Fits the model; `None` with fewer than two usable points or when the fit is not
/// physical (a negative cost).
pub fn fit(points: &[Point]) -> Option<CostModel> {
    // Minimise Σ (1 - c·n/t - k·b/t)²: normal equations of a two-variable regression.
    let (mut aa, mut ab, mut bb, mut ay, mut by) = (0.0, 0.0, 0.0, 0.0, 0.0);
    let mut used = 0;
    for p in points.iter().filter(|p| p.seconds > 0.0 && p.calls > 0.0) {
        let (a, b) = (p.calls / p.seconds, p.bytes / p.seconds);
        aa += a * a;
        ab += a * b;
        bb += b * b;
        ay += a;
        by += b;
        used += 1;
    }
    let det = aa * bb - ab * ab;
    if used < 2 || det.abs() < f64::EPSILON * aa * bb {
        return None;
    }
    let c = (ay * bb - by * ab) / det;
    let k = (aa * by - ab * ay) / det;
    (c > 0.0 && k > 0.0).then(|| CostModel {
        seconds_per_call: c,
        bytes_per_second: 1.0 / k,
    })
}

impl CostModel {
    /// Predicted seconds for `calls` calls moving `bytes` bytes.
    pub fn predict(&self, calls: f64, bytes: f64) -> f64 {
        calls * self.seconds_per_call + bytes / self.bytes_per_second
    }

    /// The block size at which a call's fixed cost equals the time of its bytes: below it
    /// the calls dominate, above it the bandwidth does.
    pub fn break_even_block(&self) -> f64 {
        self.seconds_per_call * self.bytes_per_second
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(c: f64, bw: f64, noise: &[f64]) -> Vec<Point> {
        (0..12)
            .map(|i| {
                let bs = (1u64 << (2 * i)) as f64;
                let bytes = (64u64 << 20) as f64;
                let calls = (bytes / bs).ceil();
                let t = calls * c + bytes / bw;
                Point {
                    calls,
                    bytes,
                    seconds: t * (1.0 + noise[i % noise.len()]),
                }
            })
            .collect()
    }

    #[test]
    fn exact_data_gives_back_the_parameters() {
        let m = fit(&synthetic(700e-9, 10e9, &[0.0])).unwrap();
        assert!((m.seconds_per_call / 700e-9 - 1.0).abs() < 1e-9, "{m:?}");
        assert!((m.bytes_per_second / 10e9 - 1.0).abs() < 1e-9, "{m:?}");
        assert!((m.break_even_block() - 7000.0).abs() < 1e-3);
    }

    #[test]
    fn noisy_data_gives_parameters_close_to_the_truth() {
        let m = fit(&synthetic(250e-9, 2e9, &[0.03, -0.02, 0.01, -0.04])).unwrap();
        assert!((m.seconds_per_call / 250e-9 - 1.0).abs() < 0.1, "{m:?}");
        assert!((m.bytes_per_second / 2e9 - 1.0).abs() < 0.1, "{m:?}");
    }

    #[test]
    fn too_few_or_unphysical_points_give_no_model() {
        assert!(
            fit(&[Point {
                calls: 1.0,
                bytes: 1.0,
                seconds: 1.0
            }])
            .is_none()
        );
        // Time falling as calls rise: no positive per-call cost explains it.
        let weird = [
            Point {
                calls: 1000.0,
                bytes: 1000.0,
                seconds: 1.0,
            },
            Point {
                calls: 10.0,
                bytes: 1000.0,
                seconds: 2.0,
            },
            Point {
                calls: 1.0,
                bytes: 1000.0,
                seconds: 3.0,
            },
        ];
        assert!(fit(&weird).is_none());
    }
}
