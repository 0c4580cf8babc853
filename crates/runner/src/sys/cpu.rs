//! CPUs: which the machine has, which a thread may run on, pinning.

/// CPUs the system has (configured, online or not).
fn num_cpus_configured() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    usize::try_from(n).unwrap_or(1)
}

/// The CPUs the calling thread may run on.
pub fn current_affinity() -> std::io::Result<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t filled by sched_getaffinity; CPU_ISSET reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok((0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &set))
            .collect())
    }
}

/// Pin the calling thread to these CPUs.
pub fn set_affinity(cpus: &[usize]) -> std::io::Result<()> {
    // SAFETY: a zeroed cpu_set_t is empty; CPU_SET/sched_setaffinity take valid pointers.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in cpus {
            libc::CPU_SET(*c, &mut set);
        }
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A CPU list names only CPUs this machine has (configured, online or not).
pub fn check_exist(option: &str, cpus: &[usize]) -> Result<(), String> {
    let online = std::thread::available_parallelism().map_or(1, |n| n.get());
    match cpus
        .iter()
        .find(|&&c| c >= online.max(num_cpus_configured()))
    {
        Some(c) => Err(format!("{option}: there is no CPU {c}")),
        None => Ok(()),
    }
}
