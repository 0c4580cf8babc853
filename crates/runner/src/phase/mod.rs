//! One stonewall phase: start a thread per job, release them together, monitor them,
//! then collect their results (hooks, logs, samples, steady state).

pub(crate) mod assemble;
mod live;
mod monitor;
mod running;
pub(crate) mod sampling;
mod spawn;
pub(crate) mod steady;
pub(crate) mod trigger;

use crate::clock::unix_ms;
use crate::env::Env;
use crate::error::RunError;
use crate::observe::Observer;
use crate::record::log::Compress;
use crate::setup::Ready;
use crate::sys::exec::exec_hook;
use assemble::Finished;
use ioscope_stats::SteadyState;
use live::LiveFeed;
use monitor::{steady_trackers, Monitor};
use running::{Running, Watch};
use spawn::job_thread;
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// Run the prepared jobs of one phase to the end. The bool is true when exitall with
/// exit_what=all fired (later phases must not start).
pub(crate) fn run_phase(
    (phase, mut ready): (usize, Vec<Ready>),
    env: &Env,
    run_start: Instant,
    obs: &mut dyn Observer,
    globals: &[(String, String)],
    compress: &mut Vec<Compress>,
) -> Result<(Vec<Finished>, bool), RunError> {
    link_wait_for(&mut ready);
    let barrier = Arc::new(Barrier::new(ready.len() + 1));
    let mut running = Vec::with_capacity(ready.len());
    for r in ready {
        running.push(start(r, env, barrier.clone())?);
    }
    barrier.wait();
    let mut trackers = steady_trackers(&running, env.clock);
    let mut live = env
        .opts
        .live_interval
        .map(|every| LiveFeed::new(every, &running, phase));
    let exit_all = Monitor {
        running: &mut running,
        trackers: &mut trackers,
        clock: env.clock,
        run_start,
        status_interval: env.opts.status_interval,
        globals,
        live: live.as_mut(),
        trigger: trigger::TriggerWatch::new(env.opts.trigger.as_ref(), run_start),
    }
    .watch(obs);
    let mut steady: Vec<Option<SteadyState>> = vec![None; running.len()];
    for t in &trackers {
        for &i in &t.members {
            steady[i] = Some(t.result());
        }
    }
    let mut out = Vec::new();
    let mut first_err = None;
    for (i, (r, ss)) in running.into_iter().zip(steady).enumerate() {
        let live = live.as_mut().map(|l| (l, i));
        match collect(r, ss, env, (run_start, live), obs, compress) {
            Ok(Some(f)) => out.push(f),
            Ok(None) => {}
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok((out, exit_all)),
    }
}

/// wait_for: each job waits on every clone of the job it names.
fn link_wait_for(ready: &mut [Ready]) {
    let names: Vec<(String, Arc<crate::record::Shared>)> = ready
        .iter()
        .map(|r| (r.meta.name.clone(), r.ctx.shared.clone()))
        .collect();
    for r in ready.iter_mut() {
        if let Some(target) = r.ctx.opts.wait_for.clone() {
            r.ctx.wait_for = names
                .iter()
                .filter(|(n, _)| *n == target)
                .map(|(_, s)| s.clone())
                .collect();
        }
    }
}

/// Start a job's thread; it waits at `barrier` for the common start.
fn start(r: Ready, env: &Env, barrier: Arc<Barrier>) -> Result<Running, RunError> {
    let o = &r.ctx.opts;
    let watch = Watch::new(o, env.clock);
    let (group_reporting, stats, postrun) = (o.group_reporting, o.stats, o.exec_postrun.clone());
    let (shared, ioprio) = (r.ctx.shared.clone(), r.ctx.ioprio);
    let job_start_ms = match o.job_start_clock_id {
        0 => 0,
        id => crate::clock::epoch_ms(id).map_err(|e| {
            RunError::Setup(format!(
                "job '{}': job_start_clock_id={id}: {e}",
                r.meta.name
            ))
        })?,
    };
    // comm: the thread's name as ps and top show it (the kernel keeps 15 bytes).
    let thread_name = match &o.comm {
        Some(c) => c.clone(),
        None => format!("ioscope-{}", r.meta.name),
    };
    let ctx = r.ctx;
    let engine = env.engine.clone();
    let handle = std::thread::Builder::new()
        .name(thread_name)
        .spawn(move || job_thread(ctx, barrier, engine))
        .map_err(|e| RunError::Setup(format!("cannot start a job thread: {e}")))?;
    Ok(Running {
        handle,
        shared,
        meta: r.meta,
        start_ms: unix_ms(),
        job_start_ms,
        group_reporting,
        ioprio,
        stats,
        postrun,
        watch,
    })
}

/// A job's logs after the phase's I/O: say if the job had to wait for its log writer,
/// then write the per-I/O text logs (with progress when that takes a while).
fn finish_logs(
    job: &str,
    closed: crate::record::log::Closed,
    obs: &mut dyn Observer,
) -> Option<Compress> {
    if closed.stalls > 0 {
        let names: Vec<String> = closed
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        // A note on the measurement, not an error: it goes with the normal report (as
        // fio's informational lines do), so stderr stays empty where fio's is.
        obs.message(&format!(
            "{job}: the log writer could not keep up: the job waited {} ms in {} pause(s) \
             between I/Os for the disk under its logs ({}); every I/O is logged and latencies \
             are unaffected, but the I/O rate was held back",
            closed.stall.as_millis(),
            closed.stalls,
            names.join(", ")
        ));
    }
    let records = closed.records();
    let started = Instant::now();
    let mut last = Instant::now();
    let mut progress = |done: u64, total: u64| {
        if last.elapsed() >= std::time::Duration::from_secs(2) {
            last = Instant::now();
            obs.warning(&format!(
                "{job}: writing logs: {done} of {total} I/Os ({:.0}%)",
                done as f64 * 100.0 / total.max(1) as f64
            ));
        }
    };
    let paths = closed.paths.clone();
    match closed.finish(&mut progress) {
        Err(e) => {
            let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
            obs.warning(&format!(
                "{job}: cannot write its logs ({}): {e}",
                names.join(", ")
            ));
            None
        }
        Ok(compress) => {
            if started.elapsed() >= std::time::Duration::from_secs(2) {
                obs.warning(&format!(
                    "{job}: logs of {records} I/Os written in {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
            }
            compress
        }
    }
}

/// log_store_compressed, once every job of the run has written its logs (jobs with
/// per_job_logs=0 share them, across phases too).
pub(crate) fn compress_logs(pending: Vec<Compress>, obs: &mut dyn Observer) {
    let mut done = Vec::new();
    for c in pending {
        let names: Vec<String> = c.paths.iter().map(|p| p.display().to_string()).collect();
        if let Err(e) = c.run(&mut done) {
            obs.warning(&format!("cannot compress logs ({}): {e}", names.join(", ")));
        }
    }
}

/// Join a finished job: postrun hook, close its logs, attach samples and steady state.
/// None for a stats=0 job.
fn collect(
    r: Running,
    steady: Option<SteadyState>,
    env: &Env,
    (run_start, live): (Instant, Option<(&mut LiveFeed, usize)>),
    obs: &mut dyn Observer,
    compress: &mut Vec<Compress>,
) -> Result<Option<Finished>, RunError> {
    let joined = r
        .handle
        .join()
        .map_err(|_| RunError::Setup(format!("job '{}' panicked", r.meta.name)))?;
    for m in r.shared.take_messages() {
        obs.warning(&m);
    }
    let out = joined?;
    let (mut res, tid, logs) = (out.result, out.tid, out.logs);
    if let (Some((l, i)), true) = (live, r.stats) {
        l.last((i, &r.shared, &r.meta), &res, obs);
    }
    if let Some(cmd) = &r.postrun {
        if let Err(e) = exec_hook(&r.meta.name, "postrun", cmd) {
            obs.warning(&format!("warning: {e}"));
        }
    }
    if let Some(l) = logs {
        if let Some(c) = finish_logs(&r.meta.name, l.close(env.clock.now()), obs) {
            compress.push(c);
        }
    }
    for d in 0..3 {
        res.dirs[d].bw = r.watch.sampler.bw[d];
        res.dirs[d].iops = r.watch.sampler.iops[d];
    }
    res.name = r.meta.name;
    res.groupid = r.meta.groupid;
    res.jobs = 1;
    res.pid = tid;
    res.start_unix_ms = r.start_ms;
    res.job_start_ms = r.job_start_ms;
    res.elapsed_s = run_start.elapsed().as_secs().max(1);
    // The job's own findings (latency_target's depth) stay; the rest is the plan's.
    let found = res.info.latency_target;
    res.info = r.meta.info;
    res.info.latency_target = found;
    res.steadystate = steady;
    Ok(r.stats.then_some(Finished {
        result: res,
        groupid: r.meta.groupid,
        grouped: r.group_reporting,
        ioprio: r.ioprio,
    }))
}
