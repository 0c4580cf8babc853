//! I/O priorities: the job's own (prio/prioclass, set with ioprio_set for the job's
//! thread) and per-I/O priorities (cmdprio_percentage/class/cmdprio/bssplit).

use crate::rng::{Rng, Taus88};
use ioscope_options::JobOptions;

pub const IOPRIO_CLASS_SHIFT: u16 = 13;

pub fn ioprio_value(class: u32, level: u32) -> u16 {
    ((class as u16) << IOPRIO_CLASS_SHIFT) | (level as u16 & 7)
}

/// The job's default ioprio (0 when neither prio nor prioclass is set).
pub fn job_ioprio(o: &JobOptions) -> u16 {
    match (o.prioclass, o.prio) {
        (None, None) => 0,
        (Some(c), l) => ioprio_value(c, l.unwrap_or(4)),
        // A level without a class means best effort, as for ionice -n.
        (None, Some(l)) => ioprio_value(2, l),
    }
}

/// Apply an ioprio to the calling thread.
pub fn set_thread_ioprio(ioprio: u16) -> std::io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    // SAFETY: raw syscall with plain integer arguments; who=0 means the calling thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            ioprio as libc::c_int,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

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
        let prio: [u16; 3] =
            std::array::from_fn(|d| ioprio_value(o.cmdprio_class.0[d], o.cmdprio.0[d]));
        let split: Option<[Vec<(u64, u32, u16)>; 3]> = o.cmdprio_bssplit.as_ref().map(|s| {
            std::array::from_fn(|d| {
                s.0[d]
                    .iter()
                    .map(|e| {
                        let p = e
                            .prio
                            .map_or(prio[d], |(c, l)| ioprio_value(c as u32, l as u32));
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
            rng: Taus88::new(seed ^ 0x5052_494F),
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
