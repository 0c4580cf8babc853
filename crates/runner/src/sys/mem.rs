//! Memory the machine has.

/// MemAvailable from /proc/meminfo, bytes.
pub(crate) fn mem_available() -> Option<u64> {
    meminfo("MemAvailable:")
}

/// MemTotal from /proc/meminfo, bytes.
pub(crate) fn mem_total() -> Option<u64> {
    meminfo("MemTotal:")
}

fn meminfo(key: &str) -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = m.lines().find(|l| l.starts_with(key))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
