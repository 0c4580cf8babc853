//! What runs a job set for a workflow (sweep, compare): this host's [`Runner`], or —
//! under MPI — every rank at once, with their results merged (the command line's
//! cluster executor). Workflows hold a `&dyn Execute` and never know which.

use crate::api::{Observer, Runner};
use crate::error::RunError;
use ioscope_options::JobSet;
use ioscope_stats::hosts::Ran;

pub trait Execute {
    /// Every check a run of `set` makes (on every host), nothing touched.
    fn check(&self, set: &JobSet) -> Result<(), RunError>;
    /// Run `set` and return what it measured.
    fn execute(&self, set: &JobSet, obs: &mut dyn Observer) -> Result<Ran, RunError>;
    /// How many hosts (MPI ranks) each run spans: 1 for this host alone.
    fn ranks(&self) -> u32 {
        1
    }
}

impl Execute for Runner {
    fn check(&self, set: &JobSet) -> Result<(), RunError> {
        self.plan(set).map(|_| ())
    }

    fn execute(&self, set: &JobSet, obs: &mut dyn Observer) -> Result<Ran, RunError> {
        self.run_set(set, obs).map(Ran::One)
    }
}
