//! io_uring's own loop for a job with nothing to do between I/Os (`ioscope peak`;
//! see [`crate::Burst`]), in t/io_uring's shape: batches of SQEs written straight into
//! the submission ring, one io_uring_enter that both submits the batch that fills the
//! queue and waits for completions, every completion taken from the ring in one pass,
//! and the ring's own descriptor registered (IORING_REGISTER_RING_FDS) so that the
//! kernel does not look it up on every call.

use std::io;
use std::os::fd::AsRawFd;

use io_uring::squeue;

use super::ringfd::RingFd;
use super::{shared, UringEngine, IORING_ENTER_GETEVENTS};
use crate::{ops, Burst, Completion, Ddir, IoUnit};

/// The loop's queue: units written to the submission ring and not yet submitted (the
/// first `queued` of `slots`, in order), and how many are in the kernel.
struct Flight {
    /// NOP mode: each unit's SQE, written once. Copied into the ring as a whole, it
    /// saves building one field by field per I/O, which the CPU then has to read back
    /// in wider loads than it wrote (a store-forwarding stall on every I/O).
    nops: Vec<squeue::Entry>,
    slots: Box<[u32]>,
    queued: u32,
    inflight: u32,
    depth: u32,
}

impl Flight {
    fn busy(&self) -> u32 {
        self.inflight + self.queued
    }
}

impl UringEngine {
    /// Whether this ring can run [`Self::burst_loop`]: not under SQPOLL (the kernel's
    /// thread submits), and only from a clean start.
    pub(super) fn burst_ready(&self) -> bool {
        !self.sqpoll && self.pending == 0 && self.inflight == 0
    }

    /// Runs `b`'s I/O until it has no more to issue or asks to stop, then reaps what
    /// is in flight.
    pub(super) fn burst_loop<B: Burst>(&mut self, b: &mut B) -> io::Result<()> {
        let sq = self.ring.params().sq_entries();
        let depth = self.depth.min(sq).min(self.iovecs.len() as u32).max(1);
        let (batch, complete) = b.batches();
        let (batch, complete) = (batch.clamp(1, depth), complete.clamp(1, depth));
        let fd = RingFd::register(self.ring.as_raw_fd());
        // Allocated before the first I/O, never grown.
        let nops = match self.nop_len {
            Some(_) => (0..depth)
                .map(|i| self.nop_sqe.clone().user_data(u64::from(i)))
                .collect(),
            None => Vec::new(),
        };
        let mut f = Flight {
            nops,
            slots: vec![0; depth as usize].into_boxed_slice(),
            queued: 0,
            inflight: 0,
            depth,
        };
        let mut issuing = true;
        // The units set up next start when the last reap ended.
        let mut now = b.stamp();
        loop {
            if issuing {
                issuing = self.burst_fill(b, &fd, &mut f, batch, now)?;
            }
            if f.busy() == 0 {
                return Ok(());
            }
            // The batch that fills the queue goes in with the wait: one call.
            let t_issue = b.stamp();
            let want = complete.min(f.busy());
            let to_submit = f.queued;
            let consumed =
                shared::enter_retrying(|| fd.enter(to_submit, want, IORING_ENTER_GETEVENTS))?;
            Self::burst_issued(b, &mut f, consumed.unwrap_or(0), t_issue);
            let t = b.stamp();
            let n = self.burst_reap(b, t);
            f.inflight = f.inflight.saturating_sub(n);
            if !b.reaped(n, t) {
                issuing = false;
            }
            now = t;
        }
    }

    /// Fills the queue up to its depth, a batch at a time, submitting every full batch
    /// except the one that fills it (that one goes in with the wait). False when `b`
    /// has no more.
    fn burst_fill<B: Burst>(
        &mut self,
        b: &mut B,
        fd: &RingFd,
        f: &mut Flight,
        batch: u32,
        mut now: u64,
    ) -> io::Result<bool> {
        while f.busy() < f.depth {
            let room = (f.depth - f.busy()).min(batch.saturating_sub(f.queued).max(1));
            let at = f.queued as usize;
            let Some(out) = f.slots.get_mut(at..at + room as usize) else {
                return Ok(false);
            };
            let got = b.next_batch(now, out).min(room as usize);
            match f.nops.is_empty() || !self.force_async.cadence_off() {
                true => self.burst_write(b, f, at, got, now),
                false => self.burst_write_nops(b, f, at, got, now),
            }
            if got < room as usize {
                return Ok(false);
            }
            if f.queued >= batch && f.busy() < f.depth {
                let n = shared::enter_retrying(|| fd.enter(f.queued, 0, 0))?;
                // As in the general loop, the submission call counts into slat.
                now = b.stamp();
                Self::burst_issued(b, f, n.unwrap_or(0), now);
            }
        }
        Ok(true)
    }

    /// Writes the SQEs of the `got` units `b` placed at `f.slots[at..]` into the
    /// ring (building each needs the engine, so each push takes its own view). A unit
    /// this loop cannot issue completes at once with its error and leaves the queue.
    #[inline(always)]
    fn burst_write<B: Burst>(
        &mut self,
        b: &mut B,
        f: &mut Flight,
        at: usize,
        got: usize,
        now: u64,
    ) {
        let mut kept = at;
        for i in at..at + got {
            let idx = f.slots.get(i).copied().unwrap_or(u32::MAX);
            let entry = match b.unit(idx) {
                Some(unit) => self.burst_entry(idx, unit),
                None => Err(-(libc::EINVAL as i64)),
            };
            // SAFETY: the SQE is a NOP (no memory) or points at the unit's buffer
            // (checked to hold `len` bytes) or at this unit's iovec; both stay
            // untouched until its completion is reaped. The depth is at most the
            // ring's size, so the push cannot find it full; if it did, the unit fails.
            let res = entry.and_then(|e| {
                unsafe { self.ring.submission().push(&e) }.map_err(|_| -(libc::EBUSY as i64))
            });
            match res {
                Ok(()) => {
                    f.slots[kept] = idx;
                    kept += 1;
                }
                Err(result) => b.completed(Completion { unit: idx, result }, now),
            }
        }
        f.queued = kept as u32;
    }

    /// [`Self::burst_write`] for NOPs: each unit's SQE copied from its template, through
    /// one view of the ring (its tail published once, when the view is dropped).
    #[inline(always)]
    fn burst_write_nops<B: Burst>(
        &mut self,
        b: &mut B,
        f: &mut Flight,
        at: usize,
        got: usize,
        now: u64,
    ) {
        let UringEngine {
            ring,
            nop_len,
            force_async,
            ..
        } = self;
        let (Some(lens), Some(units)) = (nop_len.as_deref_mut(), f.slots.get(at..at + got)) else {
            return;
        };
        let mut sq = ring.submission();
        let mut kept = 0;
        for &idx in units {
            let (Some(sqe), Some(len), Some(unit)) = (
                f.nops.get(idx as usize),
                lens.get_mut(idx as usize),
                b.unit(idx),
            ) else {
                break;
            };
            *len = unit.len;
            // SAFETY: a NOP points at no memory.
            let pushed = match force_async.never(unit) {
                true => unsafe { sq.push(sqe) },
                false => unsafe { sq.push(&sqe.clone().flags(force_async.flags(unit))) },
            };
            if pushed.is_err() {
                break;
            }
            kept += 1;
        }
        drop(sq);
        f.queued = (at + kept) as u32;
        // Not pushed (cannot happen: every unit has its template, and the depth is at
        // most the ring's size): failed at once.
        for &idx in f.slots.get(at + kept..at + got).unwrap_or(&[]) {
            let result = -(libc::EBUSY as i64);
            b.completed(Completion { unit: idx, result }, now);
        }
    }

    /// The kernel took the first `n` queued units at `t`.
    #[inline(always)]
    fn burst_issued<B: Burst>(b: &mut B, f: &mut Flight, n: usize, t: u64) {
        let n = n.min(f.queued as usize);
        if n == 0 {
            return;
        }
        b.submitted(&f.slots[..n], t);
        if n < f.queued as usize {
            f.slots.copy_within(n..f.queued as usize, 0);
        }
        f.queued -= n as u32;
        f.inflight += n as u32;
    }

    /// Every completion in the ring, handed to `b` with the time `t`.
    #[inline(always)]
    fn burst_reap<B: Burst>(&mut self, b: &mut B, t: u64) -> u32 {
        let mut n = 0;
        for cqe in self.ring.completion() {
            let unit = cqe.user_data() as u32;
            let mut result = cqe.result() as i64;
            if let (Some(lens), 0) = (&self.nop_len, result) {
                result = lens.get(unit as usize).copied().unwrap_or(0) as i64;
            }
            b.completed(Completion { unit, result }, t);
            n += 1;
        }
        n
    }

    /// The SQE for unit `idx`: a NOP, or its read or write. Err: the unit's result
    /// (a unit this loop cannot issue).
    #[inline(always)]
    fn burst_entry(&mut self, idx: u32, unit: &IoUnit) -> Result<squeue::Entry, i64> {
        if idx as usize >= self.iovecs.len() {
            return Err(-(libc::EINVAL as i64));
        }
        let entry = match (&mut self.nop_len, unit.ddir) {
            (Some(lens), _) => {
                lens[idx as usize] = unit.len;
                self.nop_sqe.clone()
            }
            (None, Ddir::Read | Ddir::Write) => {
                ops::check_rw(unit)?;
                let fd = ops::file_of(&self.files, unit)
                    .ok_or(-(libc::EBADF as i64))?
                    .fd;
                self.rw_entry(idx, unit, fd)
            }
            (None, _) => return Err(-(libc::EINVAL as i64)),
        };
        Ok(entry
            .user_data(idx as u64)
            .flags(self.force_async.flags(unit)))
    }
}
