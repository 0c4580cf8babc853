//! What I/O comes next: direction (rw, rwmixread, trimwrite), block size (bs, bsrange,
//! bssplit), file (file_service_type), offset (sequential per direction with holes,
//! random over a block permutation, norandommap, distributions, percentage_random,
//! rw=...:N), fsync/fdatasync cadence, passes (loops, io_size, time_based) and limits
//! (number_ios). One call per I/O; no allocation.

pub(crate) mod blockmap;
pub(crate) mod dist;
pub(crate) mod io;
pub(crate) mod replay;
pub(crate) mod rng;
pub(crate) mod zones;

pub(crate) use io::Io;

use blockmap::BlockPermutation;
use dist::RankDist;
use ioscope_engine::Ddir;
use ioscope_options::{FileService, JobOptions, RandomGenerator, RwMode, RwSequencer};
use rng::{Rng, Taus258, Taus88};
use zones::StridedZones;

/// Block-size choice for one direction.
#[derive(Clone, Debug)]
enum BsChoice {
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
    fn min(&self) -> u64 {
        match self {
            BsChoice::Fixed(b) => *b,
            BsChoice::Range { lo, .. } => *lo,
            BsChoice::Split { table, .. } => table.iter().map(|t| t.1).min().unwrap_or(4096),
        }
    }
    fn max(&self) -> u64 {
        match self {
            BsChoice::Fixed(b) => *b,
            BsChoice::Range { hi, .. } => *hi,
            BsChoice::Split { table, .. } => table.iter().map(|t| t.1).max().unwrap_or(4096),
        }
    }
    #[inline(always)]
    fn pick(&self, rng: &mut Taus88) -> u64 {
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

fn bs_choices(o: &JobOptions) -> [BsChoice; 3] {
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

/// Per-file walk state.
#[derive(Clone, Debug)]
struct FileWalk {
    start: u64,
    len: u64,
    /// Next sequential offset per direction, relative to start.
    pos: [u64; 3],
    blocks: u64,
    perm: BlockPermutation,
    /// zonemode=strided: start of the current zone, relative to start.
    zone: u64,
    /// Where holed sequential I/O (rw=write:112k) wraps back to the start: the end of
    /// the file, relative to start (fio compares with the file's size, not the region's).
    wrap_at: u64,
}

/// The offset generator's uniform source (random_generator=).
#[derive(Clone, Debug)]
enum OffsetRng {
    T88(Taus88),
    T258(Taus258),
}

impl Rng for OffsetRng {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        match self {
            OffsetRng::T88(r) => r.next_u64(),
            OffsetRng::T258(r) => r.next_u64(),
        }
    }
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        match self {
            OffsetRng::T88(r) => r.next_u32(),
            OffsetRng::T258(r) => (r.next_u64() >> 32) as u32,
        }
    }
}

/// How often the job syncs and how: fsync, else fdatasync, else sync_file_range (as a
/// DataSync unit the job turns into sync_file_range).
fn sync_cadence(o: &JobOptions) -> (u32, Ddir) {
    if o.fsync > 0 {
        (o.fsync, Ddir::Sync)
    } else if o.fdatasync > 0 {
        (o.fdatasync, Ddir::DataSync)
    } else {
        (o.sync_file_range.map_or(0, |r| r.every), Ddir::DataSync)
    }
}

/// read_iolog's I/Os and where the replay is.
struct Replay {
    entries: Vec<crate::workload::replay::Entry>,
    next: usize,
    due_us: Option<u64>,
    timed: bool,
    max_len: u64,
    bytes: u64,
}

/// The most common workload in one step: one file, one direction, uniformly random
/// offsets without a map, one block size, and nothing else to decide per I/O
/// (`rw=randread bs=4k norandommap`). The same offsets as the general path, from the
/// same generator, in a fraction of its instructions.
#[derive(Clone, Copy, Debug)]
struct Plain {
    ddir: Ddir,
    len: u32,
    start: u64,
    /// Offsets are `start + k * len` for k below `blocks` (the grain is the length).
    blocks: u64,
}

/// The I/O sequence of one job.
pub struct Workload {
    /// The common case's shortcut, when the job is that case.
    plain: Option<Plain>,
    files: Vec<FileWalk>,
    fidx: usize,
    file_service: FileService,
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
    /// `regions`: (start, len) of each file; `seed` distinguishes jobs.
    pub fn new(o: &JobOptions, regions: &[(u64, u64)], seed: u64) -> Workload {
        let bs = bs_choices(o);
        let grain = grain(o, &bs);
        let files: Vec<FileWalk> = regions
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
                }
            })
            .collect();
        let pass_bytes: u64 = files.iter().map(|f| f.len).sum();
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
            use_perm: !o.norandommap || o.random_generator == RandomGenerator::Lfsr,
            norandommap: o.norandommap,
            dist,
            files,
            fidx: 0,
            file_service: o.file_service_type,
            mode: o.rw.mode,
            read_pct: o.rwmixread,
            bs,
            bs_by_randomness: o.bs_is_seq_rand,
            replay: None,
            zones: StridedZones::new(o, grain, seed).map(Box::new),
            recorder: None,
            grain,
            random_pct: o.percentage_random.0,
            hole: o.rw.hole,
            per_offset: o.rw.nr.max(1),
            identical: o.rw_sequencer == RwSequencer::Identical,
            off_rng,
            mix_rng: Taus88::new(seed ^ 0x004D_4958),
            bs_rng: Taus88::new(seed ^ 0x4253),
            pass_bytes,
            pass_done: 0,
            total_left: io_size.saturating_mul(o.loops.max(1) as u64),
            loop_bytes: io_size.max(1),
            total_bytes: io_size.saturating_mul(o.loops.max(1) as u64),
            time_based: o.time_based,
            io_size_set: o.io_size.is_some(),
            ios_left: if o.number_ios > 0 {
                o.number_ios
            } else {
                u64::MAX
            },
            repeat_left: 0,
            last: Io {
                ddir: Ddir::Read,
                file: 0,
                offset: 0,
                len: 0,
                verify: false,
            },
            pending_write: None,
            sync_every: sync_cadence(o).0,
            sync_ddir: sync_cadence(o).1,
            writes_since_sync: 0,
            range_every: match sync_cadence(o) {
                (n, _) if o.fsync == 0 && o.fdatasync == 0 => n,
                _ => 0,
            },
            written: None,
            passes: 0,
        };
        w.plain = w.plain_case();
        w
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
        for f in &mut self.files {
            f.pos = [f.zone; 3];
            f.perm.reset();
        }
    }

    /// The job has issued everything it should (size, io_size × loops, number_ios).
    pub fn finished(&self) -> bool {
        if let Some(r) = &self.replay {
            return r.next >= r.entries.len();
        }
        self.ios_left == 0
            || (!self.time_based && self.total_left == 0 && self.pending_write.is_none())
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
        self.pass_done >= self.pass_bytes && self.pending_write.is_none()
    }

    /// The next I/O, or None when the job has issued all it should.
    #[inline]
    pub fn next_io(&mut self) -> Option<Io> {
        if let Some(p) = self.plain {
            return self.next_plain(p);
        }
        if let Some(r) = self.replay.as_mut() {
            let e = *r.entries.get(r.next)?;
            r.next += 1;
            r.due_us = e.at_us.filter(|_| r.timed);
            self.last = e.io;
            return Some(e.io);
        }
        if self.ios_left == 0 {
            return None;
        }
        if let Some(w) = self.pending_write.take() {
            self.ios_left -= 1;
            return Some(w);
        }
        // As fio: a sync is issued before the next I/O, so none follows the last write.
        if !self.time_based && self.total_left == 0 {
            return None;
        }
        if let Some(s) = self.sync_due() {
            return Some(s);
        }
        if self.pass_done >= self.pass_bytes {
            self.start_pass();
        }
        let io = if self.repeat_left > 0 {
            self.repeat_left -= 1;
            self.repeat()
        } else {
            self.repeat_left = self.per_offset - 1;
            self.fresh()?
        };
        self.account(io);
        Some(io)
    }

    /// [`Plain`]: what `next_io`, `fresh` and `account` do for that case, alone.
    #[inline(always)]
    fn next_plain(&mut self, p: Plain) -> Option<Io> {
        if self.ios_left == 0 || (!self.time_based && self.total_left == 0) {
            return None;
        }
        if self.pass_done >= self.pass_bytes {
            self.start_pass();
        }
        let io = Io {
            ddir: p.ddir,
            file: 0,
            offset: p.start + self.off_rng.below(p.blocks) * u64::from(p.len),
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
        if matches!(self.mode, RwMode::TrimWrite | RwMode::RandTrimWrite) {
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

    fn repeat(&mut self) -> Io {
        let mut io = self.last;
        if !self.identical {
            let f = &self.files[io.file as usize];
            io.offset += io.len as u64;
            if io.offset + io.len as u64 > f.start + f.len {
                io.offset = f.start;
            }
        }
        io
    }

    fn choose_file(&mut self) -> usize {
        let n = self.files.len();
        if n == 1 {
            return 0;
        }
        match self.file_service {
            // As fio: the first file first, then each in turn.
            FileService::RoundRobin => {
                let f = self.fidx;
                self.fidx = (f + 1) % n;
                f
            }
            FileService::Random => {
                self.fidx = self.mix_rng.below(n as u64) as usize;
                self.fidx
            }
            FileService::Sequential => self.fidx,
        }
    }

    /// A new I/O's direction, whether its offset is random, and its length.
    #[inline]
    fn pick_shape(&mut self) -> (Ddir, bool, u64) {
        let ddir = self.pick_ddir();
        let d = ddir.index();
        let random = self.mode.is_random() && self.mix_rng.percent(self.random_pct[d]);
        let b = if self.bs_by_randomness {
            usize::from(random)
        } else {
            d
        };
        (ddir, random, self.bs[b].pick(&mut self.bs_rng))
    }

    /// zonemode=strided's offsets, out of the common path: the zone moves on when it
    /// has had its bytes; random offsets stay in the zone. A zone cut off by the end
    /// of the file ends the job, as in fio; a time_based job starts the zone again.
    #[cold]
    #[inline(never)]
    fn fresh_zoned(&mut self) -> Option<Io> {
        let (ddir, random, len) = self.pick_shape();
        let d = ddir.index();
        let fi = self.choose_file();
        for _ in 0..2 {
            let z = self.zones.as_deref_mut()?;
            let f = &mut self.files[fi];
            z.before_io(&mut f.zone, &mut f.pos, f.len);
            let got = if random {
                let rng = &mut self.off_rng;
                let off = z.random(f.zone, self.norandommap, |n| rng.below(n));
                f.pos[d] = off + self.grain;
                (off < f.len).then_some(f.start + off)
            } else {
                self.seq_offset(fi, d, len)
            };
            if let Some(off) = got {
                let f = &self.files[fi];
                let len = len.min(f.start + f.len - off);
                if let Some(z) = self.zones.as_deref_mut() {
                    z.issued(len);
                }
                return Some(Io {
                    ddir,
                    file: fi as u32,
                    offset: off,
                    len: len as u32,
                    verify: false,
                });
            }
            if !self.time_based {
                return None;
            }
            let f = &mut self.files[fi];
            f.pos = [f.zone; 3];
        }
        None
    }

    /// A new offset: random or sequential per the pattern and percentage_random.
    #[inline]
    fn fresh(&mut self) -> Option<Io> {
        if self.zones.is_some() {
            return self.fresh_zoned();
        }
        let (ddir, random, len) = self.pick_shape();
        let d = ddir.index();
        let n = self.files.len();
        for _ in 0..n {
            let fi = self.choose_file();
            let got = if random {
                self.random_offset(fi, d)
            } else {
                self.seq_offset(fi, d, len)
            };
            if let Some(off) = got {
                let f = &self.files[fi];
                let end = f.start + f.len;
                let len = len.min(end - off);
                if len > 0 {
                    return Some(Io {
                        ddir,
                        file: fi as u32,
                        offset: off,
                        len: len as u32,
                        verify: false,
                    });
                }
            }
            // This file is exhausted for this pass; sequential service moves on.
            self.fidx = (fi + 1) % n;
        }
        // Every file exhausted before the byte count (holes in rw=read:8k skip
        // bytes): the pass is over, and like fio the skipped bytes count as done.
        if !self.time_based && !self.io_size_set {
            let skipped = self.pass_bytes.saturating_sub(self.pass_done);
            self.total_left = self.total_left.saturating_sub(skipped);
            if self.total_left == 0 {
                return None;
            }
        }
        self.start_pass();
        let fi = self.choose_file();
        let off = if random {
            self.random_offset(fi, d)?
        } else {
            self.seq_offset(fi, d, len)?
        };
        let f = &self.files[fi];
        let len = len.min(f.start + f.len - off).max(1);
        Some(Io {
            ddir,
            file: fi as u32,
            offset: off,
            len: len as u32,
            verify: false,
        })
    }

    #[inline]
    fn random_offset(&mut self, fi: usize, d: usize) -> Option<u64> {
        let grain = self.grain;
        let f = &mut self.files[fi];
        let block = match &self.dist {
            Some(dist) => {
                let (b, placed) = dist.draw(&mut self.off_rng, f.blocks, d);
                if placed {
                    b
                } else {
                    f.perm.map(b)
                }
            }
            None if self.use_perm && !self.norandommap => f.perm.next_block()?,
            None if self.use_perm => f.perm.next_block().or_else(|| {
                f.perm.reset();
                f.perm.next_block()
            })?,
            None => self.off_rng.below(f.blocks),
        };
        let off = f.start + block * grain;
        f.pos[d] = off - f.start + grain;
        Some(off)
    }

    #[inline]
    fn seq_offset(&mut self, fi: usize, d: usize, len: u64) -> Option<u64> {
        let f = &mut self.files[fi];
        let rel = f.pos[d];
        if rel >= f.len {
            return None;
        }
        let end = rel + len;
        let next = end as i64 + self.hole;
        f.pos[d] = if next < 0 {
            // Backwards patterns (rw=read:-8k) wrap as fio's do: from the end of the
            // region, the hole applied again (64k: 0, then 56k, 52k, … down to 0).
            (f.len as i64 + self.hole).max(0) as u64
        } else if self.hole > 0 && end < f.wrap_at && next as u64 >= f.wrap_at {
            // A hole that runs past the end of the file wraps to the start, and the
            // pass goes on until its bytes are done (fio: rw=write:112k, bs=16k on
            // 4 MiB writes 4 MiB, the same blocks again). An I/O that ends exactly at
            // the end of the file ends the pass instead (rw=read:8k, bs=4k on 64k).
            0
        } else {
            next as u64
        };
        Some(f.start + rel)
    }

    /// The sizes of the files (from their start), where holed sequential I/O wraps.
    pub fn set_file_ends(&mut self, ends: &[u64]) {
        for (f, &e) in self.files.iter_mut().zip(ends) {
            f.wrap_at = e.max(f.len);
        }
    }
}

/// The offset grain: blockalign, or the smallest block size of the directions used.
fn grain(o: &JobOptions, bs: &[BsChoice; 3]) -> u64 {
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

#[cfg(test)]
mod tests {
    use super::*;
    use ioscope_options::spec::defaults;

    fn opts(f: impl FnOnce(&mut JobOptions)) -> JobOptions {
        let mut o = defaults().clone();
        f(&mut o);
        o
    }

    fn all(w: &mut Workload) -> Vec<Io> {
        std::iter::from_fn(|| w.next_io())
            .take(10_000_000)
            .collect()
    }

    /// The common case's shortcut issues what the general path issues: the same
    /// offsets from the same generator, the same counts, loops and ends.
    #[test]
    fn the_plain_shortcut_matches_the_general_path() {
        for (mode, loops, number_ios, time_based) in [
            (RwMode::RandRead, 1, 0, false),
            (RwMode::RandWrite, 3, 0, false),
            (RwMode::RandTrim, 1, 37, false),
            (RwMode::RandRead, 1, 0, true),
        ] {
            let o = opts(|o| {
                o.rw.mode = mode;
                o.norandommap = true;
                o.loops = loops;
                o.number_ios = number_ios;
                o.time_based = time_based;
            });
            let mut fast = Workload::new(&o, &[(8192, 256 * 1024 + 100)], 7);
            assert!(fast.plain.is_some(), "{mode:?} takes the shortcut");
            let mut slow = Workload::new(&o, &[(8192, 256 * 1024 + 100)], 7);
            slow.plain = None;
            let (a, b): (Vec<Io>, Vec<Io>) = if time_based {
                let a = (0..1000).map_while(|_| fast.next_io()).collect();
                let b = (0..1000).map_while(|_| slow.next_io()).collect();
                (a, b)
            } else {
                (all(&mut fast), all(&mut slow))
            };
            assert_eq!(a, b, "{mode:?}");
            assert_eq!(fast.passes, slow.passes);
            assert_eq!(fast.finished(), slow.finished());
            assert!(a
                .iter()
                .all(|io| io.offset >= 8192 && io.offset + 4096 <= 8192 + 256 * 1024));
        }
        // Not the common case: the general path alone.
        for f in [
            |o: &mut JobOptions| o.norandommap = false,
            |o: &mut JobOptions| o.fsync = 4,
            |o: &mut JobOptions| o.rw.mode = RwMode::RandRw,
        ] {
            let o = opts(|o| {
                o.rw.mode = RwMode::RandRead;
                o.norandommap = true;
                f(o);
            });
            assert!(Workload::new(&o, &[(0, 65536)], 1).plain.is_none());
        }
    }

    #[test]
    fn sequential_read() {
        let o = opts(|_| {});
        let v = all(&mut Workload::new(&o, &[(0, 64 * 1024)], 1));
        assert_eq!(v.len(), 16);
        assert!(v
            .iter()
            .enumerate()
            .all(|(i, io)| io.offset == i as u64 * 4096 && io.len == 4096));
    }

    #[test]
    fn random_map_covers_each_block_once() {
        let o = opts(|o| o.rw.mode = RwMode::RandWrite);
        let v = all(&mut Workload::new(&o, &[(0, 1 << 20)], 7));
        assert_eq!(v.len(), 256);
        let mut offs: Vec<u64> = v.iter().map(|i| i.offset).collect();
        offs.sort_unstable();
        offs.dedup();
        assert_eq!(offs.len(), 256);
    }

    #[test]
    fn norandommap_repeats() {
        let o = opts(|o| {
            o.rw.mode = RwMode::RandRead;
            o.norandommap = true;
        });
        let v = all(&mut Workload::new(&o, &[(0, 4 << 20)], 7));
        assert_eq!(v.len(), 1024);
        let mut offs: Vec<u64> = v.iter().map(|i| i.offset).collect();
        offs.sort_unstable();
        offs.dedup();
        assert!(
            offs.len() < 1024,
            "no repeats without the random map is wildly unlikely"
        );
    }

    #[test]
    fn mixed_io_size_loops_number_ios() {
        let o = opts(|o| {
            o.rw.mode = RwMode::RandRw;
            o.rwmixread = 70;
            o.loops = 2;
        });
        let v = all(&mut Workload::new(&o, &[(0, 4 << 20)], 3));
        assert_eq!(v.len(), 2048);
        let reads = v.iter().filter(|i| i.ddir == Ddir::Read).count();
        assert!((1300..1560).contains(&reads), "{reads}");
        let o = opts(|o| o.number_ios = 10);
        assert_eq!(all(&mut Workload::new(&o, &[(0, 4 << 20)], 3)).len(), 10);
        let o = opts(|o| o.io_size = Some(ioscope_options::SizePct::Bytes(12 << 20)));
        assert_eq!(all(&mut Workload::new(&o, &[(0, 4 << 20)], 3)).len(), 3072);
    }

    /// Holes past the end of the file: fio 3.33's offsets (its write_iolog) for these
    /// jobs. An I/O that ends at the end of the file ends the pass; a hole that runs
    /// past it wraps to the start and the pass goes on until its bytes are done.
    #[test]
    fn holes_wrap_or_end_the_pass_as_fios_do() {
        let holed = |hole: i64, mode: RwMode| {
            opts(move |o| {
                o.rw = ioscope_options::RwSpec { mode, nr: 1, hole };
            })
        };
        let offs = |o: &JobOptions, size: u64| -> Vec<u64> {
            all(&mut Workload::new(o, &[(0, size)], 1))
                .iter()
                .map(|i| i.offset >> 10)
                .collect()
        };
        // read:8k on 64k: the sixth read ends at 64k; 24k read in all.
        assert_eq!(
            offs(&holed(8192, RwMode::Read), 64 << 10),
            [0, 12, 24, 36, 48, 60]
        );
        // read:4k: 56k+4k+4k reaches 64k: back to 0 until 64k are read.
        let v = offs(&holed(4096, RwMode::Read), 64 << 10);
        assert_eq!(v.len(), 16);
        assert_eq!(&v[..9], [0, 8, 16, 24, 32, 40, 48, 56, 0]);
        // cross-stripe-verify's write:112k with 16k blocks on 4 MiB: 4 MiB written, the
        // 32 blocks at 128k strides eight times over.
        let mut o = holed(112 << 10, RwMode::Write);
        o.bs = ioscope_options::PerDir([16 << 10; 3]);
        let v = offs(&o, 4 << 20);
        assert_eq!(v.len(), 256);
        assert!(v.chunks(32).all(|c| c == &v[..32]), "{:?}", &v[..40]);
        // A file larger than the region: the hole passes the region's end first, and
        // the pass ends there (fio wraps only at the end of the file).
        let o = holed(4096, RwMode::Read);
        let mut w = Workload::new(&o, &[(0, 64 << 10)], 1);
        w.set_file_ends(&[1 << 20]);
        assert_eq!(all(&mut w).len(), 8);
    }

    #[test]
    fn backwards_and_fsync() {
        let o = opts(|o| {
            o.rw = ioscope_options::RwSpec {
                mode: RwMode::Read,
                nr: 1,
                hole: -8192,
            }
        });
        let v = all(&mut Workload::new(&o, &[(0, 16384)], 1));
        // fio 3.33's offsets for this job (its write_iolog): 0, 8k, 4k, 0.
        let offs: Vec<u64> = v.iter().map(|i| i.offset).collect();
        assert_eq!(offs, [0, 8192, 4096, 0]);
        let o = opts(|o| {
            o.rw.mode = RwMode::Write;
            o.fsync = 2;
        });
        let v = all(&mut Workload::new(&o, &[(0, 16384)], 1));
        // 4 writes, a sync after the second; none after the last (as fio).
        assert_eq!(v.iter().filter(|i| i.ddir == Ddir::Sync).count(), 1);
        // sync_file_range: over what was written since the last one.
        let o = opts(|o| {
            o.rw.mode = RwMode::Write;
            o.sync_file_range = Some(ioscope_options::SyncFileRange { flags: 2, every: 2 });
        });
        let v = all(&mut Workload::new(&o, &[(0, 24576)], 1));
        let syncs: Vec<(u64, u32)> = v
            .iter()
            .filter(|i| i.ddir == Ddir::DataSync)
            .map(|i| (i.offset, i.len))
            .collect();
        assert_eq!(syncs, [(0, 8192), (8192, 8192)]);
    }
}
