//! ioscope runner: turns job specifications into real I/O and results.
//!
//! - [`run::run`] orchestrates jobs (numjobs, groups, stonewall, threads, sampling).
//! - [`job`] is the per-job I/O loop (fio's queue/commit/reap), [`workload`] decides
//!   each I/O, [`files`] prepares files and devices, [`clock`] times everything,
//!   [`iolog`] streams logs, [`safety`] refuses destructive writes.

pub mod blockmap;
pub mod buffers;
pub mod clock;
pub mod cpu;
pub mod disk;
pub mod dist;
pub mod error;
pub mod files;
pub mod iolog;
pub mod job;
pub mod meta;
pub mod prio;
pub mod rate;
pub mod rng;
pub mod run;
pub mod safety;
pub mod steady;
pub mod workload;

pub use error::RunError;
pub use run::{request_stop, run, validate, JobProgress, Observer, RunOptions, STOP};
