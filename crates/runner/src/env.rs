//! Run-wide settings every stage of a run shares: the command line's options, the
//! clock, the stop flag and where engines come from.

use crate::clock::Clock;
use crate::testing::Script;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

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
    pub log_format: ioscope_iolog::LogFormat,
    /// Where state files go (fio's --aux-path; default: the current directory).
    pub aux_path: Option<std::path::PathBuf>,
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
