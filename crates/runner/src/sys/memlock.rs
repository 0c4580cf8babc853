//! lockmem: memory a job keeps locked (mlock(2)) while it runs, so that the page cache
//! and the rest of the system have that much less (fio's way to run with less memory).

use crate::error::RunError;

/// fio leaves 128 MiB of the machine's memory unlocked.
const KEEP_FREE: u64 = 128 << 20;

/// Locked, populated anonymous memory, unlocked and unmapped when dropped.
pub(crate) struct LockedMem {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone and only unmapped in Drop.
unsafe impl Send for LockedMem {}

impl LockedMem {
    /// Lock `bytes` (0: nothing), at most the machine's memory less 128 MiB (`say`
    /// hears when the amount is cut, as fio says it).
    pub(crate) fn new(
        job: &str,
        bytes: u64,
        say: &dyn Fn(String),
    ) -> Result<Option<LockedMem>, RunError> {
        if bytes == 0 {
            return Ok(None);
        }
        let phys = crate::sys::mem::mem_total().unwrap_or(u64::MAX);
        let mut len = bytes;
        if len > phys.saturating_sub(KEEP_FREE) {
            len = phys.saturating_sub(KEEP_FREE).max(4096);
            say(format!(
                "ioscope: job '{job}': limiting mlocked memory to {}MiB",
                len >> 20
            ));
        }
        let fail = |what: &str| {
            let e = std::io::Error::last_os_error();
            RunError::Setup(format!("job '{job}': lockmem={bytes}: {what}: {e}"))
        };
        let len = len as usize;
        // SAFETY: a new private anonymous mapping; no existing memory is touched.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(fail("mmap"));
        }
        let mem = LockedMem { ptr, len };
        // SAFETY: the range is the mapping just made; mlock also faults it in.
        if unsafe { libc::mlock(mem.ptr, mem.len) } != 0 {
            return Err(fail("mlock"));
        }
        Ok(Some(mem))
    }
}

impl Drop for LockedMem {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munlock(self.ptr, self.len);
            libc::munmap(self.ptr, self.len);
        }
    }
}
