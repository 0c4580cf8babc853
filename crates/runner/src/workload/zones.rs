//! `zonemode=strided`: the job does `zonesize` bytes of I/O in a zone of `zonerange`
//! bytes, then moves `zonerange + zoneskip` on, wrapping to the start of the region
//! when the next zone would begin at or past its end — fio 3.33's rules:
//! - the byte count is the job's (all directions); the zone start is per file;
//! - sequential I/O starts each zone at its start and, when zonesize exceeds
//!   zonerange, goes back to it (the zone is read again);
//! - random I/O draws blocks of `[zone, zone + zonerange)`, each block once per
//!   `zonerange` bytes unless norandommap;
//! - a zone cut off by the end of the file ends a job that is not time_based.

use crate::workload::blockmap::BlockPermutation;
use ioscope_options::{JobOptions, ZoneMode};

/// The zone walk of one job.
#[derive(Clone, Debug)]
pub struct StridedZones {
    size: u64,
    range: u64,
    stride: u64,
    /// Bytes issued in the current zone.
    bytes: u64,
    /// Random blocks of the current zone range, each once per range.
    perm: BlockPermutation,
    grain: u64,
}

impl StridedZones {
    /// None unless zonemode=strided (the options check zonesize and default zonerange).
    pub fn new(o: &JobOptions, grain: u64, seed: u64) -> Option<Self> {
        if o.zonemode != ZoneMode::Strided || o.zonesize == 0 {
            return None;
        }
        let range = o.zonerange.max(1);
        Some(StridedZones {
            size: o.zonesize,
            range,
            stride: range + o.zoneskip,
            bytes: 0,
            perm: BlockPermutation::new((range / grain).max(1), seed ^ 0x5A0E),
            grain,
        })
    }

    /// Before an I/O in the file whose zone starts at `zone` (relative to the region)
    /// and whose sequential positions are `pos`: move to the next zone when this one
    /// has had its bytes, and keep the positions inside the zone.
    #[inline]
    pub fn before_io(&mut self, zone: &mut u64, pos: &mut [u64; 3], region_len: u64) {
        if self.bytes >= self.size {
            self.bytes = 0;
            *zone += self.stride;
            if *zone >= region_len {
                *zone = 0;
            }
            *pos = [*zone; 3];
            self.perm.reset();
        }
        for p in pos.iter_mut() {
            if *p >= *zone + self.range || *p < *zone {
                *p = *zone;
            }
        }
        if self.bytes % self.range == 0 && self.bytes > 0 {
            self.perm.reset();
        }
    }

    /// A random offset in the zone, relative to the region; `uniform(n)` draws below n
    /// (norandommap).
    #[inline]
    pub fn random(
        &mut self,
        zone: u64,
        norandommap: bool,
        uniform: impl FnOnce(u64) -> u64,
    ) -> u64 {
        let block = if norandommap {
            uniform(self.perm.len())
        } else {
            let p = &mut self.perm;
            p.next_block()
                .or_else(|| {
                    p.reset();
                    p.next_block()
                })
                .unwrap_or(0)
        };
        zone + block * self.grain
    }

    /// An I/O of `len` bytes was issued.
    #[inline]
    pub fn issued(&mut self, len: u64) {
        self.bytes += len;
    }
}
