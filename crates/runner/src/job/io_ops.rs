//! The I/O that carries no data: syncs (fsync, fdatasync, sync_file_range) in the
//! job's stream, and the metadata engines' operations on file names.

use super::errors::strerror;
use super::state::State;
use crate::clock::Ticks;
use crate::workload::io::Io;
use ioscope_engine::{Ddir, UNIT_FILE_OP};
use std::os::fd::AsRawFd;

impl State<'_> {
    /// fsync/fdatasync/sync_file_range of `io`'s file, timed (the writes before it
    /// have completed).
    pub fn sync_file(&mut self, io: Io) {
        let Some(f) = self.ctx.files.get(io.file as usize) else {
            return;
        };
        let fd = f.file.as_raw_fd();
        let o = &self.ctx.opts;
        let range = o
            .sync_file_range
            .filter(|_| o.fsync == 0 && o.fdatasync == 0);
        let t0 = self.clock.now();
        // SAFETY: fd belongs to the job.
        let r = unsafe {
            if self.ctx.diskless {
                0
            } else if io.ddir == Ddir::Sync {
                libc::fsync(fd)
            } else if let Some(sfr) = range {
                libc::sync_file_range(fd, io.offset as i64, i64::from(io.len), sfr.flags)
            } else {
                libc::fdatasync(fd)
            }
        };
        let t1 = self.clock.now();
        if r < 0 {
            let e = std::io::Error::last_os_error();
            let call = if range.is_some() && io.ddir != Ddir::Sync {
                "sync_file_range"
            } else {
                "fsync"
            };
            self.fail(
                e.raw_os_error().unwrap_or(libc::EIO),
                &format!("{call}: {e}"),
            );
            return;
        }
        if range.is_some() && io.ddir != Ddir::Sync {
            self.rec.range_synced(self.clock.delta_ns(t0, t1));
        } else {
            self.rec.synced(self.clock.delta_ns(t0, t1));
        }
    }

    /// A metadata engine's unit `idx` is about to go: true when it begins a pass over
    /// its file (it then carries the timed operation on the name).
    pub fn begin_file_op(&mut self, idx: u32) -> bool {
        let unit = &mut self.q.units[idx as usize];
        let f = unit.file as usize;
        let begins = self.passes.get(f).is_some_and(|&left| left == 0);
        if begins {
            unit.flags |= UNIT_FILE_OP;
            self.passes[f] = self.ctx.files[f].len.max(1);
        }
        begins
    }

    /// A metadata engine's unit `idx` returned `res` between `t0` and `t1`: record it
    /// and free the unit. The file whose pass it ended, if it did.
    pub fn end_file_op(
        &mut self,
        idx: u32,
        res: i64,
        begins: bool,
        t0: Ticks,
        t1: Ticks,
    ) -> Option<u32> {
        self.rec.issued_sync(0);
        self.rec.reaped(1);
        let f = self.q.units[idx as usize].file as usize;
        if res < 0 {
            self.q.free.push(idx);
            let what = crate::setup::files::name_op_label(&self.ctx.opts);
            let path = self.ctx.files[f].path.display().to_string();
            let e = std::io::Error::from_raw_os_error((-res) as i32);
            let text = format!("{what}({path}): {}", strerror(&e));
            self.ctx
                .shared
                .say(format!("ioscope: job '{}': {text}", self.ctx.opts.name));
            // As fio's failed open: the I/O never happened, so it is not counted.
            self.fail_quiet((-res) as i32, &text);
            return None;
        }
        let unit = &self.q.units[idx as usize];
        if begins {
            self.rec.name_op(unit, self.clock.delta_ns(t0, t1), t1);
        }
        self.rec.counted(unit, res as u64);
        let left = &mut self.passes[f];
        *left = left.saturating_sub(u64::from(unit.len));
        let ended = (*left == 0).then_some(f as u32);
        self.think.completed();
        self.q.free.push(idx);
        ended
    }
}
