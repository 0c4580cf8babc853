//! SIGINT/SIGTERM: the first asks every job to stop (results are still reported in
//! full); a second SIGINT exits at once.

use std::sync::atomic::Ordering::Relaxed;

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGINT && ioscope_runner::STOP.load(Relaxed) {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
    ioscope_runner::STOP.store(true, Relaxed);
}

pub fn install() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: a zeroed sigaction with a valid handler and empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}
