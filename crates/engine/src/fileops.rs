//! Engines whose "I/O" is an operation on the file rather than a data transfer, as
//! fio's of the same names (no buffer is read or written):
//! - `falloc`: fallocate(2) over the block: reads keep the size
//!   (FALLOC_FL_KEEP_SIZE), writes allocate and extend (mode 0), trims punch a hole;
//! - `ftruncate`: a write truncates the file to the block's offset (fio 3.33 sets the
//!   size to the start of the block, not its end); reads and trims are invalid.
//!
//! Each completes inside `queue` with the block's length, so bytes and IOPS count as
//! for any synchronous engine.

use std::io;

use crate::ops;
use crate::{Ddir, Engine, EngineConfig, FileInfo, IoUnit, Queued};

/// Which file operation a block stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileOp {
    Falloc,
    Ftruncate,
}

pub(crate) struct FileOpEngine {
    files: Box<[FileInfo]>,
    op: FileOp,
}

impl FileOpEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>, op: FileOp) -> Self {
        FileOpEngine {
            files: cfg.files.into(),
            op,
        }
    }

    fn execute(&self, unit: &IoUnit) -> i64 {
        let Some(file) = ops::file_of(&self.files, unit) else {
            return -(libc::EBADF as i64);
        };
        let (fd, off, len) = (file.fd, unit.offset as libc::off_t, unit.len as libc::off_t);
        let ret = match (self.op, unit.ddir) {
            (_, Ddir::Sync | Ddir::DataSync) => return ops::non_rw(file, unit).unwrap_or(0),
            (FileOp::Falloc, Ddir::Trim) => return ops::trim(file, unit.offset, unit.len as u64),
            (FileOp::Falloc, d) => {
                let mode = if d == Ddir::Read {
                    libc::FALLOC_FL_KEEP_SIZE
                } else {
                    0
                };
                // SAFETY: plain syscall on the job's fd; no memory is passed.
                ops::retry_eintr(|| unsafe { libc::fallocate(fd, mode, off, len) as isize })
            }
            (FileOp::Ftruncate, Ddir::Write) => {
                // SAFETY: plain syscall on the job's fd.
                ops::retry_eintr(|| unsafe { libc::ftruncate(fd, off) as isize })
            }
            (FileOp::Ftruncate, _) => return -(libc::EINVAL as i64),
        };
        if ret < 0 {
            ret
        } else {
            unit.len as i64
        }
    }
}

impl Engine for FileOpEngine {
    fn is_sync(&self) -> bool {
        true
    }

    fn queue(&mut self, _idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        unit.result = self.execute(unit);
        Ok(Queued::Done)
    }

    no_completions!();
}
