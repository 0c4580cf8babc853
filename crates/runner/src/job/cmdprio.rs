//! cmdprio_percentage and its relatives: each I/O's priority, chosen per I/O.

use crate::sys::prio::{ioprio_value, with_hint};
use crate::workload::rng::{Rng, Taus88};
use ioscope_options::JobOptions;

/// Chooses each I/O's priority and its per-priority stats slot.
pub struct CmdPrio {
    pct: [u32; 3],
    prio: [u16; 3],
    /// cmdprio_bssplit per direction: (bs, pct, ioprio).
    split: Option<[Vec<(u64, u32, u16)>; 3]>,
    default: u16,
    rng: Taus88,
    /// Distinct priorities: slot i tracks slots[i]. Slot 0 is the job default.
    pub slots: Vec<u16>,
}

impl CmdPrio {
    /// None when the job issues every I/O at its default priority.
    pub fn new(o: &JobOptions, default: u16, seed: u64) -> Option<CmdPrio> {
        let prio: [u16; 3] = std::array::from_fn(|d| {
            with_hint(
                ioprio_value(o.cmdprio_class.0[d], o.cmdprio.0[d]),
                o.cmdprio_hint.0[d],
            )
        });
        let split: Option<[Vec<(u64, u32, u16)>; 3]> = o.cmdprio_bssplit.as_ref().map(|s| {
            std::array::from_fn(|d| {
                s.0[d]
                    .iter()
                    .map(|e| {
                        // An entry's own class and level take its own hint (none
                        // in the second form), not cmdprio_hint.
                        let p = e.prio.map_or(prio[d], |(c, l)| {
                            with_hint(
                                ioprio_value(c as u32, l as u32),
                                e.hint.map_or(0, u32::from),
                            )
                        });
                        (e.bs, e.pct.unwrap_or(0), p)
                    })
                    .collect()
            })
        });
        let pct = o.cmdprio_percentage.0;
        if split.is_none() && pct.iter().all(|&p| p == 0) {
            return None;
        }
        let mut slots = vec![default];
        let mut add = |p: u16| {
            if !slots.contains(&p) {
                slots.push(p)
            }
        };
        for d in 0..3 {
            if pct[d] > 0 {
                add(prio[d]);
            }
        }
        if let Some(s) = &split {
            for e in s.iter().flatten() {
                add(e.2);
            }
        }
        Some(CmdPrio {
            pct,
            prio,
            split,
            default,
            rng: Taus88::new(seed ^ crate::workload::rng::SALT_CMDPRIO),
            slots,
        })
    }

    /// (ioprio, slot) for an I/O.
    #[inline]
    pub fn pick(&mut self, ddir: usize, len: u64) -> (u16, usize) {
        let p = match &self.split {
            Some(s) => match s[ddir.min(2)].iter().find(|e| e.0 == len) {
                Some(&(_, pct, p)) if self.rng.percent(pct) => p,
                _ => self.default,
            },
            None if self.rng.percent(self.pct[ddir.min(2)]) => self.prio[ddir.min(2)],
            None => self.default,
        };
        let slot = self.slots.iter().position(|&s| s == p).unwrap_or(0);
        (p, slot)
    }
}
