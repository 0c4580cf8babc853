//! Latency histogram.
//!
//! Geometry: values below 2^SUB_BITS ns are counted exactly; above, every power of
//! two [2^k, 2^(k+1)) is split into 2^SUB_BITS equal buckets. With SUB_BITS = 9 the
//! bucket midpoint is within 1/1024 (0.098%) of any value in the bucket — eight times
//! finer than fio's 64 buckets per octave (0.78%) — and the whole u64 range is covered
//! (fio clamps at 2^34 ns ≈ 17.2 s). Insertion is a leading-zero count, a shift and an
//! increment. fio's bucket geometry is a subset of ours (its bucket edges are ours), so
//! fio-compatible bins (json+, histogram logs) are exact re-bucketings.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Bits of linear resolution per power of two.
pub const SUB_BITS: u32 = 9;
const SUB: u64 = 1 << SUB_BITS;
/// Number of buckets: exact region (2*SUB) plus SUB per remaining power of two.
pub const BUCKETS: usize = ((64 - SUB_BITS as usize) + 1) * SUB as usize;
/// Worst-case relative error of a reported value (half a bucket over its lower edge).
pub const MAX_REL_ERROR: f64 = 1.0 / (2 * SUB) as f64;

/// fio's geometry (stat.h): 64 buckets per power of two, 29 groups.
pub const FIO_BITS: u32 = 6;
pub const FIO_BUCKETS: usize = 29 << FIO_BITS; // 1856

/// Index of `v` in a log-linear geometry with 2^bits linear buckets per power of two
/// (values below 2^(bits+1) are exact). `bits` is a constant at every call site, so
/// this folds to a leading-zero count, a shift and a mask.
#[inline(always)]
const fn index_in(v: u64, bits: u32) -> usize {
    let sub = 1u64 << bits;
    if v < 2 * sub {
        return v as usize;
    }
    let shift = 63 - v.leading_zeros() - bits;
    (((shift + 1) as u64) * sub + ((v >> shift) & (sub - 1))) as usize
}

/// Lowest value of bucket `idx` in the same geometry.
const fn lower_bound_in(idx: usize, bits: u32) -> u64 {
    let sub = 1u64 << bits;
    let idx = idx as u64;
    if idx < 2 * sub {
        return idx;
    }
    let shift = idx / sub - 1;
    (1u64 << (shift + bits as u64)) + ((idx % sub) << shift)
}

/// Midpoint of bucket `idx` (exact in the linear region), rounded down as fio does.
const fn value_in(idx: usize, bits: u32) -> u64 {
    let lo = lower_bound_in(idx, bits);
    if (idx as u64) < 2 << bits {
        return lo;
    }
    lo + ((1u64 << (idx as u64 / (1 << bits) - 1)) >> 1)
}

/// Bucket index of a value.
#[inline(always)]
pub fn index(v: u64) -> usize {
    index_in(v, SUB_BITS)
}

/// Lowest value of a bucket.
pub fn lower_bound(idx: usize) -> u64 {
    lower_bound_in(idx, SUB_BITS)
}

/// Value reported for a bucket: exact in the linear region, else the midpoint.
pub fn value(idx: usize) -> u64 {
    value_in(idx, SUB_BITS)
}

/// fio's bucket index for a value (plat_val_to_idx semantics, clamped to its last bucket).
pub fn fio_index(v: u64) -> usize {
    let idx = index_in(v, FIO_BITS);
    if idx < FIO_BUCKETS {
        idx
    } else {
        FIO_BUCKETS - 1
    }
}

/// Lowest value of one of fio's buckets.
pub fn fio_lower_bound(idx: usize) -> u64 {
    lower_bound_in(idx, FIO_BITS)
}

/// fio's reported value for one of its buckets (plat_idx_to_val: the midpoint).
pub fn fio_value(idx: usize) -> u64 {
    value_in(idx, FIO_BITS)
}

/// A latency histogram in nanoseconds.
#[derive(Clone, PartialEq, Eq)]
pub struct Histogram {
    counts: Box<[u64]>,
    total: u64,
}

impl std::fmt::Debug for Histogram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Histogram(n={})", self.total)
    }
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        let mut counts = vec![0u64; BUCKETS].into_boxed_slice();
        // Touch every page now so the first sample in a bucket never page-faults
        // on the I/O path.
        for i in (0..counts.len()).step_by(512) {
            // SAFETY: i is in bounds; volatile keeps the write from being elided.
            unsafe { std::ptr::write_volatile(counts.as_mut_ptr().add(i), 0) };
        }
        Histogram { counts, total: 0 }
    }

    /// Count one value (ns).
    #[inline(always)]
    pub fn add(&mut self, v: u64) {
        let i = index(v).min(BUCKETS - 1);
        self.counts[i] += 1;
        self.total += 1;
    }

    /// `n` samples of the same value.
    #[inline]
    pub fn add_n(&mut self, v: u64, n: u64) {
        let i = index(v).min(BUCKETS - 1);
        self.counts[i] += n;
        self.total += n;
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    pub fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
    }

    /// Add another histogram's counts (exact merge).
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += *b;
        }
        self.total += other.total;
    }

    /// What was counted since `earlier`, a copy of this histogram taken before: the
    /// counts of the interval between them (exact; a bucket never counts down, and one
    /// that seems to is read as empty).
    pub fn since(&self, earlier: &Histogram) -> Histogram {
        let mut out = self.clone();
        for (a, b) in out.counts.iter_mut().zip(earlier.counts.iter()) {
            *a = a.saturating_sub(*b);
        }
        out.total = out.counts.iter().sum();
        out
    }

    /// The smallest and largest values counted (their buckets' values), when any.
    pub fn range(&self) -> Option<(u64, u64)> {
        let lo = self.counts.iter().position(|&c| c > 0)?;
        let hi = self.counts.iter().rposition(|&c| c > 0)?;
        Some((value(lo), value(hi)))
    }

    /// Non-zero buckets as (index, count), ascending.
    pub fn buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| (i, c))
    }

    /// Value of rank ceil(p/100 · N) (fio's definition), or None when empty.
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles(&[p]).into_iter().next().flatten()
    }

    /// Several percentiles in one pass; `ps` in any order.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<Option<u64>> {
        if self.total == 0 {
            return vec![None; ps.len()];
        }
        let mut order: Vec<usize> = (0..ps.len()).collect();
        order.sort_by(|&a, &b| ps[a].total_cmp(&ps[b]));
        let mut out = vec![None; ps.len()];
        let mut cum = 0u64;
        let mut it = self.buckets().peekable();
        let mut last = 0usize;
        for &k in &order {
            let rank = ((ps[k] / 100.0) * self.total as f64).ceil().max(1.0) as u64;
            while cum < rank {
                match it.next() {
                    Some((i, c)) => {
                        cum += c;
                        last = i;
                    }
                    None => break,
                }
            }
            out[k] = Some(value(last));
        }
        out
    }

    /// Re-bucket into fio's 1856-bucket geometry: (fio bucket index, count), ascending.
    pub fn fio_buckets(&self) -> Vec<(usize, u64)> {
        let mut out: Vec<(usize, u64)> = Vec::new();
        for (i, c) in self.buckets() {
            let f = fio_index(lower_bound(i));
            match out.last_mut() {
                Some((li, lc)) if *li == f => *lc += c,
                _ => out.push((f, c)),
            }
        }
        out
    }

    /// Full fio-geometry counts (for histogram logs).
    pub fn fio_counts(&self) -> Vec<u64> {
        let mut v = vec![0u64; FIO_BUCKETS];
        for (f, c) in self.fio_buckets() {
            v[f] += c;
        }
        v
    }
}

impl Serialize for Histogram {
    /// Serialised sparsely: [[bucket lower bound ns, count], ...].
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let v: Vec<(u64, u64)> = self.buckets().map(|(i, c)| (lower_bound(i), c)).collect();
        v.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Histogram {
    /// The sparse form [`Serialize`] writes: each bucket found by its lower bound.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pairs: Vec<(u64, u64)> = Vec::deserialize(d)?;
        let mut h = Histogram::new();
        for (lower, count) in pairs {
            let i = index(lower).min(BUCKETS - 1);
            h.counts[i] += count;
            h.total += count;
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geometry_is_contiguous() {
        for idx in 1..BUCKETS {
            assert!(lower_bound(idx) > lower_bound(idx - 1), "idx {idx}");
            assert_eq!(index(lower_bound(idx)), idx);
            assert_eq!(index(lower_bound(idx) - 1), idx - 1);
        }
        assert_eq!(index(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn fio_geometry_matches_fio() {
        // Values from fio 3.33 json+ output (jsonplus_null.json): bins 10, 20, 30, 9024.
        assert_eq!(fio_value(fio_index(10)), 10);
        assert_eq!(fio_value(fio_index(9073)), 9024);
        // fio's last bucket: 2^34 ns and above.
        assert_eq!(fio_index(1 << 40), FIO_BUCKETS - 1);
        // Every fio bucket edge is one of ours, so re-bucketing is exact.
        for f in 1..FIO_BUCKETS {
            let edge = fio_lower_bound(f);
            assert_eq!(fio_index(edge), f);
            assert_eq!(fio_index(edge - 1), f - 1);
            assert_eq!(
                lower_bound(index(edge)),
                edge,
                "fio edge {edge} is not an edge here"
            );
        }
    }

    #[test]
    fn percentiles_rank_ceil() {
        let mut h = Histogram::new();
        for v in 1..=100u64 {
            h.add(v);
        }
        assert_eq!(h.percentile(50.0), Some(50));
        assert_eq!(h.percentile(99.0), Some(99));
        assert_eq!(h.percentile(99.5), Some(100));
        assert_eq!(h.percentile(1.0), Some(1));
        let v = h.percentiles(&[99.0, 1.0, 50.0]);
        assert_eq!(v, vec![Some(99), Some(1), Some(50)]);
    }

    proptest::proptest! {
        #[test]
        fn error_within_bound(v in 0u64..u64::MAX / 2) {
            let r = value(index(v));
            let err = (r as f64 - v as f64).abs() / (v.max(1) as f64);
            proptest::prop_assert!(err <= MAX_REL_ERROR + 1e-12, "v={} r={} err={}", v, r, err);
        }

        #[test]
        fn percentile_matches_sorted(mut vals in proptest::collection::vec(1u64..10_000_000_000, 1..500), p in 0.0f64..100.0) {
            let mut h = Histogram::new();
            for &v in &vals { h.add(v); }
            vals.sort_unstable();
            let rank = ((p / 100.0) * vals.len() as f64).ceil().max(1.0) as usize;
            let exact = vals[rank - 1];
            let got = h.percentile(p).unwrap();
            let err = (got as f64 - exact as f64).abs() / exact as f64;
            proptest::prop_assert!(err <= MAX_REL_ERROR + 1e-12);
        }

        #[test]
        fn fio_rebucketing_equals_direct(vals in proptest::collection::vec(0u64..(1u64 << 36), 1..300)) {
            let mut h = Histogram::new();
            let mut direct = vec![0u64; FIO_BUCKETS];
            for &v in &vals { h.add(v); direct[fio_index(v)] += 1; }
            proptest::prop_assert_eq!(h.fio_counts(), direct);
        }
    }
}
