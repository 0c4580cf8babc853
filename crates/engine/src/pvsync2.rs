//! `pvsync2`: preadv2(2) / pwritev2(2), which take per-I/O RWF_* flags:
//! RWF_HIPRI (hipri, for the units the runner picked by hipri_percentage),
//! RWF_NOWAIT (nowait), RWF_DONTCACHE (uncached) and, on writes, RWF_ATOMIC (atomic). A kernel or filesystem that does
//! not support a flag fails the I/O (EOPNOTSUPP / EINVAL), which is reported as the
//! I/O's result rather than hidden.

use std::os::fd::RawFd;

use crate::ops::RWF_HIPRI;
use crate::sync_engine::{iovec, SyncIo};
use crate::{EngineOptions, UNIT_HIPRI};

pub(crate) struct Pvsync2 {
    /// Flags every read \[0\] and write \[1\] carries (nowait, uncached, atomic).
    base_flags: [i32; 2],
    /// RWF_HIPRI if `hipri` is set; applied only to units flagged UNIT_HIPRI.
    hipri_flag: i32,
}

impl Pvsync2 {
    pub(crate) fn new(opts: &EngineOptions) -> Self {
        Pvsync2 {
            base_flags: crate::ops::rw_flags(opts),
            hipri_flag: if opts.hipri { RWF_HIPRI } else { 0 },
        }
    }

    #[inline]
    fn flags(&self, unit_flags: u32, write: bool) -> i32 {
        let base = self.base_flags[write as usize];
        if unit_flags & UNIT_HIPRI != 0 {
            base | self.hipri_flag
        } else {
            base
        }
    }
}

impl SyncIo for Pvsync2 {
    #[inline]
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, flags: u32) -> isize {
        let iov = iovec(buf, len);
        let off = off as libc::off_t;
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::preadv2(fd, &iov, 1, off, self.flags(flags, false)) }
    }

    #[inline]
    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, flags: u32) -> isize {
        let iov = iovec(buf, len);
        let off = off as libc::off_t;
        // SAFETY: the iovec covers the unit's buffer, checked valid for `len` bytes.
        unsafe { libc::pwritev2(fd, &iov, 1, off, self.flags(flags, true)) }
    }
}
