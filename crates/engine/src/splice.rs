//! `splice`: data moves between the file and the unit's buffer through a pipe, as
//! fio's engine of that name does. A read splices the file's pages into the pipe
//! (splice(2)) and copies them out with vmsplice(2); a write maps the buffer into the
//! pipe with vmsplice and splices it to the file. Transfers larger than the pipe go
//! in pipe-sized pieces.

use std::os::fd::RawFd;

use crate::sync_engine::{iovec, SyncIo};

pub(crate) struct Splice {
    /// The pipe: (read end, write end).
    pipe: (RawFd, RawFd),
    /// Bytes the pipe holds.
    capacity: usize,
}

impl Splice {
    pub(crate) fn new() -> std::io::Result<Splice> {
        let mut fds = [0; 2];
        // SAFETY: pipe2 writes two descriptors into `fds`.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // A bigger pipe means fewer pieces; the default (64 KiB) is kept if refused.
        // SAFETY: fcntl on the pipe just created.
        let got = unsafe { libc::fcntl(fds[1], libc::F_SETPIPE_SZ, 1 << 20) };
        let capacity = if got > 0 { got as usize } else { 1 << 16 };
        Ok(Splice {
            pipe: (fds[0], fds[1]),
            capacity,
        })
    }

    /// Moves `len` bytes, a pipe-sized piece at a time; `piece(done, n)` returns the
    /// bytes it moved (0 at end of file) or -1 with errno set.
    fn pieces(&self, len: usize, mut piece: impl FnMut(usize, usize) -> isize) -> isize {
        let mut done = 0;
        while done < len {
            let n = piece(done, (len - done).min(self.capacity));
            if n < 0 {
                return if done > 0 { done as isize } else { n };
            }
            if n == 0 {
                break;
            }
            done += n as usize;
        }
        done as isize
    }
}

impl Splice {
    /// Empties the pipe after a failed transfer, keeping errno for the caller.
    fn drain(&self) {
        let errno = crate::ops::errno();
        let mut left: libc::c_int = 0;
        // SAFETY: FIONREAD writes the pipe's byte count into `left`.
        if unsafe { libc::ioctl(self.pipe.0, libc::FIONREAD, &mut left) } == 0 {
            let mut scratch = [0u8; 4096];
            while left > 0 {
                let n = (left as usize).min(scratch.len());
                // SAFETY: reads at most `n` bytes into the stack buffer.
                let r = unsafe { libc::read(self.pipe.0, scratch.as_mut_ptr().cast(), n) };
                if r <= 0 {
                    break;
                }
                left -= r as libc::c_int;
            }
        }
        // SAFETY: restores errno for the caller's error report.
        unsafe { *libc::__errno_location() = errno };
    }
}

impl Drop for Splice {
    fn drop(&mut self) {
        // SAFETY: both descriptors are ours.
        unsafe {
            libc::close(self.pipe.0);
            libc::close(self.pipe.1);
        }
    }
}

impl SyncIo for Splice {
    fn read(&self, fd: RawFd, buf: *mut u8, len: usize, off: u64, _flags: u32) -> isize {
        let (r, w) = self.pipe;
        self.pieces(len, |done, n| {
            let mut pos = (off + done as u64) as libc::loff_t;
            // SAFETY: splice from the file at `pos` into our pipe; no user memory.
            let got = unsafe { libc::splice(fd, &mut pos, w, std::ptr::null_mut(), n, 0) };
            if got <= 0 {
                return got;
            }
            // Copy what the pipe got out into the buffer (vmsplice on the read end).
            let mut copied = 0usize;
            while copied < got as usize {
                // SAFETY: `buf + done + copied` stays inside the unit's buffer (len bytes).
                let v = iovec(unsafe { buf.add(done + copied) }, got as usize - copied);
                // SAFETY: vmsplice copies from our pipe into the iovec's memory.
                let c = unsafe { libc::vmsplice(r, &v, 1, 0) };
                if c <= 0 {
                    self.drain();
                    return -1;
                }
                copied += c as usize;
            }
            got
        })
    }

    fn write(&self, fd: RawFd, buf: *const u8, len: usize, off: u64, _flags: u32) -> isize {
        let (r, w) = self.pipe;
        self.pieces(len, |done, n| {
            // SAFETY: `buf + done` stays inside the unit's buffer, valid for `n` bytes.
            let v = iovec(unsafe { buf.add(done) }, n);
            // SAFETY: vmsplice maps the buffer's pages into our pipe.
            let put = unsafe { libc::vmsplice(w, &v, 1, 0) };
            if put <= 0 {
                return put;
            }
            let mut moved = 0usize;
            while moved < put as usize {
                let mut pos = (off + (done + moved) as u64) as libc::loff_t;
                // SAFETY: splice from our pipe to the file at `pos`.
                let m = unsafe {
                    libc::splice(
                        r,
                        std::ptr::null_mut(),
                        fd,
                        &mut pos,
                        put as usize - moved,
                        0,
                    )
                };
                if m <= 0 {
                    // Leave nothing behind for the next I/O (ENOSPC, say).
                    self.drain();
                    return -1;
                }
                moved += m as usize;
            }
            put
        })
    }
}
