//! I/O engines behind one trait that follows fio's queue / commit / getevents model,
//! so that iodepth, iodepth_batch_submit, iodepth_batch_complete_min/max and
//! iodepth_low mean exactly what they mean in fio.
//!
//! The runner owns the I/O units (a fixed, preallocated ring) and their buffers;
//! engines refer to units by index. Nothing here allocates per I/O.

use std::io;
use std::os::fd::RawFd;

/// The `commit`, `getevents` and `event` of a synchronous engine: every I/O completes
/// inside `queue`, so there is never anything to submit or reap.
macro_rules! no_completions {
    () => {
        fn commit(&mut self) -> std::io::Result<u32> {
            Ok(0)
        }

        fn getevents(&mut self, _min: u32, _max: u32) -> std::io::Result<u32> {
            Ok(0)
        }

        /// Never called: a sync engine has no completions to reap.
        fn event(&mut self, _i: u32) -> $crate::Completion {
            $crate::Completion {
                unit: u32::MAX,
                result: -(libc::EINVAL as i64),
            }
        }
    };
}

mod burst;
pub mod device_status;
mod fileops;
mod libaio;
mod mmap;
mod mmap_guard;
mod null;
mod offload;
mod ops;
mod pathops;
mod posixaio;
mod psync;
mod pvsync;
mod pvsync2;
pub mod sg;
mod splice;
mod sync_engine;
mod sync_rw;
#[cfg(test)]
mod tests;
mod uring;
pub mod uring_cmd;
mod vsync;

pub use burst::{Burst, NopBurst};
pub use offload::{refusal as offload_refusal, with_offload};
use sync_engine::SyncEngine;

/// Data direction of one I/O unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum Ddir {
    #[default]
    Read = 0,
    Write = 1,
    Trim = 2,
    /// fsync(2) of the unit's file.
    Sync = 3,
    /// fdatasync(2) of the unit's file.
    DataSync = 4,
}

impl Ddir {
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn is_data(self) -> bool {
        matches!(self, Ddir::Read | Ddir::Write | Ddir::Trim)
    }
}

/// Per-I/O flag: issue with RWF_HIPRI (pvsync2 hipri_percentage).
pub const UNIT_HIPRI: u32 = 1;
/// Per-I/O flag: set IOSQE_ASYNC (io_uring force_async).
pub const UNIT_ASYNC: u32 = 2;
/// Per-I/O flag: the unit begins a pass over its file, and a metadata engine
/// (filecreate, filestat, ...) does its operation on the file's name (see
/// [`Engine::FILE_OPS`]).
pub const UNIT_FILE_OP: u32 = 4;
/// Per-I/O flag: a verify read the device does itself (io_uring_cmd's
/// `verify_mode=compare`): the buffer holds the expected data, sent with an NVMe
/// Compare command; a mismatch fails with the device's Compare Failure status.
pub const UNIT_COMPARE: u32 = 8;

/// Which stat call `filestat` and `dirstat` time (fio's `stat_type`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatType {
    #[default]
    Stat,
    Lstat,
    Statx,
}

/// Whether `name` is one of fio's metadata engines, whose timed operation is on the
/// file's or directory's name rather than its data.
pub fn is_path_engine(name: &str) -> bool {
    pathops::PathOp::of(name).is_some()
}

/// One I/O in flight or ready to be issued. Laid out by the runner in a fixed ring.
#[derive(Debug)]
#[repr(C)]
pub struct IoUnit {
    /// Start of this unit's buffer (aligned for O_DIRECT); valid for `buf_len` bytes.
    pub buf: *mut u8,
    pub buf_len: u32,
    /// Bytes to transfer.
    pub len: u32,
    pub offset: u64,
    /// Index into `EngineConfig::files`.
    pub file: u32,
    pub ddir: Ddir,
    /// ioprio value (class << 13 | level) for this I/O; 0 = the job's default.
    pub ioprio: u16,
    /// UNIT_* flags.
    pub flags: u32,
    /// A trim of several ranges in one command (`num_range`): how many. Their
    /// (offset, length) pairs, two native u64 each, begin the unit's buffer; `offset`
    /// is the first's and `len` their total. 0 or 1: the unit's own offset and length.
    pub ranges: u16,
    /// The data placement identifier the engine gave this write (io_uring_cmd with
    /// FDP), or `NO_PLACEMENT`: written by the engine, read by the runner to count
    /// bytes per placement ID.
    pub placement: u16,
    /// Result on completion: bytes transferred, or -errno.
    pub result: i64,
    /// Runner bookkeeping: clock ticks when the unit was set up and issued.
    pub start: u64,
    pub issue: u64,
}

// SAFETY: the buffer pointer is owned by the runner's buffer pool, which outlives the
// units and is only touched by the job thread that owns the units.
unsafe impl Send for IoUnit {}

impl Default for IoUnit {
    fn default() -> Self {
        IoUnit {
            buf: std::ptr::null_mut(),
            buf_len: 0,
            len: 0,
            offset: 0,
            file: 0,
            ddir: Ddir::Read,
            ioprio: 0,
            flags: 0,
            ranges: 0,
            placement: NO_PLACEMENT,
            result: 0,
            start: 0,
            issue: 0,
        }
    }
}

/// `IoUnit::placement` of an I/O that carries no placement directive.
pub const NO_PLACEMENT: u16 = u16::MAX;

/// An open file or block device the job does I/O to.
#[derive(Clone, Copy, Debug)]
pub struct FileInfo {
    pub fd: RawFd,
    /// Size in bytes (file size or device size).
    pub size: u64,
    pub is_block: bool,
}

/// Engine options from the job (only the ones for the chosen engine matter).
#[derive(Clone, Debug, Default)]
pub struct EngineOptions {
    pub hipri: bool,
    pub hipri_percentage: u32,
    pub uncached: u32,
    /// libaio: reads and writes as IOCB_CMD_PREADV/PWRITEV with one iovec.
    pub libaio_vectored: bool,
    pub nowait: bool,
    /// Writes with torn-write protection (RWF_ATOMIC; pvsync2, libaio, io_uring).
    pub atomic: bool,
    pub userspace_reap: bool,
    pub fixedbufs: bool,
    pub registerfiles: bool,
    pub sqthread_poll: bool,
    pub sqthread_poll_cpu: Option<u32>,
    /// -1 auto, 0 vectored, 1 non-vectored.
    pub nonvectored: i32,
    pub force_async: u32,
    /// io_uring only: issue IORING_OP_NOP instead of reads and writes (the kernel's
    /// submission and completion path alone; `ioscope peak --nop`). A NOP completes
    /// with the unit's length so that counting works unchanged.
    pub nop: bool,
    /// With `nop`: each NOP names the first file (IORING_NOP_FILE; FIXED_FILE when
    /// files are registered), with fixedbufs the first registered buffer
    /// (FIXED_BUFFER), and returns its length (INJECT_RESULT): the kernel looks up
    /// what t/io_uring's NOPs make it look up (Linux 6.13 and later take these flags).
    pub nop_file: bool,
    /// mmap: ask for transparent huge pages for the mappings (madvise MADV_HUGEPAGE).
    pub thp: bool,
    /// filestat, dirstat: which stat call.
    pub stat_type: StatType,
    /// io_uring_cmd: FUA and what a write does.
    pub cmd: uring_cmd::CmdOptions,
    /// io_uring_cmd: Flexible Data Placement of writes, when asked for.
    pub placement: Option<uring_cmd::Placement>,
    /// sg: FUA and what a write does.
    pub sg: sg::SgOptions,
}

/// Everything an engine needs at setup.
pub struct EngineConfig<'a> {
    /// Maximum I/Os in flight (iodepth).
    pub depth: u32,
    pub files: &'a [FileInfo],
    /// The files' names, in the order of `files` (the metadata engines operate on them).
    pub paths: &'a [std::path::PathBuf],
    /// The whole buffer region of the job (for fixedbufs); units point into it.
    pub buffers: (*mut u8, usize),
    /// Size of each unit's buffer; unit i's buffer starts at buffers.0 + i * unit_buf_len
    /// (fixedbufs registers one iovec per unit).
    pub unit_buf_len: usize,
    pub opts: EngineOptions,
}

/// What `queue` did with a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Completed synchronously; `unit.result` holds the outcome.
    Done,
    /// Accepted; will be submitted by `commit` and completed by `getevents`.
    Queued,
    /// No room: commit and reap before queueing more.
    Busy,
}

/// One completion: which unit, and bytes transferred or -errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub unit: u32,
    pub result: i64,
}

/// An I/O engine.
pub trait Engine {
    /// True if every I/O completes inside `queue` (no slat is reported, as in fio).
    fn is_sync(&self) -> bool;
    /// Hand a unit to the engine. `idx` identifies it in completions.
    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued>;
    /// Submit everything queued since the last commit; returns how many were submitted.
    fn commit(&mut self) -> io::Result<u32>;
    /// Wait for at least `min` completions (0 = do not wait) and reap at most `max`;
    /// returns how many completions `event` can now return.
    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32>;
    /// The i-th completion reaped by the last `getevents` (0 <= i < its return value).
    fn event(&mut self, i: u32) -> Completion;

    /// fio's metadata engines (FIO_FAKEIO): the unit flagged [`UNIT_FILE_OP`] carries
    /// the pass's timed operation; every other unit completes at once, untimed. A
    /// constant, so the job loop of every other engine compiles without the check.
    const FILE_OPS: bool = false;

    /// A metadata engine: the pass over `file` is over (called outside the timed
    /// call, so closing what the pass held is not measured).
    fn end_pass(&mut self, _file: u32) {}

    /// Submit what is queued, then wait for at least `min` completions and reap at
    /// most `max`: (submitted, reaped). The same as `commit` + `getevents`; engines
    /// that can do both in one system call (io_uring) override it.
    fn commit_and_getevents(&mut self, min: u32, max: u32) -> io::Result<(u32, u32)> {
        let submitted = self.commit()?;
        let reaped = self.getevents(min, max)?;
        Ok((submitted, reaped))
    }

    /// Runs the job's I/O in the engine's own loop (see [`Burst`]) until `b` has no
    /// more to issue or asks to stop, with nothing left in flight. None: this engine
    /// (or its configuration) has no such loop, and nothing was done.
    fn burst<B: Burst>(&mut self, _b: &mut B) -> Option<io::Result<()>> {
        None
    }

    /// Runs the job's NOPs in the engine's NOP loop (see [`NopBurst`]), as
    /// [`Self::burst`] does its I/Os. None: this engine (or its configuration) has no
    /// such loop, and nothing was done.
    fn burst_nops<N: NopBurst>(&mut self, _b: &mut N) -> Option<io::Result<()>> {
        None
    }
}

/// Runs generic code with a concrete engine, so the job loop is monomorphised per
/// engine (no virtual call per I/O).
pub trait EngineUser {
    type Output;
    fn run<E: Engine>(self, engine: E) -> Self::Output;
}

/// Errors setting an engine up.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("ioengine={0} is not supported by ioscope yet")]
    Unsupported(String),
    #[error("ioengine={engine}: {what}: {source}")]
    Setup {
        engine: &'static str,
        what: String,
        #[source]
        source: io::Error,
    },
    #[error("ioengine={engine}: {msg}")]
    Invalid { engine: &'static str, msg: String },
}

/// Sets up the engine called `name` for `cfg` and runs `user` with it, so the job loop
/// is compiled once per concrete engine. The names here are the engines that
/// `ioscope_options::engines` marks implemented (a runner test checks both agree). The engine is torn down (rings destroyed,
/// mappings removed) when `user.run` returns.
pub fn with_engine<U: EngineUser>(
    name: &str,
    cfg: &EngineConfig<'_>,
    user: U,
) -> Result<U::Output, EngineError> {
    if cfg.depth == 0 {
        return Err(EngineError::Invalid {
            engine: "any",
            msg: "iodepth must be at least 1".to_string(),
        });
    }
    Ok(match name {
        "psync" => user.run(SyncEngine::new(cfg, psync::Psync)),
        "sync" => user.run(SyncEngine::new(cfg, sync_rw::SyncRw)),
        "vsync" => user.run(SyncEngine::new(cfg, vsync::Vsync)),
        "pvsync" => user.run(SyncEngine::new(cfg, pvsync::Pvsync)),
        "pvsync2" => user.run(SyncEngine::new(cfg, pvsync2::Pvsync2::new(&cfg.opts))),
        "null" => user.run(null::NullEngine::new(cfg)),
        "libaio" => user.run(libaio::LibaioEngine::new(cfg)?),
        "io_uring" => user.run(uring::UringEngine::new(cfg)?),
        "io_uring_cmd" => user.run(uring_cmd::UringCmdEngine::new(cfg)?),
        "sg" => user.run(sg::SgEngine::new(cfg)?),
        "mmap" => user.run(mmap::MmapEngine::new(cfg)?),
        "posixaio" => user.run(posixaio::PosixAioEngine::new(cfg)),
        "splice" => {
            let s = splice::Splice::new().map_err(|source| EngineError::Setup {
                engine: "splice",
                what: "pipe".into(),
                source,
            })?;
            user.run(SyncEngine::new(cfg, s))
        }
        "falloc" => user.run(fileops::FileOpEngine::new(cfg, fileops::FileOp::Falloc)),
        "ftruncate" => user.run(fileops::FileOpEngine::new(cfg, fileops::FileOp::Ftruncate)),
        _ if is_path_engine(name) => {
            let op =
                pathops::PathOp::of(name).ok_or_else(|| EngineError::Unsupported(name.into()))?;
            let e = pathops::PathOpEngine::new(cfg, op).map_err(|source| EngineError::Setup {
                engine: "metadata",
                what: "a file name holds a NUL byte".into(),
                source,
            })?;
            user.run(e)
        }
        _ => return Err(EngineError::Unsupported(name.to_string())),
    })
}
