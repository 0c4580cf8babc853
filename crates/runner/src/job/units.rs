//! The loop's bookkeeping: the unit ring, fio's queue-depth knobs and time stamps.

use crate::clock::{Clock, Ticks};
use crate::setup::buffers::Buffers;
use crate::workload::io::Io;
use ioscope_engine::IoUnit;
use ioscope_options::JobOptions;

/// The unit ring: every unit is free, pending (queued, not yet submitted) or in flight.
pub(super) struct Units {
    pub units: Vec<IoUnit>,
    pub free: Vec<u32>,
    /// Queued but not yet committed, in queue order.
    pub pending: Vec<u32>,
    pub inflight: u32,
}

impl Units {
    pub fn new(depth: u32, bufs: &Buffers) -> Units {
        Units {
            units: (0..depth as usize)
                .map(|i| IoUnit {
                    buf: bufs.slot_ptr(i),
                    buf_len: bufs.slot as u32,
                    ..Default::default()
                })
                .collect(),
            free: (0..depth).rev().collect(),
            pending: Vec::with_capacity(depth as usize),
            inflight: 0,
        }
    }

    /// Units queued or in flight.
    #[inline]
    pub fn busy(&self) -> u32 {
        self.inflight + self.pending.len() as u32
    }
}

/// fio's queue-depth knobs, resolved for this engine.
pub(super) struct Depths {
    pub depth: u32,
    pub batch_submit: u32,
    pub complete_min: u32,
    pub complete_max: u32,
    pub depth_low: u32,
}

impl Depths {
    /// `depth`: the effective queue depth the plan settled (1 for a synchronous
    /// engine, whatever iodepth says, as in fio).
    pub fn new(o: &JobOptions, depth: u32) -> Depths {
        Depths {
            depth,
            batch_submit: o.iodepth_batch_submit.clamp(1, depth),
            complete_min: o.iodepth_batch_complete_min,
            complete_max: o.iodepth_batch_complete_max.max(1),
            depth_low: o.iodepth_low.min(depth),
        }
    }

    /// latency_target's search sets the depth; the batches follow it down.
    pub fn set_depth(&mut self, depth: u32) {
        self.depth = depth;
        self.batch_submit = self.batch_submit.min(depth).max(1);
        self.depth_low = self.depth_low.min(depth);
    }
}

/// Timestamps: the clock when something needs per-I/O times; otherwise (no latency
/// tracking, logs, pacing or think time: gtod_reduce and the like) a value refreshed
/// every 32 calls, enough for runtime limits.
pub(super) struct Stamper {
    pub clock: &'static Clock,
    pub timed: bool,
    pub calls: u64,
    pub coarse: Ticks,
}

impl Stamper {
    #[inline(always)]
    pub fn stamp(&mut self) -> Ticks {
        if self.timed {
            return self.clock.now();
        }
        self.calls = self.calls.wrapping_add(1);
        if self.calls & 31 == 0 {
            self.coarse = self.clock.now();
        }
        self.coarse
    }
}

/// A unit set up for `io` with none of the per-I/O extras (the lean prepare).
#[inline(always)]
pub(super) fn set_io(u: &mut IoUnit, io: Io) {
    u.ddir = io.ddir;
    u.offset = io.offset;
    u.len = io.len;
    u.file = io.file;
    u.ioprio = 0;
    u.flags = 0;
}
