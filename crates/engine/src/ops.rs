//! Helpers shared by every engine: errno handling, EINTR retries, unit checks, and the
//! non-read/write directions (trim, fsync, fdatasync), which every engine issues the
//! same synchronous way.

use crate::{Ddir, EngineConfig, FileInfo, IoUnit};

/// `RWF_DONTCACHE` from linux/fs.h (Linux 6.14+; called RWF_UNCACHED in early patch
/// sets): buffered I/O whose pages are dropped from the page cache once written back.
/// Defined here so the engine does not depend on a libc release that has it.
pub const RWF_DONTCACHE: i32 = 0x80;
/// `RWF_HIPRI` from linux/fs.h: poll for completion (needs O_DIRECT and poll queues).
pub const RWF_HIPRI: i32 = 0x1;
/// `RWF_NOWAIT` from linux/fs.h: fail with EAGAIN instead of blocking.
pub const RWF_NOWAIT: i32 = 0x8;
/// `RWF_ATOMIC` from linux/fs.h (Linux 6.11+): a write with torn-write protection,
/// all of it or none of it stored. Writes only: a read with it fails (EOPNOTSUPP).
pub const RWF_ATOMIC: i32 = 0x40;

/// The RWF_* flags of reads \[0\] and writes \[1\] for the options every RWF engine
/// shares (nowait, uncached, atomic).
pub fn rw_flags(opts: &crate::EngineOptions) -> [i32; 2] {
    let mut both = 0;
    if opts.nowait {
        both |= RWF_NOWAIT;
    }
    if opts.uncached != 0 {
        both |= RWF_DONTCACHE;
    }
    [both, both | if opts.atomic { RWF_ATOMIC } else { 0 }]
}

/// `BLKDISCARD` = `_IO(0x12, 119)` from linux/fs.h; libc does not export it.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// The calling thread's errno. Read directly so the error path never allocates.
#[inline]
pub fn errno() -> i32 {
    // SAFETY: __errno_location always returns a valid pointer to this thread's errno.
    unsafe { *libc::__errno_location() }
}

/// Runs a syscall wrapper until it does not fail with EINTR; returns its non-negative
/// result, or -errno.
#[inline]
pub fn retry_eintr(mut call: impl FnMut() -> isize) -> i64 {
    loop {
        let ret = call();
        if ret >= 0 {
            return ret as i64;
        }
        let err = errno();
        if err != libc::EINTR {
            return -(err as i64);
        }
    }
}

/// The file a unit refers to, if its index is valid.
#[inline]
pub fn file_of<'f>(files: &'f [FileInfo], unit: &IoUnit) -> Option<&'f FileInfo> {
    files.get(unit.file as usize)
}

/// The common prelude of engines that issue reads and writes themselves: the unit's
/// file, once trims and syncs (done here, synchronously) and bad units (a missing
/// file, a transfer larger than the buffer) are out of the way. `Err` holds the
/// finished unit's result.
#[inline]
pub fn rw_file<'f>(files: &'f [FileInfo], unit: &IoUnit) -> Result<&'f FileInfo, i64> {
    let file = file_of(files, unit).ok_or(-(libc::EBADF as i64))?;
    if let Some(res) = non_rw(file, unit) {
        return Err(res);
    }
    check_rw(unit)?;
    Ok(file)
}

/// Checks that a read/write unit's transfer fits its buffer, so no engine ever lets the
/// kernel (or memcpy) write past the runner's buffer. Returns -errno if not.
#[inline]
pub fn check_rw(unit: &IoUnit) -> Result<(), i64> {
    if unit.len > unit.buf_len || unit.buf.is_null() {
        return Err(-(libc::EINVAL as i64));
    }
    Ok(())
}

/// How many unit indices an engine must be ready for: at least `depth`, and every unit
/// that has a buffer in the region (the runner may keep a ring larger than the depth).
pub fn unit_capacity(cfg: &EngineConfig<'_>) -> usize {
    let depth = cfg.depth.max(1) as usize;
    let in_region = cfg.buffers.1.checked_div(cfg.unit_buf_len).unwrap_or(0);
    depth.max(in_region)
}

/// Executes Trim, Sync or DataSync synchronously and returns the unit result;
/// `None` for Read/Write, which each engine issues its own way.
pub fn non_rw(file: &FileInfo, unit: &IoUnit) -> Option<i64> {
    match unit.ddir {
        Ddir::Read | Ddir::Write => None,
        Ddir::Trim => Some(trim(file, unit.offset, unit.len as u64)),
        Ddir::Sync => Some(fsync(file.fd)),
        Ddir::DataSync => Some(fdatasync(file.fd)),
    }
}

/// Discards `[offset, offset+len)`: BLKDISCARD on block devices, a hole punch (keeping
/// the size) on regular files. Returns `len` on success, like a data transfer, so the
/// runner accounts trimmed bytes.
pub fn trim(file: &FileInfo, offset: u64, len: u64) -> i64 {
    let ret = if file.is_block {
        let range = [offset, len];
        // SAFETY: BLKDISCARD reads a [u64; 2] (start, length) from the pointer.
        retry_eintr(|| unsafe { libc::ioctl(file.fd, BLKDISCARD, range.as_ptr()) as isize })
    } else {
        let mode = libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE;
        // SAFETY: plain syscall on a caller-provided fd; no memory is passed.
        retry_eintr(|| unsafe {
            libc::fallocate(file.fd, mode, offset as libc::off_t, len as libc::off_t) as isize
        })
    };
    if ret < 0 {
        ret
    } else {
        len as i64
    }
}

/// fsync(2); 0 or -errno.
pub fn fsync(fd: libc::c_int) -> i64 {
    // SAFETY: plain syscall on a caller-provided fd.
    retry_eintr(|| unsafe { libc::fsync(fd) as isize })
}

/// fdatasync(2); 0 or -errno.
pub fn fdatasync(fd: libc::c_int) -> i64 {
    // SAFETY: plain syscall on a caller-provided fd.
    retry_eintr(|| unsafe { libc::fdatasync(fd) as isize })
}
