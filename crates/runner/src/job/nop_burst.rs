//! NOPs (`ioscope peak --nop`) in the engine's NOP loop (see
//! [`ioscope_engine::NopBurst`]): every NOP of a job is the same I/O, so none takes a
//! unit; the workload counts them a batch at a time and the recorder records them a
//! run at a time ([`crate::record::Recorder::completed_run`]), exactly as the general
//! loop would one by one. A NOP that fails is recorded on its own, through a unit, as
//! the general loop records any failure.

use super::state::State;
use super::units::set_io;
use crate::clock::Ticks;
use crate::workload::io::Io;
use ioscope_engine::{Completion, Engine, NopBurst};
use std::sync::atomic::Ordering::Relaxed;

/// Runs the job's NOPs in `eng`'s NOP loop if nothing in the job looks at each one
/// (`group`: completions may be recorded a run at a time) and the engine has such a
/// loop: None otherwise, and nothing was done.
pub(super) fn run<E: Engine>(
    s: &mut State<'_>,
    eng: &mut E,
    group: bool,
) -> Option<std::io::Result<()>> {
    let lean = s.cmdprio.is_none() && s.hipri_pct == 0 && s.verify.is_none();
    if !(group && lean) || s.rec.tracks_slat() {
        return None;
    }
    let io = s.wl.nop_io()?;
    let done = eng.burst_nops(&mut NopSink { s, io });
    if let Some(Err(_)) = &done {
        // The NOPs the engine's loop left in flight went with it (none is a unit the
        // general loop could reap): the job fails with its error.
        s.q.inflight = 0;
    }
    done
}

/// The job's side of the engine's NOP loop.
struct NopSink<'s, 'a> {
    s: &'s mut State<'a>,
    /// The I/O every NOP of the job is.
    io: Io,
}

impl NopBurst for NopSink<'_, '_> {
    fn batches(&self) -> (u32, u32) {
        (self.s.lim.batch_submit, self.s.lim.complete_min)
    }

    #[inline(always)]
    fn stamp(&mut self) -> u64 {
        self.s.stamper.stamp()
    }

    fn nop_len(&self) -> u32 {
        self.io.len
    }

    #[inline(always)]
    fn take(&mut self, k: u32) -> u32 {
        let s = &mut *self.s;
        if s.stop_issuing {
            return 0;
        }
        let got = s.wl.take_nops(u64::from(k)) as u32;
        if got < k {
            s.exhausted = true;
        }
        got
    }

    #[inline(always)]
    fn submitted(&mut self, n: u32, _t: Ticks) {
        let s = &mut *self.s;
        s.q.inflight += n;
        s.rec.submitted(n, s.q.inflight);
        s.submit_calls += 1;
        s.ctx.shared.submit_calls.store(s.submit_calls, Relaxed);
    }

    #[inline(always)]
    fn completed(&mut self, n: u32, start: Ticks, issue: Ticks, result: i64, t: Ticks) {
        let s = &mut *self.s;
        s.q.inflight = s.q.inflight.saturating_sub(n);
        let (ddir, len) = (self.io.ddir, self.io.len);
        if result == i64::from(len) {
            let bytes = u64::from(n) * u64::from(len);
            s.rec.completed_run(ddir, start, issue, n, bytes, t);
            return;
        }
        for _ in 0..n {
            let Some(idx) = s.q.free.pop() else {
                return;
            };
            if let Some(u) = s.q.units.get_mut(idx as usize) {
                set_io(u, self.io);
                (u.start, u.issue, u.result) = (start, issue, 0);
            }
            s.complete(Completion { unit: idx, result }, t);
        }
    }

    #[inline(always)]
    fn reaped(&mut self, n: u32, t: Ticks) -> bool {
        let s = &mut *self.s;
        s.rec.reaped(n);
        s.reap_calls += 1;
        s.ctx.shared.reap_calls.store(s.reap_calls, Relaxed);
        s.within_limits(t)
    }
}
