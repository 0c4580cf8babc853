//! The ring's own descriptor, registered (IORING_REGISTER_RING_FDS) so that the
//! kernel does not look it up on every io_uring_enter, and that call made straight
//! from the engines' own loops: on x86-64 with the `syscall` instruction itself, as
//! t/io_uring does, since libc's variadic `syscall()` costs as much per call as a
//! batch of NOPs' bookkeeping.

use std::io;

const IORING_ENTER_REGISTERED_RING: u32 = 16;
const IORING_REGISTER_RING_FDS: libc::c_long = 20;
const IORING_UNREGISTER_RING_FDS: libc::c_long = 21;

/// struct io_uring_rsrc_update.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// How io_uring_enter names the ring: by its registered index where the kernel
/// allows it (5.18 and later), by its descriptor otherwise. Unregistered on drop.
pub(super) struct RingFd {
    ring: i32,
    /// The index (registered) or the descriptor.
    fd: i32,
    /// IORING_ENTER_REGISTERED_RING when registered.
    flag: u32,
}

impl RingFd {
    pub(super) fn register(ring: i32) -> RingFd {
        let mut up = RsrcUpdate {
            offset: u32::MAX,
            resv: 0,
            data: ring as u64,
        };
        // SAFETY: registers one descriptor, described by `up`, which lives across the
        // call; the kernel writes the index it chose into `up.offset`.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                ring,
                IORING_REGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1,
            )
        };
        match r {
            1 => RingFd {
                ring,
                fd: up.offset as i32,
                flag: IORING_ENTER_REGISTERED_RING,
            },
            _ => RingFd {
                ring,
                fd: ring,
                flag: 0,
            },
        }
    }

    /// Submits `to_submit` SQEs and, with GETEVENTS, waits for `min` completions.
    #[inline(always)]
    pub(super) fn enter(&self, to_submit: u32, min: u32, flags: u32) -> io::Result<usize> {
        // SAFETY: no argument structure is passed (NULL, size 0); `fd` names this ring.
        let r = unsafe { enter_raw(self.fd, to_submit, min, flags | self.flag) };
        if r < 0 {
            return Err(io::Error::from_raw_os_error(-r as i32));
        }
        Ok(r as usize)
    }
}

impl Drop for RingFd {
    fn drop(&mut self) {
        if self.flag == 0 {
            return;
        }
        let mut up = RsrcUpdate {
            offset: self.fd as u32,
            resv: 0,
            data: 0,
        };
        // SAFETY: unregisters the index registered in `register`; `up` lives across
        // the call. A failure leaves the registration to the thread's exit.
        unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                self.ring,
                IORING_UNREGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1,
            );
        }
    }
}

/// io_uring_enter(fd, to_submit, min, flags, NULL, 0): its return, or -errno.
///
/// # Safety
/// As io_uring_enter itself: `fd` must name a ring (or its registered index, with the
/// flag) whose SQEs point only at memory that outlives their completion.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn enter_raw(fd: i32, to_submit: u32, min: u32, flags: u32) -> i64 {
    let ret: i64;
    // SAFETY: the x86-64 Linux system call convention: number in rax, arguments in
    // rdi, rsi, rdx, r10, r8, r9; the kernel clobbers rcx and r11 and returns in rax.
    // No stack is used and no memory of ours is passed (the fifth argument is NULL).
    unsafe {
        std::arch::asm!(
            "syscall",
            inlateout("rax") libc::SYS_io_uring_enter => ret,
            in("rdi") i64::from(fd),
            in("rsi") u64::from(to_submit),
            in("rdx") u64::from(min),
            in("r10") u64::from(flags),
            in("r8") 0u64,
            in("r9") 0u64,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    ret
}

/// [`enter_raw`] elsewhere: through libc.
///
/// # Safety
/// As the x86-64 one.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
unsafe fn enter_raw(fd: i32, to_submit: u32, min: u32, flags: u32) -> i64 {
    // SAFETY: as the caller promises; NULL, 0: no argument structure.
    let r = unsafe {
        libc::syscall(
            libc::SYS_io_uring_enter,
            fd,
            to_submit,
            min,
            flags,
            std::ptr::null::<libc::c_void>(),
            0usize,
        )
    };
    match r < 0 {
        true => -i64::from(
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        ),
        false => r as i64,
    }
}
