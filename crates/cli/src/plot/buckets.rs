//! Latencies in powers of two: the rows of a latency-over-time heatmap and the bars
//! of a latency histogram. A power of two per bucket keeps a microsecond and a second
//! on one readable axis, as fio's own histogram does with its log-linear bins.

use std::collections::BTreeMap;

/// The bucket of a latency in ns: ⌊log2⌋ (0 and 1 ns share bucket 0).
pub fn of(ns: u64) -> u32 {
    63 - ns.max(1).leading_zeros()
}

/// A bucket's name by its lower bound: "64us" holds 64 up to 128 us.
pub fn name(b: u32) -> String {
    let ns = 1u64 << b.min(63);
    let (v, unit) = match ns {
        n if n >= 1_000_000_000 => (n as f64 / 1e9, "s"),
        n if n >= 1_000_000 => (n as f64 / 1e6, "ms"),
        n if n >= 1_000 => (n as f64 / 1e3, "us"),
        n => (n as f64, "ns"),
    };
    match v >= 100.0 || v.fract() == 0.0 {
        true => format!("{v:.0}{unit}"),
        false if v >= 10.0 => format!("{v:.1}{unit}"),
        false => format!("{v:.2}{unit}"),
    }
}

/// Counts per time column and bucket, and what they become: the share of each
/// column's I/Os, per bucket from the lowest to the highest with any.
#[derive(Default)]
pub struct Grid {
    /// Column → bucket → I/Os.
    cells: BTreeMap<u64, BTreeMap<u32, u64>>,
}

/// The grid laid out: column labels, bucket labels, `shares[bucket][column]` in %.
pub struct Shares {
    pub columns: Vec<String>,
    pub rows: Vec<String>,
    pub shares: Vec<Vec<Option<f64>>>,
}

impl Grid {
    pub fn add(&mut self, column: u64, ns: u64, count: u64) {
        if count > 0 {
            *self
                .cells
                .entry(column)
                .or_default()
                .entry(of(ns))
                .or_default() += count;
        }
    }

    /// Columns `first..=last` (those without I/O grey), named by `label`.
    pub fn shares(&self, label: impl Fn(u64) -> String) -> Option<Shares> {
        let buckets = self.cells.values().flat_map(|c| c.keys().copied());
        let (lo, hi) = buckets.fold((u32::MAX, 0), |(a, b), k| (a.min(k), b.max(k)));
        let (&first, _) = self.cells.first_key_value()?;
        let (&last, _) = self.cells.last_key_value()?;
        let columns: Vec<u64> = (first..=last).collect();
        let shares = (lo..=hi)
            .map(|b| {
                columns
                    .iter()
                    .map(|c| {
                        let col = self.cells.get(c)?;
                        let total: u64 = col.values().sum();
                        let n = col.get(&b).copied().unwrap_or(0);
                        Some(n as f64 * 100.0 / total as f64)
                    })
                    .collect()
            })
            .collect();
        Some(Shares {
            columns: columns.iter().map(|&c| label(c)).collect(),
            rows: (lo..=hi).map(name).collect(),
            shares,
        })
    }
}

/// Counts per bucket of (value ns, I/Os) bins, as % of all: the histogram's bars.
pub fn histogram(bins: &[(u64, u64)]) -> BTreeMap<u32, f64> {
    let total: u64 = bins.iter().map(|b| b.1).sum();
    let mut out = BTreeMap::new();
    for &(ns, n) in bins.iter().filter(|b| b.1 > 0) {
        *out.entry(of(ns)).or_insert(0.0) += n as f64 * 100.0 / total as f64;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_and_names() {
        assert_eq!((of(0), of(1), of(2), of(1023), of(1024)), (0, 0, 1, 9, 10));
        assert_eq!(name(10), "1.02us");
        assert_eq!(name(16), "65.5us");
        assert_eq!(name(20), "1.05ms");
        assert_eq!(name(3), "8ns");
    }

    #[test]
    fn shares_per_column_add_to_100() {
        let mut g = Grid::default();
        g.add(0, 1000, 3);
        g.add(0, 4000, 1);
        g.add(2, 4000, 5);
        let s = g.shares(|c| c.to_string()).unwrap();
        assert_eq!(s.columns, ["0", "1", "2"]);
        assert_eq!(s.rows.len(), 3);
        assert_eq!(s.shares[0], [Some(75.0), None, Some(0.0)]);
        assert_eq!(s.shares[2], [Some(25.0), None, Some(100.0)]);
        let h = histogram(&[(1000, 3), (4000, 1)]);
        assert_eq!(h.get(&9), Some(&75.0));
    }
}
