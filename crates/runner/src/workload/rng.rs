//! Random number generators for offsets, directions, block sizes and priorities.
//!
//! - `Taus88`: L'Ecuyer's three-component combined Tausworthe generator (period 2^88),
//!   written from the published description (Math. Comp. 65, 1996).
//! - `Taus258`: L'Ecuyer's five-component 64-bit version (period 2^258, Math. Comp. 68, 1999).

/// What each of a job's random streams adds to the job's seed (the offsets take the
/// seed itself), so that the streams differ; `--debug=random` lists them.
pub const SALT_RWMIX: u64 = 0x004D_4958;
pub const SALT_BS: u64 = 0x4253;
pub const SALT_CMDPRIO: u64 = 0x5052_494F;
pub const SALT_TRIM: u64 = 0x5452_494d;
pub const SALT_VERIFY: u64 = 0x5645_5249_4659;

/// A job's random streams and their seeds, for `--debug=random`.
pub fn stream_seeds(seed: u64) -> [(&'static str, u64); 6] {
    [
        ("offsets", seed),
        ("rwmix", seed ^ SALT_RWMIX),
        ("bs", seed ^ SALT_BS),
        ("cmdprio", seed ^ SALT_CMDPRIO),
        ("verify", seed ^ SALT_VERIFY),
        ("trim", seed ^ SALT_TRIM),
    ]
}

/// Seedable uniform generator.
pub trait Rng {
    fn next_u64(&mut self) -> u64;

    /// 32 random bits (generators with a native 32-bit output override this).
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in [0, n) by multiply-shift (Lemire); one 32-bit draw when n fits.
    #[inline(always)]
    fn below(&mut self, n: u64) -> u64 {
        if n <= 1 << 32 {
            return (self.next_u32() as u64 * n) >> 32;
        }
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    #[inline(always)]
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability pct/100.
    #[inline(always)]
    fn percent(&mut self, pct: u32) -> bool {
        pct >= 100 || (pct > 0 && self.below(100) < pct as u64)
    }
}

/// SplitMix64: turns one seed into well-mixed component seeds.
pub fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Debug)]
pub struct Taus88 {
    s: [u32; 3],
}

impl Taus88 {
    pub fn new(seed: u64) -> Self {
        let mut st = seed;
        // Component seeds must exceed 1, 7 and 15 respectively.
        let mut pick = |min: u32| loop {
            let v = splitmix(&mut st) as u32;
            if v > min {
                break v;
            }
        };
        Taus88 {
            s: [pick(1), pick(7), pick(15)],
        }
    }

    #[inline(always)]
    fn step(&mut self) -> u32 {
        let s = &mut self.s;
        let b = ((s[0] << 13) ^ s[0]) >> 19;
        s[0] = ((s[0] & 0xFFFF_FFFE) << 12) ^ b;
        let b = ((s[1] << 2) ^ s[1]) >> 25;
        s[1] = ((s[1] & 0xFFFF_FFF8) << 4) ^ b;
        let b = ((s[2] << 3) ^ s[2]) >> 11;
        s[2] = ((s[2] & 0xFFFF_FFF0) << 17) ^ b;
        s[0] ^ s[1] ^ s[2]
    }
}

impl Rng for Taus88 {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        ((self.step() as u64) << 32) | self.step() as u64
    }
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        self.step()
    }
}

#[derive(Clone, Debug)]
pub struct Taus258 {
    s: [u64; 5],
}

impl Taus258 {
    pub fn new(seed: u64) -> Self {
        let mut st = seed;
        // Component seeds must exceed 1, 511, 4095, 131071 and 8388607.
        let mins = [1u64, 511, 4095, 131_071, 8_388_607];
        let mut s = [0u64; 5];
        for (v, &min) in s.iter_mut().zip(&mins) {
            *v = loop {
                let x = splitmix(&mut st);
                if x > min {
                    break x;
                }
            };
        }
        Taus258 { s }
    }
}

impl Rng for Taus258 {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let b = ((s[0] << 1) ^ s[0]) >> 53;
        s[0] = ((s[0] & 0xFFFF_FFFF_FFFF_FFFE) << 10) ^ b;
        let b = ((s[1] << 24) ^ s[1]) >> 50;
        s[1] = ((s[1] & 0xFFFF_FFFF_FFFF_FE00) << 5) ^ b;
        let b = ((s[2] << 3) ^ s[2]) >> 23;
        s[2] = ((s[2] & 0xFFFF_FFFF_FFFF_F000) << 29) ^ b;
        let b = ((s[3] << 5) ^ s[3]) >> 24;
        s[3] = ((s[3] & 0xFFFF_FFFF_FFFE_0000) << 23) ^ b;
        let b = ((s[4] << 3) ^ s[4]) >> 33;
        s[4] = ((s[4] & 0xFFFF_FFFF_FF80_0000) << 8) ^ b;
        s[0] ^ s[1] ^ s[2] ^ s[3] ^ s[4]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_are_uniformish_and_repeatable() {
        let mut a = Taus88::new(0x89);
        let mut b = Taus88::new(0x89);
        let mut hist = [0u32; 10];
        for _ in 0..100_000 {
            let v = a.below(10);
            assert_eq!(v, b.below(10));
            hist[v as usize] += 1;
        }
        assert!(
            hist.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{hist:?}"
        );
        let mut t = Taus258::new(1);
        let mut hist = [0u32; 10];
        for _ in 0..100_000 {
            hist[t.below(10) as usize] += 1;
        }
        assert!(
            hist.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{hist:?}"
        );
    }
}
