//! `pvsync2`: preadv2(2) / pwritev2(2), which take per-I/O RWF_* flags:
//! RWF_HIPRI (hipri, for the units the runner picked by hipri_percentage),
//! RWF_NOWAIT (nowait) and RWF_DONTCACHE (uncached). A kernel or filesystem that does
//! not support a flag fails the I/O (EOPNOTSUPP / EINVAL), which is reported as the
//! I/O's result rather than hidden.

use std::os::fd::RawFd;

use crate::ops::{RWF_DONTCACHE, RWF_HIPRI, RWF_NOWAIT};
use crate::sync_engine::{iovec, SyncIo};
use crate::{EngineOptions, UNIT_HIPRI};

pub(crate) struct Pvsync2 {
    /// Flags every I/O carries (nowait, uncached).
    base_flags: i32,
    /// RWF_HIPRI if `hipri` is set; applied only to units flagged UNIT_HIPRI.
    hipri_flag: i32,
}

impl Pvsync2 {
    pub(crate) fn new(opts: &EngineOptions) -> Self {
        let mut base_flags = 0;
        if opts.nowait {
            base_flags |= RWF_NOWAIT;
        }
        if opts.uncached != 0 {
            base_flags |= RWF_DONTCACHE;
        }
        Pvsync2 {
            base_flags,
            hipri_flag: if opts.hipri { RWF_HIPRI } else { 0 },
        }
    }

    #[inline]
    fn flags(&self, unit_flags: u32) -> i32 {
        if unit_flags & UNIT_HIPRI != 0 {
            self.base_flags | self.hipri_flag
        } else {
            self.base_flags
        }
    }
}

impl SyncIo for Pvsync2 {
    #[inline]
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, flags: u32) -> isize {
        let iov = iovec(buf, len);
        let off = off as libc::off_t;
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::preadv2(fd, &iov, 1, off, self.flags(flags)) }
    }

    #[inline]
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, flags: u32) -> isize {
        let iov = iovec(buf, len);
        let off = off as libc::off_t;
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::pwritev2(fd, &iov, 1, off, self.flags(flags)) }
    }
}
