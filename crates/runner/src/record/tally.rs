//! What some jobs count per completion beyond their statistics (act's slices,
//! block_error_percentiles' blocks, `--debug=io`, a latency steady state, bytes per
//! placement ID): kept out of the common path, reached only through the recorder's slow path.

use super::shared::Shared;
use super::trace;
use crate::clock::Ticks;
use ioscope_engine::{Ddir, IoUnit};
use std::sync::atomic::Ordering::Relaxed;

/// What some jobs count per completion beyond their statistics, out of the common path.
#[derive(Default)]
pub(super) struct Tally {
    /// act: the slices, when the measurement started, and a slice's length.
    pub(super) act: Option<(ioscope_stats::act::ActSlices, Ticks, u64)>,
    /// block_error_percentiles: the blocks, the file offset of block 0 and the trim
    /// block size.
    pub(super) blocks: Option<(ioscope_stats::block::BlockStates, u64, u64)>,
    /// `--debug=io`: a line per completion.
    pub(super) io: Option<trace::IoTrace>,
    /// steadystate=lat|lat_slope: completion latencies summed, and how many.
    pub(super) ss_lat: Option<(u64, u64)>,
    /// Data placement: the writes of each placement identifier.
    pub(super) placed: Option<Vec<ioscope_stats::Placed>>,
}

/// block_error_percentiles' blocks of a job: the file region's start, its trim block
/// size and the number of blocks.
#[derive(Clone, Copy, Debug)]
pub struct BlockTrack {
    pub start: u64,
    pub trim_bs: u64,
    pub blocks: u64,
}

impl Tally {
    /// One completion: its latency, completion latency and bytes, at `t`.
    pub(super) fn add(
        &mut self,
        u: &IoUnit,
        (lat, clat, bytes): (u64, u64, u64),
        t: Ticks,
        shared: &Shared,
    ) {
        if let Some((a, start, slice)) = &mut self.act {
            a.add((t.saturating_sub(*start) / *slice) as usize, lat);
        }
        if let (Some((b, start, bs)), Ddir::Trim) = (&mut self.blocks, u.ddir) {
            b.trimmed((u.offset.saturating_sub(*start) / *bs) as usize);
        }
        if let Some(io) = &mut self.io {
            io.complete(u);
        }
        let placed = u.ddir == Ddir::Write && u.placement != ioscope_engine::NO_PLACEMENT;
        if let (Some(list), true) = (&mut self.placed, placed) {
            ioscope_stats::Placed::add(list, u.placement, 1, bytes);
        }
        if let Some((sum, n)) = &mut self.ss_lat {
            *sum += clat;
            *n += 1;
            shared.clat_sum_ns.store(*sum, Relaxed);
            shared.clat_count.store(*n, Relaxed);
        }
    }
}
