//! `sync`: lseek(2) then read(2) / write(2), i.e. I/O at the file position, which is
//! what fio's `sync` engine measures (two syscalls per I/O).

use std::os::fd::RawFd;

use crate::sync_engine::{seek, SyncIo};

pub(crate) struct SyncRw;

impl SyncIo for SyncRw {
    #[inline]
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, _flags: u32) -> isize {
        if seek(fd, off) < 0 {
            return -1;
        }
        // SAFETY: the caller checked that `buf` is valid for `len` bytes.
        unsafe { libc::read(fd, buf.cast(), len) }
    }

    #[inline]
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, _flags: u32) -> isize {
        if seek(fd, off) < 0 {
            return -1;
        }
        // SAFETY: the caller checked that `buf` is valid for `len` bytes.
        unsafe { libc::write(fd, buf.cast(), len) }
    }
}
