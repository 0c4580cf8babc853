//! zonemode=zbd in the job loop: the zone resets and finishes the zone map asks for,
//! issued on the job's file between I/Os (see [`crate::workload::zbd`]), and counted
//! as fio counts them (`zone_resets`); with recover_zbd_write_error, the write
//! pointers moved past failed writes.

use super::state::State;
use crate::sys::zoned::{ZoneAct, ZoneDev};
use crate::workload::zbd::ZoneOp;

impl State<'_> {
    /// Issue one zone operation on the job's file (zones emulated over a file without
    /// any: nothing to issue). Err: the errno and what failed.
    pub(super) fn zone_op(&mut self, op: ZoneOp) -> Result<(), (i32, String)> {
        let (what, act, start, len) = match op {
            ZoneOp::Reset(s, l) => ("reset", ZoneAct::Reset, s, l),
            ZoneOp::Finish(s, l) => ("finish", ZoneAct::Finish, s, l),
            ZoneOp::Recover(s, end) => return self.recover_zone(s, end),
        };
        if self.ctx.zone_dev != ZoneDev::Emulated {
            let Some(f) = self.ctx.files.first() else {
                return Err((libc::EBADF, format!("zone {what}: no file")));
            };
            crate::sys::zoned::act(self.ctx.zone_dev, &f.file, act, start, len).map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let text = format!("zone {what} at {start} of {}: {e}", f.path.display());
                (errno, text)
            })?;
        }
        if act == ZoneAct::Reset {
            self.zone_resets += 1;
        }
        Ok(())
    }

    /// recover_zbd_write_error: the writes in flight have completed and some to the
    /// zone at `start` failed, the last of them ending at `end`. As fio does: read the
    /// zone's write pointer and, when it lies between the zone's start and `end`, write
    /// from it to `end` (with the failed write's data where it covers that range,
    /// zeros otherwise), so that the next writes, placed from `end`, land. A write
    /// pointer elsewhere is left as it is, with a warning (the next writes fail and
    /// are counted as errors); a failed move fails the job.
    fn recover_zone(&mut self, start: u64, end: u64) -> Result<(), (i32, String)> {
        let mut failed = None;
        self.recovering.retain(|&(u, off, len)| {
            let here = off < end && off + u64::from(len) > start;
            if here && off + u64::from(len) == end {
                failed = Some((u, off, len));
            }
            !here
        });
        let dev = self.ctx.zone_dev;
        let Some(f) = self.ctx.files.first().filter(|_| dev != ZoneDev::Emulated) else {
            return Ok(());
        };
        let name = f.path.display();
        let wp = match crate::sys::zoned::zone_at(dev, &f.file, start) {
            Ok(z) => z.wp,
            Err(e) => {
                let msg = format!("ioscope: {name}: zone report for write recovery failed: {e}");
                self.ctx.shared.say(msg);
                return Ok(());
            }
        };
        if wp < start || wp > end {
            self.ctx.shared.say(format!(
                "ioscope: {name}: unexpected write pointer position on error: wp={wp} \
                 (zone at {start}, failed writes up to {end}): not moved"
            ));
            return Ok(());
        }
        let data = failed.and_then(|(u, off, len)| self.failed_data(u, off, len, wp));
        crate::sys::zoned::move_wp(dev, &f.file, (wp, end), data).map_err(|e| {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let text = format!(
                "{name}: moving the write pointer of the zone at {start} from {wp} to {end} \
                 failed: {e}"
            );
            (errno, text)
        })
    }

    /// The bytes from `wp` of the failed write of `len` at `off` that unit `u` holds,
    /// if it still holds them (no I/O was prepared in it since) and covers `wp`.
    fn failed_data(&self, u: u32, off: u64, len: u32, wp: u64) -> Option<&[u8]> {
        let unit = self.q.units.get(u as usize)?;
        let unchanged = unit.offset == off && unit.len == len && !unit.buf.is_null();
        if !unchanged || wp < off {
            return None;
        }
        // SAFETY: the unit's buffer is valid for `len` bytes (its last I/O's) and, the
        // I/O having completed, nothing writes it until the unit is prepared again,
        // which cannot happen while this borrow of `self` lives.
        let buf = unsafe { std::slice::from_raw_parts(unit.buf, len as usize) };
        buf.get((wp - off) as usize..)
    }
}
