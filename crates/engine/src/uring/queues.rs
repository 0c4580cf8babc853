//! The ring's submission and completion queues mapped a second time, and read and
//! written directly, for the NOP loop ([`super::nops`]): there the io-uring crate's
//! general queue handles (a fresh view per call, a bounds check and a copy per SQE, an
//! iterator per CQE) cost as much per NOP as all of the loop's own bookkeeping, where
//! t/io_uring touches the rings' memory itself. The mapping is of the same ring (the
//! crate's own mapping stays as it is); its offsets come from the parameters the kernel
//! filled in, which the crate keeps as they are (`Parameters` is documented as a
//! transparent wrapper of `struct io_uring_params`).

use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU32;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use io_uring::{cqueue, squeue, IoUring};

const IORING_OFF_SQ_RING: libc::off_t = 0;
const IORING_OFF_CQ_RING: libc::off_t = 0x800_0000;
const IORING_OFF_SQES: libc::off_t = 0x1000_0000;
const IORING_FEAT_SINGLE_MMAP: u32 = 1;
const IORING_SETUP_SQE128: u32 = 1 << 10;
const IORING_SETUP_CQE32: u32 = 1 << 11;
const IORING_SETUP_NO_SQARRAY: u32 = 1 << 16;

/// struct io_sqring_offsets.
#[repr(C)]
struct SqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    flags: u32,
    dropped: u32,
    array: u32,
    resv1: u32,
    user_addr: u64,
}

/// struct io_cqring_offsets.
#[repr(C)]
struct CqOffsets {
    head: u32,
    tail: u32,
    ring_mask: u32,
    ring_entries: u32,
    overflow: u32,
    cqes: u32,
    flags: u32,
    resv1: u32,
    user_addr: u64,
}

/// struct io_uring_params.
#[repr(C)]
struct Params {
    sq_entries: u32,
    cq_entries: u32,
    flags: u32,
    sq_thread_cpu: u32,
    sq_thread_idle: u32,
    features: u32,
    wq_fd: u32,
    resv: [u32; 3],
    sq_off: SqOffsets,
    cq_off: CqOffsets,
}

const _: () = assert!(std::mem::size_of::<Params>() == 120);
const _: () = assert!(std::mem::size_of::<io_uring::Parameters>() == 120);
const _: () =
    assert!(std::mem::align_of::<Params>() == std::mem::align_of::<io_uring::Parameters>());
const _: () = assert!(std::mem::offset_of!(Params, sq_off) == 40);
const _: () = assert!(std::mem::offset_of!(Params, cq_off) == 80);
const _: () = assert!(std::mem::size_of::<squeue::Entry>() == 64);
const _: () = assert!(std::mem::size_of::<cqueue::Entry>() == 16);

/// One shared mapping of the ring's memory; unmapped on drop.
struct Map {
    at: *mut u8,
    len: usize,
}

impl Map {
    fn new(fd: i32, off: libc::off_t, len: usize) -> io::Result<Map> {
        // SAFETY: a new shared mapping of the ring's memory at the offset the kernel
        // defines for it; nothing else is touched. MAP_POPULATE: no faults in the loop.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                off,
            )
        };
        if at == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map { at: at.cast(), len })
    }

    /// The address `off` bytes in, as a `T`: refused unless a whole `T` lies within
    /// the mapping (the kernel's offsets always do; a ring laid out otherwise is not
    /// used).
    fn at<T>(&self, off: u32) -> io::Result<*mut T> {
        let end = off as usize + std::mem::size_of::<T>();
        if end > self.len {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "io_uring ring offset {off} past its mapping of {} bytes",
                    self.len
                ),
            ));
        }
        // SAFETY: within the mapping, as just checked.
        Ok(unsafe { self.at.add(off as usize) }.cast())
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped; no pointer into it outlives the
        // `Queues` that owns it.
        unsafe { libc::munmap(self.at.cast(), self.len) };
    }
}

/// The ring's queues: SQEs written in place and published by the tail, CQEs read in
/// place and released by the head. Only the thread that owns the ring uses it, and
/// never while a crate queue handle is alive (the crate reads both indexes afresh
/// each time it makes one).
pub(super) struct Queues {
    sq_head: *const AtomicU32,
    sq_tail: *const AtomicU32,
    sq_mask: u32,
    sqes: *mut squeue::Entry,
    cq_head: *const AtomicU32,
    cq_tail: *const AtomicU32,
    cq_mask: u32,
    cqes: *const cqueue::Entry,
    _maps: [Option<Map>; 3],
}

impl Queues {
    /// Maps `ring`'s queues. Refused for rings of 128-byte SQEs or 32-byte CQEs.
    pub(super) fn map(ring: &IoUring) -> io::Result<Queues> {
        // SAFETY: `Parameters` is a transparent wrapper of struct io_uring_params (the
        // crate documents it so), which `Params` lays out field for field (sizes
        // checked above); it is only read.
        let p = unsafe { &*(ring.params() as *const io_uring::Parameters).cast::<Params>() };
        if p.flags & (IORING_SETUP_SQE128 | IORING_SETUP_CQE32) != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the NOP loop maps rings of 64-byte SQEs and 16-byte CQEs only",
            ));
        }
        let fd = ring.as_raw_fd();
        let array = match p.flags & IORING_SETUP_NO_SQARRAY {
            0 => p.sq_entries as usize * 4,
            _ => 0,
        };
        // Past every field used: the index array is last where there is one (and its
        // offset 0 where there is none).
        let o = &p.sq_off;
        let sq_len = [o.head, o.tail, o.ring_mask, o.ring_entries]
            .iter()
            .map(|&f| f as usize + 4)
            .max()
            .unwrap_or(0)
            .max(o.array as usize + array);
        let cq_len = p.cq_off.cqes as usize + p.cq_entries as usize * 16;
        let sqes = Map::new(fd, IORING_OFF_SQES, p.sq_entries as usize * 64)?;
        let (sq, cq) = match p.features & IORING_FEAT_SINGLE_MMAP {
            0 => (
                Map::new(fd, IORING_OFF_SQ_RING, sq_len)?,
                Some(Map::new(fd, IORING_OFF_CQ_RING, cq_len)?),
            ),
            _ => (Map::new(fd, IORING_OFF_SQ_RING, sq_len.max(cq_len))?, None),
        };
        let cqm = cq.as_ref().unwrap_or(&sq);
        // SAFETY: the masks the kernel wrote into the rings, at its offsets.
        let (sq_mask, cq_mask) = unsafe {
            (
                sq.at::<u32>(p.sq_off.ring_mask)?.read(),
                cqm.at::<u32>(p.cq_off.ring_mask)?.read(),
            )
        };
        // The SQEs and CQEs addressed below (masked) lie within their mappings.
        sqes.at::<[squeue::Entry; 1]>((sq_mask as usize * 64) as u32)?;
        cqm.at::<cqueue::Entry>(p.cq_off.cqes + cq_mask * 16)?;
        if array > 0 {
            // Slot i of the index array names SQE i (as the crate sets it up too): SQEs
            // are then taken in ring order, as without the array.
            let idx: *mut u32 = sq.at(p.sq_off.array)?;
            sq.at::<u32>(p.sq_off.array + sq_mask * 4)?;
            for i in 0..=sq_mask {
                // SAFETY: within the array's `sq_mask + 1` slots.
                unsafe { idx.add(i as usize).write_volatile(i) };
            }
        }
        Ok(Queues {
            sq_head: sq.at(p.sq_off.head)?,
            sq_tail: sq.at(p.sq_off.tail)?,
            sq_mask,
            sqes: sqes.at(0)?,
            cq_head: cqm.at(p.cq_off.head)?,
            cq_tail: cqm.at(p.cq_off.tail)?,
            cq_mask,
            cqes: cqm.at(p.cq_off.cqes)?,
            // Moving a `Map` leaves its mapping where it is.
            _maps: [Some(sqes), Some(sq), cq],
        })
    }

    /// How many SQEs the ring holds.
    pub(super) fn sq_entries(&self) -> u32 {
        self.sq_mask + 1
    }

    /// The SQ's tail: where the next SQE goes (only this thread moves it).
    #[inline(always)]
    pub(super) fn sq_tail(&self) -> u32 {
        // SAFETY: the tail lives as long as the mapping, which `self` owns.
        unsafe { &*self.sq_tail }.load(Relaxed)
    }

    /// SQEs the kernel has yet to take.
    #[inline(always)]
    pub(super) fn sq_queued(&self) -> u32 {
        // SAFETY: as in `sq_tail`; the kernel moves the head.
        let head = unsafe { &*self.sq_head }.load(Acquire);
        self.sq_tail().wrapping_sub(head)
    }

    /// The SQE at ring position `pos` (any u32: taken modulo the ring's size).
    ///
    /// # Safety
    /// `pos` must not be in flight to the kernel: published (before the tail) and not
    /// yet taken (at or past the head), where the kernel may be reading it.
    #[inline(always)]
    pub(super) unsafe fn sqe(&mut self, pos: u32) -> &mut squeue::Entry {
        // SAFETY: masked into the SQE array (checked within its mapping in `map`);
        // `&mut self` keeps this the only reference this thread holds, and the caller
        // promises the kernel is not reading it.
        unsafe { &mut *self.sqes.add((pos & self.sq_mask) as usize) }
    }

    /// Hands the kernel every SQE written up to `tail`.
    #[inline(always)]
    pub(super) fn publish(&self, tail: u32) {
        // SAFETY: as in `sq_tail`; Release: the SQEs' contents before the tail.
        unsafe { &*self.sq_tail }.store(tail, Release);
    }

    /// The completions posted and not yet released: (head, tail).
    #[inline(always)]
    pub(super) fn cq_ready(&self) -> (u32, u32) {
        // SAFETY: as in `sq_tail`; only this thread moves the head, the kernel the
        // tail (Acquire: the CQEs' contents after it).
        let head = unsafe { &*self.cq_head }.load(Relaxed);
        (head, unsafe { &*self.cq_tail }.load(Acquire))
    }

    /// The CQEs from ring position `head` to `tail` (as [`Self::cq_ready`] gave
    /// them), in order: the part up to the ring's end and the part that wrapped.
    #[inline(always)]
    pub(super) fn cqes(&self, head: u32, tail: u32) -> [&[cqueue::Entry]; 2] {
        let size = self.cq_mask as usize + 1;
        // The kernel never posts more than the ring holds (the rest waits on its
        // overflow list); the bound keeps the parts below within the array regardless.
        let n = (tail.wrapping_sub(head) as usize).min(size);
        debug_assert!(tail.wrapping_sub(head) as usize <= size);
        let at = (head & self.cq_mask) as usize;
        let first = n.min(size - at);
        // SAFETY: both parts lie within the CQE array (checked within its mapping in
        // `map`): `at + first` is at most its size, and the rest, `n - first` (at most
        // `at`), starts at its start. They are read only between `cq_ready` saying they
        // are posted and `release` (which takes `&mut self`, so not while they are
        // borrowed) handing their slots back.
        unsafe {
            [
                std::slice::from_raw_parts(self.cqes.add(at), first),
                std::slice::from_raw_parts(self.cqes, n - first),
            ]
        }
    }

    /// Hands the kernel back every CQE slot before `head`.
    #[inline(always)]
    pub(super) fn release(&mut self, head: u32) {
        // SAFETY: as in `sq_tail`; Release: the CQEs were read before.
        unsafe { &*self.cq_head }.store(head, Release);
    }
}
