//! `posixaio`: POSIX asynchronous I/O, aio_read(3) / aio_write(3), as fio's engine of
//! that name. glibc runs these on its own helper threads. Every unit index owns a
//! preallocated aiocb; `queue` fills it, `commit` hands the batch to aio_read/aio_write,
//! `getevents` collects finished requests with aio_error/aio_return and, when it must
//! wait, sleeps in aio_suspend. Trim and (data)sync are done synchronously in `queue`.

use std::io;

use crate::ops;
use crate::{Completion, Ddir, Engine, EngineConfig, FileInfo, IoUnit, Queued};

pub(crate) struct PosixAioEngine {
    files: Box<[FileInfo]>,
    depth: u32,
    /// One aiocb per unit index (boxed: glibc keeps their addresses while in flight).
    cbs: Box<[libc::aiocb]>,
    /// Unit indexes queued and not yet handed to glibc, oldest first.
    pending: Vec<u32>,
    /// Unit indexes in flight.
    inflight: Vec<u32>,
    /// aio_suspend's list: the in-flight aiocbs.
    waitlist: Vec<*const libc::aiocb>,
    /// Completions found by the last `getevents`.
    events: Vec<Completion>,
}

// SAFETY: the aiocbs point at buffers of the job that owns this engine; the engine is
// used by that job's thread only.
unsafe impl Send for PosixAioEngine {}

impl PosixAioEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Self {
        let depth = cfg.depth.max(1);
        let units = ops::unit_capacity(cfg);
        // SAFETY: an all-zero aiocb is a valid, empty request.
        let empty: libc::aiocb = unsafe { std::mem::zeroed() };
        PosixAioEngine {
            files: cfg.files.into(),
            depth,
            cbs: vec![empty; units].into_boxed_slice(),
            pending: Vec::with_capacity(depth as usize),
            inflight: Vec::with_capacity(depth as usize),
            waitlist: Vec::with_capacity(depth as usize),
            events: Vec::with_capacity(depth as usize),
        }
    }

    /// Moves finished requests (at most `max`) from `inflight` to `events`.
    fn collect(&mut self, max: usize) {
        let mut i = 0;
        while i < self.inflight.len() && self.events.len() < max {
            let idx = self.inflight[i];
            let cb = &mut self.cbs[idx as usize];
            // SAFETY: cb was handed to aio_read/aio_write and is still owned by us.
            let err = unsafe { libc::aio_error(cb) };
            if err == libc::EINPROGRESS {
                i += 1;
                continue;
            }
            // SAFETY: the request is done; aio_return may be called once.
            let ret = unsafe { libc::aio_return(cb) };
            let result = if err == 0 { ret as i64 } else { -(err as i64) };
            self.events.push(Completion { unit: idx, result });
            self.inflight.swap_remove(i);
        }
    }

    /// Sleeps until one of the in-flight requests finishes (EINTR and EAGAIN retry).
    fn suspend(&mut self) -> io::Result<()> {
        self.waitlist.clear();
        self.waitlist.extend(
            self.inflight
                .iter()
                .map(|&i| &self.cbs[i as usize] as *const _),
        );
        // SAFETY: the list holds pointers to in-flight aiocbs; no timeout.
        let r = unsafe {
            libc::aio_suspend(
                self.waitlist.as_ptr(),
                self.waitlist.len() as i32,
                std::ptr::null(),
            )
        };
        if r == 0 {
            return Ok(());
        }
        match ops::errno() {
            libc::EINTR | libc::EAGAIN => Ok(()),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }
}

impl Engine for PosixAioEngine {
    fn is_sync(&self) -> bool {
        false
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        if idx as usize >= self.cbs.len() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let file = match ops::rw_file(&self.files, unit) {
            Ok(f) => *f,
            Err(res) => {
                unit.result = res;
                return Ok(Queued::Done);
            }
        };
        if (self.pending.len() + self.inflight.len()) as u32 >= self.depth {
            return Ok(Queued::Busy);
        }
        let cb = &mut self.cbs[idx as usize];
        cb.aio_fildes = file.fd;
        cb.aio_buf = unit.buf.cast();
        cb.aio_nbytes = unit.len as usize;
        cb.aio_offset = unit.offset as libc::off_t;
        cb.aio_lio_opcode = if unit.ddir == Ddir::Write {
            libc::LIO_WRITE
        } else {
            libc::LIO_READ
        };
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        self.pending.push(idx);
        Ok(Queued::Queued)
    }

    /// Hands the queued requests to glibc. A request glibc refuses completes with its
    /// error (reported by the next `getevents`).
    fn commit(&mut self) -> io::Result<u32> {
        let n = self.pending.len() as u32;
        for k in 0..self.pending.len() {
            let idx = self.pending[k];
            let cb = &mut self.cbs[idx as usize];
            // SAFETY: cb is filled for a buffer the runner keeps until completion.
            let r = unsafe {
                if cb.aio_lio_opcode == libc::LIO_WRITE {
                    libc::aio_write(cb)
                } else {
                    libc::aio_read(cb)
                }
            };
            if r < 0 {
                let e = ops::errno();
                self.events.push(Completion {
                    unit: idx,
                    result: -(e as i64),
                });
            } else {
                self.inflight.push(idx);
            }
        }
        self.pending.clear();
        Ok(n)
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        // Refusals from `commit` are already in `events`; take the rest after them.
        let max = (max as usize).max(1);
        let min = (min as usize).min(max);
        self.collect(max);
        while self.events.len() < min && !self.inflight.is_empty() {
            self.suspend()?;
            self.collect(max);
        }
        Ok(self.events.len() as u32)
    }

    fn event(&mut self, i: u32) -> Completion {
        let c = self.events[i as usize];
        if i as usize + 1 == self.events.len() {
            // The runner reads events in order; the last one empties the list.
            self.events.clear();
        }
        c
    }
}
