//! SIGINT/SIGTERM (and SIGUSR1 under MPI): the first asks every job to stop; the results measured so far are
//! still reported in full, marked as interrupted, and the exit status says so (130
//! for SIGINT, 143 for SIGTERM). A second SIGINT only repeats the request (a run that
//! is finishing its reports is not cut short); a third exits at once.

use std::process::ExitCode;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering::Relaxed};

/// The first signal received (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
static SIGINTS: AtomicU32 = AtomicU32::new(0);

extern "C" fn on_signal(sig: libc::c_int) {
    if sig == libc::SIGINT && SIGINTS.fetch_add(1, Relaxed) >= 2 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(130) };
    }
    let _ = SIGNAL.compare_exchange(0, sig, Relaxed, Relaxed);
    ioscope_runner::STOP.store(true, Relaxed);
}

pub fn install() {
    install_for(&[libc::SIGINT, libc::SIGTERM]);
}

/// Under MPI also SIGUSR1: mpirun forwards it to every rank at once (SIGINT and
/// SIGTERM reach the ranks as a SIGTERM a second before SIGKILL), so
/// `kill -USR1 <mpirun>` is the graceful stop of a run on many hosts.
pub fn install_mpi() {
    install_for(&[libc::SIGINT, libc::SIGTERM, libc::SIGUSR1]);
}

fn install_for(sigs: &[libc::c_int]) {
    for &sig in sigs {
        // SAFETY: a zeroed sigaction with a valid handler and empty mask.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as *const () as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// The signal that interrupted the run, by name.
pub fn received() -> Option<&'static str> {
    match SIGNAL.load(Relaxed) {
        0 => None,
        libc::SIGINT => Some("SIGINT"),
        libc::SIGTERM => Some("SIGTERM"),
        libc::SIGUSR1 => Some("SIGUSR1"),
        _ => Some("a signal"),
    }
}

/// Mark a result that a signal cut short.
pub fn mark(r: &mut ioscope_stats::RunResult) {
    if let Some(s) = received() {
        r.meta.interrupted = true;
        r.meta.signal = Some(s.to_string());
    }
}

/// The exit status: 128 + the signal for an interrupted run, else 1 when a job
/// failed, else 0.
pub fn exit_code(failed: bool) -> ExitCode {
    ExitCode::from(exit_value(failed))
}

/// [`exit_code`] as a number.
pub fn exit_value(failed: bool) -> u8 {
    match SIGNAL.load(Relaxed) {
        0 if failed => 1,
        0 => 0,
        sig => 128 + sig as u8,
    }
}
