//! The live stream's intervals: every `live_interval` the monitor asks each running
//! job for a copy of its statistics and hands the observer what each job did since its
//! previous copy; when a job ends, its last interval runs to its final results. The
//! copies are made by the job between I/Os (a request is one relaxed load per round)
//! and picked up here without waiting, so the monitor never holds a job up.

use super::running::Running;
use crate::observe::{LiveInterval, Observer};
use crate::record::{Shared, STATE_DONE, STATE_RAMP, WANT_LIVE};
use crate::setup::JobMeta;
use ioscope_stats::interval::job_between;
use ioscope_stats::JobResult;
use std::sync::atomic::Ordering::Relaxed;
use std::time::{Duration, Instant};

/// The live stream of one phase.
pub(crate) struct LiveFeed {
    every: Duration,
    next: Instant,
    run_start: Instant,
    phase: usize,
    /// Each job's last copy (None before its first).
    prev: Vec<Option<JobResult>>,
}

impl LiveFeed {
    pub fn new(every: Duration, jobs: usize, run_start: Instant, phase: usize) -> LiveFeed {
        LiveFeed {
            every,
            next: Instant::now() + every,
            run_start,
            phase,
            prev: vec![None; jobs],
        }
    }

    /// Hand over the copies the jobs made, and ask for the next ones when an interval
    /// has passed.
    pub fn tick(&mut self, running: &[Running], obs: &mut dyn Observer) {
        for (i, r) in running.iter().enumerate() {
            self.take(i, &r.shared, &r.meta, obs);
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
        if let Some((res, inflight)) = copy {
            let ramp = shared.state.load(Relaxed) == STATE_RAMP;
            self.emit(i, meta, res, Some(inflight), ramp, obs);
        }
    }

    /// Job `i` (not a stats=0 one) ended with `result`: a copy it made before, then its
    /// last interval.
    pub fn last(
        &mut self,
        (i, shared, meta): (usize, &Shared, &JobMeta),
        result: &JobResult,
        obs: &mut dyn Observer,
    ) {
        self.take(i, shared, meta, obs);
        self.emit(i, meta, result.clone(), None, false, obs);
    }

    fn emit(
        &mut self,
        i: usize,
        meta: &JobMeta,
        res: JobResult,
        inflight: Option<u32>,
        ramp: bool,
        obs: &mut dyn Observer,
    ) {
        let dirs = job_between(&res, self.prev[i].as_ref());
        let before = self.prev[i].as_ref().map_or(0, |p| p.runtime_ms);
        let ms = if ramp {
            0
        } else {
            res.runtime_ms.saturating_sub(before)
        };
        obs.interval(&LiveInterval {
            job: &meta.name,
            number: meta.number,
            groupid: meta.groupid,
            phase: self.phase,
            t_ms: self.run_start.elapsed().as_millis() as u64,
            ms,
            ramp,
            last: inflight.is_none(),
            inflight,
            dirs: &dirs,
        });
        self.prev[i] = Some(res);
    }
}
