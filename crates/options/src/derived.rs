//! Facts of a job read straight off its options, for the checks and the plan: the
//! smallest and largest block size per direction (bs, bsrange, bssplit).

use crate::table::JobOptions;

impl JobOptions {
    /// The smallest block size of direction `d` (0 read, 1 write, 2 trim).
    pub fn min_bs(&self, d: usize) -> u64 {
        let split = self
            .bssplit
            .as_ref()
            .and_then(|s| s.0[d].iter().map(|e| e.bs).min());
        let range = self.bsrange.as_ref().map(|r| r.0 .0[d].lo);
        split.or(range).unwrap_or(self.bs.0[d])
    }

    /// The largest block size of direction `d`.
    pub fn max_bs(&self, d: usize) -> u64 {
        let split = self
            .bssplit
            .as_ref()
            .and_then(|s| s.0[d].iter().map(|e| e.bs).max());
        let range = self.bsrange.as_ref().map(|r| r.0 .0[d].hi);
        split.or(range).unwrap_or(self.bs.0[d])
    }

    /// The smallest block size over all directions (fio's td_min_bs), used or not.
    pub fn min_bs_all(&self) -> u64 {
        (0..3).map(|d| self.min_bs(d)).min().unwrap_or(0)
    }
}
