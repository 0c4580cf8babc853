//! Pacing (rate, rate_iops, rate_process, rate_ignore_thinktime) and think time
//! (thinktime, thinktime_spin, thinktime_blocks, thinktime_blocks_type, thinktime_iotime).

use crate::clock::{Clock, Ticks};
use crate::workload::rng::{Rng, Taus88};
use ioscope_engine::Ddir;
use ioscope_options::{JobOptions, RateProcess, ThinktimeBlocksType};
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
    /// When the I/O admitted last was due by the schedule (0: none since taken).
    sched: Ticks,
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
            sched: 0,
        }
    }

    /// Any rate or rate_iops set.
    #[inline(always)]
    pub fn paced(&self) -> bool {
        self.paced
    }

    /// When the I/O just admitted was due (`now` for one the schedule did not hold).
    #[inline(always)]
    pub fn take_sched(&mut self, now: Ticks) -> Ticks {
        match std::mem::take(&mut self.sched) {
            0 => now,
            t => t,
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
        // The time this I/O was due: its latency from then is its schedlat (what a
        // user issuing at this rate would have waited, queueing included).
        self.sched = (self.due[d] as Ticks).max(1);
        // After a stall, catch up by at most one second's worth of I/O.
        self.due[d] = self.due[d].max(now as f64 - self.hz) + step;
        self.waiting = false;
        self.next_due = u64::MAX;
        true
    }

    /// When the first of the directions in `dirs` that are paced is due next (None:
    /// none is paced, or the schedule has not started).
    pub fn earliest_due(&self, dirs: [bool; 3]) -> Option<Ticks> {
        if !self.paced || !self.started {
            return None;
        }
        (0..3)
            .filter(|&d| dirs[d] && (self.per_byte[d] > 0.0 || self.per_io[d] > 0.0))
            .map(|d| self.due[d].ceil() as Ticks)
            .min()
    }

    /// rate_ignore_thinktime: the schedule moves on by the time spent thinking, so the
    /// job resumes at its rate instead of catching up on what it did not issue.
    pub fn skip(&mut self, ticks: Ticks) {
        if self.started {
            for d in &mut self.due {
                *d += ticks as f64;
            }
        }
    }
}

/// Think time between I/Os: after thinktime_blocks I/Os (counted as they complete, or
/// as they are issued with thinktime_blocks_type=issue) or after thinktime_iotime of
/// I/O, the job lets its I/O in flight finish, then spins thinktime_spin and sleeps
/// the rest of thinktime.
pub struct Think {
    think_us: u64,
    spin_us: u64,
    blocks: u32,
    done: u32,
    /// Count at issue (thinktime_blocks_type=issue) rather than at completion.
    on_issue: bool,
    /// Whether the block count triggers: with thinktime_iotime and the default
    /// thinktime_blocks (1), only the time does.
    use_blocks: bool,
    /// thinktime_iotime in ticks (0: none), and when the current stretch of I/O began.
    iotime: Ticks,
    since: Ticks,
    timed_out: bool,
    /// thinkcycles: clock ticks to stall after each completion (TSC cycles on the
    /// TSC clock).
    stall: Ticks,
    clock: &'static Clock,
}

impl Think {
    pub fn new(o: &JobOptions, clock: &'static Clock, start: Ticks) -> Think {
        let iotime = clock.ticks(Duration::from_micros(o.thinktime_iotime));
        Think {
            think_us: o.thinktime,
            spin_us: o.thinktime_spin.min(o.thinktime),
            blocks: o.thinktime_blocks.max(1),
            done: 0,
            on_issue: o.thinktime_blocks_type == ThinktimeBlocksType::Issue,
            use_blocks: iotime == 0 || o.thinktime_blocks > 1,
            iotime,
            since: start,
            timed_out: false,
            stall: clock.cycles(o.thinkcycles),
            clock,
        }
    }

    /// An I/O was issued at `now`.
    #[inline(always)]
    pub fn issued(&mut self, now: Ticks) {
        if self.think_us == 0 {
            return;
        }
        if self.on_issue {
            self.done += 1;
        }
        if self.iotime > 0 && now.saturating_sub(self.since) >= self.iotime {
            self.timed_out = true;
        }
    }

    #[inline(always)]
    pub fn completed(&mut self) {
        if self.think_us > 0 && !self.on_issue {
            self.done += 1;
        }
        if self.stall > 0 {
            self.stall_now();
        }
    }

    /// thinkcycles: busy the CPU as an application processing the data would.
    #[cold]
    #[inline(never)]
    fn stall_now(&self) {
        let until = self.clock.now() + self.stall;
        self.clock.spin_until(until, &AtomicBool::new(false));
    }

    #[inline(always)]
    /// Whether think time (or thinkcycles) ever pauses the job.
    pub fn active(&self) -> bool {
        self.think_us > 0 || self.stall > 0
    }

    pub fn due(&self) -> bool {
        self.think_us > 0 && ((self.use_blocks && self.done >= self.blocks) || self.timed_out)
    }

    /// Spin thinktime_spin, then sleep the rest of thinktime. Returns the ticks spent.
    pub fn pause(&mut self, clock: &Clock, stop: &AtomicBool) -> Ticks {
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
        self.timed_out = false;
        let end = clock.now();
        self.since = end;
        end.saturating_sub(start)
    }
}
