//! One job's thread: the I/O loop in fio's queue / commit / reap model, timing every
//! I/O with the calibrated clock and recording it into the job's statistics.
//!
//! Hot path rules: the units, their buffers, the pending list and all statistics are
//! allocated before the first I/O; per I/O there is no allocation, lock or syscall
//! beyond the engine's own and the clock.

use crate::buffers::Buffers;
use crate::clock::{Clock, Ticks};
use crate::files::JobFile;
use crate::iolog::JobLogs;
use crate::prio::CmdPrio;
use crate::rate::{Pacer, Think};
use crate::workload::Workload;
use ioscope_engine::{Completion, Ddir, Engine, EngineUser, IoUnit, Queued, UNIT_HIPRI};
use ioscope_options::{ContinueOnError, JobOptions};
use ioscope_stats::{DirStats, Histogram, JobResult, LatTrack, PrioStat, SyncStats};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Job phases, as seen by the monitor thread.
pub const STATE_SETUP: u8 = 0;
pub const STATE_RAMP: u8 = 1;
pub const STATE_RUNNING: u8 = 2;
pub const STATE_DONE: u8 = 3;

/// What the job publishes for the monitor (bandwidth samples, status line).
#[derive(Default)]
pub struct Shared {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    /// Clock ticks when measurement began (after ramp).
    pub measure_start: AtomicU64,
    /// Set by exitall or the run to end this job early.
    pub stop: AtomicBool,
    /// Submit and reap calls made (I/Os per call for `ioscope peak`).
    pub submit_calls: AtomicU64,
    pub reap_calls: AtomicU64,
    /// Interim reports: the monitor bumps `snapshot_request`; the job answers by
    /// putting a copy of its results in `snapshot` (outside the per-I/O path).
    pub snapshot_request: AtomicU64,
    pub snapshot: std::sync::Mutex<Option<JobResult>>,
    /// Set by the monitor when the job must fail (errno, message), e.g. rate_min.
    pub failure: std::sync::Mutex<Option<(i32, String)>>,
}

/// Everything the job thread needs.
pub struct JobCtx {
    pub opts: JobOptions,
    pub files: Vec<JobFile>,
    pub shared: Arc<Shared>,
    pub stop_all: &'static AtomicBool,
    pub seed: u64,
    pub ioprio: u16,
    pub logs: Option<JobLogs>,
    /// Issue NOPs instead of I/O (io_uring).
    pub nop: bool,
    /// wait_for: jobs (all clones of the named job) that must finish first.
    pub wait_for: Vec<Arc<Shared>>,
    /// Which clone (numjobs) this is: cpus_allowed_policy=split picks its CPU by it.
    pub clone: u32,
    /// Submit the batch that fills the queue in the same call that waits for
    /// completions (`ioscope peak`). Its issue time is then taken before that call,
    /// as t/io_uring does; fio-compatible runs keep fio's definition (after submit).
    pub combine_submit_wait: bool,
}

/// Per-direction live statistics.
struct Live {
    dirs: [DirStats; 3],
    sync: SyncStats,
    io_depth: [u64; 7],
    submit: [u64; 7],
    complete: [u64; 7],
    total_err: u64,
    first_error: i32,
}

fn depth_bucket(d: u32) -> usize {
    if d == 0 {
        0
    } else {
        (31 - d.leading_zeros() as usize).min(6)
    }
}

fn batch_bucket(n: u32) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        _ => ((32 - (n - 1).leading_zeros()) as usize - 1).min(6),
    }
}

impl Live {
    fn new(o: &JobOptions, prio_slots: &[u16], sync_engine: bool) -> Live {
        let slat = !o.disable_slat && !sync_engine;
        let dir = |_| {
            let mut d = DirStats {
                slat: LatTrack::new(slat && o.slat_percentiles),
                clat: LatTrack::new(!o.disable_clat && o.clat_percentiles),
                lat: LatTrack::new(!o.disable_lat && o.lat_percentiles),
                ..Default::default()
            };
            d.prios = prio_slots
                .iter()
                .map(|&p| PrioStat {
                    ioprio: p,
                    stat: Default::default(),
                    hist: Histogram::new(),
                })
                .collect();
            d
        };
        Live {
            dirs: std::array::from_fn(dir),
            sync: SyncStats {
                total_ios: 0,
                lat: LatTrack::new(true),
            },
            io_depth: [0; 7],
            submit: [0; 7],
            complete: [0; 7],
            total_err: 0,
            first_error: 0,
        }
    }

    fn reset(&mut self) {
        for d in &mut self.dirs {
            d.io_bytes = 0;
            d.total_ios = 0;
            d.short_ios = 0;
            d.drop_ios = 0;
            d.slat.reset();
            d.clat.reset();
            d.lat.reset();
            for p in &mut d.prios {
                p.stat = Default::default();
                p.hist.clear();
            }
        }
        self.sync = SyncStats {
            total_ios: 0,
            lat: LatTrack::new(true),
        };
        self.io_depth = [0; 7];
        self.submit = [0; 7];
        self.complete = [0; 7];
    }
}

/// How the job ended.
pub struct JobOutcome {
    pub result: JobResult,
    pub logs: Option<JobLogs>,
}

/// The job loop, generic over the engine so every call is static.
pub struct JobRun<'a> {
    pub ctx: &'a mut JobCtx,
    pub workload: Workload,
    pub buffers: Buffers,
    pub cmdprio: Option<CmdPrio>,
}

impl EngineUser for JobRun<'_> {
    type Output = JobResult;
    fn run<E: Engine>(self, engine: E) -> JobResult {
        Loop::new(self, engine).run()
    }
}

struct Loop<'a, E: Engine> {
    eng: E,
    ctx: &'a mut JobCtx,
    wl: Workload,
    bufs: Buffers,
    cmdprio: Option<CmdPrio>,
    clock: &'static Clock,
    units: Vec<IoUnit>,
    free: Vec<u32>,
    /// Queued but not yet committed, in queue order.
    pending: Vec<u32>,
    inflight: u32,
    live: Live,
    pacer: Pacer,
    think: Think,
    in_ramp: bool,
    ramp_end: Ticks,
    deadline: Ticks,
    measure_start: Ticks,
    error: i32,
    error_text: Option<String>,
    stop_issuing: bool,
    /// An I/O the pacer or a full queue turned away, issued next.
    held: Option<crate::workload::Io>,
    exhausted: bool,
    /// Completion time of the last synchronous I/O: the loop's next "now".
    now_hint: Option<Ticks>,
    submit_calls: u64,
    reap_calls: u64,
    /// Per-I/O timestamps are needed (see `stamp`).
    timed: bool,
    /// max_latency in ns (u64::MAX when unset).
    max_latency_ns: u64,
    untimed_calls: u64,
    coarse_now: Ticks,
    usage_start: crate::cpu::Usage,
    snapshot_seen: u64,
    hipri_pct: u32,
    // Cached per-run switches.
    depth: u32,
    batch_submit: u32,
    complete_min: u32,
    complete_max: u32,
    depth_low: u32,
    track_slat: bool,
    track_clat: bool,
    track_lat: bool,
    prio_uses_lat: bool,
    continue_on: ContinueOnError,
}

impl<'a, E: Engine> Loop<'a, E> {
    fn new(run: JobRun<'a>, eng: E) -> Self {
        let clock = Clock::get();
        let o = &run.ctx.opts;
        // A synchronous engine has one I/O in flight whatever iodepth says (as fio).
        let depth = if eng.is_sync() { 1 } else { o.iodepth.max(1) };
        let units: Vec<IoUnit> = (0..depth as usize)
            .map(|i| IoUnit {
                buf: run.buffers.slot_ptr(i),
                buf_len: run.buffers.slot as u32,
                ..Default::default()
            })
            .collect();
        let slots = run
            .cmdprio
            .as_ref()
            .map(|c| c.slots.clone())
            .unwrap_or_default();
        let sync_engine = eng.is_sync();
        let live = Live::new(o, &slots, sync_engine);
        let start = clock.now();
        let ramp = clock.ticks(Duration::from_micros(o.ramp_time));
        let deadline = if o.runtime > 0 {
            start + ramp + clock.ticks(Duration::from_micros(o.runtime))
        } else {
            u64::MAX
        };
        Loop {
            units,
            free: (0..depth).rev().collect(),
            pending: Vec::with_capacity(depth as usize),
            inflight: 0,
            live,
            pacer: Pacer::new(o, clock),
            think: Think::new(o),
            in_ramp: o.ramp_time > 0,
            ramp_end: start + ramp,
            deadline,
            measure_start: start,
            error: 0,
            error_text: None,
            stop_issuing: false,
            held: None,
            exhausted: false,
            now_hint: None,
            submit_calls: 0,
            reap_calls: 0,
            timed: o.max_latency > 0
                || !o.disable_clat
                || !o.disable_lat
                || (!o.disable_slat && !sync_engine)
                || run.ctx.logs.is_some()
                || o.thinktime > 0
                || o.rate.0.iter().chain(o.rate_iops.0.iter()).any(|&r| r > 0),
            untimed_calls: 0,
            max_latency_ns: if o.max_latency > 0 {
                o.max_latency * 1000
            } else {
                u64::MAX
            },
            coarse_now: start,
            usage_start: Default::default(),
            snapshot_seen: 0,
            hipri_pct: if o.hipri { o.hipri_percentage } else { 0 },
            depth,
            batch_submit: o.iodepth_batch_submit.clamp(1, depth),
            complete_min: o.iodepth_batch_complete_min,
            complete_max: o.iodepth_batch_complete_max.max(1),
            depth_low: o.iodepth_low.min(depth),
            track_slat: !o.disable_slat && !sync_engine,
            track_clat: !o.disable_clat,
            track_lat: !o.disable_lat,
            prio_uses_lat: o.lat_percentiles,
            continue_on: o.continue_on_error,
            eng,
            wl: run.workload,
            bufs: run.buffers,
            cmdprio: run.cmdprio,
            clock,
            ctx: run.ctx,
        }
    }

    fn run(mut self) -> JobResult {
        let usage0 = crate::cpu::thread_usage();
        let state = if self.in_ramp {
            crate::job::STATE_RAMP
        } else {
            STATE_RUNNING
        };
        self.ctx
            .shared
            .measure_start
            .store(self.measure_start, Relaxed);
        self.ctx.shared.state.store(state, Relaxed);
        self.usage_start = usage0;
        loop {
            let now = match self.now_hint.take() {
                Some(t) => t,
                None => self.stamp(),
            };
            if self.in_ramp && now >= self.ramp_end {
                self.end_ramp(now);
                self.usage_start = crate::cpu::thread_usage();
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
                break;
            }
            let exhausted = self.fill(now);
            if self.inflight == 0 && self.pending.is_empty() {
                if exhausted {
                    break;
                }
                if self.pacer.waiting {
                    self.idle_wait();
                }
                continue;
            }
            let full = self.inflight + self.pending.len() as u32 >= self.depth;
            if full && !self.pending.is_empty() && self.ctx.combine_submit_wait {
                self.commit_reap();
                continue;
            }
            if !self.pending.is_empty()
                && (full || exhausted || self.pacer.waiting || self.think.due())
            {
                self.commit();
            }
            if self.inflight > 0 && (full || exhausted || self.pacer.waiting || self.think.due()) {
                self.reap(full);
            }
        }
        self.drain();
        let end = self.clock.now();
        // end_fsync and fsync_on_close both sync every file when the job ends.
        if self.ctx.opts.end_fsync || self.ctx.opts.fsync_on_close {
            for f in &self.ctx.files {
                // SAFETY: fsync on an fd the job owns.
                unsafe { libc::fsync(f.file.as_raw_fd()) };
            }
        }
        let usage = crate::cpu::thread_usage().since(&self.usage_start);
        self.finish(end, usage)
    }

    fn end_ramp(&mut self, now: Ticks) {
        self.in_ramp = false;
        self.live.reset();
        self.measure_start = now;
        for d in 0..3 {
            self.ctx.shared.bytes[d].store(0, Relaxed);
            self.ctx.shared.ios[d].store(0, Relaxed);
        }
        if let Some(l) = &mut self.ctx.logs {
            l.restart(now);
        }
        self.ctx.shared.measure_start.store(now, Relaxed);
        self.ctx.shared.state.store(STATE_RUNNING, Relaxed);
    }

    /// Nothing in flight and nothing to issue yet: wait for the pacer or think time.
    fn idle_wait(&mut self) {
        let until = self.pacer.next_due.min(self.deadline);
        let now = self.clock.now();
        if until > now && until != u64::MAX {
            crate::rate::wait_until(self.clock, until, self.ctx.stop_all);
        }
        self.pacer.waiting = false;
    }

    /// Queue units until the queue is full, the workload is done, or pacing says wait.
    /// Returns true when the workload has nothing more to issue.
    fn fill(&mut self, now: Ticks) -> bool {
        if self.stop_issuing {
            return true;
        }
        let mut now = now;
        while self.inflight + (self.pending.len() as u32) < self.depth {
            if self.think.due() {
                if self.inflight > 0 || !self.pending.is_empty() {
                    return false;
                }
                self.think.pause(self.clock, self.ctx.stop_all);
                now = self.clock.now();
            }
            let Some(io) = self.held.take().or_else(|| self.wl.next_io()) else {
                self.exhausted = true;
                return true;
            };
            if !io.ddir.is_data() {
                self.sync_files(io.ddir, io.file);
                now = self.clock.now();
                continue;
            }
            if !self.pacer.admit(io.ddir, io.len, now) {
                self.wl_push_back(io);
                return false;
            }
            let Some(idx) = self.free.pop() else {
                self.wl_push_back(io);
                return false;
            };
            self.prepare(idx, io, now);
            if self.eng.is_sync() {
                // One I/O per round so limits and stop requests are seen at once.
                self.now_hint = Some(self.issue_sync(idx));
                return self.stop_issuing;
            }
            let unit = &mut self.units[idx as usize];
            match self.eng.queue(idx, unit) {
                Ok(Queued::Queued) => {
                    self.pending.push(idx);
                    // With combine_submit_wait, the batch that fills the queue goes in
                    // with the wait for completions that must follow (one call on io_uring).
                    let full = self.inflight + self.pending.len() as u32 >= self.depth;
                    let defer = full && self.ctx.combine_submit_wait;
                    if self.pending.len() as u32 >= self.batch_submit && !defer {
                        self.commit();
                        now = self.clock.now();
                    }
                }
                Ok(Queued::Done) => {
                    let t = self.clock.now();
                    unit.issue = unit.start;
                    let res = unit.result;
                    self.live.submit[1] += 1;
                    self.live.io_depth[depth_bucket(self.inflight + 1)] += 1;
                    self.complete(
                        Completion {
                            unit: idx,
                            result: res,
                        },
                        t,
                    );
                    self.live.complete[1] += 1;
                    // The unit is free again: return so the loop re-checks its limits.
                    self.now_hint = Some(t);
                    return self.stop_issuing;
                }
                Ok(Queued::Busy) => {
                    self.free.push(idx);
                    self.wl_push_back(io);
                    self.commit();
                    return false;
                }
                Err(e) => {
                    self.free.push(idx);
                    self.fail(
                        e.raw_os_error().unwrap_or(libc::EIO),
                        &format!("queue: {e}"),
                    );
                    return true;
                }
            }
        }
        false
    }

    /// Keep an I/O the pacer or a full queue turned away for the next round.
    fn wl_push_back(&mut self, io: crate::workload::Io) {
        self.held = Some(io);
    }

    #[inline]
    fn prepare(&mut self, idx: u32, io: crate::workload::Io, now: Ticks) {
        let d = io.ddir.index();
        let (prio, slot) = match &mut self.cmdprio {
            Some(c) => c.pick(d, io.len as u64),
            None => (0, 0),
        };
        let mut flags = (slot as u32) << 16;
        if self.hipri_pct > 0 && (self.hipri_pct >= 100 || (now % 100) < self.hipri_pct as u64) {
            flags |= UNIT_HIPRI;
        }
        if io.ddir == Ddir::Write {
            self.bufs
                .prepare_write(idx as usize, io.len as usize, io.offset ^ now);
        }
        let u = &mut self.units[idx as usize];
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
        let t0 = self.stamp();
        let unit = &mut self.units[idx as usize];
        unit.start = t0;
        unit.issue = t0;
        let res = match self.eng.queue(idx, unit) {
            Ok(_) => unit.result,
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        let t1 = self.stamp();
        self.live.submit[1] += 1;
        self.live.io_depth[0] += 1;
        self.complete(
            Completion {
                unit: idx,
                result: res,
            },
            t1,
        );
        self.live.complete[1] += 1;
        t1
    }

    /// A timestamp: the clock when something needs per-I/O times; otherwise (no
    /// latency tracking, logs, pacing or think time: gtod_reduce and the like) a
    /// value refreshed every 32 calls, enough for runtime limits.
    #[inline(always)]
    fn stamp(&mut self) -> Ticks {
        if self.timed {
            return self.clock.now();
        }
        self.untimed_calls = self.untimed_calls.wrapping_add(1);
        if self.untimed_calls & 31 == 0 {
            self.coarse_now = self.clock.now();
        }
        self.coarse_now
    }

    fn commit(&mut self) {
        if self.pending.is_empty() {
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
        let t = self.stamp();
        self.mark_issued(n as usize, t);
    }

    /// The first `n` pending units were issued at `t`.
    fn mark_issued(&mut self, n: usize, t: Ticks) {
        let n = n.min(self.pending.len());
        for &idx in &self.pending[..n] {
            let u = &mut self.units[idx as usize];
            u.issue = t;
            if self.track_slat && !self.in_ramp {
                let slat = self.clock.delta_ns(u.start, t);
                self.live.dirs[u.ddir.index()].slat.add(slat);
            }
        }
        self.inflight += n as u32;
        self.pending.drain(..n);
        self.submit_calls += 1;
        self.ctx
            .shared
            .submit_calls
            .store(self.submit_calls, Relaxed);
        self.live.submit[batch_bucket(n as u32)] += 1;
        self.live.io_depth[depth_bucket(self.inflight)] += n as u64;
    }

    /// Submit the queued units and reap in one engine call (queue full).
    fn commit_reap(&mut self) {
        // The units enter the kernel at the start of the call: that is their issue
        // time (their slat then excludes the submission call, which clat includes).
        let t_issue = self.stamp();
        let min = self
            .complete_min
            .min(self.inflight + self.pending.len() as u32)
            .max(1);
        let max = self.complete_max.max(min);
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
        if self.inflight > self.depth_low && n > 0 && self.pending.is_empty() {
            self.reap(true);
        }
    }

    /// Record the `n` completions the engine just reaped (one timestamp for all).
    fn take_events(&mut self, n: u32) {
        let t = self.stamp();
        for i in 0..n {
            let c = self.eng.event(i);
            self.inflight = self.inflight.saturating_sub(1);
            self.complete(c, t);
        }
        self.live.complete[batch_bucket(n)] += 1;
        self.reap_calls += 1;
        self.ctx.shared.reap_calls.store(self.reap_calls, Relaxed);
    }

    /// Reap completions as fio does: when the queue is full, at least
    /// min(iodepth_batch_complete_min, in flight) and keep going down to iodepth_low.
    fn reap(&mut self, full: bool) {
        loop {
            let mut min = self.complete_min.min(self.inflight);
            if min == 0
                && (full
                    || self.stop_issuing
                    || self.pacer.waiting
                    || self.think.due()
                    || self.wl_exhausted())
            {
                min = 1;
            }
            let max = self.complete_max.max(min).min(self.inflight.max(1));
            let n = match self.eng.getevents(min, max) {
                Ok(n) => n,
                Err(e) => {
                    self.fail(
                        e.raw_os_error().unwrap_or(libc::EIO),
                        &format!("getevents: {e}"),
                    );
                    self.inflight = 0;
                    return;
                }
            };
            self.take_events(n);
            if !(full && self.inflight > self.depth_low && n > 0) {
                break;
            }
        }
    }

    fn wl_exhausted(&self) -> bool {
        self.exhausted
    }

    fn drain(&mut self) {
        self.commit();
        while self.inflight > 0 {
            let before = self.inflight;
            self.reap(true);
            if self.inflight == before && self.error != 0 {
                break;
            }
        }
    }

    /// Record one completed I/O.
    #[inline]
    fn complete(&mut self, c: Completion, t: Ticks) {
        let u = &self.units[c.unit as usize];
        let d = u.ddir.index();
        let (start, issue, len, ddir, offset) = (u.start, u.issue, u.len, u.ddir, u.offset);
        let slot = (u.flags >> 16) as usize;
        self.free.push(c.unit);
        self.think.completed();
        if c.result < 0 {
            self.io_error(ddir, offset, len, (-c.result) as i32);
            return;
        }
        let bytes = c.result as u64;
        let dir = &mut self.live.dirs[d];
        dir.io_bytes += bytes;
        dir.total_ios += 1;
        if bytes < len as u64 {
            dir.short_ios += 1;
        }
        self.ctx.shared.bytes[d].store(dir.io_bytes, Relaxed);
        self.ctx.shared.ios[d].store(dir.total_ios, Relaxed);
        if self.in_ramp {
            return;
        }
        let clat = self.clock.delta_ns(issue, t);
        let lat = self.clock.delta_ns(start, t);
        if lat > self.max_latency_ns {
            let max = self.max_latency_ns;
            self.fail(
                libc::ETIMEDOUT,
                &format!("latency {lat} ns exceeds max_latency {max} ns"),
            );
            return;
        }
        if self.track_clat {
            dir.clat.add(clat);
        }
        if self.track_lat {
            dir.lat.add(lat);
        }
        if let Some(p) = dir.prios.get_mut(slot) {
            let v = if self.prio_uses_lat { lat } else { clat };
            p.stat.add(v);
            p.hist.add(v);
        }
        if let Some(l) = &mut self.ctx.logs {
            let u = &self.units[c.unit as usize];
            let slat = self.track_slat.then(|| self.clock.delta_ns(start, issue));
            l.completion(t, u, slat, clat, lat, bytes);
        }
    }

    fn io_error(&mut self, ddir: Ddir, offset: u64, len: u32, errno: i32) {
        // fill_device: a full device or filesystem is the end of the job, not an error.
        if self.ctx.opts.fill_device && (errno == libc::ENOSPC || errno == libc::EDQUOT) {
            self.stop_issuing = true;
            return;
        }
        let ignored = self
            .ctx
            .opts
            .ignore_error
            .0
            .get(ddir.index())
            .is_some_and(|l| l.contains(&errno));
        let tolerated = ignored
            || match self.continue_on {
                ContinueOnError::All | ContinueOnError::Io => true,
                ContinueOnError::Read => ddir == Ddir::Read,
                ContinueOnError::Write => ddir == Ddir::Write,
                _ => false,
            };
        if tolerated {
            self.live.total_err += 1;
            if self.live.first_error == 0 {
                self.live.first_error = errno;
            }
            return;
        }
        let dir = match ddir {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            _ => "sync",
        };
        let e = std::io::Error::from_raw_os_error(errno);
        self.fail(
            errno,
            &format!("{}: {dir} offset={offset}, buflen={len}", strerror(&e)),
        );
    }

    fn fail(&mut self, errno: i32, text: &str) {
        if self.error == 0 {
            self.error = errno;
            let file = self
                .ctx
                .files
                .first()
                .map(|f| f.path.display().to_string())
                .unwrap_or_default();
            eprintln!("ioscope: io_u error on file {file}: {text}");
            self.error_text = Some(text.to_string());
        }
        self.stop_issuing = true;
        if self.ctx.opts.exitall_on_error {
            self.ctx.stop_all.store(true, Relaxed);
        }
    }

    /// fsync/fdatasync after the writes before it have completed.
    fn sync_files(&mut self, ddir: Ddir, file: u32) {
        self.commit();
        while self.inflight > 0 {
            self.reap(true);
        }
        let Some(f) = self.ctx.files.get(file as usize) else {
            return;
        };
        let fd = f.file.as_raw_fd();
        let t0 = self.clock.now();
        // SAFETY: fd belongs to the job.
        let r = unsafe {
            if ddir == Ddir::Sync {
                libc::fsync(fd)
            } else {
                libc::fdatasync(fd)
            }
        };
        let t1 = self.clock.now();
        if r < 0 {
            let e = std::io::Error::last_os_error();
            self.fail(
                e.raw_os_error().unwrap_or(libc::EIO),
                &format!("fsync: {e}"),
            );
            return;
        }
        if !self.in_ramp {
            self.live.sync.total_ios += 1;
            self.live.sync.lat.add(self.clock.delta_ns(t0, t1));
        }
    }

    fn finish(mut self, end: Ticks, usage: crate::cpu::Usage) -> JobResult {
        let runtime_ms = self.clock.delta_ns(self.measure_start, end) / 1_000_000;
        // A failure found by the monitor (rate_min not met).
        let failure = self
            .ctx
            .shared
            .failure
            .lock()
            .ok()
            .and_then(|mut f| f.take());
        if let Some((errno, text)) = failure {
            if self.error == 0 {
                eprintln!("ioscope: job '{}': {text}", self.ctx.opts.name);
                self.error = errno;
                self.error_text = Some(text);
            }
        }
        result_of(self.live, runtime_ms, usage, self.error, self.error_text)
    }

    /// A copy of the results so far, for an interim report.
    fn publish_snapshot(&mut self, now: Ticks) {
        let runtime_ms = self.clock.delta_ns(self.measure_start, now) / 1_000_000;
        let usage = crate::cpu::thread_usage().since(&self.usage_start);
        let live = Live {
            dirs: self.live.dirs.clone(),
            sync: self.live.sync.clone(),
            ..self.live
        };
        let r = result_of(live, runtime_ms, usage, self.error, self.error_text.clone());
        if let Ok(mut slot) = self.ctx.shared.snapshot.lock() {
            *slot = Some(r);
        }
    }
}

fn result_of(
    mut live: Live,
    runtime_ms: u64,
    usage: crate::cpu::Usage,
    error: i32,
    error_text: Option<String>,
) -> JobResult {
    for d in &mut live.dirs {
        d.runtime_ms = runtime_ms;
    }
    JobResult {
        error,
        error_text,
        total_err: live.total_err,
        first_error: live.first_error,
        runtime_ms,
        dirs: live.dirs,
        sync: live.sync,
        cpu: usage.into(),
        io_depth: live.io_depth,
        submit: live.submit,
        complete: live.complete,
        ..Default::default()
    }
}

fn strerror(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.find(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
