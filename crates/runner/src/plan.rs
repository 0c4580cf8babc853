//! Planning: check that a job set can run (short of touching files or devices), then
//! expand numjobs into job clones, number them, assign reporting groups and split
//! them into stonewall phases.

use crate::error::RunError;
use crate::files::{self, Access};
use crate::run::RunOptions;
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
    }
    Ok(())
}

/// openfiles below the number of files would need fio's file open/close cycling.
fn check_openfiles(j: &JobSpec) -> Result<(), RunError> {
    let o = &j.opts;
    let nfiles = o
        .filename
        .as_deref()
        .map(|f| files::split_names(f).len() as u32)
        .unwrap_or(o.nrfiles);
    if o.openfiles > 0 && o.openfiles < nfiles {
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
        writes: o.rw.mode.writes(),
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
                    groupid,
                });
            }
        }
    }
    phases
}
