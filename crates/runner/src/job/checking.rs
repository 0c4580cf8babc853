//! Handing blocks to the verifier: writes enter its history; blocks read back are
//! checked in the job thread, or on checker threads with verify_async (the unit is
//! freed when its check returns).

use super::state::State;
use super::verify::{check_block, Check, Verifier};
use ioscope_engine::Completion;
use ioscope_verify::Failure as BadBlock;

impl State<'_> {
    /// A completed unit through the verifier.
    pub fn verified(&mut self, c: Completion) {
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

    /// verify_async, at the start of a round: collect the checks that came back; when
    /// every unit waits on a check, wait for one.
    pub fn wait_for_checks(&mut self) {
        let stuck = self.q.free.is_empty() && self.q.busy() == 0;
        self.collect_checks(stuck && self.checks_pending() > 0);
    }

    /// The job ends: wait for every check still out.
    pub fn drain_checks(&mut self) {
        while self.checks_pending() > 0 {
            self.collect_checks(true);
        }
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
            for m in super::verify_dump::dump(&path, &f, buf, expected.as_deref()) {
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
}
