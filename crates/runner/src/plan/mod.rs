//! Planning: check that a job set can run (short of touching files or devices), then
//! expand numjobs into job clones, number them, assign reporting groups and split
//! them into stonewall phases.

mod access;
pub(crate) mod info;
mod names;
pub(crate) mod resolve;
mod validate;
pub(crate) mod verify;

pub(crate) use access::{access, Access};
pub(crate) use names::split_names;
pub(crate) use resolve::Resolved;

use crate::env::RunOptions;
use crate::error::RunError;
use ioscope_options::{JobSet, JobSpec};

/// One job clone, ready to be prepared.
#[derive(Clone, Debug)]
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
    /// Its derived facts (before a replayed trace is read).
    pub job: Resolved,
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
        validate::validate(set, ro)?;
        validate::steady_groups(set, &group_ids(set))?;
        let mut phases = phases(set)?;
        for phase in &mut phases {
            resolve::fit_memory(phase.iter_mut().map(|p| &mut p.job))?;
        }
        if let Some(dir) = &ro.aux_path {
            for p in phases.iter_mut().flatten() {
                p.job.verify_state = p.job.verify_state.take().map(|f| dir.join(f));
            }
        }
        Ok(Plan { set, phases })
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
            .map(|(j, g)| {
                let sync = ioscope_options::engines::is_sync(&j.opts.ioengine, j.opts.iodepth);
                (j, g, info::job_info(j, sync, &[]))
            })
            .collect()
    }

    /// Number of job clones (threads) in the run.
    pub fn total_jobs(&self) -> u32 {
        self.clones().count() as u32
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
fn phases(set: &JobSet) -> Result<Vec<Vec<Planned<'_>>>, RunError> {
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
                    job: resolve::resolve(spec, number, None)?,
                });
            }
        }
    }
    for p in phases.iter_mut().flatten() {
        p.jobs = number;
    }
    Ok(phases)
}
