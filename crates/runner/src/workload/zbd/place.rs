//! Where the zones put each I/O (the rules in [`super`]): the zones' state, the job's
//! part of it, and the placement itself, run with the zones locked when jobs share
//! them.

use super::{Placed, ZoneInfo, ZoneOp, ZoneRules};
use ioscope_engine::Ddir;
use std::ops::Range;
use std::sync::atomic::{AtomicU32, Ordering::Acquire, Ordering::Relaxed};

/// No job (a zone nobody holds or opened).
pub(super) const NOBODY: u32 = u32::MAX;

/// The state of the zones: a job's own, or the device's, shared by the jobs using it.
#[derive(Debug)]
pub(super) struct Zones {
    pub zones: Vec<ZoneInfo>,
    /// Zones taking writes, in the order they were opened.
    pub open: Vec<usize>,
    pub max_open: usize,
    /// Bytes of data in the sequential zones.
    pub valid: u64,
    /// Shared zones: the job with zone operations due on each zone, and how many.
    pub busy: Vec<(u32, u32)>,
    /// Shared zones: the job whose writes to each zone were placed last.
    pub writer: Vec<u32>,
    /// Shared zones: the job that opened each zone, and whether each job still runs.
    pub opener: Vec<u32>,
    pub running: Vec<bool>,
}

impl Zones {
    pub fn new(zones: Vec<ZoneInfo>, max_open: u32) -> Zones {
        let open = zones
            .iter()
            .enumerate()
            .filter(|(_, z)| z.seq && z.wp > z.start && z.wp < z.end())
            .map(|(i, _)| i)
            .collect();
        let valid = zones.iter().filter(|z| z.seq).map(|z| z.wp - z.start).sum();
        Zones {
            zones,
            open,
            max_open: limit(max_open),
            valid,
            busy: Vec::new(),
            writer: Vec::new(),
            opener: Vec::new(),
            running: Vec::new(),
        }
    }
}

/// A zone limit: 0 is none.
pub(super) fn limit(n: u32) -> usize {
    match n {
        0 => usize::MAX,
        n => n as usize,
    }
}

/// One job's part: its zones, rules and the operations it has to issue.
#[derive(Debug)]
pub(super) struct Job {
    /// The job's zones (indices into [`Zones::zones`]).
    pub range: Range<usize>,
    /// Bytes of the job's region.
    pub region: u64,
    /// Zones the job opened (job_max_open_zones).
    pub open: Vec<usize>,
    pub max_open: usize,
    pub rules: ZoneRules,
    /// Operations due before the next I/O is issued.
    pub ops: Vec<ZoneOp>,
    /// Operations due once the I/O just placed has completed (finishes).
    pub after: Vec<ZoneOp>,
    /// The job among those sharing the zones.
    pub id: u32,
    /// The last I/O could not be placed yet: its zone is another job's for now.
    pub blocked: bool,
    /// The job has placed a write.
    pub wrote: bool,
    /// Writes left until the next reset zone_reset_frequency asks for (0: not counting).
    pub reset_countdown: u32,
}

impl Job {
    pub fn new(z: &Zones, range: Range<usize>, rules: ZoneRules) -> Job {
        Job {
            region: z.zones[range.clone()].iter().map(|z| z.len).sum(),
            range,
            open: Vec::new(),
            max_open: limit(rules.job_max_open),
            rules,
            ops: Vec::with_capacity(4),
            after: Vec::with_capacity(2),
            id: 0,
            blocked: false,
            wrote: false,
            reset_countdown: 0,
        }
    }
}

/// A placement: the zones (locked when shared) and the job placing.
pub(super) struct Placer<'a> {
    z: &'a mut Zones,
    j: &'a mut Job,
    /// Shared zones: each zone's writes placed and not yet completed, of every job.
    flight: Option<&'a [AtomicU32]>,
}

impl<'a> Placer<'a> {
    pub fn new(z: &'a mut Zones, j: &'a mut Job, flight: Option<&'a [AtomicU32]>) -> Self {
        Placer { z, j, flight }
    }

    fn index_of(&self, offset: u64) -> Option<usize> {
        let r = self.j.range.clone();
        let zs = &self.z.zones[r.clone()];
        let k = zs.partition_point(|z| z.start + z.len <= offset);
        (k < zs.len()).then_some(r.start + k)
    }

    pub fn place(&mut self, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<Placed> {
        let p = self.place_in_zone(ddir, offset, len, random)?;
        match random || self.j.rules.skip == 0 {
            true => Some(p),
            false => Some(self.skipped(p)),
        }
    }

    fn place_in_zone(&mut self, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<Placed> {
        let i = self.index_of(offset)?;
        let at = |offset| Placed {
            ddir,
            offset,
            len,
            next: offset + len,
        };
        if !self.z.zones[i].seq || (ddir == Ddir::Read && self.j.rules.read_beyond_wp) {
            if ddir == Ddir::Write {
                self.count(i);
            }
            return Some(at(offset));
        }
        match ddir {
            Ddir::Write => self.place_write(i, len, random),
            Ddir::Read if random => self.place_random_read(i, offset, len).map(at),
            Ddir::Read => self.place_seq_read(i, offset, len).map(at),
            Ddir::Trim => self.place_trim(i, random).map(at),
            _ => Some(at(offset)),
        }
    }

    /// zoneskip: a sequential I/O that ends where its zone ends (a write that fills it,
    /// a read of its last written bytes, a trim) sends the job `skip` bytes past the
    /// zone, back to the first zone once that is past the region, as fio does. A zone
    /// finished with room left (less than a block) is not skipped from.
    fn skipped(&self, mut p: Placed) -> Placed {
        let Some(i) = self.index_of(p.offset) else {
            return p;
        };
        let z = &self.z.zones[i];
        let end = match p.ddir {
            Ddir::Write if z.seq => z.end(),
            Ddir::Read if z.seq && !self.j.rules.read_beyond_wp => z.wp,
            _ => z.start + z.len,
        };
        if p.offset + p.len != end {
            return p;
        }
        let r = &self.j.range;
        let last = &self.z.zones[r.end - 1];
        let next = z.start + z.len + self.j.rules.skip;
        p.next = match next >= last.start + last.len {
            true => self.z.zones[r.start].start,
            false => next,
        };
        p
    }

    /// Whether zone `i` is another job's for now: a reset or finish of it is due, or
    /// its writes are in flight (a write placed after them could reach the device
    /// first). Never with zones of one job.
    fn taken(&self, i: usize) -> bool {
        let Some(f) = self.flight else {
            return false;
        };
        let me = self.j.id;
        let (owner, due) = self.z.busy[i];
        (due > 0 && owner != me) || (f[i].load(Acquire) > 0 && self.z.writer[i] != me)
    }

    /// Not yet: the job waits until the zone's holder is done with it.
    fn block<T>(&mut self) -> Option<T> {
        self.j.blocked = true;
        None
    }

    /// Shared zones: a write placed in zone `i`, in flight until it completes.
    fn count(&mut self, i: usize) {
        if let Some(f) = self.flight {
            f[i].fetch_add(1, Relaxed);
            self.z.writer[i] = self.j.id;
        }
    }

    /// An operation on zone `i` before the next I/O (`now`) or after it completes.
    fn due(&mut self, op: ZoneOp, i: usize, now: bool) {
        match now {
            true => self.j.ops.push(op),
            false => self.j.after.push(op),
        }
        if self.flight.is_some() {
            let b = &mut self.z.busy[i];
            *b = (self.j.id, b.1 + 1);
        }
    }

    /// A trim is a reset of its zone (its size is the zone's): only a zone with data
    /// is reset; a sequential trim of an empty one resets nothing. A random trim drawn
    /// in an empty zone goes to the nearest zone with data instead, and with none left
    /// the job ends, as in fio.
    fn place_trim(&mut self, i: usize, random: bool) -> Option<u64> {
        let i = match random && self.data(i) == 0 {
            true => self.nearest_with_data(i)?,
            false => i,
        };
        if self.taken(i) {
            return self.block();
        }
        if self.data(i) > 0 {
            self.reset(i);
        }
        Some(self.z.zones[i].start)
    }

    /// Reset zone `i` before the next I/O: empty again, no longer open.
    fn reset(&mut self, i: usize) {
        let z = &mut self.z.zones[i];
        let op = ZoneOp::Reset(z.start, z.len);
        self.z.valid -= z.wp - z.start;
        z.wp = z.start;
        self.due(op, i, true);
        self.close(i);
    }

    /// Zone `i` no longer takes writes (full or reset).
    fn close(&mut self, i: usize) {
        self.z.open.retain(|&o| o != i);
        self.j.open.retain(|&o| o != i);
    }

    /// How much of a write of `len` zone `j` takes at its write pointer: all of it,
    /// the zone's remainder (write_zone_remainder), or nothing.
    fn fits(&self, j: usize, len: u64) -> Option<u64> {
        let z = &self.z.zones[j];
        let room = z.end() - z.wp;
        match room {
            _ if !z.seq || len <= room => Some(len),
            0 => None,
            r if self.j.rules.write_remainder => Some(r),
            _ => None,
        }
    }

    fn may_open(&mut self, i: usize) -> bool {
        if self.z.open.contains(&i) {
            return true;
        }
        // Zones this job opened that another job has since closed no longer count.
        let open = &self.z.open;
        self.j.open.retain(|o| open.contains(o));
        open.len() < self.z.max_open && self.j.open.len() < self.j.max_open
    }

    fn place_write(&mut self, i: usize, len: u64, random: bool) -> Option<Placed> {
        let target = match (self.may_open(i), random) {
            (true, _) => Some(i),
            (false, true) => self
                .open_with_room(i, len)
                .or_else(|| self.next_with_room(i, len, true)),
            (false, false) => self.next_with_room(i, len, false),
        };
        let Some(target) = target else {
            return self.wait_for_room();
        };
        if self.taken(target) {
            return self.block();
        }
        if !self.z.zones[target].seq || self.z.zones[target].capacity < len.min(self.j.rules.min_bs)
        {
            return None;
        }
        self.reset_for_gc(target);
        if self.fits(target, len).is_none() {
            // A full zone: written again from its start.
            self.reset(target);
        }
        let len = self.fits(target, len)?;
        self.open(target);
        self.count(target);
        Some(self.write_at(target, len))
    }

    fn open(&mut self, i: usize) {
        if self.z.open.contains(&i) {
            return;
        }
        self.z.open.push(i);
        self.j.open.push(i);
        if self.flight.is_some() {
            self.z.opener[i] = self.j.id;
        }
    }

    /// `len` bytes at zone `i`'s write pointer, which moves on; a zone left with too
    /// little room for another write is finished once this one completes.
    fn write_at(&mut self, i: usize, len: u64) -> Placed {
        let min_bs = self.j.rules.min_bs;
        let z = &mut self.z.zones[i];
        let at = z.wp;
        z.wp += len;
        self.z.valid += len;
        let (room, start, zlen) = (z.end() - z.wp, z.start, z.len);
        if room > 0 && room < min_bs && !self.j.rules.write_remainder {
            self.due(ZoneOp::Finish(start, zlen), i, false);
            self.z.zones[i].wp += room;
            self.z.valid += room;
        }
        let full = self.z.zones[i].wp == self.z.zones[i].end();
        if full {
            // Full: the device closes it, and it no longer counts as open.
            self.close(i);
        }
        Placed {
            ddir: Ddir::Write,
            offset: at,
            len,
            next: if full { start + zlen } else { at + len },
        }
    }

    /// No zone may take the write: with shared zones, wait while another job still
    /// running holds open zones or one of this job's zones (they may free one), else
    /// the job ends.
    fn wait_for_room(&mut self) -> Option<Placed> {
        self.flight?;
        let me = self.j.id;
        let z = &self.z;
        let others = z.open.iter().any(|&o| {
            let by = z.opener[o];
            by != me && by != NOBODY && z.running[by as usize]
        });
        if others || self.j.range.clone().any(|k| self.taken(k)) {
            return self.block();
        }
        None
    }

    /// zone_reset_threshold/frequency: once the zones hold the threshold's share of the
    /// region, every reset_every-th write first resets the zone it goes to.
    fn reset_for_gc(&mut self, target: usize) {
        let r = self.j.rules;
        let threshold = r.reset_threshold * self.j.region as f64;
        if r.reset_every == 0 || (self.z.valid as f64) < threshold {
            return;
        }
        if self.j.reset_countdown == 0 {
            self.j.reset_countdown = r.reset_every;
        }
        self.j.reset_countdown -= 1;
        if self.j.reset_countdown == 0 && self.data(target) > 0 {
            self.reset(target);
        }
    }

    /// An open zone of the job's with room for `len` and free to write, chosen by the
    /// drawn zone `i`.
    fn open_with_room(&self, i: usize, len: u64) -> Option<usize> {
        // Counted, then walked again: no list built for each write.
        let with_room = || {
            self.z.open.iter().copied().filter(|&o| {
                self.j.range.contains(&o) && self.fits(o, len).is_some() && !self.taken(o)
            })
        };
        let n = with_room().count();
        with_room().nth(i % n.max(1))
    }

    /// The next sequential zone after `i` with room for `len` that may be opened;
    /// `wrap`: past the job's last zone to its first.
    fn next_with_room(&mut self, i: usize, len: u64, wrap: bool) -> Option<usize> {
        let Range { start: lo, end: hi } = self.j.range;
        let n = hi - lo;
        let count = if wrap { n - 1 } else { hi - i - 1 };
        for k in 1..=count {
            let j = lo + (i - lo + k) % n;
            if self.z.zones[j].seq && self.fits(j, len).is_some() && self.may_open(j) {
                return Some(j);
            }
        }
        None
    }

    /// Bytes of data in zone `j`.
    fn data(&self, j: usize) -> u64 {
        let z = &self.z.zones[j];
        if z.seq {
            z.wp - z.start
        } else {
            z.len
        }
    }

    /// The sequential zone nearest `i` holding data: the one after, then the one
    /// before, and so on outwards (fio's order). Conventional zones have no write
    /// pointer to reset.
    fn nearest_with_data(&self, i: usize) -> Option<usize> {
        let Range { start: lo, end: hi } = self.j.range;
        (1..hi - lo)
            .flat_map(|k| [Some(i + k).filter(|&j| j < hi), i.checked_sub(k)])
            .flatten()
            .filter(|&j| j >= lo && self.z.zones[j].seq)
            .find(|&j| self.data(j) > 0)
    }

    fn place_seq_read(&self, i: usize, offset: u64, len: u64) -> Option<u64> {
        let z = &self.z.zones[i];
        if offset + len <= z.start + self.data(i) {
            return Some(offset);
        }
        (i + 1..self.j.range.end)
            .find(|&j| self.data(j) >= len)
            .map(|j| self.z.zones[j].start)
    }

    fn place_random_read(&self, i: usize, offset: u64, len: u64) -> Option<u64> {
        let Range { start: lo, end: hi } = self.j.range;
        let n = hi - lo;
        let j = (0..n)
            .map(|k| lo + (i - lo + k) % n)
            .find(|&j| self.data(j) >= len)?;
        let z = &self.z.zones[j];
        let rel = (offset - self.z.zones[i].start) % z.len;
        let span = self.data(j) - len;
        Some(z.start + if span == 0 { 0 } else { rel % span })
    }

    /// recover_zbd_write_error: a write at `offset` of `len` failed. Its zone's write
    /// pointer is moved to the end of the zone's failed writes by an operation before
    /// the next I/O (after those in flight have completed; until then no other job
    /// writes the zone). False: not a zone with a write pointer.
    pub fn recover(&mut self, offset: u64, len: u64) -> bool {
        let Some(i) = self.index_of(offset) else {
            return false;
        };
        let z = self.z.zones[i];
        if !z.seq {
            return false;
        }
        let end = (offset + len).min(z.end());
        let pending = self.j.ops.iter_mut().find_map(|op| match op {
            ZoneOp::Recover(s, e) if *s == z.start => Some(e),
            _ => None,
        });
        match pending {
            Some(e) => *e = (*e).max(end),
            None => self.due(ZoneOp::Recover(z.start, end), i, true),
        }
        true
    }

    /// Reset every zone of the job's with data.
    pub fn reset_all(&mut self) {
        for i in self.j.range.clone() {
            if self.z.zones[i].seq && self.data(i) > 0 {
                self.reset(i);
            }
        }
    }
}
