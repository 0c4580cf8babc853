//! Percentiles over time from fio's clat_hist logs, computed the way fio's
//! `fiologparser_hist.py` computes them, so that both give the same columns and numbers:
//!
//! - a row's bins count the completions since the row before; bin values are fio's
//!   bin layout with the script's convention (below 128 ns: v + 0.5; above: the
//!   middle of the bin's lower edge and the upper edge of the next bin);
//! - by default each row's samples are spread evenly over
//!   `[T − interval/2 − latency, T]` and weighted into every output interval they
//!   overlap (`noweight`: a row goes whole into the first interval ending more than
//!   10 ms after it);
//! - percentiles interpolate linearly over the weight midpoints (numpy's `interp`);
//!   min and max are the edges of the bins just outside the lowest and highest bins used.

/// One row of a clat_hist log.
#[derive(Clone, Debug, PartialEq)]
pub struct HistRow {
    pub t_ms: u64,
    pub ddir: u8,
    pub bins: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub interval_ms: u64,
    /// Percentiles after the median (which is always first).
    pub percentiles: Vec<f64>,
    pub noweight: bool,
}

/// One output row (latencies in ns).
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    pub end_ms: u64,
    pub samples: u64,
    pub min: f64,
    pub avg: f64,
    /// Median, then `Options::percentiles`.
    pub pcts: Vec<f64>,
    pub max: f64,
}

/// fio's bins: 64 per power of two above 128 ns.
const FINE_BINS: usize = 29 * 64;

/// Lower edge of fine bin `x` (ns).
fn edge(x: usize) -> f64 {
    if x < 128 {
        return x as f64;
    }
    let m = (x / 64 + 5) as i32;
    let k = (x % 64) as f64;
    2f64.powi(m) + k * 2f64.powi(m - 6)
}

/// The (lower, value, upper) of each of `n` (possibly coarse) bins, as the script has them.
fn bin_values(n: usize) -> Vec<(f64, f64, f64)> {
    let stride = (FINE_BINS / n.max(1)).max(1);
    (0..n)
        .map(|j| {
            let i = j * stride;
            let lower = edge(i);
            let upper = if i + stride < 128 {
                (i + stride) as f64
            } else {
                edge(i + stride + 1)
            };
            (lower, (lower + upper) / 2.0, upper)
        })
        .collect()
}

/// numpy's `interp(x, xp, fp)`: xp non-decreasing; flat runs take the last of the run.
fn interp(x: f64, xp: &[f64], fp: &[f64]) -> f64 {
    let n = xp.len();
    if n == 0 {
        return f64::NAN;
    }
    if x < xp[0] {
        return fp[0];
    }
    if x >= xp[n - 1] {
        return fp[n - 1];
    }
    // The last j with xp[j] <= x.
    let j = xp.partition_point(|&v| v <= x) - 1;
    let slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
    let mut y = slope * (x - xp[j]) + fp[j];
    if y.is_nan() {
        y = slope * (x - xp[j + 1]) + fp[j + 1];
        if y.is_nan() && fp[j] == fp[j + 1] {
            y = fp[j];
        }
    }
    y
}

/// numpy's sum of float64s (pairwise, 8 lanes up to 128 elements), which the script's
/// `ws.sum()` and `np.sum(vs * ws)` are: a sequential sum differs in the last bits, and
/// so in the last printed digit now and then.
fn pairwise_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        return a.iter().fold(0.0, |r, &x| r + x);
    }
    if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let whole = n - n % 8;
        for chunk in a[8..whole].chunks_exact(8) {
            for (acc, &x) in r.iter_mut().zip(chunk) {
                *acc += x;
            }
        }
        let res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        return a[whole..].iter().fold(res, |r, &x| r + x);
    }
    let mut n2 = n / 2;
    n2 -= n2 % 8;
    pairwise_sum(&a[..n2]) + pairwise_sum(&a[n2..])
}

/// Weighted figures of one interval from bin weights and unweighted presence.
fn figures(
    w: &[f64],
    seen: &[u64],
    vals: &[(f64, f64, f64)],
    pcts: &[f64],
    noweight: bool,
) -> Option<(f64, f64, Vec<f64>, f64)> {
    let total = pairwise_sum(w);
    let lo = seen.iter().position(|&c| c > 0)?;
    let hi = seen.iter().rposition(|&c| c > 0)?;
    let (min, max) = if noweight {
        (vals[lo].1, vals[hi].1)
    } else {
        (
            vals[lo.saturating_sub(1)].0,
            vals[(hi + 1).min(vals.len() - 1)].2,
        )
    };
    if total <= 0.0 {
        return Some((min, f64::NAN, pcts.iter().map(|_| f64::NAN).collect(), max));
    }
    let products: Vec<f64> = w.iter().zip(vals).map(|(w, v)| w * v.1).collect();
    let avg = pairwise_sum(&products) / total;
    let mut cum = 0.0;
    let cdf: Vec<f64> = w
        .iter()
        .map(|&x| {
            cum += x;
            100.0 * (cum - x / 2.0) / total
        })
        .collect();
    let values: Vec<f64> = vals.iter().map(|v| v.1).collect();
    Some((
        min,
        avg,
        pcts.iter().map(|&p| interp(p, &cdf, &values)).collect(),
        max,
    ))
}

/// The output rows for `rows` (all files and directions pooled by the caller).
pub fn intervals(rows: &[HistRow], o: &Options) -> Vec<Interval> {
    let Some(n) = rows.first().map(|r| r.bins.len()) else {
        return Vec::new();
    };
    let vals = bin_values(n);
    let mut pcts = vec![50.0];
    pcts.extend(&o.percentiles);
    let step = o.interval_ms.max(1) as f64;
    let first = rows.iter().map(|r| r.t_ms).min().unwrap_or(0);
    let last = rows.iter().map(|r| r.t_ms).max().unwrap_or(0);
    // Timestamps in Unix-epoch ms start the intervals near the first row (the script
    // subtracts its look-ahead, 20, there).
    let start = if first > 1_000_000_000_000 {
        ((first as f64 - 20.0) / step).floor() * step
    } else {
        0.0
    };
    let mut out = Vec::new();
    let mut s = start;
    while s <= last as f64 + step {
        let e = s + step;
        let mut w = vec![0.0; n];
        let mut seen = vec![0u64; n];
        let mut samples = 0u64;
        for r in rows.iter().filter(|r| r.bins.len() == n) {
            let t = r.t_ms as f64;
            if o.noweight {
                // Whole rows, into the first interval ending more than 10 ms after them.
                if t + 10.0 < e && t + 10.0 >= s {
                    for (j, &c) in r.bins.iter().enumerate() {
                        w[j] += c as f64;
                        seen[j] += c;
                        samples += c;
                    }
                }
                continue;
            }
            if t <= s {
                continue;
            }
            for (j, &c) in r.bins.iter().enumerate() {
                if c == 0 {
                    continue;
                }
                let from = t - step / 2.0 - vals[j].1 / 1e6;
                if from >= e {
                    continue;
                }
                let len = t - from;
                let overlap = (t.min(e) - from.max(s)).max(0.0);
                if len > 0.0 {
                    // As the script: the count times the weight (not the count times
                    // the overlap, divided), which rounds differently.
                    w[j] += c as f64 * (overlap / len);
                }
                seen[j] += c;
                samples += c;
            }
        }
        if samples > 0 {
            if let Some((min, avg, pc, max)) = figures(&w, &seen, &vals, &pcts, o.noweight) {
                out.push(Interval {
                    end_ms: e as u64,
                    samples,
                    min,
                    avg,
                    pcts: pc,
                    max,
                });
            }
        }
        s = e;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// numpy 1.24's `np.sum` of this array is 186129.1291775326; a sequential sum gives
    /// 186129.12917753245.
    #[test]
    fn sums_as_numpy_does() {
        let a: Vec<f64> = (0..1856u64)
            .map(|i| ((i * 7919) % 1000) as f64 / 997.0 * if i % 5 == 0 { 1e3 } else { 1e-3 })
            .collect();
        assert_eq!(pairwise_sum(&a), 186129.1291775326);
        assert_ne!(a.iter().sum::<f64>(), 186129.1291775326);
        assert_eq!(pairwise_sum(&[1.0, 2.0]), 3.0);
    }

    #[test]
    fn bin_values_follow_the_script() {
        let v = bin_values(1856);
        assert_eq!(v[0], (0.0, 0.5, 1.0));
        assert_eq!(v[10], (10.0, 10.5, 11.0));
        assert_eq!(v[127], (127.0, 128.5, 130.0));
        assert_eq!(v[128], (128.0, 130.0, 132.0));
        assert_eq!(v[192], (256.0, 260.0, 264.0));
        assert_eq!(
            v[1855],
            (17_045_651_456.0, 17_246_978_048.0, 17_448_304_640.0)
        );
    }

    #[test]
    fn interp_is_numpys() {
        let xp = [10.0, 20.0, 20.0, 40.0];
        let fp = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(interp(5.0, &xp, &fp), 1.0);
        assert_eq!(interp(15.0, &xp, &fp), 1.5);
        // In a flat run the last point of the run is the base.
        assert_eq!(interp(20.0, &xp, &fp), 3.0);
        assert_eq!(interp(30.0, &xp, &fp), 3.5);
        assert_eq!(interp(50.0, &xp, &fp), 4.0);
    }

    #[test]
    fn rows_are_weighted_into_the_intervals_they_span() {
        let mut bins = vec![0u64; 1856];
        bins[10] = 100;
        let rows = vec![HistRow {
            t_ms: 160,
            ddir: 0,
            bins: bins.clone(),
        }];
        let o = Options {
            interval_ms: 100,
            percentiles: vec![99.0],
            noweight: false,
        };
        let iv = intervals(&rows, &o);
        // The row's span is [160 - 50 - tiny, 160]: all inside (100, 200]. (A span reaching
        // back past 100 would count in (0, 100] too, as fiologparser_hist.py counts it.)
        assert_eq!(iv.len(), 1);
        assert_eq!((iv[0].end_ms, iv[0].samples), (200, 100));
        assert_eq!(iv[0].avg, 10.5);
        // p99 interpolates towards the next (empty) bin's value, as numpy.interp does in
        // the script: 10.5 + (99 - 50) / (100 - 50).
        assert_eq!(iv[0].pcts, [10.5, 11.48]);
        assert_eq!((iv[0].min, iv[0].max), (9.0, 12.0));
        // noweight: the row goes to the first interval ending more than 10 ms after it.
        let nw = intervals(
            &[HistRow {
                t_ms: 195,
                ..rows[0].clone()
            }],
            &Options {
                noweight: true,
                ..o
            },
        );
        assert_eq!(nw[0].end_ms, 300);
        assert_eq!((nw[0].min, nw[0].max), (10.5, 10.5));
    }
}
