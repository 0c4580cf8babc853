//! An open file of a job, with the region of it the job does I/O to.

use std::fs::File;
use std::path::PathBuf;

/// An open file with the region of it the job does I/O to.
#[derive(Debug)]
pub struct JobFile {
    pub path: PathBuf,
    pub file: File,
    pub is_block: bool,
    /// Size of the file or device after layout.
    pub real_size: u64,
    /// I/O region: [start, start + len).
    pub start: u64,
    pub len: u64,
    /// Block device numbers (or of the device holding the file), for disk stats.
    pub dev: (u32, u32),
    /// lockfile: the lock the jobs sharing this file take turns with.
    pub lock: Option<std::sync::Arc<super::lock::FileLock>>,
    /// The exclusive open of the block device it writes, held while the job has the
    /// file (never used for I/O: only kept).
    pub claim: Option<crate::sys::safety::Claim>,
}
