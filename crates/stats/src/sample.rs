//! Periodic samples (bandwidth, IOPS): min/max/mean/stddev, Welford's method.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SampleStat {
    pub n: u64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    m2: f64,
}

impl SampleStat {
    /// Statistics known by their figures (another program's report): `stddev` over
    /// n−1, as [`SampleStat::stddev`] gives it back.
    pub fn from_figures(n: u64, min: f64, max: f64, mean: f64, stddev: f64) -> SampleStat {
        SampleStat {
            n,
            min,
            max,
            mean,
            m2: stddev * stddev * n.saturating_sub(1) as f64,
        }
    }

    pub fn add(&mut self, v: f64) {
        if self.n == 0 {
            self.min = v;
            self.max = v;
        } else {
            self.min = self.min.min(v);
            self.max = self.max.max(v);
        }
        self.n += 1;
        let d = v - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (v - self.mean);
    }

    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }

    /// fio's group_reporting sum of per-job samples: min, max and mean add up
    /// (the group's bandwidth is the sum of its jobs'), variance adds.
    pub fn sum_with(&mut self, o: &SampleStat) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        self.min += o.min;
        self.max += o.max;
        self.mean += o.mean;
        self.m2 += o.m2;
        self.n = self.n.max(o.n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn welford() {
        let mut s = SampleStat::default();
        for v in [1.0, 2.0, 3.0, 4.0] {
            s.add(v);
        }
        assert_eq!((s.min, s.max, s.mean, s.n), (1.0, 4.0, 2.5, 4));
        assert!((s.stddev() - 1.2909944487358056).abs() < 1e-12);
    }
}
