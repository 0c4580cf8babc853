//! Orchestration: expand numjobs, assign reporting groups, run stonewall phases one
//! after another with one thread per job, sample bandwidth and IOPS while they run,
//! and assemble the run's results.

use crate::buffers::Buffers;
use crate::clock::{unix_ms, Clock, Ticks};
use crate::error::RunError;
use crate::files::{self, Access, JobFile};
use crate::iolog::JobLogs;
use crate::job::{JobCtx, JobRun, Shared, STATE_DONE, STATE_RUNNING};
use crate::prio::{self, CmdPrio};
use crate::steady::SteadyTracker;
use crate::workload::Workload;
use ioscope_engine::{EngineConfig, EngineOptions, IMPLEMENTED};
use ioscope_options::{JobOptions, JobSet, JobSpec, Status};
use ioscope_stats::{JobInfo, JobResult, RunResult};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Set by SIGINT/SIGTERM (or a caller) to end every job promptly; results stay valid.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Ask all running jobs to stop.
pub fn request_stop() {
    STOP.store(true, Relaxed);
}

/// Run-wide settings from the command line.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub allow_destructive: bool,
    pub readonly: bool,
    pub max_jobs: Option<u32>,
    /// io_uring jobs issue IORING_OP_NOP and touch no files (`ioscope peak --nop`).
    pub nop: bool,
    /// Print a full interim report this often (fio's --status-interval).
    pub status_interval: Option<Duration>,
    /// Submit and wait in one call when the queue is full (`ioscope peak`).
    pub combine_submit_wait: bool,
}

/// Progress of one job, for status lines.
#[derive(Clone, Debug, Default)]
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
    /// Called about every 100 ms while jobs run.
    fn progress(&mut self, _jobs: &[JobProgress]) {}
    /// An interim report of the running jobs (every --status-interval).
    fn interim(&mut self, _report: &RunResult) {}
}

/// A job clone ready to run.
struct Planned<'a> {
    spec: &'a JobSpec,
    clone: u32,
    /// 1-based global job number (log file suffix).
    number: u32,
    groupid: u32,
}

/// Check what ioscope can run before touching anything.
pub fn validate(set: &JobSet, ro: &RunOptions) -> Result<(), RunError> {
    let total: u32 = set.jobs.iter().map(|j| j.opts.numjobs).sum();
    if let Some(max) = ro.max_jobs {
        if total > max {
            return Err(RunError::Setup(format!(
                "{total} jobs exceed --max-jobs={max}"
            )));
        }
    }
    for j in &set.jobs {
        if let Some((name, loc)) = j.not_yet.first() {
            return Err(RunError::Unsupported(format!(
                "{loc}: option {name} is not supported yet (job '{}')",
                j.name
            )));
        }
        if !IMPLEMENTED.contains(&j.opts.ioengine.as_str()) {
            return Err(RunError::Unsupported(format!(
                "job '{}': ioengine={} is not supported yet (supported: {})",
                j.name,
                j.opts.ioengine,
                IMPLEMENTED.join(", ")
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
            let pos = set
                .jobs
                .iter()
                .position(|x| std::ptr::eq(x, j))
                .unwrap_or(0);
            if !set.jobs[..pos].iter().any(|x| &x.name == w) {
                return Err(RunError::Setup(format!(
                    "job '{}': wait_for={w}: no job named '{w}' is defined before it",
                    j.name
                )));
            }
        }
        unsupported_values(j)?;
        if j.opts.verify != "0" && j.opts.verify != "none" {
            return Err(RunError::Unsupported(format!(
                "job '{}': option verify is not supported yet",
                j.name
            )));
        }
    }
    debug_assert!(ioscope_options::OPTIONS
        .iter()
        .any(|d| d.status == Status::Supported));
    Ok(())
}

/// Values of supported options that ioscope does not implement yet.
fn unsupported_values(j: &JobSpec) -> Result<(), RunError> {
    use ioscope_options::{MemType, SubmitMode};
    let o = &j.opts;
    let fail = |what: String| {
        Err(RunError::Unsupported(format!(
            "job '{}': {what} is not supported yet",
            j.name
        )))
    };
    let nfiles = o
        .filename
        .as_deref()
        .map(|f| files::split_names(f).len() as u32)
        .unwrap_or(o.nrfiles);
    if o.openfiles > 0 && o.openfiles < nfiles {
        return fail(format!("openfiles={} with {nfiles} files", o.openfiles));
    }
    if o.io_submit_mode == SubmitMode::Offload {
        return fail("io_submit_mode=offload".into());
    }
    if matches!(
        o.mem,
        MemType::ShmHuge | MemType::MmapHuge | MemType::Cudamalloc
    ) {
        return fail(format!("mem={}", o.mem.name()));
    }
    Ok(())
}

fn access(o: &JobOptions) -> Access {
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

fn plan(set: &JobSet) -> Vec<Vec<Planned<'_>>> {
    let mut phases: Vec<Vec<Planned>> = Vec::new();
    let mut groupid = 0;
    let mut number = 0;
    for (i, spec) in set.jobs.iter().enumerate() {
        if i > 0 && (spec.opts.stonewall || spec.opts.new_group) {
            groupid += 1;
        }
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

/// Engine options of a job.
fn engine_options(o: &JobOptions, nop: bool) -> EngineOptions {
    EngineOptions {
        hipri: o.hipri,
        hipri_percentage: o.hipri_percentage,
        uncached: o.uncached,
        nowait: o.nowait,
        userspace_reap: o.userspace_reap,
        fixedbufs: o.fixedbufs,
        registerfiles: o.registerfiles,
        sqthread_poll: o.sqthread_poll,
        sqthread_poll_cpu: o.sqthread_poll_cpu,
        nonvectored: o.nonvectored,
        force_async: o.force_async,
        nop,
    }
}

const SYNC_ENGINES: &[&str] = &["psync", "sync", "vsync", "pvsync", "pvsync2", "mmap"];

/// What reports need to know about a job.
pub fn job_info(spec: &JobSpec, files: &[JobFile]) -> JobInfo {
    let o = &spec.opts;
    let bs = std::array::from_fn(|d| {
        if let Some(s) = o.bssplit.as_ref().filter(|s| !s.0[d].is_empty()) {
            let lo = s.0[d].iter().map(|e| e.bs).min().unwrap_or(o.bs.0[d]);
            let hi = s.0[d].iter().map(|e| e.bs).max().unwrap_or(o.bs.0[d]);
            (lo, hi)
        } else if let Some(r) = &o.bsrange {
            (r.0 .0[d].lo, r.0 .0[d].hi)
        } else {
            (o.bs.0[d], o.bs.0[d])
        }
    });
    let sync_engine =
        SYNC_ENGINES.contains(&o.ioengine.as_str()) || (o.ioengine == "null" && o.iodepth <= 1);
    JobInfo {
        rw: o.rw.mode.name().to_string(),
        bs,
        ioengine: o.ioengine.clone(),
        iodepth: o.iodepth,
        sync_engine,
        slat_enabled: !o.disable_slat && !sync_engine,
        clat_enabled: !o.disable_clat,
        lat_enabled: !o.disable_lat,
        clat_percentiles: o.clat_percentiles && !o.disable_clat,
        lat_percentiles: o.lat_percentiles && !o.disable_lat,
        slat_percentiles: o.slat_percentiles && !o.disable_slat && !sync_engine,
        percentile_list: o.percentile_list.0.clone(),
        kb_base: o.kb_base,
        unit_base: match o.unit_base {
            ioscope_options::UnitBase::Auto => 0,
            ioscope_options::UnitBase::Bytes => 8,
            ioscope_options::UnitBase::Bits => 1,
        },
        significant_figures: o.significant_figures,
        unified_rw_reporting: o.unified_rw_reporting as u32,
        continue_on_error: o.continue_on_error != ioscope_options::ContinueOnError::None,
        options: spec.job_options.clone(),
        description: o.description.clone(),
        files: files.iter().map(|f| f.path.display().to_string()).collect(),
    }
}

/// A job ready to start in its thread.
struct Ready {
    ctx: JobCtx,
    info: JobInfo,
    name: String,
    groupid: u32,
    sample_dirs: [bool; 3],
    planned: Option<u64>,
    runtime_s: Option<f64>,
}

fn seed_for(o: &JobOptions, number: u32) -> u64 {
    if o.randrepeat || o.allrandrepeat {
        o.randseed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    } else {
        let mut b = [0u8; 8];
        // SAFETY: getrandom writes at most 8 bytes into b.
        unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
        u64::from_ne_bytes(b) ^ unix_ms()
    }
}

fn prepare_job(p: &Planned, ro: &RunOptions, obs: &mut dyn Observer) -> Result<Ready, RunError> {
    let o = p.spec.opts.clone();
    let a = access(&o);
    let mut say = |s: String| obs.message(&s);
    let diskless = o.ioengine == "null" || ro.nop;
    let files = files::prepare(&o, p.clone, a, ro.allow_destructive, diskless, &mut say)?;
    if let Some(cmd) = &o.exec_prerun {
        exec_hook(&o.name, "prerun", cmd)?;
    }
    let ioprio = prio::job_ioprio(&o);
    let info = job_info(p.spec, &files);
    let logs = JobLogs::open(&o, p.number, info.sync_engine)
        .map_err(|e| RunError::Setup(format!("job '{}': cannot open log: {e}", o.name)))?;
    let regions: Vec<(u64, u64)> = files.iter().map(|f| (f.start, f.len)).collect();
    let wl = Workload::new(&o, &regions, seed_for(&o, p.number));
    let planned = wl.planned_bytes();
    let runtime_s = (o.runtime > 0).then(|| (o.runtime + o.ramp_time) as f64 / 1e6);
    Ok(Ready {
        sample_dirs: [a.reads, a.writes, a.trims],
        ctx: JobCtx {
            seed: seed_for(&o, p.number),
            opts: o,
            files,
            shared: Arc::new(Shared::default()),
            stop_all: &STOP,
            ioprio,
            logs,
            nop: ro.nop,
            wait_for: Vec::new(),
            clone: p.clone,
            combine_submit_wait: ro.combine_submit_wait,
        },
        info,
        name: p.spec.name.clone(),
        groupid: p.groupid,
        planned,
        runtime_s,
    })
}

/// Body of a job thread: set up the thread, buffers and engine, then run.
/// A job thread's result, thread id and logs to close.
type ThreadOut = (JobResult, u32, Option<JobLogs>);

fn job_thread(mut ctx: JobCtx, start: Arc<Barrier>) -> Result<ThreadOut, RunError> {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() } as u32;
    let o = ctx.opts.clone();
    apply_thread_settings(&o, ctx.ioprio, ctx.clone)?;
    let regions: Vec<(u64, u64)> = ctx.files.iter().map(|f| (f.start, f.len)).collect();
    let workload = Workload::new(&o, &regions, ctx.seed);
    let buffers = Buffers::new(&o, o.iodepth as usize, workload.max_bs() as usize, ctx.seed)
        .map_err(|e| RunError::Setup(format!("job '{}': {e}", o.name)))?;
    let cmdprio = CmdPrio::new(&o, ctx.ioprio, ctx.seed);
    let file_infos: Vec<ioscope_engine::FileInfo> = ctx
        .files
        .iter()
        .map(|f| ioscope_engine::FileInfo {
            fd: std::os::fd::AsRawFd::as_raw_fd(&f.file),
            size: f.real_size,
            is_block: f.is_block,
        })
        .collect();
    let cfg = EngineConfig {
        depth: o.iodepth.max(1),
        files: &file_infos,
        buffers: buffers.region(),
        unit_buf_len: buffers.slot,
        opts: engine_options(&o, ctx.nop),
    };
    start.wait();
    if o.create_only {
        // Files are laid out; no I/O.
        ctx.shared.state.store(STATE_DONE, Relaxed);
        return Ok((JobResult::default(), tid, ctx.logs.take()));
    }

    // wait_for: start once the named job's clones have all finished.
    while ctx
        .wait_for
        .iter()
        .any(|w| w.state.load(Relaxed) != STATE_DONE)
    {
        if STOP.load(Relaxed) || ctx.shared.stop.load(Relaxed) {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    if o.startdelay.hi > 0 {
        let us = o.startdelay.lo
            + crate::rng::splitmix(&mut ctx.seed.clone()) % (o.startdelay.hi - o.startdelay.lo + 1);
        crate::rate::wait_until(
            Clock::get(),
            Clock::get().now() + Clock::get().ticks(Duration::from_micros(us)),
            &STOP,
        );
    }
    let run = JobRun {
        ctx: &mut ctx,
        workload,
        buffers,
        cmdprio,
    };
    let result = ioscope_engine::with_engine(&o.ioengine, &cfg, run);
    ctx.shared.state.store(STATE_DONE, Relaxed);
    let result = result?;
    Ok((result, tid, ctx.logs.take()))
}

/// exec_prerun / exec_postrun: run `sh -c CMD`, output in NAME.WHAT.txt.
fn exec_hook(name: &str, what: &str, cmd: &str) -> Result<(), RunError> {
    let out = std::fs::File::create(format!("{name}.{what}.txt"))
        .map_err(|e| RunError::Setup(format!("job '{name}': exec_{what}: {e}")))?;
    let err = out
        .try_clone()
        .map_err(|e| RunError::Setup(format!("job '{name}': exec_{what}: {e}")))?;
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(cmd)
        .stdout(out)
        .stderr(err)
        .status()
        .map_err(|e| RunError::Setup(format!("job '{name}': exec_{what} '{cmd}': {e}")))?;
    if !status.success() {
        return Err(RunError::Setup(format!(
            "job '{name}': exec_{what} '{cmd}' failed ({status}); see {name}.{what}.txt"
        )));
    }
    Ok(())
}

fn apply_thread_settings(o: &JobOptions, ioprio: u16, clone: u32) -> Result<(), RunError> {
    if ioprio != 0 {
        prio::set_thread_ioprio(ioprio).map_err(|e| {
            RunError::Setup(format!(
                "job '{}': ioprio_set(class {}, level {}): {e}",
                o.name,
                ioprio >> 13,
                ioprio & 7
            ))
        })?;
    }
    if o.nice != 0 {
        // SAFETY: PRIO_PROCESS with who=0 applies to the calling thread on Linux.
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, o.nice) };
        if r < 0 {
            return Err(RunError::Setup(format!(
                "job '{}': nice={}: {}",
                o.name,
                o.nice,
                std::io::Error::last_os_error()
            )));
        }
    }
    if let Some(cpus) = o
        .cpus_allowed
        .as_deref()
        .map(parse_cpu_list)
        .or_else(|| o.cpumask.as_deref().map(parse_cpu_mask))
    {
        let mut cpus = cpus.map_err(|e| RunError::Setup(format!("job '{}': {e}", o.name)))?;
        // cpus_allowed_policy=split: each clone gets one CPU of the set.
        if o.cpus_allowed_policy == ioscope_options::CpusPolicy::Split && !cpus.is_empty() {
            cpus = vec![cpus[clone as usize % cpus.len()]];
        }
        // SAFETY: a zeroed cpu_set_t is empty; CPU_SET/sched_setaffinity take valid pointers.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for c in &cpus {
                libc::CPU_SET(*c, &mut set);
            }
            if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) < 0 {
                return Err(RunError::Setup(format!(
                    "job '{}': cpus_allowed: {}",
                    o.name,
                    std::io::Error::last_os_error()
                )));
            }
        }
    }
    Ok(())
}

/// `0-3,6` → [0,1,2,3,6].
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a
            .trim()
            .parse()
            .map_err(|_| format!("cpus_allowed '{s}' is not a CPU list"))?;
        let b: usize = b
            .trim()
            .parse()
            .map_err(|_| format!("cpus_allowed '{s}' is not a CPU list"))?;
        if a > b || b >= 1024 {
            return Err(format!("cpus_allowed '{s}': bad range {part}"));
        }
        v.extend(a..=b);
    }
    Ok(v)
}

fn parse_cpu_mask(s: &str) -> Result<Vec<usize>, String> {
    let t = s.trim().trim_start_matches("0x");
    let m = u64::from_str_radix(t, 16).map_err(|_| format!("cpumask '{s}' is not a hex mask"))?;
    Ok((0..64).filter(|i| m & (1 << i) != 0).collect())
}

/// Run every job and return the results (already merged per group_reporting).
pub fn run(set: &JobSet, ro: &RunOptions, obs: &mut dyn Observer) -> Result<RunResult, RunError> {
    validate(set, ro)?;
    let clock = Clock::get();
    let started = Instant::now();
    let timestamp_ms = unix_ms();
    let mut results: Vec<Finished> = Vec::new();
    let mut devs = Vec::new();
    let mut restore = Vec::new();
    let mut unlink: Vec<PathBuf> = Vec::new();
    let mut watch = None;
    EXIT_ALL.store(false, Relaxed);
    for phase in plan(set) {
        if STOP.load(Relaxed) || EXIT_ALL.load(Relaxed) {
            break;
        }
        let mut ready = Vec::new();
        for p in &phase {
            let r = prepare_job(p, ro, obs)?;
            if let Some(s) = &r.ctx.opts.ioscheduler {
                restore.extend(files::set_scheduler(&r.ctx.files, s)?);
            }
            devs.extend(r.ctx.files.iter().map(|f| f.dev));
            if r.ctx.opts.unlink {
                unlink.extend(
                    r.ctx
                        .files
                        .iter()
                        .filter(|f| !f.is_block)
                        .map(|f| f.path.clone()),
                );
            }
            ready.push(r);
        }
        if watch.is_none() {
            watch = Some(crate::disk::DiskWatch::start(&devs));
        }
        let phase_results = run_phase(
            ready,
            clock,
            started,
            obs,
            ro.status_interval,
            &set.global_explicit,
        )?;
        results.extend(phase_results);
    }
    for (p, sched) in restore {
        let _ = std::fs::write(&p, sched);
    }
    for p in unlink {
        let _ = std::fs::remove_file(p);
    }
    let disks = watch.map(|w| w.finish()).unwrap_or_default();
    Ok(assemble(results, disks, timestamp_ms, &set.global_explicit))
}

struct Running {
    handle: std::thread::JoinHandle<Result<ThreadOut, RunError>>,
    shared: Arc<Shared>,
    info: JobInfo,
    name: String,
    groupid: u32,
    sample_dirs: [bool; 3],
    sampler: Sampler,
    planned: Option<u64>,
    runtime_s: Option<f64>,
    start_ms: u64,
    group_reporting: bool,
    ioprio: u16,
    /// exitall: when this job finishes, end others as exit_what says.
    exitall: Option<ioscope_options::ExitWhat>,
    /// stats=0: run the job but leave it out of the report.
    stats: bool,
    /// Steady-state detection settings: (criterion, duration, ramp, interval), µs.
    steady: Option<(ioscope_options::SteadySpec, u64, u64, u64)>,
    /// rate_min / rate_iops_min checks.
    min_rate: Option<MinRate>,
    /// exec_postrun command.
    postrun: Option<String>,
}

/// rate_min / rate_iops_min: every rate_cycle, the job must have done at least this
/// much per second in each direction it uses, or it fails (EIO, as fio).
struct MinRate {
    bytes: [u64; 3],
    ios: [u64; 3],
    cycle: Ticks,
    last: Option<(Ticks, [u64; 3], [u64; 3])>,
}

impl MinRate {
    fn new(o: &JobOptions) -> Option<MinRate> {
        let any = o
            .rate_min
            .0
            .iter()
            .chain(o.rate_iops_min.0.iter())
            .any(|&r| r > 0);
        any.then(|| MinRate {
            bytes: o.rate_min.0,
            ios: o.rate_iops_min.0,
            cycle: Clock::get().ticks(Duration::from_millis(o.rate_cycle.max(1))),
            last: None,
        })
    }

    /// A message when the last cycle was too slow.
    fn check(&mut self, s: &Shared, now: Ticks, dirs: &[bool; 3]) -> Option<String> {
        if s.state.load(Relaxed) != STATE_RUNNING {
            return None;
        }
        let bytes: [u64; 3] = std::array::from_fn(|d| s.bytes[d].load(Relaxed));
        let ios: [u64; 3] = std::array::from_fn(|d| s.ios[d].load(Relaxed));
        let Some((t0, b0, i0)) = self.last else {
            self.last = Some((now, bytes, ios));
            return None;
        };
        if now < t0 + self.cycle {
            return None;
        }
        self.last = Some((now, bytes, ios));
        let secs = Clock::get().delta_ns(t0, now) as f64 / 1e9;
        let names = ["read", "write", "trim"];
        for d in (0..3).filter(|&d| dirs[d]) {
            let bw = bytes[d].saturating_sub(b0[d]) as f64 / secs;
            if self.bytes[d] > 0 && bw < self.bytes[d] as f64 {
                return Some(format!(
                    "min rate {} B/s not met for {}: got {bw:.0} B/s",
                    self.bytes[d], names[d]
                ));
            }
            let iops = ios[d].saturating_sub(i0[d]) as f64 / secs;
            if self.ios[d] > 0 && iops < self.ios[d] as f64 {
                return Some(format!(
                    "min rate {} IOPS not met for {}: got {iops:.0} IOPS",
                    self.ios[d], names[d]
                ));
            }
        }
        None
    }
}

fn run_phase(
    ready: Vec<Ready>,
    clock: &'static Clock,
    run_start: Instant,
    obs: &mut dyn Observer,
    status_interval: Option<Duration>,
    globals: &[(String, String)],
) -> Result<Vec<Finished>, RunError> {
    let barrier = Arc::new(Barrier::new(ready.len() + 1));
    let mut running: Vec<Running> = Vec::new();
    let mut ready = ready;
    let names: Vec<(String, Arc<Shared>)> = ready
        .iter()
        .map(|r| (r.name.clone(), r.ctx.shared.clone()))
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
    for r in ready {
        let shared = r.ctx.shared.clone();
        let exitall = r.ctx.opts.exitall.then_some(r.ctx.opts.exit_what);
        let b = barrier.clone();
        let bw_ms = r.ctx.opts.bwavgtime;
        let iops_ms = r.ctx.opts.iopsavgtime;
        let disabled = r.ctx.opts.disable_bw_measurement;
        let group_reporting = r.ctx.opts.group_reporting;
        let ioprio = r.ctx.ioprio;
        let stats = r.ctx.opts.stats;
        let o = &r.ctx.opts;
        let min_rate = MinRate::new(o);
        let postrun = o.exec_postrun.clone();
        let steady = (o.steadystate_duration > 0).then(|| {
            (
                o.steadystate.clone(),
                o.steadystate_duration,
                o.steadystate_ramp_time,
                o.steadystate_check_interval,
            )
        });
        let ctx = r.ctx;
        let handle = std::thread::Builder::new()
            .name(format!("ioscope-{}", r.name))
            .spawn(move || job_thread(ctx, b))
            .map_err(|e| RunError::Setup(format!("cannot start a job thread: {e}")))?;
        running.push(Running {
            handle,
            shared,
            info: r.info,
            name: r.name,
            groupid: r.groupid,
            sample_dirs: r.sample_dirs,
            sampler: Sampler::new(bw_ms, iops_ms, disabled),
            planned: r.planned,
            runtime_s: r.runtime_s,
            start_ms: unix_ms(),
            group_reporting,
            ioprio,
            exitall,
            stats,
            steady,
            min_rate,
            postrun,
        });
    }
    barrier.wait();
    let mut trackers = steady_trackers(&running);
    monitor(
        &mut running,
        &mut trackers,
        clock,
        run_start,
        obs,
        status_interval,
        globals,
    );
    let mut steady: Vec<Option<ioscope_stats::SteadyState>> = vec![None; running.len()];
    for t in &trackers {
        for &i in &t.members {
            steady[i] = Some(t.result());
        }
    }
    let mut out = Vec::new();
    for (mut r, ss) in running.into_iter().zip(steady) {
        let joined = r
            .handle
            .join()
            .map_err(|_| RunError::Setup(format!("job '{}' panicked", r.name)))?;
        let (mut res, tid, logs) = joined?;
        if let Some(cmd) = &r.postrun {
            if let Err(e) = exec_hook(&r.name, "postrun", cmd) {
                obs.message(&format!("warning: {e}"));
            }
        }
        if let Some(l) = logs {
            let (paths, dropped) = l.close(clock.now());
            if dropped > 0 {
                obs.message(&format!(
                    "{}: {dropped} log entries were dropped ({}): the log writer could not keep up",
                    r.name,
                    paths
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
        }
        r.sampler
            .finish(&r.shared, clock.now(), clock, &r.sample_dirs);
        for d in 0..3 {
            res.dirs[d].bw = r.sampler.bw[d];
            res.dirs[d].iops = r.sampler.iops[d];
        }
        res.name = r.name;
        res.groupid = r.groupid;
        res.jobs = 1;
        res.pid = tid;
        res.start_unix_ms = r.start_ms;
        res.elapsed_s = run_start.elapsed().as_secs().max(1);
        res.info = r.info;
        res.steadystate = ss;
        if r.stats {
            out.push(Finished {
                result: res,
                groupid: r.groupid,
                grouped: r.group_reporting,
                ioprio: r.ioprio,
            });
        }
    }
    Ok(out)
}

/// bw and iops samples of one job, taken by the monitor every bwavgtime/iopsavgtime.
struct Sampler {
    bw_ticks: u64,
    iops_ticks: u64,
    next_bw: Ticks,
    next_iops: Ticks,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    last_bw_t: Ticks,
    last_iops_t: Ticks,
    started: bool,
    disabled: bool,
    bw: [ioscope_stats::SampleStat; 3],
    iops: [ioscope_stats::SampleStat; 3],
}

impl Sampler {
    fn new(bw_ms: u64, iops_ms: u64, disabled: bool) -> Sampler {
        let c = Clock::get();
        Sampler {
            bw_ticks: c.ticks(Duration::from_millis(bw_ms.max(1))),
            iops_ticks: c.ticks(Duration::from_millis(iops_ms.max(1))),
            next_bw: 0,
            next_iops: 0,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            last_bw_t: 0,
            last_iops_t: 0,
            started: false,
            disabled,
            bw: Default::default(),
            iops: Default::default(),
        }
    }

    fn tick(&mut self, s: &Shared, now: Ticks, clock: &Clock, dirs: &[bool; 3]) {
        if self.disabled || s.state.load(Relaxed) != STATE_RUNNING {
            return;
        }
        let t0 = s.measure_start.load(Relaxed);
        if !self.started || self.last_bw_t < t0 {
            self.started = true;
            self.last_bw_t = t0;
            self.last_iops_t = t0;
            self.next_bw = t0 + self.bw_ticks;
            self.next_iops = t0 + self.iops_ticks;
            self.last_bytes = [0; 3];
            self.last_ios = [0; 3];
        }
        if now >= self.next_bw {
            let secs = clock.delta_ns(self.last_bw_t, now) as f64 / 1e9;
            for (d, bw) in self.bw.iter_mut().enumerate() {
                let b = s.bytes[d].load(Relaxed);
                if dirs[d] && secs > 0.0 {
                    bw.add((b.saturating_sub(self.last_bytes[d])) as f64 / 1024.0 / secs);
                }
                self.last_bytes[d] = b;
            }
            self.last_bw_t = now;
            self.next_bw += self.bw_ticks;
        }
        if now >= self.next_iops {
            let secs = clock.delta_ns(self.last_iops_t, now) as f64 / 1e9;
            for (d, iops) in self.iops.iter_mut().enumerate() {
                let n = s.ios[d].load(Relaxed);
                if dirs[d] && secs > 0.0 {
                    iops.add((n.saturating_sub(self.last_ios[d])) as f64 / secs);
                }
                self.last_ios[d] = n;
            }
            self.last_iops_t = now;
            self.next_iops += self.iops_ticks;
        }
    }

    fn finish(&mut self, _s: &Shared, _now: Ticks, _clock: &Clock, _dirs: &[bool; 3]) {}
}

/// One tracker per job asking for steady state, or per group with group_reporting.
fn steady_trackers(running: &[Running]) -> Vec<SteadyTracker> {
    let mut out = Vec::new();
    let mut groups: std::collections::BTreeMap<u32, Vec<usize>> = Default::default();
    for (i, r) in running.iter().enumerate() {
        match &r.steady {
            Some(_) if r.group_reporting => groups.entry(r.groupid).or_default().push(i),
            Some((spec, dur, ramp, iv)) => {
                out.push(SteadyTracker::new(spec.clone(), *dur, *ramp, *iv, vec![i]))
            }
            None => {}
        }
    }
    for members in groups.into_values() {
        if let Some((spec, dur, ramp, iv)) = &running[members[0]].steady {
            out.push(SteadyTracker::new(spec.clone(), *dur, *ramp, *iv, members));
        }
    }
    out
}

fn monitor(
    running: &mut [Running],
    trackers: &mut [SteadyTracker],
    clock: &'static Clock,
    run_start: Instant,
    obs: &mut dyn Observer,
    status_interval: Option<Duration>,
    globals: &[(String, String)],
) {
    let mut last_progress = Instant::now();
    let mut last_status = Instant::now();
    let mut seen_done = vec![false; running.len()];
    loop {
        let now = clock.now();
        let mut all_done = true;
        for r in running.iter_mut() {
            r.sampler.tick(&r.shared, now, clock, &r.sample_dirs);
            if r.shared.state.load(Relaxed) != STATE_DONE {
                all_done = false;
            }
        }
        apply_exitall(running, &mut seen_done);
        for r in running.iter_mut() {
            let dirs = r.sample_dirs;
            let Some(m) = &mut r.min_rate else { continue };
            if let Some(msg) = m.check(&r.shared, now, &dirs) {
                if let Ok(mut f) = r.shared.failure.lock() {
                    f.get_or_insert((libc::EIO, msg));
                }
                r.shared.stop.store(true, Relaxed);
            }
        }
        for t in trackers.iter_mut() {
            let shared: Vec<&Arc<Shared>> = t.members.iter().map(|&i| &running[i].shared).collect();
            t.tick(now, &shared);
        }
        if all_done {
            break;
        }
        if last_progress.elapsed() >= Duration::from_millis(100) {
            last_progress = Instant::now();
            let elapsed = run_start.elapsed().as_secs_f64();
            let p: Vec<JobProgress> = running.iter().map(|r| progress_of(r, elapsed)).collect();
            obs.progress(&p);
        }
        if status_interval.is_some_and(|i| last_status.elapsed() >= i) {
            last_status = Instant::now();
            if let Some(r) = interim_report(running, run_start, globals) {
                obs.interim(&r);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// exitall: when a job that has it finishes, end the jobs exit_what names.
fn apply_exitall(running: &[Running], seen_done: &mut [bool]) {
    use ioscope_options::ExitWhat;
    for i in 0..running.len() {
        if seen_done[i] || running[i].shared.state.load(Relaxed) != STATE_DONE {
            continue;
        }
        seen_done[i] = true;
        let Some(what) = running[i].exitall else {
            continue;
        };
        for r in running.iter() {
            let hit = match what {
                ExitWhat::Group => r.groupid == running[i].groupid,
                ExitWhat::Stonewall => true,
                ExitWhat::All => {
                    EXIT_ALL.store(true, Relaxed);
                    true
                }
            };
            if hit {
                r.shared.stop.store(true, Relaxed);
            }
        }
    }
}

/// exit_what=all: later stonewall phases do not start either.
static EXIT_ALL: AtomicBool = AtomicBool::new(false);

/// Ask every running job for a snapshot and assemble them like a final report.
fn interim_report(
    running: &[Running],
    run_start: Instant,
    globals: &[(String, String)],
) -> Option<RunResult> {
    let live: Vec<&Running> = running
        .iter()
        .filter(|r| r.shared.state.load(Relaxed) == STATE_RUNNING)
        .collect();
    for r in &live {
        r.shared.snapshot_request.fetch_add(1, Relaxed);
    }
    let deadline = Instant::now() + Duration::from_millis(500);
    let mut got: Vec<Finished> = Vec::new();
    for r in &live {
        loop {
            let snap = r.shared.snapshot.lock().ok().and_then(|mut s| s.take());
            if let Some(mut res) = snap {
                for d in 0..3 {
                    res.dirs[d].bw = r.sampler.bw[d];
                    res.dirs[d].iops = r.sampler.iops[d];
                }
                res.name = r.name.clone();
                res.groupid = r.groupid;
                res.jobs = 1;
                res.start_unix_ms = r.start_ms;
                res.elapsed_s = run_start.elapsed().as_secs().max(1);
                res.info = r.info.clone();
                got.push(Finished {
                    result: res,
                    groupid: r.groupid,
                    grouped: r.group_reporting,
                    ioprio: r.ioprio,
                });
                break;
            }
            if Instant::now() >= deadline || r.shared.state.load(Relaxed) == STATE_DONE {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    (!got.is_empty()).then(|| assemble(got, Vec::new(), unix_ms(), globals))
}

fn progress_of(r: &Running, elapsed: f64) -> JobProgress {
    let st = r.shared.state.load(Relaxed);
    JobProgress {
        name: r.name.clone(),
        rw: rw_char(&r.info.rw),
        running: st != STATE_DONE,
        done: st == STATE_DONE,
        bytes: std::array::from_fn(|d| r.shared.bytes[d].load(Relaxed)),
        ios: std::array::from_fn(|d| r.shared.ios[d].load(Relaxed)),
        submit_calls: r.shared.submit_calls.load(Relaxed),
        reap_calls: r.shared.reap_calls.load(Relaxed),
        planned: r.planned,
        runtime_s: r.runtime_s,
        elapsed_s: elapsed,
    }
}

/// fio's one-letter job state in the status line.
fn rw_char(rw: &str) -> char {
    match rw {
        "read" => 'R',
        "randread" => 'r',
        "write" => 'W',
        "randwrite" => 'w',
        "rw" => 'M',
        "randrw" => 'm',
        "trim" => 'D',
        "randtrim" => 'd',
        _ => 'M',
    }
}

/// A job's results with what grouping needs.
struct Finished {
    result: JobResult,
    groupid: u32,
    grouped: bool,
    /// The job's default ioprio (prio/prioclass).
    ioprio: u16,
}

/// fio's per-priority stats for a group: when some job uses cmdprio or the jobs'
/// default priorities differ, a job without per-I/O priorities contributes its whole
/// clat (or lat, with lat_percentiles) histogram under its own ioprio.
fn credit_default_prio(members: &mut [Finished]) {
    let distinct = members
        .iter()
        .map(|m| m.ioprio)
        .collect::<std::collections::BTreeSet<_>>()
        .len();
    let cmdprio = members
        .iter()
        .any(|m| m.result.dirs.iter().any(|d| !d.prios.is_empty()));
    if distinct < 2 && !cmdprio {
        return;
    }
    for m in members.iter_mut() {
        let use_lat = m.result.info.lat_percentiles;
        for d in m.result.dirs.iter_mut() {
            if !d.prios.is_empty() || d.total_ios == 0 {
                continue;
            }
            let track = if use_lat { &d.lat } else { &d.clat };
            if let Some(h) = &track.hist {
                d.prios.push(ioscope_stats::PrioStat {
                    ioprio: m.ioprio,
                    stat: track.stat,
                    hist: h.clone(),
                });
            }
        }
    }
}

/// group_reporting merges, then group totals.
fn assemble(
    mut results: Vec<Finished>,
    disks: Vec<ioscope_stats::DiskUtil>,
    timestamp_ms: u64,
    globals: &[(String, String)],
) -> RunResult {
    let mut jobs: Vec<JobResult> = Vec::new();
    let mut i = 0;
    while i < results.len() {
        let (gid, grouped) = (results[i].groupid, results[i].grouped);
        let mut j = i + 1;
        while j < results.len() && results[j].groupid == gid {
            j += 1;
        }
        if grouped {
            credit_default_prio(&mut results[i..j]);
            let members: Vec<JobResult> = results[i..j].iter().map(|r| r.result.clone()).collect();
            let mut merged = ioscope_stats::merge::merge_group(&members);
            merged.name = results[i].result.name.clone();
            jobs.push(merged);
        } else {
            jobs.extend(results[i..j].iter().map(|r| r.result.clone()));
        }
        i = j;
    }
    let clock = Clock::get();
    // fio takes group min/max over the reported entries (merged under group_reporting).
    let groups = ioscope_stats::merge::group_results(&jobs);
    RunResult {
        jobs,
        groups,
        disks,
        timestamp_ms,
        global_options: globals.to_vec(),
        meta: crate::meta::run_meta(clock),
    }
}
