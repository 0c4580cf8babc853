//! fio's metadata engines: the timed "I/O" is an operation on a file's or directory's
//! name, once per pass over it, and its blocks move no data.
//! - `filecreate`: open(2) with O_CREAT|O_RDWR (mode 0600); the file stays open for
//!   the rest of its pass and is closed, untimed, when the pass ends;
//! - `filestat`, `dirstat`: stat(2), lstat(2) or statx(2) (`stat_type`);
//! - `filedelete`: unlink(2); `dirdelete`: rmdir(2);
//! - `dircreate`: mkdir(2) (mode 0700).
//!
//! The runner marks the unit that begins a pass over its file with [`UNIT_FILE_OP`],
//! times the call, and counts the other units of the pass as done (as fio's
//! FIO_FAKEIO engines: bytes and IOPS count, latency is the operation's only).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;

use crate::{Engine, EngineConfig, IoUnit, Queued, StatType, UNIT_FILE_OP};

/// Which operation a pass over a name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PathOp {
    FileCreate,
    FileStat,
    FileDelete,
    DirCreate,
    DirStat,
    DirDelete,
}

impl PathOp {
    pub(crate) fn of(engine: &str) -> Option<PathOp> {
        Some(match engine {
            "filecreate" => PathOp::FileCreate,
            "filestat" => PathOp::FileStat,
            "filedelete" => PathOp::FileDelete,
            "dircreate" => PathOp::DirCreate,
            "dirstat" => PathOp::DirStat,
            "dirdelete" => PathOp::DirDelete,
            _ => return None,
        })
    }
}

pub(crate) struct PathOpEngine {
    op: PathOp,
    stat_type: StatType,
    names: Box<[CString]>,
    /// filecreate: the descriptor each file's pass holds (-1: none).
    open: Box<[libc::c_int]>,
}

impl PathOpEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>, op: PathOp) -> io::Result<Self> {
        let names = cfg
            .paths
            .iter()
            .map(|p| CString::new(p.as_os_str().as_bytes()))
            .collect::<Result<Box<[CString]>, _>>()
            .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
        Ok(PathOpEngine {
            op,
            stat_type: cfg.opts.stat_type,
            open: vec![-1; names.len()].into(),
            names,
        })
    }

    /// The operation on file `i`: 0, or -errno.
    fn execute(&mut self, i: usize) -> i64 {
        let Some(name) = self.names.get(i) else {
            return -(libc::EBADF as i64);
        };
        let p = name.as_ptr();
        // SAFETY: `p` is a NUL-terminated path that outlives each call; the stat
        // buffers are written by the kernel and live for the call.
        let ret = unsafe {
            match self.op {
                PathOp::FileCreate => {
                    let fd = libc::open(p, libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC, 0o600);
                    if fd >= 0 {
                        // A new pass over a file whose last pass is still open: keep one.
                        if self.open[i] >= 0 {
                            libc::close(self.open[i]);
                        }
                        self.open[i] = fd;
                    }
                    fd.min(0)
                }
                PathOp::FileStat | PathOp::DirStat => stat(p, self.stat_type),
                PathOp::FileDelete => libc::unlink(p),
                PathOp::DirCreate => libc::mkdir(p, 0o700),
                PathOp::DirDelete => libc::rmdir(p),
            }
        };
        if ret < 0 {
            -(crate::ops::errno() as i64)
        } else {
            0
        }
    }
}

/// One stat call of the chosen kind on `p`.
///
/// # Safety
/// `p` must be a valid NUL-terminated path.
unsafe fn stat(p: *const libc::c_char, kind: StatType) -> libc::c_int {
    match kind {
        StatType::Stat => {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            libc::stat(p, st.as_mut_ptr())
        }
        StatType::Lstat => {
            let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
            libc::lstat(p, st.as_mut_ptr())
        }
        StatType::Statx => {
            let mut st = std::mem::MaybeUninit::<libc::statx>::uninit();
            libc::statx(libc::AT_FDCWD, p, 0, libc::STATX_ALL, st.as_mut_ptr())
        }
    }
}

impl Engine for PathOpEngine {
    const FILE_OPS: bool = true;

    fn is_sync(&self) -> bool {
        true
    }

    fn queue(&mut self, _idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        unit.result = if unit.flags & UNIT_FILE_OP != 0 {
            match self.execute(unit.file as usize) {
                0 => unit.len as i64,
                e => e,
            }
        } else {
            unit.len as i64
        };
        Ok(Queued::Done)
    }

    fn end_pass(&mut self, file: u32) {
        if let Some(fd) = self.open.get_mut(file as usize).filter(|fd| **fd >= 0) {
            // SAFETY: a descriptor this engine opened and still owns.
            unsafe { libc::close(*fd) };
            *fd = -1;
        }
    }

    no_completions!();
}

impl Drop for PathOpEngine {
    fn drop(&mut self) {
        for i in 0..self.open.len() {
            self.end_pass(i as u32);
        }
    }
}
