//! The common shape of the synchronous engines (psync, sync, vsync, pvsync, pvsync2):
//! every I/O is one blocking syscall made inside `queue`, which returns `Done`.
//! Each engine only supplies how a read and a write are issued ([`SyncIo`]); the
//! engine is generic over it so the job loop is monomorphised down to the syscall.

use std::io;
use std::os::fd::RawFd;

use crate::ops;
use crate::{Ddir, Engine, EngineConfig, FileInfo, IoUnit, Queued};

/// How one synchronous engine transfers data. Both calls return the raw syscall
/// result (-1 with errno set on failure); EINTR retries are done by the caller.
pub(crate) trait SyncIo {
    /// Reads up to `len` bytes at `off` of `fd` into `buf`.
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, unit_flags: u32) -> isize;
    /// Writes `len` bytes from `buf` at `off` of `fd`.
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, unit_flags: u32) -> isize;
}

/// A synchronous engine: `queue` does the I/O and returns `Done`.
pub(crate) struct SyncEngine<O> {
    files: Box<[FileInfo]>,
    io: O,
}

impl<O: SyncIo> SyncEngine<O> {
    pub(crate) fn new(cfg: &EngineConfig<'_>, io: O) -> Self {
        SyncEngine {
            files: cfg.files.into(),
            io,
        }
    }

    /// Issues one unit and returns its result (bytes or -errno).
    fn execute(&self, unit: &IoUnit) -> i64 {
        let file = match ops::rw_file(&self.files, unit) {
            Ok(f) => f,
            Err(res) => return res,
        };
        let (fd, buf, len, off, flags) = (
            file.fd,
            unit.buf,
            unit.len as usize,
            unit.offset,
            unit.flags,
        );
        match unit.ddir {
            Ddir::Write => ops::retry_eintr(|| self.io.write(fd, buf, len, off, flags)),
            _ => ops::retry_eintr(|| self.io.read(fd, buf, len, off, flags)),
        }
    }
}

impl<O: SyncIo> Engine for SyncEngine<O> {
    fn is_sync(&self) -> bool {
        true
    }

    fn queue(&mut self, _idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        unit.result = self.execute(unit);
        Ok(Queued::Done)
    }

    no_completions!();
}

/// One iovec over a unit's buffer, for the vectored engines.
#[inline]
pub(crate) fn iovec(buf: *const u8, len: usize) -> libc::iovec {
    libc::iovec {
        iov_base: buf as *mut libc::c_void,
        iov_len: len,
    }
}

/// Positions the file offset for the engines that use read/write without an offset;
/// -1 with errno set on failure, like the syscall it wraps.
#[inline]
pub(crate) fn seek(fd: RawFd, off: u64) -> isize {
    // SAFETY: plain syscall on a caller-provided fd.
    let ret = unsafe { libc::lseek(fd, off as libc::off_t, libc::SEEK_SET) };
    if ret < 0 {
        -1
    } else {
        0
    }
}
