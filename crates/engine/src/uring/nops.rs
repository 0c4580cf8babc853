//! io_uring's loop for NOPs (`ioscope peak --nop`; see [`crate::NopBurst`]), in
//! t/io_uring's shape: no unit per NOP; each SQE carries its submission batch's tag,
//! and a batch's setup and issue times are kept once; SQEs are copied into the ring
//! a batch at a time from ready-made ones; completions go to the runner a run of
//! equal tags and results at a time. t/io_uring's rounds too: each call submits a
//! batch, and what has completed is reaped right after it; a call waits for
//! completions only when the queue is full.

use std::io;
use std::os::fd::AsRawFd;

use io_uring::squeue;

use super::ringfd::RingFd;
use super::{shared, UringEngine, IORING_ENTER_GETEVENTS};
use crate::NopBurst;

/// A batch's issue time before its submission call.
const UNISSUED: u64 = u64::MAX;

/// The batches written to the ring and not yet completed, by tag: their times and
/// how many of their NOPs are still to complete. At least twice the depth: at most
/// `depth` batches are in flight (each has a NOP), so a free tag is always found; a
/// power of two, so that the next tag is a mask away (no division per batch).
struct Tags {
    start: Box<[u64]>,
    issue: Box<[u64]>,
    left: Box<[u32]>,
    /// The latest batch's tag.
    cur: usize,
    /// The first tag with NOPs written and not yet submitted (None: none).
    queued_from: Option<usize>,
}

impl Tags {
    fn new(n: usize) -> Tags {
        let n = n.max(2).next_power_of_two();
        Tags {
            start: vec![0; n].into_boxed_slice(),
            issue: vec![UNISSUED; n].into_boxed_slice(),
            left: vec![0; n].into_boxed_slice(),
            cur: n - 1,
            queued_from: None,
        }
    }

    /// A tag no NOP in flight carries: the latest batch's again when it has completed
    /// (NOPs complete within their submission call, so nearly always), which leaves the
    /// SQEs' user_data as it was.
    #[inline(always)]
    fn free(&self) -> Option<usize> {
        let mask = self.left.len() - 1;
        (0..=mask)
            .map(|i| (self.cur + i) & mask)
            .find(|&t| self.left[t] == 0)
    }

    /// Tag `t` now names `k` NOPs set up at `now`, written to the ring.
    #[inline(always)]
    fn open(&mut self, t: usize, k: u32, now: u64) {
        self.start[t] = now;
        self.issue[t] = UNISSUED;
        self.left[t] = k;
        self.cur = t;
        self.queued_from.get_or_insert(t);
    }

    /// A submission call at `t` took NOPs from the ring: all that were written
    /// (`all`), or some. Every batch with NOPs written counts as issued at the first
    /// call that took any of them: the kernel does not say which it took, and it takes
    /// all but when it is short of memory.
    #[inline(always)]
    fn issued(&mut self, t: u64, all: bool) {
        let Some(mut i) = self.queued_from else {
            return;
        };
        loop {
            if self.issue[i] == UNISSUED {
                self.issue[i] = t;
            }
            if i == self.cur {
                break;
            }
            i = (i + 1) & (self.left.len() - 1);
        }
        if all {
            self.queued_from = None;
        }
    }

    /// `n` NOPs of batch `tag` completed at `t` with `result`: handed to `b`.
    #[inline(always)]
    fn done<N: NopBurst>(&mut self, b: &mut N, (tag, result, n): (usize, i64, u32), t: u64) {
        let (start, issue) = match self.left.get_mut(tag) {
            Some(left) => {
                *left = left.saturating_sub(n);
                (self.start[tag], self.issue[tag])
            }
            None => (t, t),
        };
        let issue = if issue == UNISSUED { start } else { issue };
        b.completed(n, start, issue, result, t);
    }
}

/// The NOP SQEs copied into the ring, and which of them carry which tag: entries
/// `..len` carry `tag` (its user_data), so that a batch with the same tag as the one
/// before (nearly every batch: see [`Tags::free`]) is copied as it is.
struct Sqes {
    e: Vec<squeue::Entry>,
    tag: usize,
    len: usize,
}

impl Sqes {
    /// The first `k` entries, each tagged `tag`; None if there are fewer.
    #[inline(always)]
    fn tagged(&mut self, k: usize, tag: usize) -> Option<&[squeue::Entry]> {
        let batch = self.e.get_mut(..k)?;
        if self.tag != tag || self.len < k {
            for e in batch.iter_mut() {
                e.set_user_data(tag as u64);
            }
            (self.tag, self.len) = (tag, k);
        }
        Some(batch)
    }
}

/// NOPs written to the ring and not yet submitted, and NOPs in the kernel.
struct Queue {
    queued: u32,
    inflight: u32,
    depth: u32,
}

impl Queue {
    fn busy(&self) -> u32 {
        self.queued + self.inflight
    }

    /// Completions to wait for in the call that submits what is queued: none while
    /// the queue has room after it (NOPs complete within the call, and are reaped
    /// right after it, so the queue rarely fills), else a reaping batch.
    fn to_wait(&self, complete: u32) -> u32 {
        match self.queued > 0 && self.busy() < self.depth {
            true => 0,
            false => complete.min(self.busy()),
        }
    }
}

impl UringEngine {
    /// Runs `b`'s NOPs until it has no more to issue or asks to stop, then reaps what
    /// is in flight.
    pub(super) fn nop_loop<N: NopBurst>(&mut self, b: &mut N) -> io::Result<()> {
        let depth = self.depth.min(self.ring.params().sq_entries()).max(1);
        let (batch, complete) = b.batches();
        let (batch, complete) = (batch.clamp(1, depth), complete.clamp(1, depth));
        let fd = RingFd::register(self.ring.as_raw_fd());
        // Allocated before the first NOP, never grown.
        let mut sqes = Sqes {
            e: vec![self.nop_sqe.clone(); batch as usize],
            tag: usize::MAX,
            len: 0,
        };
        let mut tags = Tags::new(2 * depth as usize);
        let len = b.nop_len();
        let mut q = Queue {
            queued: 0,
            inflight: 0,
            depth,
        };
        let mut issuing = true;
        // The NOPs written next are set up when the last reap ended.
        let mut now = b.stamp();
        loop {
            if issuing && q.queued == 0 && q.inflight < depth {
                issuing = self.nop_prep(b, &mut q, &mut tags, &mut sqes, batch, now);
            }
            if q.busy() == 0 {
                return Ok(());
            }
            let t_issue = b.stamp();
            let (to_submit, want) = (q.queued, q.to_wait(complete));
            let flags = if want > 0 { IORING_ENTER_GETEVENTS } else { 0 };
            let consumed = shared::enter_retrying(|| fd.enter(to_submit, want, flags))?;
            nop_issued(b, &mut q, &mut tags, consumed.unwrap_or(0), t_issue);
            let t = b.stamp();
            let n = self.nop_reap(b, &mut tags, len, t);
            q.inflight = q.inflight.saturating_sub(n);
            // A call the kernel refused (EAGAIN, EBUSY) counts as a reap of none, so
            // that the job's runtime and stops are still seen while it refuses.
            let refused = consumed.is_none();
            if (n > 0 || want > 0 || refused) && !b.reaped(n, t) {
                issuing = false;
            }
            now = t;
        }
    }

    /// Writes the next batch of `b`'s NOPs (as many as fit) into the ring, set up at
    /// `now`. False when `b` has no more after them.
    #[inline(always)]
    fn nop_prep<N: NopBurst>(
        &mut self,
        b: &mut N,
        q: &mut Queue,
        tags: &mut Tags,
        sqes: &mut Sqes,
        batch: u32,
        now: u64,
    ) -> bool {
        let room = (q.depth - q.inflight).min(batch);
        let Some(tag) = tags.free() else {
            return true;
        };
        let got = b.take(room).min(room);
        if got > 0 {
            tags.open(tag, got, now);
            match self.nop_write(sqes, got, tag) {
                true => q.queued = got,
                // Cannot happen (the depth is at most the ring's size): failed.
                false => tags.done(b, (tag, -i64::from(libc::EBUSY), got), now),
            }
        }
        got == room
    }

    /// Writes `k` NOPs tagged `tag` into the ring, copied from `sqes` through one view
    /// (its tail published once). False: the ring had no room.
    #[inline(always)]
    fn nop_write(&mut self, sqes: &mut Sqes, k: u32, tag: usize) -> bool {
        let Some(batch) = sqes.tagged(k as usize, tag) else {
            return false;
        };
        // SAFETY: a NOP points at no memory.
        unsafe { self.ring.submission().push_multiple(batch) }.is_ok()
    }

    /// Every completion in the ring, handed to `b` a run at a time with the time `t`:
    /// how many. A NOP's result is 0; it stands for `len` bytes.
    #[inline(always)]
    fn nop_reap<N: NopBurst>(&mut self, b: &mut N, tags: &mut Tags, len: u32, t: u64) -> u32 {
        let cq = self.ring.completion();
        let n = cq.len() as u32;
        // The run of equal tags and results in hand: (tag, result, count).
        let mut run = (0usize, 0i32, 0u32);
        for cqe in cq {
            let (tag, res) = (cqe.user_data() as usize, cqe.result());
            if tag == run.0 && res == run.1 {
                run.2 += 1;
                continue;
            }
            if run.2 > 0 {
                tags.done(b, nop_run(run, len), t);
            }
            run = (tag, res, 1);
        }
        if run.2 > 0 {
            tags.done(b, nop_run(run, len), t);
        }
        n
    }
}

/// A run of completions as the runner takes it: a NOP's result 0 stands for `len`.
#[inline(always)]
fn nop_run((tag, res, n): (usize, i32, u32), len: u32) -> (usize, i64, u32) {
    let result = match res {
        0 => i64::from(len),
        r => i64::from(r),
    };
    (tag, result, n)
}

/// The kernel took the first `n` queued NOPs at `t`.
#[inline(always)]
fn nop_issued<N: NopBurst>(b: &mut N, q: &mut Queue, tags: &mut Tags, n: usize, t: u64) {
    let n = (n as u32).min(q.queued);
    if n == 0 {
        return;
    }
    tags.issued(t, n == q.queued);
    b.submitted(n, t);
    q.queued -= n;
    q.inflight += n;
}

#[cfg(test)]
mod tests {
    use super::Sqes;
    use io_uring::opcode;

    fn tags_of(s: &mut Sqes, k: usize, tag: usize) -> Vec<u64> {
        let got = s.tagged(k, tag).expect("k within the batch");
        got.iter().map(|e| e.get_user_data()).collect()
    }

    #[test]
    fn every_nop_of_a_batch_carries_its_tag() {
        // Batches of every size, tags repeating and not, in an order where the entries
        // past a short batch keep an older tag: each batch's NOPs all carry its own.
        let mut s = Sqes {
            e: vec![opcode::Nop::new().build(); 8],
            tag: usize::MAX,
            len: 0,
        };
        for (k, tag) in [
            (8, 1),
            (8, 1),
            (4, 2),
            (2, 1),
            (8, 1),
            (3, 1),
            (8, 5),
            (1, 5),
            (8, 5),
        ] {
            assert_eq!(
                tags_of(&mut s, k, tag),
                vec![tag as u64; k],
                "batch of {k} tagged {tag}"
            );
        }
        assert!(s.tagged(9, 1).is_none(), "more than the batch holds");
    }
}
