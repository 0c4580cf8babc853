//! Building the io_uring instance for a job: ring flags from the options, file and
//! buffer registration, and turning setup failures into messages that name the option
//! at fault.

use std::io;

/// The engine's name in messages.
pub(super) const NAME: &str = "io_uring";

use io_uring::{cqueue, opcode, squeue, types, IoUring};

use crate::{EngineConfig, EngineError, EngineOptions, FileInfo};

/// SQPOLL thread idle time before it sleeps, in milliseconds (fio's default).
const SQPOLL_IDLE_MS: u32 = 2000;
/// Registered buffers are addressed by a u16 index, and the kernel caps their number.
const MAX_FIXED_BUFS: usize = 1 << 14;

/// The registered buffer table: unit buffers `base + i * unit_len`, `count` of them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FixedBufs {
    pub base: usize,
    pub unit_len: usize,
    pub count: usize,
}

impl FixedBufs {
    /// The registered buffer holding `[buf, buf+len)`, if any. Derived from the address
    /// rather than the unit index so a unit whose buffer lies elsewhere still works
    /// (it then goes through the non-fixed opcode).
    #[inline]
    pub fn index_of(&self, buf: *const u8, len: u32) -> Option<u16> {
        let off = (buf as usize).checked_sub(self.base)?;
        let i = off / self.unit_len;
        let fits = off - i * self.unit_len + len as usize <= self.unit_len;
        (i < self.count && fits).then_some(i as u16)
    }
}

fn setup_err(what: String, source: io::Error) -> EngineError {
    setup_err_of(NAME, what, source)
}

fn setup_err_of(engine: &'static str, what: String, source: io::Error) -> EngineError {
    EngineError::Setup {
        engine,
        what,
        source,
    }
}

/// Creates the ring with `depth` entries and the flags the options ask for.
/// The ring, and whether completions are deferred to the submitter (DEFER_TASKRUN):
/// then they are only posted when it enters the kernel with GETEVENTS.
pub(super) fn build_ring(depth: u32, opts: &EngineOptions) -> Result<(IoUring, bool), EngineError> {
    // Like fio 3.33: run completion work in the submitting thread when it waits
    // (COOP_TASKRUN, SINGLE_ISSUER, DEFER_TASKRUN) instead of interrupting it for every
    // completion — about half the kernel CPU per I/O. Older kernels refuse the flags:
    // fall back step by step. Not with SQPOLL (another thread submits) or IOPOLL.
    // NO_SQARRAY (6.6): the kernel takes SQEs in ring order, without the index array.
    if !opts.sqthread_poll && !opts.hipri {
        for no_sqarray in [true, false] {
            let mut b = base_builder(opts);
            b.setup_coop_taskrun()
                .setup_single_issuer()
                .setup_defer_taskrun();
            if no_sqarray {
                b.setup_no_sqarray();
            }
            if let Ok(r) = b.build(depth) {
                return Ok((r, true));
            }
        }
        let mut b = base_builder(opts);
        b.setup_coop_taskrun();
        if let Ok(r) = b.build(depth) {
            return Ok((r, false));
        }
    }
    base_builder(opts)
        .build(depth)
        .map(|r| (r, false))
        .map_err(|e| setup_err(build_error_what(depth, opts, &e), e))
}

/// A ring of other entry sizes (io_uring_cmd's 128-byte SQEs and 32-byte CQEs), with
/// the flags the options ask for; completions are not deferred.
pub(crate) fn build_ring_of<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    depth: u32,
    opts: &EngineOptions,
    engine: &'static str,
) -> Result<IoUring<S, C>, EngineError> {
    base_builder::<S, C>(opts)
        .build(depth)
        .map_err(|e| setup_err_of(engine, build_error_what(depth, opts, &e), e))
}

fn base_builder<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    opts: &EngineOptions,
) -> io_uring::Builder<S, C> {
    let mut b = IoUring::<S, C>::builder();
    // More than IORING_MAX_ENTRIES is clamped instead of refused; queue then reports
    // Busy when the (smaller) SQ is full.
    b.setup_clamp();
    if opts.hipri {
        b.setup_iopoll();
    }
    if opts.sqthread_poll {
        b.setup_sqpoll(SQPOLL_IDLE_MS);
        if let Some(cpu) = opts.sqthread_poll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    b
}

/// Names the option most likely at fault for an io_uring_setup failure.
fn build_error_what(depth: u32, opts: &EngineOptions, e: &io::Error) -> String {
    let base = format!("io_uring_setup(entries={depth})");
    match (e.raw_os_error(), opts.sqthread_poll, opts.sqthread_poll_cpu) {
        (Some(libc::EINVAL), true, Some(cpu)) => {
            format!("IORING_SETUP_SQ_AFF: sqthread_poll_cpu={cpu} is not a valid CPU")
        }
        (Some(libc::EPERM), true, _) => {
            "IORING_SETUP_SQPOLL (sqthread_poll): not permitted for this user".to_string()
        }
        (Some(libc::EPERM), false, _) => {
            format!("{base}: io_uring is disabled (sysctl kernel.io_uring_disabled)")
        }
        (Some(libc::ENOSYS), _, _) => format!("{base}: kernel has no io_uring support"),
        (Some(libc::ENOMEM), _, _) => format!("{base}: out of memory or locked memory"),
        (Some(libc::EINVAL), _, _) if opts.hipri => {
            format!("{base} with IORING_SETUP_IOPOLL (hipri)")
        }
        _ => base,
    }
}

/// Registers the job's files (`registerfiles`); I/O then uses `types::Fixed(file)`.
pub(super) fn register_files(ring: &IoUring, files: &[FileInfo]) -> Result<(), EngineError> {
    let fds: Vec<i32> = files.iter().map(|f| f.fd).collect();
    register_files_of(ring, &fds, NAME)
}

pub(crate) fn register_files_of<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &IoUring<S, C>,
    fds: &[i32],
    engine: &'static str,
) -> Result<(), EngineError> {
    ring.submitter().register_files(fds).map_err(|e| {
        setup_err_of(
            engine,
            format!("IORING_REGISTER_FILES ({} files)", fds.len()),
            e,
        )
    })
}

/// Registers one buffer per unit (`fixedbufs`) so the kernel maps them once instead of
/// pinning pages on every I/O.
pub(super) fn register_buffers(
    ring: &IoUring,
    cfg: &EngineConfig<'_>,
) -> Result<FixedBufs, EngineError> {
    register_buffers_of(ring, cfg, NAME)
}

pub(crate) fn register_buffers_of<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &IoUring<S, C>,
    cfg: &EngineConfig<'_>,
    engine: &'static str,
) -> Result<FixedBufs, EngineError> {
    let (base, region_len) = cfg.buffers;
    let unit_len = cfg.unit_buf_len;
    let count = region_len.checked_div(unit_len).unwrap_or(0);
    if base.is_null() || count == 0 {
        return Err(EngineError::Invalid {
            engine,
            msg: "fixedbufs needs the job's buffer region and a non-zero unit buffer size"
                .to_string(),
        });
    }
    let count = count.min(MAX_FIXED_BUFS);
    let iovecs: Vec<libc::iovec> = (0..count)
        .map(|i| libc::iovec {
            // SAFETY (of the later use): i * unit_len + unit_len <= region_len.
            iov_base: base.wrapping_add(i * unit_len).cast(),
            iov_len: unit_len,
        })
        .collect();
    // SAFETY: the iovecs cover the runner's buffer region, which outlives the engine
    // (and so the ring that holds the registration).
    unsafe { ring.submitter().register_buffers(&iovecs) }.map_err(|e| {
        let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
            " (raise the locked-memory limit, ulimit -l)"
        } else {
            ""
        };
        setup_err_of(
            engine,
            format!("IORING_REGISTER_BUFFERS (fixedbufs, {count} x {unit_len} bytes){hint}"),
            e,
        )
    })?;
    Ok(FixedBufs {
        base: base as usize,
        unit_len,
        count,
    })
}

/// With IORING_SETUP_IOPOLL the kernel accepts the ring but fails every read/write with
/// EOPNOTSUPP when the file is not O_DIRECT or its device cannot poll. Find that out
/// now, with a zero-length read of each file, so it is a setup error that says why
/// rather than a run of failed I/Os. Other probe results (e.g. EBADF on a write-only
/// file) say nothing about polling and are ignored.
pub(super) fn probe_iopoll(ring: &mut IoUring, files: &[FileInfo]) -> Result<(), EngineError> {
    for (i, f) in files.iter().enumerate() {
        let probe = opcode::Read::new(types::Fd(f.fd), std::ptr::null_mut(), 0)
            .offset(0)
            .build()
            .user_data(u64::MAX);
        // SAFETY: a zero-length read touches no memory.
        if unsafe { ring.submission().push(&probe) }.is_err() {
            return Ok(());
        }
        let res = wait_one(ring).map_err(|e| setup_err("IOPOLL probe".to_string(), e))?;
        if res == -libc::EOPNOTSUPP {
            return Err(setup_err(
                format!(
                    "IORING_SETUP_IOPOLL (hipri): file {i} does not support polled I/O \
                     (needs direct=1 and a device with poll queues)"
                ),
                io::Error::from_raw_os_error(libc::EOPNOTSUPP),
            ));
        }
    }
    Ok(())
}

/// Submits what is queued and returns the result of the next completion.
fn wait_one(ring: &mut IoUring) -> io::Result<i32> {
    loop {
        match ring.submit_and_wait(1) {
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) => return Err(e),
            Ok(_) => {}
        }
        if let Some(cqe) = ring.completion().next() {
            return Ok(cqe.result());
        }
    }
}

/// sqe->nop_flags (where rw_flags sit): what a NOP makes the kernel look up.
const IORING_NOP_FILE: u32 = 1 << 1;
const IORING_NOP_FIXED_FILE: u32 = 1 << 2;
const IORING_NOP_FIXED_BUFFER: u32 = 1 << 3;

/// The SQE of every NOP of a NOP-mode engine: a plain NOP, or with `nop_file` one
/// naming the first file (by its registered index when files are registered) and,
/// with fixed buffers, the first registered buffer, as t/io_uring's NOPs do. (Its
/// IORING_NOP_INJECT_RESULT is left out: a NOP's result is its unit's length either
/// way, and the kernel does the same work for it.)
pub(super) fn nop_entry(opts: &EngineOptions, files: &[FileInfo]) -> squeue::Entry {
    let plain = opcode::Nop::new().build();
    let Some(file) = files.first().filter(|_| opts.nop_file) else {
        return plain;
    };
    let (fd, mut flags) = match opts.registerfiles {
        true => (0, IORING_NOP_FILE | IORING_NOP_FIXED_FILE),
        false => (file.fd, IORING_NOP_FILE),
    };
    if opts.fixedbufs {
        flags |= IORING_NOP_FIXED_BUFFER;
    }
    // buf_index (bytes 40..42) stays 0, the first registered buffer.
    let with_fd = patched(plain, SQE_FD, &fd.to_ne_bytes());
    patched(with_fd, SQE_NOP_FLAGS, &flags.to_ne_bytes())
}

/// Where the SQE holds its descriptor (or registered index) and its nop_flags.
const SQE_FD: usize = 4;
const SQE_NOP_FLAGS: usize = 28;

/// `e` with `bytes` written at byte `at` of its SQE: the fields the io_uring crate's
/// NOP builder has no setter for.
fn patched(e: squeue::Entry, at: usize, bytes: &[u8]) -> squeue::Entry {
    // SAFETY: squeue::Entry is a #[repr(C)] wrapper of the kernel's 64-byte SQE, plain
    // data in which any bytes are valid; the sizes are checked by transmute.
    let mut sqe: [u8; 64] = unsafe { std::mem::transmute(e) };
    if let Some(field) = sqe.get_mut(at..at + bytes.len()) {
        field.copy_from_slice(bytes);
    }
    // SAFETY: as above, back to the wrapper.
    unsafe { std::mem::transmute::<[u8; 64], squeue::Entry>(sqe) }
}

/// A NOP naming a file is refused (EINVAL) by kernels older than its flags, and
/// kernels older still (before 6.10) ignore the flags and look nothing up: find
/// either out now, so it is a setup error that says why rather than a run of failed
/// NOPs or of plain NOPs taken for t/io_uring's. A NOP naming a file that does not
/// exist (descriptor -1, or a registered index past the table) must fail with EBADF.
pub(super) fn probe_nop(ring: &mut IoUring, nop: &squeue::Entry) -> Result<(), EngineError> {
    let why = |res: i32| {
        setup_err(
            "IORING_OP_NOP naming a file (IORING_NOP_FILE, peak --nop FILE): not taken \
             by this kernel (Linux 6.13 and later take it; peak --nop without a file \
             issues plain NOPs)"
                .to_string(),
            io::Error::from_raw_os_error(res),
        )
    };
    let res = nop_result(ring, nop)?;
    if res < 0 {
        return Err(why(-res));
    }
    // fd -1 is no descriptor and no registered index (the table has one file).
    let bad = patched(nop.clone(), SQE_FD, &(-1i32).to_ne_bytes());
    match nop_result(ring, &bad)? {
        r if r == -libc::EBADF => Ok(()),
        _ => Err(why(libc::EOPNOTSUPP)),
    }
}

/// The result of one NOP, issued alone.
fn nop_result(ring: &mut IoUring, nop: &squeue::Entry) -> Result<i32, EngineError> {
    let probe = nop.clone().user_data(u64::MAX);
    // SAFETY: a NOP points at no memory of ours.
    if unsafe { ring.submission().push(&probe) }.is_err() {
        return Ok(0);
    }
    wait_one(ring).map_err(|e| setup_err("NOP probe".to_string(), e))
}
