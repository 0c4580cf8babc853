//! Every derived fact of a job clone, settled once by the plan: the later stages read
//! a [`Resolved`] and never derive these again.

use super::access::{access, Access};
use crate::error::RunError;
use crate::sys::mem::mem_available;
use ioscope_iolog::set::LogSet;
use ioscope_options::{engines, JobOptions, JobSpec};

/// A job clone's derived facts.
#[derive(Clone, Debug)]
pub struct Resolved {
    /// The options the clone runs with: its spec's, with a replayed blktrace's depth
    /// when iodepth is not set.
    pub opts: JobOptions,
    /// The kinds of I/O it does (rw=, or its trace's).
    pub access: Access,
    /// Its engine completes each I/O in the call that issues it (fio's sync engines:
    /// no submission latency, one I/O in flight).
    pub sync: bool,
    /// Its log files.
    pub logs: LogSet,
    /// Bytes it needs before its first I/O.
    pub memory: u64,
    /// How its blocks are verified, when it verifies.
    pub verify: Option<ioscope_verify::Spec>,
}

/// What a replayed trace changes: its queue depth (a blktrace's) and its directions.
#[derive(Clone, Copy, Debug)]
pub struct TraceFacts {
    pub depth: Option<u32>,
    pub dirs: [bool; 3],
}

/// Settle job clone `number` of `spec`, with its trace's facts when it replays one;
/// an error says why the job cannot run.
pub fn resolve(
    spec: &JobSpec,
    number: u32,
    trace: Option<TraceFacts>,
) -> Result<Resolved, RunError> {
    let mut o = spec.opts.clone();
    let mut a = access(&o);
    if let Some(t) = trace {
        let set_depth = !spec.explicit.iter().any(|(k, _)| k == "iodepth");
        if let (Some(d), true) = (t.depth, set_depth) {
            o.iodepth = d;
            o.iodepth_low = d;
        }
        let [reads, writes, trims] = t.dirs;
        a = Access {
            reads,
            writes: writes || o.ioengine == "falloc",
            trims,
        };
    }
    let sync = engines::is_sync(&o.ioengine, o.iodepth);
    let logs = LogSet::of(&o, number, sync);
    let memory = job_memory(&o, a, &logs);
    let verify = super::verify::spec_of(&o, number as u16)
        .map_err(|m| RunError::Setup(format!("job '{}': {m}", spec.name)))?;
    Ok(Resolved {
        opts: o,
        access: a,
        sync,
        logs,
        memory,
        verify,
    })
}

/// Memory one job clone needs before its first I/O: I/O buffers, pre-faulted latency
/// histograms and log chunks.
pub fn job_memory(o: &JobOptions, a: Access, logs: &LogSet) -> u64 {
    const HIST: u64 = (ioscope_stats::hist::BUCKETS * 8) as u64;
    let max_bs = (0..3)
        .map(|d| {
            let split = o
                .bssplit
                .as_ref()
                .and_then(|s| s.0[d].iter().map(|e| e.bs).max());
            let range = o.bsrange.as_ref().map(|r| r.0 .0[d].hi);
            split.or(range).unwrap_or(o.bs.0[d])
        })
        .max()
        .unwrap_or(4096);
    let buffers = o.iodepth.max(1) as u64 * max_bs.next_multiple_of(4096);
    let dirs = [a.reads, a.writes, a.trims].iter().filter(|&&u| u).count() as u64;
    let tracks = [o.clat_percentiles, o.lat_percentiles, o.slat_percentiles];
    let per_dir = tracks.iter().filter(|&&t| t).count() as u64;
    let log_bytes = if logs.captures() {
        (crate::record::log::CHUNKS
            * crate::record::log::CHUNK_RECORDS
            * ioscope_iolog::binary::RECORD_SIZE) as u64
    } else {
        0
    };
    let sync_hist = u64::from(o.fsync > 0 || o.fdatasync > 0);
    buffers + (dirs * per_dir + sync_hist) * HIST + log_bytes
}

/// Refuse job clones that need more memory together than the machine has available.
pub fn check_memory<'r>(jobs: impl Iterator<Item = &'r Resolved>) -> Result<(), RunError> {
    let need: u64 = jobs.map(|j| j.memory).fold(0, u64::saturating_add);
    let Some(avail) = mem_available() else {
        return Ok(());
    };
    if need > avail {
        return Err(RunError::Setup(format!(
            "the jobs need {} MiB of memory before their first I/O (buffers × iodepth × numjobs, \
             latency histograms, log buffers) but only {} MiB are available",
            need >> 20,
            avail >> 20
        )));
    }
    Ok(())
}
