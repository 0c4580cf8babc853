//! `zonemode=zbd`: I/O on zones with write pointers follows their rules, as fio 3.42
//! applies them (HOWTO, "zonemode"; behaviour observed on an emulated ZNS namespace and
//! on fio's emulated zones over regular files):
//! - a write goes at its zone's write pointer: random writes become sequential within a
//!   zone, and a sequential job appends to a partly written zone and goes on from where
//!   that write ends;
//! - at most `max_open_zones` zones take writes at once (the device's limit unless set
//!   lower; `job_max_open_zones` per job); once that many are open, a random write
//!   drawn elsewhere goes to one of them; zones partly written when the job starts
//!   count as open; a full zone is no longer open;
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
//! - conventional zones take I/O anywhere.
//!
//! The zone operations (resets, finishes) are issued by the job loop between I/Os,
//! after the I/O in flight has completed: [`ZoneMap::next_op`].

use super::io::Io;
use ioscope_engine::Ddir;

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
}

/// The job's zone options that shape placement.
#[derive(Clone, Copy, Debug, Default)]
pub struct ZoneRules {
    /// Zones taking writes at once (0: no limit).
    pub max_open: u32,
    pub read_beyond_wp: bool,
    /// The smallest write: a zone left with less room is finished.
    pub min_bs: u64,
    pub write_remainder: bool,
    /// zone_reset_threshold: share of the region holding data above which writes reset
    /// zones every `reset_every` writes (0: never).
    pub reset_threshold: f64,
    pub reset_every: u32,
}

/// Where the zones put an I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placed {
    pub offset: u64,
    pub len: u64,
    /// Where a sequential job goes on from (the next zone once this one is full).
    pub next: u64,
}

/// The zones of one job's region and what the job has done to them.
#[derive(Clone, Debug)]
pub struct ZoneMap {
    zones: Vec<ZoneInfo>,
    /// Zones taking this job's writes (indices), in the order they were opened.
    open: Vec<usize>,
    max_open: usize,
    rules: ZoneRules,
    /// Operations due before the next I/O is issued.
    ops: Vec<ZoneOp>,
    /// Operations due once the I/O just placed has completed (finishes).
    after: Vec<ZoneOp>,
    /// Bytes of data in the sequential zones, and the region's bytes.
    valid: u64,
    region: u64,
    /// Writes left until the next reset zone_reset_frequency asks for.
    reset_countdown: u32,
}

impl ZoneMap {
    /// `zones`: those the job's region covers, in order.
    pub fn new(zones: Vec<ZoneInfo>, rules: ZoneRules) -> ZoneMap {
        // Zones partly written when the job starts are open (fio counts them too).
        let open = zones
            .iter()
            .enumerate()
            .filter(|(_, z)| z.seq && z.wp > z.start && z.wp < z.end())
            .map(|(i, _)| i)
            .collect();
        let valid = zones.iter().filter(|z| z.seq).map(|z| z.wp - z.start).sum();
        let region = zones.iter().map(|z| z.len).sum();
        ZoneMap {
            zones,
            open,
            max_open: match rules.max_open {
                0 => usize::MAX,
                n => n as usize,
            },
            rules,
            ops: Vec::with_capacity(4),
            after: Vec::with_capacity(2),
            valid,
            region,
            reset_countdown: rules.reset_every,
        }
    }

    fn index_of(&self, offset: u64) -> Option<usize> {
        let i = self.zones.partition_point(|z| z.start + z.len <= offset);
        (i < self.zones.len()).then_some(i)
    }

    /// Where an I/O the job drew at `offset` of `len` bytes goes (None: nowhere, the
    /// zones have no room or no data for it). `random`: the job draws random offsets.
    pub fn place(&mut self, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<Placed> {
        // The finishes the previous write asked for are due before this I/O.
        self.ops.append(&mut self.after);
        let i = self.index_of(offset)?;
        let at = |offset| Placed {
            offset,
            len,
            next: offset + len,
        };
        if !self.zones[i].seq || (ddir == Ddir::Read && self.rules.read_beyond_wp) {
            return Some(at(offset));
        }
        match ddir {
            Ddir::Write => self.place_write(i, len, random),
            Ddir::Read if random => self.place_random_read(i, offset, len).map(at),
            Ddir::Read => self.place_seq_read(i, offset, len).map(at),
            Ddir::Trim => Some(at(self.place_trim(i))),
            _ => Some(at(offset)),
        }
    }

    /// The next zone operation due before the next I/O is issued (it needs the I/O in
    /// flight completed first); with `all`, also those due after it (the job ended).
    pub fn next_op(&mut self, all: bool) -> Option<ZoneOp> {
        if all {
            self.ops.append(&mut self.after);
        }
        (!self.ops.is_empty()).then(|| self.ops.remove(0))
    }

    /// write_zone_remainder: a write may be shorter than the block size.
    pub fn writes_remainders(&self) -> bool {
        self.rules.write_remainder
    }

    /// Whether zone operations are due before the next I/O.
    #[inline]
    pub fn ops_due(&self) -> bool {
        !self.ops.is_empty()
    }

    /// A trim is a reset of its zone (its size is the zone's): only a zone with data
    /// is reset; the trim of an empty one resets nothing.
    fn place_trim(&mut self, i: usize) -> u64 {
        if self.data(i) > 0 {
            self.reset(i);
        }
        self.zones[i].start
    }

    /// Reset zone `i` before the next I/O: empty again, no longer open.
    fn reset(&mut self, i: usize) {
        let z = &mut self.zones[i];
        self.ops.push(ZoneOp::Reset(z.start, z.len));
        self.valid -= z.wp - z.start;
        z.wp = z.start;
        self.open.retain(|&o| o != i);
    }

    /// How much of a write of `len` zone `j` takes at its write pointer: all of it,
    /// the zone's remainder (write_zone_remainder), or nothing.
    fn fits(&self, j: usize, len: u64) -> Option<u64> {
        let z = &self.zones[j];
        let room = z.end() - z.wp;
        match room {
            _ if !z.seq || len <= room => Some(len),
            0 => None,
            r if self.rules.write_remainder => Some(r),
            _ => None,
        }
    }

    fn may_open(&self, i: usize) -> bool {
        self.open.contains(&i) || self.open.len() < self.max_open
    }

    fn place_write(&mut self, i: usize, len: u64, random: bool) -> Option<Placed> {
        let target = match (self.may_open(i), random) {
            (true, _) => i,
            (false, true) => self
                .open_with_room(i, len)
                .or_else(|| self.next_with_room(i, len, true))?,
            (false, false) => self.next_with_room(i, len, false)?,
        };
        if !self.zones[target].seq || self.zones[target].capacity < len.min(self.rules.min_bs) {
            return None;
        }
        self.reset_for_gc(target);
        if self.fits(target, len).is_none() {
            // A full zone: written again from its start.
            self.reset(target);
        }
        let len = self.fits(target, len)?;
        if !self.open.contains(&target) {
            self.open.push(target);
        }
        let z = &mut self.zones[target];
        let at = z.wp;
        z.wp += len;
        self.valid += len;
        let (room, start, zlen) = (z.end() - z.wp, z.start, z.len);
        if room > 0 && room < self.rules.min_bs && !self.rules.write_remainder {
            // Too little room for another write: finished once this one completes.
            self.after.push(ZoneOp::Finish(start, zlen));
            self.zones[target].wp += room;
            self.valid += room;
        }
        let full = self.zones[target].wp == self.zones[target].end();
        if full {
            // Full: the device closes it, and it no longer counts as open.
            self.open.retain(|&o| o != target);
        }
        Some(Placed {
            offset: at,
            len,
            next: if full { start + zlen } else { at + len },
        })
    }

    /// zone_reset_threshold/frequency: once the zones hold the threshold's share of the
    /// region, every reset_every-th write first resets the zone it goes to.
    fn reset_for_gc(&mut self, target: usize) {
        let r = self.rules;
        if r.reset_every == 0 || (self.valid as f64) < r.reset_threshold * self.region as f64 {
            return;
        }
        self.reset_countdown -= 1;
        if self.reset_countdown == 0 {
            self.reset_countdown = r.reset_every;
            if self.data(target) > 0 {
                self.reset(target);
            }
        }
    }

    /// An open zone with room for `len`, chosen by the drawn zone `i`.
    fn open_with_room(&self, i: usize, len: u64) -> Option<usize> {
        // Counted, then walked again: no list built for each write.
        let with_room = || {
            self.open
                .iter()
                .copied()
                .filter(|&o| self.fits(o, len).is_some())
        };
        let n = with_room().count();
        with_room().nth(i % n.max(1))
    }

    /// The next sequential zone after `i` with room for `len` that may be opened;
    /// `wrap`: past the last zone to the first.
    fn next_with_room(&self, i: usize, len: u64, wrap: bool) -> Option<usize> {
        let n = self.zones.len();
        let order: Box<dyn Iterator<Item = usize>> = match wrap {
            true => Box::new((1..n).map(move |k| (i + k) % n)),
            false => Box::new(i + 1..n),
        };
        order
            .filter(|&j| self.zones[j].seq)
            .find(|&j| self.fits(j, len).is_some() && self.may_open(j))
    }

    /// Bytes of data in zone `j`.
    fn data(&self, j: usize) -> u64 {
        let z = &self.zones[j];
        if z.seq {
            z.wp - z.start
        } else {
            z.len
        }
    }

    fn place_seq_read(&self, i: usize, offset: u64, len: u64) -> Option<u64> {
        let z = &self.zones[i];
        if offset + len <= z.start + self.data(i) {
            return Some(offset);
        }
        (i + 1..self.zones.len())
            .find(|&j| self.data(j) >= len)
            .map(|j| self.zones[j].start)
    }

    fn place_random_read(&self, i: usize, offset: u64, len: u64) -> Option<u64> {
        let n = self.zones.len();
        let j = (0..n).map(|k| (i + k) % n).find(|&j| self.data(j) >= len)?;
        let z = &self.zones[j];
        let rel = (offset - self.zones[i].start) % z.len;
        let span = self.data(j) - len;
        Some(z.start + if span == 0 { 0 } else { rel % span })
    }

    /// Reset every zone with data before the job (fio does so for a job that verifies
    /// what it writes: a reset in the middle would lose data it is to check).
    pub fn reset_all(&mut self) {
        for i in 0..self.zones.len() {
            if self.zones[i].seq && self.data(i) > 0 {
                self.reset(i);
            }
        }
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

    /// zonemode=zbd: whether zone operations are due before the next I/O is issued.
    #[inline]
    pub fn zone_ops_due(&self) -> bool {
        self.zbd.as_deref().is_some_and(ZoneMap::ops_due)
    }

    /// zonemode=zbd: the next zone operation due (see [`ZoneMap::next_op`]).
    pub fn next_zone_op(&mut self, all: bool) -> Option<ZoneOp> {
        self.zbd.as_deref_mut()?.next_op(all)
    }

    /// zonemode=zbd: `io` where the zones put it (None: they have no room or no data
    /// for it, and the job ends).
    #[inline]
    pub(super) fn zoned(&mut self, io: Io) -> Option<Io> {
        let Some(z) = self.zbd.as_deref_mut() else {
            return Some(io);
        };
        let random = self.mode.is_random();
        let p = z.place(io.ddir, io.offset, u64::from(io.len), random)?;
        if !random {
            // A sequential job goes on from where the zones put this I/O.
            if let Some(f) = self.files.get_mut(io.file as usize) {
                f.pos[io.ddir.index()] = p.next - f.start;
            }
        }
        Some(Io {
            offset: p.offset,
            len: p.len as u32,
            ..io
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: u64 = 1 << 20;
    const B: u64 = 4096;

    fn zones(n: u64, wp: &[u64]) -> Vec<ZoneInfo> {
        (0..n)
            .map(|i| ZoneInfo {
                start: i * Z,
                len: Z,
                capacity: Z,
                wp: i * Z + wp.get(i as usize).copied().unwrap_or(0),
                seq: true,
            })
            .collect()
    }

    fn rules(max_open: u32) -> ZoneRules {
        ZoneRules {
            max_open,
            min_bs: B,
            ..ZoneRules::default()
        }
    }

    fn map(n: u64, wp: &[u64], max_open: u32) -> ZoneMap {
        ZoneMap::new(zones(n, wp), rules(max_open))
    }

    fn at(m: &mut ZoneMap, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<u64> {
        m.place(ddir, offset, len, random).map(|p| p.offset)
    }

    fn ops(m: &mut ZoneMap, all: bool) -> Vec<ZoneOp> {
        std::iter::from_fn(|| m.next_op(all)).collect()
    }

    #[test]
    fn random_writes_go_to_the_write_pointer_of_their_zone() {
        let mut m = map(4, &[], 0);
        assert_eq!(at(&mut m, Ddir::Write, 2 * Z + 12345, B, true), Some(2 * Z));
        assert_eq!(
            at(&mut m, Ddir::Write, 2 * Z + 8192, B, true),
            Some(2 * Z + B)
        );
        assert_eq!(at(&mut m, Ddir::Write, 100, B, true), Some(0));
        assert!(ops(&mut m, true).is_empty());
    }

    #[test]
    fn the_open_limit_sends_writes_to_open_zones() {
        let mut m = map(4, &[], 2);
        at(&mut m, Ddir::Write, 0, B, true);
        at(&mut m, Ddir::Write, Z, B, true);
        let to = at(&mut m, Ddir::Write, 3 * Z, B, true).expect("placed");
        assert!(to < 2 * Z, "{to}: only zones 0 and 1 are open");
        assert_eq!(m.open.len(), 2);
    }

    #[test]
    fn sequential_writes_append_and_reset_full_zones_they_come_to() {
        let mut m = map(3, &[Z / 2, Z], 0);
        assert_eq!(
            at(&mut m, Ddir::Write, 0, B, false),
            Some(Z / 2),
            "appended"
        );
        assert!(ops(&mut m, false).is_empty());
        // Zone 1 is full: reset before the write that comes to it.
        assert_eq!(at(&mut m, Ddir::Write, Z, B, false), Some(Z));
        assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(Z, Z)]);
        // The last block of a zone: the job goes on at the next zone.
        m.zones[2].wp = 3 * Z - B;
        let p = m.place(Ddir::Write, 2 * Z, B, false).expect("placed");
        assert_eq!((p.offset, p.next), (3 * Z - B, 3 * Z));
        assert!(!m.open.contains(&2), "a full zone is not open");
    }

    #[test]
    fn a_remainder_smaller_than_a_block_finishes_the_zone_after_the_write() {
        let cap = 100 << 10;
        let mut z = zones(2, &[]);
        z.iter_mut().for_each(|z| z.capacity = cap);
        let big = ZoneRules {
            min_bs: 64 << 10,
            ..ZoneRules::default()
        };
        let mut m = ZoneMap::new(z.clone(), big);
        let p = m.place(Ddir::Write, 0, 64 << 10, false).expect("placed");
        assert_eq!((p.offset, p.len, p.next), (0, 64 << 10, Z));
        assert!(
            ops(&mut m, false).is_empty(),
            "not before the write completes"
        );
        let p = m.place(Ddir::Write, Z, 64 << 10, false).expect("placed");
        assert_eq!(p.offset, Z);
        assert_eq!(ops(&mut m, false), vec![ZoneOp::Finish(0, Z)]);
        assert_eq!(ops(&mut m, true), vec![ZoneOp::Finish(Z, Z)]);
        // write_zone_remainder: a shorter write fills the zone instead.
        let mut m = ZoneMap::new(
            z,
            ZoneRules {
                write_remainder: true,
                ..big
            },
        );
        m.place(Ddir::Write, 0, 64 << 10, false);
        let p = m
            .place(Ddir::Write, 64 << 10, 64 << 10, false)
            .expect("placed");
        assert_eq!((p.offset, p.len, p.next), (64 << 10, 36 << 10, Z));
        assert!(ops(&mut m, true).is_empty());
    }

    #[test]
    fn random_writes_reset_a_full_zone_they_draw() {
        let mut m = map(2, &[Z, 0], 0);
        assert_eq!(at(&mut m, Ddir::Write, 4 * B, B, true), Some(0));
        assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(0, Z)]);
    }

    /// As observed with fio 3.42 (8 zones of 1 MiB, bs=64k, rw=write): the countdown
    /// runs only while the threshold is exceeded, starts again at 1/frequency after
    /// each reset it asks for, and resets nothing in an empty zone.
    #[test]
    fn the_reset_threshold_resets_every_nth_write_once_exceeded() {
        let bs = 64 << 10;
        let r = ZoneRules {
            min_bs: bs,
            reset_threshold: 61.0 / 128.0,
            reset_every: 4,
            ..ZoneRules::default()
        };
        let mut m = ZoneMap::new(zones(8, &[]), r);
        let mut pos = 0;
        let mut resets = Vec::new();
        for n in 1..=80 {
            let p = m.place(Ddir::Write, pos, bs, false).expect("placed");
            pos = p.next;
            if !ops(&mut m, false).is_empty() {
                resets.push(n);
            }
        }
        // Exceeded from write 62; the countdown ends at 65 (zone 4, empty) and 69.
        assert_eq!(resets, vec![69, 73, 77]);
    }

    #[test]
    fn trims_reset_zones_with_data() {
        let mut m = map(2, &[8192], 0);
        assert_eq!(at(&mut m, Ddir::Trim, 0, Z, false), Some(0));
        assert_eq!(ops(&mut m, false), vec![ZoneOp::Reset(0, Z)]);
        assert_eq!(m.zones[0].wp, 0);
        assert_eq!(at(&mut m, Ddir::Trim, Z, Z, false), Some(Z));
        assert!(ops(&mut m, false).is_empty(), "an empty zone is not reset");
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let mut m = map(3, &[0, 16384], 0);
        // Zone 0 is empty: the read moves to zone 1, inside its data less a block.
        assert_eq!(at(&mut m, Ddir::Read, 4096, 4096, true), Some(Z + 4096));
        assert_eq!(
            at(&mut m, Ddir::Read, Z + 65536, 4096, true),
            Some(Z + 65536 % 12288)
        );
        assert_eq!(
            at(&mut m, Ddir::Read, 0, 4096, false),
            Some(Z),
            "next zone with data"
        );
        assert_eq!(
            at(&mut m, Ddir::Read, Z + 12288, 4096, false),
            Some(Z + 12288)
        );
        assert_eq!(
            at(&mut m, Ddir::Read, Z + 16384, 4096, false),
            None,
            "past the data"
        );
        let mut beyond = ZoneMap::new(
            zones(3, &[]),
            ZoneRules {
                read_beyond_wp: true,
                ..rules(0)
            },
        );
        assert_eq!(at(&mut beyond, Ddir::Read, 4096, 4096, true), Some(4096));
        let mut empty = map(3, &[], 0);
        assert_eq!(at(&mut empty, Ddir::Read, 4096, 4096, true), None);
    }
}
