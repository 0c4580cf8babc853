//! A job's thread: thread settings (ioprio, nice, CPU affinity), buffers and the
//! engine, the common start, wait_for and startdelay, then the I/O loop.

use crate::env::EngineSource;
use crate::error::RunError;
use crate::job::cmdprio::CmdPrio;
use crate::job::verify::{Sizing, Verifier};
use crate::job::{JobRun, Outcome};
use crate::plan::info::engine_options;
use crate::record::log::JobLogs;
use crate::record::STATE_DONE;
use crate::setup::buffers::Buffers;
use crate::setup::JobCtx;
use crate::workload::Workload;
use ioscope_engine::{EngineConfig, EngineUser};
use ioscope_stats::JobResult;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// What a job's thread gives back.
pub(crate) struct ThreadOut {
    pub result: JobResult,
    /// The thread's id (fio's job pid).
    pub tid: u32,
    /// Its logs, to be closed once the phase's I/O is over.
    pub logs: Option<JobLogs>,
}

/// What a job's thread sets up before the common start.
struct Prepared {
    workload: Workload,
    buffers: Buffers,
    cmdprio: Option<CmdPrio>,
    verify: Option<Verifier>,
    /// lockmem: held until the job's I/O is over.
    locked: Option<crate::sys::memlock::LockedMem>,
}

/// Body of a job thread: set up the thread, buffers and engine, wait for the common
/// start, then run. Setup errors are returned only after the start barrier, so the
/// other jobs and the monitor never wait for a thread that is gone.
pub(crate) fn job_thread(
    mut ctx: JobCtx,
    start: Arc<Barrier>,
    engine: EngineSource,
) -> Result<ThreadOut, RunError> {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    let setup = set_up(&mut ctx);
    // flow: the jobs that start together join their group before the common start,
    // so none runs ahead alone; a job that waits (wait_for, startdelay) joins when it
    // starts, so the others are not held back for it meanwhile.
    let delayed = ctx.opts.wait_for.is_some() || ctx.opts.startdelay.hi > 0;
    let join = || crate::job::flow::Flow::join(ctx.opts.flow_id, ctx.opts.flow);
    let mut flow = if delayed { None } else { join() };
    start.wait();
    let p = match setup {
        Ok(p) => p,
        Err(e) => {
            ctx.shared.state.store(STATE_DONE, Relaxed);
            return Err(e);
        }
    };
    if ctx.opts.create_only {
        // Files are laid out; no I/O.
        ctx.shared.state.store(STATE_DONE, Relaxed);
        let logs = ctx.logs.take();
        return Ok(ThreadOut {
            result: JobResult::default(),
            tid,
            logs,
        });
    }
    wait_to_start(&ctx);
    if delayed {
        flow = join();
    }
    let _locked = p.locked;
    let run = JobRun {
        ctx: &mut ctx,
        workload: p.workload,
        buffers: p.buffers,
        cmdprio: p.cmdprio,
        verify: p.verify,
        flow,
    };
    let outcome = run_engine(run, &engine);
    if let (Ok(o), true) = (&outcome, ctx.shared.live_last.load(Relaxed)) {
        give_last(&ctx.shared, &o.result);
    }
    ctx.shared.state.store(STATE_DONE, Relaxed);
    let outcome = outcome?;
    Ok(ThreadOut {
        result: outcome.result,
        tid,
        logs: outcome.logs,
    })
}

/// The live feed's last copy of a job: its final results, handed over as it ends.
fn give_last(shared: &crate::record::Shared, result: &JobResult) {
    if let Ok(mut slot) = shared.live.lock() {
        *slot = Some(crate::record::LiveCopy {
            result: result.clone(),
            inflight: 0,
            // Still in the ramp at its end: nothing was measured.
            ramp: shared.state.load(Relaxed) == crate::record::STATE_RAMP,
            epoch: shared.epoch.load(Relaxed),
            last: true,
        });
    }
}

/// Thread settings (ioprio, nice, CPUs), the workload, buffers and cmdprio.
fn set_up(ctx: &mut JobCtx) -> Result<Prepared, RunError> {
    let trace = ctx.trace.take();
    let o = &ctx.opts;
    if let Some(cg) = &ctx.cgroup {
        cg.join(&o.name)?;
    }
    crate::sys::thread::apply(o, ctx.ioprio, ctx.clone)?;
    switch_ids(ctx)?;
    let regions: Vec<(u64, u64)> = ctx.files.iter().map(|f| (f.start, f.len)).collect();
    let mut workload = Workload::new(o, &regions, ctx.seed);
    if ctx.offsets_32bit {
        workload.offsets_32bit();
    }
    if let Some(z) = ctx.zones.take() {
        workload.set_zones(z);
    }
    let ends: Vec<u64> = ctx
        .files
        .iter()
        .map(|f| f.real_size.saturating_sub(f.start))
        .collect();
    workload.set_file_ends(&ends);
    let setup = |e: String| RunError::Setup(format!("job '{}': {e}", o.name));
    if let Some(t) = trace {
        workload.replay(t.entries, !o.replay_no_stall);
    }
    if let Some(path) = &o.write_iolog {
        let files: Vec<&std::path::Path> = ctx.files.iter().map(|f| f.path.as_path()).collect();
        let rec = crate::workload::replay::Recorder::create(path, &files)
            .map_err(|e| setup(format!("write_iolog={path}: {e}")))?;
        workload.recorder = Some(rec);
    }
    let data: u64 = regions.iter().map(|r| r.1).sum();
    let mut buffers = Buffers::new(
        o,
        o.iodepth as usize,
        (workload.max_bs() as usize).max(crate::workload::ranges::buffer_bytes(o)),
        ctx.seed,
        data,
    )
    .map_err(|e| RunError::Setup(format!("job '{}': {e}", o.name)))?;
    if o.dedupe_global {
        buffers.share_working_set(ctx.number.saturating_sub(1), ctx.jobs);
    }
    let cmdprio = CmdPrio::new(o, ctx.ioprio, ctx.seed);
    let verify = verifier(ctx, &workload)?;
    let say = |m: String| ctx.shared.say(m);
    let locked = crate::sys::memlock::LockedMem::new(&o.name, o.lockmem, &say)?;
    Ok(Prepared {
        workload,
        buffers,
        cmdprio,
        verify,
        locked,
    })
}

/// The job's verifier, when it verifies; its history is sized for the writes planned.
fn verifier(ctx: &JobCtx, wl: &Workload) -> Result<Option<Verifier>, RunError> {
    let o = &ctx.opts;
    let err = |e: String| RunError::Setup(format!("job '{}': {e}", o.name));
    let Some(spec) = ctx.verify.clone() else {
        return Ok(None);
    };
    let min_bs = (0..3)
        .map(|d| o.bs.0[d])
        .filter(|&b| b > 0)
        .min()
        .unwrap_or(4096);
    let writes = wl
        .planned_bytes()
        .map_or(0, |b| (b / min_bs.max(1)) as usize);
    let index = u64::from(ctx.number.saturating_sub(1));
    let size = Sizing {
        // A slot per unit the loop may use: iodepth (a sync engine uses one).
        units: o.iodepth.max(1) as usize,
        capacity: writes,
    };
    let state_file = ctx.verify_state.clone().unwrap_or_default();
    Verifier::new(o, spec, index, ctx.seed, size, state_file)
        .map(Some)
        .map_err(err)
}

/// wait_for (the named job's clones have all finished), then startdelay.
fn wait_to_start(ctx: &JobCtx) {
    let stopped = || ctx.stop_all.load(Relaxed) || ctx.shared.stop.load(Relaxed);
    while ctx
        .wait_for
        .iter()
        .any(|w| w.state.load(Relaxed) != STATE_DONE)
    {
        if stopped() {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let d = ctx.opts.startdelay;
    if d.hi > 0 {
        let us = d.lo + crate::workload::rng::splitmix(&mut ctx.seed.clone()) % (d.hi - d.lo + 1);
        let c = ctx.clock;
        c.sleep_until(c.now() + c.ticks(Duration::from_micros(us)), ctx.stop_all);
    }
}

/// Set up the engine (real, or scripted for tests) and run the job loop with it.
fn run_engine(run: JobRun, engine: &EngineSource) -> Result<Outcome, RunError> {
    let o = run.ctx.opts.clone();
    let files = &run.ctx.files;
    let file_infos: Vec<ioscope_engine::FileInfo> = files
        .iter()
        .map(|f| ioscope_engine::FileInfo {
            fd: std::os::fd::AsRawFd::as_raw_fd(&f.file),
            size: f.real_size,
            is_block: f.is_block,
        })
        .collect();
    let paths: Vec<std::path::PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let mut opts = engine_options(&o, run.ctx.nop, run.ctx.nop_file);
    if let Some(p) = &mut opts.placement {
        p.scheme = run.ctx.dp_scheme.clone();
    }
    let cfg = EngineConfig {
        depth: o.iodepth.max(1),
        files: &file_infos,
        paths: &paths,
        buffers: run.buffers.region(),
        unit_buf_len: run.buffers.slot,
        opts,
    };
    let clock = run.ctx.clock;
    Ok(match engine {
        EngineSource::Real if o.io_submit_mode == ioscope_options::SubmitMode::Offload => {
            ioscope_engine::with_offload(&o.ioengine, &cfg, run)?
        }
        EngineSource::Real => ioscope_engine::with_engine(&o.ioengine, &cfg, run)?,
        EngineSource::Scripted(s) => run.run(s.engine(&o, clock)),
    })
}

/// uid/gid: the job's thread takes these ids (the group first, while it still may)
/// and opens its files as them, so that a file the user may not use fails the job as it
/// does in fio — where files are laid out by the parent and opened by the job after
/// setuid. The I/O then goes through the descriptors opened for the run.
fn switch_ids(ctx: &JobCtx) -> Result<(), RunError> {
    let o = &ctx.opts;
    if o.uid.is_none() && o.gid.is_none() {
        return Ok(());
    }
    let fail =
        |what: String, e: std::io::Error| RunError::Setup(format!("job '{}': {what}: {e}", o.name));
    // Raw syscalls: the C library's setuid would change every thread of the process.
    if let Some(g) = o.gid {
        // SAFETY: setresgid on the calling thread only.
        if unsafe { libc::syscall(libc::SYS_setresgid, g, g, g) } != 0 {
            return Err(fail(format!("gid={g}"), std::io::Error::last_os_error()));
        }
    }
    if let Some(u) = o.uid {
        // SAFETY: setresuid on the calling thread only.
        if unsafe { libc::syscall(libc::SYS_setresuid, u, u, u) } != 0 {
            return Err(fail(format!("uid={u}"), std::io::Error::last_os_error()));
        }
    }
    let a = crate::plan::access(o);
    let who = match (o.uid, o.gid) {
        (Some(u), Some(g)) => format!("uid={u} gid={g}"),
        (Some(u), None) => format!("uid={u}"),
        (None, Some(g)) => format!("gid={g}"),
        (None, None) => String::new(),
    };
    for f in ctx.files.iter().filter(|_| !ctx.diskless) {
        std::fs::OpenOptions::new()
            .read(a.reads || !(a.writes || a.trims))
            .write(a.writes || a.trims)
            .open(&f.path)
            .map_err(|e| fail(format!("{who}: {}", f.path.display()), e))?;
    }
    Ok(())
}
