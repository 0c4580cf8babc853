//! `vsync`: lseek(2) then readv(2) / writev(2) with one iovec per I/O.

use std::os::fd::RawFd;

use crate::sync_engine::{iovec, seek, SyncIo};

pub(crate) struct Vsync;

impl SyncIo for Vsync {
    #[inline]
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, _flags: u32) -> isize {
        if seek(fd, off) < 0 {
            return -1;
        }
        let iov = iovec(buf, len);
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::readv(fd, &iov, 1) }
    }

    #[inline]
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, _flags: u32) -> isize {
        if seek(fd, off) < 0 {
            return -1;
        }
        let iov = iovec(buf, len);
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::writev(fd, &iov, 1) }
    }
}
