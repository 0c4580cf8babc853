//! What I/O comes next: direction (rw, rwmixread, trimwrite), block size (bs, bsrange,
//! bssplit), file (file_service_type), offset (sequential per direction with holes,
//! random over a block permutation, norandommap, distributions, percentage_random,
//! rw=...:N), fsync/fdatasync cadence, passes (loops, io_size, time_based) and limits
//! (number_ios). One call per I/O; no allocation.

pub(crate) mod blockmap;
mod bs;
pub(crate) mod dist;
pub(crate) mod io;
mod nops;
mod offsets;
pub(crate) mod ranges;
pub(crate) mod replay;
pub(crate) mod rng;
mod spr;
#[cfg(test)]
mod tests;
mod walk;
mod window;
pub(crate) mod zbd;
pub(crate) mod zones;

pub(crate) use io::Io;

use blockmap::BlockPermutation;
use bs::{bs_choices, grain, BsChoice};
use dist::RankDist;
use ioscope_engine::Ddir;
use ioscope_options::{FileService, JobOptions, RandomGenerator, RwMode, RwSequencer};
use rng::{Rng, Taus258, Taus88};
use walk::{sync_cadence, FileWalk, OffsetRng, Plain, Replay};
use zones::StridedZones;

/// sprandom's plan over the job's one file (None without sprandom).
fn sprandom(
    o: &JobOptions,
    files: &[FileWalk],
    grain: u64,
    seed: u64,
) -> Option<Result<spr::Spr, String>> {
    if !o.sprandom {
        return None;
    }
    let [f] = files else {
        return Some(Err(
            "sprandom preconditions one file or device (nrfiles=1)".into()
        ));
    };
    Some(spr::Spr::new(
        f.blocks,
        grain,
        o.spr_op,
        o.spr_num_regions,
        o.spr_cs,
        seed,
    ))
}

/// Whether sprandom can plan over these files (setup refuses the job if not).
pub(crate) fn check_sprandom(o: &JobOptions, regions: &[(u64, u64)]) -> Result<(), String> {
    if !o.sprandom {
        return Ok(());
    }
    let bs = bs_choices(o);
    let grain = grain(o, &bs);
    match sprandom(o, &walks(regions, grain, 0), grain, 0) {
        Some(Err(e)) => Err(e),
        _ => Ok(()),
    }
}

/// A walk over each file region, `grain` bytes a block.
fn walks(regions: &[(u64, u64)], grain: u64, seed: u64) -> Vec<FileWalk> {
    regions
        .iter()
        .enumerate()
        .map(|(i, &(start, len))| {
            let blocks = (len / grain).max(1);
            FileWalk {
                start,
                len,
                pos: [0; 3],
                blocks,
                perm: BlockPermutation::new(blocks, seed ^ (i as u64) << 32),
                zone: 0,
                wrap_at: len,
                taken: None,
            }
        })
        .collect()
}

/// sync_file_range's cadence: every N writes, when neither fsync nor fdatasync is set.
fn range_every(o: &JobOptions) -> u32 {
    match sync_cadence(o) {
        (n, _) if o.fsync == 0 && o.fdatasync == 0 => n,
        _ => 0,
    }
}

/// The I/O sequence of one job.
pub struct Workload {
    /// The common case's shortcut, when the job is that case.
    plain: Option<Plain>,
    /// num_range: the ranges of the trim in hand.
    ranges: Option<ranges::Ranges>,
    files: Vec<FileWalk>,
    fidx: usize,
    file_service: FileService,
    /// sprandom: the preconditioning pass's plan.
    spr: Option<Box<spr::Spr>>,
    /// openfiles below the number of files: the files taking I/O now.
    window: Option<Box<window::OpenWindow>>,
    mode: RwMode,
    read_pct: u32,
    bs: [BsChoice; 3],
    /// bs_is_seq_rand: block sizes by sequential (the read one) or random (the write
    /// one) instead of by direction.
    bs_by_randomness: bool,
    /// read_iolog: the trace replayed instead of the generated I/O.
    replay: Option<Replay>,
    /// zonemode=strided.
    zones: Option<Box<StridedZones>>,
    /// zonemode=zbd: the device's zones, where each I/O is placed.
    zbd: Option<Box<zbd::ZoneMap>>,
    /// zonemode=zbd: an I/O drawn whose zone another job holds, placed again next.
    zbd_held: Option<Io>,
    /// write_iolog: where the issued I/O is recorded.
    pub recorder: Option<crate::workload::replay::Recorder>,
    /// Granularity of random offsets (blockalign, default the smallest bs).
    grain: u64,
    random_pct: [u32; 3],
    norandommap: bool,
    use_perm: bool,
    dist: Option<RankDist>,
    hole: i64,
    per_offset: u32,
    identical: bool,
    off_rng: OffsetRng,
    mix_rng: Taus88,
    bs_rng: Taus88,
    /// Bytes of one pass over all files, and issued so far in this pass.
    pass_bytes: u64,
    pass_done: u64,
    /// Bytes left to issue in the whole job (io_size × loops), unless time_based.
    total_left: u64,
    /// io_size (one loop's bytes) and io_size × loops, for loop numbers.
    loop_bytes: u64,
    total_bytes: u64,
    time_based: bool,
    /// In ramp_time/ramp_size: the workload wraps as a time_based one would, and the
    /// job's size starts after the ramp (as in fio); the job's own time_based.
    ramping: Option<bool>,
    /// io_size was given: keep wrapping until that many bytes are done.
    io_size_set: bool,
    ios_left: u64,
    /// rw=...:N: I/Os left at the current offset, and the last I/O.
    repeat_left: u32,
    last: Io,
    /// trimwrite: the write that follows a trim.
    pending_write: Option<Io>,
    /// fsync, else fdatasync, else sync_file_range: every this many writes (0: never),
    /// and which.
    sync_every: u32,
    sync_ddir: Ddir,
    writes_since_sync: u32,
    /// sync_file_range: every N writes (0: not used), and the span written since the
    /// last one (lo, hi).
    range_every: u32,
    written: Option<(u64, u64)>,
    pub passes: u64,
}

impl Workload {
    /// fio's 32-bit tausworthe for the offsets (`random_generator=tausworthe` set
    /// explicitly; left to its default, the generator covers any range).
    pub fn offsets_32bit(&mut self) {
        if let OffsetRng::T88(r) = &self.off_rng {
            self.off_rng = OffsetRng::T32(r.clone());
        }
    }

    /// `regions`: (start, len) of each file; `seed` distinguishes jobs.
    pub fn new(o: &JobOptions, regions: &[(u64, u64)], seed: u64) -> Workload {
        let bs = bs_choices(o);
        let grain = grain(o, &bs);
        let files = walks(regions, grain, seed);
        let spr = sprandom(o, &files, grain, seed).and_then(Result::ok);
        let pass_bytes: u64 = match &spr {
            Some(s) => s.pass_blocks() * grain,
            None => files.iter().map(|f| f.len).sum(),
        };
        let io_size = o.io_size.map_or(pass_bytes, |s| s.resolve(pass_bytes));
        let off_rng = match o.random_generator {
            RandomGenerator::Tausworthe64 => OffsetRng::T258(Taus258::new(seed)),
            _ => OffsetRng::T88(Taus88::new(seed)),
        };
        let dist = files
            .first()
            .and_then(|f| RankDist::new(&o.random_distribution, f.blocks, grain));
        let mut w = Workload {
            plain: None,
            ranges: None,
            use_perm: !o.norandommap || o.random_generator == RandomGenerator::Lfsr,
            norandommap: o.norandommap,
            dist,
            files,
            fidx: 0,
            file_service: o.file_service_type,
            spr: spr.map(Box::new),
            window: window::OpenWindow::new(o.openfiles, regions.len()).map(Box::new),
            mode: o.rw.mode,
            read_pct: o.rwmixread,
            bs,
            bs_by_randomness: o.bs_is_seq_rand,
            replay: None,
            zones: StridedZones::new(o, grain, seed).map(Box::new),
            zbd: None,
            zbd_held: None,
            recorder: None,
            grain,
            random_pct: o.percentage_random.0,
            hole: o.rw.hole,
            per_offset: o.rw.nr.max(1),
            identical: o.rw_sequencer == RwSequencer::Identical,
            off_rng,
            mix_rng: Taus88::new(seed ^ rng::SALT_RWMIX),
            bs_rng: Taus88::new(seed ^ rng::SALT_BS),
            pass_bytes,
            pass_done: 0,
            total_left: io_size.saturating_mul(o.loops.max(1) as u64),
            loop_bytes: io_size.max(1),
            total_bytes: io_size.saturating_mul(o.loops.max(1) as u64),
            time_based: o.time_based,
            ramping: None,
            io_size_set: o.io_size.is_some(),
            ios_left: Some(o.number_ios).filter(|&n| n > 0).unwrap_or(u64::MAX),
            repeat_left: 0,
            last: Io::default(),
            pending_write: None,
            sync_every: sync_cadence(o).0,
            sync_ddir: sync_cadence(o).1,
            writes_since_sync: 0,
            range_every: range_every(o),
            written: None,
            passes: 0,
        };
        w.map_covered_blocks(o);
        w.ranges = ranges::Ranges::new(o, w.max_bs());
        w.plain = w.plain_case();
        w
    }

    /// With the random map, I/Os larger than its block (mixed sizes, or a direction
    /// with a larger block size) cover several blocks: keep which, so that none is done
    /// twice in a pass.
    fn map_covered_blocks(&mut self, o: &JobOptions) {
        let dirs = [o.rw.mode.reads(), o.rw.mode.writes(), o.rw.mode.trims()];
        let largest = (0..3)
            .filter(|&d| dirs[d])
            .map(|d| self.bs[d].max())
            .max()
            .unwrap_or(0);
        if !self.use_perm || self.norandommap || !o.rw.mode.is_random() || largest <= self.grain {
            return;
        }
        for f in &mut self.files {
            f.taken = Some(vec![0; f.blocks.div_ceil(64) as usize]);
        }
    }

    /// The [`Plain`] shortcut, when every per-I/O choice of the general path is fixed.
    fn plain_case(&self) -> Option<Plain> {
        let ddir = match self.mode {
            RwMode::RandRead => Ddir::Read,
            RwMode::RandWrite => Ddir::Write,
            RwMode::RandTrim => Ddir::Trim,
            _ => return None,
        };
        let d = ddir.index();
        let [f] = self.files.as_slice() else {
            return None;
        };
        let BsChoice::Fixed(len) = self.bs[if self.bs_by_randomness { 1 } else { d }] else {
            return None;
        };
        let simple = self.random_pct[d] >= 100
            && !self.use_perm
            && self.dist.is_none()
            && self.zones.is_none()
            && self.replay.is_none()
            && self.ranges.is_none()
            && self.per_offset == 1
            && self.sync_every == 0
            && self.range_every == 0
            && len == self.grain
            && f.blocks * self.grain <= f.len;
        simple.then_some(Plain {
            ddir,
            len: u32::try_from(len).ok()?,
            start: f.start,
            blocks: f.blocks,
        })
    }

    /// Largest block size any direction uses (unit buffer size).
    pub fn max_bs(&self) -> u64 {
        if let Some(r) = &self.replay {
            return r.max_len.max(512);
        }
        self.bs.iter().map(|b| b.max()).max().unwrap_or(4096)
    }

    /// Bytes the job will issue, if bounded.
    pub fn planned_bytes(&self) -> Option<u64> {
        if let Some(r) = &self.replay {
            return Some(r.bytes);
        }
        (!self.time_based).then_some(self.total_left)
    }

    /// Replay these I/Os (read_iolog) instead of generating them; `timed`: at their
    /// recorded times (not replay_no_stall).
    pub fn replay(&mut self, entries: Vec<crate::workload::replay::Entry>, timed: bool) {
        self.plain = None;
        let max_len = entries
            .iter()
            .map(|e| u64::from(e.io.len))
            .max()
            .unwrap_or(0);
        let bytes = entries.iter().map(|e| u64::from(e.io.len)).sum();
        self.replay = Some(Replay {
            entries,
            next: 0,
            due_us: None,
            timed,
            max_len,
            bytes,
        });
    }

    /// read_iolog: when the I/O last returned is due, in µs after the job started.
    #[inline]
    pub fn replay_due_us(&self) -> Option<u64> {
        self.replay.as_ref().and_then(|r| r.due_us)
    }

    #[inline]
    fn pick_ddir(&mut self) -> Ddir {
        match self.mode {
            RwMode::Read | RwMode::RandRead => Ddir::Read,
            RwMode::Write | RwMode::RandWrite => Ddir::Write,
            RwMode::Trim | RwMode::RandTrim | RwMode::TrimWrite | RwMode::RandTrimWrite => {
                Ddir::Trim
            }
            RwMode::ReadWrite | RwMode::RandRw => {
                if self.mix_rng.percent(self.read_pct) {
                    Ddir::Read
                } else {
                    Ddir::Write
                }
            }
        }
    }

    fn start_pass(&mut self) {
        self.pass_done = 0;
        self.passes += 1;
        // Every pass (loop) starts again at the first file, as fio's does.
        self.fidx = 0;
        if let Some(w) = &mut self.window {
            w.reset();
        }
        for f in &mut self.files {
            f.pos = [f.zone; 3];
            f.perm.reset();
            if let Some(t) = &mut f.taken {
                t.fill(0);
            }
        }
    }

    /// The ramp begins: the I/O until its end does not count toward the job's size
    /// (fio runs size, io_size and number_ios after the ramp).
    pub fn begin_ramp(&mut self) {
        self.ramping = Some(self.time_based);
        self.time_based = true;
        self.ios_left = u64::MAX;
    }

    /// The ramp is over: the job's size, loops and number_ios start now.
    pub fn end_ramp(&mut self, o: &JobOptions) {
        if let Some(tb) = self.ramping.take() {
            self.time_based = tb;
            self.total_left = self.total_bytes;
            self.ios_left = Some(o.number_ios).filter(|&n| n > 0).unwrap_or(u64::MAX);
        }
    }

    /// The job has issued everything it should (size, io_size × loops, number_ios).
    pub fn finished(&self) -> bool {
        if let Some(r) = &self.replay {
            return r.next >= r.entries.len();
        }
        (self.ios_left == 0 || (!self.time_based && self.total_left == 0))
            && self.pending_write.is_none()
            && self.zbd_held.is_none()
    }

    /// Which of the job's `loops` the last I/O belongs to (0 first). A time_based job
    /// runs one loop however often it wraps, as in fio.
    pub fn loop_of_last_io(&self) -> u64 {
        if self.time_based {
            return 0;
        }
        let consumed = self.total_bytes - self.total_left;
        consumed.saturating_sub(1) / self.loop_bytes
    }

    /// The current pass over the files is complete (the next I/O starts a loop).
    pub fn pass_complete(&self) -> bool {
        self.pass_done >= self.pass_bytes && self.pending_write.is_none() && self.zbd_held.is_none()
    }

    /// The next I/O, or None when the job has issued all it should.
    #[inline]
    pub fn next_io(&mut self) -> Option<Io> {
        if let Some(p) = self.plain {
            return self.next_plain(p, true);
        }
        self.next_general()
    }

    /// Whether every I/O is the [`Plain`] case (see [`Self::next_plain_io`]).
    pub fn is_plain(&self) -> bool {
        self.plain.is_some()
    }

    /// [`Self::next_io`] of a workload that [`Self::is_plain`], alone. A caller that
    /// knows this (a loop compiled for it) keeps the I/O in registers: merged with the
    /// general case's result, which comes back through memory, it is written to the
    /// stack a field at a time and read back a word at a time, and the CPU stalls on
    /// that (a store-forwarding failure) on every I/O.
    #[inline(always)]
    pub fn next_plain_io(&mut self) -> Option<Io> {
        let p = self.plain?;
        self.next_plain(p, true)
    }

    /// Every case but [`Plain`], out of line: its size must not cost the common case
    /// (registers saved, code fetched) on every I/O.
    #[inline(never)]
    fn next_general(&mut self) -> Option<Io> {
        if self.ranges.is_some() {
            return self.next_ranged();
        }
        if let Some(io) = self.zbd_held.take() {
            // trimwrite's write (its trims alone are drawn) was counted with its trim.
            if self.mode.trims() && io.ddir == Ddir::Write {
                return self.zoned(io);
            }
            let io = self.zoned_or_next_pass(io)?;
            self.account(io);
            return Some(io);
        }
        if let Some(r) = self.replay.as_mut() {
            let e = *r.entries.get(r.next)?;
            r.next += 1;
            r.due_us = e.at_us.filter(|_| r.timed);
            self.last = e.io;
            return Some(e.io);
        }
        // trimwrite: a trim and its write count as one of number_ios, as in fio.
        if let Some(w) = self.pending_write.take() {
            // zonemode=zbd: at the zone's write pointer (its trim has reset it).
            return self.zoned(w);
        }
        if self.ios_left == 0 {
            return None;
        }
        // As fio: a sync is issued before the next I/O, so none follows the last write.
        if !self.time_based && self.total_left == 0 {
            return None;
        }
        if let Some(s) = self.sync_due() {
            return Some(s);
        }
        if self.pass_done >= self.pass_bytes && !self.passes_by_position() {
            self.start_pass();
        }
        let io = if self.repeat_left > 0 {
            self.repeat_left -= 1;
            self.repeat()
        } else {
            self.repeat_left = self.per_offset - 1;
            self.fresh()?
        };
        let io = self.zoned_or_next_pass(io)?;
        self.account(io);
        Some(io)
    }

    /// [`Plain`]: what `next_io`, `fresh` and `account` do for that case, alone.
    #[inline(always)]
    /// `draw`: draw the offset (false only for NOPs, which have none).
    fn next_plain(&mut self, p: Plain, draw: bool) -> Option<Io> {
        if self.ios_left == 0 || (!self.time_based && self.total_left == 0) {
            return None;
        }
        if self.pass_done >= self.pass_bytes {
            self.start_pass();
        }
        let io = Io {
            ddir: p.ddir,
            file: 0,
            offset: match draw {
                true => p.start + self.off_rng.below(p.blocks) * u64::from(p.len),
                false => p.start,
            },
            len: p.len,
            verify: false,
        };
        self.ios_left -= 1;
        self.pass_done += u64::from(p.len);
        self.total_left = self.total_left.saturating_sub(u64::from(p.len));
        self.last = io;
        Some(io)
    }

    fn account(&mut self, io: Io) {
        self.ios_left -= 1;
        let n = io.len as u64;
        self.pass_done += n;
        self.total_left = self.total_left.saturating_sub(n);
        self.last = io;
        if io.ddir == Ddir::Write {
            self.writes_since_sync += 1;
            if self.range_every > 0 {
                let end = io.offset + io.len as u64;
                self.written = Some(match self.written {
                    Some((lo, hi)) => (lo.min(io.offset), hi.max(end)),
                    None => (io.offset, end),
                });
            }
        }
        if io.ddir == Ddir::Trim && matches!(self.mode, RwMode::TrimWrite | RwMode::RandTrimWrite) {
            self.pending_write = Some(Io {
                ddir: Ddir::Write,
                ..io
            });
            self.writes_since_sync += 1;
        }
    }

    #[inline]
    fn sync_due(&mut self) -> Option<Io> {
        if self.sync_every == 0 || self.writes_since_sync < self.sync_every {
            return None;
        }
        self.writes_since_sync = 0;
        // sync_file_range: the span written since the last one (len 0: to the end of
        // the file, when the span does not fit).
        let (offset, len) = match self.written.take() {
            Some((lo, hi)) => (lo, u32::try_from(hi - lo).unwrap_or(0)),
            None => (0, 0),
        };
        Some(Io {
            ddir: self.sync_ddir,
            file: self.last.file,
            offset,
            len,
            verify: false,
        })
    }

    /// The sizes of the files (from their start), where holed sequential I/O wraps.
    pub fn set_file_ends(&mut self, ends: &[u64]) {
        for (f, &e) in self.files.iter_mut().zip(ends) {
            f.wrap_at = e.max(f.len);
        }
    }
}
