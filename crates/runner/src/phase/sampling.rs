//! What the monitor measures of each running job between its I/Os: bandwidth and
//! IOPS samples (bwavgtime/iopsavgtime) and the rate_min/rate_iops_min checks.

use crate::clock::{Clock, Ticks};
use crate::record::{Shared, STATE_RUNNING};
use ioscope_options::JobOptions;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// rate_min / rate_iops_min: every rate_cycle, the job must have done at least this
/// much per second in each direction it uses, or it fails (EIO, as fio).
pub(crate) struct MinRate {
    bytes: [u64; 3],
    ios: [u64; 3],
    cycle: Ticks,
    clock: &'static Clock,
    last: Option<(Ticks, [u64; 3], [u64; 3])>,
}

impl MinRate {
    pub fn new(o: &JobOptions, clock: &'static Clock) -> Option<MinRate> {
        let any = o
            .rate_min
            .0
            .iter()
            .chain(o.rate_iops_min.0.iter())
            .any(|&r| r > 0);
        any.then(|| MinRate {
            bytes: o.rate_min.0,
            ios: o.rate_iops_min.0,
            cycle: clock.ticks(Duration::from_millis(o.rate_cycle.max(1))),
            clock,
            last: None,
        })
    }

    /// A message when the last cycle was too slow.
    pub fn check(&mut self, s: &Shared, now: Ticks, dirs: &[bool; 3]) -> Option<String> {
        if s.state.load(Relaxed) != STATE_RUNNING {
            return None;
        }
        let bytes: [u64; 3] = std::array::from_fn(|d| s.bytes[d].load(Relaxed));
        let ios: [u64; 3] = std::array::from_fn(|d| s.ios[d].load(Relaxed));
        let Some((t0, b0, i0)) = self.last else {
            self.last = Some((now, bytes, ios));
            return None;
        };
        if now < t0 + self.cycle {
            return None;
        }
        // As fio: the rate is checked when I/O completes, over the time since the last
        // check (a job paced slower than one I/O per cycle is judged over the gap
        // between its I/Os, not failed for an empty cycle).
        let moved = (0..3).any(|d| dirs[d] && (bytes[d] != b0[d] || ios[d] != i0[d]));
        if !moved {
            return None;
        }
        self.last = Some((now, bytes, ios));
        let secs = self.clock.delta_ns(t0, now) as f64 / 1e9;
        let names = ["read", "write", "trim"];
        for d in (0..3).filter(|&d| dirs[d]) {
            let bw = bytes[d].saturating_sub(b0[d]) as f64 / secs;
            if self.bytes[d] > 0 && bw < self.bytes[d] as f64 {
                return Some(format!(
                    "min rate {} B/s not met for {}: got {bw:.0} B/s",
                    self.bytes[d], names[d]
                ));
            }
            let iops = ios[d].saturating_sub(i0[d]) as f64 / secs;
            if self.ios[d] > 0 && iops < self.ios[d] as f64 {
                return Some(format!(
                    "min rate {} IOPS not met for {}: got {iops:.0} IOPS",
                    self.ios[d], names[d]
                ));
            }
        }
        None
    }
}

/// bw and iops samples of one job, taken by the monitor every bwavgtime/iopsavgtime.
pub(crate) struct Sampler {
    bw_ticks: u64,
    iops_ticks: u64,
    next_bw: Ticks,
    next_iops: Ticks,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    last_bw_t: Ticks,
    last_iops_t: Ticks,
    started: bool,
    disabled: bool,
    pub bw: [ioscope_stats::SampleStat; 3],
    pub iops: [ioscope_stats::SampleStat; 3],
}

impl Sampler {
    pub fn new(bw_ms: u64, iops_ms: u64, disabled: bool, c: &Clock) -> Sampler {
        Sampler {
            bw_ticks: c.ticks(Duration::from_millis(bw_ms.max(1))),
            iops_ticks: c.ticks(Duration::from_millis(iops_ms.max(1))),
            next_bw: 0,
            next_iops: 0,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            last_bw_t: 0,
            last_iops_t: 0,
            started: false,
            disabled,
            bw: Default::default(),
            iops: Default::default(),
        }
    }

    pub fn tick(&mut self, s: &Shared, now: Ticks, clock: &Clock, dirs: &[bool; 3]) {
        if self.disabled || s.state.load(Relaxed) != STATE_RUNNING {
            return;
        }
        let t0 = s.measure_start.load(Relaxed);
        if !self.started || self.last_bw_t < t0 {
            self.started = true;
            self.last_bw_t = t0;
            self.last_iops_t = t0;
            self.next_bw = t0 + self.bw_ticks;
            self.next_iops = t0 + self.iops_ticks;
            self.last_bytes = [0; 3];
            self.last_ios = [0; 3];
        }
        if now >= self.next_bw {
            let secs = clock.delta_ns(self.last_bw_t, now) as f64 / 1e9;
            for (d, bw) in self.bw.iter_mut().enumerate() {
                let b = s.bytes[d].load(Relaxed);
                if dirs[d] && secs > 0.0 {
                    bw.add((b.saturating_sub(self.last_bytes[d])) as f64 / 1024.0 / secs);
                }
                self.last_bytes[d] = b;
            }
            self.last_bw_t = now;
            self.next_bw += self.bw_ticks;
        }
        if now >= self.next_iops {
            let secs = clock.delta_ns(self.last_iops_t, now) as f64 / 1e9;
            for (d, iops) in self.iops.iter_mut().enumerate() {
                let n = s.ios[d].load(Relaxed);
                if dirs[d] && secs > 0.0 {
                    iops.add((n.saturating_sub(self.last_ios[d])) as f64 / secs);
                }
                self.last_ios[d] = n;
            }
            self.last_iops_t = now;
            self.next_iops += self.iops_ticks;
        }
    }
}
