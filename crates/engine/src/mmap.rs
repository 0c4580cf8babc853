//! `mmap`: each file is mapped whole (MAP_SHARED) at setup, and I/O is a memcpy
//! between the mapping and the unit's buffer, so it measures page-cache / page-fault
//! cost rather than syscalls. Files opened read-only get a read-only mapping, and
//! writes to them fail with EBADF, as write(2) would.

use std::io;
use std::ptr;

use crate::mmap_guard::{self, Guard};
use crate::ops;
use crate::{Ddir, Engine, EngineConfig, EngineError, FileInfo, IoUnit, Queued};

const NAME: &str = "mmap";

/// One file's mapping; `len == 0` means nothing is mapped (empty file).
pub(crate) struct Mapping {
    pub(crate) addr: *mut u8,
    pub(crate) len: u64,
    writable: bool,
    /// Lets the SIGBUS handler repair this mapping if the file shrinks under it.
    _guard: Option<Guard>,
}

pub(crate) struct MmapEngine {
    files: Box<[FileInfo]>,
    maps: Box<[Mapping]>,
}

impl MmapEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Result<Self, EngineError> {
        let mut maps = Vec::with_capacity(cfg.files.len());
        for (i, f) in cfg.files.iter().enumerate() {
            // Push as we go so Drop unmaps what was mapped if a later file fails.
            match map_file(f, cfg.opts.thp) {
                Ok(m) => maps.push(m),
                Err(source) => {
                    unmap_all(&maps);
                    return Err(EngineError::Setup {
                        engine: NAME,
                        what: format!("mmap of file {i} ({} bytes)", f.size),
                        source,
                    });
                }
            }
        }
        Ok(MmapEngine {
            files: cfg.files.into(),
            maps: maps.into_boxed_slice(),
        })
    }

    /// Copies between the mapping and the buffer; bytes copied or -errno.
    fn transfer(&self, unit: &IoUnit) -> i64 {
        let Some(map) = self.maps.get(unit.file as usize) else {
            return -(libc::EBADF as i64);
        };
        if let Err(res) = ops::check_rw(unit) {
            return res;
        }
        let (off, len) = (unit.offset, unit.len as u64);
        if unit.ddir == Ddir::Write {
            if !map.writable {
                return -(libc::EBADF as i64);
            }
            match off.checked_add(len) {
                Some(end) if end <= map.len => {}
                _ => return -(libc::EINVAL as i64),
            }
            let before = mmap_guard::faults();
            // SAFETY: [off, off+len) is inside the mapping; the buffer holds len bytes.
            let dst = unsafe { map.addr.add(off as usize) };
            // SAFETY: as above.
            unsafe { ptr::copy_nonoverlapping(unit.buf, dst, len as usize) };
            if mmap_guard::hit(before, dst, len as usize) {
                return -(libc::EIO as i64);
            }
            return len as i64;
        }
        // Reads stop at the end of the mapping like pread stops at end of file.
        let n = len.min(map.len.saturating_sub(off));
        if n > 0 {
            let before = mmap_guard::faults();
            // SAFETY: [off, off+n) is inside the mapping; the buffer holds len >= n bytes.
            let src = unsafe { map.addr.add(off as usize) };
            // SAFETY: as above.
            unsafe { ptr::copy_nonoverlapping(src, unit.buf, n as usize) };
            // The file shrank under the mapping: the bytes are not the file's.
            if mmap_guard::hit(before, src, n as usize) {
                return -(libc::EIO as i64);
            }
        }
        n as i64
    }
}

/// How much of the file to map: its size, but never past its real end for a regular
/// file, since touching a shared mapping beyond EOF raises SIGBUS.
fn map_len(f: &FileInfo) -> io::Result<u64> {
    if f.is_block {
        return Ok(f.size);
    }
    // SAFETY: fstat writes into the zeroed stat buffer we pass.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(f.fd, &mut st) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f.size.min(st.st_size.max(0) as u64))
}

/// Maps a file read-write, or read-only if it was opened read-only (EACCES); with
/// `thp`, asks for transparent huge pages (as fio's thp=1; an error fails the job).
pub(crate) fn map_file(f: &FileInfo, thp: bool) -> io::Result<Mapping> {
    let len = map_len(f)?;
    if len == 0 {
        return Ok(Mapping {
            addr: ptr::null_mut(),
            len: 0,
            writable: false,
            _guard: None,
        });
    }
    let rw = libc::PROT_READ | libc::PROT_WRITE;
    let (addr, writable) = match mmap(f.fd, len, rw) {
        Ok(addr) => (addr, true),
        Err(e) if e.raw_os_error() == Some(libc::EACCES) => {
            (mmap(f.fd, len, libc::PROT_READ)?, false)
        }
        Err(e) => return Err(e),
    };
    // SAFETY: advice on the mapping just made, of this length.
    if thp && unsafe { libc::madvise(addr.cast(), len as usize, libc::MADV_HUGEPAGE) } != 0 {
        let e = io::Error::last_os_error();
        // SAFETY: the mapping is ours and unused.
        unsafe { libc::munmap(addr.cast(), len as usize) };
        return Err(io::Error::new(
            e.kind(),
            format!("madvise(MADV_HUGEPAGE): {e}"),
        ));
    }
    Ok(Mapping {
        addr,
        len,
        writable,
        _guard: Some(Guard::new(addr, len)),
    })
}

fn mmap(fd: i32, len: u64, prot: i32) -> io::Result<*mut u8> {
    let len = usize::try_from(len).map_err(|_| io::Error::from_raw_os_error(libc::EFBIG))?;
    // SAFETY: a fresh shared mapping of the file; no existing memory is affected.
    let addr = unsafe { libc::mmap(ptr::null_mut(), len, prot, libc::MAP_SHARED, fd, 0) };
    if addr == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(addr.cast())
}

pub(crate) fn unmap_all(maps: &[Mapping]) {
    for m in maps.iter().filter(|m| m.len > 0) {
        // SAFETY: each mapping was created by `mmap` with this length and is unmapped once.
        unsafe { libc::munmap(m.addr.cast(), m.len as usize) };
    }
}

impl Drop for MmapEngine {
    fn drop(&mut self) {
        unmap_all(&self.maps);
    }
}

impl Engine for MmapEngine {
    fn is_sync(&self) -> bool {
        true
    }

    fn queue(&mut self, _idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        unit.result = match ops::file_of(&self.files, unit) {
            None => -(libc::EBADF as i64),
            // Trim punches the file itself; the shared mapping then reads zeros.
            // fsync also writes back pages dirtied through the mapping.
            Some(file) => ops::non_rw(file, unit).unwrap_or_else(|| self.transfer(unit)),
        };
        Ok(Queued::Done)
    }

    no_completions!();
}
