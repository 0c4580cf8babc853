//! SPRandom preconditioning (`sprandom`, `spr_op`, `spr_num_regions`, `spr_cs`): one
//! pass that writes the device's physical capacity once and leaves it as a long run of
//! uniform random writes would, so that a random-write test starts in steady state.
//!
//! ioscope's model (its own; fio documents the aim, not a formula): the physical
//! capacity P = L / mean validity is written as `spr_num_regions` regions in time
//! order. Under uniform random writes with greedy garbage collection, data of age a
//! (in logical capacities written since) is still valid with probability e^-a, and
//! the device reclaims a region at the age A where the mean validity
//! (1 - e^-A) / A equals 1 - spr_op. Region k of N (0 the oldest) is left with
//! validity e^(-A (N - k - 1/2) / N); the newest region (the newest two with spr_cs,
//! whose invalidating writes wait one region so that the device's cache holds no
//! block and its overwrite at once) stays fully valid.
//!
//! Each logical block is assigned the region of its last write: a random permutation
//! of the blocks is cut into runs of the regions' valid counts. A region's other
//! writes are earlier copies of blocks whose last write comes in a later region (past
//! the delay), drawn at random. Within a region both kinds are shuffled. Memory is a
//! few words per region; the permutation is computed, not stored.

use super::blockmap::BlockPermutation;
use super::rng::{Rng, Taus88};

#[derive(Clone, Debug)]
struct Region {
    /// The blocks whose last write is here: permutation positions [first, first + valid).
    first: u64,
    valid: u64,
    /// Earlier copies written here, drawn from positions [pool, blocks).
    stale: u64,
    pool: u64,
}

#[derive(Clone, Debug)]
pub(super) struct Spr {
    blocks: u64,
    regions: Vec<Region>,
    perm: BlockPermutation,
    rng: Taus88,
    /// The region being written, and what is left of it.
    at: usize,
    valid_left: u64,
    stale_left: u64,
}

/// The reclaim age A at which (1 - e^-A) / A = 1 - op (bisection; the left side falls
/// from 1 to 0 as A grows).
fn reclaim_age(op: f64) -> f64 {
    let target = 1.0 - op;
    let (mut lo, mut hi) = (1e-9_f64, 200.0_f64);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if (1.0 - (-mid).exp()) / mid > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

impl Spr {
    /// The plan for `blocks` blocks of `bs` bytes; an error names the option to change.
    pub(super) fn new(
        blocks: u64,
        bs: u64,
        op: f64,
        nregions: u32,
        cache: u64,
        seed: u64,
    ) -> Result<Spr, String> {
        if !(op > 0.0 && op < 1.0) {
            return Err(format!("spr_op={op}: must be between 0 and 1"));
        }
        let n = nregions as usize;
        if n == 0 || u64::from(nregions) > blocks {
            return Err(format!(
                "spr_num_regions={nregions}: must be between 1 and the number of blocks ({blocks})"
            ));
        }
        let delay = usize::from(cache > 0);
        let age = reclaim_age(op);
        let validity: Vec<f64> = (0..n)
            .map(|k| match k + 1 + delay >= n {
                true => 1.0,
                false => (-age * ((n - k) as f64 - 0.5) / n as f64).exp(),
            })
            .collect();
        let per_region = blocks as f64 / validity.iter().sum::<f64>();
        if cache > 0 && per_region * (bs as f64) < cache as f64 {
            return Err(format!(
                "spr_cs={cache}: the cache is larger than a region ({} bytes with \
                 spr_num_regions={nregions}): use fewer regions (or a smaller spr_cs)",
                (per_region * bs as f64) as u64
            ));
        }
        let mut regions = Vec::with_capacity(n);
        let (mut sum, mut first) = (0.0, 0u64);
        for v in &validity {
            sum += v;
            let end = ((per_region * sum).round() as u64).min(blocks);
            regions.push(Region {
                first,
                valid: end - first,
                stale: ((per_region * (1.0 - v)).round() as u64),
                pool: 0,
            });
            first = end;
        }
        if let Some(last) = regions.last_mut() {
            last.valid += blocks - first;
        }
        for k in 0..n {
            let pool = regions.get(k + 1 + delay).map_or(blocks, |r| r.first);
            let r = &mut regions[k];
            r.pool = pool;
            if pool >= blocks {
                r.stale = 0;
            }
        }
        let mut s = Spr {
            blocks,
            regions,
            perm: BlockPermutation::new(blocks, seed),
            rng: Taus88::new(seed ^ 0x0053_5052),
            at: 0,
            valid_left: 0,
            stale_left: 0,
        };
        s.enter(0);
        Ok(s)
    }

    /// Blocks written in one pass (the physical capacity).
    pub(super) fn pass_blocks(&self) -> u64 {
        self.regions.iter().map(|r| r.valid + r.stale).sum()
    }

    fn enter(&mut self, k: usize) {
        self.at = k;
        self.valid_left = self.regions[k].valid;
        self.stale_left = self.regions[k].stale;
    }

    /// The next block to write; after the last region, the pass starts again.
    pub(super) fn next_block(&mut self) -> u64 {
        while self.valid_left + self.stale_left == 0 {
            self.enter((self.at + 1) % self.regions.len());
        }
        let r = &self.regions[self.at];
        let left = self.valid_left + self.stale_left;
        let pos = if self.rng.below(left) < self.stale_left {
            self.stale_left -= 1;
            r.pool + self.rng.below(self.blocks - r.pool)
        } else {
            self.valid_left -= 1;
            r.first + r.valid - self.valid_left - 1
        };
        self.perm.map(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Write one pass and return each region's share of still-valid blocks.
    fn validity(s: &mut Spr) -> (u64, Vec<f64>) {
        let w = s.pass_blocks();
        let mut last = vec![u64::MAX; s.blocks as usize];
        let mut region_of = Vec::new();
        for i in 0..w {
            let b = s.next_block();
            last[b as usize] = i;
            region_of.push(s.at);
        }
        let mut valid = vec![0u64; s.regions.len()];
        for &i in &last {
            assert_ne!(i, u64::MAX, "every block is written");
            valid[region_of[i as usize]] += 1;
        }
        let sizes: Vec<u64> = s.regions.iter().map(|r| r.valid + r.stale).collect();
        (
            w,
            valid
                .iter()
                .zip(&sizes)
                .map(|(&v, &n)| v as f64 / n as f64)
                .collect(),
        )
    }

    #[test]
    fn one_pass_writes_the_physical_capacity_and_leaves_steady_state_validity() {
        let blocks = 1 << 16;
        let mut s = Spr::new(blocks, 4096, 0.25, 8, 0, 7).unwrap();
        let (w, v) = validity(&mut s);
        // Mean validity 1 - op: the pass is the logical capacity / 0.75, within the
        // rounding of 8 regions.
        let ratio = w as f64 / blocks as f64;
        assert!((ratio - 1.0 / 0.75).abs() < 0.03, "{ratio}");
        // Oldest least valid, rising to the newest, which stays whole.
        assert!(v.windows(2).all(|p| p[0] < p[1] + 0.01), "{v:?}");
        assert!(v[0] > 0.45 && v[0] < 0.65, "{v:?}");
        assert!(v[7] > 0.999, "{v:?}");
    }

    #[test]
    fn a_cache_delays_invalidation_by_a_region_and_must_fit_in_one() {
        let mut s = Spr::new(1 << 14, 4096, 0.1, 10, 32 << 10, 3).unwrap();
        let (_, v) = validity(&mut s);
        assert!(v[8] > 0.999 && v[9] > 0.999, "{v:?}");
        let e = Spr::new(8192, 4096, 0.1, 2000, 32 << 10, 3).unwrap_err();
        assert!(e.contains("spr_cs"), "{e}");
        assert!(Spr::new(8192, 4096, 1.5, 10, 0, 3)
            .unwrap_err()
            .contains("spr_op"));
        assert!(Spr::new(8, 4096, 0.1, 10, 0, 3)
            .unwrap_err()
            .contains("spr_num_regions"));
    }
}
