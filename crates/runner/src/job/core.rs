//! The loop core, the only part generic over the engine: the rounds of queue, submit
//! and reap, and every call into the engine. The rest of the loop is
//! [`State`], compiled once.

use super::inputs::{JobRun, Outcome};
use super::state::State;
use super::verify::Next;
use crate::clock::Ticks;
use crate::record::{STATE_RAMP, STATE_RUNNING};
use crate::sys::usage::thread_usage;
use ioscope_engine::{Completion, Ddir, Engine, EngineUser, Queued, UNIT_FILE_OP};
use std::sync::atomic::Ordering::Relaxed;

impl EngineUser for JobRun<'_> {
    type Output = Outcome;
    fn run<E: Engine>(self, engine: E) -> Outcome {
        Loop::new(self, engine).run()
    }
}

/// What queueing one unit means for the fill round.
enum Fill {
    /// Keep filling.
    Continue,
    /// Keep filling; a batch was submitted, so time has moved.
    Committed,
    /// Stop this round; true when the workload has nothing more to issue.
    End(bool),
}

/// The job loop over engine `E`.
pub(super) struct Loop<'a, E: Engine> {
    eng: E,
    s: State<'a>,
}

impl<'a, E: Engine> Loop<'a, E> {
    pub fn new(run: JobRun<'a>, eng: E) -> Self {
        let s = State::new(run, eng.is_sync(), E::FILE_OPS);
        Loop { eng, s }
    }

    pub fn run(mut self) -> Outcome {
        self.s.times.usage_start = thread_usage();
        self.s.times.started = self.s.clock.now();
        let state = if self.s.rec.in_ramp() {
            STATE_RAMP
        } else {
            STATE_RUNNING
        };
        let shared = &self.s.ctx.shared;
        shared
            .measure_start
            .store(self.s.times.measure_start, Relaxed);
        shared.state.store(state, Relaxed);
        super::burst::run_in_engine(&mut self.s, &mut self.eng);
        while self.step() {}
        self.drain();
        self.s.finish()
    }

    /// One round of the loop: check limits, queue, submit, reap. False when done.
    #[inline]
    fn step(&mut self) -> bool {
        if self.s.checkers.is_some() {
            self.s.wait_for_checks();
        }
        let now = match self.s.now_hint.take() {
            Some(t) => t,
            None => self.s.stamper.stamp(),
        };
        if !self.s.within_limits(now) {
            return false;
        }
        let exhausted = self.fill(now);
        if self.s.q.busy() == 0 {
            if exhausted {
                return false;
            }
            if self.s.pacer.waiting {
                self.s.idle_wait();
            }
            return true;
        }
        let full = self.s.q.busy() >= self.s.lim.depth;
        if full && !self.s.q.pending.is_empty() && self.s.ctx.combine_submit_wait {
            self.commit_reap();
            return true;
        }
        let must = self.s.must_reap(full, exhausted);
        if !self.s.q.pending.is_empty() && must {
            self.commit();
        }
        if self.s.q.inflight > 0 && must {
            self.reap(full);
        }
        true
    }

    /// Queue units until the queue is full, the workload is done, or pacing says wait.
    /// Returns true when the workload has nothing more to issue.
    fn fill(&mut self, now: Ticks) -> bool {
        if self.s.stop_issuing {
            return true;
        }
        let mut now = now;
        while self.s.q.busy() < self.s.lim.depth {
            if self.s.think.due() {
                if self.s.q.busy() > 0 {
                    return false;
                }
                now = self.s.think_pause();
            }
            let next = match self.s.held.take() {
                Some(io) => Some(io),
                None => match self.s.next_io(now) {
                    Next::Io(io) => Some(io),
                    Next::Wait => return self.waited(),
                    Next::Done => None,
                },
            };
            let Some(io) = next else {
                self.s.exhausted = true;
                return true;
            };
            if self.s.extras && self.s.wl.zone_ops_due() && self.zone_ops_failed(io) {
                return true;
            }
            // By value to the out-of-line checks, so that `io` itself can stay in
            // registers on the common path.
            if self.s.extras && self.s.hold_back(io, now) {
                self.s.held = Some(io);
                return false;
            }
            if !io.ddir.is_data() {
                if self.s.extras {
                    self.s.record_iolog(&io, now);
                }
                self.sync_files(io);
                now = self.s.clock.now();
                continue;
            }
            // A unit first, then the pacer: an I/O it admits is issued at once, so its
            // place in the schedule (and its schedlat) is never taken twice.
            let Some(idx) = self.s.q.free.pop() else {
                self.s.held = Some(io);
                return false;
            };
            let Some(io) = self.s.pace(io, now, idx) else {
                self.s.q.free.push(idx);
                return false;
            };
            self.s.prepare(idx, io, now);
            if self.s.extras {
                self.s.issued_extras(io, now);
            }
            if io.ddir == Ddir::Trim && self.s.wl.is_zoned() {
                return self.zone_trim(idx, io);
            }
            let locked = self.s.extras && self.s.lock_file(&io);
            if self.eng.is_sync() {
                // One I/O per round so limits and stop requests are seen at once.
                self.s.now_hint = Some(self.issue_sync(idx));
                if locked {
                    self.s.unlock_file(&io);
                }
                return self.s.stop_issuing;
            }
            let queued = self.queue(idx, io);
            if locked {
                self.s.unlock_file(&io);
            }
            match queued {
                Fill::Continue => {}
                Fill::Committed => now = self.s.clock.now(),
                Fill::End(exhausted) => return exhausted,
            }
        }
        false
    }

    /// Nothing to issue yet; with zones shared with other jobs, the next I/O's zone may
    /// be another job's for now (`zone_wait`). False: the workload is not done.
    #[cold]
    #[inline(never)]
    fn waited(&mut self) -> bool {
        if self.s.wl.zone_blocked() {
            self.zone_wait();
        }
        false
    }

    /// Hand a prepared unit to an asynchronous engine.
    #[inline]
    fn queue(&mut self, idx: u32, io: crate::workload::io::Io) -> Fill {
        let unit = &mut self.s.q.units[idx as usize];
        match self.eng.queue(idx, unit) {
            Ok(Queued::Queued) => {
                self.s.q.pending.push(idx);
                // With combine_submit_wait, the batch that fills the queue goes in
                // with the wait for completions that must follow (one call on io_uring).
                let full = self.s.q.busy() >= self.s.lim.depth;
                let defer = full && self.s.ctx.combine_submit_wait;
                if self.s.q.pending.len() as u32 >= self.s.lim.batch_submit && !defer {
                    self.commit();
                    return Fill::Committed;
                }
                Fill::Continue
            }
            Ok(Queued::Done) => {
                let res = unit.result;
                Fill::End(self.done_at_once(idx, res))
            }
            Ok(Queued::Busy) => {
                self.s.q.free.push(idx);
                self.s.held = Some(io);
                self.commit();
                Fill::End(false)
            }
            Err(e) => {
                self.s.q.free.push(idx);
                self.s.fail(
                    e.raw_os_error().unwrap_or(libc::EIO),
                    &format!("queue: {e}"),
                );
                Fill::End(true)
            }
        }
    }

    /// A unit that completed as it was issued, with `res`. Returns whether the job
    /// stops issuing.
    fn done_at_once(&mut self, idx: u32, res: i64) -> bool {
        let t = self.s.clock.now();
        if let Some(unit) = self.s.q.units.get_mut(idx as usize) {
            unit.issue = unit.start;
        }
        self.s.rec.issued_sync(self.s.q.inflight + 1);
        self.s.complete(
            Completion {
                unit: idx,
                result: res,
            },
            t,
        );
        self.s.rec.reaped(1);
        // The unit is free again: return so the loop re-checks its limits.
        self.s.now_hint = Some(t);
        self.s.stop_issuing
    }

    /// zonemode=zbd: issue the zone operations due before `io` (see `zone_ops`). A
    /// failure fails the job (true), except before a trim, which is the reset itself:
    /// it completes with the error (`zone_trim`).
    #[cold]
    #[inline(never)]
    fn zone_ops_failed(&mut self, io: crate::workload::io::Io) -> bool {
        let Some((errno, text)) = self.zone_ops(false) else {
            return false;
        };
        if io.ddir == Ddir::Trim {
            self.s.zone_err = Some(errno);
            return false;
        }
        self.s.fail(errno, &text);
        true
    }

    /// zonemode=zbd: a trim is a zone reset (of a zone with data; a trim of an empty
    /// zone is counted as an I/O and resets nothing, as in fio), issued by
    /// `zone_ops` before it; it completes at once, with the reset's error if it failed.
    /// Returns whether the job stops issuing.
    fn zone_trim(&mut self, idx: u32, io: crate::workload::io::Io) -> bool {
        let res = match self.s.zone_err.take() {
            Some(errno) => -i64::from(errno),
            None => i64::from(io.len),
        };
        self.done_at_once(idx, res)
    }

    /// zonemode=zbd: issue the zone operations due before the next I/O once the I/O in
    /// flight has completed (a reset or finish under a write in flight would fail it);
    /// `all`: also those due after the last I/O (the job has ended). Returns the first
    /// failure.
    #[cold]
    #[inline(never)]
    fn zone_ops(&mut self, all: bool) -> Option<(i32, String)> {
        self.quiesce();
        let mut failed = None;
        while let Some(op) = self.s.wl.next_zone_op(all) {
            if let Err(e) = self.s.zone_op(op) {
                failed.get_or_insert(e);
            }
            self.s.wl.zone_op_done(op);
        }
        failed
    }

    /// zonemode=zbd, zones shared with other jobs: the next I/O's zone is another
    /// job's for now. Complete this job's I/O and issue its zone operations (the other
    /// may wait for them), then give the other the CPU: at once for the first rounds
    /// (its write in flight is about to complete), then by a short sleep.
    #[cold]
    #[inline(never)]
    fn zone_wait(&mut self) {
        if let Some((errno, text)) = self.zone_ops(false) {
            self.s.fail(errno, &text);
        }
        self.s.zone_waits = self.s.zone_waits.saturating_add(1);
        match self.s.zone_waits {
            0..=64 => std::thread::yield_now(),
            _ => std::thread::sleep(std::time::Duration::from_micros(50)),
        }
    }

    /// A synchronous engine: time the call itself.
    #[inline]
    fn issue_sync(&mut self, idx: u32) -> Ticks {
        if E::FILE_OPS {
            return self.issue_file_op(idx);
        }
        let t0 = self.s.stamper.stamp();
        let unit = &mut self.s.q.units[idx as usize];
        unit.start = t0;
        unit.issue = t0;
        let res = match self.eng.queue(idx, unit) {
            Ok(_) => unit.result,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let t1 = self.s.stamper.stamp();
        self.s.rec.issued_sync(0);
        self.s.complete(
            Completion {
                unit: idx,
                result: res,
            },
            t1,
        );
        self.s.rec.reaped(1);
        if self.s.x.qd.is_some() {
            self.s.qd_search(1, t1);
        }
        t1
    }

    /// A metadata engine (filecreate, filestat, ...): the first unit of a pass over a
    /// file carries the timed operation on its name, recorded as that direction's
    /// clat; the pass's other units are counted (bytes, IOPS) with no latency, as fio's
    /// fake I/O. The pass ends when the file's region has been covered.
    #[inline(never)]
    fn issue_file_op(&mut self, idx: u32) -> Ticks {
        let begins = self.s.begin_file_op(idx);
        let unit = &mut self.s.q.units[idx as usize];
        let t0 = self.s.clock.now();
        unit.start = t0;
        unit.issue = t0;
        let res = match self.eng.queue(idx, unit) {
            Ok(_) => unit.result,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let t1 = self.s.clock.now();
        unit.flags &= !UNIT_FILE_OP;
        if let Some(file) = self.s.end_file_op(idx, res, begins, t0, t1) {
            self.eng.end_pass(file);
        }
        t1
    }

    fn commit(&mut self) {
        if self.s.q.pending.is_empty() {
            return;
        }
        let n = match self.eng.commit() {
            Ok(n) => n,
            Err(e) => {
                self.s.fail(
                    e.raw_os_error().unwrap_or(libc::EIO),
                    &format!("submit: {e}"),
                );
                0
            }
        };
        // As in fio, the submission call counts into slat: stamp after it.
        let t = self.s.stamper.stamp();
        self.s.mark_issued(n as usize, t);
    }

    /// Submit the queued units and reap in one engine call (queue full).
    fn commit_reap(&mut self) {
        // The units enter the kernel at the start of the call: that is their issue
        // time (their slat then excludes the submission call, which clat includes).
        let t_issue = self.s.stamper.stamp();
        let min = self.s.lim.complete_min.min(self.s.q.busy()).max(1);
        let max = self.s.lim.complete_max.max(min);
        let (s, n) = match self.eng.commit_and_getevents(min, max) {
            Ok(r) => r,
            Err(e) => {
                self.s.fail(
                    e.raw_os_error().unwrap_or(libc::EIO),
                    &format!("submit: {e}"),
                );
                return;
            }
        };
        self.s.mark_issued(s as usize, t_issue);
        self.take_events(n);
        if self.s.q.inflight > self.s.lim.depth_low && n > 0 && self.s.q.pending.is_empty() {
            self.reap(true);
        }
    }

    /// Record the `n` completions the engine just reaped (one timestamp for all).
    fn take_events(&mut self, n: u32) {
        let t = self.s.stamper.stamp();
        for i in 0..n {
            let c = self.eng.event(i);
            self.s.q.inflight = self.s.q.inflight.saturating_sub(1);
            self.s.complete(c, t);
        }
        self.s.rec.reaped(n);
        if self.s.x.qd.is_some() {
            self.s.qd_search(n, t);
        }
        self.s.reap_calls += 1;
        self.s
            .ctx
            .shared
            .reap_calls
            .store(self.s.reap_calls, Relaxed);
    }

    /// Reap completions as fio does: when the queue is full, at least
    /// min(iodepth_batch_complete_min, in flight) and keep going down to iodepth_low.
    fn reap(&mut self, full: bool) {
        loop {
            let mut min = self.s.lim.complete_min.min(self.s.q.inflight);
            if min == 0
                && (full
                    || self.s.stop_issuing
                    || self.s.exhausted
                    || self.s.must_reap(false, false))
            {
                min = 1;
            }
            let max = self
                .s
                .lim
                .complete_max
                .max(min)
                .min(self.s.q.inflight.max(1));
            let n = match self.eng.getevents(min, max) {
                Ok(n) => n,
                Err(e) => {
                    self.s.fail(
                        e.raw_os_error().unwrap_or(libc::EIO),
                        &format!("getevents: {e}"),
                    );
                    self.s.q.inflight = 0;
                    return;
                }
            };
            self.take_events(n);
            if !(full && self.s.q.inflight > self.s.lim.depth_low && n > 0) {
                break;
            }
        }
    }

    /// Submit what is queued and reap everything in flight (short of a failed engine
    /// that completes nothing more).
    fn quiesce(&mut self) {
        self.commit();
        while self.s.q.inflight > 0 {
            let before = self.s.q.inflight;
            self.reap(true);
            if self.s.q.inflight == before && self.s.failure.errno != 0 {
                break;
            }
        }
    }

    /// The job ends: submit what is queued, reap everything in flight, collect the
    /// checks still out.
    fn drain(&mut self) {
        self.quiesce();
        if self.s.wl.is_zoned() {
            if let Some(io) = self.s.held.take().filter(|io| io.ddir == Ddir::Write) {
                // Placed in its zone, never issued.
                self.s.wl.zone_write_done(io.offset);
            }
            if let Some((errno, text)) = self.zone_ops(true) {
                self.s.fail(errno, &text);
            }
            self.s.wl.leave_zones();
        }
        self.s.drain_checks();
    }

    /// fsync/fdatasync/sync_file_range after the writes before it have completed.
    fn sync_files(&mut self, io: crate::workload::io::Io) {
        self.quiesce();
        self.s.sync_file(io);
    }
}
