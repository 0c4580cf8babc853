//! The kernel AIO ABI (include/uapi/linux/aio_abi.h and fs/aio.c), written out so the
//! engine needs no libaio C library, plus thin wrappers over the raw syscalls.

use std::ptr;

/// `aio_context_t`: the user address of the completion ring the kernel maps.
pub type AioContext = libc::c_ulong;

pub const IOCB_CMD_PREAD: u16 = 0;
pub const IOCB_CMD_PWRITE: u16 = 1;
pub const IOCB_CMD_PREADV: u16 = 7;
pub const IOCB_CMD_PWRITEV: u16 = 8;
/// `aio_flags` bit: `aio_reqprio` holds an ioprio value (Linux 5.0+).
pub const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// `struct iocb`. `aio_key` and `aio_rw_flags` swap places on big-endian
/// (the uapi PADDED macro), so both orders are spelt out.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Iocb {
    /// Returned unchanged in `IoEvent::data`; the engine stores the unit index.
    pub aio_data: u64,
    #[cfg(target_endian = "little")]
    pub aio_key: u32,
    /// RWF_* flags.
    pub aio_rw_flags: i32,
    #[cfg(target_endian = "big")]
    pub aio_key: u32,
    pub aio_lio_opcode: u16,
    pub aio_reqprio: i16,
    pub aio_fildes: u32,
    pub aio_buf: u64,
    pub aio_nbytes: u64,
    pub aio_offset: i64,
    pub aio_reserved2: u64,
    /// IOCB_FLAG_*.
    pub aio_flags: u32,
    pub aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct IoEvent {
    /// The iocb's `aio_data`.
    pub data: u64,
    /// The user address of the iocb.
    pub obj: u64,
    /// Bytes transferred or -errno.
    pub res: i64,
    pub res2: i64,
}

/// Header of the completion ring the kernel maps at the context address
/// (`struct aio_ring` in fs/aio.c); `IoEvent`s follow it.
#[repr(C)]
pub struct AioRingHeader {
    pub id: u32,
    /// Number of event slots.
    pub nr: u32,
    /// Next event to consume (written by whoever consumes: io_getevents or us).
    pub head: u32,
    /// Next slot the kernel fills.
    pub tail: u32,
    pub magic: u32,
    pub compat_features: u32,
    pub incompat_features: u32,
    /// sizeof(struct aio_ring).
    pub header_length: u32,
}

pub const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
const _: () = assert!(std::mem::size_of::<AioRingHeader>() == 32);

/// io_setup(2): creates a context for `nr_events` in-flight iocbs; -1 + errno on error.
pub fn io_setup(nr_events: u32, ctx: &mut AioContext) -> libc::c_long {
    // SAFETY: `ctx` is a valid, zeroed out-pointer as io_setup requires.
    unsafe { libc::syscall(libc::SYS_io_setup, nr_events as libc::c_long, ctx as *mut _) }
}

/// io_submit(2): submits `nr` iocbs; the count submitted, or -1 + errno if none was.
///
/// # Safety
/// `iocbs` must point to `nr` pointers to valid iocbs whose buffers stay valid until
/// their completion is reaped.
pub unsafe fn io_submit(ctx: AioContext, nr: usize, iocbs: *mut *mut Iocb) -> libc::c_long {
    libc::syscall(libc::SYS_io_submit, ctx, nr as libc::c_long, iocbs)
}

/// io_getevents(2) without a timeout: waits for `min` events, reaps up to `max`.
///
/// # Safety
/// `events` must be valid for `max` writes.
pub unsafe fn io_getevents(
    ctx: AioContext,
    min: usize,
    max: usize,
    events: *mut IoEvent,
) -> libc::c_long {
    let no_timeout: *const libc::timespec = ptr::null();
    libc::syscall(
        libc::SYS_io_getevents,
        ctx,
        min as libc::c_long,
        max as libc::c_long,
        events,
        no_timeout,
    )
}

/// io_destroy(2): cancels/waits for outstanding iocbs and unmaps the ring.
pub fn io_destroy(ctx: AioContext) {
    // SAFETY: `ctx` came from io_setup and is destroyed once, by the engine's Drop.
    unsafe {
        libc::syscall(libc::SYS_io_destroy, ctx);
    }
}
