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
    /// The clat_mean row says no change (or cannot tell): the means agree.
    pub means_agree: bool,
    /// Change of p99 and p99.9 between the merged histograms, in percent.
    pub p99_pct: Option<f64>,
    pub p99_9_pct: Option<f64>,
}

/// One shape per job and direction where both sides have bins.
pub fn shapes(a: &Side, b: &Side, rows: &[Row]) -> Vec<Shape> {
    let kb = inputs::keys(b);
    let mut out = Vec::new();
    for key in inputs::keys(a).into_iter().filter(|k| kb.contains(k)) {
        for (d, dir) in DIR_NAMES.iter().enumerate() {
            let (ha, hb) = (inputs::bins(a, &key, d), inputs::bins(b, &key, d));
            let Some(ks) = shape::ks(&ha, &hb) else {
                continue;
            };
            let mean_row = rows
                .iter()
                .find(|r| r.job == key && r.dir == *dir && r.metric == "clat_mean");
            let means_agree = mean_row.map_or(true, |r| {
                matches!(r.cmp.verdict, Verdict::NoChange | Verdict::NotEnough)
            });
            let change = |q: f64| {
                let (x, y) = (shape::percentile(&ha, q)?, shape::percentile(&hb, q)?);
                (x > 0).then(|| (y as f64 / x as f64 - 1.0) * 100.0)
            };
            out.push(Shape {
                job: key.label(),
                dir,
                differs: ks.p < KS_ALPHA && ks.d >= KS_MIN_D,
                ks,
                means_agree,
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
        if self.differs && self.means_agree {
            s.push_str(": the means agree but the distributions do not; look at the tail rows");
        }
        s
    }
}
