//! A job's files: names (filename/directory/filename_format/nrfiles), sizes (size,
//! filesize, offset, offset_increment, percentages), layout of missing or short files
//! ("Laying out IO file"), opening with the job's flags, cache invalidation, the
//! block-device safety check, and unlinking afterwards.

mod file;
mod layout;
pub(crate) mod lock;
mod names;
mod open;
mod region;

pub(crate) use file::JobFile;
use layout::{check_space, create_parent_dirs, dir_of, fs_free, layout_message};
use names::job_paths;
pub(crate) use names::name_op_label;
use open::{dev_null, open_one};
use region::{probe, region};

use crate::error::RunError;
use crate::plan::{split_names, Access};
use crate::sys::safety;
use ioscope_options::JobOptions;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// How a job uses its files: the directions, and read_iolog's trace (whose files
/// they are) if it replays one.
pub struct Uses<'a> {
    pub access: Access,
    pub trace: Option<&'a crate::workload::replay::Trace>,
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
    let paths = paths_of(o, clone, trace, say)?;
    if diskless {
        return no_files(o, &paths, clone);
    }
    let mut plans = Vec::new();
    for (i, p) in paths.iter().enumerate() {
        let layout = FileLayout {
            index: i,
            files: paths.len() as u64,
            clone,
            access,
            trace,
            allow_destructive,
        };
        plans.push(layout.plan(o, p)?);
    }
    let to_lay_out: Vec<&FilePlan> = plans.iter().filter(|f| f.layout).collect();
    if let Some(first) = to_lay_out.first() {
        let bytes: u64 = to_lay_out.iter().map(|f| f.layout_bytes()).sum();
        check_space(&first.path, bytes)?;
        say(layout_message(&o.name, to_lay_out.len() as u64, bytes));
    }
    plans
        .into_iter()
        .map(|f| {
            let layout = f.layout.then_some(stop);
            let mut file = open_one(o, &f.path, f.ex, f.region, layout, access)?;
            file.claim = f.claim;
            Ok(file)
        })
        .collect()
}

/// The job's file names; read_iolog's trace names its own files, each as far as its
/// I/O reaches.
fn paths_of(
    o: &JobOptions,
    clone: u32,
    trace: Option<&crate::workload::replay::Trace>,
    say: &mut dyn FnMut(String),
) -> Result<Vec<PathBuf>, RunError> {
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
    Ok(paths)
}

/// One file of the job, before anything is written: what is there, its region
/// (start, length, size it must have) and whether it is laid out first.
struct FilePlan {
    path: PathBuf,
    ex: Option<region::Existing>,
    region: (u64, u64, u64),
    layout: bool,
    /// The exclusive open of a block device it writes, held for the job.
    claim: Option<safety::Claim>,
}

impl FilePlan {
    fn layout_bytes(&self) -> u64 {
        self.region.2 - self.ex.as_ref().map_or(0, |e| e.size)
    }
}

/// What planning file `index` of `files` needs to know.
struct FileLayout<'a> {
    index: usize,
    files: u64,
    clone: u32,
    access: Access,
    trace: Option<&'a crate::workload::replay::Trace>,
    allow_destructive: bool,
}

impl FileLayout<'_> {
    fn plan(&self, o: &JobOptions, p: &Path) -> Result<FilePlan, RunError> {
        let ex = probe(p, o.filetype, o.pi_act == 1)?;
        passthrough_target(o, p, ex.as_ref())?;
        let (mut start, mut len, mut target) = match self.trace {
            Some(t) => (0, t.ends[self.index], t.ends[self.index]),
            None => region(o, self.files, self.clone, ex.as_ref().map(|e| e.size), p)?,
        };
        // file_append: the I/O goes after the end of a regular file (offset is ignored).
        if o.file_append {
            if let Some(e) = ex.as_ref().filter(|e| !e.is_block) {
                start = e.size;
                target = start + len;
            }
        }
        // fill_device on a file: everything the filesystem has left; ENOSPC ends the job.
        let is_block = ex.as_ref().is_some_and(|e| e.is_block);
        let fill = o.fill_device && self.access.writes && !is_block;
        if fill {
            let have = ex.as_ref().map_or(0, |e| e.size.saturating_sub(start));
            len = have + fs_free(dir_of(p)).unwrap_or(0) / self.files;
            target = start + len;
        }
        let claim = match ex.as_ref() {
            Some(e) if e.is_block => self.check_device(o, p, e, (start, len, target))?,
            Some(e) if e.is_char => self.check_char_device(o, p, e, (start, len, target))?,
            _ => None,
        };
        let layout = !o.create_on_open
            && !fill
            && ex
                .as_ref()
                .map_or(true, |e| !e.is_block && !e.is_char && e.size < target);
        Ok(FilePlan {
            path: p.to_path_buf(),
            ex,
            region: (start, len, target),
            layout,
            claim,
        })
    }

    /// A character device is written only when it discards what it is given
    /// (/dev/null, /dev/zero) or the user said so: /dev/mem or a tape is not a sink.
    fn check_char_device(
        &self,
        o: &JobOptions,
        p: &Path,
        e: &region::Existing,
        region: (u64, u64, u64),
    ) -> Result<Option<safety::Claim>, RunError> {
        if let Some(g) = &e.generic {
            return self.check_generic(o, p, g, region);
        }
        let writes = self.access.writes || self.access.trims;
        let sink = ["/dev/null", "/dev/zero"]
            .iter()
            .any(|s| std::fs::canonicalize(p).is_ok_and(|c| c == Path::new(s)));
        if writes && !sink && !(self.allow_destructive || o.allow_mounted_write) {
            return Err(RunError::Refused(format!(
                "refusing to write to {}: a character device other than /dev/null and /dev/zero. Set allow_mounted_write=1 or pass --allow-destructive to write anyway",
                p.display()
            )));
        }
        Ok(None)
    }

    /// An NVMe generic device is written under its block device twin's rules: no
    /// signature on it, and an exclusive open of it held for the job (so nothing can
    /// mount it meanwhile). Without a twin there is nothing to check: refused unless
    /// the user said so.
    fn check_generic(
        &self,
        o: &JobOptions,
        p: &Path,
        g: &crate::sys::generic::Generic,
        (start, len, target): (u64, u64, u64),
    ) -> Result<Option<safety::Claim>, RunError> {
        if target.max(start + len) > g.bytes {
            return Err(RunError::Setup(format!(
                "{}: I/O region {start}+{len} is beyond the device's size {}",
                p.display(),
                g.bytes
            )));
        }
        let writes = self.access.writes || self.access.trims;
        if !writes || self.allow_destructive || o.allow_mounted_write {
            return Ok(None);
        }
        let refuse = |why: String| {
            RunError::Refused(format!(
                "refusing to write to {}: {why}. Set allow_mounted_write=1 or pass --allow-destructive to write anyway",
                p.display()
            ))
        };
        let Some((twin, rdev)) = &g.twin else {
            return Err(refuse(
                "the device has no block device to check for data and mounts".into(),
            ));
        };
        // The checks read the twin: it must show the whole device's data (the kernel
        // gives a namespace whose format its block layer cannot use a size of 0).
        let shown = std::fs::File::open(twin)
            .and_then(|f| crate::sys::disk::block_size(&f))
            .unwrap_or(0);
        if shown != g.data_bytes {
            return Err(refuse(format!(
                "its block device {} shows {shown} of its {} bytes of data, so its data \
                 cannot be checked",
                twin.display(),
                g.data_bytes
            )));
        }
        safety::claim(twin, *rdev)
            .map(Some)
            .map_err(|why| refuse(format!("its block device is {}: {why}", twin.display())))
    }

    /// A device is written only when it is safe (or the user said so), and the
    /// region fits in it; a checked device is claimed for the job (see safety.rs).
    fn check_device(
        &self,
        o: &JobOptions,
        p: &Path,
        e: &region::Existing,
        (start, len, target): (u64, u64, u64),
    ) -> Result<Option<safety::Claim>, RunError> {
        let writes = self.access.writes || self.access.trims;
        let mut claim = None;
        if writes && !(self.allow_destructive || o.allow_mounted_write) {
            claim = Some(safety::claim(p, e.rdev).map_err(|why| {
                RunError::Refused(format!(
                    "refusing to write to {}: {why}. Set allow_mounted_write=1 or pass --allow-destructive to write anyway",
                    p.display()
                ))
            })?);
        }
        if target.max(start + len) > e.size {
            return Err(RunError::Setup(format!(
                "{}: I/O region {start}+{len} is beyond the device size {}",
                p.display(),
                e.size
            )));
        }
        Ok(claim)
    }
}

/// The passthrough engines need their kind of device: io_uring_cmd an NVMe
/// namespace's generic device, sg a SCSI generic device or a SCSI disk (SG_IO).
fn passthrough_target(
    o: &JobOptions,
    p: &Path,
    ex: Option<&region::Existing>,
) -> Result<(), RunError> {
    use crate::sys::generic::Kind;
    let kind = ex.and_then(|e| e.generic.as_ref()).map(|g| g.kind);
    let block = ex.filter(|e| e.is_block);
    let engine = o.ioengine.as_str();
    let need = match (engine, kind) {
        ("io_uring_cmd", k) if k != Some(Kind::Nvme) => {
            "ioengine=io_uring_cmd (cmd_type=nvme) needs an NVMe namespace's generic device, \
             /dev/ngXnY; this is not one"
        }
        ("sg", k) if k != Some(Kind::Scsi) && block.is_none() => {
            "ioengine=sg needs a SCSI generic device (/dev/sgN) or a SCSI disk; this is neither"
        }
        // SG_IO on a partition addresses the whole disk: its LBAs are not the
        // partition's, and the checks made on the partition would not cover them.
        ("sg", _) if block.is_some_and(|e| crate::sys::disk::is_partition(e.rdev)) => {
            "ioengine=sg on a partition would address the whole disk (SCSI commands know no \
             partitions): name the disk or its /dev/sgN"
        }
        // A generic device takes only its own commands: data written to /dev/sgN is
        // read as a SCSI command, and /dev/ngXnY has no read(2) or write(2).
        (e, Some(Kind::Nvme)) if e != "io_uring_cmd" => {
            "an NVMe generic device takes only ioengine=io_uring_cmd"
        }
        (e, Some(Kind::Scsi)) if e != "sg" => "a SCSI generic device takes only ioengine=sg",
        _ => return Ok(()),
    };
    Err(RunError::Setup(format!("{}: {need}", p.display())))
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
                claim: None,
            })
        })
        .collect()
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
