//! What both io_uring engines (io_uring and io_uring_cmd) do the same way: the
//! `force_async` cadence and how an io_uring_enter failure is taken.

use std::io;

use io_uring::squeue;

use crate::{IoUnit, UNIT_ASYNC};

/// IOSQE_ASYNC for units flagged UNIT_ASYNC and for every `every`-th I/O
/// (`force_async`; 0: never).
pub(crate) struct ForceAsync {
    every: u32,
    since: u32,
}

impl ForceAsync {
    pub(crate) fn new(every: u32) -> Self {
        ForceAsync { every, since: 0 }
    }

    /// Whether the cadence is off (only units flagged UNIT_ASYNC get IOSQE_ASYNC).
    #[inline(always)]
    pub(crate) fn cadence_off(&self) -> bool {
        self.every == 0
    }

    /// Whether `unit` goes without IOSQE_ASYNC (and the cadence has nothing to count).
    #[inline(always)]
    pub(crate) fn never(&self, unit: &IoUnit) -> bool {
        self.every == 0 && unit.flags & UNIT_ASYNC == 0
    }

    #[inline(always)]
    pub(crate) fn flags(&mut self, unit: &IoUnit) -> squeue::Flags {
        let mut force = unit.flags & UNIT_ASYNC != 0;
        if self.every != 0 {
            self.since += 1;
            if self.since >= self.every {
                self.since = 0;
                force = true;
            }
        }
        if force {
            squeue::Flags::ASYNC
        } else {
            squeue::Flags::empty()
        }
    }
}

/// Runs an io_uring_enter until it is not interrupted: `Some(consumed SQEs)`, or
/// `None` when the kernel is short of resources or has a completion backlog
/// (EAGAIN/EBUSY), which is no error: the caller reaps and comes back.
#[inline(always)]
pub(crate) fn enter_retrying(
    mut enter: impl FnMut() -> io::Result<usize>,
) -> io::Result<Option<usize>> {
    loop {
        match enter() {
            Ok(n) => return Ok(Some(n)),
            Err(e) => match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EAGAIN) | Some(libc::EBUSY) => return Ok(None),
                _ => return Err(e),
            },
        }
    }
}
