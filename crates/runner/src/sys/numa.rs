//! `numa_cpu_nodes` and `numa_mem_policy`, without libnuma: the nodes' CPUs come from
//! sysfs and the memory policy is one `set_mempolicy(2)` call in the job's thread.
//! Syntax and refusals follow fio 3.33 (which uses libnuma): node lists are `all` or
//! CPU-list syntax (`0`, `0-1`, `0,2`); policies are `default`, `local` (no node list),
//! `prefer:N` (exactly one node), `bind:LIST` and `interleave[:LIST]` (all nodes when
//! no list is given).

use std::path::Path;

const NODES: &str = "/sys/devices/system/node";

/// The NUMA nodes this machine has.
pub fn online_nodes() -> Vec<usize> {
    std::fs::read_to_string(Path::new(NODES).join("online"))
        .ok()
        .and_then(|s| crate::sys::cpu::parse_cpu_list(s.trim()).ok())
        .unwrap_or_else(|| vec![0])
}

/// A node list (`all`, `0-1`, `0,2`), each node checked to exist.
fn parse_nodes(option: &str, list: &str) -> Result<Vec<usize>, String> {
    let online = online_nodes();
    if list.trim() == "all" {
        return Ok(online);
    }
    let nodes = crate::sys::cpu::parse_cpu_list(list)
        .map_err(|_| format!("{option}: '{list}' is not a node list (e.g. 0, 0-1, all)"))?;
    if nodes.is_empty() {
        return Err(format!("{option}: '{list}' names no node"));
    }
    if let Some(n) = nodes.iter().find(|n| !online.contains(n)) {
        return Err(format!(
            "{option}: node {n} does not exist (this machine has nodes {})",
            show(&online)
        ));
    }
    Ok(nodes)
}

fn show(nodes: &[usize]) -> String {
    nodes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// numa_cpu_nodes: the CPUs of these nodes.
pub fn node_cpus(list: &str) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for n in parse_nodes("numa_cpu_nodes", list)? {
        let path = Path::new(NODES).join(format!("node{n}/cpulist"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("numa_cpu_nodes: {}: {e}", path.display()))?;
        cpus.extend(crate::sys::cpu::parse_cpu_list(text.trim())?);
    }
    if cpus.is_empty() {
        return Err(format!("numa_cpu_nodes={list}: these nodes have no CPUs"));
    }
    Ok(cpus)
}

/// A parsed numa_mem_policy: the kernel's mode and node mask.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemPolicy {
    pub mode: i32,
    pub nodes: Vec<usize>,
}

// The kernel's MPOL_* modes (include/uapi/linux/mempolicy.h).
const MPOL_DEFAULT: i32 = 0;
const MPOL_PREFERRED: i32 = 1;
const MPOL_BIND: i32 = 2;
const MPOL_INTERLEAVE: i32 = 3;
const MPOL_LOCAL: i32 = 4;

/// Parse `mode[:nodes]` as fio 3.33 accepts it.
pub fn parse_mem_policy(spec: &str) -> Result<MemPolicy, String> {
    const O: &str = "numa_mem_policy";
    let (mode, list) = match spec.split_once(':') {
        Some((m, l)) => (m.trim(), Some(l.trim())),
        None => (spec.trim(), None),
    };
    let policy = |mode, nodes| Ok(MemPolicy { mode, nodes });
    match (mode, list) {
        ("default", None) => policy(MPOL_DEFAULT, vec![]),
        ("local", None) => policy(MPOL_LOCAL, vec![]),
        ("default" | "local", Some(_)) => Err(format!("{O}: '{mode}' takes no node list")),
        ("prefer", Some(l)) => {
            let nodes = parse_nodes(O, l)?;
            if nodes.len() != 1 {
                return Err(format!("{O}: 'prefer' takes one node, not '{l}'"));
            }
            policy(MPOL_PREFERRED, nodes)
        }
        ("prefer", None) => Err(format!("{O}: 'prefer' needs a node (prefer:N)")),
        ("bind", Some(l)) => policy(MPOL_BIND, parse_nodes(O, l)?),
        ("bind", None) => Err(format!("{O}: 'bind' needs a node list (bind:LIST)")),
        ("interleave", l) => policy(MPOL_INTERLEAVE, parse_nodes(O, l.unwrap_or("all"))?),
        _ => Err(format!(
            "{O}: '{spec}': the policies are default, prefer:N, bind:LIST, interleave[:LIST] and local"
        )),
    }
}

/// Apply the policy to the calling thread: its later allocations (the job's buffers,
/// allocated after this) follow it.
pub fn set_mem_policy(p: &MemPolicy) -> Result<(), String> {
    let mut mask = [0u64; 16];
    for &n in &p.nodes {
        if n >= 1024 {
            return Err(format!("numa_mem_policy: node {n} is out of range"));
        }
        mask[n / 64] |= 1 << (n % 64);
    }
    let (ptr, maxnode) = if p.nodes.is_empty() {
        (std::ptr::null(), 0)
    } else {
        (mask.as_ptr(), 1024 + 1)
    };
    // SAFETY: set_mempolicy reads `maxnode - 1` bits from `mask`, which holds 1024.
    let r = unsafe {
        libc::syscall(
            libc::SYS_set_mempolicy,
            p.mode,
            ptr,
            maxnode as libc::c_ulong,
        )
    };
    if r < 0 {
        return Err(format!(
            "numa_mem_policy: set_mempolicy: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Check both options of a job before any I/O.
pub fn check(o: &ioscope_options::JobOptions) -> Result<(), String> {
    if let Some(l) = &o.numa_cpu_nodes {
        node_cpus(l)?;
    }
    if let Some(p) = &o.numa_mem_policy {
        parse_mem_policy(p)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_as_fio_accepts_them() {
        assert_eq!(parse_mem_policy("bind:0").unwrap().mode, MPOL_BIND);
        assert_eq!(
            parse_mem_policy("interleave").unwrap().nodes,
            online_nodes()
        );
        assert_eq!(parse_mem_policy("prefer:0").unwrap().nodes, vec![0]);
        assert_eq!(parse_mem_policy("local").unwrap().mode, MPOL_LOCAL);
        assert_eq!(parse_mem_policy("default").unwrap().mode, MPOL_DEFAULT);
        for bad in [
            "prefer",
            "bind",
            "local:0",
            "default:0",
            "bogus",
            "bind:4096",
            "bind:x",
        ] {
            assert!(parse_mem_policy(bad).is_err(), "{bad}");
        }
        assert!(node_cpus("all").is_ok_and(|c| !c.is_empty()));
        assert!(node_cpus("4095").is_err());
    }
}
