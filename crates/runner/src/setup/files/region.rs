//! Sizes: what is there already, and the region of a file a job clone does I/O to
//! (size, filesize, offset, offset_increment, percentages, block devices).

use crate::error::RunError;
use ioscope_options::SizePct;
use ioscope_options::{FileType, JobOptions};
use std::fs::File;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::Path;

pub(super) struct Existing {
    pub is_block: bool,
    /// A character device (/dev/null, /dev/zero): nothing to lay out, no size of its
    /// own; the job's region is what it reads or writes.
    pub is_char: bool,
    pub size: u64,
    pub rdev: u64,
    /// An NVMe generic device (io_uring_cmd's target): its namespace has a size, and
    /// its block device twin is what the safety checks look at.
    pub generic: Option<crate::sys::generic::Generic>,
}

/// What is at `path` now: nothing, a file, or a block device and its size (a device
/// that cannot be opened is an error that says why, not a size of 0). `filetype`, when
/// set, is taken as the type instead of the file's own; `pi_act` as in
/// [`crate::sys::generic::probe`].
pub(super) fn probe(
    path: &Path,
    filetype: FileType,
    pi_act: bool,
) -> Result<Option<Existing>, RunError> {
    let Ok(md) = std::fs::metadata(path) else {
        if matches!(filetype, FileType::Block | FileType::Char) {
            return Err(RunError::Setup(format!(
                "{}: filetype={}, and there is no such device",
                path.display(),
                filetype.name()
            )));
        }
        return Ok(None);
    };
    let t = md.file_type();
    let (is_block, is_char) = match filetype {
        FileType::None => (t.is_block_device(), t.is_char_device()),
        FileType::File => (false, false),
        FileType::Block => (true, false),
        FileType::Char => (false, true),
    };
    let generic = match is_char {
        true => crate::sys::generic::probe(path, md.rdev(), pi_act)
            .transpose()
            .map_err(RunError::Setup)?,
        false => None,
    };
    let size = if is_block {
        File::open(path)
            .and_then(|f| crate::sys::disk::block_size(&f))
            .map_err(|e| RunError::Setup(format!("{}: cannot open: {e}", path.display())))?
    } else {
        generic.as_ref().map_or(md.len(), |g| g.bytes)
    };
    Ok(Some(Existing {
        is_block,
        is_char,
        size,
        rdev: md.rdev(),
        generic,
    }))
}

/// Per-file region for one clone given the file's current size: (start, len, the size
/// the file is laid out to).
pub(super) fn region(
    o: &JobOptions,
    nfiles: u64,
    clone: u32,
    cur: Option<u64>,
    name: &Path,
) -> Result<(u64, u64, u64), RunError> {
    let per_file = match (o.filesize, o.size) {
        // A range picks a size per file, repeatably (seeded by job, clone and name).
        (Some(r), _) if r.hi > r.lo => {
            let mut st = o.randseed ^ ((clone as u64) << 32) ^ name.as_os_str().len() as u64;
            let pick = r.lo + crate::workload::rng::splitmix(&mut st) % (r.hi - r.lo + 1);
            (pick / 4096 * 4096).max(r.lo)
        }
        (Some(r), _) => r.lo,
        (None, Some(SizePct::Bytes(b))) => b / nfiles.max(1),
        (None, Some(SizePct::Percent(p))) => match cur {
            Some(c) => ((c as f64) * p / 100.0) as u64,
            None => {
                return Err(RunError::Setup(format!(
                    "{}: size={p}% needs an existing file or device",
                    name.display()
                )))
            }
        },
        (None, None) if o.fill_device => cur.unwrap_or(0),
        (None, None) => match cur {
            Some(c) if c > 0 => c,
            _ => {
                return Err(RunError::Setup(format!(
                    "{}: you need to specify size= (the file does not exist or is empty)",
                    name.display()
                )))
            }
        },
    };
    let base = match o.offset {
        // A percentage offset is aligned up to offset_align (default: the smallest bs).
        SizePct::Percent(p) => {
            let raw = cur.map(|c| ((c as f64) * p / 100.0) as u64).unwrap_or(0);
            let align = if o.offset_align > 0 {
                o.offset_align
            } else {
                o.bs.0.iter().copied().min().unwrap_or(1)
            }
            .max(1);
            raw.div_ceil(align) * align
        }
        SizePct::Bytes(b) => b,
    };
    let inc = o.offset_increment.resolve(cur.unwrap_or(per_file)) * clone as u64;
    let start = base + inc;
    // A size given without an explicit offset is capped at what the file has left.
    let len = match cur {
        Some(c) if o.size.is_none() && o.filesize.is_none() => c.saturating_sub(start),
        _ => per_file,
    };
    // filesize is the file's size, as in fio: the I/O stays inside it, from offset on,
    // and covers size/nrfiles of it when size is given too.
    if o.filesize.is_some() {
        let share = match o.size {
            Some(SizePct::Bytes(b)) => (b / nfiles.max(1)).min(per_file),
            _ => per_file,
        };
        return Ok((start, share.min(per_file.saturating_sub(start)), per_file));
    }
    Ok((start, len, start + len))
}
