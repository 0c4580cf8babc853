//! trim_percentage with verify: written blocks chosen to be discarded, then verified
//! as zeros, issued at once or in batches after trim_backlog writes. `E`: what a
//! written block is to the verifier.

use std::collections::VecDeque;

/// trim_percentage: written blocks chosen to be discarded, then verified as zeros.
pub(super) struct Trims<E> {
    pub(super) pct: u32,
    pub(super) rng: u64,
    pub(super) backlog: u64,
    pub(super) batch: u64,
    pub(super) since: u64,
    /// Chosen, not yet issued.
    pub(super) waiting: VecDeque<E>,
    /// Write numbers whose trim completed.
    pub(super) done: std::collections::HashSet<u64>,
    pub(super) verify_zero: bool,
    /// Trims issued in the current batch.
    pub(super) issued: u64,
}

impl<E> Trims<E> {
    /// The job's trim_percentage, trim_backlog and trim_backlog_batch.
    pub(super) fn new(o: &ioscope_options::JobOptions, seed: u64) -> Self {
        Trims {
            pct: o.trim_percentage,
            rng: seed ^ crate::workload::rng::SALT_TRIM,
            backlog: o.trim_backlog,
            batch: if o.trim_backlog_batch > 0 {
                o.trim_backlog_batch
            } else {
                o.trim_backlog.max(1)
            },
            since: 0,
            waiting: VecDeque::new(),
            done: std::collections::HashSet::new(),
            verify_zero: o.trim_verify_zero,
            issued: 0,
        }
    }

    /// The next trim: at once without trim_backlog; otherwise a batch of
    /// trim_backlog_batch after every trim_backlog writes.
    pub(super) fn take(&mut self) -> Option<E> {
        if self.waiting.is_empty() || (self.backlog > 0 && self.since < self.backlog) {
            return None;
        }
        let e = self.waiting.pop_front();
        self.issued += 1;
        if self.backlog > 0 && (self.issued >= self.batch || self.waiting.is_empty()) {
            self.since = 0;
            self.issued = 0;
        }
        e
    }
}
