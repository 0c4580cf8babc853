//! Options that look at every I/O: read_iolog's times, serialize_overlap, flow,
//! lockfile, latency_target, unlink_each_loop, write_iolog and think time. A job
//! without them pays one branch per I/O (`State::extras`); their work is out of line.

use super::qdsearch::Step;
use super::state::State;
use crate::clock::Ticks;
use crate::sys::usage::thread_usage;
use crate::workload::io::Io;
use ioscope_engine::Ddir;
use ioscope_options::LockMode;
use std::time::Duration;

impl State<'_> {
    /// Options that look at each I/O before it goes (read_iolog's times,
    /// serialize_overlap, …): whether it must wait. Out of line, behind one flag, so
    /// that a job without them pays a single branch.
    #[inline(never)]
    pub fn hold_back(&mut self, io: Io, now: Ticks) -> bool {
        if let Some(us) = self.wl.replay_due_us() {
            // read_iolog: not before its time (scaled by replay_time_scale).
            let scaled = us.saturating_mul(100) / u64::from(self.ctx.opts.replay_time_scale.max(1));
            let due = self.times.started + self.clock.ticks(Duration::from_micros(scaled));
            if now < due {
                self.pacer.next_due = due;
                self.pacer.waiting = true;
                return true;
            }
        }
        if self.x.qd_quiesce {
            return self.quiesce_for_final_window();
        }
        if self.ctx.opts.unlink_each_loop && self.wl.loop_of_last_io() > self.x.files_loop {
            return self.next_loop_files();
        }
        if io.ddir.is_data() && self.x.flow.as_ref().is_some_and(|f| f.ahead()) {
            return self.flow_hold();
        }
        // serialize_overlap: held until the overlapping I/O completes (the loop reaps
        // meanwhile).
        self.overlap_wait =
            self.ctx.opts.serialize_overlap && io.ddir.is_data() && self.overlaps_busy(&io);
        self.overlap_wait
    }

    /// thinktime is due and nothing is in flight: pause (rate_ignore_thinktime keeps
    /// the pacer from counting the pause); the time after it.
    pub fn think_pause(&mut self) -> Ticks {
        let paused = self.think.pause(self.clock, self.ctx.stop_all);
        if self.ctx.opts.rate_ignore_thinktime {
            self.pacer.skip(paused);
        }
        self.clock.now()
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
        self.x.files_loop = self.wl.loop_of_last_io();
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
        self.x.qd_quiesce = false;
        let now = self.clock.now();
        let since_start = self.clock.delta_ns(self.times.started, now);
        if let Some(q) = self.x.qd.as_mut() {
            q.restart_window(since_start);
        }
        let _ = self.rec.take_over_target();
        self.rec.end_ramp(now);
        self.times.measure_start = now;
        self.times.usage_start = thread_usage();
        false
    }

    /// latency_target: a batch of completions ends at `t`; the search may change the
    /// depth, start the final window, end the job, or fail it.
    #[cold]
    pub fn qd_search(&mut self, n: u32, t: Ticks) {
        let Some(q) = self.x.qd.as_mut() else { return };
        let (over, last) = self.rec.take_over_target();
        let now_ns = self.clock.delta_ns(self.times.started, t);
        match q.completed(u64::from(n), over, now_ns) {
            Step::Go => {}
            Step::FinalRun => self.x.qd_quiesce = true,
            Step::Done => self.stop_issuing = true,
            Step::Fail => {
                let target = q.target_ns();
                let crate::record::SlowIo {
                    lat,
                    ddir,
                    offset,
                    len,
                    file,
                } = last.unwrap_or_default();
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
        if let Some(q) = &self.x.qd {
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
    pub fn lock_file(&self, io: &Io) -> bool {
        let Some(l) = self.ctx.files[io.file as usize].lock.as_ref() else {
            return false;
        };
        l.acquire(self.shared_lock(io));
        true
    }

    pub fn unlock_file(&self, io: &Io) {
        if let Some(l) = self.ctx.files[io.file as usize].lock.as_ref() {
            l.release(self.shared_lock(io));
        }
    }

    fn shared_lock(&self, io: &Io) -> bool {
        io.ddir == Ddir::Read && self.ctx.opts.lockfile == LockMode::ReadWrite
    }

    /// Options that count or record each issued I/O (think time, flow, write_iolog).
    #[inline(never)]
    pub fn issued_extras(&mut self, io: Io, now: Ticks) {
        self.think.issued(now);
        if let Some(f) = self.x.flow.as_mut() {
            f.issued();
        }
        self.record_iolog(&io, now);
    }

    /// write_iolog: the I/O as it is issued.
    #[inline]
    pub fn record_iolog(&mut self, io: &Io, now: Ticks) {
        if let Some(r) = self.wl.recorder.as_mut() {
            r.issued(self.clock.delta_ns(self.times.started, now) / 1000, io);
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
}
