//! `numa_cpu_nodes` and `numa_mem_policy`, without libnuma: the nodes' CPUs come from
//! sysfs and the memory policy is one `set_mempolicy(2)` call in the job's thread.
//! The syntax is read by the option table (`ioscope_options::NodeList`, `NumaPolicy`);
//! here the nodes are checked against the machine, as fio 3.33 (with libnuma) does.
//! Node lists are `all` or
//! CPU-list syntax (`0`, `0-1`, `0,2`); policies are `default`, `local` (no node list),
//! `prefer:N` (exactly one node), `bind:LIST` and `interleave[:LIST]` (all nodes when
//! no list is given).

use ioscope_options::{CpuList, JobOptions, NodeList, NumaPolicy};
use std::path::Path;

const NODES: &str = "/sys/devices/system/node";

/// The NUMA nodes this machine has.
pub fn online_nodes() -> Vec<usize> {
    std::fs::read_to_string(Path::new(NODES).join("online"))
        .ok()
        .and_then(|s| CpuList::parse(s.trim()).ok())
        .map(|l| l.0)
        .unwrap_or_else(|| vec![0])
}

/// The nodes of a list, each checked to exist on this machine.
fn nodes_of(option: &str, list: &NodeList) -> Result<Vec<usize>, String> {
    let online = online_nodes();
    let NodeList::Nodes(nodes) = list else {
        return Ok(online);
    };
    if let Some(n) = nodes.iter().find(|n| !online.contains(n)) {
        return Err(format!(
            "{option}: node {n} does not exist (this machine has nodes {})",
            show(&online)
        ));
    }
    Ok(nodes.clone())
}

fn show(nodes: &[usize]) -> String {
    nodes
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// numa_cpu_nodes: the CPUs of these nodes.
pub fn node_cpus(list: &NodeList) -> Result<Vec<usize>, String> {
    let mut cpus = Vec::new();
    for n in nodes_of("numa_cpu_nodes", list)? {
        let path = Path::new(NODES).join(format!("node{n}/cpulist"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| format!("numa_cpu_nodes: {}: {e}", path.display()))?;
        let l = CpuList::parse(text.trim())
            .map_err(|e| format!("numa_cpu_nodes: {}: {e}", path.display()))?;
        cpus.extend(l.0);
    }
    if cpus.is_empty() {
        return Err("numa_cpu_nodes: these nodes have no CPUs".into());
    }
    Ok(cpus)
}

/// A numa_mem_policy for the kernel: its mode and node mask.
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

/// The kernel's policy for a job's numa_mem_policy, its nodes checked to exist.
pub fn mem_policy(p: &NumaPolicy) -> Result<MemPolicy, String> {
    const O: &str = "numa_mem_policy";
    let policy = |mode, nodes| Ok(MemPolicy { mode, nodes });
    match p {
        NumaPolicy::Default => policy(MPOL_DEFAULT, vec![]),
        NumaPolicy::Local => policy(MPOL_LOCAL, vec![]),
        NumaPolicy::Prefer(n) => policy(MPOL_PREFERRED, nodes_of(O, &NodeList::Nodes(vec![*n]))?),
        NumaPolicy::Bind(l) => policy(MPOL_BIND, nodes_of(O, l)?),
        NumaPolicy::Interleave(l) => policy(MPOL_INTERLEAVE, nodes_of(O, l)?),
    }
}

/// Apply the policy to the calling thread: its later allocations (the job's buffers,
/// allocated after this) follow it.
pub fn set_mem_policy(p: &NumaPolicy) -> Result<(), String> {
    let p = mem_policy(p)?;
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
pub fn check(o: &JobOptions) -> Result<(), String> {
    if let Some(l) = &o.numa_cpu_nodes {
        node_cpus(l)?;
    }
    if let Some(p) = &o.numa_mem_policy {
        mem_policy(p)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_follow_the_machine() {
        let nodes = |l: &[usize]| NodeList::Nodes(l.to_vec());
        assert_eq!(
            mem_policy(&NumaPolicy::Bind(nodes(&[0]))).unwrap().mode,
            MPOL_BIND
        );
        assert_eq!(
            mem_policy(&NumaPolicy::Interleave(NodeList::All))
                .unwrap()
                .nodes,
            online_nodes()
        );
        assert_eq!(mem_policy(&NumaPolicy::Prefer(0)).unwrap().nodes, vec![0]);
        assert_eq!(mem_policy(&NumaPolicy::Local).unwrap().mode, MPOL_LOCAL);
        assert_eq!(mem_policy(&NumaPolicy::Default).unwrap().mode, MPOL_DEFAULT);
        assert!(mem_policy(&NumaPolicy::Bind(nodes(&[1000]))).is_err());
        assert!(node_cpus(&NodeList::All).is_ok_and(|c| !c.is_empty()));
        assert!(node_cpus(&nodes(&[1000])).is_err());
    }
}
