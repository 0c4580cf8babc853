//! Opening a job's file with its flags (direct, sync, write hints), laying it out
//! first when it is missing or short.

use super::file::JobFile;
use super::layout::{create_parent_dirs, fadvise, invalidate, lay_out, pre_read};
use super::lock;
use super::region::Existing;
use crate::error::RunError;
use crate::plan::Access;
use crate::sys::safety;
use ioscope_options::JobOptions;
use ioscope_options::SyncMode;
use std::fs::File;
use std::fs::OpenOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::AtomicBool;

pub(super) fn dev_null() -> Result<File, RunError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| RunError::Setup(format!("/dev/null: {e}")))
}

/// Open (creating, laying out when `layout` holds the run's stop flag) one file of
/// the job's `(start, len)` region.
pub(super) fn open_one(
    o: &JobOptions,
    path: &Path,
    ex: Option<Existing>,
    (start, len, target): (u64, u64, u64),
    layout: Option<&AtomicBool>,
    access: Access,
) -> Result<JobFile, RunError> {
    let is_block = ex.as_ref().is_some_and(|e| e.is_block);
    let is_char = ex.as_ref().is_some_and(|e| e.is_char);
    if ex.is_none() && !o.allow_file_create {
        return Err(RunError::Setup(format!(
            "{}: file does not exist and allow_file_create=0",
            path.display()
        )));
    }
    if ex.is_none() {
        create_parent_dirs(path)?;
    }
    if let Some(stop) = layout {
        lay_out(o, path, target, access, stop)?;
    }
    let generic = ex.as_ref().and_then(|e| e.generic.clone());
    let flags = open_flags(o, is_char);
    let write = access.writes || access.trims;
    // The sg driver takes a command by write(2), even a READ: its device is opened
    // read-write whatever the job does (what it may write was checked by the plan).
    let sg = generic
        .as_ref()
        .is_some_and(|g| g.kind == crate::sys::generic::Kind::Scsi);
    let file = OpenOptions::new()
        .read(true)
        .write(write || sg)
        .create(write && !is_block && !is_char && o.allow_file_create)
        .custom_flags(flags)
        .open(path)
        .map_err(|e| {
            let hint = if o.direct && e.raw_os_error() == Some(libc::EINVAL) {
                " (this filesystem does not support O_DIRECT: use direct=0)"
            } else {
                ""
            };
            RunError::Setup(format!("{}: cannot open: {e}{hint}", path.display()))
        })?;
    if let Some(h) = o.write_hint {
        set_write_hint(&file, h).map_err(|e| {
            RunError::Setup(format!("{}: write_hint={}: {e}", path.display(), h.name()))
        })?;
    }
    let md = file
        .metadata()
        .map_err(|e| RunError::Setup(format!("{}: {e}", path.display())))?;
    let real_size = match (is_block, is_char) {
        (true, _) => crate::sys::disk::block_size(&file).unwrap_or(0),
        (_, true) => generic
            .as_ref()
            .map_or(target.max(start + len), |g| g.bytes),
        _ => md.len(),
    };
    let devnum = disk_of(&md, is_block, generic.as_ref());
    if o.pre_read && !o.direct && !is_block {
        pre_read(&file, start, len, layout.unwrap_or(&AtomicBool::new(false)));
    } else if o.invalidate {
        invalidate(&file, start, len);
    }
    if !o.direct {
        fadvise(o, &file, start, len);
    }
    Ok(JobFile {
        path: path.to_path_buf(),
        file,
        is_block,
        real_size,
        start,
        len,
        dev: safety::dev_numbers(devnum),
        lock: lock::for_path(o.lockfile, path),
        claim: None,
    })
}

/// open(2) flags from direct= and sync=. A character device has no page cache to
/// bypass (and the kernel refuses O_DIRECT on one): passthrough commands go to the
/// device as they are.
fn open_flags(o: &JobOptions, is_char: bool) -> i32 {
    let mut flags = 0;
    if o.direct && !is_char {
        flags |= libc::O_DIRECT;
    }
    match o.sync {
        SyncMode::Sync => flags |= libc::O_SYNC,
        SyncMode::Dsync => flags |= libc::O_DSYNC,
        SyncMode::None => {}
    }
    flags
}

/// The device number of the disk a file's I/O goes to: a block device's own, a
/// generic NVMe device's block twin's (for poll queues and disk stats), else the
/// file system's.
fn disk_of(
    md: &std::fs::Metadata,
    is_block: bool,
    generic: Option<&crate::sys::generic::Generic>,
) -> u64 {
    match (is_block, generic.and_then(|g| g.twin.as_ref())) {
        (true, _) => md.rdev(),
        (false, Some((_, rdev))) => *rdev,
        (false, None) => md.dev(),
    }
}

/// write_hint: the data's expected lifetime, on the file's inode (F_SET_RW_HINT).
pub(super) fn set_write_hint(f: &File, h: ioscope_options::WriteHint) -> std::io::Result<()> {
    use ioscope_options::WriteHint as W;
    const F_SET_RW_HINT: libc::c_int = 1036;
    let hint: u64 = match h {
        W::None => 1,
        W::Short => 2,
        W::Medium => 3,
        W::Long => 4,
        W::Extreme => 5,
    };
    // SAFETY: the fcntl reads one u64 from `hint`, which outlives the call.
    if unsafe { libc::fcntl(f.as_raw_fd(), F_SET_RW_HINT, &hint as *const u64) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
