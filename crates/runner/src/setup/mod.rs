//! Preparing a job clone: its files, hooks, logs, seed and what reports need to know
//! about it. Everything here happens before the job's thread starts.

pub(crate) mod buffers;
mod capable;
mod ctx;
pub(crate) mod files;
pub(crate) mod iomem;
mod scheme;
mod zone_order;
mod zoned;

pub(crate) use ctx::{JobCtx, JobMeta, Ready};
pub(crate) use zoned::share as share_zones;

use crate::clock::unix_ms;
use crate::env::Env;
use crate::error::RunError;
use crate::observe::Observer;
use crate::plan::info::job_info;
use crate::plan::resolve::{fit_memory, resolve, TraceFacts};
use crate::plan::{Planned, Resolved};
use crate::record::log::JobLogs;
use crate::record::Shared;
use crate::sys::exec::exec_hook;
use crate::sys::prio;
use crate::sys::zoned::ZoneDev;
use crate::workload::replay::Trace;
use crate::workload::Workload;
use files::JobFile;
use ioscope_options::JobOptions;
use ioscope_stats::JobInfo;
use std::sync::Arc;

fn seed_for(o: &JobOptions, number: u32) -> u64 {
    if o.randrepeat {
        o.randseed ^ (number as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    } else {
        let mut b = [0u8; 8];
        // SAFETY: getrandom writes at most 8 bytes into b.
        unsafe { libc::getrandom(b.as_mut_ptr().cast(), 8, 0) };
        u64::from_ne_bytes(b) ^ unix_ms()
    }
}

/// How the clone's offsets are drawn: its seed (listed by `--debug=random`), whether
/// its generator is fio's 32-bit one, and sprandom's plan checked against its file.
fn offsets(
    p: &Planned,
    o: &JobOptions,
    (files, regions): (&[JobFile], &[(u64, u64)]),
    env: &Env,
    obs: &mut dyn Observer,
) -> Result<(u64, bool), RunError> {
    let seed = seed_for(o, p.number);
    crate::workload::check_sprandom(o, regions)
        .map_err(|e| RunError::Setup(format!("job '{}': {e}", o.name)))?;
    if env.opts.debug.random {
        debug_seeds(seed, env);
    }
    Ok((seed, offsets_32bit(p, files, obs)))
}

/// `random_generator=tausworthe` set explicitly: fio's 32-bit generator, with fio's
/// warning for each file of more than 2^32 blocks.
fn offsets_32bit(p: &Planned, files: &[JobFile], obs: &mut dyn Observer) -> bool {
    let o = &p.spec.opts;
    let chosen = p.spec.explicit.iter().any(|(k, _)| k == "random_generator");
    if !chosen || o.random_generator != ioscope_options::RandomGenerator::Tausworthe {
        return false;
    }
    let bs = o.min_bs_all().max(1);
    // As fio: for random offsets, over more blocks than 32 bits count (2^32 - 1).
    let random = o.rw.mode.is_random();
    for f in files.iter().filter(|f| random && f.len / bs >= 1 << 32) {
        obs.message(&format!(
            "fio: file {} exceeds 32-bit tausworthe random generator.",
            f.path.display()
        ));
        obs.message("fio: Use the random_generator= option to switch to lfsr or tausworthe64.");
    }
    true
}

/// `--debug=random`: the clone's stream seeds, in fio's debug format.
fn debug_seeds(seed: u64, env: &Env) {
    use std::fmt::Write;
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let streams = crate::workload::rng::stream_seeds(seed);
    let names: Vec<&str> = streams.iter().map(|(n, _)| *n).collect();
    let mut s = format!("random   {pid:5} FIO_RAND_NR_OFFS={}\n", streams.len());
    let _ = writeln!(s, "random   {pid:5} streams: {}", names.join(" "));
    for (i, (_, v)) in streams.iter().enumerate() {
        let _ = writeln!(s, "random   {pid:5} rand_seeds[{i}]={v}");
    }
    crate::env::DebugOut::write_lines(env.opts.debug.out.as_ref(), s.as_bytes());
}

/// Lay out or open the job's files, run exec_prerun, open its logs.
pub(crate) fn prepare_job(
    p: &Planned,
    env: &Env,
    obs: &mut dyn Observer,
) -> Result<Ready, RunError> {
    let (job, trace) = with_trace(p, env, obs)?;
    let o = &job.opts;
    let diskless = diskless(o, env);
    let mut files = open_files(p, &job, trace.as_ref(), diskless, env, obs)?;
    capable::check(&job, &files, diskless || env.opts.nop, trace.is_some())?;
    let zones = zoned::prepare(&job, &mut files, diskless, env.zones)?;
    zone_order::warn(p.clone, &job, zones.as_ref(), &files, obs);
    let dp_scheme = scheme::read(o, &mut |s| obs.message(&s))?;
    let blocks = block_track(o, &files)?;
    if let Some(cmd) = &o.exec_prerun {
        exec_hook(&o.name, "prerun", cmd)?;
    }
    let paths: Vec<std::path::PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let info = job_info(p.spec, job.sync, &paths);
    let logs = JobLogs::open(
        o,
        &job.logs,
        job.log_records,
        p.number,
        env.clock,
        env.opts.log_format,
    )
    .map_err(|e| RunError::Setup(format!("job '{}': cannot open log: {e}", o.name)))?;
    let regions: Vec<(u64, u64)> = files.iter().map(|f| (f.start, f.len)).collect();
    warn_if_no_room(o, &files, &info, obs);
    let (seed, offsets_32bit) = offsets(p, o, (&files, &regions), env, obs)?;
    let planned = Workload::new(o, &regions, seed).planned_bytes();
    let runtime_s = (o.runtime > 0).then(|| (o.runtime + o.ramp_time) as f64 / 1e6);
    // Last: nothing after it can fail and leave a group behind.
    let cgroup = crate::sys::cgroup::prepare(o)?;
    let dirs = [job.access.reads, job.access.writes, job.access.trims];
    Ok(Ready {
        ctx: JobCtx {
            seed,
            ioprio: prio::job_ioprio(o),
            opts: job.opts,
            files,
            shared: Arc::new(Shared::default()),
            stop_all: env.stop,
            diskless,
            clock: env.clock,
            logs,
            nop: env.opts.nop,
            nop_file: env.opts.nop && env.opts.nop_file,
            wait_for: Vec::new(),
            clone: p.clone,
            combine_submit_wait: env.opts.combine_submit_wait,
            engine_loop: env.opts.engine_loop,
            dirs,
            trace,
            act: matches!(&p.spec.loc.source, ioscope_options::Source::Profile(n) if n == "act"),
            blocks,
            cgroup,
            number: p.number,
            jobs: p.jobs,
            verify: job.verify,
            verify_state: job.verify_state,
            offsets_32bit,
            zone_resets: zones.as_ref().and_then(|z| z.report_resets.then_some(0)),
            zone_dev: zones.as_ref().map_or(ZoneDev::Emulated, |z| z.dev),
            zones: zones.map(|z| z.map),
            trace_io: env.opts.debug.io.then(|| env.opts.debug.out.clone()),
            dp_scheme,
        },
        meta: JobMeta {
            info,
            name: p.spec.name.clone(),
            groupid: p.groupid,
            number: p.number,
            sample_dirs: dirs,
            planned,
            runtime_s,
        },
    })
}

/// read_iolog: the trace's files, I/Os and directions (and a blktrace's depth) become
/// the job's, so the plan settles the job again with them and checks its memory again.
fn with_trace(
    p: &Planned,
    env: &Env,
    obs: &mut dyn Observer,
) -> Result<(Resolved, Option<Trace>), RunError> {
    let o = &p.spec.opts;
    let trace = crate::workload::replay::load(o, p.clone, env.opts.readonly)
        .map_err(|e| RunError::Setup(format!("job '{}': {e}", o.name)))?;
    let Some(t) = trace else {
        return Ok((p.job.clone(), None));
    };
    for n in &t.notes {
        obs.warning(n);
    }
    let facts = TraceFacts {
        depth: t.depth,
        dirs: t.dirs(),
    };
    let mut job = resolve(p.spec, p.number, Some(facts))?;
    job.set_log_records(p.job.log_records);
    job.verify_state.clone_from(&p.job.verify_state);
    if job.memory > p.job.memory {
        fit_memory(std::iter::once(&mut job))?;
    }
    Ok((job, Some(t)))
}

/// No real files: the null engine, NOPs (but for NOPs that name their file), the
/// scripted engine; the metadata engines do no I/O to their files either. Syncs are
/// no-ops then, as in fio.
fn diskless(o: &JobOptions, env: &Env) -> bool {
    let scripted = matches!(env.engine, crate::env::EngineSource::Scripted(_));
    let nop = env.opts.nop && !env.opts.nop_file;
    o.ioengine == "null" || nop || scripted || names_engine(o, env)
}

/// A metadata engine, whose "files" are names to operate on.
fn names_engine(o: &JobOptions, env: &Env) -> bool {
    let scripted = matches!(env.engine, crate::env::EngineSource::Scripted(_));
    ioscope_engine::is_path_engine(&o.ioengine) && !scripted
}

fn open_files(
    p: &Planned,
    job: &Resolved,
    trace: Option<&Trace>,
    diskless: bool,
    env: &Env,
    obs: &mut dyn Observer,
) -> Result<Vec<JobFile>, RunError> {
    let mut say = |s: String| obs.message(&s);
    let o = &job.opts;
    if names_engine(o, env) {
        return files::prepare_names(o, p.clone, job.access, env.stop, &mut say);
    }
    let uses = files::Uses {
        access: job.access,
        trace,
    };
    let destroy = env.opts.allow_destructive;
    files::prepare(o, p.clone, uses, destroy, diskless, env.stop, &mut say)
}

/// As fio: a job whose region is smaller than its block size does no I/O; say why
/// instead of an empty report alone.
fn warn_if_no_room(o: &JobOptions, files: &[JobFile], info: &JobInfo, obs: &mut dyn Observer) {
    let region: u64 = files.iter().map(|f| f.len).sum();
    let smallest_bs = info.bs.iter().map(|b| b.0).min().unwrap_or(1);
    if region >= smallest_bs {
        return;
    }
    let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
    obs.warning(&format!(
        "ioscope: job '{}': no room for I/O: the region of {} (offset={}, size={}) is smaller \
         than the block size",
        o.name,
        names.join(", "),
        files.first().map_or(0, |f| f.start),
        region
    ));
}

/// block_error_percentiles: the job's one file in trim-sized blocks (at most fio's
/// 8192 of them); None without it.
fn block_track(
    o: &JobOptions,
    files: &[files::JobFile],
) -> Result<Option<crate::record::BlockTrack>, RunError> {
    if !o.block_error_percentiles {
        return Ok(None);
    }
    let [f] = files else {
        return Err(RunError::Setup(format!(
            "job '{}': block_error_percentiles counts the blocks of one file, and the job has {}",
            o.name,
            files.len()
        )));
    };
    let trim_bs = o.bs.0[2].max(1);
    let blocks = f.len / trim_bs;
    if blocks == 0 || blocks > ioscope_stats::block::MAX_BLOCKS {
        return Err(RunError::Setup(format!(
            "job '{}': block_error_percentiles: cannot count {blocks} blocks of {trim_bs} bytes \
             (at most {}: a larger trim block size or a smaller size)",
            o.name,
            ioscope_stats::block::MAX_BLOCKS
        )));
    }
    Ok(Some(crate::record::BlockTrack {
        start: f.start,
        trim_bs,
        blocks,
    }))
}
