//! Block sizes: bs per direction, bsrange, bssplit, and the grain offsets are
//! aligned to.

use super::rng::{Rng, Taus88};
use ioscope_options::JobOptions;

/// Block-size choice for one direction.
#[derive(Clone, Debug)]
pub(super) enum BsChoice {
    Fixed(u64),
    /// Multiples of `step` in [lo, hi] (step = lo, or 512 with bs_unaligned).
    Range {
        lo: u64,
        hi: u64,
        step: u64,
    },
    /// (cumulative weight, bs); weights total `total`.
    Split {
        table: Vec<(u32, u64)>,
        total: u32,
    },
}

impl BsChoice {
    pub(super) fn min(&self) -> u64 {
        match self {
            BsChoice::Fixed(b) => *b,
            BsChoice::Range { lo, .. } => *lo,
            BsChoice::Split { table, .. } => table.iter().map(|t| t.1).min().unwrap_or(4096),
        }
    }
    pub(super) fn max(&self) -> u64 {
        match self {
            BsChoice::Fixed(b) => *b,
            BsChoice::Range { hi, .. } => *hi,
            BsChoice::Split { table, .. } => table.iter().map(|t| t.1).max().unwrap_or(4096),
        }
    }
    /// The largest block size of this choice that fits in `room` bytes (None: none
    /// does). fio issues no I/O that does not fit: at the end of a region it takes a
    /// smaller size the job allows, or none.
    #[cold]
    pub(super) fn largest_within(&self, room: u64) -> Option<u64> {
        match self {
            BsChoice::Fixed(b) => (*b <= room).then_some(*b),
            BsChoice::Range { lo, hi, step } => {
                (room >= *lo).then(|| lo + (room.min(*hi) - lo) / step * step)
            }
            BsChoice::Split { table, .. } => table.iter().map(|t| t.1).filter(|b| *b <= room).max(),
        }
    }

    #[inline(always)]
    pub(super) fn pick(&self, rng: &mut Taus88) -> u64 {
        match self {
            BsChoice::Fixed(b) => *b,
            BsChoice::Range { lo, hi, step } => {
                let steps = (hi - lo) / step + 1;
                lo + rng.below(steps) * step
            }
            BsChoice::Split { table, total } => {
                let r = rng.below(*total as u64) as u32;
                table
                    .iter()
                    .find(|(cum, _)| r < *cum)
                    .or(table.last())
                    .map_or(4096, |t| t.1)
            }
        }
    }
}

pub(super) fn bs_choices(o: &JobOptions) -> [BsChoice; 3] {
    std::array::from_fn(|d| {
        if let Some(split) = &o.bssplit {
            let entries = &split.0[d];
            if !entries.is_empty() {
                let given: u32 = entries.iter().filter_map(|e| e.pct).sum();
                let empty = entries.iter().filter(|e| e.pct.is_none()).count() as u32;
                let share = 100u32.saturating_sub(given).checked_div(empty).unwrap_or(0);
                let mut cum = 0;
                let table: Vec<(u32, u64)> = entries
                    .iter()
                    .map(|e| {
                        cum += e.pct.unwrap_or(share);
                        (cum, e.bs)
                    })
                    .collect();
                return BsChoice::Split {
                    total: cum.max(1),
                    table,
                };
            }
        }
        if let Some(r) = &o.bsrange {
            let r = r.0 .0[d];
            if r.lo != r.hi {
                let step = if o.bs_unaligned { 512.min(r.lo) } else { r.lo };
                return BsChoice::Range {
                    lo: r.lo,
                    hi: r.hi,
                    step,
                };
            }
            return BsChoice::Fixed(r.lo);
        }
        BsChoice::Fixed(o.bs.0[d])
    })
}

/// The offset grain: blockalign, or the smallest block size of the directions used.
pub(super) fn grain(o: &JobOptions, bs: &[BsChoice; 3]) -> u64 {
    let dirs = [o.rw.mode.reads(), o.rw.mode.writes(), o.rw.mode.trims()];
    let min_bs = (0..3)
        .filter(|&d| dirs[d])
        .map(|d| bs[d].min())
        .min()
        .unwrap_or(4096)
        .max(1);
    o.blockalign
        .map_or(min_bs, |a| {
            (0..3)
                .filter(|&d| dirs[d])
                .map(|d| a.0[d])
                .min()
                .unwrap_or(min_bs)
        })
        .max(1)
}
