//! Pacing (rate, rate_iops, rate_process) and think time (thinktime, thinktime_spin,
//! thinktime_blocks).

use crate::clock::{Clock, Ticks};
use crate::rng::{Rng, Taus88};
use ioscope_engine::Ddir;
use ioscope_options::{JobOptions, RateProcess};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Decides when each I/O may be issued.
pub struct Pacer {
    /// Ticks per byte (rate) or per I/O (rate_iops), per direction; 0 = unpaced.
    per_byte: [f64; 3],
    per_io: [f64; 3],
    due: [f64; 3],
    poisson: bool,
    rng: Taus88,
    started: bool,
    /// Any rate or rate_iops set.
    paced: bool,
    hz: f64,
    pub next_due: Ticks,
    /// An I/O is being held back until `next_due`.
    pub waiting: bool,
}

impl Pacer {
    pub fn new(o: &JobOptions, clock: &Clock) -> Pacer {
        let hz = clock.hz as f64;
        Pacer {
            per_byte: std::array::from_fn(|d| {
                if o.rate.0[d] > 0 {
                    hz / o.rate.0[d] as f64
                } else {
                    0.0
                }
            }),
            per_io: std::array::from_fn(|d| {
                if o.rate_iops.0[d] > 0 {
                    hz / o.rate_iops.0[d] as f64
                } else {
                    0.0
                }
            }),
            due: [0.0; 3],
            poisson: o.rate_process == RateProcess::Poisson,
            rng: Taus88::new(o.randseed ^ 0x7261_7465),
            started: false,
            paced: o.rate.0.iter().chain(o.rate_iops.0.iter()).any(|&r| r > 0),
            hz,
            next_due: u64::MAX,
            waiting: false,
        }
    }

    /// May an I/O of `len` bytes in `ddir` go now? If not, `next_due` says when.
    #[inline(always)]
    pub fn admit(&mut self, ddir: Ddir, len: u32, now: Ticks) -> bool {
        if !self.paced {
            return true;
        }
        let d = ddir.index().min(2);
        let gap = self.per_byte[d] * len as f64 + self.per_io[d];
        if gap == 0.0 {
            return true;
        }
        if !self.started {
            self.started = true;
            self.due = [now as f64; 3];
        }
        if (now as f64) < self.due[d] {
            // Round up: waking at the truncated tick would find the I/O still not due.
            self.next_due = self.due[d].ceil() as Ticks;
            self.waiting = true;
            return false;
        }
        let step = if self.poisson {
            -gap * (1.0 - self.rng.unit()).ln()
        } else {
            gap
        };
        // After a stall, catch up by at most one second's worth of I/O.
        self.due[d] = self.due[d].max(now as f64 - self.hz) + step;
        self.waiting = false;
        self.next_due = u64::MAX;
        true
    }
}

/// Think time between I/Os.
pub struct Think {
    think_us: u64,
    spin_us: u64,
    blocks: u32,
    done: u32,
}

impl Think {
    pub fn new(o: &JobOptions) -> Think {
        Think {
            think_us: o.thinktime,
            spin_us: o.thinktime_spin.min(o.thinktime),
            blocks: o.thinktime_blocks.max(1),
            done: 0,
        }
    }

    #[inline(always)]
    pub fn completed(&mut self) {
        if self.think_us > 0 {
            self.done += 1;
        }
    }

    #[inline(always)]
    pub fn due(&self) -> bool {
        self.think_us > 0 && self.done >= self.blocks
    }

    /// Spin thinktime_spin, then sleep the rest of thinktime.
    pub fn pause(&mut self, clock: &Clock, stop: &AtomicBool) {
        let start = clock.now();
        clock.spin_until(
            start + clock.ticks(Duration::from_micros(self.spin_us)),
            stop,
        );
        clock.sleep_until(
            start + clock.ticks(Duration::from_micros(self.think_us)),
            stop,
        );
        self.done = 0;
    }
}
