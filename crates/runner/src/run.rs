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

use crate::assemble::{assemble, Finished};
use crate::clock::{unix_ms, Clock};
use crate::error::RunError;
use crate::files;
use crate::phase::run_phase;
use crate::plan::Plan;
use crate::prepare::{prepare_job, Ready};
use crate::testing::Script;
use ioscope_options::JobSet;
use ioscope_stats::RunResult;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Set by SIGINT/SIGTERM (or a caller) to end every job promptly; results stay valid.
/// The default stop flag of every [`Runner`].
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Ask all running jobs to stop.
pub fn request_stop() {
    STOP.store(true, Relaxed);
}

/// Run-wide settings from the command line (sent to the other ranks under MPI).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct RunOptions {
    pub allow_destructive: bool,
    pub readonly: bool,
    /// Refuse runs of more job clones than this (default: fio's 4096).
    pub max_jobs: Option<u32>,
    /// io_uring jobs issue IORING_OP_NOP and touch no files (`ioscope peak --nop`).
    pub nop: bool,
    /// Print a full interim report this often (fio's --status-interval).
    pub status_interval: Option<Duration>,
    /// Submit and wait in one call when the queue is full (`ioscope peak`).
    pub combine_submit_wait: bool,
    /// What per-I/O logs are written as (`--log-format`).
    pub log_format: crate::iolog::LogFormat,
}

/// Progress of one job, for status lines (sent between MPI ranks, hence serde).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct JobProgress {
    pub name: String,
    pub rw: char,
    pub running: bool,
    pub done: bool,
    pub bytes: [u64; 3],
    pub ios: [u64; 3],
    pub submit_calls: u64,
    pub reap_calls: u64,
    /// Bytes the job will do in total, when size-bounded.
    pub planned: Option<u64>,
    /// Seconds of ramp + runtime, when time-bounded.
    pub runtime_s: Option<f64>,
    pub elapsed_s: f64,
}

/// Callbacks from the run to the program (messages and live status).
pub trait Observer {
    /// fio-style informational lines ("Laying out IO file …").
    fn message(&mut self, line: &str);
    /// Errors and warnings ("io_u error on file …"); fio prints them on stderr.
    fn warning(&mut self, line: &str) {
        self.message(line);
    }
    /// Called about every 100 ms while jobs run.
    fn progress(&mut self, _jobs: &[JobProgress]) {}
    /// An interim report of the running jobs (every --status-interval).
    fn interim(&mut self, _report: &RunResult) {}
    /// Phase `phase` (0-based) is prepared — files laid out, logs opened — and its
    /// I/O starts when this returns: where other processes line up (MPI ranks start
    /// their I/O together). Phases cut short by a stop request are not announced.
    fn phase_ready(&mut self, _phase: usize) {}
}

/// Which engines the jobs use.
#[derive(Clone, Default)]
pub enum EngineSource {
    /// The engine each job's `ioengine=` names.
    #[default]
    Real,
    /// A scripted engine for every job (tests; see [`crate::testing`]).
    Scripted(Script),
}

/// What every part of a run shares: settings, clock, stop flag, engines.
pub(crate) struct Env<'a> {
    pub opts: &'a RunOptions,
    pub clock: &'static Clock,
    pub stop: &'static AtomicBool,
    pub engine: EngineSource,
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

    pub fn options(&self) -> &RunOptions {
        &self.opts
    }

    /// Validate `set` and plan it; nothing is touched.
    pub fn plan<'s>(&self, set: &'s JobSet) -> Result<Plan<'s>, RunError> {
        Plan::new(set, &self.opts)
    }

    /// Run a plan and return the results (already merged per group_reporting).
    pub fn run(&self, plan: &Plan, obs: &mut dyn Observer) -> Result<RunResult, RunError> {
        let env = Env {
            opts: &self.opts,
            clock: self.clock,
            stop: self.stop,
            engine: self.engine.clone(),
        };
        let started = Instant::now();
        let timestamp_ms = unix_ms();
        let globals = &plan.set.global_explicit;
        let mut results: Vec<Finished> = Vec::new();
        let mut cleanup = Cleanup::default();
        'phases: for (n, phase) in plan.phases.iter().enumerate() {
            if self.stop.load(Relaxed) {
                break;
            }
            let mut ready = Vec::new();
            for p in phase {
                let r = match prepare_job(p, &env, obs) {
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
            cleanup.watch_disks();
            obs.phase_ready(n);
            let (done, exit_all) = run_phase(ready, &env, started, obs, globals)?;
            results.extend(done);
            if exit_all {
                break;
            }
        }
        let disks = cleanup.disks.take().map(|w| w.finish()).unwrap_or_default();
        let mut result = assemble(results, disks, timestamp_ms, globals, self.clock);
        result.meta.interrupted = self.stop.load(Relaxed);
        Ok(result)
    }

    /// Plan and run `set`.
    pub fn run_set(&self, set: &JobSet, obs: &mut dyn Observer) -> Result<RunResult, RunError> {
        let plan = self.plan(set)?;
        self.run(&plan, obs)
    }
}

/// What a run changes outside itself and undoes at the end, also when it fails:
/// I/O schedulers it switched, files with unlink=1 and the cgroups it made. It also
/// watches the disks.
#[derive(Default)]
struct Cleanup {
    restore: Vec<(PathBuf, String)>,
    unlink: Vec<PathBuf>,
    cgroups: Vec<crate::cgroup::JobCgroup>,
    devs: Vec<(u32, u32)>,
    disks: Option<crate::disk::DiskWatch>,
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
            self.disks = Some(crate::disk::DiskWatch::start(&self.devs));
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
