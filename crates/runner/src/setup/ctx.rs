//! A job clone once set up: what its thread needs ([`JobCtx`]) and what the monitor
//! and the report know of it ([`JobMeta`]).

use crate::clock::Clock;
use crate::record::log::JobLogs;
use crate::record::Shared;
use crate::setup::files::JobFile;
use ioscope_options::JobOptions;
use ioscope_stats::JobInfo;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Everything the job thread needs.
pub struct JobCtx {
    pub opts: JobOptions,
    pub files: Vec<JobFile>,
    pub shared: Arc<Shared>,
    /// The run's stop flag (signals, exitall_on_error).
    pub stop_all: &'static AtomicBool,
    /// No real files (null engine, NOPs, scripted engine): syncs are no-ops, as in fio.
    pub diskless: bool,
    pub clock: &'static Clock,
    pub seed: u64,
    pub ioprio: u16,
    pub logs: Option<JobLogs>,
    /// Issue NOPs instead of I/O (io_uring).
    pub nop: bool,
    /// The NOPs name the job's file (see [`crate::RunOptions::nop_file`]).
    pub nop_file: bool,
    /// wait_for: jobs (all clones of the named job) that must finish first.
    pub wait_for: Vec<Arc<Shared>>,
    /// Which clone (numjobs) this is: cpus_allowed_policy=split picks its CPU by it.
    pub clone: u32,
    /// Submit the batch that fills the queue in the same call that waits for
    /// completions (`ioscope peak`). Its issue time is then taken before that call,
    /// as t/io_uring does; fio-compatible runs keep fio's definition (after submit).
    pub combine_submit_wait: bool,
    /// The engine may run the job in its own loop (see `RunOptions::engine_loop`).
    pub engine_loop: bool,
    /// The directions the job does I/O in (rw=, or read_iolog's trace): read, write,
    /// trim.
    pub dirs: [bool; 3],
    /// read_iolog: the trace the job replays (taken by the job's thread).
    pub trace: Option<crate::workload::replay::Trace>,
    /// A job of `--profile=act`: its latencies go into act's table.
    pub act: bool,
    /// block_error_percentiles: the blocks of the job's file.
    pub blocks: Option<crate::record::BlockTrack>,
    /// The blkio cgroup the job's thread joins (cgroup, cgroup_weight).
    pub cgroup: Option<crate::sys::cgroup::JobCgroup>,
    /// 1-based number of the job clone over the run (fio's thread_number).
    pub number: u32,
    /// Job clones in the whole run.
    pub jobs: u32,
    /// How its blocks are verified, when it verifies (settled by the plan).
    pub verify: Option<ioscope_verify::Spec>,
    /// Its verify state file (settled by the plan).
    pub verify_state: Option<std::path::PathBuf>,
    /// `random_generator=tausworthe` set explicitly: offsets from 32 random bits.
    pub offsets_32bit: bool,
    /// zonemode=zbd: the zones of its file (taken by the workload), and whether the
    /// job reports its zone resets (Some(0); None without zonemode=zbd or when it
    /// neither writes nor trims).
    pub zones: Option<crate::workload::zbd::ZoneMap>,
    pub zone_resets: Option<u64>,
    /// zonemode=zbd: where its zone operations go (emulated zones: nowhere, they are
    /// kept in the zone map only).
    pub zone_dev: crate::sys::zoned::ZoneDev,
    /// `--debug=io`: where its completion lines go (Some(None): standard output).
    pub trace_io: Option<Option<crate::env::DebugOut>>,
    /// plid_select=scheme: the placement ID of each write by its offset.
    pub dp_scheme: Vec<ioscope_engine::uring_cmd::SchemeEntry>,
}

/// What the monitor, the status line and the report know of a job clone.
pub(crate) struct JobMeta {
    pub info: JobInfo,
    pub name: String,
    pub groupid: u32,
    /// 1-based number over the whole run.
    pub number: u32,
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
