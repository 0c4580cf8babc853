//! What the job loop runs with, and what it gives back; given an engine (by [`EngineUser::run`]) it runs the
//! job to its end (see `core.rs`).

use super::cmdprio::CmdPrio;
use super::flow::Flow;
use super::verify::Verifier;
use crate::setup::buffers::Buffers;
use crate::setup::JobCtx;
use crate::workload::Workload;

/// A job clone's loop inputs, made by its thread before the common start.
///
/// [`EngineUser::run`]: ioscope_engine::EngineUser::run
pub struct JobRun<'a> {
    pub ctx: &'a mut JobCtx,
    pub workload: Workload,
    pub buffers: Buffers,
    pub cmdprio: Option<CmdPrio>,
    pub verify: Option<Verifier>,
    /// flow: the job's place in its flow group (joined before the common start).
    pub flow: Option<Flow>,
}

/// What a job's loop gives back: its results and its logs, still to be closed (after
/// every job of the phase has ended).
pub struct Outcome {
    pub result: ioscope_stats::JobResult,
    pub logs: Option<crate::record::log::JobLogs>,
}
