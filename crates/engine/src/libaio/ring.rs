//! Reaping completions straight from the AIO completion ring the kernel maps into
//! our address space (`userspace_reap`), which saves the io_getevents syscall when
//! events are already there.
//!
//! Protocol: the kernel writes events, then publishes them by storing `tail` (after a
//! write barrier); the consumer reads `tail` with Acquire, copies the events, then
//! publishes its progress by storing `head` with Release, so the kernel never reuses a
//! slot before we have copied it. The kernel's own io_getevents reads and writes the
//! same `head`, so both ways of reaping can be mixed freely from one thread.

use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

use super::abi::{AioContext, AioRingHeader, IoEvent, AIO_RING_MAGIC};

pub(crate) struct UserRing {
    header: *mut AioRingHeader,
    events: *const IoEvent,
    nr: u32,
}

impl UserRing {
    /// Validates the ring at the context address; `None` if its layout is not the one
    /// we know (then the engine reaps with io_getevents only).
    ///
    /// # Safety
    /// `ctx` must be a live context returned by io_setup.
    pub(crate) unsafe fn new(ctx: AioContext) -> Option<Self> {
        let header = ctx as *mut AioRingHeader;
        if header.is_null() {
            return None;
        }
        let h = ptr::read_volatile(header);
        let known = h.magic == AIO_RING_MAGIC
            && h.incompat_features == 0
            && h.header_length as usize == std::mem::size_of::<AioRingHeader>()
            && h.nr > 0;
        known.then(|| UserRing {
            header,
            events: header.add(1).cast::<IoEvent>(),
            nr: h.nr,
        })
    }

    fn head(&self) -> &AtomicU32 {
        // SAFETY: the header is mapped for the context's life and `head` is an aligned
        // u32 shared with the kernel, i.e. exactly what AtomicU32 models.
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.header).head)) }
    }

    fn tail(&self) -> &AtomicU32 {
        // SAFETY: as for `head`.
        unsafe { AtomicU32::from_ptr(ptr::addr_of_mut!((*self.header).tail)) }
    }

    /// Copies up to `out.len()` available events into `out`; returns how many.
    pub(crate) fn reap(&self, out: &mut [IoEvent]) -> usize {
        // Only this thread consumes (here or via io_getevents, which finished before
        // we got here), so our own last store of head is what we read back.
        let mut head = self.head().load(Ordering::Relaxed) % self.nr;
        // Acquire pairs with the kernel's barrier before it stores tail: every event
        // up to tail is fully written once we see the new tail.
        let tail = self.tail().load(Ordering::Acquire) % self.nr;
        let mut n = 0;
        while head != tail && n < out.len() {
            // SAFETY: head < nr, and the ring holds nr events after the header.
            out[n] = unsafe { ptr::read_volatile(self.events.add(head as usize)) };
            head += 1;
            if head == self.nr {
                head = 0;
            }
            n += 1;
        }
        if n > 0 {
            // Release: our copies of the slots complete before the kernel may reuse them.
            self.head().store(head, Ordering::Release);
        }
        n
    }
}
