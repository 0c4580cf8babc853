//! `latency_target`, `latency_window`, `latency_percentile`, `latency_run`: fio's search
//! for the highest queue depth whose I/O meets a latency target.
//!
//! The job starts at depth 1. At the end of each window (after each batch of
//! completions once `latency_window` has passed) it looks at the share of the
//! window's I/Os whose total latency was within the target:
//! - at least `latency_percentile`: ramp up. The depth doubles while the upper bound is
//!   still iodepth, then bisects towards the upper bound; when the depth would stay
//!   where it is, the search has converged: the first time, the job quiesces, its
//!   statistics restart and one more window runs at that depth; the next time, the
//!   job ends (unless `latency_run`, which keeps adjusting until the run ends);
//! - below: ramp down, halving towards the lower bound (the depth that last passed).
//!
//! With the default percentile of 100, one I/O over the target ramps down at once; at
//! depth 1 it fails the job with ETIMEDOUT, as in fio. fio 3.33's rules, down to the
//! bound that grows after three ramp-ups in a row that end one below it.

/// What the job loop should do after a check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep going (the depth may have changed: read [`QdSearch::depth`]).
    Go,
    /// Converged once: finish the I/O in flight, restart the statistics, run on.
    FinalRun,
    /// Converged again: the job is done.
    Done,
    /// Over the target at depth 1 with percentile 100: the job fails.
    Fail,
}

#[derive(Clone, Debug)]
pub struct QdSearch {
    target_ns: u64,
    window_ns: u64,
    percentile: f64,
    keep_running: bool,
    max: u32,
    qd: u32,
    low: u32,
    high: u32,
    stable: u32,
    window_start_ns: u64,
    ios: u64,
    failed: u64,
    final_run: bool,
}

impl QdSearch {
    /// None unless latency_target is set.
    pub fn new(o: &ioscope_options::JobOptions, depth: u32) -> Option<QdSearch> {
        (o.latency_target > 0).then(|| QdSearch {
            target_ns: o.latency_target.saturating_mul(1000),
            window_ns: o.latency_window.saturating_mul(1000),
            percentile: o.latency_percentile,
            keep_running: o.latency_run,
            max: depth.max(1),
            qd: 1,
            low: 1,
            high: depth.max(1),
            stable: 0,
            window_start_ns: 0,
            ios: 0,
            failed: 0,
            final_run: false,
        })
    }

    pub fn depth(&self) -> u32 {
        self.qd
    }

    pub fn target_ns(&self) -> u64 {
        self.target_ns
    }

    /// A batch of `n` completions, `over` of them over the target, at `now_ns`.
    pub fn completed(&mut self, n: u64, over: u64, now_ns: u64) -> Step {
        self.ios += n;
        if over > 0 && self.percentile >= 100.0 {
            if self.qd == 1 {
                return Step::Fail;
            }
            self.ramp_down();
            self.new_window(now_ns);
            return Step::Go;
        }
        self.failed += over;
        if now_ns.saturating_sub(self.window_start_ns) < self.window_ns {
            return Step::Go;
        }
        let ok = self.ios > 0
            && (self.ios - self.failed) as f64 * 100.0 / self.ios as f64 >= self.percentile;
        let step = if ok {
            self.ramp_up()
        } else if self.qd == 1 {
            // Nothing lower to try: the window goes on.
            return Step::Go;
        } else {
            self.ramp_down();
            Step::Go
        };
        self.new_window(now_ns);
        step
    }

    /// The final window starts now (the job has quiesced and restarted its statistics).
    pub fn restart_window(&mut self, now_ns: u64) {
        self.new_window(now_ns);
    }

    fn new_window(&mut self, now_ns: u64) {
        self.window_start_ns = now_ns;
        self.ios = 0;
        self.failed = 0;
    }

    fn ramp_up(&mut self) -> Step {
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        let next = if self.high == self.max {
            self.qd.saturating_mul(2)
        } else {
            (self.qd + self.high) / 2
        }
        .clamp(1, self.max);
        if next != self.qd || self.keep_running {
            self.qd = next;
            return Step::Go;
        }
        if self.final_run {
            Step::Done
        } else {
            self.final_run = true;
            Step::FinalRun
        }
    }

    fn ramp_down(&mut self) {
        if self.qd == 1 {
            return;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1).max(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.stable = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ioscope_options::spec::defaults;

    fn search(pct: f64, depth: u32) -> QdSearch {
        let mut o = defaults().clone();
        o.latency_target = 250;
        o.latency_window = 1;
        o.latency_percentile = pct;
        QdSearch::new(&o, depth).unwrap()
    }

    /// fio 3.33's trace (--debug=rate) for a QD32 job with a 90% target: the depths it
    /// went through, window by window, given which windows passed.
    #[test]
    fn follows_fios_trace() {
        let mut s = search(90.0, 32);
        let passes = [
            true, true, true, true, true, false, false, false, true, true, false, true,
        ];
        let mut depths = Vec::new();
        let mut steps = Vec::new();
        for (i, pass) in passes.iter().enumerate() {
            let t = (i as u64 + 1) * 1_000_000;
            steps.push(s.completed(100, if *pass { 0 } else { 50 }, t));
            depths.push(s.depth());
        }
        assert_eq!(depths, [2, 4, 8, 16, 32, 24, 20, 18, 19, 19, 18, 18]);
        assert_eq!(steps[9], Step::FinalRun);
        assert_eq!(steps[11], Step::Done);
    }

    #[test]
    fn one_slow_io_at_depth_one_fails_at_percentile_100() {
        let mut s = search(100.0, 8);
        assert_eq!(s.completed(1, 1, 10), Step::Fail);
        let mut s = search(100.0, 8);
        assert_eq!(s.completed(1, 0, 2_000_000), Step::Go);
        assert_eq!(s.depth(), 2);
        assert_eq!(s.completed(1, 1, 2_000_100), Step::Go);
        assert_eq!(s.depth(), 1, "ramped down at once");
    }
}
