//! `pvsync`: preadv(2) / pwritev(2) with one iovec per I/O.

use std::os::fd::RawFd;

use crate::sync_engine::{iovec, SyncIo};

pub(crate) struct Pvsync;

impl SyncIo for Pvsync {
    #[inline]
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, _flags: u32) -> isize {
        let iov = iovec(buf, len);
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::preadv(fd, &iov, 1, off as libc::off_t) }
    }

    #[inline]
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, _flags: u32) -> isize {
        let iov = iovec(buf, len);
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::pwritev(fd, &iov, 1, off as libc::off_t) }
    }
}
