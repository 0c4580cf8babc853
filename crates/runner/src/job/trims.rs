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
