//! Deterministic runner tests: real job loop, planning, monitor and assembly, with a
//! scripted engine on a manual clock. No files are touched and no real time passes
//! inside a job, so every figure below is exact.

mod control;
mod engines;
mod limits;
mod parts;
mod tally;
mod timing;
mod workload;

use crate::api::Runner;
use crate::clock::Clock;
use crate::env::{EngineSource, RunOptions};
use crate::observe::Observer;
use crate::testing::{Issued, Script};
use ioscope_options::{jobfile, spec, JobSet};
use ioscope_stats::{JobResult, RunResult};
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Parse job-file text.
pub(crate) fn jobs(text: &str) -> JobSet {
    let mut sections = Vec::new();
    jobfile::parse_text(Path::new("t.fio"), text, &mut sections, 0).expect("job file parses");
    spec::build(&[], &[], &[sections], &[], &jobfile::Keywords::probe()).expect("jobs build")
}

/// An observer that keeps everything it is told.
#[derive(Debug, Default)]
pub(crate) struct Collect {
    pub messages: Vec<String>,
    pub warnings: Vec<String>,
}

impl Observer for Collect {
    fn message(&mut self, line: &str) {
        self.messages.push(line.to_string());
    }
    fn warning(&mut self, line: &str) {
        self.warnings.push(line.to_string());
    }
}

/// A fresh stop flag for one run.
pub(crate) fn stop_flag() -> &'static AtomicBool {
    Box::leak(Box::new(AtomicBool::new(false)))
}

/// Run `text` with `script` on a manual clock starting at 1 s.
pub(crate) fn run_with(text: &str, script: &Script) -> (RunResult, Collect) {
    run_opts(text, script, RunOptions::default(), stop_flag())
}

pub(crate) fn run_opts(
    text: &str,
    script: &Script,
    ro: RunOptions,
    stop: &'static AtomicBool,
) -> (RunResult, Collect) {
    let set = jobs(text);
    let mut obs = Collect::default();
    let r = Runner::new(ro)
        .with_clock(Clock::manual(1_000_000_000))
        .with_stop(stop)
        .with_engine(EngineSource::Scripted(script.clone()))
        .run_set(&set, &mut obs)
        .expect("run succeeds");
    (r, obs)
}

/// The only job of a run.
pub(crate) fn only(r: &RunResult) -> &JobResult {
    assert_eq!(r.jobs.len(), 1, "one job expected");
    &r.jobs[0]
}

/// Offsets of the I/Os in a trace.
pub(crate) fn offsets(t: &[Issued]) -> Vec<u64> {
    t.iter().map(|i| i.offset).collect()
}

pub(crate) const US: u64 = 1_000;
pub(crate) const MS: u64 = 1_000_000;
