//! io_uring's loop for NOPs (`ioscope peak --nop`; see [`crate::NopBurst`]), in
//! t/io_uring's shape: no unit per NOP; each SQE carries its submission batch's tag,
//! and a batch's setup and issue times are kept once; the ring's memory is read and
//! written directly ([`super::queues`]): every SQE slot holds the NOP from the start,
//! so a batch is handed over by moving the tail, and completions are checked in
//! place and go to the runner a run of equal tags and results at a time.
//! t/io_uring's rounds too: each call submits a batch, and what has completed is
//! reaped right after it; a call waits for completions only when the queue is full.

use std::io;
use std::os::fd::AsRawFd;

use io_uring::{cqueue, squeue};

use super::queues::Queues;
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

/// The ring's SQE slots, each holding the NOP (written once, when the loop starts),
/// and the tag (user_data) they carry: a batch is written by moving the tail alone
/// when every slot already carries its tag (nearly always: see [`Tags::free`]),
/// else by writing its slots' user_data.
struct Slots {
    /// The tag every slot carries, if one does.
    uniform: Option<usize>,
    /// The tag of the latest slots written, and how many in a row carry it.
    run: (usize, u32),
}

impl Slots {
    /// Fills every slot of `qs` with `nop`, untagged (no batch uses u64::MAX). The SQ
    /// must be empty, as it is when the loop starts (`burst_ready`: nothing pending,
    /// and no SQPOLL thread that could still be reading).
    fn fill(qs: &mut Queues, nop: &squeue::Entry) -> Slots {
        debug_assert_eq!(qs.sq_queued(), 0);
        let n = qs.sq_entries();
        for pos in 0..n {
            // SAFETY: the SQ is empty: the kernel reads no slot.
            *unsafe { qs.sqe(pos) } = nop.clone().user_data(u64::MAX);
        }
        Slots {
            uniform: Some(usize::MAX),
            run: (usize::MAX, n),
        }
    }

    /// Hands the kernel `k` NOPs tagged `tag`; false when the ring has no room.
    #[inline(always)]
    fn write(&mut self, qs: &mut Queues, k: u32, tag: usize) -> bool {
        if qs.sq_queued() + k > qs.sq_entries() {
            return false;
        }
        let tail = qs.sq_tail();
        if self.uniform != Some(tag) {
            for i in 0..k {
                // SAFETY: past the tail, within the room just checked: not published.
                unsafe { qs.sqe(tail.wrapping_add(i)) }.set_user_data(tag as u64);
            }
            let run = if self.run.0 == tag { self.run.1 + k } else { k };
            self.run = (tag, run);
            self.uniform = (run >= qs.sq_entries()).then_some(tag);
        }
        qs.publish(tail.wrapping_add(k));
        true
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

/// The ring as the NOP loop sees it: its queues mapped directly and the NOPs in its
/// SQE slots.
struct Ring {
    qs: Queues,
    slots: Slots,
}

impl UringEngine {
    /// Runs `b`'s NOPs through `qs` (this ring's queues, mapped while the SQ is empty
    /// and the CQ drained) until it has no more to issue or asks to stop, then reaps
    /// what is in flight.
    pub(super) fn nop_loop<N: NopBurst>(&mut self, mut qs: Queues, b: &mut N) -> io::Result<()> {
        let slots = Slots::fill(&mut qs, &self.nop_sqe);
        let mut r = Ring { qs, slots };
        let depth = self.depth.min(r.qs.sq_entries()).max(1);
        let (batch, complete) = b.batches();
        let (batch, complete) = (batch.clamp(1, depth), complete.clamp(1, depth));
        let fd = RingFd::register(self.ring.as_raw_fd());
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
                issuing = nop_prep(&mut r, b, &mut q, &mut tags, batch, now);
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
            let n = nop_reap(&mut r.qs, b, &mut tags, len, t);
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
}

/// Writes the next batch of `b`'s NOPs (as many as fit) into the ring, set up at
/// `now`. False when `b` has no more after them.
#[inline(always)]
fn nop_prep<N: NopBurst>(
    r: &mut Ring,
    b: &mut N,
    q: &mut Queue,
    tags: &mut Tags,
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
        match r.slots.write(&mut r.qs, got, tag) {
            true => q.queued = got,
            // Cannot happen (the depth is at most the ring's size): failed.
            false => tags.done(b, (tag, -i64::from(libc::EBUSY), got), now),
        }
    }
    got == room
}

/// Every completion in the ring, handed to `b` a run at a time with the time `t`:
/// how many. A NOP's result is 0; it stands for `len` bytes.
#[inline(always)]
fn nop_reap<N: NopBurst>(qs: &mut Queues, b: &mut N, tags: &mut Tags, len: u32, t: u64) -> u32 {
    let (head, tail) = qs.cq_ready();
    let [part, wrapped] = qs.cqes(head, tail);
    let n = (part.len() + wrapped.len()) as u32;
    let Some(first) = part.first() else {
        return 0;
    };
    // Nearly always one batch completed, all of it alike.
    let key = (first.user_data(), first.result());
    let alike = |c: &cqueue::Entry| (c.user_data(), c.result()) == key;
    if part.iter().all(alike) && wrapped.iter().all(alike) {
        qs.release(tail);
        tags.done(b, nop_run((key.0 as usize, key.1, n), len), t);
        return n;
    }
    // The run of equal tags and results in hand: (tag, result, count).
    let mut run = (usize::MAX, 0i32, 0u32);
    for cqe in part.iter().chain(wrapped) {
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
    qs.release(tail);
    tags.done(b, nop_run(run, len), t);
    n
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
    use super::{nop_reap, Queues, Slots, Tags};
    use crate::NopBurst;
    use io_uring::{opcode, IoUring};

    /// The runner's side, keeping what it is handed.
    #[derive(Default)]
    struct Kept {
        /// (n, start, issue, result, t) of every run completed.
        runs: Vec<(u32, u64, u64, i64, u64)>,
    }

    impl NopBurst for Kept {
        fn batches(&self) -> (u32, u32) {
            (8, 8)
        }
        fn stamp(&mut self) -> u64 {
            0
        }
        fn nop_len(&self) -> u32 {
            4096
        }
        fn take(&mut self, k: u32) -> u32 {
            k
        }
        fn submitted(&mut self, _n: u32, _t: u64) {}
        fn completed(&mut self, n: u32, start: u64, issue: u64, result: i64, t: u64) {
            self.runs.push((n, start, issue, result, t));
        }
        fn reaped(&mut self, _n: u32, _t: u64) -> bool {
            true
        }
    }

    /// Rings of 8 SQEs as the engine makes them: without the SQ index array
    /// (NO_SQARRAY, Linux 6.6) and with it (older kernels).
    fn rings() -> Vec<(&'static str, IoUring)> {
        let mut got = vec![(
            "with the SQ array",
            IoUring::new(8).expect("io_uring_setup"),
        )];
        match IoUring::builder().setup_no_sqarray().build(8) {
            Ok(r) => got.push(("NO_SQARRAY", r)),
            Err(e) if std::env::var_os("CI").is_some_and(|v| v == "true") => {
                panic!("IORING_SETUP_NO_SQARRAY refused ({e}): Linux 6.6 or later needed")
            }
            Err(e) => eprintln!("SKIP the NO_SQARRAY ring: {e} (Linux 6.6 or later)"),
        }
        got
    }

    #[test]
    fn completions_of_several_batches_go_a_run_per_batch_also_across_the_cq_end() {
        for (what, ring) in rings() {
            several_batches_a_run_each(what, &ring);
        }
    }

    fn several_batches_a_run_each(what: &str, ring: &IoUring) {
        // Two batches (3 NOPs tagged 1, then 2 tagged 2) submitted by one call, reaped
        // by one: two runs, each with its own batch's times, 0 standing for the
        // length. Four rounds of 5 through a CQ of 16: the fourth wraps its end.
        let mut qs = Queues::map(ring).expect("mapped");
        let mut s = Slots::fill(&mut qs, &opcode::Nop::new().build());
        let mut tags = Tags::new(16);
        for round in 0..4u64 {
            let base = 100 * round;
            tags.open(1, 3, base + 1);
            assert!(s.write(&mut qs, 3, 1));
            tags.open(2, 2, base + 2);
            assert!(s.write(&mut qs, 2, 2));
            tags.issued(base + 3, true);
            assert_eq!(ring.submit().expect("io_uring_enter"), 5);
            let mut kept = Kept::default();
            assert_eq!(nop_reap(&mut qs, &mut kept, &mut tags, 4096, base + 9), 5);
            assert_eq!(
                kept.runs,
                vec![
                    (3, base + 1, base + 3, 4096, base + 9),
                    (2, base + 2, base + 3, 4096, base + 9)
                ],
                "{what}, round {round}"
            );
            assert_eq!(
                (tags.left[1], tags.left[2]),
                (0, 0),
                "{what}, round {round}"
            );
            assert_eq!(nop_reap(&mut qs, &mut kept, &mut tags, 4096, base + 10), 0);
        }
    }

    /// Submits what `s` wrote and returns the user_data of every completion.
    fn submitted_tags(ring: &IoUring, qs: &mut Queues) -> Vec<u64> {
        ring.submit().expect("io_uring_enter");
        let (head, tail) = qs.cq_ready();
        let [a, b] = qs.cqes(head, tail);
        let got = a.iter().chain(b).map(|c| c.user_data()).collect();
        qs.release(tail);
        got
    }

    #[test]
    fn every_nop_of_a_batch_carries_its_tag() {
        // Batches of every size, tags repeating and not, through a ring of 8 slots, so
        // that slots wrap, go uniform (written no more) and are retagged: each batch's
        // NOPs all reach the kernel and come back carrying its own tag.
        for (what, ring) in rings() {
            each_batch_its_tag(what, &ring);
        }
    }

    fn each_batch_its_tag(what: &str, ring: &IoUring) {
        let mut qs = Queues::map(ring).expect("mapped");
        let mut s = Slots::fill(&mut qs, &opcode::Nop::new().build());
        let batches = [
            (8, 1),
            (8, 1),
            (8, 1),
            (4, 2),
            (2, 1),
            (8, 1),
            (3, 1),
            (8, 5),
            (1, 5),
            (8, 5),
            (5, 5),
            (7, 6),
        ];
        for (k, tag) in batches {
            assert!(s.write(&mut qs, k, tag), "room for {k}");
            assert_eq!(
                submitted_tags(ring, &mut qs),
                vec![tag as u64; k as usize],
                "{what}: batch of {k} tagged {tag}"
            );
        }
        assert_eq!(s.uniform, None, "slots of 5 and of 6");
        assert!(s.write(&mut qs, 8, 7));
        assert!(!s.write(&mut qs, 1, 7), "no room in a full ring");
        assert_eq!(submitted_tags(ring, &mut qs), vec![7; 8]);
    }
}
