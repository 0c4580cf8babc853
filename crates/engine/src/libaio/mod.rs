//! `libaio`: Linux native AIO through the raw io_setup / io_submit / io_getevents
//! syscalls (no libaio C library).
//!
//! Every unit index owns a preallocated iocb; `queue` fills it and appends its pointer
//! to the pending batch, `commit` io_submits the batch, `getevents` reaps either from
//! the mapped completion ring (`userspace_reap`) or with io_getevents. Trim and
//! (data)sync are done synchronously in `queue`, as native AIO has no trim and its
//! fsync support depends on the filesystem.

mod abi;
mod ring;

use std::io;

use crate::ops;
use crate::{Completion, Ddir, Engine, EngineConfig, EngineError, FileInfo, IoUnit, Queued};
use abi::{
    AioContext, IoEvent, Iocb, IOCB_CMD_PREAD, IOCB_CMD_PREADV, IOCB_CMD_PWRITE, IOCB_CMD_PWRITEV,
    IOCB_FLAG_IOPRIO,
};
use ring::UserRing;

const NAME: &str = "libaio";

pub(crate) struct LibaioEngine {
    ctx: AioContext,
    files: Box<[FileInfo]>,
    /// Maximum iocbs pending + in flight (iodepth).
    depth: u32,
    /// One iocb per unit index.
    iocbs: Box<[Iocb]>,
    /// Queued iocbs not yet accepted by io_submit, oldest first.
    pending: Box<[*mut Iocb]>,
    npending: u32,
    /// Submitted (or failed at submission) and not yet reaped.
    inflight: u32,
    /// Iocbs io_submit rejected outright; reported as completions by `getevents`.
    failed: Box<[IoEvent]>,
    nfailed: u32,
    /// Completions reaped by the last `getevents`.
    events: Box<[IoEvent]>,
    /// RWF_* flags of every read \[0\] and write \[1\] (nowait, atomic).
    rw_flags: [i32; 2],
    /// The mapped completion ring, when `userspace_reap` is set and its layout is known.
    user_ring: Option<UserRing>,
    /// libaio_vectored: one iovec per unit index, which its iocb points to (empty
    /// otherwise).
    iovecs: Box<[libc::iovec]>,
}

impl LibaioEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Result<Self, EngineError> {
        let depth = cfg.depth.max(1);
        let units = ops::unit_capacity(cfg);
        let mut ctx: AioContext = 0;
        if abi::io_setup(depth, &mut ctx) < 0 {
            return Err(setup_error(depth, io::Error::last_os_error()));
        }
        let user_ring = if cfg.opts.userspace_reap {
            // SAFETY: ctx was just returned by io_setup.
            unsafe { UserRing::new(ctx) }
        } else {
            None
        };
        Ok(LibaioEngine {
            ctx,
            files: cfg.files.into(),
            depth,
            iocbs: vec![Iocb::default(); units].into_boxed_slice(),
            pending: vec![std::ptr::null_mut(); depth as usize].into_boxed_slice(),
            npending: 0,
            inflight: 0,
            failed: vec![IoEvent::default(); depth as usize].into_boxed_slice(),
            nfailed: 0,
            events: vec![IoEvent::default(); depth as usize].into_boxed_slice(),
            rw_flags: ops::rw_flags(&cfg.opts),
            user_ring,
            iovecs: if cfg.opts.libaio_vectored {
                let empty = libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0,
                };
                vec![empty; units].into_boxed_slice()
            } else {
                Box::default()
            },
        })
    }

    /// Fills the unit's iocb for a read or write.
    fn prep(&mut self, idx: u32, fd: i32, unit: &IoUnit) -> *mut Iocb {
        let iocb = &mut self.iocbs[idx as usize];
        *iocb = Iocb {
            aio_data: idx as u64,
            aio_rw_flags: self.rw_flags[(unit.ddir == Ddir::Write) as usize],
            aio_lio_opcode: if unit.ddir == Ddir::Write {
                IOCB_CMD_PWRITE
            } else {
                IOCB_CMD_PREAD
            },
            aio_fildes: fd as u32,
            aio_buf: unit.buf as u64,
            aio_nbytes: unit.len as u64,
            aio_offset: unit.offset as i64,
            ..Iocb::default()
        };
        if let Some(v) = self.iovecs.get_mut(idx as usize) {
            // Vectored: the iocb points at the unit's one iovec (boxed, so it stays put).
            *v = libc::iovec {
                iov_base: unit.buf.cast(),
                iov_len: unit.len as usize,
            };
            iocb.aio_lio_opcode = if unit.ddir == Ddir::Write {
                IOCB_CMD_PWRITEV
            } else {
                IOCB_CMD_PREADV
            };
            iocb.aio_buf = v as *const libc::iovec as u64;
            iocb.aio_nbytes = 1;
        }
        if unit.ioprio != 0 {
            // The ioprio value (class << 13 | level) fits in the signed 16-bit field.
            iocb.aio_reqprio = unit.ioprio as i16;
            iocb.aio_flags |= IOCB_FLAG_IOPRIO;
        }
        iocb
    }

    /// Drops the first `n` pending iocbs (they were submitted or failed).
    fn consume_pending(&mut self, n: u32) {
        let np = self.npending as usize;
        self.pending.copy_within(n as usize..np, 0);
        self.npending -= n;
    }

    /// io_submit refused the first pending iocb with `err`: complete it with -err so
    /// the runner sees the error as that I/O's result, and go on with the rest.
    fn fail_first(&mut self, err: i32) {
        // SAFETY: pending pointers point into `self.iocbs`, which is never reallocated.
        let data = unsafe { (*self.pending[0]).aio_data };
        self.failed[self.nfailed as usize] = IoEvent {
            data,
            obj: 0,
            res: -(err as i64),
            res2: 0,
        };
        self.nfailed += 1;
        self.consume_pending(1);
        self.inflight += 1;
    }

    /// Moves submission failures into `events[..max]`; returns how many.
    fn take_failed(&mut self, max: usize) -> usize {
        let n = (self.nfailed as usize).min(max);
        self.events[..n].copy_from_slice(&self.failed[..n]);
        self.failed.copy_within(n..self.nfailed as usize, 0);
        self.nfailed -= n as u32;
        n
    }

    /// io_getevents into `events[from..max]`, waiting for `min` of them; retries EINTR.
    fn syscall_reap(&mut self, from: usize, min: usize, max: usize) -> io::Result<usize> {
        loop {
            // SAFETY: events has room for max - from entries from `from` on.
            let ret = unsafe {
                abi::io_getevents(
                    self.ctx,
                    min,
                    max - from,
                    self.events.as_mut_ptr().add(from),
                )
            };
            if ret >= 0 {
                return Ok(ret as usize);
            }
            let err = ops::errno();
            if err != libc::EINTR {
                return Err(io::Error::from_raw_os_error(err));
            }
        }
    }
}

impl Engine for LibaioEngine {
    fn is_sync(&self) -> bool {
        false
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        if idx as usize >= self.iocbs.len() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let file = match ops::rw_file(&self.files, unit) {
            Ok(f) => *f,
            Err(res) => {
                unit.result = res;
                return Ok(Queued::Done);
            }
        };
        if self.npending + self.inflight >= self.depth {
            return Ok(Queued::Busy);
        }
        let fd = file.fd;
        let iocb = self.prep(idx, fd, unit);
        self.pending[self.npending as usize] = iocb;
        self.npending += 1;
        Ok(Queued::Queued)
    }

    /// Submits the pending batch. On EAGAIN (kernel out of request slots) the rest stays
    /// pending for the next commit; other errors belong to the first iocb only.
    fn commit(&mut self) -> io::Result<u32> {
        let mut submitted = 0;
        while self.npending > 0 {
            let nr = self.npending as usize;
            // SAFETY: the first `nr` pending pointers point at filled iocbs whose buffers
            // belong to units the runner keeps until they complete.
            let ret = unsafe { abi::io_submit(self.ctx, nr, self.pending.as_mut_ptr()) };
            if ret > 0 {
                let n = ret as u32;
                self.consume_pending(n);
                self.inflight += n;
                submitted += n;
                continue;
            }
            match ops::errno() {
                libc::EINTR => continue,
                libc::EAGAIN => break,
                err if ret < 0 => {
                    self.fail_first(err);
                    submitted += 1;
                }
                _ => break,
            }
        }
        Ok(submitted)
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        let max = (max as usize).min(self.events.len());
        // Never wait for more than is in flight: that would block forever.
        let min = (min as usize).min(max).min(self.inflight as usize);
        let mut n = self.take_failed(max);
        if let Some(ring) = &self.user_ring {
            n += ring.reap(&mut self.events[n..max]);
        }
        let outstanding = self.inflight as usize - n;
        let poll_kernel = self.user_ring.is_none() || n < min;
        if n < max && outstanding > 0 && poll_kernel {
            n += self.syscall_reap(n, min.saturating_sub(n), max)?;
        }
        self.inflight -= n as u32;
        Ok(n as u32)
    }

    #[inline]
    fn event(&mut self, i: u32) -> Completion {
        let ev = &self.events[i as usize];
        Completion {
            unit: ev.data as u32,
            result: ev.res,
        }
    }
}

impl Drop for LibaioEngine {
    fn drop(&mut self) {
        abi::io_destroy(self.ctx);
    }
}

fn setup_error(depth: u32, source: io::Error) -> EngineError {
    let what = match source.raw_os_error() {
        Some(libc::EAGAIN) => {
            format!("io_setup({depth}): exceeds the system limit /proc/sys/fs/aio-max-nr")
        }
        Some(libc::ENOSYS) => format!("io_setup({depth}): kernel built without AIO support"),
        _ => format!("io_setup({depth})"),
    };
    EngineError::Setup {
        engine: NAME,
        what,
        source,
    }
}
