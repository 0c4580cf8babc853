//! The job loop's state, compiled once for every engine, and the per-I/O steps that
//! do not call the engine: limits, pacing, preparing a unit, recording a completion.

use super::checkers::Checkers;
use super::cmdprio::CmdPrio;
use super::flow::Flow;
use super::inputs::JobRun;
use super::qdsearch::QdSearch;
use super::rate::{Pacer, Think};
use super::units::{Depths, Stamper, Units};
use super::verify::{Next, Verifier};
use crate::clock::{Clock, Ticks};
use crate::record::Recorder;
use crate::setup::buffers::Buffers;
use crate::setup::JobCtx;
use crate::sys::usage::{thread_usage, Usage};
use crate::workload::io::Io;
use crate::workload::Workload;
use ioscope_engine::{Completion, Ddir, UNIT_COMPARE, UNIT_HIPRI};
use ioscope_options::{JobOptions, LockMode};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

/// The first error that ends the job.
#[derive(Default)]
pub(super) struct Failure {
    pub errno: i32,
    pub text: Option<String>,
}

/// The state of the options that look at every I/O.
pub(super) struct Extras {
    /// unlink_each_loop: the loop whose files are in place.
    pub files_loop: u64,
    /// flow: this job's share in its flow group.
    pub flow: Option<Flow>,
    /// latency_target: the queue depth search, and whether the job is quiescing
    /// before its final window.
    pub qd: Option<QdSearch>,
    pub qd_quiesce: bool,
}

impl Extras {
    /// `units`: the queue depth the job starts from.
    pub fn new(o: &JobOptions, flow: Option<Flow>, units: u32) -> Extras {
        Extras {
            files_loop: 0,
            flow,
            qd: QdSearch::new(o, units),
            qd_quiesce: false,
        }
    }

    /// Whether the job has any of these options (the loop's one branch per I/O).
    pub fn wanted(o: &JobOptions) -> bool {
        o.thinktime > 0
            || o.serialize_overlap
            || (o.unlink_each_loop && o.loops > 1)
            || o.lockfile != LockMode::None
            || o.flow != 0
            || o.latency_target > 0
            || o.read_iolog.is_some()
            || o.write_iolog.is_some()
            || o.zonemode == ioscope_options::ZoneMode::Zbd
    }
}

/// When the job's measurement runs.
pub(super) struct Times {
    /// When the job's I/O began: the zero of read_iolog's and write_iolog's times.
    pub started: Ticks,
    pub ramp_end: Ticks,
    /// End of runtime (u64::MAX without one).
    pub deadline: Ticks,
    /// When the measurement (after ramp) began.
    pub measure_start: Ticks,
    /// CPU use of the thread when the measurement began.
    pub usage_start: Usage,
}

/// Everything the job loop keeps, except the engine.
pub(super) struct State<'a> {
    pub ctx: &'a mut JobCtx,
    pub wl: Workload,
    pub bufs: Buffers,
    pub cmdprio: Option<CmdPrio>,
    pub rec: Recorder,
    pub q: Units,
    pub lim: Depths,
    pub clock: &'static Clock,
    pub stamper: Stamper,
    pub pacer: Pacer,
    pub think: Think,
    pub times: Times,
    pub failure: Failure,
    /// Issue nothing more: a failure, a fatal verify error, latency_target's end.
    pub stop_issuing: bool,
    /// An I/O the pacer or a full queue turned away, issued next.
    pub held: Option<Io>,
    pub exhausted: bool,
    /// Completion time of the last synchronous I/O: the loop's next "now".
    pub now_hint: Option<Ticks>,
    pub submit_calls: u64,
    pub reap_calls: u64,
    /// zonemode=zbd: zones this job reset (trims, writes to full zones, the reset
    /// threshold).
    pub zone_resets: u64,
    /// zonemode=zbd: the errno of the reset a trim stands for, when it failed.
    /// recover_zbd_write_error: the failed writes (unit, offset, length) whose zones'
    /// write pointers are to be moved (`zones.rs`).
    pub recovering: Vec<(u32, u64, u32)>,
    pub zone_err: Option<i32>,
    /// zonemode=zbd with zones shared with other jobs: completed writes are counted
    /// off their zones.
    pub zones_shared: bool,
    /// zonemode=zbd: rounds in a row the job waited for a zone another job holds.
    pub zone_waits: u32,
    /// The job verifies or shares zones: its next I/O and its completions take the
    /// general path (one check on the common one).
    general: bool,
    pub hipri_pct: u32,
    /// verify_mode=compare: verify reads are NVMe Compare commands.
    pub compare: bool,
    pub verify: Option<Verifier>,
    /// verify_async: the checker threads.
    pub checkers: Option<Checkers>,
    /// The verifier waits for the I/O in flight (a verify phase follows the writes).
    pub draining: bool,
    /// The next I/O waits for those in flight (serialize_overlap, a new loop's
    /// files, latency_target's final window, flow_sleep).
    pub overlap_wait: bool,
    /// Some option looks at every I/O: see [`Extras`].
    pub extras: bool,
    pub x: Extras,
    /// Metadata engines: bytes left in each file's current pass (0: the next I/O to
    /// the file begins a pass).
    pub passes: Vec<u64>,
}

impl<'a> State<'a> {
    /// `sync`: the engine is synchronous; `file_ops`: it is a metadata engine.
    pub fn new(mut run: JobRun<'a>, sync: bool, file_ops: bool) -> State<'a> {
        let clock = run.ctx.clock;
        let mut rec = recorder(&mut run, sync);
        let o = &run.ctx.opts;
        // A synchronous engine has one I/O in flight whatever iodepth says (as fio).
        let units = if sync { 1 } else { o.iodepth.max(1) };
        let mut lim = Depths::new(o, units);
        let x = Extras::new(o, run.flow.take(), units);
        if let Some(q) = &x.qd {
            lim.set_depth(q.depth());
        }
        let start = clock.now();
        rec.start_logs(start);
        if run.ctx.act {
            rec.count_act(o.runtime / 1_000_000, start);
        }
        let timed = needs_times(o, &rec);
        let times = times(o, clock, start);
        let mut s = State {
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
            times,
            extras: Extras::wanted(o),
            x,
            passes: if file_ops {
                vec![0; run.ctx.files.len()]
            } else {
                Vec::new()
            },
            failure: Failure::default(),
            stop_issuing: false,
            held: None,
            exhausted: false,
            now_hint: None,
            submit_calls: 0,
            zone_resets: 0,
            zone_err: None,
            recovering: Vec::new(),
            zones_shared: false,
            zone_waits: 0,
            general: false,
            reap_calls: 0,
            hipri_pct: if o.hipri { o.hipri_percentage } else { 0 },
            compare: o.verify_mode == ioscope_options::CmdVerifyMode::Compare,
            checkers: Checkers::for_job(&run),
            verify: run.verify,
            draining: false,
            overlap_wait: false,
            wl: run.workload,
            bufs: run.buffers,
            cmdprio: run.cmdprio,
            clock,
            ctx: run.ctx,
        };
        if s.rec.in_ramp() {
            s.wl.begin_ramp();
        }
        s.zones_shared = s.wl.zones_shared();
        s.general = s.zones_shared || s.verify.is_some();
        s
    }

    /// Once per round: the end of ramp_time, interim snapshots, and the limits that
    /// end the job (runtime, a stop request). False when the job must end.
    #[inline(always)]
    pub fn within_limits(&mut self, now: Ticks) -> bool {
        if self.rec.in_ramp() && now >= self.times.ramp_end && self.ramp_size_done() {
            self.rec.end_ramp(now);
            self.wl.end_ramp(&self.ctx.opts);
            self.times.measure_start = now;
            self.times.usage_start = thread_usage();
            // The runtime is measured from the ramp's end: when the ramp's bytes are done
            // (ramp_size), or when a round first sees ramp_time over — late when an I/O
            // outlasts it (a stalled device, a starved SQPOLL thread), and the runtime is
            // still measured in full.
            let o = &self.ctx.opts;
            if o.runtime > 0 {
                self.times.deadline = now + self.clock.ticks(Duration::from_micros(o.runtime));
            }
        }
        if self.ctx.shared.snapshot_request.load(Relaxed) != 0 {
            self.publish_snapshot(now);
        }
        !(now >= self.times.deadline
            || self.ctx.stop_all.load(Relaxed)
            || self.ctx.shared.stop.load(Relaxed))
    }

    /// Nothing in flight and nothing to issue yet: wait for the pacer or think time.
    pub fn idle_wait(&mut self) {
        let until = self.pacer.next_due.min(self.times.deadline);
        if until != u64::MAX {
            self.clock.sleep_until(until, self.ctx.stop_all);
        }
        self.pacer.waiting = false;
    }

    /// The workload's next I/O, or, with verify, a verify read (or a wait for the
    /// writes in flight before a verify phase).
    #[inline(always)]
    pub fn next_io(&mut self, now: Ticks) -> Next {
        if !self.general {
            return match self.wl.next_io() {
                Some(io) => Next::Io(io),
                None => Next::Done,
            };
        }
        self.next_io_general(now)
    }

    /// [`Self::next_io`] of a job that verifies or shares its zones with other jobs.
    /// Sharing zones, a paced job waits for its schedule before it places its I/O (as
    /// fio does: no zone waits for a write placed and held back), and one whose zone
    /// another job holds waits (`Next::Wait`, with the workload's `zone_blocked`).
    #[inline(never)]
    fn next_io_general(&mut self, now: Ticks) -> Next {
        if self.zones_shared && self.zone_pace_wait(now) {
            return Next::Wait;
        }
        let Some(v) = self.verify.as_mut() else {
            return match self.wl.next_io() {
                Some(io) => {
                    self.zone_waits = 0;
                    Next::Io(io)
                }
                None if self.wl.zone_blocked() => Next::Wait,
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

    /// A completion of a job that verifies or shares its zones: a write no longer in
    /// flight in its zone; a block to check.
    #[inline(never)]
    fn completed_general(&mut self, c: Completion) {
        let u = &self.q.units[c.unit as usize];
        if self.zones_shared && u.ddir == Ddir::Write {
            self.wl.zone_write_done(u.offset);
        }
        self.verified(c);
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

    /// May `io` go now? In a mixed job whose direction must wait while the other
    /// data direction may go, the other goes instead (fio's rate_ddir), so each
    /// direction keeps its own rate. None: hold the I/O until the pacer allows it.
    /// `idx`: the unit the I/O will take, which keeps when it was due (schedlat).
    #[inline(always)]
    pub fn pace(&mut self, io: Io, now: Ticks, idx: u32) -> Option<Io> {
        if !self.pacer.paced() {
            return Some(io);
        }
        self.pace_paced(io, now, idx)
    }

    /// A paced job's I/O: admitted with the time it was due, or held.
    #[inline(never)]
    fn pace_paced(&mut self, io: Io, now: Ticks, idx: u32) -> Option<Io> {
        let io = self.pace_any(io, now)?;
        let due = self.pacer.take_sched(now);
        self.rec.schedule(idx, due);
        Some(io)
    }

    fn pace_any(&mut self, mut io: Io, now: Ticks) -> Option<Io> {
        if self.pacer.admit(io.ddir, io.len, now) {
            return Some(io);
        }
        // Only a real mix swaps: rwmixread=100 (or 0) never issues the other direction.
        let o = &self.ctx.opts;
        let mixed = o.rw.mode.reads() && o.rw.mode.writes() && (1..100).contains(&o.rwmixread);
        // A zoned job's I/O was placed for its direction: it keeps it.
        if mixed && !io.verify && !self.wl.is_zoned() {
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

    /// zonemode=zbd with zones shared with other jobs: a paced job waits for its
    /// schedule before it draws (and places) its next I/O, as fio does, so that no
    /// zone waits for a write it placed and holds back.
    #[cold]
    fn zone_pace_wait(&mut self, now: Ticks) -> bool {
        match self.pacer.earliest_due(self.ctx.dirs) {
            Some(due) if now < due => {
                self.pacer.next_due = due;
                self.pacer.waiting = true;
                true
            }
            _ => false,
        }
    }

    /// Fill unit `idx` for `io`: priority, hipri, the data of a write (or the
    /// verifier's), and the start time.
    #[inline(always)]
    pub fn prepare(&mut self, idx: u32, io: Io, now: Ticks) {
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
            (Some(v), Ddir::Read) if self.compare && io.verify => {
                v.bind(idx as usize, &io);
                let buf = self.bufs.slot_mut(idx as usize, io.len as usize);
                v.spec().fill_expected(buf, io.offset);
                flags |= UNIT_COMPARE;
            }
            (Some(v), _) => v.bind(idx as usize, &io),
            (None, Ddir::Write) => {
                self.bufs
                    .prepare_write(idx as usize, io.len as usize, io.offset ^ now)
            }
            (None, Ddir::Trim) => self.place_ranges(idx),
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

    /// num_range: the ranges of the trim in hand into unit `idx`'s buffer, as
    /// (offset, length) pairs of native u64 (its length is already their total).
    #[cold]
    #[inline(never)]
    fn place_ranges(&mut self, idx: u32) {
        let Some(list) = self.wl.take_ranges() else {
            return;
        };
        let n = list.len();
        let buf = self.bufs.slot_mut(idx as usize, 16 * n);
        for (pair, (off, len)) in buf.chunks_exact_mut(16).zip(list.iter()) {
            pair[..8].copy_from_slice(&off.to_ne_bytes());
            pair[8..].copy_from_slice(&len.to_ne_bytes());
        }
        list.clear();
        if let Some(u) = self.q.units.get_mut(idx as usize) {
            u.ranges = n as u16;
        }
    }

    /// The first `n` pending units were issued at `t`.
    #[inline(always)]
    pub fn mark_issued(&mut self, n: usize, t: Ticks) {
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

    /// ramp_size: the job has done that many bytes (true without one).
    fn ramp_size_done(&self) -> bool {
        let want = self.ctx.opts.ramp_size;
        want == 0 || self.rec.bytes_done() >= want
    }

    /// One I/O completed: free its unit and record it.
    #[inline(always)]
    pub fn complete(&mut self, c: Completion, t: Ticks) {
        self.think.completed();
        let u = &self.q.units[c.unit as usize];
        if c.result < 0 {
            if self.zones_shared && u.ddir == Ddir::Write {
                self.wl.zone_write_done(u.offset);
            }
            self.q.free.push(c.unit);
            let (ddir, offset, len) = (u.ddir, u.offset, u.len);
            if let Some(v) = self.verify.as_mut() {
                v.forget(c.unit as usize);
            }
            self.io_error(c.unit, ddir, offset, len, (-c.result) as i32);
            return;
        }
        if let Err(lat) = self.rec.completed(c.unit, u, c.result as u64, t) {
            let max = self.ctx.opts.max_latency * 1000;
            self.fail(
                libc::ETIMEDOUT,
                &format!("latency {lat} ns exceeds max_latency {max} ns"),
            );
        }
        match self.general {
            true => self.completed_general(c),
            false => self.q.free.push(c.unit),
        }
    }

    /// Whether the round must submit what is queued and reap now rather than queue
    /// more: the queue is full, the workload is done, or something waits for
    /// completions (pacing, think time, a verify phase, an I/O held back).
    #[inline(always)]
    pub fn must_reap(&self, full: bool, exhausted: bool) -> bool {
        full || exhausted
            || self.pacer.waiting
            || self.think.due()
            || self.draining
            || self.overlap_wait
    }
}

/// The job's recorder, with block_error_percentiles' blocks when the job has them; it
/// takes over the job's logs.
fn recorder(run: &mut JobRun, sync: bool) -> Recorder {
    let ctx = &mut *run.ctx;
    let slots = run
        .cmdprio
        .as_ref()
        .map(|c| c.slots.clone())
        .unwrap_or_default();
    let mut rec = Recorder::new(
        &ctx.opts,
        ctx.dirs,
        sync,
        &slots,
        ctx.logs.take(),
        ctx.shared.clone(),
        ctx.clock,
    );
    if let Some(b) = ctx.blocks {
        rec.count_blocks(b);
    }
    if crate::plan::info::places_writes(&ctx.opts) && !ctx.diskless {
        rec.count_placement();
    }
    if let Some(out) = &ctx.trace_io {
        let names = ctx
            .files
            .iter()
            .map(|f| f.path.display().to_string())
            .collect();
        rec.trace_io(crate::record::trace::IoTrace::new(out.clone(), names));
    }
    rec
}

/// Whether the loop needs the clock at every I/O (latency tracking, logs, pacing,
/// think time, replay times) or a coarse time is enough (runtime limits alone).
fn needs_times(o: &JobOptions, rec: &Recorder) -> bool {
    let paced = o.rate.0.iter().chain(o.rate_iops.0.iter()).any(|&r| r > 0);
    rec.needs_times()
        || o.max_latency > 0
        || o.thinktime > 0
        || paced
        || o.read_iolog.is_some()
        || o.write_iolog.is_some()
}

fn times(o: &JobOptions, clock: &Clock, start: Ticks) -> Times {
    let ramp = clock.ticks(Duration::from_micros(o.ramp_time));
    // With ramp_size the runtime starts when the ramp ends (within_limits).
    let deadline = if o.runtime > 0 && o.ramp_size == 0 {
        start + ramp + clock.ticks(Duration::from_micros(o.runtime))
    } else {
        u64::MAX
    };
    Times {
        started: start,
        ramp_end: start + ramp,
        deadline,
        measure_start: start,
        usage_start: Usage::default(),
    }
}
