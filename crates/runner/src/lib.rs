//! ioscope runner: turns job specifications into real I/O and results.
//!
//! Data flows one way: [`run::Runner`] → [`plan`] (validate; clones, groups, phases)
//! → per phase [`prepare`] (files, hooks, logs) → [`thread`] (one per job) running the
//! I/O loop in [`job`] with a [`workload`] and an engine, recording into [`record`]
//! → [`monitor`] (samples, steady state, exitall, status) → [`assemble`] → `RunResult`.
//!
//! Where things live: time in [`clock`], offsets and sizes in [`workload`], pacing in
//! [`rate`], latency recording in [`record`], log files in [`iolog`], files and devices
//! in [`files`] and [`safety`], the test seam in [`testing`].

pub mod assemble;
pub mod blockmap;
pub mod buffers;
pub mod cgroup;
pub(crate) mod checkers;
pub mod clock;
pub mod cpu;
pub mod disk;
pub mod dist;
pub mod error;
pub mod execute;
pub mod filelock;
pub mod files;
pub mod flow;
pub mod iolog;
pub mod iomem;
pub mod job;
mod memlock;
pub mod meta;
pub mod monitor;
pub mod numa;
pub mod phase;
pub mod plan;
pub mod prepare;
pub mod prio;
pub mod qdsearch;
pub mod rate;
pub mod record;
pub mod replay;
pub mod rng;
pub mod run;
pub mod safety;
pub mod sampling;
pub mod steady;
pub mod testing;
pub mod thread;
pub mod verify;
pub mod workload;
pub mod zones;

#[cfg(test)]
mod tests;

pub use error::RunError;
pub use execute::Execute;
pub use plan::{Plan, Planned};
pub use run::{request_stop, EngineSource, JobProgress, Observer, RunOptions, Runner, STOP};
