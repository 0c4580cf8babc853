//! A job that does nothing between its I/Os, run in the engine's own loop when the
//! run allows it (`ioscope peak`) and the engine has one (io_uring): see
//! [`ioscope_engine::Burst`]. The engine fills, submits and reaps; this file supplies
//! the job's I/Os and records them exactly as the general loop does (the same
//! `prepare`, the same issue times, the same `complete`), so results, live data and
//! limits mean the same. Anything the engine's loop does not issue (a sync, a trim)
//! ends it, and the general loop carries on from there.

use super::state::State;
use super::units::set_io;
use crate::clock::Ticks;
use ioscope_engine::{Burst, Completion, Ddir, Engine, IoUnit};
use std::sync::atomic::Ordering::Relaxed;

/// Runs the job in `eng`'s own loop if the run asks for it and nothing in the job
/// needs the general loop's steps; the general loop then finishes (or goes on).
pub(super) fn run_in_engine<E: Engine>(s: &mut State<'_>, eng: &mut E) {
    if !fits(s) {
        return;
    }
    // A loop compiled for the plain workload (one file, random, fixed size), whose
    // I/Os stay in registers, and one for every other.
    let group = s.rec.groups();
    let done = match (s.wl.is_plain(), s.ctx.nop) {
        (true, true) => match super::nop_burst::run(s, eng, group) {
            Some(done) => Some(done),
            None => eng.burst(&mut Sink::<NOPS>::new(s, group)),
        },
        (true, false) => eng.burst(&mut Sink::<PLAIN>::new(s, group)),
        (false, _) => eng.burst(&mut Sink::<GENERAL>::new(s, group)),
    };
    if let Some(Err(e)) = done {
        s.fail(
            e.raw_os_error().unwrap_or(libc::EIO),
            &format!("submit: {e}"),
        );
    }
}

/// Whether the job does nothing between its I/Os: no pacing, think time, verify,
/// queue-depth search or per-I/O extras (logs of issue times, locks, replay ...).
fn fits(s: &State<'_>) -> bool {
    s.ctx.engine_loop
        && !s.extras
        && s.verify.is_none()
        && s.checkers.is_none()
        && !s.pacer.paced()
        && !s.think.active()
        && s.x.qd.is_none()
}

/// Where a [`Sink`] takes its I/Os from: the workload's general path, its plain path
/// (see [`is_plain`]), or the plain path without offsets (NOPs). Each is a loop of
/// its own, so that the common ones keep their I/O in registers.
///
/// [`is_plain`]: crate::workload::Workload::is_plain
const GENERAL: u8 = 0;
const PLAIN: u8 = 1;
const NOPS: u8 = 2;

/// The job's side of the engine's loop; SOURCE: where its I/Os come from.
struct Sink<'s, 'a, const SOURCE: u8> {
    s: &'s mut State<'a>,
    /// Completions are recorded a run at a time (see [`Run`]).
    group: bool,
    /// No priorities or hipri_percentage to choose per I/O: units are filled with
    /// [`State::prepare`]'s remaining steps alone.
    lean: bool,
    /// Submission latencies are recorded (a step per issued unit).
    slat: bool,
    run: Run,
}

/// Completions with the same times: every unit of a submission batch has the same
/// setup and issue times, and every completion of a reap the same completion time, so
/// their latencies are equal and recorded at once, exactly (t/io_uring times a batch
/// the same way).
#[derive(Default)]
struct Run {
    ddir: Ddir,
    start: Ticks,
    issue: Ticks,
    n: u32,
    bytes: u64,
}

impl<'s, 'a, const SOURCE: u8> Sink<'s, 'a, SOURCE> {
    fn new(s: &'s mut State<'a>, group: bool) -> Self {
        let lean = s.cmdprio.is_none() && s.hipri_pct == 0 && s.verify.is_none();
        let slat = s.rec.tracks_slat();
        if SOURCE == NOPS && lean {
            if let Some(io) = s.wl.nop_io() {
                for u in &mut s.q.units {
                    set_io(u, io);
                }
            }
        }
        Sink {
            s,
            group,
            lean,
            slat,
            run: Run::default(),
        }
    }

    /// Records the run so far, completed at `t`.
    #[inline]
    fn flush(&mut self, t: Ticks) {
        let r = std::mem::take(&mut self.run);
        if r.n > 0 {
            self.s
                .rec
                .completed_run(r.ddir, r.start, r.issue, r.n, r.bytes, t);
        }
    }

    /// Adds a whole, successful completion to the run (starting a new one when its
    /// times differ). False: it must be recorded on its own.
    #[inline(always)]
    fn grouped(&mut self, c: Completion, t: Ticks) -> bool {
        let Some(u) = self.s.q.units.get(c.unit as usize) else {
            return false;
        };
        if !self.group || c.result != i64::from(u.len) {
            return false;
        }
        let (ddir, start, issue, len) = (u.ddir, u.start, u.issue, u.len);
        let r = &self.run;
        if r.n == 0 || r.ddir != ddir || r.start != start || r.issue != issue {
            self.flush(t);
            self.run = Run {
                ddir,
                start,
                issue,
                n: 0,
                bytes: 0,
            };
        }
        self.run.n += 1;
        self.run.bytes += u64::from(len);
        self.s.q.free.push(c.unit);
        true
    }

    /// The job's next I/O in a free unit set up at `now`: its index.
    #[inline(always)]
    fn next_one(&mut self, now: Ticks) -> Option<u32> {
        let s = &mut *self.s;
        if s.stop_issuing {
            return None;
        }
        let idx = s.q.free.pop()?;
        let next = match SOURCE {
            NOPS => s.wl.next_nop_io(),
            PLAIN => s.wl.next_plain_io(),
            _ => s.wl.next_io(),
        };
        let Some(io) = next else {
            s.q.free.push(idx);
            s.exhausted = true;
            return None;
        };
        if !matches!(io.ddir, Ddir::Read | Ddir::Write) {
            // Left to the general loop, which issues it next.
            s.q.free.push(idx);
            s.held = Some(io);
            return None;
        }
        if !self.lean {
            s.prepare(idx, io, now);
            return Some(idx);
        }
        if io.ddir == Ddir::Write {
            s.bufs
                .prepare_write(idx as usize, io.len as usize, io.offset ^ now);
        }
        let u = s.q.units.get_mut(idx as usize)?;
        set_io(u, io);
        u.result = 0;
        u.start = now;
        Some(idx)
    }

    /// NOPs, a batch at a time: every NOP of a job is the same I/O (one direction, one
    /// size, no offset), so the workload counts the batch in one step and each unit,
    /// filled with that I/O when the loop began, takes only its setup time.
    #[inline(always)]
    fn next_nops(&mut self, now: Ticks, out: &mut [u32]) -> usize {
        let s = &mut *self.s;
        if s.stop_issuing {
            return 0;
        }
        let want = out.len().min(s.q.free.len());
        let got = s.wl.take_nops(want as u64) as usize;
        if got < want {
            s.exhausted = true;
        }
        let from = s.q.free.len() - got;
        for (slot, &idx) in out.iter_mut().zip(s.q.free[from..].iter().rev()) {
            *slot = idx;
            if let Some(u) = s.q.units.get_mut(idx as usize) {
                u.start = now;
                u.result = 0;
            }
        }
        s.q.free.truncate(from);
        got
    }
}

impl<const SOURCE: u8> Burst for Sink<'_, '_, SOURCE> {
    fn batches(&self) -> (u32, u32) {
        (self.s.lim.batch_submit, self.s.lim.complete_min)
    }

    #[inline(always)]
    fn stamp(&mut self) -> u64 {
        self.s.stamper.stamp()
    }

    #[inline(always)]
    fn next_batch(&mut self, now: Ticks, out: &mut [u32]) -> usize {
        if SOURCE == NOPS && self.lean {
            return self.next_nops(now, out);
        }
        let mut n = 0;
        for slot in out.iter_mut() {
            let Some(idx) = self.next_one(now) else {
                break;
            };
            *slot = idx;
            n += 1;
        }
        n
    }

    #[inline(always)]
    fn unit(&self, idx: u32) -> Option<&IoUnit> {
        self.s.q.units.get(idx as usize)
    }

    #[inline(always)]
    fn submitted(&mut self, units: &[u32], t: Ticks) {
        let s = &mut *self.s;
        for &idx in units {
            if let Some(u) = s.q.units.get_mut(idx as usize) {
                u.issue = t;
                if self.slat {
                    s.rec.issued(u);
                }
            }
        }
        s.q.inflight += units.len() as u32;
        s.rec.submitted(units.len() as u32, s.q.inflight);
        s.submit_calls += 1;
        s.ctx.shared.submit_calls.store(s.submit_calls, Relaxed);
    }

    #[inline(always)]
    fn completed(&mut self, c: Completion, t: Ticks) {
        self.s.q.inflight = self.s.q.inflight.saturating_sub(1);
        if !self.grouped(c, t) {
            self.s.complete(c, t);
        }
    }

    #[inline(always)]
    fn reaped(&mut self, n: u32, t: Ticks) -> bool {
        self.flush(t);
        let s = &mut *self.s;
        s.rec.reaped(n);
        s.reap_calls += 1;
        s.ctx.shared.reap_calls.store(s.reap_calls, Relaxed);
        s.within_limits(t)
    }
}
