//! Where a job's I/O buffers live (`mem=`): page-aligned anonymous memory (malloc, shm,
//! mmap, mmapshared), huge pages (shmhuge: a SysV segment with SHM_HUGETLB; mmaphuge: an
//! anonymous MAP_HUGETLB mapping or a file on hugetlbfs), or a mapped file (`mmap:FILE`,
//! `mmapshared:FILE`, `mmaphuge:FILE`), which is created for the job and removed after
//! it, as in fio. Huge pages come from /proc/sys/vm/nr_hugepages: none left is an error
//! that says so, before any I/O.

use ioscope_options::{JobOptions, MemType};
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ffi::CString;

/// One job's buffer region, freed as it was allocated.
pub struct IoMem {
    pub ptr: *mut u8,
    /// Bytes the region holds (at least what was asked).
    pub len: usize,
    backing: Backing,
}

enum Backing {
    /// An anonymous (or huge-page) mapping of `len` bytes.
    Mapped,
    /// The allocator, for alignments beyond a page.
    Heap(Layout),
    /// An attached SysV segment (already marked for removal).
    Shm,
    /// A mapping of this file, removed with the region.
    File(String),
}

// SAFETY: the region is owned by one job thread at a time.
unsafe impl Send for IoMem {}

impl IoMem {
    /// `size` bytes aligned to `align`, as `o.mem` says.
    pub fn new(o: &JobOptions, size: usize, align: usize) -> Result<IoMem, String> {
        let huge = o.hugepage_size.max(4096) as usize;
        let kind = o.mem.kind;
        match (kind, &o.mem.file) {
            (MemType::ShmHuge, _) => shm_huge(size.div_ceil(huge) * huge),
            (MemType::MmapHuge, None) => anon(size.div_ceil(huge) * huge, libc::MAP_HUGETLB)
                .map_err(|e| huge_hint("mmaphuge", size, e)),
            (MemType::MmapHuge, Some(f)) => file(f, size.div_ceil(huge) * huge, true)
                .map_err(|e| huge_hint(&format!("mmaphuge:{f}"), size, e)),
            (MemType::Mmap, Some(f)) => {
                file(f, size, false).map_err(|e| format!("mem=mmap:{f}: {e}"))
            }
            (MemType::MmapShared, Some(f)) => {
                file(f, size, true).map_err(|e| format!("mem=mmapshared:{f}: {e}"))
            }
            (MemType::Cudamalloc, _) => Err("mem=cudamalloc is not supported yet".into()),
            _ if align <= 4096 => anon(size, 0).map_err(|e| format!("{size} bytes: {e}")),
            _ => heap(size, align),
        }
    }
}

/// "mmaphuge: 8 MiB of huge pages: Cannot allocate memory (free huge pages: 0 of 0;
/// /proc/sys/vm/nr_hugepages sets them)".
fn huge_hint(what: &str, size: usize, e: std::io::Error) -> String {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let field = |k: &str| {
        meminfo
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| "?".into())
    };
    format!(
        "mem={what}: {size} bytes of huge pages: {e} (free huge pages: {} of {}; \
         /proc/sys/vm/nr_hugepages sets them)",
        field("HugePages_Free:"),
        field("HugePages_Total:")
    )
}

fn anon(len: usize, extra: libc::c_int) -> std::io::Result<IoMem> {
    // SAFETY: an anonymous private mapping; no file or address is involved.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | extra,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(std::io::Error::last_os_error());
    }
    Ok(IoMem {
        ptr: p.cast(),
        len,
        backing: Backing::Mapped,
    })
}

fn heap(size: usize, align: usize) -> Result<IoMem, String> {
    let layout = Layout::from_size_align(size, align).map_err(|e| e.to_string())?;
    // SAFETY: layout has non-zero size (callers ask for at least one slot).
    let ptr = unsafe { alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(format!("cannot allocate {size} bytes of I/O buffers"));
    }
    Ok(IoMem {
        ptr,
        len: size,
        backing: Backing::Heap(layout),
    })
}

fn shm_huge(len: usize) -> Result<IoMem, String> {
    // SAFETY: a new private segment; the flags ask for huge pages.
    let id = unsafe {
        libc::shmget(
            libc::IPC_PRIVATE,
            len,
            libc::IPC_CREAT | libc::SHM_HUGETLB | 0o600,
        )
    };
    if id < 0 {
        return Err(huge_hint("shmhuge", len, std::io::Error::last_os_error()));
    }
    // SAFETY: attaching the segment just made, anywhere.
    let p = unsafe { libc::shmat(id, std::ptr::null(), 0) };
    let attached = std::io::Error::last_os_error();
    // Removed once detached: nothing is left behind, whatever happens to the job.
    // SAFETY: IPC_RMID on our own segment takes no buffer.
    unsafe { libc::shmctl(id, libc::IPC_RMID, std::ptr::null_mut()) };
    if p as isize == -1 {
        return Err(format!("mem=shmhuge: shmat: {attached}"));
    }
    Ok(IoMem {
        ptr: p.cast(),
        len,
        backing: Backing::Shm,
    })
}

fn file(path: &str, len: usize, shared: bool) -> std::io::Result<IoMem> {
    let c = CString::new(path)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidInput, "a NUL in the name"))?;
    // SAFETY: open(2) of a NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC,
            0o644,
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let fail = |e: std::io::Error| {
        // SAFETY: closing and removing what was just opened.
        unsafe {
            libc::close(fd);
            libc::unlink(c.as_ptr());
        }
        e
    };
    // SAFETY: ftruncate on our fd.
    if unsafe { libc::ftruncate(fd, len as libc::off_t) } != 0 {
        return Err(fail(std::io::Error::last_os_error()));
    }
    let flags = if shared {
        libc::MAP_SHARED
    } else {
        libc::MAP_PRIVATE
    };
    // SAFETY: a mapping of `len` bytes of the file just sized to `len`.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            flags,
            fd,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return Err(fail(std::io::Error::last_os_error()));
    }
    // The mapping keeps the file's pages; the descriptor is not needed.
    // SAFETY: closing our fd.
    unsafe { libc::close(fd) };
    Ok(IoMem {
        ptr: p.cast(),
        len,
        backing: Backing::File(path.to_string()),
    })
}

impl Drop for IoMem {
    fn drop(&mut self) {
        // SAFETY: each region is freed the way it was allocated, once.
        unsafe {
            match &self.backing {
                Backing::Mapped => {
                    libc::munmap(self.ptr.cast(), self.len);
                }
                Backing::Heap(layout) => dealloc(self.ptr, *layout),
                Backing::Shm => {
                    libc::shmdt(self.ptr.cast());
                }
                Backing::File(path) => {
                    libc::munmap(self.ptr.cast(), self.len);
                    let _ = std::fs::remove_file(path);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(mem: &str) -> JobOptions {
        let mut o = ioscope_options::spec::defaults().clone();
        let cx = ioscope_options::types::ValueCx {
            def: ioscope_options::table::find("mem").unwrap(),
            kb_base: 1024,
        };
        o.mem =
            <ioscope_options::MemSpec as ioscope_options::types::OptValue>::parse(mem, &cx, &o.mem)
                .unwrap();
        o
    }

    #[test]
    fn a_mapped_file_holds_the_buffers_and_goes_with_them() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("buf");
        let m = IoMem::new(&opts(&format!("mmapshared:{}", f.display())), 8192, 4096).unwrap();
        // SAFETY: the region has 8192 bytes.
        unsafe { std::ptr::write_bytes(m.ptr, 0xab, 8192) };
        let on_disk = std::fs::read(&f).unwrap();
        assert_eq!(on_disk.len(), 8192);
        assert!(
            on_disk.iter().all(|&b| b == 0xab),
            "shared: the file sees the writes"
        );
        drop(m);
        assert!(!f.exists(), "removed with the buffers, as fio does");
        let m = IoMem::new(&opts("mmap"), 4096, 4096).unwrap();
        assert_eq!(m.len, 4096);
        let e = IoMem::new(&opts("mmap:/nonexistent/dir/x"), 4096, 4096)
            .err()
            .unwrap();
        assert!(e.contains("/nonexistent/dir/x"), "{e}");
    }
}
