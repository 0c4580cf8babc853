//! `zonemode=zbd`: I/O on a zoned block device follows its zones' rules, as fio 3.42
//! applies them (HOWTO, "zonemode"; behaviour observed on an emulated ZNS namespace):
//! - a write to a sequential zone goes at its write pointer: random writes become
//!   sequential within a zone, and a sequential job appends to a partly written zone
//!   and moves on from where that write ends (so it writes less than its size);
//! - at most `max_open_zones` zones take writes at once (the device's limit unless set
//!   lower; `job_max_open_zones` per job); once that many are open, random writes go to
//!   one of them; zones partly written when the job starts count as open;
//! - a zone without room for a write is passed over: a sequential job moves on to the
//!   next zone, a random one to another zone with room. (fio resets a full zone it
//!   comes to and finishes one whose remainder is smaller than the block: see
//!   [`crate::setup`]'s zoned module for the resets done before the job, and the docs
//!   for what is not done yet.)
//! - reads of a sequential zone stay below its write pointer unless read_beyond_wp:
//!   sequential reads move on to the next zone with data, random ones fold their offset
//!   into the zone's data (offset within the zone, modulo the data less one block) or,
//!   in a zone without data, into the next one with data; with no data anywhere the
//!   job ends at once;
//! - a trim is a reset of its zone (bs must be the zone size), of a zone with data;
//! - conventional zones take I/O anywhere.

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

/// The zones of one job's region and what the job has done to them.
#[derive(Clone, Debug)]
pub struct ZoneMap {
    zones: Vec<ZoneInfo>,
    /// Zones taking this job's writes (indices), in the order they were opened.
    open: Vec<usize>,
    max_open: usize,
    read_beyond_wp: bool,
    /// The zone the last trim resets (start, length), when it had data.
    reset: Option<(u64, u64)>,
}

impl ZoneMap {
    /// `zones`: those the job's region covers, in order; `max_open`: 0 for no limit.
    pub fn new(zones: Vec<ZoneInfo>, max_open: u32, read_beyond_wp: bool) -> ZoneMap {
        // Zones partly written when the job starts are open (fio counts them too).
        let open = zones
            .iter()
            .enumerate()
            .filter(|(_, z)| z.seq && z.wp > z.start && z.wp < z.start + z.capacity)
            .map(|(i, _)| i)
            .collect();
        ZoneMap {
            zones,
            open,
            max_open: if max_open == 0 {
                usize::MAX
            } else {
                max_open as usize
            },
            read_beyond_wp,
            reset: None,
        }
    }

    pub fn zone(&self, i: usize) -> ZoneInfo {
        self.zones[i]
    }

    fn index_of(&self, offset: u64) -> Option<usize> {
        let i = self.zones.partition_point(|z| z.start + z.len <= offset);
        (i < self.zones.len()).then_some(i)
    }

    /// Where an I/O the job drew at `offset` of `len` bytes goes (None: nowhere, the
    /// zones have no room or no data for it). `random`: the job draws random offsets.
    pub fn place(&mut self, ddir: Ddir, offset: u64, len: u64, random: bool) -> Option<u64> {
        let i = self.index_of(offset)?;
        if !self.zones[i].seq || (ddir == Ddir::Read && self.read_beyond_wp) {
            return Some(offset);
        }
        match ddir {
            Ddir::Write => self.place_write(i, len, random),
            Ddir::Read if random => self.place_random_read(i, offset, len),
            Ddir::Read => self.place_seq_read(i, offset, len),
            Ddir::Trim => Some(self.place_trim(i)),
            _ => Some(offset),
        }
    }

    /// A trim is a reset of its zone (its size is the zone's): only a zone with data
    /// is reset; the trim of an empty one resets nothing.
    fn place_trim(&mut self, i: usize) -> u64 {
        let z = self.zones[i];
        self.reset = (z.wp > z.start).then_some((z.start, z.len));
        self.was_reset(i);
        z.start
    }

    /// The zone the last trim resets, if it had data.
    pub fn take_reset(&mut self) -> Option<(u64, u64)> {
        self.reset.take()
    }

    fn room(&self, i: usize, len: u64) -> bool {
        let z = &self.zones[i];
        !z.seq || z.wp + len <= z.start + z.capacity
    }

    fn may_open(&self, i: usize) -> bool {
        self.open.contains(&i) || self.open.len() < self.max_open
    }

    fn place_write(&mut self, i: usize, len: u64, random: bool) -> Option<u64> {
        let target = match (self.room(i, len) && self.may_open(i), random) {
            (true, _) => i,
            (false, true) => self
                .open_with_room(i, len)
                .or_else(|| self.next_with_room(i, len, true))?,
            (false, false) => self.next_with_room(i, len, false)?,
        };
        if !self.zones[target].seq {
            return None;
        }
        if !self.open.contains(&target) {
            self.open.push(target);
        }
        let z = &mut self.zones[target];
        let at = z.wp;
        z.wp += len;
        if z.wp == z.start + z.capacity {
            // Full: the device closes it, and it no longer counts as open. A zone left
            // with a remainder smaller than a block stays open on the device.
            self.open.retain(|&o| o != target);
        }
        Some(at)
    }

    /// An open zone with room for `len`, chosen by the drawn zone `i`.
    fn open_with_room(&self, i: usize, len: u64) -> Option<usize> {
        let with_room: Vec<usize> = self
            .open
            .iter()
            .copied()
            .filter(|&o| self.room(o, len))
            .collect();
        with_room.get(i % with_room.len().max(1)).copied()
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
            .find(|&j| self.room(j, len) && self.may_open(j))
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

    /// Full zones (no room for another byte), which a sequential writer resets.
    pub fn full(&self) -> Vec<usize> {
        (0..self.zones.len())
            .filter(|&i| self.zones[i].seq && !self.room(i, 1))
            .collect()
    }

    /// Zone `i` was reset: empty again.
    pub fn was_reset(&mut self, i: usize) {
        let z = &mut self.zones[i];
        z.wp = z.start;
        self.open.retain(|&o| o != i);
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

    /// zonemode=zbd: the zone (start, length) the last trim resets, if it had data.
    pub fn take_zone_reset(&mut self) -> Option<(u64, u64)> {
        self.zbd.as_deref_mut()?.take_reset()
    }

    /// zonemode=zbd: `io` where the zones put it (None: they have no room or no data
    /// for it, and the job ends).
    #[inline]
    pub(super) fn zoned(&mut self, io: Io) -> Option<Io> {
        let Some(z) = self.zbd.as_deref_mut() else {
            return Some(io);
        };
        let random = self.mode.is_random();
        let len = u64::from(io.len);
        let offset = z.place(io.ddir, io.offset, len, random)?;
        if !random {
            // A sequential job goes on from where the zones put this I/O.
            if let Some(f) = self.files.get_mut(io.file as usize) {
                f.pos[io.ddir.index()] = offset + len - f.start;
            }
        }
        Some(Io { offset, ..io })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const Z: u64 = 1 << 20;

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

    #[test]
    fn random_writes_go_to_the_write_pointer_of_their_zone() {
        let mut m = ZoneMap::new(zones(4, &[]), 0, false);
        assert_eq!(m.place(Ddir::Write, 2 * Z + 12345, 4096, true), Some(2 * Z));
        assert_eq!(
            m.place(Ddir::Write, 2 * Z + 8192, 4096, true),
            Some(2 * Z + 4096)
        );
        assert_eq!(m.place(Ddir::Write, 100, 4096, true), Some(0));
    }

    #[test]
    fn the_open_limit_sends_writes_to_open_zones() {
        let mut m = ZoneMap::new(zones(4, &[]), 2, false);
        m.place(Ddir::Write, 0, 4096, true);
        m.place(Ddir::Write, Z, 4096, true);
        let at = m.place(Ddir::Write, 3 * Z, 4096, true).expect("placed");
        assert!(at < 2 * Z, "{at}: only zones 0 and 1 are open");
        assert_eq!(m.open.len(), 2);
    }

    #[test]
    fn sequential_writes_append_and_pass_full_zones() {
        let mut m = ZoneMap::new(zones(3, &[Z / 2, Z]), 0, false);
        assert_eq!(
            m.place(Ddir::Write, 0, 4096, false),
            Some(Z / 2),
            "appended"
        );
        assert_eq!(m.full(), vec![1]);
        m.zones[0].wp = Z;
        assert_eq!(m.place(Ddir::Write, Z - 4096, 4096, false), Some(2 * Z));
        m.zones[2].wp = 3 * Z;
        assert_eq!(
            m.place(Ddir::Write, 2 * Z, 4096, false),
            None,
            "no room left"
        );
        m.was_reset(1);
        assert_eq!(m.place(Ddir::Write, Z, 4096, false), Some(Z));
    }

    #[test]
    fn trims_reset_zones_with_data() {
        let mut m = ZoneMap::new(zones(2, &[8192]), 0, false);
        assert_eq!(m.place(Ddir::Trim, 0, Z, false), Some(0));
        assert_eq!(m.take_reset(), Some((0, Z)));
        assert_eq!(m.zones[0].wp, 0);
        assert_eq!(m.place(Ddir::Trim, Z, Z, false), Some(Z));
        assert_eq!(m.take_reset(), None, "an empty zone is not reset");
    }

    #[test]
    fn reads_stay_below_the_write_pointer() {
        let mut m = ZoneMap::new(zones(3, &[0, 16384]), 0, false);
        // Zone 0 is empty: the read moves to zone 1, inside its data less a block.
        assert_eq!(m.place(Ddir::Read, 4096, 4096, true), Some(Z + 4096));
        assert_eq!(
            m.place(Ddir::Read, Z + 65536, 4096, true),
            Some(Z + 65536 % 12288)
        );
        assert_eq!(
            m.place(Ddir::Read, 0, 4096, false),
            Some(Z),
            "next zone with data"
        );
        assert_eq!(m.place(Ddir::Read, Z + 12288, 4096, false), Some(Z + 12288));
        assert_eq!(
            m.place(Ddir::Read, Z + 16384, 4096, false),
            None,
            "past the data"
        );
        let mut beyond = ZoneMap::new(zones(3, &[]), 0, true);
        assert_eq!(beyond.place(Ddir::Read, 4096, 4096, true), Some(4096));
        let mut empty = ZoneMap::new(zones(3, &[]), 0, false);
        assert_eq!(empty.place(Ddir::Read, 4096, 4096, true), None);
    }
}
