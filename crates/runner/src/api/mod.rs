//! The runner's API: plan a [`JobSet`], run it with a clock, a stop flag, an engine
//! source and an [`Observer`], get a [`RunResult`]. Every front end (the fio command
//! line, `quick`, `peak`) and every workflow calls this one path.
//!
//! ```text
//! Runner::new(opts) ─ plan(&set) ─▶ Plan (validated; clones, groups, phases)
//!                    run(&plan, obs) ─▶ per phase: prepare ▶ threads ▶ monitor ▶ collect
//!                                   ─▶ assemble ▶ RunResult
//! ```
//! Tests swap in a manual clock ([`crate::clock::Clock::manual`]) and a scripted
//! engine ([`crate::testing`]) through the same calls.

pub(crate) mod execute;

use crate::clock::{unix_ms, Clock};
use crate::env::{EngineSource, Env, RunOptions};
use crate::error::RunError;
use crate::observe::Observer;
use crate::phase::assemble::{assemble, Finished};
use crate::phase::run_phase;
use crate::plan::Plan;
use crate::setup::files;
use crate::setup::{prepare_job, Ready};
use ioscope_options::JobSet;
use ioscope_stats::RunResult;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::Instant;

/// Set by SIGINT/SIGTERM (or a caller) to end every job promptly; results stay valid.
/// The default stop flag of every [`Runner`].
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Ask all running jobs to stop.
pub fn request_stop() {
    STOP.store(true, Relaxed);
}

/// Runs job sets.
pub struct Runner {
    opts: RunOptions,
    clock: &'static Clock,
    stop: &'static AtomicBool,
    engine: EngineSource,
}

impl Runner {
    /// A runner with the calibrated clock, the process-wide [`STOP`] flag and real engines.
    pub fn new(opts: RunOptions) -> Runner {
        Runner {
            opts,
            clock: Clock::get(),
            stop: &STOP,
            engine: EngineSource::Real,
        }
    }

    /// Use this clock (a manual one in tests).
    pub fn with_clock(mut self, clock: &'static Clock) -> Runner {
        self.clock = clock;
        self
    }

    /// Use this stop flag instead of the process-wide one.
    pub fn with_stop(mut self, stop: &'static AtomicBool) -> Runner {
        self.stop = stop;
        self
    }

    /// Use these engines.
    pub fn with_engine(mut self, engine: EngineSource) -> Runner {
        self.engine = engine;
        self
    }

    /// The same runner (clock, stop flag, engines) with other run options.
    pub fn with_options(&self, opts: RunOptions) -> Runner {
        Runner {
            opts,
            clock: self.clock,
            stop: self.stop,
            engine: self.engine.clone(),
        }
    }

    pub fn options(&self) -> &RunOptions {
        &self.opts
    }

    /// Validate `set` and plan it; nothing is touched.
    pub fn plan<'s>(&self, set: &'s JobSet) -> Result<Plan<'s>, RunError> {
        Plan::new(set, &self.opts)
    }

    /// The plan's phases one after another, until one fails, exitall ends them or a
    /// stop request comes.
    fn run_phases(
        &self,
        plan: &Plan,
        env: &Env,
        obs: &mut dyn Observer,
        (started, results, cleanup, compress): (
            Instant,
            &mut Vec<Finished>,
            &mut Cleanup,
            &mut Vec<crate::record::log::Compress>,
        ),
    ) -> Result<(), RunError> {
        let globals = &plan.set.global_explicit;
        'phases: for (n, phase) in plan.phases.iter().enumerate() {
            if self.stop.load(Relaxed) {
                break;
            }
            let mut ready = Vec::new();
            for p in phase {
                let r = match prepare_job(p, env, obs) {
                    // Stopped while laying out: report the phases that ran.
                    Err(RunError::Interrupted(msg)) => {
                        obs.warning(&format!("ioscope: {msg}"));
                        break 'phases;
                    }
                    r => r?,
                };
                cleanup.track(&r)?;
                ready.push(r);
            }
            crate::setup::share_zones(&mut ready)?;
            cleanup.watch_disks();
            obs.phase_ready(n);
            let (done, exit_all) = run_phase((n, ready), env, started, obs, globals, compress)?;
            results.extend(done);
            if exit_all {
                break;
            }
        }
        Ok(())
    }

    /// Run a plan and return the results (already merged per group_reporting).
    pub fn run(&self, plan: &Plan, obs: &mut dyn Observer) -> Result<RunResult, RunError> {
        let kept = crate::workload::zbd::KeptZones::default();
        let env = Env {
            opts: &self.opts,
            clock: self.clock,
            stop: self.stop,
            engine: self.engine.clone(),
            zones: &kept,
        };
        let started = Instant::now();
        let timestamp_ms = unix_ms();
        let globals = &plan.set.global_explicit;
        let mut results: Vec<Finished> = Vec::new();
        let mut cleanup = Cleanup::default();
        let mut compress = Vec::new();
        let phases = self.run_phases(
            plan,
            &env,
            obs,
            (started, &mut results, &mut cleanup, &mut compress),
        );
        // log_store_compressed: after the last phase (per_job_logs=0 shares a log
        // across phases), and after a failed one too (no staging file is left).
        crate::phase::compress_logs(compress, obs);
        phases?;
        let disks = cleanup.disks.take().map(|w| w.finish()).unwrap_or_default();
        let mut result = assemble(results, disks, timestamp_ms, globals, self.clock);
        result.meta.interrupted = self.stop.load(Relaxed);
        result.meta.polled = polled_jobs(plan, self.opts.nop);
        Ok(result)
    }

    /// Plan and run `set`.
    pub fn run_set(&self, set: &JobSet, obs: &mut dyn Observer) -> Result<RunResult, RunError> {
        let plan = self.plan(set)?;
        self.run(&plan, obs)
    }
}

/// The names of the jobs that polled for their completions (none in NOP mode, which
/// issues no I/O to a device).
fn polled_jobs(plan: &Plan, nop: bool) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in plan
        .phases
        .iter()
        .flatten()
        .filter(|p| p.job.polled && !nop)
    {
        if !names.contains(&p.spec.name) {
            names.push(p.spec.name.clone());
        }
    }
    names
}

/// What a run changes outside itself and undoes at the end, also when it fails:
/// I/O schedulers it switched, files with unlink=1 and the cgroups it made. It also
/// watches the disks.
#[derive(Default)]
struct Cleanup {
    restore: Vec<(PathBuf, String)>,
    unlink: Vec<PathBuf>,
    cgroups: Vec<crate::sys::cgroup::JobCgroup>,
    devs: Vec<(u32, u32)>,
    disks: Option<crate::sys::disk::DiskWatch>,
}

impl Cleanup {
    fn track(&mut self, r: &Ready) -> Result<(), RunError> {
        let o = &r.ctx.opts;
        if let Some(s) = &o.ioscheduler {
            self.restore.extend(files::set_scheduler(&r.ctx.files, s)?);
        }
        // disk_util=0: this job's disks are not watched (another job's may be).
        if o.disk_util {
            self.devs.extend(r.ctx.files.iter().map(|f| f.dev));
        }
        self.cgroups
            .extend(r.ctx.cgroup.iter().filter(|c| c.created).cloned());
        if o.unlink {
            let files = r.ctx.files.iter().filter(|f| !f.is_block);
            self.unlink.extend(files.map(|f| f.path.clone()));
        }
        Ok(())
    }

    /// Start disk statistics once the first phase's devices are known.
    fn watch_disks(&mut self) {
        if self.disks.is_none() {
            self.disks = Some(crate::sys::disk::DiskWatch::start(&self.devs));
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for (p, sched) in self.restore.drain(..) {
            let _ = std::fs::write(&p, sched);
        }
        for p in self.unlink.drain(..) {
            // dircreate/dirstat's names are directories.
            if std::fs::remove_file(&p).is_err() {
                let _ = std::fs::remove_dir(&p);
            }
        }
        // Nested groups before their parents; the jobs' threads have ended.
        for c in self.cgroups.drain(..).rev() {
            c.remove();
        }
    }
}
