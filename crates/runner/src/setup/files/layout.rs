//! Laying out files ("Laying out IO file"): free space, parent directories, writing
//! or allocating the size, and the page-cache hints before I/O.

use crate::error::RunError;
use crate::plan::Access;
use ioscope_options::JobOptions;
use std::fs::File;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// fio's notice before it lays out files.
pub(super) fn layout_message(job: &str, files: u64, bytes: u64) -> String {
    let s = if files > 1 { "s" } else { "" };
    format!(
        "{job}: Laying out IO file{s} ({files} file{s} / {}MiB)",
        bytes >> 20
    )
}

/// The directory a file is (or will be) in.
pub(super) fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Bytes available to us on the filesystem holding `dir`.
pub(super) fn fs_free(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: zeroed statvfs is a valid out-parameter; c is NUL-terminated.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// Refuse a layout that would fill the filesystem.
pub(super) fn check_space(path: &Path, need: u64) -> Result<(), RunError> {
    let dir = dir_of(path);
    let Some(free) = fs_free(dir) else {
        return Ok(());
    };
    if need > free {
        return Err(RunError::Setup(format!(
            "{}: laying out {} MiB needs more than the {} MiB free on {}",
            path.display(),
            need >> 20,
            free >> 20,
            dir.display()
        )));
    }
    Ok(())
}

/// A new file's missing parent directories are created, as fio does for filename=.
pub(super) fn create_parent_dirs(path: &Path) -> Result<(), RunError> {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() && !d.exists() => std::fs::create_dir_all(d)
            .map_err(|e| RunError::Setup(format!("{}: cannot create directory: {e}", d.display()))),
        _ => Ok(()),
    }
}

/// Create or extend a regular file to `size`: filled with data when the job reads it
/// (or overwrite=1), else just sized.
pub(super) fn lay_out(
    o: &JobOptions,
    path: &Path,
    size: u64,
    access: Access,
    stop: &AtomicBool,
) -> Result<(), RunError> {
    let err =
        |what: &str, e: std::io::Error| RunError::Setup(format!("{}: {what}: {e}", path.display()));
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| err("cannot create", e))?;
    let cur = f.metadata().map(|m| m.len()).unwrap_or(0);
    let fill = access.reads || o.overwrite || access.trims;
    if !fill {
        preallocate(o, &f, cur, size);
        return f.set_len(size).map_err(|e| err("cannot extend", e));
    }
    let chunk = 1usize << 20;
    let mut buf = vec![0u8; chunk];
    if !o.zero_buffers {
        let mut st = o.randseed ^ 0x5eed;
        for w in buf.chunks_mut(8) {
            let v = crate::workload::rng::splitmix(&mut st).to_le_bytes();
            w.copy_from_slice(&v[..w.len()]);
        }
    }
    let mut off = cur;
    while off < size {
        // A signal stops a long layout within one chunk (1 MiB).
        if stop.load(Relaxed) {
            return Err(RunError::Interrupted(format!(
                "{}: layout interrupted at {} of {} MiB",
                path.display(),
                off >> 20,
                size >> 20
            )));
        }
        let n = ((size - off) as usize).min(chunk);
        std::os::unix::fs::FileExt::write_all_at(&f, &buf[..n], off)
            .map_err(|e| err("cannot lay out", e))?;
        off += n as u64;
    }
    if o.create_fsync {
        f.sync_all().map_err(|e| err("fsync", e))?;
    }
    Ok(())
}

pub(super) fn preallocate(o: &JobOptions, f: &File, cur: u64, size: u64) {
    use ioscope_options::Fallocate as F;
    let mode = match o.fallocate {
        F::None | F::Truncate => return,
        F::Native | F::Posix => 0,
        F::Keep => libc::FALLOC_FL_KEEP_SIZE,
        F::Zero => libc::FALLOC_FL_ZERO_RANGE,
    };
    // SAFETY: plain syscall on a valid fd; failure (unsupported) is harmless here.
    unsafe { libc::fallocate(f.as_raw_fd(), mode, cur as i64, (size - cur) as i64) };
}

/// pre_read: pull the region into the page cache.
pub(super) fn pre_read(f: &File, start: u64, len: u64, stop: &AtomicBool) {
    let mut buf = vec![0u8; 1 << 20];
    let mut off = start;
    while off < start + len && !stop.load(Relaxed) {
        match std::os::unix::fs::FileExt::read_at(f, &mut buf, off) {
            Ok(0) | Err(_) => break,
            Ok(n) => off += n as u64,
        }
    }
}

/// fadvise_hint: tell the kernel the access pattern (fio's default hints by workload).
pub(super) fn fadvise(o: &JobOptions, f: &File, start: u64, len: u64) {
    let advice = match o.fadvise_hint.as_str() {
        "1" if o.rw.mode.is_random() => libc::POSIX_FADV_RANDOM,
        "1" | "sequential" => libc::POSIX_FADV_SEQUENTIAL,
        "random" => libc::POSIX_FADV_RANDOM,
        "normal" => libc::POSIX_FADV_NORMAL,
        "noreuse" => libc::POSIX_FADV_NOREUSE,
        _ => return,
    };
    // SAFETY: advisory call on a valid fd.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), start as i64, len as i64, advice) };
}

/// Drop cached pages of the region so reads come from the device.
pub(super) fn invalidate(f: &File, start: u64, len: u64) {
    // SAFETY: advisory call on a valid fd.
    unsafe {
        libc::posix_fadvise(
            f.as_raw_fd(),
            start as i64,
            len as i64,
            libc::POSIX_FADV_DONTNEED,
        )
    };
}
