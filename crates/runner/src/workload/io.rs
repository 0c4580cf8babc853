//! One I/O, as the workload hands it to the job loop.

use ioscope_engine::Ddir;

/// One I/O to issue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Io {
    pub ddir: Ddir,
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// A verify read of a block the job wrote (not the workload's own).
    pub verify: bool,
}
