//! `psync`: pread(2) / pwrite(2).

use std::os::fd::RawFd;

use crate::sync_engine::SyncIo;

pub(crate) struct Psync;

impl SyncIo for Psync {
    #[inline]
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, _flags: u32) -> isize {
        // SAFETY: the caller checked that `buf` is valid for `len` bytes.
        unsafe { libc::pread(fd, buf.cast(), len, off as libc::off_t) }
    }

    #[inline]
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, _flags: u32) -> isize {
        // SAFETY: the caller checked that `buf` is valid for `len` bytes.
        unsafe { libc::pwrite(fd, buf.cast(), len, off as libc::off_t) }
    }
}
