//! Preparing a job clone: its files, hooks, logs, seed and what reports need to know
//! about it. Everything here happens before the job's thread starts.

use crate::clock::unix_ms;
use crate::error::RunError;
use crate::files::{self, JobFile};
use crate::iolog::JobLogs;
use crate::job::{JobCtx, Shared};
use crate::plan::{access, Planned};
use crate::prio;
use crate::run::{Env, Observer};
use crate::workload::Workload;
use ioscope_engine::EngineOptions;
use ioscope_options::{engines, JobOptions, JobSpec};
use ioscope_stats::JobInfo;
use std::sync::Arc;

/// Engine options of a job.
pub(crate) fn engine_options(o: &JobOptions, nop: bool) -> EngineOptions {
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
        thp: o.thp != 0,
        stat_type: match o.stat_type {
            ioscope_options::StatType::Stat => ioscope_engine::StatType::Stat,
            ioscope_options::StatType::Lstat => ioscope_engine::StatType::Lstat,
            ioscope_options::StatType::Statx => ioscope_engine::StatType::Statx,
        },
    }
}

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
    let sync_engine = engines::is_sync(&o.ioengine, o.iodepth);
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
        // fio reports error counts for ignore_error as for continue_on_error.
        continue_on_error: o.continue_on_error != ioscope_options::ContinueOnError::None
            || o.ignore_error.0.iter().any(|l| !l.is_empty()),
        options: spec.job_options.clone(),
        description: o.description.clone(),
        files: files.iter().map(|f| f.path.display().to_string()).collect(),
        latency_target: None,
        fake_io: ioscope_engine::is_path_engine(&o.ioengine),
    }
}

/// What the monitor, the status line and the report know of a job clone.
pub(crate) struct JobMeta {
    pub info: JobInfo,
    pub name: String,
    pub groupid: u32,
    /// Directions the job does (bandwidth samples are taken for these).
    pub sample_dirs: [bool; 3],
    /// Bytes the job will do in total, when size-bounded.
    pub planned: Option<u64>,
    /// Seconds of ramp + runtime, when time-bounded.
    pub runtime_s: Option<f64>,
}

/// A job ready to start in its thread.
pub(crate) struct Ready {
    pub ctx: JobCtx,
    pub meta: JobMeta,
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

/// Lay out or open the job's files, run exec_prerun, open its logs.
pub(crate) fn prepare_job(
    p: &Planned,
    env: &Env,
    obs: &mut dyn Observer,
) -> Result<Ready, RunError> {
    let ro = env.opts;
    let mut o = p.spec.opts.clone();
    let mut a = access(&o);
    // read_iolog: the trace's files, I/O and directions (and a blktrace's depth) are
    // the job's.
    let trace = crate::replay::load(&o, p.clone, ro.readonly)
        .map_err(|e| RunError::Setup(format!("job '{}': {e}", o.name)))?;
    if let Some(t) = &trace {
        for n in &t.notes {
            obs.warning(n);
        }
        let set_depth = !p.spec.explicit.iter().any(|(k, _)| k == "iodepth");
        if let (Some(d), true) = (t.depth, set_depth) {
            o.iodepth = d;
            o.iodepth_low = d;
        }
        let [reads, writes, trims] = t.dirs();
        a = files::Access {
            reads,
            writes: writes || o.ioengine == "falloc",
            trims,
        };
    }
    let mut say = |s: String| obs.message(&s);
    let scripted = matches!(env.engine, crate::run::EngineSource::Scripted(_));
    let names = ioscope_engine::is_path_engine(&o.ioengine) && !scripted;
    // Metadata engines do no I/O to their files either: syncs are no-ops.
    let diskless = o.ioengine == "null" || ro.nop || scripted || names;
    let files = if names {
        files::prepare_names(&o, p.clone, a, env.stop, &mut say)?
    } else {
        files::prepare(
            &o,
            p.clone,
            files::Uses {
                access: a,
                trace: trace.as_ref(),
            },
            ro.allow_destructive,
            diskless,
            env.stop,
            &mut say,
        )?
    };
    let blocks = match o.block_error_percentiles {
        true => Some(block_track(&o, &files)?),
        false => None,
    };
    if let Some(cmd) = &o.exec_prerun {
        exec_hook(&o.name, "prerun", cmd)?;
    }
    let ioprio = prio::job_ioprio(&o);
    let info = job_info(p.spec, &files);
    let logs = JobLogs::open(&o, p.number, info.sync_engine, env.clock, ro.log_format)
        .map_err(|e| RunError::Setup(format!("job '{}': cannot open log: {e}", o.name)))?;
    let regions: Vec<(u64, u64)> = files.iter().map(|f| (f.start, f.len)).collect();
    let smallest_bs = info.bs.iter().map(|b| b.0).min().unwrap_or(1);
    if regions.iter().map(|r| r.1).sum::<u64>() < smallest_bs {
        // As fio: such a job does no I/O; say why instead of an empty report alone.
        let names: Vec<String> = files.iter().map(|f| f.path.display().to_string()).collect();
        obs.warning(&format!(
            "ioscope: job '{}': no room for I/O: the region of {} (offset={}, size={}) is smaller \
             than the block size",
            o.name,
            names.join(", "),
            files.first().map_or(0, |f| f.start),
            regions.iter().map(|r| r.1).sum::<u64>()
        ));
    }
    let seed = seed_for(&o, p.number);
    let planned = Workload::new(&o, &regions, seed).planned_bytes();
    let runtime_s = (o.runtime > 0).then(|| (o.runtime + o.ramp_time) as f64 / 1e6);
    // Last: nothing after it can fail and leave a group behind.
    let cgroup = crate::cgroup::prepare(&o)?;
    Ok(Ready {
        ctx: JobCtx {
            seed,
            opts: o,
            files,
            shared: Arc::new(Shared::default()),
            stop_all: env.stop,
            diskless,
            clock: env.clock,
            ioprio,
            logs,
            nop: ro.nop,
            wait_for: Vec::new(),
            clone: p.clone,
            combine_submit_wait: ro.combine_submit_wait,
            dirs: [a.reads, a.writes, a.trims],
            trace,
            act: matches!(&p.spec.loc.source, ioscope_options::Source::Profile(n) if n == "act"),
            blocks,
            cgroup,
            number: p.number,
            jobs: p.jobs,
        },
        meta: JobMeta {
            info,
            name: p.spec.name.clone(),
            groupid: p.groupid,
            sample_dirs: [a.reads, a.writes, a.trims],
            planned,
            runtime_s,
        },
    })
}

/// exec_prerun / exec_postrun: run `sh -c CMD`, output in NAME.WHAT.txt.
pub(crate) fn exec_hook(name: &str, what: &str, cmd: &str) -> Result<(), RunError> {
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

/// block_error_percentiles: the job's one file in trim-sized blocks (at most fio's
/// 8192 of them).
fn block_track(
    o: &JobOptions,
    files: &[files::JobFile],
) -> Result<crate::record::BlockTrack, RunError> {
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
    Ok(crate::record::BlockTrack {
        start: f.start,
        trim_bs,
        blocks,
    })
}
