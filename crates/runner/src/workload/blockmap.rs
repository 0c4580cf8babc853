//! The random map without the memory: a keyed pseudo-random permutation of the block
//! numbers [0, n). Walking it visits every block exactly once per pass — what fio's
//! random map (and `random_generator=lfsr`) guarantees — in O(1) memory and time.
//!
//! Construction: a Feistel network over the smallest even number of bits covering n
//! (a bijection on [0, 2^k)), with cycle-walking to skip values ≥ n. Because 2^k < 4n,
//! fewer than four steps are needed on average.

use crate::workload::rng::splitmix;

#[derive(Clone, Debug)]
pub struct BlockPermutation {
    n: u64,
    half_bits: u32,
    half_mask: u64,
    keys: [u64; 4],
    /// Position of the walk within the current pass.
    next: u64,
}

impl BlockPermutation {
    pub fn new(n: u64, seed: u64) -> Self {
        let n = n.max(1);
        let bits = (64 - (n - 1).leading_zeros()).max(2);
        let half_bits = bits.div_ceil(2);
        let mut st = seed ^ 0xB10C_0FF5;
        let keys = [
            splitmix(&mut st),
            splitmix(&mut st),
            splitmix(&mut st),
            splitmix(&mut st),
        ];
        BlockPermutation {
            n,
            half_bits,
            half_mask: (1u64 << half_bits) - 1,
            keys,
            next: 0,
        }
    }

    pub fn len(&self) -> u64 {
        self.n
    }

    #[inline(always)]
    fn round(&self, x: u64, k: u64) -> u64 {
        let mut z = (x ^ k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z ^= z >> 29;
        z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (z ^ (z >> 32)) & self.half_mask
    }

    /// Bijection on [0, 2^(2*half_bits)).
    #[inline(always)]
    fn encrypt(&self, x: u64) -> u64 {
        let mut l = x >> self.half_bits;
        let mut r = x & self.half_mask;
        for &k in &self.keys {
            let t = l ^ self.round(r, k);
            l = r;
            r = t;
        }
        (l << self.half_bits) | r
    }

    /// Image of `i` (< n) under the permutation of [0, n).
    #[inline(always)]
    pub fn map(&self, i: u64) -> u64 {
        let mut x = self.encrypt(i);
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }

    /// Next block of the pass, or None when every block has been visited.
    #[inline(always)]
    pub fn next_block(&mut self) -> Option<u64> {
        if self.next >= self.n {
            return None;
        }
        let v = self.map(self.next);
        self.next += 1;
        Some(v)
    }

    /// Start a new pass (a different order each pass).
    pub fn reset(&mut self) {
        self.next = 0;
        for k in &mut self.keys {
            *k = k.rotate_left(17) ^ 0x5851_F42D_4C95_7F2D;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_each_block_once() {
        for n in [1u64, 2, 3, 5, 64, 1000, 65_537] {
            let mut p = BlockPermutation::new(n, 7);
            let mut seen = vec![false; n as usize];
            for _ in 0..n {
                let b = p.next_block().unwrap() as usize;
                assert!(!seen[b], "n={n}: {b} twice");
                seen[b] = true;
            }
            assert!(p.next_block().is_none());
            p.reset();
            assert!(p.next_block().is_some());
        }
    }

    #[test]
    fn looks_random() {
        // Neighbouring positions should not map to neighbouring blocks.
        let p = BlockPermutation::new(1 << 20, 1);
        let sequential = (0..1000u64)
            .filter(|&i| p.map(i + 1) == p.map(i) + 1)
            .count();
        assert!(sequential < 5, "{sequential}");
        let odd = (0..10_000u64).filter(|&i| p.map(i) % 2 == 1).count();
        assert!((4_500..5_500).contains(&odd), "{odd}");
    }
}
