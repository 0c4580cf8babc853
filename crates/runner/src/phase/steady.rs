//! Steady-state detection (steadystate, steadystate_duration, steadystate_ramp_time,
//! steadystate_check_interval), sampled by the monitor thread from the jobs' counters.
//!
//! After the ramp, every interval the job's (or, with group_reporting, the group's)
//! IOPS and bandwidth over that interval go into a window of duration/interval samples.
//! Once the window is full the criterion is evaluated on every new sample: for `iops`
//! and `bw` the largest deviation from the window's mean, for `iops_slope` and
//! `bw_slope` the least-squares slope — in absolute units or as a percentage of the
//! mean. When it holds, the job (or the group) is stopped, as fio does.

use crate::clock::{Clock, Ticks};
use crate::record::{Shared, STATE_RUNNING};
use ioscope_options::SteadySpec;
use ioscope_stats::SteadyState;
use std::collections::VecDeque;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

/// The covered jobs' counters at a sample.
#[derive(Clone, Copy, Debug, Default)]
struct Totals {
    ios: u64,
    bytes: u64,
    lat_sum: u64,
    lat_n: u64,
}

impl Totals {
    fn of(jobs: &[&Arc<Shared>]) -> Totals {
        let sum = |f: &dyn Fn(&Shared) -> u64| jobs.iter().map(|s| f(s)).sum::<u64>();
        Totals {
            ios: sum(&|s| s.ios.iter().map(|a| a.load(Relaxed)).sum()),
            bytes: sum(&|s| s.bytes.iter().map(|a| a.load(Relaxed)).sum()),
            lat_sum: sum(&|s| s.clat_sum_ns.load(Relaxed)),
            lat_n: sum(&|s| s.clat_count.load(Relaxed)),
        }
    }
}

pub struct SteadyTracker {
    clock: &'static Clock,
    spec: SteadySpec,
    duration_s: u64,
    window: usize,
    interval: Ticks,
    ramp: Ticks,
    /// Indices of the jobs (in the phase) this tracker covers.
    pub members: Vec<usize>,
    baseline: Option<(Ticks, Totals)>,
    iops: VecDeque<u64>,
    bw: VecDeque<u64>,
    /// steadystate=lat|lat_slope: each interval's mean completion latency, ns.
    lat: VecDeque<u64>,
    attained: bool,
    criterion: f64,
    max_deviation: f64,
    slope: f64,
}

impl SteadyTracker {
    pub fn new(
        spec: SteadySpec,
        duration_us: u64,
        ramp_us: u64,
        interval_us: u64,
        members: Vec<usize>,
        c: &'static Clock,
    ) -> Self {
        let interval_us = interval_us.max(100_000);
        SteadyTracker {
            clock: c,
            spec,
            duration_s: duration_us / 1_000_000,
            window: (duration_us / interval_us).max(1) as usize,
            interval: c.ticks(Duration::from_micros(interval_us)),
            ramp: c.ticks(Duration::from_micros(ramp_us)),
            members,
            baseline: None,
            iops: VecDeque::new(),
            bw: VecDeque::new(),
            lat: VecDeque::new(),
            attained: false,
            criterion: 0.0,
            max_deviation: 0.0,
            slope: 0.0,
        }
    }

    /// Called often by the monitor; takes a sample when an interval has passed.
    pub fn tick(&mut self, now: Ticks, jobs: &[&Arc<Shared>]) {
        if self.attained || jobs.iter().any(|s| s.state.load(Relaxed) != STATE_RUNNING) {
            return;
        }
        let Some((t0, was)) = self.baseline else {
            let start = jobs
                .iter()
                .map(|s| s.measure_start.load(Relaxed))
                .max()
                .unwrap_or(now);
            if now >= start + self.ramp {
                self.baseline = Some((now, Totals::of(jobs)));
            }
            return;
        };
        if now < t0 + self.interval {
            return;
        }
        let is = Totals::of(jobs);
        let secs = self.clock.delta_ns(t0, now) as f64 / 1e9;
        let per_sec = |a: u64, b: u64| (a.saturating_sub(b) as f64 / secs).round() as u64;
        self.iops.push_back(per_sec(is.ios, was.ios));
        self.bw.push_back(per_sec(is.bytes, was.bytes));
        if self.spec.lat {
            let n = is.lat_n.saturating_sub(was.lat_n);
            let sum = is.lat_sum.saturating_sub(was.lat_sum);
            self.lat.push_back(sum.checked_div(n).unwrap_or(0));
        }
        if self.iops.len() > self.window {
            self.iops.pop_front();
            self.bw.pop_front();
            self.lat.pop_front();
        }
        self.baseline = Some((now, is));
        if self.iops.len() == self.window {
            self.evaluate();
            if self.attained {
                for s in jobs {
                    s.stop.store(true, Relaxed);
                }
            }
        }
    }

    fn evaluate(&mut self) {
        let data: Vec<f64> = match (self.spec.lat, self.spec.bw) {
            (true, _) => &self.lat,
            (false, true) => &self.bw,
            (false, false) => &self.iops,
        }
        .iter()
        .map(|&v| v as f64)
        .collect();
        let n = data.len() as f64;
        let mean = data.iter().sum::<f64>() / n;
        let scale = |v: f64| {
            if self.spec.pct {
                if mean > 0.0 {
                    100.0 * v / mean
                } else {
                    f64::INFINITY
                }
            } else {
                v
            }
        };
        if self.spec.slope {
            // Least squares with x = 0..n-1, equally spaced samples.
            let sum_x = n * (n - 1.0) / 2.0;
            let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
            let sum_xy: f64 = data.iter().enumerate().map(|(i, y)| i as f64 * y).sum();
            let sum_y: f64 = data.iter().sum();
            let den = n * sum_x2 - sum_x * sum_x;
            self.slope = if den == 0.0 {
                0.0
            } else {
                (n * sum_xy - sum_x * sum_y) / den
            };
            self.criterion = scale(self.slope);
            self.attained = self.criterion.abs() < self.spec.limit;
        } else {
            self.max_deviation = data.iter().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            self.criterion = scale(self.max_deviation);
            self.attained = self.criterion < self.spec.limit;
        }
    }

    pub fn result(&self) -> SteadyState {
        // As fio: the window's every slot, oldest first, zeros where no sample came
        // (the run ended before the window filled), and the means over the window.
        let padded = |v: &VecDeque<u64>| -> Vec<u64> {
            let mut out: Vec<u64> = v.iter().copied().collect();
            out.resize(self.window.max(v.len()), 0);
            out
        };
        let (iops, bw) = (padded(&self.iops), padded(&self.bw));
        let lat = if self.spec.lat {
            padded(&self.lat)
        } else {
            Vec::new()
        };
        let mean = |v: &[u64]| v.iter().sum::<u64>() / v.len().max(1) as u64;
        SteadyState {
            ss: format!(
                "{}:{:.6}{}",
                self.spec.metric(),
                self.spec.limit,
                if self.spec.pct { "%" } else { "" }
            ),
            metric: self.spec.metric().to_string(),
            duration_s: self.duration_s,
            attained: self.attained,
            full: self.iops.len() >= self.window,
            criterion: self.criterion,
            pct: self.spec.pct,
            max_deviation: self.max_deviation,
            slope: self.slope,
            iops_mean: mean(&iops),
            bw_mean: mean(&bw),
            lat_mean: self.spec.lat.then(|| mean(&lat)),
            iops,
            bw,
            lat,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracker(spec: &str) -> SteadyTracker {
        let def = ioscope_options::table::find("steadystate").unwrap();
        let cx = ioscope_options::ValueCx { def, kb_base: 1024 };
        let spec = <SteadySpec as ioscope_options::types::OptValue>::parse(
            spec,
            &cx,
            &SteadySpec::default(),
        )
        .unwrap();
        SteadyTracker::new(spec, 3_000_000, 0, 1_000_000, vec![0], Clock::get())
    }

    #[test]
    fn deviation_matches_fio_sample() {
        // fio 3.33: iops [5001, 5002, 5001] → max_deviation 0.666667, criterion 0.013330%.
        let mut t = tracker("iops:5%");
        t.iops = [5001, 5002, 5001].into_iter().collect();
        t.bw = [20484096, 20488192, 20484100].into_iter().collect();
        t.evaluate();
        assert!((t.max_deviation - 0.666667).abs() < 1e-6);
        assert!((t.criterion - 0.013330).abs() < 1e-6, "{}", t.criterion);
        assert!(t.attained);
        let r = t.result();
        assert_eq!(r.ss, "iops:5.000000%");
        assert_eq!(r.iops_mean, 5001);
    }

    #[test]
    fn a_window_not_filled_is_padded_with_zeros_as_fio_does() {
        // fio 3.42, ss_dur=6 with two samples: iops [1000, 998, 0, 0, 0, 0], mean 333.
        let mut t = SteadyTracker::new(
            SteadySpec::default(),
            6_000_000,
            0,
            1_000_000,
            vec![0],
            Clock::get(),
        );
        t.iops = [1000, 998].into_iter().collect();
        t.bw = [4096000, 4087812].into_iter().collect();
        let r = t.result();
        assert_eq!(r.iops, [1000, 998, 0, 0, 0, 0]);
        assert_eq!(r.iops_mean, 333);
        assert_eq!(r.bw_mean, (4096000 + 4087812) / 6);
    }

    #[test]
    fn slope() {
        let mut t = tracker("bw_slope:1%");
        t.bw = [100, 110, 120].into_iter().collect();
        t.iops = [1, 1, 1].into_iter().collect();
        t.evaluate();
        assert!((t.slope - 10.0).abs() < 1e-9);
        assert!((t.criterion - 100.0 * 10.0 / 110.0).abs() < 1e-9);
        assert!(!t.attained);
    }
}
