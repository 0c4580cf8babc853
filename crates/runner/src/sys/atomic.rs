//! Torn-write protection of an open file: the sizes the kernel writes atomically
//! (statx STATX_WRITE_ATOMIC, Linux 6.11+).

use std::os::fd::AsRawFd;

/// The smallest and largest write, in bytes, the kernel takes with RWF_ATOMIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AtomicUnit {
    pub min: u32,
    pub max: u32,
}

/// The file's atomic-write unit; None when statx reports none (a kernel before 6.11,
/// or a device or filesystem without atomic writes: the kernel leaves the bit out of
/// its answer either way).
pub(crate) fn atomic_unit(f: &std::fs::File) -> std::io::Result<Option<AtomicUnit>> {
    let mut st = std::mem::MaybeUninit::<libc::statx>::zeroed();
    // SAFETY: statx writes at most one struct statx into `st`; the empty path with
    // AT_EMPTY_PATH names the open descriptor itself.
    let r = unsafe {
        libc::statx(
            f.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH,
            libc::STATX_WRITE_ATOMIC,
            st.as_mut_ptr(),
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: zeroed, then filled by a successful statx: every field is initialised.
    let st = unsafe { st.assume_init() };
    if st.stx_mask & libc::STATX_WRITE_ATOMIC == 0 || st.stx_atomic_write_unit_max == 0 {
        return Ok(None);
    }
    Ok(Some(AtomicUnit {
        min: st.stx_atomic_write_unit_min,
        max: st.stx_atomic_write_unit_max,
    }))
}
