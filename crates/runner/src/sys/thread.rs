//! A job thread's settings, applied in the thread before its buffers are allocated:
//! I/O priority, nice, CPUs (cpus_allowed, cpumask, numa_cpu_nodes, gtod_cpu) and the
//! NUMA memory policy.

use crate::error::RunError;
use crate::sys::cpu::{current_affinity, set_affinity};
use crate::sys::{numa, prio};
use ioscope_options::{CpusPolicy, JobOptions};

/// Apply the job's thread settings to the calling thread (clone `clone` of the job).
pub(crate) fn apply(o: &JobOptions, ioprio: u16, clone: u32) -> Result<(), RunError> {
    let fail = |e: String| RunError::Setup(format!("job '{}': {e}", o.name));
    if ioprio != 0 {
        prio::set_thread_ioprio(ioprio).map_err(|e| {
            fail(format!(
                "ioprio_set(class {}, level {}): {e}",
                ioprio >> 13,
                ioprio & 7
            ))
        })?;
    }
    set_nice(o.nice).map_err(fail)?;
    pin(o, clone).map_err(fail)?;
    if let Some(nodes) = &o.numa_cpu_nodes {
        let cpus = numa::node_cpus(nodes).map_err(fail)?;
        set_affinity(&cpus).map_err(|e| fail(format!("numa_cpu_nodes: {e}")))?;
    }
    if let Some(p) = &o.numa_mem_policy {
        // Before the buffers are allocated, so that they follow the policy.
        numa::set_mem_policy(p).map_err(fail)?;
    }
    if let Some(g) = o.gtod_cpu {
        leave_cpu(g as usize).map_err(fail)?;
    }
    Ok(())
}

fn set_nice(nice: i32) -> Result<(), String> {
    if nice == 0 {
        return Ok(());
    }
    // SAFETY: PRIO_PROCESS with who=0 applies to the calling thread on Linux.
    let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if r < 0 {
        return Err(format!("nice={nice}: {}", std::io::Error::last_os_error()));
    }
    Ok(())
}

/// cpus_allowed (or cpumask); with cpus_allowed_policy=split each clone gets one CPU
/// of the set.
fn pin(o: &JobOptions, clone: u32) -> Result<(), String> {
    let cpus = match (&o.cpus_allowed, &o.cpumask) {
        (Some(l), _) => l.0.clone(),
        (None, Some(m)) => m.0.clone(),
        (None, None) => return Ok(()),
    };
    let cpus = if o.cpus_allowed_policy == CpusPolicy::Split && !cpus.is_empty() {
        vec![cpus[clone as usize % cpus.len()]]
    } else {
        cpus
    };
    set_affinity(&cpus).map_err(|e| format!("cpus_allowed: {e}"))
}

/// gtod_cpu: fio sets this CPU aside for a time-keeping thread and takes it out of
/// every job's CPUs. ioscope reads the clock (the TSC) in each job thread, so no such
/// thread is needed; the jobs still keep off the CPU, as they do in fio.
fn leave_cpu(g: usize) -> Result<(), String> {
    let mut cpus = current_affinity().map_err(|e| format!("gtod_cpu: {e}"))?;
    cpus.retain(|&c| c != g);
    if cpus.is_empty() {
        return Err(format!("gtod_cpu={g} leaves the job no CPU to run on"));
    }
    set_affinity(&cpus).map_err(|e| format!("gtod_cpu: {e}"))
}
