//! `null`: completes every I/O instantly with result = len, touching neither the
//! kernel nor the data. It measures the framework itself, so the hot path is a few
//! array stores: no syscalls and no allocation after setup.
//!
//! As in fio, at iodepth=1 it is a sync engine (done inside `queue`); deeper, it
//! behaves like an async engine so the queue/commit/getevents machinery is exercised.

use std::io;

use crate::{Completion, Engine, EngineConfig, IoUnit, Queued};

pub(crate) struct NullEngine {
    sync: bool,
    /// Maximum units queued + submitted (iodepth).
    depth: u32,
    /// FIFO ring of `depth` slots: `submitted` entries from `head`, then `queued` more.
    ring: Box<[Completion]>,
    head: u32,
    submitted: u32,
    queued: u32,
    /// Completions reaped by the last `getevents`, copied out of the ring so that
    /// queueing before `event` is called cannot overwrite them.
    events: Box<[Completion]>,
}

impl NullEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Self {
        let depth = cfg.depth.max(1);
        let empty = Completion { unit: 0, result: 0 };
        NullEngine {
            sync: depth == 1,
            depth,
            ring: vec![empty; depth as usize].into_boxed_slice(),
            head: 0,
            submitted: 0,
            queued: 0,
            events: vec![empty; depth as usize].into_boxed_slice(),
        }
    }

    /// Ring slot `n` places after `head` (n < 2 * depth, so one subtraction wraps it).
    #[inline]
    fn slot(&self, n: u32) -> usize {
        let i = self.head + n;
        (if i >= self.depth { i - self.depth } else { i }) as usize
    }
}

impl Engine for NullEngine {
    fn is_sync(&self) -> bool {
        self.sync
    }

    #[inline]
    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        if self.sync {
            unit.result = unit.len as i64;
            return Ok(Queued::Done);
        }
        if self.submitted + self.queued >= self.depth {
            return Ok(Queued::Busy);
        }
        let slot = self.slot(self.submitted + self.queued);
        self.ring[slot] = Completion {
            unit: idx,
            result: unit.len as i64,
        };
        self.queued += 1;
        Ok(Queued::Queued)
    }

    #[inline]
    fn commit(&mut self) -> io::Result<u32> {
        let n = self.queued;
        self.submitted += n;
        self.queued = 0;
        Ok(n)
    }

    /// Everything submitted has already "completed", so `min` never needs a wait.
    #[inline]
    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        // Like fio's null engine: when asked to wait, everything submitted has
        // completed and is returned at once (max is not a limit here), so the queue
        // never holds finished I/O and clat measures the framework alone.
        let n = if min > 0 {
            self.submitted
        } else {
            self.submitted.min(max)
        };
        for i in 0..n {
            self.events[i as usize] = self.ring[self.slot(i)];
        }
        self.head = self.slot(n) as u32;
        self.submitted -= n;
        Ok(n)
    }

    #[inline]
    fn event(&mut self, i: u32) -> Completion {
        self.events[i as usize]
    }
}
