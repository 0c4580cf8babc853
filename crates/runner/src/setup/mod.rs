//! Preparing a job clone: its files, hooks, logs, seed and what reports need to know
//! about it. Everything here happens before the job's thread starts.

pub(crate) mod buffers;
mod ctx;
pub(crate) mod files;
pub(crate) mod iomem;

pub(crate) use ctx::{JobCtx, JobMeta, Ready};

use crate::clock::unix_ms;
use crate::env::Env;
use crate::error::RunError;
use crate::observe::Observer;
use crate::plan::info::job_info;
use crate::plan::{access, Access, Planned};
use crate::record::log::JobLogs;
use crate::record::Shared;
use crate::sys::exec::exec_hook;
use crate::sys::prio;
use crate::workload::Workload;
use ioscope_options::JobOptions;
use std::sync::Arc;

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
    let trace = crate::workload::replay::load(&o, p.clone, ro.readonly)
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
        a = Access {
            reads,
            writes: writes || o.ioengine == "falloc",
            trims,
        };
    }
    let mut say = |s: String| obs.message(&s);
    let scripted = matches!(env.engine, crate::env::EngineSource::Scripted(_));
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
    let paths: Vec<std::path::PathBuf> = files.iter().map(|f| f.path.clone()).collect();
    let info = job_info(p.spec, &paths);
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
    let cgroup = crate::sys::cgroup::prepare(&o)?;
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
