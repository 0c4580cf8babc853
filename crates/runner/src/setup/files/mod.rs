//! A job's files: names (filename/directory/filename_format/nrfiles), sizes (size,
//! filesize, offset, offset_increment, percentages), layout of missing or short files
//! ("Laying out IO file"), opening with the job's flags, cache invalidation, the
//! block-device safety check, and unlinking afterwards.

pub(crate) mod lock;

use crate::error::RunError;
use crate::plan::{split_names, Access};
use crate::sys::safety;
use ioscope_options::{JobOptions, SizePct, SyncMode};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// An open file with the region of it the job does I/O to.
#[derive(Debug)]
pub struct JobFile {
    pub path: PathBuf,
    pub file: File,
    pub is_block: bool,
    /// Size of the file or device after layout.
    pub real_size: u64,
    /// I/O region: [start, start + len).
    pub start: u64,
    pub len: u64,
    /// Block device numbers (or of the device holding the file), for disk stats.
    pub dev: (u32, u32),
    /// lockfile: the lock the jobs sharing this file take turns with.
    pub lock: Option<std::sync::Arc<lock::FileLock>>,
}

/// How a job uses its files: the directions, and read_iolog's trace (whose files
/// they are) if it replays one.
pub struct Uses<'a> {
    pub access: Access,
    pub trace: Option<&'a crate::workload::replay::Trace>,
}

/// File paths of one job clone.
pub fn job_paths(o: &JobOptions, clone: u32) -> Vec<PathBuf> {
    let dirs: Vec<String> = o.directory.as_deref().map(split_names).unwrap_or_default();
    let in_dir = |name: &str, i: usize| -> PathBuf {
        match dirs.get(i % dirs.len().max(1)) {
            Some(d) if !Path::new(name).is_absolute() => Path::new(d).join(name),
            _ => PathBuf::from(name),
        }
    };
    let mut found = Vec::new();
    if let Some(d) = o.opendir.as_deref() {
        walk(Path::new(d), &mut found);
    }
    match o.filename.as_deref() {
        Some(list) => split_names(list)
            .iter()
            .enumerate()
            .map(|(i, n)| in_dir(n, i))
            .chain(found)
            .collect(),
        // opendir's files replace the job's own, as in fio.
        None if o.opendir.is_some() => found,
        None => (0..o.nrfiles)
            .map(|f| {
                let name = o
                    .filename_format
                    .replace("$jobname", &o.name)
                    .replace("$jobnum", &clone.to_string())
                    .replace("$filenum", &f.to_string())
                    .replace("$clientuid", "0");
                in_dir(&name, f as usize)
            })
            .collect(),
    }
}

/// opendir: the regular files under `dir`, depth first, each directory in name order
/// (fio takes readdir's order, which no two filesystems agree on). Symbolic links are
/// not followed; what cannot be read is left out.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (p, t) in entries {
        if t.is_file() {
            out.push(p);
        } else if t.is_dir() {
            walk(&p, out);
        }
    }
}

/// Size of a block device (BLKGETSIZE64).
fn block_size(f: &File) -> std::io::Result<u64> {
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    let mut size: u64 = 0;
    // SAFETY: the ioctl writes one u64 to `size`.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size) };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(size)
}

struct Existing {
    is_block: bool,
    size: u64,
    rdev: u64,
}

fn probe(path: &Path) -> Option<Existing> {
    let md = std::fs::metadata(path).ok()?;
    let is_block = md.file_type().is_block_device();
    let size = if is_block {
        File::open(path)
            .ok()
            .and_then(|f| block_size(&f).ok())
            .unwrap_or(0)
    } else {
        md.len()
    };
    Some(Existing {
        is_block,
        size,
        rdev: md.rdev(),
    })
}

/// Per-file region for one clone given the file's current size: (start, len, the size
/// the file is laid out to).
fn region(
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

/// Set up and open the files of one job clone. `say` receives fio's layout message.
pub fn prepare(
    o: &JobOptions,
    clone: u32,
    uses: Uses,
    allow_destructive: bool,
    diskless: bool,
    stop: &AtomicBool,
    say: &mut dyn FnMut(String),
) -> Result<Vec<JobFile>, RunError> {
    let Uses { access, trace } = uses;
    // read_iolog: the trace's files, each as far as its I/O reaches (`access` is the
    // trace's directions then).
    let paths = match trace {
        Some(t) => t.files.clone(),
        None => job_paths(o, clone),
    };
    if trace.is_none() && o.opendir.is_some() {
        let named = o.filename.as_deref().map_or(0, |l| split_names(l).len());
        say(format!(
            "ioscope: opendir added {} files",
            paths.len().saturating_sub(named)
        ));
    }
    if paths.is_empty() {
        return Err(RunError::Setup(format!(
            "{}: no files to do I/O to",
            o.name
        )));
    }
    let nfiles = paths.len() as u64;
    if diskless {
        return no_files(o, &paths, clone);
    }
    let mut plans = Vec::new();
    let mut layout_files = 0u64;
    let mut layout_bytes = 0u64;
    for (i, p) in paths.iter().enumerate() {
        let ex = probe(p);
        let (mut start, mut len, mut target) = match &trace {
            Some(t) => (0, t.ends[i], t.ends[i]),
            None => region(o, nfiles, clone, ex.as_ref().map(|e| e.size), p)?,
        };
        // file_append: the I/O goes after the end of a regular file (offset is ignored).
        if o.file_append {
            if let Some(e) = ex.as_ref().filter(|e| !e.is_block) {
                start = e.size;
                target = start + len;
            }
        }
        // fill_device on a file: everything the filesystem has left; ENOSPC ends the job.
        let fill = o.fill_device && access.writes && !ex.as_ref().is_some_and(|e| e.is_block);
        if fill {
            let have = ex.as_ref().map_or(0, |e| e.size.saturating_sub(start));
            len = have + fs_free(dir_of(p)).unwrap_or(0) / nfiles;
            target = start + len;
        }
        if let Some(e) = &ex {
            if e.is_block
                && (access.writes || access.trims)
                && !(allow_destructive || o.allow_mounted_write)
            {
                if let Some(why) = safety::write_hazard(p, e.rdev) {
                    return Err(RunError::Refused(format!(
                        "refusing to write to {}: {why}. Set allow_mounted_write=1 or pass --allow-destructive to write anyway",
                        p.display()
                    )));
                }
            }
            if e.is_block && target.max(start + len) > e.size {
                return Err(RunError::Setup(format!(
                    "{}: I/O region {start}+{len} is beyond the device size {}",
                    p.display(),
                    e.size
                )));
            }
        }
        let needs_layout = !o.create_on_open
            && !fill
            && ex.as_ref().map_or(true, |e| !e.is_block && e.size < target);
        if needs_layout {
            layout_files += 1;
            layout_bytes += target - ex.as_ref().map_or(0, |e| e.size);
        }
        plans.push((p.clone(), ex, (start, len, target), needs_layout));
    }
    if layout_files > 0 {
        check_space(&plans[0].0, layout_bytes)?;
        say(layout_message(&o.name, layout_files, layout_bytes));
    }
    plans
        .into_iter()
        .map(|(p, ex, region, layout)| {
            let layout = layout.then_some(stop);
            open_one(o, &p, ex, region, layout, access)
        })
        .collect()
}

/// fio's metadata engines (filecreate, filestat, filedelete, dircreate, dirstat,
/// dirdelete) operate on names. Before the run: nothing for the creating engines
/// (their parent directories aside); files laid out as for any job for filestat and
/// filedelete; directories made for dirstat and dirdelete. No descriptor stays open,
/// as fio opens none: an open file would change what unlink(2) costs.
pub fn prepare_names(
    o: &JobOptions,
    clone: u32,
    access: Access,
    stop: &AtomicBool,
    say: &mut dyn FnMut(String),
) -> Result<Vec<JobFile>, RunError> {
    let engine = o.ioengine.as_str();
    if o.read_iolog.is_some() {
        return Err(RunError::Setup(format!(
            "{}: ioengine={engine} works on the job's own files, not a read_iolog trace",
            o.name
        )));
    }
    let paths = job_paths(o, clone);
    for p in &paths {
        let md = std::fs::symlink_metadata(p).ok();
        if md.as_ref().is_some_and(|m| {
            let t = m.file_type();
            t.is_block_device() || t.is_char_device() || t.is_fifo() || t.is_socket()
        }) {
            return Err(RunError::Setup(format!(
                "{}: ioengine={engine} works on files and directories only",
                p.display()
            )));
        }
    }
    match engine {
        "filestat" | "filedelete" => {
            let uses = Uses {
                access,
                trace: None,
            };
            let mut files = prepare(o, clone, uses, false, false, stop, say)?;
            for f in &mut files {
                f.file = dev_null()?;
            }
            return Ok(files);
        }
        "dirstat" | "dirdelete" => {
            for p in &paths {
                match std::fs::metadata(p) {
                    Ok(m) if m.is_dir() => {}
                    Ok(_) => {
                        return Err(RunError::Setup(format!(
                            "{}: exists and is not a directory",
                            p.display()
                        )))
                    }
                    Err(_) => std::fs::create_dir_all(p).map_err(|e| {
                        RunError::Setup(format!("{}: cannot create directory: {e}", p.display()))
                    })?,
                }
            }
        }
        _ => {
            for p in &paths {
                create_parent_dirs(p)?;
            }
        }
    }
    no_files(o, &paths, clone)
}

/// The call a metadata engine makes, for its error messages (fio's names).
pub fn name_op_label(o: &JobOptions) -> &'static str {
    match o.ioengine.as_str() {
        "filecreate" => "open",
        "filestat" | "dirstat" => match o.stat_type {
            ioscope_options::StatType::Stat => "stat",
            ioscope_options::StatType::Lstat => "lstat",
            ioscope_options::StatType::Statx => "statx",
        },
        "filedelete" => "delete",
        "dircreate" => "mkdir",
        "dirdelete" => "rmdir",
        _ => "operation",
    }
}

fn dev_null() -> Result<File, RunError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
        .map_err(|e| RunError::Setup(format!("/dev/null: {e}")))
}

/// fio's notice before it lays out files.
fn layout_message(job: &str, files: u64, bytes: u64) -> String {
    let s = if files > 1 { "s" } else { "" };
    format!(
        "{job}: Laying out IO file{s} ({files} file{s} / {}MiB)",
        bytes >> 20
    )
}

/// The null engine does no I/O to files (fio's "diskless" engines): nothing is created;
/// every "file" is /dev/null with the region the job would use.
fn no_files(o: &JobOptions, paths: &[PathBuf], clone: u32) -> Result<Vec<JobFile>, RunError> {
    paths
        .iter()
        .map(|p| {
            let (start, len, _) = region(o, paths.len() as u64, clone, None, p)?;
            let file = dev_null()?;
            Ok(JobFile {
                path: p.clone(),
                file,
                is_block: false,
                real_size: start + len,
                start,
                len,
                dev: (0, 0),
                lock: lock::for_path(o.lockfile, p),
            })
        })
        .collect()
}

/// The directory a file is (or will be) in.
fn dir_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// Bytes available to us on the filesystem holding `dir`.
fn fs_free(dir: &Path) -> Option<u64> {
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
fn check_space(path: &Path, need: u64) -> Result<(), RunError> {
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

/// Open (creating, laying out when `layout` holds the run's stop flag) one file of
/// the job's `(start, len)` region.
fn open_one(
    o: &JobOptions,
    path: &Path,
    ex: Option<Existing>,
    (start, len, target): (u64, u64, u64),
    layout: Option<&AtomicBool>,
    access: Access,
) -> Result<JobFile, RunError> {
    let is_block = ex.as_ref().is_some_and(|e| e.is_block);
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
    let mut flags = 0;
    if o.direct {
        flags |= libc::O_DIRECT;
    }
    match o.sync {
        SyncMode::Sync => flags |= libc::O_SYNC,
        SyncMode::Dsync => flags |= libc::O_DSYNC,
        SyncMode::None => {}
    }
    let write = access.writes || access.trims;
    let file = OpenOptions::new()
        .read(true)
        .write(write)
        .create(write && !is_block && o.allow_file_create)
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
    let real_size = if is_block {
        block_size(&file).unwrap_or(0)
    } else {
        md.len()
    };
    let devnum = if is_block { md.rdev() } else { md.dev() };
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
    })
}

/// write_hint: the data's expected lifetime, on the file's inode (F_SET_RW_HINT).
fn set_write_hint(f: &File, h: ioscope_options::WriteHint) -> std::io::Result<()> {
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

/// A new file's missing parent directories are created, as fio does for filename=.
fn create_parent_dirs(path: &Path) -> Result<(), RunError> {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() && !d.exists() => std::fs::create_dir_all(d)
            .map_err(|e| RunError::Setup(format!("{}: cannot create directory: {e}", d.display()))),
        _ => Ok(()),
    }
}

/// Create or extend a regular file to `size`: filled with data when the job reads it
/// (or overwrite=1), else just sized.
fn lay_out(
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

fn preallocate(o: &JobOptions, f: &File, cur: u64, size: u64) {
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
fn pre_read(f: &File, start: u64, len: u64, stop: &AtomicBool) {
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
fn fadvise(o: &JobOptions, f: &File, start: u64, len: u64) {
    let advice = match o.fadvise_hint.as_str() {
        "1" if o.rw.mode.is_random() => libc::POSIX_FADV_RANDOM,
        "1" | "sequential" => libc::POSIX_FADV_SEQUENTIAL,
        "random" => libc::POSIX_FADV_RANDOM,
        "normal" => libc::POSIX_FADV_NORMAL,
        _ => return,
    };
    // SAFETY: advisory call on a valid fd.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), start as i64, len as i64, advice) };
}

/// Drop cached pages of the region so reads come from the device.
fn invalidate(f: &File, start: u64, len: u64) {
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

/// Switch the I/O scheduler of the block devices behind `files`; returns what to restore.
pub fn set_scheduler(files: &[JobFile], sched: &str) -> Result<Vec<(PathBuf, String)>, RunError> {
    let mut restore = Vec::new();
    for f in files {
        let Some(disk) = crate::sys::disk::whole_disk(f.dev) else {
            continue;
        };
        let p = PathBuf::from(format!("/sys/block/{disk}/queue/scheduler"));
        let Ok(cur) = std::fs::read_to_string(&p) else {
            continue;
        };
        let active = cur
            .split_whitespace()
            .find(|s| s.starts_with('['))
            .map(|s| s.trim_matches(|c| c == '[' || c == ']').to_string())
            .unwrap_or_default();
        if !cur
            .split_whitespace()
            .any(|s| s.trim_matches(|c| c == '[' || c == ']') == sched)
        {
            return Err(RunError::Setup(format!(
                "ioscheduler={sched}: {disk} offers only: {}",
                cur.trim()
            )));
        }
        if active != sched && !restore.iter().any(|(q, _)| q == &p) {
            std::fs::write(&p, sched).map_err(|e| {
                RunError::Setup(format!(
                    "ioscheduler={sched}: cannot write {}: {e}",
                    p.display()
                ))
            })?;
            restore.push((p, active));
        }
    }
    Ok(restore)
}

/// unlink_each_loop: delete the file between loops. A job that writes gets it back
/// empty under the same descriptor (opened again with the same flags, as fio's
/// O_CREAT open does), so the engine's descriptor stays valid; a job that only reads
/// cannot open it again, and fails as in fio (ENOENT). Errors: (errno, fio's text).
pub fn unlink_and_recreate(f: &JobFile, writes: bool) -> Result<(), (i32, String)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let os_err = |what: &str| {
        let e = std::io::Error::last_os_error();
        (
            e.raw_os_error().unwrap_or(libc::EIO),
            format!("{what}({}): {e}", f.path.display()),
        )
    };
    std::fs::remove_file(&f.path).map_err(|e| {
        (
            e.raw_os_error().unwrap_or(libc::EIO),
            format!("unlink({}): {e}", f.path.display()),
        )
    })?;
    if !writes {
        return Err((
            libc::ENOENT,
            format!("open({}): No such file or directory", f.path.display()),
        ));
    }
    let fd = f.file.as_raw_fd();
    // SAFETY: fcntl F_GETFL on a descriptor the job owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(os_err("fcntl"));
    }
    let path = std::ffi::CString::new(f.path.as_os_str().as_bytes())
        .map_err(|_| (libc::EINVAL, format!("{}: NUL in path", f.path.display())))?;
    let keep =
        flags & (libc::O_ACCMODE | libc::O_DIRECT | libc::O_SYNC | libc::O_DSYNC | libc::O_NOATIME);
    // SAFETY: open with a NUL-terminated path; the new descriptor is ours to close.
    let new = unsafe { libc::open(path.as_ptr(), keep | libc::O_CREAT | libc::O_CLOEXEC, 0o644) };
    if new < 0 {
        return Err(os_err("open"));
    }
    // SAFETY: dup3 replaces the job's descriptor with the new file; then the extra
    // descriptor is closed.
    let r = unsafe { libc::dup3(new, fd, libc::O_CLOEXEC) };
    let err = (r < 0).then(|| os_err("dup3"));
    // SAFETY: `new` is a descriptor we opened above.
    unsafe { libc::close(new) };
    err.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_escapes() {
        assert_eq!(split_names("a:b"), vec!["a", "b"]);
        assert_eq!(split_names("a\\:b:c"), vec!["a:b", "c"]);
        let mut o = ioscope_options::spec::defaults().clone();
        o.name = "job".into();
        o.nrfiles = 2;
        o.directory = Some("/tmp/x".into());
        assert_eq!(
            job_paths(&o, 3),
            vec![
                PathBuf::from("/tmp/x/job.3.0"),
                PathBuf::from("/tmp/x/job.3.1")
            ]
        );
    }
}
