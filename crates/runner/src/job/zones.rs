//! zonemode=zbd in the job loop: the zone resets and finishes the zone map asks for,
//! issued on the job's file between I/Os (see [`crate::workload::zbd`]), and counted
//! as fio counts them (`zone_resets`).

use super::state::State;
use crate::sys::zoned::{ZoneAct, ZoneDev};
use crate::workload::zbd::ZoneOp;

impl State<'_> {
    /// Issue one zone operation on the job's file (zones emulated over a file without
    /// any: nothing to issue). Err: the errno and what failed.
    pub(super) fn zone_op(&mut self, op: ZoneOp) -> Result<(), (i32, String)> {
        let (what, start, len) = match op {
            ZoneOp::Reset(s, l) => ("reset", s, l),
            ZoneOp::Finish(s, l) => ("finish", s, l),
        };
        if self.ctx.zone_dev != ZoneDev::Emulated {
            let Some(f) = self.ctx.files.first() else {
                return Err((libc::EBADF, format!("zone {what}: no file")));
            };
            let act = match op {
                ZoneOp::Reset(..) => ZoneAct::Reset,
                ZoneOp::Finish(..) => ZoneAct::Finish,
            };
            crate::sys::zoned::act(self.ctx.zone_dev, &f.file, act, start, len).map_err(|e| {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                let text = format!("zone {what} at {start} of {}: {e}", f.path.display());
                (errno, text)
            })?;
        }
        if matches!(op, ZoneOp::Reset(..)) {
            self.zone_resets += 1;
        }
        Ok(())
    }
}
