//! Non-uniform offset distributions (random_distribution=zipf/pareto/normal/zoned/
//! zoned_abs): each draws a block *rank*; hot ranks are then spread over the file by
//! the job's block permutation unless a center was given.

use crate::workload::rng::Rng;
use ioscope_options::Distribution;

/// Zipf sampling by rejection-inversion (Hörmann & Derflinger, 1996): exact for any
/// exponent > 0, O(1) per sample, no table.
#[derive(Clone, Debug)]
pub struct Zipf {
    n: f64,
    s: f64,
    h_x1: f64,
    h_n: f64,
    s_term: f64,
}

fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

impl Zipf {
    pub fn new(n: u64, s: f64) -> Self {
        let mut z = Zipf {
            n: n.max(1) as f64,
            s,
            h_x1: 0.0,
            h_n: 0.0,
            s_term: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(z.n + 0.5);
        z.s_term = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.s) * lx) * lx
    }
    fn h(&self, x: f64) -> f64 {
        (-self.s * x.ln()).exp()
    }
    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.s)).max(-1.0);
        (helper1(t) * x).exp()
    }
    /// Rank in [0, n).
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        for _ in 0..64 {
            let u = self.h_n + rng.unit() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s_term || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64 - 1;
            }
        }
        0
    }
}

/// A prepared distribution for one file of `n` blocks.
#[derive(Clone, Debug)]
pub enum RankDist {
    Zipf(Zipf, f64),
    /// Pareto: rank = n · u^exp, exp = ln(h)/ln(1-h) (h=0.2: 80% of I/O to 20% of blocks).
    Pareto {
        exp: f64,
        center: f64,
    },
    Normal {
        dev: f64,
        center: f64,
    },
    /// Per direction: cumulative access %, and [start, end) block range of each zone.
    Zoned([Vec<(f64, u64, u64)>; 3]),
}

impl RankDist {
    /// None for the uniform distribution (handled by the block permutation or uniform draws).
    pub fn new(d: &Distribution, n: u64, block: u64) -> Option<RankDist> {
        match d {
            Distribution::Random => None,
            Distribution::Zipf { theta, center } => {
                Some(RankDist::Zipf(Zipf::new(n, *theta), *center))
            }
            Distribution::Pareto { h, center } => Some(RankDist::Pareto {
                exp: h.ln() / (1.0 - h).ln(),
                center: *center,
            }),
            Distribution::Normal { dev, center } => {
                let c = if *center == 0.0 { 0.5 } else { *center };
                Some(RankDist::Normal {
                    dev: dev / 100.0,
                    center: c,
                })
            }
            Distribution::Zoned(z) => Some(RankDist::Zoned(std::array::from_fn(|i| {
                let mut cum = 0.0;
                let mut start = 0.0;
                z[i].iter()
                    .map(|&(pct, range)| {
                        cum += pct;
                        let s = start;
                        start += range;
                        (
                            cum,
                            (s / 100.0 * n as f64) as u64,
                            ((start / 100.0 * n as f64) as u64).max(1),
                        )
                    })
                    .collect()
            }))),
            Distribution::ZonedAbs(z) => Some(RankDist::Zoned(std::array::from_fn(|i| {
                let mut cum = 0.0;
                let mut start = 0u64;
                z[i].iter()
                    .map(|&(pct, size)| {
                        cum += pct;
                        let s = start;
                        start = start.saturating_add(size / block.max(1));
                        (cum, s, start.max(s + 1))
                    })
                    .collect()
            }))),
        }
    }

    /// Block in [0, n) and whether it is already placed (center/zones) or a rank to scatter.
    #[inline]
    pub fn draw(&self, rng: &mut impl Rng, n: u64, ddir: usize) -> (u64, bool) {
        let nf = n as f64;
        let centered = |rank: u64, c: f64| -> (u64, bool) {
            if c > 0.0 {
                (((rank as f64 + c * nf) as u64) % n, true)
            } else {
                (rank.min(n - 1), false)
            }
        };
        match self {
            RankDist::Zipf(z, c) => centered(z.sample(rng), *c),
            RankDist::Pareto { exp, center } => {
                centered((nf * rng.unit().powf(*exp)) as u64, *center)
            }
            RankDist::Normal { dev, center } => {
                // Box–Muller.
                let (u1, u2) = (rng.unit().max(1e-300), rng.unit());
                let g = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let v = (center + g * dev) * nf;
                ((v.rem_euclid(nf)) as u64 % n, true)
            }
            RankDist::Zoned(zones) => {
                let z = if zones[ddir].is_empty() {
                    &zones[0]
                } else {
                    &zones[ddir]
                };
                let p = rng.unit() * z.last().map_or(100.0, |l| l.0);
                let zone = z.iter().find(|(cum, _, _)| p < *cum).or(z.last());
                match zone {
                    Some(&(_, s, e)) => {
                        ((s + rng.below(e.saturating_sub(s).max(1))).min(n - 1), true)
                    }
                    None => (rng.below(n), true),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::rng::Taus88;

    #[test]
    fn zipf_is_skewed() {
        let z = Zipf::new(1000, 1.1);
        let mut r = Taus88::new(1);
        let mut top = 0;
        for _ in 0..100_000 {
            let k = z.sample(&mut r);
            assert!(k < 1000);
            if k < 10 {
                top += 1;
            }
        }
        // With s=1.1 the first 10 of 1000 ranks draw well over a third of the samples.
        assert!(top > 40_000, "{top}");
    }

    #[test]
    fn pareto_80_20() {
        let d = RankDist::new(
            &Distribution::Pareto {
                h: 0.2,
                center: 0.0,
            },
            1000,
            4096,
        )
        .unwrap();
        let mut r = Taus88::new(2);
        let hot = (0..100_000)
            .filter(|_| d.draw(&mut r, 1000, 0).0 < 200)
            .count();
        assert!((78_000..82_000).contains(&hot), "{hot}");
    }

    #[test]
    fn zoned_follows_percentages() {
        let z = Distribution::Zoned([vec![(50.0, 5.0), (50.0, 95.0)], vec![], vec![]]);
        let d = RankDist::new(&z, 1000, 4096).unwrap();
        let mut r = Taus88::new(3);
        let first = (0..100_000)
            .filter(|_| d.draw(&mut r, 1000, 0).0 < 50)
            .count();
        assert!((48_000..52_000).contains(&first), "{first}");
    }
}
