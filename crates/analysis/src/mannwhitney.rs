//! Two-sided Mann-Whitney U test (Wilcoxon rank-sum): does one set of repetitions
//! tend to be larger than the other? Rank-based, so one outlier run cannot dominate
//! it and no normal distribution of the results is assumed.

/// Up to this many values per side the p-value is exact: every way of splitting the
/// pooled values into the two sides is enumerated (C(20,10) = 184756 splits at most),
/// which also makes it exact with ties. Above, the normal approximation is good.
const EXACT_MAX: usize = 10;

/// The two-sided p-value of the Mann-Whitney U test of `a` against `b`; `None` when
/// either side is empty.
pub fn p_value(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let ranks = midranks(a, b);
    let (n, m) = (a.len(), b.len());
    let w: f64 = ranks[..n].iter().sum();
    if n <= EXACT_MAX && m <= EXACT_MAX {
        Some(exact(&ranks, n, w))
    } else {
        Some(normal(&ranks, n, m, w))
    }
}

/// Ranks 1..=N of the pooled values (a first, then b), ties given their mean rank.
fn midranks(a: &[f64], b: &[f64]) -> Vec<f64> {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && pooled[order[j + 1]] == pooled[order[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) share ranks i+1..=j+1: their mean.
        let r = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = r;
        }
        i = j + 1;
    }
    ranks
}

/// Exact permutation p-value: the share of all n-subsets of the pooled ranks whose sum
/// is at least as far from its mean as the observed rank sum `w`.
fn exact(ranks: &[f64], n: usize, w: f64) -> f64 {
    let total = ranks.len();
    let mean = n as f64 * (total as f64 + 1.0) / 2.0;
    // A hair of slack so that equal distances computed in a different order count.
    let observed = (w - mean).abs() - 1e-9;
    let (mut extreme, mut all) = (0u64, 0u64);
    subsets(ranks, n, 0, 0.0, &mut |sum| {
        all += 1;
        if (sum - mean).abs() >= observed {
            extreme += 1;
        }
    });
    extreme as f64 / all as f64
}

/// Call `f` with the sum of every `left`-element subset of `ranks[from..]` (plus `acc`).
fn subsets(ranks: &[f64], left: usize, from: usize, acc: f64, f: &mut dyn FnMut(f64)) {
    if left == 0 {
        f(acc);
        return;
    }
    for i in from..=ranks.len() - left {
        subsets(ranks, left - 1, i + 1, acc + ranks[i], f);
    }
}

/// Normal approximation with tie correction and continuity correction.
fn normal(ranks: &[f64], n: usize, m: usize, w: f64) -> f64 {
    let (nf, mf) = (n as f64, m as f64);
    let total = nf + mf;
    let u = w - nf * (nf + 1.0) / 2.0;
    let mean = nf * mf / 2.0;
    // Tie correction: sum of t^3 - t over groups of t equal ranks.
    let mut sorted = ranks.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mut ties = 0.0;
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[i] {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        ties += t * t * t - t;
        i = j + 1;
    }
    let var = nf * mf / 12.0 * ((total + 1.0) - ties / (total * (total - 1.0)));
    if var <= 0.0 {
        return 1.0; // every value equal: no evidence of any difference
    }
    let z = (((u - mean).abs() - 0.5).max(0.0)) / var.sqrt();
    (2.0 * (1.0 - phi(z))).clamp(0.0, 1.0)
}

/// Standard normal CDF via erf (Abramowitz & Stegun 7.1.26, error < 1.5e-7: far below
/// what matters for a verdict at 0.05).
pub(crate) fn phi(z: f64) -> f64 {
    let x = z.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * x);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    let erf = 1.0 - poly * (-x * x).exp();
    if z >= 0.0 {
        0.5 * (1.0 + erf)
    } else {
        0.5 * (1.0 - erf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_of_complete_separation_is_two_over_binomial() {
        // 5 vs 5 fully separated: 2 of C(10,5) = 252 splits are as extreme.
        let p = p_value(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert!((p - 2.0 / 252.0).abs() < 1e-12, "{p}");
        // 3 vs 3 can never get below 2/20 = 0.1.
        let p = p_value(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
        assert!((p - 0.1).abs() < 1e-12, "{p}");
    }

    #[test]
    fn identical_and_interleaved_sets_give_p_one() {
        assert_eq!(p_value(&[1.0, 1.0, 1.0], &[1.0, 1.0, 1.0]), Some(1.0));
        let p = p_value(&[1.0, 4.0, 5.0, 8.0], &[2.0, 3.0, 6.0, 7.0]).unwrap();
        assert!(p > 0.9, "{p}");
    }

    #[test]
    fn exact_handles_ties() {
        // Ties get midranks and the permutation distribution counts them as they are.
        let p = p_value(&[1.0, 2.0, 2.0, 3.0], &[2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!(p > 0.05 && p < 0.5, "{p}");
    }

    #[test]
    fn normal_approximation_for_large_samples() {
        let a: Vec<f64> = (0..20).map(f64::from).collect();
        let b: Vec<f64> = (20..40).map(f64::from).collect();
        let p = p_value(&a, &b).unwrap();
        // z = (200 - 0.5) / sqrt(20*20*41/12) = 5.397 → p ≈ 6.8e-8.
        assert!(p < 1e-6, "{p}");
        let c: Vec<f64> = (0..40).step_by(2).map(f64::from).collect();
        let d: Vec<f64> = (1..40).step_by(2).map(f64::from).collect();
        assert!(p_value(&c, &d).unwrap() > 0.5);
    }

    #[test]
    fn phi_matches_known_values() {
        assert!((phi(0.0) - 0.5).abs() < 1e-7);
        assert!((phi(1.96) - 0.975).abs() < 1e-4);
        assert!((phi(-1.96) - 0.025).abs() < 1e-4);
    }
}
