//! CPUs: which the machine has, which a thread may run on, pinning.

/// `0-3,6` → [0,1,2,3,6].
pub fn parse_cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let a: usize = a
            .trim()
            .parse()
            .map_err(|_| format!("cpus_allowed '{s}' is not a CPU list"))?;
        let b: usize = b
            .trim()
            .parse()
            .map_err(|_| format!("cpus_allowed '{s}' is not a CPU list"))?;
        if a > b || b >= 1024 {
            return Err(format!("cpus_allowed '{s}': bad range {part}"));
        }
        v.extend(a..=b);
    }
    Ok(v)
}

pub fn parse_cpu_mask(s: &str) -> Result<Vec<usize>, String> {
    let t = s.trim().trim_start_matches("0x");
    let m = u64::from_str_radix(t, 16).map_err(|_| format!("cpumask '{s}' is not a hex mask"))?;
    Ok((0..64).filter(|i| m & (1 << i) != 0).collect())
}

/// CPUs the system has (configured, online or not).
pub fn num_cpus_configured() -> usize {
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
