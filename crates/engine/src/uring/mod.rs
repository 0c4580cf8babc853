//! `io_uring` through the `io-uring` crate.
//!
//! `queue` writes one SQE (user_data = unit index) into the submission ring, `commit`
//! enters the kernel once for the whole batch (with SQPOLL only to wake the poller),
//! `getevents` waits only when the CQ holds fewer than `min` completions and then
//! drains up to `max` CQEs. Trim has no io_uring opcode here and is done
//! synchronously; fsync/fdatasync use IORING_OP_FSYNC (synchronously under IOPOLL,
//! which rejects non-read/write opcodes).

use std::io;
use std::os::fd::RawFd;

use io_uring::{opcode, squeue, types, IoUring};

use crate::ops;
use crate::{Burst, Completion, Ddir, Engine, EngineConfig, EngineError, FileInfo, IoUnit, Queued};
use setup::FixedBufs;

/// Builds the read/write SQE for one target kind (raw fd or registered file index):
/// the crate's target trait is private, so the code is expanded once per kind.
macro_rules! rw_sqe {
    ($self:ident, $idx:ident, $unit:ident, $target:ident) => {{
        let (buf, len, off, prio) = ($unit.buf, $unit.len, $unit.offset, $unit.ioprio);
        let write = $unit.ddir == Ddir::Write;
        let flags = $self.rw_flags[write as usize];
        let fixed = $self.fixed_bufs.and_then(|fb| fb.index_of(buf, len));
        match (fixed, write) {
            (Some(bi), false) => opcode::ReadFixed::new($target, buf, len, bi)
                .offset(off)
                .ioprio(prio)
                .rw_flags(flags)
                .build(),
            (Some(bi), true) => opcode::WriteFixed::new($target, buf, len, bi)
                .offset(off)
                .ioprio(prio)
                .rw_flags(flags)
                .build(),
            (None, _) if $self.vectored => {
                let iov = &mut $self.iovecs[$idx as usize];
                *iov = crate::sync_engine::iovec(buf, len as usize);
                let iov: *const libc::iovec = iov;
                if write {
                    opcode::Writev::new($target, iov, 1)
                        .offset(off)
                        .ioprio(prio)
                        .rw_flags(flags)
                        .build()
                } else {
                    opcode::Readv::new($target, iov, 1)
                        .offset(off)
                        .ioprio(prio)
                        .rw_flags(flags)
                        .build()
                }
            }
            (None, false) => opcode::Read::new($target, buf, len)
                .offset(off)
                .ioprio(prio)
                .rw_flags(flags)
                .build(),
            (None, true) => opcode::Write::new($target, buf, len)
                .offset(off)
                .ioprio(prio)
                .rw_flags(flags)
                .build(),
        }
    }};
}

mod burst;
mod nops;
mod queues;
mod ringfd;
pub(crate) mod setup;
pub(crate) mod shared;

/// io_uring_enter flag: reap completions (and run deferred completion work).
const IORING_ENTER_GETEVENTS: u32 = 1;

pub(crate) struct UringEngine {
    ring: IoUring,
    files: Box<[FileInfo]>,
    /// Files are registered (`registerfiles`): address them by index.
    fixed_files: bool,
    /// Registered unit buffers (`fixedbufs`).
    fixed_bufs: Option<FixedBufs>,
    /// Use READV/WRITEV (`nonvectored=0`) with this per-unit iovec table.
    vectored: bool,
    iovecs: Box<[libc::iovec]>,
    /// RWF_* flags of every read \[0\] and write \[1\] (nowait, uncached, atomic).
    rw_flags: [i32; 2],
    /// IOSQE_ASYNC on every `force_async`-th I/O.
    force_async: shared::ForceAsync,
    /// IOPOLL ring: fsync is not pollable, so it is done synchronously.
    iopoll: bool,
    /// SQPOLL ring: the kernel thread consumes SQEs, so commit counts them itself.
    sqpoll: bool,
    /// Maximum SQEs pushed + in flight (iodepth); also keeps the CQ from overflowing.
    depth: u32,
    /// SQEs pushed since the last commit.
    pending: u32,
    /// Submitted and not yet reaped.
    inflight: u32,
    /// Completions reaped by the last `getevents`.
    events: Box<[Completion]>,
    /// NOP mode: the length each unit asked for, reported as its result.
    nop_len: Option<Box<[u32]>>,
    /// NOP mode: the SQE every NOP is (see [`setup::nop_entry`]).
    nop_sqe: squeue::Entry,
    /// DEFER_TASKRUN ring: completions appear only after an enter with GETEVENTS.
    defer: bool,
}

impl UringEngine {
    pub(crate) fn new(cfg: &EngineConfig<'_>) -> Result<Self, EngineError> {
        let opts = &cfg.opts;
        let depth = cfg.depth.max(1);
        let units = ops::unit_capacity(cfg);
        let (mut ring, defer) = setup::build_ring(depth, opts)?;
        if opts.registerfiles {
            setup::register_files(&ring, cfg.files)?;
        }
        let fixed_bufs = if opts.fixedbufs {
            Some(setup::register_buffers(&ring, cfg)?)
        } else {
            None
        };
        if opts.hipri {
            setup::probe_iopoll(&mut ring, cfg.files)?;
        }
        let nop_sqe = setup::nop_entry(opts, cfg.files);
        if opts.nop && opts.nop_file {
            setup::probe_nop(&mut ring, &nop_sqe)?;
        }
        let rw_flags = ops::rw_flags(opts);
        let empty_iov = libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        };
        Ok(UringEngine {
            ring,
            files: cfg.files.into(),
            fixed_files: opts.registerfiles,
            fixed_bufs,
            vectored: opts.nonvectored == 0,
            iovecs: vec![empty_iov; units].into_boxed_slice(),
            rw_flags,
            force_async: shared::ForceAsync::new(opts.force_async),
            iopoll: opts.hipri,
            sqpoll: opts.sqthread_poll,
            depth,
            pending: 0,
            inflight: 0,
            events: vec![Completion { unit: 0, result: 0 }; depth as usize].into_boxed_slice(),
            nop_len: opts.nop.then(|| vec![0u32; units].into_boxed_slice()),
            nop_sqe,
            defer,
        })
    }

    /// The SQE for a read or write of `unit`.
    fn rw_entry(&mut self, idx: u32, unit: &IoUnit, fd: RawFd) -> squeue::Entry {
        if self.fixed_files {
            let target = types::Fixed(unit.file);
            rw_sqe!(self, idx, unit, target)
        } else {
            let target = types::Fd(fd);
            rw_sqe!(self, idx, unit, target)
        }
    }

    /// The SQE for an fsync / fdatasync of `unit`'s file.
    fn fsync_entry(&self, unit: &IoUnit, fd: RawFd) -> squeue::Entry {
        let flags = if unit.ddir == Ddir::DataSync {
            types::FsyncFlags::DATASYNC
        } else {
            types::FsyncFlags::empty()
        };
        if self.fixed_files {
            opcode::Fsync::new(types::Fixed(unit.file))
                .flags(flags)
                .build()
        } else {
            opcode::Fsync::new(types::Fd(fd)).flags(flags).build()
        }
    }

    /// Handles units that complete inside `queue`; `None` if the unit needs an SQE.
    fn complete_inline(&self, unit: &IoUnit, file: &FileInfo) -> Option<i64> {
        match unit.ddir {
            Ddir::Trim => ops::non_rw(file, unit),
            Ddir::Sync | Ddir::DataSync if self.iopoll => ops::non_rw(file, unit),
            Ddir::Sync | Ddir::DataSync => None,
            Ddir::Read | Ddir::Write => ops::check_rw(unit).err(),
        }
    }

    /// Enters the kernel to submit pending SQEs and wait for `want` CQEs in the ring.
    /// EINTR is retried; EAGAIN/EBUSY (kernel short of resources, or CQ backlog) are not
    /// errors: the caller reaps and comes back.
    fn enter(&mut self, want: usize) -> io::Result<()> {
        let consumed = shared::enter_retrying(|| {
            if want == 0 && self.defer && self.inflight > 0 {
                // Submit and run deferred completion work without waiting.
                let to_submit = self.ring.submission().len() as u32;
                // SAFETY: no argument is passed; the flags are valid for this ring.
                unsafe {
                    self.ring.submitter().enter::<libc::sigset_t>(
                        to_submit,
                        0,
                        IORING_ENTER_GETEVENTS,
                        None,
                    )
                }
            } else {
                self.ring.submit_and_wait(want)
            }
        })?;
        if let Some(n) = consumed {
            self.account_submitted(n as u32);
        }
        Ok(())
    }

    /// Moves SQEs the kernel consumed from pending to in flight. Under SQPOLL the
    /// return of submit counts SQEs the poller has yet to consume, so all pushed SQEs
    /// are taken as submitted (the poller will get to them).
    fn account_submitted(&mut self, consumed: u32) {
        let n = if self.sqpoll {
            self.pending
        } else {
            consumed.min(self.pending)
        };
        self.pending -= n;
        self.inflight += n;
    }

    /// Copies up to `max` CQEs into `events`; returns how many.
    fn drain(&mut self, max: usize) -> usize {
        let mut n = 0;
        for cqe in self.ring.completion().take(max) {
            let unit = cqe.user_data() as u32;
            let mut result = cqe.result() as i64;
            if let Some(lens) = &self.nop_len {
                if result == 0 {
                    result = lens.get(unit as usize).copied().unwrap_or(0) as i64;
                }
            }
            self.events[n] = Completion { unit, result };
            n += 1;
        }
        n
    }
}

impl Engine for UringEngine {
    fn is_sync(&self) -> bool {
        false
    }

    fn queue(&mut self, idx: u32, unit: &mut IoUnit) -> io::Result<Queued> {
        if idx as usize >= self.iovecs.len() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        let Some(file) = ops::file_of(&self.files, unit) else {
            unit.result = -(libc::EBADF as i64);
            return Ok(Queued::Done);
        };
        let fd = file.fd;
        if let Some(res) = self.complete_inline(unit, file) {
            unit.result = res;
            return Ok(Queued::Done);
        }
        if self.pending + self.inflight >= self.depth {
            return Ok(Queued::Busy);
        }
        let entry = match (&mut self.nop_len, unit.ddir) {
            (Some(lens), _) => {
                lens[idx as usize] = unit.len;
                self.nop_sqe.clone()
            }
            (None, Ddir::Sync | Ddir::DataSync) => self.fsync_entry(unit, fd),
            (None, _) => self.rw_entry(idx, unit, fd),
        };
        let entry = entry
            .user_data(idx as u64)
            .flags(self.force_async.flags(unit));
        // SAFETY: the SQE points at the unit's buffer (checked to hold `len` bytes) or
        // at this unit's iovec; both stay untouched until its completion is reaped.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            return Ok(Queued::Busy);
        }
        self.pending += 1;
        Ok(Queued::Queued)
    }

    fn commit(&mut self) -> io::Result<u32> {
        if self.pending == 0 {
            return Ok(0);
        }
        let before = self.inflight;
        self.enter(0)?;
        Ok(self.inflight - before)
    }

    fn getevents(&mut self, min: u32, max: u32) -> io::Result<u32> {
        let max = (max as usize).min(self.events.len());
        // Waiting for more than will ever complete would block forever.
        let min = (min as usize).min(max).min(self.inflight as usize);
        let ready = self.ring.completion().len();
        // IOPOLL completions only appear when someone polls, even for min == 0.
        // IOPOLL and deferred-completion rings only post completions when entered.
        let must_poll = (self.iopoll || self.defer) && ready == 0 && self.inflight > 0;
        if ready < min || must_poll {
            self.enter(min)?;
        }
        let n = self.drain(max);
        self.inflight = self.inflight.saturating_sub(n as u32);
        Ok(n as u32)
    }

    #[inline]
    fn event(&mut self, i: u32) -> Completion {
        self.events[i as usize]
    }

    fn burst<B: Burst>(&mut self, b: &mut B) -> Option<io::Result<()>> {
        self.burst_ready().then(|| self.burst_loop(b))
    }

    fn burst_nops<N: crate::NopBurst>(&mut self, b: &mut N) -> Option<io::Result<()>> {
        let ready = self.burst_ready() && self.nop_len.is_some() && self.force_async.cadence_off();
        // Where the ring's queues cannot be mapped (never seen), the general loop runs
        // the NOPs instead.
        let qs = ready
            .then(|| queues::Queues::map(&self.ring).ok())
            .flatten()?;
        Some(self.nop_loop(qs, b))
    }

    /// One io_uring_enter both submits the queued SQEs and waits for completions.
    fn commit_and_getevents(&mut self, min: u32, max: u32) -> io::Result<(u32, u32)> {
        let before = self.inflight;
        let max = (max as usize).min(self.events.len());
        let min = (min as usize)
            .min(max)
            .min((self.inflight + self.pending) as usize);
        let ready = self.ring.completion().len();
        let must_poll = self.iopoll && ready == 0 && self.inflight + self.pending > 0;
        if self.pending > 0 || ready < min || must_poll {
            self.enter(if ready >= min && !must_poll { 0 } else { min })?;
        }
        let submitted = self.inflight - before;
        let n = self.drain(max);
        self.inflight = self.inflight.saturating_sub(n as u32);
        Ok((submitted, n as u32))
    }
}
