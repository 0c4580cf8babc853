//! I/O buffers: one aligned region per job (one slot per I/O unit), filled once as the
//! job asks (random data, zeros, a pattern, compressible data), and refreshed before
//! writes when refill_buffers or scramble_buffers ask for it.

use crate::workload::rng::splitmix;
use ioscope_options::{DedupeMode, JobOptions};

/// How write buffers are refreshed per write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refresh {
    None,
    /// Change 8 bytes per 512-byte sector so blocks never deduplicate.
    Scramble,
    /// New random content every write.
    Refill,
}

pub struct Buffers {
    ptr: *mut u8,
    mem: crate::setup::iomem::IoMem,
    pub slot: usize,
    pub refresh: Refresh,
    compress_pct: u32,
    compress_chunk: usize,
    /// dedupe_percentage: this share of writes repeat the previous write's content.
    dedupe_pct: u32,
    /// dedupe_mode=working_set: the number of buffers in the working set (0: repeat
    /// mode) and how many unique writes have filled it so far.
    working_set: u64,
    uniques: u64,
    last_seed: u64,
    dedupe_rng: crate::workload::rng::Taus88,
    /// The working set's buffers are seeded from this.
    base_seed: u64,
    /// dedupe_global: (this job's index, jobs in the run); (0, 0) when not shared.
    global: (u64, u64),
    seed: u64,
}

// SAFETY: the region is owned by one job thread at a time.
unsafe impl Send for Buffers {}

impl Buffers {
    /// `data_bytes`: the size of the job's files, of which dedupe_working_set_percentage
    /// is the working set.
    pub fn new(
        o: &JobOptions,
        units: usize,
        max_bs: usize,
        seed: u64,
        data_bytes: u64,
    ) -> Result<Buffers, String> {
        let align = (o.iomem_align as usize).max(4096).next_power_of_two();
        let slot = max_bs.div_ceil(align) * align;
        let size = slot
            .checked_mul(units.max(1))
            .ok_or("buffer size overflows")?;
        let mem = crate::setup::iomem::IoMem::new(o, size, align)?;
        let ptr = mem.ptr;
        let refresh = if o.zero_buffers || o.buffer_pattern.is_some() {
            Refresh::None
        } else if o.refill_buffers || o.dedupe_percentage > 0 {
            Refresh::Refill
        } else if o.scramble_buffers {
            Refresh::Scramble
        } else {
            Refresh::None
        };
        let mut b = Buffers {
            ptr,
            mem,
            slot,
            refresh,
            compress_pct: o.buffer_compress_percentage,
            compress_chunk: (o.buffer_compress_chunk as usize).clamp(64, 1 << 20),
            dedupe_pct: o.dedupe_percentage,
            working_set: working_set(o, data_bytes),
            uniques: 0,
            last_seed: seed,
            dedupe_rng: crate::workload::rng::Taus88::new(seed ^ 0xDEDE),
            base_seed: seed ^ 0x5745_5453,
            global: (0, 0),
            seed,
        };
        b.initial_fill(o)?;
        Ok(b)
    }

    pub fn region(&self) -> (*mut u8, usize) {
        (self.ptr, self.mem.len)
    }

    pub fn slot_ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: callers pass i < units; the region holds `units` slots.
        unsafe { self.ptr.add(i * self.slot) }
    }

    /// The first `len` bytes of unit `i`'s slot.
    pub fn slot_mut(&mut self, i: usize, len: usize) -> &mut [u8] {
        let len = len.min(self.slot);
        // SAFETY: slot i lies inside the region, len <= slot size, and &mut self
        // makes the borrow exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), len) }
    }

    fn all(&mut self) -> &mut [u8] {
        // SAFETY: ptr is valid for mem.len bytes and exclusively ours.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.mem.len) }
    }

    fn initial_fill(&mut self, o: &JobOptions) -> Result<(), String> {
        // Reads overwrite the buffers: leave them untouched (and not resident).
        if o.zero_buffers || !o.rw.mode.writes() {
            return Ok(());
        }
        if let Some(p) = &o.buffer_pattern {
            let pat = p.resolve().map_err(|e| format!("buffer_pattern: {e}"))?;
            for (i, b) in self.all().iter_mut().enumerate() {
                *b = pat[i % pat.len()];
            }
            return Ok(());
        }
        let (seed, pct, chunk) = (self.seed, self.compress_pct, self.compress_chunk);
        fill_random(self.all(), seed, pct, chunk);
        Ok(())
    }

    /// Refresh one unit's buffer before a write of `len` bytes.
    #[inline]
    pub fn prepare_write(&mut self, i: usize, len: usize, salt: u64) {
        match self.refresh {
            Refresh::None => {}
            Refresh::Scramble => {
                let p = self.slot_ptr(i);
                let mut off = 0;
                while off + 8 <= len {
                    // SAFETY: off + 8 <= len <= slot size.
                    unsafe { std::ptr::write_unaligned(p.add(off) as *mut u64, salt ^ off as u64) };
                    off += 512;
                }
            }
            Refresh::Refill => {
                let seed = self.content_seed(salt);
                self.last_seed = seed;
                let (pct, chunk) = (self.compress_pct, self.compress_chunk);
                // SAFETY: len <= slot size; the slot is exclusively ours.
                let s = unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), len) };
                fill_random(s, seed, pct, chunk);
            }
        }
    }
}

/// dedupe_mode=working_set: dedupe_working_set_percentage of the data, in blocks of the
/// smallest block size (0 for repeat mode).
fn working_set(o: &JobOptions, data_bytes: u64) -> u64 {
    if o.dedupe_mode != DedupeMode::WorkingSet || o.dedupe_percentage == 0 {
        return 0;
    }
    let bs =
        o.bs.0
            .iter()
            .copied()
            .filter(|&b| b > 0)
            .min()
            .unwrap_or(4096);
    (data_bytes * u64::from(o.dedupe_working_set_percentage) / 100 / bs).max(1)
}

/// dedupe_global: the working sets' contents are the same for every job of the run, so
/// that a job's duplicate can repeat what another job wrote (a run-wide key).
const GLOBAL_SET: u64 = 0x676C_6F62_616C_5753;

impl Buffers {
    /// dedupe_global (fio's): the working set is shared among the run's `jobs` jobs, this
    /// being job `index`. It holds chunks of working_set/jobs buffers: first this job's
    /// own first unique writes, then each other job's in turn, so a duplicate repeats
    /// content this job or another one wrote first.
    pub fn share_working_set(&mut self, index: u32, jobs: u32) {
        if self.working_set > 0 && jobs > 0 {
            self.global = (u64::from(index), u64::from(jobs));
        }
    }

    /// Content `idx` of job `job`'s working set, under dedupe_global.
    fn global_content(job: u64, idx: u64) -> u64 {
        let mut st = GLOBAL_SET ^ (job << 40) ^ idx;
        crate::workload::rng::splitmix(&mut st)
    }

    /// The seed of the next write's content. A duplicate repeats the previous write
    /// (repeat) or one of the working set's buffers, picked at random (working_set);
    /// the first unique writes are the working set, as fio fills it.
    fn content_seed(&mut self, salt: u64) -> u64 {
        use crate::workload::rng::Rng;
        let dup = self.dedupe_rng.percent(self.dedupe_pct);
        if self.global.1 > 0 {
            let (me, jobs) = self.global;
            if dup {
                let chunk = (self.working_set / jobs).max(1);
                let k = self.dedupe_rng.below(self.working_set);
                let owner = (me + k / chunk) % jobs;
                return Self::global_content(owner, k % chunk);
            }
            self.uniques += 1;
            if self.uniques <= self.working_set {
                return Self::global_content(me, self.uniques - 1);
            }
        } else if self.working_set > 0 {
            let k = if dup {
                self.dedupe_rng
                    .below(self.working_set.min(self.uniques.max(1)))
            } else {
                self.uniques += 1;
                self.uniques - 1
            };
            if dup || k < self.working_set {
                let mut st = self.base_seed ^ k;
                return crate::workload::rng::splitmix(&mut st);
            }
        } else if dup {
            return self.last_seed;
        }
        self.seed = self.seed.wrapping_add(salt | 1);
        self.seed
    }
}

/// Random bytes; with compress_pct > 0, that share of each `chunk`-byte piece is zeros
/// (buffer_compress_percentage / buffer_compress_chunk).
fn fill_random(buf: &mut [u8], seed: u64, compress_pct: u32, chunk: usize) {
    let mut st = seed;
    let zero_from = chunk - (chunk * compress_pct as usize / 100);
    for chunk in buf.chunks_mut(chunk) {
        for (i, w) in chunk.chunks_mut(8).enumerate() {
            if compress_pct > 0 && i * 8 >= zero_from {
                w.fill(0);
            } else {
                let v = splitmix(&mut st).to_le_bytes();
                w.copy_from_slice(&v[..w.len()]);
            }
        }
    }
}
