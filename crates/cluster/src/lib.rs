//! ioscope on many hosts: one rank per host (or several), launched by MPI — `mpirun`,
//! Slurm's `srun`, Kubernetes' MPIJob. MPI gives each rank its identity, a barrier for
//! a common start and the messages that carry results to rank 0; ioscope adds no
//! protocol of its own.
//!
//! - [`launch`]: was this process started by an MPI launcher, and as which rank?
//! - [`transport`]: what the ranks need from MPI (the seam: [`transport::Transport`]);
//!   [`mpi`] implements it with rsmpi (cargo feature `mpi`).
//! - [`rank`]: the steps every rank takes in lockstep — agree that the jobs are
//!   valid, start each phase together, report status to rank 0, send results — and
//!   rank 0's collection of them into one [`ioscope_stats::hosts::ClusterResult`].
//! - [`gather`]: `--gather-logs`, every rank's log files copied to rank 0.
//!
//! No MPI call is made on the I/O path: the ranks talk only from the main thread,
//! between phases and at status intervals, and every wait sleeps between polls
//! (MPI's own blocking calls spin a CPU).

pub mod gather;
pub mod launch;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod rank;
pub mod transport;

pub use rank::{ClusterObserver, Rank};
pub use transport::{Tag, Transport};
