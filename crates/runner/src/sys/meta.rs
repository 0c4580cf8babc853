//! Facts about the machine for run metadata (A/B comparisons need them).

use crate::clock::Clock;
use ioscope_stats::RunMeta;

fn uname() -> (String, String) {
    // SAFETY: zeroed utsname is a valid out-parameter.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (String::new(), String::new());
    }
    let s = |f: &[libc::c_char]| {
        // SAFETY: utsname fields are NUL-terminated.
        unsafe { std::ffi::CStr::from_ptr(f.as_ptr()) }
            .to_string_lossy()
            .into_owned()
    };
    (s(&u.release), s(&u.nodename))
}

/// The running kernel's release ("6.12.0-…"), for messages.
pub(crate) fn kernel_release() -> String {
    uname().0
}

pub fn run_meta(clock: &Clock) -> RunMeta {
    let (kernel, hostname) = uname();
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|c| {
            c.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_default();
    RunMeta {
        ioscope_version: env!("CARGO_PKG_VERSION").to_string(),
        kernel,
        cpu_model,
        hostname,
        clock: clock.source().to_string(),
        tsc_hz: clock.hz,
        ..Default::default()
    }
}
