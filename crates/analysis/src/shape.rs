//! Latency distributions from json+ histograms: their quantiles with order-statistic
//! intervals, and the two-sample Kolmogorov-Smirnov test between two of them, so that a
//! change in shape (a fatter tail under an unchanged mean) is reported, not averaged away.
//!
//! A histogram is `(value, count)` pairs in ascending value order (json+'s bins: each
//! I/O counted at its bin's value). Ties within a bin make the KS test conservative.

/// Two-sided 95% normal quantile.
const Z95: f64 = 1.959_963_984_540_054;

/// Bins of several histograms summed (repetitions of one side).
pub fn merge<'a>(hists: impl IntoIterator<Item = &'a [(u64, u64)]>) -> Vec<(u64, u64)> {
    let mut all: Vec<(u64, u64)> = hists.into_iter().flatten().copied().collect();
    all.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(all.len());
    for (v, n) in all {
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 += n,
            _ => out.push((v, n)),
        }
    }
    out
}

/// The cumulative distribution: per bin, its value and the % of I/Os at or below it.
pub fn cdf(h: &[(u64, u64)]) -> Vec<(u64, f64)> {
    let n = total(h);
    let mut seen = 0;
    h.iter()
        .filter(|_| n > 0)
        .map(|&(v, c)| {
            seen += c;
            (v, seen as f64 * 100.0 / n as f64)
        })
        .collect()
}

fn total(h: &[(u64, u64)]) -> u64 {
    h.iter().map(|&(_, n)| n).sum()
}

/// The value of the `rank`-th I/O (0-based) in value order.
fn at_rank(h: &[(u64, u64)], rank: u64) -> Option<u64> {
    let mut seen = 0;
    for &(v, n) in h {
        seen += n;
        if rank < seen {
            return Some(v);
        }
    }
    h.last().map(|&(v, _)| v)
}

/// The `q`-th percentile (0 < q < 100) as fio reports it: the value of the I/O at rank
/// ceil(q/100 * n) (1-based).
pub fn percentile(h: &[(u64, u64)], q: f64) -> Option<u64> {
    let n = total(h);
    if n == 0 {
        return None;
    }
    let rank = ((q / 100.0) * n as f64).ceil().max(1.0) as u64;
    at_rank(h, rank - 1)
}

/// A distribution-free 95% interval of the `q`-th percentile: the values at the ranks
/// n·p ∓ 1.96·sqrt(n·p·(1−p)) (the normal approximation of the binomial).
pub fn percentile_ci(h: &[(u64, u64)], q: f64) -> Option<(u64, u64)> {
    let n = total(h) as f64;
    if n == 0.0 {
        return None;
    }
    let p = q / 100.0;
    let half = Z95 * (n * p * (1.0 - p)).sqrt();
    let lo = (n * p - half).floor().max(0.0) as u64;
    let hi = ((n * p + half).ceil() as u64).min(n as u64 - 1);
    Some((at_rank(h, lo)?, at_rank(h, hi)?))
}

/// Mean and variance of the binned values.
pub fn mean_var(h: &[(u64, u64)]) -> Option<(f64, f64)> {
    let n = total(h) as f64;
    if n < 2.0 {
        return None;
    }
    let mean = h.iter().map(|&(v, c)| v as f64 * c as f64).sum::<f64>() / n;
    let ss: f64 = h
        .iter()
        .map(|&(v, c)| c as f64 * (v as f64 - mean).powi(2))
        .sum();
    Some((mean, ss / (n - 1.0)))
}

/// The result of a two-sample Kolmogorov-Smirnov test.
#[derive(Clone, Debug, PartialEq)]
pub struct Ks {
    /// Largest distance between the two empirical CDFs (0 to 1).
    pub d: f64,
    /// Asymptotic two-sided p-value.
    pub p: f64,
    pub n_a: u64,
    pub n_b: u64,
}

/// The KS test between two histograms; `None` when either is empty.
pub fn ks(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<Ks> {
    let (na, nb) = (total(a), total(b));
    if na == 0 || nb == 0 {
        return None;
    }
    let (mut i, mut j) = (0, 0);
    let (mut ca, mut cb) = (0u64, 0u64);
    let mut d: f64 = 0.0;
    // Walk the union of bin values; the CDFs are compared after each value.
    while i < a.len() || j < b.len() {
        let v = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => x.0.min(y.0),
            (Some(x), None) => x.0,
            (None, Some(y)) => y.0,
            (None, None) => break,
        };
        while i < a.len() && a[i].0 == v {
            ca += a[i].1;
            i += 1;
        }
        while j < b.len() && b[j].0 == v {
            cb += b[j].1;
            j += 1;
        }
        d = d.max((ca as f64 / na as f64 - cb as f64 / nb as f64).abs());
    }
    let ne = (na as f64 * nb as f64) / (na + nb) as f64;
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    Some(Ks {
        d,
        p: kolmogorov_q(lambda),
        n_a: na,
        n_b: nb,
    })
}

/// Q_KS(λ) = 2 Σ_{j≥1} (−1)^{j−1} exp(−2 j² λ²), the Kolmogorov distribution's tail.
fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda < 0.2 {
        return 1.0;
    }
    let mut sum = 0.0;
    for j in 1..=100 {
        let jf = j as f64;
        let term = (-2.0 * jf * jf * lambda * lambda).exp();
        sum += if j % 2 == 1 { term } else { -term };
        if term < 1e-12 {
            break;
        }
    }
    (2.0 * sum).clamp(0.0, 1.0)
}

/// The 95% interval of the change in percent of a clat metric from the bins of one run
/// per side: percentiles from their order-statistic intervals (the widest combination),
/// the mean from the normal approximation. `None` for other metrics or without bins.
pub fn bins_ci(
    metric: &str,
    a: &[(u64, u64)],
    b: &[(u64, u64)],
    mean_a: f64,
) -> Option<(f64, f64)> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    if metric == "clat_mean" {
        let ((ma, va), (mb, vb)) = (mean_var(a)?, mean_var(b)?);
        let (na, nb) = (weight(a), weight(b));
        let se = (va / na + vb / nb).sqrt();
        let base = if mean_a > 0.0 { mean_a } else { ma };
        let d = mb - ma;
        return Some((
            (d - 1.96 * se) / base * 100.0,
            (d + 1.96 * se) / base * 100.0,
        ));
    }
    let q: f64 = metric.strip_prefix("clat_p")?.parse().ok()?;
    let (alo, ahi) = percentile_ci(a, q)?;
    let (blo, bhi) = percentile_ci(b, q)?;
    if alo == 0 {
        return None;
    }
    Some((
        (blo as f64 / ahi as f64 - 1.0) * 100.0,
        (bhi as f64 / alo as f64 - 1.0) * 100.0,
    ))
}

fn weight(h: &[(u64, u64)]) -> f64 {
    h.iter().map(|&(_, n)| n as f64).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` I/Os spread evenly over [lo, hi) in 1-ns bins.
    fn uniform(lo: u64, hi: u64, per_bin: u64) -> Vec<(u64, u64)> {
        (lo..hi).map(|v| (v, per_bin)).collect()
    }

    #[test]
    fn same_distribution_is_not_significant() {
        let a = uniform(100, 200, 50);
        let k = ks(&a, &a).unwrap();
        assert_eq!(k.d, 0.0);
        assert_eq!(k.p, 1.0);
    }

    #[test]
    fn a_shifted_distribution_is_detected() {
        let k = ks(&uniform(100, 200, 50), &uniform(110, 210, 50)).unwrap();
        assert!((k.d - 0.10).abs() < 1e-9, "{k:?}");
        assert!(k.p < 1e-6, "{k:?}");
    }

    /// Known value: Q_KS(1.36) ≈ 0.049 (the 5% critical value of λ).
    #[test]
    fn kolmogorov_tail() {
        assert!((kolmogorov_q(1.358) - 0.05).abs() < 0.001);
        assert!((kolmogorov_q(1.628) - 0.01).abs() < 0.001);
    }

    #[test]
    fn cdf_counts_every_bin_up_to_100() {
        let c = cdf(&[(0, 1), (10, 2), (20, 1)]);
        assert_eq!(c, [(0, 25.0), (10, 75.0), (20, 100.0)]);
        assert!(cdf(&[]).is_empty());
    }

    #[test]
    fn percentiles_and_intervals() {
        let h = uniform(1, 1001, 1); // values 1..=1000, one I/O each
        assert_eq!(percentile(&h, 50.0), Some(500));
        assert_eq!(percentile(&h, 99.0), Some(990));
        let (lo, hi) = percentile_ci(&h, 50.0).unwrap();
        // sqrt(1000 * 0.25) * 1.96 = 31 ranks either side.
        assert!(
            (468..=470).contains(&lo) && (530..=532).contains(&hi),
            "{lo} {hi}"
        );
        let m = merge([h.as_slice(), h.as_slice()]);
        assert_eq!(m.len(), 1000);
        assert_eq!(m[0], (1, 2));
        let (mean, var) = mean_var(&h).unwrap();
        assert!((mean - 500.5).abs() < 1e-9 && (var - 83416.67).abs() < 0.1);
    }
}
