//! Runner errors.

/// Why a run could not start or a job could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Setting up files, devices or engines failed.
    #[error("{0}")]
    Setup(String),
    /// This machine lacks what a job names (a directory, a cgroup, a NUMA node, a CPU):
    /// the job file is sound, this host cannot run it (`--parse-only` only warns).
    #[error("{0}")]
    Environment(String),
    /// A safety rule refused the run (e.g. writing to a mounted device).
    #[error("{0}")]
    Refused(String),
    /// The job uses options ioscope does not implement yet.
    #[error("{0}")]
    Unsupported(String),
    /// The run's stop flag was raised while preparing (e.g. during a long layout).
    #[error("{0}")]
    Interrupted(String),
    /// Under MPI: ranks that could not run the jobs, each named with its message.
    #[error("{0}")]
    Ranks(String),
    #[error(transparent)]
    Engine(#[from] ioscope_engine::EngineError),
}
