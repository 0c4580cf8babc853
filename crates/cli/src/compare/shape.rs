//! What json+ latency bins add to a comparison: a within-run interval when each side
//! has one run, and the shape test (KS) per job and direction, so that a fatter tail
//! under an unchanged mean is reported.

use super::inputs::{self, Row, Side};
use ioscope_analysis::shape::{self, Ks};
use ioscope_analysis::Verdict;
use ioscope_results::DIR_NAMES;

/// Below this p-value and at or above this distance, the shapes differ.
pub const KS_ALPHA: f64 = 0.01;
pub const KS_MIN_D: f64 = 0.01;

/// The shape test of one job and direction.
pub struct Shape {
    pub job: String,
    pub dir: &'static str,
    pub ks: Ks,
    pub differs: bool,
    /// What the clat_mean row says of the means.
    pub means: Means,
    /// Change of p99 and p99.9 between the merged histograms, in percent.
    pub p99_pct: Option<f64>,
    pub p99_9_pct: Option<f64>,
}

/// The means beside a shape test, as the clat_mean row has them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Means {
    /// The test found no significant change.
    Agree,
    /// Too few repetitions to test; the means are within [`CLOSE_PCT`].
    Close,
    /// Too few repetitions to test; the means are this far apart (%).
    Apart(f64),
    /// The test found them changed (the row says better or worse).
    Changed,
}

/// Untested means this close (in percent) are reported as close.
pub const CLOSE_PCT: f64 = 1.0;

impl Means {
    fn of(row: Option<&Row>) -> Means {
        let Some(r) = row else {
            return Means::Close;
        };
        match (r.cmp.verdict, r.cmp.delta_pct) {
            (Verdict::NoChange, _) => Means::Agree,
            (Verdict::NotEnough, Some(d)) if d.abs() >= CLOSE_PCT => Means::Apart(d),
            (Verdict::NotEnough, _) => Means::Close,
            (Verdict::Better | Verdict::Worse, _) => Means::Changed,
        }
    }

    /// The means are the same as far as the data tell.
    pub fn agree(self) -> bool {
        matches!(self, Means::Agree | Means::Close)
    }
}

/// One shape per job and direction where both sides have bins.
pub fn shapes(a: &Side, b: &Side, rows: &[Row]) -> Vec<Shape> {
    let mut out = Vec::new();
    for key in inputs::keys(a).iter().filter(|k| b.has(k)) {
        for (d, dir) in DIR_NAMES.iter().enumerate() {
            let (ha, hb) = (inputs::bins(a, key, d), inputs::bins(b, key, d));
            let Some(ks) = shape::ks(&ha, &hb) else {
                continue;
            };
            let mean_row = rows
                .iter()
                .find(|r| r.job == *key && r.dir == *dir && r.metric == "clat_mean");
            let means = Means::of(mean_row);
            let change = |q: f64| {
                let (x, y) = (shape::percentile(&ha, q)?, shape::percentile(&hb, q)?);
                (x > 0).then(|| (y as f64 / x as f64 - 1.0) * 100.0)
            };
            out.push(Shape {
                job: key.label(),
                dir,
                differs: ks.p < KS_ALPHA && ks.d >= KS_MIN_D,
                ks,
                means,
                p99_pct: change(99.0),
                p99_9_pct: change(99.9),
            });
        }
    }
    out
}

impl Shape {
    pub fn verdict(&self) -> &'static str {
        if self.differs {
            "shape differs"
        } else {
            "same shape"
        }
    }

    /// One line for the terminal and markdown.
    pub fn text(&self) -> String {
        let pct = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:+.1}%"));
        let p = if self.ks.p < 1e-6 {
            "<1e-6".to_string()
        } else {
            format!("{:.3}", self.ks.p)
        };
        let mut s = format!(
            "latency shape {} {}: {} (KS D={:.3}, p={p}, {} vs {} I/Os; p99 {}, p99.9 {})",
            self.job,
            self.dir,
            self.verdict(),
            self.ks.d,
            self.ks.n_a,
            self.ks.n_b,
            pct(self.p99_pct),
            pct(self.p99_9_pct)
        );
        if self.differs {
            s.push_str(&match self.means {
                Means::Agree => {
                    ": the means agree but the distributions do not; look at the tail rows".into()
                }
                Means::Close => format!(
                    ": the means are within {CLOSE_PCT}% but the distributions differ; look \
                     at the tail rows"
                ),
                Means::Apart(d) => format!(
                    ": the means differ by {d:+.1}% as well (too few repetitions to test it)"
                ),
                Means::Changed => String::new(),
            });
        }
        s
    }
}
