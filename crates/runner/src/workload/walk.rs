//! The state of the walk over the job's files, the offset generators, replay and
//! sync cadence, and the common case's shortcut.

use super::blockmap::BlockPermutation;
use super::rng::{Rng, Taus258, Taus88};
use ioscope_engine::Ddir;
use ioscope_options::JobOptions;

/// Per-file walk state.
#[derive(Clone, Debug)]
pub(super) struct FileWalk {
    pub(super) start: u64,
    pub(super) len: u64,
    /// Next sequential offset per direction, relative to start.
    pub(super) pos: [u64; 3],
    pub(super) blocks: u64,
    pub(super) perm: BlockPermutation,
    /// zonemode=strided: start of the current zone, relative to start.
    pub(super) zone: u64,
    /// Where holed sequential I/O (rw=write:112k) wraps back to the start: the end of
    /// the file, relative to start (fio compares with the file's size, not the region's).
    pub(super) wrap_at: u64,
    /// The random map's blocks an I/O covered (one bit per grain block), when I/Os can
    /// be larger than a block (mixed sizes): a block an earlier I/O covered is not
    /// drawn again, and an I/O is cut short where the next taken block begins.
    pub(super) taken: Option<Vec<u64>>,
}

impl FileWalk {
    /// Whether block `b` was covered by an earlier I/O of this pass.
    #[inline(always)]
    pub(super) fn is_taken(&self, b: u64) -> bool {
        self.taken.as_ref().is_some_and(|t| {
            t.get((b / 64) as usize)
                .is_some_and(|w| w >> (b % 64) & 1 == 1)
        })
    }

    /// Mark the free blocks from `first` on, at most `want` of them; how many.
    pub(super) fn take_run(&mut self, first: u64, want: u64) -> u64 {
        let mut n = 0;
        while n < want && first + n < self.blocks && !self.is_taken(first + n) {
            let b = first + n;
            if let Some(w) = self
                .taken
                .as_mut()
                .and_then(|t| t.get_mut((b / 64) as usize))
            {
                *w |= 1 << (b % 64);
            }
            n += 1;
        }
        n
    }
}

/// The offset generator's uniform source (random_generator=).
#[derive(Clone, Debug)]
pub(super) enum OffsetRng {
    T88(Taus88),
    T258(Taus258),
    /// `random_generator=tausworthe` set explicitly: fio's 32-bit generator, whose
    /// offsets in a range of more than 2^32 blocks come from 32 random bits (so some
    /// repeat, and most blocks are never drawn); fio warns, and so does ioscope.
    T32(Taus88),
}

impl Rng for OffsetRng {
    #[inline(always)]
    fn next_u64(&mut self) -> u64 {
        match self {
            OffsetRng::T88(r) => r.next_u64(),
            OffsetRng::T258(r) => r.next_u64(),
            OffsetRng::T32(r) => u64::from(r.next_u32()) << 32,
        }
    }
    #[inline(always)]
    fn next_u32(&mut self) -> u32 {
        match self {
            OffsetRng::T88(r) => r.next_u32(),
            OffsetRng::T258(r) => (r.next_u64() >> 32) as u32,
            OffsetRng::T32(r) => r.next_u32(),
        }
    }
}

/// How often the job syncs and how: fsync, else fdatasync, else sync_file_range (as a
/// DataSync unit the job turns into sync_file_range).
pub(super) fn sync_cadence(o: &JobOptions) -> (u32, Ddir) {
    if o.fsync > 0 {
        (o.fsync, Ddir::Sync)
    } else if o.fdatasync > 0 {
        (o.fdatasync, Ddir::DataSync)
    } else {
        (o.sync_file_range.map_or(0, |r| r.every), Ddir::DataSync)
    }
}

/// read_iolog's I/Os and where the replay is.
pub(super) struct Replay {
    pub(super) entries: Vec<crate::workload::replay::Entry>,
    pub(super) next: usize,
    pub(super) due_us: Option<u64>,
    pub(super) timed: bool,
    pub(super) max_len: u64,
    pub(super) bytes: u64,
}

/// The most common workload in one step: one file, one direction, uniformly random
/// offsets without a map, one block size, and nothing else to decide per I/O
/// (`rw=randread bs=4k norandommap`). The same offsets as the general path, from the
/// same generator, in a fraction of its instructions.
#[derive(Clone, Copy, Debug)]
pub(super) struct Plain {
    pub(super) ddir: Ddir,
    pub(super) len: u32,
    pub(super) start: u64,
    /// Offsets are `start + k * len` for k below `blocks` (the grain is the length).
    pub(super) blocks: u64,
}
