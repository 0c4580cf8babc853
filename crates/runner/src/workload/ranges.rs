//! `num_range`: a trim of several ranges in one command (NVMe Dataset Management).
//! As fio does, the ranges are the workload's next trims, gathered into one I/O whose
//! length is their total and which counts once (in IOPS and number_ios); the job
//! loop places them in the unit's buffer as (offset, length) pairs for the engine.

use super::io::Io;
use super::Workload;
use ioscope_engine::Ddir;
use ioscope_options::{JobOptions, RwMode};

/// The ranges of the trim in hand.
pub(crate) struct Ranges {
    per: usize,
    /// The largest range (the job's largest block size).
    max_len: u64,
    list: Vec<(u64, u64)>,
}

impl Ranges {
    /// For a job whose trims carry more than one range (the plan allows them only in
    /// jobs that trim one file, without replay or verify).
    pub fn new(o: &JobOptions, max_len: u64) -> Option<Ranges> {
        let per = o.num_range as usize;
        let trims = matches!(o.rw.mode, RwMode::Trim | RwMode::RandTrim);
        (per > 1 && trims).then(|| Ranges {
            per,
            max_len,
            list: Vec::with_capacity(per),
        })
    }
}

/// Bytes a unit's buffer needs for num_range's pairs.
pub(crate) fn buffer_bytes(o: &JobOptions) -> usize {
    16 * o.num_range.max(1) as usize
}

impl Workload {
    /// The trim in hand's ranges, which the job loop takes (and clears) when it fills
    /// a unit with the trim; empty without num_range.
    pub fn take_ranges(&mut self) -> Option<&mut Vec<(u64, u64)>> {
        self.ranges.as_mut().map(|r| &mut r.list)
    }

    /// The next I/O of a job with num_range: a trim with the next trims as its further
    /// ranges (up to num_range), as one I/O of their total length.
    #[cold]
    #[inline(never)]
    pub(super) fn next_ranged(&mut self) -> Option<Io> {
        // Out while the trims are drawn, so that the general path draws them one by one.
        let mut r = self.ranges.take()?;
        let first = self.next_general();
        let Some(io) = first.filter(|io| io.ddir == Ddir::Trim) else {
            self.ranges = Some(r);
            return first;
        };
        r.list.clear();
        r.list.push((io.offset, u64::from(io.len)));
        let mut total = u64::from(io.len);
        // An I/O's length is 32 bits: stop before a range could overflow it.
        while r.list.len() < r.per && total + r.max_len <= u64::from(u32::MAX) {
            // A further range is no I/O of its own: number_ios counts commands, as fio.
            self.ios_left = self.ios_left.saturating_add(1);
            let Some(next) = self.next_general() else {
                self.ios_left = self.ios_left.saturating_sub(1);
                break;
            };
            if next.ddir != Ddir::Trim || next.file != io.file {
                // Cannot happen where the plan allows num_range (trims of one file
                // only): issued on its own after this one, as an I/O of its own.
                self.ios_left = self.ios_left.saturating_sub(1);
                self.pending_write = Some(next);
                break;
            }
            r.list.push((next.offset, u64::from(next.len)));
            total += u64::from(next.len);
        }
        self.ranges = Some(r);
        Some(Io {
            len: total as u32,
            ..io
        })
    }
}
