//! `block_error_percentiles`: the job's file in trim-sized blocks, each with its state
//! and the number of trims it took; reported as percentiles of the trim counts over the
//! blocks that were used (for flash wear-out tests: how many trims until a block fails).

use serde::{Deserialize, Serialize};

/// At most this many blocks are tracked (fio's limit).
pub const MAX_BLOCKS: u64 = 8192;

/// A block's state, in the top 3 bits of its entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum BlockState {
    Unwritten = 0,
    Trimmed = 1,
    Written = 2,
    TrimFailure = 3,
    WriteFailure = 4,
}

/// The names of the states, in order, as fio prints them.
pub const STATE_NAMES: [&str; 5] = [
    "unwritten",
    "trimmed",
    "written",
    "trim failure",
    "write failure",
];

const COUNT_MASK: u32 = (1 << 29) - 1;

/// One entry per block: state << 29 | trims.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockStates {
    pub entries: Vec<u32>,
}

fn state(e: u32) -> u32 {
    e >> 29
}

fn failed(e: u32) -> bool {
    matches!(state(e), 3 | 4)
}

impl BlockStates {
    pub fn new(blocks: usize) -> BlockStates {
        BlockStates {
            entries: vec![0; blocks],
        }
    }

    /// A trim of block `i` succeeded (a failed block stays failed).
    pub fn trimmed(&mut self, i: usize) {
        if let Some(e) = self.entries.get_mut(i) {
            if !failed(*e) {
                let n = ((*e & COUNT_MASK) + 1).min(COUNT_MASK);
                *e = (BlockState::Trimmed as u32) << 29 | n;
            }
        }
    }

    /// A write (or trim) of block `i` failed: its trims so far are its lifetime.
    pub fn failed(&mut self, i: usize, write: bool) {
        if let Some(e) = self.entries.get_mut(i) {
            if !failed(*e) {
                let s = if write {
                    BlockState::WriteFailure
                } else {
                    BlockState::TrimFailure
                };
                *e = (s as u32) << 29 | (*e & COUNT_MASK);
            }
        }
    }

    /// Whether any block left the unwritten state (fio reports the block percentiles
    /// then).
    pub fn used(&self) -> bool {
        self.entries.iter().any(|&e| state(e) != 0)
    }

    /// Trim counts at the percentiles `ps` (ascending order, fio's rule): over the blocks
    /// that were used, failed blocks last. Empty when no block was used.
    pub fn percentiles(&self, ps: &[f64]) -> Vec<(f64, u32)> {
        let category = |e: u32| match state(e) {
            0 => 0,
            1 | 2 => 1,
            _ => 2,
        };
        let mut sorted = self.entries.clone();
        sorted.sort_by_key(|&e| (category(e), e & COUNT_MASK, state(e)));
        let unused = sorted.iter().take_while(|&&e| state(e) == 0).count();
        let used = sorted.len() - unused;
        if used == 0 {
            return Vec::new();
        }
        let mut ps: Vec<f64> = ps.iter().copied().filter(|&p| p > 0.0).collect();
        ps.sort_by(f64::total_cmp);
        ps.iter()
            .map(|&p| {
                let i = ((p * used as f64 / 100.0) as usize + unused).min(sorted.len() - 1);
                (p, sorted[i] & COUNT_MASK)
            })
            .collect()
    }

    /// Blocks in each state, in [`STATE_NAMES`] order.
    pub fn states(&self) -> [u64; 5] {
        let mut n = [0u64; 5];
        for &e in &self.entries {
            if let Some(c) = n.get_mut(state(e) as usize) {
                *c += 1;
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_over_used_blocks_with_failures_last() {
        let mut b = BlockStates::new(3);
        assert!(b.percentiles(&[50.0]).is_empty(), "nothing used");
        b.trimmed(1);
        // fio: 3 blocks, 1 trimmed once: every percentile is 1; 2 unwritten.
        assert_eq!(
            b.percentiles(&[1.0, 50.0, 99.99]),
            [(1.0, 1), (50.0, 1), (99.99, 1)]
        );
        assert_eq!(b.states(), [2, 1, 0, 0, 0]);
        let mut b = BlockStates::new(4);
        for _ in 0..5 {
            b.trimmed(0);
        }
        b.trimmed(1);
        b.trimmed(2);
        b.trimmed(2);
        b.failed(2, true);
        b.trimmed(2); // failed stays failed
        b.failed(3, false);
        assert_eq!(b.states(), [0, 2, 0, 1, 1]);
        // Sorted: trimmed 1, trimmed 5, trim failure 0, write failure 2.
        assert_eq!(
            b.percentiles(&[90.0, 10.0, 50.0, 75.0]),
            [(10.0, 1), (50.0, 0), (75.0, 2), (90.0, 2)]
        );
    }
}
