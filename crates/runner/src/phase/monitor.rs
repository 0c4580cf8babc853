//! The monitor: while a phase's jobs run, the run's own thread samples them every few
//! milliseconds — bandwidth/IOPS samples, rate_min checks, steady state, exitall —
//! forwards their messages, and feeds the observer (status line, interim reports).

use super::assemble::{assemble, Finished};
use super::live::LiveFeed;
use super::running::Running;
use super::steady::SteadyTracker;
use super::trigger::TriggerWatch;
use crate::clock::{unix_ms, Clock};
use crate::observe::{JobProgress, Observer};
use crate::record::{Shared, STATE_DONE, STATE_RUNNING, WANT_INTERIM};
use ioscope_options::ExitWhat;
use ioscope_stats::RunResult;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One tracker per job asking for steady state, or per group with group_reporting.
pub(crate) fn steady_trackers(running: &[Running], clock: &'static Clock) -> Vec<SteadyTracker> {
    let mut out = Vec::new();
    let mut groups: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, r) in running.iter().enumerate() {
        match &r.watch.steady {
            Some(_) if r.group_reporting => groups.entry(r.meta.groupid).or_default().push(i),
            Some((spec, dur, ramp, iv)) => out.push(SteadyTracker::new(
                spec.clone(),
                *dur,
                *ramp,
                *iv,
                vec![i],
                clock,
            )),
            None => {}
        }
    }
    for members in groups.into_values() {
        if let Some((spec, dur, ramp, iv)) = &running[members[0]].watch.steady {
            out.push(SteadyTracker::new(
                spec.clone(),
                *dur,
                *ramp,
                *iv,
                members,
                clock,
            ));
        }
    }
    out
}

/// The monitor's view of a phase.
pub(crate) struct Monitor<'a> {
    pub running: &'a mut [Running],
    pub trackers: &'a mut [SteadyTracker],
    pub clock: &'static Clock,
    pub run_start: Instant,
    pub status_interval: Option<Duration>,
    pub globals: &'a [(String, String)],
    pub live: Option<&'a mut LiveFeed>,
    pub trigger: Option<TriggerWatch>,
}

impl Monitor<'_> {
    /// Watch the jobs until all are done. Returns true when exitall with
    /// exit_what=all fired: later phases must not start.
    pub fn watch(&mut self, obs: &mut dyn Observer) -> bool {
        let mut last_progress = Instant::now();
        let mut last_status = Instant::now();
        let mut seen_done = vec![false; self.running.len()];
        let mut exit_all = false;
        loop {
            let all_done = self.sample();
            exit_all |= apply_exitall(self.running, &mut seen_done);
            for r in self.running.iter() {
                for m in r.shared.take_messages() {
                    obs.warning(&m);
                }
            }
            if let Some(t) = self.trigger.as_mut() {
                exit_all |= t.tick(self.running, obs);
            }
            if all_done {
                if let Some(t) = self.trigger.as_mut() {
                    t.finish(obs);
                }
                return exit_all;
            }
            if let Some(l) = self.live.as_deref_mut() {
                l.tick(self.running, obs);
            }
            if last_progress.elapsed() >= Duration::from_millis(100) {
                last_progress = Instant::now();
                let elapsed = self.run_start.elapsed().as_secs_f64();
                let p: Vec<JobProgress> = self
                    .running
                    .iter()
                    .map(|r| progress_of(r, elapsed))
                    .collect();
                obs.progress(&p);
            }
            if self
                .status_interval
                .is_some_and(|i| last_status.elapsed() >= i)
            {
                last_status = Instant::now();
                if let Some(r) =
                    interim_report(self.running, self.run_start, self.globals, self.clock)
                {
                    obs.interim(&r);
                }
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Bandwidth samples, rate_min checks and steady state; true when every job is done.
    fn sample(&mut self) -> bool {
        let now = self.clock.now();
        let mut all_done = true;
        for r in self.running.iter_mut() {
            r.watch
                .sampler
                .tick(&r.shared, now, self.clock, &r.meta.sample_dirs);
            if r.shared.state.load(Relaxed) != STATE_DONE {
                all_done = false;
            }
            let dirs = r.meta.sample_dirs;
            let Some(m) = &mut r.watch.min_rate else {
                continue;
            };
            if let Some(msg) = m.check(&r.shared, now, &dirs) {
                if let Ok(mut f) = r.shared.failure.lock() {
                    f.get_or_insert((libc::EIO, msg));
                }
                r.shared.stop.store(true, Relaxed);
            }
        }
        for t in self.trackers.iter_mut() {
            let shared: Vec<&Arc<Shared>> =
                t.members.iter().map(|&i| &self.running[i].shared).collect();
            t.tick(now, &shared);
        }
        all_done
    }
}

/// exitall: when a job that has it finishes, end the jobs exit_what names; a job
/// that failed with exitall_on_error ends them all. Returns true when the whole run
/// must end.
pub(crate) fn apply_exitall(running: &[Running], seen_done: &mut [bool]) -> bool {
    let mut all = false;
    for i in 0..running.len() {
        if seen_done[i] || running[i].shared.state.load(Relaxed) != STATE_DONE {
            continue;
        }
        seen_done[i] = true;
        // exitall_on_error: a failed job ends every job of the run.
        let what = if running[i].shared.abort_run.load(Relaxed) {
            ExitWhat::All
        } else {
            let Some(what) = running[i].watch.exitall else {
                continue;
            };
            what
        };
        all |= what == ExitWhat::All;
        for r in running.iter() {
            let hit = match what {
                ExitWhat::Group => r.meta.groupid == running[i].meta.groupid,
                ExitWhat::Stonewall | ExitWhat::All => true,
            };
            if hit {
                r.shared.stop.store(true, Relaxed);
            }
        }
    }
    all
}

/// Ask every running job for a snapshot and assemble them like a final report.
fn interim_report(
    running: &[Running],
    run_start: Instant,
    globals: &[(String, String)],
    clock: &Clock,
) -> Option<RunResult> {
    let live: Vec<&Running> = running
        .iter()
        .filter(|r| r.shared.state.load(Relaxed) == STATE_RUNNING)
        .collect();
    for r in &live {
        r.shared.snapshot_request.fetch_or(WANT_INTERIM, Relaxed);
    }
    let deadline = Instant::now() + Duration::from_millis(500);
    let mut got: Vec<Finished> = Vec::new();
    for r in &live {
        loop {
            let snap = r.shared.snapshot.lock().ok().and_then(|mut s| s.take());
            if let Some(mut res) = snap {
                for d in 0..3 {
                    res.dirs[d].bw = r.watch.sampler.bw[d];
                    res.dirs[d].iops = r.watch.sampler.iops[d];
                }
                res.name = r.meta.name.clone();
                res.groupid = r.meta.groupid;
                res.jobs = 1;
                res.start_unix_ms = r.start_ms;
                res.job_start_ms = r.job_start_ms;
                res.elapsed_s = run_start.elapsed().as_secs().max(1);
                res.info = r.meta.info.clone();
                got.push(Finished {
                    result: res,
                    groupid: r.meta.groupid,
                    grouped: r.group_reporting,
                    ioprio: r.ioprio,
                });
                break;
            }
            if Instant::now() >= deadline || r.shared.state.load(Relaxed) == STATE_DONE {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    (!got.is_empty()).then(|| assemble(got, Vec::new(), unix_ms(), globals, clock))
}

fn progress_of(r: &Running, elapsed: f64) -> JobProgress {
    let st = r.shared.state.load(Relaxed);
    JobProgress {
        name: r.meta.name.clone(),
        rw: rw_char(&r.meta.info.rw),
        running: st != STATE_DONE,
        done: st == STATE_DONE,
        bytes: std::array::from_fn(|d| r.shared.bytes[d].load(Relaxed)),
        ios: std::array::from_fn(|d| r.shared.ios[d].load(Relaxed)),
        submit_calls: r.shared.submit_calls.load(Relaxed),
        reap_calls: r.shared.reap_calls.load(Relaxed),
        planned: r.meta.planned,
        runtime_s: r.meta.runtime_s,
        elapsed_s: elapsed,
    }
}

/// fio's one-letter job state in the status line.
fn rw_char(rw: &str) -> char {
    match rw {
        "read" => 'R',
        "randread" => 'r',
        "write" => 'W',
        "randwrite" => 'w',
        "rw" => 'M',
        "randrw" => 'm',
        "trim" => 'D',
        "randtrim" => 'd',
        _ => 'M',
    }
}
