//! How this process was started: alone, or as a rank of an MPI job. Read from the
//! launchers' environment before MPI is touched, so that a build without MPI can
//! refuse to run N independent copies of the same benchmark.

/// A process started by an MPI launcher.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub rank: u32,
    pub size: u32,
    /// Which launcher's variables said so.
    pub by: &'static str,
}

fn num(name: &str) -> Option<u32> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// The launch as the environment describes it: OpenMPI's mpirun, a PMIx launch
/// (srun --mpi=pmix, prterun), MPICH's Hydra, or a Slurm step.
pub fn detect() -> Option<Launch> {
    let sources: [(&str, &str, &str); 4] = [
        (
            "OMPI_COMM_WORLD_RANK",
            "OMPI_COMM_WORLD_SIZE",
            "mpirun (Open MPI)",
        ),
        ("PMIX_RANK", "PMIX_SIZE", "PMIx"),
        ("PMI_RANK", "PMI_SIZE", "PMI (MPICH)"),
        ("SLURM_PROCID", "SLURM_NTASKS", "srun"),
    ];
    sources.iter().find_map(|&(r, s, by)| {
        let rank = num(r)?;
        // PMIx does not always export its size; a rank without one is still a rank.
        let size = num(s).unwrap_or(rank + 1).max(rank + 1);
        Some(Launch { rank, size, by })
    })
}

/// Whether this binary can take part in an MPI job.
pub const MPI_BUILT_IN: bool = cfg!(feature = "mpi");

/// The refusal of a build without MPI started as one of several ranks: each would
/// run the whole job on its own and print its own report.
pub fn refuse_without_mpi(l: &Launch) -> Option<String> {
    (!MPI_BUILT_IN && l.size > 1).then(|| {
        format!(
            "started by {} as rank {} of {}, but this ioscope was built without MPI: \
             every rank would run the jobs alone. Build it with \
             `cargo build --release --features mpi` (needs libopenmpi-dev and libclang-dev)",
            l.by, l.rank, l.size
        )
    })
}
