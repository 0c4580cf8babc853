//! One job's thread: the I/O loop in fio's queue / commit / reap model, timing every
//! I/O with the calibrated clock and recording it into the job's statistics.
//!
//! Hot path rules: the units, their buffers, the pending list and all statistics are
//! allocated before the first I/O; per I/O there is no allocation, lock or syscall
//! beyond the engine's own and the clock.

mod checkers;
pub(crate) mod cmdprio;
pub(crate) mod flow;
mod qdsearch;
mod rate;
pub(crate) mod verify;

use crate::clock::{Clock, Ticks};
use crate::record::{Recorder, STATE_RAMP, STATE_RUNNING};
use crate::setup::buffers::Buffers;
use crate::setup::JobCtx;
use crate::workload::io::Io;
use crate::workload::Workload;
use checkers::Checkers;
use cmdprio::CmdPrio;
use ioscope_engine::{
    Completion, Ddir, Engine, EngineUser, IoUnit, Queued, UNIT_FILE_OP, UNIT_HIPRI,
};
use ioscope_options::{ContinueOnError, JobOptions};
use ioscope_stats::JobResult;
use ioscope_verify::Failure as BadBlock;
use qdsearch::Step;
use rate::{Pacer, Think};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;
use verify::{check_block, Check, Next, Verifier};

/// The job loop, generic over the engine so every call is static.
pub struct JobRun<'a> {
    pub ctx: &'a mut JobCtx,
    pub workload: Workload,
    pub buffers: Buffers,
    pub cmdprio: Option<CmdPrio>,
    pub verify: Option<Verifier>,
    /// flow: the job's place in its flow group (joined before the common start).
    pub flow: Option<flow::Flow>,
}

impl EngineUser for JobRun<'_> {
    type Output = JobResult;
    fn run<E: Engine>(self, engine: E) -> JobResult {
        Loop::new(self, engine).run()
    }
}

/// The unit ring: every unit is free, pending (queued, not yet submitted) or in flight.
struct Units {
    units: Vec<IoUnit>,
    free: Vec<u32>,
    /// Queued but not yet committed, in queue order.
    pending: Vec<u32>,
    inflight: u32,
}

impl Units {
    fn new(depth: u32, bufs: &Buffers) -> Units {
        Units {
            units: (0..depth as usize)
                .map(|i| IoUnit {
                    buf: bufs.slot_ptr(i),
                    buf_len: bufs.slot as u32,
                    ..Default::default()
                })
                .collect(),
            free: (0..depth).rev().collect(),
            pending: Vec::with_capacity(depth as usize),
            inflight: 0,
        }
    }

    /// Units queued or in flight.
    fn busy(&self) -> u32 {
        self.inflight + self.pending.len() as u32
    }
}

/// fio's queue-depth knobs, resolved for this engine.
struct Depths {
    depth: u32,
    batch_submit: u32,
    complete_min: u32,
    complete_max: u32,
    depth_low: u32,
}

impl Depths {
    /// latency_target's search sets the depth; the batches follow it down.
    fn set_depth(&mut self, depth: u32) {
        self.depth = depth;
        self.batch_submit = self.batch_submit.min(depth).max(1);
        self.depth_low = self.depth_low.min(depth);
    }

    fn new(o: &JobOptions, sync: bool) -> Depths {
        // A synchronous engine has one I/O in flight whatever iodepth says (as fio).
        let depth = if sync { 1 } else { o.iodepth.max(1) };
        Depths {
            depth,
            batch_submit: o.iodepth_batch_submit.clamp(1, depth),
            complete_min: o.iodepth_batch_complete_min,
            complete_max: o.iodepth_batch_complete_max.max(1),
            depth_low: o.iodepth_low.min(depth),
        }
    }
}

/// Timestamps: the clock when something needs per-I/O times; otherwise (no latency
/// tracking, logs, pacing or think time: gtod_reduce and the like) a value refreshed
/// every 32 calls, enough for runtime limits.
struct Stamper {
    clock: &'static Clock,
    timed: bool,
    calls: u64,
    coarse: Ticks,
}

impl Stamper {
    #[inline(always)]
    fn stamp(&mut self) -> Ticks {
        if self.timed {
            return self.clock.now();
        }
        self.calls = self.calls.wrapping_add(1);
        if self.calls & 31 == 0 {
            self.coarse = self.clock.now();
        }
        self.coarse
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

/// The first error that ends the job.
#[derive(Default)]
struct Failure {
    errno: i32,
    text: Option<String>,
}

struct Loop<'a, E: Engine> {
    eng: E,
    ctx: &'a mut JobCtx,
    wl: Workload,
    bufs: Buffers,
    cmdprio: Option<CmdPrio>,
    rec: Recorder,
    q: Units,
    lim: Depths,
    clock: &'static Clock,
    stamper: Stamper,
    pacer: Pacer,
    think: Think,
    ramp_end: Ticks,
    deadline: Ticks,
    measure_start: Ticks,
    failure: Failure,
    stop_issuing: bool,
    /// An I/O the pacer or a full queue turned away, issued next.
    held: Option<Io>,
    exhausted: bool,
    /// Completion time of the last synchronous I/O: the loop's next "now".
    now_hint: Option<Ticks>,
    submit_calls: u64,
    reap_calls: u64,
    usage_start: crate::sys::usage::Usage,
    snapshot_seen: u64,
    hipri_pct: u32,
    verify: Option<Verifier>,
    /// The verifier waits for the I/O in flight (a verify phase follows the writes).
    draining: bool,
    /// serialize_overlap: the next I/O waits for an overlapping one to complete.
    overlap_wait: bool,
    /// When the job's I/O began: the zero of read_iolog's and write_iolog's times.
    started: Ticks,
    /// Some option looks at every I/O (think time, serialize_overlap, read_iolog,
    /// write_iolog): see [`Loop::hold_back`] and [`Loop::issued_extras`].
    extras: bool,
    /// unlink_each_loop: the loop whose files are in place.
    files_loop: u64,
    /// Metadata engines: bytes left in each file's current pass (0: the next I/O to
    /// the file begins a pass).
    passes: Vec<u64>,
    /// flow: this job's share in its flow group.
    flow: Option<flow::Flow>,
    /// latency_target: the queue depth search, and whether the job is quiescing
    /// before its final window.
    qd: Option<qdsearch::QdSearch>,
    qd_quiesce: bool,
    /// verify_async: the checker threads.
    checkers: Option<Checkers>,
}

impl<'a, E: Engine> Loop<'a, E> {
    fn new(mut run: JobRun<'a>, eng: E) -> Self {
        let flow = run.flow.take();
        let clock = run.ctx.clock;
        let o = &run.ctx.opts;
        let sync = eng.is_sync();
        let mut lim = Depths::new(o, sync);
        let qd = qdsearch::QdSearch::new(o, lim.depth);
        let units = lim.depth;
        if let Some(q) = &qd {
            lim.set_depth(q.depth());
        }
        let slots = run
            .cmdprio
            .as_ref()
            .map(|c| c.slots.clone())
            .unwrap_or_default();
        let mut rec = Recorder::new(
            o,
            run.ctx.dirs,
            sync,
            &slots,
            run.ctx.logs.take(),
            run.ctx.shared.clone(),
            clock,
        );
        let start = clock.now();
        if run.ctx.act {
            rec.count_act(o.runtime / 1_000_000, start);
        }
        if let Some(b) = run.ctx.blocks {
            rec.count_blocks(b);
        }
        let paced = o.rate.0.iter().chain(o.rate_iops.0.iter()).any(|&r| r > 0);
        let timed = rec.needs_times()
            || o.max_latency > 0
            || o.thinktime > 0
            || paced
            || o.read_iolog.is_some()
            || o.write_iolog.is_some();
        let ramp = clock.ticks(Duration::from_micros(o.ramp_time));
        let deadline = if o.runtime > 0 {
            start + ramp + clock.ticks(Duration::from_micros(o.runtime))
        } else {
            u64::MAX
        };
        Loop {
            q: Units::new(units, &run.buffers),
            lim,
            rec,
            stamper: Stamper {
                clock,
                timed,
                calls: 0,
                coarse: start,
            },
            pacer: Pacer::new(o, clock),
            think: Think::new(o, clock, start),
            ramp_end: start + ramp,
            deadline,
            measure_start: start,
            started: start,
            extras: o.thinktime > 0
                || o.serialize_overlap
                || (o.unlink_each_loop && o.loops > 1)
                || o.lockfile != ioscope_options::LockMode::None
                || o.flow != 0
                || o.latency_target > 0
                || o.read_iolog.is_some()
                || o.write_iolog.is_some(),
            files_loop: 0,
            passes: if E::FILE_OPS {
                vec![0; run.ctx.files.len()]
            } else {
                Vec::new()
            },
            flow,
            qd,
            qd_quiesce: false,
            failure: Failure::default(),
            stop_issuing: false,
            held: None,
            exhausted: false,
            now_hint: None,
            submit_calls: 0,
            reap_calls: 0,
            usage_start: Default::default(),
            snapshot_seen: 0,
            hipri_pct: if o.hipri { o.hipri_percentage } else { 0 },
            checkers: checkers(&run),
            verify: run.verify,
            draining: false,
            overlap_wait: false,
            eng,
            wl: run.workload,
            bufs: run.buffers,
            cmdprio: run.cmdprio,
            clock,
            ctx: run.ctx,
        }
    }

    fn run(mut self) -> JobResult {
        self.usage_start = crate::sys::usage::thread_usage();
        self.started = self.clock.now();
        let state = if self.rec.in_ramp() {
            STATE_RAMP
        } else {
            STATE_RUNNING
        };
        let shared = &self.ctx.shared;
        shared.measure_start.store(self.measure_start, Relaxed);
        shared.state.store(state, Relaxed);
        while self.step() {}
        self.drain();
        let end = self.clock.now();
        if let Some(r) = self.wl.recorder.take() {
            if let Err(e) = r.finish() {
                let name = &self.ctx.opts.name;
                let path = self.ctx.opts.write_iolog.as_deref().unwrap_or("");
                self.ctx
                    .shared
                    .say(format!("ioscope: job '{name}': write_iolog={path}: {e}"));
            }
        }
        // end_fsync and fsync_on_close both sync every file when the job ends.
        if (self.ctx.opts.end_fsync || self.ctx.opts.fsync_on_close) && !self.ctx.diskless {
            for f in &self.ctx.files {
                // SAFETY: fsync on an fd the job owns.
                unsafe { libc::fsync(f.file.as_raw_fd()) };
            }
        }
        let usage = crate::sys::usage::thread_usage().since(&self.usage_start);
        self.finish(end, usage)
    }

    /// One round of the loop: check limits, queue, submit, reap. False when done.
    #[inline]
    fn step(&mut self) -> bool {
        if self.checkers.is_some() {
            // Every unit waits on a check: wait for one to come back.
            let stuck = self.q.free.is_empty() && self.q.busy() == 0;
            self.collect_checks(stuck && self.checks_pending() > 0);
        }
        let now = match self.now_hint.take() {
            Some(t) => t,
            None => self.stamper.stamp(),
        };
        if self.rec.in_ramp() && now >= self.ramp_end {
            self.rec.end_ramp(now);
            self.measure_start = now;
            self.usage_start = crate::sys::usage::thread_usage();
        }
        let req = self.ctx.shared.snapshot_request.load(Relaxed);
        if req != self.snapshot_seen {
            self.snapshot_seen = req;
            self.publish_snapshot(now);
        }
        if now >= self.deadline
            || self.ctx.stop_all.load(Relaxed)
            || self.ctx.shared.stop.load(Relaxed)
        {
            return false;
        }
        let exhausted = self.fill(now);
        if self.q.busy() == 0 {
            if exhausted {
                return false;
            }
            if self.pacer.waiting {
                self.idle_wait();
            }
            return true;
        }
        let full = self.q.busy() >= self.lim.depth;
        if full && !self.q.pending.is_empty() && self.ctx.combine_submit_wait {
            self.commit_reap();
            return true;
        }
        let must = full
            || exhausted
            || self.pacer.waiting
            || self.think.due()
            || self.draining
            || self.overlap_wait;
        if !self.q.pending.is_empty() && must {
            self.commit();
        }
        if self.q.inflight > 0 && must {
            self.reap(full);
        }
        true
    }

    /// Nothing in flight and nothing to issue yet: wait for the pacer or think time.
    fn idle_wait(&mut self) {
        let until = self.pacer.next_due.min(self.deadline);
        if until != u64::MAX {
            self.clock.sleep_until(until, self.ctx.stop_all);
        }
        self.pacer.waiting = false;
    }

    /// The workload's next I/O, or, with verify, a verify read (or a wait for the
    /// writes in flight before a verify phase).
    #[inline]
    fn next_io(&mut self) -> Next {
        let Some(v) = self.verify.as_mut() else {
            return match self.wl.next_io() {
                Some(io) => Next::Io(io),
                None => Next::Done,
            };
        };
        let was = v.verifying();
        let next = v.next(&mut self.wl, self.q.busy());
        let started = !was && v.verifying();
        self.draining = matches!(next, Next::Wait);
        if started {
            self.drop_caches();
        }
        next
    }

    /// Before reading back what the job wrote: the data goes to the device and the
    /// page cache forgets it, so the verify reads see the medium (as fio does).
    fn drop_caches(&mut self) {
        if self.ctx.diskless || self.ctx.nop {
            return;
        }
        for f in &self.ctx.files {
            let fd = f.file.as_raw_fd();
            // SAFETY: fsync and posix_fadvise on an fd the job owns.
            unsafe {
                libc::fsync(fd);
                libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }

    /// Queue units until the queue is full, the workload is done, or pacing says wait.
    /// Returns true when the workload has nothing more to issue.
    fn fill(&mut self, now: Ticks) -> bool {
        if self.stop_issuing {
            return true;
        }
        let mut now = now;
        while self.q.busy() < self.lim.depth {
            if self.think.due() {
                if self.q.busy() > 0 {
                    return false;
                }
                let paused = self.think.pause(self.clock, self.ctx.stop_all);
                if self.ctx.opts.rate_ignore_thinktime {
                    self.pacer.skip(paused);
                }
                now = self.clock.now();
            }
            let next = match self.held.take() {
                Some(io) => Some(io),
                None => match self.next_io() {
                    Next::Io(io) => Some(io),
                    Next::Wait => return false,
                    Next::Done => None,
                },
            };
            let Some(io) = next else {
                self.exhausted = true;
                return true;
            };
            // By value to the out-of-line checks, so that `io` itself can stay in
            // registers on the common path.
            if self.extras && self.hold_back(io, now) {
                self.held = Some(io);
                return false;
            }
            if !io.ddir.is_data() {
                if self.extras {
                    self.record_iolog(&io, now);
                }
                self.sync_files(io);
                now = self.clock.now();
                continue;
            }
            let Some(io) = self.pace(io, now) else {
                return false;
            };
            let Some(idx) = self.q.free.pop() else {
                self.held = Some(io);
                return false;
            };
            self.prepare(idx, io, now);
            if self.extras {
                self.issued_extras(io, now);
            }
            let locked = self.extras && self.lock_file(&io);
            if self.eng.is_sync() {
                // One I/O per round so limits and stop requests are seen at once.
                self.now_hint = Some(self.issue_sync(idx));
                if locked {
                    self.unlock_file(&io);
                }
                return self.stop_issuing;
            }
            let queued = self.queue(idx, io);
            if locked {
                self.unlock_file(&io);
            }
            match queued {
                Fill::Continue => {}
                Fill::Committed => now = self.clock.now(),
                Fill::End(exhausted) => return exhausted,
            }
        }
        false
    }

    /// Options that look at each I/O before it goes (read_iolog's times,
    /// serialize_overlap): whether it must wait. Out of line, behind one flag, so that a
    /// job without them pays a single branch.
    #[inline(never)]
    fn hold_back(&mut self, io: Io, now: Ticks) -> bool {
        if let Some(us) = self.wl.replay_due_us() {
            // read_iolog: not before its time (scaled by replay_time_scale).
            let scaled = us * 100 / u64::from(self.ctx.opts.replay_time_scale.max(1));
            let due = self.started + self.clock.ticks(Duration::from_micros(scaled));
            if now < due {
                self.pacer.next_due = due;
                self.pacer.waiting = true;
                return true;
            }
        }
        if self.qd_quiesce {
            return self.quiesce_for_final_window();
        }
        if self.ctx.opts.unlink_each_loop && self.wl.loop_of_last_io() > self.files_loop {
            return self.next_loop_files();
        }
        if io.ddir.is_data() && self.flow.as_ref().is_some_and(|f| f.ahead()) {
            return self.flow_hold();
        }
        // serialize_overlap: held until the overlapping I/O completes (the loop reaps
        // meanwhile).
        self.overlap_wait =
            self.ctx.opts.serialize_overlap && io.ddir.is_data() && self.overlaps_busy(&io);
        self.overlap_wait
    }

    /// unlink_each_loop, at the first I/O of a loop after the first: once the last
    /// loop's I/O has completed (held until then), the files are deleted and, for a job
    /// that writes, created again empty. True: the I/O waits (or the job failed).
    #[cold]
    fn next_loop_files(&mut self) -> bool {
        if self.q.busy() > 0 {
            self.overlap_wait = true;
            return true;
        }
        self.files_loop = self.wl.loop_of_last_io();
        let writes = self.ctx.opts.rw.mode.writes();
        for i in 0..self.ctx.files.len() {
            if let Err((errno, text)) =
                crate::setup::files::unlink_and_recreate(&self.ctx.files[i], writes)
            {
                self.fail(errno, &text);
                return true;
            }
        }
        false
    }

    /// latency_target converged: once the I/O in flight is done, the statistics start
    /// afresh for the final window at the depth found (as fio's "final run").
    #[cold]
    fn quiesce_for_final_window(&mut self) -> bool {
        if self.q.busy() > 0 {
            self.overlap_wait = true;
            return true;
        }
        self.qd_quiesce = false;
        let now = self.clock.now();
        let since_start = self.clock.delta_ns(self.started, now);
        if let Some(q) = self.qd.as_mut() {
            q.restart_window(since_start);
        }
        let _ = self.rec.take_over_target();
        self.rec.end_ramp(now);
        self.measure_start = now;
        self.usage_start = crate::sys::usage::thread_usage();
        false
    }

    /// latency_target: a batch of completions ends at `t`; the search may change the
    /// depth, start the final window, end the job, or fail it.
    #[cold]
    fn qd_search(&mut self, n: u32, t: Ticks) {
        let Some(q) = self.qd.as_mut() else { return };
        let (over, last) = self.rec.take_over_target();
        let now_ns = self.clock.delta_ns(self.started, t);
        match q.completed(u64::from(n), over, now_ns) {
            Step::Go => {}
            Step::FinalRun => self.qd_quiesce = true,
            Step::Done => self.stop_issuing = true,
            Step::Fail => {
                let target = q.target_ns();
                let (lat, ddir, offset, len, file) = last.unwrap_or_default();
                let path = self
                    .ctx
                    .files
                    .get(file as usize)
                    .map(|f| f.path.display().to_string());
                let text = format!(
                    "latency of {lat} nsec exceeds specified max ({target} nsec): {} {} {offset} {len}",
                    path.unwrap_or_default(),
                    ["read", "write", "trim", "sync", "datasync"][ddir.index()]
                );
                self.fail(libc::ETIMEDOUT, &text);
            }
        }
        if let Some(q) = &self.qd {
            self.lim.set_depth(q.depth());
        }
    }

    /// flow: the job is ahead of its share. With flow_sleep, its I/O in flight is
    /// reaped first and then it sleeps; without, the loop tries again at once.
    #[cold]
    fn flow_hold(&mut self) -> bool {
        let us = self.ctx.opts.flow_sleep;
        if us > 0 {
            if self.q.busy() > 0 {
                self.overlap_wait = true;
                return true;
            }
            let c = self.clock;
            c.sleep_until(
                c.now() + c.ticks(Duration::from_micros(us)),
                self.ctx.stop_all,
            );
        }
        self.overlap_wait = self.q.busy() > 0;
        true
    }

    /// lockfile: take the file's lock for this I/O (shared for a read under
    /// readwrite). False when the file has none.
    #[inline(never)]
    fn lock_file(&self, io: &Io) -> bool {
        let Some(l) = self.ctx.files[io.file as usize].lock.as_ref() else {
            return false;
        };
        l.acquire(self.shared_lock(io));
        true
    }

    fn unlock_file(&self, io: &Io) {
        if let Some(l) = self.ctx.files[io.file as usize].lock.as_ref() {
            l.release(self.shared_lock(io));
        }
    }

    fn shared_lock(&self, io: &Io) -> bool {
        io.ddir == Ddir::Read && self.ctx.opts.lockfile == ioscope_options::LockMode::ReadWrite
    }

    /// Options that count or record each issued I/O (think time, write_iolog).
    #[inline(never)]
    fn issued_extras(&mut self, io: Io, now: Ticks) {
        self.think.issued(now);
        if let Some(f) = self.flow.as_mut() {
            f.issued();
        }
        self.record_iolog(&io, now);
    }

    /// write_iolog: the I/O as it is issued.
    #[inline]
    fn record_iolog(&mut self, io: &Io, now: Ticks) {
        if let Some(r) = self.wl.recorder.as_mut() {
            r.issued(self.clock.delta_ns(self.started, now) / 1000, io);
        }
    }

    /// serialize_overlap: does `io` overlap an I/O of its file queued or in flight?
    fn overlaps_busy(&self, io: &Io) -> bool {
        let (lo, hi) = (io.offset, io.offset + io.len as u64);
        self.q.units.iter().enumerate().any(|(i, u)| {
            u.file == io.file
                && u.offset < hi
                && lo < u.offset + u.len as u64
                && !self.q.free.contains(&(i as u32))
        })
    }

    /// May `io` go now? In a mixed job whose direction must wait while the other
    /// data direction may go, the other goes instead (fio's rate_ddir), so each
    /// direction keeps its own rate. None: hold the I/O until the pacer allows it.
    #[inline]
    fn pace(&mut self, mut io: Io, now: Ticks) -> Option<Io> {
        if self.pacer.admit(io.ddir, io.len, now) {
            return Some(io);
        }
        if self.ctx.opts.rw.mode.reads() && self.ctx.opts.rw.mode.writes() && !io.verify {
            let other = match io.ddir {
                Ddir::Read => Ddir::Write,
                _ => Ddir::Read,
            };
            let next_due = self.pacer.next_due;
            if self.pacer.admit(other, io.len, now) {
                io.ddir = other;
                return Some(io);
            }
            self.pacer.next_due = next_due.min(self.pacer.next_due);
            self.pacer.waiting = true;
        }
        self.held = Some(io);
        None
    }

    /// Hand a prepared unit to an asynchronous engine.
    #[inline]
    fn queue(&mut self, idx: u32, io: Io) -> Fill {
        let unit = &mut self.q.units[idx as usize];
        match self.eng.queue(idx, unit) {
            Ok(Queued::Queued) => {
                self.q.pending.push(idx);
                // With combine_submit_wait, the batch that fills the queue goes in
                // with the wait for completions that must follow (one call on io_uring).
                let full = self.q.busy() >= self.lim.depth;
                let defer = full && self.ctx.combine_submit_wait;
                if self.q.pending.len() as u32 >= self.lim.batch_submit && !defer {
                    self.commit();
                    return Fill::Committed;
                }
                Fill::Continue
            }
            Ok(Queued::Done) => {
                let t = self.clock.now();
                unit.issue = unit.start;
                let res = unit.result;
                self.rec.issued_sync(self.q.inflight + 1);
                self.complete(
                    Completion {
                        unit: idx,
                        result: res,
                    },
                    t,
                );
                self.rec.reaped(1);
                // The unit is free again: return so the loop re-checks its limits.
                self.now_hint = Some(t);
                Fill::End(self.stop_issuing)
            }
            Ok(Queued::Busy) => {
                self.q.free.push(idx);
                self.held = Some(io);
                self.commit();
                Fill::End(false)
            }
            Err(e) => {
                self.q.free.push(idx);
                self.fail(
                    e.raw_os_error().unwrap_or(libc::EIO),
                    &format!("queue: {e}"),
                );
                Fill::End(true)
            }
        }
    }

    #[inline]
    fn prepare(&mut self, idx: u32, io: Io, now: Ticks) {
        let d = io.ddir.index();
        let (prio, slot) = match &mut self.cmdprio {
            Some(c) => c.pick(d, io.len as u64),
            None => (0, 0),
        };
        let mut flags = (slot as u32) << 16;
        if self.hipri_pct > 0 && (self.hipri_pct >= 100 || (now % 100) < self.hipri_pct as u64) {
            flags |= UNIT_HIPRI;
        }
        match (&mut self.verify, io.ddir) {
            (Some(v), Ddir::Write) => {
                let buf = self.bufs.slot_mut(idx as usize, io.len as usize);
                v.fill_write(idx as usize, &io, buf, self.clock.ns(now));
            }
            (Some(v), _) => v.bind(idx as usize, &io),
            (None, Ddir::Write) => {
                self.bufs
                    .prepare_write(idx as usize, io.len as usize, io.offset ^ now)
            }
            (None, _) => {}
        }
        let u = &mut self.q.units[idx as usize];
        u.ddir = io.ddir;
        u.offset = io.offset;
        u.len = io.len;
        u.file = io.file;
        u.ioprio = prio;
        u.flags = flags;
        u.result = 0;
        u.start = now;
    }

    /// A synchronous engine: time the call itself.
    #[inline]
    fn issue_sync(&mut self, idx: u32) -> Ticks {
        if E::FILE_OPS {
            return self.issue_file_op(idx);
        }
        let t0 = self.stamper.stamp();
        let unit = &mut self.q.units[idx as usize];
        unit.start = t0;
        unit.issue = t0;
        let res = match self.eng.queue(idx, unit) {
            Ok(_) => unit.result,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let t1 = self.stamper.stamp();
        self.rec.issued_sync(0);
        self.complete(
            Completion {
                unit: idx,
                result: res,
            },
            t1,
        );
        self.rec.reaped(1);
        if self.qd.is_some() {
            self.qd_search(1, t1);
        }
        t1
    }

    /// A metadata engine (filecreate, filestat, ...): the first unit of a pass over a
    /// file carries the timed operation on its name, recorded as that direction's
    /// clat; the pass's other units are counted (bytes, IOPS) with no latency, as fio's
    /// fake I/O. The pass ends when the file's region has been covered.
    #[inline(never)]
    fn issue_file_op(&mut self, idx: u32) -> Ticks {
        let unit = &mut self.q.units[idx as usize];
        let f = unit.file as usize;
        let begins = self.passes.get(f).is_some_and(|&left| left == 0);
        if begins {
            unit.flags |= UNIT_FILE_OP;
            self.passes[f] = self.ctx.files[f].len.max(1);
        }
        let t0 = self.clock.now();
        unit.start = t0;
        unit.issue = t0;
        let res = match self.eng.queue(idx, unit) {
            Ok(_) => unit.result,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let t1 = self.clock.now();
        unit.flags &= !UNIT_FILE_OP;
        self.rec.issued_sync(0);
        self.rec.reaped(1);
        if res < 0 {
            self.q.free.push(idx);
            let what = crate::setup::files::name_op_label(&self.ctx.opts);
            let path = self.ctx.files[f].path.display().to_string();
            let e = std::io::Error::from_raw_os_error((-res) as i32);
            let text = format!("{what}({path}): {}", strerror(&e));
            self.ctx
                .shared
                .say(format!("ioscope: job '{}': {text}", self.ctx.opts.name));
            // As fio's failed open: the I/O never happened, so it is not counted.
            self.fail_quiet((-res) as i32, &text);
            return t1;
        }
        let unit = &self.q.units[idx as usize];
        if begins {
            self.rec.name_op(unit, self.clock.delta_ns(t0, t1), t1);
        }
        self.rec.counted(unit, res as u64);
        let left = &mut self.passes[f];
        *left = left.saturating_sub(u64::from(unit.len));
        if *left == 0 {
            self.eng.end_pass(f as u32);
        }
        self.think.completed();
        self.q.free.push(idx);
        t1
    }

    fn commit(&mut self) {
        if self.q.pending.is_empty() {
            return;
        }
        let n = match self.eng.commit() {
            Ok(n) => n,
            Err(e) => {
                self.fail(
                    e.raw_os_error().unwrap_or(libc::EIO),
                    &format!("submit: {e}"),
                );
                0
            }
        };
        // As in fio, the submission call counts into slat: stamp after it.
        let t = self.stamper.stamp();
        self.mark_issued(n as usize, t);
    }

    /// The first `n` pending units were issued at `t`.
    fn mark_issued(&mut self, n: usize, t: Ticks) {
        let n = n.min(self.q.pending.len());
        for &idx in &self.q.pending[..n] {
            let u = &mut self.q.units[idx as usize];
            u.issue = t;
            self.rec.issued(u);
        }
        self.q.inflight += n as u32;
        self.rec.submitted(n as u32, self.q.inflight);
        self.q.pending.drain(..n);
        self.submit_calls += 1;
        self.ctx
            .shared
            .submit_calls
            .store(self.submit_calls, Relaxed);
    }

    /// Submit the queued units and reap in one engine call (queue full).
    fn commit_reap(&mut self) {
        // The units enter the kernel at the start of the call: that is their issue
        // time (their slat then excludes the submission call, which clat includes).
        let t_issue = self.stamper.stamp();
        let min = self.lim.complete_min.min(self.q.busy()).max(1);
        let max = self.lim.complete_max.max(min);
        let (s, n) = match self.eng.commit_and_getevents(min, max) {
            Ok(r) => r,
            Err(e) => {
                self.fail(
                    e.raw_os_error().unwrap_or(libc::EIO),
                    &format!("submit: {e}"),
                );
                return;
            }
        };
        self.mark_issued(s as usize, t_issue);
        self.take_events(n);
        if self.q.inflight > self.lim.depth_low && n > 0 && self.q.pending.is_empty() {
            self.reap(true);
        }
    }

    /// Record the `n` completions the engine just reaped (one timestamp for all).
    fn take_events(&mut self, n: u32) {
        let t = self.stamper.stamp();
        for i in 0..n {
            let c = self.eng.event(i);
            self.q.inflight = self.q.inflight.saturating_sub(1);
            self.complete(c, t);
        }
        self.rec.reaped(n);
        if self.qd.is_some() {
            self.qd_search(n, t);
        }
        self.reap_calls += 1;
        self.ctx.shared.reap_calls.store(self.reap_calls, Relaxed);
    }

    /// Reap completions as fio does: when the queue is full, at least
    /// min(iodepth_batch_complete_min, in flight) and keep going down to iodepth_low.
    fn reap(&mut self, full: bool) {
        loop {
            let mut min = self.lim.complete_min.min(self.q.inflight);
            if min == 0
                && (full
                    || self.stop_issuing
                    || self.pacer.waiting
                    || self.think.due()
                    || self.exhausted
                    || self.draining
                    || self.overlap_wait)
            {
                min = 1;
            }
            let max = self.lim.complete_max.max(min).min(self.q.inflight.max(1));
            let n = match self.eng.getevents(min, max) {
                Ok(n) => n,
                Err(e) => {
                    self.fail(
                        e.raw_os_error().unwrap_or(libc::EIO),
                        &format!("getevents: {e}"),
                    );
                    self.q.inflight = 0;
                    return;
                }
            };
            self.take_events(n);
            if !(full && self.q.inflight > self.lim.depth_low && n > 0) {
                break;
            }
        }
    }

    fn drain(&mut self) {
        self.commit();
        while self.q.inflight > 0 {
            let before = self.q.inflight;
            self.reap(true);
            if self.q.inflight == before && self.failure.errno != 0 {
                break;
            }
        }
        while self.checks_pending() > 0 {
            self.collect_checks(true);
        }
    }

    /// One I/O completed: free its unit and record it.
    #[inline(always)]
    fn complete(&mut self, c: Completion, t: Ticks) {
        self.think.completed();
        let u = &self.q.units[c.unit as usize];
        if c.result < 0 {
            self.q.free.push(c.unit);
            let (ddir, offset, len) = (u.ddir, u.offset, u.len);
            if let Some(v) = self.verify.as_mut() {
                v.forget(c.unit as usize);
            }
            self.io_error(c.unit, ddir, offset, len, (-c.result) as i32);
            return;
        }
        if let Err(lat) = self.rec.completed(u, c.result as u64, t) {
            let max = self.ctx.opts.max_latency * 1000;
            self.fail(
                libc::ETIMEDOUT,
                &format!("latency {lat} ns exceeds max_latency {max} ns"),
            );
        }
        match self.verify.is_some() {
            true => self.verified(c),
            false => self.q.free.push(c.unit),
        }
    }

    /// A completed unit through the verifier: writes enter the history, blocks read
    /// back are checked — here, or on a checker thread (verify_async), in which case
    /// the unit is freed when its check returns.
    fn verified(&mut self, c: Completion) {
        let idx = c.unit;
        let u = &self.q.units[idx as usize];
        let (ddir, offset, len, buf) = (u.ddir, u.offset, u.len, u.buf);
        let ok = c.result as u64 >= len as u64;
        let Some(v) = self.verify.as_mut() else {
            self.q.free.push(idx);
            return;
        };
        let Check::Block(job) = v.completed(idx as usize, ddir, offset, ok) else {
            self.q.free.push(idx);
            return;
        };
        if let Some(ch) = self.checkers.as_mut() {
            if ch.send(idx, buf, len as usize, job) {
                return;
            }
        }
        // SAFETY: the unit's buffer holds `len` bytes and is ours until it is freed.
        let slice = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
        let r = check_block(&v.spec, slice, &job);
        self.checked(idx, r, job.phase);
    }

    /// A block's check is done: report a failure, then free the unit.
    fn checked(&mut self, idx: u32, r: Result<(), BadBlock>, phase: bool) {
        if let Err(f) = r {
            self.verify_failed(idx, f, phase);
        }
        self.q.free.push(idx);
    }

    /// Collect finished asynchronous checks; with `block`, wait for one first.
    fn collect_checks(&mut self, block: bool) {
        let mut wait = block;
        while let Some(d) = self.checkers.as_mut().and_then(|c| c.take(wait)) {
            wait = false;
            self.checked(d.unit, d.result, d.phase);
        }
    }

    /// Checks still out on checker threads.
    fn checks_pending(&self) -> u32 {
        self.checkers.as_ref().map_or(0, |c| c.pending)
    }

    /// fio's messages for a failed block, verify_dump, and the job's error (or, with
    /// continue_on_error=verify, a counted error).
    fn verify_failed(&mut self, idx: u32, f: BadBlock, phase: bool) {
        let u = &self.q.units[idx as usize];
        // SAFETY: the unit is not free yet: its buffer still holds the block read.
        let buf = unsafe { std::slice::from_raw_parts(u.buf, u.len as usize) };
        let path = self
            .ctx
            .files
            .get(u.file as usize)
            .map(|f| f.path.display().to_string())
            .unwrap_or_default();
        let Some(v) = self.verify.as_mut() else {
            return;
        };
        for line in f.lines(&path, Verifier::flags(phase)) {
            self.ctx.shared.say(line);
        }
        if v.dump {
            let expected = (!f.is_header()).then(|| v.expected(buf, &f));
            for m in verify::dump(&path, &f, buf, expected.as_deref()) {
                self.ctx.shared.say(m);
            }
        }
        v.tolerated();
        if v.tolerate {
            self.rec.tolerated_error(libc::EILSEQ);
            if v.fatal {
                self.stop_issuing = true;
            }
            return;
        }
        self.fail_quiet(libc::EILSEQ, &f.summary(&path));
    }

    fn io_error(&mut self, unit: u32, ddir: Ddir, offset: u64, len: u32, errno: i32) {
        let o = &self.ctx.opts;
        // fill_device: a full device or filesystem is the end of the job, not an error.
        if o.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT) {
            self.stop_issuing = true;
            return;
        }
        self.rec.failed(&self.q.units[unit as usize]);
        self.rec.block_failed(ddir, offset);
        let ignored = o
            .ignore_error
            .0
            .get(ddir.index())
            .is_some_and(|l| l.contains(&errno));
        let tolerated = ignored
            || match o.continue_on_error {
                ContinueOnError::All | ContinueOnError::Io => true,
                ContinueOnError::Read => ddir == Ddir::Read,
                ContinueOnError::Write => ddir == Ddir::Write,
                _ => false,
            };
        let dir = match ddir {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            _ => "sync",
        };
        let e = std::io::Error::from_raw_os_error(errno);
        let text = format!("{}: {dir} offset={offset}, buflen={len}", strerror(&e));
        if tolerated {
            // error_dump: every error the job goes on after is printed too.
            if o.error_dump {
                self.say_io_error(&text);
            }
            self.rec.tolerated_error(errno);
            return;
        }
        self.fail(errno, &text);
    }

    fn say_io_error(&self, text: &str) {
        let file = self
            .ctx
            .files
            .first()
            .map(|f| f.path.display().to_string())
            .unwrap_or_default();
        self.ctx
            .shared
            .say(format!("ioscope: io_u error on file {file}: {text}"));
    }

    fn fail(&mut self, errno: i32, text: &str) {
        if self.failure.errno == 0 {
            self.say_io_error(text);
        }
        self.fail_quiet(errno, text);
    }

    /// The job fails with `errno`; what went wrong was said already.
    fn fail_quiet(&mut self, errno: i32, text: &str) {
        if self.failure.errno == 0 {
            self.failure.errno = errno;
            self.failure.text = Some(text.to_string());
        }
        self.stop_issuing = true;
        if self.ctx.opts.exitall_on_error {
            self.ctx.shared.abort_run.store(true, Relaxed);
        }
    }

    /// fsync/fdatasync/sync_file_range after the writes before it have completed.
    fn sync_files(&mut self, io: Io) {
        self.commit();
        while self.q.inflight > 0 {
            self.reap(true);
        }
        let Some(f) = self.ctx.files.get(io.file as usize) else {
            return;
        };
        let fd = f.file.as_raw_fd();
        let o = &self.ctx.opts;
        let range = o
            .sync_file_range
            .filter(|_| o.fsync == 0 && o.fdatasync == 0);
        let t0 = self.clock.now();
        // SAFETY: fd belongs to the job.
        let r = unsafe {
            if self.ctx.diskless {
                0
            } else if io.ddir == Ddir::Sync {
                libc::fsync(fd)
            } else if let Some(sfr) = range {
                libc::sync_file_range(fd, io.offset as i64, i64::from(io.len), sfr.flags)
            } else {
                libc::fdatasync(fd)
            }
        };
        let t1 = self.clock.now();
        if r < 0 {
            let e = std::io::Error::last_os_error();
            let call = if range.is_some() && io.ddir != Ddir::Sync {
                "sync_file_range"
            } else {
                "fsync"
            };
            self.fail(
                e.raw_os_error().unwrap_or(libc::EIO),
                &format!("{call}: {e}"),
            );
            return;
        }
        if range.is_some() && io.ddir != Ddir::Sync {
            self.rec.range_synced(self.clock.delta_ns(t0, t1));
        } else {
            self.rec.synced(self.clock.delta_ns(t0, t1));
        }
    }

    fn finish(mut self, end: Ticks, usage: crate::sys::usage::Usage) -> JobResult {
        // Whole milliseconds, as fio reports; a job that did I/O ran at least 1 ms.
        let ns = self.clock.delta_ns(self.measure_start, end);
        let did_io = self.ctx.shared.ios.iter().any(|n| n.load(Relaxed) > 0);
        let runtime_ms = (ns / 1_000_000).max(u64::from(ns > 0 && did_io));
        // A failure found by the monitor (rate_min not met).
        let failure = self
            .ctx
            .shared
            .failure
            .lock()
            .ok()
            .and_then(|mut f| f.take());
        if let Some((errno, text)) = failure {
            if self.failure.errno == 0 {
                let name = &self.ctx.opts.name;
                self.ctx
                    .shared
                    .say(format!("ioscope: job '{name}': {text}"));
                self.failure = Failure {
                    errno,
                    text: Some(text),
                };
            }
        }
        self.ctx.logs = self.rec.take_logs();
        self.save_verify_state();
        let verify = self.verify.as_ref().map(|v| ioscope_stats::VerifyCounts {
            blocks: v.counts.blocks,
            errors: v.counts.errors,
        });
        let mut r = self.result(runtime_ms, usage);
        r.verify = verify;
        if let Some(q) = &self.qd {
            let o = &self.ctx.opts;
            r.info.latency_target = Some(ioscope_stats::LatencyTarget {
                target_ns: q.target_ns(),
                window_us: o.latency_window,
                percentile: o.latency_percentile,
                depth: q.depth(),
            });
        }
        r
    }

    /// verify_state_save: how far the writes got, for a later verify_state_load.
    fn save_verify_state(&mut self) {
        let Some((name, st)) = self.verify.as_ref().and_then(|v| v.state()) else {
            return;
        };
        // Written beside and renamed over: a crash while saving leaves the old state or
        // the new one, never half of one.
        let write = || -> std::io::Result<()> {
            let tmp = format!("{name}.tmp");
            let mut f = std::fs::File::create(&tmp)?;
            std::io::Write::write_all(&mut f, &st.encode())?;
            f.sync_all()?;
            std::fs::rename(&tmp, &name)
        };
        if let Err(e) = write() {
            self.ctx.shared.say(format!(
                "ioscope: job '{}': verify state {name}: {e}",
                self.ctx.opts.name
            ));
        }
    }

    fn result(&mut self, runtime_ms: u64, usage: crate::sys::usage::Usage) -> JobResult {
        let f = std::mem::take(&mut self.failure);
        let tolerated = self.rec.first_error();
        if f.errno == 0 && tolerated != 0 {
            // As fio: errors the job went on after are its err, but not a failure.
            let text = strerror(&std::io::Error::from_raw_os_error(tolerated));
            let mut r = self.rec.result(runtime_ms, usage, tolerated, Some(text));
            r.error_tolerated = true;
            return r;
        }
        self.rec.result(runtime_ms, usage, f.errno, f.text)
    }

    /// A copy of the results so far, for an interim report.
    fn publish_snapshot(&mut self, now: Ticks) {
        let runtime_ms = self.clock.delta_ns(self.measure_start, now) / 1_000_000;
        let usage = crate::sys::usage::thread_usage().since(&self.usage_start);
        let f = &self.failure;
        let r = self.rec.result(runtime_ms, usage, f.errno, f.text.clone());
        if let Ok(mut slot) = self.ctx.shared.snapshot.lock() {
            *slot = Some(r);
        }
    }
}

/// verify_async=N: N checker threads for a verifying job.
fn checkers(run: &JobRun) -> Option<Checkers> {
    let n = run.ctx.opts.verify_async;
    let v = run.verify.as_ref().filter(|_| n > 0)?;
    let cpus = run
        .ctx
        .opts
        .verify_async_cpus
        .as_deref()
        .and_then(|l| crate::sys::cpu::parse_cpu_list(l).ok());
    match Checkers::new(n, &v.spec, &run.ctx.opts.name, cpus) {
        Ok(c) => Some(c),
        Err(e) => {
            run.ctx.shared.say(format!(
                "ioscope: job '{}': verify_async: cannot start a checker thread ({e}); checking in the job thread",
                run.ctx.opts.name
            ));
            None
        }
    }
}

fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
