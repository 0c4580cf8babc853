//! `zonemode=zbd`: I/O on zones with write pointers follows their rules, as fio 3.42
//! applies them (HOWTO, "zonemode"; behaviour observed on an emulated ZNS namespace and
//! on fio's emulated zones over regular files):
//! - a write goes at its zone's write pointer: random writes become sequential within a
//!   zone, and a sequential job appends to a partly written zone and goes on from where
//!   that write ends;
//! - at most `max_open_zones` zones take writes at once (the device's limit unless set
//!   lower), and at most `job_max_open_zones` opened by one job; once that many are
//!   open, a random write drawn elsewhere goes to one of them; zones partly written when
//!   the job starts count as open; a full zone is no longer open;
//! - a write that comes to a full zone (no room for it) resets the zone first: a
//!   sequential job coming back to zones it wrote (loops, time_based, io_size beyond
//!   the region), a random one drawing a full zone;
//! - a write that leaves less than the smallest block before the zone's capacity
//!   finishes the zone (after it completes), freeing its open-zone resource; with
//!   `write_zone_remainder` the remainder is written by a shorter write instead;
//! - `zone_reset_threshold` and `zone_reset_frequency` emulate garbage collection: once
//!   the zones' valid data is at least that share of the region, every
//!   1/frequency-th write resets the zone it goes to first (when it has data);
//! - reads of a zone stay below its write pointer unless read_beyond_wp: sequential
//!   reads move on to the next zone with data, random ones fold their offset into the
//!   zone's data (offset within the zone, modulo the data less one block) or, in a
//!   zone without data, into the next one with data; with no data anywhere the job
//!   ends at once;
//! - a trim is a reset of its zone (bs must be the zone size), of a zone with data;
//! - `zoneskip` (sequential jobs): once a write fills its zone, a read has read all of
//!   its zone's data or a trim has reset it, the job goes on `zoneskip` bytes past the
//!   zone, and from the region's first zone once that is past the region's end: the
//!   job writes or reads its bytes (size, io_size) going round the zones it visits;
//! - conventional zones take I/O anywhere.
//!
//! The jobs of a phase that use one device share its zones ([`share`]): write pointers,
//! the open zones and the data for the reset threshold are the device's, as in fio, so
//! two jobs writing one region interleave their writes at the write pointers and one
//! resets a zone the other filled. A zone takes one job's writes at a time (another's
//! wait until those in flight have completed, so that they reach the device in order),
//! and none while a job's reset or finish of it is due.
//!
//! The zone operations (resets, finishes) are issued by the job loop between I/Os,
//! after the I/O in flight has completed: [`ZoneMap::next_op`].

mod kept;
mod place;
mod shared;
#[cfg(test)]
mod tests;

use super::io::Io;
use ioscope_engine::Ddir;
pub use kept::{restore, KeptZones, Slot};
use place::{Job, Placer, Zones};
pub(crate) use shared::share;
use shared::Shared;
use std::sync::Arc;

/// What the workload needs to know of one zone of the job's region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ZoneInfo {
    pub start: u64,
    pub len: u64,
    pub capacity: u64,
    pub wp: u64,
    /// Sequential (write pointer) or conventional.
    pub seq: bool,
}

impl ZoneInfo {
    fn end(&self) -> u64 {
        self.start + self.capacity
    }
}

/// A zone operation the job issues itself, between I/Os: (start, length) of the zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneOp {
    Reset(u64, u64),
    Finish(u64, u64),
    /// recover_zbd_write_error: (start of the zone, end of its failed writes): move the
    /// device's write pointer there, where the zone map has it.
    Recover(u64, u64),
}

impl ZoneOp {
    fn start(self) -> u64 {
        match self {
            ZoneOp::Reset(s, _) | ZoneOp::Finish(s, _) | ZoneOp::Recover(s, _) => s,
        }
    }
}

/// The job's zone options that shape placement.
#[derive(Clone, Copy, Debug, Default)]
pub struct ZoneRules {
    /// Zones taking writes at once on the device (0: no limit).
    pub max_open: u32,
    /// Zones this job may open (job_max_open_zones; 0: no limit).
    pub job_max_open: u32,
    pub read_beyond_wp: bool,
    /// The smallest write: a zone left with less room is finished.
    pub min_bs: u64,
    pub write_remainder: bool,
    /// zone_reset_threshold: share of the region holding data above which writes reset
    /// zones every `reset_every` writes (0: never).
    pub reset_threshold: f64,
    pub reset_every: u32,
    /// The job reads and writes: until its first write, its reads are writes (with
    /// every zone empty there would be nothing to read), as in fio.
    pub write_first: bool,
    /// zoneskip: bytes a sequential job skips once it has written a zone full or read
    /// all its data (a multiple of the zone size; 0: none).
    pub skip: u64,
    /// recover_zbd_write_error: a failed write's zone gets its write pointer moved past
    /// it ([`ZoneMap::write_failed`]).
    pub recover: bool,
}

/// Where the zones put an I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    /// The direction: a read may become a write (`ZoneRules::write_first`).
    pub ddir: Ddir,
    pub offset: u64,
    pub len: u64,
    /// Where a sequential job goes on from (the next zone once this one is full).
    pub next: u64,
}

/// The zones: the job's own, or the device's, shared with the other jobs using it.
#[derive(Debug)]
enum Held {
    Own(Zones),
    Shared(Arc<Shared>),
}

/// The zones of one job's region and what the job has done to them.
#[derive(Debug)]
pub struct ZoneMap {
    held: Held,
    job: Job,
    /// Emulated zones: where their write pointers are kept when the job ends.
    kept: Option<Slot>,
}

impl ZoneMap {
    /// `zones`: those the job's region covers, in order.
    pub fn new(zones: Vec<ZoneInfo>, rules: ZoneRules) -> ZoneMap {
        let z = Zones::new(zones, rules.max_open);
        let mut job = Job::new(&z, 0..z.zones.len(), rules);
        // Zones partly written when the job starts are open (fio counts them too).
        job.open.clone_from(&z.open);
        ZoneMap {
            held: Held::Own(z),
            job,
            kept: None,
        }
    }

    /// Emulated zones: keep their write pointers in `slot` when the job ends.
    pub fn keep_in(&mut self, slot: Slot) {
        self.kept = Some(slot);
    }

    /// Run `f` on the zones, locked when they are shared.
    fn with<R>(&mut self, f: impl FnOnce(&mut Placer) -> R) -> R {
        match &mut self.held {
            Held::Own(z) => f(&mut Placer::new(z, &mut self.job, None)),
            Held::Shared(s) => {
                let mut g = s.lock();
                f(&mut Placer::new(&mut g, &mut self.job, Some(&s.inflight)))
            }
        }
    }

    /// Where an I/O the job drew at `offset` of `len` bytes goes. None: nowhere, the
    /// zones have no room or no data for it, or, when [`Self::blocked`], not yet.
    /// `random`: the job draws random offsets.
    pub fn place(&mut self, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<Placed> {
        self.job.blocked = false;
        // The finishes the previous write asked for are due before this I/O.
        self.job.ops.append(&mut self.job.after);
        let j = &self.job;
        let ddir = match ddir {
            Ddir::Read if j.rules.write_first && !j.wrote => Ddir::Write,
            d => d,
        };
        let p = self.with(|p| p.place(ddir, offset, len, random))?;
        self.job.wrote |= ddir == Ddir::Write;
        Some(p)
    }

    /// Whether the last I/O could not be placed yet: its zone is another job's (writes
    /// in flight, a reset due) until that job is done with it.
    pub fn blocked(&self) -> bool {
        self.job.blocked
    }

    /// The next zone operation due before the next I/O is issued (it needs the I/O in
    /// flight completed first); with `all`, also those due after it (the job ended).
    /// Once issued, [`Self::op_done`].
    pub fn next_op(&mut self, all: bool) -> Option<ZoneOp> {
        let j = &mut self.job;
        if all {
            j.ops.append(&mut j.after);
        }
        (!j.ops.is_empty()).then(|| j.ops.remove(0))
    }

    /// `op` was issued (or failed): other jobs may write its zone again.
    pub fn op_done(&mut self, op: ZoneOp) {
        if let Held::Shared(s) = &self.held {
            s.release(op.start());
        }
    }

    /// A write placed by this map completed (or will never be issued): its zone may
    /// take other jobs' writes once none of this job's is in flight.
    #[inline]
    pub fn write_done(&self, offset: u64) {
        if let Held::Shared(s) = &self.held {
            s.write_done(offset);
        }
    }

    /// A write placed by this map failed (and the job goes on): with
    /// recover_zbd_write_error, its zone's write pointer is to be moved past it before
    /// the next I/O (one operation per zone, to the end of its last failed write), as
    /// the zone map already has it. Returns whether a recovery is due.
    pub fn write_failed(&mut self, offset: u64, len: u64) -> bool {
        if !self.job.rules.recover {
            return false;
        }
        self.with(|p| p.recover(offset, len))
    }

    /// Whether the zones are shared with other jobs.
    pub fn is_shared(&self) -> bool {
        matches!(self.held, Held::Shared(_))
    }

    /// The job has ended: its zones no longer wait for it.
    pub fn leave(&mut self) {
        if let Held::Shared(s) = &self.held {
            s.leave(self.job.id);
        }
        if let Some(slot) = self.kept.take() {
            match &self.held {
                Held::Own(z) => kept::keep(&slot, &z.zones),
                Held::Shared(s) => kept::keep(&slot, &s.lock().zones),
            }
        }
    }

    /// write_zone_remainder: a write may be shorter than the block size.
    pub fn writes_remainders(&self) -> bool {
        self.job.rules.write_remainder
    }

    /// Whether zone operations are due before the next I/O.
    #[inline]
    pub fn ops_due(&self) -> bool {
        !self.job.ops.is_empty()
    }

    /// Reset every zone with data before the job (fio does so for a job that verifies
    /// what it writes: a reset in the middle would lose data it is to check).
    pub fn reset_all(&mut self) {
        self.with(|p| p.reset_all());
    }
}

impl super::Workload {
    /// zonemode=zbd: the zones of the job's one file, where its I/O is placed.
    pub fn set_zones(&mut self, zones: ZoneMap) {
        self.plain = None;
        self.zbd = Some(Box::new(zones));
    }

    /// zonemode=zbd: whether the job's I/O follows a zoned device's zones.
    #[inline]
    pub fn is_zoned(&self) -> bool {
        self.zbd.is_some()
    }

    /// zonemode=zbd: whether the zones are shared with other jobs (their writes in
    /// flight are counted: [`Self::zone_write_done`]).
    pub fn zones_shared(&self) -> bool {
        self.zbd.as_deref().is_some_and(ZoneMap::is_shared)
    }

    /// zonemode=zbd: whether zone operations are due before the next I/O is issued.
    #[inline]
    pub fn zone_ops_due(&self) -> bool {
        self.zbd.as_deref().is_some_and(ZoneMap::ops_due)
    }

    /// zonemode=zbd: the next zone operation due (see [`ZoneMap::next_op`]).
    pub fn next_zone_op(&mut self, all: bool) -> Option<ZoneOp> {
        self.zbd.as_deref_mut()?.next_op(all)
    }

    /// zonemode=zbd: `op` was issued.
    pub fn zone_op_done(&mut self, op: ZoneOp) {
        if let Some(z) = self.zbd.as_deref_mut() {
            z.op_done(op);
        }
    }

    /// zonemode=zbd, shared zones: a write at `offset` completed or was dropped.
    pub fn zone_write_done(&self, offset: u64) {
        if let Some(z) = self.zbd.as_deref() {
            z.write_done(offset);
        }
    }

    /// zonemode=zbd: a write at `offset` of `len` bytes failed and the job goes on;
    /// whether its zone's write pointer is to be recovered ([`ZoneMap::write_failed`]).
    pub fn zone_write_failed(&mut self, offset: u64, len: u64) -> bool {
        self.zbd
            .as_deref_mut()
            .is_some_and(|z| z.write_failed(offset, len))
    }

    /// zonemode=zbd, sequential: the zones put each I/O at a write pointer or below
    /// one, so the bytes of a pass and the positions it covers part (a reset zone is
    /// written again, a zone's capacity may be below its size). As in fio, the job
    /// starts over at the region's start when its position reaches the region's end,
    /// never after a region's worth of bytes.
    pub(super) fn passes_by_position(&self) -> bool {
        self.zbd.is_some() && !self.mode.is_random()
    }

    /// zonemode=zbd: whether the I/O drawn last waits for a zone another job holds.
    pub fn zone_blocked(&self) -> bool {
        self.zbd_held.is_some()
    }

    /// zonemode=zbd: the job has ended.
    pub fn leave_zones(&mut self) {
        if let Some(z) = self.zbd.as_deref_mut() {
            z.leave();
        }
    }

    /// zonemode=zbd: `io` where the zones put it; when they have no room or data for
    /// it, the pass is over as when the files are exhausted, and the next pass (if the
    /// job's bytes call for one: io_size, loops, time_based) draws again, as in fio.
    #[inline]
    pub(super) fn zoned_or_next_pass(&mut self, io: Io) -> Option<Io> {
        match self.zoned(io) {
            Some(io) => Some(io),
            None => self.zoned_pass_over(),
        }
    }

    #[cold]
    #[inline(never)]
    fn zoned_pass_over(&mut self) -> Option<Io> {
        if self.zbd.is_none() || self.zbd_held.is_some() {
            return None;
        }
        self.next_pass_early()?;
        let io = self.fresh()?;
        self.zoned(io)
    }

    /// zonemode=zbd: `io` where the zones put it (None: they have no room or no data
    /// for it, and the job ends, or its zone is another job's for now: the I/O is kept
    /// and placed again by the next call of `next_io`).
    #[inline]
    pub(super) fn zoned(&mut self, io: Io) -> Option<Io> {
        let Some(z) = self.zbd.as_deref_mut() else {
            return Some(io);
        };
        let random = self.mode.is_random();
        let Some(p) = z.place(io.ddir, io.offset, u64::from(io.len), random) else {
            if z.blocked() {
                self.zbd_held = Some(io);
            }
            return None;
        };
        if !random {
            // A sequential job goes on from where the zones put this I/O. A read made
            // a write leaves the reads where they were: fio picks the direction first.
            if let Some(f) = self.files.get_mut(io.file as usize) {
                if p.ddir != io.ddir {
                    f.pos[io.ddir.index()] = io.offset.saturating_sub(f.start);
                }
                f.pos[p.ddir.index()] = p.next.saturating_sub(f.start);
            }
        }
        Some(Io {
            ddir: p.ddir,
            offset: p.offset,
            len: p.len as u32,
            ..io
        })
    }
}
