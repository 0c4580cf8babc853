//! Every derived fact of a job clone, settled once by the plan: the later stages read
//! a [`Resolved`] and never derive these again.

use super::access::{access, Access};
use crate::error::RunError;
use crate::record::log::{CHUNKS, CHUNK_RECORDS, MIN_CHUNK_RECORDS};
use crate::sys::mem;
use ioscope_iolog::binary::RECORD_SIZE;
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
    /// It asks for polled completions: hipri on io_uring or io_uring_cmd (an IOPOLL
    /// ring), or on pvsync2 (RWF_HIPRI for hipri_percentage of its I/Os). Setup
    /// refuses it on a disk without poll queues, so a run that ran was polled.
    pub polled: bool,
    /// Its log files.
    pub logs: LogSet,
    /// Bytes it needs before its first I/O.
    pub memory: u64,
    /// Records per chunk of its per-I/O log stream (0: it captures none); fewer than
    /// the default when many logging jobs share little memory (see [`fit_memory`]).
    pub log_records: usize,
    /// How its blocks are verified, when it verifies.
    pub verify: Option<ioscope_verify::Spec>,
    /// Its verify state file (verify_state_save, verify_state_load), when it verifies:
    /// under --aux-path, or in the current directory.
    pub verify_state: Option<std::path::PathBuf>,
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
    let polled = o.hipri
        && (o.ioengine.starts_with("io_uring")
            || (o.ioengine == "pvsync2" && o.hipri_percentage > 0));
    let logs = LogSet::of(&o, number, sync);
    let log_records = if logs.captures() { CHUNK_RECORDS } else { 0 };
    let memory = job_memory(&o, a) + log_bytes(log_records);
    let verify = super::verify::spec_of(&o, number as u16)
        .map_err(|m| RunError::Setup(format!("job '{}': {m}", spec.name)))?;
    let verify_state = verify
        .as_ref()
        .map(|_| ioscope_verify::state::file_name(&o.name, u64::from(number - 1)).into());
    Ok(Resolved {
        opts: o,
        access: a,
        sync,
        polled,
        logs,
        memory,
        log_records,
        verify_state,
        verify,
    })
}

impl Resolved {
    /// Use `records` per log chunk (the plan's choice, kept when setup resolves a
    /// replayed trace again).
    pub fn set_log_records(&mut self, records: usize) {
        if self.log_records > 0 && records > 0 {
            self.memory = self.memory - log_bytes(self.log_records) + log_bytes(records);
            self.log_records = records;
        }
    }
}

/// Bytes of a per-I/O log stream of `records` per chunk.
fn log_bytes(records: usize) -> u64 {
    (CHUNKS * records * RECORD_SIZE) as u64
}

/// Memory one job clone needs before its first I/O, logs aside: I/O buffers and
/// pre-faulted latency histograms.
pub fn job_memory(o: &JobOptions, a: Access) -> u64 {
    const HIST: u64 = (ioscope_stats::hist::BUCKETS * 8) as u64;
    let max_bs = (0..3).map(|d| o.max_bs(d)).max().unwrap_or(4096);
    let buffers = o.iodepth.max(1) as u64 * max_bs.next_multiple_of(4096);
    let dirs = [a.reads, a.writes, a.trims].iter().filter(|&&u| u).count() as u64;
    let tracks = [o.clat_percentiles, o.lat_percentiles, o.slat_percentiles];
    let per_dir = tracks.iter().filter(|&&t| t).count() as u64;
    let sync_hist = u64::from(o.fsync > 0 || o.fdatasync > 0);
    buffers + (dirs * per_dir + sync_hist) * HIST
}

/// Fit the clones of one phase into the memory this process may use (MemAvailable, or
/// a memory cgroup's headroom when tighter): per-I/O log streams take at most half of
/// what the buffers leave, with smaller chunks when many jobs log (never fewer than
/// [`MIN_CHUNK_RECORDS`]: a log is never dropped, its job waits for the writer
/// instead); a phase that still does not fit is refused, naming what limits it.
pub fn fit_memory<'r>(jobs: impl Iterator<Item = &'r mut Resolved>) -> Result<(), RunError> {
    let Some(avail) = mem::available() else {
        return Ok(());
    };
    fit_into(&mut jobs.collect::<Vec<_>>(), &avail)
}

pub(crate) fn fit_into(jobs: &mut [&mut Resolved], avail: &mem::Available) -> Result<(), RunError> {
    let total = |jobs: &[&mut Resolved]| jobs.iter().map(|j| j.memory).fold(0, u64::saturating_add);
    let loggers = jobs.iter().filter(|j| j.log_records > 0).count() as u64;
    if total(jobs) > avail.bytes / 2 && loggers > 0 {
        let logs: u64 = jobs.iter().map(|j| log_bytes(j.log_records)).sum();
        let rest = total(jobs) - logs;
        let budget = avail.bytes.saturating_sub(rest) / 2 / loggers;
        let per_chunk = (budget / (CHUNKS * RECORD_SIZE) as u64) as usize;
        let records = per_chunk.clamp(MIN_CHUNK_RECORDS, CHUNK_RECORDS);
        for j in jobs.iter_mut() {
            let r = j.log_records.min(records);
            j.set_log_records(r);
        }
    }
    let need = total(jobs);
    if need > avail.bytes {
        return Err(RunError::Setup(format!(
            "the jobs need {} MiB of memory before their first I/O (buffers × iodepth × \
             numjobs, latency histograms, log buffers) but only {} MiB are available ({})",
            need >> 20,
            avail.bytes >> 20,
            avail.by
        )));
    }
    Ok(())
}
