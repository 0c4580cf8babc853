//! Where the next fresh I/O goes: which file (file_service_type), which direction and
//! size, and which offset — sequential per direction with holes, random over a block
//! permutation or not (norandommap), with distributions and zones.

use super::io::Io;
use super::rng::Rng;
use super::Workload;
use ioscope_engine::Ddir;
use ioscope_options::FileService;

impl Workload {
    fn choose_file(&mut self) -> usize {
        let n = self.files.len();
        if n == 1 {
            return 0;
        }
        if self.window.is_some() {
            return self.choose_in_window();
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

    /// openfiles: file_service_type's choice among the files in the window.
    #[cold]
    #[inline(never)]
    fn choose_in_window(&mut self) -> usize {
        let Some(w) = self.window.as_deref_mut().filter(|w| w.len() > 0) else {
            // The pass is over (the window emptied): the caller's loop finds no I/O.
            return self.fidx;
        };
        match self.file_service {
            FileService::RoundRobin => w.round_robin(),
            FileService::Random => {
                let i = self.mix_rng.below(w.len() as u64) as usize;
                w.at(i)
            }
            FileService::Sequential => w.at(0),
        }
    }

    /// openfiles: file `fi` has no more I/O in this pass; the next comes in.
    #[cold]
    #[inline(never)]
    fn window_done(&mut self, fi: usize) {
        if let Some(w) = self.window.as_deref_mut() {
            w.done(fi);
        }
    }

    /// A new I/O's direction, whether its offset is random, its length, and which
    /// block-size choice gave it.
    #[inline]
    fn pick_shape(&mut self) -> (Ddir, bool, u64, usize) {
        let ddir = self.pick_ddir();
        let d = ddir.index();
        let random = self.mode.is_random() && self.mix_rng.percent(self.random_pct[d]);
        let b = if self.bs_by_randomness {
            usize::from(random)
        } else {
            d
        };
        (ddir, random, self.bs[b].pick(&mut self.bs_rng), b)
    }

    /// `len`, or when it runs past the end of the file (`room` bytes left): for a
    /// sequential I/O the largest size of choice `b` that fits, 0 when none does (fio
    /// issues no sequential I/O that does not fit); a random one is cut at the end, as
    /// is a sequential one writing zone remainders (zonemode=zbd, write_zone_remainder).
    #[inline(always)]
    fn fitting(&self, len: u64, room: u64, b: usize, random: bool) -> u64 {
        if len <= room {
            len
        } else {
            self.fit_short(room, b, random)
        }
    }

    #[cold]
    #[inline(never)]
    fn fit_short(&self, room: u64, b: usize, random: bool) -> u64 {
        if random || self.zbd.as_deref().is_some_and(|z| z.writes_remainders()) {
            room
        } else {
            self.bs[b].largest_within(room).unwrap_or(0)
        }
    }

    /// zonemode=strided's offsets, out of the common path: the zone moves on when it
    /// has had its bytes; random offsets stay in the zone. A zone cut off by the end
    /// of the file ends the job, as in fio; a time_based job starts the zone again.
    #[cold]
    #[inline(never)]
    fn fresh_zoned(&mut self) -> Option<Io> {
        let (ddir, random, len, _) = self.pick_shape();
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
    pub(super) fn fresh(&mut self) -> Option<Io> {
        if self.zones.is_some() {
            return self.fresh_zoned();
        }
        let (ddir, random, len, b) = self.pick_shape();
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
                let len = self.fitting(len, f.start + f.len - off, b, random);
                let len = self.claim(fi, off, len, random);
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
            // This file is exhausted for this pass; sequential service moves on
            // (with openfiles, the next file takes its place in the window).
            self.fidx = (fi + 1) % n;
            if self.window.is_some() {
                self.window_done(fi);
            }
        }
        self.next_pass_early()?;
        let fi = self.choose_file();
        let off = if random {
            self.random_offset(fi, d)?
        } else {
            self.seq_offset(fi, d, len)?
        };
        let f = &self.files[fi];
        let len = self.fitting(len, f.start + f.len - off, b, random);
        let len = self.claim(fi, off, len, random);
        if len == 0 {
            // Not even a new pass has room for a block: the job is done.
            return None;
        }
        Some(Io {
            ddir,
            file: fi as u32,
            offset: off,
            len: len as u32,
            verify: false,
        })
    }

    /// Every file exhausted before the pass's bytes were done (holes in rw=read:8k
    /// skip bytes; zonemode=zbd has no data or room for an I/O): the pass is over, and
    /// as in fio the bytes left count as done unless io_size or time_based asks for
    /// more. None: the job is done; else the next pass has begun.
    pub(super) fn next_pass_early(&mut self) -> Option<()> {
        if !self.time_based && !self.io_size_set {
            let skipped = self.pass_bytes.saturating_sub(self.pass_done);
            self.total_left = self.total_left.saturating_sub(skipped);
            if self.total_left == 0 {
                return None;
            }
        }
        self.start_pass();
        Some(())
    }

    /// With the random map and I/Os larger than a block: take the blocks the random
    /// I/O at `off` covers, cut short where a block an earlier I/O took begins (as fio
    /// does: every block is done once, and the pass's bytes are the region's).
    #[inline(always)]
    fn claim(&mut self, fi: usize, off: u64, len: u64, random: bool) -> u64 {
        if !random || self.files[fi].taken.is_none() || len == 0 {
            return len;
        }
        self.claim_run(fi, off, len)
    }

    #[cold]
    #[inline(never)]
    fn claim_run(&mut self, fi: usize, off: u64, len: u64) -> u64 {
        let grain = self.grain;
        let f = &mut self.files[fi];
        let first = (off - f.start) / grain;
        let n = f.take_run(first, len.div_ceil(grain));
        len.min(n * grain)
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
            None if self.use_perm && !self.norandommap => loop {
                // Blocks a larger I/O covered are not drawn again.
                let b = f.perm.next_block()?;
                if !f.is_taken(b) {
                    break b;
                }
            },
            None if self.use_perm => match self.spr.as_deref_mut() {
                Some(s) => s.next_block(),
                None => f.perm.next_block().or_else(|| {
                    f.perm.reset();
                    f.perm.next_block()
                })?,
            },
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

    pub(super) fn repeat(&mut self) -> Io {
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
}
