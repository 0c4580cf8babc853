//! Preconditioning before the points: purge (BLKDISCARD over the whole device, every
//! zone reset on a zoned one; only with explicit permission and a model or serial the
//! disk must match), the workload-independent fill (sequential writes over the target, `passes` times: SNIA's
//! 2× capacity), then steady state — rounds of a tracking workload until SNIA's
//! criteria hold (or the round limit), or one run with fio's `ss=` for parity.
//!
//! Each round's full result is kept (`precondition/round-NN.json`) and journaled, so
//! the convergence can be shown and checked afterwards.

use crate::error::SweepError;
use crate::file::{Opt, Purge, Steady, SweepFile};
use crate::journal::{now_ms, Event, Journal};
use crate::ready::{write_atomically, Campaign, Progress, Settings};
use ioscope_analysis::steady::snia_check;
use ioscope_analysis::sweep::GuardMetric;
use ioscope_options::error::{Loc, Source};
use ioscope_options::jobfile::{self, RawEntry, RawSection};
use ioscope_options::{spec, JobSet};
use ioscope_runner::Execute;
use ioscope_stats::hosts::Ran;
use std::path::Path;

pub const DIR: &str = "precondition";

/// The job sets preconditioning will run (for checking before anything runs).
pub fn job_sets(f: &SweepFile) -> Result<Vec<JobSet>, SweepError> {
    let mut out = Vec::new();
    if let Some(p) = &f.precondition {
        if p.passes > 0 {
            out.push(fill_job(f, p.passes, &p.bs, p.iodepth)?);
        }
    }
    if let Some(s) = &f.steady {
        out.push(steady_job(f, s)?);
    }
    Ok(out)
}

fn builtin(k: &str, v: &str) -> Opt {
    Opt {
        key: k.into(),
        value: v.into(),
        line: 0,
    }
}

/// A job of target options, the defaults, then `extra` (which wins).
fn job(f: &SweepFile, name: &str, extra: &[Opt]) -> Result<JobSet, SweepError> {
    let entry = |o: &Opt| RawEntry {
        key: o.key.clone(),
        value: Some(o.value.clone()),
        loc: match o.line {
            0 => Loc {
                source: Source::Builtin,
                line: 0,
            },
            l => Loc::file(&f.path, l),
        },
    };
    let entries = f
        .target
        .options
        .iter()
        .chain(&f.defaults)
        .chain(extra)
        .map(entry)
        .collect();
    let sec = RawSection {
        name: name.into(),
        loc: Loc::file(&f.path, 0),
        entries,
    };
    spec::build(&[], &[], &[vec![sec]], &[], &jobfile::Keywords::probe())
        .map_err(|e| SweepError::Run(format!("{name}: {e}")))
}

/// Sequential writes over the whole target, `passes` times, untimed.
fn fill_job(f: &SweepFile, passes: u32, bs: &str, depth: u32) -> Result<JobSet, SweepError> {
    let extra = [
        builtin("rw", "write"),
        builtin("bs", bs),
        builtin("iodepth", &depth.to_string()),
        builtin("loops", &passes.to_string()),
        builtin("numjobs", "1"),
        builtin("time_based", "0"),
        builtin("runtime", "0"),
        builtin("ramp_time", "0"),
    ];
    job(f, "precondition-fill", &extra)
}

fn steady_job(f: &SweepFile, s: &Steady) -> Result<JobSet, SweepError> {
    let mut extra = vec![builtin("numjobs", "1")];
    extra.extend(s.workload.iter().cloned());
    if let Some(ss) = &s.fio_ss {
        extra.push(builtin("steadystate", ss));
    }
    job(f, "steady-state", &extra)
}

pub(crate) struct Preconditioner<'a> {
    pub campaign: &'a Campaign,
    pub dir: &'a Path,
    pub settings: &'a Settings,
    pub exec: &'a dyn Execute,
}

impl Preconditioner<'_> {
    /// Purge, fill and steady state as configured; false when a signal stopped it.
    pub fn run(&self, j: &mut Journal, progress: &mut dyn Progress) -> Result<bool, SweepError> {
        let f = &self.campaign.file;
        if f.precondition.is_none() && f.steady.is_none() {
            return Ok(true);
        }
        if let Some(p) = &f.precondition {
            if p.purge == Purge::Discard {
                self.step(j, "purge", "start")?;
                progress.stage("preconditioning: purge (discard the whole device)");
                self.discard()?;
                self.step(j, "purge", "done")?;
            }
            if p.passes > 0 {
                self.step(j, "fill", "start")?;
                progress.stage(&format!(
                    "preconditioning: {} sequential write pass{} ({} blocks)",
                    p.passes,
                    if p.passes == 1 { "" } else { "es" },
                    p.bs
                ));
                let set = fill_job(f, p.passes, &p.bs, p.iodepth)?;
                let run = self.exec.execute(&set, progress.observer());
                let run = run.map_err(|e| SweepError::Run(format!("preconditioning fill: {e}")))?;
                if run.interrupted() {
                    return Ok(false);
                }
                failed_job(&run, "preconditioning fill")?;
                self.step(j, "fill", "done")?;
            }
        }
        let (steady, rounds) = match &f.steady {
            Some(s) => match self.rounds(s, j, progress)? {
                Some(r) => r,
                None => return Ok(false),
            },
            None => (None, 0),
        };
        j.write(&Event::Conditioned {
            t: now_ms(),
            identity: self.campaign.identity.key(),
            steady,
            rounds,
        })?;
        Ok(true)
    }

    fn step(&self, j: &mut Journal, step: &str, status: &str) -> Result<(), SweepError> {
        j.write(&Event::Precondition {
            t: now_ms(),
            step: step.into(),
            status: status.into(),
        })
    }

    /// Steady-state rounds: (steady?, rounds run), or `None` when a signal stopped them.
    fn rounds(
        &self,
        s: &Steady,
        j: &mut Journal,
        progress: &mut dyn Progress,
    ) -> Result<Option<(Option<bool>, usize)>, SweepError> {
        let set = steady_job(&self.campaign.file, s)?;
        let dir = self.dir.join(DIR);
        crate::ready::own_dir(&dir)?;
        let max = if s.fio_ss.is_some() {
            1
        } else {
            s.criteria.max_rounds
        };
        let mut values = Vec::new();
        for round in 1..=max {
            progress.stage(&format!("steady state: round {round} of at most {max}"));
            let run = self.exec.execute(&set, progress.observer());
            let run =
                run.map_err(|e| SweepError::Run(format!("steady-state round {round}: {e}")))?;
            if run.interrupted() {
                return Ok(None);
            }
            failed_job(&run, &format!("steady-state round {round}"))?;
            let doc = ioscope_report::ran_json_value(&run, true);
            let rel = format!("{DIR}/round-{round:02}.json");
            write_atomically(&self.dir.join(&rel), &doc)?;
            let (iops, bw, _) = crate::ready::figures(&doc);
            let value = match s.metric {
                GuardMetric::Iops => iops,
                GuardMetric::Bw => bw,
            };
            values.push(value);
            let steady = match &s.fio_ss {
                // fio's rule decided, inside the run (on every host).
                Some(_) => attained(&run),
                None => snia_check(&values, &s.criteria).is_some_and(|c| c.steady()),
            };
            j.write(&Event::Round {
                t: now_ms(),
                round,
                value,
                file: rel,
                steady,
            })?;
            if steady {
                progress.stage(&format!("steady state reached at round {round}"));
                return Ok(Some((Some(true), round)));
            }
        }
        progress.stage(&format!(
            "steady state not reached in {max} round(s): the points run anyway (see the \
             convergence chart)"
        ));
        Ok(Some((Some(false), max)))
    }

    /// BLKDISCARD over the whole device: a block device, explicit permission, and a
    /// model or serial in the sweep file that the disk matched (Campaign::new checked).
    fn discard(&self) -> Result<(), SweepError> {
        let c = self.campaign;
        let t = &c.file.target;
        let refuse = |why: &str| Err(SweepError::Target(format!("purge=discard: {why}")));
        if self.exec.ranks() > 1 {
            return refuse(&format!(
                "not under MPI yet: this would discard rank 0's device only, of {} ranks' \
                 (purge each host's device first, then run the sweep without purge)",
                self.exec.ranks()
            ));
        }
        if c.identity.kind != "block device" {
            return refuse(&format!("{} is not a block device", c.identity.path));
        }
        if !(self.settings.allow_destructive || t.allow_destructive) {
            return refuse(
                "destroys everything on the device: allow it with --allow-destructive or \
                 allow_destructive = true in [target]",
            );
        }
        if t.expect_model.is_none() && t.expect_serial.is_none() {
            return refuse(
                "name the disk in [target] (expect_model or expect_serial) so that no other \
                 disk is ever purged",
            );
        }
        discard_device(Path::new(&c.identity.path))
            .map_err(|e| SweepError::Target(format!("purge=discard: {}: {e}", c.identity.path)))
    }
}

/// fio's `ss=`: the job reached steady state — on every host, under MPI.
fn attained(run: &Ran) -> bool {
    let first = |r: &ioscope_stats::RunResult| {
        r.jobs
            .first()
            .and_then(|j| j.steadystate.as_ref())
            .is_some_and(|s| s.attained)
    };
    match run {
        Ran::One(r) => first(r),
        Ran::Hosts(c) => c.hosts.iter().all(|h| h.result.as_ref().is_some_and(first)),
    }
}

fn failed_job(run: &Ran, what: &str) -> Result<(), SweepError> {
    match run.failure() {
        Some(why) => Err(SweepError::Run(format!("{what}: {why}"))),
        None => Ok(()),
    }
}

/// Discard every block of a device, or on a zoned device reset every zone (a discard
/// leaves its zones' data and write pointers as they were). O_EXCL fails on a mounted or
/// otherwise claimed device, so a purge never pulls the disk from under a file system.
fn discard_device(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    const BLKDISCARD: libc::c_ulong = 0x1277;
    // _IOW(0x12, 131, struct blk_zone_range { u64 sector, nr_sectors })
    const BLKRESETZONE: libc::c_ulong = 0x4010_1283;
    let f = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_EXCL)
        .open(path)?;
    let mut size: u64 = 0;
    // SAFETY: BLKGETSIZE64 writes one u64 through the pointer.
    if unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64 as _, &mut size) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let rdev = f.metadata()?.rdev();
    let (major, minor) = (libc::major(rdev), libc::minor(rdev));
    let model = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/queue/zoned"))
        .unwrap_or_default();
    let (request, range) = match model.trim() {
        "host-managed" | "host-aware" => (BLKRESETZONE, [0, size >> 9]),
        _ => (BLKDISCARD, [0, size]),
    };
    // SAFETY: BLKDISCARD reads two u64 (start, length in bytes) through the pointer,
    // BLKRESETZONE two u64 (start, length in sectors).
    if unsafe { libc::ioctl(f.as_raw_fd(), request as _, range.as_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
