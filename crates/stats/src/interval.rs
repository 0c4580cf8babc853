//! One job's I/O over an interval of a running job (`--live`, the metrics endpoint):
//! what two copies of its statistics, taken one after the other, differ by. Counts are
//! exact, so a job's intervals add up to its report; latency comes from the interval's
//! own histogram, never from averaging cumulative figures.

use crate::hist::Histogram;
use crate::lat::LatTrack;
use crate::result::{DirStats, JobResult, PrioStat, DATA_DIRS};
use serde::{Deserialize, Serialize};

/// A latency over an interval: how many, their exact sum, and their histogram (when
/// the job keeps one for this latency).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct LatInterval {
    pub n: u64,
    pub sum_ns: u128,
    pub hist: Option<Histogram>,
}

impl LatInterval {
    fn between(now: &LatTrack, before: Option<&LatTrack>) -> LatInterval {
        let Some(b) = before else {
            return LatInterval {
                n: now.stat.n,
                sum_ns: now.stat.sum,
                hist: now.hist.clone(),
            };
        };
        LatInterval {
            n: now.stat.n.saturating_sub(b.stat.n),
            sum_ns: now.stat.sum.saturating_sub(b.stat.sum),
            hist: match (&now.hist, &b.hist) {
                (Some(h), Some(e)) => Some(h.since(e)),
                (h, _) => h.clone(),
            },
        }
    }

    /// Add another interval's latencies (exact: counts, sums and histograms add).
    pub fn add(&mut self, o: &LatInterval) {
        self.n += o.n;
        self.sum_ns += o.sum_ns;
        match (&mut self.hist, &o.hist) {
            (Some(a), Some(b)) => a.merge(b),
            (None, Some(b)) => self.hist = Some(b.clone()),
            _ => {}
        }
    }

    /// Exact mean (ns), when any latency was counted.
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum_ns as f64 / self.n as f64)
    }
}

/// One priority's latency over an interval.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrioInterval {
    pub ioprio: u16,
    pub lat: LatInterval,
}

/// One direction of a job over an interval.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DirInterval {
    pub ios: u64,
    pub bytes: u64,
    pub clat: LatInterval,
    pub lat: LatInterval,
    /// Per priority: clat, or lat with lat_percentiles (as the report's).
    pub prios: Vec<PrioInterval>,
}

impl DirInterval {
    /// `now` less `before` (a copy taken earlier; None: since the start).
    pub fn between(now: &DirStats, before: Option<&DirStats>) -> DirInterval {
        DirInterval {
            ios: now.total_ios - before.map_or(0, |b| b.total_ios.min(now.total_ios)),
            bytes: now.io_bytes - before.map_or(0, |b| b.io_bytes.min(now.io_bytes)),
            clat: LatInterval::between(&now.clat, before.map(|b| &b.clat)),
            lat: LatInterval::between(&now.lat, before.map(|b| &b.lat)),
            prios: now
                .prios
                .iter()
                .map(|p| prio_between(p, before.and_then(|b| find_prio(b, p.ioprio))))
                .collect(),
        }
    }
}

impl DirInterval {
    /// Add another job's (or host's) interval: the sum of their I/O.
    pub fn add(&mut self, o: &DirInterval) {
        self.ios += o.ios;
        self.bytes += o.bytes;
        self.clat.add(&o.clat);
        self.lat.add(&o.lat);
        for p in &o.prios {
            match self.prios.iter_mut().find(|q| q.ioprio == p.ioprio) {
                Some(q) => q.lat.add(&p.lat),
                None => self.prios.push(p.clone()),
            }
        }
    }
}

fn find_prio(d: &DirStats, ioprio: u16) -> Option<&PrioStat> {
    d.prios.iter().find(|p| p.ioprio == ioprio)
}

fn prio_between(now: &PrioStat, before: Option<&PrioStat>) -> PrioInterval {
    let lat = match before {
        None => LatInterval {
            n: now.stat.n,
            sum_ns: now.stat.sum,
            hist: Some(now.hist.clone()),
        },
        Some(b) => LatInterval {
            n: now.stat.n.saturating_sub(b.stat.n),
            sum_ns: now.stat.sum.saturating_sub(b.stat.sum),
            hist: Some(now.hist.since(&b.hist)),
        },
    };
    PrioInterval {
        ioprio: now.ioprio,
        lat,
    }
}

/// Every direction of a job between two copies of its results.
pub fn job_between(now: &JobResult, before: Option<&JobResult>) -> [DirInterval; DATA_DIRS] {
    std::array::from_fn(|d| DirInterval::between(&now.dirs[d], before.map(|b| &b.dirs[d])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lat::LatTrack;

    fn dir(values: &[u64]) -> DirStats {
        let mut d = DirStats {
            clat: LatTrack::new(true),
            ..Default::default()
        };
        for &v in values {
            d.clat.add(v);
            d.total_ios += 1;
            d.io_bytes += 4096;
        }
        d
    }

    #[test]
    fn an_interval_is_what_was_added_in_it() {
        let first = [1000, 2000, 3000];
        let later = [500_000, 600_000];
        let before = dir(&first);
        let now = dir(&[&first[..], &later[..]].concat());
        let iv = DirInterval::between(&now, Some(&before));
        assert_eq!((iv.ios, iv.bytes, iv.clat.n), (2, 8192, 2));
        assert_eq!(iv.clat.sum_ns, 1_100_000);
        let h = iv.clat.hist.as_ref().unwrap();
        assert_eq!(h, dir(&later).clat.hist.as_ref().unwrap());
        // The interval's own percentiles: none of the earlier, fast I/Os.
        assert!(h.percentile(1.0).unwrap() > 400_000);
        let (lo, hi) = h.range().unwrap();
        assert!(lo.abs_diff(500_000) < 500 && hi.abs_diff(600_000) < 600);
        // And the intervals add up to the whole.
        let whole = DirInterval::between(&now, None);
        assert_eq!(whole.ios, DirInterval::between(&before, None).ios + iv.ios);
    }
}
