//! A job whose thread has started, as the phase's monitor and live feed see it, with
//! the settings they watch it by.

use super::sampling::{MinRate, Sampler};
use super::spawn::ThreadOut;
use crate::clock::Clock;
use crate::error::RunError;
use crate::record::Shared;
use crate::setup::JobMeta;
use ioscope_options::{ExitWhat, JobOptions, SteadySpec};
use std::sync::Arc;

/// A job whose thread has started.
pub(crate) struct Running {
    pub handle: std::thread::JoinHandle<Result<ThreadOut, RunError>>,
    pub shared: Arc<Shared>,
    pub meta: JobMeta,
    pub start_ms: u64,
    /// job_start on the job_start_clock_id clock (0: that clock is CLOCK_REALTIME).
    pub job_start_ms: u64,
    pub group_reporting: bool,
    pub ioprio: u16,
    /// stats=0: run the job but leave it out of the report.
    pub stats: bool,
    /// exec_postrun command.
    pub postrun: Option<String>,
    pub watch: Watch,
}

/// The per-job settings the monitor and the assembly need, from the job's options.
pub(crate) struct Watch {
    pub sampler: Sampler,
    /// exitall: when this job finishes, end others as exit_what says.
    pub exitall: Option<ExitWhat>,
    /// Steady-state detection settings: (criterion, duration, ramp, interval), µs.
    pub steady: Option<(SteadySpec, u64, u64, u64)>,
    /// rate_min / rate_iops_min checks.
    pub min_rate: Option<MinRate>,
}

impl Watch {
    pub fn new(o: &JobOptions, clock: &'static Clock) -> Watch {
        Watch {
            sampler: Sampler::new(o.bwavgtime, o.iopsavgtime, o.disable_bw_measurement, clock),
            exitall: o.exitall.then_some(o.exit_what),
            steady: (o.steadystate_duration > 0).then(|| {
                (
                    o.steadystate.clone(),
                    o.steadystate_duration,
                    o.steadystate_ramp_time,
                    o.steadystate_check_interval,
                )
            }),
            min_rate: MinRate::new(o, clock),
        }
    }
}
