//! ioscope runner: turns job specifications into real I/O and results.
//!
//! The stages, each a folder; a stage imports only the stages below it:
//!
//! ```text
//! api       Runner: plan a JobSet, run it phase by phase, clean up      (the public face)
//! phase     one stonewall phase: start a thread per job, monitor, assemble results
//! job       the I/O loop (queue / commit / reap over an engine) and the parts it calls
//! setup     files, buffers, hooks and logs of a job clone before its thread starts
//! plan      validation, limits and every derived fact of a job, settled once
//! record    where latency is recorded: statistics, per-I/O log capture, published counters
//! workload  what I/O comes next: directions, sizes, offsets, replayed traces
//! sys       the machine: CPUs, memory, NUMA, cgroups, I/O priorities, devices, hooks
//! ```
//! Below them all: `clock` (time), `env` (run-wide settings), `observe` (callbacks to
//! the program), `error`, and `testing` (the scripted engine of the test seam).
//!
//! Data flows plan → setup → phase → job → record → phase (assemble) → `RunResult`.

mod api;
mod clock;
mod env;
mod error;
mod job;
mod observe;
mod phase;
mod plan;
mod record;
mod setup;
mod sys;
pub mod testing;
mod workload;

#[cfg(test)]
mod tests;

pub use api::execute::Execute;
pub use api::{request_stop, Runner, STOP};
pub use clock::Clock;
pub use env::{DebugOptions, DebugOut, EngineSource, RemoteTrigger, RunOptions, Trigger};
pub use error::RunError;
pub use observe::{JobProgress, LiveInterval, LiveRecord, Observer};
pub use phase::trigger::{spawn_trigger_command, take_trigger_file};
pub use plan::{Plan, Planned};

/// Facts about block devices, for workflows that pick or check a target before a run.
pub mod device {
    pub use crate::sys::disk::whole_disk;
    pub use crate::sys::safety::{dev_numbers, write_hazard};
}

/// `--merge-blktrace-only`: merge a job's read_iolog blktraces into its
/// merge_blktrace_file, without I/O; the number of events merged.
pub fn merge_blktraces(
    o: &ioscope_options::JobOptions,
    out: &std::path::Path,
) -> Result<u64, String> {
    workload::replay::merge::merge_job(o, out)
}
