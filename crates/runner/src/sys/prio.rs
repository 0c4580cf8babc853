//! I/O priorities: the job's own (prio/prioclass, set with ioprio_set for the job's
//! thread) and per-I/O priorities (cmdprio_percentage/class/cmdprio/bssplit).

use ioscope_options::JobOptions;

pub const IOPRIO_CLASS_SHIFT: u16 = 13;

pub fn ioprio_value(class: u32, level: u32) -> u16 {
    ((class as u16) << IOPRIO_CLASS_SHIFT) | (level as u16 & 7)
}

/// An ioprio with a priority hint (bits 3-12: a command duration limit index).
pub fn with_hint(ioprio: u16, hint: u32) -> u16 {
    ioprio | ((hint.min(1023) as u16) << 3)
}

/// The job's default ioprio (0 when none of prio, prioclass and priohint is set).
pub fn job_ioprio(o: &JobOptions) -> u16 {
    let base = match (o.prioclass, o.prio) {
        (None, None) if o.priohint == 0 => 0,
        // A hint alone keeps the default class and level of best effort.
        (None, None) => ioprio_value(2, 4),
        (Some(c), l) => ioprio_value(c, l.unwrap_or(4)),
        // A level without a class means best effort, as for ionice -n.
        (None, Some(l)) => ioprio_value(2, l),
    };
    with_hint(base, o.priohint)
}

/// Apply an ioprio to the calling thread.
pub fn set_thread_ioprio(ioprio: u16) -> std::io::Result<()> {
    const IOPRIO_WHO_PROCESS: libc::c_int = 1;
    // SAFETY: raw syscall with plain integer arguments; who=0 means the calling thread.
    let r = unsafe {
        libc::syscall(
            libc::SYS_ioprio_set,
            IOPRIO_WHO_PROCESS,
            0,
            ioprio as libc::c_int,
        )
    };
    if r < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}
