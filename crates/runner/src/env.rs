//! Run-wide settings every stage of a run shares: the command line's options, the
//! clock, the stop flag and where engines come from.

use crate::clock::Clock;
use crate::testing::Script;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
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
    /// With `nop`: the NOPs name the job's file, as t/io_uring's do (IORING_NOP_FILE:
    /// the kernel looks the file up, and the registered buffer with fixedbufs), so
    /// the file is opened, and never read or written (`ioscope peak --nop FILE`).
    #[serde(default)]
    pub nop_file: bool,
    /// Print a full interim report this often (fio's --status-interval).
    pub status_interval: Option<Duration>,
    /// Cut each job's I/O into intervals this long for the observer's live stream
    /// (`--live`, `--metrics`): the monitor asks the jobs for copies of their
    /// statistics, outside their per-I/O path.
    #[serde(default)]
    pub live_interval: Option<Duration>,
    /// Submit and wait in one call when the queue is full (`ioscope peak`).
    pub combine_submit_wait: bool,
    /// Let the engine run a job that does nothing between its I/Os in its own loop
    /// (`ioscope peak`; io_uring has one): t/io_uring's rounds, without the general
    /// loop's per-I/O steps. Other jobs, and engines without one, use the general loop.
    #[serde(default)]
    pub engine_loop: bool,
    /// What per-I/O logs are written as (`--log-format`).
    pub log_format: ioscope_iolog::LogFormat,
    /// Where state files go (fio's --aux-path; default: the current directory).
    pub aux_path: Option<std::path::PathBuf>,
    /// fio's `--debug=random,io`: what the run traces, and where.
    pub debug: DebugOptions,
    /// --trigger-file, --trigger-timeout, --trigger.
    #[serde(default)]
    pub trigger: Option<Trigger>,
}

/// fio's verification triggers: when one fires, every running job saves its verify
/// state as it stands (the writes then in flight not counted as done), the run ends,
/// and the command runs while the jobs wind down.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Trigger {
    /// Fire when this file exists (it is removed).
    pub file: Option<std::path::PathBuf>,
    /// Fire this long after the run started.
    pub timeout: Option<Duration>,
    /// Run through `sh -c` once the states are saved.
    pub command: Option<String>,
    /// Fire when this is set, from outside the run (a client's trigger reaching a
    /// server).
    #[serde(skip)]
    pub remote: Option<RemoteTrigger>,
}

/// A trigger fired from outside the run.
#[derive(Clone, Debug, Default)]
pub struct RemoteTrigger {
    pub fire: Arc<AtomicBool>,
    /// The command to run, given with the trigger (instead of `Trigger::command`).
    pub command: Arc<Mutex<Option<String>>>,
}

/// The run's share of fio's `--debug=` (the program prints `parse` itself).
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct DebugOptions {
    /// `random`: each job clone's random-stream seeds, before it starts.
    pub random: bool,
    /// `io`: one line per completed I/O, in fio's format.
    pub io: bool,
    /// Where the job threads write their `io` lines (standard output when none); the
    /// program points it where its report goes (`--output`). Not sent to MPI ranks.
    #[serde(skip)]
    pub out: Option<DebugOut>,
}

/// A shared writer for debug lines, written in whole lines by any thread.
#[derive(Clone)]
pub struct DebugOut(pub Arc<Mutex<dyn Write + Send>>);

impl std::fmt::Debug for DebugOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DebugOut")
    }
}

impl DebugOut {
    /// Write whole lines; a failed write (a closed pipe) is dropped, as debug output
    /// must never end the run.
    pub fn write_lines(out: Option<&DebugOut>, text: &[u8]) {
        match out {
            Some(o) => {
                let mut w = o.0.lock().unwrap_or_else(|e| e.into_inner());
                let _ = w.write_all(text).and_then(|_| w.flush());
            }
            None => {
                let mut w = std::io::stdout().lock();
                let _ = w.write_all(text).and_then(|_| w.flush());
            }
        }
    }
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
    /// zonemode=zbd: the write pointers of zones emulated over files, from job to job.
    pub zones: &'a crate::workload::zbd::KeptZones,
}
