//! Exact latency moments: integer sums of values and squares, so mean and stddev
//! are exact and merging jobs is exact (no averaging of averages).

use crate::hist::Histogram;
use serde::{Deserialize, Serialize};

/// min/max/mean/stddev of a latency, in ns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatStat {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub sum: u128,
    pub sumsq: u128,
}

impl Default for LatStat {
    fn default() -> Self {
        LatStat {
            n: 0,
            min: u64::MAX,
            max: 0,
            sum: 0,
            sumsq: 0,
        }
    }
}

impl LatStat {
    #[inline(always)]
    pub fn add(&mut self, v: u64) {
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
        // Overflows only beyond ~2^48 samples of an hour each.
        self.sumsq = self.sumsq.wrapping_add((v as u128) * (v as u128));
    }

    /// `n` samples of the same value `v` (exactly as `n` calls of [`Self::add`]).
    #[inline]
    pub fn add_n(&mut self, v: u64, n: u64) {
        self.n += n;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128 * n as u128;
        self.sumsq = self
            .sumsq
            .wrapping_add((v as u128) * (v as u128) * n as u128);
    }

    pub fn merge(&mut self, o: &LatStat) {
        self.n += o.n;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.sum += o.sum;
        self.sumsq += o.sumsq;
    }

    /// Minimum, or 0 when empty (as fio prints it).
    pub fn min(&self) -> u64 {
        if self.n == 0 {
            0
        } else {
            self.min
        }
    }

    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }

    /// Sample standard deviation sqrt(S/(n-1)), as fio computes it.
    pub fn stddev(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as u128;
        // n*Σx² − (Σx)² is exact in integers while it fits; fall back to f64 otherwise.
        let num = n
            .checked_mul(self.sumsq)
            .zip(self.sum.checked_mul(self.sum))
            .map(|(a, b)| a.saturating_sub(b) as f64)
            .unwrap_or_else(|| {
                let mean = self.mean();
                ((self.sumsq as f64) - (self.sum as f64) * mean).max(0.0) * self.n as f64
            });
        (num / (self.n as f64 * (self.n - 1) as f64)).sqrt()
    }
}

/// A latency type (slat, clat or lat) of one direction: moments, plus a histogram
/// when percentiles are wanted for it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LatTrack {
    pub stat: LatStat,
    pub hist: Option<Histogram>,
}

impl LatTrack {
    pub fn new(with_hist: bool) -> Self {
        LatTrack {
            stat: LatStat::default(),
            hist: with_hist.then(Histogram::new),
        }
    }

    #[inline(always)]
    pub fn add(&mut self, v: u64) {
        self.stat.add(v);
        if let Some(h) = &mut self.hist {
            h.add(v);
        }
    }

    /// `n` samples of the same value (see [`LatStat::add_n`]).
    #[inline]
    pub fn add_n(&mut self, v: u64, n: u64) {
        if n == 0 {
            return;
        }
        self.stat.add_n(v, n);
        if let Some(h) = &mut self.hist {
            h.add_n(v, n);
        }
    }

    pub fn merge(&mut self, o: &LatTrack) {
        self.stat.merge(&o.stat);
        match (&mut self.hist, &o.hist) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.hist = Some(b.clone()),
            _ => {}
        }
    }

    pub fn reset(&mut self) {
        self.stat = LatStat::default();
        if let Some(h) = &mut self.hist {
            h.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_equal_samples_is_recorded_as_each_one() {
        let (mut one, mut many) = (LatTrack::new(true), LatTrack::new(true));
        for (v, n) in [(900u64, 8u64), (1_500, 3), (12_345_678, 1), (900, 2)] {
            for _ in 0..n {
                one.add(v);
            }
            many.add_n(v, n);
        }
        many.add_n(5, 0);
        assert_eq!(one.stat, many.stat);
        let (a, b) = (one.hist.unwrap(), many.hist.unwrap());
        assert_eq!(a.count(), 14);
        assert_eq!(a.percentiles(&[50.0, 99.0]), b.percentiles(&[50.0, 99.0]));
        assert_eq!(a.count(), b.count());
    }

    #[test]
    fn exact_moments() {
        let mut s = LatStat::default();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            s.add(v);
        }
        assert_eq!(s.mean(), 5.0);
        assert!((s.stddev() - 2.138089935299395).abs() < 1e-12);
        let mut a = LatStat::default();
        let mut b = LatStat::default();
        for v in [2u64, 4, 4, 4] {
            a.add(v);
        }
        for v in [5u64, 5, 7, 9] {
            b.add(v);
        }
        a.merge(&b);
        assert_eq!(a, s);
    }

    #[test]
    fn huge_values_do_not_overflow() {
        let mut s = LatStat::default();
        for _ in 0..1000 {
            s.add(3_600_000_000_000);
        }
        assert_eq!(s.stddev(), 0.0);
        s.add(0);
        assert!(s.stddev().is_finite());
    }
}
