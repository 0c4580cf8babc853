//! The live stream's intervals: every `live_interval` the monitor asks each running
//! job for a copy of its statistics and hands the observer what each job did since its
//! previous copy. A job makes its copy between I/Os (a request costs it one relaxed
//! load per round) and hands its final results over as it ends; the monitor picks the
//! copies up as it passes (it never waits for one), so each job's last interval comes
//! when that job ends, not when its phase does.
//!
//! A job whose measurement restarts (the ramp's end, latency_target's final window)
//! starts a new epoch: intervals are counted from zero again, and the intervals of its
//! last epoch add up to its report.

use super::running::Running;
use crate::observe::{LiveInterval, Observer};
use crate::record::{LiveCopy, Shared, STATE_DONE, WANT_LIVE};
use crate::setup::JobMeta;
use ioscope_stats::interval::job_between;
use ioscope_stats::JobResult;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// What the feed remembers of one job.
#[derive(Default)]
struct Seen {
    /// The last copy, its measured time (0 while the job ramped) and its epoch.
    prev: Option<JobResult>,
    prev_ms: u64,
    epoch: u32,
    /// Its last interval was given.
    done: bool,
}

/// The live stream of one phase.
pub(crate) struct LiveFeed {
    every: Duration,
    next: Instant,
    phase: usize,
    jobs: Vec<Seen>,
}

impl LiveFeed {
    /// A feed for the phase's jobs; each will hand over its final results as it ends.
    pub fn new(every: Duration, running: &[Running], phase: usize) -> Self {
        for r in running {
            r.shared.live_last.store(true, Relaxed);
        }
        LiveFeed {
            every,
            next: Instant::now() + every,
            phase,
            jobs: running.iter().map(|_| Seen::default()).collect(),
        }
    }

    /// Hand over the copies the jobs made, and ask for the next ones when an interval
    /// has passed.
    pub fn tick(&mut self, running: &[Running], obs: &mut dyn Observer) {
        for (i, r) in running.iter().enumerate() {
            if r.stats {
                self.take(i, &r.shared, &r.meta, obs);
            }
        }
        let now = Instant::now();
        if now < self.next {
            return;
        }
        // Intervals keep their cadence; one missed (a stalled monitor) is skipped.
        while self.next <= now {
            self.next += self.every;
        }
        for r in running {
            if r.stats && r.shared.state.load(Relaxed) != STATE_DONE {
                r.shared.snapshot_request.fetch_or(WANT_LIVE, Relaxed);
            }
        }
    }

    /// A copy job `i` made, if any: its interval.
    fn take(&mut self, i: usize, shared: &Shared, meta: &JobMeta, obs: &mut dyn Observer) {
        let copy = shared.live.lock().ok().and_then(|mut s| s.take());
        if let Some(c) = copy {
            self.emit(i, meta, c, obs);
        }
    }

    /// Job `i` (not a stats=0 one) ended with `result`: unless it handed that over
    /// already, a copy it made before, then its last interval.
    pub fn last(
        &mut self,
        (i, shared, meta): (usize, &Shared, &JobMeta),
        result: &JobResult,
        obs: &mut dyn Observer,
    ) {
        self.take(i, shared, meta, obs);
        if self.jobs[i].done {
            return;
        }
        let c = LiveCopy {
            result: result.clone(),
            inflight: 0,
            ramp: false,
            epoch: shared.epoch.load(Relaxed),
            last: true,
        };
        self.emit(i, meta, c, obs);
    }

    fn emit(&mut self, i: usize, meta: &JobMeta, c: LiveCopy, obs: &mut dyn Observer) {
        let seen = &mut self.jobs[i];
        if seen.done {
            return;
        }
        if c.epoch != seen.epoch {
            // Measuring afresh: this epoch's intervals count from zero.
            seen.prev = None;
            seen.prev_ms = 0;
            seen.epoch = c.epoch;
        }
        let res = c.result;
        let dirs = job_between(&res, seen.prev.as_ref());
        // Nothing is measured in the ramp (nor by a job that ended in it).
        let ms = if c.ramp {
            0
        } else {
            res.runtime_ms.saturating_sub(seen.prev_ms)
        };
        obs.interval(&LiveInterval {
            job: &meta.name,
            number: meta.number,
            groupid: meta.groupid,
            phase: self.phase,
            ms,
            epoch: c.epoch,
            ramp: c.ramp,
            last: c.last,
            inflight: (!c.last).then_some(c.inflight),
            dirs: &dirs,
            host: None,
        });
        seen.prev_ms = if c.ramp { 0 } else { res.runtime_ms };
        seen.prev = Some(res);
        seen.done = c.last;
    }
}
