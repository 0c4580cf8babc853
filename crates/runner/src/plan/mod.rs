//! Planning: check that a job set can run (short of touching files or devices), then
//! expand numjobs into job clones, number them, assign reporting groups and split
//! them into stonewall phases.

mod access;
pub(crate) mod info;
mod names;
pub(crate) mod verify;

pub(crate) use access::Access;
pub(crate) use names::split_names;

use crate::env::RunOptions;
use crate::error::RunError;
use crate::sys::mem::mem_available;
use ioscope_options::{engines, JobOptions, JobSet, JobSpec};

/// fio's default limit on the number of jobs (clones) in one run; `--max-jobs`
/// changes it.
pub const DEFAULT_MAX_JOBS: u32 = 4096;

/// One job clone, ready to be prepared.
#[derive(Clone, Copy, Debug)]
pub struct Planned<'a> {
    pub spec: &'a JobSpec,
    /// Which clone of the spec (0..numjobs).
    pub clone: u32,
    /// 1-based number over the whole run (log file suffix).
    pub number: u32,
    /// Job clones in the whole run (dedupe_global shares among them).
    pub jobs: u32,
    /// Reporting group.
    pub groupid: u32,
}

/// A validated job set split into phases that run one after another.
#[derive(Debug)]
pub struct Plan<'a> {
    pub set: &'a JobSet,
    pub phases: Vec<Vec<Planned<'a>>>,
}

impl<'a> Plan<'a> {
    /// Validate `set` and plan it.
    pub fn new(set: &'a JobSet, ro: &RunOptions) -> Result<Plan<'a>, RunError> {
        validate(set, ro)?;
        Ok(Plan {
            set,
            phases: phases(set),
        })
    }

    /// Every clone of every phase, in order.
    pub fn clones(&self) -> impl Iterator<Item = &Planned<'a>> {
        self.phases.iter().flatten()
    }

    /// Each job spec with its reporting group and what reports know of it before a
    /// run (fio's job lines).
    pub fn spec_infos(&self) -> Vec<(&'a JobSpec, u32, ioscope_stats::JobInfo)> {
        let groups = group_ids(self.set);
        self.set
            .jobs
            .iter()
            .zip(groups)
            .map(|(j, g)| (j, g, info::job_info(j, &[])))
            .collect()
    }

    /// Number of job clones (threads) in the run.
    pub fn total_jobs(&self) -> u32 {
        self.clones().count() as u32
    }
}

/// Check what ioscope can run before touching anything.
pub fn validate(set: &JobSet, ro: &RunOptions) -> Result<(), RunError> {
    let total: u64 = set.jobs.iter().map(|j| j.opts.numjobs as u64).sum();
    let max = ro.max_jobs.unwrap_or(DEFAULT_MAX_JOBS);
    if total > max as u64 {
        return Err(RunError::Setup(format!(
            "{total} jobs exceed the limit of {max} (raise it with --max-jobs)"
        )));
    }
    check_memory(set)?;
    for (pos, j) in set.jobs.iter().enumerate() {
        if let Some((name, loc)) = j.not_yet.first() {
            let hint = if name.starts_with("ioengine=") {
                let names: Vec<&str> = engines::implemented().collect();
                format!("; supported engines: {}", names.join(", "))
            } else {
                String::new()
            };
            return Err(RunError::Unsupported(format!(
                "{loc}: option {name} is not supported yet (job '{}'){hint}",
                j.name
            )));
        }
        if j.opts.io_submit_mode == ioscope_options::SubmitMode::Offload {
            if let Some(why) = ioscope_engine::offload_refusal(&j.opts.ioengine) {
                return Err(RunError::Refused(format!("job '{}': {why}", j.name)));
            }
        }
        let a = access(&j.opts);
        if ro.readonly && (a.writes || a.trims) {
            return Err(RunError::Refused(format!(
                "job '{}': rw={} writes, refused by --readonly",
                j.name,
                j.opts.rw.mode.name()
            )));
        }
        if let Some(w) = &j.opts.wait_for {
            if !set.jobs[..pos].iter().any(|x| &x.name == w) {
                return Err(RunError::Setup(format!(
                    "job '{}': wait_for={w}: no job named '{w}' is defined before it",
                    j.name
                )));
            }
        }
        check_openfiles(j)?;
        check_directory(j)?;
        check_opendir(j)?;
        crate::sys::cgroup::check(&j.opts)
            .map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
        crate::sys::numa::check(&j.opts)
            .map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
        check_cpus(&j.opts).map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
        verify::spec_of(&j.opts, 1)
            .map_err(|m| RunError::Setup(format!("job '{}': {m}", j.name)))?;
    }
    Ok(())
}

/// The CPU lists of the checker threads and the log compression name CPUs this
/// machine has (cpus_allowed is the kernel's to judge, as in fio: a set with one
/// usable CPU is accepted).
fn check_cpus(o: &JobOptions) -> Result<(), String> {
    let lists = [
        ("verify_async_cpus", &o.verify_async_cpus),
        ("log_compression_cpus", &o.log_compression_cpus),
    ];
    for (name, l) in lists {
        if let Some(l) = l {
            crate::sys::cpu::check_exist(name, &l.0)?;
        }
    }
    Ok(())
}

/// directory= must name existing directories (fio refuses others; missing parents of
/// a filename= are created instead).
fn check_directory(j: &JobSpec) -> Result<(), RunError> {
    let Some(dirs) = j.opts.directory.as_deref() else {
        return Ok(());
    };
    for d in split_names(dirs) {
        if !std::path::Path::new(&d).is_dir() {
            return Err(RunError::Setup(format!(
                "job '{}': directory={d}: not a directory",
                j.name
            )));
        }
    }
    Ok(())
}

/// opendir= must name a directory to walk.
fn check_opendir(j: &JobSpec) -> Result<(), RunError> {
    match j.opts.opendir.as_deref() {
        Some(d) if !std::path::Path::new(d).is_dir() => Err(RunError::Setup(format!(
            "job '{}': opendir={d}: not a directory",
            j.name
        ))),
        _ => Ok(()),
    }
}

/// Memory one job clone needs before its first I/O: I/O buffers, pre-faulted latency
/// histograms and log chunks.
pub fn job_memory(o: &JobOptions) -> u64 {
    const HIST: u64 = (ioscope_stats::hist::BUCKETS * 8) as u64;
    let max_bs = (0..3)
        .map(|d| {
            let split = o
                .bssplit
                .as_ref()
                .and_then(|s| s.0[d].iter().map(|e| e.bs).max());
            let range = o.bsrange.as_ref().map(|r| r.0 .0[d].hi);
            split.or(range).unwrap_or(o.bs.0[d])
        })
        .max()
        .unwrap_or(4096);
    let buffers = o.iodepth.max(1) as u64 * max_bs.next_multiple_of(4096);
    let m = o.rw.mode;
    let dirs = [m.reads(), m.writes(), m.trims()]
        .iter()
        .filter(|&&u| u)
        .count() as u64;
    let tracks = [o.clat_percentiles, o.lat_percentiles, o.slat_percentiles];
    let per_dir = tracks.iter().filter(|&&t| t).count() as u64;
    let logs = [&o.write_lat_log, &o.write_bw_log, &o.write_iops_log]
        .iter()
        .any(|l| l.is_some());
    let log_bytes = if logs {
        (crate::record::log::CHUNKS
            * crate::record::log::CHUNK_RECORDS
            * ioscope_iolog::binary::RECORD_SIZE) as u64
    } else {
        0
    };
    let sync_hist = u64::from(o.fsync > 0 || o.fdatasync > 0);
    buffers + (dirs * per_dir + sync_hist) * HIST + log_bytes
}

/// Refuse a plan whose jobs need more memory than the machine has available.
fn check_memory(set: &JobSet) -> Result<(), RunError> {
    let need: u64 = set
        .jobs
        .iter()
        .map(|j| job_memory(&j.opts).saturating_mul(j.opts.numjobs as u64))
        .sum();
    let Some(avail) = mem_available() else {
        return Ok(());
    };
    if need > avail {
        return Err(RunError::Setup(format!(
            "the jobs need {} MiB of memory before their first I/O (buffers × iodepth × numjobs, \
             latency histograms, log buffers) but only {} MiB are available",
            need >> 20,
            avail >> 20
        )));
    }
    Ok(())
}

/// openfiles below the number of files would need fio's file open/close cycling.
fn check_openfiles(j: &JobSpec) -> Result<(), RunError> {
    let o = &j.opts;
    let nfiles = o
        .filename
        .as_deref()
        .map(|f| split_names(f).len() as u32)
        .unwrap_or(o.nrfiles);
    // A metadata engine whose files take one block each opens, operates on and closes
    // each file in one I/O: how many may be open at once changes nothing.
    let min_bs = o.bs.0.iter().copied().min().unwrap_or(1);
    let per_file = match (&o.filesize, &o.size) {
        (Some(r), _) => Some(r.hi),
        (None, Some(ioscope_options::SizePct::Bytes(b))) => Some(b / u64::from(nfiles.max(1))),
        _ => None,
    };
    let one_block_each = ioscope_engine::is_path_engine(&o.ioengine)
        && o.bsrange.is_none()
        && o.bssplit.is_none()
        && per_file.is_some_and(|s| s <= min_bs);
    if o.openfiles > 0 && o.openfiles < nfiles && !one_block_each {
        return Err(RunError::Unsupported(format!(
            "job '{}': openfiles={} with {nfiles} files is not supported yet",
            j.name, o.openfiles
        )));
    }
    Ok(())
}

/// Which kinds of I/O a job does.
pub fn access(o: &JobOptions) -> Access {
    Access {
        reads: o.rw.mode.reads(),
        // falloc changes the file's allocation whatever the direction (a read is a
        // fallocate that keeps the size), so its files open for writing, as in fio.
        writes: o.rw.mode.writes() || o.ioengine == "falloc",
        trims: o.rw.mode.trims(),
    }
}

/// Reporting group of each job spec (stonewall and new_group start a new one).
pub fn group_ids(set: &JobSet) -> Vec<u32> {
    let mut gid = 0;
    set.jobs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            if i > 0 && (s.opts.stonewall || s.opts.new_group) {
                gid += 1;
            }
            gid
        })
        .collect()
}

/// Clones in stonewall phases: a stonewall job starts a new phase (and group).
fn phases(set: &JobSet) -> Vec<Vec<Planned<'_>>> {
    let mut phases: Vec<Vec<Planned>> = Vec::new();
    let mut number = 0;
    for ((i, spec), groupid) in set.jobs.iter().enumerate().zip(group_ids(set)) {
        if i == 0 || spec.opts.stonewall {
            phases.push(Vec::new());
        }
        for clone in 0..spec.opts.numjobs {
            number += 1;
            if let Some(p) = phases.last_mut() {
                p.push(Planned {
                    spec,
                    clone,
                    number,
                    jobs: 0,
                    groupid,
                });
            }
        }
    }
    for p in phases.iter_mut().flatten() {
        p.jobs = number;
    }
    phases
}
