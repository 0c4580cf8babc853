//! Fairness over time: bandwidth samples of several jobs (fio's bandwidth logs) cut
//! into windows of equal length; per window each job's share of the bytes against the
//! share its weight gives it, Jain's index over the weighted shares, and the jobs that
//! got less than a tenth of their ideal share (starvation).
//!
//! A sample `(t_ms, value)` is a rate over the logging interval that ends at `t_ms`; it
//! belongs to the window holding `(t_ms - 1)`, so a 500 ms average logged at 1000
//! counts in the window 0-1000. The amount of a job in a window is the sum of its
//! samples there: with the same logging interval for every job (as one run writes
//! them) the sums are proportional to the bytes moved. A job with no samples in a
//! window moved nothing in it.

use crate::fairness::jain_index;

/// Below this fraction of its ideal share a job counts as starved in a window.
pub const STARVED_BELOW: f64 = 0.10;

/// One job's samples: `(t_ms, value)` in any order, any unit common to all jobs.
pub type Series = Vec<(u64, f64)>;

/// One window of the timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Start of the window, ms since the start of the run.
    pub t_ms: u64,
    /// Jain's index over amount/weight of the jobs of weight > 0; `None` when nothing
    /// moved in the window.
    pub jain: Option<f64>,
    /// Per job: percent of the window's total amount (0 when the total is 0).
    pub share_pct: Vec<f64>,
    /// Per job: its share over its ideal share (1 = exactly its weight's share);
    /// `None` for a job of weight 0 or when nothing moved in the window.
    pub of_ideal: Vec<Option<f64>>,
}

/// A run of consecutive windows in which one job was starved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Starvation {
    pub job: usize,
    pub from_ms: u64,
    /// End of the last starved window.
    pub to_ms: u64,
}

/// The windows of length `window_ms` (> 0) over `series`, one series per job, with the
/// weights of the fairness model (one per job). Windows run from 0 to the last sample.
pub fn windows(series: &[Series], weights: &[u64], window_ms: u64) -> Vec<Window> {
    let w = window_ms.max(1);
    let last = series.iter().flat_map(|s| s.iter().map(|&(t, _)| t)).max();
    let Some(last) = last else {
        return Vec::new();
    };
    let count = (last.saturating_sub(1) / w + 1) as usize;
    let mut amount = vec![vec![0.0f64; series.len()]; count];
    for (j, s) in series.iter().enumerate() {
        for &(t, v) in s {
            let k = (t.saturating_sub(1) / w) as usize;
            if v.is_finite() && v > 0.0 {
                amount[k][j] += v;
            }
        }
    }
    let total_weight: u64 = weights.iter().sum();
    amount
        .into_iter()
        .enumerate()
        .map(|(k, a)| window(k as u64 * w, &a, weights, total_weight))
        .collect()
}

fn window(t_ms: u64, amount: &[f64], weights: &[u64], total_weight: u64) -> Window {
    let total: f64 = amount.iter().sum();
    let weight = |j: usize| weights.get(j).copied().unwrap_or(0);
    let share_pct = amount
        .iter()
        .map(|&a| if total > 0.0 { a * 100.0 / total } else { 0.0 })
        .collect();
    let of_ideal = amount
        .iter()
        .enumerate()
        .map(|(j, &a)| {
            let wj = weight(j);
            if wj == 0 || total <= 0.0 || total_weight == 0 {
                return None;
            }
            let ideal = total * wj as f64 / total_weight as f64;
            Some(a / ideal)
        })
        .collect();
    let shares: Vec<f64> = amount
        .iter()
        .enumerate()
        .filter(|&(j, _)| weight(j) > 0)
        .map(|(j, &a)| a / weight(j) as f64)
        .collect();
    Window {
        t_ms,
        jain: jain_index(&shares),
        share_pct,
        of_ideal,
    }
}

/// Per job, the runs of consecutive windows where it got less than
/// [`STARVED_BELOW`] of its ideal share, by job then time.
pub fn starvation(windows: &[Window], window_ms: u64) -> Vec<Starvation> {
    let jobs = windows.first().map_or(0, |w| w.of_ideal.len());
    let mut out = Vec::new();
    for j in 0..jobs {
        let mut open: Option<Starvation> = None;
        for w in windows {
            let starved = w
                .of_ideal
                .get(j)
                .copied()
                .flatten()
                .is_some_and(|f| f < STARVED_BELOW);
            match (&mut open, starved) {
                (Some(s), true) if s.to_ms == w.t_ms => s.to_ms = w.t_ms + window_ms,
                (_, true) => {
                    out.extend(open.take());
                    open = Some(Starvation {
                        job: j,
                        from_ms: w.t_ms,
                        to_ms: w.t_ms + window_ms,
                    });
                }
                (_, false) => out.extend(open.take()),
            }
        }
        out.extend(open);
    }
    out
}

/// Index of the job with the smallest and the largest share relative to its ideal in a
/// window; `None` when nothing moved.
pub fn min_max(w: &Window) -> Option<(usize, usize)> {
    let with: Vec<(usize, f64)> = w
        .of_ideal
        .iter()
        .enumerate()
        .filter_map(|(j, f)| f.map(|f| (j, f)))
        .collect();
    let min = with.iter().min_by(|a, b| a.1.total_cmp(&b.1))?.0;
    let max = with.iter().max_by(|a, b| a.1.total_cmp(&b.1))?.0;
    Some((min, max))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 500 ms log of `secs` seconds at `rate`, with nothing in [gap_from, gap_to) ms.
    fn series(secs: u64, rate: f64, gap: Option<(u64, u64)>) -> Series {
        (1..=secs * 2)
            .map(|i| i * 500)
            .filter(|&t| !gap.is_some_and(|(a, b)| t > a && t <= b))
            .map(|t| (t, rate))
            .collect()
    }

    #[test]
    fn an_even_series_is_fair_and_nobody_starves() {
        let s: Vec<Series> = (0..8).map(|_| series(5, 1000.0, None)).collect();
        let w = windows(&s, &[100; 8], 1000);
        assert_eq!(w.len(), 5);
        assert_eq!(
            w.iter().map(|w| w.t_ms).collect::<Vec<_>>(),
            [0, 1000, 2000, 3000, 4000]
        );
        for x in &w {
            assert!((x.jain.unwrap() - 1.0).abs() < 1e-12);
            assert!(x.share_pct.iter().all(|&p| (p - 12.5).abs() < 1e-9));
        }
        assert!(starvation(&w, 1000).is_empty());
    }

    #[test]
    fn a_two_second_gap_in_one_of_ten_is_flagged_at_its_time() {
        let mut s: Vec<Series> = (0..10).map(|_| series(6, 500.0, None)).collect();
        s[7] = series(6, 500.0, Some((2000, 4000)));
        let w = windows(&s, &[100; 10], 1000);
        assert_eq!(w.len(), 6);
        assert_eq!(
            starvation(&w, 1000),
            [Starvation {
                job: 7,
                from_ms: 2000,
                to_ms: 4000
            }]
        );
        assert!(w[2].jain.unwrap() < 1.0 && w[1].jain == Some(1.0));
        assert_eq!(w[2].share_pct[7], 0.0);
        assert_eq!(min_max(&w[2]).map(|m| m.0), Some(7));
    }

    #[test]
    fn shares_are_against_the_weights() {
        // be0 (180) and be7 (40) moving bytes in proportion to their weights is fair.
        let s = vec![series(2, 180.0, None), series(2, 40.0, None)];
        let w = windows(&s, &[180, 40], 1000);
        assert!((w[0].jain.unwrap() - 1.0).abs() < 1e-12);
        let f = w[0].of_ideal[1].unwrap();
        assert!((f - 1.0).abs() < 1e-12);
        // Equal bytes: be7 got 4.5 times its share; 2% of ideal is starved.
        let s = vec![series(2, 1000.0, None), series(2, 2.0, None)];
        let w = windows(&s, &[100, 100], 1000);
        assert_eq!(starvation(&w, 1000).len(), 1);
        assert_eq!(min_max(&w[1]), Some((1, 0)));
    }

    #[test]
    fn empty_and_idle_windows() {
        assert!(windows(&[vec![], vec![]], &[1, 1], 1000).is_empty());
        let s = vec![vec![(3000, 0.0)], vec![(3000, 0.0)]];
        let w = windows(&s, &[1, 1], 1000);
        assert_eq!(w.len(), 3);
        assert!(w.iter().all(|w| w.jain.is_none()));
        assert!(starvation(&w, 1000).is_empty());
        // A sample at 0 (per-I/O logs) falls in the first window.
        let w = windows(&[vec![(0, 5.0)]], &[1], 1000);
        assert_eq!(w.len(), 1);
    }
}
