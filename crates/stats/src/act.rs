//! `--profile=act`'s table: per hour ("slice") of the run, the I/Os of act's jobs and
//! how many took longer than 1, 8 and 64 ms in total latency (each I/O in at most one
//! of the three: the largest threshold it exceeds). A slice fails when over 5%, 1% or
//! 0.1% of its I/Os exceed 1, 8 or 64 ms.

use serde::{Deserialize, Serialize};

/// The thresholds, in µs (latencies are compared in whole µs, as fio does).
pub const THRESHOLDS_US: [u64; 3] = [1_000, 8_000, 64_000];
/// The most a slice may have over each threshold, per mille.
pub const MAX_PER_MILLE: [u64; 3] = [50, 10, 1];
/// Length of a slice.
pub const SLICE_SECONDS: u64 = 3600;

/// Per slice: [I/Os, over 1 ms only, over 8 ms only, over 64 ms].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActSlices {
    pub slices: Vec<[u64; 4]>,
}

impl ActSlices {
    /// A run of `seconds`: one slice per started hour.
    pub fn for_seconds(seconds: u64) -> ActSlices {
        ActSlices {
            slices: vec![[0; 4]; seconds.div_ceil(SLICE_SECONDS).max(1) as usize],
        }
    }

    /// One I/O of total latency `lat_ns` in slice `slice` (none after the last).
    #[inline]
    pub fn add(&mut self, slice: usize, lat_ns: u64) {
        let Some(s) = self.slices.get_mut(slice) else {
            return;
        };
        s[0] += 1;
        let us = lat_ns / 1000;
        if let Some(i) = THRESHOLDS_US.iter().rposition(|&t| us > t) {
            s[1 + i] += 1;
        }
    }

    /// Add another job's slices (act's table is over all of its jobs).
    pub fn merge(&mut self, o: &ActSlices) {
        if self.slices.len() < o.slices.len() {
            self.slices.resize(o.slices.len(), [0; 4]);
        }
        for (a, b) in self.slices.iter_mut().zip(&o.slices) {
            for i in 0..4 {
                a[i] += b[i];
            }
        }
    }

    /// A slice's shares over each threshold, in percent.
    pub fn percents(s: &[u64; 4]) -> [f64; 3] {
        std::array::from_fn(|i| match s[0] {
            0 => 0.0,
            n => 100.0 * s[1 + i] as f64 / n as f64,
        })
    }

    fn slice_fails(s: &[u64; 4]) -> bool {
        (0..3).any(|i| s[0] > 0 && 1000 * s[1 + i] / s[0] >= MAX_PER_MILLE[i])
    }

    /// No slice over its limits.
    pub fn passed(&self) -> bool {
        !self.slices.iter().any(Self::slice_fails)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_exclusive_and_limits_per_mille() {
        let mut a = ActSlices::for_seconds(5);
        assert_eq!(a.slices.len(), 1);
        for lat in [
            500_000, 1_000_999, 1_001_000, 8_001_000, 64_000_999, 64_001_000,
        ] {
            a.add(0, lat);
        }
        a.add(1, 5_000_000); // after the last slice: not counted
        assert_eq!(a.slices[0], [6, 1, 2, 1]);
        assert!(!a.passed());
        let mut ok = ActSlices::for_seconds(3601);
        assert_eq!(ok.slices.len(), 2);
        for _ in 0..1000 {
            ok.add(1, 100_000);
        }
        for _ in 0..49 {
            ok.add(1, 2_000_000);
        }
        assert!(ok.passed(), "4.9% over 1 ms passes");
        ok.add(1, 2_000_000);
        ok.merge(&a);
        assert_eq!(ok.slices[0], [6, 1, 2, 1]);
        assert!(!ok.passed());
        assert_eq!(ActSlices::percents(&[200, 2, 1, 0]), [1.0, 0.5, 0.0]);
    }
}
